/* smoke_shared.c: the smoke test inside the shared cl-once child, after its enumeration (issue 17). */
#include "smoke_shared.h"
#include "smoke_hint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clonce.h"
#include "compute_options.h"
#include "jsonget.h"
#include "jsonnum.h"
#include "probe.h"
#include "cldevices.h"
#include "strutil.h"

_Static_assert(SMOKE_SHARED_STAGE_MAX == SMOKE_STAGE_MAX, "a shared slot holds a device's whole stage");

/* The part's smoke_plan (struct clonce_part): in the parent, before the fork. */
static void smoke_shared_plan(const struct probe_ctx *ctx, struct smoke_shared_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    const struct compute_options *so = compute_options();
    const char *cmd = ctx->opts ? ctx->opts->command : NULL;
    if (!cmd || !probe_selects(cmd, "smoke") || so->which == COMPUTE_WHICH_NONE)
        return;
    plan->on = true;
    plan->n = so->size;
    plan->cpu_n = compute_options_size_for(true);
    plan->dev_platform = ctx->opts->device_platform;
    plan->dev_index = ctx->opts->device_index;
    plan->gpu_only = so->which == COMPUTE_WHICH_GPU;
    plan->deadline_ms = probe_deadline_ms(ctx); /* the run's one deadline */
}

/* ---- In the child ---------------------------------------------------------------------------- */

/* The part's smoke_child (struct clonce_part): in the cl-once child, after the enumeration. */
static json_object *smoke_shared_child(const struct smoke_shared_plan *plan, struct smoke_shared_page *page,
                                       json_object *opencl)
{
    double t0 = jsonnum_now_ms();
    /* The selection the smoke probe makes from the opencl section (cldev_pick_devices): the section
     * is this enumeration, filtered by --device, which cldev_inventory_select applies here. */
    struct cldev_inventory inv;
    if (cldev_inventory_from_platforms(&inv, jsonget(opencl, "platforms")) != 0)
        return NULL;
    char *err = NULL;
    if (cldev_inventory_select(&inv, plan->dev_platform, plan->dev_index, plan->gpu_only, &err) < 0) {
        free(err); /* the smoke probe says it, from the same selection */
        cldev_inventory_free(&inv);
        return NULL;
    }
    size_t n = 0;
    for (size_t i = 0; i < inv.n_targets && n < SMOKE_SHARED_MAX; i++)
        n += inv.targets[i].run;
    /* Not freed: the child ends after answering, and a hung device's thread may still hold them. */
    struct smoke_device_args *devs = calloc(n ? n : 1, sizeof(*devs));
    size_t *idx = calloc(n ? n : 1, sizeof(*idx));
    if (!devs || !idx) {
        cldev_inventory_free(&inv);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < inv.n_targets && k < n; i++) {
        if (!inv.targets[i].run)
            continue;
        struct smoke_shared_slot *sl = &page->slots[k];
        sl->platform = inv.targets[i].platform;
        sl->device = inv.targets[i].device;
        devs[k] = (struct smoke_device_args){.platform = sl->platform, .device = sl->device,
                                             .n = smoke_target_is_cpu(&inv.targets[i]) ? plan->cpu_n : plan->n,
                                             .stage = sl->stage};
        idx[k] = k;
        k++;
    }
    cldev_inventory_free(&inv);
    page->n = (int)n;
    __atomic_store_n(&page->started, 1, __ATOMIC_RELEASE);
    /* Answer a little before the run's deadline, so that what finished is kept (as smoke_platform_run's
     * children do), and the parent still has time to say what did not. */
    double answer_by = probe_answer_by_ms(plan->deadline_ms);
    json_object *out = n ? smoke_platform_test(devs, idx, n, answer_by) : json_object_new_object();
    json_object *arr = NULL;
    if (!out)
        return NULL;
    if (!json_object_object_get_ex(out, "devices", &arr)) {
        arr = json_object_new_array();
        json_object_object_add(out, "devices", arr);
    }
    for (size_t i = 0; i < n && i < json_object_array_length(arr); i++) {
        json_object *d = json_object_array_get_idx(arr, i);
        json_object_object_add(d, "platform", json_object_new_int(devs[i].platform));
        json_object_object_add(d, "device", json_object_new_int(devs[i].device));
    }
    json_object_object_add(out, "elapsed_ms", jsonnum_ms(jsonnum_now_ms() - t0));
    return out;
}

/* ---- In the parent ------------------------------------------------------------------------------ */

/* The part's smoke_page_json (struct clonce_part): the page read back once the child is gone. */
static json_object *smoke_shared_page_json(const struct smoke_shared_page *page)
{
    if (!__atomic_load_n(&page->started, __ATOMIC_ACQUIRE))
        return NULL;
    int n = page->n;
    json_object *a = json_object_new_array();
    for (int i = 0; a && i >= 0 && i < n && i < SMOKE_SHARED_MAX; i++) {
        const struct smoke_shared_slot *sl = &page->slots[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "platform", json_object_new_int(sl->platform));
        json_object_object_add(o, "device", json_object_new_int(sl->device));
        char *st = str_copy_n(sl->stage, strnlen(sl->stage, SMOKE_STAGE_MAX - 1));
        json_object_object_add(o, "stage", st && *st ? json_object_new_string(str_sanitize(st)) : NULL);
        free(st);
        json_object_array_add(a, o);
    }
    return a;
}

/* The member of ARR (objects with "platform" and "device") that is device DEV, or NULL. */
static json_object *smoke_shared_find(json_object *arr, const struct smoke_device_args *dev)
{
    for (size_t i = 0; json_object_is_type(arr, json_type_array) && i < json_object_array_length(arr); i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        if (jsonget_int(o, "platform", -1) == dev->platform && jsonget_int(o, "device", -1) == dev->device)
            return o;
    }
    return NULL;
}

/* DEV's stage slot (the smoke probe reads it after the run) takes STAGE, the one it reached in the shared child. */
static void smoke_shared_stage(struct smoke_device_args *dev, const char *stage)
{
    if (!dev->stage)
        return;
    memset(dev->stage, 0, SMOKE_STAGE_MAX);
    if (stage)
        snprintf(dev->stage, SMOKE_STAGE_MAX, "%s", stage);
}

/* The time in milliseconds at V (from the child: not trusted), or FALLBACK when it is not one. */
static double smoke_shared_ms(json_object *v, double fallback)
{
    double ms = json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)
                    ? json_object_get_double(v)
                    : NAN;
    return isfinite(ms) && ms >= 0 ? ms : fallback;
}

/* Device DEV's answer from the shared child's outcome CRES (its "smoke" member SMOKE, NULL when the
 * child did not end well) and the page's SLOTS into *R. Returns false when it has none: test it the
 * per-platform way. */
static bool smoke_shared_answer(const struct isolate_result *cres, json_object *smoke, json_object *slots,
                                struct smoke_device_args *dev, struct isolate_result *r)
{
    json_object *slot = smoke_shared_find(slots, dev);
    if (!slot)
        return false; /* not tested there (the selection differed, or more than SMOKE_SHARED_MAX) */
    const char *stage = jsonget_str(slot, "stage");
    memset(r, 0, sizeof(*r));
    if (smoke) {
        json_object *d = smoke_shared_find(jsonget(smoke, "devices"), dev);
        json_object *v = jsonget(d, "result"), *ms = jsonget(d, "elapsed_ms");
        if (!d)
            return false;
        if (json_object_is_type(v, json_type_object)) {
            r->status = ISOLATE_OK;
            r->value = json_object_get(v);
            r->elapsed_ms = smoke_shared_ms(ms, 0);
            smoke_shared_stage(dev, stage);
            return true;
        }
        /* Still running when the child answered at its deadline: the stage says where. */
        r->status = ISOLATE_TIMEOUT;
        r->elapsed_ms = smoke_shared_ms(jsonget(smoke, "elapsed_ms"), cres->elapsed_ms);
        r->detail = str_printf("timed out after %.1f s", r->elapsed_ms / 1000.0);
    } else if (cres->status == ISOLATE_TIMEOUT && !(stage && strcmp(stage, "done") == 0)) {
        /* The child hung past the run's deadline without answering: its time is spent, as a
         * per-platform child's would be. (A device that had finished lost its answer with the child:
         * not a timeout of its own; it goes the per-platform way, which has no time left to say so.) */
        run_once_copy_result(r, cres);
        json_object_put(r->value);
        r->value = NULL;
    } else {
        return false; /* it crashed (or ended oddly) in its smoke part: which device, the reruns tell */
    }
    smoke_shared_stage(dev, stage);
    return true;
}

struct smoke_shared_rest {
    const size_t *which; /* index into the caller's arrays of each device left */
    smoke_done_fn done;
    void *arg;
};

static void smoke_shared_rest_done(size_t index, const struct isolate_result *res, void *arg)
{
    struct smoke_shared_rest *rest = arg;
    if (rest->done)
        rest->done(rest->which[index], res, rest->arg);
}

void smoke_shared_run(struct probe_ctx *ctx, struct smoke_device_args *devs, size_t n, struct isolate_result *res,
                      smoke_done_fn done, void *arg)
{
    struct isolate_result cres;
    json_object *smoke = NULL, *slots = NULL;
    if (n == 0 || !clonce_smoke(ctx, &cres, &smoke, &slots)) {
        smoke_platform_run(ctx, devs, n, res, done, arg);
        return;
    }
    memset(res, 0, n * sizeof(*res));
    size_t *which = calloc(n, sizeof(*which));
    struct smoke_device_args *rdevs = calloc(n, sizeof(*rdevs));
    struct isolate_result *rres = calloc(n, sizeof(*rres));
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        if (which && rdevs && rres && smoke_shared_answer(&cres, smoke, slots, &devs[i], &res[i])) {
            if (done)
                done(i, &res[i], arg);
            continue;
        }
        if (which && rdevs && rres) {
            which[left] = i;
            rdevs[left++] = devs[i];
        }
    }
    isolate_result_clear(&cres);
    json_object_put(smoke);
    json_object_put(slots);
    if (!which || !rdevs || !rres) {
        free(which);
        free(rdevs);
        free(rres);
        smoke_platform_run(ctx, devs, n, res, done, arg);
        return;
    }
    /* The rest as before the shared child took the smoke test in: per platform, then alone. */
    struct smoke_shared_rest rest = {.which = which, .done = done, .arg = arg};
    smoke_platform_run(ctx, rdevs, left, rres, smoke_shared_rest_done, &rest);
    for (size_t k = 0; k < left; k++)
        res[which[k]] = rres[k]; /* ownership moves */
    free(which);
    free(rdevs);
    free(rres);
}

const struct clonce_part smoke_clonce_part = {
    .name = "smoke",
    .smoke_plan = smoke_shared_plan,
    .smoke_child = smoke_shared_child,
    .smoke_page_json = smoke_shared_page_json,
};
