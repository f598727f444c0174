/* cuda_libs_child.c: the CUDA library families and the isolated child that asks one library file its version. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_libs.h"
#include "dlsyms.h"

/* Every library a framework loads. Symbols and their signatures: the CUDA 13.0 headers
 * (cuda_runtime_api.h, cublas_api.h, cublasLt.h, cufft.h, cusparse.h, cusolver_common.h, nvrtc.h,
 * nvJitLink.h), cudnn_graph.h of cuDNN 9 (cudnn.h of cuDNN 8) and nccl.h. The cuDNN row with key NULL
 * stands for every sub-library (cuDNN 9: ops, cnn, adv, graph, engines_*, heuristic; cuDNN 8: ops_infer,
 * ops_train...): its key is the file's name ("cudnn_ops"); those without cudnnGetVersion of their own
 * answer through the libcudnn_graph they load, and one that links no libcudnn_graph either (cuDNN 9.2x's
 * libcudnn_ext.so.9, whose only version symbol is cudnnSubquadraticOpsVersionCheck) takes libcudnn's. */
const struct cuda_lib_family cuda_lib_families[] = {
    {"cudart", "libcudart.so.*", CUDA_LIB_CUDART, "cudaRuntimeGetVersion", NULL, "CUDA runtime", NULL},
    {"cublas", "libcublas.so.*", CUDA_LIB_PROPERTY, "cublasGetProperty", "cublasGetCudartVersion", "cuBLAS", NULL},
    {"cublasLt", "libcublasLt.so.*", CUDA_LIB_PROPERTY, "cublasLtGetProperty", "cublasLtGetCudartVersion",
     "cuBLASLt", NULL},
    {"cufft", "libcufft.so.*", CUDA_LIB_PROPERTY, "cufftGetProperty", NULL, "cuFFT", NULL},
    {"cusparse", "libcusparse.so.*", CUDA_LIB_PROPERTY, "cusparseGetProperty", NULL, "cuSPARSE", NULL},
    {"cusolver", "libcusolver.so.*", CUDA_LIB_PROPERTY, "cusolverGetProperty", NULL, "cuSOLVER", NULL},
    {"cudnn", "libcudnn.so.*", CUDA_LIB_CUDNN, "cudnnGetVersion", "cudnnGetCudartVersion", "cuDNN", NULL},
    {NULL, "libcudnn_*.so.*", CUDA_LIB_CUDNN, "cudnnGetVersion", "cudnnGetCudartVersion", "cuDNN", "cudnn"},
    {"nccl", "libnccl.so.*", CUDA_LIB_NCCL, "ncclGetVersion", NULL, "NCCL", NULL},
    {"nvrtc", "libnvrtc.so.*", CUDA_LIB_NVRTC, "nvrtcVersion", NULL, "NVRTC", NULL},
    {"nvJitLink", "libnvJitLink.so.*", CUDA_LIB_NVJITLINK, "nvJitLinkVersion", NULL, "nvJitLink", NULL},
};
const size_t cuda_lib_n_families = sizeof(cuda_lib_families) / sizeof(cuda_lib_families[0]);

/* Our own declarations of the version functions (every status type is an int-sized enum; 0 = success). */
struct cuda_libs_fns {
    int (*version_int)(int *v);              /* cudaRuntimeGetVersion, ncclGetVersion */
    int (*get_property)(int type, int *v);   /* *GetProperty(libraryPropertyType, int *) */
    size_t (*version_size)(void);            /* cudnnGetVersion */
    int (*version_pair)(int *maj, int *min); /* nvrtcVersion */
    int (*version_upair)(unsigned *maj, unsigned *min); /* nvJitLinkVersion */
    size_t (*cudart_version)(void);          /* cublasGetCudartVersion, cudnnGetCudartVersion... */
};

/* libraryPropertyType (library_types.h). */
enum { CUDA_LIBS_MAJOR_VERSION = 0, CUDA_LIBS_MINOR_VERSION = 1, CUDA_LIBS_PATCH_LEVEL = 2 };

int cuda_libs_cudnn_decode(long raw, int soname_major, int *major, int *minor, int *patch)
{
    if (raw <= 0)
        return -1;
    /* cudnn_version.h: cuDNN 9 CUDNN_VERSION = MAJOR * 10000 + MINOR * 100 + PATCHLEVEL;
     * cuDNN 8 and 7: MAJOR * 1000 + MINOR * 100 + PATCHLEVEL. */
    long base = 0;
    if (soname_major >= 9)
        base = 10000;
    else if (soname_major >= 0)
        base = 1000;
    else
        base = raw >= 90000 ? 10000 : 1000;
    *major = (int)(raw / base);
    *minor = (int)((raw % base) / 100);
    *patch = (int)(raw % 100);
    if (soname_major >= 0 && *major != soname_major)
        return -1;
    return 0;
}

int cuda_libs_nccl_decode(long raw, int *major, int *minor, int *patch)
{
    if (raw <= 0)
        return -1;
    /* nccl.h: NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z when X*100+Y >= 209, else X*1000+Y*100+Z. */
    long base = raw >= 20900 ? 10000 : 1000;
    *major = (int)(raw / base);
    *minor = (int)((raw % base) / 100);
    *patch = (int)(raw % 100);
    return 0;
}

static json_object *cuda_libs_error(const char *fmt, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof(buf), fmt, what ? what : "");
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(buf));
    return o;
}

static void cuda_libs_put3(json_object *o, int major, int minor, int patch)
{
    json_object_object_add(o, "major", json_object_new_int(major));
    json_object_object_add(o, "minor", json_object_new_int(minor));
    json_object_object_add(o, "patch", patch >= 0 ? json_object_new_int(patch) : NULL);
}

/* cuDNN 9's libcudnn.so.N answers through the libcudnn_graph.so.N it dlopens by name, which its RPATH
 * ($ORIGIN) finds beside it. Loaded first from that directory, it is the one answering whatever the
 * process's dlopen looks like (a sanitizer's dlopen interceptor makes the caller libasan, whose RPATH
 * has no $ORIGIN, and the toolkit's cuDNN answered for a wheel's). Beside it or nowhere: as for a
 * framework. */
static void cuda_libs_preload_graph(const struct cuda_libs_child_arg *a)
{
    const char *slash = strrchr(a->path, '/');
    if (a->family->kind != CUDA_LIB_CUDNN || !a->family->key || strcmp(a->family->key, "cudnn") != 0 || !slash ||
        a->soname_major < 9)
        return;
    char graph[4096];
    int n = snprintf(graph, sizeof(graph), "%.*s/libcudnn_graph.so.%d", (int)(slash - a->path), a->path, a->soname_major);
    if (n > 0 && (size_t)n < sizeof(graph) && access(graph, F_OK) == 0)
        (void)dlopen(graph, RTLD_LAZY | RTLD_GLOBAL);
}

json_object *cuda_libs_child(void *arg)
{
    const struct cuda_libs_child_arg *a = arg;
    const struct cuda_lib_family *fam = a->family;
    cuda_libs_preload_graph(a);
    /* RTLD_LAZY: the big libraries (cuDNN engines, cuBLASLt) bind only what is called; a missing
     * dependency still fails here, as it would in the framework. */
    void *h = dlopen(a->path, RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return cuda_libs_error("dlopen failed: %s", dlerror());
    struct cuda_libs_fns fns = {0};
    size_t off;
    switch (fam->kind) {
    case CUDA_LIB_CUDART:
    case CUDA_LIB_NCCL:
        off = offsetof(struct cuda_libs_fns, version_int);
        break;
    case CUDA_LIB_PROPERTY:
        off = offsetof(struct cuda_libs_fns, get_property);
        break;
    case CUDA_LIB_CUDNN:
        off = offsetof(struct cuda_libs_fns, version_size);
        break;
    case CUDA_LIB_NVRTC:
        off = offsetof(struct cuda_libs_fns, version_pair);
        break;
    case CUDA_LIB_NVJITLINK:
    default:
        off = offsetof(struct cuda_libs_fns, version_upair);
        break;
    }
    const struct dlsym_entry table[] = {
        {fam->version_fn, true, NULL, off},
        {fam->cudart_fn ? fam->cudart_fn : fam->version_fn, false, NULL, offsetof(struct cuda_libs_fns, cudart_version)},
    };
    const char *missing = NULL;
    if (dlsyms_load(h, table, fam->cudart_fn ? 2 : 1, &fns, &missing) != 0) {
        if (!fam->version_of || !missing || strcmp(missing, fam->version_fn) != 0)
            return cuda_libs_error("no %s in the library", missing);
        json_object *o = json_object_new_object(); /* loaded: its version is its family's main library's */
        json_object_object_add(o, "no_version_fn", json_object_new_string(fam->version_fn));
        return o;
    }

    json_object *o = json_object_new_object();
    int major = -1, minor = -1, patch = -1, rc = 0;
    long raw = -1;
    switch (fam->kind) {
    case CUDA_LIB_CUDART: {
        int v = 0;
        rc = fns.version_int(&v);
        raw = v;
        major = v / 1000;
        minor = (v % 1000) / 10;
        break;
    }
    case CUDA_LIB_NCCL: {
        int v = 0;
        rc = fns.version_int(&v);
        raw = v;
        if (rc == 0 && cuda_libs_nccl_decode(raw, &major, &minor, &patch) != 0)
            rc = -1;
        break;
    }
    case CUDA_LIB_PROPERTY: {
        int v[3] = {-1, -1, -1};
        rc = fns.get_property(CUDA_LIBS_MAJOR_VERSION, &v[0]);
        if (rc == 0)
            rc = fns.get_property(CUDA_LIBS_MINOR_VERSION, &v[1]);
        if (rc == 0)
            rc = fns.get_property(CUDA_LIBS_PATCH_LEVEL, &v[2]);
        major = v[0];
        minor = v[1];
        patch = v[2];
        raw = major * 10000L + minor * 100L + (patch > 0 ? patch : 0);
        break;
    }
    case CUDA_LIB_CUDNN:
        raw = (long)fns.version_size();
        if (cuda_libs_cudnn_decode(raw, a->soname_major, &major, &minor, &patch) != 0) {
            json_object_put(o);
            char buf[64];
            snprintf(buf, sizeof(buf), "%ld", raw);
            return cuda_libs_error("cudnnGetVersion returned %s, not a cuDNN of this file's major", buf);
        }
        break;
    case CUDA_LIB_NVRTC:
        rc = fns.version_pair(&major, &minor);
        raw = major * 1000L + minor * 10L;
        break;
    case CUDA_LIB_NVJITLINK: {
        unsigned ma = 0, mi = 0;
        rc = fns.version_upair(&ma, &mi);
        major = (int)ma;
        minor = (int)mi;
        raw = major * 1000L + minor * 10L;
        break;
    }
    }
    if (rc != 0 || major < 0 || minor < 0) {
        json_object_put(o);
        char buf[64];
        snprintf(buf, sizeof(buf), "%d", rc);
        return cuda_libs_error("the version call failed (status %s)", buf);
    }
    json_object_object_add(o, "raw", json_object_new_int64(raw));
    cuda_libs_put3(o, major, minor, patch);
    if (fam->cudart_fn && fns.cudart_version)
        json_object_object_add(o, "cudart_version", json_object_new_int64((int64_t)fns.cudart_version()));
    Dl_info info;
    void *sym = dlsym(h, fam->version_fn);
    if (sym && dladdr(sym, &info) && info.dli_fname)
        json_object_object_add(o, "answered_by", json_object_new_string(info.dli_fname));
    /* No dlclose: the child ends here, and some libraries crash in their destructors. */
    return o;
}

json_object *cuda_libs_group_child(void *arg)
{
    const struct cuda_libs_group_arg *g = arg;
    for (size_t k = 0; k < g->n; k++) {
        struct cuda_libs_slot *slot = g->slots[k];
        __atomic_store_n(&slot->state, CUDA_LIBS_SLOT_LOADING, __ATOMIC_RELEASE);
        json_object *o = cuda_libs_child((void *)g->libs[k]);
        size_t len = 0;
        const char *s = o ? json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len) : NULL;
        if (s && len < sizeof(slot->json)) {
            memcpy(slot->json, s, len + 1);
        } else {
            json_object *e = cuda_libs_error("its answer did not fit in %s", "8 KiB");
            s = json_object_to_json_string_length(e, JSON_C_TO_STRING_PLAIN, &len);
            snprintf(slot->json, sizeof(slot->json), "%s", s ? s : "{}");
        }
        /* No json_object_put: as in isolate_child, the process ends soon and a driver's heap may be broken. */
        __atomic_store_n(&slot->state, CUDA_LIBS_SLOT_DONE, __ATOMIC_RELEASE);
    }
    json_object *r = json_object_new_object();
    json_object_object_add(r, "loaded", json_object_new_int64((int64_t)g->n));
    return r;
}
