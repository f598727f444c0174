/* cuda_text.c: the cuda probe's details for people (driver, library, devices): walks the section's JSON only. */
#include <stdint.h>
#include <string.h>

#include "cuda_driver.h"
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
