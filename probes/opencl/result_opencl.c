/* result_opencl.c: the opencl probe's typed facts, read from the section's JSON. */
#include "results/result_opencl.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

static void result_opencl_free(void *res)
{
    struct result_opencl *r = res;
    if (!r)
        return;
    for (size_t i = 0; i < r->n_platforms; i++) {
        struct result_opencl_platform *p = &r->platforms[i];
        for (size_t j = 0; j < p->n_devs; j++) {
            free(p->devs[j].name);
            free(p->devs[j].version);
        }
        free(p->devs);
        free(p->name);
        free(p->vendor);
    }
    free(r->platforms);
    json_object_put(r->platforms_json);
    free(r);
}

/* S as a new string, NULL for NULL; *OK false on allocation failure. */
static char *result_opencl_dup(const char *s, bool *ok)
{
    char *c = s ? str_dup(s) : NULL;
    if (s && !c)
        *ok = false;
    return c;
}

static bool result_opencl_read_dev(struct result_opencl_dev *x, json_object *d)
{
    bool ok = true;
    x->name = result_opencl_dup(jsonget_str(d, "name"), &ok);
    x->version = result_opencl_dup(jsonget_str(d, "opencl_version"), &ok);
    size_t n = 0;
    json_object *types = jsonget_array(d, "type", &n);
    for (size_t k = 0; types && k < n; k++) {
        json_object *t = json_object_array_get_idx(types, k);
        const char *s = json_object_is_type(t, json_type_string) ? json_object_get_string(t) : "";
        x->gpu |= strcmp(s, "GPU") == 0;
        x->cpu |= strcmp(s, "CPU") == 0;
        x->accelerator |= strcmp(s, "ACCELERATOR") == 0;
    }
    return ok;
}

static bool result_opencl_read_platform(struct result_opencl_platform *x, json_object *p)
{
    bool ok = true;
    x->name = result_opencl_dup(jsonget_str(p, "name"), &ok);
    x->vendor = result_opencl_dup(jsonget_str(p, "vendor"), &ok);
    size_t n = 0;
    json_object *devs = jsonget_array(p, "devices", &n);
    if (!ok || (devs && n && !(x->devs = calloc(n, sizeof(*x->devs)))))
        return false;
    for (size_t j = 0; devs && j < n; j++)
        if (!result_opencl_read_dev(&x->devs[x->n_devs++], json_object_array_get_idx(devs, j)))
            return false;
    return true;
}

struct result_opencl *result_opencl_read(json_object *data)
{
    struct result_opencl *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    size_t n = 0;
    json_object *plats = jsonget_array(data, "platforms", &n);
    r->platforms_json = plats ? json_object_get(plats) : NULL;
    if (plats && n && !(r->platforms = calloc(n, sizeof(*r->platforms))))
        goto fail;
    for (size_t i = 0; plats && i < n; i++)
        if (!result_opencl_read_platform(&r->platforms[r->n_platforms++], json_object_array_get_idx(plats, i)))
            goto fail;
    return r;
fail:
    result_opencl_free(r);
    return NULL;
}

static void *result_opencl_from_json(json_object *data)
{
    return result_opencl_read(data);
}

const struct report_result_ops result_opencl_ops = {
    .section = "opencl",
    .to_json = NULL,
    .from_json = result_opencl_from_json,
    .free = result_opencl_free,
};

const struct result_opencl *result_opencl_get(const struct report *r)
{
    return report_result(r, &result_opencl_ops);
}
