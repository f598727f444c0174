/* fakeapi.c: a compute API that exists only in the test suite, to prove a new stack needs nothing under src/ (issue 25). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_path.h"
#include "doctor.h"
#include "probe.h"
#include "strutil.h"

/* Its devices come from the environment, GC_FAKEAPI="ADDR=passed;ADDR=failed;ADDR=untested" (ADDR "-" for
 * none); GC_FAKEAPI_WARN=1 adds a warning about its library. Unset: no device at all. */
enum { FAKEAPI_MAX = 16 };

struct fakeapi_dev {
    char addr[32]; /* "" when unknown */
    char name[32];
    enum compute_proof proof;
};

struct fakeapi_result {
    struct fakeapi_dev devs[FAKEAPI_MAX];
    size_t n;
};

extern const struct probe probe_fakeapi;

static const struct check fakeapi_checks[] = {
    {"fakeapi.no-device", REPORT_SEV_INFO, "FakeAPI's library is installed but it sees no device",
     "Nothing to fix unless you expected a FakeAPI device.", CHECK_LAYER_RUNTIME | CHECK_F_NO_DEVICE},
    {"fakeapi.device-failed", REPORT_SEV_ERROR, "A FakeAPI device computed a wrong result",
     "Replace the device.", CHECK_LAYER_COMPUTE},
    {"fakeapi.old-library", REPORT_SEV_WARNING, "FakeAPI's library is older than its frameworks need",
     "Update FakeAPI.", CHECK_LAYER_RUNTIME},
};

static const char *const fakeapi_proofs[] = {"passed", "failed", "untested"};

static json_object *fakeapi_to_json(const void *res)
{
    const struct fakeapi_result *f = res;
    json_object *o = json_object_new_object(), *devs = json_object_new_array();
    for (size_t i = 0; i < f->n; i++) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "pci_address", f->devs[i].addr[0] ? json_object_new_string(f->devs[i].addr) : NULL);
        json_object_object_add(d, "name", json_object_new_string(f->devs[i].name));
        json_object_object_add(d, "proof", json_object_new_string(fakeapi_proofs[f->devs[i].proof]));
        json_object_array_add(devs, d);
    }
    json_object_object_add(o, "devices", devs);
    return o;
}

static void *fakeapi_from_json(json_object *data)
{
    (void)data;
    return calloc(1, sizeof(struct fakeapi_result));
}

static void fakeapi_paths(const void *res, const struct probe *owner, struct compute_paths *out)
{
    const struct fakeapi_result *f = res;
    for (size_t i = 0; i < f->n; i++) {
        struct compute_path p = {.api = owner->compute_api, .api_label = owner->compute_api_label,
                                 .pci_address = f->devs[i].addr[0] ? f->devs[i].addr : NULL,
                                 .name = f->devs[i].name, .gpu = true, .proof = f->devs[i].proof};
        snprintf(p.device, sizeof(p.device), "%zu", i);
        compute_paths_add(out, &p);
    }
}

static const struct report_result_ops fakeapi_ops = {
    .section = "fakeapi",
    .to_json = fakeapi_to_json,
    .from_json = fakeapi_from_json,
    .free = free,
    .paths = fakeapi_paths,
};

static int fakeapi_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct fakeapi_result *f = calloc(1, sizeof(*f));
    if (!f)
        return PROBE_INTERNAL_ERROR;
    const char *env = getenv("GC_FAKEAPI");
    char *list = env ? str_dup(env) : NULL, *save = NULL;
    for (char *tok = list ? strtok_r(list, ";", &save) : NULL; tok && f->n < FAKEAPI_MAX; tok = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(tok, '=');
        struct fakeapi_dev *d = &f->devs[f->n];
        if (eq)
            *eq = '\0';
        snprintf(d->addr, sizeof(d->addr), "%s", strcmp(tok, "-") == 0 ? "" : tok);
        snprintf(d->name, sizeof(d->name), "FakeGPU %zu", f->n);
        d->proof = !eq ? COMPUTE_PASSED : strcmp(eq + 1, "failed") == 0 ? COMPUTE_FAILED
                                     : strcmp(eq + 1, "untested") == 0 ? COMPUTE_UNTESTED
                                                                       : COMPUTE_PASSED;
        if (d->proof == COMPUTE_FAILED)
            report_add_finding(ctx->report, "fakeapi.device-failed", d->addr[0] ? d->addr : d->name,
                               "%s computed a wrong result", d->name);
        f->n++;
    }
    free(list);
    if (f->n == 0)
        report_add_finding(ctx->report, "fakeapi.no-device", NULL, "FakeAPI 1.0 is installed but sees no device");
    if (getenv("GC_FAKEAPI_WARN"))
        report_add_finding(ctx->report, "fakeapi.old-library", "libfakeapi.so.1", "libfakeapi.so.1 is 1.0, 2.0 needed");
    report_section_set_result(sec, &fakeapi_ops, f);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    report_section_add_line(sec, REPORT_MARK_INFO, "FakeAPI", "%zu device%s", f->n, f->n == 1 ? "" : "s");
    return PROBE_DONE;
}

static int fakeapi_req_parse(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "fakeapi") == 0 ? 0 : -1;
}

static size_t fakeapi_passed(const struct report *r, const struct fakeapi_dev **first)
{
    const struct fakeapi_result *f = report_result(r, &fakeapi_ops);
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; f && i < f->n; i++)
        if (f->devs[i].proof == COMPUTE_PASSED && n++ == 0)
            *first = &f->devs[i];
    return n;
}

static bool fakeapi_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    (void)arg;
    const struct fakeapi_dev *d;
    size_t n = fakeapi_passed(r, &d);
    *detail = n ? str_printf("%zu FakeAPI device%s passed, e.g. %s", n, n == 1 ? "" : "s", d->name)
                : str_printf("no FakeAPI device passed its test");
    return n > 0;
}

static const struct probe_require fakeapi_requires[] = {
    {"fakeapi", NULL, fakeapi_req_parse, fakeapi_req_eval, PROBE_CHAIN_STACK},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_STACK},
};

/* The fakeapi target and its line. */
static void fakeapi_verdict(struct report *r, struct doctor_lines *out)
{
    if (!report_result(r, &fakeapi_ops))
        return;
    const struct fakeapi_dev *d;
    size_t n = fakeapi_passed(r, &d);
    doctor_api_verdict(r, out, &(struct doctor_api_verdict){.probe = &probe_fakeapi, .label = "FakeAPI", .reached = n > 0,
                                                            .ready_detail = n ? str_printf("ready on %s%s%s", d->addr, d->addr[0] ? " " : "", d->name) : NULL,
                                                            .none = "not ready: no device passed (none)",
                                                            .flags = DOCTOR_API_SAY_NOT_READY});
}

static const char *const fakeapi_deps[] = {"pci", NULL};

const struct probe probe_fakeapi = {
    .name = "fakeapi",
    .compute_api = "fakeapi",
    .compute_api_label = "FakeAPI",
    .title = "a compute API of the test suite only",
    .deps = fakeapi_deps,
    .checks = fakeapi_checks,
    .n_checks = sizeof(fakeapi_checks) / sizeof(fakeapi_checks[0]),
    .requires = fakeapi_requires,
    .result = &fakeapi_ops,
    .run = fakeapi_run,
    .verdict = fakeapi_verdict,
};
