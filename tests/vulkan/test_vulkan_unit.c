/* test_vulkan_unit.c: the vulkan probe's manifest parser, and its typed result read back and printed the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compute_path.h"
#include "probe.h"
#include "results/result_vulkan.h"
#include "vulkan_internal.h"

static int parse(const char *text, struct vulkan_manifest_info *m, char **why)
{
    return vulkan_manifest_parse(text, strlen(text), m, why);
}

static void test_manifest_accepted(void **state)
{
    (void)state;
    struct vulkan_manifest_info m;
    char *why = NULL;
    /* Mesa 22.3's lavapipe manifest, as Debian installs it. */
    assert_int_equal(parse("{\n    \"ICD\": {\n        \"api_version\": \"1.1.230\",\n        \"library_path\": "
                           "\"/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so\"\n    },\n    \"file_format_version\": "
                           "\"1.0.0\"\n}", &m, &why), 0);
    assert_null(why);
    assert_string_equal(m.file_format_version, "1.0.0");
    assert_string_equal(m.library_path, "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so");
    assert_string_equal(m.api_version, "1.1.230");
    vulkan_manifest_info_free(&m);
    /* api_version is optional; other members are ignored; control characters are sanitised. */
    assert_int_equal(parse("{\"file_format_version\":\"1.0.1\",\"ICD\":{\"library_path\":\"lib\\u0001x.so\","
                           "\"is_portability_driver\":false}}", &m, &why), 0);
    assert_null(m.api_version);
    assert_null(strchr(m.library_path, '\001'));
    vulkan_manifest_info_free(&m);
}

static void test_manifest_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "{", "[]", "\"ICD\"", "{\"ICD\":{\"library_path\":\"x\"}}", "{\"file_format_version\":1,\"ICD\":{}}",
        "{\"file_format_version\":\"1.0.0\"}", "{\"file_format_version\":\"1.0.0\",\"ICD\":[]}",
        "{\"file_format_version\":\"1.0.0\",\"ICD\":{\"library_path\":\"\"}}",
        "{\"file_format_version\":\"1.0.0\",\"ICD\":{\"library_path\":7}}",
        "{\"file_format_version\":\"1.0.0\",\"ICD\":{\"library_path\":\"x\",\"api_version\":1}}",
        "{\"file_format_version\":\"1.0.0\",\"ICD\":{\"library_path\":\"x\"}} trailing",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct vulkan_manifest_info m;
        char *why = NULL;
        assert_int_equal(parse(bad[i], &m, &why), -1);
        assert_non_null(why);
        assert_null(m.library_path);
        free(why);
    }
    /* Nesting far deeper than any manifest: refused, not a stack overflow. */
    size_t n = 200000;
    char *deep = malloc(n + 1);
    memset(deep, '[', n);
    deep[n] = '\0';
    struct vulkan_manifest_info m;
    char *why = NULL;
    assert_int_equal(parse(deep, &m, &why), -1);
    free(why);
    free(deep);
}

static const char *VK_DOC =
    "{\"loader\":\"/lib/x86_64-linux-gnu/libvulkan.so.1\",\"drivers\":[{\"manifest\":\"/usr/share/vulkan/icd.d/"
    "lvp_icd.x86_64.json\",\"library\":\"/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so\",\"api_version\":\"1.1.230\","
    "\"status\":\"ok\",\"detail\":\"1 device\"},{\"manifest\":\"/x.json\",\"library\":null,\"api_version\":null,"
    "\"status\":\"malformed\",\"detail\":\"malformed: not JSON\"}],\"devices\":[{\"driver\":\"/usr/share/vulkan/"
    "icd.d/lvp_icd.x86_64.json\",\"index\":0,\"name\":\"llvmpipe\",\"type\":\"cpu\",\"api_version\":\"1.3.230\","
    "\"driver_version\":\"0.0.1\",\"vendor_id\":65541,\"device_id\":0,\"driver_id\":13,\"driver_name\":\"llvmpipe\",\"driver_info\":"
    "\"Mesa 22.3.6\",\"pci_address\":null,\"on_pci_bus\":null,\"subgroup_size\":8,\"storage_16bit\":true,"
    "\"shader_float16\":true,\"shader_int8\":false,\"queue_families\":[{\"index\":0,\"count\":1,\"compute\":true,"
    "\"graphics\":true,\"transfer\":true}],\"memory_heaps\":[{\"size\":2147483648,\"device_local\":true}],\"smoke\":"
    "{\"status\":\"pass\",\"n\":256,\"kernel_ms\":12.5,\"gflops\":2.68}},{\"driver\":\"/f.json\",\"index\":0,\"name\":"
    "\"fake\",\"type\":\"discrete-gpu\",\"api_version\":\"1.0.0\",\"driver_version\":\"0.1.2\",\"vendor_id\":4660,"
    "\"device_id\":22136,\"driver_id\":null,\"driver_name\":null,\"driver_info\":null,\"pci_address\":\"0000:01:00.0\",\"on_pci_bus\":"
    "false,\"subgroup_size\":null,\"storage_16bit\":null,\"shader_float16\":null,\"shader_int8\":null,"
    "\"queue_families\":[],\"memory_heaps\":[],\"smoke\":{\"status\":\"wrong-result\"}}],\"notes\":[\"n\"]}";

static void test_result_round_trip_and_paths(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "vulkan");
    json_object_put(s->data);
    s->data = json_tokener_parse(VK_DOC);
    assert_non_null(s->data);
    assert_int_equal(report_section_adopt(s, &result_vulkan_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), VK_DOC);
    json_object_put(back);
    report_section_set_status(s, REPORT_STATUS_OK, NULL);
    const struct result_vulkan *v = result_vulkan_get(r);
    assert_non_null(v);
    assert_int_equal(v->n_drivers, 2);
    assert_int_equal(v->drivers[1].status, RESULT_VULKAN_DRV_MALFORMED);
    assert_int_equal(v->n_devs, 2);
    assert_int_equal(v->devs[0].type, RESULT_VULKAN_TYPE_CPU);
    assert_int_equal(v->devs[0].smoke, RESULT_VULKAN_SMOKE_PASS);
    assert_int_equal(v->devs[0].shader_int8, GC_TRI_NO);
    assert_int_equal(v->devs[0].driver_id, 13);
    assert_int_equal(v->devs[1].driver_id, -1);
    assert_int_equal(v->devs[1].subgroup_size, -1);
    assert_int_equal(v->devs[1].on_pci_bus, GC_TRI_NO);
    /* One compute path per device: lavapipe passed (not a GPU), the fake GPU failed. */
    struct compute_paths ps = compute_paths_of(r);
    size_t mine = 0;
    for (size_t i = 0; i < ps.n; i++) {
        if (!ps.v[i].api || strcmp(ps.v[i].api, "vulkan") != 0)
            continue;
        mine++;
        if (strcmp(ps.v[i].name, "llvmpipe") == 0) {
            assert_false(ps.v[i].gpu);
            assert_int_equal(ps.v[i].proof, COMPUTE_PASSED);
            assert_non_null(ps.v[i].measurements);
        } else {
            assert_true(ps.v[i].gpu);
            assert_int_equal(ps.v[i].proof, COMPUTE_FAILED);
            assert_string_equal(ps.v[i].pci_address, "0000:01:00.0");
        }
    }
    assert_int_equal(mine, 2);
    compute_paths_free(&ps);
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_accepted),
        cmocka_unit_test(test_manifest_refused),
        cmocka_unit_test(test_result_round_trip_and_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
