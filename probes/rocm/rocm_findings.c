/* rocm_findings.c: the rocm probe's findings: each ROCm failure named by its cause (the kernel, a node, the gfx target, the runtime). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devnode.h"
#include "jsonget.h"
#include "rocm_internal.h"
#include "strutil.h"

const struct check rocm_checks[] = {
    {"rocm.no-device", REPORT_SEV_INFO, "A ROCm runtime is installed, but this machine has no AMD GPU for it",
     "Nothing to fix unless you expected an AMD GPU here (a VM or container must be given it: "
     "--device /dev/kfd --device /dev/dri).",
     CHECK_LAYER_RUNTIME | CHECK_F_NO_DEVICE | CHECK_F_NEVER_CAUSE},
    {"rocm.no-runtime", REPORT_SEV_INFO, "An AMD GPU is ready for ROCm in the kernel, but no ROCm runtime is installed",
     "HIP programs (PyTorch for ROCm, llama.cpp's HIP build) need libhsa-runtime64.so.1 and libamdhip64: install ROCm "
     "(AMD's amdgpu-install, or your distribution's rocm packages). OpenCL and Vulkan do not need it.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE},
    {"rocm.amdgpu-not-live", REPORT_SEV_ERROR, "The amdgpu module is loaded but did not finish initialising",
     "dmesg | grep amdgpu shows why (missing firmware, a failed probe); reboot after fixing it.", CHECK_LAYER_KERNEL},
    {"rocm.no-kfd", REPORT_SEV_ERROR, "amdgpu drives a GPU, but the kernel has no KFD (the ROCm compute driver)",
     "The kernel was built without CONFIG_HSA_AMD: use a distribution kernel, or AMD's amdgpu-dkms.", CHECK_LAYER_KERNEL},
    {"rocm.gpu-not-in-kfd", REPORT_SEV_WARNING, "An AMD GPU bound to amdgpu is missing from the KFD topology",
     "KFD leaves out GPUs it cannot run compute on (too old a chip, or a kernel too old for a new one): "
     "dmesg | grep kfd says which.", CHECK_LAYER_KERNEL},
    /* kfd_device.c, kgd2kfd_probe: "<chip> not supported in kfd" for GCN 1, most of GCN 2, Topaz, Stoney */
    {"rocm.kfd-unsupported-chip", REPORT_SEV_WARNING,
     "An AMD GPU's chip is one the kernel's KFD refuses (\"not supported in kfd\"): no ROCm release can use it",
     "HIP cannot run on it, whatever ROCm is installed; compute through OpenCL (Mesa's rusticl) or Vulkan instead.",
     CHECK_LAYER_KERNEL | CHECK_F_PATH_RELIEF_VENDOR | CHECK_F_RELIEF_INFO},
    {"rocm.node-open-failed", REPORT_SEV_ERROR, "/dev/kfd or a render node cannot be opened read-write, as the ROCm runtime opens it",
     "EACCES: add the user to the node's group (usually render and video) and log in again; ENOENT in a container: "
     "run it with --device /dev/kfd --device /dev/dri; EPERM: a cgroup device rule denies it.",
     CHECK_LAYER_KERNEL | CHECK_F_PATH_RELIEF_VENDOR},
    {"rocm.gfx-unsupported", REPORT_SEV_WARNING, "An AMD GPU's gfx target is not on ROCm's list of supported GPUs",
     "ROCm's libraries ship no code for it: HIP programs fail with 'invalid device function'. A target of the same "
     "family may run it with HSA_OVERRIDE_GFX_VERSION (unsupported by AMD); otherwise use OpenCL or Vulkan.",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"rocm.rocblas-no-code", REPORT_SEV_WARNING, "The installed rocBLAS carries no kernels for an AMD GPU's gfx target",
     "rocBLAS (every HIP framework's matrix products) fails with 'Cannot read TensileLibrary.dat ... for GPU arch': "
     "install a rocBLAS built for the target, or set HSA_OVERRIDE_GFX_VERSION to a target it has, of the GPU's family.",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"rocm.smoke-wrong-result", REPORT_SEV_ERROR, "An AMD GPU computed a wrong matrix product in the HIP smoke test",
     "Do not trust this GPU's results: check dmesg for amdgpu errors and resets, the GPU's temperature and clocks "
     "(rocm-smi), and an HSA_OVERRIDE_GFX_VERSION that makes ROCm run another target's code on it.", CHECK_LAYER_COMPUTE},
    {"rocm.smoke-failed", REPORT_SEV_ERROR, "The HIP smoke test could not compile or run its kernel on an AMD GPU",
     "hipRTC failing points at a ROCm without its compiler parts (libamd_comgr) or a target it cannot build for; a "
     "failed launch or copy at the runtime or the GPU: check dmesg for amdgpu errors.", CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"rocm.igpu-unsupported", REPORT_SEV_INFO,
     "An integrated AMD GPU ROCm cannot use sits beside a discrete one it can: programs must pick the discrete one",
     "Hide the integrated GPU from ROCm (HIP_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES listing the discrete GPUs' "
     "indices), or disable it in the firmware setup, so that no framework picks it.", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE},
    {"rocm.igpu-first", REPORT_SEV_WARNING,
     "An integrated AMD GPU ROCm cannot use is HIP device 0, ahead of the discrete one ROCm can use",
     "Programs that take the first GPU (most frameworks) get the integrated one: list the discrete GPU's index in "
     "HIP_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES), or disable the integrated GPU in the firmware setup.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE},
    {"rocm.gfx-deprecated", REPORT_SEV_INFO, "An AMD GPU's gfx target is deprecated in ROCm: a coming release drops it",
     "Pin the ROCm release that supports it.", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE},
    {"rocm.gfx-override", REPORT_SEV_INFO, "HSA_OVERRIDE_GFX_VERSION is set: ROCm reports another gfx target than the GPU's",
     "A workaround AMD does not support: wrong results or hangs are possible. Unset it to see the GPU as it is.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE},
    {"rocm.visible-devices-hide-all", REPORT_SEV_ERROR, "HIP_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES hides every AMD GPU",
     "Unset them, or list indices below the GPU count (with both set, HIP's indices count the GPUs ROCR left).",
     CHECK_LAYER_RUNTIME},
    {"rocm.hsa-init-failed", REPORT_SEV_ERROR, "The ROCm runtime (hsa_init) fails on this machine's AMD GPU",
     "HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008) is almost always /dev/kfd that cannot be opened: see the errno named.",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"rocm.runtime-crashed", REPORT_SEV_ERROR, "The ROCm runtime crashed or hung while starting",
     "Run rocminfo to see it fail; reinstall ROCm's runtime so its parts are of one release.",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"rocm.no-gpu-agent", REPORT_SEV_ERROR, "The ROCm runtime starts but sees no GPU, though amdgpu drives one",
     "rocminfo lists the agents; a GPU whose target the runtime does not know is left out.",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"rocm.hip-no-device", REPORT_SEV_ERROR, "HSA sees the GPU, but HIP (libamdhip64) reports no device",
     "libamdhip64 and libhsa-runtime64 must come from the same ROCm release.", CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
};
const size_t rocm_n_checks = sizeof(rocm_checks) / sizeof(rocm_checks[0]);

/* The facts the findings are decided on. */
struct rocm_facts {
    int amd_gpus;        /* AMD compute GPUs on the bus; -1 unknown (no pci section) */
    int amd_bound;       /* of them, bound to amdgpu */
    const char *first;   /* the first one bound, its address */
    size_t kfd_gpus;     /* GPU nodes in the KFD topology */
    bool kfd;            /* the topology is there */
};

bool rocm_is_amd_gpu(const struct result_pci_dev *d)
{
    return d->vendor_id && strcmp(d->vendor_id, "1002") == 0 && result_pci_dev_computes(d);
}

static void rocm_facts_of(json_object *data, const struct result_pci *pci_devs, struct rocm_facts *f)
{
    memset(f, 0, sizeof(*f));
    f->amd_gpus = pci_devs ? 0 : -1;
    for (size_t i = 0; pci_devs && i < pci_devs->n_devs; i++) {
        const struct result_pci_dev *d = &pci_devs->devs[i];
        if (!rocm_is_amd_gpu(d))
            continue;
        f->amd_gpus++;
        const char *drv = d->driver;
        if (drv && strcmp(drv, "amdgpu") == 0 && f->amd_bound++ == 0)
            f->first = d->address;
    }
    json_object *nodes = jsonget(data, "nodes");
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++)
        f->kfd_gpus += jsonget_tri(json_object_array_get_idx(nodes, i), "gpu") == GC_TRI_YES;
    f->kfd = jsonget_tri(jsonget(data, "kernel"), "kfd_topology") == GC_TRI_YES;
}

/* rocm.kfd-unsupported-chip for the amdgpu GPU D at ADDR, a chip KFD refuses. */
static void rocm_finding_kfd_chip(struct probe_ctx *ctx, const struct result_pci_dev *d, const char *addr,
                                  const struct rocm_kfd_chip *c)
{
    const char *name = d->device_name;
    struct report_finding *x = report_add_finding(
        ctx->report, "rocm.kfd-unsupported-chip", addr,
        "%s %s is a %s chip, %s (%s): the kernel's KFD %s (it logs \"%s not supported in kfd\"), so no ROCm "
        "release can use it",
        addr, name ? name : "", c->chip, c->gen, c->examples,
        c->experimental ? "takes it only with amdgpu.exp_hw_support=1, and left it out" : "refuses it", c->chip);
    if (!x)
        return;
    report_finding_add_evidence(x, "/sys/class/kfd/kfd/topology/nodes", "no node for %s", addr);
    report_finding_add_evidence(x, addr, "PCI device 1002:%s", d->device_id);
    if (c->experimental)
        report_finding_set_hint(x, "KFD's support for %s is experimental (boot with amdgpu.exp_hw_support=1) and no ROCm "
                                   "release supports it; compute through OpenCL (Mesa's rusticl) or Vulkan instead.",
                                c->chip);
}

/* Kernel: amdgpu live, KFD there, each amdgpu GPU in it. */
static void rocm_findings_kernel(struct probe_ctx *ctx, json_object *data, const struct result_pci *pci_devs,
                                 const struct rocm_facts *f)
{
    json_object *k = jsonget(data, "kernel");
    const char *init = jsonget_str(k, "amdgpu_initstate");
    if (f->amd_bound > 0 && init && strcmp(init, "live") != 0) {
        struct report_finding *x = report_add_finding(ctx->report, "rocm.amdgpu-not-live", "amdgpu", "amdgpu is %s, not live", init);
        if (x)
            report_finding_add_evidence(x, "/sys/module/amdgpu/initstate", "%s", init);
    }
    if (f->amd_bound > 0 && !f->kfd) {
        report_add_finding(ctx->report, "rocm.no-kfd", f->first,
                           "amdgpu drives %s, but there is no /sys/class/kfd/kfd/topology: the kernel has no KFD", f->first);
        return;
    }
    json_object *nodes = jsonget(data, "nodes");
    for (size_t i = 0; f->kfd && pci_devs && i < pci_devs->n_devs; i++) {
        const struct result_pci_dev *d = &pci_devs->devs[i];
        const char *drv = d->driver, *addr = d->address;
        if (!rocm_is_amd_gpu(d) || !drv || strcmp(drv, "amdgpu") != 0 || !addr)
            continue;
        bool found = false;
        for (size_t j = 0; nodes && j < json_object_array_length(nodes) && !found; j++) {
            const char *a = jsonget_str(json_object_array_get_idx(nodes, j), "pci_address");
            found = a && strcmp(a, addr) == 0;
        }
        const char *did = d->device_id;
        const struct rocm_kfd_chip *chip = did ? rocm_kfd_chip_find((unsigned)strtoul(did, NULL, 16)) : NULL;
        if (!found && chip)
            rocm_finding_kfd_chip(ctx, d, addr, chip);
        else if (!found)
            report_add_finding(ctx->report, "rocm.gpu-not-in-kfd", addr, "%s %s is bound to amdgpu but has no KFD node", addr,
                               d->device_name ? d->device_name : "");
    }
}

/* Has the pci probe already said what is wrong with node PATH (a finding about it)? */
static bool rocm_node_reported(const struct report *r, const char *path)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i]->subject && strcmp(r->findings[i]->subject, path) == 0)
            return true;
    return false;
}

/* Nodes: each failed open, unless pci named that node already. */
static void rocm_findings_nodes(struct probe_ctx *ctx, json_object *data, const struct rocm_facts *f)
{
    json_object *opened = jsonget(data, "device_nodes");
    for (size_t i = 0; f->amd_bound > 0 && opened && i < json_object_array_length(opened); i++) {
        json_object *o = json_object_array_get_idx(opened, i);
        const char *path = jsonget_str(o, "path");
        if (!path || jsonget_tri(o, "opened") == GC_TRI_YES || rocm_node_reported(ctx->report, path))
            continue;
        char *why = devnode_why(o);
        report_add_finding(ctx->report, "rocm.node-open-failed", path, "%s cannot be opened read-write: %s", path, why ? why : "?");
        free(why);
    }
}

/* The GPUs left visible by a *_VISIBLE_DEVICES list V over N GPUs (indices or GPU-UUIDs; an entry that is
 * neither, or out of range, ends the list as ROCr and HIP read it). -1 when V is unset. */
static int rocm_visible_count(const char *v, int n)
{
    if (!v)
        return n;
    int count = 0;
    char *copy = str_dup(v), *save = NULL;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
        uint64_t idx;
        if (str_starts_with(t, "GPU-"))
            count++;
        else if (str_to_u64(t, 10, &idx) == 0 && idx < (uint64_t)n)
            count++;
        else
            break;
    }
    free(copy);
    return count;
}

/* The discrete GPU ROCm can use, for an integrated one beside it: the first supported (or, with rocBLAS installed,
 * one it has kernels for), else the first that runs with HSA_OVERRIDE_GFX_VERSION. */
struct rocm_dgpu {
    int index;            /* its HIP index (GPU nodes in KFD's order), -1 when none */
    const char *override; /* the override it needs, NULL when supported */
};

static void rocm_usable_dgpu(json_object *nodes, json_object *rb, struct rocm_dgpu *dg)
{
    dg->index = -1;
    dg->override = NULL;
    for (size_t i = 0, k = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i);
        const char *sup = jsonget_str(n, "support"), *gfx = jsonget_str(n, "gfx");
        if (jsonget_tri(n, "gpu") != GC_TRI_YES)
            continue;
        bool usable = rb ? rocm_rocblas_has(rb, gfx) : sup && strcmp(sup, "supported") == 0;
        const struct rocm_gfx *row = usable ? NULL : rocm_gfx_find(gfx);
        char ob[16];
        const char *og = row && row->override ? rocm_override_gfx(row->override, ob, sizeof(ob)) : NULL;
        bool by_override = og && (!rb || rocm_rocblas_has(rb, og));
        if (jsonget_tri(n, "integrated") == GC_TRI_NO && usable && (dg->index < 0 || dg->override)) {
            dg->index = (int)k;
            dg->override = NULL;
        } else if (jsonget_tri(n, "integrated") == GC_TRI_NO && by_override && dg->index < 0) {
            dg->index = (int)k;
            dg->override = row->override;
        }
        k++;
    }
}

/* rocm.igpu-first (it is HIP device 0) or rocm.igpu-unsupported for the integrated GPU SUBJ (GFX, ROW) beside the
 * discrete GPU DG. */
static void rocm_finding_igpu(struct probe_ctx *ctx, const char *subj, const char *gfx, const struct rocm_gfx *row,
                              bool device0, const struct rocm_dgpu *dg)
{
    char with[112] = "";
    if (dg->override)
        snprintf(with, sizeof(with), " with HSA_OVERRIDE_GFX_VERSION=%s, which applies to every GPU, this one too",
                 dg->override);
    if (!device0) {
        report_add_finding(ctx->report, "rocm.igpu-unsupported", subj,
                           "integrated GPU %s %s (%s) has no ROCm support; a discrete one here %s%s: ROCm programs must "
                           "use that one",
                           subj, gfx, row ? row->examples : "?", dg->override ? "runs" : "has", with);
        return;
    }
    struct report_finding *x = report_add_finding(
        ctx->report, "rocm.igpu-first", subj,
        "integrated GPU %s %s (%s), which ROCm cannot use, is HIP device 0; the discrete GPU ROCm %s is device %d%s",
        subj, gfx, row ? row->examples : "?", dg->override ? "runs" : "supports", dg->index, with);
    if (x)
        report_finding_set_hint(x, "Programs that take the first GPU (most frameworks) get the integrated one: set "
                                   "HIP_VISIBLE_DEVICES=%d (the discrete GPU), or disable the integrated GPU in the "
                                   "firmware setup.",
                                dg->index);
}

/* Targets: support, override; visibility. */
static void rocm_findings_targets(struct probe_ctx *ctx, json_object *data, const struct rocm_facts *f)
{
    json_object *env = jsonget(data, "environment"), *nodes = jsonget(data, "nodes"), *rb = jsonget(data, "rocblas");
    const char *ovr = jsonget_str(env, "HSA_OVERRIDE_GFX_VERSION");
    json_object *rbt = jsonget(rb, "targets");
    if (!rbt || !json_object_is_type(rbt, json_type_array) || json_object_array_length(rbt) == 0)
        rb = NULL; /* no Tensile files found where we look: say nothing of what rocBLAS carries */
    /* A discrete GPU ROCm can use: on its list, or (with rocBLAS installed) one rocBLAS has kernels for */
    struct rocm_dgpu dg;
    rocm_usable_dgpu(nodes, rb, &dg);
    bool visibility_set = jsonget_str(env, "HIP_VISIBLE_DEVICES") || jsonget_str(env, "ROCR_VISIBLE_DEVICES");
    bool first_gpu = true;
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i);
        const char *sup = jsonget_str(n, "support"), *gfx = jsonget_str(n, "gfx"), *addr = jsonget_str(n, "pci_address");
        const char *subj = addr ? addr : gfx;
        const struct rocm_gfx *row = rocm_gfx_find(gfx);
        bool device0 = first_gpu && jsonget_tri(n, "gpu") == GC_TRI_YES; /* HIP's first, in KFD's order */
        first_gpu &= jsonget_tri(n, "gpu") != GC_TRI_YES;
        if (!sup || !gfx)
            continue;
        if (ovr)
            report_add_finding(ctx->report, "rocm.gfx-override", subj, "HSA_OVERRIDE_GFX_VERSION=%s: ROCm treats %s %s as that target",
                               ovr, subj, gfx);
        /* With rocBLAS installed, what it carries decides (Debian builds it for more targets than AMD lists):
         * the target ROCm will use, the override's when one is set. */
        char obuf[16];
        const char *used = ovr ? rocm_override_gfx(ovr, obuf, sizeof(obuf)) : gfx;
        bool unusable = rb ? used && !rocm_rocblas_has(rb, used) : !ovr && strcmp(sup, "unsupported") == 0;
        bool own_unusable = rb ? !rocm_rocblas_has(rb, gfx) : strcmp(sup, "unsupported") == 0;
        if (jsonget_tri(n, "integrated") == GC_TRI_YES && dg.index >= 0 && (unusable || own_unusable)) {
            /* The usual desktop: a Ryzen's graphics beside a Radeon card ROCm supports or runs with the override.
             * Not a fault unless the integrated GPU comes first; hidden already, nothing. */
            if (!visibility_set)
                rocm_finding_igpu(ctx, subj, gfx, row, device0, &dg);
        } else if (rb && used && !rocm_rocblas_has(rb, used)) {
            struct report_finding *x = report_add_finding(ctx->report, "rocm.rocblas-no-code", subj,
                                                          "rocBLAS (%s) has no kernels for %s%s%s%s", jsonget_str(rb, "library"), used,
                                                          ovr ? " (the override's target for " : "", ovr ? gfx : "", ovr ? ")" : "");
            if (x && row && row->override && !ovr)
                report_finding_set_hint(x, "Install a rocBLAS built for %s, or set HSA_OVERRIDE_GFX_VERSION=%s (unsupported by AMD) "
                                           "if this rocBLAS has that target's kernels.", gfx, row->override);
        } else if (!ovr && !rb && strcmp(sup, "unsupported") == 0) {
            struct report_finding *x = report_add_finding(ctx->report, "rocm.gfx-unsupported", subj, "%s %s (%s) is not supported by ROCm",
                                                          subj, gfx, row ? row->examples : "?");
            if (x && row && row->override)
                report_finding_set_hint(x, "Not supported by AMD, but commonly run with HSA_OVERRIDE_GFX_VERSION=%s (the code of "
                                           "a supported target of its family); or use OpenCL or Vulkan.", row->override);
        } else if (strcmp(sup, "deprecated") == 0) {
            report_add_finding(ctx->report, "rocm.gfx-deprecated", subj, "%s %s (%s) is deprecated in ROCm", subj, gfx,
                               row ? row->examples : "?");
        }
    }
    int n = (int)f->kfd_gpus;
    const char *rocr = jsonget_str(env, "ROCR_VISIBLE_DEVICES"), *hip = jsonget_str(env, "HIP_VISIBLE_DEVICES");
    if (n > 0 && (rocr || hip) && rocm_visible_count(hip, rocm_visible_count(rocr, n)) == 0)
        report_add_finding(ctx->report, "rocm.visible-devices-hide-all", hip ? "HIP_VISIBLE_DEVICES" : "ROCR_VISIBLE_DEVICES",
                           "%s%s%s%s%s%s leaves none of the %d AMD GPU%s visible", rocr ? "ROCR_VISIBLE_DEVICES=" : "",
                           rocr ? rocr : "", rocr && hip ? " with " : "", hip ? "HIP_VISIBLE_DEVICES=" : "", hip ? hip : "", "", n,
                           n == 1 ? "" : "s");
}

/* Why /dev/kfd failed, for a runtime error's message ("" when it opened or was not tried). */
static char *rocm_kfd_why(json_object *data)
{
    json_object *opened = jsonget(data, "device_nodes");
    for (size_t i = 0; opened && i < json_object_array_length(opened); i++) {
        json_object *o = json_object_array_get_idx(opened, i);
        const char *p = jsonget_str(o, "path");
        if (p && strcmp(p, "/dev/kfd") == 0 && jsonget_tri(o, "opened") == GC_TRI_NO) {
            char *why = devnode_why(o), *s = str_printf("; /dev/kfd: %s", why ? why : "?");
            free(why);
            return s;
        }
    }
    return str_dup("");
}

/* The runtime child's outcome. */
static void rocm_findings_runtime(struct probe_ctx *ctx, json_object *data, const struct rocm_facts *f, bool hidden)
{
    json_object *rt = jsonget(data, "runtime"), *hsa = jsonget(rt, "hsa"), *hip = jsonget(rt, "hip");
    const char *lib = jsonget_str(jsonget(data, "libraries"), "hsa");
    if (!lib)
        lib = jsonget_str(hsa, "library"); /* the file the child loaded (--root DIR --live) */
    bool gpu_here = f->amd_gpus > 0 || (f->amd_gpus < 0 && f->kfd_gpus > 0);
    const char *st = jsonget_str(rt, "status"), *hst = jsonget_str(hsa, "status");
    if (!gpu_here) {
        /* Not loaded where AMD's hardware is absent (rocm.c): a dependency dlopen would miss is named from the files. */
        bool not_loaded = st && strcmp(st, "not-loaded") == 0;
        const char *miss = not_loaded ? jsonget_str(rt, "missing_needed") : NULL;
        char *nl = !not_loaded ? str_dup("") : miss ? str_printf(" (not loaded; it could not be, not found: %s)", miss)
                                                    : str_dup(" (not loaded)");
        if (lib || (hst && strcmp(hst, "no-library") != 0))
            report_add_finding(ctx->report, "rocm.no-device", lib ? lib : "libhsa-runtime64.so.1",
                               "A ROCm runtime without its hardware: %s is installed, but %s%s%s",
                               lib ? lib : "libhsa-runtime64.so.1",
                               f->amd_gpus == 0 ? "there is no AMD GPU on the PCI bus" : "there is no KFD GPU node",
                               hst && strcmp(hst, "init-failed") == 0 ? " (so hsa_init fails, as it must)" : "", nl ? nl : "");
        free(nl);
        return;
    }
    if (f->amd_bound == 0 && f->kfd_gpus == 0)
        return; /* the kernel side is missing: pci's findings say why */
    bool failed = st && (strcmp(st, "crash") == 0 || strcmp(st, "timeout") == 0 || strcmp(st, "failed") == 0);
    if (!failed && !lib && (!hst || strcmp(hst, "no-library") == 0)) {
        report_add_finding(ctx->report, "rocm.no-runtime", f->first ? f->first : "libhsa-runtime64.so.1",
                           "no ROCm runtime: libhsa-runtime64.so.1 is not found by the dynamic linker");
        return;
    }
    if (!st)
        return; /* not run: not the live machine */
    if (failed) {
        const char *where = jsonget_str(rt, "where"), *det = jsonget_str(rt, "detail");
        report_add_finding(ctx->report, "rocm.runtime-crashed", lib ? lib : "libhsa-runtime64.so.1", "the ROCm runtime child %s in %s: %s",
                           strcmp(st, "timeout") == 0 ? "hung" : "failed", where ? where : "loading", det ? det : st);
        return;
    }
    if (hst && strcmp(hst, "init-failed") == 0) {
        json_object *init = jsonget(hsa, "init");
        int64_t code = jsonget_int(init, "code", -1);
        char *why = code == 0x1008 ? rocm_kfd_why(data) : str_dup("");
        report_add_finding(ctx->report, "rocm.hsa-init-failed", lib, "hsa_init failed: %s (0x%llx)%s",
                           jsonget_str(init, "text") ? jsonget_str(init, "text") : "no text", (unsigned long long)code, why ? why : "");
        free(why);
        return;
    }
    json_object *agents = jsonget(hsa, "agents");
    size_t gpus = 0;
    for (size_t i = 0; agents && i < json_object_array_length(agents); i++) {
        const char *t = jsonget_str(json_object_array_get_idx(agents, i), "device_type");
        gpus += t && strcmp(t, "gpu") == 0;
    }
    if (hst && strcmp(hst, "ok") == 0 && gpus == 0 && !hidden)
        report_add_finding(ctx->report, "rocm.no-gpu-agent", lib, "hsa_init succeeded, but no GPU agent among %zu",
                           agents ? json_object_array_length(agents) : 0);
    const char *hipst = jsonget_str(hip, "status");
    if (gpus > 0 && hipst && strcmp(hipst, "error") == 0 && !hidden) {
        json_object *res = jsonget(hip, "device_count_result");
        report_add_finding(ctx->report, "rocm.hip-no-device", jsonget_str(hip, "library"), "hipGetDeviceCount: %s (%lld), HSA sees %zu GPU%s",
                           jsonget_str(res, "name") ? jsonget_str(res, "name") : "error", (long long)jsonget_int(res, "code", -1), gpus,
                           gpus == 1 ? "" : "s");
    }
}

void rocm_findings(struct probe_ctx *ctx, json_object *data, const struct result_pci *pci_devs)
{
    struct rocm_facts f;
    rocm_facts_of(data, pci_devs, &f);
    rocm_findings_kernel(ctx, data, pci_devs, &f);
    rocm_findings_nodes(ctx, data, &f);
    rocm_findings_targets(ctx, data, &f);
    bool hidden = report_find_finding(ctx->report, "rocm.visible-devices-hide-all", NULL) != NULL;
    rocm_findings_runtime(ctx, data, &f, hidden);
    /* The HIP smoke test runs only where the runtime came up without an error of its own. */
    static const char *const blockers[] = {"rocm.hip-no-device", "rocm.runtime-crashed", "rocm.hsa-init-failed", "rocm.no-gpu-agent"};
    bool runtime_ok = true;
    for (size_t i = 0; i < sizeof(blockers) / sizeof(blockers[0]); i++)
        runtime_ok &= !report_find_finding(ctx->report, blockers[i], NULL);
    const char *hst = jsonget_str(jsonget(jsonget(data, "runtime"), "hsa"), "status");
    runtime_ok &= hst && strcmp(hst, "ok") == 0;
    const char *rst = jsonget_str(jsonget(data, "runtime"), "status");
    bool not_loaded = rst && strcmp(rst, "not-loaded") == 0;
    if (!jsonget(data, "smoke")) /* a snapshot's replay brings the captured one */
        json_object_object_add(data, "smoke", rocm_smoke_run(ctx, data, hidden ? "every GPU is hidden"
                                                                      : not_loaded ? "no AMD GPU here (the runtime was not loaded)"
                                                                      : !runtime_ok ? "the HIP runtime failed" : NULL));
    rocm_smoke_findings(ctx, data);
}
