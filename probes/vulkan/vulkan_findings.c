/* vulkan_findings.c: the vulkan probe's catalogue, and what each driver child's and smoke child's outcome means. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "results/result_pci.h"
#include "vendor.h"
#include "vulkan_internal.h"

const struct check vulkan_checks[] = {
    {"vulkan.not-installed", REPORT_SEV_INFO, "Vulkan is not installed: no loader (libvulkan.so.1) and no driver manifest",
     "Nothing to fix unless you want Vulkan compute (llama.cpp, whisper.cpp, ncnn): install the loader and a driver "
     "(Debian: libvulkan1 and mesa-vulkan-drivers, or your GPU vendor's Vulkan driver).",
     CHECK_LAYER_LOADER | CHECK_F_NO_DEVICE | CHECK_F_NEVER_CAUSE},
    {"vulkan.no-loader", REPORT_SEV_ERROR, "Vulkan drivers are installed but the Vulkan loader (libvulkan.so.1) is missing",
     "Install the loader (Debian: libvulkan1); every Vulkan program needs it.", CHECK_LAYER_LOADER},
    {"vulkan.no-drivers", REPORT_SEV_INFO, "The Vulkan loader is installed but no driver manifest (ICD JSON) is registered",
     "Install a Vulkan driver (Debian: mesa-vulkan-drivers for AMD, Intel and the lavapipe CPU device; NVIDIA's "
     "driver for NVIDIA GPUs), or point VK_DRIVER_FILES at its manifest.", CHECK_LAYER_DRIVER | CHECK_F_NO_DEVICE},
    {"vulkan.manifest-unreadable", REPORT_SEV_ERROR, "A Vulkan driver manifest cannot be read, so the loader skips it",
     "Fix the file's permissions (it must be readable by every user who runs Vulkan programs).", CHECK_LAYER_DRIVER},
    {"vulkan.manifest-malformed", REPORT_SEV_ERROR, "A Vulkan driver manifest is malformed, so the loader skips it",
     "Reinstall the package that owns it (`dpkg -S FILE`), or remove the stray file.", CHECK_LAYER_DRIVER},
    {"vulkan.missing-library", REPORT_SEV_ERROR, "The library a Vulkan driver manifest names cannot be found",
     "Reinstall the driver package (`dpkg -S MANIFEST` names it), or remove the stale manifest.", CHECK_LAYER_DRIVER},
    {"vulkan.wrong-arch", REPORT_SEV_INFO,
     "A Vulkan driver manifest names a library built for another architecture: the loader skips it",
     "Expected on a multiarch system (the 32-bit driver serves 32-bit programs). Otherwise install the driver "
     "built for this machine.", CHECK_LAYER_DRIVER | CHECK_F_NEVER_ROOT | CHECK_F_NEVER_CAUSE},
    {"vulkan.init-failed", REPORT_SEV_ERROR, "A Vulkan driver fails to create an instance or list its devices",
     "Run `VK_LOADER_DEBUG=all vulkaninfo --summary` with VK_DRIVER_FILES set to the manifest named to see why; "
     "reinstall or update the driver.", CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF},
    {"vulkan.crash", REPORT_SEV_ERROR, "A Vulkan driver crashes (or ends the process) while loading or listing devices",
     "Every Vulkan program that loads this driver crashes the same way: update or remove the driver named.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF},
    {"vulkan.hang", REPORT_SEV_ERROR, "A Vulkan driver hangs while loading or listing devices",
     "Every Vulkan program that loads this driver hangs the same way: update or remove the driver named.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF},
    {"vulkan.absent-hardware", REPORT_SEV_INFO,
     "A Vulkan GPU driver is installed but this machine has none of the hardware it drives: no device is expected",
     "Nothing to fix on a machine without that GPU; if the driver is not wanted, remove its package.",
     CHECK_LAYER_DRIVER | CHECK_F_NEVER_ROOT | CHECK_F_PATH_RELIEF_VENDOR},
    {"vulkan.driver-idle", REPORT_SEV_INFO,
     "A Vulkan driver lists no device, and gpucheckup cannot tell whether its hardware is here",
     "Nothing to fix unless you expected a device from it: then check that its GPU is on the bus (`gpucheckup pci`) "
     "and that you may open /dev/dri/renderD* (the render or video group).", CHECK_LAYER_DRIVER | CHECK_F_NEVER_ROOT},
    {"vulkan.driver-no-device", REPORT_SEV_WARNING, "A Vulkan driver lists no device although its GPU is on the bus",
     "Check that the GPU's kernel driver is loaded (`gpucheckup pci`) and that you may open /dev/dri/renderD* "
     "(add yourself to the render group).", CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"vulkan.gpu-without-device", REPORT_SEV_INFO, "A GPU on the PCI bus has no Vulkan device",
     "Vulkan programs (llama.cpp's Vulkan backend, ncnn) cannot use it: install its Vulkan driver (Debian: "
     "mesa-vulkan-drivers for AMD and Intel; NVIDIA's driver ships its own), or ignore this if it computes "
     "through CUDA or ROCm.", CHECK_LAYER_DRIVER | CHECK_F_NEVER_ROOT | CHECK_F_NEVER_CAUSE},
    {"vulkan.no-device", REPORT_SEV_INFO, "Vulkan is installed but no driver lists a device",
     "Nothing to fix unless you want Vulkan compute: install the Vulkan driver of your GPU.",
     CHECK_LAYER_RUNTIME | CHECK_F_NO_DEVICE},
    {"vulkan.smoke-wrong-result", REPORT_SEV_ERROR, "A device computed a wrong matrix product in the Vulkan smoke test",
     "Do not trust this device's Vulkan results: update the driver; check the GPU for overheating or bad memory.",
     CHECK_LAYER_COMPUTE},
    {"vulkan.smoke-run-failed", REPORT_SEV_ERROR,
     "A Vulkan call failed during the smoke test (device, memory, pipeline or submit)",
     "VK_ERROR_OUT_OF_DEVICE_MEMORY: the GPU is full (try a smaller --smoke-size). Others point at the driver: "
     "update it; the failed call is in the JSON.", CHECK_LAYER_COMPUTE},
    {"vulkan.smoke-crash", REPORT_SEV_ERROR, "A Vulkan driver crashed during the smoke test",
     "Update or reinstall the driver; check `dmesg` for GPU resets.", CHECK_LAYER_COMPUTE},
    {"vulkan.smoke-timeout", REPORT_SEV_ERROR, "The Vulkan smoke test did not finish in time on a device",
     "Check `dmesg` for GPU hangs or resets and other jobs on the GPU; then run again with a longer --timeout.",
     CHECK_LAYER_COMPUTE},
    /* NVIDIA Container Toolkit, "Driver capabilities": `graphics` is what brings the Vulkan/OpenGL driver and
     * its manifest into a container; the default (unset) is "utility,compute". */
    {"vulkan.container-no-graphics", REPORT_SEV_INFO,
     "An NVIDIA GPU has no Vulkan device in a container whose NVIDIA_DRIVER_CAPABILITIES lacks `graphics`",
     "Nothing to fix for CUDA work. For Vulkan in the container (llama.cpp's Vulkan backend, ncnn), start it with "
     "`-e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics` (or `all`); in Kubernetes, set that variable in the "
     "pod's spec.", CHECK_LAYER_DRIVER | CHECK_F_NEVER_ROOT},
};
const size_t vulkan_n_checks = sizeof(vulkan_checks) / sizeof(vulkan_checks[0]);

/* ---- which hardware a Mesa or vendor Vulkan driver needs (by its library's name) ---- */

static const int vulkan_hw_intel[] = {VENDOR_PCI_INTEL, 0};
static const int vulkan_hw_amd[] = {VENDOR_PCI_AMD, VENDOR_PCI_AMD_ALT, 0};
static const int vulkan_hw_nvidia[] = {VENDOR_PCI_NVIDIA, 0};
static const char *const vulkan_lib_intel_hasvk[] = {"vulkan_intel_hasvk", NULL};
static const char *const vulkan_lib_intel[] = {"vulkan_intel", NULL};
static const char *const vulkan_lib_amd[] = {"vulkan_radeon", "amdvlk", NULL};
static const char *const vulkan_lib_nvidia[] = {"glx_nvidia", "nvidia", "vulkan_nouveau", NULL};
static const char *const vulkan_lib_cpu[] = {"vulkan_lvp", "vk_swiftshader", NULL};

/* Mesa's library names (mesa-vulkan-drivers 22.3: libvulkan_intel.so, libvulkan_intel_hasvk.so,
 * libvulkan_radeon.so, libvulkan_lvp.so), AMDVLK's amdvlk64.so, NVIDIA's libGLX_nvidia.so.0. Mesa split its
 * Intel driver in 22.3 (docs/drivers/anv.rst and hasvk in Mesa's tree): hasvk drives Gen 7 and 8 (Ivy Bridge to
 * Broadwell), ANV Gen 9 and later; hasvk's library name holds ANV's, so its row comes first. */
static const struct vendor_cl vulkan_hw_table[] = {
    {"vk-intel-hasvk", "Mesa's Vulkan driver for older Intel GPUs (hasvk)", "intel", vulkan_lib_intel_hasvk, NULL,
     VENDOR_NEEDS_OWN_GPU, vulkan_hw_intel, NULL, NULL, "an Intel GPU of Gen 7 or 8 (Ivy Bridge to Broadwell)"},
    {"vk-intel", "Mesa's Intel Vulkan driver (ANV)", "intel", vulkan_lib_intel, NULL, VENDOR_NEEDS_OWN_GPU,
     vulkan_hw_intel, NULL, NULL, "an Intel GPU of Gen 9 (Skylake) or later"},
    {"vk-amd", "an AMD Vulkan driver (RADV, AMDVLK)", "amd", vulkan_lib_amd, NULL, VENDOR_NEEDS_OWN_GPU, vulkan_hw_amd,
     NULL, NULL, "an AMD GPU"},
    {"vk-nvidia", "an NVIDIA Vulkan driver", "nvidia", vulkan_lib_nvidia, NULL, VENDOR_NEEDS_OWN_GPU, vulkan_hw_nvidia,
     NULL, NULL, "an NVIDIA GPU"},
    {"vk-cpu", "a CPU Vulkan driver (lavapipe, SwiftShader)", NULL, vulkan_lib_cpu, NULL, VENDOR_NEEDS_NOTHING, NULL,
     NULL, NULL, "nothing"},
};

static const struct vendor_cl *vulkan_hw_of(const char *library)
{
    const char *base = library ? strrchr(library, '/') : NULL;
    base = base ? base + 1 : library;
    for (size_t i = 0; base && i < sizeof(vulkan_hw_table) / sizeof(vulkan_hw_table[0]); i++)
        for (const char *const *p = vulkan_hw_table[i].libs; *p; p++)
            if (strcasestr(base, *p))
                return &vulkan_hw_table[i];
    return NULL;
}

const char *vulkan_driver_vendor(const char *library)
{
    const struct vendor_cl *hw = vulkan_hw_of(library);
    return hw ? hw->vendor : NULL;
}

/* The loader's messages in a child's OUTPUT (newlines sanitised to '?', each message repeated once per
 * instance-level call): the distinct ones, in order, at most four, "; "-joined. NULL when there are none. */
static char *vulkan_loader_lines(const char *output)
{
    char *copy = output ? str_dup(output) : NULL, *lines[4], *save = NULL, *out = NULL;
    size_t n = 0;
    for (char *t = copy ? strtok_r(copy, "?", &save) : NULL; t && n < 4; t = strtok_r(NULL, "?", &save)) {
        if (strncmp(t, "ERROR:", 6) == 0)
            t += 6;
        t += strspn(t, " \t");
        bool seen = !*t;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strcmp(lines[i], t) == 0;
        if (!seen)
            lines[n++] = t;
    }
    for (size_t i = 0; i < n; i++) {
        char *joined = str_printf("%s%s%s", out ? out : "", out ? "; " : "", lines[i]);
        free(out);
        out = joined;
    }
    free(copy);
    return out;
}

/* D is a driver for absent hardware HW (WHY: what the PCI facts showed), and WHAT it did ("lists no
 * device", or "not loaded (--health)"): its status, detail and vulkan.absent-hardware (info). */
static void vulkan_absent(struct probe_ctx *ctx, struct vulkan_driver *d, const struct vendor_cl *hw, const char *what,
                          const char *why)
{
    d->status = RESULT_VULKAN_DRV_ABSENT_HARDWARE;
    d->detail = str_printf("%s: a driver for absent hardware, it needs %s", what, hw->needs_text);
    struct report_finding *f = report_add_finding(ctx->report, "vulkan.absent-hardware", d->path, "%s (%s) %s: a driver "
                                                  "for absent hardware, it needs %s", d->path, hw->display, what,
                                                  hw->needs_text);
    if (f) {
        report_finding_add_evidence(f, "/sys/bus/pci/devices", "%s", why);
        struct report_finding *cause = report_find_finding(ctx->report, "pci.no-gpu", NULL);
        if (cause)
            report_finding_set_cause(f, cause->id, cause->subject);
    }
}

bool vulkan_driver_skip_absent(struct probe_ctx *ctx, struct vulkan_driver *d)
{
    const struct vendor_cl *hw = vulkan_hw_of(d->library ? d->library : d->info.library_path);
    char why[256] = "";
    if (!hw || vendor_cl_hardware(hw, result_pci_get(ctx->report), NULL, why, sizeof(why)) != VENDOR_HW_ABSENT)
        return false;
    vulkan_absent(ctx, d, hw, "not loaded (--health)", why);
    return true;
}

bool vulkan_driver_skip_cpu(struct probe_ctx *ctx, struct vulkan_driver *d)
{
    const struct vendor_cl *hw = vulkan_hw_of(d->library ? d->library : d->info.library_path);
    if (!hw || hw->needs != VENDOR_NEEDS_NOTHING || !ctx->opts || !ctx->opts->health || ctx->opts->n_requires > 0)
        return false;
    d->status = RESULT_VULKAN_DRV_NOT_LOADED;
    d->detail = str_printf(VULKAN_CPU_SKIPPED ": its device is the CPU");
    return true;
}

bool vulkan_cpu_skipped(const char *detail)
{
    return detail && strncmp(detail, VULKAN_CPU_SKIPPED, strlen(VULKAN_CPU_SKIPPED)) == 0;
}

/* D lists no device (WHAT says how; FAILED: it failed rather than listed none): absent hardware (info),
 * else a failure (error), idle (unknown hardware, info) or a GPU that is there and not listed (warning).
 * OUTPUT: what the child printed (the loader's own messages), or NULL. */
static void vulkan_no_device(struct probe_ctx *ctx, struct vulkan_driver *d, const char *what, bool failed,
                             const char *output)
{
    const struct vendor_cl *hw = vulkan_hw_of(d->library ? d->library : d->info.library_path);
    char why[256] = "";
    enum vendor_hw h = hw ? vendor_cl_hardware(hw, result_pci_get(ctx->report), NULL, why, sizeof(why)) : VENDOR_HW_UNKNOWN;
    struct report_finding *f;
    if (h == VENDOR_HW_ABSENT) {
        vulkan_absent(ctx, d, hw, what, why);
        return;
    }
    d->status = failed ? RESULT_VULKAN_DRV_INIT_FAILED : RESULT_VULKAN_DRV_NO_DEVICE;
    d->detail = str_printf("%s", what);
    if (failed) {
        /* Its hardware may be here, and it fails: a fault, not an idle driver. VK_ERROR_INCOMPATIBLE_DRIVER
         * alone does not say why: NVIDIA's 535 driver gives it both when it cannot reach its GPU and when
         * libGLX_nvidia cannot be loaded (a library it needs is missing); the loader's message tells them apart. */
        f = report_add_finding(ctx->report, "vulkan.init-failed", d->path, "The Vulkan driver of %s: %s", d->path, what);
        char *said = f ? vulkan_loader_lines(output) : NULL;
        if (said)
            report_finding_add_evidence(f, "loader output", "%s", said);
        free(said);
    } else if (h == VENDOR_HW_PRESENT) {
        f = report_add_finding(ctx->report, "vulkan.driver-no-device", d->path, "%s (%s) %s, yet its GPU is here", d->path,
                               hw->display, what);
        if (f)
            report_finding_add_evidence(f, "/sys/bus/pci/devices", "%s", why);
    } else {
        report_add_finding(ctx->report, "vulkan.driver-idle", d->path, "%s %s (%s)", d->path, what,
                           why[0] ? why : "a driver gpucheckup does not know");
    }
}

void vulkan_driver_outcome(struct probe_ctx *ctx, struct vulkan_driver *d, const struct isolate_result *res)
{
    static const struct jsonstr_limits lim = {8, 512, 64, 64};
    struct report *r = ctx->report;
    if (res->status == ISOLATE_SPAWN_FAILED) {
        d->status = RESULT_VULKAN_DRV_NOT_LOADED;
        d->detail = str_printf("not loaded: %s", res->budget_spent ? "no time was left" : "the child could not start");
        return;
    }
    if (res->status == ISOLATE_TIMEOUT) {
        d->status = RESULT_VULKAN_DRV_TIMEOUT;
        d->detail = str_printf("%s", res->detail ? res->detail : "timed out");
        report_add_finding(r, "vulkan.hang", d->path, "The Vulkan driver of %s (%s) hangs: %s", d->path,
                           d->library ? d->library : "?", d->detail);
        return;
    }
    if (res->status != ISOLATE_OK) {
        d->status = RESULT_VULKAN_DRV_CRASH;
        d->detail = str_printf("%s", res->detail ? res->detail : "the child died");
        struct report_finding *f = report_add_finding(r, "vulkan.crash", d->path, "The Vulkan driver of %s (%s) crashes: %s",
                                                      d->path, d->library ? d->library : "?", d->detail);
        if (f && res->stderr_tail)
            report_finding_add_evidence(f, "output", "%s", res->stderr_tail);
        return;
    }
    d->answer = jsonstr_clean_copy(res->value, &lim);
    const char *err = jsonget_str(d->answer, "error");
    size_t n = 0;
    json_object *devs = jsonget_array(d->answer, "devices", &n);
    if (err && strcmp(err, "no-loader") == 0) {
        d->status = RESULT_VULKAN_DRV_NOT_LOADED;
        d->detail = str_printf("not loaded: %s", jsonget_str(d->answer, "detail") ? jsonget_str(d->answer, "detail") : "?");
    } else if (err) {
        const char *call = jsonget_str(d->answer, "call"), *name = jsonget_str(d->answer, "result_name");
        char *what = call ? str_printf("%s fails with %s (%lld)", call, name ? name : "?",
                                       (long long)jsonget_int(d->answer, "result", 0))
                          : str_printf("%s", jsonget_str(d->answer, "detail") ? jsonget_str(d->answer, "detail") : err);
        vulkan_no_device(ctx, d, what, true, res->stderr_tail);
        free(what);
    } else if (!devs || n == 0) {
        vulkan_no_device(ctx, d, "lists no device", false, NULL);
    } else {
        d->status = RESULT_VULKAN_DRV_OK;
        d->detail = str_printf("%zu device%s", n, n == 1 ? "" : "s");
    }
}

void vulkan_smoke_outcome(struct probe_ctx *ctx, struct result_vulkan_dev *dev, const struct isolate_result *res)
{
    static const struct jsonstr_limits lim = {8, 512, 64, 64};
    const char *subject = dev->pci_address ? dev->pci_address : dev->name ? dev->name : "?";
    const char *name = dev->name ? dev->name : "?";
    json_object *o = NULL;
    if (res->status == ISOLATE_OK && res->value) {
        o = jsonstr_clean_copy(res->value, &lim);
    } else {
        o = json_object_new_object();
        bool skipped = res->status == ISOLATE_SPAWN_FAILED;
        json_object_object_add(o, "status", json_object_new_string(skipped ? "skipped"
                                                                  : res->status == ISOLATE_TIMEOUT ? "timeout" : "crash"));
        json_object_object_add(o, "detail", jsonstr_sanitized(skipped ? (res->budget_spent ? "no time was left" : "the child could not start")
                                                                      : res->detail));
    }
    dev->smoke_json = o;
    dev->smoke = gc_name_parse(&result_vulkan_smoke_status_names, jsonget_str(o, "status"));
    if (dev->smoke < 0) {
        dev->smoke = RESULT_VULKAN_SMOKE_RUN_FAILED;
        json_object_object_add(o, "status", json_object_new_string("run-failed"));
    }
    const char *detail = jsonget_str(o, "detail");
    struct report *r = ctx->report;
    switch ((enum result_vulkan_smoke_status)dev->smoke) {
    case RESULT_VULKAN_SMOKE_WRONG_RESULT:
        report_add_finding(r, "vulkan.smoke-wrong-result", subject, "%s computed a wrong product in the Vulkan smoke test: %s",
                           name, detail ? detail : "?");
        break;
    case RESULT_VULKAN_SMOKE_RUN_FAILED:
        report_add_finding(r, "vulkan.smoke-run-failed", subject, "The Vulkan smoke test on %s: %s fails with %s (%lld)",
                           name, jsonget_str(o, "call") ? jsonget_str(o, "call") : "a call",
                           jsonget_str(o, "result_name") ? jsonget_str(o, "result_name") : "?",
                           (long long)jsonget_int(o, "result", 0));
        break;
    case RESULT_VULKAN_SMOKE_CRASH:
        report_add_finding(r, "vulkan.smoke-crash", subject, "The Vulkan driver crashed in the smoke test on %s: %s", name,
                           detail ? detail : "?");
        break;
    case RESULT_VULKAN_SMOKE_TIMEOUT:
        report_add_finding(r, "vulkan.smoke-timeout", subject, "The Vulkan smoke test on %s did not finish: %s", name,
                           detail ? detail : "?");
        break;
    case RESULT_VULKAN_SMOKE_PASS:
    case RESULT_VULKAN_SMOKE_SKIPPED:
        break;
    }
}
