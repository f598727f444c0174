/* icd_loader.c: the icd probe's loader checks: which libOpenCL.so.1 programs get, and the others. */
#include <stdlib.h>
#include <string.h>

#include "icd_impl.h"
#include "isolate.h"
#include "probe.h"
#include "strutil.h"

/* ---- the loader ---- */

/* A loader (LIB: its name or path) that did not answer while being identified (RES, STAGE). */
static void icd_loader_hang(struct icd_state *st, const char *lib, const struct isolate_result *res, int stage)
{
    char *why = icd_child_failure(res, stage, st->ctx->timeout_ms / 1000.0);
    report_add_finding(st->ctx->report, "icd.loader-hang", lib,
                       "The OpenCL loader %s does not answer before any driver is loaded: %s. Every OpenCL "
                       "program that loads it hangs the same way", lib, why ? why : "timed out");
    free(why);
}

/* Identify the default loader and every distinct libOpenCL file, each in a child with no vendor. */
void icd_identify(struct icd_state *st)
{
    size_t n = 1;
    for (size_t i = 0; i < st->n_loaders; i++)
        if (st->loaders[i].group == (int)i && st->loaders[i].resolved && st->loaders[i].loadable)
            n++;
    struct isolate_job *jobs = calloc(n, sizeof(*jobs));
    struct icd_child_arg *args = calloc(n, sizeof(*args));
    size_t *which = calloc(n, sizeof(*which));
    volatile int *stages = icd_stages_new(n);
    st->loader_info = calloc(st->n_loaders ? st->n_loaders : 1, sizeof(*st->loader_info));
    if (!jobs || !args || !which || !st->loader_info) {
        free(jobs);
        free(args);
        free(which);
        icd_stages_free(stages, n);
        st->kind = ICD_KIND_UNKNOWN;
        return;
    }
    size_t k = 0;
    args[k] = (struct icd_child_arg){.lib = NULL, .stage = stages ? &stages[k] : NULL};
    jobs[k] = (struct isolate_job){.fn = icd_child_loader, .arg = &args[k]};
    k++;
    for (size_t i = 0; i < st->n_loaders; i++) {
        if (st->loaders[i].group != (int)i || !st->loaders[i].resolved || !st->loaders[i].loadable)
            continue;
        which[k] = i;
        args[k] = (struct icd_child_arg){.lib = st->loaders[i].resolved, .stage = stages ? &stages[k] : NULL};
        jobs[k] = (struct isolate_job){.fn = icd_child_loader, .arg = &args[k]};
        k++;
    }
    probe_isolate_many(st->ctx, jobs, k);

    struct isolate_result *r = &jobs[0].result;
    if (r->status == ISOLATE_OK && icd_jbool(r->value, "ok", false)) {
        st->loader = json_object_get(r->value);
        st->kind = icd_kind_from_info(icd_jstr(r->value, "name"), icd_jstr(r->value, "vendor"));
    } else if (r->status == ISOLATE_OK) {
        st->kind = ICD_KIND_NONE;
        st->loader_error = icd_sanitized(icd_jstr(r->value, "error"));
    } else {
        /* The loader itself misbehaved with no vendor loaded: say so, assume a loader is there. */
        char *why = icd_child_failure(r, stages ? stages[0] : 0, st->ctx->timeout_ms / 1000.0);
        report_section_add_note(st->sec, "identifying the OpenCL loader failed: %s", why ? why : "?");
        if (r->status == ISOLATE_TIMEOUT)
            icd_loader_hang(st, "libOpenCL.so.1", r, stages ? stages[0] : 0);
        free(why);
        st->kind = ICD_KIND_UNKNOWN;
    }
    if (r->status == ISOLATE_SPAWN_FAILED && !r->budget_spent)
        report_add_finding(st->ctx->report, "core.isolated-child-failed", "icd",
                           "Could not start a child process to identify the OpenCL loader: %s",
                           r->detail ? r->detail : "fork failed");
    for (size_t j = 1; j < k; j++) {
        struct isolate_result *lr = &jobs[j].result;
        if (lr->status == ISOLATE_OK)
            st->loader_info[which[j]] = json_object_get(lr->value);
        else if (lr->status == ISOLATE_TIMEOUT)
            icd_loader_hang(st, st->loaders[which[j]].resolved, lr, stages ? stages[j] : 0);
    }
    for (size_t j = 0; j < k; j++)
        isolate_result_clear(&jobs[j].result);
    free(jobs);
    free(args);
    free(which);
    icd_stages_free(stages, n);
}

/* The identification of the loader file at index I (its group's), or NULL. */
json_object *icd_loader_file_info(const struct icd_state *st, size_t i)
{
    int g = st->loaders[i].group;
    return (g >= 0 && (size_t)g < st->n_loaders) ? st->loader_info[g] : NULL;
}

const char *icd_loader_kind_of(json_object *info)
{
    if (!info || !icd_jbool(info, "ok", false))
        return NULL;
    return icd_kind_name(icd_kind_from_info(icd_jstr(info, "name"), icd_jstr(info, "vendor")));
}

/* When gpucheckup loaded another file than the search predicts, say so (the prediction is ours). */
void icd_crosscheck_winner(struct icd_state *st)
{
    const char *loaded = st->loader ? icd_jstr(st->loader, "path") : NULL;
    const char *override = icd_env("GPUCHECKUP_LIBOPENCL");
    if (!loaded || (override && *override))
        return;
    for (size_t i = 0; i < st->n_loaders; i++)
        if (st->loaders[i].wins) {
            if (!st->loaders[i].resolved || strcmp(st->loaders[i].resolved, loaded) != 0)
                report_section_add_note(st->sec, "dlopen loaded %s, but the library search predicts %s", loaded,
                                        st->loaders[i].resolved ? st->loaders[i].resolved : st->loaders[i].path);
            return;
        }
    report_section_add_note(st->sec, "dlopen loaded %s, which the library search did not predict", loaded);
}

void icd_check_loaders(struct icd_state *st)
{
    struct report *r = st->ctx->report;
    if (!st->loader) {
        if (st->kind == ICD_KIND_NONE) {
            const char *lib = icd_env("GPUCHECKUP_LIBOPENCL");
            struct report_finding *f = report_add_finding(
                r, "icd.no-loader", "libOpenCL.so.1", "No OpenCL ICD loader: %s",
                st->loader_error ? st->loader_error : "libOpenCL.so.1 cannot be loaded");
            if (f && lib && *lib)
                report_finding_add_evidence(f, "GPUCHECKUP_LIBOPENCL", "%s", lib);
            /* A loader that exists but is off the search path is the likelier story. */
            for (size_t i = 0; f && i < st->n_loaders; i++)
                if (!st->loaders[i].searched && st->loaders[i].resolved && st->loaders[i].loadable) {
                    report_finding_set_hint(f,
                                            "%s exists but is not on the library search path: add its "
                                            "directory to /etc/ld.so.conf.d and run ldconfig, or install "
                                            "ocl-icd-libopencl1",
                                            st->loaders[i].path);
                    break;
                }
            icd_check_loader_arch(st);
        }
    }
    /* Distinct files that a program asking for libOpenCL.so.1 could get. */
    size_t distinct = 0, win = (size_t)-1;
    for (size_t i = 0; i < st->n_loaders; i++) {
        const struct icd_loader_file *l = &st->loaders[i];
        if (l->wins)
            win = i;
        if (l->group == (int)i && l->have_id && l->loadable)
            for (size_t j = 0; j < st->n_loaders; j++)
                if (st->loaders[j].group == (int)i && strcmp(icd_basename(st->loaders[j].path), "libOpenCL.so.1") == 0) {
                    distinct++;
                    break;
                }
    }
    if (distinct < 2)
        return;
    char *list = NULL;
    for (size_t i = 0; i < st->n_loaders; i++) {
        const struct icd_loader_file *l = &st->loaders[i];
        if (strcmp(icd_basename(l->path), "libOpenCL.so.1") != 0 || !l->have_id || !l->loadable)
            continue;
        const char *kind = icd_loader_kind_of(icd_loader_file_info(st, i));
        char *item = str_printf("%s%s%s (%s%s%s)", list ? list : "", list ? ", " : "", l->path,
                                kind ? kind : "unidentified", l->searched ? ", " : ", off the search path: ", l->source);
        free(list);
        list = item;
    }
    const char *winner = win != (size_t)-1 ? st->loaders[win].path : NULL;
    const char *loaded = st->loader ? icd_jstr(st->loader, "path") : NULL;
    struct report_finding *f = report_add_finding(
        r, "icd.multiple-loaders", winner ? winner : "libOpenCL.so.1",
        "%zu different OpenCL loaders can be found: %s. A program loading libOpenCL.so.1 gets %s%s%s%s", distinct,
        list ? list : "?", winner ? winner : "none of them", loaded ? " (gpucheckup loaded " : "",
        loaded ? loaded : "", loaded ? ")" : "");
    free(list);
    if (f) {
        for (size_t i = 0; i < st->n_loaders; i++)
            if (strcmp(icd_basename(st->loaders[i].path), "libOpenCL.so.1") == 0 && st->loaders[i].have_id &&
                st->loaders[i].loadable)
                report_finding_add_evidence(f, st->loaders[i].path, "%s%s",
                                            st->loaders[i].resolved ? st->loaders[i].resolved : "(dangling)",
                                            st->loaders[i].wins ? " (wins)" : "");
        const char *ld = icd_env("LD_LIBRARY_PATH");
        if (ld && *ld)
            report_finding_add_evidence(f, "LD_LIBRARY_PATH", "%s", ld);
    }
}
