/* icd.c: the icd probe: which OpenCL ICD loader, which vendor drivers, and what is wrong with each. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clapi.h"
#include "icd_impl.h"
#include "isolate.h"
#include "probe.h"
#include "strutil.h"
#include "vendor.h"

/* Default vendors directory of both loaders. */
#define ICD_VENDORS_DIR "/etc/OpenCL/vendors"
/* Largest .icd file read (a real one is a line); larger is "overlong". */
#define ICD_MAX_FILE (64 * 1024)
/* Vendor libraries probed (one child each, all at once); more are listed, not loaded. */
#define ICD_MAX_PROBES 64
/* Pairwise conflict search: at most this many children. */
#define ICD_MAX_PAIR_JOBS 32

static const struct check icd_checks[] = {
    {"icd.no-loader", REPORT_SEV_ERROR, "No OpenCL ICD loader (libOpenCL.so.1) can be loaded",
     "Install an ICD loader: sudo apt-get install ocl-icd-libopencl1"},
    /* Information only: the CUDA toolkit puts its own (Khronos-based) libOpenCL.so.1 on the path beside
     * the distribution's ocl-icd on most NVIDIA machines, and programs then all get the first one. The
     * harm is a loader that ignores the environment the machine was set up with:
     * icd.loader-ignores-env. */
    {"icd.multiple-loaders", REPORT_SEV_INFO,
     "Different OpenCL loaders (libOpenCL.so*) can shadow each other on the library path",
     "Nothing to fix while every program gets the same loader; to keep one, remove the others from "
     "LD_LIBRARY_PATH or /etc/ld.so.conf.d (then run ldconfig)."},
    {"icd.loader-ignores-env", REPORT_SEV_WARNING,
     "A variable that registers OpenCL drivers is set, but the loader programs get ignores it: the drivers "
     "it names are invisible",
     "OCL_ICD_FILENAMES is read only by the Khronos loader and OPENCL_VENDOR_PATH only by ocl-icd: put the "
     "drivers in .icd files in the vendors directory (/etc/OpenCL/vendors or OCL_ICD_VENDORS), which both "
     "loaders read, or make the matching loader the first libOpenCL.so.1 on the library path."},
    {"icd.no-icds", REPORT_SEV_ERROR, "No OpenCL vendor driver is registered: OpenCL has no platform",
     "Install the ICD package of your GPU's driver (nvidia-opencl-icd, mesa-opencl-icd, intel-opencl-icd, "
     "rocm-opencl-runtime) or pocl-opencl-icd for the CPU."},
    {"icd.unreadable", REPORT_SEV_ERROR, "An .icd file cannot be read, so the loader skips it",
     "Make the file readable by everyone (chmod 644) or remove it."},
    {"icd.malformed", REPORT_SEV_ERROR,
     "An .icd file the loader cannot use (CRLF, blanks, extra lines, empty, binary, overlong)",
     "Rewrite the file as one line: the library name and a newline."},
    {"icd.missing-library", REPORT_SEV_ERROR, "The library an .icd file names cannot be found",
     "Reinstall the driver, or write the library's absolute path into the .icd file."},
    {"icd.load-failed", REPORT_SEV_ERROR,
     "The library an .icd file names exists but cannot be loaded (missing dependency, wrong architecture)",
     "Run ldd on the library to see what is missing."},
    {"icd.self-reference", REPORT_SEV_ERROR,
     "An .icd file names an OpenCL loader instead of a vendor driver (the Khronos loader hangs on it)",
     "Remove the .icd file."},
    {"icd.duplicate", REPORT_SEV_WARNING, "Two .icd files reach the same library",
     "Remove one of the two .icd files."},
    {"icd.insecure", REPORT_SEV_WARNING,
     "Running as root, an .icd file, its directory or its library is writable by other users",
     "Make them owned by root and writable only by root (chown root:root, chmod go-w)."},
    {"icd.no-entry-point", REPORT_SEV_ERROR,
     "A vendor library lacks clIcdGetPlatformIDsKHR (through clGetExtensionFunctionAddress): not an ICD",
     "Point the .icd file at the vendor's ICD library, not at another OpenCL library."},
    {"icd.no-platforms", REPORT_SEV_WARNING,
     "A vendor driver loads but reports no platform (-1001 or zero): it found no device it drives",
     "Check that the driver's kernel module is loaded and its GPU visible (gpucheckup pci)."},
    {"icd.rejected", REPORT_SEV_ERROR,
     "The loader skips a vendor's platform (no cl_khr_icd, no ICD suffix, no clGetPlatformInfo)",
     "Update the vendor driver; the platform does not follow the ICD rules this loader checks."},
    {"icd.error", REPORT_SEV_ERROR, "A vendor driver's clIcdGetPlatformIDsKHR fails with an error code",
     "Update or reinstall the vendor driver; the error name says what it ran out of."},
    {"icd.crash", REPORT_SEV_ERROR,
     "A vendor driver crashes when asked for its platforms: every OpenCL program crashes the same way",
     "Update or reinstall the driver; until then move its .icd file out of the vendors directory."},
    {"icd.hang", REPORT_SEV_ERROR,
     "A vendor driver does not answer within the timeout: every OpenCL program hangs the same way",
     "Update or reinstall the driver; until then move its .icd file out of the vendors directory."},
    {"icd.absent-hardware", REPORT_SEV_INFO,
     "A GPU driver is installed but this machine has none of the hardware it drives: its error or empty "
     "platform is expected, not a fault",
     "Nothing to fix on a machine without that GPU. If it should have one, `gpucheckup pci` shows what the bus "
     "lists; if the driver is not wanted, remove its package."},
    {"icd.conflict", REPORT_SEV_ERROR,
     "Each vendor driver works alone, but loaded together (as every application does) they crash or hang",
     "Keep only one of the drivers named in the message (move the other .icd file away)."},
};

struct icd_entry {
    char *file;         /* .icd path read through ctx->fs, or NULL for an environment entry */
    const char *source; /* "vendors-dir", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES" */
    char *library;      /* what the loader passes to dlopen (raw bytes), or NULL */
    unsigned bad, fatal;
    char *found;        /* where the library search found it (on this machine), or NULL */
    const char *via;
    char *resolved;     /* canonical path of the library, or NULL */
    dev_t dev;
    ino_t ino;
    bool have_id;
    const char *status; /* NULL while undecided */
    char *detail;
    int dup_of;
    bool probed;
    double elapsed_ms;
    json_object *platforms; /* array, owned */
    char *output;           /* what the child wrote on stderr (tail), or NULL */
    bool fifo;              /* the .icd is a FIFO: ocl-icd blocks on it */
    bool classified;        /* drv, hw and hw_why are set */
    const struct vendor_cl *drv; /* the driver recognised from the vendor table, or NULL */
    enum vendor_hw hw;      /* whether the hardware it needs is here */
    char hw_why[192];       /* what the PCI facts show about it */
    bool absent;            /* its failure or emptiness is that of a driver for absent hardware */
};

struct icd_state {
    struct probe_ctx *ctx;
    struct report_section *sec;
    struct hostfs own_libfs;
    bool have_own_libfs;
    const struct hostfs *libfs; /* this machine's files: libraries are loaded here */
    struct icd_search search;
    struct icd_loader_file *loaders;
    size_t n_loaders;
    json_object **loader_info; /* per loaders[i] (first of its group): the identification, or NULL */
    json_object *loader;       /* the default loader's identification ({"ok":...}), or NULL */
    char *loader_error;        /* why no loader, or NULL */
    enum icd_kind kind;
    const char *vendors_from;
    char *vendors_dir;
    int vendors_dir_err;
    char **ignored;            /* files in the vendors dir the loaders skip (not *.icd) */
    size_t n_ignored;
    struct icd_entry *e;
    size_t n;
    json_object *combined;
    bool root;                 /* running as root */
    json_object *pci;          /* the pci section's data when that probe ran ok, or NULL (not owned) */
};

/* ---- small helpers ---- */

static const char *icd_env(const char *name)
{
    const char *v = getenv(name);
    return v;
}

static char *icd_sanitized(const char *s)
{
    return s ? str_sanitize(str_dup(s)) : NULL;
}

/* PATH made absolute against the current directory (hostfs wants absolute paths). Caller frees. */
static char *icd_absolute(const struct icd_state *st, const char *path)
{
    if (path[0] == '/' || !st->search.cwd)
        return str_dup(path);
    return str_printf("%s/%s", st->search.cwd, path);
}

static const char *icd_basename(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p;
}

/* The name a finding is about: the .icd file, or the library for an environment entry. */
static const char *icd_subject(const struct icd_entry *e)
{
    return e->file ? e->file : e->library ? e->library : e->source;
}

static const char *icd_jstr(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static bool icd_jbool(json_object *o, const char *key, bool dflt)
{
    json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_boolean))
        return dflt;
    return json_object_get_boolean(v);
}

/* Integer KEY of O into *OUT; false when absent or not an integer. */
static bool icd_jint(json_object *o, const char *key, int64_t *out)
{
    json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return false;
    *out = json_object_get_int64(v);
    return true;
}

static bool icd_is_ocl_semantics(enum icd_kind k)
{
    /* No loader: read files as Debian's default loader (ocl-icd) would. */
    return k == ICD_KIND_OCL_ICD || k == ICD_KIND_NONE;
}

/* Shared pages where children write their stage. */
static volatile int *icd_stages_new(size_t n)
{
    if (n == 0)
        n = 1;
    void *p = mmap(NULL, n * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    return p;
}

static void icd_stages_free(volatile int *p, size_t n)
{
    if (p)
        munmap((void *)p, (n ? n : 1) * sizeof(int));
}

static void icd_entry_clear(struct icd_entry *e)
{
    free(e->file);
    free(e->library);
    free(e->found);
    free(e->resolved);
    free(e->detail);
    free(e->output);
    json_object_put(e->platforms);
}

static struct icd_entry *icd_entry_new(struct icd_state *st, const char *file, const char *source)
{
    struct icd_entry *ne = realloc(st->e, (st->n + 1) * sizeof(*ne));
    if (!ne)
        return NULL;
    st->e = ne;
    struct icd_entry *e = &st->e[st->n++];
    memset(e, 0, sizeof(*e));
    e->file = str_dup(file);
    e->source = source;
    e->dup_of = -1;
    e->elapsed_ms = -1;
    e->platforms = json_object_new_array();
    return e;
}

static void icd_set(struct icd_entry *e, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void icd_set(struct icd_entry *e, const char *status, const char *fmt, ...)
{
    e->status = status;
    free(e->detail);
    e->detail = NULL;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        e->detail = str_sanitize(str_vprintf(fmt, ap));
        va_end(ap);
    }
}

/* Milliseconds as a JSON number with three decimals (null when not finite). */
static json_object *icd_json_ms(double ms)
{
    if (!(ms >= 0 && ms < 1e12))
        return NULL;
    char buf[32];
    snprintf(buf, sizeof(buf), "%.3f", ms);
    return json_object_new_double_s(ms, buf);
}

/* A short description of a finished child that did not return a value. */
static char *icd_child_failure(const struct isolate_result *r, int stage, double timeout_s)
{
    const char *where = icd_stage_name(stage);
    switch (r->status) {
    case ISOLATE_SIGNAL:
        return str_printf("killed by %s in %s", isolate_signal_name(r->signal), where);
    case ISOLATE_TIMEOUT:
        return str_printf("no answer within %.1f s (in %s)", timeout_s, where);
    case ISOLATE_EXIT:
        return str_printf("the process ended in %s (%s)", where, r->detail ? r->detail : "exit");
    case ISOLATE_BAD_OUTPUT:
        return str_printf("the driver wrote garbage into gpucheckup's result pipe in %s", where);
    default:
        return str_printf("%s", r->detail ? r->detail : "could not start the child process");
    }
}

/* The last line of a child's output, shortened, for evidence (caller frees), or NULL. */
static char *icd_output_tail(const char *out)
{
    if (!out)
        return NULL;
    size_t len = strlen(out);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ' || out[len - 1] == '?'))
        len--;
    if (len == 0)
        return NULL;
    size_t start = len > 300 ? len - 300 : 0;
    return str_sanitize(strndup(out + start, len - start));
}

/* ---- the loader ---- */

/* Identify the default loader and every distinct libOpenCL file, each in a child with no vendor. */
static void icd_identify(struct icd_state *st)
{
    size_t n = 1;
    for (size_t i = 0; i < st->n_loaders; i++)
        if (st->loaders[i].group == (int)i && st->loaders[i].resolved && st->loaders[i].loadable)
            n++;
    struct isolate_job *jobs = calloc(n, sizeof(*jobs));
    struct icd_child_arg *args = calloc(n, sizeof(*args));
    size_t *which = calloc(n, sizeof(*which));
    volatile int *stages = icd_stages_new(n);
    st->loader_info = calloc(st->n_loaders ? st->n_loaders : 1, sizeof(*st->loader_info));
    if (!jobs || !args || !which || !st->loader_info) {
        free(jobs);
        free(args);
        free(which);
        icd_stages_free(stages, n);
        st->kind = ICD_KIND_UNKNOWN;
        return;
    }
    size_t k = 0;
    args[k] = (struct icd_child_arg){.lib = NULL, .stage = stages ? &stages[k] : NULL};
    jobs[k] = (struct isolate_job){.fn = icd_child_loader, .arg = &args[k]};
    k++;
    for (size_t i = 0; i < st->n_loaders; i++) {
        if (st->loaders[i].group != (int)i || !st->loaders[i].resolved || !st->loaders[i].loadable)
            continue;
        which[k] = i;
        args[k] = (struct icd_child_arg){.lib = st->loaders[i].resolved, .stage = stages ? &stages[k] : NULL};
        jobs[k] = (struct isolate_job){.fn = icd_child_loader, .arg = &args[k]};
        k++;
    }
    isolate_run_many(jobs, k, st->ctx->timeout_ms);

    struct isolate_result *r = &jobs[0].result;
    if (r->status == ISOLATE_OK && icd_jbool(r->value, "ok", false)) {
        st->loader = json_object_get(r->value);
        st->kind = icd_kind_from_info(icd_jstr(r->value, "name"), icd_jstr(r->value, "vendor"));
    } else if (r->status == ISOLATE_OK) {
        st->kind = ICD_KIND_NONE;
        st->loader_error = icd_sanitized(icd_jstr(r->value, "error"));
    } else {
        /* The loader itself misbehaved with no vendor loaded: say so, assume a loader is there. */
        char *why = icd_child_failure(r, stages ? stages[0] : 0, st->ctx->timeout_ms / 1000.0);
        report_section_add_note(st->sec, "identifying the OpenCL loader failed: %s", why ? why : "?");
        free(why);
        st->kind = ICD_KIND_UNKNOWN;
    }
    if (r->status == ISOLATE_SPAWN_FAILED)
        report_add_finding(st->ctx->report, "core.isolated-child-failed", "icd",
                           "Could not start a child process to identify the OpenCL loader: %s",
                           r->detail ? r->detail : "fork failed");
    for (size_t j = 1; j < k; j++) {
        struct isolate_result *lr = &jobs[j].result;
        if (lr->status == ISOLATE_OK)
            st->loader_info[which[j]] = json_object_get(lr->value);
    }
    for (size_t j = 0; j < k; j++)
        isolate_result_clear(&jobs[j].result);
    free(jobs);
    free(args);
    free(which);
    icd_stages_free(stages, n);
}

/* The identification of the loader file at index I (its group's), or NULL. */
static json_object *icd_loader_file_info(const struct icd_state *st, size_t i)
{
    int g = st->loaders[i].group;
    return (g >= 0 && (size_t)g < st->n_loaders) ? st->loader_info[g] : NULL;
}

static const char *icd_loader_kind_of(json_object *info)
{
    if (!info || !icd_jbool(info, "ok", false))
        return NULL;
    return icd_kind_name(icd_kind_from_info(icd_jstr(info, "name"), icd_jstr(info, "vendor")));
}

/* When gpucheckup loaded another file than the search predicts, say so (the prediction is ours). */
static void icd_crosscheck_winner(struct icd_state *st)
{
    const char *loaded = st->loader ? icd_jstr(st->loader, "path") : NULL;
    const char *override = icd_env("GPUCHECKUP_LIBOPENCL");
    if (!loaded || (override && *override))
        return;
    for (size_t i = 0; i < st->n_loaders; i++)
        if (st->loaders[i].wins) {
            if (!st->loaders[i].resolved || strcmp(st->loaders[i].resolved, loaded) != 0)
                report_section_add_note(st->sec, "dlopen loaded %s, but the library search predicts %s", loaded,
                                        st->loaders[i].resolved ? st->loaders[i].resolved : st->loaders[i].path);
            return;
        }
    report_section_add_note(st->sec, "dlopen loaded %s, which the library search did not predict", loaded);
}

static void icd_check_loaders(struct icd_state *st)
{
    struct report *r = st->ctx->report;
    if (!st->loader) {
        if (st->kind == ICD_KIND_NONE) {
            const char *lib = icd_env("GPUCHECKUP_LIBOPENCL");
            struct report_finding *f = report_add_finding(
                r, "icd.no-loader", "libOpenCL.so.1", "No OpenCL ICD loader: %s",
                st->loader_error ? st->loader_error : "libOpenCL.so.1 cannot be loaded");
            if (f && lib && *lib)
                report_finding_add_evidence(f, "GPUCHECKUP_LIBOPENCL", "%s", lib);
            /* A loader that exists but is off the search path is the likelier story. */
            for (size_t i = 0; f && i < st->n_loaders; i++)
                if (!st->loaders[i].searched && st->loaders[i].resolved) {
                    report_finding_set_hint(f,
                                            "%s exists but is not on the library search path: add its "
                                            "directory to /etc/ld.so.conf.d and run ldconfig, or install "
                                            "ocl-icd-libopencl1",
                                            st->loaders[i].path);
                    break;
                }
        }
    }
    /* Distinct files that a program asking for libOpenCL.so.1 could get. */
    size_t distinct = 0, win = (size_t)-1;
    for (size_t i = 0; i < st->n_loaders; i++) {
        const struct icd_loader_file *l = &st->loaders[i];
        if (l->wins)
            win = i;
        if (l->group == (int)i && l->have_id && l->loadable)
            for (size_t j = 0; j < st->n_loaders; j++)
                if (st->loaders[j].group == (int)i && strcmp(icd_basename(st->loaders[j].path), "libOpenCL.so.1") == 0) {
                    distinct++;
                    break;
                }
    }
    if (distinct < 2)
        return;
    char *list = NULL;
    for (size_t i = 0; i < st->n_loaders; i++) {
        const struct icd_loader_file *l = &st->loaders[i];
        if (strcmp(icd_basename(l->path), "libOpenCL.so.1") != 0 || !l->have_id || !l->loadable)
            continue;
        const char *kind = icd_loader_kind_of(icd_loader_file_info(st, i));
        char *item = str_printf("%s%s%s (%s%s%s)", list ? list : "", list ? ", " : "", l->path,
                                kind ? kind : "unidentified", l->searched ? ", " : ", off the search path: ", l->source);
        free(list);
        list = item;
    }
    const char *winner = win != (size_t)-1 ? st->loaders[win].path : NULL;
    const char *loaded = st->loader ? icd_jstr(st->loader, "path") : NULL;
    struct report_finding *f = report_add_finding(
        r, "icd.multiple-loaders", winner ? winner : "libOpenCL.so.1",
        "%zu different OpenCL loaders can be found: %s. A program loading libOpenCL.so.1 gets %s%s%s%s", distinct,
        list ? list : "?", winner ? winner : "none of them", loaded ? " (gpucheckup loaded " : "",
        loaded ? loaded : "", loaded ? ")" : "");
    free(list);
    if (f) {
        for (size_t i = 0; i < st->n_loaders; i++)
            if (strcmp(icd_basename(st->loaders[i].path), "libOpenCL.so.1") == 0 && st->loaders[i].have_id &&
                st->loaders[i].loadable)
                report_finding_add_evidence(f, st->loaders[i].path, "%s%s",
                                            st->loaders[i].resolved ? st->loaders[i].resolved : "(dangling)",
                                            st->loaders[i].wins ? " (wins)" : "");
        const char *ld = icd_env("LD_LIBRARY_PATH");
        if (ld && *ld)
            report_finding_add_evidence(f, "LD_LIBRARY_PATH", "%s", ld);
    }
}

/* ---- which .icd files and libraries the loader reads ---- */

static int icd_cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* True when the loader of KIND reads a directory entry called NAME. */
static bool icd_reads_name(enum icd_kind kind, const char *name)
{
    size_t len = strlen(name);
    if (!str_ends_with(name, ".icd"))
        return false;
    /* ocl-icd wants something before ".icd"; Khronos takes a bare ".icd" too. */
    return icd_is_ocl_semantics(kind) ? len > 4 : len >= 4;
}

static void icd_read_dir(struct icd_state *st, const char *dir)
{
    DIR *d = hostfs_opendir(st->ctx->fs, dir);
    if (!d) {
        st->vendors_dir_err = -errno;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (!icd_reads_name(st->kind, de->d_name)) {
            if (st->n_ignored < 32) {
                char **ni = realloc(st->ignored, (st->n_ignored + 1) * sizeof(*ni));
                if (ni) {
                    st->ignored = ni;
                    if ((ni[st->n_ignored] = icd_sanitized(de->d_name)))
                        st->n_ignored++;
                }
            }
            continue;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            char **nn = realloc(names, nc * sizeof(*nn));
            if (!nn)
                break;
            names = nn;
            cap = nc;
        }
        if ((names[n] = strdup(de->d_name)))
            n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), icd_cmp_names);
    for (size_t i = 0; i < n; i++) {
        char *path = str_printf("%s%s%s", dir, str_ends_with(dir, "/") ? "" : "/", names[i]);
        if (path)
            icd_entry_new(st, path, "vendors-dir");
        free(path);
        free(names[i]);
    }
    free(names);
    if (st->n_ignored > 1)
        qsort(st->ignored, st->n_ignored, sizeof(*st->ignored), icd_cmp_names);
}

static void icd_collect(struct icd_state *st)
{
    const char *ov = icd_env("OCL_ICD_VENDORS");
    const char *vp = icd_env("OPENCL_VENDOR_PATH");
    const char *fn = icd_env("OCL_ICD_FILENAMES");
    bool ocl = icd_is_ocl_semantics(st->kind);
    const char *dir = ICD_VENDORS_DIR;
    st->vendors_from = "default";
    if (ocl && vp && *vp) {
        dir = vp;
        st->vendors_from = "OPENCL_VENDOR_PATH";
    }
    const char *default_dir = dir;
    if (!ocl && fn && *fn) {
        /* Khronos: OCL_ICD_FILENAMES first, ':'-separated libraries. */
        char *copy = strdup(fn);
        char *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save)) {
            struct icd_entry *e = icd_entry_new(st, NULL, "OCL_ICD_FILENAMES");
            if (e)
                e->library = strdup(tok);
        }
        free(copy);
    }
    if (ov && !*ov && !ocl) {
        /* Khronos takes a set but empty OCL_ICD_VENDORS as the directory "": none. */
        st->vendors_from = "OCL_ICD_VENDORS";
        st->vendors_dir_err = -ENOENT;
        report_section_add_note(st->sec, "OCL_ICD_VENDORS is set but empty: the Khronos loader then reads no "
                                         "vendors directory at all");
        return;
    }
    if (ov && *ov) {
        char *abs = icd_absolute(st, ov);
        struct stat sb;
        bool is_dir = abs && hostfs_stat(st->ctx->fs, abs, &sb, true) == 0 && S_ISDIR(sb.st_mode);
        if (is_dir || !ocl) {
            /* Khronos takes it as a directory, whatever it is. */
            st->vendors_dir = abs;
            st->vendors_from = "OCL_ICD_VENDORS";
            icd_read_dir(st, abs);
            return;
        }
        st->vendors_from = "OCL_ICD_VENDORS";
        if (str_ends_with(ov, ".icd")) {
            /* ocl-icd: one .icd file; a bare name is looked for in the vendors directory first. */
            char *file = NULL;
            if (!strchr(ov, '/')) {
                char *cand = str_printf("%s/%s", default_dir, ov);
                struct stat fs;
                if (cand && hostfs_stat(st->ctx->fs, cand, &fs, true) == 0)
                    file = cand;
                else
                    free(cand);
            }
            if (!file)
                file = str_dup(abs);
            icd_entry_new(st, file, "OCL_ICD_VENDORS");
            free(file);
        } else {
            /* ocl-icd: anything else is the one ICD library to load. */
            struct icd_entry *e = icd_entry_new(st, NULL, "OCL_ICD_VENDORS");
            if (e)
                e->library = strdup(ov);
        }
        free(abs);
        return;
    }
    st->vendors_dir = icd_absolute(st, dir);
    if (st->vendors_dir)
        icd_read_dir(st, st->vendors_dir);
}

/* ---- each .icd file, before any driver code runs ---- */

/* Who besides root could change PATH (on FS)? A heap reason, or NULL. STICKY_OK: a sticky
 * world-writable directory is fine (others cannot replace what is already in it). */
static char *icd_writable_by_others(const struct hostfs *fs, const char *path, bool sticky_ok)
{
    struct stat sb;
    if (!path || hostfs_stat(fs, path, &sb, true) != 0)
        return NULL;
    unsigned mode = (unsigned)(sb.st_mode & 07777);
    if (sb.st_uid != 0)
        return str_printf("%s is owned by uid %u (mode %04o)", path, (unsigned)sb.st_uid, mode);
    if ((sb.st_mode & S_IWOTH) && !(sticky_ok && S_ISDIR(sb.st_mode) && (sb.st_mode & S_ISVTX)))
        return str_printf("%s is writable by every user (mode %04o)", path, mode);
    if ((sb.st_mode & S_IWGRP) && sb.st_gid != 0)
        return str_printf("%s is writable by group %u (mode %04o)", path, (unsigned)sb.st_gid, mode);
    return NULL;
}

static char *icd_dirname(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s)
        return NULL;
    return s == path ? strdup("/") : strndup(path, (size_t)(s - path));
}

static void icd_check_insecure(struct icd_state *st, struct icd_entry *e)
{
    char *why[4] = {NULL, NULL, NULL, NULL};
    /* Ownership in a captured tree says nothing about this machine: only live files count. */
    if (e->file && st->ctx->fs->live) {
        why[0] = icd_writable_by_others(st->ctx->fs, e->file, false);
        char *d = icd_dirname(e->file);
        why[1] = icd_writable_by_others(st->ctx->fs, d, false);
        free(d);
    }
    if (e->resolved) {
        why[2] = icd_writable_by_others(st->libfs, e->resolved, false);
        char *d = icd_dirname(e->resolved);
        why[3] = icd_writable_by_others(st->libfs, d, true);
        free(d);
    }
    struct report_finding *f = NULL;
    for (size_t i = 0; i < 4; i++) {
        if (!why[i])
            continue;
        if (!f)
            f = report_add_finding(st->ctx->report, "icd.insecure", icd_subject(e),
                                   "%s: every OpenCL program, root's included, runs the library this names, and "
                                   "%s",
                                   icd_subject(e), why[i]);
        if (f)
            report_finding_add_evidence(f, i < 2 ? "icd file" : "library", "%s", why[i]);
        free(why[i]);
    }
}

/* Describe BITS as "a CRLF line ending, more than one line". Caller frees. */
static char *icd_bad_list(unsigned bits)
{
    char *out = NULL;
    for (unsigned b = 1; b < (1u << ICD_BAD_COUNT); b <<= 1) {
        if (!(bits & b))
            continue;
        char *n = str_printf("%s%s%s", out ? out : "", out ? ", " : "", icd_bad_text(b));
        free(out);
        out = n;
    }
    return out;
}

/* Read and parse E's .icd file. */
static void icd_read_file(struct icd_state *st, struct icd_entry *e)
{
    struct report *r = st->ctx->report;
    struct stat sb;
    int rc = hostfs_stat(st->ctx->fs, e->file, &sb, true);
    if (rc == 0 && S_ISDIR(sb.st_mode))
        rc = -EISDIR;
    if (rc == 0 && !S_ISREG(sb.st_mode)) {
        e->fifo = S_ISFIFO(sb.st_mode);
        /* ocl-icd's fopen blocks forever on a FIFO; the Khronos loader skips anything irregular. */
        icd_set(e, "unreadable", "not a regular file (%s)",
                S_ISFIFO(sb.st_mode) ? "a FIFO, on which ocl-icd blocks forever" : S_ISSOCK(sb.st_mode) ? "a socket" : "a device");
        report_add_finding(r, "icd.unreadable", e->file, "%s is %s", e->file, e->detail);
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = hostfs_read_file(st->ctx->fs, e->file, ICD_MAX_FILE, &buf, &len);
    if (rc == -EFBIG) {
        e->bad = e->fatal = ICD_BAD_OVERLONG;
        icd_set(e, "malformed", "larger than %d bytes: not a one-line .icd file", ICD_MAX_FILE);
        report_add_finding(r, "icd.malformed", e->file, "%s is %s: the loader cannot use it", e->file,
                           icd_bad_text(ICD_BAD_OVERLONG));
        return;
    }
    if (rc < 0) {
        struct stat lsb;
        bool dangling = rc == -ENOENT && hostfs_stat(st->ctx->fs, e->file, &lsb, false) == 0 && S_ISLNK(lsb.st_mode);
        icd_set(e, "unreadable", "%s", dangling ? "a symbolic link to a missing file" : strerror(-rc));
        struct report_finding *f = report_add_finding(r, "icd.unreadable", e->file,
                                                      "%s cannot be read (%s): the loader skips it", e->file,
                                                      e->detail);
        if (f && dangling) {
            char *target = NULL;
            if (hostfs_readlink(st->ctx->fs, e->file, &target) == 0)
                report_finding_add_evidence(f, e->file, "-> %s", target);
            free(target);
            report_finding_set_hint(f, "Remove the dangling link %s, or reinstall the driver it belonged to.",
                                    e->file);
        }
        return;
    }
    struct icd_parsed p;
    if (icd_parse_content(buf, len, st->kind, &p) != 0) {
        free(buf);
        icd_set(e, "not-probed", "out of memory");
        return;
    }
    e->library = p.library;
    p.library = NULL;
    e->bad = p.bad;
    e->fatal = p.fatal;
    /* The name as the author meant it: the first line, without a CR and blanks. */
    char *clean = strndup(buf, strcspn(buf, "\n"));
    if (clean) {
        clean[strcspn(clean, "\r")] = '\0';
        str_trim(str_sanitize(clean));
    }
    free(buf);
    if (!e->bad) {
        free(clean);
        return;
    }
    char *all = icd_bad_list(e->bad);
    struct report_finding *f;
    if (e->fatal) {
        char *fatal = icd_bad_list(e->fatal);
        icd_set(e, "malformed", "%s", fatal ? fatal : "?");
        f = report_add_finding(r, "icd.malformed", e->file, "%s is malformed (%s): the %s loader %s", e->file,
                               all ? all : "?", icd_kind_name(st->kind) ? icd_kind_name(st->kind) : "default",
                               (e->fatal & ICD_BAD_EMPTY) && !icd_is_ocl_semantics(st->kind)
                                   ? "hangs on it"
                                   : "skips it without a word");
        free(fatal);
    } else {
        /* Harmless for this loader (ocl-icd reads the first line only), fatal for the Khronos one. */
        f = report_add_finding(r, "icd.malformed", e->file,
                               "%s is malformed (%s): ocl-icd reads only its first line, but the Khronos loader (bundled "
                               "with CUDA, oneAPI and other SDKs) would skip it",
                               e->file, all ? all : "?");
        if (f)
            f->severity = REPORT_SEV_WARNING;
    }
    if (f) {
        char *shown = icd_sanitized(e->library);
        report_finding_add_evidence(f, e->file, "\"%s\" (%zu bytes)", shown ? shown : "", len);
        free(shown);
        if (clean && *clean && !strchr(clean, '\'') && !(e->bad & (ICD_BAD_BINARY | ICD_BAD_OVERLONG)))
            report_finding_set_hint(f, "Rewrite it as one line: printf '%%s\\n' '%s' > %s", clean, e->file);
        else
            report_finding_set_hint(f, "Remove %s, or write the vendor library's name into it (one line).",
                                    e->file);
    }
    free(all);
    free(clean);
}

/* True when NAME looks like an OpenCL loader rather than a driver. */
static bool icd_names_loader(const char *name)
{
    return name && str_starts_with(icd_basename(name), "libOpenCL.so");
}

/* Everything that can be said without running driver code. */
static void icd_precheck(struct icd_state *st)
{
    struct report *r = st->ctx->report;
    /* The loader actually loaded (GPUCHECKUP_LIBOPENCL may name one outside the scan). */
    struct stat loader_st;
    const char *lpath = st->loader ? icd_jstr(st->loader, "path") : NULL;
    bool have_loader_id = lpath && lpath[0] == '/' && hostfs_stat(st->libfs, lpath, &loader_st, true) == 0;
    size_t probes = 0;
    for (size_t i = 0; i < st->n; i++) {
        struct icd_entry *e = &st->e[i];
        if (e->file)
            icd_read_file(st, e);
        if (e->status || !e->library)
            continue;
        if (++probes > ICD_MAX_PROBES) {
            icd_set(e, "not-probed", "more than %d drivers: only the first ones were probed", ICD_MAX_PROBES);
            continue;
        }
        e->found = icd_search_find(&st->search, e->library, &e->via);
        if (e->found) {
            e->resolved = icd_fs_realpath(st->libfs, e->found);
            struct stat sb;
            if (e->resolved && hostfs_stat(st->libfs, e->resolved, &sb, true) == 0) {
                e->dev = sb.st_dev;
                e->ino = sb.st_ino;
                e->have_id = true;
            }
        }
        bool self = icd_names_loader(e->library) || icd_names_loader(e->resolved);
        for (size_t j = 0; !self && e->have_id && j < st->n_loaders; j++)
            if (st->loaders[j].have_id && st->loaders[j].dev == e->dev && st->loaders[j].ino == e->ino)
                self = true;
        if (!self && e->have_id && have_loader_id && loader_st.st_dev == e->dev && loader_st.st_ino == e->ino)
            self = true;
        if (self) {
            char *lib = icd_sanitized(e->library);
            icd_set(e, "self-reference", "names the OpenCL loader %s", e->resolved ? e->resolved : lib ? lib : "?");
            struct report_finding *f = report_add_finding(
                r, "icd.self-reference", icd_subject(e),
                "%s names %s, an OpenCL loader, not a vendor driver: ocl-icd loads nothing from it and the "
                "Khronos loader hangs forever on it",
                icd_subject(e), lib ? lib : "?");
            if (f && e->file)
                report_finding_set_hint(f, "Remove %s.", e->file);
            free(lib);
            continue;
        }
        for (size_t j = 0; j < i && e->have_id; j++) {
            const struct icd_entry *o = &st->e[j];
            if (o->have_id && o->dev == e->dev && o->ino == e->ino && o->dup_of < 0 &&
                (!o->status || strcmp(o->status, "self-reference") != 0)) {
                e->dup_of = (int)j;
                icd_set(e, "duplicate", "same library as %s", icd_subject(o));
                if (!icd_is_ocl_semantics(st->kind)) {
                    /* The Khronos loader skips a library it already loaded (loader/icd.c,
                     * khrIcdVendorAdd): one platform list, nothing to fix. */
                    report_section_add_note(st->sec, "%s and %s both load %s: the loader in use loads it once",
                                            icd_subject(o), icd_subject(e), e->resolved);
                    break;
                }
                struct report_finding *f = report_add_finding(
                    r, "icd.duplicate", icd_subject(e),
                    "%s and %s both load %s: ocl-icd lists its platforms twice, the Khronos loader skips the "
                    "second",
                    icd_subject(o), icd_subject(e), e->resolved);
                if (f && e->file)
                    report_finding_set_hint(f, "Remove one of %s and %s.", icd_subject(o), e->file);
                break;
            }
        }
    }
    if (st->root)
        for (size_t i = 0; i < st->n; i++)
            icd_check_insecure(st, &st->e[i]);
}

/* ---- each vendor library alone, and all of them through the loader ---- */

/* Turn one platform of a child's answer into the public shape; sets *WHY when the loader skips it. */
static json_object *icd_platform_public(const struct icd_state *st, json_object *p, const char **why)
{
    *why = NULL;
    json_object *o = json_object_new_object();
    static const char *const keys[] = {"name", "vendor", "version", "icd_suffix"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *v = icd_jstr(p, keys[i]);
        json_object_object_add(o, keys[i], v ? json_object_new_string(v) : NULL);
    }
    int64_t n;
    json_object_object_add(o, "devices", icd_jint(p, "devices", &n) ? json_object_new_int64(n) : NULL);
    json_object_object_add(o, "gpu_devices", icd_jint(p, "gpu_devices", &n) ? json_object_new_int64(n) : NULL);
    json_object *hk = NULL;
    json_object_object_get_ex(p, "has_khr_icd", &hk);
    json_object_object_add(o, "has_khr_icd", json_object_get(hk));
    bool assume = icd_env("OCL_ICD_ASSUME_ICD_EXTENSION") && *icd_env("OCL_ICD_ASSUME_ICD_EXTENSION");
    if (icd_jstr(p, "error"))
        *why = icd_jstr(p, "error");
    else if (!hk)
        *why = "its CL_PLATFORM_EXTENSIONS query fails";
    else if (icd_is_ocl_semantics(st->kind) && !json_object_get_boolean(hk) && !assume)
        *why = "its extensions lack cl_khr_icd, which ocl-icd requires";
    else if (!icd_jstr(p, "icd_suffix"))
        *why = "its CL_PLATFORM_ICD_SUFFIX_KHR query fails";
    json_object_object_add(o, "accepted", json_object_new_boolean(*why == NULL));
    return o;
}

/* "Portable Computing Language (2 devices)" for each platform, joined; caller frees. */
static char *icd_platforms_text(json_object *arr)
{
    char *out = NULL;
    size_t n = arr ? json_object_array_length(arr) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(arr, i);
        const char *name = icd_jstr(p, "name");
        int64_t d = 0;
        bool hd = icd_jint(p, "devices", &d);
        char *item;
        if (hd)
            item = str_printf("%s%s%s (%lld device%s)", out ? out : "", out ? "; " : "", name ? name : "unnamed",
                              (long long)d, d == 1 ? "" : "s");
        else
            item = str_printf("%s%s%s (devices unknown)", out ? out : "", out ? "; " : "", name ? name : "unnamed");
        free(out);
        out = item;
    }
    return out;
}

/* ---- which driver, and is its hardware here (the vendor table and the pci section) ---- */

/* The driver E is, from the vendor table: its library names first (the most specific), then its
 * platforms' names and vendors, then the .icd file's name. NULL when none is recognised. */
static const struct vendor_cl *icd_driver_of(const struct icd_entry *e)
{
    const struct vendor_cl *d = vendor_cl_by_library(e->resolved);
    if (!d)
        d = vendor_cl_by_library(e->library);
    size_t n = e->platforms ? json_object_array_length(e->platforms) : 0;
    for (size_t i = 0; !d && i < n; i++)
        d = vendor_cl_by_platform(icd_jstr(json_object_array_get_idx(e->platforms, i), "name"));
    for (size_t i = 0; !d && i < n; i++)
        d = vendor_cl_by_platform(icd_jstr(json_object_array_get_idx(e->platforms, i), "vendor"));
    if (!d && e->file)
        d = vendor_cl_by_library(e->file);
    return d;
}

static void icd_classify(const struct icd_state *st, struct icd_entry *e)
{
    if (e->classified)
        return;
    e->classified = true;
    e->drv = icd_driver_of(e);
    e->hw = VENDOR_HW_UNKNOWN;
    if (e->drv)
        e->hw = vendor_cl_hardware(e->drv, st->pci, e->drv->cpu_env ? icd_env(e->drv->cpu_env) : NULL, e->hw_why,
                                   sizeof(e->hw_why));
}

/* When E's hardware is absent, record its failure or emptiness (WHAT: "fails with -6 (...)") as one
 * icd.absent-hardware and return true; otherwise return false and record nothing. */
static bool icd_absent_hardware(struct icd_state *st, struct icd_entry *e, const char *what)
{
    icd_classify(st, e);
    if (e->hw != VENDOR_HW_ABSENT)
        return false;
    e->absent = true;
    struct report *r = st->ctx->report;
    char *lib = icd_sanitized(e->resolved ? e->resolved : e->library);
    struct report_finding *f = report_add_finding(
        r, "icd.absent-hardware", icd_subject(e), "%s: %s (%s) %s: a driver for absent hardware, it needs %s",
        e->file ? e->file : e->source, e->drv->display, lib ? lib : "?", what, e->drv->needs_text);
    if (f) {
        report_finding_add_evidence(f, "/sys/bus/pci/devices", "%s", e->hw_why);
        if (e->drv->cpu_env)
            report_finding_add_evidence(f, e->drv->cpu_env, "%s",
                                        icd_env(e->drv->cpu_env) ? icd_env(e->drv->cpu_env) : "(not set)");
        struct report_finding *cause = report_find_finding(r, "pci.no-gpu", NULL);
        if (cause)
            report_finding_set_cause(f, cause->id, cause->subject);
        report_finding_set_hint(f,
                                "Nothing to fix on a machine without %s: the driver is installed but has nothing "
                                "to drive. If this machine should have one, `gpucheckup pci` shows what the bus "
                                "lists; if the driver is not wanted, remove its package (`dpkg -S %s` names it).",
                                e->drv->needs_text, lib ? lib : "the library");
    }
    free(lib);
    return true;
}

/* The first GPU of the pci section whose vendor ID is ID, or NULL. */
static json_object *icd_pci_gpu(const struct icd_state *st, int id)
{
    json_object *devs = NULL;
    if (!st->pci || !json_object_object_get_ex(st->pci, "devices", &devs) || !json_object_is_type(devs, json_type_array))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(devs); i++) {
        json_object *g = json_object_array_get_idx(devs, i);
        const char *v = icd_jstr(g, "vendor_id");
        char *end = NULL;
        if (v && strtol(v, &end, 16) == id && end && !*end)
            return g;
    }
    return NULL;
}

/* What the render nodes of the GPU at ADDR look like: a heap sentence, or NULL when none is listed. */
static char *icd_render_nodes_text(const struct icd_state *st, const char *addr)
{
    json_object *nodes = NULL;
    if (!st->pci || !json_object_object_get_ex(st->pci, "nodes", &nodes) || !json_object_is_type(nodes, json_type_array))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i);
        const char *path = icd_jstr(n, "path"), *dev = icd_jstr(n, "device");
        if (!path || !dev || strcmp(dev, addr) != 0 || !str_starts_with(path, "/dev/dri/renderD"))
            continue;
        if (!icd_jbool(n, "present", false))
            return str_printf("its render node %s is missing (a container started without /dev/dri?)", path);
        json_object *acc = NULL;
        json_object_object_get_ex(n, "accessible", &acc);
        const char *group = icd_jstr(n, "group"), *mode = icd_jstr(n, "mode");
        if (acc && !json_object_get_boolean(acc))
            return str_printf("its render node %s (group %s, mode %s) is not readable and writable by this user: "
                              "add the user to that group (`sudo usermod -aG %s $USER`, then log in again)",
                              path, group ? group : "?", mode ? mode : "?", group ? group : "render");
        return str_printf("its render node %s (group %s, mode %s) is accessible", path, group ? group : "?",
                          mode ? mode : "?");
    }
    return str_printf("no render node /dev/dri/renderD* belongs to it");
}

/* A hint for an error or empty answer of E whose hardware is present, fitting its vendor and CODE. */
static void icd_hardware_hint(struct icd_state *st, struct icd_entry *e, struct report_finding *f, int64_t code)
{
    icd_classify(st, e);
    if (!f || !e->drv || e->hw != VENDOR_HW_PRESENT)
        return;
    report_finding_add_evidence(f, "/sys/bus/pci/devices", "%s", e->hw_why);
    char answer[96];
    if (code == CL_SUCCESS)
        snprintf(answer, sizeof(answer), "answers with zero platforms");
    else
        snprintf(answer, sizeof(answer), "fails with %s", clapi_error_name((cl_int)code));
    if (strcmp(e->drv->name, "intel-neo") == 0) {
        /* NEO answers -6 (CL_OUT_OF_HOST_MEMORY) when it finds no GPU it can open: seen with Debian's
         * 22.43 on a machine without one. With a GPU the usual reasons it cannot: a user outside the
         * render node's group sees no GPU where root does (intel/compute-runtime issue 478); a GPU
         * newer than the NEO release is not in its device list (NEO's README, "Supported Platforms");
         * i915 and xe load GuC/HuC firmware (Debian: firmware-misc-nonfree, /lib/firmware/i915). */
        json_object *g = icd_pci_gpu(st, VENDOR_PCI_INTEL);
        const char *addr = icd_jstr(g, "address"), *drv = icd_jstr(g, "driver"), *did = icd_jstr(g, "device_id");
        const struct vendor *intel = vendor_by_pci_id(VENDOR_PCI_INTEL);
        if (!addr)
            return;
        if (!drv || !vendor_list_has(intel->modules, drv)) {
            report_finding_set_hint(f, "The Intel GPU %s is %s%s: NEO needs it driven by i915 or xe (the pci findings "
                                       "say why it is not).",
                                    addr, drv ? "bound to " : "bound to no driver", drv ? drv : "");
            return;
        }
        char *nodes = icd_render_nodes_text(st, addr);
        char fwdir[64];
        snprintf(fwdir, sizeof(fwdir), "/lib/firmware/%s", drv);
        struct stat sb;
        bool fw = hostfs_stat(st->ctx->fs, fwdir, &sb, true) == 0 && S_ISDIR(sb.st_mode);
        report_finding_set_hint(f,
                                "The Intel GPU %s (device %s) is bound to %s, yet NEO %s. Seen here: %s; "
                                "%s. Usual causes: the render node's group (the user must be in it), a NEO older "
                                "than the GPU generation (check that device %s is in the supported list of the "
                                "installed intel-opencl-icd, else update it), or missing GPU firmware (`sudo dmesg "
                                "| grep -iE 'guc|huc|firmware'`).",
                                addr, did ? did : "?", drv, answer, nodes ? nodes : "?",
                                fw ? "the firmware directory is there" : "no firmware directory (Debian: `sudo apt "
                                                                         "install firmware-misc-nonfree`)",
                                did ? did : "?");
        report_finding_add_evidence(f, fwdir, "%s", fw ? "present" : "absent");
        free(nodes);
    } else if (strcmp(e->drv->name, "nvidia") == 0) {
        report_finding_set_hint(f, "An NVIDIA GPU is here (%s), yet its OpenCL driver %s: the pci and drv "
                                   "findings (module loaded, versions matching, /dev/nvidia* nodes) usually name the "
                                   "cause; a kernel module and libraries of different versions fail until a reboot.",
                                e->hw_why, answer);
    } else if (strcmp(e->drv->name, "amd") == 0) {
        report_finding_set_hint(f, "An AMD GPU is here (%s), yet ROCm's OpenCL %s: it needs amdgpu and "
                                   "read-write access to /dev/kfd and the render node (usually group render or video: "
                                   "`sudo usermod -aG render,video $USER`), and a GPU its ROCm release supports.",
                                e->hw_why, answer);
    }
}

/* Decide E's status from its child's result R (STAGE: where the child was). */
static void icd_judge(struct icd_state *st, struct icd_entry *e, struct isolate_result *res, int stage)
{
    struct report *r = st->ctx->report;
    const char *subj = icd_subject(e);
    const char *who = e->file ? e->file : e->source; /* what names the library */
    char *lib = icd_sanitized(e->library);
    e->probed = true;
    e->elapsed_ms = res->elapsed_ms;
    e->output = str_dup(res->stderr_tail);
    double tmo = st->ctx->timeout_ms / 1000.0;
    struct report_finding *f = NULL;
    if (res->status == ISOLATE_SPAWN_FAILED) {
        icd_set(e, "not-probed", "%s", res->detail ? res->detail : "could not start a child process");
        report_add_finding(r, "core.isolated-child-failed", subj, "Could not probe %s: %s", subj, e->detail);
        free(lib);
        return;
    }
    if (res->status != ISOLATE_OK) {
        char *why = icd_child_failure(res, stage, tmo);
        bool hang = res->status == ISOLATE_TIMEOUT;
        icd_set(e, hang ? "hang" : "crash", "%s", why ? why : "?");
        free(why);
        if (hang)
            f = report_add_finding(r, "icd.hang", subj,
                                   "%s: the driver %s hangs when asked for its platforms: %s. Every OpenCL "
                                   "program, clinfo included, hangs the same way",
                                   who, lib ? lib : "?", e->detail);
        else
            f = report_add_finding(r, "icd.crash", subj,
                                   "%s: the driver %s crashes when asked for its platforms: %s. Every OpenCL "
                                   "program, clinfo included, dies the same way",
                                   who, lib ? lib : "?", e->detail);
        if (f) {
            char *tail = icd_output_tail(res->stderr_tail);
            if (tail)
                report_finding_add_evidence(f, "driver output", "%s", tail);
            free(tail);
            if (e->file && st->vendors_dir)
                report_finding_set_hint(f,
                                        "Update or reinstall the driver; until then move %s out of %s "
                                        "(other drivers then work again)",
                                        e->file, st->vendors_dir);
        }
        free(lib);
        return;
    }
    json_object *v = res->value;
    const char *dlerr = icd_jstr(v, "dlopen_error");
    bool ocl = icd_is_ocl_semantics(st->kind);
    int64_t code = 0, count = 0, list = 0;
    bool have_code = icd_jint(v, "count_code", &code);
    icd_jint(v, "count", &count);
    if (dlerr) {
        if (!e->found) {
            icd_set(e, "missing-library", "%s", dlerr);
            f = report_add_finding(r, "icd.missing-library", subj, "%s names %s, which cannot be found: %s",
                                   who, lib ? lib : "?", dlerr);
            if (f) {
                if (e->library && e->library[0] == '/')
                    report_finding_set_hint(f,
                                            e->file ? "%s does not exist: reinstall the driver, or remove the stale %s"
                                                    : "%s does not exist: point %s at an existing file or directory",
                                            lib, who);
                else if (e->library && strchr(e->library, '/'))
                    report_finding_set_hint(f,
                                            "A relative path is looked up from each program's current "
                                            "directory: write the library's absolute path into %s",
                                            subj);
                else
                    report_finding_set_hint(f,
                                            "No directory of LD_LIBRARY_PATH, the ld.so cache or the system "
                                            "library directories has %s: install the driver package that "
                                            "provides it (run ldconfig after a manual install), or write its "
                                            "absolute path into %s",
                                            lib, subj);
            }
        } else {
            icd_set(e, "load-failed", "%s", dlerr);
            f = report_add_finding(r, "icd.load-failed", subj, "%s names %s, which exists but cannot be loaded: %s",
                                   who, lib ? lib : "?", dlerr);
            if (f)
                report_finding_set_hint(f, "Run: ldd %s (a dependency is missing or built for another machine)",
                                        e->resolved ? e->resolved : e->found);
        }
        free(lib);
        return;
    }
    bool gefa = icd_jbool(v, "exports_gefa", false);
    bool via_gefa = icd_jbool(v, "entry_via_gefa", false);
    bool via_sym = icd_jbool(v, "entry_via_dlsym", false);
    if (!gefa || !(via_gefa || (ocl && via_sym))) {
        const char *why = !gefa ? (via_sym ? "it exports clIcdGetPlatformIDsKHR but not clGetExtensionFunctionAddress, "
                                             "through which both loaders look it up"
                                           : "it exports neither clGetExtensionFunctionAddress nor "
                                             "clIcdGetPlatformIDsKHR")
                                : (via_sym ? "its clGetExtensionFunctionAddress does not return "
                                             "clIcdGetPlatformIDsKHR, and the Khronos loader asks only that way"
                                           : "clGetExtensionFunctionAddress(\"clIcdGetPlatformIDsKHR\") returns "
                                             "NULL");
        icd_set(e, "no-entry-point", "%s", why);
        report_add_finding(r, "icd.no-entry-point", subj, "%s: %s is not an OpenCL ICD: %s", subj,
                           lib ? lib : "?", why);
        free(lib);
        return;
    }
    if (ocl && !icd_jbool(v, "exports_platform_info", true) &&
        !(icd_env("OCL_ICD_ASSUME_ICD_EXTENSION") && *icd_env("OCL_ICD_ASSUME_ICD_EXTENSION"))) {
        icd_set(e, "rejected", "exports no clGetPlatformInfo, which ocl-icd requires");
        report_add_finding(r, "icd.rejected", subj, "%s: ocl-icd skips %s: it %s", who, lib ? lib : "?",
                           e->detail);
        free(lib);
        return;
    }
    if (have_code && (code == CL_PLATFORM_NOT_FOUND_KHR || (code == CL_SUCCESS && count == 0))) {
        if (code == CL_SUCCESS)
            icd_set(e, "no-platforms", "zero platforms");
        else
            icd_set(e, "no-platforms", "%lld (%s)", (long long)code, clapi_error_name((cl_int)code));
        char *what = str_printf("reports no platform (%s)", e->detail);
        bool absent = icd_absent_hardware(st, e, what ? what : "reports no platform");
        free(what);
        if (!absent) {
            f = report_add_finding(r, "icd.no-platforms", subj,
                                   "%s: the driver %s loads but reports no platform (%s): it found no device it "
                                   "drives",
                                   who, lib ? lib : "?", e->detail);
            icd_hardware_hint(st, e, f, code);
        }
        free(lib);
        return;
    }
    if (have_code && code != CL_SUCCESS) {
        icd_set(e, "error", "%lld (%s)", (long long)code, clapi_error_name((cl_int)code));
        char *what = str_printf("fails with %s", e->detail);
        if (!icd_absent_hardware(st, e, what ? what : "fails")) {
            f = report_add_finding(r, "icd.error", subj, "%s: clIcdGetPlatformIDsKHR of %s fails with %s", subj,
                                   lib ? lib : "?", e->detail);
            icd_hardware_hint(st, e, f, code);
        }
        free(what);
        free(lib);
        return;
    }
    if (icd_jint(v, "list_code", &list) && list != CL_SUCCESS) {
        icd_set(e, "error", "%lld (%s) listing the platforms", (long long)list, clapi_error_name((cl_int)list));
        char *what = str_printf("fails with %s", e->detail);
        if (!icd_absent_hardware(st, e, what ? what : "fails")) {
            f = report_add_finding(r, "icd.error", subj, "%s: clIcdGetPlatformIDsKHR of %s fails with %s", subj,
                                   lib ? lib : "?", e->detail);
            icd_hardware_hint(st, e, f, list);
        }
        free(what);
        free(lib);
        return;
    }
    json_object *ps = NULL;
    json_object_object_get_ex(v, "platforms", &ps);
    size_t np = ps ? json_object_array_length(ps) : 0, accepted = 0;
    char *first_why = NULL;
    for (size_t i = 0; i < np; i++) {
        const char *why = NULL;
        json_object *pub = icd_platform_public(st, json_object_array_get_idx(ps, i), &why);
        if (why) {
            const char *pname = icd_jstr(pub, "name");
            report_add_finding(r, "icd.rejected", subj, "%s: the loader skips platform %s of %s: %s", who,
                               pname ? pname : "(unnamed)", lib ? lib : "?", why);
            if (!first_why)
                first_why = str_printf("the loader skips %s: %s", pname ? pname : "(unnamed)", why);
        } else {
            accepted++;
        }
        json_object_array_add(e->platforms, pub);
    }
    if (np > 0 && accepted == 0) {
        icd_set(e, "rejected", "%s", first_why ? first_why : "the loader skips every platform");
    } else {
        icd_set(e, "ok", NULL);
        /* Platforms that all list no device: empty, as a driver for absent hardware is. */
        bool empty = np > 0;
        for (size_t i = 0; i < json_object_array_length(e->platforms); i++) {
            int64_t d = -1;
            if (!icd_jint(json_object_array_get_idx(e->platforms, i), "devices", &d) || d != 0)
                empty = false;
        }
        if (empty) {
            const char *pname = icd_jstr(json_object_array_get_idx(e->platforms, 0), "name");
            char *what = str_printf("lists no device on its platform %s%s", pname ? pname : "(unnamed)",
                                    np > 1 ? " and the others" : "");
            icd_absent_hardware(st, e, what ? what : "lists no device");
            free(what);
        }
    }
    free(first_why);
    free(lib);
}

/* The combined view's answer into st->combined. */
static void icd_judge_combined(struct icd_state *st, struct isolate_result *res, int stage)
{
    json_object *c = json_object_new_object();
    json_object *plats = json_object_new_array();
    const char *status = "ok";
    char *detail = NULL;
    if (res->status != ISOLATE_OK) {
        status = res->status == ISOLATE_TIMEOUT ? "hang" : res->status == ISOLATE_SPAWN_FAILED ? "not-run" : "crash";
        detail = icd_child_failure(res, stage, st->ctx->timeout_ms / 1000.0);
    } else {
        json_object *v = res->value;
        int64_t code = 0, count = 0;
        const char *dlerr = icd_jstr(v, "dlopen_error");
        bool have = icd_jint(v, "count_code", &code);
        icd_jint(v, "count", &count);
        if (dlerr) {
            status = "error";
            detail = str_dup(dlerr);
        } else if (have && (code == CL_PLATFORM_NOT_FOUND_KHR || (code == CL_SUCCESS && count == 0))) {
            status = "no-platforms";
            detail = str_printf("clGetPlatformIDs: %lld (%s)", (long long)code, clapi_error_name((cl_int)code));
        } else if (have && code != CL_SUCCESS) {
            status = "error";
            detail = str_printf("clGetPlatformIDs: %lld (%s)", (long long)code, clapi_error_name((cl_int)code));
        } else {
            json_object *ps = NULL;
            json_object_object_get_ex(v, "platforms", &ps);
            for (size_t i = 0; ps && i < json_object_array_length(ps); i++) {
                const char *why;
                json_object *pub = icd_platform_public(st, json_object_array_get_idx(ps, i), &why);
                json_object_object_del(pub, "accepted");
                json_object_object_del(pub, "has_khr_icd");
                json_object_array_add(plats, pub);
            }
        }
    }
    json_object_object_add(c, "status", json_object_new_string(status));
    json_object_object_add(c, "detail", detail ? json_object_new_string(str_sanitize(detail)) : NULL);
    json_object_object_add(c, "platforms", plats);
    json_object_object_add(c, "elapsed_ms", res->status == ISOLATE_SPAWN_FAILED ? NULL : icd_json_ms(res->elapsed_ms));
    char *tail = icd_output_tail(res->stderr_tail);
    json_object_object_add(c, "output", tail ? json_object_new_string(tail) : NULL);
    free(tail);
    free(detail);
    st->combined = c;
}

static void icd_probe_all(struct icd_state *st)
{
    size_t n = st->n + 1;
    struct isolate_job *jobs = calloc(n, sizeof(*jobs));
    struct icd_child_arg *args = calloc(n, sizeof(*args));
    size_t *which = calloc(n, sizeof(*which));
    volatile int *stages = icd_stages_new(n);
    char *vendors_env = NULL;
    if (!jobs || !args || !which) {
        for (size_t i = 0; i < st->n; i++)
            if (!st->e[i].status)
                icd_set(&st->e[i], "not-probed", "out of memory");
        goto out;
    }
    int flags = (icd_is_ocl_semantics(st->kind) ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL;
    size_t k = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (st->e[i].status || !st->e[i].library)
            continue;
        which[k] = i;
        args[k] = (struct icd_child_arg){.lib = st->e[i].library, .dlflags = flags, .stage = stages ? &stages[k] : NULL};
        jobs[k] = (struct isolate_job){.fn = icd_child_vendor, .arg = &args[k]};
        k++;
    }
    size_t combined = (size_t)-1;
    if (st->loader) {
        /* Under --root the loader must read the root's vendors, as the rest of the report does. */
        if (!st->ctx->fs->live && st->vendors_dir)
            vendors_env = hostfs_real_path(st->ctx->fs, st->vendors_dir);
        combined = k;
        args[k] = (struct icd_child_arg){.vendors_env = vendors_env, .stage = stages ? &stages[k] : NULL};
        jobs[k] = (struct isolate_job){.fn = icd_child_combined, .arg = &args[k]};
        k++;
    }
    if (k > 0)
        isolate_run_many(jobs, k, st->ctx->timeout_ms);
    for (size_t j = 0; j < k; j++) {
        int stage = stages ? stages[j] : 0;
        if (j == combined)
            icd_judge_combined(st, &jobs[j].result, stage);
        else
            icd_judge(st, &st->e[which[j]], &jobs[j].result, stage);
        isolate_result_clear(&jobs[j].result);
    }
out:
    free(vendors_env);
    free(jobs);
    free(args);
    free(which);
    icd_stages_free(stages, n);
}

/* ---- drivers that crash only together ---- */

static bool icd_status_is(const char *s, const char *a, const char *b, const char *c, const char *d)
{
    return s && ((a && strcmp(s, a) == 0) || (b && strcmp(s, b) == 0) || (c && strcmp(s, c) == 0) ||
                 (d && strcmp(s, d) == 0));
}

static void icd_check_conflict(struct icd_state *st)
{
    const char *cs = icd_jstr(st->combined, "status");
    if (!icd_status_is(cs, "crash", "hang", NULL, NULL))
        return;
    bool ocl = icd_is_ocl_semantics(st->kind);
    /* Explained by a driver that fails alone (or a file the Khronos loader hangs on)? */
    json_object *expl = json_object_new_array();
    for (size_t i = 0; i < st->n; i++) {
        const struct icd_entry *e = &st->e[i];
        if (icd_status_is(e->status, "crash", "hang", "self-reference", NULL) || (ocl && e->fifo) ||
            (!ocl && icd_status_is(e->status, "malformed", NULL, NULL, NULL) && (e->fatal & ICD_BAD_EMPTY)))
            json_object_array_add(expl, json_object_new_string(icd_subject(e)));
    }
    json_object_object_add(st->combined, "explained_by", expl);
    if (json_object_array_length(expl) > 0)
        return;

    /* Every driver whose code the loader runs works alone: find the pairs that do not. */
    size_t *cand = calloc(st->n ? st->n : 1, sizeof(*cand));
    bool *involved = calloc(st->n ? st->n : 1, sizeof(*involved));
    size_t m = 0;
    for (size_t i = 0; cand && i < st->n; i++)
        if (icd_status_is(st->e[i].status, "ok", "no-platforms", "error", "rejected"))
            cand[m++] = i;
    /* Both orders when few enough (a conflict can depend on which loads first), else one. */
    size_t ordered = m > 1 ? m * (m - 1) : 0, njobs = 0;
    bool both_orders = ordered <= ICD_MAX_PAIR_JOBS;
    if (ordered)
        njobs = both_orders ? ordered : (ordered / 2 <= ICD_MAX_PAIR_JOBS ? ordered / 2 : 0);
    struct isolate_job *jobs = njobs ? calloc(njobs, sizeof(*jobs)) : NULL;
    struct icd_child_arg *args = njobs ? calloc(njobs, sizeof(*args)) : NULL;
    size_t(*pairs)[2] = njobs ? calloc(njobs, sizeof(*pairs)) : NULL;
    volatile int *stages = njobs ? icd_stages_new(njobs) : NULL;
    json_object *evidence = json_object_new_array();
    if (jobs && args && pairs) {
        int flags = (ocl ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL;
        size_t k = 0;
        for (size_t a = 0; a < m; a++)
            for (size_t b = 0; b < m; b++) {
                if (a == b || (!both_orders && b < a) || k >= njobs)
                    continue;
                pairs[k][0] = cand[a];
                pairs[k][1] = cand[b];
                args[k] = (struct icd_child_arg){.lib = st->e[cand[a]].library,
                                                 .lib2 = st->e[cand[b]].library,
                                                 .dlflags = flags,
                                                 .stage = stages ? &stages[k] : NULL};
                jobs[k] = (struct isolate_job){.fn = icd_child_pair, .arg = &args[k]};
                k++;
            }
        isolate_run_many(jobs, k, st->ctx->timeout_ms);
        for (size_t j = 0; j < k; j++) {
            struct isolate_result *res = &jobs[j].result;
            if (res->status == ISOLATE_SIGNAL || res->status == ISOLATE_TIMEOUT || res->status == ISOLATE_EXIT ||
                res->status == ISOLATE_BAD_OUTPUT) {
                int stage = stages ? stages[j] : 0;
                involved[pairs[j][0]] = involved[pairs[j][1]] = true;
                char *why = icd_child_failure(res, stage, st->ctx->timeout_ms / 1000.0);
                char *line = str_printf("%s then %s: %s%s", icd_subject(&st->e[pairs[j][0]]),
                                        icd_subject(&st->e[pairs[j][1]]), why ? why : "?",
                                        (stage >> 8) ? " of the second" : " of the first");
                if (line)
                    json_object_array_add(evidence, json_object_new_string(str_sanitize(line)));
                free(line);
                free(why);
            }
            isolate_result_clear(res);
        }
    }
    bool any = false;
    for (size_t i = 0; i < st->n; i++)
        any = any || (involved && involved[i]);
    char *names = NULL;
    size_t nnames = 0, total = 0;
    for (size_t c = 0; c < m; c++)
        total += !any || involved[cand[c]];
    json_object *arr = json_object_new_array();
    for (size_t c = 0; c < m; c++) {
        size_t i = cand[c];
        if (any && !involved[i])
            continue;
        nnames++;
        const char *sep = nnames == 1 ? "" : nnames == total ? " and " : ", ";
        char *n2 = str_printf("%s%s%s", names ? names : "", sep, icd_subject(&st->e[i]));
        free(names);
        names = n2;
        json_object_array_add(arr, json_object_new_string(icd_subject(&st->e[i])));
    }
    json_object_object_add(st->combined, "conflict", arr);
    const char *detail = icd_jstr(st->combined, "detail");
    const char *loader = st->loader ? icd_jstr(st->loader, "path") : NULL;
    struct report_finding *f;
    if (m == 0)
        f = report_add_finding(st->ctx->report, "icd.conflict", loader ? loader : "libOpenCL.so.1",
                               "OpenCL programs %s in the loader (%s) though no vendor driver fails alone",
                               strcmp(cs, "hang") == 0 ? "hang" : "crash", detail ? detail : "?");
    else if (total == 1)
        f = report_add_finding(st->ctx->report, "icd.conflict", loader ? loader : "libOpenCL.so.1",
                               "%s works alone, but through the loader, as every OpenCL program loads it, it %ss (%s)",
                               names ? names : "?", strcmp(cs, "hang") == 0 ? "hang" : "crashe",
                               detail ? detail : "?");
    else
        f = report_add_finding(st->ctx->report, "icd.conflict", loader ? loader : "libOpenCL.so.1",
                               "%s each work alone, but loaded together, as every OpenCL program loads them, "
                               "they %s (%s)",
                               names ? names : "?", strcmp(cs, "hang") == 0 ? "hang" : "crash",
                               detail ? detail : "?");
    for (size_t i = 0; f && i < json_object_array_length(evidence); i++)
        report_finding_add_evidence(f, "together", "%s", json_object_get_string(json_object_array_get_idx(evidence, i)));
    if (f && any && names)
        report_finding_set_hint(f, "Keep only one of %s: move the other .icd files out of %s.", names,
                                st->vendors_dir ? st->vendors_dir : "the vendors directory");
    json_object_put(evidence);
    free(names);
    free(cand);
    free(involved);
    free(jobs);
    free(args);
    free(pairs);
    icd_stages_free(stages, njobs);
}

/* ---- facts, summary, text ---- */

static json_object *icd_jnew_str(const char *s)
{
    if (!s)
        return NULL;
    char *c = icd_sanitized(s);
    json_object *o = c ? json_object_new_string(c) : NULL;
    free(c);
    return o;
}

static json_object *icd_entry_json(const struct icd_entry *e)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "file", icd_jnew_str(e->file));
    json_object_object_add(o, "source", json_object_new_string(e->source));
    json_object_object_add(o, "library", icd_jnew_str(e->library));
    json_object_object_add(o, "resolved", icd_jnew_str(e->resolved));
    json_object_object_add(o, "found_via", e->via ? json_object_new_string(e->via) : NULL);
    json_object_object_add(o, "status", json_object_new_string(e->status ? e->status : "not-probed"));
    json_object_object_add(o, "detail", icd_jnew_str(e->detail));
    json_object *bad = json_object_new_array();
    for (unsigned b = 1; b < (1u << ICD_BAD_COUNT); b <<= 1)
        if (e->bad & b)
            json_object_array_add(bad, json_object_new_string(icd_bad_name(b)));
    json_object_object_add(o, "malformed", bad);
    json_object_object_add(o, "vendor", e->drv ? json_object_new_string(e->drv->vendor) : NULL);
    if (e->drv) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "name", json_object_new_string(e->drv->name));
        json_object_object_add(d, "title", json_object_new_string(e->drv->display));
        json_object_object_add(d, "needs", json_object_new_string(e->drv->needs_text));
        json_object_object_add(d, "hardware", json_object_new_string(vendor_hw_name(e->hw)));
        json_object_object_add(d, "hardware_detail", e->hw_why[0] ? json_object_new_string(e->hw_why) : NULL);
        json_object_object_add(d, "absent_hardware", json_object_new_boolean(e->absent));
        json_object_object_add(o, "driver", d);
    } else {
        json_object_object_add(o, "driver", NULL);
    }
    json_object_object_add(o, "platforms", json_object_get(e->platforms));
    json_object_object_add(o, "elapsed_ms", e->probed ? icd_json_ms(e->elapsed_ms) : NULL);
    bool quiet = e->status && strcmp(e->status, "ok") == 0;
    char *tail = quiet ? NULL : icd_output_tail(e->output);
    json_object_object_add(o, "output", tail ? json_object_new_string(tail) : NULL);
    free(tail);
    return o;
}

static json_object *icd_loader_json(const struct icd_state *st)
{
    if (!st->loader)
        return NULL;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", icd_jnew_str(icd_jstr(st->loader, "path")));
    json_object_object_add(o, "name", icd_jnew_str(icd_jstr(st->loader, "name")));
    json_object_object_add(o, "vendor", icd_jnew_str(icd_jstr(st->loader, "vendor")));
    json_object_object_add(o, "version", icd_jnew_str(icd_jstr(st->loader, "version")));
    json_object_object_add(o, "ocl_version", icd_jnew_str(icd_jstr(st->loader, "ocl_version")));
    json_object_object_add(o, "kind", json_object_new_string(icd_kind_name(st->kind) ? icd_kind_name(st->kind) : "unknown"));
    return o;
}

static const char *const icd_env_names[] = {
    "OCL_ICD_VENDORS",   "OPENCL_VENDOR_PATH", "OCL_ICD_FILENAMES",    "OCL_ICD_ASSUME_ICD_EXTENSION",
    "OPENCL_LAYERS",     "LD_LIBRARY_PATH",    "GPUCHECKUP_LIBOPENCL", NULL,
};

static void icd_fill_data(struct icd_state *st)
{
    json_object *d = st->sec->data;
    for (size_t i = 0; i < st->n; i++)
        icd_classify(st, &st->e[i]);
    json_object_object_add(d, "loader", icd_loader_json(st));
    json_object *ls = json_object_new_array();
    for (size_t i = 0; i < st->n_loaders; i++) {
        const struct icd_loader_file *l = &st->loaders[i];
        json_object *info = icd_loader_file_info(st, i);
        bool ok = info && icd_jbool(info, "ok", false);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", icd_jnew_str(l->path));
        json_object_object_add(o, "resolved", icd_jnew_str(l->resolved));
        json_object_object_add(o, "source", json_object_new_string(l->source));
        json_object_object_add(o, "searched", json_object_new_boolean(l->searched));
        json_object_object_add(o, "wins", json_object_new_boolean(l->wins));
        json_object_object_add(o, "loadable", json_object_new_boolean(l->loadable));
        json_object_object_add(o, "name", ok ? icd_jnew_str(icd_jstr(info, "name")) : NULL);
        json_object_object_add(o, "version", ok ? icd_jnew_str(icd_jstr(info, "version")) : NULL);
        const char *kind = icd_loader_kind_of(info);
        json_object_object_add(o, "kind", kind ? json_object_new_string(kind) : NULL);
        json_object_array_add(ls, o);
    }
    json_object_object_add(d, "loaders", ls);
    json_object_object_add(d, "vendors_dir", icd_jnew_str(st->vendors_dir));
    json_object_object_add(d, "vendors_from", json_object_new_string(st->vendors_from ? st->vendors_from : "default"));
    json_object *env = json_object_new_object();
    for (size_t i = 0; icd_env_names[i]; i++)
        json_object_object_add(env, icd_env_names[i], icd_jnew_str(icd_env(icd_env_names[i])));
    json_object_object_add(d, "env", env);
    json_object *icds = json_object_new_array();
    for (size_t i = 0; i < st->n; i++)
        json_object_array_add(icds, icd_entry_json(&st->e[i]));
    json_object_object_add(d, "icds", icds);
    json_object *ign = json_object_new_array();
    for (size_t i = 0; i < st->n_ignored; i++)
        json_object_array_add(ign, json_object_new_string(st->ignored[i]));
    json_object_object_add(d, "ignored_files", ign);
    if (!st->combined) {
        st->combined = json_object_new_object();
        json_object_object_add(st->combined, "status", json_object_new_string("not-run"));
        json_object_object_add(st->combined, "detail",
                               json_object_new_string(st->loader ? "could not start the child process"
                                                                 : "no OpenCL loader to run it through"));
        json_object_object_add(st->combined, "platforms", json_object_new_array());
        json_object_object_add(st->combined, "elapsed_ms", NULL);
        json_object_object_add(st->combined, "output", NULL);
    }
    json_object_object_add(d, "combined", json_object_get(st->combined));
}

static enum report_mark icd_status_mark(const char *s)
{
    if (!s || strcmp(s, "ok") == 0)
        return REPORT_MARK_OK;
    if (strcmp(s, "no-platforms") == 0 || strcmp(s, "duplicate") == 0)
        return REPORT_MARK_WARN;
    if (strcmp(s, "not-probed") == 0)
        return REPORT_MARK_SKIP;
    return REPORT_MARK_ERROR;
}

static void icd_summary(struct icd_state *st)
{
    struct report_section *sec = st->sec;
    const char *cstatus = icd_jstr(st->combined, "status");
    json_object *cplats = NULL;
    json_object_object_get_ex(st->combined, "platforms", &cplats);
    size_t ncp = cplats ? json_object_array_length(cplats) : 0;
    if (!st->loader) {
        if (st->kind == ICD_KIND_NONE)
            report_section_add_line(sec, REPORT_MARK_ERROR, "Loader", "none: %s",
                                    st->loader_error ? st->loader_error : "libOpenCL.so.1 cannot be loaded");
        else
            report_section_add_line(sec, REPORT_MARK_WARN, "Loader", "could not be identified");
    } else {
        const char *path = icd_jstr(st->loader, "path");
        const char *ver = icd_jstr(st->loader, "version");
        bool multi = report_find_finding(st->ctx->report, "icd.multiple-loaders", NULL) != NULL;
        enum report_mark m = REPORT_MARK_OK;
        if (icd_status_is(cstatus, "crash", "hang", NULL, NULL))
            m = REPORT_MARK_ERROR;
        else if (multi || !icd_status_is(cstatus, "ok", NULL, NULL, NULL))
            m = REPORT_MARK_WARN;
        char *seen = NULL;
        if (icd_status_is(cstatus, "ok", NULL, NULL, NULL))
            seen = str_printf("programs see %zu platform%s", ncp, ncp == 1 ? "" : "s");
        else
            seen = str_printf("programs see no platform (%s: %s)", cstatus ? cstatus : "?",
                              icd_jstr(st->combined, "detail") ? icd_jstr(st->combined, "detail") : "?");
        report_section_add_line(sec, m, "Loader", "%s%s%s at %s; %s%s", icd_kind_name(st->kind), ver ? " " : "",
                                ver ? ver : "", path ? path : "?", seen ? seen : "",
                                multi ? "; other loaders shadow it" : "");
        free(seen);
    }
    if (st->n == 0) {
        report_section_add_line(sec, REPORT_MARK_ERROR, "ICD", "none registered%s%s", st->vendors_dir ? " in " : "",
                                st->vendors_dir ? st->vendors_dir : "");
        return;
    }
    for (size_t i = 0; i < st->n; i++) {
        const struct icd_entry *e = &st->e[i];
        const char *name = e->file ? icd_basename(e->file) : icd_subject(e);
        if (e->status && strcmp(e->status, "ok") == 0) {
            char *pt = icd_platforms_text(e->platforms);
            report_section_add_line(sec, e->absent ? REPORT_MARK_INFO : REPORT_MARK_OK, "ICD", "%s: %s%s", name,
                                    pt ? pt : "ok", e->absent ? "; driver for absent hardware" : "");
            free(pt);
        } else if (e->absent) {
            report_section_add_line(sec, REPORT_MARK_INFO, "ICD", "%s: driver for absent hardware (%s: %s)", name,
                                    e->status ? e->status : "?", e->detail ? e->detail : "?");
        } else {
            report_section_add_line(sec, icd_status_mark(e->status), "ICD", "%s: %s%s%s", name,
                                    e->status ? e->status : "not-probed", e->detail ? ": " : "",
                                    e->detail ? e->detail : "");
        }
    }
}

static void icd_no_icds(struct icd_state *st)
{
    if (st->n > 0)
        return;
    const char *dir = st->vendors_dir ? st->vendors_dir : ICD_VENDORS_DIR;
    struct report_finding *f;
    if (!st->vendors_dir && st->vendors_dir_err)
        f = report_add_finding(st->ctx->report, "icd.no-icds", "OCL_ICD_VENDORS",
                               "No OpenCL driver is registered: OCL_ICD_VENDORS is set but empty, and the "
                               "Khronos loader then reads no vendors directory");
    else if (st->vendors_dir_err)
        f = report_add_finding(st->ctx->report, "icd.no-icds", dir, "No OpenCL driver is registered: %s: %s",
                               dir, strerror(-st->vendors_dir_err));
    else
        f = report_add_finding(st->ctx->report, "icd.no-icds", dir,
                               "No OpenCL driver is registered: %s has no .icd file", dir);
    if (f && st->n_ignored > 0)
        report_finding_add_evidence(f, dir, "ignored (not *.icd): %s%s", st->ignored[0],
                                    st->n_ignored > 1 ? ", ..." : "");
}

/* One column cell: S, or "-" when NULL. */
static const char *icd_cell(const char *s)
{
    return s && *s ? s : "-";
}

static void icd_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *d = sec->data, *loader = NULL, *loaders = NULL, *icds = NULL, *comb = NULL, *ign = NULL;
    json_object_object_get_ex(d, "loader", &loader);
    json_object_object_get_ex(d, "loaders", &loaders);
    json_object_object_get_ex(d, "icds", &icds);
    json_object_object_get_ex(d, "combined", &comb);
    json_object_object_get_ex(d, "ignored_files", &ign);

    text_heading(t, "OpenCL ICD loader");
    if (!loader) {
        text_kv(t, "loader", "none could be loaded");
    } else {
        text_kv(t, "loader", "%s", icd_cell(icd_jstr(loader, "path")));
        const char *name = icd_jstr(loader, "name");
        if (name)
            text_kv(t, "identity", "%s %s (%s), %s", name, icd_cell(icd_jstr(loader, "version")),
                    icd_cell(icd_jstr(loader, "vendor")), icd_cell(icd_jstr(loader, "kind")));
        else
            text_kv(t, "identity", "unknown (no clGetICDLoaderInfoOCLICD)");
    }
    const char *vd = icd_jstr(d, "vendors_dir");
    text_kv(t, "vendors", "%s (from %s)", vd ? vd : "no directory: one file or library", icd_cell(icd_jstr(d, "vendors_from")));
    size_t nl = loaders ? json_object_array_length(loaders) : 0;
    for (size_t i = 0; i < nl; i++) {
        json_object *l = json_object_array_get_idx(loaders, i);
        const char *res = icd_jstr(l, "resolved");
        const char *path = icd_jstr(l, "path");
        const char *kind = icd_jstr(l, "kind");
        text_kv(t, i == 0 ? "libOpenCL files" : "", "%s%s%s (%s%s%s)%s", icd_cell(path),
                res && path && strcmp(res, path) != 0 ? " -> " : "", res && path && strcmp(res, path) != 0 ? res : "",
                icd_cell(icd_jstr(l, "source")), kind ? ", " : "", kind ? kind : "",
                icd_jbool(l, "wins", false) ? " <- programs load this one" : "");
    }
    if (comb) {
        const char *cs = icd_jstr(comb, "status");
        json_object *cp = NULL;
        json_object_object_get_ex(comb, "platforms", &cp);
        char *pt = icd_platforms_text(cp);
        if (cs && strcmp(cs, "ok") == 0)
            text_kv(t, "programs see", "%s", pt ? pt : "no platform");
        else
            text_kv(t, "programs see", "%s: %s", icd_cell(cs), icd_cell(icd_jstr(comb, "detail")));
        free(pt);
    }
    size_t ni = ign ? json_object_array_length(ign) : 0;
    for (size_t i = 0; i < ni; i++)
        text_kv(t, i == 0 ? "ignored (not *.icd)" : "", "%s", json_object_get_string(json_object_array_get_idx(ign, i)));

    size_t n = icds ? json_object_array_length(icds) : 0;
    text_heading(t, "OpenCL ICDs");
    if (n == 0) {
        fprintf(t->f, "  none\n");
        return;
    }
    int wf = 4, wl = 7, ws = 6;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(icds, i);
        const char *file = icd_jstr(e, "file");
        int lf = (int)strlen(file ? file : icd_cell(icd_jstr(e, "source"))) + (file ? 0 : 2);
        int ll = (int)strlen(icd_cell(icd_jstr(e, "library")));
        int ls = (int)strlen(icd_cell(icd_jstr(e, "status")));
        wf = lf > wf ? (lf > 64 ? 64 : lf) : wf;
        wl = ll > wl ? (ll > 64 ? 64 : ll) : wl;
        ws = ls > ws ? ls : ws;
    }
    fprintf(t->f, "  %-*s  %-*s  %-*s  %s\n", wf, "FILE", wl, "LIBRARY", ws, "STATUS", "PLATFORMS");
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(icds, i);
        const char *file = icd_jstr(e, "file");
        char *src = file ? NULL : str_printf("(%s)", icd_cell(icd_jstr(e, "source")));
        const char *status = icd_cell(icd_jstr(e, "status"));
        json_object *ps = NULL;
        json_object_object_get_ex(e, "platforms", &ps);
        char *pt = strcmp(status, "ok") == 0 ? icd_platforms_text(ps) : NULL;
        enum report_mark m = icd_status_mark(status);
        json_object *drv = NULL;
        if (json_object_object_get_ex(e, "driver", &drv) && icd_jbool(drv, "absent_hardware", false))
            m = REPORT_MARK_INFO;
        fprintf(t->f, "  %-*s  %-*s  %s%-*s%s  %s\n", wf, file ? file : src ? src : "", wl,
                icd_cell(icd_jstr(e, "library")), text_color_on(t, m), ws, status, text_color_off(t),
                pt ? pt : icd_cell(icd_jstr(e, "detail")));
        free(pt);
        free(src);
    }
}

/* ---- the probe ---- */

static void icd_state_free(struct icd_state *st)
{
    for (size_t i = 0; i < st->n; i++)
        icd_entry_clear(&st->e[i]);
    free(st->e);
    for (size_t i = 0; st->loader_info && i < st->n_loaders; i++)
        json_object_put(st->loader_info[i]);
    free(st->loader_info);
    icd_loaders_free(st->loaders, st->n_loaders);
    icd_search_free(&st->search);
    json_object_put(st->loader);
    json_object_put(st->combined);
    free(st->loader_error);
    free(st->vendors_dir);
    for (size_t i = 0; i < st->n_ignored; i++)
        free(st->ignored[i]);
    free(st->ignored);
    if (st->have_own_libfs)
        hostfs_close(&st->own_libfs);
}

/* A variable set for the other kind of loader than the one programs get: its drivers are invisible.
 * ocl-icd 2.3 reads OCL_ICD_VENDORS and OPENCL_VENDOR_PATH, never OCL_ICD_FILENAMES (ocl_icd_loader.c);
 * the Khronos loader reads OCL_ICD_FILENAMES and OCL_ICD_VENDORS, never OPENCL_VENDOR_PATH
 * (loader/linux/icd_linux.c). Seen on a real NVIDIA container image: OCL_ICD_FILENAMES named
 * libnvidia-opencl.so.1 (no nvidia.icd in the vendors dir), so under ocl-icd the GPU had no OpenCL. */
static void icd_check_ignored_env(struct icd_state *st)
{
    if (st->kind == ICD_KIND_NONE || !st->loader)
        return;
    const char *loaded = icd_jstr(st->loader, "path");
    if (icd_is_ocl_semantics(st->kind)) {
        const char *fn = icd_env("OCL_ICD_FILENAMES");
        if (!fn || !*fn)
            return;
        /* Only libraries no .icd file reaches are lost. */
        char *copy = strdup(fn), *lost = NULL, *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save)) {
            const char *via = NULL;
            char *found = icd_search_find(&st->search, tok, &via);
            char *res = found ? icd_fs_realpath(st->libfs, found) : NULL;
            bool covered = false;
            for (size_t i = 0; i < st->n && !covered; i++)
                covered = (res && st->e[i].resolved && strcmp(st->e[i].resolved, res) == 0) ||
                          (st->e[i].library && strcmp(st->e[i].library, tok) == 0);
            free(found);
            free(res);
            if (covered)
                continue;
            char *clean = icd_sanitized(tok);
            char *more = str_printf("%s%s%s", lost ? lost : "", lost ? ", " : "", clean ? clean : "?");
            free(clean);
            free(lost);
            lost = more;
        }
        free(copy);
        if (lost) {
            struct report_finding *f = report_add_finding(
                st->ctx->report, "icd.loader-ignores-env", "OCL_ICD_FILENAMES",
                "OCL_ICD_FILENAMES names %s, but programs load %s (ocl-icd), which ignores that variable: "
                "no .icd file registers %s, so OpenCL programs do not see %s",
                lost, loaded ? loaded : "libOpenCL.so.1", strchr(lost, ',') ? "them" : "it",
                strchr(lost, ',') ? "those drivers" : "that driver");
            if (f)
                report_finding_add_evidence(f, "OCL_ICD_FILENAMES", "%s", lost);
            free(lost);
        }
        return;
    }
    const char *vp = icd_env("OPENCL_VENDOR_PATH");
    const char *ov = icd_env("OCL_ICD_VENDORS");
    if (vp && *vp && !(ov && *ov) && strcmp(vp, ICD_VENDORS_DIR) != 0) {
        char *clean = icd_sanitized(vp);
        report_add_finding(st->ctx->report, "icd.loader-ignores-env", "OPENCL_VENDOR_PATH",
                           "OPENCL_VENDOR_PATH is %s, but programs load %s (%s), which ignores that variable and "
                           "reads %s instead",
                           clean ? clean : "?", loaded ? loaded : "libOpenCL.so.1", icd_kind_name(st->kind),
                           ICD_VENDORS_DIR);
        free(clean);
    }
}

static int icd_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct icd_state st;
    memset(&st, 0, sizeof(st));
    st.ctx = ctx;
    st.sec = sec;
    st.root = geteuid() == 0;
    const struct report_section *pci = report_find_section(ctx->report, "pci");
    st.pci = pci && pci->status == REPORT_STATUS_OK ? pci->data : NULL;
    /* Libraries are loaded on this machine, so they are looked up on this machine's files, even
     * when --root --live reads the .icd files from a captured tree. */
    st.libfs = ctx->fs;
    if (!ctx->fs->live) {
        if (hostfs_open(&st.own_libfs, "/") == 0) {
            st.have_own_libfs = true;
            st.libfs = &st.own_libfs;
        }
    }
    if (icd_search_init(&st.search, st.libfs, icd_env("LD_LIBRARY_PATH")) != 0 ||
        icd_loaders_scan(&st.search, &st.loaders, &st.n_loaders) != 0) {
        icd_state_free(&st);
        ctx->error = str_printf("icd: out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    if (st.search.cache_err && st.search.cache_err != -ENOENT)
        report_section_add_note(sec, "/etc/ld.so.cache: %s", strerror(-st.search.cache_err));
    else if (st.search.cache && icd_ldcache_walk(st.search.cache, st.search.cache_len, NULL, NULL) < 0)
        report_section_add_note(sec, "/etc/ld.so.cache: not a cache file this build understands");

    icd_identify(&st);
    icd_crosscheck_winner(&st);
    icd_check_loaders(&st);
    icd_collect(&st);
    icd_precheck(&st);
    icd_check_ignored_env(&st);
    icd_probe_all(&st);
    icd_check_conflict(&st);
    icd_no_icds(&st);
    icd_fill_data(&st);
    icd_summary(&st);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    icd_state_free(&st);
    return PROBE_DONE;
}

/* The PCI facts say whether a driver's hardware is here (icd.absent-hardware). */
static const char *const icd_deps[] = {"pci", NULL};

const struct probe probe_icd = {
    .name = "icd",
    .title = "the OpenCL ICD loader and vendor drivers",
    .needs_live = true,
    .deps = icd_deps,
    .checks = icd_checks,
    .n_checks = sizeof(icd_checks) / sizeof(icd_checks[0]),
    .run = icd_run,
    .print_text = icd_print_text,
};
