/* icd_replay.c: the icd probe under a snapshot: .icd files checked again, driver results as captured. */
#include <stdlib.h>
#include <string.h>

#include "icd_impl.h"
#include "snapshot.h"

/* Findings that come from loading drivers (icd.missing-library too: it is judged on dlopen's answer),
 * from the files' owners, or from the environment of the run: replayed as captured. */
static const char *const icd_captured_ids[] = {
    "icd.load-failed", "icd.no-entry-point", "icd.no-platforms", "icd.rejected",        "icd.error",
    "icd.crash",       "icd.hang",           "icd.conflict",     "icd.insecure",        "icd.loader-ignores-env",
    "icd.absent-hardware", "icd.missing-library", NULL,
};

static json_object *icd_copy_keys(json_object *from, const char *const *keys)
{
    json_object *o = json_object_new_object();
    for (size_t i = 0; keys[i]; i++) {
        json_object *v = json_object_object_get(from, keys[i]);
        json_object_object_add(o, keys[i], v ? json_object_get(v) : NULL);
    }
    return o;
}

void icd_identify_captured(struct icd_state *st)
{
    static const char *const keys[] = {"path", "name", "vendor", "version", "ocl_version", NULL};
    json_object *cap = probe_captured(st->ctx, "icd");
    json_object *loader = json_object_object_get(cap, "loader");
    st->kind = ICD_KIND_NONE;
    if (json_object_is_type(loader, json_type_object)) {
        st->loader = icd_copy_keys(loader, keys);
        json_object_object_add(st->loader, "ok", json_object_new_boolean(true));
        st->kind = icd_kind_from_info(icd_jstr(loader, "name"), icd_jstr(loader, "vendor"));
    }
    st->loader_info = calloc(st->n_loaders ? st->n_loaders : 1, sizeof(*st->loader_info));
    json_object *ls = json_object_object_get(cap, "loaders");
    for (size_t i = 0; st->loader_info && i < st->n_loaders; i++) {
        if (st->loaders[i].group != (int)i)
            continue;
        for (size_t j = 0; json_object_is_type(ls, json_type_array) && j < json_object_array_length(ls); j++) {
            json_object *l = json_object_array_get_idx(ls, j);
            const char *p = icd_jstr(l, "path");
            if (!p || strcmp(p, st->loaders[i].path) != 0 || !icd_jstr(l, "name"))
                continue;
            static const char *const lkeys[] = {"name", "version", NULL};
            json_object *info = icd_copy_keys(l, lkeys);
            json_object_object_add(info, "ok", json_object_new_boolean(true));
            /* the captured kind stands for the vendor the child read */
            json_object_object_add(info, "vendor", json_object_get(json_object_object_get(l, "kind")));
            st->loader_info[i] = info;
            break;
        }
    }
}

/* Each driver the .icd files name again: what its child found, as captured, marked so. */
static void icd_overlay_drivers(json_object *d, json_object *cap)
{
    static const char *const keys[] = {"status", "detail", "driver", "platforms", "elapsed_ms", "output", NULL};
    json_object *icds = json_object_object_get(d, "icds"), *old = json_object_object_get(cap, "icds");
    for (size_t i = 0; json_object_is_type(icds, json_type_array) && i < json_object_array_length(icds); i++) {
        json_object *e = json_object_array_get_idx(icds, i);
        const char *file = icd_jstr(e, "file"), *status = icd_jstr(e, "status");
        if (!file || !status || strcmp(status, "not-probed") != 0) /* a file check failed here: that stands */
            continue;
        for (size_t j = 0; json_object_is_type(old, json_type_array) && j < json_object_array_length(old); j++) {
            json_object *c = json_object_array_get_idx(old, j);
            if (!icd_jstr(c, "file") || strcmp(icd_jstr(c, "file"), file) != 0)
                continue;
            for (size_t k = 0; keys[k]; k++) {
                json_object *v = json_object_object_get(c, keys[k]);
                json_object_object_add(e, keys[k], v ? json_object_get(v) : NULL);
            }
            json_object_object_add(e, "captured", json_object_new_boolean(true));
            break;
        }
    }
    json_object *comb = json_object_object_get(cap, "combined");
    if (json_object_is_type(comb, json_type_object)) {
        json_object *c = json_object_get(comb);
        json_object_object_add(c, "captured", json_object_new_boolean(true));
        json_object_object_add(d, "combined", c);
    }
}

void icd_replay_captured(struct icd_state *st)
{
    json_object *cap = probe_captured(st->ctx, "icd");
    snapshot_replay_findings(st->ctx->snapshot, st->ctx->report, "icd", icd_captured_ids);
    if (!cap)
        return;
    /* The summary speaks of the drivers' outcomes: the captured one, marked. */
    struct report_section *sec = st->sec;
    for (size_t i = 0; i < sec->n_lines; i++) {
        free(sec->lines[i].label);
        free(sec->lines[i].text);
    }
    sec->n_lines = 0;
    json_object *sum = json_object_object_get(cap, "summary");
    static const char *const marks[] = {"ok", "info", "warning", "error", "skipped"};
    for (size_t i = 0; json_object_is_type(sum, json_type_array) && i < json_object_array_length(sum); i++) {
        json_object *l = json_object_array_get_idx(sum, i);
        const char *mk = icd_jstr(l, "mark");
        enum report_mark mark = REPORT_MARK_INFO;
        for (size_t k = 0; mk && k < sizeof(marks) / sizeof(marks[0]); k++)
            if (strcmp(mk, marks[k]) == 0)
                mark = (enum report_mark)k;
        const char *label = icd_jstr(l, "label"), *text = icd_jstr(l, "text");
        char *today = icd_label_today(label);
        report_section_add_line(sec, mark, today ? today : label ? label : "OpenCL ICD", "[captured] %s",
                                text ? text : "");
        free(today);
    }
    icd_overlay_drivers(sec->data, cap);
    report_section_add_note(sec, "replayed from a snapshot: the .icd files and libraries were checked again in its "
                                 "tree; driver loading and the run's environment are the captured results");
}
