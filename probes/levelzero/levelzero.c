/* levelzero.c: the levelzero probe: Intel's Level Zero stack (files first: GPUs, i915/xe, render nodes, loader and backends; then zeInit in a child). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "devnode.h"
#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "levelzero_internal.h"
#include "strutil.h"
#include "vendor.h"

static const struct jsonstr_limits levelzero_child_limits = {.depth = 6, .string = 1024, .items = 256, .key = SIZE_MAX};

/* The libraries a Level Zero program ends up loading: the loader, and the backends it looks for (Intel's
 * compute-runtime ships libze_intel_gpu.so.1; its legacy build for Gen9 to Gen12 GPUs, from release 24.35 on,
 * libze_intel_gpu_legacy1.so.1: the loader's driver discovery, source/lib/linux/lib_init.cpp). */
static const struct {
    const char *key, *file;
} levelzero_libs[] = {
    {"loader", "libze_loader.so.1"},
    {"intel_gpu", "libze_intel_gpu.so.1"},
    {"intel_gpu_legacy", "libze_intel_gpu_legacy1.so.1"},
};

/* Where the dynamic linker's search S (NULL when it could not be set up) finds each of levelzero_libs. */
static json_object *levelzero_libraries(const struct ldsearch *s)
{
    json_object *o = json_object_new_object();
    for (size_t i = 0; i < sizeof(levelzero_libs) / sizeof(levelzero_libs[0]); i++) {
        const char *via = NULL;
        char *p = s ? ldsearch_find(s, levelzero_libs[i].file, &via) : NULL;
        json_object_object_add(o, levelzero_libs[i].key, jsonstr_or_null(p));
        free(p);
    }
    return o;
}

/* Intel's GPUs on the bus: [{pci_address, name, driver, render_node}], from the pci section. */
static json_object *levelzero_gpus(const struct result_pci *pci_devs)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; pci_devs && i < pci_devs->n_devs; i++) {
        const struct result_pci_dev *d = &pci_devs->devs[i];
        if (!d->vendor_id || strcmp(d->vendor_id, "8086") != 0 || !result_pci_dev_computes(d))
            continue;
        json_object *g = json_object_new_object();
        const char *render = NULL;
        for (size_t j = 0; j < d->n_drm; j++)
            if (str_starts_with(d->drm[j], "renderD"))
                render = d->drm[j];
        json_object_object_add(g, "pci_address", jsonstr_or_null(d->address));
        json_object_object_add(g, "name", jsonstr_or_null(d->device_name));
        json_object_object_add(g, "driver", jsonstr_or_null(d->driver));
        char *path = render ? str_printf("/dev/dri/%s", render) : NULL;
        json_object_object_add(g, "render_node", jsonstr_or_null(path));
        free(path);
        json_object_array_add(arr, g);
    }
    return arr;
}

/* Each Intel GPU's render node opened as the runtime opens it (this machine's files only), or null. */
static json_object *levelzero_nodes(struct probe_ctx *ctx, json_object *gpus)
{
    if (!probe_host_files(ctx))
        return NULL;
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(gpus); i++) {
        const char *p = jsonget_str(json_object_array_get_idx(gpus, i), "render_node");
        if (p)
            json_object_array_add(arr, devnode_open_json(ctx->fs, p, isolate_target_own_getenv("USER")));
    }
    return arr;
}

/* Is Intel's hardware ABSENT (docs/performance.md, "drivers of absent hardware")? The PCI facts list every GPU
 * and accelerator and none is Intel's (vendor_cl_hardware), and there is no /dev/accel (an NPU's nodes, which
 * Level Zero also drives): then the loader and its backends are not loaded. WHY (LEN bytes) says what was seen. */
static bool levelzero_hardware_absent(struct probe_ctx *ctx, json_object *gpus, char *why, size_t len)
{
    static const char *const nodes[] = {"/dev/accel", NULL};
    return json_object_array_length(gpus) == 0 &&
           vendor_runtime_absent(ctx->fs, vendor_cl_by_name("intel-neo"), result_pci_get(ctx->report), nodes, why, len);
}

/* The "runtime" object of a loader not loaded (its hardware absent): the dependencies dlopen would miss,
 * from the files (ldsearch_missing_needed on S, the probe's search). */
static json_object *levelzero_not_loaded(struct probe_ctx *ctx, const struct ldsearch *s, json_object *libs, const char *why)
{
    json_object *o = json_object_new_object();
    const char *loader = jsonget_str(libs, "loader");
    /* the loader's answer is this host's: a tree (--root DIR --live) says nothing of it */
    char *missing = loader && s && ctx->fs->live ? ldsearch_missing_needed(s, loader, NULL) : NULL;
    json_object_object_add(o, "status", json_object_new_string(loader ? "not-loaded" : "no-loader"));
    char *detail = str_printf("no Intel GPU: %s", why);
    json_object_object_add(o, "detail", jsonstr_or_null(detail));
    free(detail);
    json_object_object_add(o, "where", NULL);
    json_object_object_add(o, "missing_needed", jsonstr_or_null(missing));
    free(missing);
    return o;
}

static json_object *levelzero_runtime_json(const struct isolate_result *res)
{
    json_object *o = res->status == ISOLATE_OK && json_object_is_type(res->value, json_type_object)
                         ? jsonstr_clean_copy(res->value, &levelzero_child_limits) : NULL;
    if (!o) {
        o = json_object_new_object();
        const char *st = res->status == ISOLATE_SIGNAL ? "crash" : res->status == ISOLATE_TIMEOUT ? "timeout" : "failed";
        const char *tail = res->stderr_tail;
        json_object_object_add(o, "status", json_object_new_string(st));
        json_object_object_add(o, "detail", jsonstr_sanitized(res->detail));
        json_object_object_add(o, "where", jsonstr_or_null(tail && strstr(tail, "zeDriverGet") ? "zeDriverGet"
                                                              : tail && strstr(tail, "zeInit") ? "zeInit" : NULL));
    }
    return o;
}

static void levelzero_summary(struct report_section *sec, struct probe_ctx *ctx)
{
    json_object *d = sec->data, *rt = jsonget(d, "runtime"), *gpus = jsonget(d, "gpus");
    const char *loader = jsonget_str(jsonget(d, "libraries"), "loader"), *st = jsonget_str(rt, "status");
    size_t ng = json_object_array_length(gpus), ndev = 0;
    json_object *drvs = jsonget(rt, "drivers");
    for (size_t i = 0; drvs && i < json_object_array_length(drvs); i++)
        ndev += json_object_array_length(jsonget(json_object_array_get_idx(drvs, i), "devices"));
    bool info = report_find_finding(ctx->report, "levelzero.no-device", NULL) != NULL;
    if (!rt)
        report_section_add_line(sec, REPORT_MARK_INFO, "Level Zero", "%zu Intel GPU%s; loader %s", ng, ng == 1 ? "" : "s",
                                loader ? "not loaded (not the live machine)" : "not installed");
    else if (st && strcmp(st, "not-loaded") == 0)
        report_section_add_line(sec, REPORT_MARK_INFO, "Level Zero", "no Intel GPU here; loader not loaded%s%s%s",
                                jsonget_str(rt, "missing_needed") ? " (it could not be: " : "",
                                jsonget_str(rt, "missing_needed") ? jsonget_str(rt, "missing_needed") : "",
                                jsonget_str(rt, "missing_needed") ? " not found)" : "");
    else if (st && strcmp(st, "ok") == 0)
        report_section_add_line(sec, ndev ? REPORT_MARK_OK : (info ? REPORT_MARK_INFO : REPORT_MARK_ERROR), "Level Zero",
                                "%zu driver%s, %zu device%s", json_object_array_length(drvs),
                                json_object_array_length(drvs) == 1 ? "" : "s", ndev, ndev == 1 ? "" : "s");
    else if (st && strcmp(st, "no-loader") == 0)
        /* plain words for a newcomer; the mark is information (levelzero.no-loader says more where an Intel
         * GPU wants it) */
        report_section_add_line(sec, REPORT_MARK_INFO, "Level Zero", "not installed%s",
                                ng == 0 ? " (no Intel GPU here)" : ": libze_loader.so.1 is not found");
    else
        report_section_add_line(sec, info ? REPORT_MARK_INFO : REPORT_MARK_ERROR,
                                "Level Zero", "%s%s%s%s", info ? "no Intel GPU here; " : "",
                                st && strcmp(st, "init-failed") == 0 && jsonget_str(rt, "init_call") ? jsonget_str(rt, "init_call")
                                                                                                  : (st ? st : "?"),
                                jsonget_str(jsonget(rt, "init"), "name") ? ": " : "",
                                jsonget_str(jsonget(rt, "init"), "name") ? jsonget_str(jsonget(rt, "init"), "name") : "");
}

static int levelzero_run(struct probe_ctx *ctx, struct report_section *sec)
{
    const struct result_pci *pci_devs = result_pci_get(ctx->report);
    if (pci_devs && !pci_devs->have_devices)
        pci_devs = NULL;
    json_object *d = sec->data, *gpus = levelzero_gpus(pci_devs);
    json_object_object_add(d, "gpus", gpus);
    levelzero_guc(ctx, gpus, pci_devs);
    /* A snapshot replayed without --live: this machine's facts (nodes opened, the child) are the captured
     * section's; the files are the snapshot's tree, read again. */
    json_object *cap = probe_snapshot(ctx) && !probe_live(ctx) ? probe_captured(ctx, "levelzero") : NULL;
    json_object *cnodes = jsonget(cap, "device_nodes"), *crt = jsonget(cap, "runtime");
    json_object_object_add(d, "device_nodes", cap ? (cnodes ? jsonstr_clean_copy(cnodes, &levelzero_child_limits) : NULL)
                                                  : levelzero_nodes(ctx, gpus));
    struct ldsearch search;
    bool searched = ldsearch_init(&search, ctx->fs, probe_live(ctx) ? getenv("LD_LIBRARY_PATH") : NULL) == 0;
    json_object *libs = levelzero_libraries(searched ? &search : NULL);
    json_object_object_add(d, "libraries", libs);
    json_object *rt = NULL;
    char why[160];
    if (probe_live(ctx) && !crt && levelzero_hardware_absent(ctx, gpus, why, sizeof(why))) {
        rt = levelzero_not_loaded(ctx, searched ? &search : NULL, libs, why);
    } else if (probe_live(ctx)) {
        struct isolate_result res;
        memset(&res, 0, sizeof(res));
        probe_isolate_run(ctx, levelzero_child, NULL, &res);
        rt = levelzero_runtime_json(&res);
        isolate_result_clear(&res);
    }
    if (searched)
        ldsearch_free(&search);
    if (crt)
        rt = jsonstr_clean_copy(crt, &levelzero_child_limits);
    json_object_object_add(d, "runtime", rt);
    levelzero_findings(ctx, d, pci_devs, result_opencl_get(ctx->report));
    levelzero_summary(sec, ctx);
    report_section_set_result(sec, &result_levelzero_ops, result_levelzero_ops.from_json(d));
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    return PROBE_DONE;
}

static const char *const levelzero_deps[] = {"pci", "opencl", NULL};

const struct probe probe_levelzero = {
    .name = "levelzero",
    .stack = PROBE_STACK_LEVELZERO,
    .compute_api = "levelzero",
    .compute_api_label = "Level Zero",
    .vendor = "intel",
    .title = "Intel's Level Zero stack (oneAPI, SYCL, PyTorch XPU): Intel GPUs and their\n"
             "i915/xe binding, render nodes, the loader and its GPU backends, then zeInit,\n"
             "drivers and devices in a child, not loaded where the PCI bus shows no\n"
             "Intel GPU (under --root: the tree's files only)",
    .deps = levelzero_deps,
    .check_sets = (const struct check_set[]){{levelzero_checks, &levelzero_n_checks}, {NULL, NULL}},
    .requires = levelzero_requires,
    .result = &result_levelzero_ops,
    .run = levelzero_run,
    .verdict = levelzero_verdict,
    .node_labels = levelzero_node_labels,
    .print_text = levelzero_print_text,
};
