/* test_results.c: typed results (issue 38): every fuzz seed printed back byte for byte; the icd facts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "levelzero_internal.h"
#include "probe.h"
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

/* The icd facts (issue 38): the captured live section of a fixture reads into the loader, each ICD with its
 * library, driver and hardware verdict, and what programs see; the JSON prints back byte for byte. */
static void test_icd_facts_from_fixture(void **state)
{
    (void)state;
    const char *src = getenv("GPUCHECKUP_SOURCE_ROOT");
    assert_non_null(src);
    char *path = str_printf("%s/tests/fixtures/h100-nvidia-cuda-container/LIVE-check.json", src);
    json_object *doc = json_object_from_file(path), *icd = NULL;
    free(path);
    assert_true(json_object_object_get_ex(doc, "icd", &icd));
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "icd");
    json_object_put(s->data);
    s->data = json_object_get(icd);
    char *before = strdup(json_object_to_json_string_ext(icd, JSON_C_TO_STRING_PLAIN));
    assert_int_equal(report_section_adopt(s, &result_icd_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), before);
    json_object_put(back);
    free(before);
    const struct result_icd *c = result_icd_get(r);
    assert_non_null(c);
    assert_true(c->has_loader);
    assert_string_equal(c->loader_path, "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libOpenCL.so.1.0.0");
    assert_string_equal(c->loader_kind, "unknown");
    assert_null(c->loader_name);
    assert_true(c->n_loaders >= 5);
    assert_true(c->loaders[0].wins && c->loaders[0].loadable && c->loaders[0].searched);
    assert_false(c->loaders[1].wins);
    assert_string_equal(c->loaders[1].kind, "ocl-icd");
    assert_int_equal(c->n_icds, 3);
    const struct result_icd_file *nv = &c->icds[1];
    assert_null(nv->file);
    assert_string_equal(nv->source, "OCL_ICD_FILENAMES");
    assert_string_equal(nv->library, "libnvidia-opencl.so.1");
    assert_string_equal(nv->resolved, "/usr/local/nvidia/lib64/libnvidia-opencl.so.580.159.04");
    assert_string_equal(nv->found_via, "LD_LIBRARY_PATH");
    assert_string_equal(nv->vendor, "nvidia");
    assert_true(nv->has_driver);
    assert_int_equal(nv->hardware, VENDOR_HW_PRESENT);
    assert_false(nv->absent_hardware);
    assert_string_equal(nv->run.status, "ok");
    assert_int_equal(nv->run.n_platforms, 1);
    assert_int_equal(nv->run.platforms[0].gpu_devices, 1);
    assert_int_equal(nv->run.platforms[0].has_khr_icd, GC_TRI_YES);
    assert_true(nv->run.elapsed_ms > 0);
    assert_int_equal(c->icds[0].hardware, VENDOR_HW_NOT_NEEDED);
    assert_string_equal(c->icds[2].file, "/etc/OpenCL/vendors/pocl.icd");
    assert_string_equal(c->icds[2].run.status, "duplicate");
    assert_string_equal(c->icds[2].run.detail, "same library as libpocl.so.2");
    assert_true(c->icds[2].run.elapsed_ms < 0); /* not probed */
    assert_true(c->has_combined);
    char *seen = result_icd_platforms_text(&c->combined);
    assert_string_equal(seen, "Portable Computing Language (1 device); NVIDIA CUDA (1 device)");
    free(seen);
    assert_int_equal(c->combined.platforms[1].accepted, GC_TRI_UNKNOWN); /* not listed for the combined run */
    /* the doctor's words for an .icd file come from the typed facts */
    const char *text = NULL;
    assert_null(probe_find("icd")->subject_vendor(s, "/etc/OpenCL/vendors/pocl.icd", &text));
    assert_string_equal(text, "libpocl.so.2.12.0");
    free(((struct result_icd *)c)->icds[2].run.status); /* the typed members print from the result */
    ((struct result_icd *)c)->icds[2].run.status = strdup("twin");
    back = report_section_json(s);
    assert_non_null(strstr(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), "\"status\":\"twin\""));
    json_object_put(back);
    report_section_set_status(s, REPORT_STATUS_FAILED, "x");
    assert_null(result_icd_get(r)); /* only a section that ran ok gives facts */
    report_free(r);
    json_object_put(doc);
}

/* Odd shapes in a captured icd section are unknown facts, not a crash, and the JSON stays as it is. */
static void test_icd_facts_odd_shapes(void **state)
{
    (void)state;
    static const char *doc = "{\"loader\":null,\"loaders\":[3,{\"path\":7,\"wins\":\"yes\"}],\"icds\":[{\"file\":"
                             "\"x.icd\",\"vendor\":\"nvidia\",\"driver\":{\"hardware\":\"maybe\"},\"platforms\":"
                             "[{\"devices\":-2},\"p\"]},\"e\"],\"ignored_files\":[\"a.txt\",1],\"combined\":[]}";
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "icd");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    assert_int_equal(report_section_adopt(s, &result_icd_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), doc);
    json_object_put(back);
    const struct result_icd *c = result_icd_get(r);
    assert_non_null(c);
    assert_false(c->has_loader);
    assert_false(c->has_combined);
    assert_int_equal(c->n_loaders, 1);
    assert_null(c->loaders[0].path);
    assert_false(c->loaders[0].wins);
    assert_int_equal(c->n_icds, 1);
    assert_int_equal(c->icds[0].hardware, VENDOR_HW_UNKNOWN);
    assert_int_equal(c->icds[0].run.n_platforms, 1);
    assert_int_equal(c->icds[0].run.platforms[0].devices, -1);
    char *t = result_icd_platforms_text(&c->icds[0].run);
    assert_string_equal(t, "unnamed (devices unknown)");
    free(t);
    assert_int_equal(c->n_ignored, 1);
    assert_string_equal(c->ignored_files[0], "a.txt");
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeds_print_back_byte_for_byte),
        cmocka_unit_test(test_icd_facts_from_fixture),
        cmocka_unit_test(test_icd_facts_odd_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
