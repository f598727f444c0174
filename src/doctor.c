/* doctor.c: the step after every probe: root causes, --require, verdict targets and verdict text. */
#include "doctor.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "checks.h"
#include "doctor_facts.h"
#include "jsonget.h"
#include "probe.h"
#include "run.h"
#include "strutil.h"
#include "vendor.h"

/* The CUDA wheel series of PyTorch, TensorFlow and JAX, the one table the verdict and --require use.
 * A series runs when the driver supports its CUDA major version (CUDA minor version compatibility: a
 * 12.x runtime runs on any driver that supports 12.0; CUDA Compatibility guide, "Minor Version
 * Compatibility") and the GPU's compute capability is one the toolkit still builds for:
 * - CUDA 12: sm_50 and newer (CUDA 12.0 release notes: Kepler, sm_35/sm_37, removed);
 * - CUDA 13: sm_75 and newer (CUDA 13.0 release notes, "Deprecated Architectures": Maxwell, Pascal
 *   and Volta, sm_50 to sm_72, removed).
 * Frameworks may build their wheels for fewer architectures than the toolkit allows. */
static const struct {
    const char *target; /* verdict target name */
    const char *label;
    int cuda_major;
    int min_cc;         /* major * 10 + minor */
} doctor_cuda_series[] = {
    {"cuda12", "CUDA 12", 12, 50},
    {"cuda13", "CUDA 13", 13, 75},
};

/* Findings that stop being errors when every GPU computes through CUDA (their rows say so:
 * CHECK_F_CUDA_RELIEF, CHECK_F_CUDA_RELIEF_NVIDIA): they say the GPU cannot be used through OpenCL,
 * which PyTorch, TensorFlow and JAX on NVIDIA do not need. */
static void doctor_cuda_relief(struct report *r)
{
    if (!doctor_gpus_compute_via_cuda(r))
        return;
    for (size_t i = 0; i < r->n_findings; i++) {
        struct report_finding *f = &r->findings[i];
        if (f->severity != REPORT_SEV_ERROR)
            continue;
        unsigned fl = checks_flags(r->catalogue, f->id);
        bool want = fl & CHECK_F_CUDA_RELIEF;
        if (!want && (fl & CHECK_F_CUDA_RELIEF_NVIDIA)) {
            const char *v = doctor_finding_vendor(r, f);
            want = v && strcmp(v, "nvidia") == 0;
        }
        if (!want)
            continue;
        char *m = str_printf("%s (a warning only: the GPU computes through CUDA)", f->message ? f->message : "");
        if (m) {
            free(f->message);
            f->message = m;
        }
        f->severity = REPORT_SEV_WARNING;
    }
}

/* A stack with no device here (a row flagged CHECK_F_NO_DEVICE: a driver library and no GPU for it): its
 * owner's other warnings and errors above the kernel describe software that nothing can run on this
 * machine. They stay in the report as information, caused by the finding that says why, and neither
 * fail the run nor become a verdict's reason (a CUDA 13 runtime beside driver 535 on a machine without
 * an NVIDIA GPU is not a problem of this machine). */
static void doctor_no_device_relief(struct report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *absent = &r->findings[i];
        if (!(checks_flags(r->catalogue, absent->id) & CHECK_F_NO_DEVICE))
            continue;
        const char *owner = checks_owner(r->catalogue, absent->id);
        for (size_t j = 0; owner && j < r->n_findings; j++) {
            struct report_finding *f = &r->findings[j];
            const char *fo = checks_owner(r->catalogue, f->id);
            if (j == i || f->severity == REPORT_SEV_INFO || f->caused_by_id || !fo || strcmp(fo, owner) != 0 ||
                checks_layer(r->catalogue, f->id) <= CHECK_LAYER_KERNEL ||
                (checks_flags(r->catalogue, f->id) & CHECK_F_NO_DEVICE))
                continue;
            char *m = str_printf("%s (no device for it on this machine: it matters only once there is one)",
                                 f->message ? f->message : "");
            if (m) {
                free(f->message);
                f->message = m;
            }
            f->severity = REPORT_SEV_INFO;
            report_finding_set_cause(f, absent->id, absent->subject);
        }
    }
}

/* ---- requirements ---- */

/* The --require name NAME as some probe declares it (struct probe.requires, in registry order), with
 * its owner in *OWNER and its argument in *ARG; NULL when no probe answers it. */
static const struct probe_require *doctor_find_require(const char *name, const struct probe **owner, int *arg)
{
    for (size_t p = 0; probe_registry[p]; p++)
        for (const struct probe_require *q = probe_registry[p]->requires; q && q->parse; q++)
            if (q->parse(name, arg) == 0) {
                if (owner)
                    *owner = probe_registry[p];
                return q;
            }
    return NULL;
}

/* "a, b, or c": every probe's forms, the GPU's before the CPU's as --help lists them (the registry
 * from its end: the probes that run last stand for more of the stack), open families (a built list)
 * last. */
static char *doctor_require_forms(void)
{
    char *out = NULL;
    size_t last = 0, np = 0; /* where the last form starts; the probes */
    while (probe_registry[np])
        np++;
    for (int pass = 0; pass < 2; pass++)
        for (size_t p = np; p-- > 0;)
            for (const struct probe_require *q = probe_registry[p]->requires; q && q->parse; q++) {
                if ((pass == 0) != (q->forms == NULL))
                    continue;
                char *form = q->forms ? q->forms() : str_dup(q->form);
                char *joined = str_printf("%s%s%s", out ? out : "", out ? ", " : "", form ? form : "");
                last = out ? strlen(out) + 2 : 0;
                free(form);
                free(out);
                out = joined;
            }
    if (out && last > 0) {
        char *with_or = str_printf("%.*sor %s", (int)last, out, out + last);
        free(out);
        out = with_or;
    }
    return out;
}

int doctor_validate_requires(char *const *names, size_t n, char **error)
{
    for (size_t i = 0; i < n; i++) {
        int arg;
        if (doctor_find_require(names[i], NULL, &arg))
            continue;
        char *forms = doctor_require_forms();
        *error = str_printf("--require: unknown requirement '%s'; valid: %s", names[i], forms ? forms : "");
        free(forms);
        return -1;
    }
    return 0;
}

bool doctor_eval_require(const struct report *r, const char *name, char **detail)
{
    int arg = 0;
    const struct probe_require *q = doctor_find_require(name, NULL, &arg);
    *detail = NULL;
    if (!q) {
        *detail = str_printf("unknown requirement");
        return false;
    }
    return q->eval(r, name, arg, detail);
}

/* ---- root causes ---- */

static const char *doctor_vendor_from_id(const char *vid)
{
    const struct vendor *v = vendor_by_pci_text(vid);
    return v ? v->name : NULL;
}

static const char *doctor_vendor_from_text(const char *s)
{
    if (!s)
        return NULL;
    static const struct {
        const char *word, *vendor;
    } words[] = {
        {"nvidia", "nvidia"}, {"nouveau", "nvidia"}, {"geforce", "nvidia"}, {"cuda", "nvidia"},
        {"amdgpu", "amd"},    {"radeon", "amd"},     {"/dev/kfd", "amd"},   {"advanced micro", "amd"},
        {"amd", "amd"},       {"rocm", "amd"},       {"intel", "intel"},    {"i915", "intel"},
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcasestr(s, words[i].word))
            return words[i].vendor;
    return NULL;
}

const char *doctor_finding_vendor(const struct report *r, const struct report_finding *f)
{
    const char *subj = f->subject;
    if (subj) {
        /* A PCI address: the device's vendor. */
        json_object *devs = jsonget(doctor_data(r, "pci"), "devices");
        for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
            json_object *d = json_object_array_get_idx(devs, i);
            const char *a = jsonget_str(d, "address");
            if (a && strcmp(a, subj) == 0) {
                const char *v = doctor_vendor_from_id(jsonget_str(d, "vendor_id"));
                if (v)
                    return v;
            }
        }
        /* An .icd file: the vendor the ICD probe recognised. */
        json_object *icds = jsonget(doctor_data(r, "icd"), "icds");
        for (size_t i = 0; icds && json_object_is_type(icds, json_type_array) && i < json_object_array_length(icds); i++) {
            json_object *d = json_object_array_get_idx(icds, i);
            const char *file = jsonget_str(d, "file");
            if (file && strcmp(file, subj) == 0) {
                const struct vendor *gv = vendor_by_name(jsonget_str(d, "vendor"));
                if (gv)
                    return gv->name;
                return doctor_vendor_from_text(jsonget_str(d, "library"));
            }
        }
        const char *v = doctor_vendor_from_text(subj);
        if (v)
            return v;
    }
    return doctor_vendor_from_text(f->message);
}

/* The layer of the GPU stack finding ID is about (its catalogue row), 0 when it is not about the GPU
 * stack: a finding can only be caused by one in a lower layer. */
static int doctor_tier(const struct report *r, const char *id)
{
    enum check_layer l = checks_layer(r->catalogue, id);
    return l == CHECK_LAYER_NONE || l == CHECK_LAYER_UNSET ? 0 : (int)l;
}

/* Findings that can cause others: not informational, and not marked CHECK_F_NEVER_CAUSE by their row. */
static bool doctor_can_cause(const struct report *r, const struct report_finding *f)
{
    return f->severity != REPORT_SEV_INFO && !(checks_flags(r->catalogue, f->id) & CHECK_F_NEVER_CAUSE);
}

static struct report_finding *doctor_root_of(struct report *r, struct report_finding *f)
{
    for (int hops = 0; f && f->caused_by_id && hops < 16; hops++) {
        struct report_finding *c = report_find_finding(r, f->caused_by_id, f->caused_by_subject);
        if (!c || c == f)
            break;
        f = c;
    }
    return f;
}

/* Link consequences to causes inside the CPU and GPU chains. */
static void doctor_link_chains(struct report *r)
{
    /* The CPU chain needs nothing here: the cpu probe links its findings itself (the reason AVX is
     * missing explains cpu.no-avx: probes/cpu/cpu_findings.c). */

    /* The GPU chain: PCI/driver/node problems, then ICDs, then OpenCL, then smoke. */
    for (size_t e = 0; e < r->n_findings; e++) {
        struct report_finding *eff = &r->findings[e];
        int te = doctor_tier(r, eff->id);
        if (te == 0 || eff->caused_by_id)
            continue;
        const char *ve = doctor_finding_vendor(r, eff);
        struct report_finding *best = NULL;
        int best_tier = 99;
        for (size_t c = 0; c < r->n_findings; c++) {
            struct report_finding *cause = &r->findings[c];
            int tc = doctor_tier(r, cause->id);
            if (c == e || tc == 0 || tc >= te || !doctor_can_cause(r, cause))
                continue;
            const char *vc = doctor_finding_vendor(r, cause);
            bool same_subject = cause->subject && eff->subject && strcmp(cause->subject, eff->subject) == 0;
            /* a finding about every vendor is explained by any cause; a cause about every vendor
             * explains any finding (the rows' CHECK_F_ALL_VENDORS, CHECK_F_CAUSES_ALL) */
            bool match = same_subject || (vc && ve && strcmp(vc, ve) == 0) ||
                         (checks_flags(r->catalogue, eff->id) & CHECK_F_ALL_VENDORS) ||
                         (checks_flags(r->catalogue, cause->id) & CHECK_F_CAUSES_ALL);
            if (!match)
                continue;
            if (tc < best_tier) {
                best = cause;
                best_tier = tc;
            }
        }
        if (best) {
            struct report_finding *root = doctor_root_of(r, best);
            /* Re-fetch: report_find_finding returns pointers into r->findings, which do not move here. */
            report_finding_set_cause(eff, root->id, root->subject);
        }
    }
}

/* A chain of findings: those an unmet requirement or a verdict target can be explained by. */
struct doctor_chain {
    enum probe_chain kind;
    const char *owner; /* the probe whose findings it holds (PROBE_CHAIN_STACK, PROBE_CHAIN_OWN) */
    const char *api;   /* or, for PROBE_CHAIN_STACK, the compute API whose probes' findings it holds */
};

/* The compute API (struct probe.compute_api) of the probe that declares finding ID, or NULL. */
static const char *doctor_api_of(const struct report *r, const char *id)
{
    const char *owner = checks_owner(r->catalogue, id);
    const struct probe *p = owner ? probe_find(owner) : NULL;
    return p ? p->compute_api : NULL;
}

static bool doctor_in_chain(const struct report *r, const struct doctor_chain *c, const char *id)
{
    enum check_layer l = checks_layer(r->catalogue, id);
    const char *owner = checks_owner(r->catalogue, id);
    bool own = owner && c->owner && strcmp(owner, c->owner) == 0;
    if (!own && c->api) {
        const char *api = doctor_api_of(r, id);
        own = api && strcmp(api, c->api) == 0;
    }
    switch (c->kind) {
    case PROBE_CHAIN_GPU:
        return doctor_tier(r, id) > 0;
    case PROBE_CHAIN_STACK:
        return own || l == CHECK_LAYER_HARDWARE || l == CHECK_LAYER_FIRMWARE || l == CHECK_LAYER_KERNEL;
    case PROBE_CHAIN_OWN:
    default:
        return own;
    }
}

static const struct doctor_chain doctor_gpu_chain = {PROBE_CHAIN_GPU, NULL, NULL};
static const struct doctor_chain doctor_cuda_chain = {PROBE_CHAIN_STACK, NULL, "cuda"};
static const struct doctor_chain doctor_opencl_chain = {PROBE_CHAIN_STACK, NULL, "opencl"};
static const struct doctor_chain doctor_cpu_chain = {PROBE_CHAIN_OWN, "cpu", NULL};
static const struct report_finding *doctor_first_root(const struct report *r, const struct doctor_chain *chain);

/* An unmet requirement is explained by the most severe root cause of its chain (GPU or CPU). */
static void doctor_link_requirements(struct report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        struct report_finding *f = &r->findings[i];
        if (strcmp(f->id, "require.unmet") != 0 || f->caused_by_id || !f->subject)
            continue;
        int arg;
        const struct probe *owner = NULL;
        const struct probe_require *q = doctor_find_require(f->subject, &owner, &arg);
        struct doctor_chain chain = {q ? q->chain : PROBE_CHAIN_GPU, owner ? owner->name : NULL, NULL};
        const struct report_finding *root = doctor_first_root(r, &chain);
        if (root)
            report_finding_set_cause(f, root->id, root->subject);
    }
}

void doctor_link_causes(struct report *r)
{
    doctor_link_chains(r);
    doctor_link_requirements(r);
}

/* ---- verdict ---- */

/* IDs of root-cause findings (not caused by another) in CHAIN. */
static const char **doctor_reasons(const struct report *r, const struct doctor_chain *chain, size_t *n)
{
    const char **ids = calloc(r->n_findings + 1, sizeof(*ids));
    *n = 0;
    for (size_t i = 0; ids && i < r->n_findings; i++) {
        const struct report_finding *f = &r->findings[i];
        if (f->caused_by_id || f->severity == REPORT_SEV_INFO)
            continue;
        bool want = doctor_in_chain(r, chain, f->id);
        bool dup = false;
        for (size_t j = 0; j < *n; j++)
            dup |= strcmp(ids[j], f->id) == 0;
        if (want && !dup)
            ids[(*n)++] = f->id;
    }
    return ids;
}

/* Findings that explain nothing: never a verdict's root cause (CHECK_F_NEVER_ROOT: a driver for absent
 * hardware). */
static bool doctor_never_root(const struct report *r, const struct report_finding *f)
{
    return checks_flags(r->catalogue, f->id) & CHECK_F_NEVER_ROOT;
}

/* The most severe root cause (not caused by another) in CHAIN, or NULL. Info findings count only when
 * nothing more severe is there (pci.no-gpu explains a missing GPU). */
static const struct report_finding *doctor_first_root(const struct report *r, const struct doctor_chain *chain)
{
    size_t n = 0;
    const struct report_finding **sorted = report_sorted_findings(r, &n);
    const struct report_finding *found = NULL;
    for (size_t i = 0; i < n && !found; i++) {
        if (sorted[i]->caused_by_id || doctor_never_root(r, sorted[i]))
            continue;
        if (doctor_in_chain(r, chain, sorted[i]->id))
            found = sorted[i];
    }
    free(sorted);
    return found;
}

/* The CUDA wheel line and the cuda12/cuda13 targets: "CUDA for PyTorch / TensorFlow / JAX wheels
 * (CUDA 12, CUDA 13): ...". Returns the line (heap). */
static char *doctor_cuda_verdict(struct report *r)
{
    size_t nreasons = 0;
    const char **reasons = doctor_reasons(r, &doctor_cuda_chain, &nreasons);
    const struct report_finding *root = doctor_first_root(r, &doctor_cuda_chain);
    int dv = doctor_cuda_driver_version(r);
    const struct result_cuda *cuda = result_cuda_get(r);
    size_t ndev = cuda ? cuda->n_devs : 0;
    const char *smoke_missing = doctor_cuda_smoke_missing(r);
    char *parts[2] = {NULL, NULL}, *whys[2] = {NULL, NULL};
    bool all_ready = true, any_ready = false;
    char label[256];
    size_t ns = sizeof(doctor_cuda_series) / sizeof(doctor_cuda_series[0]);
    for (size_t i = 0; i < ns && i < 2; i++) {
        int need = doctor_cuda_series[i].cuda_major * 1000;
        const struct result_cuda_dev *dev = NULL;
        size_t n = doctor_cuda_passed(r, doctor_cuda_series[i].min_cc, &dev);
        char *why;
        if (dv < 0 || ndev == 0)
            why = root ? str_printf("%s (%s)", root->message, root->id)
                       : str_printf("no CUDA device%s", dv < 0 ? " (no working NVIDIA driver)" : "");
        else if (dv < need)
            why = str_printf("the driver supports CUDA %d.%d only", dv / 1000, (dv % 1000) / 10);
        else if (n > 0)
            why = NULL;
        else {
            int best = -1;
            for (size_t j = 0; j < ndev; j++)
                if (cuda->devs[j].cc > best)
                    best = cuda->devs[j].cc;
            if (best >= 0 && best < doctor_cuda_series[i].min_cc)
                why = str_printf("compute capability %d.%d is below the %d.%d this series needs", best / 10, best % 10,
                                 doctor_cuda_series[i].min_cc / 10, doctor_cuda_series[i].min_cc % 10);
            else if (smoke_missing)
                why = str_printf("not proven: the CUDA smoke test did not run (%s)", smoke_missing);
            else
                why = root ? str_printf("no GPU passed the CUDA smoke test: %s (%s)", root->message, root->id)
                           : str_printf("no GPU passed the CUDA smoke test");
        }
        char *detail = why ? str_printf("not ready: %s", why)
                           : str_printf("ready on %s", doctor_cuda_label(dev, label, sizeof(label)));
        report_set_target(r, doctor_cuda_series[i].target, why == NULL, detail, reasons);
        parts[i] = str_printf("%s %s", doctor_cuda_series[i].label, why ? detail : "ready");
        all_ready &= why == NULL;
        any_ready |= why == NULL;
        whys[i] = why;
        free(detail);
    }
    free(reasons);
    const struct result_cuda_dev *first = NULL;
    doctor_cuda_passed(r, -1, &first);
    char *line;
    if (dv < 0 && !root)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available (no NVIDIA driver)");
    else if (root && root->severity == REPORT_SEV_INFO && !any_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available: %s (%s)", root->message, root->id);
    else if (all_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): ready on %s (driver CUDA "
                          "%d.%d)",
                          doctor_cuda_label(first, label, sizeof(label)), dv / 1000, (dv % 1000) / 10);
    else if (whys[0] && whys[1] && strcmp(whys[0], whys[1]) == 0)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): not ready: %s", whys[0]);
    else
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: %s; %s", parts[0] ? parts[0] : "",
                          parts[1] ? parts[1] : "");
    for (size_t i = 0; i < 2; i++) {
        free(parts[i]);
        free(whys[i]);
    }
    return line;
}

/* The OpenCL line, the opencl target and the gpu target where OpenCL ran (NCUDA GPUs passed the CUDA
 * smoke test, CUDA_GPU the first): the line goes to LINES[*NL]; *GPU_MISSING when no GPU computes. */
static void doctor_opencl_verdict(struct report *r, bool smoke_ran, size_t ncuda, const struct result_cuda_dev *cuda_gpu,
                                  char **lines, size_t *nlp, bool *gpu_missing)
{
    const struct doctor_chain *gpu_chain = &doctor_gpu_chain;
    char label[256];
    size_t nreasons, nl = *nlp;
    /* The gpu target (a GPU computes through any API) takes its reasons from the whole GPU stack; the
     * OpenCL line and target only from OpenCL's path and the layers below every API. */
    const char **reasons = doctor_reasons(r, gpu_chain, &nreasons);
    const struct report_finding *root = doctor_first_root(r, gpu_chain);
    size_t nocl = 0;
    const char **ocl_reasons = doctor_reasons(r, &doctor_opencl_chain, &nocl);
    const struct report_finding *ocl_root = doctor_first_root(r, &doctor_opencl_chain);
    const struct result_smoke_dev *gpu = NULL, *any = NULL;
    size_t ngpu = 0, nany = 0;
    if (smoke_ran) {
        ngpu = doctor_passed_devices(r, true, NULL, &gpu);
        nany = doctor_passed_devices(r, false, NULL, &any);
    }
    char *detail;
    if (!smoke_ran && ncuda > 0) {
        detail = str_printf("ready on %s (CUDA)", doctor_cuda_label(cuda_gpu, label, sizeof(label)));
        report_set_target(r, "gpu", true, detail, reasons);
        free(detail);
    } else if (!smoke_ran) {
        detail = str_printf("the smoke test did not run: no device is proven to compute");
        report_set_target(r, "gpu", false, detail, reasons);
        lines[nl++] = str_printf("GPU compute (OpenCL): not tested (the smoke test did not run)");
        free(detail);
    } else if (ngpu > 0) {
        detail = str_printf("ready on %s", doctor_smoke_label(gpu, label, sizeof(label)));
        report_set_target(r, "gpu", true, detail, reasons);
        lines[nl++] = str_printf("GPU compute (OpenCL): %s%s", detail, ngpu > 1 ? " and more" : "");
        free(detail);
    } else if (ncuda > 0) {
        /* No GPU computes through OpenCL, but one does through CUDA: the GPU target is ready (the
         * OpenCL findings are warnings then: doctor_cuda_relief). */
        detail = ocl_root ? str_printf("%s (%s)", ocl_root->message, ocl_root->id)
                          : str_printf("no GPU passed the smoke test");
        lines[nl++] = str_printf("GPU compute (OpenCL): not available: %s", detail);
        free(detail);
        detail = str_printf("ready on %s (CUDA)", doctor_cuda_label(cuda_gpu, label, sizeof(label)));
        report_set_target(r, "gpu", true, detail, reasons);
        free(detail);
    } else {
        detail = root ? str_printf("%s (%s)", root->message, root->id) : str_printf("no GPU passed the smoke test");
        if (root && nreasons == 0 && reasons)
            reasons[nreasons++] = root->id; /* an info root cause such as pci.no-gpu */
        report_set_target(r, "gpu", false, detail, reasons);
        free(detail);
        detail = ocl_root ? str_printf("%s (%s)", ocl_root->message, ocl_root->id)
                          : str_printf("no GPU passed the smoke test");
        lines[nl++] = str_printf("GPU compute (OpenCL): %s: %s",
                                 ocl_root && ocl_root->severity == REPORT_SEV_INFO ? "not available" : "not ready",
                                 detail);
        free(detail);
        *gpu_missing = true;
    }
    if (smoke_ran) {
        detail = nany > 0 ? str_printf("ready on %zu device%s, e.g. %s", nany, nany == 1 ? "" : "s",
                                       doctor_smoke_label(any, label, sizeof(label)))
                          : str_printf("no OpenCL device passed the smoke test");
        report_set_target(r, "opencl", nany > 0, detail, ocl_reasons);
        lines[nl++] = str_printf("OpenCL: %s", detail);
        free(detail);
    }
    free(reasons);
    free(ocl_reasons);
    *nlp = nl;
}

void doctor_verdict(struct report *r)
{
    const struct doctor_chain *gpu_chain = &doctor_gpu_chain, *cpu_chain = &doctor_cpu_chain;
    char *lines[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t nl = 0;
    char label[256];
    size_t nreasons;

    bool smoke_ran = doctor_data(r, "smoke") != NULL;
    bool opencl_ran = doctor_data(r, "opencl") != NULL;
    bool gpu_missing = false;
    const struct result_cuda_dev *cuda_gpu = NULL;
    size_t ncuda = doctor_cuda_passed(r, -1, &cuda_gpu);
    if (!smoke_ran && !opencl_ran && ncuda > 0) {
        const char **reasons = doctor_reasons(r, gpu_chain, &nreasons);
        char *detail = str_printf("ready on %s (CUDA)", doctor_cuda_label(cuda_gpu, label, sizeof(label)));
        report_set_target(r, "gpu", true, detail, reasons);
        free(detail);
        free(reasons);
    }
    if (smoke_ran || opencl_ran)
        doctor_opencl_verdict(r, smoke_ran, ncuda, cuda_gpu, lines, &nl, &gpu_missing);
    if (doctor_data(r, "cuda") && nl < 6)
        lines[nl++] = doctor_cuda_verdict(r);

    json_object *flags = jsonget(doctor_data(r, "cpu"), "flags");
    json_object *avx = jsonget(flags, "avx");
    if (avx && json_object_is_type(avx, json_type_boolean)) {
        const char **reasons = doctor_reasons(r, cpu_chain, &nreasons);
        bool ok = json_object_get_boolean(avx);
        const struct report_finding *root = ok ? NULL : doctor_first_root(r, cpu_chain);
        if (root && root->severity == REPORT_SEV_INFO)
            root = NULL;
        char *detail = ok ? str_printf("AVX is usable") : str_printf("AVX is not usable%s%s%s", root ? ": " : "",
                                                                       root ? root->message : "", "");
        report_set_target(r, "cpu_avx", ok, detail, reasons);
        lines[nl++] = str_printf("CPU for prebuilt TensorFlow (AVX): %s", ok ? "ok" : detail);
        free(detail);
        free(reasons);
    }

    size_t ne = report_count_severity(r, REPORT_SEV_ERROR), nw = report_count_severity(r, REPORT_SEV_WARNING);
    char *verdict = report_is_ready(r)
                        ? str_printf("Verdict: ready (%zu warning%s)%s", nw, nw == 1 ? "" : "s",
                                     gpu_missing ? ", but no GPU computes here: --require gpu makes that an error"
                                                 : "")
                        : str_printf("Verdict: not ready (%zu error%s, %zu warning%s)", ne, ne == 1 ? "" : "s", nw,
                                     nw == 1 ? "" : "s");
    size_t len = strlen(verdict ? verdict : "") + 1;
    for (size_t i = 0; i < nl; i++)
        len += strlen(lines[i] ? lines[i] : "") + 1;
    char *text = calloc(1, len);
    for (size_t i = 0; text && i < nl; i++) {
        if (lines[i]) {
            strcat(text, lines[i]);
            strcat(text, "\n");
        }
    }
    if (text && verdict)
        strcat(text, verdict);
    for (size_t i = 0; i < nl; i++)
        free(lines[i]);
    free(verdict);
    free(r->verdict_text);
    r->verdict_text = text;
}

int doctor_run(const struct cli_options *o, struct report *r, char **error)
{
    if (doctor_validate_requires(o->requires, o->n_requires, error) < 0)
        return GC_EXIT_USAGE;
    for (size_t i = 0; i < o->n_requires; i++) {
        char *detail = NULL;
        bool met = doctor_eval_require(r, o->requires[i], &detail);
        report_add_requirement(r, o->requires[i], met, "%s", detail ? detail : "");
        if (!met)
            report_add_finding(r, "require.unmet", o->requires[i], "Requirement '%s' is not met: %s", o->requires[i],
                               detail ? detail : "");
        free(detail);
    }
    doctor_cuda_relief(r);
    doctor_no_device_relief(r);
    doctor_link_causes(r);
    doctor_verdict(r);
    return 0;
}
