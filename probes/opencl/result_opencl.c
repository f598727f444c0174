/* result_opencl.c: the opencl probe's typed facts, read from the section's JSON. */
#include "results/result_opencl.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

void result_opencl_free(struct result_opencl *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_platforms; i++) {
        struct result_opencl_platform *p = &r->platforms[i];
        for (size_t j = 0; j < p->n_devs; j++) {
            for (size_t k = 0; k < p->devs[j].n_types; k++)
                free(p->devs[j].types[k]);
            free(p->devs[j].types);
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

/* Member KEY of O as a new string (NULL for null or another shape); BIT into *HAVE when it is a string or
 * null, which prints back the same. *OK false on allocation failure. */
static char *result_opencl_str(json_object *o, const char *key, unsigned bit, unsigned *have, bool *ok)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || (v && !json_object_is_type(v, json_type_string)))
        return NULL;
    *have |= bit;
    char *c = v ? str_dup(json_object_get_string(v)) : NULL;
    if (v && !c)
        *ok = false;
    return c;
}

/* D's "type": the list of names when each is a string (or null), and the GPU, CPU, accelerator facts. */
static bool result_opencl_read_types(struct result_opencl_dev *x, json_object *d)
{
    json_object *v = NULL;
    bool present = json_object_object_get_ex(d, "type", &v);
    size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
    bool all_str = json_object_is_type(v, json_type_array);
    for (size_t k = 0; k < n; k++) {
        json_object *t = json_object_array_get_idx(v, k);
        const char *s = json_object_is_type(t, json_type_string) ? json_object_get_string(t) : NULL;
        all_str = all_str && s;
        x->gpu |= s && strcmp(s, "GPU") == 0;
        x->cpu |= s && strcmp(s, "CPU") == 0;
        x->accelerator |= s && strcmp(s, "ACCELERATOR") == 0;
    }
    if (!present || (v && !all_str))
        return true; /* absent, or of another shape: prints from the captured object */
    x->have |= RESULT_OPENCL_HAVE_TYPE;
    x->types_known = v != NULL;
    if (n && !(x->types = calloc(n, sizeof(*x->types))))
        return false;
    for (size_t k = 0; k < n; k++)
        if (!(x->types[x->n_types++] = str_dup(json_object_get_string(json_object_array_get_idx(v, k)))))
            return false;
    return true;
}

static bool result_opencl_read_dev(struct result_opencl_dev *x, json_object *d)
{
    bool ok = true;
    x->name = result_opencl_str(d, "name", RESULT_OPENCL_HAVE_NAME, &x->have, &ok);
    x->version = result_opencl_str(d, "opencl_version", RESULT_OPENCL_HAVE_VERSION, &x->have, &ok);
    return result_opencl_read_types(x, d) && ok;
}

static bool result_opencl_read_platform(struct result_opencl_platform *x, json_object *p)
{
    bool ok = true;
    x->name = result_opencl_str(p, "name", RESULT_OPENCL_HAVE_NAME, &x->have, &ok);
    x->vendor = result_opencl_str(p, "vendor", RESULT_OPENCL_HAVE_VENDOR, &x->have, &ok);
    size_t n = 0;
    json_object *devs = jsonget_array(p, "devices", &n);
    if (devs)
        x->have |= RESULT_OPENCL_HAVE_DEVICES;
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
    json_object *en = NULL;
    r->none_loaded = json_object_object_get_ex(data, "enumeration", &en) && jsonget_str(en, "not_loaded") != NULL;
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

/* The facts of DATA; data.platforms leaves it for the result, a null keeping its place (keeps_places). */
static void *result_opencl_from_json(json_object *data)
{
    struct result_opencl *r = result_opencl_read(data);
    if (r && r->platforms_json) {
        r->have_platforms = true;
        json_object_object_add(data, "platforms", NULL);
    }
    return r;
}

static json_object *result_opencl_jstr(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* Device D printed over its captured object CAP: the typed members from D, the others from CAP, in CAP's order. */
static json_object *result_opencl_dev_json(const struct result_opencl_dev *d, json_object *cap)
{
    json_object *o = json_object_new_object();
    json_object_object_foreach(cap, key, val)
    {
        json_object *v;
        if (strcmp(key, "name") == 0 && (d->have & RESULT_OPENCL_HAVE_NAME))
            v = result_opencl_jstr(d->name);
        else if (strcmp(key, "opencl_version") == 0 && (d->have & RESULT_OPENCL_HAVE_VERSION))
            v = result_opencl_jstr(d->version);
        else if (strcmp(key, "type") == 0 && (d->have & RESULT_OPENCL_HAVE_TYPE)) {
            v = d->types_known ? json_object_new_array() : NULL;
            for (size_t k = 0; v && k < d->n_types; k++)
                json_object_array_add(v, json_object_new_string(d->types[k]));
        } else
            v = json_object_get(val);
        json_object_object_add(o, key, v);
    }
    return o;
}

/* Platform P printed over its captured object CAP, likewise; its devices over CAP's "devices". */
static json_object *result_opencl_platform_json(const struct result_opencl_platform *p, json_object *cap)
{
    json_object *o = json_object_new_object();
    json_object_object_foreach(cap, key, val)
    {
        json_object *v;
        if (strcmp(key, "name") == 0 && (p->have & RESULT_OPENCL_HAVE_NAME))
            v = result_opencl_jstr(p->name);
        else if (strcmp(key, "vendor") == 0 && (p->have & RESULT_OPENCL_HAVE_VENDOR))
            v = result_opencl_jstr(p->vendor);
        else if (strcmp(key, "devices") == 0 && (p->have & RESULT_OPENCL_HAVE_DEVICES)) {
            v = json_object_new_array();
            for (size_t j = 0; v && j < json_object_array_length(val); j++) {
                json_object *e = json_object_array_get_idx(val, j);
                json_object_array_add(v, j < p->n_devs && json_object_is_type(e, json_type_object)
                                             ? result_opencl_dev_json(&p->devs[j], e)
                                             : json_object_get(e));
            }
        } else
            v = json_object_get(val);
        json_object_object_add(o, key, v);
    }
    return o;
}

static json_object *result_opencl_to_json(const void *res)
{
    const struct result_opencl *r = res;
    json_object *o = json_object_new_object();
    if (!o || !r->have_platforms)
        return o;
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && i < json_object_array_length(r->platforms_json); i++) {
        json_object *e = json_object_array_get_idx(r->platforms_json, i);
        json_object_array_add(a, i < r->n_platforms && json_object_is_type(e, json_type_object)
                                     ? result_opencl_platform_json(&r->platforms[i], e)
                                     : json_object_get(e));
    }
    json_object_object_add(o, "platforms", a);
    return o;
}

static void result_opencl_free_any(void *res)
{
    result_opencl_free(res);
}

const struct report_result_ops result_opencl_ops = {
    .section = "opencl",
    .to_json = result_opencl_to_json,
    .from_json = result_opencl_from_json,
    .free = result_opencl_free_any,
    .keeps_places = true,
};

const struct result_opencl *result_opencl_get(const struct report *r)
{
    return report_result(r, &result_opencl_ops);
}
