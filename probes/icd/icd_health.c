/* icd_health.c: under --health, which .icd files name drivers for absent hardware or CPU drivers, and a vendors directory of the rest. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "icd_impl.h"
#include "isolate.h"
#include "options.h"
#include "strutil.h"

/* Without OCL_ICD_VENDORS: does the loader programs get read /etc/OpenCL/vendors, as far as its file says? Not
 * one built with another directory (icd.loader-vendors-dir): the plan would hand it /etc's drivers instead of
 * its own. Under --root --live the combined child is given the tree's directory anyway. */
static bool icd_health_loader_reads_etc(const struct probe_ctx *ctx)
{
    if (ctx->mode != PROBE_MODE_LIVE)
        return true;
    const char *own = getenv("GPUCHECKUP_LIBOPENCL");
    struct ldsearch s;
    if (own || ldsearch_init(&s, ctx->fs, getenv("LD_LIBRARY_PATH")) != 0)
        return false;
    const char *via = NULL;
    char *lib = ldsearch_find(&s, "libOpenCL.so.1", &via), *buf = NULL;
    ldsearch_free(&s);
    size_t len = 0;
    bool def = false, ok = lib && hostfs_read_file(ctx->fs, lib, 16u * 1024 * 1024, &buf, &len) == 0;
    char *dir = ok ? icd_vendors_dir_in(buf, len, &def) : NULL;
    ok = ok && (def || !dir);
    free(dir);
    free(buf);
    free(lib);
    return ok;
}

/* The vendors directory both loaders read in this run when the plan can stand in for it (heap), or NULL:
 * live or --root --live, OCL_ICD_FILENAMES unset (the Khronos loader adds its libraries to any directory),
 * OCL_ICD_VENDORS unset (then OPENCL_VENDOR_PATH too: ocl-icd alone reads it; and the loader reads
 * /etc/OpenCL/vendors) or, live, naming a directory
 * by its absolute path (both loaders then read that directory, ocl-icd ignoring OPENCL_VENDOR_PATH). */
static char *icd_health_source(const struct probe_ctx *ctx)
{
    /* getenv, not icd_env: no snapshot is replayed in the modes the plan runs in (live, --root --live) */
    const char *fn = getenv("OCL_ICD_FILENAMES"), *ov = getenv("OCL_ICD_VENDORS"), *vp = getenv("OPENCL_VENDOR_PATH");
    if (fn && *fn)
        return NULL;
    if (!ov)
        return vp && *vp ? NULL : icd_health_loader_reads_etc(ctx) ? str_dup(ICD_VENDORS_DIR) : NULL;
    struct stat sb;
    if (ctx->mode != PROBE_MODE_LIVE || ov[0] != '/' || hostfs_stat(ctx->fs, ov, &sb, true) != 0 || !S_ISDIR(sb.st_mode))
        return NULL;
    return str_dup(ov);
}

/* Add S (heap, taken) to *ARR (*N entries); false when out of memory (S freed). */
static bool icd_health_push(char ***arr, size_t *n, char *s)
{
    char **na = s ? realloc(*arr, (*n + 1) * sizeof(*na)) : NULL;
    if (!na) {
        free(s);
        return false;
    }
    na[(*n)++] = s;
    *arr = na;
    return true;
}

/* Decide one .icd file NAME of P->src: skipped (its driver's hardware absent), kept (*KEEP: its bytes,
 * heap), or false: the plan cannot stand in for the directory (not a regular file, unreadable). */
static bool icd_health_file(const struct probe_ctx *ctx, struct icd_health_plan *p, const char *name, char **keep,
                            size_t *keep_len)
{
    *keep = NULL;
    char *path = str_printf("%s%s%s", p->src, str_ends_with(p->src, "/") ? "" : "/", name);
    char *buf = NULL;
    size_t len = 0;
    /* hostfs_read_file opens regular files only: a FIFO (ocl-icd blocks on it) ends the plan here */
    if (!path || hostfs_read_file(ctx->fs, path, ICD_MAX_FILE, &buf, &len) != 0) {
        free(path);
        return false;
    }
    struct icd_parsed parsed;
    const struct vendor_cl *drv = NULL;
    if (icd_parse_content(buf, len, ICD_KIND_OCL_ICD, &parsed) == 0) {
        if (!parsed.bad) /* an odd file is loaded as before: its own findings say what is odd */
            drv = vendor_cl_by_library(parsed.library);
        if (!parsed.bad && !drv)
            drv = vendor_cl_by_library(path);
        icd_parsed_clear(&parsed);
    }
    char why[192];
    enum vendor_hw hw = drv ? vendor_cl_hardware(drv, result_pci_get(ctx->report), drv->cpu_env ? getenv(drv->cpu_env) : NULL,
                                                 why, sizeof(why))
                            : VENDOR_HW_UNKNOWN;
    if (hw == VENDOR_HW_ABSENT || (hw == VENDOR_HW_NOT_NEEDED && icd_health_skips_cpu(ctx))) {
        free(buf);
        return icd_health_push(&p->skip, &p->n_skip, path);
    }
    free(path);
    *keep = buf;
    *keep_len = len;
    return true;
}

/* Write the kept file NAME (BUF, LEN bytes) into P->dir. 0 or -1. */
static int icd_health_write(const struct icd_health_plan *p, const char *name, const char *buf, size_t len)
{
    char *path = str_printf("%s/%s", p->dir, name);
    int fd = path ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
    free(path);
    if (fd < 0)
        return -1;
    int rc = fdio_write_all(fd, buf, len);
    return close(fd) == 0 && rc == 0 ? 0 : -1;
}

void icd_health_plan_free(struct icd_health_plan *p)
{
    for (size_t i = 0; i < p->n_skip; i++)
        free(p->skip[i]);
    free(p->skip);
    if (p->dir) {
        DIR *d = opendir(p->dir);
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                unlinkat(dirfd(d), de->d_name, 0);
        if (d)
            closedir(d);
        rmdir(p->dir);
    }
    free(p->dir);
    free(p->src);
    memset(p, 0, sizeof(*p));
}

bool icd_health_plan(const struct probe_ctx *ctx, bool make_dir, struct icd_health_plan *p)
{
    memset(p, 0, sizeof(*p));
    /* No PCI facts (a dump, a hidden bus, WSL, a container without /sys/bus/pci) leave every GPU driver's
     * hardware UNKNOWN, loaded as before; a CPU driver is known as one without them (NOT_NEEDED). */
    if (!ctx->opts || !ctx->opts->health || (ctx->mode != PROBE_MODE_LIVE && ctx->mode != PROBE_MODE_TREE_LIVE) ||
        !(p->src = icd_health_source(ctx)))
        return false;
    DIR *d = hostfs_opendir(ctx->fs, p->src);
    if (!d) {
        icd_health_plan_free(p);
        return false;
    }
    if (make_dir) {
        const char *tmp = getenv("TMPDIR");
        p->dir = str_printf("%s/gpucheckup-icd-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
        if (p->dir && !mkdtemp(p->dir)) {
            free(p->dir);
            p->dir = NULL;
        }
        /* --pid as root: the loader's child takes the process's credentials (isolate_target.c), and mkdtemp's
         * 0700 directory of root's would leave it no driver to read (its .icd files are the system's, 0644) */
        if (p->dir && isolate_target_creds_active() && chmod(p->dir, 0755) != 0) {
            rmdir(p->dir);
            free(p->dir);
            p->dir = NULL;
        }
    }
    bool ok = !make_dir || p->dir;
    size_t kept = 0;
    struct dirent *de;
    while (ok && (de = readdir(d))) {
        /* Both loaders read *.icd only; a bare ".icd" (Khronos reads it, ocl-icd does not) ends the plan. */
        if (!str_ends_with(de->d_name, ".icd"))
            continue;
        char *keep = NULL;
        size_t len = 0;
        ok = strlen(de->d_name) > 4 && icd_health_file(ctx, p, de->d_name, &keep, &len);
        if (ok && keep) {
            kept++;
            ok = !p->dir || icd_health_write(p, de->d_name, keep, len) == 0;
        }
        free(keep);
    }
    closedir(d);
    /* Nothing skipped: every driver is loaded as before. Nothing left (only CPU drivers and drivers for absent
     * hardware): the loader loads none, and what it then lists (no platform) is not judged as a fault. */
    if (!ok || p->n_skip == 0) {
        icd_health_plan_free(p);
        return false;
    }
    p->kept = kept;
    return true;
}

bool icd_health_skips_cpu(const struct probe_ctx *ctx)
{
    return ctx->opts && ctx->opts->health && ctx->opts->n_requires == 0;
}

bool icd_health_skips(const struct icd_health_plan *p, const char *file)
{
    for (size_t i = 0; file && i < p->n_skip; i++)
        if (strcmp(p->skip[i], file) == 0)
            return true;
    return false;
}

/* The icd part's callbacks for the shared child (clonce_parts.h). */
char *icd_health_vendors(const struct probe_ctx *ctx, size_t *kept, json_object **skipped)
{
    struct icd_health_plan p;
    *kept = 0;
    *skipped = NULL;
    if (!icd_health_plan(ctx, true, &p))
        return NULL;
    *kept = p.kept;
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && i < p.n_skip; i++)
        json_object_array_add(a, json_object_new_string(p.skip[i]));
    *skipped = a;
    char *dir = p.dir;
    p.dir = NULL; /* kept: icd_health_done removes it */
    icd_health_plan_free(&p);
    return dir;
}

void icd_health_done(char *dir)
{
    struct icd_health_plan p = {.dir = dir};
    icd_health_plan_free(&p);
}
