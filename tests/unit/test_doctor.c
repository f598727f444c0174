/* test_doctor.c: unit tests of the doctor: requirements, root-cause links and verdict targets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "cli.h"
#include "compute_path.h"
#include "doctor.h"
#include "doctor_facts.h"
#include "probe.h"
#include "report.h"
#include "run.h"

/* Add section NAME with DATA parsed from JSON text, read into the probe's typed result (as a
 * snapshot's captured section is) when it publishes one. */
static struct report_section *add(struct report *r, const char *name, const char *json)
{
    struct report_section *s = report_add_section(r, name);
    json_object_put(s->data);
    s->data = json_tokener_parse(json);
    assert_non_null(s->data);
    const struct probe *p = probe_find(name);
    if (p && p->result)
        assert_int_equal(report_section_adopt(s, p->result), 0);
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

/* The one "best version >= wanted" evaluation the opencl-version and compute-capability names share. */
static void test_req_version(void **state)
{
    (void)state;
    char *detail = NULL;
    assert_true(doctor_req_version(300, 102, 100, "best device supports OpenCL", "H100", "none", &detail));
    assert_string_equal(detail, "best device supports OpenCL 3.0 (H100), 1.2 needed");
    free(detail);
    assert_false(doctor_req_version(86, 90, 10, "best CUDA device has compute capability", "0000:01:00.0 A40",
                                    "none", &detail));
    assert_string_equal(detail, "best CUDA device has compute capability 8.6 (0000:01:00.0 A40), 9.0 needed");
    free(detail);
    assert_true(doctor_req_version(90, 90, 10, "x", "y", "none", &detail)); /* equal is met */
    free(detail);
    assert_false(doctor_req_version(-1, 0, 10, "x", "y", "no CUDA device with a known compute capability", &detail));
    assert_string_equal(detail, "no CUDA device with a known compute capability");
    free(detail);

    struct report *r = report_new();
    add(r, "opencl", "{\"platforms\": [{\"index\": 0, \"devices\": [{\"index\": 0, \"name\": \"H100\", "
                     "\"opencl_version\": \"3.0\"}]}]}");
    assert_false(doctor_eval_require(r, "opencl-version>=3.1", &detail));
    assert_string_equal(detail, "best device supports OpenCL 3.0 (H100), 3.1 needed");
    free(detail);
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
    report_add_finding(r, "cpu.avx-hidden-by-hypervisor", NULL, "the VM hides AVX");
    /* the cpu probe links cpu.no-avx to its reason itself (probes/cpu/cpu_findings.c) */
    report_finding_set_cause(report_add_finding(r, "cpu.no-avx", NULL, "no AVX"), "cpu.avx-hidden-by-hypervisor", NULL);
    report_add_finding(r, "require.unmet", "avx", "avx not met");
    doctor_link_causes(r);
    assert_string_equal(report_find_finding(r, "cpu.no-avx", NULL)->caused_by_id, "cpu.avx-hidden-by-hypervisor");
    /* the unmet CPU requirement is explained by the CPU chain's root cause */
    assert_string_equal(report_find_finding(r, "require.unmet", "avx")->caused_by_id, "cpu.avx-hidden-by-hypervisor");
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

/* The H100 machine's cuda section (probes/cuda): driver CUDA 13.0, one GPU, the CUDA smoke test's result. */
static void add_cuda(struct report *r, int driver_version, int cc_major, int cc_minor, const char *smoke)
{
    char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"driver\": {\"status\": \"ok\", \"driver_version\": %d}, \"devices\": [{\"ordinal\": 0, "
             "\"name\": \"NVIDIA H100 80GB HBM3\", \"pci_address\": \"0000:00:06.0\", \"cc_major\": %d, "
             "\"cc_minor\": %d}], \"smoke\": %s}",
             driver_version, cc_major, cc_minor, smoke);
    add(r, "cuda", buf);
}

/* data["smoke"] as the smoke part writes it: one entry per GPU tested (probes/cuda/cuda_smoke.c). */
static const char *CUDA_SMOKE_PASS = "[{\"ordinal\": 0, \"status\": \"pass\"}]";
static const char *CUDA_SMOKE_FAIL = "[{\"ordinal\": 0, \"status\": \"wrong-result\"}]";

static void test_cuda_requirements(void **state)
{
    (void)state;
    char *ok[] = {"cuda", "cuda>=12.4", "cuda>=13", "compute-capability>=8.0", "compute-capability>=7"};
    char *err = NULL;
    assert_int_equal(doctor_validate_requires(ok, 5, &err), 0);
    static char *bad[] = {"cuda>=",        "cuda>=12.",  "cuda>=12.45", "cuda>=x",  "cuda>=123", "cuda>=0.5",
                          "cuda>=12.4 ",   "cuda>=-1",   "compute-capability>=", "compute-capability>=8.x",
                          "cuda12",        "CUDA"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err = NULL;
        assert_int_equal(doctor_validate_requires(&bad[i], 1, &err), -1);
        assert_non_null(strstr(err, "compute-capability>=X.Y"));
        free(err);
    }
    struct report *r = report_new();
    add_cuda(r, 12040, 8, 6, CUDA_SMOKE_PASS);
    static const struct {
        const char *name;
        bool met;
    } cases[] = {
        {"cuda", true}, {"cuda>=12.4", true}, {"cuda>=12", true}, {"cuda>=12.5", false}, {"cuda>=13.0", false},
        {"compute-capability>=8.6", true}, {"compute-capability>=8", true}, {"compute-capability>=9.0", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *detail = NULL;
        bool met = doctor_eval_require(r, cases[i].name, &detail);
        assert_non_null(detail);
        if (met != cases[i].met)
            fail_msg("%s: met=%d (%s)", cases[i].name, met, detail);
        free(detail);
    }
    report_free(r);
    /* A failed CUDA smoke test: neither `cuda` nor a version check is met (issue 24: a version the
     * driver states is no proof that a CUDA program can run). */
    r = report_new();
    add_cuda(r, 13000, 9, 0, CUDA_SMOKE_FAIL);
    char *detail = NULL;
    assert_false(doctor_eval_require(r, "cuda", &detail));
    assert_non_null(strstr(detail, "no CUDA device passed"));
    free(detail);
    assert_false(doctor_eval_require(r, "cuda>=13.0", &detail));
    assert_non_null(strstr(detail, "supports CUDA 13.0"));
    assert_non_null(strstr(detail, "no CUDA device passed"));
    free(detail);
    report_free(r);
}

/* Compute paths (issue 25): the smoke section's devices and the CUDA devices are paths, and the gpu target,
 * --require gpu and the relief of OpenCL findings are rules over them that name no API. An AMD GPU computes
 * through OpenCL and an NVIDIA GPU through CUDA: one GPU each, both counted once; NVIDIA's crashing OpenCL
 * ICD is a warning (the NVIDIA GPU computes through CUDA), though not every GPU is NVIDIA's. */
static const char *NVIDIA_ICD = "{\"icds\": [{\"file\": \"/etc/OpenCL/vendors/nvidia.icd\", \"vendor\": \"nvidia\", "
                                "\"library\": \"libnvidia-opencl.so.1\"}]}";

static void test_compute_paths_across_apis(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "cpu", "{\"flags\": {\"avx\": true}, \"x86_64_level\": 3}");
    add(r, "pci", "{\"devices\": [{\"address\": \"0000:00:06.0\", \"vendor_id\": \"10de\", \"kind\": \"compute-gpu\","
                  " \"driver\": \"nvidia\"}, {\"address\": \"0000:01:00.0\", \"vendor_id\": \"1002\", \"kind\": "
                  "\"compute-gpu\", \"driver\": \"amdgpu\"}]}");
    add(r, "opencl", "{\"platforms\": []}");
    add(r, "smoke", "{\"devices\": [{\"platform_index\": 0, \"device_index\": 0, \"name\": \"gfx1030\", "
                    "\"type\": [\"GPU\"], \"pci_address\": \"0000:01:00.0\", \"status\": \"pass\", \"precisions\": "
                    "{\"fp32\": \"pass\"}}]}");
    add_cuda(r, 13000, 9, 0, CUDA_SMOKE_PASS);
    add(r, "icd", NVIDIA_ICD);
    report_add_finding(r, "icd.crash", "/etc/OpenCL/vendors/nvidia.icd", "nvidia.icd: the driver crashed");
    struct compute_paths ps = compute_paths_of(r);
    assert_int_equal(ps.n, 2);
    assert_string_equal(ps.v[0].api, "opencl"); /* the probes that run last first */
    assert_string_equal(ps.v[1].api, "cuda");
    const struct compute_path *first = NULL;
    assert_int_equal(compute_paths_gpus(&ps, COMPUTE_PASSED, &first), 2);
    assert_string_equal(first->pci_address, "0000:01:00.0");
    compute_paths_free(&ps);
    struct cli_options o;
    memset(&o, 0, sizeof(o));
    char *err = NULL, *detail = NULL;
    assert_int_equal(doctor_run(&o, r, &err), 0);
    const struct report_finding *f = report_find_finding(r, "icd.crash", NULL);
    assert_int_equal(f->severity, REPORT_SEV_WARNING);
    assert_non_null(strstr(f->message, "computes through CUDA"));
    json_object *gpu = NULL, *d = NULL;
    assert_true(json_object_object_get_ex(r->targets, "gpu", &gpu));
    assert_true(json_object_object_get_ex(gpu, "detail", &d));
    assert_string_equal(json_object_get_string(d), "ready on 0000:01:00.0 gfx1030 (OpenCL)");
    assert_true(doctor_eval_require(r, "gpus>=2", &detail));
    free(detail);
    assert_false(doctor_eval_require(r, "gpus>=3", &detail));
    free(detail);
    report_free(r);

    /* The CUDA smoke test failing: the NVIDIA GPU has no working path, so its finding stays an error. */
    r = report_new();
    add(r, "pci", "{\"devices\": [{\"address\": \"0000:00:06.0\", \"vendor_id\": \"10de\", \"kind\": \"compute-gpu\","
                  " \"driver\": \"nvidia\"}]}");
    add(r, "smoke", SMOKE_CPU_ONLY);
    add_cuda(r, 13000, 9, 0, CUDA_SMOKE_FAIL);
    add(r, "icd", NVIDIA_ICD);
    report_add_finding(r, "icd.crash", "/etc/OpenCL/vendors/nvidia.icd", "nvidia.icd: the driver crashed");
    assert_int_equal(doctor_run(&o, r, &err), 0);
    assert_int_equal(report_find_finding(r, "icd.crash", NULL)->severity, REPORT_SEV_ERROR);
    report_free(r);
}

/* A GPU-less machine without OpenCL is not "not ready": what only says OpenCL is absent stops no GPU there
 * (information, the run ready); a crashing driver stays what it is; with a GPU on the bus, the same absence is
 * an error. */
static void test_absent_api_without_gpu(void **state)
{
    (void)state;
    for (int with_gpu = 0; with_gpu <= 1; with_gpu++) {
        struct report *r = report_new();
        add(r, "cpu", "{\"flags\": {\"avx\": true}, \"x86_64_level\": 3}");
        add(r, "pci", with_gpu ? "{\"devices\": [{\"address\": \"0000:01:00.0\", \"vendor_id\": \"1002\", \"kind\": "
                                 "\"compute-gpu\", \"driver\": \"amdgpu\"}]}"
                               : "{\"devices\": [{\"address\": \"0000:00:01.0\", \"vendor_id\": \"1af4\"}]}");
        add(r, "icd", "{\"icds\": []}");
        report_section_add_line(report_find_section(r, "icd"), REPORT_MARK_ERROR, "ICD", "none registered");
        report_add_finding(r, "icd.no-icds", "/etc/OpenCL/vendors", "no .icd file");
        struct cli_options o;
        memset(&o, 0, sizeof(o));
        char *err = NULL;
        assert_int_equal(doctor_run(&o, r, &err), 0);
        const struct report_finding *f = report_find_finding(r, "icd.no-icds", NULL);
        assert_non_null(f);
        assert_int_equal(f->severity, with_gpu ? REPORT_SEV_ERROR : REPORT_SEV_INFO);
        assert_true((strstr(f->message, "there is no GPU on this machine for it") != NULL) == !with_gpu);
        /* the section's line says no more than its findings now say */
        assert_int_equal(report_find_section(r, "icd")->lines[0].mark, with_gpu ? REPORT_MARK_ERROR : REPORT_MARK_INFO);
        report_free(r);
        /* a crashing driver is broken, not absent: it stays an error, and so does its line */
        r = report_new();
        add(r, "pci", "{\"devices\": []}");
        add(r, "icd", "{\"icds\": []}");
        report_section_add_line(report_find_section(r, "icd"), REPORT_MARK_ERROR, "ICD", "x.icd crashed");
        report_add_finding(r, "icd.crash", "/etc/OpenCL/vendors/x.icd", "x.icd: the driver crashed");
        assert_int_equal(doctor_run(&o, r, &err), 0);
        f = report_find_finding(r, "icd.crash", NULL);
        assert_int_equal(f->severity, REPORT_SEV_ERROR);
        assert_int_equal(report_find_section(r, "icd")->lines[0].mark, REPORT_MARK_ERROR);
        report_free(r);
    }
}

/* One API's findings never explain another's (issue 25): NVIDIA's OpenCL ICD crashing (driver layer) is no
 * cause of cuInit failing (runtime layer), though both are NVIDIA's; a kernel-side finding, below every
 * API, explains both. */
static void test_no_cause_across_apis(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "pci", "{\"devices\": [{\"address\": \"0000:00:06.0\", \"vendor_id\": \"10de\", \"kind\": \"compute-gpu\","
                  " \"driver\": \"nvidia\"}]}");
    add(r, "icd", NVIDIA_ICD);
    report_add_finding(r, "icd.crash", "/etc/OpenCL/vendors/nvidia.icd", "nvidia.icd: the driver crashed");
    report_add_finding(r, "cuda.init-failed", "nvidia", "cuInit failed: CUDA_ERROR_UNKNOWN");
    doctor_link_causes(r);
    assert_null(report_find_finding(r, "cuda.init-failed", NULL)->caused_by_id);
    assert_null(report_find_finding(r, "icd.crash", NULL)->caused_by_id);
    report_add_finding(r, "drv.nvidia-version-mismatch", "nvidia", "kernel module 550, libraries 535");
    for (size_t i = 0; i < r->n_findings; i++) {
        free(r->findings[i]->caused_by_id);
        free(r->findings[i]->caused_by_subject);
        r->findings[i]->caused_by_id = NULL;
        r->findings[i]->caused_by_subject = NULL;
    }
    doctor_link_causes(r);
    assert_string_equal(report_find_finding(r, "cuda.init-failed", NULL)->caused_by_id, "drv.nvidia-version-mismatch");
    assert_string_equal(report_find_finding(r, "icd.crash", NULL)->caused_by_id, "drv.nvidia-version-mismatch");
    report_free(r);
}

/* Issue 25: the cuda12 target was blamed on a CUDA 13 library. A driver supporting CUDA 12.2 beside a CUDA 13
 * runtime: the CUDA 13 series is not ready for that reason, the CUDA 12 series is ready and does not list it. */
static void test_cuda_series_reasons_by_major(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "cuda", "{\"driver\": {\"status\": \"ok\", \"driver_version\": 12020}, \"devices\": [{\"ordinal\": 0, "
                   "\"name\": \"NVIDIA A100\", \"pci_address\": \"0000:00:06.0\", \"cc_major\": 8, \"cc_minor\": 0}], "
                   "\"smoke\": [{\"ordinal\": 0, \"status\": \"pass\"}], \"libraries\": [{\"path\": "
                   "\"/usr/local/cuda-13.0/lib/libcudart.so.13\", \"cuda_major\": 13}, {\"path\": "
                   "\"/opt/venv/nvidia/cuda_runtime/lib/libcudart.so.12\", \"cuda_major\": 12}]}");
    report_add_finding(r, "cuda.lib-driver-too-old", "/usr/local/cuda-13.0/lib/libcudart.so.13",
                       "libcudart.so.13 (CUDA 13.0) needs NVIDIA driver 580 or newer");
    report_add_finding(r, "cuda.lib-versions-differ", "/opt/venv/nvidia/cuda_runtime/lib/libcudart.so.12",
                       "two copies of libcudart.so.12 differ");
    struct cli_options o;
    memset(&o, 0, sizeof(o));
    char *err = NULL;
    assert_int_equal(doctor_run(&o, r, &err), 0);
    json_object *t12 = NULL, *t13 = NULL, *rs = NULL, *ready = NULL;
    assert_true(json_object_object_get_ex(r->targets, "cuda12", &t12));
    assert_true(json_object_object_get_ex(r->targets, "cuda13", &t13));
    assert_true(json_object_object_get_ex(t12, "ready", &ready));
    assert_true(json_object_get_boolean(ready));
    assert_true(json_object_object_get_ex(t12, "reasons", &rs));
    for (size_t i = 0; i < json_object_array_length(rs); i++)
        assert_string_not_equal(json_object_get_string(json_object_array_get_idx(rs, i)), "cuda.lib-driver-too-old");
    assert_true(json_object_object_get_ex(t13, "reasons", &rs));
    bool found = false;
    for (size_t i = 0; i < json_object_array_length(rs); i++)
        found |= strcmp(json_object_get_string(json_object_array_get_idx(rs, i)), "cuda.lib-driver-too-old") == 0;
    assert_true(found);
    report_free(r);
}

/* Regression (the H100 machine, gpucheckup 0.1): no OpenCL platform lists the GPU (only PoCL), but
 * the GPU computes through CUDA. The verdict was "not ready" with cl.cpu-only as the error. */
static void test_cuda_gpu_makes_gpu_target_ready(void **state)
{
    (void)state;
    struct report *r = report_new();
    add(r, "cpu", "{\"flags\": {\"avx\": true}, \"x86_64_level\": 4}");
    add(r, "pci", "{\"devices\": [{\"address\": \"0000:00:06.0\", \"vendor_id\": \"10de\", \"kind\": \"compute-gpu\","
                  " \"driver\": \"nvidia\"}]}");
    add(r, "opencl", "{\"platforms\": [{\"index\": 0, \"devices\": [{\"index\": 0, \"name\": \"pthread\", "
                     "\"opencl_version\": \"3.0\"}]}]}");
    add(r, "smoke", SMOKE_CPU_ONLY);
    add_cuda(r, 13000, 9, 0, CUDA_SMOKE_PASS);
    report_add_finding(r, "cl.cpu-only", NULL, "OpenCL works, but only on CPU devices (1)");
    report_add_finding(r, "cl.gpu-without-opencl", "0000:00:06.0", "GPU 0000:00:06.0 has no OpenCL device");
    struct cli_options o;
    memset(&o, 0, sizeof(o));
    char *err = NULL;
    assert_int_equal(doctor_run(&o, r, &err), 0);
    assert_true(report_is_ready(r));
    /* Both say OpenCL is absent for the GPU, nothing is broken: information (a CUDA machine needs no OpenCL). */
    const struct report_finding *f = report_find_finding(r, "cl.cpu-only", NULL);
    assert_non_null(f);
    assert_int_equal(f->severity, REPORT_SEV_INFO);
    assert_non_null(strstr(f->message, "(information: the GPU computes through CUDA)"));
    f = report_find_finding(r, "cl.gpu-without-opencl", "0000:00:06.0");
    assert_non_null(f);
    assert_int_equal(f->severity, REPORT_SEV_INFO);
    assert_non_null(strstr(f->message, "computes through CUDA"));
    json_object *gpu = NULL, *ready = NULL, *c13 = NULL;
    assert_true(json_object_object_get_ex(r->targets, "gpu", &gpu));
    assert_true(json_object_object_get_ex(gpu, "ready", &ready));
    assert_true(json_object_get_boolean(ready));
    assert_true(json_object_object_get_ex(r->targets, "cuda13", &c13));
    assert_true(json_object_object_get_ex(c13, "ready", &ready));
    assert_true(json_object_get_boolean(ready));
    assert_non_null(strstr(r->verdict_text,
                           "CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): ready on 0000:00:06.0 NVIDIA "
                           "H100 80GB HBM3 (driver CUDA 13.0)"));
    assert_non_null(strstr(r->verdict_text, "Verdict: ready (0 warnings)"));
    assert_null(strstr(r->verdict_text, "no GPU computes here"));
    /* One definition of "a GPU computes" (issue 25): --require gpu and gpus>=1 agree with the gpu target
     * where only CUDA proves it; the same GPU is not counted twice, and there is only one. */
    char *detail = NULL;
    assert_true(doctor_eval_require(r, "gpu", &detail));
    assert_non_null(strstr(detail, "H100"));
    free(detail);
    assert_true(doctor_eval_require(r, "gpus>=1", &detail));
    free(detail);
    assert_false(doctor_eval_require(r, "gpus>=2", &detail));
    free(detail);
    report_free(r);

    /* The same machine whose CUDA smoke test fails: cl.cpu-only stays an error (nothing computes on the GPU). */
    r = report_new();
    add(r, "pci", "{\"devices\": [{\"address\": \"0000:00:06.0\", \"vendor_id\": \"10de\", \"kind\": \"compute-gpu\","
                  " \"driver\": \"nvidia\"}]}");
    add(r, "smoke", SMOKE_CPU_ONLY);
    add_cuda(r, 13000, 9, 0, CUDA_SMOKE_FAIL);
    report_add_finding(r, "cl.cpu-only", NULL, "OpenCL works, but only on CPU devices (1)");
    assert_int_equal(doctor_run(&o, r, &err), 0);
    assert_false(report_is_ready(r));
    assert_int_equal(report_find_finding(r, "cl.cpu-only", NULL)->severity, REPORT_SEV_ERROR);
    report_free(r);
}

/* The wheel series table: an old driver and an old GPU each give their reason. */
static void test_cuda_wheel_lines(void **state)
{
    (void)state;
    struct report *r = report_new();
    add_cuda(r, 12040, 9, 0, CUDA_SMOKE_PASS);
    doctor_verdict(r);
    assert_non_null(strstr(r->verdict_text, "CUDA 12 ready"));
    assert_non_null(strstr(r->verdict_text, "CUDA 13 not ready: the driver supports CUDA 12.4 only"));
    report_free(r);
    r = report_new();
    add_cuda(r, 13000, 6, 1, CUDA_SMOKE_PASS); /* Pascal: CUDA 13 dropped it */
    doctor_verdict(r);
    assert_non_null(strstr(r->verdict_text, "CUDA 12 ready"));
    assert_non_null(strstr(r->verdict_text, "CUDA 13 not ready: compute capability 6.1 is below the 7.5"));
    report_free(r);
    r = report_new();
    add_cuda(r, 13000, 9, 0, "[], \"smoke_not_run\": \"--no-smoke\"");
    doctor_verdict(r);
    assert_non_null(strstr(r->verdict_text, "not proven: the CUDA smoke test did not run (--no-smoke)"));
    report_free(r);
}

/* Every catalogue row declares its layer; the doctor's chain order follows the stack. */
static void layer_row(const struct check *c, const char *owner, void *arg)
{
    size_t *unset = arg;
    unsigned layer = c->layer & CHECK_LAYER_MASK;
    if (layer == CHECK_LAYER_UNSET || layer > CHECK_LAYER_FRAMEWORK) {
        print_error("%s (%s) declares no layer\n", c->id, owner);
        (*unset)++;
    }
    /* Rows not about the GPU stack: gpucheckup itself, --require, the CPU. */
    bool none = strcmp(owner, "core") == 0 || strcmp(owner, "cpu") == 0;
    if (none != (layer == CHECK_LAYER_NONE)) {
        print_error("%s (%s): layer %s\n", c->id, owner, checks_layer_name((enum check_layer)layer));
        (*unset)++;
    }
}

static void test_catalogue_layers(void **state)
{
    (void)state;
    size_t bad = 0;
    const struct checks_catalogue *cat = probe_catalogue();
    checks_foreach(cat, layer_row, &bad);
    assert_int_equal(bad, 0);
    assert_int_equal(checks_layer(cat, "pci.not-responding"), CHECK_LAYER_HARDWARE);
    assert_int_equal(checks_layer(cat, "pci.no-driver"), CHECK_LAYER_KERNEL);
    assert_int_equal(checks_layer(cat, "icd.no-loader"), CHECK_LAYER_LOADER);
    assert_int_equal(checks_layer(cat, "icd.no-platforms"), CHECK_LAYER_DRIVER);
    assert_int_equal(checks_layer(cat, "cl.cpu-only"), CHECK_LAYER_RUNTIME);
    assert_int_equal(checks_layer(cat, "smoke.wrong-result"), CHECK_LAYER_COMPUTE);
    assert_int_equal(checks_layer(cat, "frameworks.cuda-too-new"), CHECK_LAYER_FRAMEWORK);
    assert_string_equal(checks_layer_name(CHECK_LAYER_FRAMEWORK), "framework");
    assert_int_equal(checks_layer(cat, "cpu.no-avx"), CHECK_LAYER_NONE);
    assert_int_equal(checks_layer(cat, "no.such-id"), CHECK_LAYER_NONE);
    assert_string_equal(checks_owner(cat, "cuda.no-libcuda"), "cuda");
    assert_string_equal(checks_owner(cat, "require.unmet"), "core");
    assert_null(checks_owner(cat, "no.such-id"));
    /* the catalogue without the probes' parts: the core's rows only */
    assert_string_equal(checks_owner(NULL, "require.unmet"), "core");
    assert_null(checks_find(NULL, "cuda.no-libcuda"));
}

/* Count every row and those of the cuda probe's parts: the registry's catalogue holds every part. */
static void count_row(const struct check *c, const char *owner, void *arg)
{
    size_t *n = arg;
    (void)c;
    n[0]++;
    n[1] += strcmp(owner, "cuda") == 0;
}

/* The facts the doctor once kept as ID lists are the owning probes' row flags now. */
static void test_catalogue_flags(void **state)
{
    (void)state;
    const struct checks_catalogue *cat = probe_catalogue();
    size_t n[2] = {0, 0};
    checks_foreach(cat, count_row, n);
    assert_true(n[0] > 100);
    assert_true(n[1] > 40); /* cuda's rows are all in its check_sets */
    static const struct {
        const char *id;
        unsigned flags; /* exactly these of the doctor's flags */
    } rows[] = {
        {"pci.no-gpu", CHECK_F_NEVER_CAUSE | CHECK_F_PLATFORM},
        {"pci.link-degraded", CHECK_F_NEVER_CAUSE},
        {"pci.link-slow", CHECK_F_NEVER_CAUSE},
        {"pci.no-driver", 0},
        {"icd.insecure", CHECK_F_NEVER_CAUSE | CHECK_F_PATH_RELIEF_VENDOR},
        {"icd.multiple-loaders", CHECK_F_NEVER_CAUSE | CHECK_F_PATH_RELIEF_VENDOR},
        {"icd.duplicate", CHECK_F_NEVER_CAUSE | CHECK_F_PATH_RELIEF_VENDOR},
        {"icd.absent-hardware", CHECK_F_NEVER_ROOT | CHECK_F_PATH_RELIEF_VENDOR},
        {"icd.no-loader", CHECK_F_CAUSES_ALL | CHECK_F_PATH_RELIEF | CHECK_F_RELIEF_INFO},
        {"icd.crash", CHECK_F_PATH_RELIEF_VENDOR},
        {"cl.no-platforms", CHECK_F_ALL_VENDORS | CHECK_F_PATH_RELIEF | CHECK_F_RELIEF_INFO},
        {"cl.cpu-only", CHECK_F_ALL_VENDORS | CHECK_F_PATH_RELIEF | CHECK_F_RELIEF_INFO},
        {"cl.gpu-without-opencl", CHECK_F_PATH_RELIEF_VENDOR | CHECK_F_RELIEF_INFO},
        {"cl.enumeration-crash", 0},
        {"cl.enumeration-hang", 0},
        {"smoke.wrong-result", 0},
        {"cuda.no-libcuda", CHECK_F_KIND_FILE},
        {"cuda.nvml-missing", CHECK_F_KIND_FILE},
        {"container.no-utility", CHECK_F_KIND_FILE},
        {"container.no-gpu", CHECK_F_KIND_FILE},
        {"wsl.wsl1", CHECK_F_PLATFORM},
        {"wsl.no-dxg", CHECK_F_PLATFORM},
        {"drv.nvidia-version-mismatch", 0},
        {"dev.missing-node", 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_non_null(checks_find(cat, rows[i].id));
        if (checks_flags(cat, rows[i].id) != rows[i].flags)
            fail_msg("%s: flags 0x%x, want 0x%x", rows[i].id, checks_flags(cat, rows[i].id), rows[i].flags);
    }
}

/* The doctor follows the catalogue it is handed, not IDs it knows: the same findings link or not as
 * their rows' flags say. */
static void test_doctor_reads_flags_from_the_catalogue(void **state)
{
    (void)state;
    for (int with_flag = 0; with_flag < 2; with_flag++) {
        const struct check rows[] = {
            {"fake.no-loader", REPORT_SEV_ERROR, "t", "h", CHECK_LAYER_LOADER | (with_flag ? CHECK_F_CAUSES_ALL : 0)},
            {"fake.no-device", REPORT_SEV_ERROR, "t", "h", CHECK_LAYER_RUNTIME},
        };
        const struct check_part part = {"fake", rows, 2};
        const struct checks_catalogue cat = {&part, 1};
        struct report *r = report_new_with(&cat);
        assert_non_null(r);
        report_add_finding(r, "fake.no-loader", "amdgpu", "no loader for the Radeon");
        report_add_finding(r, "fake.no-device", "nvidia", "no device on the NVIDIA GPU");
        assert_int_equal(r->findings[0]->severity, REPORT_SEV_ERROR); /* the rows were found */
        doctor_link_causes(r);
        if (with_flag)
            assert_string_equal(r->findings[1]->caused_by_id, "fake.no-loader");
        else
            assert_null(r->findings[1]->caused_by_id);
        report_free(r);
    }
}

/* --require names come from the probes that own them: each probe's forms parse, and the error lists
 * every probe's forms (no copy in the doctor). */
static void test_requirements_declared_by_probes(void **state)
{
    (void)state;
    size_t owners = 0;
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct probe_require *q = probe_registry[p]->requires;
        owners += q != NULL;
        for (; q && q->parse; q++) {
            assert_non_null(q->eval);
            assert_true(q->form != NULL || q->forms != NULL);
        }
    }
    assert_int_equal(owners, 8); /* cpu, topology, cuda, rocm, opencl, levelzero, frameworks, vulkan */
    char *err = NULL;
    char *bad[] = {"nope"};
    assert_int_equal(doctor_validate_requires(bad, 1, &err), -1);
    static const char *const forms[] = {"gpu, gpus>=N, p2p, vulkan, torch-gpu, tensorflow-gpu, jax-gpu, cupy-gpu, onnxruntime-gpu, paddle-gpu, levelzero, opencl, fp64, opencl-version>=X.Y, rocm, cuda, cuda>=X.Y, "
                                        "compute-capability>=X.Y, free-memory>=NGiB, rdma, x86-64-v1, x86-64-v2, x86-64-v3, x86-64-v4, "
                                        "or a CPU flag (fpu, ",
                                        "sha_ni)"};
    for (size_t i = 0; i < 2; i++)
        assert_non_null(strstr(err, forms[i]));
    free(err);
}

/* An unmet requirement is explained inside its owner's chain: cuda by the CUDA stack and the kernel
 * below it (not by an OpenCL ICD), a CPU flag by the CPU's findings only. */
static void test_requirement_chains(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_finding(r, "icd.no-loader", NULL, "no OpenCL loader");
    report_add_finding(r, "pci.no-driver", "0000:01:00.0", "no driver");
    report_add_finding(r, "cpu.avx-disabled-by-os", "cpu", "XCR0 hides AVX");
    report_add_finding(r, "require.unmet", "cuda", "cuda not met");
    report_add_finding(r, "require.unmet", "avx2", "avx2 not met");
    report_add_finding(r, "require.unmet", "gpu", "gpu not met");
    doctor_link_causes(r);
    assert_string_equal(report_find_finding(r, "require.unmet", "cuda")->caused_by_id, "pci.no-driver");
    assert_string_equal(report_find_finding(r, "require.unmet", "avx2")->caused_by_id, "cpu.avx-disabled-by-os");
    const char *gpu_cause = report_find_finding(r, "require.unmet", "gpu")->caused_by_id;
    assert_non_null(gpu_cause);
    assert_true(strcmp(gpu_cause, "pci.no-driver") == 0 || strcmp(gpu_cause, "icd.no-loader") == 0);
    report_free(r);
}

/* True when REASONS (NULL-terminated) holds ID. */
static bool has_reason(const char **reasons, const char *id)
{
    for (size_t i = 0; reasons && reasons[i]; i++)
        if (strcmp(reasons[i], id) == 0)
            return true;
    return false;
}

/* Issue 36: one vendor's module, device or nodes are a reason only for the APIs that can drive that vendor's
 * GPUs; a platform-wide finding is a reason for every API. */
static void test_reasons_scoped_to_the_api_vendor(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_finding(r, "drv.nvidia-version-mismatch", "nvidia", "The NVIDIA kernel module is 535.261.03 but ...");
    report_add_finding(r, "dev.missing-node", "/dev/kfd", "/dev/kfd is missing");
    report_add_finding(r, "wsl.no-dxg", "/dev/dxg", "WSL2 without /dev/dxg");
    report_add_finding(r, "pci.no-driver", "0000:09:00.0", "0000:09:00.0 has no driver"); /* vendor unknown */
    doctor_link_causes(r);
    static const struct {
        const char *probe;
        bool nvidia, amd;
    } want[] = {{"levelzero", false, false}, {"rocm", false, true}, {"cuda", true, false}, {"opencl", true, true},
                {"vulkan", true, true}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        size_t n = 0;
        const char **reasons = doctor_target_reasons(r, probe_find(want[i].probe), &n);
        if (has_reason(reasons, "drv.nvidia-version-mismatch") != want[i].nvidia ||
            has_reason(reasons, "dev.missing-node") != want[i].amd)
            fail_msg("%s: NVIDIA module %d, /dev/kfd %d", want[i].probe, has_reason(reasons, "drv.nvidia-version-mismatch"),
                     has_reason(reasons, "dev.missing-node"));
        assert_true(has_reason(reasons, "wsl.no-dxg"));    /* platform-wide */
        assert_true(has_reason(reasons, "pci.no-driver")); /* no vendor known: not ruled out */
        free(reasons);
    }
    /* the root of Level Zero's line is never the NVIDIA module, nor the AMD node */
    const struct report_finding *root = doctor_target_root(r, probe_find("levelzero"));
    assert_non_null(root);
    assert_true(strcmp(root->id, "drv.nvidia-version-mismatch") != 0 && strcmp(root->id, "dev.missing-node") != 0);
    report_free(r);
    /* without a platform-wide finding Level Zero has no reason at all */
    r = report_new();
    report_add_finding(r, "drv.nvidia-version-mismatch", "nvidia", "The NVIDIA kernel module is 535.261.03 but ...");
    report_add_finding(r, "cuda.secure-boot-module", "nvidia", "Secure Boot refuses the module");
    report_add_finding(r, "require.unmet", "levelzero", "levelzero not met");
    doctor_link_causes(r);
    size_t n = 9;
    const char **reasons = doctor_target_reasons(r, probe_find("levelzero"), &n);
    assert_int_equal(n, 0);
    free(reasons);
    assert_null(doctor_target_root(r, probe_find("rocm")));
    assert_null(report_find_finding(r, "require.unmet", "levelzero")->caused_by_id);
    report_free(r);
}

/* Issue 36: a cause must be able to cause. A library the loader cannot find (a CHECK_F_KIND_FILE row) is
 * caused by a packaging fact only, never by a device node or a module below it; a failed init is. */
static void test_cause_kinds(void **state)
{
    (void)state;
    for (int with_pkg = 0; with_pkg < 2; with_pkg++) {
        const struct check rows[] = {
            {"fake.missing-node", REPORT_SEV_ERROR, "t", "h", CHECK_LAYER_KERNEL},
            {"fake.module-mismatch", REPORT_SEV_ERROR, "t", "h", CHECK_LAYER_KERNEL},
            {"fake.no-utility", REPORT_SEV_WARNING, "t", "h", CHECK_LAYER_DRIVER | CHECK_F_KIND_FILE},
            {"fake.lib-missing", REPORT_SEV_WARNING, "t", "h", CHECK_LAYER_RUNTIME | CHECK_F_KIND_FILE},
            {"fake.init-failed", REPORT_SEV_ERROR, "t", "h", CHECK_LAYER_RUNTIME},
        };
        const struct check_part part = {"fake", rows, sizeof(rows) / sizeof(rows[0])};
        const struct checks_catalogue cat = {&part, 1};
        struct report *r = report_new_with(&cat);
        report_add_finding(r, "fake.missing-node", "/dev/nvidia-uvm", "no /dev/nvidia-uvm");
        report_add_finding(r, "fake.module-mismatch", "nvidia", "NVIDIA module 535, libraries 580");
        if (with_pkg)
            report_add_finding(r, "fake.no-utility", "nvidia", "NVIDIA capabilities without utility");
        report_add_finding(r, "fake.lib-missing", "libnvidia-ml.so.1", "libnvidia-ml.so.1: cannot open shared object file");
        report_add_finding(r, "fake.init-failed", "nvidia", "nvmlInit failed on the NVIDIA GPU");
        doctor_link_causes(r);
        const struct report_finding *lib = report_find_finding(r, "fake.lib-missing", "libnvidia-ml.so.1");
        if (with_pkg)
            assert_string_equal(lib->caused_by_id, "fake.no-utility");
        else
            assert_null(lib->caused_by_id);
        /* a failed init is a state: a node or a module below it explains it */
        const char *init = report_find_finding(r, "fake.init-failed", "nvidia")->caused_by_id;
        assert_non_null(init);
        assert_true(strcmp(init, "fake.missing-node") == 0 || strcmp(init, "fake.module-mismatch") == 0);
        report_free(r);
    }
}

/* A peer check's finding about GPU pairs is explained by ACS on a bridge whose peer GPUs hold both ends of
 * every pair, by PCI address in either of CUDA's and sysfs's forms; an error stays its own reason. */
static void test_peer_path_cause(void **state)
{
    (void)state;
    struct report *r = report_new();
    /* report_add_finding's pointer is good until the next finding is added: evidence goes on at once */
    report_finding_add_evidence(report_add_finding(r, "topology.acs-redirect", "0000:02:00.0", "ACS redirection"),
                                "peer GPUs", "0000:03:00.0 0000:04:00.0");
    report_add_finding(r, "topology.acs-redirect", "0000:82:00.0", "ACS redirection without its GPUs");
    struct report_finding *f = report_add_finding(r, "cuda.p2p-unsupported", NULL, "two pairs");
    report_finding_add_evidence(f, "pair", "00000000:03:00.0->00000000:04:00.0");
    report_finding_add_evidence(f, "pair", "0000:04:00.0->0000:03:00.0");
    report_add_finding(r, "cuda.p2p-unsupported", "0000:03:00.0->10000:04:00.0", "a VMD domain is another GPU");
    f = report_add_finding(r, "cuda.p2p-unsupported", "one pair elsewhere", "one pair elsewhere");
    report_finding_add_evidence(f, "pair", "0000:03:00.0->0000:04:00.0");
    report_finding_add_evidence(f, "pair", "0000:03:00.0->0000:05:00.0");
    report_add_finding(r, "cuda.p2p-hang", "0000:03:00.0->0000:04:00.0", "hang");
    doctor_link_causes(r);
    f = report_find_finding(r, "cuda.p2p-unsupported", NULL);
    assert_string_equal(f->message, "two pairs");
    assert_string_equal(f->caused_by_id, "topology.acs-redirect");
    assert_string_equal(f->caused_by_subject, "0000:02:00.0");
    assert_null(report_find_finding(r, "cuda.p2p-unsupported", "0000:03:00.0->10000:04:00.0")->caused_by_id);
    assert_null(report_find_finding(r, "cuda.p2p-unsupported", "one pair elsewhere")->caused_by_id);
    assert_null(report_find_finding(r, "cuda.p2p-hang", "0000:03:00.0->0000:04:00.0")->caused_by_id);
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_requires),
        cmocka_unit_test(test_requirements_against_sections),
        cmocka_unit_test(test_req_version),
        cmocka_unit_test(test_gpu_requirement_fails_on_cpu_only),
        cmocka_unit_test(test_smoke_not_run_means_unmet),
        cmocka_unit_test(test_nouveau_root_cause),
        cmocka_unit_test(test_vendor_mismatch_not_linked),
        cmocka_unit_test(test_cpu_root_cause_and_target),
        cmocka_unit_test(test_ready_verdict_names_the_gpu),
        cmocka_unit_test(test_cuda_requirements),
        cmocka_unit_test(test_cuda_gpu_makes_gpu_target_ready),
        cmocka_unit_test(test_absent_api_without_gpu),
        cmocka_unit_test(test_compute_paths_across_apis),
        cmocka_unit_test(test_no_cause_across_apis),
        cmocka_unit_test(test_cuda_series_reasons_by_major),
        cmocka_unit_test(test_cuda_wheel_lines),
        cmocka_unit_test(test_catalogue_layers),
        cmocka_unit_test(test_catalogue_flags),
        cmocka_unit_test(test_doctor_reads_flags_from_the_catalogue),
        cmocka_unit_test(test_requirements_declared_by_probes),
        cmocka_unit_test(test_requirement_chains),
        cmocka_unit_test(test_reasons_scoped_to_the_api_vendor),
        cmocka_unit_test(test_cause_kinds),
        cmocka_unit_test(test_peer_path_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
