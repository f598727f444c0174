/* opencl_correlate.c: cross-checks of the OpenCL enumeration against itself and the PCI bus, as cl.* findings (pure). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opencl_internal.h"
#include "strutil.h"
#include "vendor.h"

/* What is likely missing when a GPU of VENDOR_ID bound to DRIVER ("" = none bound, NULL = any) has no
 * OpenCL device. First matching row wins. */
static const struct {
    const char *vendor_id;
    const char *driver;
    const char *hint;
} ocl_gpu_hints[] = {
    {"10de", "nouveau",
     "nouveau is bound to this GPU; NVIDIA's OpenCL needs the proprietary driver: install nvidia-driver and "
     "nvidia-opencl-icd (Debian, non-free) and reboot, or use Mesa's rusticl (mesa-opencl-icd, RUSTICL_ENABLE=nouveau)"},
    {"10de", "",
     "no kernel driver is bound to this GPU: install nvidia-driver and nvidia-opencl-icd (Debian, non-free) or NVIDIA's "
     "CUDA driver packages, then load the nvidia module (reboot)"},
    {"10de", NULL,
     "install NVIDIA's OpenCL driver matching the kernel driver version (Debian: nvidia-opencl-icd; NVIDIA repositories: "
     "libnvidia-compute-<version>) and check that /etc/OpenCL/vendors/nvidia.icd exists; `gpucheckup icd` shows what the "
     "loader reads"},
    {"1002", "radeon",
     "the radeon kernel driver has no OpenCL support for compute stacks: boot with amdgpu (radeon.si_support=0 "
     "amdgpu.si_support=1, or cik_ for older cards), then install an OpenCL driver (rocm-opencl-runtime or mesa-opencl-icd)"},
    {"1002", "",
     "no kernel driver is bound to this GPU: load amdgpu (firmware-amd-graphics on Debian), then install an OpenCL driver "
     "(rocm-opencl-runtime, or mesa-opencl-icd)"},
    {"1002", NULL,
     "install an OpenCL driver for AMD GPUs: ROCm (rocm-opencl-runtime; needs read/write access to /dev/kfd and "
     "/dev/dri/renderD*, usually membership in group render) or Mesa (mesa-opencl-icd; rusticl also needs "
     "RUSTICL_ENABLE=radeonsi)"},
    {"8086", "",
     "no kernel driver is bound to this GPU: load i915 or xe, then install Intel's compute runtime (Debian: intel-opencl-icd)"},
    {"8086", NULL,
     "install Intel's compute runtime (Debian: intel-opencl-icd) and make sure you can open /dev/dri/renderD* (group "
     "render); Mesa's rusticl (mesa-opencl-icd, RUSTICL_ENABLE=iris) is the alternative"},
    {NULL, "", "no kernel driver is bound to this GPU: install and load its vendor's driver, then its OpenCL driver (ICD)"},
    {NULL, NULL,
     "install this GPU vendor's OpenCL driver (an ICD registered in /etc/OpenCL/vendors); `gpucheckup icd` shows what the "
     "loader reads"},
};

/* Why a platform may list no device: matched on a substring of the platform name. */
static const struct {
    const char *name_part;
    const char *hint;
} ocl_empty_platform_hints[] = {
    {"rusticl",
     "Mesa's rusticl enables no driver by default: set RUSTICL_ENABLE (radeonsi for AMD, iris for Intel, nouveau, "
     "llvmpipe for the CPU), e.g. RUSTICL_ENABLE=radeonsi"},
    {"Clover", "Mesa's Clover supports only some AMD GPUs (r600, radeonsi); for others use rusticl or the vendor's driver"},
    {"NVIDIA", "the NVIDIA driver sees no GPU: check that the nvidia kernel module is loaded (nvidia-smi) and that "
               "/dev/nvidia* exist and are readable (containers need GPU access)"},
    {"AMD Accelerated Parallel Processing",
     "ROCm sees no GPU: check read/write access to /dev/kfd and /dev/dri/renderD* (group render or video) and that "
     "amdgpu is loaded"},
    {"Intel", "Intel's runtime sees no device: check access to /dev/dri/renderD* (group render) and that i915 or xe is "
              "loaded; CPU runtimes need a supported CPU"},
    {"Portable Computing Language",
     "PoCL lists the drivers named in POCL_DEVICES: unset it or name drivers PoCL has (pthread, basic, cuda...)"},
};

/* The same under WSL2 (the pci section's platform kind): the GPU is the Windows driver's, reached through /dev/dxg;
 * /dev/kfd, amdgpu, i915 and render nodes never exist there. ROCm needs its DXG thunk librocdxg and
 * HSA_ENABLE_DXG_DETECTION=1 (ROCm/librocdxg); Intel's runtime uses the Windows driver. */
static const struct {
    const char *name_part;
    const char *hint;
} ocl_wsl_empty_platform_hints[] = {
    {"AMD Accelerated Parallel Processing",
     "under WSL2 ROCm reaches the GPU through /dev/dxg, not /dev/kfd: it needs ROCm's WSL thunk librocdxg "
     "(ROCm/librocdxg) and HSA_ENABLE_DXG_DETECTION=1, and a current AMD driver in Windows (the pci section's "
     "platform.wsl says what is there)"},
    {"Intel", "under WSL2 Intel's runtime reaches the GPU through /dev/dxg and the Windows driver: keep the Intel "
              "graphics driver in Windows current and check that this user can open /dev/dxg"},
    {"NVIDIA", "under WSL2 the NVIDIA GPU is the Windows driver's: update the NVIDIA driver in Windows and restart "
               "WSL (`wsl --shutdown`); never install a Linux NVIDIA driver inside WSL"},
};

/* Is the pci section's platform WSL2? */
static bool ocl_wsl2(const struct result_pci *pci)
{
    return pci && pci->platform == RESULT_PCI_PLATFORM_WSL2;
}

static bool ocl_contains(const char *hay, const char *needle)
{
    return hay && needle && strstr(hay, needle) != NULL;
}

/* ADDR in the "dddd:bb:dd.f" lower-case form into BUF (BUF[0] = '\0' if ADDR is not an address). */
static void ocl_norm_address(const char *addr, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!addr || strlen(addr) + 6 > len)
        return;
    const char *colon = strchr(addr, ':');
    bool has_domain = colon && strchr(colon + 1, ':');
    snprintf(buf, len, "%s%s", has_domain ? "" : "0000:", addr);
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

static bool ocl_type_has(json_object *dev, const char *type)
{
    json_object *t = ocl_jarr(dev, "type");
    for (size_t i = 0; t && i < json_object_array_length(t); i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(t, i));
        if (s && strcmp(s, type) == 0)
            return true;
    }
    return false;
}

static bool ocl_is_gpu_like(json_object *dev)
{
    return ocl_type_has(dev, "GPU") || ocl_type_has(dev, "ACCELERATOR") || ocl_type_has(dev, "CUSTOM");
}

/* One OpenCL device, flattened for the checks. */
struct ocl_flat {
    json_object *dev;
    json_object *plat;
    int64_t pi, di;
    char key[80];   /* normalised PCI address, or "uuid:..." , or "" */
    bool used;      /* consumed by a vendor-only match */
};

static const char *ocl_platform_label(json_object *plat)
{
    const char *n = ocl_jstr(plat, "name");
    return n ? n : "unnamed platform";
}

static void ocl_check_enumeration(json_object *ocl, struct report *r, const char *status, size_t n_platforms)
{
    const char *detail = ocl_jstr(ocl_jobj(ocl, "enumeration"), "detail");
    const char *loader = ocl_jstr(ocl, "loader");
    const char *stderr_tail = ocl_jstr(ocl_jobj(ocl, "enumeration"), "output");
    struct report_finding *f = NULL;
    if (strcmp(status, "crash") == 0) {
        f = report_add_finding(r, "cl.enumeration-crash", loader,
                               "Listing OpenCL platforms and devices through the loader crashed (%s): every OpenCL "
                               "application on this machine is likely to crash the same way",
                               detail ? detail : "killed by a signal");
    } else if (strcmp(status, "timeout") == 0) {
        f = report_add_finding(r, "cl.enumeration-hang", loader,
                               "Listing OpenCL platforms and devices through the loader did not finish (%s): OpenCL "
                               "applications on this machine are likely to hang the same way",
                               detail ? detail : "timed out");
    } else if (strcmp(status, "no-loader") == 0) {
        f = report_add_finding(r, "cl.no-platforms", NULL, "No OpenCL loader could be loaded (%s), so no OpenCL "
                               "platform is reachable", detail ? detail : "libOpenCL.so.1 missing");
        if (f)
            report_finding_set_hint(f, "install an OpenCL ICD loader (Debian: ocl-icd-libopencl1) and an OpenCL "
                                       "driver for your device; `gpucheckup icd` explains what the loader sees");
    } else if (strcmp(status, "ok") != 0) {
        f = report_add_finding(r, "cl.enumeration-failed", loader,
                               "Listing OpenCL platforms and devices failed: %s", detail ? detail : status);
    } else if (n_platforms == 0 && !ocl_jstr(ocl_jobj(ocl, "enumeration"), "not_loaded")) {
        /* (with not_loaded, --health loaded no driver: the empty answer is not a fault) */
        f = report_add_finding(r, "cl.no-platforms", loader, "The OpenCL loader%s%s found no platform%s%s",
                               loader ? " " : "", loader ? loader : "", detail ? ": " : "", detail ? detail : "");
    }
    if (f && stderr_tail && *stderr_tail)
        report_finding_add_evidence(f, "output of the enumeration", "%s", stderr_tail);
    json_object *env = ocl_jobj(ocl, "environment");
    if (f && env) {
        json_object_object_foreach(env, k, v)
        {
            if (json_object_is_type(v, json_type_string))
                report_finding_add_evidence(f, k, "%s", json_object_get_string(v));
        }
    }
}

/* Is P's driver one for absent hardware (vendor table + PCI facts)? A platform from such a driver
 * lists no device by design: the icd probe reports it once, as icd.absent-hardware. */
static bool ocl_platform_absent_hw(json_object *ocl, json_object *p, const struct result_pci *pci)
{
    const struct vendor_cl *d = vendor_cl_by_platform(ocl_jstr(p, "name"));
    if (!d)
        d = vendor_cl_by_platform(ocl_jstr(p, "vendor"));
    if (!d)
        return false;
    const char *env = d->cpu_env ? ocl_jstr(ocl_jobj(ocl, "environment"), d->cpu_env) : NULL;
    char why[192];
    return vendor_cl_hardware(d, pci, env, why, sizeof(why)) == VENDOR_HW_ABSENT;
}

static void ocl_check_empty_platforms(json_object *ocl, json_object *plats, const struct result_pci *pci,
                                      struct report *r)
{
    for (size_t i = 0; i < json_object_array_length(plats); i++) {
        json_object *p = json_object_array_get_idx(plats, i);
        json_object *devs = ocl_jarr(p, "devices");
        bool empty = !devs || json_object_array_length(devs) == 0;
        bool absent = empty && ocl_platform_absent_hw(ocl, p, pci);
        if (json_object_is_type(p, json_type_object))
            json_object_object_add(p, "absent_hardware", json_object_new_boolean(absent));
        if (!empty || absent)
            continue;
        const char *name = ocl_platform_label(p);
        char subject[256];
        snprintf(subject, sizeof(subject), "platform %lld (%s)", (long long)ocl_jint(p, "index", (int64_t)i), name);
        json_object *err = ocl_jobj(p, "error");
        const char *ename = ocl_jstr(err, "name");
        struct report_finding *f =
            report_add_finding(r, "cl.platform-no-devices", subject, "OpenCL platform %s lists no device%s%s", name,
                               ename ? ": clGetDeviceIDs returned " : "", ename ? ename : "");
        if (!f)
            continue;
        bool wsl_hint = false;
        for (size_t k = 0; ocl_wsl2(pci) && k < sizeof(ocl_wsl_empty_platform_hints) /
                                                   sizeof(ocl_wsl_empty_platform_hints[0]) && !wsl_hint; k++)
            if ((wsl_hint = ocl_contains(name, ocl_wsl_empty_platform_hints[k].name_part)))
                report_finding_set_hint(f, "%s", ocl_wsl_empty_platform_hints[k].hint);
        for (size_t k = 0; !wsl_hint && k < sizeof(ocl_empty_platform_hints) / sizeof(ocl_empty_platform_hints[0]);
             k++) {
            if (ocl_contains(name, ocl_empty_platform_hints[k].name_part)) {
                report_finding_set_hint(f, "%s", ocl_empty_platform_hints[k].hint);
                break;
            }
        }
        const char *version = ocl_jstr(p, "version");
        if (version)
            report_finding_add_evidence(f, "CL_PLATFORM_VERSION", "%s", version);
        json_object *env = ocl_jobj(ocl, "environment");
        const char *pocl = ocl_jstr(env, "POCL_DEVICES"), *rusticl = ocl_jstr(env, "RUSTICL_ENABLE");
        if (pocl && ocl_contains(name, "Portable Computing Language"))
            report_finding_add_evidence(f, "POCL_DEVICES", "%s", pocl);
        if (ocl_contains(name, "rusticl"))
            report_finding_add_evidence(f, "RUSTICL_ENABLE", "%s", rusticl ? rusticl : "(not set)");
    }
}

static void ocl_check_duplicates(struct ocl_flat *devs, size_t n, struct report *r)
{
    for (size_t i = 0; i < n; i++) {
        if (!devs[i].key[0])
            continue;
        bool first = true, other_platform = false;
        for (size_t j = 0; j < i; j++)
            if (strcmp(devs[j].key, devs[i].key) == 0)
                first = false;
        if (!first)
            continue;
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(devs[j].key, devs[i].key) == 0 && devs[j].pi != devs[i].pi)
                other_platform = true;
        if (!other_platform)
            continue;
        /* The list of every (platform, device) that shows this one GPU. */
        char list[1024] = "";
        size_t used = 0, count = 0;
        for (size_t j = i; j < n; j++) {
            if (strcmp(devs[j].key, devs[i].key) != 0)
                continue;
            count++;
            int w = snprintf(list + used, sizeof(list) - used, "%s%lld:%lld (%s on %s)", used ? ", " : "",
                             (long long)devs[j].pi, (long long)devs[j].di,
                             ocl_jstr(devs[j].dev, "name") ? ocl_jstr(devs[j].dev, "name") : "unnamed device",
                             ocl_platform_label(devs[j].plat));
            if (w < 0 || (size_t)w >= sizeof(list) - used)
                break;
            used += (size_t)w;
        }
        const char *subject = str_starts_with(devs[i].key, "uuid:") ? devs[i].key + 5 : devs[i].key;
        struct report_finding *f = report_add_finding(
            r, "cl.duplicate-device", subject, "One physical device %s is exposed %zu times by different platforms: %s",
            subject, count, list);
        if (f)
            report_finding_add_evidence(f, str_starts_with(devs[i].key, "uuid:") ? "CL_DEVICE_UUID_KHR" : "pci_address",
                                        "%s", subject);
    }
}

/* The same question inside a container (the pci section's platform.container) whose GPU the host drives: the host's
 * OpenCL packages are not in the container, so the fix is the image or the `docker run` options. NVIDIA's Container
 * Toolkit mounts libnvidia-opencl.so.1 with the `compute` capability but not /etc/OpenCL/vendors/nvidia.icd
 * (NVIDIA/nvidia-container-toolkit#682, fixed only by its PR #1893); ROCm's images carry its OpenCL runtime and need
 * /dev/kfd and /dev/dri passed in (ROCm, "Running ROCm Docker containers"). */
static const struct {
    const char *vendor_id;
    const char *hint;
} ocl_container_hints[] = {
    {"10de",
     "inside this container: the NVIDIA Container Toolkit mounts NVIDIA's OpenCL driver (libnvidia-opencl.so.1) in when "
     "NVIDIA_DRIVER_CAPABILITIES includes compute (or all), but not its .icd file: mount the host's (`docker run -v "
     "/etc/OpenCL/vendors/nvidia.icd:/etc/OpenCL/vendors/nvidia.icd:ro ...`) or write it in the image (`RUN mkdir -p "
     "/etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd`), with an ICD loader "
     "(ocl-icd-libopencl1) installed there; packages installed on the host do not reach the container"},
    {"1002",
     "inside this container: use an image with ROCm's OpenCL runtime (rocm-opencl-runtime; AMD's rocm/ images carry "
     "it) and start it with `--device /dev/kfd --device /dev/dri --group-add video --group-add render`; packages "
     "installed on the host do not reach the container"},
    {"8086",
     "inside this container: install Intel's compute runtime in the image (intel-opencl-icd) and start it with "
     "`--device /dev/dri --group-add render`; packages installed on the host do not reach the container"},
    {NULL,
     "inside this container: install the GPU vendor's OpenCL driver (ICD) in the image, or mount its library and "
     ".icd file in, and pass the GPU's device nodes with `--device`; packages installed on the host do not reach "
     "the container"},
};

/* The container hint for a GPU of VENDOR_ID that the host drives with DRIVER (not nouveau or radeon, whose fix
 * is on the host), or NULL. */
static const char *ocl_container_hint(const char *vendor_id, const char *driver)
{
    if (!driver || !*driver || strcmp(driver, "nouveau") == 0 || strcmp(driver, "radeon") == 0)
        return NULL;
    for (size_t k = 0; k < sizeof(ocl_container_hints) / sizeof(ocl_container_hints[0]); k++)
        if (!ocl_container_hints[k].vendor_id ||
            (vendor_id && strcasecmp(ocl_container_hints[k].vendor_id, vendor_id) == 0))
            return ocl_container_hints[k].hint;
    return NULL;
}

static const char *ocl_gpu_hint(const char *vendor_id, const char *driver)
{
    for (size_t k = 0; k < sizeof(ocl_gpu_hints) / sizeof(ocl_gpu_hints[0]); k++) {
        if (ocl_gpu_hints[k].vendor_id && (!vendor_id || strcasecmp(ocl_gpu_hints[k].vendor_id, vendor_id) != 0))
            continue;
        if (ocl_gpu_hints[k].driver &&
            strcmp(ocl_gpu_hints[k].driver, driver ? driver : "") != 0)
            continue;
        return ocl_gpu_hints[k].hint;
    }
    return NULL;
}

/* A PCI device's name for messages: "NVIDIA Corporation GA102 [GeForce RTX 3090]" or its ids. */
static void ocl_pci_label(const struct result_pci_dev *g, char *buf, size_t len)
{
    const char *vn = g->vendor_name, *dn = g->device_name;
    const char *vid = g->vendor_id, *did = g->device_id;
    if (vn || dn)
        snprintf(buf, len, "%s%s%s", vn ? vn : "", vn && dn ? " " : "", dn ? dn : "");
    else
        snprintf(buf, len, "[%s:%s]", vid ? vid : "?", did ? did : "?");
}

static void ocl_check_pci(const struct result_pci *pci, struct ocl_flat *devs, size_t n, bool enumerated,
                          struct report *r)
{
    if (!pci->have_devices)
        return;
    const char *container = pci->container;
    size_t n_gpus = 0;
    const char *first_gpu = NULL;
    char first_label[256] = "";
    for (size_t i = 0; i < pci->n_devs; i++) {
        const struct result_pci_dev *g = &pci->devs[i];
        if (g->kind != RESULT_PCI_KIND_COMPUTE)
            continue;
        const char *addr = g->address;
        char norm[64];
        ocl_norm_address(addr, norm, sizeof(norm));
        if (n_gpus++ == 0) {
            first_gpu = addr;
            ocl_pci_label(g, first_label, sizeof(first_label));
        }
        if (!enumerated)
            continue; /* the enumeration crashed or hung: which devices exist is unknown */
        bool covered = false;
        for (size_t k = 0; k < n && !covered; k++)
            covered = norm[0] && strcmp(devs[k].key, norm) == 0;
        const char *vid = g->vendor_id;
        for (size_t k = 0; k < n && !covered; k++) {
            /* A GPU device that reports no PCI address stands for one GPU of its vendor. */
            if (devs[k].used || ocl_jstr(devs[k].dev, "pci_address") || !ocl_is_gpu_like(devs[k].dev))
                continue;
            const char *dv = ocl_jstr(devs[k].dev, "vendor_id");
            if (vid && dv && strcasecmp(vid, dv) == 0) {
                devs[k].used = true;
                covered = true;
            }
        }
        if (covered)
            continue;
        char label[256];
        ocl_pci_label(g, label, sizeof(label));
        const char *driver = g->driver;
        struct report_finding *f = report_add_finding(
            r, "cl.gpu-without-opencl", addr, "GPU %s (%s, kernel driver %s) has no OpenCL device: no platform lists it",
            addr ? addr : "?", label, driver ? driver : "none");
        if (!f)
            continue;
        const char *hint = container ? ocl_container_hint(vid, driver) : NULL;
        if (!hint)
            hint = ocl_gpu_hint(vid, driver);
        if (hint)
            report_finding_set_hint(f, "%s", hint);
        if (addr) {
            char src[128];
            snprintf(src, sizeof(src), "/sys/bus/pci/devices/%s/driver", addr);
            report_finding_add_evidence(f, src, "%s", driver ? driver : "(none bound)");
        }
    }
    if (!enumerated || n_gpus == 0)
        return;
    size_t n_cpu = 0;
    for (size_t k = 0; k < n; k++) {
        if (ocl_is_gpu_like(devs[k].dev))
            return;
        n_cpu += ocl_type_has(devs[k].dev, "CPU");
    }
    if (n_cpu == 0)
        return;
    struct report_finding *f = report_add_finding(
        r, "cl.cpu-only", NULL,
        "OpenCL works, but only on CPU devices (%zu), while %zu GPU%s on the PCI bus (%s %s%s) get%s no OpenCL device", n_cpu,
        n_gpus, n_gpus == 1 ? "" : "s", first_gpu ? first_gpu : "?", first_label, n_gpus > 1 ? ", ..." : "",
        n_gpus == 1 ? "s" : "");
    if (f) {
        for (size_t k = 0; k < n; k++) {
            if (!ocl_type_has(devs[k].dev, "CPU"))
                continue;
            char src[64];
            snprintf(src, sizeof(src), "OpenCL device %lld:%lld", (long long)devs[k].pi, (long long)devs[k].di);
            report_finding_add_evidence(f, src, "%s (%s)",
                                        ocl_jstr(devs[k].dev, "name") ? ocl_jstr(devs[k].dev, "name") : "unnamed",
                                        ocl_platform_label(devs[k].plat));
        }
    }
}

size_t ocl_correlate(json_object *ocl, const struct result_pci *pci, struct report *r)
{
    size_t before = r->n_findings;
    const char *status = ocl_jstr(ocl_jobj(ocl, "enumeration"), "status");
    if (!status)
        status = "failed";
    json_object *plats = ocl_jarr(ocl, "platforms");
    size_t np = plats ? json_object_array_length(plats) : 0;
    ocl_check_enumeration(ocl, r, status, np);
    /* What the OpenCL side is known to contain: nothing when no loader exists, unknown after a crash. */
    bool enumerated = strcmp(status, "ok") == 0 || strcmp(status, "no-loader") == 0;

    size_t n = 0;
    for (size_t i = 0; i < np; i++) {
        json_object *devs = ocl_jarr(json_object_array_get_idx(plats, i), "devices");
        n += devs ? json_object_array_length(devs) : 0;
    }
    struct ocl_flat *flat = calloc(n ? n : 1, sizeof(*flat));
    if (!flat)
        return r->n_findings - before;
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        json_object *p = json_object_array_get_idx(plats, i);
        json_object *devs = ocl_jarr(p, "devices");
        for (size_t j = 0; devs && j < json_object_array_length(devs) && k < n; j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            if (!json_object_is_type(d, json_type_object))
                continue;
            flat[k].dev = d;
            flat[k].plat = p;
            flat[k].pi = ocl_jint(p, "index", (int64_t)i);
            flat[k].di = ocl_jint(d, "index", (int64_t)j);
            const char *addr = ocl_jstr(d, "pci_address"), *uuid = ocl_jstr(d, "uuid");
            if (addr)
                ocl_norm_address(addr, flat[k].key, sizeof(flat[k].key));
            else if (uuid)
                snprintf(flat[k].key, sizeof(flat[k].key), "uuid:%s", uuid);
            k++;
        }
    }
    n = k;
    if (plats)
        ocl_check_empty_platforms(ocl, plats, pci, r);
    ocl_check_duplicates(flat, n, r);
    if (pci)
        ocl_check_pci(pci, flat, n, enumerated, r);
    free(flat);
    return r->n_findings - before;
}
