/* write_json.c: the JSON writer: walks the report and builds the document with json-c. */
#include "writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "probe.h"
#include "strutil.h"

static json_object *write_json_str(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

static const char *const write_json_marks[] = {"ok", "info", "warning", "error", "skipped"};

static json_object *write_json_section(const struct report_section *s)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string(report_status_name(s->status)));
    json_object_object_add(o, "reason", write_json_str(s->reason));
    char ms[32];
    snprintf(ms, sizeof(ms), "%.3f", s->duration_ms);
    json_object_object_add(o, "duration_ms", json_object_new_double_s(s->duration_ms, ms));
    json_object *sum = json_object_new_array();
    for (size_t i = 0; i < s->n_lines; i++) {
        json_object *l = json_object_new_object();
        json_object_object_add(l, "mark", json_object_new_string(write_json_marks[s->lines[i].mark]));
        json_object_object_add(l, "label", json_object_new_string(s->lines[i].label));
        json_object_object_add(l, "text", json_object_new_string(s->lines[i].text));
        json_object_array_add(sum, l);
    }
    json_object_object_add(o, "summary", sum);
    if (s->captured)
        json_object_object_add(o, "captured", json_object_new_boolean(true));
    /* The probe's facts sit beside the common keys; a probe never uses those names. A typed result
     * is turned into JSON here, at the edge. */
    json_object *data = report_section_json(s);
    if (!data)
        return o;
    json_object_object_foreach(data, key, val)
    {
        if (json_object_object_get_ex(o, key, NULL))
            continue;
        json_object_object_add(o, key, json_object_get(val));
    }
    json_object_put(data);
    return o;
}

static json_object *write_json_finding(const struct report_finding *f)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(f->id));
    json_object_object_add(o, "severity", json_object_new_string(report_severity_name(f->severity)));
    json_object_object_add(o, "subject", write_json_str(f->subject));
    json_object_object_add(o, "message", write_json_str(f->message ? f->message : ""));
    json_object_object_add(o, "hint", write_json_str(f->hint));
    json_object *ev = json_object_new_array();
    for (size_t i = 0; i < f->n_evidence; i++) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "source", json_object_new_string(f->evidence[i].source));
        json_object_object_add(e, "value", json_object_new_string(f->evidence[i].value));
        json_object_array_add(ev, e);
    }
    json_object_object_add(o, "evidence", ev);
    if (f->caused_by_id) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "id", json_object_new_string(f->caused_by_id));
        json_object_object_add(c, "subject", write_json_str(f->caused_by_subject));
        json_object_object_add(o, "caused_by", c);
    } else {
        json_object_object_add(o, "caused_by", NULL);
    }
    if (f->captured)
        json_object_object_add(o, "captured", json_object_new_boolean(true));
    return o;
}

static json_object *write_json_tool(void)
{
    json_object *t = json_object_new_object();
    json_object_object_add(t, "name", json_object_new_string("gpucheckup"));
    json_object_object_add(t, "version", json_object_new_string(GPUCHECKUP_VERSION));
    return t;
}

json_object *write_json_document(const struct report *r, const struct cli_options *o, int exit_code)
{
    json_object *doc = json_object_new_object();
    json_object_object_add(doc, "schema_version", json_object_new_int(GC_SCHEMA_VERSION));
    json_object_object_add(doc, "tool", write_json_tool());
    json_object_object_add(doc, "command", json_object_new_string(o->command));
    json_object_object_add(doc, "host", json_object_get(r->host));
    for (size_t i = 0; i < r->n_sections; i++)
        json_object_object_add(doc, r->sections[i].name, write_json_section(&r->sections[i]));

    size_t n = 0;
    const struct report_finding **sorted = report_sorted_findings(r, &n);
    json_object *fa = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(fa, write_json_finding(sorted[i]));
    free(sorted);
    json_object_object_add(doc, "findings", fa);

    json_object *v = json_object_new_object();
    json_object_object_add(v, "ready", json_object_new_boolean(report_is_ready(r)));
    json_object_object_add(v, "exit_code", json_object_new_int(exit_code));
    json_object_object_add(v, "text", write_json_str(r->verdict_text));
    json_object *counts = json_object_new_object();
    for (int sev = REPORT_SEV_ERROR; sev >= REPORT_SEV_INFO; sev--)
        json_object_object_add(counts, report_severity_name((enum report_severity)sev),
                               json_object_new_int64((int64_t)report_count_severity(r, (enum report_severity)sev)));
    json_object_object_add(v, "counts", counts);
    json_object_object_add(v, "targets", r->targets ? json_object_get(r->targets) : json_object_new_object());
    json_object *req = json_object_new_array();
    for (size_t i = 0; i < r->n_requirements; i++) {
        json_object *q = json_object_new_object();
        json_object_object_add(q, "name", json_object_new_string(r->requirements[i].name));
        json_object_object_add(q, "met", json_object_new_boolean(r->requirements[i].met));
        json_object_object_add(q, "detail", write_json_str(r->requirements[i].detail));
        json_object_array_add(req, q);
    }
    json_object_object_add(v, "requirements", req);
    json_object_object_add(doc, "verdict", v);
    return doc;
}

json_object *write_json_error(const char *kind, const char *message, int exit_code)
{
    json_object *doc = json_object_new_object();
    json_object_object_add(doc, "schema_version", json_object_new_int(GC_SCHEMA_VERSION));
    json_object_object_add(doc, "tool", write_json_tool());
    json_object *e = json_object_new_object();
    json_object_object_add(e, "kind", json_object_new_string(kind));
    char *m = str_sanitize(str_dup(message ? message : "unknown error"));
    json_object_object_add(e, "message", json_object_new_string(m ? m : "unknown error"));
    free(m);
    json_object_object_add(e, "exit_code", json_object_new_int(exit_code));
    json_object_object_add(doc, "error", e);
    return doc;
}

int write_json_to(FILE *f, json_object *doc, bool compact)
{
    int flags = compact ? JSON_C_TO_STRING_PLAIN : (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
    flags |= JSON_C_TO_STRING_NOSLASHESCAPE;
    const char *s = json_object_to_json_string_ext(doc, flags);
    if (!s)
        return -1;
    return fprintf(f, "%s\n", s) < 0 ? -1 : 0;
}
