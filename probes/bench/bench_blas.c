/* bench_blas.c: load the CPU CBLAS and CLBlast with dlopen (never linked), for `bench`'s comparisons. */
#include "bench_blas.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The real file behind HANDLE (heap), or a copy of NAME. */
static char *bench_blas_path(void *handle, const char *name)
{
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name) {
        char *rp = realpath(lm->l_name, NULL);
        return rp ? rp : strdup(lm->l_name);
    }
    return strdup(name);
}

/* The CPU BLAS candidates, in order: OpenBLAS (Debian libopenblas0), then the CBLAS of the BLAS
 * alternatives (Debian libblas3 ships cblas_* in libblas.so.3; some distributions split libcblas). */
static const char *const bench_cblas_names[] = {"libopenblas.so.0", "libcblas.so.3", "libblas.so.3", NULL};

int bench_cblas_open(struct bench_cblas *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof(*b));
    const char *env = getenv("GPUCHECKUP_LIBCBLAS");
    const char *one[2] = {env, NULL};
    const char *const *names = env && *env ? one : bench_cblas_names;
    size_t used = 0;
    err[0] = '\0';
    for (size_t i = 0; names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            used += (size_t)snprintf(err + used, used < errlen ? errlen - used : 0, "%s%s: not found",
                                     used ? "; " : "", names[i]);
            if (used >= errlen)
                used = errlen - 1;
            continue;
        }
        *(void **)&b->sgemm = dlsym(h, "cblas_sgemm");
        *(void **)&b->dgemm = dlsym(h, "cblas_dgemm");
        if (!b->sgemm || !b->dgemm) {
            used += (size_t)snprintf(err + used, used < errlen ? errlen - used : 0, "%s%s: no cblas_sgemm/cblas_dgemm",
                                     used ? "; " : "", names[i]);
            if (used >= errlen)
                used = errlen - 1;
            dlclose(h);
            continue;
        }
        *(void **)&b->set_threads = dlsym(h, "openblas_set_num_threads");
        b->handle = h;
        b->soname = names[i];
        b->path = bench_blas_path(h, names[i]);
        return 0;
    }
    return -1;
}

void bench_cblas_close(struct bench_cblas *b)
{
    if (b->handle)
        dlclose(b->handle);
    free(b->path);
    memset(b, 0, sizeof(*b));
}

int bench_clblast_open(struct bench_clblast *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof(*b));
    const char *env = getenv("GPUCHECKUP_LIBCLBLAST");
    const char *name = env && *env ? env : "libclblast.so.1";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "%s: not found", name);
        return -1;
    }
    *(void **)&b->sgemm = dlsym(h, "CLBlastSgemm");
    *(void **)&b->dgemm = dlsym(h, "CLBlastDgemm");
    *(void **)&b->hgemm = dlsym(h, "CLBlastHgemm");
    if (!b->sgemm || !b->dgemm) {
        snprintf(err, errlen, "%s: no CLBlastSgemm/CLBlastDgemm", name);
        dlclose(h);
        memset(b, 0, sizeof(*b));
        return -1;
    }
    b->handle = h;
    b->path = bench_blas_path(h, name);
    return 0;
}

void bench_clblast_close(struct bench_clblast *b)
{
    /* CLBlast keeps compiled programs in a global cache whose destructors release OpenCL objects at exit:
     * never unload it while the process lives (the child ends with _exit anyway). */
    free(b->path);
    b->path = NULL;
}
