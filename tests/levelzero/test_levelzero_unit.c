/* test_levelzero_unit.c: the levelzero probe's parser of debugfs guc_info, on text as i915 and xe print it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "levelzero_internal.h"

/* i915 (intel_guc_load_status, then intel_uc_fw_dump) on a DG2 whose file was found and runs. */
static const char i915_running[] = "GuC firmware: i915/dg2_guc_70.bin\n"
                                   "\tstatus: RUNNING\n"
                                   "\tversion: found 70.20.0\n"
                                   "\tuCode: 389568 bytes\n"
                                   "\tRSA: 384 bytes\n"
                                   "\nGuC status 0x8002f0ec:\n";

static void test_i915_running(void **state)
{
    (void)state;
    struct levelzero_guc_info g;
    assert_int_equal(levelzero_guc_parse(i915_running, sizeof(i915_running) - 1, &g), 0);
    assert_string_equal(g.firmware, "i915/dg2_guc_70.bin");
    assert_string_equal(g.wanted, "");
    assert_string_equal(g.status, "RUNNING");
    assert_false(levelzero_guc_failed(g.status));
}

static void test_fallback_and_failures(void **state)
{
    (void)state;
    /* the kernel fell back from the file it wanted, which is missing, to none */
    static const char missing[] = "GuC firmware: i915/mtl_guc_70.bin\n"
                                  "GuC firmware wanted: i915/mtl_guc_70.6.4.bin\n"
                                  "\tstatus: MISSING\n"
                                  "\tversion: wanted 70.6.4, found 0.0.0\n";
    struct levelzero_guc_info g;
    assert_int_equal(levelzero_guc_parse(missing, sizeof(missing) - 1, &g), 0);
    assert_string_equal(g.firmware, "i915/mtl_guc_70.bin");
    assert_string_equal(g.wanted, "i915/mtl_guc_70.6.4.bin");
    assert_string_equal(g.status, "MISSING");
    assert_true(levelzero_guc_failed(g.status));
    /* xe's xe_uc_fw_print: two words in the status */
    static const char xe[] = "GuC firmware: xe/lnl_guc_70.bin\n\tstatus: LOAD FAIL\n\twanted release: 70.29.2\n";
    assert_int_equal(levelzero_guc_parse(xe, sizeof(xe) - 1, &g), 0);
    assert_string_equal(g.status, "LOAD FAIL");
    assert_true(levelzero_guc_failed(g.status));
    assert_false(levelzero_guc_failed("DISABLED"));
    assert_false(levelzero_guc_failed("N/A"));
    assert_false(levelzero_guc_failed(NULL));
}

static void test_nothing_to_read(void **state)
{
    (void)state;
    struct levelzero_guc_info g;
    static const char disabled[] = "GuC disabled\n";
    assert_int_equal(levelzero_guc_parse(disabled, sizeof(disabled) - 1, &g), -1);
    /* a firmware line without its status, cut short, or a status of another block */
    static const char cut[] = "GuC firmware: i915/tgl_guc_70.bin\n";
    assert_int_equal(levelzero_guc_parse(cut, sizeof(cut) - 1, &g), -1);
    static const char other[] = "GuC firmware: i915/tgl_guc_70.bin\nHuC firmware: i915/tgl_huc.bin\n\tstatus: RUNNING\n";
    assert_int_equal(levelzero_guc_parse(other, sizeof(other) - 1, &g), -1);
    assert_int_equal(levelzero_guc_parse("", 0, &g), -1);
    /* control bytes are not copied out; no NUL at the end is needed */
    static const char ctl[] = "GuC firmware: i915/a\x1b[0m.bin\n\tstatus: RUNNING";
    assert_int_equal(levelzero_guc_parse(ctl, sizeof(ctl) - 1, &g), 0);
    assert_null(strchr(g.firmware, '\x1b'));
    assert_string_equal(g.status, "RUNNING");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_i915_running),
        cmocka_unit_test(test_fallback_and_failures),
        cmocka_unit_test(test_nothing_to_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
