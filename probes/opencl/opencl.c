/* opencl.c: the opencl probe: every OpenCL platform and device (enumerated in an isolated child), tied to the PCI bus. */
#include <stdlib.h>
#include <string.h>

#include "clonce.h"
#include "isolate.h"
#include "opencl_internal.h"
#include "strutil.h"

static const struct check ocl_checks[] = {
    {"cl.no-platforms", REPORT_SEV_ERROR,
     "No OpenCL platform is reachable: no loader, or the loader found no working driver",
     "install the OpenCL driver (ICD) for your device; `gpucheckup icd` shows which .icd files the loader reads and "
     "why each one was skipped", CHECK_LAYER_RUNTIME | CHECK_F_ALL_VENDORS | CHECK_F_PATH_RELIEF | CHECK_F_RELIEF_INFO},
    {"cl.platform-no-devices", REPORT_SEV_WARNING, "An OpenCL platform lists no device",
     "the driver loads but sees no device: check that the kernel driver is loaded and that you may open its device "
     "nodes (/dev/dri/renderD*, /dev/kfd, /dev/nvidia*)", CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"cl.gpu-without-opencl", REPORT_SEV_WARNING, "A compute GPU on the PCI bus has no OpenCL device",
     "install the OpenCL driver (ICD) of this GPU's vendor; `gpucheckup icd` shows what the loader reads",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR | CHECK_F_RELIEF_INFO},
    {"cl.cpu-only", REPORT_SEV_ERROR, "OpenCL works only on CPU devices while a GPU is present",
     "applications will silently run on the CPU: install the GPU's OpenCL driver (see cl.gpu-without-opencl)",
     CHECK_LAYER_RUNTIME | CHECK_F_ALL_VENDORS | CHECK_F_PATH_RELIEF | CHECK_F_RELIEF_INFO},
    {"cl.duplicate-device", REPORT_SEV_WARNING, "One physical device is exposed by two OpenCL platforms",
     "applications that use every device will use it twice: remove one of the two ICDs (`gpucheckup icd` lists "
     "them) or select the platform explicitly", CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
    {"cl.enumeration-crash", REPORT_SEV_ERROR, "Listing OpenCL platforms and devices crashed",
     "one of the drivers crashes: `gpucheckup icd` loads each driver alone and names the one that crashes; remove or "
     "update it", CHECK_LAYER_RUNTIME},
    {"cl.enumeration-hang", REPORT_SEV_ERROR, "Listing OpenCL platforms and devices hung past the timeout",
     "one of the drivers hangs: `gpucheckup icd` loads each driver alone and names the one that hangs (a longer "
     "--timeout rules out a slow start)", CHECK_LAYER_RUNTIME},
    {"cl.enumeration-failed", REPORT_SEV_ERROR, "Listing OpenCL platforms and devices failed",
     "run `gpucheckup icd` to see which driver fails, and `gpucheckup opencl -v` for the detail",
     CHECK_LAYER_RUNTIME | CHECK_F_PATH_RELIEF_VENDOR},
};

/* Environment variables that change what the loader and common drivers expose (recorded as facts). */
static const char *const ocl_env_vars[] = {
    "OCL_ICD_VENDORS", "OPENCL_VENDOR_PATH", "OCL_ICD_FILENAMES", "GPUCHECKUP_LIBOPENCL", "POCL_DEVICES",
    "RUSTICL_ENABLE",  "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", NULL,
};

/* The data object for an enumeration that returned nothing usable. Caller owns. */
static json_object *ocl_failed_data(const char *status, const char *detail, const char *output)
{
    json_object *d = json_object_new_object();
    json_object_object_add(d, "loader", NULL);
    json_object *e = json_object_new_object();
    json_object_object_add(e, "status", json_object_new_string(status));
    json_object_object_add(e, "detail", detail ? json_object_new_string(detail) : NULL);
    if (output && *output)
        json_object_object_add(e, "output", json_object_new_string(output));
    json_object_object_add(d, "enumeration", e);
    json_object_object_add(d, "platforms", json_object_new_array());
    return d;
}

/* True when V has the shape the child promises (so later readers may rely on it). */
static bool ocl_data_well_formed(json_object *v)
{
    if (!json_object_is_type(v, json_type_object))
        return false;
    json_object *plats = ocl_jarr(v, "platforms");
    if (!plats || !ocl_jstr(ocl_jobj(v, "enumeration"), "status"))
        return false;
    for (size_t i = 0; i < json_object_array_length(plats); i++) {
        json_object *p = json_object_array_get_idx(plats, i);
        if (!json_object_is_type(p, json_type_object) || !ocl_jarr(p, "devices") || !ocl_jobj(p, "properties"))
            return false;
        json_object *devs = ocl_jarr(p, "devices");
        for (size_t j = 0; j < json_object_array_length(devs); j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            if (!json_object_is_type(d, json_type_object) || !ocl_jobj(d, "properties") || !ocl_jarr(d, "type"))
                return false;
        }
    }
    return true;
}

/* Count devices by type into an object {platforms, devices, gpu, cpu, accelerator, custom}. */
static json_object *ocl_counts(json_object *plats)
{
    int64_t np = 0, nd = 0, gpu = 0, cpu = 0, acc = 0, custom = 0;
    for (size_t i = 0; i < json_object_array_length(plats); i++) {
        json_object *devs = ocl_jarr(json_object_array_get_idx(plats, i), "devices");
        np++;
        for (size_t j = 0; devs && j < json_object_array_length(devs); j++) {
            json_object *t = ocl_jarr(json_object_array_get_idx(devs, j), "type");
            nd++;
            for (size_t k = 0; t && k < json_object_array_length(t); k++) {
                const char *s = json_object_get_string(json_object_array_get_idx(t, k));
                if (!s)
                    continue;
                gpu += strcmp(s, "GPU") == 0;
                cpu += strcmp(s, "CPU") == 0;
                acc += strcmp(s, "ACCELERATOR") == 0;
                custom += strcmp(s, "CUSTOM") == 0;
            }
        }
    }
    json_object *c = json_object_new_object();
    json_object_object_add(c, "platforms", json_object_new_int64(np));
    json_object_object_add(c, "devices", json_object_new_int64(nd));
    json_object_object_add(c, "gpu", json_object_new_int64(gpu));
    json_object_object_add(c, "cpu", json_object_new_int64(cpu));
    json_object_object_add(c, "accelerator", json_object_new_int64(acc));
    json_object_object_add(c, "custom", json_object_new_int64(custom));
    return c;
}

/* Drop every property whose name does not contain TEXT (case-insensitive) from PROPS. */
static void ocl_filter_props(json_object *props, const char *text)
{
    if (!props)
        return;
    size_t n = (size_t)json_object_object_length(props), k = 0;
    char **drop = calloc(n ? n : 1, sizeof(*drop));
    if (!drop)
        return;
    json_object_object_foreach(props, key, val)
    {
        (void)val;
        if (!strcasestr(key, text) && k < n)
            drop[k++] = str_dup(key);
    }
    for (size_t i = 0; i < k; i++) {
        if (drop[i])
            json_object_object_del(props, drop[i]);
        free(drop[i]);
    }
    free(drop);
}

/* Apply --device and --prop to DATA. Returns 0, or -1 with *ERROR (heap) for an index out of range. */
static int ocl_apply_filters(const struct cli_options *o, json_object *data, bool enumerated, char **error)
{
    json_object *filter = json_object_new_object();
    if (o->device_platform >= 0) {
        char buf[48];
        if (o->device_index >= 0)
            snprintf(buf, sizeof(buf), "%d:%d", o->device_platform, o->device_index);
        else
            snprintf(buf, sizeof(buf), "%d", o->device_platform);
        json_object_object_add(filter, "device", json_object_new_string(buf));
    } else {
        json_object_object_add(filter, "device", NULL);
    }
    json_object_object_add(filter, "prop", o->prop ? json_object_new_string(o->prop) : NULL);
    json_object_object_add(data, "filter", filter);

    json_object *plats = ocl_jarr(data, "platforms");
    if (o->device_platform >= 0 && plats) {
        size_t np = json_object_array_length(plats);
        if (enumerated && (size_t)o->device_platform >= np) {
            *error = str_printf("--device %d: there is no OpenCL platform %d (%zu platform%s found%s)",
                                o->device_platform, o->device_platform, np, np == 1 ? "" : "s",
                                np ? ", numbered from 0" : "");
            return -1;
        }
        json_object *kept = json_object_new_array();
        for (size_t i = 0; i < np; i++) {
            json_object *p = json_object_array_get_idx(plats, i);
            if (ocl_jint(p, "index", (int64_t)i) != o->device_platform)
                continue;
            if (o->device_index >= 0) {
                json_object *devs = ocl_jarr(p, "devices");
                size_t nd = devs ? json_object_array_length(devs) : 0;
                if ((size_t)o->device_index >= nd) {
                    *error = str_printf("--device %d:%d: OpenCL platform %d (%s) has no device %d (%zu device%s)",
                                        o->device_platform, o->device_index, o->device_platform,
                                        ocl_jstr(p, "name") ? ocl_jstr(p, "name") : "unnamed", o->device_index, nd,
                                        nd == 1 ? "" : "s");
                    json_object_put(kept);
                    return -1;
                }
                json_object *one = json_object_new_array();
                json_object_array_add(one, json_object_get(json_object_array_get_idx(devs, (size_t)o->device_index)));
                json_object_object_add(p, "devices", one);
            }
            json_object_array_add(kept, json_object_get(p));
        }
        json_object_object_add(data, "platforms", kept);
        plats = kept;
    }
    if (o->prop && plats) {
        for (size_t i = 0; i < json_object_array_length(plats); i++) {
            json_object *p = json_object_array_get_idx(plats, i);
            ocl_filter_props(ocl_jobj(p, "properties"), o->prop);
            json_object *devs = ocl_jarr(p, "devices");
            for (size_t j = 0; devs && j < json_object_array_length(devs); j++)
                ocl_filter_props(ocl_jobj(json_object_array_get_idx(devs, j), "properties"), o->prop);
        }
    }
    return 0;
}

/* --health without the icd probe in the run (the opencl command): the .icd files SKIPPED (the enumeration's
 * health_skipped) its loader was not given, named in a note, as the icd probe's folded line names them. */
static void ocl_health_skipped_note(struct report_section *sec, json_object *skipped)
{
    size_t n = skipped ? json_object_array_length(skipped) : 0;
    if (n == 0)
        return;
    char *list = str_dup("");
    for (size_t i = 0; list && i < n; i++) {
        const char *f = json_object_get_string(json_object_array_get_idx(skipped, i));
        char *next = str_printf("%s%s%s", list, i ? ", " : "", f ? f : "?");
        free(list);
        list = next;
    }
    report_section_add_note(sec, "not loaded (--health): %zu OpenCL driver%s, CPU drivers and drivers for absent "
                                 "hardware (`gpucheckup icd --health -v` says why each): %s",
                            n, n == 1 ? "" : "s", list ? list : "");
    free(list);
}

static void ocl_summary(struct report_section *sec, json_object *data, const struct report *r)
{
    json_object *en = ocl_jobj(data, "enumeration");
    const char *status = ocl_jstr(en, "status");
    const char *detail = ocl_jstr(en, "detail");
    json_object *counts = ocl_jobj(data, "counts");
    int64_t np = ocl_jint(counts, "platforms", 0), nd = ocl_jint(counts, "devices", 0);
    if (status && strcmp(status, "no-loader") == 0) {
        report_section_add_line(sec, REPORT_MARK_ERROR, "OpenCL", "not installed: no OpenCL loader, so no platform");
        return;
    }
    if (!status || strcmp(status, "ok") != 0) {
        report_section_add_line(sec, REPORT_MARK_ERROR, "OpenCL", "enumeration %s: %s", status ? status : "failed",
                                detail ? detail : "no detail");
        return;
    }
    const char *not_loaded = ocl_jstr(en, "not_loaded");
    if (np == 0 && not_loaded) { /* --health loaded no driver (the shared child's not_loaded) */
        report_section_add_line(sec, REPORT_MARK_INFO, "OpenCL", "not checked: %s", not_loaded);
        return;
    }
    if (np == 0) {
        report_section_add_line(sec, REPORT_MARK_ERROR, "OpenCL", "no platform%s%s", detail ? ": " : "",
                                detail ? detail : "");
        return;
    }
    bool cpu_only = report_find_finding(r, "cl.cpu-only", NULL) != NULL;
    report_section_add_line(sec, nd == 0 || cpu_only ? REPORT_MARK_WARN : REPORT_MARK_OK, "OpenCL",
                            "%lld platform%s, %lld device%s (%lld GPU, %lld CPU, %lld accelerator)%s", (long long)np,
                            np == 1 ? "" : "s", (long long)nd, nd == 1 ? "" : "s",
                            (long long)ocl_jint(counts, "gpu", 0), (long long)ocl_jint(counts, "cpu", 0),
                            (long long)ocl_jint(counts, "accelerator", 0), cpu_only ? ": CPU only" : "");
    json_object *plats = ocl_jarr(data, "platforms");
    for (size_t i = 0; plats && i < json_object_array_length(plats); i++) {
        json_object *p = json_object_array_get_idx(plats, i);
        json_object *devs = ocl_jarr(p, "devices");
        long long pi = (long long)ocl_jint(p, "index", (int64_t)i);
        const char *pname = ocl_jstr(p, "name") ? ocl_jstr(p, "name") : "unnamed platform";
        if (!devs || json_object_array_length(devs) == 0) {
            char label[32];
            snprintf(label, sizeof(label), "OpenCL plat %lld", pi);
            json_object *ah = NULL;
            bool absent = json_object_object_get_ex(p, "absent_hardware", &ah) && json_object_get_boolean(ah);
            report_section_add_line(sec, absent ? REPORT_MARK_INFO : REPORT_MARK_WARN, label, "%s: no device%s",
                                    pname, absent ? " (driver for absent hardware)" : "");
            if (absent)
                report_section_fold_line(sec, "OpenCL plat", "platforms of drivers for absent hardware", pname);
            continue;
        }
        for (size_t j = 0; j < json_object_array_length(devs); j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            char label[48], types[64] = "";
            snprintf(label, sizeof(label), "OpenCL dev %lld:%lld", pi, (long long)ocl_jint(d, "index", (int64_t)j));
            json_object *t = ocl_jarr(d, "type");
            for (size_t k = 0; t && k < json_object_array_length(t); k++) {
                const char *s = json_object_get_string(json_object_array_get_idx(t, k));
                size_t used = strlen(types);
                snprintf(types + used, sizeof(types) - used, "%s%s", used ? "+" : "", s ? s : "?");
            }
            json_object *av = NULL;
            json_object_object_get_ex(d, "available", &av);
            bool unavailable = json_object_is_type(av, json_type_boolean) && !json_object_get_boolean(av);
            const char *addr = ocl_jstr(d, "pci_address");
            const char *ver = ocl_jstr(d, "opencl_version");
            report_section_add_line(sec, unavailable ? REPORT_MARK_WARN : REPORT_MARK_OK, label,
                                    "%s [%s]%s%s, OpenCL %s (%s)%s",
                                    ocl_jstr(d, "name") ? ocl_jstr(d, "name") : "unnamed device", types,
                                    addr ? " " : "", addr ? addr : "", ver ? ver : "?", pname,
                                    unavailable ? ", not available" : "");
        }
    }
}

static int ocl_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct isolate_result res;
    memset(&res, 0, sizeof(res));
    /* In a run with the icd probe, the child it shares with it enumerates (probes/clonce/clonce.c). */
    if (!clonce_opencl(ctx, &res))
        probe_isolate_run(ctx, ocl_enumerate, NULL, &res);
    if (res.budget_spent) {
        report_section_set_status(sec, REPORT_STATUS_SKIPPED, "%s", res.detail);
        isolate_result_clear(&res);
        return PROBE_DONE;
    }

    json_object *data = NULL;
    if (res.status == ISOLATE_OK && ocl_data_well_formed(res.value)) {
        data = res.value;
        res.value = NULL;
    } else {
        const char *status = res.status == ISOLATE_SIGNAL    ? "crash"
                             : res.status == ISOLATE_TIMEOUT ? "timeout"
                                                             : "failed";
        char *detail = res.status == ISOLATE_OK ? str_dup("the enumeration child returned malformed JSON")
                                                : str_dup(res.detail ? res.detail : isolate_status_name(res.status));
        data = ocl_failed_data(status, detail, res.stderr_tail);
        free(detail);
    }
    json_object *en = ocl_jobj(data, "enumeration");
    json_object_object_add(en, "elapsed_ms", json_object_new_double(res.elapsed_ms >= 0 ? res.elapsed_ms : 0));
    /* What drivers printed while listing (warnings, debug output): evidence when something goes wrong. */
    if (res.stderr_tail && *res.stderr_tail && !json_object_object_get_ex(en, "output", NULL))
        json_object_object_add(en, "output", json_object_new_string(res.stderr_tail));
    isolate_result_clear(&res);

    /* Move the facts into the section (which may already hold notes). */
    json_object_object_foreach(data, key, val)
    {
        json_object_object_add(sec->data, key, json_object_get(val));
    }
    json_object_put(data);
    data = sec->data;

    json_object *env = json_object_new_object();
    for (size_t i = 0; ocl_env_vars[i]; i++) {
        const char *v = getenv(ocl_env_vars[i]);
        if (v) {
            char *s = str_dup(v);
            json_object_object_add(env, ocl_env_vars[i], json_object_new_string(s ? str_sanitize(s) : ""));
            free(s);
        }
    }
    json_object_object_add(data, "environment", env);
    json_object_object_add(data, "counts", ocl_counts(ocl_jarr(data, "platforms")));

    /* Cross-checks on the whole enumeration, before any --device/--prop filtering. */
    const struct result_pci *pci = result_pci_get(ctx->report);
    if (!pci)
        report_section_add_note(sec, "no PCI facts (pci probe %s): GPU cross-checks (cl.gpu-without-opencl, "
                                     "cl.cpu-only) skipped",
                                result_pci_status(ctx->report));
    ocl_correlate(data, pci, ctx->report);

    const char *status = ocl_jstr(en, "status");
    bool enumerated = status && strcmp(status, "ok") == 0;
    if (ocl_apply_filters(ctx->opts, data, enumerated, &ctx->error) != 0)
        return PROBE_INPUT_ERROR;
    ocl_summary(sec, data, ctx->report);
    ocl_health_skipped_note(sec, ocl_jarr(en, "health_skipped"));
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    /* data.platforms leaves the data for the result, which prints it in its place */
    struct result_opencl *facts = result_opencl_ops.from_json(data);
    if (facts)
        report_section_set_result(sec, &result_opencl_ops, facts);
    return PROBE_DONE;
}

static const char *const ocl_deps[] = {"pci", NULL};

/* Today's summary label for one an older gpucheckup wrote (struct probe.label_today): "CL 0:0" (a device)
 * is "OpenCL dev 0:0", "CL 1" (a platform without one) "OpenCL plat 1". */
static char *opencl_label_today(const char *label)
{
    if (!label || !str_starts_with(label, "CL "))
        return NULL;
    return str_printf("OpenCL %s %s", strchr(label, ':') ? "dev" : "plat", label + 3);
}

const struct probe probe_opencl = {
    .name = "opencl",
    .clonce_part = &opencl_clonce_part,
    .stack = PROBE_STACK_OPENCL,
    .label_today = opencl_label_today,
    .compute_api = "opencl",
    .compute_api_label = "OpenCL",
    .title = "every OpenCL platform and device with its properties",
    .alias = "list",
    .alias_title = "one line per OpenCL platform and device, with its PCI address",
    .needs_live = true,
    .deps = ocl_deps,
    .checks = ocl_checks,
    .n_checks = sizeof(ocl_checks) / sizeof(ocl_checks[0]),
    .requires = ocl_requires,
    .run = ocl_run,
    .result = &result_opencl_ops,
    .prestart = clonce_prestart,
    .print_text = ocl_print_text,
};
