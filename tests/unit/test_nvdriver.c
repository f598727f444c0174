/* test_nvdriver.c: unit tests of the NVIDIA driver version -> CUDA version table (src/host/nvdriver.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nvdriver.h"

static void test_known_drivers(void **state)
{
    (void)state;
    /* what real drivers' cuDriverGetVersion answers: Debian's 535.261.03 (12020), the H100 fixture's 580.159.04 */
    assert_int_equal(nvdriver_cuda_version("535.261.03"), 12020);
    assert_int_equal(nvdriver_cuda_version("580.159.04"), 13000);
    assert_int_equal(nvdriver_cuda_version("550.90.07"), 12040);
    assert_int_equal(nvdriver_cuda_version("525.60.13"), 12000); /* the minimum itself */
    assert_int_equal(nvdriver_cuda_version("525.60.12"), 11080); /* one below it */
    assert_int_equal(nvdriver_cuda_version("470.256.02"), 11040);
    assert_int_equal(nvdriver_cuda_version("570.26"), 12080);    /* two parts */
    assert_int_equal(nvdriver_cuda_version("590.44.01"), 13000); /* newer than the table: its newest, a bound */
}

static void test_not_a_driver(void **state)
{
    (void)state;
    assert_int_equal(nvdriver_cuda_version(NULL), -1);
    assert_int_equal(nvdriver_cuda_version(""), -1);
    assert_int_equal(nvdriver_cuda_version("390.157"), -1); /* older than CUDA 11 */
    assert_int_equal(nvdriver_cuda_version("abc"), -1);
    assert_int_equal(nvdriver_cuda_version("12.2"), -1);
    assert_int_equal(nvdriver_cuda_version("535.x"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_drivers),
        cmocka_unit_test(test_not_a_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
