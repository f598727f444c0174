/* test_props.c: unit tests of the OpenCL property table, legality rules, value decoding and PCI address mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_internal.h"

/* ---- the table itself ---- */

static void test_table_rows_are_well_formed(void **state)
{
    (void)state;
    for (size_t i = 0; i < ocl_n_platform_props; i++) {
        const struct ocl_prop *p = &ocl_platform_props[i];
        assert_true(strncmp(p->name, "CL_PLATFORM_", 12) == 0);
        assert_non_null(p->label);
        assert_true(p->since != OCL_NEVER || p->ext != NULL);
    }
    for (size_t i = 0; i < ocl_n_device_props; i++) {
        const struct ocl_prop *p = &ocl_device_props[i];
        if (strncmp(p->name, "CL_DEVICE_", 10) != 0 && strncmp(p->name, "CL_DRIVER_", 10) != 0)
            fail_msg("device row %s has an odd name", p->name);
        assert_non_null(p->label);
        if (p->since == OCL_NEVER && !p->ext)
            fail_msg("%s can never be queried", p->name);
        if ((p->type == OCL_T_BITS || p->type == OCL_T_ENUM || p->type == OCL_T_PARTITION) && !p->names)
            fail_msg("%s lacks its name table", p->name);
        /* the stringised name, not a number: catches a macro that expanded the id first */
        assert_true(p->name[0] == 'C');
    }
}

static void test_names_are_unique(void **state)
{
    (void)state;
    size_t n = ocl_n_platform_props + ocl_n_device_props;
    for (size_t i = 0; i < n; i++) {
        const struct ocl_prop *a = i < ocl_n_platform_props ? &ocl_platform_props[i]
                                                            : &ocl_device_props[i - ocl_n_platform_props];
        for (size_t j = i + 1; j < n; j++) {
            const struct ocl_prop *b = j < ocl_n_platform_props ? &ocl_platform_props[j]
                                                                : &ocl_device_props[j - ocl_n_platform_props];
            if (strcmp(a->name, b->name) == 0)
                fail_msg("duplicate row %s", a->name);
        }
    }
}

/* Two rows with one query id must never both be legal for one device (the JSON would show one value twice). */
static void test_shared_ids_are_exclusive(void **state)
{
    (void)state;
    static const unsigned versions[] = {OCL_V(1, 0), OCL_V(1, 1), OCL_V(1, 2), OCL_V(2, 0), OCL_V(2, 1), OCL_V(3, 0)};
    for (size_t i = 0; i < ocl_n_device_props; i++)
        for (size_t j = i + 1; j < ocl_n_device_props; j++) {
            if (ocl_device_props[i].id != ocl_device_props[j].id)
                continue;
            for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]); v++)
                if (ocl_prop_legal(&ocl_device_props[i], versions[v], "", true) &&
                    ocl_prop_legal(&ocl_device_props[j], versions[v], "", true))
                    fail_msg("%s and %s share id 0x%x and are both legal", ocl_device_props[i].name,
                             ocl_device_props[j].name, ocl_device_props[i].id);
        }
}

static void test_the_issue_queries_are_in_the_table(void **state)
{
    (void)state;
    static const char *const wanted[] = {
        "CL_DEVICE_PCI_BUS_INFO_KHR", "CL_DEVICE_UUID_KHR", "CL_DRIVER_UUID_KHR", "CL_DEVICE_HALF_FP_CONFIG",
        "CL_DEVICE_DOUBLE_FP_CONFIG", "CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV", "CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV",
        "CL_DEVICE_WARP_SIZE_NV", "CL_DEVICE_PCI_BUS_ID_NV", "CL_DEVICE_PCI_SLOT_ID_NV", "CL_DEVICE_PCI_DOMAIN_ID_NV",
        "CL_DEVICE_TOPOLOGY_AMD", "CL_DEVICE_BOARD_NAME_AMD", "CL_DEVICE_WAVEFRONT_WIDTH_AMD", "CL_DEVICE_IP_VERSION_INTEL",
        "CL_DEVICE_ID_INTEL", "CL_DEVICE_NUM_SLICES_INTEL", "CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED",
        "CL_PLATFORM_ICD_SUFFIX_KHR", "CL_PLATFORM_HOST_TIMER_RESOLUTION"};
    for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
        if (!ocl_prop_find(wanted[i]))
            fail_msg("%s missing from the table", wanted[i]);
    assert_int_equal(ocl_prop_find("CL_DEVICE_PCI_BUS_ID_NV")->id, 0x4008);
    assert_int_equal(ocl_prop_find("CL_DEVICE_PCI_SLOT_ID_NV")->id, 0x4009);
    assert_int_equal(ocl_prop_find("CL_DEVICE_PCI_DOMAIN_ID_NV")->id, 0x400A);
    assert_int_equal(ocl_prop_find("CL_DEVICE_TOPOLOGY_AMD")->id, 0x4037);
    assert_int_equal(ocl_prop_find("CL_DEVICE_BOARD_NAME_AMD")->id, 0x4038);
    assert_int_equal(ocl_prop_find("CL_DEVICE_WAVEFRONT_WIDTH_AMD")->id, 0x4043);
    assert_int_equal(ocl_prop_find("CL_DEVICE_WARP_SIZE_NV")->id, 0x4003);
    assert_null(ocl_prop_find("CL_DEVICE_NO_SUCH_THING"));
}

/* ---- legality ---- */

static void test_parse_version(void **state)
{
    (void)state;
    assert_int_equal(ocl_parse_version("OpenCL 3.0 PoCL 3.1"), 300);
    assert_int_equal(ocl_parse_version("OpenCL 1.2 CUDA"), 102);
    assert_int_equal(ocl_parse_version("OpenCL 2.1 "), 201);
    assert_int_equal(ocl_parse_version("OpenCL C 1.2"), 0);
    assert_int_equal(ocl_parse_version("garbage"), 0);
    assert_int_equal(ocl_parse_version(NULL), 0);
    assert_int_equal(ocl_parse_version("OpenCL 999.1"), 0);
}

static void test_legality_by_version_and_extension(void **state)
{
    (void)state;
    const struct ocl_prop *qp = ocl_prop_find("CL_DEVICE_QUEUE_PROPERTIES");
    const struct ocl_prop *qh = ocl_prop_find("CL_DEVICE_QUEUE_ON_HOST_PROPERTIES");
    assert_true(ocl_prop_legal(qp, OCL_V(1, 2), "", false));
    assert_false(ocl_prop_legal(qp, OCL_V(2, 0), "", false));
    assert_false(ocl_prop_legal(qh, OCL_V(1, 2), "", false));
    assert_true(ocl_prop_legal(qh, OCL_V(3, 0), "", false));

    const struct ocl_prop *half = ocl_prop_find("CL_DEVICE_HALF_FP_CONFIG");
    assert_false(ocl_prop_legal(half, OCL_V(3, 0), "cl_khr_fp64", false));
    assert_true(ocl_prop_legal(half, OCL_V(1, 0), "cl_khr_fp16", false));

    const struct ocl_prop *dbl = ocl_prop_find("CL_DEVICE_DOUBLE_FP_CONFIG");
    assert_false(ocl_prop_legal(dbl, OCL_V(1, 1), "", false));
    assert_true(ocl_prop_legal(dbl, OCL_V(1, 1), "cl_khr_fp64", false));
    assert_true(ocl_prop_legal(dbl, OCL_V(1, 2), "", false));

    const struct ocl_prop *wave = ocl_prop_find("CL_DEVICE_WAVEFRONT_WIDTH_AMD");
    assert_false(ocl_prop_legal(wave, OCL_V(2, 0), "cl_amd_device_attribute_query", false)); /* AMD CPU device */
    assert_true(ocl_prop_legal(wave, OCL_V(2, 0), "cl_amd_device_attribute_query", true));
    assert_false(ocl_prop_legal(wave, OCL_V(2, 0), "", true));

    const struct ocl_prop *nv = ocl_prop_find("CL_DEVICE_PCI_BUS_ID_NV");
    assert_true(ocl_prop_legal(nv, OCL_V(3, 0), "cl_khr_icd cl_nv_device_attribute_query", true));
    assert_false(ocl_prop_legal(nv, OCL_V(3, 0), "cl_khr_icd", true));

    /* An unparsable version counts as 1.0: core 1.0 queries only. */
    assert_true(ocl_prop_legal(ocl_prop_find("CL_DEVICE_MAX_COMPUTE_UNITS"), 0, "", false));
    assert_false(ocl_prop_legal(ocl_prop_find("CL_DEVICE_LINKER_AVAILABLE"), 0, "", false));
}

/* ---- decoding, through a fake clGetDeviceInfo ---- */

static struct {
    cl_int err;          /* answer with this error */
    const void *value;   /* else these bytes */
    size_t size;
    int calls;
} fake;

static cl_int CL_API_CALL fake_get_device_info(cl_device_id d, cl_device_info param, size_t sz, void *val,
                                               size_t *ret)
{
    (void)d;
    (void)param;
    fake.calls++;
    if (fake.err != CL_SUCCESS)
        return fake.err;
    if (ret)
        *ret = fake.size;
    if (val) {
        if (sz < fake.size)
            return CL_INVALID_VALUE;
        memcpy(val, fake.value, fake.size);
    }
    return CL_SUCCESS;
}

static json_object *decode(const char *prop, const void *value, size_t size, cl_int err)
{
    static struct clapi api;
    api.clGetDeviceInfo = fake_get_device_info;
    struct ocl_query_ctx q = {.api = &api};
    fake.err = err;
    fake.value = value;
    fake.size = size;
    fake.calls = 0;
    const struct ocl_prop *p = ocl_prop_find(prop);
    assert_non_null(p);
    return ocl_query_prop(&q, p, NULL, (cl_device_id)&api);
}

static void assert_json(json_object *v, const char *expected)
{
    const char *got = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    if (strcmp(got, expected) != 0)
        fail_msg("got %s, expected %s", got, expected);
    json_object_put(v);
}

static void test_decode_scalars(void **state)
{
    (void)state;
    cl_uint u = 82;
    assert_json(decode("CL_DEVICE_MAX_COMPUTE_UNITS", &u, sizeof(u), CL_SUCCESS), "82");
    assert_int_equal(fake.calls, 1); /* the common path is one call */
    cl_ulong big = 0xfffffffffffffff0ull;
    assert_json(decode("CL_DEVICE_GLOBAL_MEM_SIZE", &big, sizeof(big), CL_SUCCESS), "18446744073709551600");
    cl_bool b = CL_TRUE;
    assert_json(decode("CL_DEVICE_AVAILABLE", &b, sizeof(b), CL_SUCCESS), "true");
    static const char ctl[] = "Fake\001GPU";
    assert_json(decode("CL_DEVICE_NAME", ctl, sizeof(ctl), CL_SUCCESS), "\"Fake?GPU\"");
    static const char unterminated[13] = {'n', 'o', ' ', 't', 'e', 'r', 'm', 'i', 'n', 'a', 't', 'o', 'r'};
    assert_json(decode("CL_DEVICE_NAME", unterminated, sizeof(unterminated), CL_SUCCESS), "\"no terminator\"");
    cl_version v = CL_MAKE_VERSION(3, 0, 12);
    assert_json(decode("CL_DEVICE_NUMERIC_VERSION", &v, sizeof(v), CL_SUCCESS), "\"3.0.12\"");
    cl_uint ip = (12u << 22) | (55u << 14) | 8u;
    assert_json(decode("CL_DEVICE_IP_VERSION_INTEL", &ip, sizeof(ip), CL_SUCCESS), "\"12.55.8\"");
}

static void test_decode_bits_and_enums(void **state)
{
    (void)state;
    cl_device_type t = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT;
    assert_json(decode("CL_DEVICE_TYPE", &t, sizeof(t), CL_SUCCESS), "[\"CL_DEVICE_TYPE_DEFAULT\",\"CL_DEVICE_TYPE_GPU\"]");
    cl_device_fp_config fp = CL_FP_DENORM | CL_FP_FMA | ((cl_ulong)1 << 40);
    assert_json(decode("CL_DEVICE_SINGLE_FP_CONFIG", &fp, sizeof(fp), CL_SUCCESS),
                "[\"CL_FP_DENORM\",\"CL_FP_FMA\",\"0x10000000000\"]");
    cl_device_fp_config none = 0;
    assert_json(decode("CL_DEVICE_SINGLE_FP_CONFIG", &none, sizeof(none), CL_SUCCESS), "[]");
    cl_uint cache = CL_READ_WRITE_CACHE;
    assert_json(decode("CL_DEVICE_GLOBAL_MEM_CACHE_TYPE", &cache, sizeof(cache), CL_SUCCESS), "\"CL_READ_WRITE_CACHE\"");
    cl_uint odd = 7;
    assert_json(decode("CL_DEVICE_LOCAL_MEM_TYPE", &odd, sizeof(odd), CL_SUCCESS), "\"0x7\"");
    cl_device_partition_property parts[] = {CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS, 0};
    assert_json(decode("CL_DEVICE_PARTITION_PROPERTIES", parts, sizeof(parts), CL_SUCCESS),
                "[\"CL_DEVICE_PARTITION_EQUALLY\",\"CL_DEVICE_PARTITION_BY_COUNTS\"]");
    assert_json(decode("CL_DEVICE_PARTITION_TYPE", parts, 0, CL_SUCCESS), "[]");
}

static void test_decode_structures(void **state)
{
    (void)state;
    size_t sizes[3] = {1024, 1024, 64};
    assert_json(decode("CL_DEVICE_MAX_WORK_ITEM_SIZES", sizes, sizeof(sizes), CL_SUCCESS), "[1024,1024,64]");
    cl_name_version nv[2];
    memset(nv, 0, sizeof(nv));
    nv[0].version = CL_MAKE_VERSION(1, 0, 0);
    strcpy(nv[0].name, "cl_khr_icd");
    nv[1].version = CL_MAKE_VERSION(2, 1, 0);
    strcpy(nv[1].name, "cl_khr_spir");
    assert_json(decode("CL_DEVICE_EXTENSIONS_WITH_VERSION", nv, sizeof(nv), CL_SUCCESS),
                "[{\"name\":\"cl_khr_icd\",\"version\":\"1.0.0\"},{\"name\":\"cl_khr_spir\",\"version\":\"2.1.0\"}]");
    unsigned char uuid[16];
    for (int i = 0; i < 16; i++)
        uuid[i] = (unsigned char)(0xf0 + i);
    assert_json(decode("CL_DEVICE_UUID_KHR", uuid, sizeof(uuid), CL_SUCCESS),
                "\"f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff\"");
    assert_json(decode("CL_DEVICE_LUID_KHR", uuid, 8, CL_SUCCESS), "\"f0f1f2f3f4f5f6f7\"");
    cl_uint bus[4] = {0x10000, 0x3b, 2, 1};
    assert_json(decode("CL_DEVICE_PCI_BUS_INFO_KHR", bus, sizeof(bus), CL_SUCCESS),
                "{\"domain\":65536,\"bus\":59,\"device\":2,\"function\":1}");
    unsigned char topo[24] = {1, 0, 0, 0};
    topo[21] = (unsigned char)(signed char)-125; /* bus 0x83 stored as a negative cl_char */
    topo[22] = 0x1f;
    topo[23] = 7;
    assert_json(decode("CL_DEVICE_TOPOLOGY_AMD", topo, sizeof(topo), CL_SUCCESS),
                "{\"type\":\"PCIe\",\"bus\":131,\"device\":31,\"function\":7}");
    topo[0] = 2;
    assert_json(decode("CL_DEVICE_TOPOLOGY_AMD", topo, sizeof(topo), CL_SUCCESS), "{\"type\":2}");
}

static void test_decode_errors_are_structured(void **state)
{
    (void)state;
    assert_json(decode("CL_DEVICE_MAX_COMPUTE_UNITS", NULL, 0, CL_INVALID_VALUE),
                "{\"error\":\"CL_INVALID_VALUE\",\"code\":-30}");
    assert_int_equal(fake.calls, 2); /* value, then size: both refused */
    unsigned char three[3] = {1, 2, 3};
    assert_json(decode("CL_DEVICE_MAX_COMPUTE_UNITS", three, sizeof(three), CL_SUCCESS),
                "{\"error\":\"unexpected value size 3\",\"code\":null}");
    assert_json(decode("CL_DEVICE_UUID_KHR", three, sizeof(three), CL_SUCCESS),
                "{\"error\":\"unexpected value size 3\",\"code\":null}");
    assert_json(decode("CL_DEVICE_EXTENSIONS_WITH_VERSION", three, sizeof(three), CL_SUCCESS),
                "{\"error\":\"unexpected value size 3\",\"code\":null}");
    assert_json(decode("CL_DEVICE_MAX_COMPUTE_UNITS", NULL, 0, -9999),
                "{\"error\":\"CL_UNKNOWN_ERROR_-9999\",\"code\":-9999}");
}

static void test_decode_long_values(void **state)
{
    (void)state;
    size_t n = 10000;
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, 'x', n);
    s[n] = '\0';
    json_object *v = decode("CL_DEVICE_EXTENSIONS", s, n + 1, CL_SUCCESS);
    assert_int_equal(fake.calls, 3); /* too long for the stack buffer: value, size, value */
    assert_true(json_object_is_type(v, json_type_string));
    assert_int_equal(json_object_get_string_len(v), (int)n);
    json_object_put(v);
    free(s);
}

/* ---- PCI address from decoded properties ---- */

static const char *address_of(const char *props_json, const char **source)
{
    static char buf[64];
    json_object *p = json_tokener_parse(props_json);
    assert_non_null(p);
    int rc = ocl_device_pci_address(p, buf, sizeof(buf), source);
    json_object_put(p);
    return rc == 0 ? buf : NULL;
}

static void test_pci_address_sources_in_order(void **state)
{
    (void)state;
    const char *src;
    assert_string_equal(address_of("{\"CL_DEVICE_PCI_BUS_INFO_KHR\":{\"domain\":1,\"bus\":2,\"device\":3,\"function\":4},"
                                   "\"CL_DEVICE_PCI_BUS_ID_NV\":9,\"CL_DEVICE_PCI_SLOT_ID_NV\":0}",
                                   &src),
                        "0001:02:03.4");
    assert_string_equal(src, "cl_khr_pci_bus_info");
    assert_string_equal(address_of("{\"CL_DEVICE_PCI_BUS_INFO_KHR\":{\"error\":\"CL_INVALID_VALUE\",\"code\":-30},"
                                   "\"CL_DEVICE_TOPOLOGY_AMD\":{\"type\":\"PCIe\",\"bus\":131,\"device\":0,\"function\":1}}",
                                   &src),
                        "0000:83:00.1");
    assert_string_equal(src, "amd_topology");
    /* NVIDIA: slot = device << 3 | function; the domain query refused by old drivers means domain 0 */
    assert_string_equal(address_of("{\"CL_DEVICE_PCI_BUS_ID_NV\":65,\"CL_DEVICE_PCI_SLOT_ID_NV\":11,"
                                   "\"CL_DEVICE_PCI_DOMAIN_ID_NV\":{\"error\":\"CL_INVALID_VALUE\",\"code\":-30}}",
                                   &src),
                        "0000:41:01.3");
    assert_string_equal(src, "nvidia_attribute_query");
    assert_string_equal(address_of("{\"CL_DEVICE_PCI_BUS_ID_NV\":1,\"CL_DEVICE_PCI_SLOT_ID_NV\":0,"
                                   "\"CL_DEVICE_PCI_DOMAIN_ID_NV\":2}",
                                   &src),
                        "0002:01:00.0");
    /* out-of-range KHR fields are not an address: fall through to nothing */
    assert_null(address_of("{\"CL_DEVICE_PCI_BUS_INFO_KHR\":{\"domain\":0,\"bus\":300,\"device\":0,\"function\":0}}",
                           &src));
    assert_null(src);
    assert_null(address_of("{\"CL_DEVICE_TOPOLOGY_AMD\":{\"type\":2}}", &src));
    assert_null(address_of("{\"CL_DEVICE_PCI_BUS_ID_NV\":1}", &src));
    assert_null(address_of("{}", &src));
}

/* ---- the schema describes exactly the table ---- */

static const char *schema_def_for(enum ocl_type t)
{
    switch (t) {
    case OCL_T_STR: return "#/$defs/opencl_v_string";
    case OCL_T_NUM: return "#/$defs/opencl_v_number";
    case OCL_T_BOOL: return "#/$defs/opencl_v_bool";
    case OCL_T_BITS: return "#/$defs/opencl_v_names";
    case OCL_T_PARTITION: return "#/$defs/opencl_v_names";
    case OCL_T_ENUM: return "#/$defs/opencl_v_name";
    case OCL_T_NUMS: return "#/$defs/opencl_v_numbers";
    case OCL_T_VERSION: return "#/$defs/opencl_v_version";
    case OCL_T_INTEL_IP: return "#/$defs/opencl_v_version";
    case OCL_T_NAMEVER: return "#/$defs/opencl_v_name_versions";
    case OCL_T_UUID: return "#/$defs/opencl_v_uuid";
    case OCL_T_LUID: return "#/$defs/opencl_v_luid";
    case OCL_T_PCI_BUS: return "#/$defs/opencl_v_pci_bus";
    case OCL_T_AMD_TOPO: return "#/$defs/opencl_v_amd_topology";
    case OCL_T_PLATFORM: return "#/$defs/opencl_v_index";
    case OCL_T_DEVICE: return "#/$defs/opencl_v_parent";
    }
    return "?";
}

static void check_schema_map(json_object *map, const struct ocl_prop *table, size_t n)
{
    assert_non_null(map);
    assert_int_equal((size_t)json_object_object_length(map), n);
    for (size_t i = 0; i < n; i++) {
        json_object *e = NULL;
        if (!json_object_object_get_ex(map, table[i].name, &e))
            fail_msg("schema lacks %s", table[i].name);
        const char *ref = json_object_get_string(json_object_object_get(e, "$ref"));
        if (!ref || strcmp(ref, schema_def_for(table[i].type)) != 0)
            fail_msg("schema types %s as %s, the table as %s", table[i].name, ref ? ref : "nothing",
                     schema_def_for(table[i].type));
    }
}

static void test_schema_matches_table(void **state)
{
    (void)state;
    const char *path = getenv("GPUCHECKUP_SCHEMA");
    assert_non_null(path);
    json_object *schema = json_object_from_file(path);
    assert_non_null(schema);
    json_object *defs = json_object_object_get(schema, "$defs");
    check_schema_map(json_object_object_get(json_object_object_get(defs, "opencl_platform_properties"), "properties"),
                     ocl_platform_props, ocl_n_platform_props);
    check_schema_map(json_object_object_get(json_object_object_get(defs, "opencl_device_properties"), "properties"),
                     ocl_device_props, ocl_n_device_props);
    json_object_put(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_rows_are_well_formed),
        cmocka_unit_test(test_names_are_unique),
        cmocka_unit_test(test_shared_ids_are_exclusive),
        cmocka_unit_test(test_the_issue_queries_are_in_the_table),
        cmocka_unit_test(test_parse_version),
        cmocka_unit_test(test_legality_by_version_and_extension),
        cmocka_unit_test(test_decode_scalars),
        cmocka_unit_test(test_decode_bits_and_enums),
        cmocka_unit_test(test_decode_structures),
        cmocka_unit_test(test_decode_errors_are_structured),
        cmocka_unit_test(test_decode_long_values),
        cmocka_unit_test(test_pci_address_sources_in_order),
        cmocka_unit_test(test_schema_matches_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
