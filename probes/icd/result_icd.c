/* result_icd.c: the icd probe's typed facts, read from the section's JSON. */
#include "results/result_icd.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

/* A copy of string member KEY of O into *OUT (NULL when absent or not a string); -1 on allocation failure. */
static int result_icd_str(json_object *o, const char *key, char **out)
{
    const char *s = jsonget_str(o, key);
    *out = s ? str_dup(s) : NULL;
    return s && !*out ? -1 : 0;
}

static int64_t result_icd_count(json_object *o, const char *key)
{
    int64_t v = -1;
    return jsonget_int_ex(o, key, &v) && v >= 0 ? v : -1;
}

static bool result_icd_bool(json_object *o, const char *key)
{
    return jsonget_tri(o, key) == GC_TRI_YES;
}

static void result_icd_listing_free(struct result_icd_listing *l)
{
    for (size_t i = 0; i < l->n_platforms; i++) {
        struct result_icd_platform *p = &l->platforms[i];
        free(p->name);
        free(p->vendor);
        free(p->version);
        free(p->icd_suffix);
    }
    free(l->platforms);
    free(l->status);
    free(l->detail);
}

/* The status, detail, platforms and time of O (an icds[] entry or combined). */
static int result_icd_listing_read(json_object *o, struct result_icd_listing *l)
{
    l->elapsed_ms = -1;
    jsonget_num(o, "elapsed_ms", &l->elapsed_ms);
    if (result_icd_str(o, "status", &l->status) < 0 || result_icd_str(o, "detail", &l->detail) < 0)
        return -1;
    size_t n = 0;
    json_object *ps = jsonget_array(o, "platforms", &n);
    if (n && !(l->platforms = calloc(n, sizeof(*l->platforms))))
        return -1;
    for (size_t i = 0; ps && i < n; i++) {
        json_object *p = json_object_array_get_idx(ps, i);
        if (!json_object_is_type(p, json_type_object))
            continue;
        struct result_icd_platform *t = &l->platforms[l->n_platforms++];
        t->devices = result_icd_count(p, "devices");
        t->gpu_devices = result_icd_count(p, "gpu_devices");
        t->accepted = jsonget_tri(p, "accepted");
        t->has_khr_icd = jsonget_tri(p, "has_khr_icd");
        if (result_icd_str(p, "name", &t->name) < 0 || result_icd_str(p, "vendor", &t->vendor) < 0 ||
            result_icd_str(p, "version", &t->version) < 0 || result_icd_str(p, "icd_suffix", &t->icd_suffix) < 0)
            return -1;
    }
    return 0;
}

static enum vendor_hw result_icd_hw(const char *s)
{
    static const enum vendor_hw all[] = {VENDOR_HW_NOT_NEEDED, VENDOR_HW_PRESENT, VENDOR_HW_ABSENT};
    for (size_t i = 0; s && i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(s, vendor_hw_name(all[i])) == 0)
            return all[i];
    return VENDOR_HW_UNKNOWN;
}

static int result_icd_file_read(json_object *o, struct result_icd_file *f)
{
    if (result_icd_str(o, "file", &f->file) < 0 || result_icd_str(o, "source", &f->source) < 0 ||
        result_icd_str(o, "library", &f->library) < 0 || result_icd_str(o, "resolved", &f->resolved) < 0 ||
        result_icd_str(o, "found_via", &f->found_via) < 0 || result_icd_str(o, "vendor", &f->vendor) < 0)
        return -1;
    json_object *d = jsonget_object(o, "driver");
    f->hardware = VENDOR_HW_UNKNOWN;
    if (d) {
        f->has_driver = true;
        f->hardware = result_icd_hw(jsonget_str(d, "hardware"));
        f->absent_hardware = result_icd_bool(d, "absent_hardware");
        if (result_icd_str(d, "name", &f->driver_name) < 0 || result_icd_str(d, "title", &f->driver_title) < 0 ||
            result_icd_str(d, "needs", &f->driver_needs) < 0 ||
            result_icd_str(d, "hardware_detail", &f->hardware_detail) < 0)
            return -1;
    }
    return result_icd_listing_read(o, &f->run);
}

static int result_icd_loaders_read(json_object *data, struct result_icd *r)
{
    size_t n = 0;
    json_object *ls = jsonget_array(data, "loaders", &n);
    if (n && !(r->loaders = calloc(n, sizeof(*r->loaders))))
        return -1;
    for (size_t i = 0; ls && i < n; i++) {
        json_object *o = json_object_array_get_idx(ls, i);
        if (!json_object_is_type(o, json_type_object))
            continue;
        struct result_icd_loader_file *l = &r->loaders[r->n_loaders++];
        l->searched = result_icd_bool(o, "searched");
        l->wins = result_icd_bool(o, "wins");
        l->loadable = result_icd_bool(o, "loadable");
        if (result_icd_str(o, "path", &l->path) < 0 || result_icd_str(o, "resolved", &l->resolved) < 0 ||
            result_icd_str(o, "source", &l->source) < 0 || result_icd_str(o, "name", &l->name) < 0 ||
            result_icd_str(o, "version", &l->version) < 0 || result_icd_str(o, "kind", &l->kind) < 0)
            return -1;
    }
    return 0;
}

static int result_icd_lists_read(json_object *data, struct result_icd *r)
{
    size_t n = 0;
    json_object *icds = jsonget_array(data, "icds", &n);
    if (n && !(r->icds = calloc(n, sizeof(*r->icds))))
        return -1;
    for (size_t i = 0; icds && i < n; i++) {
        json_object *o = json_object_array_get_idx(icds, i);
        if (json_object_is_type(o, json_type_object) && result_icd_file_read(o, &r->icds[r->n_icds++]) < 0)
            return -1;
    }
    json_object *ign = jsonget_array(data, "ignored_files", &n);
    if (n && !(r->ignored_files = calloc(n, sizeof(*r->ignored_files))))
        return -1;
    for (size_t i = 0; ign && i < n; i++) {
        json_object *s = json_object_array_get_idx(ign, i);
        if (json_object_is_type(s, json_type_string) &&
            !(r->ignored_files[r->n_ignored++] = str_dup(json_object_get_string(s))))
            return -1;
    }
    return 0;
}

struct result_icd *result_icd_read(json_object *data)
{
    struct result_icd *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    json_object *l = jsonget_object(data, "loader"), *comb = jsonget_object(data, "combined");
    r->has_loader = l != NULL;
    r->has_combined = comb != NULL;
    if (result_icd_str(l, "path", &r->loader_path) < 0 || result_icd_str(l, "name", &r->loader_name) < 0 ||
        result_icd_str(l, "vendor", &r->loader_vendor) < 0 || result_icd_str(l, "version", &r->loader_version) < 0 ||
        result_icd_str(l, "ocl_version", &r->loader_ocl_version) < 0 || result_icd_str(l, "kind", &r->loader_kind) < 0 ||
        result_icd_str(data, "vendors_dir", &r->vendors_dir) < 0 ||
        result_icd_str(data, "vendors_from", &r->vendors_from) < 0 || result_icd_loaders_read(data, r) < 0 ||
        result_icd_lists_read(data, r) < 0 || (comb && result_icd_listing_read(comb, &r->combined) < 0)) {
        result_icd_free(r);
        return NULL;
    }
    return r;
}

void result_icd_free(struct result_icd *r)
{
    if (!r)
        return;
    char **strs[] = {&r->loader_path,        &r->loader_name, &r->loader_vendor, &r->loader_version,
                     &r->loader_ocl_version, &r->loader_kind, &r->vendors_dir,   &r->vendors_from};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        free(*strs[i]);
    for (size_t i = 0; i < r->n_loaders; i++) {
        struct result_icd_loader_file *l = &r->loaders[i];
        char *ls[] = {l->path, l->resolved, l->source, l->name, l->version, l->kind};
        for (size_t k = 0; k < sizeof(ls) / sizeof(ls[0]); k++)
            free(ls[k]);
    }
    free(r->loaders);
    for (size_t i = 0; i < r->n_icds; i++) {
        struct result_icd_file *f = &r->icds[i];
        char *fs[] = {f->file,        f->source,       f->library,      f->resolved,        f->found_via,
                      f->vendor,      f->driver_name,  f->driver_title, f->driver_needs,    f->hardware_detail};
        for (size_t k = 0; k < sizeof(fs) / sizeof(fs[0]); k++)
            free(fs[k]);
        result_icd_listing_free(&f->run);
    }
    free(r->icds);
    for (size_t i = 0; i < r->n_ignored; i++)
        free(r->ignored_files[i]);
    free(r->ignored_files);
    result_icd_listing_free(&r->combined);
    free(r);
}

static void *result_icd_from_json(json_object *data)
{
    return result_icd_read(data);
}

static void result_icd_free_any(void *res)
{
    result_icd_free(res);
}

const struct report_result_ops result_icd_ops = {
    .section = "icd",
    .to_json = NULL,
    .from_json = result_icd_from_json,
    .free = result_icd_free_any,
};

const struct result_icd *result_icd_get(const struct report *r)
{
    return report_result(r, &result_icd_ops);
}

char *result_icd_platforms_text(const struct result_icd_listing *l)
{
    char *out = NULL;
    for (size_t i = 0; l && i < l->n_platforms; i++) {
        const struct result_icd_platform *p = &l->platforms[i];
        const char *name = p->name ? p->name : "unnamed";
        char *item;
        if (p->devices >= 0)
            item = str_printf("%s%s%s (%lld device%s)", out ? out : "", out ? "; " : "", name,
                              (long long)p->devices, p->devices == 1 ? "" : "s");
        else
            item = str_printf("%s%s%s (devices unknown)", out ? out : "", out ? "; " : "", name);
        free(out);
        out = item;
    }
    return out;
}
