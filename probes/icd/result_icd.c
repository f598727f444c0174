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
    size_t n = 0;
    json_object *held[] = {l, jsonget_array(data, "loaders", &n), jsonget_array(data, "icds", &n),
                           jsonget_array(data, "ignored_files", &n), comb};
    json_object **to[] = {&r->loader_json, &r->loaders_json, &r->icds_json, &r->ignored_json, &r->combined_json};
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
        *to[i] = held[i] ? json_object_get(held[i]) : NULL;
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
    json_object *held[] = {r->loader_json, r->loaders_json, r->icds_json, r->ignored_json, r->combined_json};
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
        json_object_put(held[i]);
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

/* Is member KEY of DATA there, as null or of type T (which the result prints back the same)? */
static bool result_icd_takes(json_object *data, const char *key, enum json_type t)
{
    json_object *v = NULL;
    return json_object_object_get_ex(data, key, &v) && (!v || json_object_is_type(v, t));
}

/* The facts of DATA; the members the result prints leave it, a null keeping each place (keeps_places). */
static void *result_icd_from_json(json_object *data)
{
    struct result_icd *r = result_icd_read(data);
    if (!r)
        return NULL;
    static const struct {
        const char *key;
        enum json_type type;
    } taken[] = {
        {"loader", json_type_object},      {"loaders", json_type_array}, {"vendors_dir", json_type_string},
        {"vendors_from", json_type_string}, {"icds", json_type_array},    {"ignored_files", json_type_array},
        {"combined", json_type_object},
    };
    /* a list or an object of the right type is held (result_icd_read), so what is not typed prints from it */
    for (unsigned i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
        if (result_icd_takes(data, taken[i].key, taken[i].type)) {
            r->have |= 1u << i;
            json_object_object_add(data, taken[i].key, NULL); /* in place: the member keeps its position */
        }
    }
    return r;
}

/* One typed member of a captured object: KEY, its kind, and where its value is. */
enum result_icd_kind { RESULT_ICD_STR, RESULT_ICD_BOOL, RESULT_ICD_TRI, RESULT_ICD_COUNT };
struct result_icd_field {
    const char *key;
    enum result_icd_kind kind;
    const void *val; /* char *const *, bool *, enum gc_tri *, int64_t * */
};

/* VAL (captured) printed from FIELD's typed value when VAL has the shape the value was read from, else VAL. */
static json_object *result_icd_field_json(const struct result_icd_field *f, json_object *val)
{
    switch (f->kind) {
    case RESULT_ICD_STR: {
        const char *s = *(char *const *)f->val;
        if (val && !json_object_is_type(val, json_type_string))
            break;
        return s ? json_object_new_string(s) : NULL;
    }
    case RESULT_ICD_BOOL:
        if (!json_object_is_type(val, json_type_boolean))
            break;
        return json_object_new_boolean(*(const bool *)f->val);
    case RESULT_ICD_TRI:
        if (val && !json_object_is_type(val, json_type_boolean))
            break;
        return gc_tri_json(*(const enum gc_tri *)f->val);
    case RESULT_ICD_COUNT: {
        int64_t n = *(const int64_t *)f->val;
        if (!val)
            return NULL;
        if (!json_object_is_type(val, json_type_int) || n < 0)
            break;
        return json_object_new_int64(n);
    }
    }
    return json_object_get(val);
}

/* CAP printed over: each member in CAP's order, a typed one (FIELDS) from the struct, NEST's keys by NEST, the
 * others as captured. */
static json_object *result_icd_over(json_object *cap, const struct result_icd_field *fields, size_t n,
                                    json_object *(*nest)(const char *key, json_object *val, const void *ctx),
                                    const void *ctx)
{
    json_object *o = json_object_new_object();
    json_object_object_foreach(cap, key, val)
    {
        size_t k = 0;
        while (k < n && strcmp(fields[k].key, key) != 0)
            k++;
        json_object *v = k < n ? result_icd_field_json(&fields[k], val) : nest ? nest(key, val, ctx) : NULL;
        if (k == n && !nest)
            v = json_object_get(val);
        json_object_object_add(o, key, v);
    }
    return o;
}

/* ARR printed over, entry by entry: the I-th entry of type T by ONE (the I-th typed one: the reader skipped
 * entries of another type, so they line up), another entry as captured. */
static json_object *result_icd_list(json_object *arr, enum json_type t, size_t n,
                                    json_object *(*one)(size_t i, json_object *cap, const void *ctx), const void *ctx)
{
    json_object *a = json_object_new_array();
    size_t typed = 0;
    for (size_t i = 0; a && i < json_object_array_length(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        bool mine = json_object_is_type(e, t) && typed < n;
        json_object_array_add(a, mine ? one(typed++, e, ctx) : json_object_get(e));
    }
    return a;
}

static json_object *result_icd_platform_json(size_t i, json_object *cap, const void *ctx)
{
    const struct result_icd_platform *p = &((const struct result_icd_listing *)ctx)->platforms[i];
    const struct result_icd_field f[] = {
        {"name", RESULT_ICD_STR, &p->name},         {"vendor", RESULT_ICD_STR, &p->vendor},
        {"version", RESULT_ICD_STR, &p->version},   {"icd_suffix", RESULT_ICD_STR, &p->icd_suffix},
        {"devices", RESULT_ICD_COUNT, &p->devices}, {"gpu_devices", RESULT_ICD_COUNT, &p->gpu_devices},
        {"accepted", RESULT_ICD_TRI, &p->accepted}, {"has_khr_icd", RESULT_ICD_TRI, &p->has_khr_icd},
    };
    return result_icd_over(cap, f, sizeof(f) / sizeof(f[0]), NULL, NULL);
}

/* A listing's nested member: its platforms. */
static json_object *result_icd_listing_nest(const char *key, json_object *val, const void *ctx)
{
    const struct result_icd_listing *l = ctx;
    if (strcmp(key, "platforms") == 0 && json_object_is_type(val, json_type_array))
        return result_icd_list(val, json_type_object, l->n_platforms, result_icd_platform_json, l);
    return json_object_get(val);
}

static json_object *result_icd_driver_json(const struct result_icd_file *f, json_object *cap)
{
    const struct result_icd_field fields[] = {
        {"name", RESULT_ICD_STR, &f->driver_name},
        {"title", RESULT_ICD_STR, &f->driver_title},
        {"needs", RESULT_ICD_STR, &f->driver_needs},
        {"hardware_detail", RESULT_ICD_STR, &f->hardware_detail},
        {"absent_hardware", RESULT_ICD_BOOL, &f->absent_hardware},
    };
    json_object *o = result_icd_over(cap, fields, sizeof(fields) / sizeof(fields[0]), NULL, NULL);
    json_object *hw = NULL; /* the verdict from the struct when the capture names one of its values */
    const char *name = vendor_hw_name(f->hardware);
    if (json_object_object_get_ex(cap, "hardware", &hw) && json_object_is_type(hw, json_type_string) &&
        strcmp(json_object_get_string(hw), name) == 0)
        json_object_object_add(o, "hardware", json_object_new_string(name));
    return o;
}

/* An ICD's nested members: its driver and its platforms. */
static json_object *result_icd_file_nest(const char *key, json_object *val, const void *ctx)
{
    const struct result_icd_file *f = ctx;
    if (strcmp(key, "driver") == 0 && f->has_driver && json_object_is_type(val, json_type_object))
        return result_icd_driver_json(f, val);
    return result_icd_listing_nest(key, val, &f->run);
}

static json_object *result_icd_file_json(size_t i, json_object *cap, const void *ctx)
{
    const struct result_icd_file *f = &((const struct result_icd *)ctx)->icds[i];
    const struct result_icd_field fields[] = {
        {"file", RESULT_ICD_STR, &f->file},           {"source", RESULT_ICD_STR, &f->source},
        {"library", RESULT_ICD_STR, &f->library},     {"resolved", RESULT_ICD_STR, &f->resolved},
        {"found_via", RESULT_ICD_STR, &f->found_via}, {"vendor", RESULT_ICD_STR, &f->vendor},
        {"status", RESULT_ICD_STR, &f->run.status},   {"detail", RESULT_ICD_STR, &f->run.detail},
    };
    return result_icd_over(cap, fields, sizeof(fields) / sizeof(fields[0]), result_icd_file_nest, f);
}

static json_object *result_icd_loader_file_json(size_t i, json_object *cap, const void *ctx)
{
    const struct result_icd_loader_file *l = &((const struct result_icd *)ctx)->loaders[i];
    const struct result_icd_field f[] = {
        {"path", RESULT_ICD_STR, &l->path},         {"resolved", RESULT_ICD_STR, &l->resolved},
        {"source", RESULT_ICD_STR, &l->source},     {"name", RESULT_ICD_STR, &l->name},
        {"version", RESULT_ICD_STR, &l->version},   {"kind", RESULT_ICD_STR, &l->kind},
        {"searched", RESULT_ICD_BOOL, &l->searched}, {"wins", RESULT_ICD_BOOL, &l->wins},
        {"loadable", RESULT_ICD_BOOL, &l->loadable},
    };
    return result_icd_over(cap, f, sizeof(f) / sizeof(f[0]), NULL, NULL);
}

static json_object *result_icd_ignored_json(size_t i, json_object *cap, const void *ctx)
{
    (void)cap;
    return json_object_new_string(((const struct result_icd *)ctx)->ignored_files[i]);
}

static json_object *result_icd_to_json(const void *res)
{
    const struct result_icd *r = res;
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    if (r->have & RESULT_ICD_HAVE_LOADER) {
        const struct result_icd_field f[] = {
            {"path", RESULT_ICD_STR, &r->loader_path},       {"name", RESULT_ICD_STR, &r->loader_name},
            {"vendor", RESULT_ICD_STR, &r->loader_vendor},   {"version", RESULT_ICD_STR, &r->loader_version},
            {"ocl_version", RESULT_ICD_STR, &r->loader_ocl_version}, {"kind", RESULT_ICD_STR, &r->loader_kind},
        };
        json_object_object_add(o, "loader", r->loader_json ? result_icd_over(r->loader_json, f, sizeof(f) / sizeof(f[0]), NULL, NULL) : NULL);
    }
    if (r->have & RESULT_ICD_HAVE_LOADERS)
        json_object_object_add(o, "loaders", r->loaders_json ? result_icd_list(r->loaders_json, json_type_object,
                                                                               r->n_loaders, result_icd_loader_file_json, r)
                                                             : NULL);
    if (r->have & RESULT_ICD_HAVE_VENDORS_DIR)
        json_object_object_add(o, "vendors_dir", r->vendors_dir ? json_object_new_string(r->vendors_dir) : NULL);
    if (r->have & RESULT_ICD_HAVE_VENDORS_FROM)
        json_object_object_add(o, "vendors_from", r->vendors_from ? json_object_new_string(r->vendors_from) : NULL);
    if (r->have & RESULT_ICD_HAVE_ICDS)
        json_object_object_add(o, "icds", r->icds_json ? result_icd_list(r->icds_json, json_type_object, r->n_icds,
                                                                         result_icd_file_json, r)
                                                       : NULL);
    if (r->have & RESULT_ICD_HAVE_IGNORED)
        json_object_object_add(o, "ignored_files", r->ignored_json ? result_icd_list(r->ignored_json, json_type_string,
                                                                                     r->n_ignored, result_icd_ignored_json, r)
                                                                   : NULL);
    if (r->have & RESULT_ICD_HAVE_COMBINED) {
        const struct result_icd_field f[] = {
            {"status", RESULT_ICD_STR, &r->combined.status},
            {"detail", RESULT_ICD_STR, &r->combined.detail},
        };
        json_object_object_add(o, "combined", r->combined_json ? result_icd_over(r->combined_json, f, sizeof(f) / sizeof(f[0]),
                                                                                 result_icd_listing_nest, &r->combined)
                                                               : NULL);
    }
    return o;
}

static void result_icd_free_any(void *res)
{
    result_icd_free(res);
}

const struct report_result_ops result_icd_ops = {
    .section = "icd",
    .to_json = result_icd_to_json,
    .from_json = result_icd_from_json,
    .free = result_icd_free_any,
    .keeps_places = true,
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
