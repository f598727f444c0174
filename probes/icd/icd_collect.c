/* icd_collect.c: which .icd files and libraries the loader reads, and each one checked before loading. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "icd_impl.h"
#include "probe.h"
#include "strutil.h"

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

void icd_collect(struct icd_state *st)
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
    /* Without a variable, each loader reads the directory compiled into it: /etc/OpenCL/vendors in the
     * distributions' builds, PREFIX/etc/OpenCL/vendors in one built elsewhere (a conda env, a module system) */
    const char *loader = NULL;
    char *compiled = strcmp(dir, ICD_VENDORS_DIR) == 0 ? icd_compiled_vendors_dir(st, &loader) : NULL;
    if (compiled) {
        dir = compiled;
        st->vendors_from = "loader";
    }
    st->vendors_dir = icd_absolute(st, dir);
    if (st->vendors_dir)
        icd_read_dir(st, st->vendors_dir);
    if (compiled)
        icd_compiled_dir_findings(st, loader, compiled);
    free(compiled);
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
    if (e->file && probe_host_files(st->ctx)) {
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
void icd_precheck(struct icd_state *st)
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
        if (icd_check_arch(st, e))
            continue;
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
    /* a snapshot's owners and modes are those of its unpacking: its icd.insecure is the captured one */
    if (st->root && !probe_snapshot(st->ctx))
        for (size_t i = 0; i < st->n; i++)
            icd_check_insecure(st, &st->e[i]);
}
