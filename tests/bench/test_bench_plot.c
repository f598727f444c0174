/* test_bench_plot.c: bench_plot_write draws valid SVG and PNG files, and refuses bad paths and empty data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_plot.h"

/* Made-up results shaped like a real run: two devices and the CPU BLAS baseline, one failed point. */
static const double sizes[] = {64, 128, 256, 512, 1024, 2048};
static const double gpu[] = {0.8, 4.1, 19.5, 88.0, 310.0, 905.0};
static const double pocl[] = {2.5, 9.0, -1, 30.5, 33.0, 31.0}; /* N=256 was wrong: not drawn */
static const double blas[] = {6.0, 25.0, 60.0, 95.0, 110.0, 112.0};

static const struct bench_plot_series series[] = {
    {"NVIDIA GeForce RTX 3060 / gpucheckup fp32", false, 6, sizes, gpu, 512},
    {"PoCL cpu-haswell / gpucheckup fp32 <&>", false, 6, sizes, pocl, 0},
    {"CPU OpenBLAS fp32", true, 6, sizes, blas, 0},
};

/* Where the files go: $GC_BENCH_PLOT_DIR (kept, for tests/bench/test_bench_plot.py) or a temp dir. */
static char dir[4096];
static bool keep;

static int setup(void **state)
{
    (void)state;
    const char *d = getenv("GC_BENCH_PLOT_DIR");
    if (d && *d) {
        snprintf(dir, sizeof dir, "%s", d);
        keep = true;
        return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
    }
    snprintf(dir, sizeof dir, "/tmp/gc-bench-plot.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static void rm(const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    unlink(p);
}

static int teardown(void **state)
{
    (void)state;
    if (!keep) {
        rm("chart.svg");
        rm("chart.PNG");
        rm("chart-many.png");
        rmdir(dir);
    }
    return 0;
}

#ifdef GPUCHECKUP_HAVE_CAIRO
/* The whole file PATH, NUL-terminated; *LEN its size. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (cap ? cap * 2 : 65536);
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
#endif

static void test_available(void **state)
{
    (void)state;
#ifdef GPUCHECKUP_HAVE_CAIRO
    assert_true(bench_plot_available());
#else
    assert_false(bench_plot_available());
    char err[256] = "";
    char p[4200];
    snprintf(p, sizeof p, "%s/chart.svg", dir);
    assert_int_equal(bench_plot_write(p, "t", series, 3, err, sizeof err), -1);
    assert_string_equal(err, "gpucheckup was built without cairo: --plot is not available");
    assert_int_equal(access(p, F_OK), -1);
#endif
}

#ifdef GPUCHECKUP_HAVE_CAIRO
static void test_svg(void **state)
{
    (void)state;
    char p[4200], err[256] = "";
    snprintf(p, sizeof p, "%s/chart.svg", dir);
    assert_int_equal(bench_plot_write(p, "gpucheckup bench: GEMM GFLOPS", series, 3, err, sizeof err), 0);
    assert_string_equal(err, "");
    size_t len;
    unsigned char *svg = slurp(p, &len);
    const char *s = (const char *)svg;
    assert_non_null(strstr(s, "<svg"));
    assert_non_null(strstr(s, "</svg>"));
    assert_non_null(strstr(s, "<title>gpucheckup bench: GEMM GFLOPS</title>"));
    assert_non_null(strstr(s, "NVIDIA GeForce RTX 3060 / gpucheckup fp32, beats the baseline from N=512"));
    assert_non_null(strstr(s, "PoCL cpu-haswell / gpucheckup fp32 &lt;&amp;&gt;"));
    assert_non_null(strstr(s, "CPU OpenBLAS fp32 (baseline)"));
    assert_non_null(strstr(s, "stroke-dasharray")); /* the baseline is dashed */
    /* The legend's and the axes' words are drawn as glyphs: many of them. */
    size_t glyphs = 0;
    for (const char *q = s; (q = strstr(q, "xlink:href=\"#glyph")) != NULL; q++)
        glyphs++;
    assert_true(glyphs > 100);
    free(svg);
}

static void test_png(void **state)
{
    (void)state;
    char p[4200], err[256] = "";
    snprintf(p, sizeof p, "%s/chart.PNG", dir); /* the extension is case-insensitive */
    assert_int_equal(bench_plot_write(p, "t", series, 3, err, sizeof err), 0);
    size_t len;
    unsigned char *png = slurp(p, &len);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    assert_true(len > 1000);
    assert_memory_equal(png, sig, 8);
    assert_memory_equal(png + 12, "IHDR", 4);
    assert_int_equal(be32(png + 16), 960); /* width */
    /* height: the plot area and one legend row per series */
    const uint32_t h3 = be32(png + 20);
    assert_in_range(h3, 500, 700);
    free(png);
    /* Twelve series: a taller picture, one more legend row (20 px) per series, same width. */
    struct bench_plot_series many[12];
    for (size_t i = 0; i < 12; i++)
        many[i] = series[i % 3];
    snprintf(p, sizeof p, "%s/chart-many.png", dir);
    assert_int_equal(bench_plot_write(p, "twelve series", many, 12, err, sizeof err), 0);
    png = slurp(p, &len);
    assert_memory_equal(png, sig, 8);
    assert_int_equal(be32(png + 16), 960);
    assert_int_equal(be32(png + 20), h3 + 9 * 20);
    free(png);
}

/* Driver strings are not trusted: invalid UTF-8 and control bytes in a label, an overlong title, NaN and
 * infinite values, a crossover off the data. All drawn (cairo would refuse invalid UTF-8), none fatal. */
static void test_hostile_input(void **state)
{
    (void)state;
    char title[400], p[4200], err[256] = "";
    memset(title, 'W', sizeof title - 1);
    title[sizeof title - 1] = 0;
    const double odd[] = {0.5, NAN, INFINITY, 40.0, 1e300, 2e-300};
    const struct bench_plot_series s[] = {
        {"bad \xff\xfe\x01 utf-8\n", false, 6, sizes, odd, 1e9},
        {NULL, true, 6, sizes, blas, 64},
    };
    snprintf(p, sizeof p, "%s/hostile.svg", dir);
    assert_int_equal(bench_plot_write(p, title, s, 2, err, sizeof err), 0);
    size_t len;
    unsigned char *svg = slurp(p, &len);
    assert_non_null(strstr((char *)svg, "bad ??? utf-8?"));
    assert_non_null(strstr((char *)svg, "(unnamed) (baseline), beats the baseline from N=64"));
    free(svg);
    unlink(p);
}

static void test_errors(void **state)
{
    (void)state;
    char p[4200], err[256];
    static const char *const bad[] = {"chart.pdf", "chart", "chart.svg.txt", "svg", ".png.d/x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, bad[i]);
        err[0] = 0;
        assert_int_equal(bench_plot_write(p, "t", series, 3, err, sizeof err), -1);
        assert_non_null(strstr(err, "must end in .svg or .png"));
        assert_int_equal(access(p, F_OK), -1);
    }
    snprintf(p, sizeof p, "%s/empty.svg", dir);
    assert_int_equal(bench_plot_write(p, "t", series, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "no result to draw"));
    assert_int_equal(bench_plot_write(p, "t", NULL, 3, err, sizeof err), -1);
    static const double none[] = {-1, 0, -5};
    const struct bench_plot_series failed = {"wrong everywhere", false, 3, sizes, none, 0};
    assert_int_equal(bench_plot_write(p, "t", &failed, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "no result to draw"));
    assert_int_equal(access(p, F_OK), -1);
    /* A directory that does not exist: the write fails with the path in the message. */
    snprintf(p, sizeof p, "%s/no/such/dir/x.png", dir);
    assert_int_equal(bench_plot_write(p, "t", series, 3, err, sizeof err), -1);
    assert_non_null(strstr(err, "--plot "));
    assert_non_null(strstr(err, "no/such/dir"));
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_available),
#ifdef GPUCHECKUP_HAVE_CAIRO
        cmocka_unit_test(test_svg),
        cmocka_unit_test(test_png),
        cmocka_unit_test(test_hostile_input),
        cmocka_unit_test(test_errors),
#endif
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
