/* icd_probe.c: each vendor library in its own child, and what its answer (or absent hardware) means. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clapi.h"
#include "clonce.h"
#include "icd_impl.h"
#include "isolate.h"
#include "jsonnum.h"
#include "probe.h"
#include "strutil.h"
#include "vendor.h"

/* ---- each vendor library alone, and all of them through the loader ---- */

/* Turn one platform of a child's answer into the public shape; sets *WHY when the loader skips it. */
static json_object *icd_platform_public(const struct icd_state *st, json_object *p, const char **why)
{
    *why = NULL;
    json_object *o = json_object_new_object();
    static const char *const keys[] = {"name", "vendor", "version", "icd_suffix"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *v = icd_jstr(p, keys[i]);
        json_object_object_add(o, keys[i], v ? json_object_new_string(v) : NULL);
    }
    int64_t n;
    json_object_object_add(o, "devices", icd_jint(p, "devices", &n) ? json_object_new_int64(n) : NULL);
    json_object_object_add(o, "gpu_devices", icd_jint(p, "gpu_devices", &n) ? json_object_new_int64(n) : NULL);
    json_object *hk = NULL;
    json_object_object_get_ex(p, "has_khr_icd", &hk);
    json_object_object_add(o, "has_khr_icd", json_object_get(hk));
    bool assume = icd_env("OCL_ICD_ASSUME_ICD_EXTENSION") && *icd_env("OCL_ICD_ASSUME_ICD_EXTENSION");
    if (icd_jstr(p, "error"))
        *why = icd_jstr(p, "error");
    else if (!hk)
        *why = "its CL_PLATFORM_EXTENSIONS query fails";
    else if (icd_is_ocl_semantics(st->kind) && !json_object_get_boolean(hk) && !assume)
        *why = "its extensions lack cl_khr_icd, which ocl-icd requires";
    else if (!icd_jstr(p, "icd_suffix"))
        *why = "its CL_PLATFORM_ICD_SUFFIX_KHR query fails";
    json_object_object_add(o, "accepted", json_object_new_boolean(*why == NULL));
    return o;
}

/* "Portable Computing Language (2 devices)" for each platform, joined; caller frees. */
char *icd_platforms_text(json_object *arr)
{
    char *out = NULL;
    size_t n = arr ? json_object_array_length(arr) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(arr, i);
        const char *name = icd_jstr(p, "name");
        int64_t d = 0;
        bool hd = icd_jint(p, "devices", &d);
        char *item;
        if (hd)
            item = str_printf("%s%s%s (%lld device%s)", out ? out : "", out ? "; " : "", name ? name : "unnamed",
                              (long long)d, d == 1 ? "" : "s");
        else
            item = str_printf("%s%s%s (devices unknown)", out ? out : "", out ? "; " : "", name ? name : "unnamed");
        free(out);
        out = item;
    }
    return out;
}

/* ---- which driver, and is its hardware here (the vendor table and the pci section) ---- */

/* The driver E is, from the vendor table: its library names first (the most specific), then its
 * platforms' names and vendors, then the .icd file's name. NULL when none is recognised. */
static const struct vendor_cl *icd_driver_of(const struct icd_entry *e)
{
    const struct vendor_cl *d = vendor_cl_by_library(e->resolved);
    if (!d)
        d = vendor_cl_by_library(e->library);
    size_t n = e->platforms ? json_object_array_length(e->platforms) : 0;
    for (size_t i = 0; !d && i < n; i++)
        d = vendor_cl_by_platform(icd_jstr(json_object_array_get_idx(e->platforms, i), "name"));
    for (size_t i = 0; !d && i < n; i++)
        d = vendor_cl_by_platform(icd_jstr(json_object_array_get_idx(e->platforms, i), "vendor"));
    if (!d && e->file)
        d = vendor_cl_by_library(e->file);
    return d;
}

void icd_classify(const struct icd_state *st, struct icd_entry *e)
{
    if (e->classified)
        return;
    e->classified = true;
    e->drv = icd_driver_of(e);
    e->hw = VENDOR_HW_UNKNOWN;
    if (e->drv)
        e->hw = vendor_cl_hardware(e->drv, st->pci, e->drv->cpu_env ? icd_env(e->drv->cpu_env) : NULL, e->hw_why,
                                   sizeof(e->hw_why));
}

/* Is this a WSL2 guest (the pci section's platform)? Its GPU is the Windows driver's, through /dev/dxg: no Linux
 * kernel GPU driver, no /dev/kfd, no render node of the vendor's exists there. */
static bool icd_wsl2(const struct icd_state *st)
{
    return st->pci && st->pci->platform == RESULT_PCI_PLATFORM_WSL2;
}

/* When E's hardware is absent, record its failure or emptiness (WHAT: "fails with -6 (...)") as one
 * icd.absent-hardware and return true; otherwise return false and record nothing. */
static bool icd_absent_hardware(struct icd_state *st, struct icd_entry *e, const char *what)
{
    icd_classify(st, e);
    if (e->hw != VENDOR_HW_ABSENT)
        return false;
    e->absent = true;
    struct report *r = st->ctx->report;
    char *lib = icd_sanitized(e->resolved ? e->resolved : e->library);
    /* Under WSL2 the kernel driver it names (i915, amdgpu) can never be there: say what WSL lacks instead. */
    bool wsl = icd_wsl2(st);
    struct report_finding *f = report_add_finding(
        r, "icd.absent-hardware", icd_subject(e), "%s: %s (%s) %s: a driver for absent hardware, %s%s",
        e->file ? e->file : e->source, e->drv->display, lib ? lib : "?", what, wsl ? "here " : "it needs ",
        wsl ? e->hw_why : e->drv->needs_text);
    if (f) {
        report_finding_add_evidence(f, "/sys/bus/pci/devices", "%s", e->hw_why);
        if (e->drv->cpu_env)
            report_finding_add_evidence(f, e->drv->cpu_env, "%s",
                                        icd_env(e->drv->cpu_env) ? icd_env(e->drv->cpu_env) : "(not set)");
        struct report_finding *cause = report_find_finding(r, "pci.no-gpu", NULL);
        if (cause)
            report_finding_set_cause(f, cause->id, cause->subject);
        if (wsl)
            report_finding_set_hint(f,
                                    "Nothing to fix unless this Windows machine has a GPU of that vendor: then install "
                                    "its current Windows driver (WSL support comes with it; never a Linux kernel driver "
                                    "inside WSL) and restart WSL with `wsl --shutdown`. If the driver is not wanted, "
                                    "remove its package (`dpkg -S %s` names it).",
                                    lib ? lib : "the library");
        else
            report_finding_set_hint(f,
                                    "Nothing to fix on a machine without %s: the driver is installed but has nothing "
                                    "to drive. If this machine should have one, `gpucheckup pci` shows what the bus "
                                    "lists; if the driver is not wanted, remove its package (`dpkg -S %s` names it).",
                                    e->drv->needs_text, lib ? lib : "the library");
    }
    free(lib);
    return true;
}

/* Under --health, E is an .icd file the plan leaves unloaded (icd_health_plan): when its driver's hardware is
 * absent by the probe's own reading too, it is not loaded: its status, detail and icd.absent-hardware say so,
 * and true is returned. False (nothing recorded): it is loaded as before. */
static bool icd_health_skip(struct icd_state *st, struct icd_entry *e)
{
    icd_classify(st, e);
    /* A CPU driver (no --require form given): not the GPU --health answers for; no finding, its line says so. */
    if (e->hw == VENDOR_HW_NOT_NEEDED && icd_health_skips_cpu(st->ctx)) {
        bool plain = strcmp(e->hw_why, "a CPU driver") == 0;
        icd_set(e, "not-probed", "CPU driver, not loaded (--health): %s%s", plain ? e->drv->display : e->hw_why,
                plain ? " needs no GPU" : "");
        return true;
    }
    if (e->hw != VENDOR_HW_ABSENT || !icd_absent_hardware(st, e, "not loaded (--health)"))
        return false;
    icd_set(e, "not-probed", "not loaded (--health): a driver for absent hardware, it needs %s", e->drv->needs_text);
    return true;
}

/* --health left the loader no driver to load (icd_health_plan's kept 0): the combined view was not run, or
 * its empty answer is not what programs see; it says so instead of "no platform". */
static void icd_health_combined_none(struct icd_state *st)
{
    json_object_put(st->combined);
    json_object *c = st->combined = json_object_new_object();
    json_object_object_add(c, "status", json_object_new_string("not-run"));
    json_object_object_add(c, "detail", json_object_new_string(ICD_HEALTH_NONE_LOADED));
    json_object_object_add(c, "platforms", json_object_new_array());
    json_object_object_add(c, "elapsed_ms", NULL);
    json_object_object_add(c, "output", NULL);
}

/* The first GPU of the pci section whose vendor ID is ID, or NULL. */
static const struct result_pci_dev *icd_pci_gpu(const struct icd_state *st, int id)
{
    for (size_t i = 0; st->pci && i < st->pci->n_devs; i++)
        if (st->pci->devs[i].vendor == id)
            return &st->pci->devs[i];
    return NULL;
}

/* What the render nodes of the GPU at ADDR look like: a heap sentence, or NULL when none is listed. */
static char *icd_render_nodes_text(const struct icd_state *st, const char *addr)
{
    if (!st->pci || !st->pci->have_nodes)
        return NULL;
    for (size_t i = 0; i < st->pci->n_nodes; i++) {
        const struct result_pci_node *n = &st->pci->nodes[i];
        const char *path = n->path, *dev = n->device;
        if (!path || !dev || strcmp(dev, addr) != 0 || !str_starts_with(path, "/dev/dri/renderD"))
            continue;
        if (n->present != GC_TRI_YES)
            return str_printf("its render node %s is missing (a container started without /dev/dri?)", path);
        const char *group = n->group, *mode = n->mode_text;
        if (n->accessible == GC_TRI_NO)
            return str_printf("its render node %s (group %s, mode %s) is not readable and writable by this user: "
                              "add the user to that group (`sudo usermod -aG %s $USER`, then log in again)",
                              path, group ? group : "?", mode ? mode : "?", group ? group : "render");
        return str_printf("its render node %s (group %s, mode %s) is accessible", path, group ? group : "?",
                          mode ? mode : "?");
    }
    return str_printf("no render node /dev/dri/renderD* belongs to it");
}

/* Under WSL2 a vendor's OpenCL reaches the GPU through /dev/dxg and the Windows driver: never /dev/kfd, amdgpu,
 * i915 or a render node. ROCm needs its DXG thunk librocdxg, which the HSA runtime loads only with
 * HSA_ENABLE_DXG_DETECTION=1 (ROCm/librocdxg; ROCm, "Using rocprofv3 on WSL2"). */
static void icd_wsl_hint(const struct icd_entry *e, struct report_finding *f, const char *answer)
{
    if (strcmp(e->drv->name, "amd") == 0)
        report_finding_set_hint(f, "Under WSL2 ROCm's OpenCL %s: it reaches the GPU through /dev/dxg, not /dev/kfd, "
                                   "and needs ROCm's WSL thunk librocdxg (ROCm/librocdxg, in /opt/rocm/lib) with "
                                   "HSA_ENABLE_DXG_DETECTION=1 set, and a current AMD driver in Windows (the pci "
                                   "section's platform.wsl says what is there).",
                                answer);
    else if (strcmp(e->drv->name, "intel-neo") == 0)
        report_finding_set_hint(f, "Under WSL2 Intel's compute runtime (NEO) %s: it reaches the GPU through /dev/dxg "
                                   "and the Windows driver (no i915 or xe exists here): keep the Intel graphics driver "
                                   "in Windows current, use a NEO release with WSL support, and check that this user "
                                   "can open /dev/dxg.",
                                answer);
    else
        report_finding_set_hint(f, "Under WSL2 this driver %s: the GPU is reached through /dev/dxg and the Windows "
                                   "driver, so update the GPU driver in Windows and restart WSL (`wsl --shutdown`).",
                                answer);
}

/* A hint for an error or empty answer of E whose hardware is present, fitting its vendor and CODE. */
static void icd_hardware_hint(struct icd_state *st, struct icd_entry *e, struct report_finding *f, int64_t code)
{
    icd_classify(st, e);
    if (!f || !e->drv || e->hw != VENDOR_HW_PRESENT)
        return;
    report_finding_add_evidence(f, "/sys/bus/pci/devices", "%s", e->hw_why);
    char answer[96];
    if (code == CL_SUCCESS)
        snprintf(answer, sizeof(answer), "answers with zero platforms");
    else
        snprintf(answer, sizeof(answer), "fails with %s", clapi_error_name((cl_int)code));
    if (icd_wsl2(st)) {
        icd_wsl_hint(e, f, answer);
    } else if (strcmp(e->drv->name, "intel-neo") == 0) {
        /* NEO answers -6 (CL_OUT_OF_HOST_MEMORY) when it finds no GPU it can open: seen with Debian's
         * 22.43 on a machine without one. With a GPU the usual reasons it cannot: a user outside the
         * render node's group sees no GPU where root does (intel/compute-runtime issue 478); a GPU
         * newer than the NEO release is not in its device list (NEO's README, "Supported Platforms");
         * i915 and xe load GuC/HuC firmware (Debian: firmware-misc-nonfree, /lib/firmware/i915). */
        const struct result_pci_dev *g = icd_pci_gpu(st, VENDOR_PCI_INTEL);
        const char *addr = g ? g->address : NULL, *drv = g ? g->driver : NULL, *did = g ? g->device_id : NULL;
        const struct vendor *intel = vendor_by_pci_id(VENDOR_PCI_INTEL);
        if (!addr)
            return;
        if (!drv || !vendor_list_has(intel->modules, drv)) {
            report_finding_set_hint(f, "The Intel GPU %s is %s%s: NEO needs it driven by i915 or xe (the pci findings "
                                       "say why it is not).",
                                    addr, drv ? "bound to " : "bound to no driver", drv ? drv : "");
            return;
        }
        char *nodes = icd_render_nodes_text(st, addr);
        char fwdir[64];
        snprintf(fwdir, sizeof(fwdir), "/lib/firmware/%s", drv);
        struct stat sb;
        bool fw = hostfs_stat(st->ctx->fs, fwdir, &sb, true) == 0 && S_ISDIR(sb.st_mode);
        report_finding_set_hint(f,
                                "The Intel GPU %s (device %s) is bound to %s, yet NEO %s. Seen here: %s; "
                                "%s. Usual causes: the render node's group (the user must be in it), a NEO older "
                                "than the GPU generation (check that device %s is in the supported list of the "
                                "installed intel-opencl-icd, else update it), or missing GPU firmware (`sudo dmesg "
                                "| grep -iE 'guc|huc|firmware'`).",
                                addr, did ? did : "?", drv, answer, nodes ? nodes : "?",
                                fw ? "the firmware directory is there" : "no firmware directory (Debian: `sudo apt "
                                                                         "install firmware-misc-nonfree`)",
                                did ? did : "?");
        report_finding_add_evidence(f, fwdir, "%s", fw ? "present" : "absent");
        free(nodes);
    } else if (strcmp(e->drv->name, "nvidia") == 0) {
        report_finding_set_hint(f, "An NVIDIA GPU is here (%s), yet its OpenCL driver %s: the pci and drv "
                                   "findings (module loaded, versions matching, /dev/nvidia* nodes) usually name the "
                                   "cause; a kernel module and libraries of different versions fail until a reboot.",
                                e->hw_why, answer);
    } else if (strcmp(e->drv->name, "amd") == 0) {
        report_finding_set_hint(f, "An AMD GPU is here (%s), yet ROCm's OpenCL %s: it needs amdgpu and "
                                   "read-write access to /dev/kfd and the render node (usually group render or video: "
                                   "`sudo usermod -aG render,video $USER`), and a GPU its ROCm release supports.",
                                e->hw_why, answer);
    }
}

/* icd_judge, a child that crashed or hung (RES, STAGE: where it was; WHO names the library LIB). */
static void icd_judge_failed(struct icd_state *st, struct icd_entry *e, const struct isolate_result *res, int stage,
                             const char *subj, const char *who, const char *lib)
{
    struct report *r = st->ctx->report;
    double tmo = st->ctx->timeout_ms / 1000.0;
    struct report_finding *f = NULL;
    char *why = icd_child_failure(res, stage, tmo);
    bool hang = res->status == ISOLATE_TIMEOUT;
    icd_set(e, hang ? "hang" : "crash", "%s", why ? why : "?");
    free(why);
    if (hang)
        f = report_add_finding(r, "icd.hang", subj,
                               "%s: the driver %s hangs when asked for its platforms: %s. Every OpenCL "
                               "program, clinfo included, hangs the same way",
                               who, lib ? lib : "?", e->detail);
    else
        f = report_add_finding(r, "icd.crash", subj,
                               "%s: the driver %s crashes when asked for its platforms: %s. Every OpenCL "
                               "program, clinfo included, dies the same way",
                               who, lib ? lib : "?", e->detail);
    if (f) {
        char *tail = icd_output_tail(res->stderr_tail);
        if (tail)
            report_finding_add_evidence(f, "driver output", "%s", tail);
        free(tail);
        if (e->file && st->vendors_dir)
            report_finding_set_hint(f,
                                    "Update or reinstall the driver; until then move %s out of %s "
                                    "(other drivers then work again)",
                                    e->file, st->vendors_dir);
    }
}

/* icd_judge, a library the child could not dlopen (DLERR: dlerror()'s words). */
static void icd_judge_dlerror(struct icd_state *st, struct icd_entry *e, const char *dlerr, const char *subj,
                              const char *who, const char *lib)
{
    struct report *r = st->ctx->report;
    struct report_finding *f = NULL;
    if (!e->found) {
        icd_set(e, "missing-library", "%s", dlerr);
        f = report_add_finding(r, "icd.missing-library", subj, "%s names %s, which cannot be found: %s",
                               who, lib ? lib : "?", dlerr);
        if (f) {
            if (e->library && e->library[0] == '/')
                report_finding_set_hint(f,
                                        e->file ? "%s does not exist: reinstall the driver, or remove the stale %s"
                                                : "%s does not exist: point %s at an existing file or directory",
                                        lib, who);
            else if (e->library && strchr(e->library, '/'))
                report_finding_set_hint(f,
                                        "A relative path is looked up from each program's current "
                                        "directory: write the library's absolute path into %s",
                                        subj);
            else
                report_finding_set_hint(f,
                                        "No directory of LD_LIBRARY_PATH, the ld.so cache or the system "
                                        "library directories has %s: install the driver package that "
                                        "provides it (run ldconfig after a manual install), or write its "
                                        "absolute path into %s",
                                        lib, subj);
        }
    } else {
        icd_set(e, "load-failed", "%s", dlerr);
        f = report_add_finding(r, "icd.load-failed", subj, "%s names %s, which exists but cannot be loaded: %s",
                               who, lib ? lib : "?", dlerr);
        if (f)
            report_finding_set_hint(f, "Run: ldd %s (a dependency is missing or built for another machine)",
                                    e->resolved ? e->resolved : e->found);
    }
}

/* icd_judge, a driver that answered with platforms (V: the child's answer): which the loader keeps. */
static void icd_judge_platforms(struct icd_state *st, struct icd_entry *e, json_object *v, const char *subj,
                                const char *who, const char *lib)
{
    struct report *r = st->ctx->report;
    json_object *ps = NULL;
    json_object_object_get_ex(v, "platforms", &ps);
    size_t np = ps ? json_object_array_length(ps) : 0, accepted = 0;
    char *first_why = NULL;
    for (size_t i = 0; i < np; i++) {
        const char *why = NULL;
        json_object *pub = icd_platform_public(st, json_object_array_get_idx(ps, i), &why);
        if (why) {
            const char *pname = icd_jstr(pub, "name");
            report_add_finding(r, "icd.rejected", subj, "%s: the loader skips platform %s of %s: %s", who,
                               pname ? pname : "(unnamed)", lib ? lib : "?", why);
            if (!first_why)
                first_why = str_printf("the loader skips %s: %s", pname ? pname : "(unnamed)", why);
        } else {
            accepted++;
        }
        json_object_array_add(e->platforms, pub);
    }
    if (np > 0 && accepted == 0) {
        icd_set(e, "rejected", "%s", first_why ? first_why : "the loader skips every platform");
    } else {
        icd_set(e, "ok", NULL);
        /* Platforms that all list no device: empty, as a driver for absent hardware is. */
        bool empty = np > 0;
        for (size_t i = 0; i < json_object_array_length(e->platforms); i++) {
            int64_t d = -1;
            if (!icd_jint(json_object_array_get_idx(e->platforms, i), "devices", &d) || d != 0)
                empty = false;
        }
        if (empty) {
            const char *pname = icd_jstr(json_object_array_get_idx(e->platforms, 0), "name");
            char *what = str_printf("lists no device on its platform %s%s", pname ? pname : "(unnamed)",
                                    np > 1 ? " and the others" : "");
            icd_absent_hardware(st, e, what ? what : "lists no device");
            free(what);
        }
    }
    free(first_why);
}

/* A driver whose clIcdGetPlatformIDsKHR answered CODE (LISTING: when listing the platforms, after the
 * count): icd.error with a hint for its hardware, or icd.absent-hardware when that hardware is not here. */
static void icd_judge_error(struct icd_state *st, struct icd_entry *e, const char *subj, const char *lib, int64_t code,
                            bool listing)
{
    icd_set(e, "error", "%lld (%s)%s", (long long)code, clapi_error_name((cl_int)code), listing ? " listing the platforms" : "");
    char *what = str_printf("fails with %s", e->detail);
    if (!icd_absent_hardware(st, e, what ? what : "fails")) {
        struct report_finding *f =
            report_add_finding(st->ctx->report, "icd.error", subj, "%s: clIcdGetPlatformIDsKHR of %s fails with %s",
                               subj, lib ? lib : "?", e->detail);
        icd_hardware_hint(st, e, f, code);
    }
    free(what);
}

/* Decide E's status from its child's result R (STAGE: where the child was). */
static void icd_judge(struct icd_state *st, struct icd_entry *e, struct isolate_result *res, int stage)
{
    struct report *r = st->ctx->report;
    const char *subj = icd_subject(e);
    const char *who = e->file ? e->file : e->source; /* what names the library */
    char *lib = icd_sanitized(e->library);
    e->probed = true;
    e->elapsed_ms = res->elapsed_ms;
    e->output = str_dup(res->stderr_tail);
    struct report_finding *f = NULL;
    if (res->status == ISOLATE_SPAWN_FAILED) {
        icd_set(e, "not-probed", "%s", res->detail ? res->detail : "could not start a child process");
        if (!res->budget_spent) /* no time left: core.timeout-spent says so, once */
            report_add_finding(r, "core.isolated-child-failed", subj, "Could not probe %s: %s", subj, e->detail);
        free(lib);
        return;
    }
    if (res->status != ISOLATE_OK) {
        icd_judge_failed(st, e, res, stage, subj, who, lib);
        free(lib);
        return;
    }
    json_object *v = res->value;
    const char *dlerr = icd_jstr(v, "dlopen_error");
    bool ocl = icd_is_ocl_semantics(st->kind);
    int64_t code = 0, count = 0, list = 0;
    bool have_code = icd_jint(v, "count_code", &code);
    icd_jint(v, "count", &count);
    if (dlerr) {
        icd_judge_dlerror(st, e, dlerr, subj, who, lib);
        free(lib);
        return;
    }
    bool gefa = icd_jbool(v, "exports_gefa", false);
    bool via_gefa = icd_jbool(v, "entry_via_gefa", false);
    bool via_sym = icd_jbool(v, "entry_via_dlsym", false);
    if (!gefa || !(via_gefa || (ocl && via_sym))) {
        const char *why = !gefa ? (via_sym ? "it exports clIcdGetPlatformIDsKHR but not clGetExtensionFunctionAddress, "
                                             "through which both loaders look it up"
                                           : "it exports neither clGetExtensionFunctionAddress nor "
                                             "clIcdGetPlatformIDsKHR")
                                : (via_sym ? "its clGetExtensionFunctionAddress does not return "
                                             "clIcdGetPlatformIDsKHR, and the Khronos loader asks only that way"
                                           : "clGetExtensionFunctionAddress(\"clIcdGetPlatformIDsKHR\") returns "
                                             "NULL");
        icd_set(e, "no-entry-point", "%s", why);
        report_add_finding(r, "icd.no-entry-point", subj, "%s: %s is not an OpenCL ICD: %s", subj,
                           lib ? lib : "?", why);
        free(lib);
        return;
    }
    if (ocl && !icd_jbool(v, "exports_platform_info", true) &&
        !(icd_env("OCL_ICD_ASSUME_ICD_EXTENSION") && *icd_env("OCL_ICD_ASSUME_ICD_EXTENSION"))) {
        icd_set(e, "rejected", "exports no clGetPlatformInfo, which ocl-icd requires");
        report_add_finding(r, "icd.rejected", subj, "%s: ocl-icd skips %s: it %s", who, lib ? lib : "?",
                           e->detail);
        free(lib);
        return;
    }
    if (have_code && (code == CL_PLATFORM_NOT_FOUND_KHR || (code == CL_SUCCESS && count == 0))) {
        if (code == CL_SUCCESS)
            icd_set(e, "no-platforms", "zero platforms");
        else
            icd_set(e, "no-platforms", "%lld (%s)", (long long)code, clapi_error_name((cl_int)code));
        char *what = str_printf("reports no platform (%s)", e->detail);
        bool absent = icd_absent_hardware(st, e, what ? what : "reports no platform");
        free(what);
        if (!absent) {
            f = report_add_finding(r, "icd.no-platforms", subj,
                                   "%s: the driver %s loads but reports no platform (%s): it found no device it "
                                   "drives",
                                   who, lib ? lib : "?", e->detail);
            icd_hardware_hint(st, e, f, code);
        }
        free(lib);
        return;
    }
    if ((have_code && code != CL_SUCCESS) || (icd_jint(v, "list_code", &list) && list != CL_SUCCESS)) {
        bool listing = !(have_code && code != CL_SUCCESS);
        icd_judge_error(st, e, subj, lib, listing ? list : code, listing);
        free(lib);
        return;
    }
    icd_judge_platforms(st, e, v, subj, who, lib);
    free(lib);
}

/* The combined view's answer into st->combined. */
static void icd_judge_combined(struct icd_state *st, struct isolate_result *res, int stage)
{
    json_object *c = json_object_new_object();
    json_object *plats = json_object_new_array();
    const char *status = "ok";
    char *detail = NULL;
    if (res->status != ISOLATE_OK) {
        status = res->status == ISOLATE_TIMEOUT ? "hang" : res->status == ISOLATE_SPAWN_FAILED ? "not-run" : "crash";
        detail = icd_child_failure(res, stage, st->ctx->timeout_ms / 1000.0);
    } else {
        json_object *v = res->value;
        int64_t code = 0, count = 0;
        const char *dlerr = icd_jstr(v, "dlopen_error");
        bool have = icd_jint(v, "count_code", &code);
        icd_jint(v, "count", &count);
        if (dlerr) {
            status = "error";
            detail = str_dup(dlerr);
        } else if (have && (code == CL_PLATFORM_NOT_FOUND_KHR || (code == CL_SUCCESS && count == 0))) {
            status = "no-platforms";
            detail = str_printf("clGetPlatformIDs: %lld (%s)", (long long)code, clapi_error_name((cl_int)code));
        } else if (have && code != CL_SUCCESS) {
            status = "error";
            detail = str_printf("clGetPlatformIDs: %lld (%s)", (long long)code, clapi_error_name((cl_int)code));
        } else {
            json_object *ps = NULL;
            json_object_object_get_ex(v, "platforms", &ps);
            for (size_t i = 0; ps && i < json_object_array_length(ps); i++) {
                const char *why;
                json_object *pub = icd_platform_public(st, json_object_array_get_idx(ps, i), &why);
                json_object_object_del(pub, "accepted");
                json_object_object_del(pub, "has_khr_icd");
                json_object_array_add(plats, pub);
            }
        }
    }
    json_object_object_add(c, "status", json_object_new_string(status));
    json_object_object_add(c, "detail", detail ? json_object_new_string(str_sanitize(detail)) : NULL);
    json_object_object_add(c, "platforms", plats);
    json_object_object_add(c, "elapsed_ms", res->status == ISOLATE_SPAWN_FAILED ? NULL : icd_json_ms(res->elapsed_ms));
    char *tail = icd_output_tail(res->stderr_tail);
    json_object_object_add(c, "output", tail ? json_object_new_string(tail) : NULL);
    free(tail);
    free(detail);
    st->combined = c;
}

/* The combined view alone, in a child of its own (when no shared child could give it). */
static void icd_combined_alone(struct icd_state *st)
{
    volatile int *stage = icd_stages_new(1);
    struct icd_health_plan plan; /* --health: the drivers icd_probe_all left unloaded stay so */
    bool health = icd_health_plan(st->ctx, true, &plan);
    struct icd_child_arg arg = {.stage = stage, .vendors_env = health ? plan.dir : NULL};
    struct isolate_result res;
    probe_isolate_run(st->ctx, icd_child_combined, &arg, &res);
    icd_judge_combined(st, &res, stage ? *stage : 0);
    isolate_result_clear(&res);
    icd_stages_free(stage, 1);
    icd_health_plan_free(&plan);
}

/* How long the icd probe waits for the shared child to answer for the vendor libraries before it
 * starts their own children anyway: this fraction of the time left (issue 17). The icd part takes a
 * few hundred milliseconds on a healthy machine (docs/guide.md, "OpenCL ICDs"); a third of the default
 * 15 s is far beyond that, and the two thirds left let a healthy driver's own child finish under any
 * load while a hanging one is killed at the deadline and named. */
#define ICD_SHARED_GRACE_DIV 3

/* The result the vendor library of E gets from the shared child's answers DRIVERS (icd_child_loaded's
 * array; CANON: each one's canonical path, or NULL): true and *RES filled as its own child would
 * have, or false when the loader does not hold it or it printed something while answered. */
static bool icd_answered(const struct icd_entry *e, json_object *drivers, char *const *canon, struct isolate_result *res)
{
    if (!e->resolved)
        return false;
    for (size_t i = 0; i < json_object_array_length(drivers); i++) {
        json_object *d = json_object_array_get_idx(drivers, i), *answer = NULL;
        if (!canon[i] || strcmp(canon[i], e->resolved) != 0 || icd_jbool(d, "output", true) ||
            !json_object_object_get_ex(d, "answer", &answer) || !json_object_is_type(answer, json_type_object))
            continue;
        memset(res, 0, sizeof(*res));
        if (json_object_deep_copy(answer, &res->value, NULL) != 0)
            return false;
        res->status = ISOLATE_OK;
        json_object *ms = NULL;
        res->elapsed_ms = json_object_object_get_ex(d, "ms", &ms) ? json_object_get_double(ms) : 0.0;
        return true;
    }
    return false;
}

/* Fill RES[i] for each entry WHICH[i] (i < K) the shared child answered for (DRIVERS), marking it in
 * DONE. */
static void icd_take_answers(struct icd_state *st, const size_t *which, size_t k, json_object *drivers,
                             struct isolate_result *res, bool *done)
{
    size_t n = json_object_array_length(drivers);
    char **canon = calloc(n ? n : 1, sizeof(*canon));
    if (!canon)
        return;
    for (size_t i = 0; i < n; i++) {
        const char *loaded = icd_jstr(json_object_array_get_idx(drivers, i), "loaded");
        canon[i] = loaded && loaded[0] == '/' ? icd_fs_realpath(st->libfs, loaded) : NULL;
    }
    for (size_t i = 0; i < k; i++)
        done[i] = icd_answered(&st->e[which[i]], drivers, canon, &res[i]);
    for (size_t i = 0; i < n; i++)
        free(canon[i]);
    free(canon);
}

/* Each entry WHICH[i] (i < K) not DONE yet in a child of its own, all at once: FLAGS for dlopen,
 * RES[i] and STAGE[i] filled. */
static void icd_own_children(struct icd_state *st, const size_t *which, size_t k, int flags, const bool *done,
                             struct isolate_result *res, int *stage)
{
    struct isolate_job *jobs = calloc(k ? k : 1, sizeof(*jobs));
    struct icd_child_arg *args = calloc(k ? k : 1, sizeof(*args));
    size_t *slot = calloc(k ? k : 1, sizeof(*slot));
    volatile int *stages = icd_stages_new(k);
    size_t m = 0;
    for (size_t i = 0; jobs && args && slot && i < k; i++) {
        if (done[i])
            continue;
        slot[m] = i;
        args[m] = (struct icd_child_arg){.lib = st->e[which[i]].library, .dlflags = flags,
                                         .stage = stages ? &stages[m] : NULL};
        jobs[m] = (struct isolate_job){.fn = icd_child_vendor, .arg = &args[m]};
        m++;
    }
    if (!jobs || !args || !slot) {
        for (size_t i = 0; i < k; i++)
            if (!done[i])
                res[i] = (struct isolate_result){.status = ISOLATE_SPAWN_FAILED, .detail = str_dup("out of memory")};
    } else if (m > 0) {
        probe_isolate_many(st->ctx, jobs, m);
        for (size_t j = 0; j < m; j++) {
            res[slot[j]] = jobs[j].result;
            stage[slot[j]] = stages ? stages[j] : 0;
        }
    }
    free(jobs);
    free(args);
    free(slot);
    icd_stages_free(stages, k);
}

/* With the opencl probe in the run (ROLE: icd's claim on the child they share): the shared child
 * answers for each vendor library its loader holds; only the others (not loaded, or the shared child
 * crashed, hung or printed while listing) get a child of their own (issue 17). */
static void icd_probe_shared(struct icd_state *st, enum run_once_role role, const size_t *which, size_t k, int flags)
{
    if (role == RUN_ONCE_MINE && clonce_start(st->ctx) != 0)
        clonce_publish_alone(st->ctx); /* no thread: the opencl probe and this one work alone */
    struct isolate_result *res = calloc(k ? k : 1, sizeof(*res));
    int *stage = calloc(k ? k : 1, sizeof(*stage));
    bool *done = calloc(k ? k : 1, sizeof(*done));
    struct isolate_result view;
    int view_stage = 0;
    json_object *drivers = NULL;
    double start = jsonnum_now_ms();
    int budget = probe_budget_ms(st->ctx); /* the grace is a part of what is left */
    enum clonce_early got =
        clonce_icd_early(st->ctx, start + (double)budget / ICD_SHARED_GRACE_DIV, &view, &view_stage, &drivers);
    /* Answers are what icd_child_vendor would say only where the loader opens libraries with the
     * flags it opens them with (ocl-icd: RTLD_LAZY), and when nothing was printed while listing. */
    if (res && stage && done && got == CLONCE_EARLY_VIEW && drivers && view.status == ISOLATE_OK && !view.stderr_tail &&
        icd_is_ocl_semantics(st->kind) && st->kind != ICD_KIND_NONE)
        icd_take_answers(st, which, k, drivers, res, done);
    json_object_put(drivers);
    if (res && stage && done) {
        double waited = got == CLONCE_EARLY_PENDING ? jsonnum_now_ms() - start : 0.0;
        icd_own_children(st, which, k, flags, done, res, stage);
        for (size_t i = 0; i < k; i++) {
            /* A driver that hangs its own child started after the grace period had hung the shared
             * child since the wait began too: its "no answer within" counts that wait. */
            if (res[i].status == ISOLATE_TIMEOUT)
                res[i].elapsed_ms += waited;
            icd_judge(st, &st->e[which[i]], &res[i], stage[i]);
            isolate_result_clear(&res[i]);
        }
    } else {
        for (size_t i = 0; i < k; i++)
            icd_set(&st->e[which[i]], "not-probed", "out of memory");
    }
    if (got == CLONCE_EARLY_PENDING) /* its own children ran meanwhile: now wait for it */
        got = clonce_icd_wait(st->ctx, &view, &view_stage) ? CLONCE_EARLY_VIEW : CLONCE_EARLY_LOST;
    if (got == CLONCE_EARLY_VIEW)
        icd_judge_combined(st, &view, view_stage);
    else
        icd_combined_alone(st);
    isolate_result_clear(&view);
    free(res);
    free(stage);
    free(done);
}

void icd_probe_all(struct icd_state *st)
{
    size_t n = st->n + 1;
    struct isolate_job *jobs = calloc(n, sizeof(*jobs));
    struct icd_child_arg *args = calloc(n, sizeof(*args));
    size_t *which = calloc(n, sizeof(*which));
    volatile int *stages = icd_stages_new(n);
    char *vendors_env = NULL;
    /* With the opencl probe in the run, the combined view comes from the one child both share. */
    enum run_once_role shared = st->loader ? clonce_claim(st->ctx) : RUN_ONCE_ALONE;
    size_t combined = (size_t)-1;
    struct icd_health_plan plan;
    bool health = false;
    memset(&plan, 0, sizeof(plan));
    if (!jobs || !args || !which) {
        if (shared == RUN_ONCE_MINE)
            clonce_publish_alone(st->ctx);
        for (size_t i = 0; i < st->n; i++)
            if (!st->e[i].status)
                icd_set(&st->e[i], "not-probed", "out of memory");
        goto out;
    }
    int flags = (icd_is_ocl_semantics(st->kind) ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL;
    /* --health: drivers for absent hardware are not loaded, here nor by the loader's child (the speed
     * policy's rule 2); the combined child run here reads a vendors directory without them. */
    health = icd_health_plan(st->ctx, shared == RUN_ONCE_ALONE && st->loader, &plan);
    size_t k = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (st->e[i].status || !st->e[i].library)
            continue;
        if (health && icd_health_skips(&plan, st->e[i].file) && icd_health_skip(st, &st->e[i]))
            continue;
        which[k] = i;
        args[k] = (struct icd_child_arg){.lib = st->e[i].library, .dlflags = flags, .stage = stages ? &stages[k] : NULL};
        jobs[k] = (struct isolate_job){.fn = icd_child_vendor, .arg = &args[k]};
        k++;
    }
    if (shared != RUN_ONCE_ALONE) {
        icd_probe_shared(st, shared, which, k, flags);
        goto out;
    }
    if (st->loader && !(health && plan.kept == 0)) {
        /* Under --root the loader must read the root's vendors, as the rest of the report does. */
        if (health && plan.dir)
            vendors_env = str_dup(plan.dir);
        else if (!probe_host_files(st->ctx) && st->vendors_dir)
            vendors_env = hostfs_real_path(st->ctx->fs, st->vendors_dir);
        combined = k;
        args[k] = (struct icd_child_arg){.vendors_env = vendors_env, .stage = stages ? &stages[k] : NULL};
        jobs[k] = (struct isolate_job){.fn = icd_child_combined, .arg = &args[k]};
        k++;
    }
    if (k > 0)
        probe_isolate_many(st->ctx, jobs, k);
    for (size_t j = 0; j < k; j++) {
        int stage = stages ? stages[j] : 0;
        if (j == combined)
            icd_judge_combined(st, &jobs[j].result, stage);
        else
            icd_judge(st, &st->e[which[j]], &jobs[j].result, stage);
        isolate_result_clear(&jobs[j].result);
    }
out:
    if (health && plan.kept == 0 && st->loader)
        icd_health_combined_none(st);
    icd_health_plan_free(&plan);
    free(vendors_env);
    free(jobs);
    free(args);
    free(which);
    icd_stages_free(stages, n);
}
