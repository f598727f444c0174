/* frameworks_pinlibs.c: the libraries a pinned NVIDIA wheel provides, and whether the loader finds them elsewhere. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frameworks_internal.h"
#include "ldsearch.h"
#include "strutil.h"

/* A wheel's part ("cudnn" of nvidia-cudnn-cu13, "cudart" of cuda-toolkit[cudart]) and the soname it ships for
 * CUDA 12 and 13. The parts and library stems are those torch preloads from its wheels when its own import
 * fails on them (torch/__init__.py of 2.15.0+cu132, _preload_cuda_deps: cublas libcublasLt/libcublas, cudnn
 * libcudnn, cuda_nvrtc libnvrtc, cuda_runtime libcudart, cuda_cupti libcupti, cufft, nvjitlink libnvJitLink,
 * cusparse, cusparselt libcusparseLt, cusolver, nccl, cufile; nvtx libnvToolsExt only with required=False, and
 * CUDA 13 has no libnvToolsExt: "" is no library the import needs); the majors are
 * those of the CUDA 12.x / 13.x toolkits' libraries (cufft 11/12, cusolver 11/12: their own numbering). NULL:
 * a major gpucheckup does not know (then the pin is judged as before: its import fails). */
struct fw_pinlib {
    const char *part, *cu12, *cu13;
};
static const struct fw_pinlib fw_pinlibs[] = {
    {"cudnn", "libcudnn.so.9", "libcudnn.so.9"},
    {"cublas", "libcublas.so.12", "libcublas.so.13"},
    {"cuda-runtime", "libcudart.so.12", "libcudart.so.13"},
    {"cudart", "libcudart.so.12", "libcudart.so.13"},
    {"cuda-nvrtc", "libnvrtc.so.12", "libnvrtc.so.13"},
    {"nvrtc", "libnvrtc.so.12", "libnvrtc.so.13"},
    {"cuda-cupti", "libcupti.so.12", "libcupti.so.13"},
    {"cupti", "libcupti.so.12", "libcupti.so.13"},
    {"cufft", "libcufft.so.11", "libcufft.so.12"},
    {"cufile", "libcufile.so.0", "libcufile.so.0"},
    {"curand", "libcurand.so.10", "libcurand.so.10"},
    {"cusolver", "libcusolver.so.11", "libcusolver.so.12"},
    {"cusparse", "libcusparse.so.12", "libcusparse.so.12"},
    {"cusparselt", "libcusparseLt.so.0", "libcusparseLt.so.0"},
    {"nccl", "libnccl.so.2", "libnccl.so.2"},
    {"nvjitlink", "libnvJitLink.so.12", "libnvJitLink.so.13"},
    {"nvshmem", "libnvshmem_host.so.3", "libnvshmem_host.so.3"},
    {"nvtx", "", ""},
};

/* The soname of PART for CUDA MAJOR (cuDNN: the pinned version's own major, 8 or 9), or NULL. */
static const char *fw_pinlib_soname(const char *part, int major, int cudnn_major, char *buf, size_t len)
{
    if (strcmp(part, "cudnn") == 0 && cudnn_major > 0) {
        snprintf(buf, len, "libcudnn.so.%d", cudnn_major);
        return buf;
    }
    for (size_t i = 0; i < sizeof(fw_pinlibs) / sizeof(fw_pinlibs[0]); i++)
        if (strcmp(fw_pinlibs[i].part, part) == 0)
            return !fw_pinlibs[i].cu12[0] ? "" : major == 12 ? fw_pinlibs[i].cu12 : major == 13 ? fw_pinlibs[i].cu13 : NULL;
    return NULL;
}

/* One soname: found by LS? Appends it to W: "DIR (VIA): SONAME (VERSION)", the directory only when it is
 * another than the last one's ("; DIR (VIA): ..."), and each new directory to W->dirs. */
static bool fw_pinlib_find(const struct hostfs *fs, const struct ldsearch *ls, const char *soname,
                           struct fw_pin_where *w)
{
    const char *via = NULL;
    if (!soname[0])
        return true; /* nothing the import needs */
    char *p = ldsearch_find(ls, soname, &via);
    if (!p)
        return false;
    char v[64], *slash = strrchr(p, '/');
    fw_file_version(fs, p, v, sizeof(v));
    int dl = slash ? (int)(slash - p) : 0;
    bool same = w->last[0] && strlen(w->last) == (size_t)dl && strncmp(w->last, p, (size_t)dl) == 0;
    size_t l = strlen(w->text), k = strlen(w->dirs);
    int cut = 0;
    if (!same) {
        cut += snprintf(w->text + l, sizeof(w->text) - l, "%s%.*s (%s): ", l ? "; " : "", dl, p,
                        via ? via : "the loader's path");
        cut += snprintf(w->dirs + k, sizeof(w->dirs) - k, "%s%.*s", k ? ", " : "", dl, p);
        snprintf(w->last, sizeof(w->last), "%.*s", dl, p);
    } else {
        cut += snprintf(w->text + l, sizeof(w->text) - l, ", ");
    }
    l = strlen(w->text);
    cut += snprintf(w->text + l, sizeof(w->text) - l, "%s%s%s%s", soname, v[0] ? " (" : "", v, v[0] ? ")" : "");
    (void)cut;
    free(p);
    return true;
}

int fw_pin_found_elsewhere(const struct hostfs *fs, const struct ldsearch *ls, const char *name, const char *spec,
                           struct fw_pin_where *where)
{
    if (!name || !spec)
        return -1;
    /* the version the pin names ("==9.26.0.51", "[...]==13.2.2; ..."): its major */
    const char *eq = strstr(spec, "==");
    int vmajor = eq ? atoi(eq + 2) : -1;
    char buf[32];
    if (strcmp(name, "cuda-toolkit") == 0) {
        /* cuda-toolkit[cublas,cudart,...]==13.2.2: each extra is one of the toolkit's wheels */
        const char *lb = spec[0] == '[' ? spec : NULL, *rb = lb ? strchr(lb, ']') : NULL;
        if (!rb || rb == lb + 1)
            return -1;
        int all = 1;
        for (const char *p = lb + 1; p < rb;) {
            size_t k = strcspn(p, ",]");
            char part[32];
            snprintf(part, sizeof(part), "%.*s", (int)(k < sizeof(part) ? k : sizeof(part) - 1), p);
            const char *so = fw_pinlib_soname(part, vmajor, -1, buf, sizeof(buf));
            if (!so)
                return -1;
            if (!fw_pinlib_find(fs, ls, so, where))
                all = 0;
            p += k + (p[k] == ',');
        }
        return all;
    }
    if (strcmp(name, "cuda-bindings") == 0)
        return 1; /* Python bindings only: torch imports cuda.bindings lazily (torch/profiler/_cuspy,
                   * torch/cuda/green_contexts), not on `import torch` */
    /* nvidia-PART-cuNN ("nvidia-cuda-runtime-cu12"), or nvidia-PART with CUDA 13's unsuffixed names */
    if (strncmp(name, "nvidia-", 7) != 0)
        return -1;
    char part[48];
    snprintf(part, sizeof(part), "%s", name + 7);
    int cmajor = -1;
    char *cu = strrchr(part, '-');
    if (cu && cu[1] == 'c' && cu[2] == 'u' && isdigit((unsigned char)cu[3])) {
        cmajor = atoi(cu + 3);
        *cu = '\0';
    }
    const char *so = fw_pinlib_soname(part, cmajor, strcmp(part, "cudnn") == 0 ? vmajor : -1, buf, sizeof(buf));
    if (!so)
        return -1;
    return fw_pinlib_find(fs, ls, so, where) ? 1 : 0;
}

const char *fw_pin_soname(const char *name, const char *spec, char *buf, size_t len)
{
    if (!name || strncmp(name, "nvidia-", 7) != 0)
        return NULL;
    char part[48];
    snprintf(part, sizeof(part), "%s", name + 7);
    char *cu = strrchr(part, '-');
    if (!cu || cu[1] != 'c' || cu[2] != 'u' || !isdigit((unsigned char)cu[3]))
        return NULL;
    int cmajor = atoi(cu + 3);
    *cu = '\0';
    /* cuDNN: the major of the version the pin names (">=9.8", "==9.10.2.21") */
    const char *v = spec ? strpbrk(spec, "0123456789") : NULL;
    const char *so = fw_pinlib_soname(part, cmajor, strcmp(part, "cudnn") == 0 && v ? atoi(v) : -1, buf, len);
    return so && so[0] ? so : NULL;
}
