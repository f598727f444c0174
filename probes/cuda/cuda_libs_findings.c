/* cuda_libs_findings.c: the cuda.lib-* catalogue rows and the findings and summary lines of the library part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cuda_internal.h"
#include "cuda_libs.h"
#include "libarch.h"
#include "strutil.h"

const struct check cuda_libs_checks[] = {
    {"cuda.lib-driver-too-old", REPORT_SEV_WARNING, "a CUDA runtime needs a newer NVIDIA driver than the one installed",
     "Install an NVIDIA driver at least as new as the runtime needs (see the message), or use a framework "
     "build for an older CUDA major.", CHECK_LAYER_RUNTIME},
    {"cuda.lib-version-conflict", REPORT_SEV_WARNING,
     "LD_LIBRARY_PATH brings another version of a CUDA library than the one a pip wheel brings",
     "Remove that directory from LD_LIBRARY_PATH when running pip-installed frameworks: they bring their "
     "own copy, and a different one loaded first wins.", CHECK_LAYER_RUNTIME},
    {"cuda.lib-versions-differ", REPORT_SEV_INFO,
     "the system's copies of CUDA libraries differ from a pip site's wheels",
     "Nothing to do while each program loads its own copy: a framework from pip loads its wheel's through "
     "its RPATH, other programs the system's.", CHECK_LAYER_RUNTIME},
    {"cuda.lib-cudnn-cuda-mismatch", REPORT_SEV_WARNING, "cuDNN was built for another CUDA major than the runtime beside it",
     "Install the cuDNN build for the runtime's CUDA major (pip: nvidia-cudnn-cuNN; packages: libcudnnN-cuda-NN).", CHECK_LAYER_RUNTIME},
    {"cuda.lib-cudnn-mixed", REPORT_SEV_WARNING, "cuDNN's sub-libraries come from another cuDNN release than libcudnn",
     "Install cuDNN from one package (or wheel) and remove the files copied by hand; every libcudnn*.so of "
     "one major must be the same release.", CHECK_LAYER_RUNTIME},
    {"cuda.lib-ld-path-stubs", REPORT_SEV_WARNING, "LD_LIBRARY_PATH names a CUDA stubs directory",
     "Remove the stubs directory from LD_LIBRARY_PATH: its libraries exist only for linking (LIBRARY_PATH "
     "or -L is where it belongs) and fail at run time.", CHECK_LAYER_RUNTIME},
    {"cuda.lib-ld-path-missing", REPORT_SEV_WARNING, "LD_LIBRARY_PATH names a CUDA directory that does not exist",
     "Fix LD_LIBRARY_PATH (the toolkit moved or was removed; /usr/local/cuda usually links to the one installed).", CHECK_LAYER_RUNTIME},
    {"cuda.lib-toolkit-differs", REPORT_SEV_INFO, "the CUDA toolkit (nvcc) is another version than the runtime programs load",
     "Nothing to do for nvcc's default static runtime; a program linked with -cudart shared needs the "
     "toolkit's runtime on the library path.", CHECK_LAYER_RUNTIME},
    {"cuda.lib-load-failed", REPORT_SEV_WARNING, "a CUDA library could not be loaded or answer its version",
     "Reinstall the package the file belongs to, or remove the stray copy; programs that load it fail the same way.", CHECK_LAYER_RUNTIME},
    /* glibc's loader skips a file of another ELF class or machine without a word (elf/dl-load.c,
     * open_verify): a program needing it fails as if it were not installed. */
    {"cuda.lib-wrong-arch", REPORT_SEV_WARNING,
     "a CUDA library on the library search path is built for another machine or class, and no copy for this one "
     "is found",
     "Install the library built for this machine (Debian: the package for `dpkg --print-architecture`; pip: the "
     "wheel for this platform, in a venv made on this machine), and remove the foreign copy or take its directory "
     "off LD_LIBRARY_PATH.", CHECK_LAYER_RUNTIME},
    /* The toolkit's stub (lib64/stubs/libcuda.so) answers CUDA_ERROR_STUB_LIBRARY (34) to every call (cuda.h);
     * programs that dlopen "libcuda.so" rather than the soname take whichever the loader finds first. */
    {"cuda.lib-unversioned-stub", REPORT_SEV_WARNING,
     "libcuda.so (unversioned) resolves to the CUDA toolkit's stub while libcuda.so.1 is the driver's",
     "Take the stubs directory off LD_LIBRARY_PATH (or out of /etc/ld.so.conf.d, then `sudo ldconfig`): stubs are for "
     "linking only; programs that load libcuda.so (NVIDIA Warp, cudarc, bitsandbytes) then get the driver.",
     CHECK_LAYER_RUNTIME},
    {"cuda.lib-unversioned-missing", REPORT_SEV_INFO,
     "no libcuda.so (unversioned) beside the driver's libcuda.so.1, for programs that ask for that name",
     "Nothing to do unless a program fails to find libcuda.so (NVIDIA Warp, cudarc): then link it to the driver's "
     "libcuda.so.1 in a directory on the library path (`sudo ln -s <driver's libcuda.so.1> /usr/local/lib/libcuda.so "
     "&& sudo ldconfig`; under WSL /usr/lib/wsl/lib is the Windows driver's and read-only).", CHECK_LAYER_RUNTIME},
    {"cuda.lib-none", REPORT_SEV_INFO, "no CUDA library found (runtime, cuBLAS, cuDNN...)",
     "Frameworks from pip bring their own CUDA libraries (pip install torch); for building, install the "
     "CUDA toolkit.", CHECK_LAYER_RUNTIME | CHECK_F_KIND_FILE},
};
const size_t cuda_libs_n_checks = sizeof(cuda_libs_checks) / sizeof(cuda_libs_checks[0]);

/* "13.0" from a CUDA major/minor. */
static void cuda_libs_fmt_cuda(char *buf, size_t n, int major, int minor)
{
    if (minor >= 0)
        snprintf(buf, n, "%d.%d", major, minor);
    else
        snprintf(buf, n, "%d", major);
}

/* The runtime of CUDA major M next to E: pip: the same site-packages; otherwise the one loaded first. */
static bool cuda_libs_has_runtime(const struct cuda_libs_state *st, const struct cuda_lib_entry *e, int m, bool *any)
{
    *any = false;
    for (size_t i = 0; i < st->n; i++) {
        const struct cuda_lib_entry *r = &st->e[i];
        if (r->family->kind != CUDA_LIB_CUDART || !r->have_version)
            continue;
        bool scope = e->site ? (r->site && strcmp(r->site, e->site) == 0) : r->loaded_first;
        if (!scope)
            continue;
        *any = true;
        if (r->cuda_major == m)
            return true;
    }
    return false;
}

/* Under WSL2 the driver is the Windows host's (its libcuda is /usr/lib/wsl/lib's, its version is no Linux
 * driver's): the finding speaks of the Windows driver, by the branch NVIDIA's minor-version compatibility table
 * names for both systems ("CUDA 13.x >= 580, 12.x >= 525, 11.x >= 450": docs.nvidia.com/deploy/cuda-compatibility,
 * "Minor Version Compatibility"), and never asks for a Linux driver inside WSL. CU: the CUDA version the driver
 * supports (cuDriverGetVersion), "" unknown. */
static void cuda_libs_wsl_driver_old(struct cuda_libs_state *st, const struct cuda_lib_entry *e, const char *need,
                                     const char *cu)
{
    int branch = need ? atoi(need) : 0;
    char want[64];
    if (branch > 0)
        snprintf(want, sizeof(want), "R%d or newer", branch);
    else
        snprintf(want, sizeof(want), "one that supports CUDA %d", e->cuda_major);
    struct report_finding *fd = report_add_finding(
        st->ctx->report, "cuda.lib-driver-too-old", e->real,
        "%s (CUDA %d.%d) needs a Windows NVIDIA driver %s (CUDA %d); the Windows driver this WSL2 guest uses "
        "supports CUDA %s",
        e->file, e->major, e->minor, want, e->cuda_major, *cu ? cu : "(unknown)");
    if (!fd)
        return;
    if (st->facts->driver_cuda_version > 0)
        report_finding_add_evidence(fd, "cuDriverGetVersion", "%d (the Windows driver, through /dev/dxg)",
                                    st->facts->driver_cuda_version);
    report_finding_add_evidence(fd, "cudaRuntimeGetVersion", "%d.%d (%s)", e->major, e->minor, e->real);
    report_finding_set_hint(fd,
                            "Update the NVIDIA driver in Windows (nvidia.com/drivers or the NVIDIA App) to %s, then "
                            "restart WSL (`wsl --shutdown` in Windows). Under WSL2 the Windows driver is the only "
                            "NVIDIA driver: never install a Linux NVIDIA driver inside WSL. Or use a framework build "
                            "for CUDA %s.",
                            want, *cu ? cu : "the major the driver supports");
}

static void cuda_libs_driver_findings(struct cuda_libs_state *st)
{
    const struct cuda_facts *f = st->facts;
    if (!f)
        return;
    for (size_t i = 0; i < st->n; i++) {
        const struct cuda_lib_entry *e = &st->e[i];
        if (e->family->kind != CUDA_LIB_CUDART || !e->have_version || !(e->loaded_first || e->wheel))
            continue;
        const char *need = cuda_libs_min_driver(e->cuda_major);
        bool old_kernel = need && f->kernel_driver_version[0] && cuda_libs_vercmp(f->kernel_driver_version, need) < 0;
        bool old_api = f->driver_cuda_version > 0 && f->driver_cuda_version / 1000 < e->cuda_major;
        if (!old_kernel && !old_api)
            continue; /* an unknown driver says nothing */
        /* The driver found: the kernel module's version, else the libcuda file's (a host without the module
         * still has its userspace: Debian's libcuda1 535.261.03 answers cuDriverGetVersion 12020). */
        const char *have = f->kernel_driver_version[0] ? f->kernel_driver_version
                           : f->libcuda_version[0]   ? f->libcuda_version
                                                     : NULL;
        char drv[96], cu[32] = "";
        if (f->driver_cuda_version > 0)
            cuda_libs_fmt_cuda(cu, sizeof(cu), f->driver_cuda_version / 1000, (f->driver_cuda_version % 1000) / 10);
        if (f->wsl2) {
            cuda_libs_wsl_driver_old(st, e, need, cu);
            continue;
        }
        if (have && *cu)
            snprintf(drv, sizeof(drv), "driver %s here supports CUDA %s", have, cu);
        else if (have)
            snprintf(drv, sizeof(drv), "the driver here is %s", have);
        else
            snprintf(drv, sizeof(drv), "the driver here supports CUDA %s", cu);
        struct report_finding *fd = report_add_finding(st->ctx->report, "cuda.lib-driver-too-old", e->real,
                                                       "%s (CUDA %d.%d) needs NVIDIA driver %s or newer; %s", e->file,
                                                       e->major, e->minor, need ? need : "for its CUDA major", drv);
        if (!fd)
            continue;
        if (f->kernel_driver_version[0])
            report_finding_add_evidence(fd, "/proc/driver/nvidia/version", "%s", f->kernel_driver_version);
        else if (f->libcuda_version[0])
            report_finding_add_evidence(fd, "libcuda file name", "%s", f->libcuda_version);
        if (f->driver_cuda_version > 0)
            report_finding_add_evidence(fd, "cuDriverGetVersion", "%d", f->driver_cuda_version);
        report_finding_add_evidence(fd, "cudaRuntimeGetVersion", "%d.%d (%s)", e->major, e->minor, e->real);
        report_finding_set_hint(fd,
                                "Install NVIDIA driver %s or newer (CUDA %d), or use a framework build for the CUDA "
                                "major the installed driver supports.",
                                need ? need : "a newer", e->cuda_major);
    }
}

/* True when versions A and B agree on every component both give: "13.0.96" (a file name) and "13.0"
 * (cudaRuntimeGetVersion) are one release; "9.14.0" and "9.19.0" are not. Seen on a real H100 machine,
 * where the toolkit's libcudart.so.13.0.96 was reported as differing from the wheel's 13.0. */
bool cuda_libs_same_version(const char *a, const char *b)
{
    while (*a && *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (ea == a || eb == b)
            return strcmp(a, b) == 0;
        if (x != y)
            return false;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
        if ((*ea && *ea != '.') || (*eb && *eb != '.'))
            return strcmp(a, b) == 0;
    }
    return true;
}

/* Several versions of one library: the copy loaded first against each wheel's. A copy that comes in
 * through LD_LIBRARY_PATH is a warning per file (LD_LIBRARY_PATH is searched before a library's RUNPATH,
 * and a soname already loaded is not loaded again); copies from ld.so.cache or the default directories
 * come after a wheel's RPATH/RUNPATH, so each program gets its own: one info finding per wheel site. */
static void cuda_libs_conflict_findings(struct cuda_libs_state *st)
{
    for (size_t s = 0; s < st->n; s++) {
        const char *site = st->e[s].site;
        bool seen = !site;
        for (size_t k = 0; k < s && !seen; k++)
            seen = st->e[k].site && strcmp(st->e[k].site, site) == 0;
        if (seen)
            continue;
        char *differ = NULL;
        const struct cuda_lib_entry *w_first = NULL;
        for (size_t j = 0; j < st->n; j++) {
            const struct cuda_lib_entry *w = &st->e[j];
            if (!w->site || strcmp(w->site, site) != 0 || !w->version || !w->family->key)
                continue; /* cuDNN's sub-libraries follow libcudnn: one line for the family */
            for (size_t i = 0; i < st->n; i++) {
                const struct cuda_lib_entry *first = &st->e[i];
                if (!first->loaded_first || !first->version || strcmp(w->file, first->file) != 0 ||
                    cuda_libs_same_version(w->version, first->version))
                    continue;
                if (strcmp(first->via, "LD_LIBRARY_PATH") == 0) {
                    struct report_finding *fd = report_add_finding(
                        st->ctx->report, "cuda.lib-version-conflict", first->file,
                        "%s %s: LD_LIBRARY_PATH (%s) brings %s, the pip wheel in %s has %s: a framework from pip "
                        "gets the LD_LIBRARY_PATH copy whenever it loads first (LD_LIBRARY_PATH is searched before "
                        "the wheel's RUNPATH), other programs always do",
                        first->family->label, first->file, first->entry ? first->entry : "", first->version, w->wheel,
                        w->version);
                    if (!fd)
                        continue;
                    report_finding_add_evidence(fd, "LD_LIBRARY_PATH", "%s", first->real);
                    report_finding_add_evidence(fd, "pip", "%s (%s)", w->real, w->entry ? w->entry : "");
                    report_finding_set_hint(fd,
                                            "Remove %s from LD_LIBRARY_PATH when running frameworks from pip, or "
                                            "put the same version there (%s).",
                                            first->entry && *first->entry ? first->entry : first->real, w->version);
                } else {
                    char *n = str_printf("%s%s%s %s (%s) vs %s", differ ? differ : "", differ ? "; " : "",
                                         first->family->label, first->version, first->real, w->version);
                    free(differ);
                    differ = n;
                    w_first = w;
                }
            }
        }
        if (differ && w_first) {
            struct report_finding *fd = report_add_finding(
                st->ctx->report, "cuda.lib-versions-differ", site,
                "the CUDA wheels in %s differ from the system's copies (%s): a framework from pip loads the "
                "wheels' (their RPATH comes before ld.so.cache), other programs the system's",
                site, differ);
            if (fd)
                report_finding_add_evidence(fd, "pip", "%s", w_first->entry ? w_first->entry : site);
        }
        free(differ);
    }
}

/* "in /usr/lib/x86_64-linux-gnu, found via ld.so.cache": where E was found and how (caller frees). */
static char *cuda_libs_where(const struct cuda_lib_entry *e)
{
    const char *p = e->path ? e->path : e->real;
    const char *slash = p ? strrchr(p, '/') : NULL;
    int dl = slash ? (int)(slash - p) : 0;
    if (e->wheel)
        return str_printf("in %.*s, the pip wheel's directory", dl, p ? p : "");
    if (e->via && strcmp(e->via, "LD_LIBRARY_PATH") == 0)
        return str_printf("in %.*s, found via LD_LIBRARY_PATH entry %s", dl, p ? p : "", e->entry ? e->entry : "?");
    return str_printf("in %.*s, found via %s", dl, p ? p : "", e->via ? e->via : "?");
}

/* Whether the files A and B are in one directory (as the search found them). */
static bool cuda_libs_same_dir(const char *a, const char *b)
{
    const char *sa = a ? strrchr(a, '/') : NULL, *sb = b ? strrchr(b, '/') : NULL;
    return sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

/* cuDNN's sub-libraries from another release than the libcudnn beside them (a partial copy of cuDNN
 * into a system directory): the framework fails when it first needs the sub-library. Compared among
 * the copies loaded first, and inside each wheel directory. */
static void cuda_libs_cudnn_mixed_findings(struct cuda_libs_state *st)
{
    for (size_t i = 0; i < st->n; i++) {
        const struct cuda_lib_entry *main_lib = &st->e[i];
        if (!main_lib->family->key || strcmp(main_lib->family->key, "cudnn") != 0 || !main_lib->version)
            continue;
        if (!main_lib->loaded_first && !main_lib->wheel)
            continue;
        for (size_t j = 0; j < st->n; j++) {
            const struct cuda_lib_entry *sub = &st->e[j];
            if (sub->family->key || !sub->version || sub->soname_major != main_lib->soname_major)
                continue;
            bool scope = main_lib->wheel ? (sub->wheel && strcmp(sub->wheel, main_lib->wheel) == 0)
                                         : (sub->loaded_first && !sub->wheel);
            if (!scope || strcmp(sub->version, main_lib->version) == 0)
                continue;
            char *sub_at = cuda_libs_where(sub), *main_at = cuda_libs_where(main_lib);
            struct report_finding *fd;
            if (cuda_libs_same_dir(sub->path, main_lib->path))
                fd = report_add_finding(st->ctx->report, "cuda.lib-cudnn-mixed", sub->real,
                                        "%s is cuDNN %s but %s beside it (both %s) is cuDNN %s: the sub-library comes "
                                        "from another cuDNN release",
                                        sub->file, sub->version, main_lib->file, main_at ? main_at : "?",
                                        main_lib->version);
            else
                fd = report_add_finding(st->ctx->report, "cuda.lib-cudnn-mixed", sub->real,
                                        "%s is cuDNN %s (%s) but %s is cuDNN %s (%s): the two come from different "
                                        "directories and cuDNN releases",
                                        sub->file, sub->version, sub_at ? sub_at : "?", main_lib->file,
                                        main_lib->version, main_at ? main_at : "?");
            free(sub_at);
            free(main_at);
            if (fd) {
                report_finding_add_evidence(fd, sub->via, "%s", sub->real);
                report_finding_add_evidence(fd, main_lib->via, "%s", main_lib->real);
            }
        }
    }
}

static void cuda_libs_cudnn_findings(struct cuda_libs_state *st)
{
    for (size_t i = 0; i < st->n; i++) {
        const struct cuda_lib_entry *e = &st->e[i];
        if (!e->family->key || strcmp(e->family->key, "cudnn") != 0 || e->cuda_major < 0)
            continue;
        if (!e->loaded_first && !e->wheel)
            continue;
        bool any = false;
        if (cuda_libs_has_runtime(st, e, e->cuda_major, &any) || !any)
            continue;
        char cu[32];
        cuda_libs_fmt_cuda(cu, sizeof(cu), e->cuda_major, e->cuda_minor);
        struct report_finding *fd = report_add_finding(
            st->ctx->report, "cuda.lib-cudnn-cuda-mismatch", e->real,
            "cuDNN %s (%s) was built for CUDA %s, but the CUDA runtime %s is another major", e->version, e->real, cu,
            e->wheel ? "in the same site-packages" : "found first");
        if (fd)
            report_finding_add_evidence(fd, e->cuda_source ? e->cuda_source : "cudnnGetCudartVersion", "CUDA %s", cu);
    }
}

/* The last path component of DIR. */
static const char *cuda_libs_base(const char *dir)
{
    const char *s = strrchr(dir, '/');
    return s ? s + 1 : dir;
}

/* The CUDA toolkit directory in DIR: the prefix ending at the first component named cuda* ("/usr/local/
 * cuda-11.8" of "/usr/local/cuda-11.8/lib64"), or NULL when there is none. Caller frees. */
static char *cuda_libs_toolkit_root(const char *dir)
{
    const char *p = dir;
    while ((p = strchr(p, '/'))) {
        p++;
        if (strncasecmp(p, "cuda", 4) == 0) {
            const char *end = strchr(p, '/');
            return strndup(dir, end ? (size_t)(end - dir) : strlen(dir));
        }
    }
    return NULL;
}

/* When the driver part found the stub libcuda loaded from DIR (cuda.stub-library, cuda.c), this
 * LD_LIBRARY_PATH finding is its cause's other face: mark it as following from that one. */
static void cuda_libs_stub_cause(struct cuda_libs_state *st, struct report_finding *fd, const char *dir)
{
    const struct report_finding *stub = report_find_finding(st->ctx->report, "cuda.stub-library", NULL);
    if (!stub || !stub->subject)
        return;
    char *real = ldsearch_realpath(st->fs, dir);
    size_t dl = strlen(dir), rl = real ? strlen(real) : 0;
    bool in = (strncmp(stub->subject, dir, dl) == 0 && stub->subject[dl] == '/') ||
              (real && strncmp(stub->subject, real, rl) == 0 && stub->subject[rl] == '/');
    free(real);
    if (in)
        report_finding_set_cause(fd, "cuda.stub-library", stub->subject);
}

static void cuda_libs_ldpath_findings(struct cuda_libs_state *st)
{
    const struct ldsearch *s = &st->search;
    for (size_t i = 0; i < s->n_ld; i++) {
        const char *dir = s->ld_dirs[i];
        struct stat sb;
        if (strcmp(cuda_libs_base(dir), "stubs") == 0) {
            struct report_finding *fd = report_add_finding(
                st->ctx->report, "cuda.lib-ld-path-stubs", dir,
                "LD_LIBRARY_PATH names %s, a directory of link-time stubs: a program that loads a library from "
                "there gets a stub that fails at run time (libcuda's stub answers CUDA_ERROR_STUB_LIBRARY)",
                s->ld_elems[i][0] ? s->ld_elems[i] : dir);
            if (fd) {
                report_finding_add_evidence(fd, "LD_LIBRARY_PATH", "%s", s->ld_elems[i]);
                cuda_libs_stub_cause(st, fd, dir);
            }
        } else if (hostfs_stat(st->fs, dir, &sb, true) != 0) {
            /* Only a toolkit that is gone: /usr/local/cuda-11.8/lib64 without /usr/local/cuda-11.8. A missing
             * subdirectory of a toolkit that is there (extras/CUPTI/lib64 of old guides) is harmless. */
            char *root = cuda_libs_toolkit_root(dir);
            if (root && hostfs_stat(st->fs, root, &sb, true) != 0) {
                struct report_finding *fd =
                    report_add_finding(st->ctx->report, "cuda.lib-ld-path-missing", dir,
                                       "LD_LIBRARY_PATH names %s, but %s does not exist", dir, root);
                if (fd)
                    report_finding_add_evidence(fd, "LD_LIBRARY_PATH", "%s", s->ld_elems[i]);
            }
            free(root);
        }
    }
}

static void cuda_libs_toolkit_findings(struct cuda_libs_state *st)
{
    for (size_t t = 0; t < st->n_tk; t++) {
        const struct cuda_toolkit *tk = &st->tk[t];
        const struct cuda_lib_entry *other = NULL;
        bool same = false;
        for (size_t i = 0; i < st->n; i++) {
            const struct cuda_lib_entry *e = &st->e[i];
            if (e->family->kind != CUDA_LIB_CUDART || !e->loaded_first || !e->have_version)
                continue;
            if (e->major == tk->major && e->minor == tk->minor)
                same = true;
            else if (!other)
                other = e;
        }
        if (same || !other)
            continue;
        struct report_finding *fd = report_add_finding(
            st->ctx->report, "cuda.lib-toolkit-differs", tk->dir,
            "the CUDA toolkit in %s (%s) is CUDA %s, the runtime programs load first is %s %s (%s)", tk->dir, tk->why,
            tk->version, other->file, other->version, other->real);
        if (fd)
            report_finding_add_evidence(fd, tk->source, "%s", tk->version);
    }
}

/* "cudart 13.0, cuBLAS 13.1.0, ..." for the entries that PICK accepts. */
static char *cuda_libs_summary(const struct cuda_libs_state *st, bool (*pick)(const struct cuda_lib_entry *, const void *),
                               const void *arg)
{
    char *s = strdup("");
    for (size_t i = 0; s && i < st->n; i++) {
        const struct cuda_lib_entry *e = &st->e[i];
        if (!e->family->key || !pick(e, arg))
            continue;
        char *n = str_printf("%s%s%s %s", s, *s ? ", " : "", e->family->label, e->version ? e->version : "(unreadable)");
        free(s);
        s = n;
    }
    return s;
}

static bool cuda_libs_pick_first(const struct cuda_lib_entry *e, const void *arg)
{
    (void)arg;
    return e->loaded_first;
}

static bool cuda_libs_pick_site(const struct cuda_lib_entry *e, const void *arg)
{
    return e->site && strcmp(e->site, (const char *)arg) == 0;
}

/* The driver part's finding that libcuda itself crashes when loaded (cuda.driver-crash, cuda.c), or NULL.
 * The CUDA libraries load libcuda too (cuBLAS, cuSOLVER and cuDNN do, from their constructors or their
 * version calls): a truncated libcuda (SIGBUS on load) kills their children as well, and reinstalling
 * them would change nothing. */
static const struct report_finding *cuda_libs_driver_crash(const struct cuda_libs_state *st)
{
    return report_find_finding(st->ctx->report, "cuda.driver-crash", NULL);
}

/* True when a copy of the library NAME for this machine is found: on the search path, or listed in ST. */
static bool cuda_libs_have_native(const struct cuda_libs_state *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->e[i].file, name) == 0)
            return true;
    const char *via = NULL;
    char *p = ldsearch_find(&st->search, name, &via);
    bool found = p != NULL;
    free(p);
    return found;
}

/* Files of each family on the search path that the dynamic linker skips as another machine's (an
 * arm64 libcudart on an x86-64 host), when no name the file is met under (libcudart.so.11.0,
 * libcudart.so.11.8.89) has a copy for this machine: one cuda.lib-wrong-arch per file, under the
 * first name met. An i386 copy beside the amd64 one, as multiarch installs have, is not one. Returns how
 * many were added. */
static size_t cuda_libs_foreign_findings(struct cuda_libs_state *st)
{
    size_t added = 0;
    for (size_t k = 0; k < cuda_lib_n_families; k++) {
        const struct cuda_lib_family *fam = &cuda_lib_families[k];
        struct ldsearch_foreign *fo = NULL;
        size_t n = 0;
        if (ldsearch_foreign_match(&st->search, fam->pattern, &fo, &n) != 0)
            continue;
        char **real = calloc(n ? n : 1, sizeof(*real));
        bool *covered = calloc(n ? n : 1, sizeof(*covered));
        for (size_t i = 0; real && covered && i < n; i++) {
            real[i] = ldsearch_realpath(st->fs, fo[i].path);
            covered[i] = cuda_libs_have_native(st, fo[i].name);
        }
        for (size_t i = 0; real && covered && i < n; i++) {
            bool skip = false; /* an earlier name of the same file, or a name of it that this machine has */
            for (size_t j = 0; j < n && !skip; j++)
                skip = j != i && real[i] && real[j] && strcmp(real[i], real[j]) == 0 && (j < i || covered[j]);
            if (skip || covered[i])
                continue;
            char *lead = str_printf("The %s library ", fam->label);
            char *then = str_printf("the dynamic linker skips it, so for programs %s is not installed", fo[i].name);
            if (libarch_add(st->ctx->report, "cuda.lib-wrong-arch", fo[i].path, fo[i].path, &fo[i].elf, fo[i].via,
                            lead, then ? then : "the dynamic linker skips it"))
                added++;
            free(lead);
            free(then);
        }
        for (size_t i = 0; real && i < n; i++)
            free(real[i]);
        free(real);
        free(covered);
        ldsearch_foreign_free(fo, n);
    }
    return added;
}

void cuda_libs_findings(struct cuda_libs_state *st)
{
    size_t foreign = cuda_libs_foreign_findings(st);
    struct report *r = st->ctx->report;
    /* Copied: the ID outlives the lookup whatever the report does with the finding later. */
    const struct report_finding *crash_f = cuda_libs_driver_crash(st);
    char *crash_id = crash_f ? str_dup(crash_f->id) : NULL;
    char *crash_subject = crash_f && crash_f->subject ? str_dup(crash_f->subject) : NULL;
    bool crash = crash_id != NULL;
    /* Why libcuda.so.1 cannot be loaded, as the driver part found it: a library that links it (cuDNN 9's
     * runtime-compiled engines do) fails for that reason, and reinstalling the library changes nothing. */
    static const char *const no_libcuda_ids[] = {"cuda.no-libcuda", "cuda.library-unusable", "cuda.driver-wrong-arch",
                                                 "cuda.no-driver", NULL};
    char *missing_id = NULL, *missing_subject = NULL;
    for (size_t k = 0; no_libcuda_ids[k] && !missing_id; k++) {
        const struct report_finding *m = report_find_finding(r, no_libcuda_ids[k], NULL);
        if (m) {
            missing_id = str_dup(m->id);
            missing_subject = m->subject ? str_dup(m->subject) : NULL;
        }
    }
    for (size_t i = 0; i < st->n; i++) {
        const struct cuda_lib_entry *e = &st->e[i];
        if (!e->error)
            continue;
        bool driver = e->crashed && crash;
        struct report_finding *fd = report_add_finding(r, "cuda.lib-load-failed", e->real, "%s (%s, found via %s): %s%s",
                                                       e->file, e->real, e->via, e->error,
                                                       driver ? " (libcuda.so.1 crashes when loaded, too)" : "");
        if (fd && e->entry)
            report_finding_add_evidence(fd, e->via, "%s", e->entry);
        if (fd && driver)
            report_finding_set_cause(fd, crash_id, crash_subject);
        else if (fd && missing_id && !e->crashed && strstr(e->error, "libcuda.so.1: cannot open shared object file"))
            report_finding_set_cause(fd, missing_id, missing_subject);
    }
    free(crash_id);
    free(crash_subject);
    free(missing_id);
    free(missing_subject);
    /* Versions from file names are not what the libraries answer: no finding is drawn from them. */
    if (!st->not_loaded) {
        cuda_libs_driver_findings(st);
        cuda_libs_conflict_findings(st);
        cuda_libs_cudnn_findings(st);
        cuda_libs_cudnn_mixed_findings(st);
        cuda_libs_toolkit_findings(st);
    }
    cuda_libs_ldpath_findings(st);
    cuda_libs_libcuda_findings(st);

    if (st->n == 0) {
        if (foreign) { /* there, for another machine: not "none" */
            report_section_add_line(st->sec, REPORT_MARK_WARN, "CUDA libraries", "none for this machine (%zu built for "
                                    "another: cuda.lib-wrong-arch)", foreign);
            return;
        }
        /* Without an NVIDIA GPU, no CUDA library is the normal state: nothing to say. */
        if (st->facts && st->facts->nvidia_gpu_present) {
            report_add_finding(r, "cuda.lib-none", NULL,
                               "no CUDA library (runtime, cuBLAS, cuDNN, NCCL...) on the library search path or in a "
                               "pip wheel");
            report_section_add_line(st->sec, REPORT_MARK_INFO, "CUDA libraries", "none found");
        }
        return;
    }
    if (st->not_loaded)
        report_section_add_line(st->sec, REPORT_MARK_INFO, "CUDA libraries", "not loaded: %s (versions from file names)",
                                st->not_loaded);
    char *first = cuda_libs_summary(st, cuda_libs_pick_first, NULL);
    if (first && *first)
        report_section_add_line(st->sec, REPORT_MARK_INFO, "CUDA libraries", "search path: %s", first);
    free(first);
    for (size_t i = 0; i < st->n; i++) {
        const char *site = st->e[i].site;
        bool seen = !site;
        for (size_t j = 0; j < i && !seen; j++)
            seen = st->e[j].site && strcmp(st->e[j].site, site) == 0;
        if (seen)
            continue;
        char *w = cuda_libs_summary(st, cuda_libs_pick_site, site);
        if (w && *w)
            report_section_add_line(st->sec, REPORT_MARK_INFO, "CUDA libraries", "pip in %s: %s", site, w);
        free(w);
    }
}

/* ---- the driver a CUDA major needs ---- */

/* NVIDIA, CUDA Toolkit Release Notes, "CUDA Toolkit and Minimum Required Driver Version for CUDA Minor
 * Version Compatibility" (Linux x86_64): a runtime of CUDA major N runs on any driver at or above this
 * version (newer minor releases may need a newer driver only for features such as PTX JIT). */
static const struct {
    int cuda_major;
    const char *driver;
} cuda_libs_driver_table[] = {
    {11, "450.80.02"},
    {12, "525.60.13"},
    {13, "580"},
};

const char *cuda_libs_min_driver(int cuda_major)
{
    for (size_t i = 0; i < sizeof(cuda_libs_driver_table) / sizeof(cuda_libs_driver_table[0]); i++)
        if (cuda_libs_driver_table[i].cuda_major == cuda_major)
            return cuda_libs_driver_table[i].driver;
    return NULL;
}

int cuda_libs_vercmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea + strlen(ea);
        b = *eb == '.' ? eb + 1 : eb + strlen(eb);
        if (ea == a && eb == b)
            break;
    }
    return 0;
}
