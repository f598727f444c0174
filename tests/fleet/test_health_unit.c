/* test_health_unit.c: the health line and exit code (write_health.c) on reports built by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "report.h"
#include "writer.h"

static void health_line(const struct report *r, int rc, char *buf, size_t len, int *health)
{
    *health = writer_health_exit(r, rc);
    writer_health_line(buf, len, r, *health, "usage", "bad");
}

/* Every line: at most 80 bytes, printable ASCII, no newline. */
static void assert_line_shape(const char *line)
{
    assert_true(strlen(line) <= WRITER_HEALTH_MAX);
    for (const char *p = line; *p; p++)
        assert_true(*p >= 0x20 && *p < 0x7f);
}

static void test_ready(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_requirement(r, "gpu", true, "ok");
    report_add_requirement(r, "cuda>=12.0", true, "ok");
    report_add_finding(r, "core.probe-failed", "x", "a warning");
    char line[128];
    int h;
    health_line(r, 0, line, sizeof(line), &h);
    assert_int_equal(h, WRITER_HEALTH_READY);
    assert_string_equal(line, "READY require gpu,cuda>=12.0; 1 warnings");
    report_free(r);
}

/* The root cause: an error not caused by another comes before an unmet requirement that has a cause. */
static void test_not_ready_root(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_finding *f = report_add_finding(r, "require.unmet", "gpu", "unmet");
    report_finding_set_cause(f, "core.probe-failed", "pci");
    char line[128];
    int h;
    health_line(r, 1, line, sizeof(line), &h);
    assert_int_equal(h, WRITER_HEALTH_NOT_READY);
    assert_string_equal(line, "NOT-READY core.probe-failed pci"); /* the cause, not require.unmet */
    report_add_finding(r, "require.unmet", "avx9", "unmet, no cause");
    health_line(r, 1, line, sizeof(line), &h);
    assert_string_equal(line, "NOT-READY require.unmet avx9");
    report_free(r);
}

/* A subject of any length and bytes: cut to 80 with "...", control bytes and UTF-8 as '?'. */
static void test_subject_cut_and_cleaned(void **state)
{
    (void)state;
    struct report *r = report_new();
    char subject[300];
    memset(subject, 'a', sizeof(subject) - 1);
    subject[sizeof(subject) - 1] = '\0';
    memcpy(subject, "/x\n\t\xc3\xa9/", 7);
    report_add_finding(r, "require.unmet", subject, "unmet");
    char line[256];
    int h;
    health_line(r, 1, line, sizeof(line), &h);
    assert_line_shape(line);
    assert_int_equal(strlen(line), WRITER_HEALTH_MAX);
    assert_memory_equal(line, "NOT-READY require.unmet /x?\?\?\?/aaa", 34);
    assert_string_equal(line + WRITER_HEALTH_MAX - 3, "...");
    /* a smaller buffer than the line: cut to fit it, still terminated */
    char small[20];
    writer_health_line(small, sizeof(small), r, h, NULL, NULL);
    assert_int_equal(strlen(small), sizeof(small) - 1);
    assert_string_equal(small + sizeof(small) - 4, "...");
    report_free(r);
}

/* The time ran out: unknown, naming what was seen (an error), else the timeout finding. */
static void test_timeout_unknown(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_finding(r, "core.timeout-spent", "smoke", "spent");
    char line[128];
    int h;
    health_line(r, 0, line, sizeof(line), &h);
    assert_int_equal(h, WRITER_HEALTH_UNKNOWN);
    assert_string_equal(line, "UNKNOWN core.timeout-spent smoke");
    report_add_finding(r, "require.unmet", "cuda", "unmet");
    health_line(r, 1, line, sizeof(line), &h);
    assert_int_equal(h, WRITER_HEALTH_UNKNOWN);
    assert_string_equal(line, "UNKNOWN require.unmet cuda");
    report_free(r);
}

/* No report: usage (2) and internal (3) exits are both unknown, and the line says which. */
static void test_no_report(void **state)
{
    (void)state;
    assert_int_equal(writer_health_exit(NULL, 2), WRITER_HEALTH_UNKNOWN);
    assert_int_equal(writer_health_exit(NULL, 3), WRITER_HEALTH_UNKNOWN);
    char line[128];
    writer_health_line(line, sizeof(line), NULL, WRITER_HEALTH_UNKNOWN, "internal", "out of memory");
    assert_string_equal(line, "UNKNOWN internal out of memory");
    writer_health_line(line, sizeof(line), NULL, WRITER_HEALTH_UNKNOWN, NULL, NULL);
    assert_string_equal(line, "UNKNOWN internal");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready),
        cmocka_unit_test(test_not_ready_root),
        cmocka_unit_test(test_subject_cut_and_cleaned),
        cmocka_unit_test(test_timeout_unknown),
        cmocka_unit_test(test_no_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
