/* cuda_text.c: the cuda probe's details for people (driver, library, devices): walks the section's JSON only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "cuda_internal.h"
#include "cuda_nvml.h"
#include "jsonget.h"

static bool cuda_t_int(json_object *o, const char *key, int64_t *out)
{
    json_object *v = jsonget(o, key);
    if (!v || !json_object_is_type(v, json_type_int))
        return false;
    *out = json_object_get_int64(v);
    return true;
}

/* "yes", "no" or "unknown" for a boolean member. */
static const char *cuda_t_yesno(json_object *o, const char *key)
{
    int v = jsonget_tri(o, key);
    return v < 0 ? "unknown" : v ? "yes" : "no";
}

static const char *cuda_t_or(const char *s, const char *def)
{
    return s ? s : def;
}

static void cuda_t_device(struct text_out *t, json_object *d)
{
    int64_t ord = 0, mem = -1, sms = -1, clk = -1;
    cuda_t_int(d, "ordinal", &ord);
    fprintf(t->f, "\n  Device %lld: %s\n", (long long)ord, cuda_t_or(jsonget_str(d, "name"), "(name unknown)"));
    text_kv(t, "  PCI address", "%s%s", cuda_t_or(jsonget_str(d, "pci_address"), "unknown"),
            jsonget(d, "on_pci_bus") && !json_object_get_boolean(jsonget(d, "on_pci_bus"))
                ? " (not in the pci section)"
                : "");
    text_kv(t, "  UUID", "%s", cuda_t_or(jsonget_str(d, "uuid"), "unknown"));
    text_kv(t, "  compute capability", "%s", cuda_t_or(jsonget_str(d, "compute_capability"), "unknown"));
    if (cuda_t_int(d, "memory_bytes", &mem))
        text_kv(t, "  memory", "%.2f GiB (%lld bytes)", (double)mem / (1024.0 * 1024.0 * 1024.0), (long long)mem);
    else
        text_kv(t, "  memory", "unknown");
    if (cuda_t_int(d, "multiprocessors", &sms))
        text_kv(t, "  multiprocessors", "%lld", (long long)sms);
    if (cuda_t_int(d, "clock_khz", &clk))
        text_kv(t, "  clock", "%lld MHz", (long long)(clk / 1000));
    text_kv(t, "  ECC", "%s", cuda_t_yesno(d, "ecc_enabled"));
    text_kv(t, "  compute mode", "%s", cuda_t_or(jsonget_str(d, "compute_mode"), "unknown"));
    text_kv(t, "  integrated", "%s", cuda_t_yesno(d, "integrated"));
    json_object *err = jsonget(d, "error");
    if (err)
        text_kv(t, "  error", "%s", cuda_t_or(jsonget_str(err, "name"), "unknown CUresult"));
}

void cuda_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *data = sec->data, *drv = jsonget(data, "driver"), *lib = jsonget(drv, "library");
    text_heading(t, "CUDA driver");
    text_kv(t, "status", "%s", cuda_t_or(jsonget_str(drv, "status"), "unknown"));
    if (lib) {
        const char *from = jsonget_str(lib, "loaded_from"), *path = jsonget_str(lib, "path");
        text_kv(t, "libcuda.so.1", "%s%s%s", cuda_t_or(from, "?"), path && from && strcmp(path, from) != 0 ? " -> " : "",
                path && from && strcmp(path, from) != 0 ? path : "");
        text_kv(t, "found via", "%s (%s)", cuda_t_or(jsonget_str(lib, "found_via"), "?"),
                cuda_t_or(jsonget_str(lib, "search_entry"), "?"));
        text_kv(t, "library version", "%s", cuda_t_or(jsonget_str(lib, "version"), "not in the file name"));
    } else {
        text_kv(t, "libcuda.so.1", "not loaded: %s", cuda_t_or(jsonget_str(drv, "dlopen_error"), "no detail"));
    }
    text_kv(t, "kernel module", "%s", cuda_t_or(jsonget_str(drv, "kernel_module_version"), "unknown"));
    json_object *ci = jsonget(drv, "cuinit");
    int64_t code = 0;
    if (ci && cuda_t_int(ci, "code", &code))
        text_kv(t, "cuInit(0)", "%s (%lld)", cuda_t_or(jsonget_str(ci, "name"), "unknown CUresult"), (long long)code);
    text_kv(t, "driver CUDA version", "%s", cuda_t_or(jsonget_str(drv, "cuda_version"), "unknown"));
    json_object *env = jsonget(data, "environment");
    if (env && json_object_object_length(env) > 0) {
        json_object_object_foreach(env, key, val)
        {
            text_kv(t, key, "%s", json_object_get_string(val));
        }
    }
    json_object *devs = jsonget(data, "devices");
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++)
        cuda_t_device(t, json_object_array_get_idx(devs, i));
    const char *not_run = jsonget_str(data, "smoke_not_run");
    json_object *smoke = jsonget(data, "smoke");
    if (not_run)
        text_kv(t, "CUDA smoke test", "not run: %s", not_run);
    for (size_t i = 0; smoke && json_object_is_type(smoke, json_type_array) && i < json_object_array_length(smoke);
         i++) {
        json_object *g = json_object_array_get_idx(smoke, i);
        char key[48];
        snprintf(key, sizeof(key), "CUDA smoke cuda:%d", (int)json_object_get_int(jsonget(g, "ordinal")));
        text_kv(t, key, "%s: %s", cuda_t_or(jsonget_str(g, "status"), "?"), cuda_t_or(jsonget_str(g, "detail"), ""));
    }
    json_object *nvml = jsonget(data, "nvml");
    if (nvml)
        cuda_nvml_print_text(nvml, t);
}

/* ---- NVML ---- */

static const char *nvml_onoff(json_object *o, const char *key, const char *on, const char *off)
{
    int v = jsonget_tri(o, key);
    return v == 1 ? on : v == 0 ? off : "n/a";
}

void cuda_nvml_print_text(json_object *nvml, struct text_out *t)
{
    if (!nvml || !json_object_is_type(nvml, json_type_object))
        return;
    const char *status = jsonget_str(nvml, "status");
    const char *path = jsonget_str(nvml, "path");
    const char *lib = path ? path : jsonget_str(nvml, "library");
    if (!status || strcmp(status, "ok") != 0) {
        const char *err = jsonget_str(nvml, "init_result_name");
        if (!err)
            err = jsonget_str(nvml, "error");
        text_kv(t, "NVML", "%s: %s%s%s", lib ? lib : "libnvidia-ml.so.1", status ? status : "unknown",
                err ? ", " : "", err ? err : "");
        return;
    }
    int64_t cv = nvml_num(nvml, "cuda_driver_version");
    char cuda[32] = "n/a";
    if (cv > 0)
        snprintf(cuda, sizeof(cuda), "%lld.%lld", (long long)(cv / 1000), (long long)(cv % 1000 / 10));
    const char *drv = jsonget_str(nvml, "driver_version");
    int64_t count = nvml_num(nvml, "device_count");
    char gpus[32] = "GPU count n/a";
    if (count >= 0)
        snprintf(gpus, sizeof(gpus), "%lld GPU%s", (long long)count, count == 1 ? "" : "s");
    text_kv(t, "NVML", "%s, driver %s, CUDA %s, %s", lib ? lib : "libnvidia-ml.so.1", drv ? drv : "n/a", cuda, gpus);
    json_object *devs = jsonget(nvml, "devices");
    size_t n = devs && json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        char *subj = nvml_subject(d);
        const char *name = jsonget_str(d, "name");
        json_object *mig = jsonget(d, "mig");
        json_object *rows = jsonget(d, "remapped_rows");
        fprintf(t->f, "    %s %s: persistence %s, ECC %s, MIG %s, remap pending %s, InfoROM %s\n", subj ? subj : "?",
                name ? name : "", nvml_onoff(d, "persistence_mode", "on", "off"),
                nvml_onoff(jsonget(d, "ecc_mode"), "current", "on", "off"), nvml_onoff(mig, "current", "on", "off"),
                nvml_onoff(rows, "pending", "yes", "no"), nvml_onoff(d, "inforom_valid", "ok", "corrupted"));
        cuda_nvml_nvlink_text(d, t->f);
        if (t->verbose) {
            json_object *names = jsonget(d, "clocks_event_names");
            size_t k = names && json_object_is_type(names, json_type_array) ? json_object_array_length(names) : 0;
            fprintf(t->f, "      clock events:");
            for (size_t j = 0; j < k; j++)
                fprintf(t->f, " %s", json_object_get_string(json_object_array_get_idx(names, j)));
            fprintf(t->f, "%s\n", k ? "" : " none or n/a");
            fprintf(t->f, "      uncorrectable ECC errors: %lld since the driver loaded, %lld in all\n",
                    (long long)nvml_num(d, "ecc_uncorrected_volatile"),
                    (long long)nvml_num(d, "ecc_uncorrected_aggregate"));
        }
        free(subj);
    }
}
