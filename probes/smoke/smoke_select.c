/* smoke_select.c: which OpenCL devices the smoke test runs on (the opencl section's list, or its own). */
#include "smoke_select.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

void smoke_inventory_free(struct smoke_inventory *inv)
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
static int smoke_index(json_object *o, const char *key, int fallback)
{
    int64_t i = jsonget_int(o, key, -1);
    return i >= 0 && i <= 65535 ? (int)i : fallback;
}

static char *smoke_string(json_object *o, const char *key)
{
    return str_sanitize(str_dup(jsonget_str(o, key)));
}

/* The type as an array of sanitised names (a single string is accepted too), or NULL. */
static json_object *smoke_type(json_object *o, bool *is_gpu)
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

int smoke_inventory_from_platforms(struct smoke_inventory *inv, json_object *platforms)
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
            smoke_inventory_free(inv);
            return -1;
        }
        int pi = smoke_index(po, "index", (int)p);
        inv->platform_indices[inv->n_platforms++] = pi;
        size_t nd = json_object_array_length(devs);
        if (nd == 0)
            continue;
        struct smoke_target *t = realloc(inv->targets, (inv->n_targets + nd) * sizeof(*t));
        if (!t) {
            smoke_inventory_free(inv);
            return -1;
        }
        inv->targets = t;
        for (size_t d = 0; d < nd; d++) {
            json_object *dobj = json_object_array_get_idx(devs, d);
            if (!json_object_is_type(dobj, json_type_object)) {
                smoke_inventory_free(inv);
                return -1;
            }
            struct smoke_target *x = &inv->targets[inv->n_targets++];
            memset(x, 0, sizeof(*x));
            x->platform = pi;
            x->device = smoke_index(dobj, "index", (int)d);
            x->name = smoke_string(dobj, "name");
            x->pci_address = smoke_string(dobj, "pci_address");
            x->type = smoke_type(dobj, &x->is_gpu);
            x->run = true;
        }
    }
    return 0;
}

int smoke_inventory_select(struct smoke_inventory *inv, int dev_platform, int dev_index, bool gpu_only, char **err)
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
            struct smoke_target *t = &inv->targets[i];
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

char *smoke_target_subject(const struct smoke_target *t)
{
    if (t->pci_address)
        return str_dup(t->pci_address);
    if (t->name)
        return str_printf("%d:%d %s", t->platform, t->device, t->name);
    return str_printf("%d:%d", t->platform, t->device);
}
