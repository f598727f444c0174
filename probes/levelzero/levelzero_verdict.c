/* levelzero_verdict.c: the levelzero probe's typed result (its compute paths), verdict line, --require levelzero, labels and text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_path.h"
#include "doctor.h"
#include "jsonget.h"
#include "levelzero_internal.h"
#include "strutil.h"

extern const struct probe probe_levelzero;

/* The Level Zero GPU devices, typed beside the section's JSON (which stays the data). */
struct levelzero_dev {
    char *pci_address, *name;
};
struct result_levelzero {
    struct levelzero_dev *devs;
    size_t n;
    char *api_version; /* the first driver's, NULL: unknown */
};

static void result_levelzero_free(void *p)
{
    struct result_levelzero *r = p;
    for (size_t i = 0; r && i < r->n; i++) {
        free(r->devs[i].pci_address);
        free(r->devs[i].name);
    }
    if (r) {
        free(r->devs);
        free(r->api_version);
    }
    free(r);
}

static void *result_levelzero_from_json(json_object *data)
{
    struct result_levelzero *r = calloc(1, sizeof(*r));
    json_object *drvs = jsonget(jsonget(data, "runtime"), "drivers");
    size_t cap = 0;
    for (size_t i = 0; r && drvs && json_object_is_type(drvs, json_type_array) && i < json_object_array_length(drvs); i++) {
        json_object *drv = json_object_array_get_idx(drvs, i), *devs = jsonget(drv, "devices");
        if (!r->api_version && jsonget_str(drv, "api_version"))
            r->api_version = str_dup(jsonget_str(drv, "api_version"));
        for (size_t j = 0; devs && json_object_is_type(devs, json_type_array) && j < json_object_array_length(devs); j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            const char *t = jsonget_str(d, "type"), *a = jsonget_str(d, "pci_address"), *n = jsonget_str(d, "name");
            if (!t || strcmp(t, "gpu") != 0)
                continue;
            if (r->n == cap) {
                size_t nc = cap ? cap * 2 : 4;
                struct levelzero_dev *nd = realloc(r->devs, nc * sizeof(*nd));
                if (!nd)
                    return r;
                r->devs = nd;
                cap = nc;
            }
            r->devs[r->n++] = (struct levelzero_dev){a ? str_dup(a) : NULL, n ? str_dup(n) : NULL};
        }
    }
    return r;
}

/* One path per Level Zero GPU, untested: gpucheckup runs no Level Zero kernel. */
static void result_levelzero_paths(const void *res, const struct probe *owner, struct compute_paths *out)
{
    const struct result_levelzero *r = res;
    for (size_t i = 0; i < r->n; i++) {
        struct compute_path p = {.api = owner->compute_api, .api_label = owner->compute_api_label,
                                 .pci_address = r->devs[i].pci_address, .name = r->devs[i].name, .gpu = true,
                                 .proof = COMPUTE_UNTESTED};
        snprintf(p.device, sizeof(p.device), "%zu", i);
        compute_paths_add(out, &p);
    }
}

const struct report_result_ops result_levelzero_ops = {
    .section = "levelzero",
    .to_json = NULL,
    .from_json = result_levelzero_from_json,
    .free = result_levelzero_free,
    .paths = result_levelzero_paths,
};

static int levelzero_req_parse(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "levelzero") == 0 ? 0 : -1;
}

static bool levelzero_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    (void)arg;
    const struct result_levelzero *res = report_result(r, &result_levelzero_ops);
    size_t n = res ? res->n : 0;
    *detail = n ? str_printf("Level Zero lists %zu Intel GPU%s, e.g. %s", n, n == 1 ? "" : "s",
                             res->devs[0].name ? res->devs[0].name : "?")
                : str_printf("Level Zero lists no GPU");
    return n > 0;
}

const struct probe_require levelzero_requires[] = {
    {"levelzero", NULL, levelzero_req_parse, levelzero_req_eval, PROBE_CHAIN_STACK},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_STACK},
};

void levelzero_verdict(struct report *r, struct doctor_lines *out)
{
    const struct result_levelzero *res = report_result(r, &result_levelzero_ops);
    if (!res)
        return;
    char *ready = NULL;
    if (res->n > 0)
        ready = str_printf("lists %s%s%s (API %s; no Level Zero compute test: untested)", res->devs[0].pci_address ? res->devs[0].pci_address : "",
                           res->devs[0].pci_address ? " " : "", res->devs[0].name ? res->devs[0].name : "a GPU",
                           res->api_version ? res->api_version : "?");
    doctor_api_verdict(r, out, &(struct doctor_api_verdict){.probe = &probe_levelzero, .label = "Level Zero",
                                                            .reached = res->n > 0, .ready_detail = ready,
                                                            .none = "not available (no Intel GPU listed)",
                                                            .flags = DOCTOR_API_ERROR_BLOCKS});
}

void levelzero_node_labels(const struct report_section *sec,
                           void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg)
{
    const struct result_levelzero *res = sec->result;
    if (!res || res->n == 0)
        return;
    char buf[32];
    snprintf(buf, sizeof(buf), "%zu", res->n);
    emit(arg, "levelzero", "device-count", buf);
    emit(arg, "levelzero", "api-version", res->api_version);
}

void levelzero_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *d = sec->data, *libs = jsonget(d, "libraries"), *gpus = jsonget(d, "gpus"), *rt = jsonget(d, "runtime");
    text_heading(t, "Level Zero");
    text_kv(t, "loader", "%s", jsonget_str(libs, "loader") ? jsonget_str(libs, "loader") : "not found");
    text_kv(t, "intel backend", "%s", jsonget_str(libs, "intel_gpu") ? jsonget_str(libs, "intel_gpu") : "not found");
    text_kv(t, "legacy backend", "%s", jsonget_str(libs, "intel_gpu_legacy") ? jsonget_str(libs, "intel_gpu_legacy") : "not found");
    for (size_t i = 0; gpus && i < json_object_array_length(gpus); i++) {
        json_object *g = json_object_array_get_idx(gpus, i);
        text_kv(t, "Intel GPU", "%s %s, driver %s", jsonget_str(g, "pci_address") ? jsonget_str(g, "pci_address") : "?",
                jsonget_str(g, "name") ? jsonget_str(g, "name") : "", jsonget_str(g, "driver") ? jsonget_str(g, "driver") : "none");
    }
    const char *rst = jsonget_str(rt, "status");
    if (rst && strcmp(rst, "not-loaded") == 0)
        text_kv(t, "zeInit", "not loaded: %s%s%s", jsonget_str(rt, "detail") ? jsonget_str(rt, "detail") : "?",
                jsonget_str(rt, "missing_needed") ? "; not found: " : "",
                jsonget_str(rt, "missing_needed") ? jsonget_str(rt, "missing_needed") : "");
    else if (rt)
        text_kv(t, "zeInit", "%s", jsonget_str(jsonget(rt, "init"), "name") ? jsonget_str(jsonget(rt, "init"), "name")
                                                                          : jsonget_str(rt, "status") ? jsonget_str(rt, "status") : "?");
}
