/* write_junit.c: the JUnit XML writer (--format=junit) for CI test reports; walks the report only. */
#include "writer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checks.h"
#include "lazyxml.h"
#include "probe.h"
#include "strutil.h"

/* Layout, as Jenkins' junit plugin and GitLab's unit test reports read it (the schema kept in
 * tests/formats/junit-10.xsd is Jenkins xunit-plugin's junit-10.xsd):
 *   <testsuites>: the run; one <testsuite> per probe that the command ran, then "core" (the verdict:
 *   core checks, one testcase per --require item, findings no probe declares).
 *   <testcase classname="gpucheckup.PROBE" name="ID">: one per catalogue row of the probe; a row with
 *   findings gives one testcase per finding instead, named "ID (SUBJECT)".
 *   An error finding is a <failure type="error">, so the report fails exactly when gpucheckup exits 1.
 *   Warnings and info findings pass: their text goes to the testcase's <system-out>, since Jenkins
 *   marks a build unstable and GitLab a job red on any <failure>, and gpucheckup exits 0 for them.
 *   A skipped, not applicable or failed probe gives each of its rows a <skipped> with the reason.
 * Escaping is libxml2's xmlTextWriter (entities in text and attributes, newlines in attributes as
 * character references; libxml2 is loaded at run time, lazyxml.h); strings in the report are sanitised
 * already (no control bytes but tab, valid UTF-8), so every character it writes is one XML 1.0 allows. */

struct junit_case {
    char *name;
    const struct report_finding *finding; /* NULL: the check ran and found nothing */
    const char *skipped;                  /* reason, for a probe that did not run */
    bool requirement_met;                 /* a met --require item (core suite) */
};

struct junit_suite {
    struct junit_case *cases;
    size_t n, cap;
    bool oom;
};

struct junit_ctx {
    const struct report *r;
    struct junit_suite *suite;
    const char *probe;      /* the owner whose rows are collected */
    const char *skipped;    /* reason when the probe did not run */
    bool *placed;           /* per finding in r: already in a testcase */
};

static void junit_add(struct junit_suite *s, char *name, const struct report_finding *f, const char *skipped)
{
    if (!name) {
        s->oom = true;
        return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct junit_case *c = realloc(s->cases, cap * sizeof(*c));
        if (!c) {
            free(name);
            s->oom = true;
            return;
        }
        s->cases = c;
        s->cap = cap;
    }
    s->cases[s->n++] = (struct junit_case){.name = name, .finding = f, .skipped = skipped};
}

static void junit_suite_free(struct junit_suite *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->cases[i].name);
    free(s->cases);
    memset(s, 0, sizeof(*s));
}

static char *junit_case_name(const struct report_finding *f)
{
    return f->subject ? str_printf("%s (%s)", f->id, f->subject) : str_dup(f->id);
}

/* One catalogue row of the probe being collected: its findings, or one passing/skipped testcase. */
static void junit_row(const struct check *c, const char *owner, void *arg)
{
    struct junit_ctx *ctx = arg;
    if (strcmp(owner, ctx->probe) != 0)
        return;
    bool any = false;
    for (size_t i = 0; i < ctx->r->n_findings; i++) {
        const struct report_finding *f = ctx->r->findings[i];
        if (ctx->placed[i] || strcmp(f->id, c->id) != 0)
            continue;
        ctx->placed[i] = true;
        any = true;
        junit_add(ctx->suite, junit_case_name(f), f, NULL);
    }
    if (strcmp(c->id, "require.unmet") == 0) {
        /* one testcase per --require item: the unmet ones are the findings above */
        for (size_t i = 0; i < ctx->r->n_requirements; i++) {
            if (!ctx->r->requirements[i].met)
                continue;
            junit_add(ctx->suite, str_printf("%s (%s)", c->id, ctx->r->requirements[i].name), NULL, NULL);
            if (!ctx->suite->oom)
                ctx->suite->cases[ctx->suite->n - 1].requirement_met = true;
            any = true;
        }
    }
    if (!any)
        junit_add(ctx->suite, str_dup(c->id), NULL, ctx->skipped);
}

/* The text of finding F for people: what, where, why, how to fix. Heap, caller frees. */
static char *junit_finding_text(const struct report_finding *f)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    fprintf(m, "%s %s", report_severity_name(f->severity), f->id);
    if (f->subject)
        fprintf(m, " (%s)", f->subject);
    fprintf(m, ": %s\n", f->message ? f->message : "");
    if (f->caused_by_id)
        fprintf(m, "caused by: %s%s%s%s\n", f->caused_by_id, f->caused_by_subject ? " (" : "",
                f->caused_by_subject ? f->caused_by_subject : "", f->caused_by_subject ? ")" : "");
    if (report_finding_shown_hint(f))
        fprintf(m, "fix: %s\n", report_finding_shown_hint(f));
    for (size_t i = 0; i < f->n_evidence; i++)
        fprintf(m, "evidence: %s: %s\n", f->evidence[i].source, f->evidence[i].value);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void junit_counts(const struct junit_suite *s, size_t *failures, size_t *skipped)
{
    *failures = *skipped = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->cases[i].finding && s->cases[i].finding->severity == REPORT_SEV_ERROR)
            (*failures)++;
        else if (!s->cases[i].finding && s->cases[i].skipped)
            (*skipped)++;
    }
}

/* xmlTextWriter calls return a negative number on failure; RC keeps the first. */
#define JUNIT_DO(call)          \
    do {                        \
        if ((call) < 0)         \
            rc = -1;            \
    } while (0)

static int junit_attr_size(xmlTextWriterPtr w, const char *name, size_t v)
{
    return lazyxml.xmlTextWriterWriteFormatAttribute(w, BAD_CAST name, "%zu", v);
}

static int junit_write_case(xmlTextWriterPtr w, const char *classname, const struct junit_case *c)
{
    int rc = 0;
    JUNIT_DO(lazyxml.xmlTextWriterStartElement(w, BAD_CAST "testcase"));
    JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "classname", BAD_CAST classname));
    JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST c->name));
    if (c->finding) {
        char *text = junit_finding_text(c->finding);
        if (!text)
            return -1;
        if (c->finding->severity == REPORT_SEV_ERROR) {
            JUNIT_DO(lazyxml.xmlTextWriterStartElement(w, BAD_CAST "failure"));
            JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "type", BAD_CAST "error"));
            JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "message",
                                                 BAD_CAST(c->finding->message ? c->finding->message : "")));
            JUNIT_DO(lazyxml.xmlTextWriterWriteString(w, BAD_CAST text));
            JUNIT_DO(lazyxml.xmlTextWriterEndElement(w));
        } else {
            JUNIT_DO(lazyxml.xmlTextWriterWriteElement(w, BAD_CAST "system-out", BAD_CAST text));
        }
        free(text);
    } else if (c->skipped) {
        JUNIT_DO(lazyxml.xmlTextWriterStartElement(w, BAD_CAST "skipped"));
        JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "message", BAD_CAST c->skipped));
        JUNIT_DO(lazyxml.xmlTextWriterEndElement(w));
    }
    JUNIT_DO(lazyxml.xmlTextWriterEndElement(w));
    return rc;
}

static int junit_write_suite(xmlTextWriterPtr w, const char *name, size_t index, const struct junit_suite *s,
                             double seconds, const char *timestamp, const char *hostname, const char *out)
{
    int rc = 0;
    size_t failures, skipped;
    junit_counts(s, &failures, &skipped);
    char *classname = str_printf("gpucheckup.%s", name);
    if (!classname)
        return -1;
    JUNIT_DO(lazyxml.xmlTextWriterStartElement(w, BAD_CAST "testsuite"));
    JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST classname));
    JUNIT_DO(junit_attr_size(w, "id", index));
    JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "package", BAD_CAST "gpucheckup"));
    JUNIT_DO(junit_attr_size(w, "tests", s->n));
    JUNIT_DO(junit_attr_size(w, "failures", failures));
    JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "errors", BAD_CAST "0"));
    JUNIT_DO(junit_attr_size(w, "skipped", skipped));
    JUNIT_DO(lazyxml.xmlTextWriterWriteFormatAttribute(w, BAD_CAST "time", "%.3f", seconds < 0 ? 0.0 : seconds));
    JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "timestamp", BAD_CAST timestamp));
    if (hostname)
        JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "hostname", BAD_CAST hostname));
    for (size_t i = 0; i < s->n && rc == 0; i++)
        JUNIT_DO(junit_write_case(w, classname, &s->cases[i]));
    if (out && *out)
        JUNIT_DO(lazyxml.xmlTextWriterWriteElement(w, BAD_CAST "system-out", BAD_CAST out));
    JUNIT_DO(lazyxml.xmlTextWriterEndElement(w));
    free(classname);
    return rc;
}

/* The summary lines of a section, one per line ("[mark] label: text"). Heap or NULL. */
static char *junit_section_out(const struct report_section *sec)
{
    static const char *const marks[] = {"ok", "info", "warning", "error", "skipped"};
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    fprintf(m, "status: %s%s%s\n", report_status_name(sec->status), sec->reason ? ": " : "",
            sec->reason ? sec->reason : "");
    for (size_t i = 0; i < sec->n_lines; i++)
        fprintf(m, "[%s] %s: %s\n", marks[sec->lines[i].mark], sec->lines[i].label, sec->lines[i].text);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Collect the suite of OWNER (a probe name or "core") into S. */
static void junit_collect(const struct report *r, bool *placed, const char *owner, const char *skipped,
                          struct junit_suite *s)
{
    struct junit_ctx ctx = {.r = r, .suite = s, .probe = owner, .skipped = skipped, .placed = placed};
    checks_foreach(r->catalogue, junit_row, &ctx);
}

int write_junit(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run)
{
    (void)o;
    if (lazyxml_load(NULL) < 0) /* main loads it before the run, to say why */
        return -1;
    xmlBufferPtr buf = lazyxml.xmlBufferCreate();
    if (!buf)
        return -1;
    xmlTextWriterPtr w = lazyxml.xmlNewTextWriterMemory(buf, 0);
    if (!w) {
        lazyxml.xmlBufferFree(buf);
        return -1;
    }
    bool *placed = calloc(r->n_findings + 1, sizeof(*placed));
    char **reasons = calloc(r->n_sections + 1, sizeof(*reasons));
    struct junit_suite *suites = calloc(r->n_sections + 1, sizeof(*suites));
    int rc = placed && reasons && suites ? 0 : -1;

    /* Build every suite first: the totals go on <testsuites>. */
    for (size_t i = 0; rc == 0 && i < r->n_sections; i++) {
        const struct report_section *sec = &r->sections[i];
        if (sec->status != REPORT_STATUS_OK) {
            reasons[i] = str_printf("%s: %s", report_status_name(sec->status),
                                    sec->reason ? sec->reason : "no reason given");
            if (!reasons[i])
                rc = -1;
        }
        junit_collect(r, placed, sec->name, reasons[i], &suites[i]);
        if (suites[i].oom)
            rc = -1;
    }
    struct junit_suite *core = suites ? &suites[r->n_sections] : NULL;
    if (rc == 0) {
        junit_collect(r, placed, "core", NULL, core);
        /* findings of a probe this command did not run, or of no catalogue row: never dropped */
        for (size_t i = 0; i < r->n_findings; i++)
            if (!placed[i])
                junit_add(core, junit_case_name(r->findings[i]), r->findings[i], NULL);
        if (core->oom)
            rc = -1;
    }

    size_t tests = 0, failures = 0;
    for (size_t i = 0; rc == 0 && i <= r->n_sections; i++) {
        size_t fl, sk;
        junit_counts(&suites[i], &fl, &sk);
        tests += suites[i].n;
        failures += fl;
    }
    char timestamp[32] = "1970-01-01T00:00:00";
    time_t t0 = (time_t)run->started_s;
    struct tm tm;
    if (gmtime_r(&t0, &tm))
        strftime(timestamp, sizeof(timestamp), "%Y-%m-%dT%H:%M:%S", &tm);
    json_object *hn = NULL;
    const char *hostname = r->host && json_object_object_get_ex(r->host, "hostname", &hn) && hn &&
                                   json_object_is_type(hn, json_type_string)
                               ? json_object_get_string(hn)
                               : NULL;

    if (rc == 0) {
        JUNIT_DO(lazyxml.xmlTextWriterSetIndent(w, 1));
        JUNIT_DO(lazyxml.xmlTextWriterSetIndentString(w, BAD_CAST "  "));
        JUNIT_DO(lazyxml.xmlTextWriterStartDocument(w, "1.0", "UTF-8", NULL));
        JUNIT_DO(lazyxml.xmlTextWriterStartElement(w, BAD_CAST "testsuites"));
        JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "name", BAD_CAST "gpucheckup"));
        JUNIT_DO(junit_attr_size(w, "tests", tests));
        JUNIT_DO(junit_attr_size(w, "failures", failures));
        JUNIT_DO(lazyxml.xmlTextWriterWriteAttribute(w, BAD_CAST "errors", BAD_CAST "0"));
        JUNIT_DO(lazyxml.xmlTextWriterWriteFormatAttribute(w, BAD_CAST "time", "%.3f",
                                                   run->duration_s < 0 ? 0.0 : run->duration_s));
    }
    for (size_t i = 0; rc == 0 && i < r->n_sections; i++) {
        char *out = junit_section_out(&r->sections[i]);
        JUNIT_DO(junit_write_suite(w, r->sections[i].name, i, &suites[i], r->sections[i].duration_ms / 1000.0,
                                   timestamp, hostname, out));
        free(out);
    }
    if (rc == 0) {
        char *out = str_printf("%s\nexit status: %d\n", r->verdict_text ? r->verdict_text : "", run->exit_code);
        if (!out)
            rc = -1;
        else
            JUNIT_DO(junit_write_suite(w, "core", r->n_sections, core, 0.0, timestamp, hostname, out));
        free(out);
        JUNIT_DO(lazyxml.xmlTextWriterEndDocument(w));
    }
    lazyxml.xmlFreeTextWriter(w); /* flushes into buf */
    size_t len = (size_t)lazyxml.xmlBufferLength(buf);
    if (rc == 0 && fwrite(lazyxml.xmlBufferContent(buf), 1, len, f) != len)
        rc = -1;
    lazyxml.xmlBufferFree(buf);
    for (size_t i = 0; suites && i <= r->n_sections; i++)
        junit_suite_free(&suites[i]);
    for (size_t i = 0; reasons && i < r->n_sections; i++)
        free(reasons[i]);
    free(suites);
    free(reasons);
    free(placed);
    return rc;
}
