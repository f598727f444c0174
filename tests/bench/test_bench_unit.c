/* test_bench_unit.c: unit tests of `bench`: the check catches wrong results at every size, the peak, the
 * crossover, the kernel interface and the bench options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_internal.h"
#include "bench_options.h"
#include "bench_report.h"
#include "bench_verify.h"
#include "cli.h"
#include "hostfs.h"

/* What a correct fp32 device computes on the padded problem: each element summed over k in float. */
static float *device_fp32(const struct bench_problem *p)
{
    size_t np = p->np;
    const float *a = p->a, *b = p->b;
    float *c = calloc(np * np, sizeof(float));
    for (size_t i = 0; i < np; i++)
        for (size_t k = 0; k < np; k++) {
            float aik = a[i * np + k];
            for (size_t j = 0; j < np; j++)
                c[i * np + j] += aik * b[k * np + j];
        }
    return c;
}

/* A plain row-major CBLAS dgemm (alpha 1, beta 0, no transposes), standing in for the CPU BLAS. */
static void plain_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                        const double *b, int ldb, double beta, double *c, int ldc)
{
    assert_int_equal(order, BENCH_BLAS_ROW_MAJOR);
    assert_int_equal(ta, BENCH_BLAS_NO_TRANS);
    assert_int_equal(tb, BENCH_BLAS_NO_TRANS);
    assert_true(alpha == 1.0 && beta == 0.0);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++)
            c[i * ldc + j] = 0.0;
        for (int x = 0; x < k; x++)
            for (int j = 0; j < n; j++)
                c[i * ldc + j] += a[i * lda + x] * b[x * ldb + j];
    }
}

static void check_sizes(unsigned n, size_t np, bench_dgemm_fn dgemm, const char *method)
{
    struct bench_problem p;
    struct bench_check chk;
    assert_int_equal(bench_problem_make(&p, BENCH_FP32, n, np, 7), 0);
    float *c = device_fp32(&p);
    assert_int_equal(bench_problem_check(&p, c, dgemm, &chk), 0);
    assert_string_equal(chk.method, method);
    assert_true(bench_check_ok(&chk));
    bool sampled = strcmp(method, "sampled") == 0;
    /* one element off by one: anywhere for a full check, in the always-sampled corner otherwise */
    size_t at = sampled ? 3 * np + 5 : (n - 1) * np + (n - 2);
    float keep = c[at];
    c[at] += 1.0f;
    assert_int_equal(bench_problem_check(&p, c, dgemm, &chk), 0);
    assert_false(bench_check_ok(&chk));
    assert_int_equal(chk.c.wrong, 1);
    char *why = bench_check_describe(&chk);
    assert_non_null(why);
    free(why);
    c[at] = keep;
    if (sampled) { /* a gross error away from the samples: the projections see its row */
        at = (n - 1) * np + (n - 2);
        keep = c[at];
        c[at] += 1000.0f;
        assert_int_equal(bench_problem_check(&p, c, dgemm, &chk), 0);
        assert_false(bench_check_ok(&chk));
        assert_int_equal(chk.rows_wrong, 1);
        c[at] = keep;
    }
    /* the padding is not looked at: garbage there is fine */
    if (np > n) {
        c[n] = 1e30f;
        assert_int_equal(bench_problem_check(&p, c, dgemm, &chk), 0);
        assert_true(bench_check_ok(&chk));
    }
    /* a lazy device: the output is a copy of A */
    memcpy(c, p.a, np * np * sizeof(float));
    assert_int_equal(bench_problem_check(&p, c, dgemm, &chk), 0);
    assert_false(bench_check_ok(&chk));
    /* an untouched output */
    memcpy(c, p.sentinel, np * np * sizeof(float));
    assert_int_equal(bench_problem_check(&p, c, dgemm, &chk), 0);
    assert_false(bench_check_ok(&chk));
    assert_true(chk.c.unchanged);
    free(c);
    bench_problem_free(&p);
}

static void test_check_full(void **state)
{
    (void)state;
    check_sizes(64, 64, NULL, "full");
    check_sizes(100, 112, NULL, "full");
    check_sizes(100, 112, plain_dgemm, "full"); /* small sizes never need the BLAS */
}

static void test_check_sampled(void **state)
{
    (void)state;
    check_sizes(600, 608, NULL, "sampled");
}

static void test_check_blas_reference(void **state)
{
    (void)state;
    check_sizes(600, 608, plain_dgemm, "blas-reference");
}

static void test_fp16_large_uses_exact_inputs(void **state)
{
    (void)state;
    struct bench_problem p;
    assert_int_equal(bench_problem_make(&p, BENCH_FP16, 1100, 1104, 3), 0);
    assert_int_equal(p.sp.kind, COMPUTE_PASS_EXACT);
    assert_int_equal(p.np, 1104);
    bench_problem_free(&p);
}

static void test_peak(void **state)
{
    (void)state;
    struct bench_peak pk;
    /* 2 cores at 2445 MHz with AVX2+FMA: 2 x 2445 x 32 / 1000 GFLOPS */
    struct bench_peak_in cpu = {.cpu = true, .compute_units = 2, .clock_mhz = 2445, .avx2_fma = true, .avx = true, .sse2 = true};
    bench_peak_compute(&cpu, BENCH_FP32, &pk);
    assert_true(fabs(pk.gflops - 156.48) < 1e-9);
    assert_non_null(strstr(pk.source, "AVX2+FMA"));
    bench_peak_compute(&cpu, BENCH_FP64, &pk);
    assert_true(fabs(pk.gflops - 78.24) < 1e-9);
    cpu.avx512f = true;
    bench_peak_compute(&cpu, BENCH_FP32, &pk);
    assert_true(fabs(pk.gflops - 312.96) < 1e-9);
    struct bench_peak_in bare = {.cpu = true, .compute_units = 2, .clock_mhz = 2445};
    bench_peak_compute(&bare, BENCH_FP32, &pk);
    assert_true(isnan(pk.gflops));
    assert_non_null(strstr(pk.source, "unknown"));
    /* H100 SXM: 132 SMs at 1980 MHz, 128 lanes: NVIDIA's whitepaper gives 67 TFLOPS fp32 */
    struct bench_peak_in h100 = {.vendor = "NVIDIA Corporation", .compute_units = 132, .clock_mhz = 1980};
    bench_peak_compute(&h100, BENCH_FP32, &pk);
    assert_true(pk.gflops > 66000 && pk.gflops < 68000);
    bench_peak_compute(&h100, BENCH_FP64, &pk);
    assert_true(isnan(pk.gflops));
    struct bench_peak_in none = {.vendor = "NVIDIA Corporation", .compute_units = 0, .clock_mhz = 1980};
    bench_peak_compute(&none, BENCH_FP32, &pk);
    assert_true(isnan(pk.gflops));
    struct bench_peak_in odd = {.vendor = "Some Vendor", .compute_units = 4, .clock_mhz = 1000};
    bench_peak_compute(&odd, BENCH_FP32, &pk);
    assert_true(isnan(pk.gflops));
    /* a CPU device's peak at the host's boost clock when cpufreq exposes one above the device's clock */
    cpu.avx512f = false;
    cpu.boost_mhz = 5000;
    bench_peak_compute(&cpu, BENCH_FP32, &pk);
    assert_true(fabs(pk.gflops - 2 * 5000 * 32 / 1000.0) < 1e-9);
    assert_non_null(strstr(pk.source, "boost clock, 5000 MHz"));
    assert_non_null(strstr(pk.source, "the device says 2445"));
    cpu.boost_mhz = 2000; /* below the device's clock: the device's */
    bench_peak_compute(&cpu, BENCH_FP32, &pk);
    assert_true(fabs(pk.gflops - 156.48) < 1e-9);
    /* a GPU's clock is its own: no host boost */
    h100.boost_mhz = 5000;
    bench_peak_compute(&h100, BENCH_FP32, &pk);
    assert_true(pk.gflops > 66000 && pk.gflops < 68000);
}

static json_object *sweep(const char *impl, const char *prec, const double (*pts)[2], size_t n);

static void put(const char *root, const char *rel, const char *text)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    for (char *q = p + strlen(root) + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            mkdir(p, 0755);
            *q = '/';
        }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The boost clock from a fake sysfs: the highest cpuinfo_max_freq of the CPUs that have one; garbage,
 * absurd values and other directories are ignored; none at all is 0 (the device's clock is used). */
static void test_boost_clock(void **state)
{
    (void)state;
    char root[] = "/tmp/gc-bench-boost-XXXXXX";
    assert_non_null(mkdtemp(root));
    struct hostfs fs;
    put(root, "sys/devices/system/cpu/cpu0/topology/core_id", "0\n");
    assert_int_equal(hostfs_open(&fs, root), 0);
    assert_int_equal(bench_peak_boost_mhz(&fs), 0); /* a VM without cpufreq, as this one */
    hostfs_close(&fs);
    put(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
    put(root, "sys/devices/system/cpu/cpu1/cpufreq/cpuinfo_max_freq", "5100000\n");
    put(root, "sys/devices/system/cpu/cpu2/cpufreq/cpuinfo_max_freq", "fast\n");
    put(root, "sys/devices/system/cpu/cpu3/cpufreq/cpuinfo_max_freq", "99000000000\n");
    put(root, "sys/devices/system/cpu/cpufreq/cpuinfo_max_freq", "9000000\n"); /* not a CPU */
    put(root, "sys/devices/system/cpu/cpu4x/cpufreq/cpuinfo_max_freq", "9000000\n");
    assert_int_equal(hostfs_open(&fs, root), 0);
    assert_int_equal(bench_peak_boost_mhz(&fs), 5100);
    hostfs_close(&fs);
    assert_int_equal(bench_peak_boost_mhz(NULL), 0);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* A measurement above the estimated peak gets no fraction of it: the estimate is what is wrong. */
static void test_no_fraction_above_peak(void **state)
{
    (void)state;
    static const double pts[][2] = {{64, 100}, {128, 300}};
    json_object *dev = json_object_new_object(), *sws = json_object_new_array(), *pr = json_object_new_object();
    json_object_array_add(sws, sweep("gpucheckup", "fp32", pts, 2));
    json_object_object_add(dev, "sweeps", sws);
    json_object *type = json_object_new_array();
    json_object_array_add(type, json_object_new_string("CPU"));
    json_object_object_add(dev, "type", type);
    json_object_object_add(pr, "compute_units", json_object_new_int(1));
    json_object_object_add(pr, "clock_mhz", json_object_new_int(2000));
    json_object_object_add(dev, "properties", pr);
    struct bench_peak_in in = {.avx2_fma = true, .avx = true, .sse2 = true}; /* 1 x 2000 x 32: 64 GFLOPS */
    bench_enrich_device(dev, &in, NULL);
    json_object *p = jsonget(json_object_array_get_idx(sws, 0), "points");
    assert_true(isnan(bench_get_num(json_object_array_get_idx(p, 0), "fraction_of_peak")));
    /* at a 10 GHz boost clock the peak is 320: both are fractions of it */
    json_object *p0 = json_object_array_get_idx(p, 0);
    json_object_object_del(p0, "fraction_of_peak");
    in.boost_mhz = 10000;
    bench_enrich_device(dev, &in, NULL);
    p = jsonget(json_object_array_get_idx(sws, 0), "points");
    assert_true(fabs(bench_get_num(json_object_array_get_idx(p, 0), "fraction_of_peak") - 100.0 / 320) < 1e-3);
    assert_true(fabs(bench_get_num(json_object_array_get_idx(p, 1), "fraction_of_peak") - 300.0 / 320) < 1e-3);
    json_object_put(dev);
}

/* A sweep object with points (n, gflops); gflops < 0 = a wrong point (null). */
static json_object *sweep(const char *impl, const char *prec, const double (*pts)[2], size_t n)
{
    json_object *s = json_object_new_object(), *a = json_object_new_array();
    if (impl)
        json_object_object_add(s, "implementation", json_object_new_string(impl));
    json_object_object_add(s, "precision", json_object_new_string(prec));
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "n", json_object_new_int((int)pts[i][0]));
        json_object_object_add(p, "gflops", pts[i][1] >= 0 ? json_object_new_double(pts[i][1]) : NULL);
        json_object_array_add(a, p);
    }
    json_object_object_add(s, "points", a);
    return s;
}

static void test_crossover(void **state)
{
    (void)state;
    static const double cpu_pts[][2] = {{64, 2}, {128, 4}, {256, 8}, {512, 9}};
    static const double fast[][2] = {{64, 1}, {128, 3}, {256, 20}, {512, 40}, {1024, 50}};
    static const double slow[][2] = {{64, 1}, {128, -1}, {256, 2}};
    json_object *cpu = json_object_new_object(), *csw = json_object_new_array();
    json_object_array_add(csw, sweep(NULL, "fp32", cpu_pts, 4));
    json_object_object_add(cpu, "sweeps", csw);
    json_object *dev = json_object_new_object(), *sws = json_object_new_array(), *pr = json_object_new_object();
    json_object_array_add(sws, sweep("gpucheckup", "fp32", fast, 5));
    json_object_array_add(sws, sweep("clblast", "fp32", slow, 3));
    json_object_array_add(sws, sweep("clblast", "fp64", slow, 3));
    json_object_object_add(dev, "sweeps", sws);
    json_object_object_add(dev, "vendor", json_object_new_string("NVIDIA Corporation"));
    json_object_object_add(pr, "compute_units", json_object_new_int(1));
    json_object_object_add(pr, "clock_mhz", json_object_new_int(1000));
    json_object_object_add(dev, "properties", pr);
    struct bench_peak_in in = {0};
    bench_enrich_device(dev, &in, cpu);
    json_object *x = jsonget(json_object_array_get_idx(sws, 0), "crossover");
    assert_true(bench_get_num(x, "n") == 256);
    assert_true(bench_get_num(x, "compared_up_to") == 512);
    /* peak: 1 SM x 1000 MHz x 256 = 256 GFLOPS; 40 / 256 at N = 512 */
    json_object *p512 = json_object_array_get_idx(jsonget(json_object_array_get_idx(sws, 0), "points"), 3);
    assert_true(fabs(bench_get_num(p512, "fraction_of_peak") - 40.0 / 256) < 1e-3);
    assert_true(fabs(bench_get_num(p512, "vs_cpu") - 40.0 / 9) < 1e-2);
    x = jsonget(json_object_array_get_idx(sws, 1), "crossover");
    assert_true(isnan(bench_get_num(x, "n")));
    assert_true(bench_get_num(x, "compared_up_to") == 256); /* the wrong point at 128 is not compared */
    assert_non_null(strstr(jsonget_str(x, "text"), "never faster than the CPU BLAS up to N = 256"));
    x = jsonget(json_object_array_get_idx(sws, 2), "crossover"); /* no fp64 CPU sweep */
    assert_non_null(strstr(jsonget_str(x, "text"), "no CPU BLAS baseline"));

    json_object *devs = json_object_new_array();
    json_object_array_add(devs, dev);
    struct bench_plot_series *s = NULL;
    size_t n = bench_series(devs, cpu, &s);
    assert_int_equal(n, 4); /* three device sweeps and the CPU's */
    assert_false(s[0].baseline);
    assert_true(s[0].crossover_n == 256);
    assert_true(s[3].baseline);
    assert_int_equal(s[1].count, 3);
    assert_true(s[1].gflops[1] == 0); /* the wrong point is not drawn */
    bench_series_free(s, n);
    json_object_put(devs);
    json_object_put(cpu);
}

static void test_kernel_interface(void **state)
{
    (void)state;
    struct bench_kernel_hints h = {.is_cpu = true, .max_wg_size = 4096, .local_mem = 65536, .compute_units = 2};
    for (int p = 0; p < 3; p++) {
        struct bench_kernel k;
        assert_int_equal(bench_kernel_pick((enum bench_prec)p, &h, &k), 0);
        assert_non_null(k.source);
        assert_true(k.name && *k.name);
        assert_non_null(k.options);
        assert_true(k.pad >= 1);
        size_t np = 4 * k.pad, g[2], l[2];
        bench_kernel_geometry(&k, &h, np, g, l);
        for (int d = 0; d < 2; d++)
            assert_true(l[0] == 0 || (l[d] > 0 && g[d] % l[d] == 0));
    }
}

static void test_options(void **state)
{
    (void)state;
    struct cli_options o;
    char err[256];
    char *ok[] = {"gpucheckup", "bench", "--bench-time", "2.5", "--bench-precision", "fp64,fp16", "--plot", "A.SVG", NULL};
    assert_int_equal(cli_parse(8, ok, &o, err, sizeof(err)), 0);
    assert_string_equal(o.command, "bench");
    assert_true(bench_options()->time_s == 2.5);
    assert_int_equal(bench_options()->precs, 6u);
    assert_string_equal(bench_options()->plot, "A.SVG");
    char *def[] = {"gpucheckup", "bench", NULL};
    assert_int_equal(cli_parse(2, def, &o, err, sizeof(err)), 0);
    assert_true(bench_options()->time_s == BENCH_DEFAULT_TIME_S);
    assert_int_equal(bench_options()->precs, 7u);
    assert_null(bench_options()->plot);
    static const char *const bad[][2] = {
        {"--bench-time", "0"},      {"--bench-time", "-1"},         {"--bench-time", "nan"},
        {"--bench-time", "3601"},   {"--bench-time", "1s"},         {"--bench-precision", "fp8"},
        {"--bench-precision", ""},  {"--bench-precision", "fp32,"}, {"--bench-precision", "FP32"},
        {"--plot", "chart.pdf"},    {"--plot", ""},                 {"--plot", "svg"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *argv[] = {"gpucheckup", "bench", (char *)bad[i][0], (char *)bad[i][1], NULL};
        assert_int_equal(cli_parse(4, argv, &o, err, sizeof(err)), -1);
        assert_non_null(strstr(err, bad[i][0]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_full),    cmocka_unit_test(test_check_sampled), cmocka_unit_test(test_check_blas_reference),
        cmocka_unit_test(test_fp16_large_uses_exact_inputs), cmocka_unit_test(test_peak),
        cmocka_unit_test(test_boost_clock),   cmocka_unit_test(test_no_fraction_above_peak),
        cmocka_unit_test(test_crossover),     cmocka_unit_test(test_kernel_interface),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
