/* test_pci_unit.c: unit tests of the pci probe's pure logic: node access, parsers, classification. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pci_internal.h"
#include "compute_path.h"
#include "probe.h"
#include "report.h"
#include "results/result_pci.h"
#include "vendor.h"

static void test_mode_allows(void **state)
{
    (void)state;
    const gid_t render = 105, video = 44, mine = 1000;
    const gid_t in_render[] = {mine, render};
    const gid_t not_render[] = {mine, video};
    /* the usual render node: root:render 0660 */
    assert_true(pci_mode_allows(0660, 0, render, 1000, in_render, 2, 6));
    assert_false(pci_mode_allows(0660, 0, render, 1000, not_render, 2, 6));
    /* root may, whatever the mode */
    assert_true(pci_mode_allows(0000, 5, render, 0, NULL, 0, 6));
    /* the owner class applies to the owner even when the group class would allow */
    assert_false(pci_mode_allows(0060, 1000, render, 1000, in_render, 2, 6));
    assert_true(pci_mode_allows(0600, 1000, render, 1000, not_render, 2, 6));
    /* the group class applies to members even when "other" would allow */
    assert_false(pci_mode_allows(0606, 0, render, 1000, in_render, 2, 6));
    assert_true(pci_mode_allows(0606, 0, render, 1000, not_render, 2, 6));
    /* read-only is not enough */
    assert_false(pci_mode_allows(0640, 0, render, 1000, in_render, 2, 6));
    assert_true(pci_mode_allows(0640, 0, render, 1000, in_render, 2, 4));
    /* world-writable nvidia nodes */
    assert_true(pci_mode_allows(0666, 0, 0, 1000, not_render, 2, 6));
    /* no groups at all */
    assert_false(pci_mode_allows(0660, 0, render, 1000, NULL, 0, 6));
}

static void test_group_lookup(void **state)
{
    (void)state;
    const char *etc = "root:x:0:\nvideo:x:44:alice,bob\nrender:x:105:alice\n# junk\n::::\nbad:x:zz:\nlast:x:7";
    int listed = -2;
    char *n = pci_group_lookup(etc, 105, "alice", &listed);
    assert_string_equal(n, "render");
    assert_int_equal(listed, 1);
    free(n);
    n = pci_group_lookup(etc, 105, "carol", &listed);
    assert_string_equal(n, "render");
    assert_int_equal(listed, 0);
    free(n);
    n = pci_group_lookup(etc, 44, "bob", &listed);
    assert_string_equal(n, "video");
    assert_int_equal(listed, 1);
    free(n);
    n = pci_group_lookup(etc, 7, NULL, &listed);
    assert_string_equal(n, "last");
    assert_int_equal(listed, 0);
    free(n);
    assert_null(pci_group_lookup(etc, 4242, "alice", &listed));
    assert_int_equal(listed, -1);
    assert_null(pci_group_lookup("", 0, "alice", &listed));
}

static void test_link_speed(void **state)
{
    (void)state;
    assert_true(pci_parse_link_speed("8.0 GT/s PCIe") == 8.0);
    assert_true(pci_parse_link_speed("2.5 GT/s") == 2.5);
    assert_true(pci_parse_link_speed("16 GT/s") == 16.0);
    assert_true(pci_parse_link_speed("Unknown") < 0);
    assert_true(pci_parse_link_speed("Unknown speed") < 0);
    assert_true(pci_parse_link_speed("") < 0);
    assert_true(pci_parse_link_speed(NULL) < 0);
    assert_true(pci_parse_link_speed("8.0") < 0);
    assert_true(pci_parse_link_speed("nan GT/s") < 0);
    assert_true(pci_parse_link_speed("-5 GT/s") < 0);
    assert_true(pci_parse_link_speed("1e400 GT/s") < 0);
    assert_true(pci_speed_from_code(1) == 2.5);
    assert_true(pci_speed_from_code(4) == 16.0);
    assert_true(pci_speed_from_code(0) < 0);
    assert_true(pci_speed_from_code(15) < 0);
}

static void test_address(void **state)
{
    (void)state;
    unsigned d, b, s, f;
    assert_true(pci_parse_address("0000:01:00.0", &d, &b, &s, &f));
    assert_int_equal(b, 1);
    assert_true(pci_parse_address("10000:e1:1f.7", &d, &b, &s, &f));
    assert_int_equal(d, 0x10000);
    assert_int_equal(b, 0xe1);
    assert_int_equal(s, 0x1f);
    assert_int_equal(f, 7);
    assert_false(pci_parse_address("0000:01:20.0", &d, &b, &s, &f)); /* slot > 31 */
    assert_false(pci_parse_address("0000:01:00.8", &d, &b, &s, &f));
    assert_false(pci_parse_address("01:00.0", &d, &b, &s, &f));
    assert_false(pci_parse_address("0000:1:00.0", &d, &b, &s, &f));
    assert_false(pci_parse_address("0000:01:00.0x", &d, &b, &s, &f));
    assert_false(pci_parse_address("0000:0A:00.0", &d, &b, &s, &f)); /* not as the kernel writes it */
    assert_false(pci_parse_address("80000000:00:00.0", &d, &b, &s, &f));
    /* a wider domain with a leading zero is not the kernel's spelling (fuzz-pcisysfs round trip) */
    assert_false(pci_parse_address("00000:00:00.0", &d, &b, &s, &f));
    assert_false(pci_parse_address("0010000:e1:1f.7", &d, &b, &s, &f));
    assert_true(pci_parse_address("1000:00:00.0", &d, &b, &s, &f));
    assert_false(pci_parse_address("garbage", &d, &b, &s, &f));
    assert_false(pci_parse_address("", &d, &b, &s, &f));
}

static void test_classify(void **state)
{
    (void)state;
    assert_int_equal(pci_classify(0x0300, 0x10de, 0x2204), PCI_KIND_COMPUTE);
    assert_int_equal(pci_classify(0x0302, 0x10de, 0x20b0), PCI_KIND_COMPUTE);
    assert_int_equal(pci_classify(0x0380, 0x1002, 0x73bf), PCI_KIND_COMPUTE);
    assert_int_equal(pci_classify(0x0300, 0x1a03, 0x2000), PCI_KIND_DISPLAY);
    assert_int_equal(pci_classify(0x0300, 0x102b, 0x0522), PCI_KIND_DISPLAY);
    assert_int_equal(pci_classify(0x0300, 0x1af4, 0x1050), PCI_KIND_DISPLAY);
    assert_int_equal(pci_classify(0x0300, 0x1b36, 0x0100), PCI_KIND_DISPLAY);
    assert_int_equal(pci_classify(0x0300, 0x1234, 0x1111), PCI_KIND_DISPLAY);
    assert_int_equal(pci_classify(0x0300, 0x1af4, 0x1041), PCI_KIND_COMPUTE); /* not the virtio-gpu ID */
    assert_int_equal(pci_classify(0x1200, 0x1da3, 0x1000), PCI_KIND_ACCEL);
    assert_int_equal(pci_classify(0x0b40, 0x8086, 0x0b25), PCI_KIND_ACCEL);
    assert_int_equal(pci_classify(0x0200, 0x10de, 0x1234), PCI_KIND_NONE);
    assert_int_equal(pci_classify(0x0b00, 0x8086, 0x1234), PCI_KIND_NONE);
    assert_int_equal(pci_classify(-1, 0x10de, 0x2204), PCI_KIND_NONE);
    assert_string_equal(pci_kind_name(PCI_KIND_COMPUTE), "compute-gpu");
    assert_string_equal(pci_kind_name(PCI_KIND_DISPLAY), "display-only");
    assert_string_equal(pci_kind_name(PCI_KIND_ACCEL), "accelerator");
    assert_null(pci_kind_name(PCI_KIND_NONE));
}

static void test_nvidia_versions(void **state)
{
    (void)state;
    int open = -2;
    char *v = vendor_nvidia_parse_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 "
                                       "09:35:42 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
                                       &open);
    assert_string_equal(v, "550.90.07");
    assert_int_equal(open, 0);
    free(v);
    v = vendor_nvidia_parse_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.183.01  Release "
                                 "Build  (dvs-builder@U16-I3-B03-4-3)  Thu May 30 2024\n",
                                 &open);
    assert_string_equal(v, "535.183.01");
    assert_int_equal(open, 1);
    free(v);
    assert_null(vendor_nvidia_parse_version("GCC version: 12.2.0\n", &open));
    assert_int_equal(open, -1);
    assert_null(vendor_nvidia_parse_version("NVRM version: garbage x86_64 1. .2 1..2\n", &open));
    assert_null(vendor_nvidia_parse_version(NULL, &open));

    v = pci_nvidia_lib_version("libcuda.so.550.90.07");
    assert_string_equal(v, "550.90.07");
    free(v);
    v = pci_nvidia_lib_version("libnvidia-opencl.so.418.56");
    assert_string_equal(v, "418.56");
    free(v);
    v = pci_nvidia_lib_version("libnvidia-ml.so.535.183.01");
    assert_string_equal(v, "535.183.01");
    free(v);
    assert_null(pci_nvidia_lib_version("libcuda.so.1"));
    assert_null(pci_nvidia_lib_version("libcuda.so"));
    assert_null(pci_nvidia_lib_version("libcudart.so.12.2.140"));
    assert_null(pci_nvidia_lib_version("libnvidia-ml.so.550.90.07.bak"));
    assert_null(pci_nvidia_lib_version("libcuda.so.550..07"));
}

static void test_proc_modules(void **state)
{
    (void)state;
    const char *text = "nvidia_uvm 1437696 0 - Live 0x0000000000000000 (POE)\n"
                       "nvidia_drm 77824 3 - Live 0x0000000000000000 (POE)\n"
                       "nvidia 56823808 45 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\n"
                       "amdgpu_x 1 2 - Live 0x0\n";
    int64_t rc = -2;
    assert_true(pci_modules_has(text, "nvidia", &rc));
    assert_int_equal(rc, 45);
    assert_true(pci_modules_has(text, "nvidia_uvm", &rc));
    assert_int_equal(rc, 0);
    assert_false(pci_modules_has(text, "amdgpu", &rc)); /* a prefix is not a match */
    assert_false(pci_modules_has(text, "nouveau", &rc));
    assert_int_equal(rc, -1);
    assert_true(pci_modules_has("xe", "xe", &rc) == false);
    assert_int_equal(pci_module_index("nvidia"), 0);
    assert_int_equal(pci_module_index("xe"), PCI_N_MODULES - 1);
    assert_int_equal(pci_module_index("nope"), -1);
    size_t n = 0;
    while (pci_module_names[n])
        n++;
    assert_int_equal(n, PCI_N_MODULES);
}

/* The NVIDIA module's files, blacklists and kernel parameters (pci_nvkmod.c), and /etc/wsl.conf (pci_wsl.c). */
static void test_bar_parsers(void **state)
{
    (void)state;
    uint64_t size[6] = {0}, flags[6] = {0}, mask[6] = {0};
    /* an Arc A770's resource file as the kernel prints it: BAR 0 16 MiB, BAR 2 256 MiB prefetchable, then unused */
    const char *res = "0x00000000a3000000 0x00000000a3ffffff 0x0000000000040200\n"
                      "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
                      "0x0000006000000000 0x000000600fffffff 0x000000000014220c\n";
    assert_int_equal(pci_bar_parse_resource(res, size, flags, 6), 3);
    assert_true(size[0] == 16u * 1024 * 1024 && size[1] == 0 && size[2] == 256u * 1024 * 1024);
    assert_true(flags[2] == 0x14220c);
    assert_int_equal(pci_bar_parse_resource("garbage\n0x10 0x0f 0x0\n", size, flags, 6), 2);
    assert_true(size[0] == 0 && size[1] == 0); /* no numbers; an end before its start */
    /* the Resizable BAR capability at 0x100: BAR 2, 256 MiB to 16 GiB */
    unsigned char cfg[0x110] = {0};
    cfg[0x100] = 0x15;
    cfg[0x102] = 0x01;
    uint32_t cap = 0x7f00u << 4, ctrl = 2u | 1u << 5 | 8u << 8;
    memcpy(cfg + 0x104, &cap, 4);
    memcpy(cfg + 0x108, &ctrl, 4);
    assert_int_equal(pci_bar_rebar_config(cfg, sizeof(cfg), mask, 6), 1);
    assert_true(mask[2] == 0x7f00 && mask[0] == 0);
    /* cut short, and a capability list that loops to itself: nothing, and it ends */
    memset(mask, 0, sizeof(mask));
    assert_int_equal(pci_bar_rebar_config(cfg, 0x106, mask, 6), 0);
    uint32_t loop = 0x0001u | 0x100u << 20;
    memcpy(cfg + 0x100, &loop, 4);
    assert_int_equal(pci_bar_rebar_config(cfg, sizeof(cfg), mask, 6), 0);
}

static void test_module_and_wsl_text(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        bool core;
    } names[] = {{"nvidia", true},          {"nvidia-current", true}, {"nvidia-tesla-535", true},
                 {"nvidia_current", true},  {"nvidia-uvm", false},    {"nvidia-current-modeset", false},
                 {"nvidia_drm", false},     {"nvidiafb", false},      {"nouveau", false}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (pci_nvkmod_is_core_name(names[i].name, strlen(names[i].name)) != names[i].core)
            fail_msg("%s", names[i].name);
    char **v = NULL;
    size_t n = 0;
    pci_nvkmod_scan_dep("kernel/drivers/video/nvidiafb.ko: x\nupdates/dkms/nvidia-current.ko.xz:\n"
                        "updates/dkms/nvidia-current-uvm.ko.xz: updates/dkms/nvidia-current.ko.xz\n", &v, &n);
    assert_int_equal(n, 1);
    assert_string_equal(v[0], "updates/dkms/nvidia-current.ko.xz");
    free(v[0]);
    free(v);
    v = NULL;
    n = 0;
    pci_nvkmod_scan_modprobe("/etc/modprobe.d/a.conf",
                             "# blacklist nvidia\nblacklist nouveau\nalias nvidia nvidia-current\n"
                             "install nvidia modprobe -i nvidia-current\n\t blacklist nvidia-current \r\n"
                             "install nvidia /bin/false\n", &v, &n);
    pci_nvkmod_scan_cmdline("ro quiet module_blacklist=nouveau,nvidia_current\n", &v, &n);
    assert_int_equal(n, 3);
    assert_string_equal(v[0], "/etc/modprobe.d/a.conf:5: blacklist nvidia-current");
    assert_string_equal(v[1], "/etc/modprobe.d/a.conf:6: install nvidia /bin/false");
    assert_string_equal(v[2], "/proc/cmdline: module_blacklist=nvidia_current");
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);

    assert_true(pci_wsl_conf_false("[boot]\nsystemd=true\n[GPU]\n Enabled = False ; off\n", "gpu", "enabled"));
    assert_true(pci_wsl_conf_false("[gpu]\nenabled=0\n", "gpu", "enabled"));
    assert_false(pci_wsl_conf_false("[gpu]\nenabled=true\n", "gpu", "enabled"));
    assert_false(pci_wsl_conf_false("[boot]\nenabled=false\n", "gpu", "enabled"));
    assert_false(pci_wsl_conf_false("[gpu]\n# enabled=false\n", "gpu", "enabled"));
    assert_false(pci_wsl_conf_false("", "gpu", "enabled"));
}

static void test_labels_emit(void *arg, const char *group, const char *name, const char *value)
{
    char *out = arg;
    size_t used = strlen(out);
    snprintf(out + used, 512 - used, "%s.%s=%s;", group, name, value);
}

/* Issue 38: the probe's own readers of its section (node labels, the doctor's bus GPUs and subject vendor)
 * read the typed result: a compute GPU and an accelerator count, a display-only adapter does not; a device
 * node is its GPU's vendor's; a node pointing at a node pointing back ends. */
static void test_readers_use_the_typed_result(void **state)
{
    (void)state;
    static const char *doc =
        "{\"devices\":[{\"address\":\"0000:01:00.0\",\"vendor_id\":\"10de\",\"kind\":\"compute-gpu\"},"
        "{\"address\":\"0000:02:00.0\",\"vendor_id\":\"102b\",\"kind\":\"display-only\"},"
        "{\"address\":\"0000:03:00.0\",\"vendor_id\":\"8086\",\"kind\":\"accelerator\"}],"
        "\"nodes\":[{\"path\":\"/dev/dri/renderD128\",\"device\":\"0000:01:00.0\"},"
        "{\"path\":\"/dev/a\",\"device\":\"/dev/b\"},{\"path\":\"/dev/b\",\"device\":\"/dev/a\"}]}";
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "pci");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    assert_int_equal(report_section_adopt(s, &result_pci_ops), 0);
    report_section_set_status(s, REPORT_STATUS_OK, NULL);
    const struct probe *p = probe_find("pci");
    char labels[512] = "";
    p->node_labels(s, test_labels_emit, labels);
    assert_string_equal(labels, "gpu.present=true;gpu.count=2;gpu.vendor=mixed;");
    struct bus_gpu bus[4];
    assert_int_equal(p->bus_gpus(s, bus, 4), 1);
    assert_string_equal(bus[0].pci_address, "0000:01:00.0");
    assert_string_equal(bus[0].vendor, "nvidia");
    const char *text = NULL;
    assert_string_equal(p->subject_vendor(s, "/dev/dri/renderD128", &text), "nvidia");
    assert_string_equal(p->subject_vendor(s, "0000:03:00.0", &text), "intel");
    assert_null(p->subject_vendor(s, "/dev/a", &text));
    report_free(r);
    /* a section without its result (a test's, an allocation failure) still gives labels, from its data */
    r = report_new();
    s = report_add_section(r, "pci");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    labels[0] = '\0';
    p->node_labels(s, test_labels_emit, labels);
    assert_string_equal(labels, "gpu.present=true;gpu.count=2;gpu.vendor=mixed;");
    assert_string_equal(p->subject_vendor(s, "/dev/dri/renderD128", &text), "nvidia");
    report_free(r);
}

/* result_pci prints devices, nodes, bus_visible and source (to_json) where the data had them, typed members
 * from the struct; members of other shapes print as they were (issue 38: byte for byte). */
static void test_typed_members_print_in_place(void **state)
{
    (void)state;
    static const char *doc =
        "{\"source\":\"sysfs\",\"notes\":[\"n\"],\"devices\":[{\"address\":\"0000:01:00.0\",\"kind\":\"Compute-GPU\","
        "\"driver\":\"nvidia\",\"drm\":[1,\"card0\"],\"numa_node\":0,\"link\":{\"speed\":\"16\"}},7,"
        "{\"address\":null,\"kind\":\"display-only\",\"drm\":[\"card1\"],\"class\":3}],\"modules\":{},"
        "\"nodes\":[{\"path\":\"nvidia0\",\"present\":\"yes\",\"uid\":-1,\"gid\":44,\"mode\":\"0660\"}],"
        "\"bus_visible\":true}";
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "pci");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    assert_int_equal(report_section_adopt(s, &result_pci_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), doc);
    json_object_put(back);
    report_section_set_status(s, REPORT_STATUS_OK, NULL);
    struct result_pci *p = (struct result_pci *)result_pci_get(r);
    assert_int_equal(p->have, RESULT_PCI_HAVE_DEVICES | RESULT_PCI_HAVE_NODES | RESULT_PCI_HAVE_BUS_VISIBLE |
                                  RESULT_PCI_HAVE_SOURCE);
    assert_null(json_object_object_get(s->data, "devices")); /* its place only */
    free(p->devs[0].driver);
    p->devs[0].driver = strdup("vfio-pci");
    p->nodes[0].gid = 45;
    back = report_section_json(s);
    const char *j = json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN);
    assert_non_null(strstr(j, "\"driver\":\"vfio-pci\",\"drm\":[1,\"card0\"]"));
    assert_non_null(strstr(j, "\"uid\":-1,\"gid\":45,"));
    json_object_put(back);
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_allows),     cmocka_unit_test(test_group_lookup),
        cmocka_unit_test(test_link_speed),      cmocka_unit_test(test_address),
        cmocka_unit_test(test_classify),        cmocka_unit_test(test_nvidia_versions),
        cmocka_unit_test(test_proc_modules),    cmocka_unit_test(test_module_and_wsl_text),
        cmocka_unit_test(test_bar_parsers),     cmocka_unit_test(test_readers_use_the_typed_result),
        cmocka_unit_test(test_typed_members_print_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
