/* pci_wsl_stacks.c: which GPU vendors' Windows drivers a WSL2 guest sees, and ROCm's WSL bridge: facts for the compute probes. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "pci_internal.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "strutil.h"

/* Facts, and where they come from:
 * - WSL mounts the Windows DriverStore's GPU driver folders at /usr/lib/wsl/drivers/<INF>_amd64_<hash>/ (the
 *   NVIDIA Container Toolkit's WSL mode reads libcuda.so.1.1 and nvidia-smi there: NVIDIA/nvidia-container-toolkit
 *   #1890, docker/buildx#3320). The folder is named after the driver's INF file: Intel's graphics driver is
 *   iigd_dch.inf (microsoft/WSL#6423's dxdiag), AMD's display drivers are u<7 digits>.inf (u0420529.inf beside
 *   NVIDIA's nv_dispsi.inf in nvidia-container-toolkit#1890's log), NVIDIA's hold libcuda.so.1.1.
 * - NVIDIA's libcuda, NVML and nvidia-smi also appear in /usr/lib/wsl/lib.
 * - AMD: ROCm reaches the GPU through /dev/dxg with the librocdxg thunk (ROCm/librocdxg, installed in
 *   /opt/rocm/lib), which the HSA runtime loads when HSA_ENABLE_DXG_DETECTION=1; there is no /dev/kfd under WSL
 *   (ROCm, "Using rocprofv3 on WSL2").
 * - Intel: its compute runtime (OpenCL, Level Zero) uses the Windows driver through /dev/dxg and libdxcore; no i915
 *   or xe exists inside WSL. */
#define WSL_DRIVERS "/usr/lib/wsl/drivers"
#define WSL_MAX_STORES 16
#define HSA_DXG "HSA_ENABLE_DXG_DETECTION"

static const char *const pci_wsl_vendor_names[] = {"nvidia", "amd", "intel"};

/* The vendor bit a DriverStore folder NAME stands for (its files through FS for NVIDIA's), or 0. */
static unsigned pci_wsl_store_vendor(const struct hostfs *fs, const char *name)
{
    if (strncasecmp(name, "iigd", 4) == 0)
        return PCI_WSL_INTEL;
    if (fnmatch("u[0-9][0-9][0-9][0-9][0-9][0-9][0-9].inf_*", name, FNM_CASEFOLD) == 0)
        return PCI_WSL_AMD;
    char *dir = ldsearch_join(WSL_DRIVERS, name), *cuda = dir ? ldsearch_join(dir, "libcuda.so.1.1") : NULL;
    struct stat sb;
    bool nv = cuda && hostfs_stat(fs, cuda, &sb, true) == 0;
    free(cuda);
    free(dir);
    return nv ? PCI_WSL_NVIDIA : 0;
}

/* ROCm's WSL thunk: on the loader's path (S), else in the lib directory of /opt/rocm or /opt/rocm-VERSION.
 * Heap path or NULL. */
static char *pci_wsl_rocdxg(const struct hostfs *fs, const struct ldsearch *s)
{
    static const char *const names[] = {"librocdxg.so", "librocdxg.so.1"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *via = NULL;
        char *p = ldsearch_find(s, names[i], &via);
        if (p)
            return p;
    }
    char **dirs = NULL, *found = NULL;
    size_t n = 0;
    if (ldsearch_glob_dirs(fs, "/opt/rocm*/lib", &dirs, &n) != 0)
        return NULL;
    for (size_t i = 0; i < n && !found; i++) {
        char *p = ldsearch_join(dirs[i], "librocdxg.so");
        struct stat sb;
        if (p && hostfs_stat(fs, p, &sb, true) == 0)
            found = p;
        else
            free(p);
    }
    ldsearch_strv_free(dirs, n);
    return found;
}

void pci_wsl_stacks_collect(struct pci_state *st, const struct ldsearch *s)
{
    struct pci_platform *p = &st->platform;
    const struct hostfs *fs = st->ctx->fs;
    struct stat sb;
    if (p->lib_dir && hostfs_stat(fs, "/usr/lib/wsl/lib/libcuda.so.1", &sb, true) == 0)
        p->wsl_vendors |= PCI_WSL_NVIDIA;
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(fs, WSL_DRIVERS, "*", &names, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            unsigned v = pci_wsl_store_vendor(fs, names[i]);
            p->wsl_vendors |= v;
            if (v && p->n_stores < WSL_MAX_STORES) {
                char **grown = realloc(p->stores, (p->n_stores + 1) * sizeof(*grown));
                if (!grown)
                    break;
                p->stores = grown;
                p->stores[p->n_stores++] = str_dup(names[i]);
            }
        }
        ldsearch_strv_free(names, n);
    }
    p->rocdxg = pci_wsl_rocdxg(fs, s);
    if (p->rocdxg)
        p->wsl_vendors |= PCI_WSL_AMD;
    /* The variable is this process's in live modes; a snapshot's replay takes the captured run's. */
    const char *hsa = probe_live(st->ctx) ? getenv(HSA_DXG)
                      : probe_snapshot(st->ctx)
                          ? jsonget_str(jsonget(jsonget(probe_captured(st->ctx, "pci"), "platform"), "wsl"),
                                        "hsa_enable_dxg_detection")
                          : NULL;
    p->hsa_dxg = hsa ? str_dup(hsa) : NULL;
}

void pci_wsl_stacks_free(struct pci_platform *p)
{
    for (size_t i = 0; i < p->n_stores; i++)
        free(p->stores[i]);
    free(p->stores);
    free(p->rocdxg);
    free(p->hsa_dxg);
}

json_object *pci_wsl_stacks_json(const struct pci_platform *p)
{
    json_object *o = json_object_new_object(), *vendors = json_object_new_array(), *stores = json_object_new_array();
    for (size_t i = 0; i < sizeof(pci_wsl_vendor_names) / sizeof(pci_wsl_vendor_names[0]); i++)
        if (p->wsl_vendors & (1u << i))
            json_object_array_add(vendors, json_object_new_string(pci_wsl_vendor_names[i]));
    for (size_t i = 0; i < p->n_stores; i++)
        json_object_array_add(stores, jsonstr_or_null(p->stores[i]));
    json_object_object_add(o, "gpu_vendors", vendors);
    json_object_object_add(o, "driver_stores", stores);
    json_object_object_add(o, "rocdxg", jsonstr_or_null(p->rocdxg));
    json_object_object_add(o, "hsa_enable_dxg_detection", jsonstr_or_null(p->hsa_dxg));
    return o;
}
