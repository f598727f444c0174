/* test_smoke_enum.c: smoke's own enumeration on the fake ICD: PCI addresses by every query, and the doctor's GPU count on them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "isolate.h"
#include "jsonget.h"
#include "report.h"
#include "results/result_smoke.h"
#include "cldevices.h"
#include "smoke_device.h"

/* Run smoke's enumeration child with the fake working ICD as the only driver, its PCI knobs set to
 * ADDR (NULL: none), VIA (khr, amd, nv), DEVICES and SHARED. Returns the child's JSON (caller puts). */
static json_object *enumerate(const char *addr, const char *via, const char *devices, bool shared)
{
    const char *icd = getenv("GC_FAKE_ICD_WORKING");
    if (!icd)
        fail_msg("GC_FAKE_ICD_WORKING is not set: run through meson test");
    setenv("OCL_ICD_VENDORS", icd, 1);
    unsetenv("GPUCHECKUP_LIBOPENCL");
    if (addr)
        setenv("GC_FAKE_ICD_PCI", addr, 1);
    else
        unsetenv("GC_FAKE_ICD_PCI");
    setenv("GC_FAKE_ICD_PCI_VIA", via, 1);
    setenv("GC_FAKE_ICD_DEVICES", devices, 1);
    if (shared)
        setenv("GC_FAKE_ICD_PCI_SHARED", "1", 1);
    else
        unsetenv("GC_FAKE_ICD_PCI_SHARED");
    struct isolate_result res;
    enum isolate_status st = isolate_run(cldev_enumerate_child, NULL, 10000, &res);
    json_object *v = json_object_get(res.value);
    char why[256];
    snprintf(why, sizeof(why), "%s", res.detail ? res.detail : "");
    isolate_result_clear(&res);
    if (st != ISOLATE_OK)
        fail_msg("the enumeration child ended %s: %s", isolate_status_name(st), why);
    assert_null(jsonget(v, "loader_error"));
    assert_null(jsonget(v, "error"));
    return v;
}

/* The devices of the one platform the fake ICD offers. */
static json_object *devices_of(json_object *v, size_t expect)
{
    size_t np = 0, nd = 0;
    json_object *plats = jsonget_array(v, "platforms", &np);
    assert_int_equal(np, 1);
    json_object *devs = jsonget_array(json_object_array_get_idx(plats, 0), "devices", &nd);
    assert_int_equal(nd, expect);
    return devs;
}

static const char *address_of(json_object *devs, size_t i)
{
    return jsonget_str(json_object_array_get_idx(devs, i), "pci_address");
}

static void assert_address(json_object *devs, size_t i, const char *want)
{
    const char *got = address_of(devs, i);
    if (!got || strcmp(got, want) != 0)
        fail_msg("device %zu: pci_address %s, %s expected", i, got ? got : "null", want);
}

static void test_khr_address(void **state)
{
    (void)state;
    json_object *v = enumerate("0001:02:03.4", "khr", "2", false);
    json_object *devs = devices_of(v, 2);
    assert_address(devs, 0, "0001:02:03.4");
    assert_address(devs, 1, "0001:02:04.4");
    json_object_put(v);
}

/* Issue 13: before the shared query layer, smoke asked cl_khr_pci_bus_info only, and these had none. */
static void test_amd_topology_address(void **state)
{
    (void)state;
    json_object *v = enumerate("0000:c3:00.0", "amd", "1", false);
    json_object *devs = devices_of(v, 1);
    assert_address(devs, 0, "0000:c3:00.0");
    assert_string_equal(jsonget_str(json_object_array_get_idx(devs, 0), "name"), "gpucheckup fake GPU");
    json_object_put(v);
}

static void test_nvidia_bus_slot_address(void **state)
{
    (void)state;
    /* the fake refuses the domain query, as drivers before CUDA 10.2: domain 0 */
    json_object *v = enumerate("0000:41:01.3", "nv", "1", false);
    json_object *devs = devices_of(v, 1);
    assert_address(devs, 0, "0000:41:01.3");
    json_object_put(v);
}

static void test_no_address(void **state)
{
    (void)state;
    json_object *v = enumerate(NULL, "amd", "1", false);
    json_object *devs = devices_of(v, 1);
    assert_null(address_of(devs, 0));
    /* the key is there, as null */
    assert_true(json_object_object_get_ex(json_object_array_get_idx(devs, 0), "pci_address", NULL));
    json_object_put(v);
}

/* The doctor counts GPUs by address: two devices smoke enumerated on one AMD (or NVIDIA) GPU are one
 * GPU. The fake GPU cannot compute, so the test marks both passed, as a GPU that two drivers expose
 * (ROCm and Rusticl) would be; the addresses are the enumeration's own. */
static void check_one_gpu(const char *via)
{
    json_object *v = enumerate("0000:0a:00.0", via, "2", true);
    json_object *devs = devices_of(v, 2);
    json_object *smoke = json_object_new_object(), *tested = json_object_new_array();
    for (size_t i = 0; i < 2; i++) {
        json_object *e = json_object_array_get_idx(devs, i), *t = json_object_new_object();
        assert_address(devs, i, "0000:0a:00.0");
        json_object_object_add(t, "platform_index", json_object_new_int(0));
        json_object_object_add(t, "device_index", json_object_new_int((int)i));
        json_object_object_add(t, "name", json_object_get(jsonget(e, "name")));
        json_object_object_add(t, "type", json_object_get(jsonget(e, "type")));
        json_object_object_add(t, "pci_address", json_object_get(jsonget(e, "pci_address")));
        json_object_object_add(t, "status", json_object_new_string("pass"));
        json_object_array_add(tested, t);
    }
    json_object_object_add(smoke, "devices", tested);
    json_object_put(v);

    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "smoke");
    json_object_put(s->data);
    s->data = smoke;
    /* the doctor reads smoke's typed result, as the probe publishes it */
    assert_int_equal(report_section_adopt(s, &result_smoke_ops), 0);
    char *detail = NULL;
    assert_true(doctor_eval_require(r, "gpus>=1", &detail));
    assert_non_null(strstr(detail, "1 GPU passed"));
    free(detail);
    assert_false(doctor_eval_require(r, "gpus>=2", &detail));
    free(detail);
    report_free(r);
}

static void test_doctor_counts_one_gpu_amd(void **state)
{
    (void)state;
    check_one_gpu("amd");
}

static void test_doctor_counts_one_gpu_nvidia(void **state)
{
    (void)state;
    check_one_gpu("nv");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_khr_address),
        cmocka_unit_test(test_amd_topology_address),
        cmocka_unit_test(test_nvidia_bus_slot_address),
        cmocka_unit_test(test_no_address),
        cmocka_unit_test(test_doctor_counts_one_gpu_amd),
        cmocka_unit_test(test_doctor_counts_one_gpu_nvidia),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
