/* test_frameworks_parse.c: unit tests of the pin checks (METADATA version specifiers against installed versions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "frameworks_parse.h"

static void test_pin_eval(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *installed;
        enum fw_pin_state want;
    } cases[] = {
        /* real pins: torch 2.15.0's and 2.9.0's METADATA */
        {"==9.26.0.51; platform_system == \"Linux\"", "9.26.0.51", FW_PIN_OK},
        {"==9.26.0.51; platform_system == \"Linux\"", "9.26.0.5", FW_PIN_OTHER},
        {"==9.26.0.51; platform_system == \"Linux\"", "9.10.2.21", FW_PIN_OTHER},
        {"[cublas,cudart,cufft]==13.2.2; platform_system == \"Linux\"", "13.2.2", FW_PIN_OK},
        {"<14,>=13.0.3; platform_system == \"Linux\" and python_version < \"3.15\"", "13.0.3", FW_PIN_OK},
        {"<14,>=13.0.3; platform_system == \"Linux\"", "13.2.1", FW_PIN_OK},
        {"<14,>=13.0.3; platform_system == \"Linux\"", "14.0.0", FW_PIN_OTHER},
        {"<14,>=13.0.3; platform_system == \"Linux\"", "12.9.0", FW_PIN_OTHER},
        {"<14,>=13.0.3", "13.0.3rc1", FW_PIN_OTHER}, /* a pre-release is below its release */
        {"~=3.9.0; platform_system == \"Linux\"", "3.9.4", FW_PIN_OK},
        {"~=3.9.0", "3.10.0", FW_PIN_OTHER},
        {"~=3.9", "3.12", FW_PIN_OK},
        {"==12.*", "12.8.93", FW_PIN_OK},
        {"==12.*", "13.0.0", FW_PIN_OTHER},
        {"==12.8.*", "12.80.1", FW_PIN_OTHER},
        {"!=2.0.0,>=1.5", "2.0.0", FW_PIN_OTHER},
        {">1.0,<=2.0", "2.0", FW_PIN_OK},
        {"==2.15.0", "2.15.0+cu132", FW_PIN_OK}, /* a local part is ignored */
        {"==2.15", "2.15.0", FW_PIN_OK},          /* missing numbers are 0 */
        {"===1.0", "1.0", FW_PIN_OK},
        {"===1.0", "1.0.0", FW_PIN_OTHER},
        {" (>=1.0)", "1.1", FW_PIN_OK},
        {"", "1.0", FW_PIN_OK}, /* no specifier: any version */
        {">=0.13.0; extra == \"optree\"", "0.1", FW_PIN_OPTIONAL},
        {"; extra=='cuda'", "0.1", FW_PIN_OPTIONAL},
        {">=1.0; python_version < \"3.15\"", "2.0", FW_PIN_OK}, /* "extra" only as a word */
        {"==abc", "1.0", FW_PIN_UNKNOWN},
        {"1.0", "1.0", FW_PIN_UNKNOWN}, /* no operator */
        {"=>1.0", "1.0", FW_PIN_UNKNOWN},
        {"[cublas", "1.0", FW_PIN_UNKNOWN},
        {">=1.0", "", FW_PIN_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        enum fw_pin_state got = fw_pin_eval(cases[i].spec, cases[i].installed);
        if (got != cases[i].want)
            fail_msg("fw_pin_eval(\"%s\", \"%s\") = %d, want %d", cases[i].spec, cases[i].installed, (int)got,
                     (int)cases[i].want);
    }
}

static void test_pin_req(void **state)
{
    (void)state;
    char out[64];
    fw_pin_req("[cublas, cudart]==13.2.2; platform_system == \"Linux\"", out, sizeof(out));
    assert_string_equal(out, "[cublas,cudart]==13.2.2");
    fw_pin_req(" (>=1.0, <2)", out, sizeof(out));
    assert_string_equal(out, ">=1.0,<2");
    fw_pin_req("==1.0", out, 4);
    assert_string_equal(out, "==1");
    fw_pin_req("", out, sizeof(out));
    assert_string_equal(out, "");
}

static void test_marker_python(void **state)
{
    (void)state;
    const char *spec = "<14,>=13.0.3; platform_system == \"Linux\" and python_version < \"3.15\"";
    assert_true(fw_marker_python(spec, "3.11"));
    assert_false(fw_marker_python(spec, "3.15"));
    assert_false(fw_marker_python(spec, "3.16"));
    assert_true(fw_marker_python(spec, ""));     /* the site's Python unknown: in force */
    assert_true(fw_marker_python("==1.0", "3.15")); /* no marker */
    assert_true(fw_marker_python(">=1; python_version < '3.9' or platform_system == 'Linux'", "3.11"));
    assert_false(fw_marker_python(">=1; python_version >= '3.12'", "3.11"));
    assert_true(fw_marker_python(">=1; python_version >= '3.12'", "3.12"));
    assert_true(fw_marker_python(">=1; python_version < \"3.1", "3.11")); /* unterminated: in force */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pin_eval),
        cmocka_unit_test(test_pin_req),
        cmocka_unit_test(test_marker_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
