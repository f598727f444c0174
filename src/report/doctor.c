/* doctor.c: the step after every probe: root causes, --require, verdict targets and verdict text. */
#include "doctor.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "checks.h"
#include "compute_path.h"
#include "doctor_facts.h"
#include "jsonget.h"
#include "peer_check.h"
#include "probe.h"
#include "strutil.h"
#include "vendor.h"

static const char *doctor_api_of(const struct report *r, const char *id);

/* Findings that say a GPU cannot be used through their API (rows flagged CHECK_F_PATH_RELIEF, or
 * CHECK_F_PATH_RELIEF_VENDOR for the finding's vendor's GPUs) stop being errors when every such GPU
 * computes through another API: an NVIDIA GPU that CUDA proves needs no NVIDIA OpenCL ICD for PyTorch,
 * TensorFlow or JAX. What is broken (a crashing ICD) stays a warning; what is only absent (rows flagged
 * CHECK_F_RELIEF_INFO: no OpenCL driver for that GPU) becomes information, warnings included, and so it
 * does where the bus has no GPU at all (a GPU-less CI runner without OpenCL is not "not ready"). */
/* After the relief, no summary line of a relieved finding's owner says more than that owner's worst finding
 * still says: "[FAIL] OpenCL  no platform" beside cl.no-platforms made information would contradict the
 * verdict. Lines of owners nothing was relieved for keep their marks. */
static void doctor_relief_marks(struct report *r, const char *owner)
{
    struct report_section *s = report_find_section(r, owner);
    if (!s)
        return;
    enum report_severity worst = REPORT_SEV_INFO;
    for (size_t i = 0; i < r->n_findings; i++) {
        const char *fo = checks_owner(r->catalogue, r->findings[i]->id);
        if (fo && strcmp(fo, owner) == 0 && r->findings[i]->severity > worst)
            worst = r->findings[i]->severity;
    }
    enum report_mark cap = worst == REPORT_SEV_ERROR ? REPORT_MARK_ERROR
                           : worst == REPORT_SEV_WARNING ? REPORT_MARK_WARN : REPORT_MARK_INFO;
    for (size_t i = 0; i < s->n_lines; i++)
        if ((s->lines[i].mark == REPORT_MARK_ERROR || s->lines[i].mark == REPORT_MARK_WARN) && s->lines[i].mark > cap)
            s->lines[i].mark = cap;
}

/* The owners findings were relieved for (a handful of probes at most: the catalogue's names, not copied). */
struct relieved_owners {
    const char *owner[16];
    size_t n;
};

static void doctor_relief_marks_later(struct relieved_owners *o, const char *owner)
{
    if (!owner)
        return;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->owner[i], owner) == 0)
            return;
    if (o->n < sizeof(o->owner) / sizeof(o->owner[0]))
        o->owner[o->n++] = owner;
}

static void doctor_path_relief(struct report *r)
{
    struct compute_paths ps = compute_paths_of(r);
    bool no_gpu = doctor_bus_gpu_count(r) == 0;
    struct relieved_owners later = {.n = 0};
    for (size_t i = 0; (ps.n > 0 || no_gpu) && i < r->n_findings; i++) {
        struct report_finding *f = r->findings[i];
        unsigned fl = checks_flags(r->catalogue, f->id);
        if (!(fl & (CHECK_F_PATH_RELIEF | CHECK_F_PATH_RELIEF_VENDOR)))
            continue;
        bool absence = (fl & CHECK_F_RELIEF_INFO) != 0;
        if (f->severity != REPORT_SEV_ERROR && !(absence && f->severity == REPORT_SEV_WARNING))
            continue;
        if (absence && no_gpu) {
            /* No GPU on the bus: an API absent here keeps no GPU from computing (--require opencl still asks
             * for it, and the API's own verdict line still says it is missing). */
            char *m = str_printf("%s (information: there is no GPU on this machine for it)", f->message ? f->message : "");
            if (m) {
                free(f->message);
                f->message = m;
            }
            f->severity = REPORT_SEV_INFO;
            doctor_relief_marks_later(&later, checks_owner(r->catalogue, f->id));
            continue;
        }
        const char *vendor = NULL;
        if (!(fl & CHECK_F_PATH_RELIEF)) {
            vendor = doctor_finding_vendor(r, f);
            if (!vendor)
                continue;
        }
        const char *via = NULL;
        if (!doctor_gpus_served(r, &ps, vendor, doctor_api_of(r, f->id), &via))
            continue;
        char *m = str_printf(absence ? "%s (information: the GPU computes through %s)"
                                     : "%s (a warning only: the GPU computes through %s)",
                             f->message ? f->message : "", via);
        if (m) {
            free(f->message);
            f->message = m;
        }
        f->severity = absence ? REPORT_SEV_INFO : REPORT_SEV_WARNING;
        doctor_relief_marks_later(&later, checks_owner(r->catalogue, f->id));
    }
    compute_paths_free(&ps);
    for (size_t i = 0; i < later.n; i++)
        doctor_relief_marks(r, later.owner[i]);
}

/* A stack with no device here (a row flagged CHECK_F_NO_DEVICE: a driver library and no GPU for it): its
 * owner's other warnings and errors above the kernel describe software that nothing can run on this
 * machine. They stay in the report as information, caused by the finding that says why, and neither
 * fail the run nor become a verdict's reason (a CUDA 13 runtime beside driver 535 on a machine without
 * an NVIDIA GPU is not a problem of this machine). */
static void doctor_no_device_relief(struct report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *absent = r->findings[i];
        if (!(checks_flags(r->catalogue, absent->id) & CHECK_F_NO_DEVICE))
            continue;
        const char *owner = checks_owner(r->catalogue, absent->id);
        for (size_t j = 0; owner && j < r->n_findings; j++) {
            struct report_finding *f = r->findings[j];
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
/* The core's own --require forms: a GPU computes, through any API (the compute paths), the meaning of the
 * gpu target too. */
static int doctor_req_parse_gpu(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "gpu") == 0 ? 0 : -1;
}

static int doctor_req_parse_gpus(const char *name, int *arg)
{
    uint64_t n;
    if (!str_starts_with(name, "gpus>=") || str_to_u64(name + 6, 10, &n) < 0 || n < 1 || n > 4096)
        return -1;
    *arg = (int)n;
    return 0;
}

static bool doctor_req_eval_gpus(const struct report *r, const char *name, int arg, char **detail)
{
    char label[320];
    size_t n = doctor_gpu_count(r, label, sizeof(label));
    struct compute_paths ps = compute_paths_of(r);
    size_t tested = 0;
    for (size_t i = 0; i < ps.n; i++)
        tested += ps.v[i].proof != COMPUTE_UNTESTED;
    compute_paths_free(&ps);
    if (n == 0 && tested == 0)
        *detail = str_printf("no GPU is proven to compute: no compute test ran on a device (it did not run, or "
                             "found none)");
    else if (strcmp(name, "gpu") == 0)
        *detail = n ? str_printf("%zu GPU%s passed, e.g. %s", n, n == 1 ? "" : "s", label)
                    : str_printf("no GPU passed a compute test (any API)");
    else
        *detail = str_printf("%zu GPU%s passed a compute test (any API), %d needed", n, n == 1 ? "" : "s", arg);
    return n > 0 && (int)n >= arg;
}

static const struct probe_require doctor_requires[] = {
    {"gpu", NULL, doctor_req_parse_gpu, doctor_req_eval_gpus, PROBE_CHAIN_GPU},
    {"gpus>=N", NULL, doctor_req_parse_gpus, doctor_req_eval_gpus, PROBE_CHAIN_GPU},
    {"p2p", NULL, peer_req_parse, peer_req_eval, PROBE_CHAIN_GPU},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_GPU},
};

static const struct probe_require *doctor_find_require(const char *name, const struct probe **owner, int *arg)
{
    if (owner)
        *owner = NULL;
    for (const struct probe_require *q = doctor_requires; q->parse; q++)
        if (q->parse(name, arg) == 0)
            return q;
    for (size_t p = 0; probe_registry[p]; p++)
        for (const struct probe_require *q = probe_registry[p]->requires; q && q->parse; q++)
            if (q->parse(name, arg) == 0) {
                if (owner)
                    *owner = probe_registry[p];
                return q;
            }
    return NULL;
}

/* "a, b, or c": every probe's forms, the GPU's before the CPU's (the registry from its end: the probes
 * that run last stand for more of the stack), open families last: their whole built list, or where
 * BRIEF (--help) the row's own short form when it has one. */
char *doctor_require_forms(bool brief)
{
    char *out = NULL;
    size_t last = 0, np = 0; /* where the last form starts; the probes */
    while (probe_registry[np])
        np++;
    for (const struct probe_require *q = doctor_requires; q->parse; q++) {
        char *joined = str_printf("%s%s%s", out ? out : "", out ? ", " : "", q->form);
        free(out);
        out = joined;
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t p = np; p-- > 0;)
            for (const struct probe_require *q = probe_registry[p]->requires; q && q->parse; q++) {
                if ((pass == 0) != (q->forms == NULL))
                    continue;
                char *form = q->forms && !(brief && q->form) ? q->forms() : str_dup(q->form);
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
        char *forms = doctor_require_forms(false);
        *error = str_printf("--require: unknown requirement '%s'; valid: %s", names[i], forms ? forms : "");
        free(forms);
        return -1;
    }
    return 0;
}

const struct probe *doctor_require_owner(const char *name)
{
    int arg = 0;
    const struct probe *owner = NULL;
    doctor_find_require(name, &owner, &arg);
    return owner;
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

const char *doctor_finding_vendor(const struct report *r, const struct report_finding *f)
{
    /* A probe of one vendor's stack: every finding of it is about that vendor. */
    const char *owner = checks_owner(r->catalogue, f->id);
    const struct probe *op = owner ? probe_find(owner) : NULL;
    if (op && op->vendor)
        return op->vendor;
    const char *subj = f->subject;
    if (subj) {
        /* What the probes know of the subject (a PCI address, an .icd file...): each asked in turn. */
        for (size_t p = 0; probe_registry[p]; p++) {
            const struct probe *pr = probe_registry[p];
            const struct report_section *s = pr->subject_vendor ? report_find_section(r, pr->name) : NULL;
            if (!s || s->status != REPORT_STATUS_OK)
                continue;
            const char *text = NULL;
            const char *v = pr->subject_vendor(s, subj, &text);
            if (!v && text)
                v = vendor_in_text(text);
            if (v || text)
                return v;
        }
        const char *v = vendor_in_text(subj);
        if (v)
            return v;
    }
    return vendor_in_text(f->message);
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

/* A cause must be able to cause: a packaging fact (a row flagged CHECK_F_KIND_FILE: a library the loader
 * cannot find) is explained by another packaging fact only (a package left out, a path, a container not given
 * the driver's files), never by a device node, a module or a GPU's state that happens to sit below it. */
static bool doctor_kind_can_cause(const struct report *r, const struct report_finding *cause,
                                  const struct report_finding *eff)
{
    if (!(checks_flags(r->catalogue, eff->id) & CHECK_F_KIND_FILE))
        return true;
    return (checks_flags(r->catalogue, cause->id) & CHECK_F_KIND_FILE) != 0;
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
        struct report_finding *eff = r->findings[e];
        int te = doctor_tier(r, eff->id);
        if (te == 0 || eff->caused_by_id)
            continue;
        const char *ve = doctor_finding_vendor(r, eff);
        const char *ae = doctor_api_of(r, eff->id);
        struct report_finding *best = NULL;
        int best_tier = 99;
        for (size_t c = 0; c < r->n_findings; c++) {
            struct report_finding *cause = r->findings[c];
            int tc = doctor_tier(r, cause->id);
            if (c == e || tc == 0 || tc >= te || !doctor_can_cause(r, cause))
                continue;
            /* One API's findings never explain another's: an OpenCL driver's trouble is no reason for a
             * CUDA or HIP device to fail. The layers below every API (bus, firmware, kernel: findings of
             * probes without a compute API) explain any of the same vendor (or subject, below). */
            const char *ac = doctor_api_of(r, cause->id);
            if (ac && ae && strcmp(ac, ae) != 0)
                continue;
            const char *vc = doctor_finding_vendor(r, cause);
            bool same_subject = cause->subject && eff->subject && strcmp(cause->subject, eff->subject) == 0;
            /* a finding about every vendor is explained by any cause; a cause about every vendor
             * explains any finding (the rows' CHECK_F_ALL_VENDORS, CHECK_F_CAUSES_ALL) */
            bool match = same_subject || (vc && ve && strcmp(vc, ve) == 0) ||
                         (checks_flags(r->catalogue, eff->id) & CHECK_F_ALL_VENDORS) ||
                         (checks_flags(r->catalogue, cause->id) & CHECK_F_CAUSES_ALL);
            if (!match || !doctor_kind_can_cause(r, cause, eff))
                continue;
            if (tc < best_tier) {
                best = cause;
                best_tier = tc;
            }
        }
        if (best) {
            struct report_finding *root = doctor_root_of(r, best);
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

/* The one GPU vendor chain C's paths can drive (its compute API's probes' .vendor, or its owner's), NULL
 * when they drive any vendor's (OpenCL, Vulkan) or do not say. */
static const char *doctor_chain_vendor(const struct doctor_chain *c)
{
    if (!c->api) {
        const struct probe *p = c->owner ? probe_find(c->owner) : NULL;
        return p ? p->vendor : NULL;
    }
    const char *v = NULL;
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct probe *pr = probe_registry[p];
        if (!pr->compute_api || strcmp(pr->compute_api, c->api) != 0)
            continue;
        if (!pr->vendor || (v && strcmp(v, pr->vendor) != 0))
            return NULL;
        v = pr->vendor;
    }
    return v;
}

/* Is F, a finding below every API, about something chain C's paths can drive? One vendor's device, module,
 * library or nodes are no reason for an API that cannot drive that vendor's GPUs (an NVIDIA module is no
 * reason for Level Zero or HIP); a platform-wide finding (CHECK_F_PLATFORM), or one of no known vendor, is
 * a reason for every path. */
static bool doctor_drives(const struct report *r, const struct doctor_chain *c, const struct report_finding *f)
{
    if (checks_flags(r->catalogue, f->id) & CHECK_F_PLATFORM)
        return true;
    const char *cv = doctor_chain_vendor(c);
    const char *fv = cv ? doctor_finding_vendor(r, f) : NULL;
    return !cv || !fv || strcmp(cv, fv) == 0;
}

static bool doctor_in_chain(const struct report *r, const struct doctor_chain *c, const struct report_finding *f)
{
    const char *id = f->id;
    enum check_layer l = checks_layer(r->catalogue, id);
    const char *owner = checks_owner(r->catalogue, id);
    bool own = owner && c->owner && strcmp(owner, c->owner) == 0;
    if (!own && c->api) {
        const char *api = doctor_api_of(r, id);
        own = api && strcmp(api, c->api) == 0;
    }
    switch (c->kind) {
    case PROBE_CHAIN_GPU: /* the stack up to a kernel that computes: a framework above it is no reason */
        return doctor_tier(r, id) > 0 && l != CHECK_LAYER_FRAMEWORK;
    case PROBE_CHAIN_STACK:
        return own || ((l == CHECK_LAYER_HARDWARE || l == CHECK_LAYER_FIRMWARE || l == CHECK_LAYER_KERNEL) &&
                       doctor_drives(r, c, f));
    case PROBE_CHAIN_OWN:
    default:
        return own;
    }
}

static const struct doctor_chain doctor_gpu_chain = {PROBE_CHAIN_GPU, NULL, NULL};
static const struct report_finding *doctor_first_root(const struct report *r, const struct doctor_chain *chain);

/* An unmet requirement is explained by the most severe root cause of its chain (GPU or CPU). */
static void doctor_link_requirements(struct report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        struct report_finding *f = r->findings[i];
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
    doctor_link_peers(r);
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
        const struct report_finding *f = r->findings[i];
        if (f->caused_by_id || f->severity == REPORT_SEV_INFO)
            continue;
        bool want = doctor_in_chain(r, chain, f);
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
        if (doctor_in_chain(r, chain, sorted[i]))
            found = sorted[i];
    }
    free(sorted);
    return found;
}

void doctor_lines_add(struct doctor_lines *out, char *line)
{
    if (!line)
        return;
    if (out->n >= DOCTOR_MAX_LINES) {
        free(line);
        return;
    }
    out->rank[out->n] = out->cur_rank;
    out->line[out->n++] = line;
}

/* The lines in the order people read them (probe_verdict_rank: each API, frameworks, the CPU), a probe's
 * own in the order it added them, whatever order the probes were called in. */
static void doctor_lines_sort(struct doctor_lines *out)
{
    for (size_t i = 1; i < out->n; i++) {
        char *line = out->line[i];
        int rank = out->rank[i];
        size_t j = i;
        for (; j > 0 && out->rank[j - 1] > rank; j--) {
            out->line[j] = out->line[j - 1];
            out->rank[j] = out->rank[j - 1];
        }
        out->line[j] = line;
        out->rank[j] = rank;
    }
}

/* The chain of probe P's targets: its compute API's path (and the layers below every API), or for a probe
 * without one, its own findings. */
static struct doctor_chain doctor_chain_of(const struct probe *p)
{
    if (p->compute_api)
        return (struct doctor_chain){PROBE_CHAIN_STACK, NULL, p->compute_api};
    return (struct doctor_chain){PROBE_CHAIN_OWN, p->name, NULL};
}

const char **doctor_target_reasons(const struct report *r, const struct probe *p, size_t *n)
{
    struct doctor_chain c = doctor_chain_of(p);
    return doctor_reasons(r, &c, n);
}

const struct report_finding *doctor_target_root(const struct report *r, const struct probe *p)
{
    struct doctor_chain c = doctor_chain_of(p);
    return doctor_first_root(r, &c);
}

/* Did any probe of a compute API run here (then the gpu target is decided)? */
static bool doctor_compute_ran(const struct report *r)
{
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct report_section *s = probe_registry[p]->compute_api ? report_find_section(r, probe_registry[p]->name)
                                                                         : NULL;
        if (s && s->status == REPORT_STATUS_OK)
            return true;
    }
    return false;
}

/* The gpu target: a GPU computes, proven through any API (compute paths): the one definition, which
 * --require gpu shares (doctor_gpu_count). Its reasons come from the whole GPU stack. */
static void doctor_gpu_target(struct report *r)
{
    struct compute_paths ps = compute_paths_of(r);
    const struct compute_path *first = NULL, *untested = NULL;
    size_t n = compute_paths_gpus(&ps, COMPUTE_PASSED, &first);
    size_t nu = compute_paths_gpus(&ps, COMPUTE_UNTESTED, &untested);
    size_t nreasons = 0;
    const char **reasons = doctor_reasons(r, &doctor_gpu_chain, &nreasons);
    char label[256];
    char *detail;
    if (n > 0) {
        detail = str_printf("ready on %s (%s)", compute_path_label(first, label, sizeof(label)), first->api_label);
    } else {
        const struct report_finding *root = doctor_first_root(r, &doctor_gpu_chain);
        if (root && nreasons == 0 && reasons)
            reasons[nreasons++] = root->id; /* an info root cause such as pci.no-gpu */
        if (root)
            detail = str_printf("%s (%s)", root->message, root->id);
        else if (nu > 0)
            detail = str_printf("not proven: %s's compute test did not run on %s", untested->api_label,
                                compute_path_label(untested, label, sizeof(label)));
        else
            detail = str_printf("no GPU passed a compute test");
    }
    report_set_target(r, "gpu", n > 0, detail, reasons);
    free(detail);
    free(reasons);
    compute_paths_free(&ps);
}

void doctor_verdict(struct report *r)
{
    struct doctor_lines out;
    memset(&out, 0, sizeof(out));
    if (doctor_compute_ran(r))
        doctor_gpu_target(r);
    doctor_unknown_gpu_target(r);
    /* Each probe's targets and lines, the probes that run last first (they stand for more of the stack). */
    size_t np = 0;
    while (probe_registry[np])
        np++;
    for (size_t p = np; p-- > 0;) {
        const struct probe *pr = probe_registry[p];
        if (!pr->verdict)
            continue;
        size_t before = r->targets ? (size_t)json_object_object_length(r->targets) : 0;
        out.cur_rank = probe_verdict_rank(pr->stack);
        pr->verdict(r, &out);
        doctor_unknown_targets(r, pr, before);
        /* the targets it set belong to its compute API (writers group them) */
        size_t k = 0;
        if (!pr->compute_api || !r->targets)
            continue;
        if (!r->target_apis)
            r->target_apis = json_object_new_object();
        json_object_object_foreach(r->targets, name, t)
        {
            (void)t;
            if (k++ >= before && r->target_apis)
                json_object_object_add(r->target_apis, name, json_object_new_string(pr->compute_api));
        }
    }

    doctor_lines_sort(&out);
    size_t ne = report_count_severity(r, REPORT_SEV_ERROR), nw = report_count_severity(r, REPORT_SEV_WARNING);
    char *verdict = report_is_ready(r)
                        ? str_printf("Verdict: ready (%zu warning%s)%s", nw, nw == 1 ? "" : "s",
                                     out.gpu_missing ? ", but no GPU computes here: --require gpu makes that an error"
                                                     : "")
                        : str_printf("Verdict: not ready (%zu error%s, %zu warning%s)", ne, ne == 1 ? "" : "s", nw,
                                     nw == 1 ? "" : "s");
    size_t len = strlen(verdict ? verdict : "") + 1;
    for (size_t i = 0; i < out.n; i++)
        len += strlen(out.line[i]) + 1;
    char *text = calloc(1, len);
    for (size_t i = 0; text && i < out.n; i++) {
        strcat(text, out.line[i]);
        strcat(text, "\n");
    }
    if (text && verdict)
        strcat(text, verdict);
    for (size_t i = 0; i < out.n; i++)
        free(out.line[i]);
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
        const char *unknown = NULL;
        bool met = doctor_eval_require(r, o->requires[i], &detail);
        doctor_unknown_require(r, doctor_require_owner(o->requires[i]), &met, &detail, &unknown);
        report_add_requirement(r, o->requires[i], met, "%s", detail ? detail : "");
        struct report_finding *f = met ? NULL
                                       : report_add_finding(r, "require.unmet", o->requires[i],
                                                            "Requirement '%s' is not met: %s", o->requires[i],
                                                            detail ? detail : "");
        if (f && unknown)
            report_finding_set_cause(f, "core.probe-timed-out", unknown);
        free(detail);
    }
    doctor_unknown_escalate(r);
    doctor_path_relief(r);
    doctor_no_device_relief(r);
    doctor_link_causes(r);
    doctor_verdict(r);
    return 0;
}
