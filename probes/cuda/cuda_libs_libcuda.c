/* cuda_libs_libcuda.c: the unversioned libcuda.so some programs dlopen: the toolkit's stub ahead of the driver, or none. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cuda_internal.h"
#include "cuda_libs.h"
#include "strutil.h"

/* The toolkit installs its link-time stub as .../lib64/stubs/libcuda.so (CUDA installation guide); the driver
 * part recognises it by that directory too (cuda_driver.c). PATH is where the search found it, REAL its file. */
static bool cuda_libcuda_is_stub(const char *path, const char *real)
{
    return (path && strstr(path, "/stubs/")) || (real && strstr(real, "/stubs/"));
}

/* "LD_LIBRARY_PATH entry /usr/local/cuda/lib64/stubs", "ld.so.cache (libcuda.so => /x/libcuda.so)". */
static char *cuda_libcuda_how(const struct ldsearch_hit *h)
{
    if (h->via && strcmp(h->via, "LD_LIBRARY_PATH") == 0)
        return str_printf("LD_LIBRARY_PATH entry %s", h->entry ? h->entry : "?");
    if (h->entry)
        return str_printf("%s (%s)", h->via ? h->via : "?", h->entry);
    return str_dup(h->via ? h->via : "?");
}

/* libcuda.so is the stub while libcuda.so.1 is the driver: programs that dlopen the unversioned name (NVIDIA
 * Warp, cudarc, bitsandbytes, numba on some paths) get CUDA_ERROR_STUB_LIBRARY (34) although the driver works. */
static void cuda_libcuda_stub_first(struct cuda_libs_state *st, const char *path, const char *real,
                                    const struct ldsearch_hit *h, const char *drv_real)
{
    char *how = cuda_libcuda_how(h);
    struct report_finding *fd = report_add_finding(
        st->ctx->report, "cuda.lib-unversioned-stub", real ? real : path,
        "libcuda.so (the unversioned name) resolves to the CUDA toolkit's stub %s, found through %s, while "
        "libcuda.so.1 is the driver's %s: programs that dlopen libcuda.so (NVIDIA Warp, cudarc, bitsandbytes, numba "
        "on some paths) get CUDA_ERROR_STUB_LIBRARY; those that load libcuda.so.1 (the CUDA runtime, PyTorch, "
        "TensorFlow, JAX) are not affected",
        path, how, drv_real);
    free(how);
    if (!fd)
        return;
    report_finding_add_evidence(fd, "dlopen(libcuda.so)", "-> %s (%s)", path, h->via ? h->via : "?");
    report_finding_add_evidence(fd, "dlopen(libcuda.so.1)", "-> %s", drv_real);
    bool ldlp = h->via && strcmp(h->via, "LD_LIBRARY_PATH") == 0;
    if (ldlp)
        report_finding_set_hint(fd, "Remove %s from LD_LIBRARY_PATH: stub libraries are for linking only (LIBRARY_PATH "
                                    "or -L is where the linker takes them from); the driver's libcuda.so is then "
                                    "found first.", h->entry ? h->entry : "the stubs directory");
    else
        report_finding_set_hint(fd, "Remove the stubs directory from /etc/ld.so.conf.d/*.conf and run `sudo ldconfig`: "
                                    "stub libraries are for linking only; the driver's libcuda.so is then found.");
    /* LD_LIBRARY_PATH naming the stubs directory (cuda.lib-ld-path-stubs) is what brings it in first. */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path)) : NULL;
    if (ldlp && dir && report_find_finding(st->ctx->report, "cuda.lib-ld-path-stubs", dir))
        report_finding_set_cause(fd, "cuda.lib-ld-path-stubs", dir);
    free(dir);
}

/* What present here needs the unversioned name (heap), or NULL: a CUDA toolkit (building with -lcuda), or
 * Triton in a pip site the search found, which links its launcher with -lcuda at run time (torch.compile's
 * "libcuda.so cannot found" / "ld: cannot find -lcuda" with only libcuda.so.1 installed: triton-lang/triton
 * pull 1981, pytorch/pytorch issue 107960). A driver alone, and programs that load libcuda.so.1, never do. */
static char *cuda_libcuda_consumer(const struct cuda_libs_state *st)
{
    if (st->n_tk > 0)
        return str_printf("the CUDA toolkit %s (%s): building with -lcuda", st->tk[0].dir, st->tk[0].why);
    for (size_t i = 0; i < st->n; i++) {
        if (!st->e[i].site || (i > 0 && st->e[i - 1].site && strcmp(st->e[i - 1].site, st->e[i].site) == 0))
            continue;
        char *p = ldsearch_join(st->e[i].site, "triton");
        struct stat sb;
        bool has = p && hostfs_stat(st->fs, p, &sb, true) == 0 && S_ISDIR(sb.st_mode);
        free(p);
        if (has)
            return str_printf("Triton in %s: torch.compile and Triton kernels link with -lcuda", st->e[i].site);
    }
    return NULL;
}

void cuda_libs_libcuda_findings(struct cuda_libs_state *st)
{
    struct ldsearch_hit h1 = {0}, h0 = {0};
    char *so1 = ldsearch_find_hit(&st->search, "libcuda.so.1", &h1);
    char *real1 = so1 ? ldsearch_realpath(st->fs, so1) : NULL;
    /* No driver library, or the stub as libcuda.so.1: the driver part's findings say so (cuda.no-libcuda,
     * cuda.stub-library); the unversioned name adds nothing then. */
    if (!so1 || cuda_libcuda_is_stub(so1, real1))
        goto out1;
    const char *drv = real1 ? real1 : so1;
    char *consumer = NULL;
    char *so = ldsearch_find_hit(&st->search, "libcuda.so", &h0);
    if (so) {
        char *real = ldsearch_realpath(st->fs, so);
        if (cuda_libcuda_is_stub(so, real))
            cuda_libcuda_stub_first(st, so, real, &h0, drv);
        free(real);
    } else if ((consumer = cuda_libcuda_consumer(st)) != NULL) {
        /* Information only: a healthy driver needs no libcuda.so (Debian ships that link apart from libcuda1,
         * WSL's /usr/lib/wsl/lib may hold only libcuda.so.1); only programs that ask for that name miss it,
         * so it is said only where one of those is installed (cuda_libcuda_consumer). */
        const char *slash = strrchr(so1, '/');
        char *dir = slash ? strndup(so1, (size_t)(slash - so1)) : NULL;
        struct report_finding *fd = report_add_finding(
            st->ctx->report, "cuda.lib-unversioned-missing", dir ? dir : so1,
            "libcuda.so.1 is %s but no libcuda.so (the unversioned name) is on the library search path: programs "
            "that dlopen only that name (NVIDIA Warp, cudarc, some numba and bitsandbytes paths) do not find the "
            "driver; programs that load libcuda.so.1 are not affected",
            drv);
        if (fd) {
            report_finding_add_evidence(fd, "dlopen(libcuda.so.1)", "-> %s (%s)", so1, h1.via ? h1.via : "?");
            report_finding_add_evidence(fd, "dlopen(libcuda.so)", "not found");
            report_finding_add_evidence(fd, "needed by", "%s", consumer);
            report_finding_set_hint(fd, "Nothing to do unless a program fails to find libcuda.so: then link it to the "
                                        "driver's (`sudo ln -s %s /usr/local/lib/libcuda.so && sudo ldconfig`).", drv);
        }
        free(dir);
    }
    free(consumer);
    free(so);
    free(h0.entry);
out1:
    free(so1);
    free(real1);
    free(h1.entry);
}
