/* result_pci.c: the pci probe's typed facts: their name tables, and reading them from the section's JSON. */
#include "results/result_pci.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

static const char *const result_pci_kind_tab[] = {
    [RESULT_PCI_KIND_COMPUTE] = "compute-gpu",
    [RESULT_PCI_KIND_DISPLAY] = "display-only",
    [RESULT_PCI_KIND_ACCEL] = "accelerator",
    [RESULT_PCI_KIND_PARAVIRT] = "paravirtual-gpu",
};
const struct gc_names result_pci_kind_names = GC_NAMES(result_pci_kind_tab);

static const char *const result_pci_platform_tab[] = {
    [RESULT_PCI_PLATFORM_BARE] = "bare-metal-or-vm",
    [RESULT_PCI_PLATFORM_WSL1] = "wsl1",
    [RESULT_PCI_PLATFORM_WSL2] = "wsl2",
};
const struct gc_names result_pci_platform_names = GC_NAMES(result_pci_platform_tab);

static void result_pci_free(void *res)
{
    struct result_pci *r = res;
    if (!r)
        return;
    json_object_put(r->devices_json);
    json_object_put(r->nodes_json);
    for (size_t i = 0; i < r->n_devs; i++) {
        struct result_pci_dev *d = &r->devs[i];
        free(d->address);
        free(d->vendor_id);
        free(d->device_id);
        free(d->class_code);
        free(d->driver);
        free(d->vendor_name);
        free(d->device_name);
        json_object_put(d->link);
        for (size_t k = 0; k < d->n_drm; k++)
            free(d->drm[k]);
        free(d->drm);
    }
    free(r->devs);
    for (size_t i = 0; i < r->n_nodes; i++) {
        free(r->nodes[i].path);
        free(r->nodes[i].group);
        free(r->nodes[i].device);
        free(r->nodes[i].mode_text);
    }
    free(r->nodes);
    for (size_t i = 0; i < r->n_modules; i++)
        free(r->modules[i].name);
    free(r->modules);
    for (size_t i = 0; i < r->n_wsl_vendors; i++)
        free(r->wsl_vendors[i]);
    free(r->wsl_vendors);
    free(r->source);
    free(r->container);
    free(r->toolkit_caps);
    free(r->nvidia_kmod_version);
    free(r);
}

/* A string member of O as a new string (NULL when absent or not a string): *OK false on allocation failure. */
static char *result_pci_str(json_object *o, const char *key, bool *ok)
{
    const char *s = jsonget_str(o, key);
    char *c = s ? str_dup(s) : NULL;
    if (s && !c)
        *ok = false;
    return c;
}

/* The strings of the list KEY of O, into *OUT (*N of them); false on allocation failure. */
static bool result_pci_strings(json_object *o, const char *key, char ***out, size_t *n)
{
    size_t len = 0;
    json_object *arr = jsonget_array(o, key, &len);
    if (!arr || !len)
        return true;
    if (!(*out = calloc(len, sizeof(**out))))
        return false;
    for (size_t i = 0; i < len; i++) {
        json_object *v = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(v, json_type_string))
            continue;
        if (!((*out)[*n] = str_dup(json_object_get_string(v))))
            return false;
        (*n)++;
    }
    return true;
}

static bool result_pci_read_dev(struct result_pci_dev *x, json_object *d)
{
    bool ok = result_pci_strings(d, "drm", &x->drm, &x->n_drm);
    x->address = result_pci_str(d, "address", &ok);
    x->vendor_id = result_pci_str(d, "vendor_id", &ok);
    x->device_id = result_pci_str(d, "device_id", &ok);
    x->class_code = result_pci_str(d, "class", &ok);
    x->driver = result_pci_str(d, "driver", &ok);
    x->vendor_name = result_pci_str(d, "vendor_name", &ok);
    x->device_name = result_pci_str(d, "device_name", &ok);
    x->kind = gc_name_parse(&result_pci_kind_names, jsonget_str(d, "kind"));
    char *end = NULL;
    long v = x->vendor_id ? strtol(x->vendor_id, &end, 16) : -1;
    x->vendor = end && !*end && v >= 0 && v != 0xffff && v < 0x1000000 ? (int)v : -1;
    json_object *link = jsonget(d, "link");
    x->link = link ? json_object_get(link) : NULL;
    return ok;
}

static bool result_pci_read_node(struct result_pci_node *x, json_object *n)
{
    bool ok = true;
    x->path = result_pci_str(n, "path", &ok);
    x->group = result_pci_str(n, "group", &ok);
    x->device = result_pci_str(n, "device", &ok);
    x->mode_text = result_pci_str(n, "mode", &ok);
    x->accessible = jsonget_tri(n, "accessible");
    x->present = jsonget_tri(n, "present");
    x->compute = jsonget_tri(n, "compute");
    uint64_t mode = 0;
    const char *ms = jsonget_str(n, "mode");
    x->have_mode = ms && str_to_u64(ms, 8, &mode) == 0 && mode <= 07777;
    x->mode = x->have_mode ? (unsigned)mode : 0;
    x->uid = (long)jsonget_int(n, "uid", -1);
    x->gid = (long)jsonget_int(n, "gid", -1);
    return ok;
}

static bool result_pci_read_modules(struct result_pci *r, json_object *mods)
{
    r->have_modules = json_object_is_type(mods, json_type_object);
    size_t n = r->have_modules ? (size_t)json_object_object_length(mods) : 0;
    if (n && !(r->modules = calloc(n, sizeof(*r->modules))))
        return false;
    if (!n)
        return true;
    json_object_object_foreach(mods, name, m) {
        struct result_pci_module *x = &r->modules[r->n_modules++];
        x->loaded = jsonget_tri(m, "loaded");
        if (!(x->name = str_dup(name)))
            return false;
    }
    return true;
}

/* data.nvidia.kernel_module: files, an empty array (none installed), or blocked_by, a list not empty. */
static bool result_pci_kmod_unloadable(json_object *km)
{
    json_object *files = jsonget(km, "files"), *blocked = jsonget(km, "blocked_by");
    return (files && json_object_is_type(files, json_type_array) && json_object_array_length(files) == 0) ||
           (blocked && json_object_is_type(blocked, json_type_array) && json_object_array_length(blocked) > 0);
}

static bool result_pci_read_platform(struct result_pci *r, json_object *plat)
{
    bool ok = true;
    r->platform = gc_name_parse(&result_pci_platform_names, jsonget_str(plat, "kind"));
    r->container = result_pci_str(plat, "container", &ok);
    r->toolkit_caps = result_pci_str(jsonget(plat, "nvidia_container_toolkit"), "driver_capabilities", &ok);
    r->have_wsl_vendors = jsonget_array(jsonget(plat, "wsl"), "gpu_vendors", &(size_t){0}) != NULL;
    return ok && result_pci_strings(jsonget(plat, "wsl"), "gpu_vendors", &r->wsl_vendors, &r->n_wsl_vendors);
}

struct result_pci *result_pci_read(json_object *data)
{
    struct result_pci *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    size_t n = 0;
    json_object *devs = jsonget_array(data, "devices", &n);
    r->have_devices = devs != NULL;
    r->devices_json = devs ? json_object_get(devs) : NULL;
    if (devs && n && !(r->devs = calloc(n, sizeof(*r->devs))))
        goto fail;
    for (size_t i = 0; devs && i < n; i++) {
        /* Every entry, an odd one too (all unknown): a reader counts the devices as the data lists them. */
        if (!result_pci_read_dev(&r->devs[r->n_devs++], json_object_array_get_idx(devs, i)))
            goto fail;
    }
    json_object *nodes = jsonget_array(data, "nodes", &n);
    r->have_nodes = nodes != NULL;
    r->nodes_json = nodes ? json_object_get(nodes) : NULL;
    if (nodes && n && !(r->nodes = calloc(n, sizeof(*r->nodes))))
        goto fail;
    for (size_t i = 0; nodes && i < n; i++) {
        if (!result_pci_read_node(&r->nodes[r->n_nodes++], json_object_array_get_idx(nodes, i)))
            goto fail;
    }
    bool ok = true;
    r->bus_visible = jsonget_tri(data, "bus_visible");
    r->source = result_pci_str(data, "source", &ok);
    r->nvidia_kmod_version = result_pci_str(jsonget(data, "nvidia"), "kernel_module_version", &ok);
    r->nvidia_kmod_unloadable = result_pci_kmod_unloadable(jsonget(jsonget(data, "nvidia"), "kernel_module"));
    if (!ok || !result_pci_read_platform(r, jsonget(data, "platform")) ||
        !result_pci_read_modules(r, jsonget(data, "modules")))
        goto fail;
    return r;
fail:
    result_pci_free(r);
    return NULL;
}

/* Is member KEY of DATA there, as null or of type T (which the result prints back the same)? */
static bool result_pci_takes(json_object *data, const char *key, enum json_type t)
{
    json_object *v = NULL;
    return json_object_object_get_ex(data, key, &v) && (!v || json_object_is_type(v, t));
}

/* The facts of DATA; the members the result prints leave it, a null keeping each place (keeps_places). */
static void *result_pci_from_json(json_object *data)
{
    struct result_pci *r = result_pci_read(data);
    if (!r)
        return NULL;
    r->have |= (r->devices_json ? RESULT_PCI_HAVE_DEVICES : 0) | (r->nodes_json ? RESULT_PCI_HAVE_NODES : 0) |
               (result_pci_takes(data, "bus_visible", json_type_boolean) ? RESULT_PCI_HAVE_BUS_VISIBLE : 0) |
               (result_pci_takes(data, "source", json_type_string) ? RESULT_PCI_HAVE_SOURCE : 0);
    static const char *const keys[] = {"devices", "nodes", "bus_visible", "source"};
    for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (r->have & (1u << i))
            json_object_object_add(data, keys[i], NULL); /* in place: the member keeps its position */
    return r;
}

/* A string member printed from the struct (TYPED, read from VAL) when VAL is a string or null, else VAL. */
static json_object *result_pci_jstr(json_object *val, const char *typed)
{
    if (val && !json_object_is_type(val, json_type_string))
        return json_object_get(val);
    return typed ? json_object_new_string(typed) : NULL;
}

/* A boolean member from the struct when VAL is a boolean or null, else VAL. */
static json_object *result_pci_jtri(json_object *val, enum gc_tri typed)
{
    return val && !json_object_is_type(val, json_type_boolean) ? json_object_get(val) : gc_tri_json(typed);
}

/* An id member (uid, gid) from the struct when VAL is null or an integer it holds (>= 0), else VAL. */
static json_object *result_pci_jid(json_object *val, long typed)
{
    if (!val)
        return NULL;
    return json_object_is_type(val, json_type_int) && typed >= 0 ? json_object_new_int64(typed) : json_object_get(val);
}

/* Device D printed over its captured object CAP: the typed members from D, the others from CAP, in CAP's order. */
static json_object *result_pci_dev_json(const struct result_pci_dev *d, json_object *cap)
{
    const struct {
        const char *key;
        const char *val;
    } strs[] = {{"address", d->address},   {"vendor_id", d->vendor_id},     {"device_id", d->device_id},
                {"class", d->class_code},  {"driver", d->driver},           {"vendor_name", d->vendor_name},
                {"device_name", d->device_name}};
    json_object *o = json_object_new_object();
    json_object_object_foreach(cap, key, val)
    {
        size_t k = 0;
        while (k < sizeof(strs) / sizeof(strs[0]) && strcmp(key, strs[k].key) != 0)
            k++;
        json_object *v;
        if (k < sizeof(strs) / sizeof(strs[0])) {
            v = result_pci_jstr(val, strs[k].val);
        } else if (strcmp(key, "kind") == 0 && (!val || d->kind >= 0)) {
            v = val ? gc_name_json(&result_pci_kind_names, d->kind) : NULL;
        } else if (strcmp(key, "link") == 0) {
            v = json_object_get(d->link); /* held as captured */
        } else if (strcmp(key, "drm") == 0 && (!val || (json_object_is_type(val, json_type_array) &&
                                                        json_object_array_length(val) == d->n_drm))) {
            v = val ? json_object_new_array() : NULL; /* every entry a string: all typed */
            for (size_t j = 0; v && j < d->n_drm; j++)
                json_object_array_add(v, json_object_new_string(d->drm[j]));
        } else {
            v = json_object_get(val);
        }
        json_object_object_add(o, key, v);
    }
    return o;
}

/* Node N printed over its captured object CAP, likewise. */
static json_object *result_pci_node_json(const struct result_pci_node *n, json_object *cap)
{
    json_object *o = json_object_new_object();
    json_object_object_foreach(cap, key, val)
    {
        json_object *v;
        if (strcmp(key, "path") == 0)
            v = result_pci_jstr(val, n->path);
        else if (strcmp(key, "group") == 0)
            v = result_pci_jstr(val, n->group);
        else if (strcmp(key, "device") == 0)
            v = result_pci_jstr(val, n->device);
        else if (strcmp(key, "mode") == 0)
            v = result_pci_jstr(val, n->mode_text);
        else if (strcmp(key, "present") == 0)
            v = result_pci_jtri(val, n->present);
        else if (strcmp(key, "compute") == 0)
            v = result_pci_jtri(val, n->compute);
        else if (strcmp(key, "accessible") == 0)
            v = result_pci_jtri(val, n->accessible);
        else if (strcmp(key, "uid") == 0)
            v = result_pci_jid(val, n->uid);
        else if (strcmp(key, "gid") == 0)
            v = result_pci_jid(val, n->gid);
        else
            v = json_object_get(val);
        json_object_object_add(o, key, v);
    }
    return o;
}

/* The list ARR printed over: each object entry by ONE (entry I of the typed list), another entry as it is. */
static json_object *result_pci_list_json(json_object *arr, size_t n, const void *typed, size_t size,
                                         json_object *(*one)(const void *x, json_object *cap))
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && i < json_object_array_length(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        json_object_array_add(a, i < n && json_object_is_type(e, json_type_object)
                                     ? one((const char *)typed + i * size, e)
                                     : json_object_get(e));
    }
    return a;
}

static json_object *result_pci_dev_any(const void *x, json_object *cap)
{
    return result_pci_dev_json(x, cap);
}

static json_object *result_pci_node_any(const void *x, json_object *cap)
{
    return result_pci_node_json(x, cap);
}

static json_object *result_pci_to_json(const void *res)
{
    const struct result_pci *r = res;
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    if (r->have & RESULT_PCI_HAVE_DEVICES)
        json_object_object_add(o, "devices", result_pci_list_json(r->devices_json, r->n_devs, r->devs,
                                                                  sizeof(*r->devs), result_pci_dev_any));
    if (r->have & RESULT_PCI_HAVE_NODES)
        json_object_object_add(o, "nodes", result_pci_list_json(r->nodes_json, r->n_nodes, r->nodes,
                                                                sizeof(*r->nodes), result_pci_node_any));
    if (r->have & RESULT_PCI_HAVE_BUS_VISIBLE)
        json_object_object_add(o, "bus_visible", gc_tri_json(r->bus_visible));
    if (r->have & RESULT_PCI_HAVE_SOURCE)
        json_object_object_add(o, "source", r->source ? json_object_new_string(r->source) : NULL);
    return o;
}

const struct report_result_ops result_pci_ops = {
    .section = "pci",
    .to_json = result_pci_to_json,
    .from_json = result_pci_from_json,
    .free = result_pci_free,
    .keeps_places = true,
};

const struct result_pci *result_pci_get(const struct report *r)
{
    return report_result(r, &result_pci_ops);
}

const char *result_pci_status(const struct report *r)
{
    const struct report_section *s = report_find_section(r, result_pci_ops.section);
    return s ? report_status_name(s->status) : "did not run";
}

const struct result_pci_dev *result_pci_dev_at(const struct result_pci *p, const char *addr)
{
    for (size_t i = 0; p && addr && i < p->n_devs; i++)
        if (p->devs[i].address && strcmp(p->devs[i].address, addr) == 0)
            return &p->devs[i];
    return NULL;
}

bool result_pci_dev_computes(const struct result_pci_dev *d)
{
    return d->kind == RESULT_PCI_KIND_COMPUTE || d->kind == RESULT_PCI_KIND_ACCEL;
}

enum gc_tri result_pci_module_loaded(const struct result_pci *p, const char *name)
{
    for (size_t i = 0; p && i < p->n_modules; i++)
        if (strcmp(p->modules[i].name, name) == 0)
            return p->modules[i].loaded;
    return GC_TRI_UNKNOWN;
}

const struct result_pci_node *result_pci_node_at(const struct result_pci *p, const char *path)
{
    for (size_t i = 0; p && path && i < p->n_nodes; i++)
        if (p->nodes[i].path && strcmp(p->nodes[i].path, path) == 0)
            return &p->nodes[i];
    return NULL;
}
