/* vendor.c: the vendor table: one row per GPU vendor and per OpenCL driver; the probes look vendors up here. */
#include "vendor.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <errno.h>
#include <sys/stat.h>

#include "hostfs.h"
#include "jsonget.h"
#include "results/result_pci.h"
#include "strutil.h"

/* ---- GPU vendors ----
 * Sources: PCI IDs from pci.ids; kernel modules and nodes from the kernels' drivers/gpu/drm (amdgpu,
 * i915, xe), NVIDIA's driver README ("Installed Components": libcuda.so.1, libnvidia-ml.so.1,
 * libnvidia-opencl.so.1, /dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm) and ROCm's documentation
 * (/dev/kfd and /dev/dri/renderD* for ROCm; ROCm-OpenCL-Runtime builds libamdocl64.so, the legacy
 * AMDGPU-PRO stack libamdocl-orca64.so); DOMAIN.md for nouveau and radeon blocking compute. */

static const char *const vendor_nv_modules[] = {"nvidia", "nvidia_uvm", "nvidia_drm", NULL};
static const char *const vendor_nv_blocking[] = {"nouveau", NULL};
static const char *const vendor_nv_nodes[] = {"/dev/nvidiactl", "/dev/nvidiaN", "/dev/nvidia-uvm", NULL};
static const char *const vendor_nv_opencl[] = {"libnvidia-opencl.so.1", NULL};
static const char *const vendor_nv_compute[] = {"libcuda.so.1", "libnvidia-ml.so.1", NULL};
/* NVIDIA installs each library as NAME.so.VERSION (libcuda.so.550.90.07): the prefixes pci reads. */
static const char *const vendor_nv_versioned[] = {"libcuda.so.", "libnvidia-opencl.so.", "libnvidia-ml.so.", NULL};

static const char *const vendor_amd_modules[] = {"amdgpu", NULL};
static const char *const vendor_amd_blocking[] = {"radeon", NULL};
static const char *const vendor_amd_nodes[] = {"/dev/kfd", "/dev/dri/renderD*", NULL};
static const char *const vendor_amd_opencl[] = {"libamdocl64.so", "libamdocl-orca64.so", NULL};
static const char *const vendor_amd_compute[] = {"libamdhip64.so", "libhsa-runtime64.so.1", NULL};

static const char *const vendor_intel_modules[] = {"i915", "xe", NULL};
static const char *const vendor_intel_nodes[] = {"/dev/dri/renderD*", NULL};
/* Debian's intel-opencl-icd 22.43 (dpkg -L): /usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so (its
 * SONAME too) and Level Zero's libze_intel_gpu.so.1. */
static const char *const vendor_intel_opencl[] = {"libigdrcl.so", NULL};
static const char *const vendor_intel_compute[] = {"libze_intel_gpu.so.1", NULL};

static const struct vendor vendor_rows[] = {
    {
        .name = "nvidia",
        .display = "NVIDIA",
        .pci_id = VENDOR_PCI_NVIDIA,
        .pci_id_alt = -1,
        .modules = vendor_nv_modules,
        .blocking_modules = vendor_nv_blocking,
        .nodes = vendor_nv_nodes,
        .opencl_libs = vendor_nv_opencl,
        .compute_libs = vendor_nv_compute,
        .versioned_libs = vendor_nv_versioned,
        .no_module = "no CUDA and no NVIDIA OpenCL until the nvidia module drives the GPU",
    },
    {
        .name = "amd",
        .display = "AMD",
        .pci_id = VENDOR_PCI_AMD,
        .pci_id_alt = VENDOR_PCI_AMD_ALT,
        .modules = vendor_amd_modules,
        .blocking_modules = vendor_amd_blocking,
        .nodes = vendor_amd_nodes,
        .opencl_libs = vendor_amd_opencl,
        .compute_libs = vendor_amd_compute,
        .versioned_libs = NULL,
        .no_module = "no ROCm and no OpenCL until amdgpu drives the GPU (radeon gives none)",
    },
    {
        .name = "intel",
        .display = "Intel",
        .pci_id = VENDOR_PCI_INTEL,
        .pci_id_alt = -1,
        .modules = vendor_intel_modules,
        .blocking_modules = NULL,
        .nodes = vendor_intel_nodes,
        .opencl_libs = vendor_intel_opencl,
        .compute_libs = vendor_intel_compute,
        .versioned_libs = NULL,
        .no_module = "no OpenCL or Level Zero until i915 or xe drives the GPU",
    },
};

#define VENDOR_N(a) (sizeof(a) / sizeof((a)[0]))

const struct vendor *vendor_by_pci_id(int id)
{
    for (size_t i = 0; i < VENDOR_N(vendor_rows); i++)
        if (id >= 0 && (vendor_rows[i].pci_id == id || vendor_rows[i].pci_id_alt == id))
            return &vendor_rows[i];
    return NULL;
}

const struct vendor *vendor_by_name(const char *name)
{
    for (size_t i = 0; name && i < VENDOR_N(vendor_rows); i++)
        if (strcasecmp(vendor_rows[i].name, name) == 0)
            return &vendor_rows[i];
    return NULL;
}

bool vendor_list_has(const char *const *list, const char *s)
{
    for (size_t i = 0; list && s && list[i]; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

const struct vendor *vendor_by_module(const char *module)
{
    for (size_t i = 0; module && i < VENDOR_N(vendor_rows); i++)
        if (vendor_list_has(vendor_rows[i].modules, module) || vendor_list_has(vendor_rows[i].blocking_modules, module))
            return &vendor_rows[i];
    return NULL;
}

const char *vendor_in_text(const char *s)
{
    if (!s)
        return NULL;
    /* Driver, module and device-node names as well as the vendors' own: "nouveau" says NVIDIA as surely
     * as "nvidia" does. */
    static const struct {
        const char *word, *vendor;
    } words[] = {
        {"nvidia", "nvidia"}, {"nouveau", "nvidia"}, {"geforce", "nvidia"},
        {"amdgpu", "amd"},    {"radeon", "amd"},     {"/dev/kfd", "amd"},   {"advanced micro", "amd"},
        {"amd", "amd"},       {"rocm", "amd"},       {"intel", "intel"},    {"i915", "intel"},
    };
    for (size_t i = 0; i < VENDOR_N(words); i++)
        for (const char *at = strcasestr(s, words[i].word); at; at = strcasestr(at + 1, words[i].word)) {
            /* "amd" in "amd64" (a Debian architecture: "libnvidia-compute-550:amd64") is no vendor */
            const char *after = at + strlen(words[i].word);
            if (strcmp(words[i].word, "amd") == 0 && after[0] == '6' && after[1] == '4')
                continue;
            return words[i].vendor;
        }
    return NULL;
}

const struct vendor *vendor_by_pci_text(const char *hex)
{
    if (!hex)
        return NULL;
    const char *p = hex;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        p += 2;
    if (!*p || strlen(p) > 4)
        return NULL;
    char *end = NULL;
    long v = strtol(p, &end, 16);
    if (!end || *end)
        return NULL;
    return vendor_by_pci_id((int)v);
}

/* ---- OpenCL drivers ----
 * Library names: Debian bookworm's packages (dpkg -L): intel-opencl-icd 22.43 (libigdrcl.so),
 * mesa-opencl-icd 22.3.6 (libMesaOpenCL.so.1 = Clover, libRusticlOpenCL.so.1 = rusticl, and the
 * Gallium pipe drivers crocus/i915/iris, nouveau, r300/r600/radeonsi, swrast, vmwgfx), pocl-opencl-icd
 * 3.1 (libpocl.so.2); nvidia-opencl-icd (libnvidia-opencl.so.1); ROCm (libamdocl64.so); Intel's CPU
 * runtime (oneAPI: libintelocl.so). Platform names as the drivers answer CL_PLATFORM_NAME/_VENDOR:
 * "NVIDIA CUDA"/"NVIDIA Corporation", "AMD Accelerated Parallel Processing"/"Advanced Micro Devices,
 * Inc.", "Intel(R) OpenCL Graphics" (older NEO: "Intel(R) OpenCL HD Graphics"; Beignet: "Intel Gen OCL
 * Driver"), "Intel(R) OpenCL" or "Intel(R) CPU Runtime for OpenCL(TM) Applications", "Portable
 * Computing Language"/"The pocl project", "rusticl"/"Mesa/X.org", "Clover"/"Mesa".
 * Rows are tried in order, each row's parts in order: the specific before the general ("intel" last). */

static const int vendor_gpu_nv[] = {VENDOR_PCI_NVIDIA, 0};
static const int vendor_gpu_amd[] = {VENDOR_PCI_AMD, VENDOR_PCI_AMD_ALT, 0};
static const int vendor_gpu_intel[] = {VENDOR_PCI_INTEL, 0};
/* rusticl drives radeonsi (AMD), iris (Intel) and nouveau (NVIDIA) render nodes (Mesa docs,
 * "Rusticl": RUSTICL_ENABLE takes those driver names, and llvmpipe for the CPU). */
static const int vendor_gpu_rusticl[] = {VENDOR_PCI_AMD, VENDOR_PCI_INTEL, VENDOR_PCI_NVIDIA, 0};
/* Clover lists devices only on r600 and radeonsi (AMD) in practice (Mesa's Clover feature matrix). */
static const int vendor_gpu_clover[] = {VENDOR_PCI_AMD, 0};

static const char *const vendor_cl_nv_libs[] = {"nvidia", NULL};
static const char *const vendor_cl_nv_plats[] = {"nvidia", NULL};
static const char *const vendor_cl_amd_libs[] = {"amdocl", NULL};
static const char *const vendor_cl_amd_plats[] = {"advanced micro devices", "amd accelerated", "rocm", NULL};
static const char *const vendor_cl_neo_libs[] = {"igdrcl", "beignet", NULL};
static const char *const vendor_cl_neo_plats[] = {"opencl graphics", "opencl hd graphics", "intel gen ocl", NULL};
static const char *const vendor_cl_icpu_libs[] = {"intelocl", "intel", NULL};
static const char *const vendor_cl_icpu_plats[] = {"intel", NULL};
static const char *const vendor_cl_pocl_libs[] = {"pocl", NULL};
static const char *const vendor_cl_pocl_plats[] = {"pocl", "portable computing language", NULL};
static const char *const vendor_cl_rusticl_libs[] = {"rusticl", NULL};
static const char *const vendor_cl_rusticl_plats[] = {"rusticl", NULL};
static const char *const vendor_cl_clover_libs[] = {"mesaopencl", "clover", "mesa", NULL};
static const char *const vendor_cl_clover_plats[] = {"clover", "mesa", NULL};

static const struct vendor_cl vendor_cl_rows[] = {
    {"nvidia", "NVIDIA OpenCL", "nvidia", vendor_cl_nv_libs, vendor_cl_nv_plats, VENDOR_NEEDS_OWN_GPU, vendor_gpu_nv,
     NULL, NULL, "an NVIDIA GPU (PCI vendor 10de) driven by the nvidia kernel module"},
    {"amd", "AMD OpenCL (ROCm)", "amd", vendor_cl_amd_libs, vendor_cl_amd_plats, VENDOR_NEEDS_OWN_GPU, vendor_gpu_amd,
     NULL, NULL, "an AMD GPU (PCI vendor 1002) driven by amdgpu, and /dev/kfd for ROCm"},
    {"intel-neo", "Intel Graphics Compute Runtime (NEO)", "intel", vendor_cl_neo_libs, vendor_cl_neo_plats,
     VENDOR_NEEDS_OWN_GPU, vendor_gpu_intel, NULL, NULL,
     "an Intel GPU (PCI vendor 8086) driven by i915 or xe"},
    {"intel-cpu", "Intel CPU Runtime for OpenCL", "intel", vendor_cl_icpu_libs, vendor_cl_icpu_plats,
     VENDOR_NEEDS_NOTHING, NULL, NULL, NULL, "nothing but the CPU"},
    {"pocl", "PoCL", "pocl", vendor_cl_pocl_libs, vendor_cl_pocl_plats, VENDOR_NEEDS_NOTHING, NULL, NULL, NULL,
     "nothing but the CPU"},
    {"rusticl", "Mesa rusticl", "mesa", vendor_cl_rusticl_libs, vendor_cl_rusticl_plats, VENDOR_NEEDS_ANY_GPU,
     vendor_gpu_rusticl, "RUSTICL_ENABLE", "llvmpipe",
     "a GPU Mesa drives (AMD radeonsi, Intel iris, NVIDIA nouveau) and RUSTICL_ENABLE naming its driver"},
    {"clover", "Mesa Clover", "mesa", vendor_cl_clover_libs, vendor_cl_clover_plats, VENDOR_NEEDS_ANY_GPU,
     vendor_gpu_clover, NULL, NULL, "an AMD GPU Mesa drives (r600, radeonsi)"},
};

static const char *vendor_base(const char *s)
{
    const char *b = s ? strrchr(s, '/') : NULL;
    return b ? b + 1 : s;
}

static bool vendor_parts_in(const char *const *parts, const char *s)
{
    for (size_t i = 0; parts && s && parts[i]; i++)
        if (strcasestr(s, parts[i]))
            return true;
    return false;
}

const struct vendor_cl *vendor_cl_by_library(const char *s)
{
    const char *b = vendor_base(s);
    for (size_t i = 0; b && *b && i < VENDOR_N(vendor_cl_rows); i++)
        if (vendor_parts_in(vendor_cl_rows[i].libs, b))
            return &vendor_cl_rows[i];
    return NULL;
}

const struct vendor_cl *vendor_cl_by_platform(const char *s)
{
    for (size_t i = 0; s && *s && i < VENDOR_N(vendor_cl_rows); i++)
        if (vendor_parts_in(vendor_cl_rows[i].platforms, s))
            return &vendor_cl_rows[i];
    return NULL;
}

const struct vendor_cl *vendor_cl_by_name(const char *name)
{
    for (size_t i = 0; name && i < VENDOR_N(vendor_cl_rows); i++)
        if (strcmp(vendor_cl_rows[i].name, name) == 0)
            return &vendor_cl_rows[i];
    return NULL;
}

const struct vendor_cl *vendor_cl_all(size_t *n)
{
    *n = VENDOR_N(vendor_cl_rows);
    return vendor_cl_rows;
}

const char *vendor_hw_name(enum vendor_hw h)
{
    switch (h) {
    case VENDOR_HW_NOT_NEEDED:
        return "not-needed";
    case VENDOR_HW_PRESENT:
        return "present";
    case VENDOR_HW_ABSENT:
        return "absent";
    case VENDOR_HW_UNKNOWN:
    default:
        return "unknown";
    }
}

/* Is WORD one of the comma-separated items of LIST ("radeonsi,llvmpipe"; items may carry ":N")? */
static bool vendor_env_names(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; p && *p;) {
        while (*p == ',' || *p == ' ')
            p++;
        size_t n = strcspn(p, ",");
        if (n >= wl && strncasecmp(p, word, wl) == 0 && (n == wl || p[wl] == ':' || p[wl] == ' '))
            return true;
        p += n;
    }
    return false;
}

/* Under WSL2 (the PCI facts' platform kind "wsl2") the bus shows Microsoft's paravirtual GPU only: a vendor's own
 * driver (NEO, ROCm, NVIDIA's) reaches its GPU through /dev/dxg and the Windows driver of that vendor, which the
 * platform's wsl.gpu_vendors lists ("nvidia", "amd", "intel": the vendors' names here); Mesa's GPU drivers need a
 * Linux kernel GPU driver, of which WSL2 has none. UNKNOWN when the facts do not say. */
static enum vendor_hw vendor_cl_wsl(const struct vendor_cl *d, const struct result_pci *pci, char *why, size_t len)
{
    if (!pci->have_wsl_vendors) {
        snprintf(why, len, "WSL2: which Windows GPU drivers the guest sees is unknown");
        return VENDOR_HW_UNKNOWN;
    }
    if (d->needs != VENDOR_NEEDS_OWN_GPU) {
        snprintf(why, len, "WSL2: the GPU is the Windows driver's, and %s needs a Linux kernel GPU driver", d->display);
        return VENDOR_HW_ABSENT;
    }
    const char *display = "its vendor's";
    for (size_t k = 0; d->gpu_vendors && d->gpu_vendors[k]; k++) {
        const struct vendor *v = vendor_by_pci_id(d->gpu_vendors[k]);
        if (!v)
            continue;
        display = v->display;
        for (size_t i = 0; i < pci->n_wsl_vendors; i++) {
            if (strcmp(pci->wsl_vendors[i], v->name) == 0) {
                snprintf(why, len, "WSL2: the Windows host's %s GPU driver is mounted under /usr/lib/wsl", v->display);
                return VENDOR_HW_PRESENT;
            }
        }
    }
    snprintf(why, len, "WSL2: no %s Windows GPU driver under /usr/lib/wsl", display);
    return VENDOR_HW_ABSENT;
}

enum vendor_hw vendor_cl_hardware(const struct vendor_cl *d, const struct result_pci *pci, const char *env_value,
                                  char *why, size_t len)
{
    if (len)
        why[0] = '\0';
    if (!d)
        return VENDOR_HW_UNKNOWN;
    if (d->needs == VENDOR_NEEDS_NOTHING) {
        snprintf(why, len, "a CPU driver");
        return VENDOR_HW_NOT_NEEDED;
    }
    if (d->cpu_env && env_value && vendor_env_names(env_value, d->cpu_env_word)) {
        snprintf(why, len, "%s=%s makes it a CPU driver", d->cpu_env, env_value);
        return VENDOR_HW_NOT_NEEDED;
    }
    if (pci && pci->platform == RESULT_PCI_PLATFORM_WSL2)
        return vendor_cl_wsl(d, pci, why, len);
    /* Only a full view of the bus can say a GPU is absent: sysfs read, not a dump of another machine. */
    if (!pci || !pci->have_devices || pci->bus_visible != GC_TRI_YES || !pci->source ||
        strcmp(pci->source, "sysfs") != 0) {
        snprintf(why, len, "no PCI facts from this machine's sysfs");
        return VENDOR_HW_UNKNOWN;
    }
    size_t n = pci->n_devs;
    for (size_t i = 0; i < n; i++) {
        const struct result_pci_dev *g = &pci->devs[i];
        const char *addr = g->address;
        long v = g->vendor;
        if (v < 0) {
            /* A device whose vendor cannot be read (or reads all ones) could be anything. */
            snprintf(why, len, "PCI device %s has no readable vendor ID", addr ? addr : "?");
            return VENDOR_HW_UNKNOWN;
        }
        for (size_t k = 0; d->gpu_vendors && d->gpu_vendors[k]; k++) {
            if (d->gpu_vendors[k] == v) {
                const char *drv = g->driver;
                snprintf(why, len, "PCI device %s is vendor %04lx%s%s", addr ? addr : "?", v,
                         drv ? ", driver " : ", no driver bound", drv ? drv : "");
                return VENDOR_HW_PRESENT;
            }
        }
    }
    char ids[64] = "";
    size_t used = 0;
    for (size_t k = 0; d->gpu_vendors && d->gpu_vendors[k] && used < sizeof(ids); k++) {
        const struct vendor *gv = vendor_by_pci_id(d->gpu_vendors[k]);
        if (gv && gv->pci_id != d->gpu_vendors[k])
            continue; /* an alternative ID: named with its main one */
        int w = snprintf(ids + used, sizeof(ids) - used, "%s%04x (%s)", used ? ", " : "", (unsigned)d->gpu_vendors[k],
                         gv ? gv->display : "?");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    snprintf(why, len, "no PCI GPU of vendor %s on the bus (%zu GPU%s or accelerator%s found)", ids, n,
             n == 1 ? "" : "s", n == 1 ? "" : "s");
    return VENDOR_HW_ABSENT;
}

/* ---- driver versions ---- */

bool vendor_is_version(const char *s, size_t len)
{
    if (len == 0 || len > 32 || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[len - 1]))
        return false;
    bool dot = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (s[i + 1] == '.')
                return false;
            dot = true;
        } else if (!isdigit((unsigned char)s[i])) {
            return false;
        }
    }
    return dot;
}

char *vendor_nvidia_parse_version(const char *text, int *open)
{
    *open = -1;
    if (!text)
        return NULL;
    const char *line = strstr(text, "NVRM version:");
    if (!line)
        return NULL;
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    char *copy = strndup(line, len);
    if (!copy)
        return NULL;
    if (strstr(copy, "Kernel Module")) {
        *open = strstr(copy, "Open Kernel Module") ? 1 : 0;
    }
    char *result = NULL, *save = NULL;
    for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
        if (vendor_is_version(tok, strlen(tok))) {
            result = str_dup(tok);
            break;
        }
    free(copy);
    return result;
}

bool vendor_runtime_absent(const struct hostfs *fs, const struct vendor_cl *d, const struct result_pci *pci,
                           const char *const *nodes, char *why, size_t len)
{
    if (!d || vendor_cl_hardware(d, pci, NULL, why, len) != VENDOR_HW_ABSENT)
        return false;
    struct stat st;
    for (size_t i = 0; nodes && nodes[i]; i++)
        if (hostfs_stat(fs, nodes[i], &st, true) != -ENOENT)
            return false;
    return hostfs_stat(fs, "/dev/dxg", &st, true) == -ENOENT;
}
