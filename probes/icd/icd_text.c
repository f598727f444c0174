/* icd_text.c: the icd section's facts (JSON data), summary rows and text output. */
#include <stdlib.h>
#include <string.h>

#include "icd_impl.h"
#include "probe.h"
#include "results/result_icd.h"
#include "strutil.h"
#include "vendor.h"

/* ---- facts, summary, text ---- */

static json_object *icd_jnew_str(const char *s)
{
    if (!s)
        return NULL;
    char *c = icd_sanitized(s);
    json_object *o = c ? json_object_new_string(c) : NULL;
    free(c);
    return o;
}

static json_object *icd_entry_json(const struct icd_entry *e)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "file", icd_jnew_str(e->file));
    json_object_object_add(o, "source", json_object_new_string(e->source));
    json_object_object_add(o, "library", icd_jnew_str(e->library));
    json_object_object_add(o, "resolved", icd_jnew_str(e->resolved));
    json_object_object_add(o, "found_via", e->via ? json_object_new_string(e->via) : NULL);
    json_object_object_add(o, "status", json_object_new_string(e->status ? e->status : "not-probed"));
    json_object_object_add(o, "detail", icd_jnew_str(e->detail));
    json_object *bad = json_object_new_array();
    for (unsigned b = 1; b < (1u << ICD_BAD_COUNT); b <<= 1)
        if (e->bad & b)
            json_object_array_add(bad, json_object_new_string(icd_bad_name(b)));
    json_object_object_add(o, "malformed", bad);
    json_object_object_add(o, "vendor", e->drv ? json_object_new_string(e->drv->vendor) : NULL);
    if (e->drv) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "name", json_object_new_string(e->drv->name));
        json_object_object_add(d, "title", json_object_new_string(e->drv->display));
        json_object_object_add(d, "needs", json_object_new_string(e->drv->needs_text));
        json_object_object_add(d, "hardware", json_object_new_string(vendor_hw_name(e->hw)));
        json_object_object_add(d, "hardware_detail", e->hw_why[0] ? json_object_new_string(e->hw_why) : NULL);
        json_object_object_add(d, "absent_hardware", json_object_new_boolean(e->absent));
        json_object_object_add(o, "driver", d);
    } else {
        json_object_object_add(o, "driver", NULL);
    }
    json_object_object_add(o, "platforms", json_object_get(e->platforms));
    json_object_object_add(o, "elapsed_ms", e->probed ? icd_json_ms(e->elapsed_ms) : NULL);
    bool quiet = e->status && strcmp(e->status, "ok") == 0;
    char *tail = quiet ? NULL : icd_output_tail(e->output);
    json_object_object_add(o, "output", tail ? json_object_new_string(tail) : NULL);
    free(tail);
    return o;
}

static json_object *icd_loader_json(const struct icd_state *st)
{
    if (!st->loader)
        return NULL;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", icd_jnew_str(icd_jstr(st->loader, "path")));
    json_object_object_add(o, "name", icd_jnew_str(icd_jstr(st->loader, "name")));
    json_object_object_add(o, "vendor", icd_jnew_str(icd_jstr(st->loader, "vendor")));
    json_object_object_add(o, "version", icd_jnew_str(icd_jstr(st->loader, "version")));
    json_object_object_add(o, "ocl_version", icd_jnew_str(icd_jstr(st->loader, "ocl_version")));
    json_object_object_add(o, "kind", json_object_new_string(icd_kind_name(st->kind) ? icd_kind_name(st->kind) : "unknown"));
    return o;
}

static const char *const icd_env_names[] = {
    "OCL_ICD_VENDORS",   "OPENCL_VENDOR_PATH", "OCL_ICD_FILENAMES",    "OCL_ICD_ASSUME_ICD_EXTENSION",
    "OPENCL_LAYERS",     "LD_LIBRARY_PATH",    "GPUCHECKUP_LIBOPENCL", NULL,
};

void icd_fill_data(struct icd_state *st)
{
    json_object *d = st->sec->data;
    for (size_t i = 0; i < st->n; i++)
        icd_classify(st, &st->e[i]);
    json_object_object_add(d, "loader", icd_loader_json(st));
    json_object *ls = json_object_new_array();
    for (size_t i = 0; i < st->n_loaders; i++) {
        const struct icd_loader_file *l = &st->loaders[i];
        json_object *info = icd_loader_file_info(st, i);
        bool ok = info && icd_jbool(info, "ok", false);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", icd_jnew_str(l->path));
        json_object_object_add(o, "resolved", icd_jnew_str(l->resolved));
        json_object_object_add(o, "source", json_object_new_string(l->source));
        json_object_object_add(o, "searched", json_object_new_boolean(l->searched));
        json_object_object_add(o, "wins", json_object_new_boolean(l->wins));
        json_object_object_add(o, "loadable", json_object_new_boolean(l->loadable));
        json_object_object_add(o, "name", ok ? icd_jnew_str(icd_jstr(info, "name")) : NULL);
        json_object_object_add(o, "version", ok ? icd_jnew_str(icd_jstr(info, "version")) : NULL);
        const char *kind = icd_loader_kind_of(info);
        json_object_object_add(o, "kind", kind ? json_object_new_string(kind) : NULL);
        json_object_array_add(ls, o);
    }
    json_object_object_add(d, "loaders", ls);
    json_object_object_add(d, "vendors_dir", icd_jnew_str(st->vendors_dir));
    json_object_object_add(d, "vendors_from", json_object_new_string(st->vendors_from ? st->vendors_from : "default"));
    json_object *env = json_object_new_object();
    for (size_t i = 0; icd_env_names[i]; i++)
        json_object_object_add(env, icd_env_names[i], icd_jnew_str(icd_env(icd_env_names[i])));
    json_object_object_add(d, "env", env);
    json_object *icds = json_object_new_array();
    for (size_t i = 0; i < st->n; i++)
        json_object_array_add(icds, icd_entry_json(&st->e[i]));
    json_object_object_add(d, "icds", icds);
    json_object *ign = json_object_new_array();
    for (size_t i = 0; i < st->n_ignored; i++)
        json_object_array_add(ign, json_object_new_string(st->ignored[i]));
    json_object_object_add(d, "ignored_files", ign);
    if (!st->combined) {
        st->combined = json_object_new_object();
        json_object_object_add(st->combined, "status", json_object_new_string("not-run"));
        json_object_object_add(st->combined, "detail",
                               json_object_new_string(st->loader ? "could not start the child process"
                                                                 : "no OpenCL loader to run it through"));
        json_object_object_add(st->combined, "platforms", json_object_new_array());
        json_object_object_add(st->combined, "elapsed_ms", NULL);
        json_object_object_add(st->combined, "output", NULL);
    }
    json_object_object_add(d, "combined", json_object_get(st->combined));
}

static enum report_mark icd_status_mark(const char *s)
{
    if (!s || strcmp(s, "ok") == 0)
        return REPORT_MARK_OK;
    if (strcmp(s, "no-platforms") == 0 || strcmp(s, "duplicate") == 0)
        return REPORT_MARK_WARN;
    if (strcmp(s, "not-probed") == 0)
        return REPORT_MARK_SKIP;
    return REPORT_MARK_ERROR;
}

char *icd_label_today(const char *label)
{
    static const struct report_label_rename renamed[] = {{"Loader", "OpenCL loader"}, {"ICD", "OpenCL ICD"}};
    return report_label_renamed(renamed, sizeof(renamed) / sizeof(renamed[0]), label);
}

/* Did --health leave E unloaded (icd_health_skip's detail)? */
static bool icd_health_skipped(const struct icd_entry *e)
{
    return e->absent && !e->probed && e->detail && str_starts_with(e->detail, "not loaded (--health)");
}

/* Did --health leave E, a CPU driver, unloaded (icd_health_skip's detail)? */
static bool icd_health_cpu_skipped(const struct icd_entry *e)
{
    return !e->probed && e->detail && str_starts_with(e->detail, "CPU driver, not loaded (--health)");
}

/* What --health left unloaded, for the loader's line ("1 CPU driver and 3 drivers for absent hardware"), heap;
 * NULL when nothing. */
static char *icd_health_skipped_text(const struct icd_state *st)
{
    size_t abs = 0, cpu = 0;
    for (size_t i = 0; i < st->n; i++) {
        abs += icd_health_skipped(&st->e[i]);
        cpu += icd_health_cpu_skipped(&st->e[i]);
    }
    if (!abs && !cpu)
        return NULL;
    char c[48] = "", a[64] = "";
    if (cpu)
        snprintf(c, sizeof(c), "%zu CPU driver%s", cpu, cpu == 1 ? "" : "s");
    if (abs)
        snprintf(a, sizeof(a), "%zu driver%s for absent hardware", abs, abs == 1 ? "" : "s");
    return str_printf("%s%s%s not loaded (--health)", c, cpu && abs ? " and " : "", a);
}

void icd_summary(struct icd_state *st)
{
    struct report_section *sec = st->sec;
    const char *cstatus = icd_jstr(st->combined, "status");
    json_object *cplats = NULL;
    json_object_object_get_ex(st->combined, "platforms", &cplats);
    size_t ncp = cplats ? json_object_array_length(cplats) : 0;
    if (!st->loader) {
        if (st->kind == ICD_KIND_NONE && st->n_loaders == 0)
            report_section_add_line(sec, REPORT_MARK_ERROR, "OpenCL loader", "not installed: no OpenCL ICD loader (libOpenCL.so.1)");
        else if (st->kind == ICD_KIND_NONE)
            report_section_add_line(sec, REPORT_MARK_ERROR, "OpenCL loader", "none: %s",
                                    st->loader_error ? st->loader_error : "libOpenCL.so.1 cannot be loaded");
        else
            report_section_add_line(sec, REPORT_MARK_WARN, "OpenCL loader", "could not be identified");
    } else {
        const char *path = icd_jstr(st->loader, "path");
        const char *ver = icd_jstr(st->loader, "version");
        bool multi = report_find_finding(st->ctx->report, "icd.multiple-loaders", NULL) != NULL;
        enum report_mark m = REPORT_MARK_OK;
        if (icd_status_is(cstatus, "crash", "hang", NULL, NULL))
            m = REPORT_MARK_ERROR;
        else if (multi || !icd_status_is(cstatus, "ok", NULL, NULL, NULL))
            m = REPORT_MARK_WARN;
        char *seen = NULL;
        char *skipped = icd_health_skipped_text(st);
        const char *cdetail = icd_jstr(st->combined, "detail");
        /* --health loaded no driver at all (icd_health_combined_none): information, not a missing platform */
        bool none = skipped && icd_status_is(cstatus, "not-run", NULL, NULL, NULL) && cdetail &&
                    strcmp(cdetail, ICD_HEALTH_NONE_LOADED) == 0;
        if (none)
            m = multi ? REPORT_MARK_WARN : REPORT_MARK_INFO;
        if (none)
            seen = str_printf("no driver loaded: %s", skipped);
        else if (icd_status_is(cstatus, "ok", NULL, NULL, NULL) && skipped)
            seen = str_printf("programs see %zu platform%s; %s", ncp, ncp == 1 ? "" : "s", skipped);
        else if (icd_status_is(cstatus, "ok", NULL, NULL, NULL))
            seen = str_printf("programs see %zu platform%s", ncp, ncp == 1 ? "" : "s");
        else
            seen = str_printf("programs see no platform (%s: %s)", cstatus ? cstatus : "?",
                              icd_jstr(st->combined, "detail") ? icd_jstr(st->combined, "detail") : "?");
        report_section_add_line(sec, m, "OpenCL loader", "%s%s%s at %s; %s%s", icd_kind_name(st->kind), ver ? " " : "",
                                ver ? ver : "", path ? path : "?", seen ? seen : "",
                                multi ? "; other loaders shadow it" : "");
        free(seen);
        free(skipped);
    }
    if (st->n == 0) {
        report_section_add_line(sec, REPORT_MARK_ERROR, "OpenCL ICD", "no OpenCL driver registered%s%s",
                                st->vendors_dir ? " in " : "", st->vendors_dir ? st->vendors_dir : "");
        return;
    }
    for (size_t i = 0; i < st->n; i++) {
        const struct icd_entry *e = &st->e[i];
        const char *name = e->file ? icd_basename(e->file) : icd_subject(e);
        if (e->status && strcmp(e->status, "ok") == 0) {
            char *pt = icd_platforms_text(e->platforms);
            report_section_add_line(sec, e->absent ? REPORT_MARK_INFO : REPORT_MARK_OK, "OpenCL ICD", "%s: %s%s", name,
                                    pt ? pt : "ok", e->absent ? "; driver for absent hardware" : "");
            if (e->absent)
                report_section_fold_line(sec, "OpenCL ICD", "drivers for absent hardware", name);
            free(pt);
        } else if (icd_health_cpu_skipped(e)) { /* --health did not load it (icd_health_skip) */
            report_section_add_line(sec, REPORT_MARK_INFO, "OpenCL ICD", "%s: %s", name, e->detail);
        } else if (icd_health_skipped(e)) { /* --health did not load it (icd_health_skip) */
            report_section_add_line(sec, REPORT_MARK_INFO, "OpenCL ICD", "%s: %s", name, e->detail);
            report_section_fold_line(sec, "OpenCL ICD", "drivers for absent hardware, not loaded", name);
        } else if (e->absent) {
            report_section_add_line(sec, REPORT_MARK_INFO, "OpenCL ICD", "%s: driver for absent hardware (%s: %s)", name,
                                    e->status ? e->status : "?", e->detail ? e->detail : "?");
            report_section_fold_line(sec, "OpenCL ICD", "drivers for absent hardware", name);
        } else {
            report_section_add_line(sec, icd_status_mark(e->status), "OpenCL ICD", "%s: %s%s%s", name,
                                    e->status ? e->status : "not-probed", e->detail ? ": " : "",
                                    e->detail ? e->detail : "");
        }
    }
}

void icd_no_icds(struct icd_state *st)
{
    if (st->n > 0)
        return;
    const char *dir = st->vendors_dir ? st->vendors_dir : ICD_VENDORS_DIR;
    struct report_finding *f;
    if (!st->vendors_dir && st->vendors_dir_err)
        f = report_add_finding(st->ctx->report, "icd.no-icds", "OCL_ICD_VENDORS",
                               "No OpenCL driver is registered: OCL_ICD_VENDORS is set but empty, and the "
                               "Khronos loader then reads no vendors directory");
    else if (st->vendors_dir_err)
        f = report_add_finding(st->ctx->report, "icd.no-icds", dir, "No OpenCL driver is registered: %s: %s",
                               dir, strerror(-st->vendors_dir_err));
    else
        f = report_add_finding(st->ctx->report, "icd.no-icds", dir,
                               "No OpenCL driver is registered: %s has no .icd file", dir);
    if (f && st->n_ignored > 0)
        report_finding_add_evidence(f, dir, "ignored (not *.icd): %s%s", st->ignored[0],
                                    st->n_ignored > 1 ? ", ..." : "");
}

/* One column cell: S, or "-" when NULL. */
static const char *icd_cell(const char *s)
{
    return s && *s ? s : "-";
}

/* The loader part of the text: which libOpenCL, which files, what programs see, ignored files. */
static void icd_print_loader(const struct result_icd *res, struct text_out *t)
{
    text_heading(t, "OpenCL ICD loader");
    if (!res->has_loader) {
        text_kv(t, "loader", "none could be loaded");
    } else {
        text_kv(t, "loader", "%s", icd_cell(res->loader_path));
        if (res->loader_name)
            text_kv(t, "identity", "%s %s (%s), %s", res->loader_name, icd_cell(res->loader_version),
                    icd_cell(res->loader_vendor), icd_cell(res->loader_kind));
        else
            text_kv(t, "identity", "unknown (no clGetICDLoaderInfoOCLICD)");
    }
    const char *vd = res->vendors_dir;
    text_kv(t, "vendors", "%s (from %s)", vd ? vd : "no directory: one file or library", icd_cell(res->vendors_from));
    for (size_t i = 0; i < res->n_loaders; i++) {
        const struct result_icd_loader_file *l = &res->loaders[i];
        bool moved = l->resolved && l->path && strcmp(l->resolved, l->path) != 0;
        text_kv(t, i == 0 ? "libOpenCL files" : "", "%s%s%s (%s%s%s)%s", icd_cell(l->path), moved ? " -> " : "",
                moved ? l->resolved : "", icd_cell(l->source), l->kind ? ", " : "", l->kind ? l->kind : "",
                l->wins ? " <- programs load this one" : "");
    }
    if (res->has_combined) {
        const struct result_icd_listing *c = &res->combined;
        char *pt = result_icd_platforms_text(c);
        if (c->status && strcmp(c->status, "ok") == 0)
            text_kv(t, "programs see", "%s", pt ? pt : "no platform");
        else
            text_kv(t, "programs see", "%s: %s", icd_cell(c->status), icd_cell(c->detail));
        free(pt);
    }
    for (size_t i = 0; i < res->n_ignored; i++)
        text_kv(t, i == 0 ? "ignored (not *.icd)" : "", "%s", res->ignored_files[i]);
}

/* The table of ICDs: file, library, status, platforms (or why not). */
static void icd_print_icds(const struct result_icd *res, struct text_out *t)
{
    text_heading(t, "OpenCL ICDs");
    if (res->n_icds == 0) {
        fprintf(t->f, "  none\n");
        return;
    }
    int wf = 4, wl = 7, ws = 6;
    for (size_t i = 0; i < res->n_icds; i++) {
        const struct result_icd_file *e = &res->icds[i];
        int lf = (int)strlen(e->file ? e->file : icd_cell(e->source)) + (e->file ? 0 : 2);
        int ll = (int)strlen(icd_cell(e->library));
        int ls = (int)strlen(icd_cell(e->run.status));
        wf = lf > wf ? (lf > 64 ? 64 : lf) : wf;
        wl = ll > wl ? (ll > 64 ? 64 : ll) : wl;
        ws = ls > ws ? ls : ws;
    }
    fprintf(t->f, "  %-*s  %-*s  %-*s  %s\n", wf, "FILE", wl, "LIBRARY", ws, "STATUS", "PLATFORMS");
    for (size_t i = 0; i < res->n_icds; i++) {
        const struct result_icd_file *e = &res->icds[i];
        char *src = e->file ? NULL : str_printf("(%s)", icd_cell(e->source));
        const char *status = icd_cell(e->run.status);
        char *pt = strcmp(status, "ok") == 0 ? result_icd_platforms_text(&e->run) : NULL;
        enum report_mark m = e->has_driver && e->absent_hardware ? REPORT_MARK_INFO : icd_status_mark(status);
        fprintf(t->f, "  %-*s  %-*s  %s%-*s%s  %s\n", wf, e->file ? e->file : src ? src : "", wl, icd_cell(e->library),
                text_color_on(t, m), ws, status, text_color_off(t), pt ? pt : icd_cell(e->run.detail));
        free(pt);
        free(src);
    }
}

void icd_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    const struct result_icd *res = sec->result_ops == &result_icd_ops ? sec->result : NULL;
    struct result_icd *own = res ? NULL : result_icd_read(sec->data); /* a section without its result */
    if (!res && !(res = own))
        return;
    icd_print_loader(res, t);
    icd_print_icds(res, t);
    result_icd_free(own);
}
