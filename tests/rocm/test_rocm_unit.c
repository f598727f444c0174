/* test_rocm_unit.c: unit tests of the rocm probe: the KFD properties parser, gfx names, the support table, node opening, findings' words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonget.h"
#include "rocm_internal.h"

/* A node in the shape the kernel prints (node_show(): every member a "name value" line), its values made
 * for an MI250X GCD (device 0x7408 = 29704, gfx90a, at 0000:c1:00.0: location_id 0xc100 = 49408), with the
 * 64-bit hive_id and unique_id a real node has (values beyond int64 are not read: none of ours). */
static const char mi250x[] = "cpu_cores_count 0\nsimd_count 440\nmem_banks_count 1\ncaches_count 253\n"
                             "gfx_target_version 90010\nvendor_id 4098\ndevice_id 29704\nlocation_id 49408\n"
                             "domain 0\ndrm_render_minor 136\nhive_id 12345678901234567890\nunique_id 18446744073709551615\n";

static void test_parse_real_node(void **state)
{
    (void)state;
    struct rocm_kfd_props p;
    assert_int_equal(rocm_kfd_parse(mi250x, sizeof(mi250x) - 1, &p), 8);
    assert_int_equal(p.gfx_target_version, 90010);
    assert_int_equal(p.simd_count, 440);
    assert_int_equal(p.cpu_cores_count, 0);
    assert_int_equal(p.drm_render_minor, 136);
    char b[24];
    assert_string_equal(rocm_gfx_name(p.gfx_target_version, b, sizeof(b)), "gfx90a");
    assert_string_equal(rocm_kfd_pci_address(&p, b, sizeof(b)), "0000:c1:00.0");
}

static void test_parse_garbage(void **state)
{
    (void)state;
    struct rocm_kfd_props p;
    /* no newline at the end, a negative, hex, a value too long, a key prefix, NUL bytes, a bare key */
    static const char bad[] = "simd_count -4\ngfx_target_version 0x1\nlocation_id 99999999999999999999999\n"
                              "max_simd_count 3\ndomain\n\0domain 7\nvendor_id 4098";
    assert_int_equal(rocm_kfd_parse(bad, sizeof(bad) - 1, &p), 1);
    assert_int_equal(p.simd_count, -1);
    assert_int_equal(p.gfx_target_version, -1);
    assert_int_equal(p.location_id, -1);
    assert_int_equal(p.domain, -1); /* "\0domain 7" is not the key "domain" */
    assert_int_equal(p.vendor_id, 4098);
    assert_int_equal(rocm_kfd_parse(NULL, 0, &p), 0);
    char b[24];
    assert_null(rocm_kfd_pci_address(&p, b, sizeof(b)));
}

static void test_gfx_names(void **state)
{
    (void)state;
    char b[16];
    static const struct {
        int64_t v;
        const char *name;
    } cases[] = {{110000, "gfx1100"}, {100300, "gfx1030"}, {100301, "gfx1031"}, {90402, "gfx942"}, {90010, "gfx90a"},
                 {90012, "gfx90c"}, {110501, "gfx1151"}, {120001, "gfx1201"}, {80003, "gfx803"}, {0, NULL},
                 {-1, NULL}, {91000, NULL}, {90016, NULL}, {1000000, NULL}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *n = rocm_gfx_name(cases[i].v, b, sizeof(b));
        if (cases[i].name)
            assert_string_equal(n, cases[i].name);
        else
            assert_null(n);
    }
}

static void test_support_table(void **state)
{
    (void)state;
    assert_int_equal(rocm_gfx_find("gfx1100")->support, ROCM_SUPPORTED);
    assert_int_equal(rocm_gfx_find("gfx906")->support, ROCM_DEPRECATED);
    assert_string_equal(rocm_gfx_find("gfx1031")->override, "10.3.0");
    assert_true(rocm_gfx_find("gfx1036")->igpu);
    assert_null(rocm_gfx_find("gfx9999"));
    assert_null(rocm_gfx_find(NULL));
    assert_string_equal(rocm_support_name(ROCM_UNKNOWN), "unknown");
}

/* A tree with a group file and, when KFD, a /dev/kfd: opened as this machine's files (a unit test's
 * context is PROBE_MODE_LIVE). */
static char *make_tree(bool kfd)
{
    char *dir = strdup("/tmp/gc-rocm-unit-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char p[256];
    snprintf(p, sizeof(p), "%s/etc", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/etc/group", dir);
    FILE *f = fopen(p, "w");
    fprintf(f, "nobody:x:65534:\nrender:x:%u:alice,bob\n", (unsigned)getegid()); /* the gid new files get */
    fclose(f);
    snprintf(p, sizeof(p), "%s/dev", dir);
    mkdir(p, 0755);
    if (kfd) {
        snprintf(p, sizeof(p), "%s/dev/kfd", dir);
        fclose(fopen(p, "w"));
    }
    return dir;
}

static void rm_tree(char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static void test_nodes_open(void **state)
{
    (void)state;
    for (int kfd = 0; kfd < 2; kfd++) {
        char *dir = make_tree(kfd);
        struct hostfs fs;
        assert_int_equal(hostfs_open(&fs, dir), 0);
        struct probe_ctx ctx = {.fs = &fs, .mode = PROBE_MODE_LIVE};
        json_object *arr = rocm_nodes_open(&ctx, NULL);
        assert_int_equal(json_object_array_length(arr), 1);
        json_object *o = json_object_array_get_idx(arr, 0);
        assert_string_equal(jsonget_str(o, "path"), "/dev/kfd");
        if (kfd) {
            assert_int_equal(jsonget_tri(o, "opened"), GC_TRI_YES);
            assert_string_equal(jsonget_str(o, "group"), "render"); /* the file's group, named by the tree's /etc/group */
            assert_int_equal(jsonget_tri(o, "user_in_group"), GC_TRI_YES);
        } else {
            assert_int_equal(jsonget_tri(o, "opened"), GC_TRI_NO);
            assert_string_equal(jsonget_str(o, "errno"), "ENOENT");
            assert_null(jsonget_str(o, "group"));
        }
        json_object_put(arr);
        ctx.mode = PROBE_MODE_TREE; /* not this machine's files: nothing opened */
        assert_null(rocm_nodes_open(&ctx, NULL));
        hostfs_close(&fs);
        rm_tree(dir);
    }
}

/* A section's data for an amdgpu-bound RX 7900 XTX whose hsa_init failed with 0x1008, and /dev/kfd as O says. */
static json_object *data_oor(json_object *o)
{
    json_object *d = json_tokener_parse(
        "{\"kernel\": {\"kfd_topology\": true, \"amdgpu_initstate\": \"live\"},"
        " \"nodes\": [{\"node\": 1, \"gpu\": true, \"gfx\": \"gfx1100\", \"support\": \"supported\", \"pci_address\": \"0000:03:00.0\"}],"
        " \"environment\": {}, \"libraries\": {\"hsa\": \"/opt/rocm/lib/libhsa-runtime64.so.1\", \"hip\": null},"
        " \"runtime\": {\"status\": \"ok\", \"hsa\": {\"status\": \"init-failed\", \"init\": {\"code\": 4104,"
        " \"text\": \"HSA_STATUS_ERROR_OUT_OF_RESOURCES\"}}}}");
    json_object *nodes = json_object_new_array();
    json_object_array_add(nodes, o);
    json_object_object_add(d, "device_nodes", nodes);
    return d;
}

static void test_findings_name_the_errno(void **state)
{
    (void)state;
    json_object *pci = json_tokener_parse("[{\"address\": \"0000:03:00.0\", \"vendor_id\": \"1002\", \"kind\": \"compute-gpu\","
                                          " \"driver\": \"amdgpu\"}]");
    json_object *kfd = json_tokener_parse("{\"path\": \"/dev/kfd\", \"opened\": false, \"errno\": \"EACCES\", \"error\": "
                                          "\"Permission denied\", \"group\": \"render\", \"user_in_group\": false, "
                                          "\"listed_in_group\": true}");
    json_object *d = data_oor(kfd);
    struct report *r = report_new();
    struct hostfs fs = {0};
    struct probe_ctx ctx = {.fs = &fs, .report = r};
    json_object *pci_data = json_object_new_object();
    json_object_object_add(pci_data, "devices", pci);
    struct result_pci *facts = result_pci_read(pci_data); /* the pci facts as the pci probe's result reads them */
    assert_non_null(facts);
    rocm_findings(&ctx, d, facts);
    result_pci_ops.free(facts);
    json_object_put(pci_data);
    const struct report_finding *open = report_find_finding(r, "rocm.node-open-failed", "/dev/kfd");
    assert_non_null(open);
    assert_non_null(strstr(open->message, "EACCES (Permission denied): its group is render, and this process is not in it "
                                          "(/etc/group lists the user: log in again)"));
    const struct report_finding *init = report_find_finding(r, "rocm.hsa-init-failed", NULL);
    assert_non_null(init);
    assert_non_null(strstr(init->message, "(0x1008); /dev/kfd: EACCES"));
    assert_null(report_find_finding(r, "rocm.no-device", NULL));
    report_free(r);
    json_object_put(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_real_node), cmocka_unit_test(test_parse_garbage), cmocka_unit_test(test_gfx_names),
        cmocka_unit_test(test_support_table), cmocka_unit_test(test_nodes_open), cmocka_unit_test(test_findings_name_the_errno),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
