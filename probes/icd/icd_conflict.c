/* icd_conflict.c: vendor drivers that work alone but crash or hang when loaded together. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "icd_impl.h"
#include "isolate.h"
#include "probe.h"
#include "strutil.h"

/* ---- drivers that crash only together ---- */

bool icd_status_is(const char *s, const char *a, const char *b, const char *c, const char *d)
{
    return s && ((a && strcmp(s, a) == 0) || (b && strcmp(s, b) == 0) || (c && strcmp(s, c) == 0) ||
                 (d && strcmp(s, d) == 0));
}

/* icd_check_conflict's search: the M drivers CAND (indices into st->e) loaded two by two, each pair in
 * one child; a pair that crashes or hangs marks both INVOLVED and adds a line to EVIDENCE. */
static void icd_conflict_pairs(struct icd_state *st, bool ocl, const size_t *cand, size_t m, bool *involved,
                               json_object *evidence)
{
    /* Both orders when few enough (a conflict can depend on which loads first), else one. */
    size_t ordered = m > 1 ? m * (m - 1) : 0, njobs = 0;
    bool both_orders = ordered <= ICD_MAX_PAIR_JOBS;
    if (ordered)
        njobs = both_orders ? ordered : (ordered / 2 <= ICD_MAX_PAIR_JOBS ? ordered / 2 : 0);
    struct isolate_job *jobs = njobs ? calloc(njobs, sizeof(*jobs)) : NULL;
    struct icd_child_arg *args = njobs ? calloc(njobs, sizeof(*args)) : NULL;
    size_t(*pairs)[2] = njobs ? calloc(njobs, sizeof(*pairs)) : NULL;
    volatile int *stages = njobs ? icd_stages_new(njobs) : NULL;
    if (jobs && args && pairs) {
        int flags = (ocl ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL;
        size_t k = 0;
        for (size_t a = 0; a < m; a++)
            for (size_t b = 0; b < m; b++) {
                if (a == b || (!both_orders && b < a) || k >= njobs)
                    continue;
                pairs[k][0] = cand[a];
                pairs[k][1] = cand[b];
                args[k] = (struct icd_child_arg){.lib = st->e[cand[a]].library,
                                                 .lib2 = st->e[cand[b]].library,
                                                 .dlflags = flags,
                                                 .stage = stages ? &stages[k] : NULL};
                jobs[k] = (struct isolate_job){.fn = icd_child_pair, .arg = &args[k]};
                k++;
            }
        probe_isolate_many(st->ctx, jobs, k);
        for (size_t j = 0; j < k; j++) {
            struct isolate_result *res = &jobs[j].result;
            if (res->status == ISOLATE_SIGNAL || res->status == ISOLATE_TIMEOUT || res->status == ISOLATE_EXIT ||
                res->status == ISOLATE_BAD_OUTPUT) {
                int stage = stages ? stages[j] : 0;
                involved[pairs[j][0]] = involved[pairs[j][1]] = true;
                char *why = icd_child_failure(res, stage, st->ctx->timeout_ms / 1000.0);
                char *line = str_printf("%s then %s: %s%s", icd_subject(&st->e[pairs[j][0]]),
                                        icd_subject(&st->e[pairs[j][1]]), why ? why : "?",
                                        (stage >> 8) ? " of the second" : " of the first");
                if (line)
                    json_object_array_add(evidence, json_object_new_string(str_sanitize(line)));
                free(line);
                free(why);
            }
            isolate_result_clear(res);
        }
    }
    free(jobs);
    free(args);
    free(pairs);
    icd_stages_free(stages, njobs);
}

void icd_check_conflict(struct icd_state *st)
{
    const char *cs = icd_jstr(st->combined, "status");
    if (!icd_status_is(cs, "crash", "hang", NULL, NULL))
        return;
    bool ocl = icd_is_ocl_semantics(st->kind);
    /* Explained by a driver that fails alone (or a file the Khronos loader hangs on)? */
    json_object *expl = json_object_new_array();
    for (size_t i = 0; i < st->n; i++) {
        const struct icd_entry *e = &st->e[i];
        if (icd_status_is(e->status, "crash", "hang", "self-reference", NULL) || (ocl && e->fifo) ||
            (!ocl && icd_status_is(e->status, "malformed", NULL, NULL, NULL) && (e->fatal & ICD_BAD_EMPTY)))
            json_object_array_add(expl, json_object_new_string(icd_subject(e)));
    }
    json_object_object_add(st->combined, "explained_by", expl);
    if (json_object_array_length(expl) > 0)
        return;

    /* Every driver whose code the loader runs works alone: find the pairs that do not. */
    size_t *cand = calloc(st->n ? st->n : 1, sizeof(*cand));
    bool *involved = calloc(st->n ? st->n : 1, sizeof(*involved));
    size_t m = 0;
    for (size_t i = 0; cand && i < st->n; i++)
        if (icd_status_is(st->e[i].status, "ok", "no-platforms", "error", "rejected"))
            cand[m++] = i;
    json_object *evidence = json_object_new_array();
    icd_conflict_pairs(st, ocl, cand, m, involved, evidence);
    bool any = false;
    for (size_t i = 0; i < st->n; i++)
        any = any || (involved && involved[i]);
    char *names = NULL;
    size_t nnames = 0, total = 0;
    for (size_t c = 0; c < m; c++)
        total += !any || involved[cand[c]];
    json_object *arr = json_object_new_array();
    for (size_t c = 0; c < m; c++) {
        size_t i = cand[c];
        if (any && !involved[i])
            continue;
        nnames++;
        const char *sep = nnames == 1 ? "" : nnames == total ? " and " : ", ";
        char *n2 = str_printf("%s%s%s", names ? names : "", sep, icd_subject(&st->e[i]));
        free(names);
        names = n2;
        json_object_array_add(arr, json_object_new_string(icd_subject(&st->e[i])));
    }
    json_object_object_add(st->combined, "conflict", arr);
    const char *detail = icd_jstr(st->combined, "detail");
    const char *loader = st->loader ? icd_jstr(st->loader, "path") : NULL;
    struct report_finding *f;
    if (m == 0)
        f = report_add_finding(st->ctx->report, "icd.conflict", loader ? loader : "libOpenCL.so.1",
                               "OpenCL programs %s in the loader (%s) though no vendor driver fails alone",
                               strcmp(cs, "hang") == 0 ? "hang" : "crash", detail ? detail : "?");
    else if (total == 1)
        f = report_add_finding(st->ctx->report, "icd.conflict", loader ? loader : "libOpenCL.so.1",
                               "%s works alone, but through the loader, as every OpenCL program loads it, it %ss (%s)",
                               names ? names : "?", strcmp(cs, "hang") == 0 ? "hang" : "crashe",
                               detail ? detail : "?");
    else
        f = report_add_finding(st->ctx->report, "icd.conflict", loader ? loader : "libOpenCL.so.1",
                               "%s each work alone, but loaded together, as every OpenCL program loads them, "
                               "they %s (%s)",
                               names ? names : "?", strcmp(cs, "hang") == 0 ? "hang" : "crash",
                               detail ? detail : "?");
    for (size_t i = 0; f && i < json_object_array_length(evidence); i++)
        report_finding_add_evidence(f, "together", "%s", json_object_get_string(json_object_array_get_idx(evidence, i)));
    if (f && any && names)
        report_finding_set_hint(f, "Keep only one of %s: move the other .icd files out of %s.", names,
                                st->vendors_dir ? st->vendors_dir : "the vendors directory");
    json_object_put(evidence);
    free(names);
    free(cand);
    free(involved);
}
