/* result_vulkan.c: the vulkan probe's typed facts: name tables, JSON both ways, and the compute paths they publish. */
#include "results/result_vulkan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_path.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "probe.h"
#include "strutil.h"

static const char *const result_vulkan_driver_status_tab[] = {
    [RESULT_VULKAN_DRV_OK] = "ok",
    [RESULT_VULKAN_DRV_NO_DEVICE] = "no-device",
    [RESULT_VULKAN_DRV_ABSENT_HARDWARE] = "absent-hardware",
    [RESULT_VULKAN_DRV_UNREADABLE] = "unreadable",
    [RESULT_VULKAN_DRV_MALFORMED] = "malformed",
    [RESULT_VULKAN_DRV_MISSING_LIBRARY] = "missing-library",
    [RESULT_VULKAN_DRV_WRONG_ARCH] = "wrong-arch",
    [RESULT_VULKAN_DRV_INIT_FAILED] = "init-failed",
    [RESULT_VULKAN_DRV_CRASH] = "crash",
    [RESULT_VULKAN_DRV_TIMEOUT] = "timeout",
    [RESULT_VULKAN_DRV_NOT_LOADED] = "not-loaded",
};
const struct gc_names result_vulkan_driver_status_names = GC_NAMES(result_vulkan_driver_status_tab);

static const char *const result_vulkan_smoke_status_tab[] = {
    [RESULT_VULKAN_SMOKE_PASS] = "pass",
    [RESULT_VULKAN_SMOKE_WRONG_RESULT] = "wrong-result",
    [RESULT_VULKAN_SMOKE_RUN_FAILED] = "run-failed",
    [RESULT_VULKAN_SMOKE_CRASH] = "crash",
    [RESULT_VULKAN_SMOKE_TIMEOUT] = "timeout",
    [RESULT_VULKAN_SMOKE_SKIPPED] = "skipped",
};
const struct gc_names result_vulkan_smoke_status_names = GC_NAMES(result_vulkan_smoke_status_tab);

static const char *const result_vulkan_dev_type_tab[] = {
    [RESULT_VULKAN_TYPE_OTHER] = "other",
    [RESULT_VULKAN_TYPE_INTEGRATED_GPU] = "integrated-gpu",
    [RESULT_VULKAN_TYPE_DISCRETE_GPU] = "discrete-gpu",
    [RESULT_VULKAN_TYPE_VIRTUAL_GPU] = "virtual-gpu",
    [RESULT_VULKAN_TYPE_CPU] = "cpu",
};
const struct gc_names result_vulkan_dev_type_names = GC_NAMES(result_vulkan_dev_type_tab);

struct result_vulkan *result_vulkan_new(void)
{
    return calloc(1, sizeof(struct result_vulkan));
}

struct result_vulkan_driver *result_vulkan_add_driver(struct result_vulkan *r)
{
    struct result_vulkan_driver *v = realloc(r->drivers, (r->n_drivers + 1) * sizeof(*v));
    if (!v)
        return NULL;
    r->drivers = v;
    struct result_vulkan_driver *d = &v[r->n_drivers++];
    memset(d, 0, sizeof(*d));
    d->status = -1;
    return d;
}

struct result_vulkan_dev *result_vulkan_add_dev(struct result_vulkan *r)
{
    struct result_vulkan_dev *v = realloc(r->devs, (r->n_devs + 1) * sizeof(*v));
    if (!v)
        return NULL;
    r->devs = v;
    struct result_vulkan_dev *d = &v[r->n_devs++];
    memset(d, 0, sizeof(*d));
    d->index = -1;
    d->type = -1;
    d->vendor_id = d->device_id = d->subgroup_size = d->driver_id = -1;
    d->smoke = -1;
    return d;
}

static void result_vulkan_free(void *res)
{
    struct result_vulkan *r = res;
    if (!r)
        return;
    for (size_t i = 0; i < r->n_drivers; i++) {
        struct result_vulkan_driver *d = &r->drivers[i];
        free(d->manifest);
        free(d->library);
        free(d->api_version);
        free(d->detail);
    }
    for (size_t i = 0; i < r->n_devs; i++) {
        struct result_vulkan_dev *d = &r->devs[i];
        free(d->manifest);
        free(d->name);
        free(d->api_version);
        free(d->driver_version);
        free(d->driver_name);
        free(d->driver_info);
        free(d->pci_address);
        json_object_put(d->queue_families);
        json_object_put(d->memory_heaps);
        json_object_put(d->smoke_json);
    }
    free(r->drivers);
    free(r->devs);
    free(r->loader);
    free(r);
}

/* ---- to JSON ---- */

static json_object *result_vulkan_int(int64_t v)
{
    return v >= 0 ? json_object_new_int64(v) : NULL;
}

static json_object *result_vulkan_tri(enum gc_tri t)
{
    return t == GC_TRI_UNKNOWN ? NULL : json_object_new_boolean(t == GC_TRI_YES);
}

static json_object *result_vulkan_dev_json(const struct result_vulkan_dev *d)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "driver", jsonstr_or_null(d->manifest));
    json_object_object_add(o, "index", result_vulkan_int(d->index));
    json_object_object_add(o, "name", jsonstr_or_null(d->name));
    json_object_object_add(o, "type", gc_name_json(&result_vulkan_dev_type_names, d->type));
    json_object_object_add(o, "api_version", jsonstr_or_null(d->api_version));
    json_object_object_add(o, "driver_version", jsonstr_or_null(d->driver_version));
    json_object_object_add(o, "vendor_id", result_vulkan_int(d->vendor_id));
    json_object_object_add(o, "device_id", result_vulkan_int(d->device_id));
    json_object_object_add(o, "driver_id", result_vulkan_int(d->driver_id));
    json_object_object_add(o, "driver_name", jsonstr_or_null(d->driver_name));
    json_object_object_add(o, "driver_info", jsonstr_or_null(d->driver_info));
    json_object_object_add(o, "pci_address", jsonstr_or_null(d->pci_address));
    json_object_object_add(o, "on_pci_bus", result_vulkan_tri(d->on_pci_bus));
    json_object_object_add(o, "subgroup_size", result_vulkan_int(d->subgroup_size));
    json_object_object_add(o, "storage_16bit", result_vulkan_tri(d->storage_16bit));
    json_object_object_add(o, "shader_float16", result_vulkan_tri(d->shader_float16));
    json_object_object_add(o, "shader_int8", result_vulkan_tri(d->shader_int8));
    json_object_object_add(o, "queue_families", json_object_get(d->queue_families));
    json_object_object_add(o, "memory_heaps", json_object_get(d->memory_heaps));
    json_object_object_add(o, "smoke", json_object_get(d->smoke_json));
    return o;
}

static json_object *result_vulkan_to_json(const void *res)
{
    const struct result_vulkan *r = res;
    json_object *o = json_object_new_object(), *drivers = json_object_new_array(), *devs = json_object_new_array();
    if (!o || !drivers || !devs) {
        json_object_put(o);
        json_object_put(drivers);
        json_object_put(devs);
        return NULL;
    }
    json_object_object_add(o, "loader", jsonstr_or_null(r->loader));
    for (size_t i = 0; i < r->n_drivers; i++) {
        const struct result_vulkan_driver *d = &r->drivers[i];
        json_object *x = json_object_new_object();
        json_object_object_add(x, "manifest", jsonstr_or_null(d->manifest));
        json_object_object_add(x, "library", jsonstr_or_null(d->library));
        json_object_object_add(x, "api_version", jsonstr_or_null(d->api_version));
        json_object_object_add(x, "status", gc_name_json(&result_vulkan_driver_status_names, d->status));
        json_object_object_add(x, "detail", jsonstr_or_null(d->detail));
        json_object_array_add(drivers, x);
    }
    json_object_object_add(o, "drivers", drivers);
    for (size_t i = 0; i < r->n_devs; i++)
        json_object_array_add(devs, result_vulkan_dev_json(&r->devs[i]));
    json_object_object_add(o, "devices", devs);
    return o;
}

/* ---- from JSON (lenient: a member of another shape stays unknown) ---- */

static char *result_vulkan_str(json_object *o, const char *key)
{
    return str_dup(jsonget_str(o, key));
}

static int64_t result_vulkan_nonneg(json_object *o, const char *key)
{
    int64_t v;
    return jsonget_int_ex(o, key, &v) && v >= 0 ? v : -1;
}

static json_object *result_vulkan_arr(json_object *o, const char *key)
{
    json_object *v = jsonget(o, key);
    return v && json_object_is_type(v, json_type_array) ? json_object_get(v) : NULL;
}

void result_vulkan_dev_read(struct result_vulkan_dev *d, json_object *o)
{
    d->manifest = result_vulkan_str(o, "driver");
    int64_t idx = result_vulkan_nonneg(o, "index");
    d->index = idx >= 0 && idx < 65536 ? (int)idx : -1;
    d->name = result_vulkan_str(o, "name");
    d->type = gc_name_parse(&result_vulkan_dev_type_names, jsonget_str(o, "type"));
    d->api_version = result_vulkan_str(o, "api_version");
    d->driver_version = result_vulkan_str(o, "driver_version");
    d->vendor_id = result_vulkan_nonneg(o, "vendor_id");
    d->device_id = result_vulkan_nonneg(o, "device_id");
    d->driver_id = result_vulkan_nonneg(o, "driver_id");
    d->driver_name = result_vulkan_str(o, "driver_name");
    d->driver_info = result_vulkan_str(o, "driver_info");
    d->pci_address = result_vulkan_str(o, "pci_address");
    d->on_pci_bus = jsonget_tri(o, "on_pci_bus");
    d->subgroup_size = result_vulkan_nonneg(o, "subgroup_size");
    d->storage_16bit = jsonget_tri(o, "storage_16bit");
    d->shader_float16 = jsonget_tri(o, "shader_float16");
    d->shader_int8 = jsonget_tri(o, "shader_int8");
    d->queue_families = result_vulkan_arr(o, "queue_families");
    d->memory_heaps = result_vulkan_arr(o, "memory_heaps");
    json_object *s = jsonget_object(o, "smoke");
    d->smoke_json = json_object_get(s);
    d->smoke = s ? gc_name_parse(&result_vulkan_smoke_status_names, jsonget_str(s, "status")) : -1;
}

static void *result_vulkan_from_json(json_object *data)
{
    struct result_vulkan *r = result_vulkan_new();
    if (!r)
        return NULL;
    r->loader = result_vulkan_str(data, "loader");
    size_t n = 0;
    json_object *drivers = jsonget_array(data, "drivers", &n);
    for (size_t i = 0; drivers && i < n; i++) {
        json_object *x = json_object_array_get_idx(drivers, i);
        struct result_vulkan_driver *d = result_vulkan_add_driver(r);
        if (!d)
            break;
        d->manifest = result_vulkan_str(x, "manifest");
        d->library = result_vulkan_str(x, "library");
        d->api_version = result_vulkan_str(x, "api_version");
        d->status = gc_name_parse(&result_vulkan_driver_status_names, jsonget_str(x, "status"));
        d->detail = result_vulkan_str(x, "detail");
    }
    json_object *devs = jsonget_array(data, "devices", &n);
    for (size_t i = 0; devs && i < n; i++) {
        struct result_vulkan_dev *d = result_vulkan_add_dev(r);
        if (!d)
            break;
        result_vulkan_dev_read(d, json_object_array_get_idx(devs, i));
    }
    json_object_object_del(data, "loader");
    json_object_object_del(data, "drivers");
    json_object_object_del(data, "devices");
    return r;
}

/* ---- compute paths ---- */

static void result_vulkan_paths(const void *res, const struct probe *owner, struct compute_paths *out)
{
    const struct result_vulkan *r = res;
    for (size_t i = 0; i < r->n_devs; i++) {
        const struct result_vulkan_dev *d = &r->devs[i];
        enum compute_proof proof = d->smoke == RESULT_VULKAN_SMOKE_PASS ? COMPUTE_PASSED
                                   : d->smoke < 0 || d->smoke == RESULT_VULKAN_SMOKE_SKIPPED ? COMPUTE_UNTESTED
                                                                                             : COMPUTE_FAILED;
        struct compute_path p = {.api = owner->compute_api, .api_label = owner->compute_api_label,
                                 .pci_address = d->pci_address, .name = d->name,
                                 .gpu = d->type != RESULT_VULKAN_TYPE_CPU && d->type >= 0, .proof = proof,
                                 .measurements = proof == COMPUTE_PASSED ? d->smoke_json : NULL};
        snprintf(p.device, sizeof(p.device), "%zu", i);
        compute_paths_add(out, &p);
    }
}

const struct report_result_ops result_vulkan_ops = {
    .section = "vulkan",
    .to_json = result_vulkan_to_json,
    .from_json = result_vulkan_from_json,
    .free = result_vulkan_free,
    .paths = result_vulkan_paths,
};

const struct result_vulkan *result_vulkan_get(const struct report *r)
{
    return report_result(r, &result_vulkan_ops);
}
