/* test_snapshot_redact.c: unit tests of the snapshot redaction (src/snapshot/snapshot_redact.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

static char *red(struct redactor *rd, const char *text)
{
    size_t n = 0;
    char *s = redact_text(rd, text, strlen(text), &n);
    assert_non_null(s);
    assert_int_equal(strlen(s), n);
    return s;
}

static void test_macs_are_stable_and_case_blind(void **state)
{
    (void)state;
    struct redactor *rd = redact_new();
    char *s = red(rd, "a DE:AD:be:ef:00:01 b de-ad-be-ef-00-01 c 12:34:56:78:9a:bc d de:ad:be:ef:00:01");
    assert_string_equal(s, "a 02:00:00:00:00:01 b 02:00:00:00:00:01 c 02:00:00:00:00:02 d 02:00:00:00:00:01");
    free(s);
    /* not addresses: all zeros, broadcast, a longer colon list, a PCI address */
    const char *keep = "00:00:00:00:00:00 ff:ff:ff:ff:ff:ff 11:22:33:44:55:66:77 0000:01:00.0 x1:22:33:44:55:66";
    s = red(rd, keep);
    assert_string_equal(s, keep);
    free(s);
    redact_free(rd);
}

static void test_hostnames_whole_words_and_first_label(void **state)
{
    (void)state;
    struct redactor *rd = redact_new();
    redact_learn(rd, "host", " box7.example.org\n");
    char *s = red(rd, "box7.example.org box7 box7name mybox7 /home/x/box7/y");
    assert_string_equal(s, "redacted-host-1 redacted-host-2 box7name mybox7 /home/x/redacted-host-2/y");
    free(s);
    redact_free(rd);
}

static void test_ignored_values(void **state)
{
    (void)state;
    struct redactor *rd = redact_new();
    redact_learn(rd, "host", "localhost");
    redact_learn(rd, "user", "root");
    redact_learn(rd, "user", "a");
    redact_learn(rd, "serial", "0000");
    redact_learn(rd, "serial", "To Be Filled By O.E.M.");
    redact_learn(rd, "nonsense", "secret");
    /* names that would rename what the replay reads (/proc/driver/nvidia, ID=debian) */
    redact_learn(rd, "user", "nvidia");
    redact_learn(rd, "host", "debian");
    const char *keep = "localhost root a 0000 To Be Filled By O.E.M. secret /proc/driver/nvidia ID=debian";
    char *s = red(rd, keep);
    assert_string_equal(s, keep);
    free(s);
    json_object *sum = redact_summary(rd);
    for (const char *k = "host"; k; k = strcmp(k, "host") == 0 ? "user" : strcmp(k, "user") == 0 ? "serial" : NULL)
        assert_int_equal(json_object_get_int(json_object_object_get(sum, k)), 0);
    json_object_put(sum);
    redact_free(rd);
}

static void test_files_teach_users_and_serials(void **state)
{
    (void)state;
    struct redactor *rd = redact_new();
    const char *group = "root:x:0:\nvideo:x:44:alice,bob9\nrender:x:105:\n";
    redact_learn_file(rd, "/etc/group", group, strlen(group));
    const char *serial = "PF3XK92L\n";
    redact_learn_file(rd, "/sys/devices/virtual/dmi/id/product_serial", serial, strlen(serial));
    const char *cmd = "ro home=/home/carol/x\n";
    redact_learn_file(rd, "/proc/cmdline", cmd, strlen(cmd));
    char *s = red(rd, "alice bob9 carol alicex xPF3XK92Lx root");
    /* users as whole words; serials wherever they are */
    assert_string_equal(s, "redacted-user-1 redacted-user-2 redacted-user-3 alicex xREDACTED-SERIAL-1x root");
    free(s);
    redact_free(rd);
}

static void test_report_uuids_and_serials(void **state)
{
    (void)state;
    struct redactor *rd = redact_new();
    json_object *doc = json_tokener_parse(
        "{\"host\": {\"hostname\": \"node3\", \"user\": {\"name\": \"dave\"}},"
        " \"cuda\": {\"devices\": [{\"uuid\": \"GPU-8f3c0e6a-1111-2222-3333-444455556666\", \"serial\": \"1324021012345\"}]},"
        " \"opencl\": {\"x\": {\"CL_DEVICE_UUID_KHR\": \"0a1b2c3d\"}, \"note\": \"seen GPU-aaaabbbbccccddddeeeeffff0000111122\"}}");
    assert_non_null(doc);
    redact_learn_report(rd, doc);
    const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_NOSLASHESCAPE);
    char *s = red(rd, text);
    const char *gone[] = {"node3", "dave", "8f3c0e6a", "1324021012345", "0a1b2c3d", "aaaabbbbcccc", NULL};
    for (size_t i = 0; gone[i]; i++)
        assert_null(strstr(s, gone[i]));
    /* the result is still JSON */
    json_object *again = json_tokener_parse(s);
    assert_non_null(again);
    json_object_put(again);
    free(s);
    json_object_put(doc);
    redact_free(rd);
}

static void test_binary_keeps_its_length(void **state)
{
    (void)state;
    struct redactor *rd = redact_new();
    redact_learn(rd, "user", "ann");
    redact_learn(rd, "serial", "SERIAL123456789012345");
    char buf[] = "x\0/home/ann/lib\0aa:bb:cc:dd:ee:ff\0SERIAL123456789012345\0end";
    size_t len = sizeof(buf) - 1;
    redact_binary(rd, buf, len);
    /* same offsets: every NUL where it was */
    assert_int_equal(buf[1], '\0');
    assert_memory_equal(buf + 2, "/home/red/lib", 13);       /* "redacted-user-1" cut to 3 */
    assert_memory_equal(buf + 16, "02:00:00:00:00:01", 17);  /* a MAC placeholder is as long */
    assert_memory_equal(buf + 34, "REDACTED-SERIAL-1xxxx", 21);
    assert_memory_equal(buf + 56, "end", 3);
    redact_free(rd);
}

static void test_pci_device_serial_number_zeroed(void **state)
{
    (void)state;
    unsigned char cfg[4096];
    memset(cfg, 0xab, sizeof(cfg));
    /* 0x100: AER (ID 1) -> 0x140: DSN (ID 3) -> end */
    const unsigned char aer[4] = {0x01, 0x00, 0x01, 0x14}; /* next 0x140 in bits 20-31 */
    memcpy(cfg + 0x100, aer, 4);
    const unsigned char dsn[4] = {0x03, 0x00, 0x01, 0x00};
    memcpy(cfg + 0x140, dsn, 4);
    redact_pci_config(cfg, sizeof(cfg));
    for (int i = 0; i < 8; i++)
        assert_int_equal(cfg[0x144 + i], 0);
    assert_int_equal(cfg[0x14c], 0xab); /* nothing past the serial */
    assert_int_equal(cfg[0x104], 0xab); /* AER's registers untouched */
    /* a capability pointing at itself, and a 64-byte config space: no loop, no overrun */
    const unsigned char loop[4] = {0x03, 0x00, 0x01, 0x10};
    memcpy(cfg + 0x100, loop, 4);
    redact_pci_config(cfg, sizeof(cfg));
    redact_pci_config(cfg, 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macs_are_stable_and_case_blind),
        cmocka_unit_test(test_hostnames_whole_words_and_first_label),
        cmocka_unit_test(test_ignored_values),
        cmocka_unit_test(test_files_teach_users_and_serials),
        cmocka_unit_test(test_report_uuids_and_serials),
        cmocka_unit_test(test_binary_keeps_its_length),
        cmocka_unit_test(test_pci_device_serial_number_zeroed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
