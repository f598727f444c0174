/* test_writers.c: unit tests of the junit, prometheus, nfd and github writers on a report built by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "results/result_cuda.h"
#include "writer.h"

/* A report with what the e2e scenarios cannot easily make: two GPU vendors and a BMC adapter, CUDA
 * devices of two compute capabilities, a driver version that is no valid label value, the same
 * finding twice, the same requirement twice, a skipped probe, awkward characters in a subject. */
static struct report *fmt_report(void)
{
    struct report *r = report_new();
    assert_non_null(r);
    struct report_section *s = report_add_section(r, "pci");
    json_object_put(s->data);
    s->data = json_tokener_parse("{\"devices\": [{\"kind\": \"compute-gpu\", \"vendor_id\": \"10de\"},"
                                 " {\"kind\": \"accelerator\", \"vendor_id\": \"1002\"},"
                                 " {\"kind\": \"display-only\", \"vendor_id\": \"1a03\"}]}");
    s = report_add_section(r, "cuda");
    json_object_put(s->data);
    s->data = json_tokener_parse(
        "{\"driver\": {\"cuda_version\": \"12.4\", \"kernel_module_version\": \"550 beta!\"},"
        " \"devices\": [{\"ordinal\": 0, \"name\": \"GPU \\\"A\\\"\", \"pci_address\": \"0000:01:00.0\", \"cc_major\": 8,"
        " \"cc_minor\": 6}, {\"ordinal\": 1, \"cc_major\": 7, \"cc_minor\": 5}],"
        " \"smoke\": [{\"status\": \"fail\", \"ordinal\": 0, \"name\": \"GPU \\\"A\\\"\", \"pci_bus_id\": \"0000:01:00.0\","
        " \"gflops\": null, \"kernel_ms\": 2.5}, {\"status\": \"skipped\", \"ordinal\": 1}]}");
    /* the typed facts the writers read (compute paths), as a snapshot replay makes them */
    assert_int_equal(report_section_adopt(s, &result_cuda_ops), 0);
    s = report_add_section(r, "smoke");
    report_section_set_status(s, REPORT_STATUS_SKIPPED, "needs the live machine");
    report_add_finding(r, "pci.nouveau-bound", "0000:01:00.0", "driven by nouveau");
    report_add_finding(r, "pci.nouveau-bound", "0000:01:00.0", "driven by nouveau, again");
    report_add_finding(r, "pci.link-degraded", "a,b:c%d\\e\"f", "odd subject");
    report_add_requirement(r, "gpu", false, "no GPU");
    report_add_requirement(r, "gpu", false, "no GPU");
    report_add_finding(r, "require.unmet", "gpu", "Requirement 'gpu' is not met");
    return r;
}

/* The writer's whole output, as a heap string. */
static char *fmt_run(int (*w)(FILE *, const struct report *, const struct cli_options *, const struct writer_run *),
                     const struct report *r)
{
    struct cli_options o;
    memset(&o, 0, sizeof(o));
    o.command = "check";
    struct writer_run run = {.exit_code = 1, .started_s = 1700000000.25, .duration_s = 1.5};
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    assert_int_equal(w(m, r, &o, &run), 0);
    assert_int_equal(fclose(m), 0);
    return buf;
}

static size_t fmt_count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_nfd(void **state)
{
    (void)state;
    struct report *r = fmt_report();
    char *t = fmt_run(write_nfd, r);
    const char *P = "feature.node.kubernetes.io/gpucheckup-";
    char want[256];
    static const char *const lines[] = {"ready=false", "gpu.present=true", "gpu.count=2", "gpu.vendor=mixed",
                                        "cuda.driver-version=12.4", "cuda.device-count=2",
                                        "cuda.compute-capability=7.5", "cuda.compute-capability-major=7"};
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        snprintf(want, sizeof(want), "%s%s\n", P, lines[i]);
        assert_non_null(strstr(t, want));
    }
    /* "550 beta!" is no valid label value: left out, not mangled */
    assert_null(strstr(t, "nvidia.driver-version"));
    /* no cpu section, no targets: no label */
    assert_null(strstr(t, "cpu."));
    assert_null(strstr(t, ".ready=true"));
    free(t);
    report_free(r);
}

static void test_prometheus(void **state)
{
    (void)state;
    struct report *r = fmt_report();
    char *t = fmt_run(write_prometheus, r);
    /* the same ID and subject twice: one series counting 2 */
    assert_int_equal(fmt_count(t, "gpucheckup_check{id=\"pci.nouveau-bound\""), 1);
    assert_non_null(strstr(t, "gpucheckup_check{id=\"pci.nouveau-bound\",subject=\"0000:01:00.0\",severity=\"error\"} 2\n"));
    assert_non_null(strstr(t, "subject=\"a,b:c%d\\\\e\\\"f\""));
    assert_int_equal(fmt_count(t, "gpucheckup_requirement_met{"), 1);
    /* the failed CUDA device: pass 0, its kernel time, no made-up GFLOPS; the skipped one: nothing */
    assert_non_null(strstr(t, "gpucheckup_smoke_pass{api=\"cuda\",device=\"0\",name=\"GPU \\\"A\\\"\","
                              "pci_address=\"0000:01:00.0\"} 0\n"));
    assert_non_null(strstr(t, "gpucheckup_smoke_kernel_seconds{api=\"cuda\",device=\"0\""));
    assert_null(strstr(t, "gpucheckup_smoke_gflops"));
    assert_null(strstr(t, "device=\"1\""));
    assert_non_null(strstr(t, "gpucheckup_probe_ok{probe=\"smoke\"} 0\n"));
    assert_non_null(strstr(t, "gpucheckup_run_timestamp_seconds 1700000000.250\n"));
    assert_non_null(strstr(t, "gpucheckup_ready 0\n"));
    free(t);
    report_free(r);
}

static void test_junit(void **state)
{
    (void)state;
    struct report *r = fmt_report();
    char *t = fmt_run(write_junit, r);
    /* three error findings pci.nouveau-bound x2 and require.unmet; pci.link-degraded is a warning */
    assert_non_null(strstr(t, "<testsuites name=\"gpucheckup\""));
    assert_int_equal(fmt_count(t, "<failure type=\"error\""), 3);
    assert_non_null(strstr(t, "failures=\"3\""));
    /* the skipped probe: every row skipped, with the reason */
    assert_non_null(strstr(t, "<skipped message=\"skipped: needs the live machine\"/>"));
    /* escaping by xmlTextWriter */
    assert_non_null(strstr(t, "name=\"pci.link-degraded (a,b:c%d\\e&quot;f)\""));
    assert_non_null(strstr(t, "timestamp=\"2023-11-14T22:13:20\""));
    assert_non_null(strstr(t, "require.unmet (gpu)"));
    free(t);
    report_free(r);
}

static void test_github(void **state)
{
    (void)state;
    struct report *r = fmt_report();
    char *t = fmt_run(write_github, r);
    assert_int_equal(fmt_count(t, "\n"), 4); /* one line per finding */
    assert_int_equal(fmt_count(t, "::error title="), 3);
    assert_non_null(strstr(t, "::warning title=gpucheckup pci.link-degraded (a%2Cb%3Ac%25d\\e\"f)::odd subject"));
    free(t);
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nfd),
        cmocka_unit_test(test_prometheus),
        cmocka_unit_test(test_junit),
        cmocka_unit_test(test_github),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
