/* test_peer_check.c: unit tests of --require p2p over every API's peer check (src/report/peer_check.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "peer_check.h"
#include "probe.h"
#include "report.h"

/* Section NAME with DATA from JSON, read into the probe's typed result as a snapshot's section is. */
static void add(struct report *r, const char *name, const char *json)
{
    struct report_section *s = report_add_section(r, name);
    json_object_put(s->data);
    s->data = json_tokener_parse(json);
    assert_non_null(s->data);
    const struct probe *p = probe_find(name);
    assert_non_null(p);
    assert_non_null(p->result);
    assert_int_equal(report_section_adopt(s, p->result), 0);
    report_section_set_status(s, REPORT_STATUS_OK, NULL);
}

/* N CUDA devices whose smoke test passed, with the peer check's PAIRS (a JSON array) or NOT_RUN. */
static void add_cuda(struct report *r, int n, const char *pairs, const char *not_run)
{
    char devs[512] = "", smoke[256] = "", json[2048];
    for (int i = 0; i < n; i++) {
        size_t l = strlen(devs), k = strlen(smoke);
        snprintf(devs + l, sizeof(devs) - l, "%s{\"ordinal\": %d, \"name\": \"NVIDIA H100\", \"pci_address\": "
                 "\"0000:0%d:00.0\", \"cc_major\": 9, \"cc_minor\": 0}", i ? ", " : "", i, i + 1);
        snprintf(smoke + k, sizeof(smoke) - k, "%s{\"ordinal\": %d, \"status\": \"pass\"}", i ? ", " : "", i);
    }
    snprintf(json, sizeof(json),
             "{\"driver\": {\"status\": \"ok\", \"driver_version\": 12040}, \"devices\": [%s], \"smoke\": [%s], "
             "\"p2p\": {\"pairs\": %s%s%s%s}}",
             devs, smoke, pairs, not_run ? ", \"not_run\": \"" : "", not_run ? not_run : "", not_run ? "\"" : "");
    add(r, "cuda", json);
}

/* N HIP devices (GPU agents), with the HIP peer check's PAIRS or NOT_RUN. */
static void add_rocm(struct report *r, int n, const char *pairs, const char *not_run)
{
    char agents[512] = "", json[2048];
    for (int i = 0; i < n; i++) {
        size_t l = strlen(agents);
        snprintf(agents + l, sizeof(agents) - l, "%s{\"device_type\": \"gpu\", \"name\": \"gfx1100\", "
                 "\"pci_address\": \"0000:1%d:00.0\"}", i ? ", " : "", i);
    }
    snprintf(json, sizeof(json),
             "{\"runtime\": {\"hip\": {\"device_count\": %d}, \"hsa\": {\"agents\": [%s]}}, "
             "\"p2p\": {\"pairs\": %s%s%s%s}}",
             n, agents, pairs, not_run ? ", \"not_run\": \"" : "", not_run ? not_run : "", not_run ? "\"" : "");
    add(r, "rocm", json);
}

static const char *PASS2 = "[{\"from\": 0, \"to\": 1, \"status\": \"pass\"}, {\"from\": 1, \"to\": 0, \"status\": \"pass\"}]";
static const char *CORRUPT01 =
    "[{\"from\": 0, \"to\": 1, \"status\": \"corrupt\"}, {\"from\": 1, \"to\": 0, \"status\": \"pass\"}]";

/* Evaluate p2p on R (freed), expect MET and a detail holding each of WANT (NULL-terminated). */
static void expect(struct report *r, bool met, const char *const *want)
{
    char *detail = NULL;
    bool got = doctor_eval_require(r, "p2p", &detail);
    assert_non_null(detail);
    if (got != met)
        fail_msg("met=%d, expected %d: %s", got, met, detail);
    for (size_t i = 0; want[i]; i++)
        if (!strstr(detail, want[i]))
            fail_msg("'%s' not in: %s", want[i], detail);
    free(detail);
    report_free(r);
}

static void test_failing_list_is_bounded(void **state)
{
    (void)state;
    char buf[24] = "";
    peer_check_add_failing(buf, sizeof(buf), "0", "1");
    peer_check_add_failing(buf, sizeof(buf), "1", "0");
    assert_string_equal(buf, "0->1, 1->0");
    peer_check_add_failing(buf, sizeof(buf), "10", "11");
    assert_string_equal(buf, "0->1, 1->0, 10->11");
    peer_check_add_failing(buf, sizeof(buf), "12", "13"); /* no room: cut short once */
    assert_string_equal(buf, "0->1, 1->0, 10->11...");
    peer_check_add_failing(buf, sizeof(buf), "1", "2");
    assert_string_equal(buf, "0->1, 1->0, 10->11...");
}

/* Every API's pairs count; an API that proves nothing (one GPU, not run) does not count against another's. */
static void test_every_api_counts(void **state)
{
    (void)state;
    struct report *r = report_new();
    add_cuda(r, 2, PASS2, NULL);
    add_rocm(r, 1, "[]", "fewer than two GPUs passed the HIP smoke test");
    expect(r, true, (const char *const[]){"every ordered pair of 2 GPUs (2)", "the CUDA peer check", NULL});

    r = report_new();
    add_cuda(r, 2, PASS2, NULL);
    add_rocm(r, 2, CORRUPT01, NULL);
    expect(r, false, (const char *const[]){"1 of the 2 ordered pairs of 2 GPUs passed the HIP (ROCm) peer check",
                                           "(not passed: 0->1)", NULL});

    r = report_new();
    add_cuda(r, 2, "[]", "the CUDA smoke test did not run: --no-smoke");
    add_rocm(r, 2, PASS2, NULL);
    expect(r, true, (const char *const[]){"the HIP (ROCm) peer check", NULL});

    r = report_new();
    add_cuda(r, 2, "[]", "fewer than two GPUs passed the CUDA smoke test");
    add_rocm(r, 1, "[]", "fewer than two GPUs passed the HIP smoke test");
    expect(r, false, (const char *const[]){"the CUDA peer check did not run: fewer than two GPUs passed",
                                           "HIP (ROCm) sees 1 GPU", NULL});

    r = report_new();
    add_cuda(r, 0, "[]", NULL);
    add_rocm(r, 0, "[]", NULL);
    expect(r, false, (const char *const[]){"no peer check ran", NULL});

    r = report_new(); /* neither section: no peer check at all */
    expect(r, false, (const char *const[]){"no peer check ran", NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failing_list_is_bounded),
        cmocka_unit_test(test_every_api_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
