/* result_smoke.c: the smoke result's JSON at the edge, and its reading back from captured JSON. */
#include "results/result_smoke.h"

#include "compute_path.h"
#include "doctor_facts.h"
#include "probe.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strutil.h"

static const char *const result_smoke_status_tab[] = {
    [RESULT_SMOKE_PASS] = "pass",       [RESULT_SMOKE_FAIL] = "fail",   [RESULT_SMOKE_ERROR] = "error",
    [RESULT_SMOKE_TIMEOUT] = "timeout", [RESULT_SMOKE_CRASH] = "crash", [RESULT_SMOKE_SKIPPED] = "skipped",
};
const struct gc_names result_smoke_status_names = GC_NAMES(result_smoke_status_tab);

static const char *const result_smoke_prec_status_tab[] = {
    [RESULT_SMOKE_PREC_PASS] = "pass",
    [RESULT_SMOKE_PREC_FAIL] = "fail",
    [RESULT_SMOKE_PREC_ERROR] = "error",
    [RESULT_SMOKE_PREC_NOT_RUN] = "not-run",
    [RESULT_SMOKE_PREC_UNSUPPORTED] = "unsupported",
    [RESULT_SMOKE_PREC_BUILD_FAILED] = "build-failed",
};
const struct gc_names result_smoke_prec_status_names = GC_NAMES(result_smoke_prec_status_tab);

static const char *const result_smoke_selection_tab[] = {[RESULT_SMOKE_SEL_ALL] = "all", [RESULT_SMOKE_SEL_GPU] = "gpu"};
const struct gc_names result_smoke_selection_names = GC_NAMES(result_smoke_selection_tab);

/* A device's members in the order the report prints them; HAVE: the typed member's bit, 0 for one
 * kept in REST. Members of REST not listed here (a newer capture's) come after. */
static const struct {
    const char *key;
    unsigned have;
} result_smoke_dev_keys[] = {
    {"platform_index", RESULT_SMOKE_HAVE_PLATFORM},
    {"device_index", RESULT_SMOKE_HAVE_DEVICE},
    {"name", RESULT_SMOKE_HAVE_NAME},
    {"type", RESULT_SMOKE_HAVE_TYPE},
    {"pci_address", RESULT_SMOKE_HAVE_PCI},
    {"status", RESULT_SMOKE_HAVE_STATUS},
    {"n", 0},
    {"build_ms", 0},
    {"kernel_ms", 0},
    {"host_ms", 0},
    {"timer", 0},
    {"timer_reason", 0},
    {"gflops", 0},
    {"gflops_reason", 0},
    {"peak_gflops", 0},
    {"max_error", 0},
    {"wrong_elements", 0},
    {"first_mismatches", 0},
    {"precisions", RESULT_SMOKE_HAVE_PRECISIONS},
    {"passes", 0},
    {"round_trip", 0},
    {"build_log", 0},
    {"error", 0},
    {"detail", RESULT_SMOKE_HAVE_DETAIL},
    {"stage", RESULT_SMOKE_HAVE_STAGE},
    {"elapsed_ms", 0},
};
#define RESULT_SMOKE_N_DEV_KEYS (sizeof(result_smoke_dev_keys) / sizeof(result_smoke_dev_keys[0]))

static json_object *result_smoke_str(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* ---- building ------------------------------------------------------------------------------------ */

static void result_smoke_dev_clear(struct result_smoke_dev *d)
{
    free(d->name);
    for (size_t i = 0; i < d->n_types; i++)
        free(d->types[i]);
    free(d->types);
    free(d->pci_address);
    free(d->detail);
    free(d->stage);
    json_object_put(d->rest);
}

static void result_smoke_free(void *res)
{
    struct result_smoke *s = res;
    if (!s)
        return;
    for (size_t i = 0; i < s->n_devs; i++)
        result_smoke_dev_clear(&s->devs[i]);
    free(s->devs);
    free(s->source);
    free(s);
}

struct result_smoke *result_smoke_new(void)
{
    return calloc(1, sizeof(struct result_smoke));
}

struct result_smoke_dev *result_smoke_add_dev(struct result_smoke *s)
{
    json_object *rest = json_object_new_object();
    struct result_smoke_dev *devs = rest ? realloc(s->devs, (s->n_devs + 1) * sizeof(*devs)) : NULL;
    if (!devs) {
        json_object_put(rest);
        return NULL;
    }
    s->devs = devs;
    struct result_smoke_dev *d = &devs[s->n_devs++];
    memset(d, 0, sizeof(*d));
    d->gpu = GC_TRI_UNKNOWN;
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        d->prec[p] = -1;
    d->rest = rest;
    return d;
}

int result_smoke_dev_set_type(struct result_smoke_dev *dev, json_object *type)
{
    for (size_t i = 0; i < dev->n_types; i++)
        free(dev->types[i]);
    free(dev->types);
    dev->types = NULL;
    dev->n_types = 0;
    dev->types_known = false;
    dev->gpu = GC_TRI_UNKNOWN;
    if (!type)
        return 0;
    if (!json_object_is_type(type, json_type_array))
        return -1;
    size_t n = json_object_array_length(type);
    for (size_t i = 0; i < n; i++)
        if (!json_object_is_type(json_object_array_get_idx(type, i), json_type_string))
            return -1;
    dev->types = calloc(n ? n : 1, sizeof(*dev->types));
    if (!dev->types)
        return -1;
    dev->gpu = GC_TRI_NO;
    for (size_t i = 0; i < n; i++) {
        const char *t = json_object_get_string(json_object_array_get_idx(type, i));
        dev->types[dev->n_types] = str_dup(t);
        if (dev->types[dev->n_types])
            dev->n_types++;
        if (strcasecmp(t, "GPU") == 0)
            dev->gpu = GC_TRI_YES;
    }
    dev->types_known = true;
    return 0;
}

int result_smoke_dev_set_precisions(struct result_smoke_dev *dev, json_object *prec)
{
    int got[COMPUTE_N_PREC];
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        got[p] = -1;
    if (!json_object_is_type(prec, json_type_object))
        return -1;
    int last = -1;
    json_object_object_foreach(prec, key, val)
    {
        int p = gc_name_parse(&compute_prec_names, key);
        int v = json_object_is_type(val, json_type_string)
                    ? gc_name_parse(&result_smoke_prec_status_names, json_object_get_string(val))
                    : -1;
        if (p <= last || v < 0) /* unknown, repeated or out of the printed order: not typed */
            return -1;
        got[p] = v;
        last = p;
    }
    memcpy(dev->prec, got, sizeof(got));
    return 0;
}

/* ---- JSON at the edge ------------------------------------------------------------------------------ */

/* The typed member KEY (bit HAVE) of D as a new JSON value (NULL: JSON null). */
static json_object *result_smoke_dev_member(const struct result_smoke_dev *d, unsigned have)
{
    switch (have) {
    case RESULT_SMOKE_HAVE_PLATFORM:
        return json_object_new_int(d->platform_index);
    case RESULT_SMOKE_HAVE_DEVICE:
        return json_object_new_int(d->device_index);
    case RESULT_SMOKE_HAVE_NAME:
        return result_smoke_str(d->name);
    case RESULT_SMOKE_HAVE_TYPE: {
        if (!d->types_known)
            return NULL;
        json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < d->n_types; i++)
            json_object_array_add(a, json_object_new_string(d->types[i]));
        return a;
    }
    case RESULT_SMOKE_HAVE_PCI:
        return result_smoke_str(d->pci_address);
    case RESULT_SMOKE_HAVE_STATUS:
        return gc_name_json(&result_smoke_status_names, (int)d->status);
    case RESULT_SMOKE_HAVE_PRECISIONS: {
        json_object *o = json_object_new_object();
        for (int p = 0; o && p < COMPUTE_N_PREC; p++)
            if (d->prec[p] >= 0)
                json_object_object_add(o, gc_name(&compute_prec_names, p),
                                       gc_name_json(&result_smoke_prec_status_names, d->prec[p]));
        return o;
    }
    case RESULT_SMOKE_HAVE_DETAIL:
        return result_smoke_str(d->detail);
    case RESULT_SMOKE_HAVE_STAGE:
        return result_smoke_str(d->stage);
    default:
        return NULL;
    }
}

json_object *result_smoke_dev_json(const struct result_smoke_dev *d)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    for (size_t i = 0; i < RESULT_SMOKE_N_DEV_KEYS; i++) {
        const char *k = result_smoke_dev_keys[i].key;
        unsigned have = result_smoke_dev_keys[i].have;
        json_object *v = NULL;
        if (have && (d->have & have))
            json_object_object_add(o, k, result_smoke_dev_member(d, have));
        else if (json_object_object_get_ex(d->rest, k, &v))
            json_object_object_add(o, k, json_object_get(v));
    }
    json_object_object_foreach(d->rest, key, val)
    {
        if (!json_object_object_get_ex(o, key, NULL))
            json_object_object_add(o, key, json_object_get(val));
    }
    return o;
}

static json_object *result_smoke_to_json(const void *res)
{
    const struct result_smoke *s = res;
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    if (s->have & RESULT_SMOKE_HAVE_SOURCE)
        json_object_object_add(o, "source", result_smoke_str(s->source));
    if (s->have & RESULT_SMOKE_HAVE_N)
        json_object_object_add(o, "n", json_object_new_int64(s->n));
    if (s->have & RESULT_SMOKE_HAVE_SELECTION)
        json_object_object_add(o, "selection", gc_name_json(&result_smoke_selection_names, (int)s->selection));
    if (s->have & RESULT_SMOKE_HAVE_DEVICES) {
        json_object *a = json_object_new_array();
        for (size_t i = 0; a && i < s->n_devs; i++)
            json_object_array_add(a, result_smoke_dev_json(&s->devs[i]));
        json_object_object_add(o, "devices", a);
    }
    return o;
}

/* ---- reading captured JSON back ------------------------------------------------------------------- */

/* Member KEY of O as a string or null: true (*OUT a copy, NULL for null), false for another shape. */
static bool result_smoke_take_str(json_object *o, const char *key, char **out)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || (v && !json_object_is_type(v, json_type_string)))
        return false;
    *out = v ? str_dup(json_object_get_string(v)) : NULL;
    return !v || *out;
}

static bool result_smoke_take_int(json_object *o, const char *key, int *out)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return false;
    int64_t x = json_object_get_int64(v);
    if (x < INT32_MIN || x > INT32_MAX)
        return false;
    *out = (int)x;
    return true;
}

/* Device D from captured object O: typed members into D, the others (and typed ones of another
 * shape) into D->rest. */
static void result_smoke_dev_read(struct result_smoke_dev *d, json_object *o)
{
    json_object *v = NULL;
    if (result_smoke_take_int(o, "platform_index", &d->platform_index))
        d->have |= RESULT_SMOKE_HAVE_PLATFORM;
    if (result_smoke_take_int(o, "device_index", &d->device_index))
        d->have |= RESULT_SMOKE_HAVE_DEVICE;
    if (result_smoke_take_str(o, "name", &d->name))
        d->have |= RESULT_SMOKE_HAVE_NAME;
    if (json_object_object_get_ex(o, "type", &v)) {
        if (result_smoke_dev_set_type(d, v) == 0)
            d->have |= RESULT_SMOKE_HAVE_TYPE;
        else if (json_object_is_type(v, json_type_string)) /* one name: an older document */
            d->gpu = gc_tri_from_bool(strcasestr(json_object_get_string(v), "GPU") != NULL);
    }
    if (result_smoke_take_str(o, "pci_address", &d->pci_address))
        d->have |= RESULT_SMOKE_HAVE_PCI;
    int st = gc_name_parse(&result_smoke_status_names, json_object_get_string(json_object_object_get(o, "status")));
    if (st >= 0 && json_object_is_type(json_object_object_get(o, "status"), json_type_string)) {
        d->status = (enum result_smoke_status)st;
        d->have |= RESULT_SMOKE_HAVE_STATUS;
    }
    if (json_object_object_get_ex(o, "precisions", &v) && result_smoke_dev_set_precisions(d, v) == 0)
        d->have |= RESULT_SMOKE_HAVE_PRECISIONS;
    if (result_smoke_take_str(o, "detail", &d->detail))
        d->have |= RESULT_SMOKE_HAVE_DETAIL;
    if (result_smoke_take_str(o, "stage", &d->stage))
        d->have |= RESULT_SMOKE_HAVE_STAGE;
    json_object_object_foreach(o, key, val)
    {
        bool typed = false;
        for (size_t i = 0; i < RESULT_SMOKE_N_DEV_KEYS && !typed; i++)
            typed = strcmp(key, result_smoke_dev_keys[i].key) == 0 && (d->have & result_smoke_dev_keys[i].have);
        if (!typed)
            json_object_object_add(d->rest, key, json_object_get(val));
    }
}

static void *result_smoke_from_json(json_object *data)
{
    struct result_smoke *s = result_smoke_new();
    if (!s)
        return NULL;
    if (!json_object_is_type(data, json_type_object))
        return s;
    if (result_smoke_take_str(data, "source", &s->source) && s->source)
        s->have |= RESULT_SMOKE_HAVE_SOURCE;
    json_object *v = NULL;
    if (json_object_object_get_ex(data, "n", &v) && json_object_is_type(v, json_type_int)) {
        s->n = json_object_get_int64(v);
        s->have |= RESULT_SMOKE_HAVE_N;
    }
    int sel = json_object_object_get_ex(data, "selection", &v) && json_object_is_type(v, json_type_string)
                  ? gc_name_parse(&result_smoke_selection_names, json_object_get_string(v))
                  : -1;
    if (sel >= 0) {
        s->selection = (enum result_smoke_selection)sel;
        s->have |= RESULT_SMOKE_HAVE_SELECTION;
    }
    json_object *devs = NULL;
    bool typed = json_object_object_get_ex(data, "devices", &devs) && json_object_is_type(devs, json_type_array);
    size_t n = typed ? json_object_array_length(devs) : 0;
    for (size_t i = 0; i < n; i++)
        typed &= json_object_is_type(json_object_array_get_idx(devs, i), json_type_object);
    for (size_t i = 0; typed && i < n; i++) { /* else not a document this version reads: it stays JSON */
        struct result_smoke_dev *d = result_smoke_add_dev(s);
        if (!d) {
            result_smoke_free(s);
            return NULL;
        }
        result_smoke_dev_read(d, json_object_array_get_idx(devs, i));
    }
    if (typed)
        s->have |= RESULT_SMOKE_HAVE_DEVICES;
    /* Only now, nothing can fail any more: the typed members leave DATA. */
    static const struct {
        const char *key;
        unsigned have;
    } taken[] = {{"source", RESULT_SMOKE_HAVE_SOURCE}, {"n", RESULT_SMOKE_HAVE_N},
                 {"selection", RESULT_SMOKE_HAVE_SELECTION}, {"devices", RESULT_SMOKE_HAVE_DEVICES}};
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
        if (s->have & taken[i].have)
            json_object_object_del(data, taken[i].key);
    return s;
}

/* The section's members in print order: the typed ones in their place also when a capture's member
 * stayed JSON (json-c reads "5e+" as a double printed 5, typed on the next reading). */
static const char *const result_smoke_members[] = {"source", "n", "selection", "devices", NULL};

/* Every OpenCL device the smoke section lists is a path: passed, failed, or there and not tested. */
static void result_smoke_paths(const void *res, const struct probe *owner, struct compute_paths *out)
{
    const struct result_smoke *s = res;
    for (size_t i = 0; i < s->n_devs; i++) {
        const struct result_smoke_dev *d = &s->devs[i];
        if (!(d->have & RESULT_SMOKE_HAVE_STATUS))
            continue;
        struct compute_path p = {
            .api = owner->compute_api,
            .api_label = owner->compute_api_label,
            .pci_address = d->pci_address,
            .name = d->name,
            .gpu = d->gpu == GC_TRI_YES,
            .proof = d->status == RESULT_SMOKE_PASS ? COMPUTE_PASSED
                     : d->status == RESULT_SMOKE_SKIPPED ? COMPUTE_UNTESTED
                                                        : COMPUTE_FAILED,
            .measurements = d->rest,
        };
        if ((d->have & RESULT_SMOKE_HAVE_PLATFORM) && (d->have & RESULT_SMOKE_HAVE_DEVICE))
            snprintf(p.device, sizeof(p.device), "%d:%d", d->platform_index, d->device_index);
        else
            snprintf(p.device, sizeof(p.device), "-1:-1");
        compute_paths_add(out, &p);
    }
}

const struct report_result_ops result_smoke_ops = {
    .section = "smoke",
    .to_json = result_smoke_to_json,
    .from_json = result_smoke_from_json,
    .free = result_smoke_free,
    .members = result_smoke_members,
    .paths = result_smoke_paths,
};

const struct result_smoke *result_smoke_get(const struct report *r)
{
    return report_result(r, &result_smoke_ops);
}

/* A smoke device that passed, and is a GPU when GPU_ONLY. */
static bool result_smoke_dev_passed(const struct result_smoke_dev *d, bool gpu_only)
{
    return (d->have & RESULT_SMOKE_HAVE_STATUS) && d->status == RESULT_SMOKE_PASS && (!gpu_only || d->gpu == GC_TRI_YES);
}

size_t result_smoke_passed_devices(const struct report *r, bool gpu_only,
                                   bool (*want)(const struct result_smoke_dev *dev),
                                   const struct result_smoke_dev **first)
{
    const struct result_smoke *sm = result_smoke_get(r);
    size_t n = 0;
    if (first)
        *first = NULL;
    for (size_t i = 0; sm && i < sm->n_devs; i++) {
        const struct result_smoke_dev *d = &sm->devs[i];
        if (!result_smoke_dev_passed(d, gpu_only) || (want && !want(d)))
            continue;
        if (first && !*first)
            *first = d;
        n++;
    }
    return n;
}

bool result_smoke_fp64_passed(const struct result_smoke_dev *dev)
{
    return dev->prec[COMPUTE_FP64] == RESULT_SMOKE_PREC_PASS;
}

const char *result_smoke_label(const struct result_smoke_dev *d, char *buf, size_t len)
{
    return doctor_device_label(d ? d->pci_address : NULL, d ? d->name : NULL, buf, len);
}
