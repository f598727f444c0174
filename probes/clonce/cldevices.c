/* cldevices.c: the OpenCL devices the smoke test and bench run on: the opencl section's list, or an enumeration of its own. */
#include "cldevices.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clapi.h"
#include "clquery.h"
#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "probe.h"
#include "report.h"
#include "strutil.h"
#include "results/result_opencl.h"

void cldev_inventory_free(struct cldev_inventory *inv)
{
    for (size_t i = 0; i < inv->n_targets; i++) {
        free(inv->targets[i].name);
        free(inv->targets[i].pci_address);
        json_object_put(inv->targets[i].type);
    }
    free(inv->targets);
    free(inv->platform_indices);
    memset(inv, 0, sizeof(*inv));
}

/* The integer at KEY of O, or FALLBACK when absent or not an integer in [0, 65535]. */
static int cldev_index(json_object *o, const char *key, int fallback)
{
    int64_t i = jsonget_int(o, key, -1);
    return i >= 0 && i <= 65535 ? (int)i : fallback;
}

static char *cldev_string(json_object *o, const char *key)
{
    return str_sanitize(str_dup(jsonget_str(o, key)));
}

/* The type as an array of sanitised names (a single string is accepted too), or NULL. */
static json_object *cldev_type(json_object *o, bool *is_gpu)
{
    json_object *v = NULL;
    *is_gpu = false;
    if (!json_object_object_get_ex(o, "type", &v) || !v)
        return NULL;
    json_object *out = json_object_new_array();
    size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v;
        if (!json_object_is_type(e, json_type_string))
            continue;
        char *s = str_sanitize(str_dup(json_object_get_string(e)));
        if (!s)
            continue;
        if (strcmp(s, "GPU") == 0 || strcmp(s, "CL_DEVICE_TYPE_GPU") == 0)
            *is_gpu = true;
        json_object_array_add(out, json_object_new_string(s));
        free(s);
    }
    return out;
}

int cldev_inventory_from_platforms(struct cldev_inventory *inv, json_object *platforms)
{
    memset(inv, 0, sizeof(*inv));
    if (!json_object_is_type(platforms, json_type_array))
        return -1;
    size_t np = json_object_array_length(platforms);
    inv->platform_indices = calloc(np ? np : 1, sizeof(int));
    if (!inv->platform_indices)
        return -1;
    for (size_t p = 0; p < np; p++) {
        json_object *po = json_object_array_get_idx(platforms, p);
        json_object *devs = NULL;
        if (!json_object_is_type(po, json_type_object) || !json_object_object_get_ex(po, "devices", &devs) ||
            !json_object_is_type(devs, json_type_array)) {
            cldev_inventory_free(inv);
            return -1;
        }
        int pi = cldev_index(po, "index", (int)p);
        inv->platform_indices[inv->n_platforms++] = pi;
        size_t nd = json_object_array_length(devs);
        if (nd == 0)
            continue;
        struct cldev_target *t = realloc(inv->targets, (inv->n_targets + nd) * sizeof(*t));
        if (!t) {
            cldev_inventory_free(inv);
            return -1;
        }
        inv->targets = t;
        for (size_t d = 0; d < nd; d++) {
            json_object *dobj = json_object_array_get_idx(devs, d);
            if (!json_object_is_type(dobj, json_type_object)) {
                cldev_inventory_free(inv);
                return -1;
            }
            struct cldev_target *x = &inv->targets[inv->n_targets++];
            memset(x, 0, sizeof(*x));
            x->platform = pi;
            x->device = cldev_index(dobj, "index", (int)d);
            x->name = cldev_string(dobj, "name");
            x->pci_address = cldev_string(dobj, "pci_address");
            x->type = cldev_type(dobj, &x->is_gpu);
            x->run = true;
        }
    }
    return 0;
}

int cldev_inventory_select(struct cldev_inventory *inv, int dev_platform, int dev_index, bool gpu_only, char **err)
{
    *err = NULL;
    if (dev_platform >= 0) {
        bool have_platform = false;
        for (size_t i = 0; i < inv->n_platforms; i++)
            have_platform |= inv->platform_indices[i] == dev_platform;
        if (!have_platform) {
            *err = str_printf("--device %d: there is no OpenCL platform %d (%zu platform%s found)", dev_platform,
                              dev_platform, inv->n_platforms, inv->n_platforms == 1 ? "" : "s");
            return -1;
        }
        size_t kept = 0, on_platform = 0;
        for (size_t i = 0; i < inv->n_targets; i++) {
            struct cldev_target *t = &inv->targets[i];
            bool keep = t->platform == dev_platform && (dev_index < 0 || t->device == dev_index);
            on_platform += t->platform == dev_platform;
            if (keep) {
                inv->targets[kept++] = *t;
            } else {
                free(t->name);
                free(t->pci_address);
                json_object_put(t->type);
            }
        }
        inv->n_targets = kept;
        if (dev_index >= 0 && kept == 0) {
            *err = str_printf("--device %d:%d: OpenCL platform %d has no device %d (%zu device%s)", dev_platform,
                              dev_index, dev_platform, dev_index, on_platform, on_platform == 1 ? "" : "s");
            return -1;
        }
    }
    if (gpu_only)
        for (size_t i = 0; i < inv->n_targets; i++)
            if (!inv->targets[i].is_gpu) {
                inv->targets[i].run = false;
                inv->targets[i].skip_reason = "not a GPU (--smoke=gpu)";
            }
    return 0;
}

char *cldev_target_subject(const struct cldev_target *t)
{
    if (t->pci_address)
        return str_dup(t->pci_address);
    if (t->name)
        return str_printf("%d:%d %s", t->platform, t->device, t->name);
    return str_printf("%d:%d", t->platform, t->device);
}

/* ---- when the opencl section is not there: an enumeration of our own, in an isolated child ---- */

json_object *cldev_enumerate_child(void *arg)
{
    (void)arg;
    json_object *o = json_object_new_object();
    struct clapi api;
    char err[512];
    if (clapi_open(&api, NULL, err, sizeof(err)) < 0) {
        json_object_object_add(o, "loader_error", json_object_new_string(err));
        return o;
    }
    cl_platform_id *pids = NULL;
    cl_uint np = 0;
    cl_int e = clquery_none_is_empty(clquery_platform_ids(&api, &pids, &np));
    if (e != CL_SUCCESS) {
        json_object_object_add(o, "error", clapi_error_json("clGetPlatformIDs", e, true));
        return o;
    }
    json_object *plats = json_object_new_array();
    for (cl_uint p = 0; p < np; p++) {
        json_object *po = json_object_new_object();
        char *pname = clquery_platform_str(&api, pids[p], CL_PLATFORM_NAME, NULL);
        json_object_object_add(po, "index", json_object_new_int((int)p));
        json_object_object_add(po, "name", jsonstr_or_null(pname));
        free(pname);
        json_object *devs = json_object_new_array();
        cl_device_id *dids = NULL;
        cl_uint nd = 0;
        e = clquery_none_is_empty(clquery_device_ids(&api, pids[p], CL_DEVICE_TYPE_ALL, &dids, &nd));
        if (e != CL_SUCCESS)
            json_object_object_add(po, "devices_error", clapi_error_json("clGetDeviceIDs", e, true));
        for (cl_uint d = 0; d < nd; d++) {
            json_object *dobj = json_object_new_object();
            char *name = clquery_device_str(&api, dids[d], CL_DEVICE_NAME, NULL);
            char *exts = clquery_device_str(&api, dids[d], CL_DEVICE_EXTENSIONS, NULL);
            uint64_t type = 0;
            bool have_type = clquery_device_uint(&api, dids[d], CL_DEVICE_TYPE, sizeof(cl_device_type), &type) == CL_SUCCESS;
            char pci[CLQUERY_PCI_LEN];
            clquery_device_pci(&api, dids[d], exts, pci);
            json_object_object_add(dobj, "index", json_object_new_int((int)d));
            json_object_object_add(dobj, "name", jsonstr_or_null(name));
            json_object_object_add(dobj, "type", have_type ? clquery_type_json(type) : NULL);
            json_object_object_add(dobj, "pci_address", jsonstr_or_null(*pci ? pci : NULL));
            json_object_array_add(devs, dobj);
            free(name);
            free(exts);
        }
        free(dids);
        json_object_object_add(po, "devices", devs);
        json_object_array_add(plats, po);
    }
    free(pids);
    json_object_object_add(o, "platforms", plats);
    /* No clapi_close: the process ends now; unloading a driver only gives it a chance to crash. */
    return o;
}

int cldev_pick_devices(struct probe_ctx *ctx, struct report_section *sec, struct cldev_inventory *inv,
                       const char **source, bool gpu_only)
{
    memset(inv, 0, sizeof(*inv));
    if (cldev_find_devices(ctx, sec, inv, source) < 0)
        return 0;
    char *err = NULL;
    if (cldev_inventory_select(inv, ctx->opts->device_platform, ctx->opts->device_index, gpu_only, &err) < 0) {
        cldev_inventory_free(inv);
        ctx->error = err;
        return -1;
    }
    return 1;
}

int cldev_find_devices(struct probe_ctx *ctx, struct report_section *sec, struct cldev_inventory *inv,
                              const char **source)
{
    const struct result_opencl *cl = result_opencl_get(ctx->report);
    if (cl && cl->platforms_json && cldev_inventory_from_platforms(inv, cl->platforms_json) == 0) {
        *source = "opencl";
        return 0;
    }
    struct isolate_result res;
    probe_isolate_run(ctx, cldev_enumerate_child, NULL, &res);
    int rc = -1;
    json_object *v = res.value;
    const char *loader = jsonget_str(v, "loader_error");
    json_object *err = jsonget(v, "error");
    if (res.budget_spent) {
        report_section_set_status(sec, REPORT_STATUS_SKIPPED, "%s", res.detail);
    } else if (res.status != ISOLATE_OK) {
        report_section_set_status(sec, REPORT_STATUS_FAILED, "enumerating the OpenCL devices: %s",
                                  res.detail ? res.detail : isolate_status_name(res.status));
    } else if (loader) {
        char *msg = str_sanitize(str_dup(loader));
        report_section_set_status(sec, REPORT_STATUS_SKIPPED, "no usable OpenCL loader: %s", msg ? msg : "");
        free(msg);
    } else if (err) {
        const char *name = jsonget_str(err, "name");
        report_section_set_status(sec, REPORT_STATUS_FAILED, "enumerating the OpenCL devices: %s failed: %s",
                                  jsonget_str(err, "call") ? jsonget_str(err, "call") : "?", name ? name : "?");
    } else if (cldev_inventory_from_platforms(inv, jsonget(v, "platforms")) == 0) {
        *source = "enumeration";
        rc = 0;
    } else {
        report_section_set_status(sec, REPORT_STATUS_FAILED, "enumerating the OpenCL devices: unexpected result");
    }
    isolate_result_clear(&res);
    return rc;
}
