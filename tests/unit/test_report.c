/* test_report.c: unit tests of the report model and both writers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "writer.h"

static struct cli_options test_opts(const char *command)
{
    struct cli_options o;
    memset(&o, 0, sizeof(o));
    o.command = command;
    return o;
}

static void test_findings_take_catalogue_severity(void **state)
{
    (void)state;
    struct report *r = report_new();
    assert_non_null(r);
    struct report_finding *f = report_add_finding(r, "core.probe-failed", "cpu", "probe %s failed", "cpu");
    assert_non_null(f);
    assert_int_equal(f->severity, REPORT_SEV_WARNING);
    assert_string_equal(f->message, "probe cpu failed");
    assert_non_null(f->hint); /* default hint from the catalogue */
    f = report_add_finding(r, "require.unmet", "avx", "needs avx");
    assert_int_equal(f->severity, REPORT_SEV_ERROR);
    assert_false(report_is_ready(r));
    assert_int_equal(report_count_severity(r, REPORT_SEV_ERROR), 1);
    assert_int_equal(report_count_severity(r, REPORT_SEV_WARNING), 1);
    assert_non_null(report_find_finding(r, "require.unmet", "avx"));
    assert_null(report_find_finding(r, "require.unmet", "avx2"));
    report_free(r);
}

static void test_sorted_errors_first_causes_before_consequences(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_finding(r, "core.probe-failed", "a", "warning one");
    struct report_finding *c = report_add_finding(r, "require.unmet", "consequence", "caused");
    report_finding_set_cause(c, "require.unmet", "root");
    report_add_finding(r, "require.unmet", "root", "root cause");
    size_t n = 0;
    const struct report_finding **s = report_sorted_findings(r, &n);
    assert_int_equal(n, 3);
    assert_string_equal(s[0]->subject, "root");
    assert_string_equal(s[1]->subject, "consequence");
    assert_string_equal(s[2]->subject, "a");
    free(s);
    report_free(r);
}

static void test_untrusted_text_is_sanitised(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_finding *f = report_add_finding(r, "core.probe-failed", "bad\x01subject\xff", "esc\x1b[31m");
    report_finding_add_evidence(f, "/sys/x", "v\n2");
    assert_string_equal(f->subject, "bad?subject?");
    assert_string_equal(f->message, "esc?[31m");
    assert_string_equal(f->evidence[0].value, "v?2");
    report_free(r);
}

static void test_requirements_decide_readiness(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_requirement(r, "avx", true, "present");
    assert_true(report_is_ready(r));
    report_add_requirement(r, "gpu", false, "no GPU");
    assert_false(report_is_ready(r));
    report_free(r);
}

static void test_sections_and_notes(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    report_section_set_status(s, REPORT_STATUS_SKIPPED, "because %d", 42);
    report_section_add_note(s, "cannot read %s", "/proc/x");
    report_section_add_line(s, REPORT_MARK_OK, "CPU", "fine");
    assert_string_equal(s->reason, "because 42");
    json_object *notes = json_object_object_get(s->data, "notes");
    assert_int_equal(json_object_array_length(notes), 1);
    assert_ptr_equal(report_find_section(r, "cpu"), s);
    assert_null(report_find_section(r, "pci"));
    report_free(r);
}

static void test_json_document_shape(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    json_object_object_add(s->data, "vendor", json_object_new_string("Test"));
    /* A probe key that collides with a common key must not replace it. */
    json_object_object_add(s->data, "status", json_object_new_string("bogus"));
    struct report_finding *f = report_add_finding(r, "require.unmet", "x", "m");
    report_finding_add_evidence(f, "file", "value");
    struct cli_options o = test_opts("cpu");
    json_object *doc = write_json_document(r, &o, 1);
    assert_int_equal(json_object_get_int(json_object_object_get(doc, "schema_version")), 1);
    json_object *cpu = json_object_object_get(doc, "cpu");
    assert_string_equal(json_object_get_string(json_object_object_get(cpu, "status")), "ok");
    assert_string_equal(json_object_get_string(json_object_object_get(cpu, "vendor")), "Test");
    json_object *fa = json_object_object_get(doc, "findings");
    assert_int_equal(json_object_array_length(fa), 1);
    json_object *f0 = json_object_array_get_idx(fa, 0);
    assert_string_equal(json_object_get_string(json_object_object_get(f0, "severity")), "error");
    json_object *v = json_object_object_get(doc, "verdict");
    assert_false(json_object_get_boolean(json_object_object_get(v, "ready")));
    assert_int_equal(json_object_get_int(json_object_object_get(v, "exit_code")), 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(write_json_to(m, doc, true), 0);
    fclose(m);
    assert_non_null(strstr(buf, "\"id\":\"require.unmet\""));
    assert_int_equal(buf[len - 1], '\n');
    assert_ptr_equal(strchr(buf, '\n'), buf + len - 1); /* compact: one line */
    free(buf);
    json_object_put(doc);
    report_free(r);
}

static char *test_render_text(const struct report *r, const char *command, bool quiet, bool color)
{
    struct cli_options o = test_opts(command);
    o.quiet = quiet;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    write_text(m, r, &o, report_is_ready(r) ? 0 : 1, color);
    fclose(m);
    return buf;
}

static void test_text_summary_findings_verdict(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    report_section_add_line(s, REPORT_MARK_OK, "CPU", "Test CPU, 2 cores");
    struct report_finding *f = report_add_finding(r, "require.unmet", "gpu", "no GPU passed");
    report_finding_set_hint(f, "install a driver");
    r->verdict_text = strdup("Verdict: not ready");
    char *t = test_render_text(r, "check", false, false);
    char *sum = strstr(t, "Test CPU, 2 cores");
    char *find = strstr(t, "require.unmet");
    char *verdict = strstr(t, "Verdict: not ready");
    assert_non_null(sum);
    assert_non_null(find);
    assert_non_null(verdict);
    assert_true(sum < find && find < verdict); /* summary, findings, verdict: in that order */
    assert_non_null(strstr(t, "fix: install a driver"));
    assert_null(strchr(t, '\033'));
    free(t);
    t = test_render_text(r, "check", false, true);
    assert_non_null(strchr(t, '\033'));
    free(t);
    /* quiet: no summary */
    t = test_render_text(r, "check", true, false);
    assert_null(strstr(t, "Test CPU"));
    assert_non_null(strstr(t, "require.unmet"));
    free(t);
    report_free(r);
}

static void test_quiet_all_clear_is_one_line(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    report_section_add_line(s, REPORT_MARK_OK, "CPU", "fine");
    r->verdict_text = strdup("Verdict: ready");
    char *t = test_render_text(r, "check", true, false);
    assert_string_equal(t, "Verdict: ready\n");
    free(t);
    report_free(r);
}

static void test_error_document(void **state)
{
    (void)state;
    json_object *doc = write_json_error("usage", "--bogus: unknown\x02", 2);
    json_object *e = json_object_object_get(doc, "error");
    assert_string_equal(json_object_get_string(json_object_object_get(e, "message")), "--bogus: unknown?");
    assert_int_equal(json_object_get_int(json_object_object_get(e, "exit_code")), 2);
    json_object_put(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_findings_take_catalogue_severity),
        cmocka_unit_test(test_sorted_errors_first_causes_before_consequences),
        cmocka_unit_test(test_untrusted_text_is_sanitised),
        cmocka_unit_test(test_requirements_decide_readiness),
        cmocka_unit_test(test_sections_and_notes),
        cmocka_unit_test(test_json_document_shape),
        cmocka_unit_test(test_text_summary_findings_verdict),
        cmocka_unit_test(test_quiet_all_clear_is_one_line),
        cmocka_unit_test(test_error_document),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
