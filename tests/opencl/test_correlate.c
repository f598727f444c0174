/* test_correlate.c: unit tests of the OpenCL cross-checks with fake device lists and fake PCI facts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_internal.h"

/* ---- fake data builders ---- */

/* An OpenCL device as the enumeration reports it (only the fields the checks read). */
static char *dev(const char *name, const char *type, const char *vendor_id, const char *addr, const char *uuid)
{
    char *s = NULL;
    char a[64], u[80];
    snprintf(a, sizeof(a), addr ? "\"%s\"" : "null", addr);
    snprintf(u, sizeof(u), uuid ? "\"%s\"" : "null", uuid);
    int rc = asprintf(&s,
                      "{\"name\":\"%s\",\"type\":[\"%s\"],\"vendor_id\":\"%s\",\"pci_address\":%s,\"uuid\":%s,"
                      "\"properties\":{}}",
                      name, type, vendor_id, a, u);
    assert_true(rc > 0);
    return s;
}

/* A platform named NAME with the devices D (NULL-terminated, freed here); indexes are filled in. */
static json_object *platform(const char *name, char **d)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "name", json_object_new_string(name));
    json_object_object_add(p, "properties", json_object_new_object());
    json_object *devs = json_object_new_array();
    for (size_t i = 0; d && d[i]; i++) {
        json_object *o = json_tokener_parse(d[i]);
        assert_non_null(o);
        json_object_object_add(o, "index", json_object_new_int64((int64_t)i));
        json_object_array_add(devs, o);
        free(d[i]);
    }
    json_object_object_add(p, "devices", devs);
    json_object_object_add(p, "error", NULL);
    return p;
}

/* The opencl section's data: STATUS and the platforms (NULL-terminated). */
static json_object *ocl_data(const char *status, json_object **plats)
{
    json_object *o = json_object_new_object();
    json_object *e = json_object_new_object();
    json_object_object_add(e, "status", json_object_new_string(status));
    json_object_object_add(e, "detail", json_object_new_string("detail text"));
    json_object_object_add(o, "enumeration", e);
    json_object_object_add(o, "loader", json_object_new_string("/usr/lib/libOpenCL.so.1"));
    json_object *a = json_object_new_array();
    for (size_t i = 0; plats && plats[i]; i++) {
        json_object_object_add(plats[i], "index", json_object_new_int64((int64_t)i));
        json_object_array_add(a, plats[i]);
    }
    json_object_object_add(o, "platforms", a);
    return o;
}

/* The pci section's data from a JSON array text of devices. */
static json_object *pci_data(const char *devices)
{
    char *s = NULL;
    assert_true(asprintf(&s, "{\"devices\":%s}", devices) > 0);
    json_object *o = json_tokener_parse(s);
    free(s);
    assert_non_null(o);
    return o;
}

#define NV_GPU(addr, driver)                                                                                      \
    "{\"address\":\"" addr "\",\"vendor_id\":\"10de\",\"device_id\":\"2204\",\"kind\":\"compute-gpu\","          \
    "\"driver\":" driver ",\"vendor_name\":\"NVIDIA Corporation\",\"device_name\":\"GA102 [GeForce RTX 3090]\"}"
#define AMD_GPU(addr)                                                                                             \
    "{\"address\":\"" addr "\",\"vendor_id\":\"1002\",\"device_id\":\"73bf\",\"kind\":\"compute-gpu\","          \
    "\"driver\":\"amdgpu\",\"vendor_name\":\"AMD\",\"device_name\":\"Navi 21\"}"
#define BMC_VGA(addr)                                                                                             \
    "{\"address\":\"" addr "\",\"vendor_id\":\"1a03\",\"device_id\":\"2000\",\"kind\":\"display-only\","         \
    "\"driver\":null,\"vendor_name\":\"ASPEED\",\"device_name\":\"ASPEED Graphics Family\"}"
#define ACCEL(addr)                                                                                               \
    "{\"address\":\"" addr "\",\"vendor_id\":\"1da3\",\"device_id\":\"1020\",\"kind\":\"accelerator\","          \
    "\"driver\":null,\"vendor_name\":\"Habana\",\"device_name\":\"Gaudi2\"}"

/* Run the checks; return the sorted, comma-joined list of finding IDs ("" for none). */
static char ids_buf[1024];
static struct report *last;

static const char *run(json_object *ocl, json_object *pci)
{
    if (last)
        report_free(last);
    last = report_new();
    assert_non_null(last);
    /* The pci facts as the pci probe's result reads them from its section's JSON. */
    struct result_pci *facts = pci ? result_pci_read(pci) : NULL;
    assert_true(!pci || facts);
    size_t n = ocl_correlate(ocl, facts, last);
    result_pci_ops.free(facts);
    assert_int_equal(n, last->n_findings);
    /* sort IDs (insertion sort: a handful of findings) */
    const char *ids[32];
    size_t k = 0;
    for (size_t i = 0; i < last->n_findings && k < 32; i++) {
        const char *id = last->findings[i]->id;
        size_t j = k++;
        while (j > 0 && strcmp(ids[j - 1], id) > 0) {
            ids[j] = ids[j - 1];
            j--;
        }
        ids[j] = id;
    }
    ids_buf[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        strcat(ids_buf, i ? "," : "");
        strcat(ids_buf, ids[i]);
    }
    json_object_put(ocl);
    json_object_put(pci);
    return ids_buf;
}

static const struct report_finding *finding(const char *id)
{
    return report_find_finding(last, id, NULL);
}

static int teardown(void **state)
{
    (void)state;
    report_free(last);
    last = NULL;
    return 0;
}

/* ---- cl.no-platforms and the enumeration outcomes ---- */

static void test_no_platforms(void **state)
{
    (void)state;
    assert_string_equal(run(ocl_data("ok", NULL), NULL), "cl.no-platforms");
    assert_int_equal(finding("cl.no-platforms")->severity, REPORT_SEV_ERROR);
    assert_non_null(strstr(finding("cl.no-platforms")->hint, "gpucheckup icd"));
    /* with a GPU on the bus, that GPU is also named */
    assert_string_equal(run(ocl_data("ok", NULL), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "]")),
                        "cl.gpu-without-opencl,cl.no-platforms");
}

static void test_no_loader(void **state)
{
    (void)state;
    assert_string_equal(run(ocl_data("no-loader", NULL), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "]")),
                        "cl.gpu-without-opencl,cl.no-platforms");
    assert_non_null(strstr(finding("cl.no-platforms")->hint, "ocl-icd-libopencl1"));
    assert_non_null(strstr(finding("cl.no-platforms")->message, "No OpenCL loader"));
}

static void test_crash_hang_failure(void **state)
{
    (void)state;
    /* after a crash nothing is known about devices: no GPU cross-check */
    assert_string_equal(run(ocl_data("crash", NULL), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "]")),
                        "cl.enumeration-crash");
    assert_non_null(strstr(finding("cl.enumeration-crash")->message, "detail text"));
    assert_string_equal(finding("cl.enumeration-crash")->subject, "/usr/lib/libOpenCL.so.1");
    assert_string_equal(run(ocl_data("timeout", NULL), NULL), "cl.enumeration-hang");
    assert_string_equal(run(ocl_data("failed", NULL), NULL), "cl.enumeration-failed");
    assert_string_equal(run(ocl_data("error", NULL), NULL), "cl.enumeration-failed");
}

static void test_healthy_cpu_platform_alone_is_silent(void **state)
{
    (void)state;
    char *d[] = {dev("pthread", "CPU", "8086", NULL, NULL), NULL};
    json_object *p[] = {platform("Portable Computing Language", d), NULL};
    assert_string_equal(run(ocl_data("ok", p), NULL), "");
    /* a PCI bus with only a BMC display and an accelerator: still nothing to say */
    char *d2[] = {dev("pthread", "CPU", "8086", NULL, NULL), NULL};
    json_object *p2[] = {platform("Portable Computing Language", d2), NULL};
    assert_string_equal(run(ocl_data("ok", p2), pci_data("[" BMC_VGA("0000:02:00.0") "," ACCEL("0000:03:00.0") "]")), "");
}

/* ---- cl.platform-no-devices ---- */

static void test_platform_without_devices(void **state)
{
    (void)state;
    char *d[] = {dev("pthread", "CPU", "8086", NULL, NULL), NULL};
    json_object *p[] = {platform("Portable Computing Language", d), platform("rusticl", NULL), NULL};
    assert_string_equal(run(ocl_data("ok", p), NULL), "cl.platform-no-devices");
    const struct report_finding *f = finding("cl.platform-no-devices");
    assert_string_equal(f->subject, "platform 1 (rusticl)");
    assert_int_equal(f->severity, REPORT_SEV_WARNING);
    assert_non_null(strstr(f->hint, "RUSTICL_ENABLE"));
    json_object *p2[] = {platform("Portable Computing Language", NULL), NULL};
    assert_string_equal(run(ocl_data("ok", p2), NULL), "cl.platform-no-devices");
    assert_non_null(strstr(finding("cl.platform-no-devices")->hint, "POCL_DEVICES"));
}

/* Issue 31: under WSL2 (ROCm reaches an AMD GPU through /dev/dxg and librocdxg) an empty ROCm platform's hint never
 * asks for /dev/kfd or amdgpu; ROCm without an AMD Windows driver is a driver for absent hardware (no finding). */
static void test_platform_without_devices_under_wsl2(void **state)
{
    (void)state;
    json_object *pci = json_tokener_parse(
        "{\"devices\":[{\"address\":\"3c1f:00:00.0\",\"vendor_id\":\"1414\",\"device_id\":\"008e\","
        "\"kind\":\"paravirtual-gpu\",\"driver\":\"dxgkrnl\"}],\"bus_visible\":true,\"source\":\"sysfs\","
        "\"platform\":{\"kind\":\"wsl2\",\"wsl\":{\"gpu_vendors\":[\"amd\"]}}}");
    assert_non_null(pci);
    json_object *p[] = {platform("AMD Accelerated Parallel Processing", NULL), NULL};
    assert_string_equal(run(ocl_data("ok", p), pci), "cl.platform-no-devices");
    const struct report_finding *f = finding("cl.platform-no-devices");
    assert_non_null(strstr(f->hint, "under WSL2"));
    assert_non_null(strstr(f->hint, "HSA_ENABLE_DXG_DETECTION=1"));
    assert_null(strstr(f->hint, "check read/write access to /dev/kfd"));
    assert_null(strstr(f->hint, "amdgpu"));
    /* the Windows driver of another vendor only: ROCm has nothing to drive there */
    pci = json_tokener_parse(
        "{\"devices\":[],\"bus_visible\":true,\"source\":\"sysfs\","
        "\"platform\":{\"kind\":\"wsl2\",\"wsl\":{\"gpu_vendors\":[\"nvidia\"]}}}");
    json_object *p2[] = {platform("AMD Accelerated Parallel Processing", NULL), NULL};
    assert_string_equal(run(ocl_data("ok", p2), pci), "");
}

/* ---- cl.gpu-without-opencl and cl.cpu-only ---- */

static void test_gpu_mapped_by_address_is_silent(void **state)
{
    (void)state;
    char *d[] = {dev("RTX 3090", "GPU", "10de", "0000:01:00.0", NULL), NULL};
    json_object *p[] = {platform("NVIDIA CUDA", d), NULL};
    assert_string_equal(run(ocl_data("ok", p), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "]")), "");
}

static void test_address_forms_are_normalised(void **state)
{
    (void)state;
    char *d[] = {dev("RX 6800", "GPU", "1002", "0000:0a:00.0", NULL), NULL};
    json_object *p[] = {platform("AMD Accelerated Parallel Processing", d), NULL};
    assert_string_equal(run(ocl_data("ok", p), pci_data("[" AMD_GPU("0000:0A:00.0") "]")), "");
    char *d2[] = {dev("RX 6800", "GPU", "1002", "0a:00.0", NULL), NULL};
    json_object *p2[] = {platform("AMD Accelerated Parallel Processing", d2), NULL};
    assert_string_equal(run(ocl_data("ok", p2), pci_data("[" AMD_GPU("0000:0a:00.0") "]")), "");
}

static void test_cpu_only_with_a_gpu_on_the_bus(void **state)
{
    (void)state;
    char *d[] = {dev("pthread", "CPU", "8086", NULL, NULL), dev("pthread", "CPU", "8086", NULL, NULL), NULL};
    json_object *p[] = {platform("Portable Computing Language", d), NULL};
    assert_string_equal(run(ocl_data("ok", p), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "]")),
                        "cl.cpu-only,cl.gpu-without-opencl");
    const struct report_finding *f = finding("cl.gpu-without-opencl");
    assert_string_equal(f->subject, "0000:01:00.0");
    assert_int_equal(f->severity, REPORT_SEV_WARNING);
    assert_non_null(strstr(f->message, "GA102 [GeForce RTX 3090]"));
    assert_non_null(strstr(f->hint, "nvidia-opencl-icd"));
    assert_int_equal(finding("cl.cpu-only")->severity, REPORT_SEV_ERROR);
    assert_non_null(strstr(finding("cl.cpu-only")->message, "0000:01:00.0"));
    assert_int_equal(finding("cl.cpu-only")->n_evidence, 2); /* both CPU devices listed */
}

static void test_no_pci_facts_means_no_gpu_checks(void **state)
{
    (void)state;
    char *d[] = {dev("pthread", "CPU", "8086", NULL, NULL), NULL};
    json_object *p[] = {platform("Portable Computing Language", d), NULL};
    assert_string_equal(run(ocl_data("ok", p), NULL), "");
    char *d2[] = {dev("pthread", "CPU", "8086", NULL, NULL), NULL};
    json_object *p2[] = {platform("Portable Computing Language", d2), NULL};
    assert_string_equal(run(ocl_data("ok", p2), pci_data("[]")), "");
}

static void test_driver_specific_hints(void **state)
{
    (void)state;
    assert_string_equal(run(ocl_data("ok", NULL), pci_data("[" NV_GPU("0000:01:00.0", "\"nouveau\"") "]")),
                        "cl.gpu-without-opencl,cl.no-platforms");
    assert_non_null(strstr(finding("cl.gpu-without-opencl")->hint, "nouveau"));
    assert_string_equal(run(ocl_data("ok", NULL), pci_data("[" NV_GPU("0000:01:00.0", "null") "]")),
                        "cl.gpu-without-opencl,cl.no-platforms");
    assert_non_null(strstr(finding("cl.gpu-without-opencl")->hint, "no kernel driver"));
    assert_non_null(strstr(finding("cl.gpu-without-opencl")->message, "kernel driver none"));
    assert_string_equal(run(ocl_data("ok", NULL), pci_data("[" AMD_GPU("0000:03:00.0") "]")),
                        "cl.gpu-without-opencl,cl.no-platforms");
    assert_non_null(strstr(finding("cl.gpu-without-opencl")->hint, "rocm-opencl-runtime"));
    assert_non_null(strstr(finding("cl.gpu-without-opencl")->hint, "render"));
}

static void test_gpu_device_without_address_covers_one_gpu_of_its_vendor(void **state)
{
    (void)state;
    /* one NVIDIA OpenCL device that does not say where it is, two NVIDIA GPUs: one is left over */
    char *d[] = {dev("GeForce", "GPU", "10de", NULL, NULL), NULL};
    json_object *p[] = {platform("NVIDIA CUDA", d), NULL};
    assert_string_equal(
        run(ocl_data("ok", p),
            pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "," NV_GPU("0000:02:00.0", "\"nvidia\"") "]")),
        "cl.gpu-without-opencl");
    assert_string_equal(finding("cl.gpu-without-opencl")->subject, "0000:02:00.0");
    /* a vendor mismatch covers nothing */
    char *d2[] = {dev("Radeon", "GPU", "1002", NULL, NULL), NULL};
    json_object *p2[] = {platform("AMD", d2), NULL};
    assert_string_equal(run(ocl_data("ok", p2), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "]")),
                        "cl.gpu-without-opencl");
}

static void test_one_gpu_with_opencl_one_without(void **state)
{
    (void)state;
    char *d[] = {dev("RTX 3090", "GPU", "10de", "0000:01:00.0", NULL), dev("pthread", "CPU", "8086", NULL, NULL),
                 NULL};
    json_object *p[] = {platform("NVIDIA CUDA", d), NULL};
    assert_string_equal(
        run(ocl_data("ok", p), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "," AMD_GPU("0000:41:00.0") "]")),
        "cl.gpu-without-opencl");
    assert_string_equal(finding("cl.gpu-without-opencl")->subject, "0000:41:00.0");
}

/* ---- cl.duplicate-device ---- */

static void test_duplicate_across_platforms(void **state)
{
    (void)state;
    char *a[] = {dev("RTX 3090", "GPU", "10de", "0000:01:00.0", NULL), NULL};
    char *b[] = {dev("NVIDIA GA102 (nouveau)", "GPU", "10de", "0000:01:00.0", NULL), NULL};
    json_object *p[] = {platform("NVIDIA CUDA", a), platform("rusticl", b), NULL};
    assert_string_equal(run(ocl_data("ok", p), pci_data("[" NV_GPU("0000:01:00.0", "\"nvidia\"") "]")),
                        "cl.duplicate-device");
    const struct report_finding *f = finding("cl.duplicate-device");
    assert_string_equal(f->subject, "0000:01:00.0");
    assert_non_null(strstr(f->message, "0:0 (RTX 3090 on NVIDIA CUDA)"));
    assert_non_null(strstr(f->message, "1:0 (NVIDIA GA102 (nouveau) on rusticl)"));
    assert_non_null(strstr(f->message, "2 times"));
}

static void test_duplicate_by_uuid(void **state)
{
    (void)state;
    const char *u = "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf";
    char *a[] = {dev("GPU A", "GPU", "10de", NULL, u), NULL};
    char *b[] = {dev("GPU B", "GPU", "10de", NULL, u), NULL};
    json_object *p[] = {platform("one", a), platform("two", b), NULL};
    assert_string_equal(run(ocl_data("ok", p), NULL), "cl.duplicate-device");
    assert_string_equal(finding("cl.duplicate-device")->subject, u);
}

static void test_same_address_within_one_platform_is_not_a_duplicate(void **state)
{
    (void)state;
    char *a[] = {dev("GPU A", "GPU", "10de", "0000:01:00.0", NULL), dev("GPU A again", "GPU", "10de", "0000:01:00.0", NULL),
                 NULL};
    char *b[] = {dev("pthread", "CPU", "8086", NULL, NULL), NULL};
    json_object *p[] = {platform("one", a), platform("Portable Computing Language", b), NULL};
    assert_string_equal(run(ocl_data("ok", p), NULL), "");
    /* two CPU devices without address or UUID on two platforms: unknown, not reported */
    char *c[] = {dev("cpu", "CPU", "8086", NULL, NULL), NULL};
    char *d[] = {dev("cpu", "CPU", "8086", NULL, NULL), NULL};
    json_object *p2[] = {platform("Intel CPU runtime", c), platform("Portable Computing Language", d), NULL};
    assert_string_equal(run(ocl_data("ok", p2), NULL), "");
}

/* ---- garbage in, no crash out ---- */

static void test_malformed_input(void **state)
{
    (void)state;
    json_object *o = json_tokener_parse("{\"platforms\":\"nope\",\"enumeration\":7}");
    assert_string_equal(run(o, pci_data("{\"not\":\"an array\"}")), "cl.enumeration-failed");
    o = json_tokener_parse("{\"enumeration\":{\"status\":\"ok\"},\"platforms\":[3,{\"devices\":[null,5,{}]}]}");
    assert_string_equal(run(o, pci_data("[7,{\"kind\":\"compute-gpu\"}]")), "cl.gpu-without-opencl,cl.platform-no-devices");
    assert_string_equal(run(json_object_new_object(), NULL), "cl.enumeration-failed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_no_platforms, teardown),
        cmocka_unit_test_teardown(test_no_loader, teardown),
        cmocka_unit_test_teardown(test_crash_hang_failure, teardown),
        cmocka_unit_test_teardown(test_healthy_cpu_platform_alone_is_silent, teardown),
        cmocka_unit_test_teardown(test_platform_without_devices, teardown),
        cmocka_unit_test_teardown(test_platform_without_devices_under_wsl2, teardown),
        cmocka_unit_test_teardown(test_gpu_mapped_by_address_is_silent, teardown),
        cmocka_unit_test_teardown(test_address_forms_are_normalised, teardown),
        cmocka_unit_test_teardown(test_cpu_only_with_a_gpu_on_the_bus, teardown),
        cmocka_unit_test_teardown(test_no_pci_facts_means_no_gpu_checks, teardown),
        cmocka_unit_test_teardown(test_driver_specific_hints, teardown),
        cmocka_unit_test_teardown(test_gpu_device_without_address_covers_one_gpu_of_its_vendor, teardown),
        cmocka_unit_test_teardown(test_one_gpu_with_opencl_one_without, teardown),
        cmocka_unit_test_teardown(test_duplicate_across_platforms, teardown),
        cmocka_unit_test_teardown(test_duplicate_by_uuid, teardown),
        cmocka_unit_test_teardown(test_same_address_within_one_platform_is_not_a_duplicate, teardown),
        cmocka_unit_test_teardown(test_malformed_input, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
