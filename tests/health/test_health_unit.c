/* test_health_unit.c: the health probe's /dev/kmsg record parser and message classifier, on messages as the kernel and NVIDIA's driver print them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health_internal.h"
#include "hostfs.h"

struct seen {
    size_t n;
    struct health_record recs[8];
    char msgs[8][256];
    char devs[8][64];
};

static void collect(const struct health_record *rec, void *arg)
{
    struct seen *s = arg;
    if (s->n >= 8)
        return;
    s->recs[s->n] = *rec;
    snprintf(s->msgs[s->n], sizeof(s->msgs[0]), "%.*s", (int)rec->msg_len, rec->msg);
    snprintf(s->devs[s->n], sizeof(s->devs[0]), "%.*s", (int)rec->device_len, rec->device ? rec->device : "");
    s->n++;
}

/* The example of the kernel's Documentation/ABI/testing/dev-kmsg, and a record without continuation. */
static void test_parse_records(void **state)
{
    (void)state;
    static const char buf[] = "7,160,424069,-;pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)\n"
                              " SUBSYSTEM=acpi\n"
                              " DEVICE=+acpi:PNP0A03:00\n"
                              "6,339,5140900,-;NET: Registered protocol family 10\n"
                              "30,340,5690716,-;udevd[80]: starting version 181\n"
                              "not a record\n"
                              "3,341,6000000,c,caller=T1;nvidia 0000:65:00.0: PCIe Bus Error: severity=Corrected\n"
                              " DEVICE=+pci:0000:65:00.0";
    struct seen s = {0};
    struct health_kmsg_stats st;
    health_kmsg_parse(buf, sizeof(buf) - 1, 100, collect, &s, &st);
    assert_int_equal(st.records, 4);
    assert_int_equal(st.skipped, 1);
    assert_false(st.capped);
    assert_int_equal(s.recs[0].level, 7);
    assert_int_equal(s.recs[0].seq, 160);
    assert_int_equal(s.recs[0].usec, 424069);
    assert_string_equal(s.msgs[0], "pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7] (ignored)");
    assert_string_equal(s.devs[0], "+acpi:PNP0A03:00");
    assert_int_equal(s.recs[2].level, 6); /* 30 = daemon facility (3) * 8 + info (6) */
    assert_string_equal(s.devs[1], "");
    assert_string_equal(s.devs[3], "+pci:0000:65:00.0"); /* the last line has no newline */
    /* the cap */
    health_kmsg_parse(buf, sizeof(buf) - 1, 2, collect, &s, &st);
    assert_int_equal(st.records, 2);
    assert_true(st.capped);
}

static void test_parse_bad_headers(void **state)
{
    (void)state;
    static const char *const bad[] = {",1,2,-;x", "1,,2,-;x", "1,2,3;x", "1,2,3,-x", "99999999999999999999,1,2,-;x",
                                      "a,1,2,-;x", " DEVICE=+pci:0000:00:00.0", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct seen s = {0};
        struct health_kmsg_stats st;
        health_kmsg_parse(bad[i], strlen(bad[i]), 100, collect, &s, &st);
        assert_int_equal(st.records, 0);
    }
}

static struct health_match classify(const char *msg, const char *device)
{
    struct health_match m;
    int rc = health_classify(msg, strlen(msg), device, device ? strlen(device) : 0, &m);
    if (rc < 0)
        m.kind = HEALTH_K_NONE;
    return m;
}

static void test_nvidia_messages(void **state)
{
    (void)state;
    struct health_match m = classify("NVRM: Xid (PCI:0000:65:00): 79, pid=2456, name=python3, GPU has fallen off the bus.", NULL);
    assert_int_equal(m.kind, HEALTH_K_XID);
    assert_int_equal(m.xid, 79);
    assert_int_equal(m.family, HEALTH_F_NVIDIA);
    assert_string_equal(m.addr, "0000:65:00.0");
    assert_true(m.addr_no_func);
    /* an older driver's form, no "PCI:" */
    m = classify("NVRM: Xid (0000:01:00): 31, Ch 0000000b, engmask 00000120, intr 10000000", NULL);
    assert_int_equal(m.xid, 31);
    assert_string_equal(m.addr, "0000:01:00.0");
    m = classify("NVRM: Xid (PCI:0000:CB:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp Exception", NULL);
    assert_int_equal(m.xid, 13);
    assert_string_equal(m.addr, "0000:cb:00.0");
    m = classify("NVRM: GPU 0000:65:00.0: GPU has fallen off the bus.", NULL);
    assert_int_equal(m.kind, HEALTH_K_OFF_BUS);
    assert_string_equal(m.addr, "0000:65:00.0");
    assert_false(m.addr_no_func);
    m = classify("NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x26:0xffff:1474)", NULL);
    assert_int_equal(m.kind, HEALTH_K_INIT_FAILED);
    assert_string_equal(m.addr, "0000:01:00.0");
    m = classify("NVRM: API mismatch: the client has the version 550.90.07, but", NULL);
    assert_int_equal(m.kind, HEALTH_K_API_MISMATCH);
    assert_string_equal(m.addr, "");
    m = classify("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024", NULL);
    assert_int_equal(m.kind, HEALTH_K_LOADED);
    assert_int_equal(classify("NVRM: GPU at PCI:0000:65:00: GPU-1b0e0f4b-2c8e-6f2e-93c1-3f1b0d6f0a11", NULL).kind, HEALTH_K_NONE);
    assert_int_equal(classify("NVRM: Xid (PCI:0000:65:00): -1, nothing", NULL).kind, HEALTH_K_NONE);
    /* the table: who is usually at fault */
    assert_int_equal(health_xid_find(13)->blame, HEALTH_B_APP);
    assert_int_equal(health_xid_find(31)->blame, HEALTH_B_APP);
    assert_int_equal(health_xid_find(43)->blame, HEALTH_B_APP);
    assert_int_equal(health_xid_find(48)->blame, HEALTH_B_GPU);
    assert_int_equal(health_xid_find(79)->blame, HEALTH_B_SYSTEM);
    assert_int_equal(health_xid_find(94)->blame, HEALTH_B_GPU);
    assert_true(health_xid_find(94)->repeat_only);
    assert_false(health_xid_find(48)->repeat_only);
    assert_null(health_xid_find(99999));
    /* Xid 154 back to no action needed is no event; to a reset, it is */
    assert_int_equal(classify("NVRM: Xid (PCI:0000:65:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)", NULL).kind,
                     HEALTH_K_NONE);
    assert_int_equal(classify("NVRM: Xid (PCI:0000:65:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)", NULL).xid,
                     154);
}

static void test_aer_messages(void **state)
{
    (void)state;
    /* the port's line names the source after "from": that is the device */
    struct health_match m = classify("pcieport 0000:64:00.0: AER: Uncorrected (Fatal) error message received from 0000:65:00.0",
                                     "+pci:0000:64:00.0");
    assert_int_equal(m.kind, HEALTH_K_AER_FATAL);
    assert_string_equal(m.addr, "0000:65:00.0");
    m = classify("pcieport 0000:00:01.0: AER: Multiple Corrected error message received from 0000:01:00.0", NULL);
    assert_int_equal(m.kind, HEALTH_K_AER_CORRECTED);
    assert_string_equal(m.addr, "0000:01:00.0");
    /* older kernels: "error received: ADDR" */
    m = classify("pcieport 0000:00:1c.0: AER: Uncorrected (Non-Fatal) error received: 0000:03:00.0", NULL);
    assert_int_equal(m.kind, HEALTH_K_AER_NONFATAL);
    assert_string_equal(m.addr, "0000:03:00.0");
    /* the device's own line, both spellings of the severity; DEVICE= wins over the text */
    m = classify("nvidia 0000:65:00.0: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Inaccessible, (Unregistered Agent ID)",
                 "+pci:0000:65:00.0");
    assert_int_equal(m.kind, HEALTH_K_AER_FATAL);
    assert_string_equal(m.addr, "0000:65:00.0");
    m = classify("pcieport 0000:00:01.1: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)", NULL);
    assert_int_equal(m.kind, HEALTH_K_AER_CORRECTED);
    assert_string_equal(m.addr, "0000:00:01.1");
    assert_int_equal(classify("pcieport 0000:64:00.0: AER: enabled with IRQ 40", NULL).kind, HEALTH_K_NONE);
}

static void test_drm_messages(void **state)
{
    (void)state;
    struct health_match m = classify("[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1723, emitted seq=1725", NULL);
    assert_int_equal(m.kind, HEALTH_K_HANG);
    assert_int_equal(m.family, HEALTH_F_AMDGPU);
    assert_string_equal(m.addr, "");
    m = classify("amdgpu 0000:03:00.0: amdgpu: GPU reset(2) succeeded!", "+pci:0000:03:00.0");
    assert_int_equal(m.kind, HEALTH_K_RESET);
    assert_string_equal(m.addr, "0000:03:00.0");
    m = classify("amdgpu 0000:03:00.0: Direct firmware load for amdgpu/gc_11_0_0_toc.bin failed with error -2", NULL);
    assert_int_equal(m.kind, HEALTH_K_FIRMWARE);
    assert_int_equal(m.family, HEALTH_F_AMDGPU);
    assert_string_equal(m.addr, "0000:03:00.0");
    m = classify("kfd kfd: amdgpu: TAHITI  not supported in kfd", NULL);
    assert_int_equal(m.kind, HEALTH_K_KFD);
    m = classify("[drm] Initialized amdgpu 3.57.0 20150101 for 0000:03:00.0 on minor 1", NULL);
    assert_int_equal(m.kind, HEALTH_K_LOADED);
    assert_int_equal(m.family, HEALTH_F_AMDGPU);
    m = classify("i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in Xorg [1234]", NULL);
    assert_int_equal(m.kind, HEALTH_K_HANG);
    assert_int_equal(m.family, HEALTH_F_I915);
    assert_string_equal(m.addr, "0000:00:02.0");
    m = classify("i915 0000:00:02.0: [drm] Resetting chip for stopped heartbeat on rcs0", NULL);
    assert_int_equal(m.kind, HEALTH_K_RESET);
    m = classify("xe 0000:03:00.0: [drm] GT0: GuC load failed: status = 0x400000A0", NULL);
    assert_int_equal(m.kind, HEALTH_K_FIRMWARE);
    assert_int_equal(m.family, HEALTH_F_XE);
    m = classify("i915 0000:00:02.0: [drm] *ERROR* GT0: GuC firmware i915/tgl_guc_70.bin: fetch failed -ENOENT", NULL);
    assert_int_equal(m.kind, HEALTH_K_FIRMWARE);
    /* not a GPU driver's: nothing */
    assert_int_equal(classify("usb 1-1: GPU HANG", NULL).kind, HEALTH_K_NONE);
    assert_int_equal(classify("Resetting chip", NULL).kind, HEALTH_K_NONE);
    assert_int_equal(classify("iwlwifi 0000:00:14.3: Direct firmware load for iwlwifi-so-a0-gf-a0-86.ucode failed with error -2", NULL).kind,
                     HEALTH_K_NONE);
    assert_int_equal(classify("systemd[1]: during ring timeout", NULL).kind, HEALTH_K_NONE);
    assert_int_equal(classify("amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, but soft recovered", NULL).kind, HEALTH_K_NONE);
}

/* hostfs_read_stream, the one door to /dev/kmsg: a regular file read whole or capped at a record's end, a
 * character device only under the live root, anything else refused. */
static void test_read_stream(void **state)
{
    (void)state;
    char dir[] = "/tmp/gc-health-XXXXXX", path[64], fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/kmsg", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("6,0,0,-;one\n SUBSYSTEM=pci\n6,1,5,-;two\n6,2,9,-;three\n", f);
    fclose(f);
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, dir), 0);
    char *buf = NULL;
    size_t len = 0, lost = 9;
    bool capped = true;
    assert_int_equal(hostfs_read_stream(&fs, "/kmsg", 0, &buf, &len, &capped, &lost), 0);
    assert_string_equal(buf, "6,0,0,-;one\n SUBSYSTEM=pci\n6,1,5,-;two\n6,2,9,-;three\n");
    assert_false(capped);
    assert_int_equal(lost, 0);
    free(buf);
    /* capped in the third record: the whole lines before it are kept */
    assert_int_equal(hostfs_read_stream(&fs, "/kmsg", 40, &buf, &len, &capped, &lost), 0);
    assert_true(capped);
    assert_string_equal(buf, "6,0,0,-;one\n SUBSYSTEM=pci\n6,1,5,-;two\n");
    assert_int_equal(len, strlen(buf));
    free(buf);
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(hostfs_read_stream(&fs, "/fifo", 0, &buf, &len, &capped, &lost), -EINVAL);
    assert_null(buf);
    assert_int_equal(hostfs_read_stream(&fs, "/none", 0, &buf, &len, &capped, &lost), -ENOENT);
    hostfs_close(&fs);
    /* a character device: read under the live root (/dev/null: nothing, at once), refused under another */
    assert_int_equal(hostfs_open(&fs, "/"), 0);
    assert_int_equal(hostfs_read_stream(&fs, "/dev/null", 0, &buf, &len, &capped, &lost), 0);
    assert_int_equal(len, 0);
    free(buf);
    hostfs_close(&fs);
    assert_int_equal(hostfs_open(&fs, "/dev"), 0);
    assert_int_equal(hostfs_read_stream(&fs, "/null", 0, &buf, &len, &capped, &lost), -EINVAL);
    hostfs_close(&fs);
    unlink(fifo);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_records), cmocka_unit_test(test_parse_bad_headers),
        cmocka_unit_test(test_nvidia_messages), cmocka_unit_test(test_aer_messages), cmocka_unit_test(test_drm_messages),
        cmocka_unit_test(test_read_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
