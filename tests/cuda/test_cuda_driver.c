/* test_cuda_driver.c: unit tests of the driver-API part's parsers (file-name versions, PCI bus ids). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"

static void test_file_version(void **state)
{
    (void)state;
    static const struct {
        const char *name, *version;
    } cases[] = {
        {"libcuda.so.580.159.04", "580.159.04"}, {"libcuda.so.550.54.14", "550.54.14"},
        {"libcuda.so.1", NULL},                  {"libcuda.so", NULL},
        {"libcuda.so.", NULL},                   {"libcuda.so.580..04", NULL},
        {"libcuda.so.580.", NULL},               {"libcuda.so..580", NULL},
        {"libcuda.so.580.159.04.bak", NULL},     {"libnvidia-ml.so.580.159.04", NULL},
        {NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *v = cuda_driver_file_version(cases[i].name);
        if (cases[i].version) {
            assert_non_null(v);
            assert_string_equal(v, cases[i].version);
        } else if (v) {
            fail_msg("%s gave %s", cases[i].name, v);
        }
        free(v);
    }
}

static void test_busid(void **state)
{
    (void)state;
    char out[24];
    assert_int_equal(cuda_driver_normalize_busid("00000000:00:06.0", out, sizeof(out)), 0);
    assert_string_equal(out, "0000:00:06.0");
    assert_int_equal(cuda_driver_normalize_busid("0000:1A:00.0", out, sizeof(out)), 0);
    assert_string_equal(out, "0000:1a:00.0");
    assert_int_equal(cuda_driver_normalize_busid("00010000:01:00.0", out, sizeof(out)), 0);
    assert_string_equal(out, "10000:01:00.0");
    static const char *const bad[] = {"", "0000:00:06", "0000:100:00.0", "0000:00:20.0", "0000:00:06.8",
                                      "0000:00:06.0x", "GPU-1234", NULL};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (cuda_driver_normalize_busid(bad[i], out, sizeof(out)) == 0)
            fail_msg("accepted %s as %s", bad[i] ? bad[i] : "NULL", out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_version),
        cmocka_unit_test(test_busid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
