/* test_doctor.c: unit tests of the doctor: requirements, root-cause links and verdict targets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "report.h"

/* Add section NAME with DATA parsed from JSON text. */
static struct report_section *add(struct report *r, const char *name, const char *json)
{
    struct report_section *s = report_add_section(r, name);
    json_object_put(s->data);
    s->data = json_tokener_parse(json);
    assert_non_null(s->data);
    return s;
}

static const char *SMOKE_PASS_GPU =
    "{\"devices\": [{\"platform_index\": 0, \"device_index\": 0, \"name\": \"NVIDIA H100\", \"type\": [\"GPU\"],"
    " \"pci_address\": \"0000:01:00.0\", \"status\": \"pass\", \"precisions\": {\"fp32\": \"pass\", \"fp64\": \"pass\"}},"
    " {\"platform_index\": 1, \"device_index\": 0, \"name\": \"pthread\", \"type\": [\"CPU\"],"
    " \"pci_address\": null, \"status\": \"pass\", \"precisions\": {\"fp32\": \"pass\", \"fp64\": \"unsupported\"}}]}";

static const char *SMOKE_CPU_ONLY =
    "{\"devices\": [{\"platform_index\": 0, \"device_index\": 0, \"name\": \"pthread\", \"type\": [\"CPU\"],"
    " \"pci_address\": null, \"status\": \"pass\", \"precisions\": {\"fp32\": \"pass\", \"fp64\": \"pass\"}}]}";

static void test_validate_requires(void **state)
{
    (void)state;
    char *ok[] = {"gpu", "opencl", "fp64", "gpus>=2", "opencl-version>=1.2", "x86-64-v3", "avx", "avx512_bf16"};
    char *err = NULL;
    assert_int_equal(doctor_validate_requires(ok, 8, &err), 0);
    static char *bad[] = {"nonsense", "gpus>=0", "gpus>=x", "opencl-version>=3", "x86-64-v5", "AVX", "", "gpus>="};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = NULL;
        assert_int_equal(doctor_validate_requires(&bad[i], 1, &err), -1);
        assert_non_null(strstr(err, "valid:"));
        assert_non_null(strstr(err, "avx2"));
        free(err);
    }
}

static void test_requirements_against_sections(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "cpu", "{\"flags\": {\"avx\": true, \"avx512f\": false}, \"x86_64_level\": 3}");
    add(r, "opencl", "{\"platforms\": [{\"index\": 0, \"devices\": [{\"index\": 0, \"name\": \"H100\", "
                     "\"opencl_version\": \"3.0\"}]}]}");
    add(r, "smoke", SMOKE_PASS_GPU);
    static const struct {
        const char *name;
        bool met;
    } cases[] = {
        {"gpu", true},          {"opencl", true},           {"fp64", true},
        {"gpus>=1", true},      {"gpus>=2", false},         {"opencl-version>=3.0", true},
        {"opencl-version>=3.1", false}, {"x86-64-v2", true}, {"x86-64-v3", true},
        {"x86-64-v4", false},   {"avx", true},              {"avx512f", false},
        {"sse", false}, /* not reported by this fake CPU section: unknown is not met */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *detail = NULL;
        bool met = doctor_eval_require(r, cases[i].name, &detail);
        if (met != cases[i].met)
            fail_msg("%s: met=%d detail=%s", cases[i].name, met, detail);
        assert_non_null(detail);
        free(detail);
    }
    report_free(r);
}

static void test_gpu_requirement_fails_on_cpu_only(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "smoke", SMOKE_CPU_ONLY);
    char *detail = NULL;
    assert_false(doctor_eval_require(r, "gpu", &detail));
    assert_non_null(strstr(detail, "no GPU"));
    free(detail);
    assert_true(doctor_eval_require(r, "opencl", &detail));
    free(detail);
    report_free(r);
}

static void test_smoke_not_run_means_unmet(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = add(r, "smoke", SMOKE_PASS_GPU);
    s->status = REPORT_STATUS_SKIPPED; /* --no-smoke */
    char *detail = NULL;
    assert_false(doctor_eval_require(r, "gpu", &detail));
    assert_non_null(strstr(detail, "did not run"));
    free(detail);
    report_free(r);
}

/* nouveau bound to the NVIDIA GPU explains the NVIDIA ICD finding no platform and the GPU having no
 * OpenCL device: one root cause. */
static void test_nouveau_root_cause(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "pci", "{\"devices\": [{\"address\": \"0000:01:00.0\", \"vendor_id\": \"10de\", \"kind\": \"compute-gpu\"}]}");
    add(r, "icd", "{\"icds\": [{\"file\": \"/etc/OpenCL/vendors/nvidia.icd\", \"library\": \"libnvidia-opencl.so.1\","
                  " \"vendor\": \"nvidia\"}, {\"file\": \"/etc/OpenCL/vendors/pocl.icd\", \"vendor\": \"pocl\"}]}");
    add(r, "smoke", SMOKE_CPU_ONLY);
    report_add_finding(r, "cl.gpu-without-opencl", "0000:01:00.0", "GPU 0000:01:00.0 has no OpenCL device");
    report_add_finding(r, "icd.no-platforms", "/etc/OpenCL/vendors/nvidia.icd", "no platform");
    report_add_finding(r, "pci.nouveau-bound", "0000:01:00.0", "nouveau drives the NVIDIA GPU");
    report_add_finding(r, "cl.cpu-only", NULL, "OpenCL only on the CPU");
    doctor_link_causes(r);
    struct report_finding *root = report_find_finding(r, "pci.nouveau-bound", NULL);
    assert_null(root->caused_by_id);
    static const char *const effects[] = {"cl.gpu-without-opencl", "icd.no-platforms", "cl.cpu-only"};
    for (size_t i = 0; i < 3; i++) {
        struct report_finding *f = report_find_finding(r, effects[i], NULL);
        assert_non_null(f->caused_by_id);
        assert_string_equal(f->caused_by_id, "pci.nouveau-bound");
        assert_string_equal(f->caused_by_subject, "0000:01:00.0");
    }
    doctor_verdict(r);
    json_object *gpu = json_object_object_get(r->targets, "gpu");
    assert_false(json_object_get_boolean(json_object_object_get(gpu, "ready")));
    json_object *reasons = json_object_object_get(gpu, "reasons");
    assert_int_equal(json_object_array_length(reasons), 1); /* one root cause, not a cascade */
    assert_string_equal(json_object_get_string(json_object_array_get_idx(reasons, 0)), "pci.nouveau-bound");
    assert_non_null(strstr(r->verdict_text, "not ready: nouveau drives the NVIDIA GPU"));
    report_free(r);
}

/* A cause of one vendor does not explain another vendor's problem. */
static void test_vendor_mismatch_not_linked(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "pci", "{\"devices\": [{\"address\": \"0000:01:00.0\", \"vendor_id\": \"10de\"},"
                  " {\"address\": \"0000:02:00.0\", \"vendor_id\": \"1002\"}]}");
    report_add_finding(r, "drv.nvidia-version-mismatch", "nvidia", "NVIDIA kernel module 550 vs library 535");
    report_add_finding(r, "cl.gpu-without-opencl", "0000:02:00.0", "AMD GPU has no OpenCL device");
    report_add_finding(r, "cl.gpu-without-opencl", "0000:01:00.0", "NVIDIA GPU has no OpenCL device");
    report_add_finding(r, "dev.no-access", "/dev/kfd", "cannot open /dev/kfd");
    report_add_finding(r, "cl.platform-no-devices", "AMD Accelerated Parallel Processing", "AMD platform has no devices");
    doctor_link_causes(r);
    struct report_finding *nv = report_find_finding(r, "cl.gpu-without-opencl", "0000:01:00.0");
    struct report_finding *amd = report_find_finding(r, "cl.gpu-without-opencl", "0000:02:00.0");
    struct report_finding *plat = report_find_finding(r, "cl.platform-no-devices", NULL);
    assert_string_equal(nv->caused_by_id, "drv.nvidia-version-mismatch");
    assert_string_equal(amd->caused_by_id, "dev.no-access");
    assert_string_equal(plat->caused_by_id, "dev.no-access");
    report_free(r);
}

static void test_cpu_root_cause_and_target(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "cpu", "{\"flags\": {\"avx\": false}, \"x86_64_level\": 2}");
    report_add_finding(r, "cpu.no-avx", "cpu", "no AVX");
    report_add_finding(r, "cpu.avx-hidden-by-hypervisor", "cpu", "the VM hides AVX");
    report_add_finding(r, "require.unmet", "avx", "avx not met");
    doctor_link_causes(r);
    assert_string_equal(report_find_finding(r, "cpu.no-avx", NULL)->caused_by_id, "cpu.avx-hidden-by-hypervisor");
    doctor_verdict(r);
    json_object *t = json_object_object_get(r->targets, "cpu_avx");
    assert_false(json_object_get_boolean(json_object_object_get(t, "ready")));
    assert_non_null(strstr(r->verdict_text, "CPU for prebuilt TensorFlow (AVX): AVX is not usable"));
    report_free(r);
}

static void test_ready_verdict_names_the_gpu(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "cpu", "{\"flags\": {\"avx\": true}, \"x86_64_level\": 3}");
    add(r, "opencl", "{\"platforms\": []}");
    add(r, "smoke", SMOKE_PASS_GPU);
    doctor_verdict(r);
    assert_non_null(strstr(r->verdict_text, "GPU compute (OpenCL): ready on 0000:01:00.0 NVIDIA H100"));
    assert_non_null(strstr(r->verdict_text, "CPU for prebuilt TensorFlow (AVX): ok"));
    assert_non_null(strstr(r->verdict_text, "Verdict: ready"));
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_requires),
        cmocka_unit_test(test_requirements_against_sections),
        cmocka_unit_test(test_gpu_requirement_fails_on_cpu_only),
        cmocka_unit_test(test_smoke_not_run_means_unmet),
        cmocka_unit_test(test_nouveau_root_cause),
        cmocka_unit_test(test_vendor_mismatch_not_linked),
        cmocka_unit_test(test_cpu_root_cause_and_target),
        cmocka_unit_test(test_ready_verdict_names_the_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
