/* vulkan_verdict.c: the vulkan probe's verdict line and target, --require vulkan, its node labels, summary and text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "jsonget.h"
#include "strutil.h"
#include "vulkan_internal.h"

extern const struct probe probe_vulkan;

/* Devices of R that passed the Vulkan smoke test (GPUs only with GPU_ONLY); *FIRST the first. */
static size_t vulkan_passed(const struct result_vulkan *r, bool gpu_only, const struct result_vulkan_dev **first)
{
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; r && i < r->n_devs; i++) {
        const struct result_vulkan_dev *d = &r->devs[i];
        if (d->smoke != RESULT_VULKAN_SMOKE_PASS || (gpu_only && d->type == RESULT_VULKAN_TYPE_CPU))
            continue;
        if (n++ == 0)
            *first = d;
    }
    return n;
}

static const char *vulkan_label(const struct result_vulkan_dev *d, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", d->pci_address ? d->pci_address : "", d->pci_address ? " " : "",
             d->name ? d->name : "a device");
    return buf;
}

/* ---- --require vulkan ---- */

static int vulkan_req_parse(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "vulkan") == 0 ? 0 : -1;
}

static bool vulkan_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    (void)arg;
    const struct result_vulkan *res = result_vulkan_get(r);
    const struct result_vulkan_dev *d;
    char label[320];
    if (!res) {
        *detail = str_printf("the vulkan probe did not run");
        return false;
    }
    size_t n = vulkan_passed(res, false, &d);
    *detail = n ? str_printf("%zu Vulkan device%s passed the Vulkan smoke test, e.g. %s", n, n == 1 ? "" : "s",
                             vulkan_label(d, label, sizeof(label)))
                : str_printf("no Vulkan device passed the Vulkan smoke test");
    return n > 0;
}

const struct probe_require vulkan_requires[] = {
    {"vulkan", NULL, vulkan_req_parse, vulkan_req_eval, PROBE_CHAIN_STACK},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_STACK},
};

/* ---- the verdict ---- */

/* No device listed and --health left a CPU driver unloaded (vulkan_driver_skip_cpu), with nothing worse than
 * information behind it: "Vulkan: not checked: ..." and the target say so (information, never a reason for
 * not ready), and true. False: the usual verdict applies. */
static bool vulkan_verdict_unchecked(struct report *r, const struct result_vulkan *res, struct doctor_lines *out)
{
    bool skipped = false;
    for (size_t i = 0; i < res->n_drivers && !skipped; i++)
        skipped = vulkan_cpu_skipped(res->drivers[i].detail);
    const struct report_finding *root = skipped ? doctor_target_root(r, &probe_vulkan) : NULL;
    if (!skipped || (root && root->severity != REPORT_SEV_INFO))
        return false;
    size_t nreasons = 0;
    const char **reasons = doctor_target_reasons(r, &probe_vulkan, &nreasons);
    const char *detail = "not checked: no GPU device listed, and CPU drivers are not loaded (--health)";
    report_set_target(r, probe_vulkan.name, false, detail, reasons);
    doctor_lines_add(out, str_printf("Vulkan: %s", detail));
    free(reasons);
    return true;
}

/* "Vulkan: ready on ..." or why not, and the vulkan target, where the probe ran. */
void vulkan_verdict(struct report *r, struct doctor_lines *out)
{
    const struct result_vulkan *res = result_vulkan_get(r);
    if (!res)
        return;
    const struct result_vulkan_dev *gpu, *any;
    size_t ngpu = vulkan_passed(res, true, &gpu), nany = vulkan_passed(res, false, &any);
    char label[320];
    char *ready = NULL;
    if (nany == 0 && res->n_devs == 0 && vulkan_verdict_unchecked(r, res, out))
        return;
    if (nany > 0)
        ready = str_printf("ready on %s%s", vulkan_label(ngpu ? gpu : any, label, sizeof(label)),
                           (ngpu ? ngpu : nany) > 1 ? " and more" : "");
    doctor_api_verdict(r, out, &(struct doctor_api_verdict){.probe = &probe_vulkan, .label = "Vulkan", .reached = nany > 0,
                                                            .ready_detail = ready,
                                                            .none = "not ready: no Vulkan device passed the smoke test (none)"});
}

/* ---- node labels: device count, the first passing GPU's API version, fp16 ---- */

void vulkan_node_labels(const struct report_section *sec,
                        void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg)
{
    const struct result_vulkan *res = sec->result;
    if (!res)
        return;
    const struct result_vulkan_dev *d;
    char buf[32];
    size_t n = vulkan_passed(res, false, &d);
    snprintf(buf, sizeof(buf), "%zu", n);
    emit(arg, "vulkan", "device-count", buf);
    if (d) {
        emit(arg, "vulkan", "api-version", d->api_version);
        if (d->shader_float16 != GC_TRI_UNKNOWN)
            emit(arg, "vulkan", "shader-float16", d->shader_float16 == GC_TRI_YES ? "true" : "false");
    }
}

/* ---- summary lines and text ---- */

void vulkan_summary(struct report_section *sec, const struct result_vulkan *res)
{
    if (!res->loader && res->n_drivers == 0) {
        report_section_add_line(sec, REPORT_MARK_INFO, "Vulkan", "not installed");
        return;
    }
    report_section_add_line(sec, res->loader ? REPORT_MARK_OK : REPORT_MARK_ERROR, "Vulkan loader", "%s",
                            res->loader ? res->loader : "libvulkan.so.1 not found");
    for (size_t i = 0; i < res->n_drivers; i++) {
        const struct result_vulkan_driver *d = &res->drivers[i];
        enum report_mark m = d->status == RESULT_VULKAN_DRV_OK ? REPORT_MARK_OK
                             : d->status == RESULT_VULKAN_DRV_ABSENT_HARDWARE || d->status == RESULT_VULKAN_DRV_NO_DEVICE ||
                                       d->status == RESULT_VULKAN_DRV_WRONG_ARCH || vulkan_cpu_skipped(d->detail)
                                 ? REPORT_MARK_INFO
                                 : REPORT_MARK_ERROR;
        report_section_add_line(sec, m, "Vulkan driver", "%s: %s", d->manifest ? d->manifest : "?", d->detail ? d->detail : "?");
        if (d->status == RESULT_VULKAN_DRV_ABSENT_HARDWARE && d->manifest) {
            const char *slash = strrchr(d->manifest, '/');
            /* --health did not load it (vulkan_driver_skip_absent's detail): the folded line says so too */
            bool skipped = d->detail && strncmp(d->detail, "not loaded", 10) == 0;
            report_section_fold_line(sec, "Vulkan driver", skipped ? "drivers for absent hardware, not loaded"
                                                                   : "drivers for absent hardware",
                                     slash ? slash + 1 : d->manifest);
        }
    }
    for (size_t i = 0; i < res->n_devs; i++) {
        const struct result_vulkan_dev *d = &res->devs[i];
        const char *st = gc_name(&result_vulkan_smoke_status_names, d->smoke);
        double gf = NAN;
        bool have_gf = d->smoke == RESULT_VULKAN_SMOKE_PASS && jsonget_num(d->smoke_json, "gflops", &gf);
        char speed[48] = "";
        if (have_gf)
            snprintf(speed, sizeof(speed), ", %.1f GFLOPS", gf);
        report_section_add_line(sec, d->smoke == RESULT_VULKAN_SMOKE_PASS ? REPORT_MARK_OK
                                     : d->smoke == RESULT_VULKAN_SMOKE_SKIPPED || d->smoke < 0 ? REPORT_MARK_INFO
                                                                                               : REPORT_MARK_ERROR,
                                "Vulkan device", "%s (%s, Vulkan %s): smoke test %s%s", d->name ? d->name : "?",
                                gc_name(&result_vulkan_dev_type_names, d->type) ? gc_name(&result_vulkan_dev_type_names, d->type) : "?",
                                d->api_version ? d->api_version : "?", st ? st : "not run", speed);
    }
}

void vulkan_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    const struct result_vulkan *res = sec->result;
    if (!res || t->verbose < 1)
        return;
    for (size_t i = 0; i < res->n_devs; i++) {
        const struct result_vulkan_dev *d = &res->devs[i];
        text_heading(t, d->name ? d->name : "Vulkan device");
        text_kv(t, "driver", "%s (%s)", d->driver_name ? d->driver_name : "?", d->manifest ? d->manifest : "?");
        text_kv(t, "driver info", "%s", d->driver_info ? d->driver_info : "?");
        text_kv(t, "API version", "%s", d->api_version ? d->api_version : "?");
        text_kv(t, "vendor:device", "0x%04llx:0x%04llx", (unsigned long long)d->vendor_id, (unsigned long long)d->device_id);
        text_kv(t, "PCI address", "%s", d->pci_address ? d->pci_address : "not given");
        text_kv(t, "subgroup size", "%lld", (long long)d->subgroup_size);
        text_kv(t, "fp16 / int8 / 16-bit storage", "%s / %s / %s", gc_tri_name(d->shader_float16),
                gc_tri_name(d->shader_int8), gc_tri_name(d->storage_16bit));
    }
}
