/* vulkan.c: the vulkan probe: the Vulkan loader, each driver manifest judged alone (one shared child first), each device and its smoke test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "compute_options.h"
#include "jsonget.h"
#include "results/result_pci.h"
#include "ldsearch.h"
#include "options.h"
#include "strutil.h"
#include "vulkan_internal.h"

static const char *vulkan_getenv(const char *name)
{
    return getenv(name);
}

/* The loader as dlopen("libvulkan.so.1") finds it (through hostfs: a tree's own under --root), or NULL. */
static char *vulkan_find_loader(struct probe_ctx *ctx)
{
    struct ldsearch s;
    if (ldsearch_init(&s, ctx->fs, getenv("LD_LIBRARY_PATH")) != 0)
        return NULL;
    const char *via = NULL;
    char *p = ldsearch_find(&s, "libvulkan.so.1", &via);
    ldsearch_free(&s);
    return p;
}

/* Driver D's child is over with RES. Its answer, or its progress when it crashed or hung after it said all
 * but its smoke test: the driver's outcome from that answer, and RES kept as the smoke test's. */
static void vulkan_driver_done(struct probe_ctx *ctx, struct vulkan_driver *d, struct isolate_result *res)
{
    const struct vulkan_progress *p = d->progress;
    bool began = p && __atomic_load_n(&p->stage, __ATOMIC_ACQUIRE) == VULKAN_STAGE_SMOKE && p->len > 0 &&
                 p->len < VULKAN_PROGRESS_MAX;
    if (res->status == ISOLATE_OK || !began) {
        vulkan_driver_outcome(ctx, d, res);
        d->smoked = d->answer && json_object_object_get_ex(d->answer, "smoke", NULL);
        return;
    }
    struct isolate_result said = {.status = ISOLATE_OK};
    said.value = isolate_json_parse(p->json, p->len, JSON_TOKENER_DEFAULT_DEPTH, true, NULL);
    if (!said.value) {
        vulkan_driver_outcome(ctx, d, res); /* garbage where its answer should be: the driver's fault */
        return;
    }
    vulkan_driver_outcome(ctx, d, &said);
    isolate_result_clear(&said);
    d->smoked = true;
    d->smoke_fail = *res; /* the crash or the hang, moved */
    memset(res, 0, sizeof(*res));
}

/* Each loadable driver alone: with several, all in one shared child first (vulkan_shared_run, a quarter of
 * the time left), then each one it did not finish in its own child, all at once, each child with its
 * progress region in memory shared with it. A driver with one device runs its smoke test in that child
 * (vulkan_child_enumerate), so
 * the children have all that is left, as every smoke test had before: with half, a slow device's smoke
 * test would have timed out at half its time. The price: when a driver hangs, the smoke children of a
 * driver with several devices (vulkan_smoke_all) find no time left and say so ("skipped"). */
static void vulkan_load_drivers(struct probe_ctx *ctx, struct vulkan_driver *d, size_t n)
{
    struct isolate_job jobs[VULKAN_MAX_MANIFESTS];
    struct isolate_result shared[VULKAN_MAX_MANIFESTS];
    bool done[VULKAN_MAX_MANIFESTS] = {false};
    size_t idx[VULKAN_MAX_MANIFESTS], own[VULKAN_MAX_MANIFESTS], k = 0, m = 0;
    for (size_t i = 0; i < n; i++)
        if (d[i].status < 0 && d[i].real_path)
            idx[k++] = i;
    if (k == 0)
        return;
    size_t bytes = k * sizeof(struct vulkan_progress);
    struct vulkan_progress *pg = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    for (size_t j = 0; pg != MAP_FAILED && j < k; j++)
        d[idx[j]].progress = &pg[j];
    /* Several drivers: one child for them all first (libvulkan and LLVM loaded once, as vulkaninfo does). */
    size_t busy = (size_t)-1;
    double waited = 0;
    if (k > 1 && pg != MAP_FAILED)
        vulkan_shared_run(ctx, d, idx, k, done, shared, &busy, &waited);
    for (size_t j = 0; j < k; j++) {
        if (done[j]) {
            vulkan_driver_done(ctx, &d[idx[j]], &shared[j]);
            isolate_result_clear(&shared[j]);
            continue;
        }
        jobs[m] = (struct isolate_job){.fn = vulkan_child_enumerate, .arg = &d[idx[j]]};
        own[m++] = idx[j];
    }
    if (m > 0)
        probe_isolate_many(ctx, jobs, m);
    for (size_t j = 0; j < m; j++) {
        struct isolate_result *r = &jobs[j].result;
        if (busy < k && own[j] == idx[busy] && r->status == ISOLATE_TIMEOUT) {
            /* it hung the shared child too: its time without an answer counts that wait */
            r->elapsed_ms += waited;
            free(r->detail);
            r->detail = str_printf("timed out after %.1f s", r->elapsed_ms / 1000.0);
        }
        vulkan_driver_done(ctx, &d[own[j]], r);
        isolate_result_clear(&jobs[j].result);
    }
    for (size_t j = 0; j < k; j++)
        d[idx[j]].progress = NULL;
    if (pg != MAP_FAILED)
        munmap(pg, bytes);
}

/* Is ADDR one of the pci section's devices? */
static enum gc_tri vulkan_on_bus(const struct result_pci *pci, const char *addr)
{
    if (!addr || !pci->have_devices)
        return GC_TRI_UNKNOWN;
    return gc_tri_from_bool(result_pci_dev_at(pci, addr) != NULL);
}

static void vulkan_collect_devices(struct probe_ctx *ctx, struct vulkan_driver *d, size_t n, struct result_vulkan *res)
{
    const struct result_pci *pd = result_pci_get(ctx->report);
    for (size_t i = 0; i < n; i++) {
        size_t nd = 0;
        json_object *devs = d[i].status == RESULT_VULKAN_DRV_OK ? jsonget_array(d[i].answer, "devices", &nd) : NULL;
        for (size_t j = 0; devs && j < nd; j++) {
            struct result_vulkan_dev *x = result_vulkan_add_dev(res);
            if (!x)
                return;
            result_vulkan_dev_read(x, json_object_array_get_idx(devs, j));
            free(x->manifest);
            x->manifest = str_dup(d[i].path);
            x->on_pci_bus = pd ? vulkan_on_bus(pd, x->pci_address) : GC_TRI_UNKNOWN;
        }
    }
}

/* The smoke test on every device (or only GPUs, --smoke gpu), each in its own child, all at once. */
static void vulkan_smoke_all(struct probe_ctx *ctx, struct vulkan_driver *d, size_t n, struct result_vulkan *res)
{
    const struct compute_options *co = compute_options();
    size_t k = 0;
    struct isolate_job *jobs = calloc(res->n_devs ? res->n_devs : 1, sizeof(*jobs));
    struct vulkan_smoke_job *sj = calloc(res->n_devs ? res->n_devs : 1, sizeof(*sj));
    size_t *idx = calloc(res->n_devs ? res->n_devs : 1, sizeof(*idx));
    for (size_t i = 0; jobs && sj && idx && i < res->n_devs; i++) {
        struct result_vulkan_dev *x = &res->devs[i];
        const struct vulkan_driver *drv = NULL;
        for (size_t j = 0; j < n && !drv; j++)
            if (x->manifest && strcmp(d[j].path, x->manifest) == 0)
                drv = &d[j];
        const char *skip = co->which == COMPUTE_WHICH_NONE ? "--no-smoke"
                           : co->which == COMPUTE_WHICH_GPU && x->type == RESULT_VULKAN_TYPE_CPU ? "--smoke gpu: a CPU device"
                           : !drv || x->index < 0 ? "its driver is not known" : NULL;
        if (skip) {
            x->smoke = RESULT_VULKAN_SMOKE_SKIPPED;
            x->smoke_json = json_object_new_object();
            json_object_object_add(x->smoke_json, "status", json_object_new_string("skipped"));
            json_object_object_add(x->smoke_json, "detail", json_object_new_string(skip));
            continue;
        }
        if (drv->smoked && x->index == 0) {
            /* Its driver's child ran it (vulkan_driver_done): that child's answer, crash or hang. */
            json_object *said = NULL;
            struct isolate_result ok = {.status = ISOLATE_OK};
            if (drv->smoke_fail.status == ISOLATE_OK && json_object_object_get_ex(drv->answer, "smoke", &said))
                ok.value = said;
            vulkan_smoke_outcome(ctx, x, drv->smoke_fail.status == ISOLATE_OK ? &ok : &drv->smoke_fail);
            continue;
        }
        unsigned size = compute_options_size_for(x->type == RESULT_VULKAN_TYPE_CPU); /* smaller on a CPU device */
        sj[k] = (struct vulkan_smoke_job){.driver = drv, .index = x->index, .n = size};
        jobs[k] = (struct isolate_job){.fn = vulkan_child_smoke, .arg = &sj[k]};
        idx[k++] = i;
    }
    if (k > 0)
        probe_isolate_many(ctx, jobs, k);
    for (size_t j = 0; j < k; j++) {
        vulkan_smoke_outcome(ctx, &res->devs[idx[j]], &jobs[j].result);
        isolate_result_clear(&jobs[j].result);
    }
    free(jobs);
    free(sj);
    free(idx);
}

/* The GPUs the pci section lists, or -1 without PCI facts. */
static long vulkan_bus_gpus(struct probe_ctx *ctx)
{
    const struct result_pci *pci = result_pci_get(ctx->report);
    if (!pci || !pci->have_devices)
        return -1;
    return (long)pci->n_devs;
}

/* The stack as a whole: nothing installed, no loader, no driver, no device. */
static void vulkan_stack_findings(struct probe_ctx *ctx, const struct result_vulkan *res, size_t n_manifests,
                                  size_t cpu_skipped)
{
    struct report *r = ctx->report;
    if (!res->loader && n_manifests == 0) {
        report_add_finding(r, "vulkan.not-installed", "libvulkan.so.1", "Vulkan is not installed: no libvulkan.so.1 "
                           "and no driver manifest in the loader's search path");
    } else if (!res->loader) {
        report_add_finding(r, "vulkan.no-loader", "libvulkan.so.1", "%zu Vulkan driver manifest%s found, but no "
                           "libvulkan.so.1 to load %s", n_manifests, n_manifests == 1 ? " is" : "s are",
                           n_manifests == 1 ? "it" : "them");
    } else if (n_manifests == 0) {
        report_add_finding(r, "vulkan.no-drivers", NULL, "%s is installed, but no Vulkan driver manifest is in the "
                           "loader's search path", res->loader);
    } else if (res->n_devs == 0 && cpu_skipped == 0 && vulkan_bus_gpus(ctx) <= 0) {
        /* (with a CPU driver --health did not load, no device listed is what was asked: not this finding) */
        /* Only without a GPU on the bus: with one, what keeps Vulkan from it (a driver's missing library, a
         * driver that lists no device) must stay a fault, not be made information by this row. */
        report_add_finding(r, "vulkan.no-device", NULL, "Vulkan is installed (%zu driver manifest%s), but no driver "
                           "lists a device", n_manifests, n_manifests == 1 ? "" : "s");
    }
}

/* Whether one of RES's drivers is NVIDIA's (its manifest's library: libGLX_nvidia.so.0). */
static bool vulkan_has_nvidia_driver(const struct result_vulkan *res)
{
    for (size_t i = 0; i < res->n_drivers; i++) {
        const char *v = vulkan_driver_vendor(res->drivers[i].library);
        if (v && strcmp(v, "nvidia") == 0)
            return true;
    }
    return false;
}

/* An NVIDIA GPU without a Vulkan device inside a container whose NVIDIA_DRIVER_CAPABILITIES lacks `graphics`
 * (and `all`): the NVIDIA Container Toolkit mounts nvidia_icd.json and libGLX_nvidia only for the graphics
 * capability (its documentation, "Driver capabilities"; unset is its default "utility,compute"). Information:
 * a CUDA container needs no Vulkan. Returns the finding added (to cause vulkan.gpu-without-device), or NULL. */
static struct report_finding *vulkan_container_no_graphics(struct probe_ctx *ctx, const struct result_vulkan *res,
                                                           const struct result_pci *pci, const char *addr)
{
    const char *container = pci->container, *caps = pci->toolkit_caps;
    /* the environment is read only in live runs (and kept in snapshots): without it, nothing is known */
    if (!container || (!caps && !probe_live(ctx)) || vulkan_has_nvidia_driver(res))
        return NULL;
    struct report_finding *seen = report_find_finding(ctx->report, "vulkan.container-no-graphics", NULL);
    if (seen) /* one for the container, named by its first GPU */
        return seen;
    const char *c = caps ? caps : "utility,compute";
    char *copy = str_dup(c), *save = NULL;
    bool graphics = false;
    for (char *t = copy ? strtok_r(copy, ", ", &save) : NULL; t && !graphics; t = strtok_r(NULL, ", ", &save))
        graphics = strcmp(t, "graphics") == 0 || strcmp(t, "all") == 0;
    free(copy);
    if (graphics)
        return NULL;
    struct report_finding *f = report_add_finding(
        ctx->report, "vulkan.container-no-graphics", "NVIDIA_DRIVER_CAPABILITIES",
        "NVIDIA GPU %s has no Vulkan device in this %s container: NVIDIA_DRIVER_CAPABILITIES is %s%s%s (no "
        "`graphics`), so the NVIDIA Container Toolkit mounted no nvidia_icd.json and no Vulkan driver into it",
        addr, container, caps ? "\"" : "unset (the toolkit's default, \"", c, caps ? "\"" : "\")");
    if (f)
        report_finding_add_evidence(f, "NVIDIA_DRIVER_CAPABILITIES", "%s", caps ? caps : "(unset)");
    return f;
}

/* Each display GPU the pci section lists that no Vulkan device is (by PCI address): info, and only when every
 * Vulkan GPU device gave its address (without one, a GPU may be that device). */
static void vulkan_gpus_without_device(struct probe_ctx *ctx, const struct result_vulkan *res)
{
    for (size_t i = 0; i < res->n_devs; i++)
        if (res->devs[i].type != RESULT_VULKAN_TYPE_CPU && !res->devs[i].pci_address)
            return;
    const struct result_pci *pci = result_pci_get(ctx->report);
    for (size_t i = 0; pci && i < pci->n_devs; i++) {
        const struct result_pci_dev *g = &pci->devs[i];
        const char *addr = g->address, *cls = g->class_code;
        if (!addr || !cls || !str_starts_with(cls, "03"))
            continue; /* a display controller: accelerators without graphics rarely have Vulkan at all */
        bool found = false;
        for (size_t j = 0; j < res->n_devs && !found; j++)
            found = res->devs[j].pci_address && strcmp(res->devs[j].pci_address, addr) == 0;
        if (found)
            continue;
        const char *name = g->device_name, *vendor = g->vendor_name;
        const char *vid = g->vendor_id;
        struct report_finding *why = vid && strcmp(vid, "10de") == 0 ? vulkan_container_no_graphics(ctx, res, pci, addr)
                                                                     : NULL;
        char *why_id = why ? str_dup(why->id) : NULL, *why_subject = why && why->subject ? str_dup(why->subject) : NULL;
        struct report_finding *f = report_add_finding(ctx->report, "vulkan.gpu-without-device", addr, "GPU %s (%s%s%s) "
                                                      "has no Vulkan device: no installed Vulkan driver lists it", addr,
                                                      vendor ? vendor : "vendor unknown", name ? " " : "", name ? name : "");
        if (f && why_id)
            report_finding_set_cause(f, why_id, why_subject);
        free(why_id);
        free(why_subject);
    }
}

/* Without a loader or any driver manifest (the usual CUDA image), an NVIDIA GPU in a container without the
 * graphics capability is still named: that is why no NVIDIA manifest is there. */
static void vulkan_container_gpus(struct probe_ctx *ctx, const struct result_vulkan *res)
{
    const struct result_pci *pci = result_pci_get(ctx->report);
    for (size_t i = 0; pci && i < pci->n_devs; i++) {
        const struct result_pci_dev *g = &pci->devs[i];
        const char *addr = g->address, *cls = g->class_code, *vid = g->vendor_id;
        if (addr && cls && str_starts_with(cls, "03") && vid && strcmp(vid, "10de") == 0 &&
            vulkan_container_no_graphics(ctx, res, pci, addr))
            return;
    }
}

static void vulkan_fill_drivers(struct result_vulkan *res, const struct vulkan_driver *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct result_vulkan_driver *x = result_vulkan_add_driver(res);
        if (!x)
            return;
        x->manifest = str_dup(d[i].path);
        x->library = str_dup(d[i].info.library_path);
        x->api_version = str_dup(d[i].info.api_version);
        x->status = d[i].status < 0 ? RESULT_VULKAN_DRV_NOT_LOADED : d[i].status;
        x->detail = str_dup(d[i].detail);
    }
}

static int vulkan_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct result_vulkan *res = result_vulkan_new();
    struct vulkan_driver *d = calloc(VULKAN_MAX_MANIFESTS, sizeof(*d));
    if (!res || !d) {
        free(res);
        free(d);
        return PROBE_INTERNAL_ERROR;
    }
    res->loader = vulkan_find_loader(ctx);
    size_t not_listed = 0;
    size_t n = vulkan_manifests_find(ctx, vulkan_getenv, d, &not_listed);
    if (not_listed > 0) /* the loader would read them too: say they were not looked at */
        report_section_add_note(sec, "%zu more Vulkan driver manifest%s past the first %d %s not looked at", not_listed,
                                not_listed == 1 ? "" : "s", VULKAN_MAX_MANIFESTS, not_listed == 1 ? "was" : "were");
    vulkan_manifests_check(ctx, d, n);
    for (size_t i = 0; !res->loader && i < n; i++)
        if (d[i].status < 0) {
            d[i].status = RESULT_VULKAN_DRV_NOT_LOADED;
            d[i].detail = str_printf("not loaded: no libvulkan.so.1");
        }
    /* --health answers for the hardware present: a driver for absent hardware is not loaded (every
     * Vulkan program's loader would load it; the full check does, as vulkaninfo does). */
    size_t cpu_skipped = 0; /* nor, without a --require form, a CPU driver (rule 3: a CPU is not the GPU asked about) */
    for (size_t i = 0; ctx->opts && ctx->opts->health && i < n; i++)
        if (d[i].status < 0 && d[i].real_path && !vulkan_driver_skip_absent(ctx, &d[i]))
            cpu_skipped += vulkan_driver_skip_cpu(ctx, &d[i]);
    vulkan_load_drivers(ctx, d, n);
    vulkan_collect_devices(ctx, d, n, res);
    vulkan_smoke_all(ctx, d, n, res);
    vulkan_stack_findings(ctx, res, n, cpu_skipped);
    if (res->loader && n > 0)
        vulkan_gpus_without_device(ctx, res);
    else
        vulkan_container_gpus(ctx, res);
    vulkan_fill_drivers(res, d, n);
    for (size_t i = 0; i < n; i++)
        vulkan_driver_free(&d[i]);
    free(d);
    vulkan_summary(sec, res);
    report_section_set_result(sec, &result_vulkan_ops, res);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    return PROBE_DONE;
}

/* A finding's subject that is one of the section's manifests: its driver's vendor, or its library's path for
 * the doctor's vendor words. */
static const char *vulkan_subject_vendor(const struct report_section *sec, const char *subject, const char **text)
{
    const struct result_vulkan *res = sec->result;
    for (size_t i = 0; res && subject && i < res->n_drivers; i++) {
        const struct result_vulkan_driver *d = &res->drivers[i];
        if (!d->manifest || strcmp(d->manifest, subject) != 0)
            continue;
        const char *v = vulkan_driver_vendor(d->library);
        if (!v)
            *text = d->library;
        return v;
    }
    return NULL;
}

/* The pci section ties devices to the bus, and says whether a GPU driver's hardware is here. */
static const char *const vulkan_deps[] = {"pci", NULL};

static const struct check_set vulkan_check_sets[] = {{vulkan_checks, &vulkan_n_checks}, {NULL, NULL}};

/* Today's summary label for one an older gpucheckup wrote (struct probe.label_today). */
static char *vulkan_label_today(const char *label)
{
    static const struct report_label_rename renamed[] = {{"Loader", "Vulkan loader"}, {"Driver", "Vulkan driver"}, {"Device", "Vulkan device"}};
    return report_label_renamed(renamed, sizeof(renamed) / sizeof(renamed[0]), label);
}

const struct probe probe_vulkan = {
    .name = "vulkan",
    .stack = PROBE_STACK_VULKAN,
    .label_today = vulkan_label_today,
    .title = "the Vulkan loader, each driver manifest judged alone (its own instance),\n"
             "and a compute smoke test on each device",
    .compute_api = "vulkan",
    .compute_api_label = "Vulkan",
    .needs_live = true,
    .deps = vulkan_deps,
    .check_sets = vulkan_check_sets,
    .requires = vulkan_requires,
    .result = &result_vulkan_ops,
    .run = vulkan_run,
    .verdict = vulkan_verdict,
    .node_labels = vulkan_node_labels,
    .print_text = vulkan_print_text,
    .subject_vendor = vulkan_subject_vendor,
};
