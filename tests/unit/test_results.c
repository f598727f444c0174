/* test_results.c: every typed result prints each seed of the results fuzz target back byte for byte (issue 38). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "levelzero_internal.h"
#include "report.h"
#include "results/result_cpu.h"
#include "results/result_cuda.h"
#include "results/result_icd.h"
#include "results/result_opencl.h"
#include "results/result_pci.h"
#include "results/result_smoke.h"
#include "results/result_vulkan.h"
#include "rocm_internal.h"
#include "strutil.h"

static const struct report_result_ops *const test_results_kinds[] = {
    &result_smoke_ops, &result_cuda_ops, &result_vulkan_ops, &result_rocm_ops, &result_levelzero_ops,
    &result_pci_ops,   &result_cpu_ops,  &result_opencl_ops, &result_icd_ops,
};
#define TEST_RESULTS_N (sizeof(test_results_kinds) / sizeof(test_results_kinds[0]))

/* The JSON writer's two ways of printing (write_json.c): pretty and compact. */
static const int test_results_flags[] = {
    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE,
    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
};

/* DOC (taken) read into a section of kind OPS and printed back with FLAGS: a heap string. */
static char *test_results_round(const struct report_result_ops *ops, json_object *doc, int flags)
{
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, ops->section);
    json_object_put(s->data);
    s->data = doc;
    assert_int_equal(report_section_adopt(s, ops), 0);
    assert_non_null(s->result);
    json_object *back = report_section_json(s);
    char *out = strdup(json_object_to_json_string_ext(back, flags));
    json_object_put(back);
    report_free(r);
    return out;
}

/* The seeds, each read by the kind its name starts with ("cpu-live-x86.json": cpu), print as json-c prints
 * them (the writer's flags), and the printed section reads back and prints the same again. */
static void test_seeds_print_back_byte_for_byte(void **state)
{
    (void)state;
    const char *src = getenv("GPUCHECKUP_SOURCE_ROOT");
    assert_non_null(src);
    char *dir = str_printf("%s/tests/fuzz/corpus/results", src);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t seen[TEST_RESULTS_N] = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t k = 0;
        while (k < TEST_RESULTS_N && !(str_starts_with(e->d_name, test_results_kinds[k]->section) &&
                                       e->d_name[strlen(test_results_kinds[k]->section)] == '-'))
            k++;
        if (k == TEST_RESULTS_N)
            continue;
        char *path = str_printf("%s/%s", dir, e->d_name);
        for (size_t f = 0; f < sizeof(test_results_flags) / sizeof(test_results_flags[0]); f++) {
            json_object *doc = json_object_from_file(path);
            assert_non_null(doc);
            /* a seed cut from a whole report holds the section's own members too: the replay drops them */
            static const char *const own[] = {"status", "reason", "duration_ms", "summary", "captured"};
            for (size_t o = 0; o < sizeof(own) / sizeof(own[0]); o++)
                json_object_object_del(doc, own[o]);
            char *want = strdup(json_object_to_json_string_ext(doc, test_results_flags[f]));
            /* a number json-c itself does not print back the same ("-0e+") is no document gpucheckup writes */
            json_object *again = json_tokener_parse(want);
            bool stable = again && strcmp(json_object_to_json_string_ext(again, test_results_flags[f]), want) == 0;
            json_object_put(again);
            if (!stable) {
                json_object_put(doc);
                free(want);
                continue;
            }
            char *once = test_results_round(test_results_kinds[k], doc, test_results_flags[f]);
            /* "*-trimmed" seeds are the fuzzer's regressions, hand-made in an order gpucheckup never writes
             * (smoke's fixed member order puts them right): they must only print the same twice */
            if (!strstr(e->d_name, "-trimmed.") && strcmp(once, want) != 0)
                fail_msg("%s: printed differently from the seed\nwant: %.400s\ngot:  %.400s", e->d_name, want, once);
            char *twice = test_results_round(test_results_kinds[k], json_tokener_parse(once), test_results_flags[f]);
            assert_string_equal(twice, once);
            free(once);
            free(twice);
            free(want);
            seen[k]++;
        }
        free(path);
    }
    closedir(d);
    free(dir);
    for (size_t k = 0; k < TEST_RESULTS_N; k++)
        if (!seen[k])
            fail_msg("no seed for the %s result in tests/fuzz/corpus/results", test_results_kinds[k]->section);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeds_print_back_byte_for_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
