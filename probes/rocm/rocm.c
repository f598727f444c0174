/* rocm.c: the rocm probe: AMD's ROCm stack (amdgpu and KFD from files, the HSA and HIP runtimes in a child), orchestrated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "rocm_internal.h"
#include "strutil.h"
#include "vendor.h"

/* Environment variables that change what ROCm sees (recorded as facts; read in live modes only). */
static const char *const rocm_env_vars[] = {
    "HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL", "ROCM_PATH", NULL,
};

/* What is kept of the child's JSON. */
static const struct jsonstr_limits rocm_child_limits = {.depth = 6, .string = 1024, .items = 256, .key = SIZE_MAX};

/* The pci facts when they list the bus's devices (borrowed), or NULL (the pci probe did not run ok). */
static const struct result_pci *rocm_pci_devices(struct probe_ctx *ctx)
{
    const struct result_pci *pci = result_pci_get(ctx->report);
    return pci && pci->have_devices ? pci : NULL;
}

/* Where the tree's dynamic linker finds the runtime libraries (search S, NULL when it could not be set up):
 * {hsa, hip}, each a path or null. */
static json_object *rocm_libraries(const struct ldsearch *s)
{
    static const char *const hip_names[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", NULL};
    json_object *o = json_object_new_object();
    char *hsa = NULL, *hip = NULL;
    const char *via = NULL;
    if (s) {
        hsa = ldsearch_find(s, "libhsa-runtime64.so.1", &via);
        for (size_t i = 0; !hip && hip_names[i]; i++)
            hip = ldsearch_find(s, hip_names[i], &via);
    }
    json_object_object_add(o, "hsa", jsonstr_or_null(hsa));
    json_object_object_add(o, "hip", jsonstr_or_null(hip));
    free(hsa);
    free(hip);
    return o;
}

/* Is AMD's hardware ABSENT (docs/performance.md, "drivers of absent hardware")? The PCI facts list every GPU
 * and none is AMD's (vendor_cl_hardware), KFD lists no GPU node and there is no /dev/kfd (nor WSL2's /dev/dxg): then the runtime,
 * which drives nothing but AMD's GPUs, is not loaded. WHY (LEN bytes) says what was seen. */
static bool rocm_hardware_absent(struct probe_ctx *ctx, json_object *nodes, char *why, size_t len)
{
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++)
        if (jsonget_tri(json_object_array_get_idx(nodes, i), "gpu") == GC_TRI_YES)
            return false;
    static const char *const devs[] = {"/dev/kfd", NULL};
    return vendor_runtime_absent(ctx->fs, vendor_cl_by_name("amd"), result_pci_get(ctx->report), devs, why, len);
}

/* The "runtime" object of a runtime not loaded (its hardware absent): what the files say instead, the
 * dependencies dlopen would miss (ldsearch_missing_needed on S, the probe's search) among it. */
static json_object *rocm_runtime_not_loaded(struct probe_ctx *ctx, const struct ldsearch *s, json_object *libs, const char *why)
{
    json_object *o = json_object_new_object();
    const char *hsa = jsonget_str(libs, "hsa");
    /* the loader's answer is this host's: a tree (--root DIR --live) says nothing of it */
    char *missing = hsa && s && ctx->fs->live ? ldsearch_missing_needed(s, hsa, NULL) : NULL;
    json_object_object_add(o, "status", json_object_new_string("not-loaded"));
    char *detail = str_printf("no AMD GPU: %s", why);
    json_object_object_add(o, "detail", jsonstr_or_null(detail));
    free(detail);
    json_object_object_add(o, "where", NULL);
    json_object_object_add(o, "missing_needed", jsonstr_or_null(missing));
    free(missing);
    return o;
}

/* The child's outcome as the section's "runtime" object. */
static json_object *rocm_runtime_json(const struct isolate_result *res)
{
    json_object *o = NULL;
    if (res->status == ISOLATE_OK && json_object_is_type(res->value, json_type_object))
        o = jsonstr_clean_copy(res->value, &rocm_child_limits);
    if (!o)
        o = json_object_new_object();
    const char *st = res->status == ISOLATE_OK ? "ok" : res->status == ISOLATE_SIGNAL ? "crash"
                   : res->status == ISOLATE_TIMEOUT ? "timeout" : "failed";
    json_object_object_add(o, "status", json_object_new_string(st));
    json_object_object_add(o, "detail", res->status == ISOLATE_OK ? NULL : jsonstr_sanitized(res->detail));
    /* The last call the child announced before it ended (in its output). */
    const char *tail = res->status != ISOLATE_OK ? res->stderr_tail : NULL, *where = NULL;
    if (tail && strstr(tail, "rsmi_init"))
        where = "rsmi_init"; /* announced last */
    else if (tail && strstr(tail, "hipGetDeviceCount"))
        where = "hipGetDeviceCount"; /* announced after hsa_init */
    else if (tail && strstr(tail, "hsa_init"))
        where = "hsa_init";
    json_object_object_add(o, "where", jsonstr_or_null(where));
    return o;
}

static void rocm_summary(struct probe_ctx *ctx, struct report_section *sec, const struct result_pci *pci_devs)
{
    json_object *d = sec->data, *nodes = jsonget(d, "nodes"), *rt = jsonget(d, "runtime");
    size_t ngpu = 0;
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i);
        if (jsonget_tri(n, "gpu") == GC_TRI_YES) {
            ngpu++;
            const char *gfx = jsonget_str(n, "gfx"), *addr = jsonget_str(n, "pci_address"), *sup = jsonget_str(n, "support");
            report_section_add_line(sec, sup && strcmp(sup, "unsupported") == 0 ? REPORT_MARK_WARN : REPORT_MARK_OK, "ROCm KFD",
                                    "node %lld: %s %s (%s)", (long long)jsonget_int(n, "node", -1), gfx ? gfx : "gfx?",
                                    addr ? addr : "", sup ? sup : "?");
        }
    }
    json_object *hsa = jsonget(rt, "hsa"), *hip = jsonget(rt, "hip");
    const char *lib = jsonget_str(jsonget(d, "libraries"), "hsa"), *st = jsonget_str(rt, "status"), *hst = jsonget_str(hsa, "status");
    if (!rt) {
        report_section_add_line(sec, REPORT_MARK_INFO, "ROCm", "%zu KFD GPU node%s; runtime %s", ngpu, ngpu == 1 ? "" : "s",
                                lib ? "not loaded (not the live machine)" : "not installed");
        return;
    }
    if (st && strcmp(st, "not-loaded") == 0) {
        const char *miss = jsonget_str(rt, "missing_needed");
        if (!lib)
            report_section_add_line(sec, REPORT_MARK_INFO, "ROCm", "not installed (no AMD GPU here)");
        else
            report_section_add_line(sec, REPORT_MARK_INFO, "ROCm", "no AMD GPU here; runtime not loaded%s%s%s",
                                    miss ? " (it could not be: " : "", miss ? miss : "", miss ? " not found)" : "");
        return;
    }
    if (!st || strcmp(st, "ok") != 0) {
        const char *where = jsonget_str(rt, "where"), *det = jsonget_str(rt, "detail");
        report_section_add_line(sec, REPORT_MARK_ERROR, "ROCm", "runtime child %s%s%s (%s)", st ? st : "?", where ? " in " : "",
                                where ? where : "", det ? det : "");
        return;
    }
    /* hsa_status_string's text starts with the status's name: "HSA_STATUS_ERROR_OUT_OF_RESOURCES: ..." */
    json_object *init = jsonget(hsa, "init");
    char name[64] = "";
    const char *text = jsonget_str(init, "text");
    snprintf(name, sizeof(name), "%.*s", text ? (int)strcspn(text, ":") : 0, text ? text : "");
    const char *hipv = jsonget_str(hip, "runtime_version"), *hiperr = jsonget_str(jsonget(hip, "device_count_result"), "name");
    int64_t nhip = jsonget_int(hip, "device_count", -1);
    bool info = report_find_finding(ctx->report, "rocm.no-device", NULL) != NULL;
    if (hst && strcmp(hst, "no-library") == 0 && !lib) {
        /* Nothing of ROCm here: the first thing a newcomer without an AMD GPU reads, in plain words (the
         * mark follows rocm.no-runtime where an AMD GPU wants it: report_marks_agree) */
        size_t namd = 0;
        for (size_t i = 0; pci_devs && i < pci_devs->n_devs; i++)
            namd += rocm_is_amd_gpu(&pci_devs->devs[i]);
        if (pci_devs && namd == 0 && ngpu == 0)
            report_section_add_line(sec, REPORT_MARK_INFO, "ROCm", "not installed (no AMD GPU here)");
        else
            report_section_add_line(sec, REPORT_MARK_ERROR, "ROCm", "not installed: libhsa-runtime64.so.1 is not found");
        return;
    }
    if (hst && strcmp(hst, "ok") == 0)
        report_section_add_line(sec, nhip > 0 ? REPORT_MARK_OK : REPORT_MARK_ERROR, "ROCm", "HSA %s, HIP %s: %lld device%s",
                                jsonget_str(hsa, "version") ? jsonget_str(hsa, "version") : "?", hipv ? hipv : "absent",
                                (long long)(nhip < 0 ? 0 : nhip), nhip == 1 ? "" : "s");
    else
        report_section_add_line(sec, info ? REPORT_MARK_INFO : REPORT_MARK_ERROR, "ROCm", "%shsa_init: %s%s%s; HIP %s%s%s",
                                info ? "no AMD GPU here; " : "", hst && strcmp(hst, "init-failed") == 0 ? (name[0] ? name : "failed") : (hst ? hst : "?"),
                                init ? " " : "", init ? (jsonget_int(init, "code", 0) == 0x1008 ? "(0x1008)" : "") : "",
                                hipv ? hipv : "absent", hiperr ? ": " : "", hiperr ? hiperr : "");
}

/* A copy of member NAME of the captured section CAP (outside input: cleaned again), or NULL. */
static json_object *rocm_captured(json_object *cap, const char *name)
{
    json_object *v = jsonget(cap, name);
    return v ? jsonstr_clean_copy(v, &rocm_child_limits) : NULL;
}

static int rocm_run(struct probe_ctx *ctx, struct report_section *sec)
{
    const struct result_pci *pci_devs = rocm_pci_devices(ctx);
    json_object *d = sec->data;
    json_object_object_add(d, "kernel", rocm_kernel_read(ctx));
    size_t not_read = 0;
    json_object *nodes = rocm_nodes_read(ctx, pci_devs, &not_read);
    if (not_read > 0)
        report_section_add_note(sec, "%zu more KFD topology node%s past the first %d %s not read", not_read,
                                not_read == 1 ? "" : "s", ROCM_MAX_NODES, not_read == 1 ? "was" : "were");
    json_object_object_add(d, "nodes", nodes);
    /* A snapshot replayed without --live: what was this machine's (its nodes opened, its environment, its
     * runtime) comes from the captured section; the files are the snapshot's tree, read again. */
    json_object *cap = probe_snapshot(ctx) && !probe_live(ctx) ? probe_captured(ctx, "rocm") : NULL;
    json_object *opened = cap ? rocm_captured(cap, "device_nodes") : rocm_nodes_open(ctx, nodes);
    json_object_object_add(d, "device_nodes", opened);
    json_object *env = NULL;
    if (probe_live(ctx)) {
        env = json_object_new_object();
        for (size_t i = 0; rocm_env_vars[i]; i++) {
            const char *v = getenv(rocm_env_vars[i]);
            if (v)
                json_object_object_add(env, rocm_env_vars[i], jsonstr_sanitized(v));
        }
    }
    json_object_object_add(d, "environment", cap ? rocm_captured(cap, "environment") : env);
    if (cap)
        json_object_put(env);
    json_object_object_add(d, "rocblas", rocm_rocblas_read(ctx));
    struct ldsearch search;
    bool searched = ldsearch_init(&search, ctx->fs, probe_live(ctx) ? getenv("LD_LIBRARY_PATH") : NULL) == 0;
    json_object *libs = rocm_libraries(searched ? &search : NULL);
    json_object_object_add(d, "libraries", libs);
    json_object *rt = NULL;
    /* Live modes load this machine's runtime as a program would, whatever the tree's search found. */
    char why[160];
    if (probe_live(ctx) && !cap && rocm_hardware_absent(ctx, nodes, why, sizeof(why))) {
        rt = rocm_runtime_not_loaded(ctx, searched ? &search : NULL, libs, why);
    } else if (probe_live(ctx)) {
        struct isolate_result res;
        memset(&res, 0, sizeof(res));
        probe_isolate_run(ctx, rocm_runtime_child, NULL, &res);
        rt = rocm_runtime_json(&res);
        isolate_result_clear(&res);
    }
    if (searched)
        ldsearch_free(&search);
    json_object_object_add(d, "runtime", cap ? rocm_captured(cap, "runtime") : rt);
    if (cap) {
        json_object_put(rt);
        json_object *sm = rocm_captured(cap, "smoke");
        if (sm)
            json_object_object_add(d, "smoke", sm);
    }
    rocm_findings(ctx, d, pci_devs);
    rocm_summary(ctx, sec, pci_devs);
    /* The peer check after the smoke test (on the GPUs it passed); a snapshot's replay brings the captured one. */
    json_object *p2p = cap ? rocm_captured(cap, "p2p") : NULL;
    if (!p2p && probe_live(ctx) && !cap)
        p2p = rocm_p2p_run(ctx, d);
    if (p2p) {
        json_object_object_add(d, "p2p", p2p);
        rocm_p2p_report(ctx, sec, p2p);
    }
    report_section_set_result(sec, &result_rocm_ops, result_rocm_ops.from_json(d));
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    return PROBE_DONE;
}

static const char *const rocm_deps[] = {"pci", NULL};

/* Today's summary label for one an older gpucheckup wrote (struct probe.label_today). */
static char *rocm_label_today(const char *label)
{
    static const struct report_label_rename renamed[] = {{"KFD", "ROCm KFD"}};
    return report_label_renamed(renamed, sizeof(renamed) / sizeof(renamed[0]), label);
}

const struct probe probe_rocm = {
    .name = "rocm",
    .stack = PROBE_STACK_ROCM,
    .label_today = rocm_label_today,
    .compute_api = "hip",
    .compute_api_label = "HIP (ROCm)",
    .vendor = "amd",
    .title = "AMD's ROCm stack: amdgpu and its KFD topology (each GPU's gfx target\n"
             "against ROCm's support list), /dev/kfd and render nodes, the HSA and HIP\n"
             "runtimes in a child, not loaded where the PCI bus shows no AMD GPU\n"
             "(under --root: the tree's files only)",
    .deps = rocm_deps,
    .check_sets = (const struct check_set[]){{rocm_checks, &rocm_n_checks}, {rocm_p2p_checks, &rocm_p2p_n_checks}, {NULL, NULL}},
    .requires = rocm_requires,
    .result = &result_rocm_ops,
    .run = rocm_run,
    .verdict = rocm_verdict,
    .print_text = rocm_print_text,
    .node_labels = rocm_node_labels,
};
