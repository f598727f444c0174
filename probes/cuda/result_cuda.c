/* result_cuda.c: the cuda probe's typed facts: their name tables, building, and reading them from the section's JSON. */
#include "results/result_cuda.h"

#include "compute_path.h"
#include "doctor_facts.h"
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonget.h"
#include "peer_check.h"
#include "strutil.h"

static const char *const result_cuda_driver_status_tab[] = {
    [RESULT_CUDA_DRV_OK] = "ok",
    [RESULT_CUDA_DRV_FAILED] = "failed",
    [RESULT_CUDA_DRV_TIMEOUT] = "timeout",
    [RESULT_CUDA_DRV_CRASH] = "crash",
    [RESULT_CUDA_DRV_NO_LIBRARY] = "no-library",
    [RESULT_CUDA_DRV_MISSING_SYMBOLS] = "missing-symbols",
    [RESULT_CUDA_DRV_INIT_FAILED] = "init-failed",
};
const struct gc_names result_cuda_driver_status_names = GC_NAMES(result_cuda_driver_status_tab);

static const char *const result_cuda_smoke_status_tab[] = {
    [RESULT_CUDA_SMOKE_PASS] = "pass",
    [RESULT_CUDA_SMOKE_WRONG_RESULT] = "wrong-result",
    [RESULT_CUDA_SMOKE_JIT_FAILED] = "jit-failed",
    [RESULT_CUDA_SMOKE_RUN_FAILED] = "run-failed",
    [RESULT_CUDA_SMOKE_NO_COMPUTE_API] = "no-compute-api",
    [RESULT_CUDA_SMOKE_INIT_FAILED] = "init-failed",
    [RESULT_CUDA_SMOKE_TIMEOUT] = "timeout",
    [RESULT_CUDA_SMOKE_CRASH] = "crash",
    [RESULT_CUDA_SMOKE_NOT_RUN] = "not-run",
    [RESULT_CUDA_SMOKE_SKIPPED] = "skipped",
};
const struct gc_names result_cuda_smoke_status_names = GC_NAMES(result_cuda_smoke_status_tab);

/* A smoke status that is a string this version does not know (not pass, not missing). */
#define RESULT_CUDA_SMOKE_OTHER (-2)

struct result_cuda *result_cuda_new(void)
{
    struct result_cuda *r = calloc(1, sizeof(*r));
    if (r) {
        r->driver_status = -1;
        r->driver_version = -1;
    }
    return r;
}

static void result_cuda_free(void *res)
{
    struct result_cuda *r = res;
    if (!r)
        return;
    for (size_t i = 0; i < r->n_devs; i++) {
        free(r->devs[i].name);
        free(r->devs[i].pci_address);
    }
    free(r->devs);
    for (size_t i = 0; i < r->n_smoke; i++)
        json_object_put(r->smoke[i].entry);
    free(r->smoke);
    free(r->smoke_not_run);
    free(r->p2p_not_run);
    free(r->library_path);
    free(r->library_version);
    free(r->kernel_module_version);
    json_object_put(r->nvml_devices);
    free(r);
}

int result_cuda_add_dev(struct result_cuda *r, json_object *d)
{
    struct result_cuda_dev *devs = realloc(r->devs, (r->n_devs + 1) * sizeof(*devs));
    if (!devs)
        return -1;
    r->devs = devs;
    struct result_cuda_dev *x = &devs[r->n_devs++];
    int64_t ord = jsonget_int(d, "ordinal", -1), ma = jsonget_int(d, "cc_major", -1), mi = jsonget_int(d, "cc_minor", -1);
    x->ordinal = ord >= 0 && ord < 65536 ? (int)ord : -1;
    x->name = str_dup(jsonget_str(d, "name"));
    x->pci_address = str_dup(jsonget_str(d, "pci_address"));
    x->cc = ma >= 0 && ma < 100 && mi >= 0 && mi < 10 ? (int)(ma * 10 + mi) : -1;
    return 0;
}

int result_cuda_add_smoke(struct result_cuda *r, int ordinal, const char *status, json_object *entry)
{
    struct result_cuda_smoke *s = realloc(r->smoke, (r->n_smoke + 1) * sizeof(*s));
    if (!s)
        return -1;
    r->smoke = s;
    int st = gc_name_parse(&result_cuda_smoke_status_names, status);
    s[r->n_smoke++] = (struct result_cuda_smoke){.ordinal = ordinal,
                                                 .status = st >= 0 ? st : status ? RESULT_CUDA_SMOKE_OTHER : -1,
                                                 .entry = entry ? json_object_get(entry) : NULL};
    return 0;
}

int result_cuda_read_driver(struct result_cuda *r, json_object *data)
{
    json_object *drv = jsonget(data, "driver"), *lib = jsonget(drv, "library");
    const char *path = jsonget_str(lib, "path"), *ver = jsonget_str(lib, "version");
    const char *kmod = jsonget_str(drv, "kernel_module_version");
    free(r->library_path);
    free(r->library_version);
    free(r->kernel_module_version);
    r->library_path = path ? str_dup(path) : NULL;
    r->library_version = ver ? str_dup(ver) : NULL;
    r->kernel_module_version = kmod ? str_dup(kmod) : NULL;
    return (path && !r->library_path) || (ver && !r->library_version) || (kmod && !r->kernel_module_version) ? -1 : 0;
}

/* The facts from the section's DATA (a captured section, a test's JSON); DATA is left as it is: the
 * JSON printed is still the data (no to_json). */
static void *result_cuda_from_json(json_object *data)
{
    struct result_cuda *r = result_cuda_new();
    if (!r)
        return NULL;
    json_object *drv = jsonget(data, "driver");
    r->driver_status = gc_name_parse(&result_cuda_driver_status_names, jsonget_str(drv, "status"));
    int64_t v = jsonget_int(drv, "driver_version", -1);
    r->driver_version = v > 0 && v < 1000000 ? (int)v : -1;
    size_t n = 0;
    json_object *devs = jsonget_array(data, "devices", &n);
    for (size_t i = 0; devs && i < n; i++) {
        if (result_cuda_add_dev(r, json_object_array_get_idx(devs, i)) < 0)
            goto fail;
    }
    json_object *smoke = jsonget_array(data, "smoke", &n);
    for (size_t i = 0; smoke && i < n; i++) {
        json_object *s = json_object_array_get_idx(smoke, i);
        int64_t ord = jsonget_int(s, "ordinal", -1);
        if (ord < 0 || ord >= 65536) /* names no device */
            continue;
        if (result_cuda_add_smoke(r, (int)ord, jsonget_str(s, "status"), s) < 0)
            goto fail;
    }
    json_object *p2p = jsonget(data, "p2p");
    size_t np = 0;
    json_object *pairs = jsonget_array(p2p, "pairs", &np);
    for (size_t i = 0; pairs && i < np; i++) {
        json_object *pe = json_object_array_get_idx(pairs, i);
        const char *ps = jsonget_str(pe, "status");
        r->p2p_pairs++;
        r->p2p_passed += ps && strcmp(ps, "pass") == 0;
        if (!ps || strcmp(ps, "pass") != 0) {
            char fa[24], fb[24];
            snprintf(fa, sizeof(fa), "%d", (int)jsonget_int(pe, "from", -1));
            snprintf(fb, sizeof(fb), "%d", (int)jsonget_int(pe, "to", -1));
            peer_check_add_failing(r->p2p_failing, sizeof(r->p2p_failing), fa, fb);
        }
    }
    const char *pwhy = jsonget_str(p2p, "not_run");
    if (pwhy && !(r->p2p_not_run = str_dup(pwhy)))
        goto fail;
    json_object *nd = jsonget(jsonget(data, "nvml"), "devices");
    r->nvml_devices = nd ? json_object_get(nd) : NULL;
    const char *why = jsonget_str(data, "smoke_not_run");
    if ((why && !(r->smoke_not_run = str_dup(why))) || result_cuda_read_driver(r, data) < 0)
        goto fail;
    return r;
fail:
    result_cuda_free(r);
    return NULL;
}

/* Every CUDA device is a GPU path: passed or failed by the CUDA smoke test, or there and untested. */
static void result_cuda_paths(const void *res, const struct probe *owner, struct compute_paths *out)
{
    const struct result_cuda *c = res;
    for (size_t i = 0; i < c->n_devs; i++) {
        const struct result_cuda_dev *d = &c->devs[i];
        int st = result_cuda_smoke_of(c, d->ordinal);
        json_object *entry = NULL;
        for (size_t j = 0; j < c->n_smoke; j++)
            if (c->smoke[j].ordinal == d->ordinal)
                entry = c->smoke[j].entry;
        struct compute_path p = {
            .api = owner->compute_api,
            .api_label = owner->compute_api_label,
            .pci_address = d->pci_address,
            .name = d->name,
            .gpu = true,
            .proof = st == RESULT_CUDA_SMOKE_PASS ? COMPUTE_PASSED
                     : st == -1 || st == RESULT_CUDA_SMOKE_NOT_RUN || st == RESULT_CUDA_SMOKE_SKIPPED
                         ? COMPUTE_UNTESTED /* no test, or none run */
                         : COMPUTE_FAILED,  /* a failure, or a status this version does not know */
            .measurements = entry,
        };
        snprintf(p.device, sizeof(p.device), "%d", d->ordinal);
        compute_paths_add(out, &p);
    }
}

/* The CUDA peer check, for --require p2p (peer_check.h). */
static void result_cuda_peers(const void *res, struct peer_check *out)
{
    const struct result_cuda *r = res;
    *out = (struct peer_check){.has = true, .gpus = r->n_devs, .pairs = r->p2p_pairs, .passed = r->p2p_passed,
                               .not_run = r->p2p_not_run, .failing = r->p2p_failing};
}

const struct report_result_ops result_cuda_ops = {
    .section = "cuda",
    .to_json = NULL,
    .from_json = result_cuda_from_json,
    .free = result_cuda_free,
    .paths = result_cuda_paths,
    .peers = result_cuda_peers,
};

struct result_cuda *result_cuda_of(struct report_section *s)
{
    return s->result_ops == &result_cuda_ops ? s->result : NULL;
}

const struct result_cuda *result_cuda_get(const struct report *r)
{
    return report_result(r, &result_cuda_ops);
}

/* The NVML device at ADDR in C's list, or NULL. */
static json_object *result_cuda_nvml_dev(const struct result_cuda *c, const char *addr)
{
    size_t n = c && c->nvml_devices && json_object_is_type(c->nvml_devices, json_type_array)
                   ? json_object_array_length(c->nvml_devices)
                   : 0;
    for (size_t i = 0; addr && i < n; i++) {
        json_object *d = json_object_array_get_idx(c->nvml_devices, i);
        const char *bus = jsonget_str(d, "pci_bus_id");
        if (bus && strcasecmp(bus, addr) == 0)
            return d;
    }
    return NULL;
}

/* D's active links to FAR (to a far end that is no GPU of C's list when FAR is NULL). */
static int result_cuda_links_to(const struct result_cuda *c, json_object *d, const char *far)
{
    json_object *links = jsonget(d, "nvlink");
    int n = 0;
    for (size_t j = 0; links && json_object_is_type(links, json_type_array) && j < json_object_array_length(links); j++) {
        json_object *l = json_object_array_get_idx(links, j);
        const char *rem = jsonget_str(l, "remote_pci_bus_id");
        if (jsonget_tri(l, "active") != GC_TRI_YES || !rem)
            continue;
        n += far ? strcasecmp(rem, far) == 0 : !result_cuda_nvml_dev(c, rem);
    }
    return n;
}

int result_cuda_nvlinks(const struct result_cuda *c, const char *a, const char *b)
{
    json_object *da = result_cuda_nvml_dev(c, a), *db = result_cuda_nvml_dev(c, b);
    if (!da || !db)
        return -1;
    int direct = result_cuda_links_to(c, da, b);
    int sa = result_cuda_links_to(c, da, NULL), sb = result_cuda_links_to(c, db, NULL);
    return direct + (sa < sb ? sa : sb);
}

int result_cuda_smoke_of(const struct result_cuda *c, int ordinal)
{
    for (size_t i = 0; c && ordinal >= 0 && i < c->n_smoke; i++)
        if (c->smoke[i].ordinal == ordinal)
            return c->smoke[i].status;
    return -1;
}

size_t result_cuda_passed(const struct report *r, int min_cc, const struct result_cuda_dev **first)
{
    const struct result_cuda *c = result_cuda_get(r);
    size_t n = 0;
    if (first)
        *first = NULL;
    for (size_t i = 0; c && i < c->n_devs; i++) {
        const struct result_cuda_dev *d = &c->devs[i];
        if (result_cuda_smoke_of(c, d->ordinal) != RESULT_CUDA_SMOKE_PASS || d->cc < min_cc)
            continue;
        if (first && !*first)
            *first = d;
        n++;
    }
    return n;
}

int result_cuda_driver_version(const struct report *r)
{
    const struct result_cuda *c = result_cuda_get(r);
    return c ? c->driver_version : -1;
}

const char *result_cuda_smoke_missing(const struct report *r)
{
    const struct result_cuda *c = result_cuda_get(r);
    return c ? c->smoke_not_run : NULL;
}

const char *result_cuda_label(const struct result_cuda_dev *d, char *buf, size_t len)
{
    return doctor_device_label(d ? d->pci_address : NULL, d ? d->name : NULL, buf, len);
}
