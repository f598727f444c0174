/* report.c: the report model: sections, findings, requirements and verdict targets. */
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "strutil.h"

static const char *const report_severity_names[] = {"info", "warning", "error"};
static const char *const report_status_names[] = {"ok", "skipped", "not-applicable", "failed"};

const char *report_severity_name(enum report_severity s)
{
    return (unsigned)s < 3 ? report_severity_names[s] : "error";
}

const char *report_status_name(enum report_status s)
{
    return (unsigned)s < 4 ? report_status_names[s] : "failed";
}

/* Grow *ARR (of *N elements of SIZE bytes) by one zeroed element; returns it or NULL. */
static void *report_grow(void **arr, size_t *n, size_t size)
{
    void *p = realloc(*arr, (*n + 1) * size);
    if (!p)
        return NULL;
    *arr = p;
    void *elem = (char *)p + *n * size;
    memset(elem, 0, size);
    (*n)++;
    return elem;
}

struct report *report_new_with(const struct checks_catalogue *cat)
{
    struct report *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->catalogue = cat;
    r->host = json_object_new_object();
    if (!r->host) {
        free(r);
        return NULL;
    }
    return r;
}

static void report_finding_clear(struct report_finding *f)
{
    free(f->id);
    free(f->subject);
    free(f->message);
    free(f->hint);
    for (size_t i = 0; i < f->n_evidence; i++) {
        free(f->evidence[i].source);
        free(f->evidence[i].value);
    }
    free(f->evidence);
    free(f->caused_by_id);
    free(f->caused_by_subject);
}

int report_section_init(struct report_section *s, const char *name)
{
    memset(s, 0, sizeof(*s));
    s->data = json_object_new_object();
    s->name = str_dup(name);
    s->status = REPORT_STATUS_OK;
    if (s->data && s->name)
        return 0;
    report_section_clear(s);
    return -1;
}

/* Everything S owns but its name, freed. */
static void report_section_free_members(struct report_section *s)
{
    free(s->reason);
    json_object_put(s->data);
    if (s->result_ops && s->result)
        s->result_ops->free(s->result);
    for (size_t j = 0; j < s->n_lines; j++) {
        free(s->lines[j].label);
        free(s->lines[j].text);
        free(s->lines[j].fold_label);
        free(s->lines[j].fold_what);
        free(s->lines[j].fold_name);
    }
    free(s->lines);
}

void report_section_clear(struct report_section *s)
{
    report_section_free_members(s);
    free(s->name);
    memset(s, 0, sizeof(*s));
}

void report_section_publish(struct report_section *dst, struct report_section *src)
{
    /* DST's name is read meanwhile by other threads looking a section up (report_find_section walks every
     * name): it is neither freed nor written; every other member is replaced by SRC's, member by member. */
    report_section_free_members(dst);
    dst->status = src->status;
    dst->reason = src->reason;
    dst->data = src->data;
    dst->result_ops = src->result_ops;
    dst->result = src->result;
    dst->lines = src->lines;
    dst->n_lines = src->n_lines;
    dst->duration_ms = src->duration_ms;
    dst->captured = src->captured;
    free(src->name);
    memset(src, 0, sizeof(*src));
}

void report_free(struct report *r)
{
    if (!r)
        return;
    json_object_put(r->host);
    for (size_t i = 0; i < r->n_sections; i++)
        report_section_clear(&r->sections[i]);
    free(r->sections);
    for (size_t i = 0; i < r->n_findings; i++) {
        report_finding_clear(r->findings[i]);
        free(r->findings[i]);
    }
    free(r->findings);
    for (size_t i = 0; i < r->n_requirements; i++) {
        free(r->requirements[i].name);
        free(r->requirements[i].detail);
    }
    free(r->requirements);
    json_object_put(r->targets);
    json_object_put(r->target_apis);
    free(r->verdict_text);
    free(r);
}

struct report_section *report_add_section(struct report *r, const char *name)
{
    json_object *data = json_object_new_object();
    char *n = str_dup(name);
    struct report_section *s = NULL;
    if (data && n)
        s = report_grow((void **)&r->sections, &r->n_sections, sizeof(*s));
    if (!s) {
        json_object_put(data);
        free(n);
        return NULL;
    }
    s->name = n;
    s->data = data;
    s->status = REPORT_STATUS_OK;
    return s;
}

struct report_section *report_find_section(const struct report *r, const char *name)
{
    for (size_t i = 0; i < r->n_sections; i++)
        if (strcmp(r->sections[i].name, name) == 0)
            return &r->sections[i];
    return NULL;
}

void report_section_set_result(struct report_section *s, const struct report_result_ops *ops, void *res)
{
    if (s->result_ops && s->result)
        s->result_ops->free(s->result);
    s->result_ops = res ? ops : NULL;
    s->result = res;
}

const void *report_result(const struct report *r, const struct report_result_ops *ops)
{
    const struct report_section *s = report_find_section(r, ops->section);
    return s && s->status == REPORT_STATUS_OK && s->result_ops == ops ? s->result : NULL;
}

int report_section_adopt(struct report_section *s, const struct report_result_ops *ops)
{
    void *res = ops->from_json(s->data);
    if (!res)
        return -1;
    report_section_set_result(s, ops, res);
    return 0;
}

json_object *report_section_json(const struct report_section *s)
{
    if (!s->result_ops || !s->result || !s->result_ops->to_json) /* no result, or facts beside the JSON */
        return json_object_get(s->data);
    json_object *typed = s->result_ops->to_json(s->result);
    json_object *o = typed ? json_object_new_object() : NULL;
    if (!o) {
        json_object_put(typed);
        return NULL;
    }
    if (s->result_ops->keeps_places) { /* DATA's order; a placeholder's value from the result */
        json_object_object_foreach(s->data, key, val)
        {
            json_object *v = NULL;
            json_object_object_add(o, key, json_object_get(json_object_object_get_ex(typed, key, &v) ? v : val));
        }
    }
    for (const char *const *k = s->result_ops->members; k && *k; k++) {
        json_object *v = NULL;
        if (json_object_object_get_ex(typed, *k, &v) || json_object_object_get_ex(s->data, *k, &v))
            json_object_object_add(o, *k, json_object_get(v));
    }
    json_object *from[] = {typed, s->data};
    for (size_t i = 0; i < 2; i++) {
        json_object_object_foreach(from[i], key, val)
        {
            if (!json_object_object_get_ex(o, key, NULL))
                json_object_object_add(o, key, json_object_get(val));
        }
    }
    json_object_put(typed);
    return o;
}

void report_section_set_status(struct report_section *s, enum report_status st, const char *fmt, ...)
{
    s->status = st;
    va_list ap;
    va_start(ap, fmt);
    str_set_vprintf(&s->reason, fmt, ap);
    va_end(ap);
}

void report_section_add_line(struct report_section *s, enum report_mark mark, const char *label,
                             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = str_sanitize(str_vprintf(fmt, ap));
    va_end(ap);
    char *lab = str_dup(label ? label : "");
    struct report_line *l = NULL;
    if (text && lab)
        l = report_grow((void **)&s->lines, &s->n_lines, sizeof(*l));
    if (!l) {
        free(text);
        free(lab);
        return;
    }
    l->mark = mark;
    l->label = lab;
    l->text = text;
}

char *report_label_renamed(const struct report_label_rename *table, size_t n, const char *label)
{
    for (size_t i = 0; label && i < n; i++)
        if (strcmp(label, table[i].old) == 0)
            return str_dup(table[i].today);
    return NULL;
}

void report_section_fold_line(struct report_section *s, const char *label, const char *what, const char *name)
{
    if (s->n_lines == 0 || !label || !what || !name)
        return;
    struct report_line *l = &s->lines[s->n_lines - 1];
    free(l->fold_label);
    free(l->fold_what);
    free(l->fold_name);
    l->fold_label = str_dup(label);
    l->fold_what = str_dup(what);
    l->fold_name = str_dup(name);
    if (!l->fold_label || !l->fold_what || !l->fold_name) { /* shown as it is */
        free(l->fold_label);
        free(l->fold_what);
        free(l->fold_name);
        l->fold_label = l->fold_what = l->fold_name = NULL;
    }
}

void report_section_add_note(struct report_section *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = str_sanitize(str_vprintf(fmt, ap));
    va_end(ap);
    if (!text)
        return;
    json_object *notes = NULL;
    if (!json_object_object_get_ex(s->data, "notes", &notes)) {
        notes = json_object_new_array();
        json_object_object_add(s->data, "notes", notes);
    }
    json_object_array_add(notes, json_object_new_string(text));
    free(text);
}

struct report_finding *report_add_finding(struct report *r, const char *id, const char *subject,
                                          const char *fmt, ...)
{
    const struct check *c = checks_find(r->catalogue, id);
    if (!c)
        fprintf(stderr, "gpucheckup: internal: finding ID '%s' is not in the check catalogue\n", id);
    va_list ap;
    va_start(ap, fmt);
    char *msg = str_sanitize(str_vprintf(fmt, ap));
    va_end(ap);
    /* Each finding on its own, the array holding only pointers: growing the array moves no finding, so
     * a pointer a caller holds stays valid across later adds. */
    struct report_finding *f = calloc(1, sizeof(*f));
    struct report_finding **slot = f ? report_grow((void **)&r->findings, &r->n_findings, sizeof(*slot)) : NULL;
    if (!slot) {
        free(f);
        free(msg);
        return NULL;
    }
    *slot = f;
    f->id = str_dup(id);
    f->severity = c ? c->severity : REPORT_SEV_ERROR;
    f->subject = str_sanitize(str_dup(subject));
    f->message = msg;
    f->hint = str_dup(c ? c->hint : NULL);
    return f;
}

void report_finding_set_hint(struct report_finding *f, const char *fmt, ...)
{
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *h = str_sanitize(str_vprintf(fmt, ap));
    va_end(ap);
    free(f->hint);
    f->hint = h;
}

void report_finding_add_evidence(struct report_finding *f, const char *source, const char *fmt, ...)
{
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *v = str_sanitize(str_vprintf(fmt, ap));
    va_end(ap);
    char *src = str_sanitize(str_dup(source ? source : ""));
    struct report_evidence *e = NULL;
    if (v && src)
        e = report_grow((void **)&f->evidence, &f->n_evidence, sizeof(*e));
    if (!e) {
        free(v);
        free(src);
        return;
    }
    e->source = src;
    e->value = v;
}

void report_finding_set_cause(struct report_finding *f, const char *cause_id, const char *cause_subject)
{
    if (!f)
        return;
    free(f->caused_by_id);
    free(f->caused_by_subject);
    f->caused_by_id = str_dup(cause_id);
    f->caused_by_subject = str_dup(cause_subject);
}

const char *report_finding_shown_hint(const struct report_finding *f)
{
    return f->caused_by_id ? NULL : f->hint;
}

struct report_finding *report_find_finding(const struct report *r, const char *id, const char *subject)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        struct report_finding *f = r->findings[i];
        if (strcmp(f->id, id) != 0)
            continue;
        if (subject && (!f->subject || strcmp(f->subject, subject) != 0))
            continue;
        return f;
    }
    return NULL;
}

size_t report_count_severity(const struct report *r, enum report_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i]->severity == sev)
            n++;
    return n;
}

/* The worst severity among R's findings that the lines of section NAME summarise: those its probe owns
 * (the catalogue's owner) and the run's core.* ones (a probe that failed, ran out of time or could not
 * start a child leaves any of its lines in doubt). INFO when there are none. */
static enum report_severity report_summarised_worst(const struct report *r, const char *name)
{
    enum report_severity worst = REPORT_SEV_INFO;
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *f = r->findings[i];
        const char *owner = checks_owner(r->catalogue, f->id);
        bool mine = (owner && strcmp(owner, name) == 0) || (f->id && strncmp(f->id, "core.", 5) == 0);
        if (mine && f->severity > worst)
            worst = f->severity;
    }
    return worst;
}

void report_marks_agree(struct report *r)
{
    for (size_t s = 0; s < r->n_sections; s++) {
        struct report_section *sec = &r->sections[s];
        enum report_severity worst = report_summarised_worst(r, sec->name);
        enum report_mark cap = worst == REPORT_SEV_ERROR     ? REPORT_MARK_ERROR
                               : worst == REPORT_SEV_WARNING ? REPORT_MARK_WARN
                                                             : REPORT_MARK_INFO;
        for (size_t i = 0; i < sec->n_lines; i++)
            if ((sec->lines[i].mark == REPORT_MARK_ERROR || sec->lines[i].mark == REPORT_MARK_WARN) &&
                sec->lines[i].mark > cap)
                sec->lines[i].mark = cap;
    }
}

void report_add_requirement(struct report *r, const char *name, bool met, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *d = str_sanitize(str_vprintf(fmt, ap));
    va_end(ap);
    char *n = str_dup(name);
    struct report_requirement *q = NULL;
    if (d && n)
        q = report_grow((void **)&r->requirements, &r->n_requirements, sizeof(*q));
    if (!q) {
        free(d);
        free(n);
        return;
    }
    q->name = n;
    q->met = met;
    q->detail = d;
}

void report_set_target(struct report *r, const char *name, bool ready, const char *detail,
                       const char *const *reasons)
{
    if (!r->targets)
        r->targets = json_object_new_object();
    json_object *t = json_object_new_object();
    json_object_object_add(t, "ready", json_object_new_boolean(ready));
    json_object_object_add(t, "detail", detail ? json_object_new_string(detail) : NULL);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; reasons && reasons[i]; i++)
        json_object_array_add(arr, json_object_new_string(reasons[i]));
    json_object_object_add(t, "reasons", arr);
    json_object_object_add(r->targets, name, t);
}

bool report_is_ready(const struct report *r)
{
    if (report_count_severity(r, REPORT_SEV_ERROR) > 0)
        return false;
    for (size_t i = 0; i < r->n_requirements; i++)
        if (!r->requirements[i].met)
            return false;
    return true;
}

const struct report_finding **report_sorted_findings(const struct report *r, size_t *n)
{
    *n = 0;
    if (r->n_findings == 0)
        return NULL;
    const struct report_finding **out = malloc(r->n_findings * sizeof(*out));
    if (!out)
        return NULL;
    /* Stable: errors, then warnings, then info; root causes before their consequences. */
    for (int sev = REPORT_SEV_ERROR; sev >= REPORT_SEV_INFO; sev--)
        for (int caused = 0; caused < 2; caused++)
            for (size_t i = 0; i < r->n_findings; i++)
                if ((int)r->findings[i]->severity == sev && (r->findings[i]->caused_by_id != NULL) == caused)
                    out[(*n)++] = r->findings[i];
    return out;
}
