/* test_smoke_timer.c: unit tests of the smoke test's clock choice and of the devices' plausible peak. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "compute_timer.h"

/* 2 N^3 for the default N = 256. */
#define FLOPS_256 (2.0 * 256 * 256 * 256)

static void decide(double prof, double host, double flops, double peak, struct compute_timing *t)
{
    memset(t, 0x5a, sizeof(*t)); /* every field must be set */
    compute_timing_decide(prof, host, flops, peak, t);
}

/* PoCL on this machine: 3.09 ms by profiling, 3.14 ms on the host. */
static void test_profiling_fine(void **state)
{
    (void)state;
    struct compute_timing t;
    decide(3.09, 3.142, FLOPS_256, 1536, &t);
    assert_string_equal(t.timer, "profiling");
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_OK);
    assert_true(t.ms == 3.09);
    assert_true(fabs(t.gflops - FLOPS_256 / 3.09e6) < 1e-9);
    assert_false(t.above_peak);
    assert_false(t.blame_profiling);
    assert_null(compute_timer_why_name(t.why));
}

/* A short kernel: the host's time is mostly launch overhead, and that is fine. */
static void test_profiling_short_kernel_with_overhead_is_fine(void **state)
{
    (void)state;
    struct compute_timing t;
    decide(0.005, 0.120, 2.0, 1536, &t); /* N = 1 */
    assert_string_equal(t.timer, "profiling");
    assert_false(t.blame_profiling);
    decide(0.2, 4.9, 2.0 * 64 * 64 * 64, 1536, &t); /* 4.7 ms of overhead: PoCL on a busy 2-core VM */
    assert_string_equal(t.timer, "profiling");
    decide(0.2, 20.1, 2.0 * 64 * 64 * 64, 1536, &t); /* 19.9 ms: still under 20 ms */
    assert_string_equal(t.timer, "profiling");
}

static void test_profiling_missing(void **state)
{
    (void)state;
    struct compute_timing t;
    decide(NAN, 3.3, FLOPS_256, 1536, &t);
    assert_string_equal(t.timer, "host");
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_MISSING);
    assert_string_equal(compute_timer_why_name(t.why), "profiling-missing");
    assert_true(t.ms == 3.3);
    assert_true(fabs(t.gflops - FLOPS_256 / 3.3e6) < 1e-9);
    assert_true(t.blame_profiling);
    decide(-1.0, 3.3, FLOPS_256, 1536, &t);
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_MISSING);
}

/* rusticl 22.3: start 2 ns, end 3 ns, whatever the kernel. */
static void test_profiling_zero(void **state)
{
    (void)state;
    struct compute_timing t;
    decide(1e-6, 273.25, FLOPS_256, 6144, &t);
    assert_string_equal(t.timer, "host");
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_ZERO);
    assert_string_equal(compute_timer_why_name(t.why), "profiling-zero");
    assert_true(t.ms == 273.25);
    assert_true(t.gflops < 0.2);
    assert_true(t.blame_profiling);
    decide(0.0, 3.0, FLOPS_256, NAN, &t);
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_ZERO);
    assert_string_equal(t.timer, "host");
    /* A tiny product the host saw take under a millisecond: prefer the host, blame nobody. */
    decide(0.0, 0.09, 2.0, 6144, &t);
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_ZERO);
    assert_string_equal(t.timer, "host");
    assert_false(t.blame_profiling);
    /* ... unless the peak could not do the work in that time: rusticl at N = 64 on a fast host. */
    decide(1e-6, 0.09, 2.0 * 64 * 64 * 64, 6144, &t);
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_ZERO);
    assert_true(t.blame_profiling);
    /* 10 ns and more is a time. */
    decide(1e-5, 0.09, 2.0, 6144, &t);
    assert_string_equal(t.timer, "profiling");
}

static void test_profiling_longer_than_host(void **state)
{
    (void)state;
    struct compute_timing t;
    decide(6.6, 3.3, FLOPS_256, 1536, &t); /* twice the truth */
    assert_string_equal(t.timer, "host");
    decide(6.7, 5.2, FLOPS_256, 1536, &t); /* just over 1.25 x + 0.1 ms (6.6) */
    assert_string_equal(t.timer, "host");
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_LONGER);
    assert_string_equal(compute_timer_why_name(t.why), "profiling-longer-than-host");
    assert_true(t.blame_profiling);
    /* Two clocks may differ a little. */
    decide(3.4, 3.3, FLOPS_256, 1536, &t);
    assert_string_equal(t.timer, "profiling");
    decide(0.15, 0.05, 2.0, 1536, &t); /* within 0.1 ms */
    assert_string_equal(t.timer, "profiling");
}

static void test_profiling_shorter_than_host(void **state)
{
    (void)state;
    struct compute_timing t;
    decide(2.5, 25.0, 2.0 * 512 * 512 * 512, 1536, &t); /* a tenth of the truth */
    assert_string_equal(t.timer, "host");
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_SHORTER);
    assert_string_equal(compute_timer_why_name(t.why), "profiling-shorter-than-host");
    assert_true(t.ms == 25.0);
    assert_true(t.blame_profiling);
    /* More than 20 ms of difference but under half the host time: a launch on a busy host. */
    decide(30.0, 55.0, 2.0 * 512 * 512 * 512, 1536, &t);
    assert_string_equal(t.timer, "profiling");
}

static void test_profiling_above_peak(void **state)
{
    (void)state;
    struct compute_timing t;
    /* The profiled speed is impossible, the host's is not: the profiling clock is wrong. */
    decide(0.001, 0.9, FLOPS_256, 1536, &t); /* 33554 GFLOPS vs 37 */
    assert_string_equal(t.timer, "host");
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_ABOVE_PEAK);
    assert_false(t.above_peak);
    assert_true(t.gflops < 1536);
    assert_true(t.blame_profiling);
    /* Both clocks above the peak: the peak is what is wrong; no speed, nobody's clock blamed. */
    decide(3.2, 3.6, FLOPS_256, 1.024, &t);
    assert_string_equal(t.timer, "profiling");
    assert_int_equal(t.why, COMPUTE_TIMER_PROFILING_OK);
    assert_true(t.above_peak);
    assert_true(isnan(t.gflops));
    assert_false(t.blame_profiling);
    /* By the host clock, after a zero profile. */
    decide(1e-6, 3.6, FLOPS_256, 1.024, &t);
    assert_string_equal(t.timer, "host");
    assert_true(t.above_peak);
    assert_true(isnan(t.gflops));
    /* No peak known: no cap. */
    decide(3.2, 3.6, FLOPS_256, NAN, &t);
    assert_false(t.above_peak);
    assert_true(t.gflops > 0);
}

static void test_no_time(void **state)
{
    (void)state;
    struct compute_timing t;
    decide(NAN, NAN, FLOPS_256, 1536, &t);
    assert_null(t.timer);
    assert_int_equal(t.why, COMPUTE_TIMER_NO_TIME);
    assert_true(isnan(t.ms) && isnan(t.gflops));
    assert_false(t.blame_profiling);
    assert_false(t.above_peak);
    /* No host time, profiling readable: profiling, unchecked but for the peak. */
    decide(3.0, NAN, FLOPS_256, 1536, &t);
    assert_string_equal(t.timer, "profiling");
    decide(1e-6, NAN, FLOPS_256, 1536, &t);
    assert_null(t.timer);
}

static void test_why_names_round_trip(void **state)
{
    (void)state;
    for (int w = COMPUTE_TIMER_PROFILING_MISSING; w <= COMPUTE_TIMER_NO_TIME; w++) {
        const char *name = compute_timer_why_name((enum compute_timer_why)w);
        assert_non_null(name);
        assert_int_equal(compute_timer_why_parse(name), w);
        assert_non_null(compute_timer_why_text((enum compute_timer_why)w));
    }
    assert_int_equal(compute_timer_why_parse(NULL), COMPUTE_TIMER_PROFILING_OK);
    assert_int_equal(compute_timer_why_parse("no-such-reason"), COMPUTE_TIMER_PROFILING_OK);
}

static void test_peak_real_gpus_not_capped(void **state)
{
    (void)state;
    /* H100 SXM: 132 SMs at 1980 MHz, ~67 TFLOPS fp32 (132 x 1980 x 128 x 2); NVIDIA's OpenCL says
     * float width 1. */
    struct compute_peak_props h100 = {.cpu = false, .compute_units = 132, .clock_mhz = 1980, .float_width = 1, .host_cpus = 64};
    double p = compute_peak_gflops(&h100);
    assert_true(p >= 2 * 132 * 1980.0 * 128 * 2 / 1000);
    assert_true(fabs(p - 132 * 1980.0 * 512 * 2 / 1000) < 1e-6);
    /* RX 7900 XTX as AMD's OpenCL counts it (48 workgroup processors at 2500 MHz): 61 TFLOPS. */
    struct compute_peak_props navi31 = {.compute_units = 48, .clock_mhz = 2500, .float_width = 4};
    assert_true(compute_peak_gflops(&navi31) > 61400);
    /* A width above the fixed bound wins. */
    struct compute_peak_props wide = {.compute_units = 1, .clock_mhz = 1000, .float_width = 1024};
    assert_true(fabs(compute_peak_gflops(&wide) - 1024 * 2.0) < 1e-9);
}

static void test_peak_cpu_devices(void **state)
{
    (void)state;
    /* llvmpipe: 8 compute units at 300 MHz whatever the host, float width 1. */
    struct compute_peak_props lp = {.cpu = true, .compute_units = 8, .clock_mhz = 300, .float_width = 1, .host_cpus = 2};
    assert_true(fabs(compute_peak_gflops(&lp) - 8 * 6000.0 * 64 * 2 / 1000) < 1e-9);
    /* ... on a 64-CPU host it runs 64 threads. */
    lp.host_cpus = 64;
    assert_true(fabs(compute_peak_gflops(&lp) - 64 * 6000.0 * 64 * 2 / 1000) < 1e-9);
    /* PoCL on this machine: 2 units at 2445 MHz, width 8. */
    struct compute_peak_props pocl = {.cpu = true, .compute_units = 2, .clock_mhz = 2445, .float_width = 8, .host_cpus = 2};
    assert_true(fabs(compute_peak_gflops(&pocl) - 1536.0) < 1e-9);
    /* A reported clock above the floor is kept. */
    pocl.clock_mhz = 7000;
    assert_true(fabs(compute_peak_gflops(&pocl) - 2 * 7000.0 * 64 * 2 / 1000) < 1e-9);
}

static void test_peak_unknown(void **state)
{
    (void)state;
    /* zink (Mesa) reports 1 compute unit and answers no clock (0): nothing to judge by. */
    struct compute_peak_props zink = {.compute_units = 1, .clock_mhz = 0};
    assert_true(isnan(compute_peak_gflops(&zink)));
    struct compute_peak_props none = {.cpu = true, .compute_units = 0, .clock_mhz = 2000, .host_cpus = 8};
    assert_true(isnan(compute_peak_gflops(&none)));
    assert_true(isnan(compute_peak_gflops(NULL)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiling_fine),
        cmocka_unit_test(test_profiling_short_kernel_with_overhead_is_fine),
        cmocka_unit_test(test_profiling_missing),
        cmocka_unit_test(test_profiling_zero),
        cmocka_unit_test(test_profiling_longer_than_host),
        cmocka_unit_test(test_profiling_shorter_than_host),
        cmocka_unit_test(test_profiling_above_peak),
        cmocka_unit_test(test_no_time),
        cmocka_unit_test(test_why_names_round_trip),
        cmocka_unit_test(test_peak_real_gpus_not_capped),
        cmocka_unit_test(test_peak_cpu_devices),
        cmocka_unit_test(test_peak_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
