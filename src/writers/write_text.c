/* write_text.c: the text writer for people: summary, findings with hints, details, verdict. */
#include "writer.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static const char *const text_marks[] = {"[ ok ]", "[info]", "[warn]", "[FAIL]", "[skip]"};
static const char *const text_colors[] = {"\033[32m", "\033[36m", "\033[33m", "\033[1;31m", "\033[2m"};

const char *text_color_on(const struct text_out *t, enum report_mark m)
{
    return t->color ? text_colors[m] : "";
}

const char *text_color_off(const struct text_out *t)
{
    return t->color ? "\033[0m" : "";
}

const char *text_mark(const struct text_out *t, enum report_mark m)
{
    static char buf[5][32];
    snprintf(buf[m], sizeof(buf[m]), "%s%s%s", text_color_on(t, m), text_marks[m], text_color_off(t));
    return buf[m];
}

void text_heading(struct text_out *t, const char *title)
{
    fprintf(t->f, "\n%s%s%s\n", t->color ? "\033[1m" : "", title, t->color ? "\033[0m" : "");
}

void text_kv(struct text_out *t, const char *key, const char *fmt, ...)
{
    fprintf(t->f, "  %-22s ", key);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(t->f, fmt, ap);
    va_end(ap);
    fputc('\n', t->f);
}

/* The width of the Summary's label column: "OpenCL dev 0:0", "CUDA libraries" fit; at 80 columns a line
 * keeps 56 for its text. */
#define TEXT_LABEL_WIDTH "14"

/* The sections' indices in the Summary's order: by their probes' stacks (probe_summary_rank), registry
 * order within one, so that a stack's lines are together. Heap; NULL when out of memory (then registry
 * order). */
static size_t *text_summary_order(const struct report *r)
{
    size_t *order = calloc(r->n_sections + 1, sizeof(*order));
    int *rank = calloc(r->n_sections + 1, sizeof(*rank));
    for (size_t i = 0; order && rank && i < r->n_sections; i++) {
        const struct probe *p = probe_find(r->sections[i].name);
        rank[i] = probe_summary_rank(p ? p->stack : PROBE_STACK_UNSET);
        size_t j = i; /* insertion sort: stable, and a report has a dozen sections */
        while (j > 0 && rank[order[j - 1]] > rank[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    free(rank);
    return order;
}

static void text_summary_line(struct text_out *t, const struct report_section *s, enum report_mark mark,
                              const char *label, const char *text)
{
    fprintf(t->f, "  %s %-" TEXT_LABEL_WIDTH "s %s%s\n", text_mark(t, mark), label, s->captured ? "[captured] " : "",
            text);
}

static bool text_same_fold(const struct report_line *a, const struct report_line *b)
{
    return a->fold_label && b->fold_label && strcmp(a->fold_label, b->fold_label) == 0 &&
           strcmp(a->fold_what, b->fold_what) == 0;
}

/* SECTION's summary lines; unless -v, lines alike (report_line.fold_*: drivers for absent hardware) as one
 * where there are two or more, at the first one's place: "3 drivers for absent hardware: a, b, c". */
static void text_summary_lines(struct text_out *t, const struct report_section *s)
{
    for (size_t j = 0; j < s->n_lines; j++) {
        const struct report_line *l = &s->lines[j];
        size_t n = 0, before = 0;
        for (size_t k = 0; t->verbose == 0 && k < s->n_lines; k++)
            if (text_same_fold(l, &s->lines[k])) {
                n++;
                before += k < j;
            }
        if (n < 2) {
            text_summary_line(t, s, l->mark, l->label, l->text);
            continue;
        }
        if (before > 0)
            continue; /* folded into the first one's line */
        char text[512];
        int used = snprintf(text, sizeof(text), "%zu %s:", n, l->fold_what);
        for (size_t k = j; k < s->n_lines && used >= 0 && (size_t)used < sizeof(text); k++)
            if (text_same_fold(l, &s->lines[k]))
                used += snprintf(text + used, sizeof(text) - (size_t)used, "%s %s", k == j ? "" : ",",
                                 s->lines[k].fold_name);
        if (used >= 0 && (size_t)used < sizeof(text))
            snprintf(text + used, sizeof(text) - (size_t)used, " (-v: each)");
        text_summary_line(t, s, REPORT_MARK_INFO, l->fold_label, text);
    }
}

static enum report_mark text_severity_mark(enum report_severity s)
{
    return s == REPORT_SEV_ERROR ? REPORT_MARK_ERROR : s == REPORT_SEV_WARNING ? REPORT_MARK_WARN : REPORT_MARK_INFO;
}

/* Unless -v, FS[I] stands for the info findings of its ID that explain nothing (CHECK_F_NEVER_ROOT: a
 * driver for absent hardware, one per driver) when there are two or more: the first is printed as one,
 * with each subject's last part and the catalogue's title and hint; the others are left out. How many
 * stand together (0: FS[I] is left out; 1: it is printed as it is). */
static size_t text_fold_count(const struct text_out *t, const struct report *r, const struct report_finding **fs,
                              size_t n, size_t i)
{
    const struct report_finding *f = fs[i];
    if (t->verbose > 0 || f->severity != REPORT_SEV_INFO || !(checks_flags(r->catalogue, f->id) & CHECK_F_NEVER_ROOT))
        return 1;
    size_t alike = 0;
    for (size_t k = 0; k < n; k++)
        if (fs[k]->severity == REPORT_SEV_INFO && strcmp(fs[k]->id, f->id) == 0) {
            if (k < i)
                return 0;
            alike++;
        }
    return alike;
}

static void text_folded_finding(struct text_out *t, const struct report *r, const struct report_finding **fs,
                                size_t n, size_t i, size_t alike)
{
    const struct report_finding *f = fs[i];
    fprintf(t->f, "  %s %s (%zu:", text_mark(t, REPORT_MARK_INFO), f->id, alike);
    const char *cause = f->caused_by_id;
    for (size_t k = i, shown = 0; k < n; k++) {
        if (fs[k]->severity != REPORT_SEV_INFO || strcmp(fs[k]->id, f->id) != 0)
            continue;
        const char *subj = fs[k]->subject ? fs[k]->subject : "?", *slash = strrchr(subj, '/');
        fprintf(t->f, "%s %s", shown++ ? "," : "", slash && slash[1] ? slash + 1 : subj);
        if (!fs[k]->caused_by_id || !cause || strcmp(fs[k]->caused_by_id, cause) != 0)
            cause = NULL;
    }
    fprintf(t->f, ")\n");
    const struct check *c = checks_find(r->catalogue, f->id);
    fprintf(t->f, "         %s (-v: each)\n", c ? c->title : f->message);
    if (cause)
        fprintf(t->f, "         caused by: %s\n", cause);
    if (c && c->hint && report_finding_shown_hint(f)) /* as each would show it (not under a cause) */
        fprintf(t->f, "         fix: %s\n", c->hint);
}

/* Findings, most severe first; MIN: the least severity shown. */
static void write_text_findings(struct text_out *t, const struct report *r, enum report_severity min)
{
    size_t n = 0;
    const struct report_finding **fs = report_sorted_findings(r, &n);
    bool heading = false;
    for (size_t i = 0; i < n; i++) {
        const struct report_finding *f = fs[i];
        if (f->severity < min)
            continue;
        size_t alike = text_fold_count(t, r, fs, n, i);
        if (alike == 0)
            continue;
        if (!heading)
            text_heading(t, "Findings");
        heading = true;
        if (alike > 1) {
            text_folded_finding(t, r, fs, n, i, alike);
            continue;
        }
        fprintf(t->f, "  %s %s%s%s%s%s\n", text_mark(t, text_severity_mark(f->severity)), f->id,
                f->subject ? " (" : "", f->subject ? f->subject : "", f->subject ? ")" : "",
                f->captured ? " [captured]" : "");
        fprintf(t->f, "         %s\n", f->message);
        if (f->caused_by_id)
            fprintf(t->f, "         caused by: %s%s%s%s\n", f->caused_by_id, f->caused_by_subject ? " (" : "",
                    f->caused_by_subject ? f->caused_by_subject : "", f->caused_by_subject ? ")" : "");
        if (report_finding_shown_hint(f))
            fprintf(t->f, "         fix: %s\n", report_finding_shown_hint(f));
        if (t->verbose > 0)
            for (size_t j = 0; j < f->n_evidence; j++)
                fprintf(t->f, "         evidence: %s = %s\n", f->evidence[j].source, f->evidence[j].value);
    }
    free(fs);
}

static void write_text_verdict(struct text_out *t, const struct report *r, int exit_code)
{
    bool ready = report_is_ready(r);
    size_t ne = report_count_severity(r, REPORT_SEV_ERROR), nw = report_count_severity(r, REPORT_SEV_WARNING);
    for (size_t i = 0; i < r->n_requirements; i++)
        fprintf(t->f, "  %s require %s: %s\n", text_mark(t, r->requirements[i].met ? REPORT_MARK_OK : REPORT_MARK_ERROR),
                r->requirements[i].name, r->requirements[i].detail ? r->requirements[i].detail : "");
    if (r->verdict_text)
        fprintf(t->f, "%s%s%s\n", text_color_on(t, ready ? REPORT_MARK_OK : REPORT_MARK_ERROR), r->verdict_text,
                text_color_off(t));
    else
        fprintf(t->f, "%sVerdict: %s%s (%zu error%s, %zu warning%s; exit %d)\n",
                text_color_on(t, ready ? REPORT_MARK_OK : REPORT_MARK_ERROR), ready ? "ready" : "not ready",
                text_color_off(t), ne, ne == 1 ? "" : "s", nw, nw == 1 ? "" : "s", exit_code);
}

void write_text(FILE *f, const struct report *r, const struct cli_options *o, int exit_code, bool color)
{
    struct text_out t = {.f = f, .color = color, .verbose = o->verbose, .command = o->command};
    bool single = strcmp(o->command, "check") != 0;

    if (o->quiet) {
        /* Only what needs attention: warnings and errors, then the verdict; all clear is one line. */
        bool clear = report_is_ready(r) && report_count_severity(r, REPORT_SEV_WARNING) == 0;
        if (clear) {
            const char *last = r->verdict_text ? strrchr(r->verdict_text, '\n') : NULL;
            if (last)
                fprintf(f, "%s%s%s\n", text_color_on(&t, REPORT_MARK_OK), last + 1, text_color_off(&t));
            else
                write_text_verdict(&t, r, exit_code);
            return;
        }
        write_text_findings(&t, r, REPORT_SEV_WARNING);
        fputc('\n', f);
        write_text_verdict(&t, r, exit_code);
        return;
    }

    const char *host = json_object_get_string(json_object_object_get(r->host, "hostname"));
    const char *os = json_object_get_string(json_object_object_get(r->host, "os"));
    const char *kern = json_object_get_string(json_object_object_get(r->host, "kernel"));
    fprintf(f, "gpucheckup %s on %s (%s%s%s)\n", GPUCHECKUP_VERSION, host ? host : "unknown host",
            os ? os : "unknown OS", kern ? ", kernel " : "", kern ? kern : "");
    json_object *snap = json_object_object_get(r->host, "snapshot");
    if (snap)
        fprintf(f, "Replaying the snapshot %s (taken %s by gpucheckup %s): [captured] marks what was not run here\n",
                json_object_get_string(json_object_object_get(snap, "path")),
                json_object_get_string(json_object_object_get(snap, "created")),
                json_object_get_string(json_object_object_get(snap, "gpucheckup_version")));
    else if (!json_object_get_boolean(json_object_object_get(r->host, "live")))
        fprintf(f, "Reading a captured tree: %s\n",
                json_object_get_string(json_object_object_get(r->host, "root")));

    text_heading(&t, "Summary");
    size_t *order = text_summary_order(r);
    for (size_t k = 0; k < r->n_sections; k++) {
        const struct report_section *s = &r->sections[order ? order[k] : k];
        if (s->status != REPORT_STATUS_OK) {
            fprintf(f, "  %s %-" TEXT_LABEL_WIDTH "s %s%s%s%s\n",
                    text_mark(&t, s->status == REPORT_STATUS_FAILED ? REPORT_MARK_ERROR : REPORT_MARK_SKIP), s->name,
                    s->captured ? "[captured] " : "", report_status_name(s->status), s->reason ? ": " : "",
                    s->reason ? s->reason : "");
            continue;
        }
        text_summary_lines(&t, s);
    }
    free(order);

    write_text_findings(&t, r, REPORT_SEV_INFO);

    if (single || o->verbose > 0) {
        for (size_t i = 0; i < r->n_sections; i++) {
            const struct report_section *s = &r->sections[i];
            const struct probe *p = probe_find(s->name);
            bool wanted = o->verbose > 0 || p == probe_of_command(o->command);
            if (!p || !p->print_text || !wanted || s->status != REPORT_STATUS_OK)
                continue;
            p->print_text(s, r, &t);
        }
    }
    fputc('\n', f);
    write_text_verdict(&t, r, exit_code);
}
