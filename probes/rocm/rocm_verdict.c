/* rocm_verdict.c: the rocm probe's typed result (its compute paths), verdict line, --require rocm, node labels and text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_path.h"
#include "doctor.h"
#include "jsonget.h"
#include "peer_check.h"
#include "rocm_internal.h"
#include "strutil.h"

extern const struct probe probe_rocm;

/* The facts others read, typed beside the section's JSON (which stays the data: no to_json, as cuda's). */
struct rocm_gpu {
    char *pci_address; /* NULL: unknown */
    char *name;        /* the product name, NULL: unknown */
    char *gfx;         /* the agent's name: "gfx1100" */
    int smoke;         /* the HIP smoke test on it (HIP ordinal = its place among the GPU agents): -1 not run,
                          0 passed, 1 failed (a wrong result, a failure, a crash) */
};
struct result_rocm {
    struct rocm_gpu *gpus; /* the HSA runtime's GPU agents */
    size_t n;
    int hip_devices;       /* hipGetDeviceCount, -1: unknown (not run, failed) */
    char *smoke_not_run;   /* why the HIP smoke test did not run, NULL when it did (or nothing says) */
    char *hip_version;     /* "6.2.41133", NULL: unknown */
    /* The HIP peer check (data.p2p): ordered pairs checked, passed, why it did not run, the failing ones. */
    int p2p_pairs, p2p_passed;
    char *p2p_not_run;
    char p2p_failing[192];
};

static void result_rocm_free(void *p)
{
    struct result_rocm *r = p;
    for (size_t i = 0; r && i < r->n; i++) {
        free(r->gpus[i].pci_address);
        free(r->gpus[i].name);
        free(r->gpus[i].gfx);
    }
    if (r) {
        free(r->gpus);
        free(r->hip_version);
        free(r->smoke_not_run);
        free(r->p2p_not_run);
    }
    free(r);
}

/* Each GPU's smoke outcome from the section's "smoke" object SM. */
static void result_rocm_smoke(struct result_rocm *r, json_object *sm)
{
    const char *nr = jsonget_str(sm, "not_run"), *st = jsonget_str(sm, "status");
    r->smoke_not_run = nr ? str_dup(nr) : NULL;
    if (st) { /* the child died on one device */
        int64_t o = jsonget_int(sm, "ordinal", -1);
        if (o >= 0 && (size_t)o < r->n)
            r->gpus[o].smoke = 1;
        return;
    }
    json_object *devs = jsonget(sm, "devices");
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        int64_t o = jsonget_int(d, "ordinal", -1);
        const char *s = jsonget_str(d, "status");
        if (o >= 0 && (size_t)o < r->n && s)
            r->gpus[o].smoke = strcmp(s, "pass") == 0 ? 0 : 1;
    }
}

/* The peer check's pairs from the section's "p2p" object P2P (HIP ordinals). */
static void result_rocm_p2p(struct result_rocm *r, json_object *p2p)
{
    json_object *pairs = jsonget(p2p, "pairs");
    size_t n = pairs && json_object_is_type(pairs, json_type_array) ? json_object_array_length(pairs) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *pe = json_object_array_get_idx(pairs, i);
        const char *st = jsonget_str(pe, "status");
        r->p2p_pairs++;
        if (st && strcmp(st, "pass") == 0) {
            r->p2p_passed++;
            continue;
        }
        char fa[24], fb[24];
        snprintf(fa, sizeof(fa), "%d", (int)jsonget_int(pe, "from", -1));
        snprintf(fb, sizeof(fb), "%d", (int)jsonget_int(pe, "to", -1));
        peer_check_add_failing(r->p2p_failing, sizeof(r->p2p_failing), fa, fb);
    }
    const char *why = jsonget_str(p2p, "not_run");
    r->p2p_not_run = why ? str_dup(why) : NULL;
}

static void *result_rocm_from_json(json_object *data)
{
    struct result_rocm *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    json_object *rt = jsonget(data, "runtime"), *hip = jsonget(rt, "hip"), *agents = jsonget(jsonget(rt, "hsa"), "agents");
    int64_t hc = jsonget_int(hip, "device_count", -1);
    r->hip_devices = hc >= 0 && hc < 100000 ? (int)hc : -1;
    r->hip_version = jsonget_str(hip, "runtime_version") ? str_dup(jsonget_str(hip, "runtime_version")) : NULL;
    size_t na = agents && json_object_is_type(agents, json_type_array) ? json_object_array_length(agents) : 0;
    r->gpus = na ? calloc(na, sizeof(*r->gpus)) : NULL;
    for (size_t i = 0; r->gpus && i < na; i++) {
        json_object *a = json_object_array_get_idx(agents, i);
        const char *t = jsonget_str(a, "device_type");
        if (!t || strcmp(t, "gpu") != 0)
            continue;
        struct rocm_gpu *g = &r->gpus[r->n++];
        const char *addr = jsonget_str(a, "pci_address"), *pn = jsonget_str(a, "product_name"), *nm = jsonget_str(a, "name");
        g->pci_address = addr ? str_dup(addr) : NULL;
        g->name = pn ? str_dup(pn) : NULL;
        g->gfx = nm ? str_dup(nm) : NULL;
        g->smoke = -1;
    }
    result_rocm_smoke(r, jsonget(data, "smoke"));
    result_rocm_p2p(r, jsonget(data, "p2p"));
    return r;
}

/* The HIP peer check, for --require p2p (peer_check.h). */
static void result_rocm_peers(const void *res, struct peer_check *out)
{
    const struct result_rocm *r = res;
    *out = (struct peer_check){.has = true, .gpus = r->hip_devices > 0 ? (size_t)r->hip_devices : 0,
                               .pairs = r->p2p_pairs, .passed = r->p2p_passed, .not_run = r->p2p_not_run,
                               .failing = r->p2p_failing};
}

/* One path per GPU agent HIP reaches, proven by the HIP smoke test (or untested). */
static void result_rocm_paths(const void *res, const struct probe *owner, struct compute_paths *out)
{
    const struct result_rocm *r = res;
    if (r->hip_devices <= 0)
        return;
    for (size_t i = 0; i < r->n; i++) {
        struct compute_path p = {.api = owner->compute_api, .api_label = owner->compute_api_label,
                                 .pci_address = r->gpus[i].pci_address, .name = r->gpus[i].name ? r->gpus[i].name : r->gpus[i].gfx,
                                 .gpu = true,
                                 .proof = r->gpus[i].smoke == 0 ? COMPUTE_PASSED : r->gpus[i].smoke == 1 ? COMPUTE_FAILED
                                                                                                        : COMPUTE_UNTESTED};
        snprintf(p.device, sizeof(p.device), "%zu", i);
        compute_paths_add(out, &p);
    }
}

const struct report_result_ops result_rocm_ops = {
    .section = "rocm",
    .to_json = NULL,
    .from_json = result_rocm_from_json,
    .free = result_rocm_free,
    .paths = result_rocm_paths,
    .peers = result_rocm_peers,
};

static const struct result_rocm *res_of(const struct report *r)
{
    return report_result(r, &result_rocm_ops);
}

/* GPUs HIP reaches (0 when it reaches none); *FIRST the first. */
static size_t rocm_reached(const struct report *r, const struct rocm_gpu **first)
{
    const struct result_rocm *res = report_result(r, &result_rocm_ops);
    *first = res && res->n ? &res->gpus[0] : NULL;
    return res && res->hip_devices > 0 ? res->n : 0;
}

static int rocm_req_parse(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "rocm") == 0 ? 0 : -1;
}

static bool rocm_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    (void)arg;
    const struct rocm_gpu *g;
    size_t n = rocm_reached(r, &g);
    size_t passed = 0;
    for (size_t i = 0; n && i < res_of(r)->n; i++)
        passed += res_of(r)->gpus[i].smoke == 0;
    *detail = n ? str_printf("HIP reaches %zu AMD GPU%s (%zu passed the HIP smoke test), e.g. %s %s", n, n == 1 ? "" : "s", passed,
                             g->pci_address ? g->pci_address : "", g->gfx ? g->gfx : "")
                : str_printf("HIP reaches no AMD GPU");
    return n > 0;
}

const struct probe_require rocm_requires[] = {
    {"rocm", NULL, rocm_req_parse, rocm_req_eval, PROBE_CHAIN_STACK},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_STACK},
};

/* The rocm target and the "HIP (ROCm): ..." line. */
void rocm_verdict(struct report *r, struct doctor_lines *out)
{
    const struct result_rocm *res = report_result(r, &result_rocm_ops);
    if (!res)
        return;
    const struct rocm_gpu *g;
    size_t n = rocm_reached(r, &g);
    const struct rocm_gpu *passed = NULL;
    for (size_t i = 0; n && i < res->n && !passed; i++)
        if (res->gpus[i].smoke == 0)
            passed = &res->gpus[i];
    const struct rocm_gpu *shown = passed ? passed : g;
    char *ready = NULL;
    if (n > 0)
        ready = str_printf("%s %s%s%s%s%s (HIP %s; %s%s)", passed ? "ready on" : "reaches", shown->pci_address ? shown->pci_address : "",
                           shown->pci_address ? " " : "", shown->gfx ? shown->gfx : "", shown->name ? " " : "", shown->name ? shown->name : "",
                           res->hip_version ? res->hip_version : "?", passed ? "HIP smoke test passed" : "untested: ",
                           passed ? "" : res->smoke_not_run ? res->smoke_not_run : "no HIP smoke test ran");
    char none[96];
    snprintf(none, sizeof(none), "not available (no AMD GPU reached%s)", res->hip_devices < 0 ? "; the runtime did not run" : "");
    doctor_api_verdict(r, out, &(struct doctor_api_verdict){.probe = &probe_rocm, .label = "HIP (ROCm)", .reached = n > 0,
                                                            .ready_detail = ready, .none = none,
                                                            .flags = DOCTOR_API_ERROR_BLOCKS});
}

void rocm_node_labels(const struct report_section *sec,
                      void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg)
{
    const struct result_rocm *res = sec->result;
    if (!res || res->hip_devices <= 0)
        return;
    char buf[32];
    snprintf(buf, sizeof(buf), "%zu", res->n);
    emit(arg, "rocm", "device-count", buf);
    emit(arg, "rocm", "hip-version", res->hip_version);
    if (res->n && res->gpus[0].gfx)
        emit(arg, "rocm", "gfx", res->gpus[0].gfx);
}

void rocm_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *d = sec->data, *k = jsonget(d, "kernel"), *nodes = jsonget(d, "nodes"), *rt = jsonget(d, "runtime");
    text_heading(t, "ROCm");
    text_kv(t, "amdgpu", "%s%s%s", jsonget_tri(k, "amdgpu_loaded") == GC_TRI_YES ? "loaded" : "not loaded",
            jsonget_str(k, "dkms_module") ? ", DKMS " : "", jsonget_str(k, "dkms_module") ? jsonget_str(k, "dkms_module") : "");
    for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
        json_object *n = json_object_array_get_idx(nodes, i);
        char key[32];
        snprintf(key, sizeof(key), "KFD node %lld", (long long)jsonget_int(n, "node", -1));
        if (jsonget_tri(n, "gpu") != GC_TRI_YES) {
            text_kv(t, key, "CPU");
            continue;
        }
        int64_t vram = jsonget_int(n, "vram_bytes", -1);
        text_kv(t, key, "%s %s, %s, VRAM %.1f GiB, %s", jsonget_str(n, "gfx") ? jsonget_str(n, "gfx") : "gfx?",
                jsonget_str(n, "pci_address") ? jsonget_str(n, "pci_address") : "?",
                jsonget_tri(n, "integrated") == GC_TRI_YES ? "integrated" : jsonget_tri(n, "integrated") == GC_TRI_NO ? "discrete" : "?",
                vram >= 0 ? (double)vram / (1024.0 * 1024.0 * 1024.0) : 0.0, jsonget_str(n, "support") ? jsonget_str(n, "support") : "?");
    }
    json_object *lib = jsonget(d, "libraries");
    text_kv(t, "libhsa-runtime64", "%s", jsonget_str(lib, "hsa") ? jsonget_str(lib, "hsa") : "not found");
    text_kv(t, "libamdhip64", "%s", jsonget_str(lib, "hip") ? jsonget_str(lib, "hip") : "not found");
    const char *rst = jsonget_str(rt, "status");
    if (rst && strcmp(rst, "not-loaded") == 0) {
        text_kv(t, "runtime", "not loaded: %s%s%s", jsonget_str(rt, "detail") ? jsonget_str(rt, "detail") : "?",
                jsonget_str(rt, "missing_needed") ? "; not found: " : "",
                jsonget_str(rt, "missing_needed") ? jsonget_str(rt, "missing_needed") : "");
    } else if (rt) {
        json_object *hsa = jsonget(rt, "hsa"), *hip = jsonget(rt, "hip");
        text_kv(t, "hsa_init", "%s", jsonget_str(jsonget(hsa, "init"), "text") ? jsonget_str(jsonget(hsa, "init"), "text")
                                                                                 : jsonget_str(rt, "status"));
        text_kv(t, "HIP", "runtime %s, %lld device(s)", jsonget_str(hip, "runtime_version") ? jsonget_str(hip, "runtime_version") : "?",
                (long long)jsonget_int(hip, "device_count", 0));
        json_object *smi = jsonget(rt, "smi");
        text_kv(t, "rocm-smi", "%s%s%s", jsonget_str(smi, "status") ? jsonget_str(smi, "status") : "?",
                jsonget_str(jsonget(smi, "init"), "text") ? ": " : "", jsonget_str(jsonget(smi, "init"), "text") ? jsonget_str(jsonget(smi, "init"), "text") : "");
    }
}
