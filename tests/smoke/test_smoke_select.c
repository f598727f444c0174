/* test_smoke_select.c: unit tests of the smoke device selection, and of the probe reading the opencl section. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hostfs.h"
#include "probe.h"
#include "results/result_smoke.h"
#include "results/result_opencl.h"
#include "report.h"
#include "cldevices.h"

/* Two platforms as the opencl probe lays them out: a GPU with a PCI address and a CPU on the first,
 * nothing on the second, a GPU on the third. */
static const char fake_platforms[] =
    "[{\"index\": 0, \"name\": \"Vendor A\", \"devices\": ["
    "   {\"index\": 0, \"name\": \"Big GPU\", \"type\": [\"GPU\"], \"pci_address\": \"0000:65:00.0\","
    "    \"properties\": {\"CL_DEVICE_EXTENSIONS\": \"cl_khr_fp64\"}},"
    "   {\"index\": 1, \"name\": \"Some CPU\", \"type\": [\"CPU\"], \"pci_address\": null}]},"
    " {\"index\": 1, \"name\": \"Empty\", \"devices\": []},"
    " {\"index\": 2, \"name\": \"Vendor B\", \"devices\": ["
    "   {\"index\": 0, \"name\": \"Small\\u0001GPU\", \"type\": [\"GPU\", \"DEFAULT\"]}]}]";

static void load(struct cldev_inventory *inv)
{
    json_object *p = json_tokener_parse(fake_platforms);
    assert_non_null(p);
    assert_int_equal(cldev_inventory_from_platforms(inv, p), 0);
    json_object_put(p);
}

static void test_inventory_from_opencl_shape(void **state)
{
    (void)state;
    struct cldev_inventory inv;
    load(&inv);
    assert_int_equal(inv.n_platforms, 3);
    assert_int_equal(inv.n_targets, 3);
    assert_int_equal(inv.targets[0].platform, 0);
    assert_int_equal(inv.targets[0].device, 0);
    assert_string_equal(inv.targets[0].name, "Big GPU");
    assert_string_equal(inv.targets[0].pci_address, "0000:65:00.0");
    assert_true(inv.targets[0].is_gpu);
    assert_false(inv.targets[1].is_gpu);
    assert_null(inv.targets[1].pci_address);
    assert_int_equal(inv.targets[2].platform, 2);
    assert_string_equal(inv.targets[2].name, "Small?GPU"); /* sanitised */
    assert_true(inv.targets[2].is_gpu);
    for (size_t i = 0; i < inv.n_targets; i++)
        assert_true(inv.targets[i].run);

    char *s = cldev_target_subject(&inv.targets[0]);
    assert_string_equal(s, "0000:65:00.0");
    free(s);
    s = cldev_target_subject(&inv.targets[1]);
    assert_string_equal(s, "0:1 Some CPU");
    free(s);
    cldev_inventory_free(&inv);
}

static void test_inventory_rejects_other_shapes(void **state)
{
    (void)state;
    static const char *const bad[] = {"{}", "[1]", "[{\"index\": 0}]", "[{\"devices\": [3]}]", "\"x\""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct cldev_inventory inv;
        json_object *p = json_tokener_parse(bad[i]);
        assert_int_equal(cldev_inventory_from_platforms(&inv, p), -1);
        assert_int_equal(inv.n_targets, 0);
        json_object_put(p);
    }
}

static void test_select_device_and_gpu(void **state)
{
    (void)state;
    struct cldev_inventory inv;
    char *err = NULL;

    load(&inv);
    assert_int_equal(cldev_inventory_select(&inv, 0, -1, false, &err), 0);
    assert_int_equal(inv.n_targets, 2);
    cldev_inventory_free(&inv);

    load(&inv);
    assert_int_equal(cldev_inventory_select(&inv, 0, 1, false, &err), 0);
    assert_int_equal(inv.n_targets, 1);
    assert_string_equal(inv.targets[0].name, "Some CPU");
    cldev_inventory_free(&inv);

    load(&inv); /* a platform without devices is a valid choice: nothing to test */
    assert_int_equal(cldev_inventory_select(&inv, 1, -1, false, &err), 0);
    assert_int_equal(inv.n_targets, 0);
    cldev_inventory_free(&inv);

    load(&inv);
    assert_int_equal(cldev_inventory_select(&inv, 7, -1, false, &err), -1);
    assert_non_null(strstr(err, "--device 7"));
    assert_non_null(strstr(err, "3 platforms"));
    free(err);
    cldev_inventory_free(&inv);

    load(&inv);
    assert_int_equal(cldev_inventory_select(&inv, 2, 4, false, &err), -1);
    assert_non_null(strstr(err, "--device 2:4"));
    assert_non_null(strstr(err, "1 device)"));
    free(err);
    cldev_inventory_free(&inv);

    load(&inv); /* --smoke=gpu: the CPU stays listed, as skipped */
    assert_int_equal(cldev_inventory_select(&inv, -1, -1, true, &err), 0);
    assert_int_equal(inv.n_targets, 3);
    assert_true(inv.targets[0].run);
    assert_false(inv.targets[1].run);
    assert_non_null(strstr(inv.targets[1].skip_reason, "not a GPU"));
    assert_true(inv.targets[2].run);
    cldev_inventory_free(&inv);
}

/* The probe takes its device list from an opencl section that is there and ok (not from its own
 * enumeration): device 0:3 is in the section only, so the child, which asks the real loader (PoCL,
 * one device), finds it gone, and the finding's subject is the section's PCI address. */
static void test_probe_uses_opencl_section(void **state)
{
    (void)state;
    char cache[] = "/tmp/gc-smoke-cache-XXXXXX";
    assert_non_null(mkdtemp(cache));
    setenv("POCL_CACHE_DIR", cache, 1);
    setenv("POCL_DEVICES", "pthread", 1);

    char *argv[] = {"gpucheckup", "smoke", "--smoke-size", "8", NULL};
    struct cli_options o;
    char err[256];
    assert_int_equal(cli_parse(4, argv, &o, err, sizeof(err)), 0);
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, NULL), 0);
    struct report *r = report_new();
    struct report_section *cl = report_add_section(r, "opencl");
    json_object_object_add(cl->data, "platforms",
                           json_tokener_parse("[{\"index\": 0, \"name\": \"P\", \"devices\": [{\"index\": 3, "
                                              "\"name\": \"Ghost\", \"type\": [\"GPU\"], \"pci_address\": "
                                              "\"0000:03:00.0\"}]}]"));
    report_section_set_status(cl, REPORT_STATUS_OK, NULL);
    /* read into the opencl probe's typed result, as the probe itself publishes it (issue 38) */
    assert_int_equal(report_section_adopt(cl, &result_opencl_ops), 0);
    struct report_section *sec = report_add_section(r, "smoke");
    struct probe_ctx ctx = {.opts = &o, .fs = &fs, .report = r, .timeout_ms = 20000};
    const struct probe *p = probe_find("smoke");
    assert_non_null(p);
    assert_int_equal(p->run(&ctx, sec), PROBE_DONE);
    assert_int_equal(sec->status, REPORT_STATUS_OK);

    /* The typed result, as the doctor reads it ... */
    const struct result_smoke *res = result_smoke_get(r);
    assert_non_null(res);
    assert_string_equal(res->source, "opencl");
    assert_int_equal(res->n_devs, 1);
    assert_int_equal(res->devs[0].status, RESULT_SMOKE_ERROR);
    assert_int_equal(res->devs[0].gpu, GC_TRI_YES);
    assert_string_equal(res->devs[0].pci_address, "0000:03:00.0");
    assert_int_equal(res->devs[0].device_index, 3);
    /* ... and its JSON, made at the edge. */
    json_object *data = report_section_json(sec);
    json_object *v = NULL;
    assert_true(json_object_object_get_ex(data, "source", &v));
    assert_string_equal(json_object_get_string(v), "opencl");
    json_object *devs = json_object_object_get(data, "devices");
    assert_int_equal(json_object_array_length(devs), 1);
    json_object *d = json_object_array_get_idx(devs, 0);
    assert_string_equal(json_object_get_string(json_object_object_get(d, "status")), "error");
    assert_string_equal(json_object_get_string(json_object_object_get(d, "pci_address")), "0000:03:00.0");
    assert_int_equal(json_object_get_int(json_object_object_get(d, "device_index")), 3);
    assert_non_null(strstr(json_object_get_string(json_object_object_get(d, "detail")), "gone"));
    json_object_put(data);
    struct report_finding *f = report_find_finding(r, "smoke.run-failed", "0000:03:00.0");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "Ghost"));

    report_free(r);
    hostfs_close(&fs);
    cli_options_free(&o);
    rmdir(cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inventory_from_opencl_shape),
        cmocka_unit_test(test_inventory_rejects_other_shapes),
        cmocka_unit_test(test_select_device_and_gpu),
        cmocka_unit_test(test_probe_uses_opencl_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
