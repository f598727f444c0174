/* test_smoke_verify.c: unit tests of the smoke test's verification: injected corruption is caught exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute_check.h"

#define SEED 12345u

/* What a correct fp32 device computes: each element summed over k in increasing order, in float. */
static float *device_fp32(const struct compute_problem *p)
{
    unsigned n = p->n;
    const float *a = p->a, *b = p->b;
    float *c = calloc((size_t)n * n, sizeof(float));
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            float acc = 0.0f;
            for (unsigned k = 0; k < n; k++)
                acc += a[i * n + k] * b[k * n + j];
            c[i * n + j] = acc;
        }
    return c;
}

static void make(struct compute_problem *p, enum compute_prec prec, enum compute_pass_kind kind, unsigned n)
{
    assert_int_equal(compute_problem_generate(p, prec, kind, n, SEED), 0);
    assert_int_equal(compute_problem_reference(p), 0);
}

/* The reference is each element's products summed in k order in double, whatever its blocking:
 * equal, bit for bit, to the plain triple loop, at sizes that leave every kind of remainder. */
static void test_reference_is_the_plain_sum(void **state)
{
    (void)state;
    static const unsigned sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 17, 33, 67, 130, 256};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (int kind = COMPUTE_PASS_EXACT; kind <= COMPUTE_PASS_RANDOM; kind++) {
            unsigned n = sizes[s];
            struct compute_problem p;
            make(&p, COMPUTE_FP64, (enum compute_pass_kind)kind, n);
            for (unsigned i = 0; i < n; i++)
                for (unsigned j = 0; j < n; j++) {
                    double acc = 0.0;
                    for (unsigned k = 0; k < n; k++)
                        acc += p.ad[i * n + k] * p.bd[k * n + j];
                    assert_memory_equal(&acc, &p.ref[i * n + j], sizeof(double));
                }
            compute_problem_free(&p);
        }
}

static void test_correct_result_passes(void **state)
{
    (void)state;
    struct compute_problem p;
    make(&p, COMPUTE_FP32, COMPUTE_PASS_EXACT, 64);
    float *c = device_fp32(&p);
    struct compute_check chk;
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.elements, 64 * 64);
    assert_int_equal(chk.wrong, 0);
    assert_int_equal(chk.n_first, 0);
    assert_true(chk.max_error == 0.0);
    /* The exact pass really is exact: every reference value is an integer the float holds. */
    for (size_t i = 0; i < 64 * 64; i++) {
        assert_true(p.ref[i] == floor(p.ref[i]));
        assert_true((double)c[i] == p.ref[i]);
    }
    free(c);
    compute_problem_free(&p);
}

static void test_one_flipped_element(void **state)
{
    (void)state;
    struct compute_problem p;
    make(&p, COMPUTE_FP32, COMPUTE_PASS_EXACT, 48);
    float *c = device_fp32(&p);
    uint32_t bits;
    memcpy(&bits, &c[5 * 48 + 9], 4);
    bits ^= 1u << 20; /* one bit of the significand */
    float bad;
    memcpy(&bad, &bits, 4);
    c[5 * 48 + 9] = bad;
    struct compute_check chk;
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, 1);
    assert_int_equal(chk.nonfinite, 0);
    assert_int_equal(chk.n_first, 1);
    assert_int_equal(chk.first[0].row, 5);
    assert_int_equal(chk.first[0].col, 9);
    assert_true(chk.first[0].expected == p.ref[5 * 48 + 9]);
    assert_true(chk.first[0].got == (double)bad);
    assert_true(chk.max_error == fabs((double)bad - p.ref[5 * 48 + 9]));
    assert_false(chk.all_zero || chk.transposed || chk.copied_a || chk.copied_b || chk.unchanged);
    char *s = compute_check_describe(&chk);
    assert_non_null(strstr(s, "1 of 2304 elements wrong"));
    assert_non_null(strstr(s, "row 5, column 9"));
    free(s);
    free(c);
    compute_problem_free(&p);
}

static void test_one_nan(void **state)
{
    (void)state;
    struct compute_problem p;
    make(&p, COMPUTE_FP32, COMPUTE_PASS_EXACT, 32);
    float *c = device_fp32(&p);
    c[12 * 32 + 3] = NAN;
    struct compute_check chk;
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, 1);
    assert_int_equal(chk.nonfinite, 1);
    assert_true(isinf(chk.max_error));
    assert_int_equal(chk.first[0].row, 12);
    assert_int_equal(chk.first[0].col, 3);
    assert_true(isnan(chk.first[0].got));
    char *s = compute_check_describe(&chk);
    assert_non_null(strstr(s, "1 NaN or infinite"));
    free(s);
    free(c);
    compute_problem_free(&p);
}

static void test_all_zeros(void **state)
{
    (void)state;
    struct compute_problem p;
    make(&p, COMPUTE_FP32, COMPUTE_PASS_EXACT, 40);
    float *c = calloc(40 * 40, sizeof(float));
    size_t nonzero = 0, first = SIZE_MAX;
    for (size_t i = 0; i < 40 * 40; i++)
        if (p.ref[i] != 0.0) {
            nonzero++;
            if (first == SIZE_MAX)
                first = i;
        }
    assert_true(nonzero > 40 * 40 / 2); /* the inputs make a mostly non-zero product */
    struct compute_check chk;
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, nonzero);
    assert_true(chk.all_zero);
    assert_int_equal(chk.first[0].row, first / 40);
    assert_int_equal(chk.first[0].col, first % 40);
    assert_true(chk.first[0].got == 0.0);
    assert_int_equal(chk.n_first, COMPUTE_MAX_MISMATCHES);
    char *s = compute_check_describe(&chk);
    assert_non_null(strstr(s, "all zeros"));
    free(s);
    free(c);
    compute_problem_free(&p);
}

static void test_transposed(void **state)
{
    (void)state;
    const unsigned n = 37;
    struct compute_problem p;
    make(&p, COMPUTE_FP32, COMPUTE_PASS_EXACT, n);
    float *c = device_fp32(&p), *t = malloc(sizeof(float) * n * n);
    size_t differ = 0, first = SIZE_MAX;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            t[i * n + j] = c[j * n + i];
            if (p.ref[j * n + i] != p.ref[i * n + j]) {
                differ++;
                if (first == SIZE_MAX)
                    first = (size_t)i * n + j;
            }
        }
    assert_true(differ > 0);
    struct compute_check chk;
    compute_verify(&p, t, NULL, &chk);
    assert_int_equal(chk.wrong, differ);
    assert_true(chk.transposed);
    assert_false(chk.all_zero);
    assert_int_equal(chk.first[0].row, first / n);
    assert_int_equal(chk.first[0].col, first % n);
    assert_true(chk.first[0].got == p.ref[(first % n) * n + first / n]);
    char *s = compute_check_describe(&chk);
    assert_non_null(strstr(s, "transpose"));
    free(s);
    free(c);
    free(t);
    compute_problem_free(&p);
}

static void test_copied_input_and_unchanged_buffer(void **state)
{
    (void)state;
    struct compute_problem p;
    make(&p, COMPUTE_FP32, COMPUTE_PASS_EXACT, 16);
    struct compute_check chk;
    compute_verify(&p, p.a, NULL, &chk);
    assert_true(chk.wrong > 0);
    assert_true(chk.copied_a);
    assert_false(chk.copied_b);
    compute_verify(&p, p.b, NULL, &chk);
    assert_true(chk.copied_b);
    /* The kernel never wrote: the buffer still holds what was put there before. */
    float prior[16 * 16];
    for (int i = 0; i < 16 * 16; i++)
        prior[i] = 0.1234f;
    compute_verify(&p, prior, prior, &chk);
    assert_int_equal(chk.wrong, 16 * 16);
    assert_true(chk.unchanged);
    char *s = compute_check_describe(&chk);
    assert_non_null(strstr(s, "left the output buffer as it was"));
    free(s);
    compute_problem_free(&p);
}

static void test_fp64_exact_corruption(void **state)
{
    (void)state;
    struct compute_problem p;
    make(&p, COMPUTE_FP64, COMPUTE_PASS_EXACT, 20);
    double *c = malloc(sizeof(double) * 400);
    memcpy(c, p.ref, sizeof(double) * 400);
    struct compute_check chk;
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, 0);
    c[399] += 1.0;
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, 1);
    assert_int_equal(chk.first[0].row, 19);
    assert_int_equal(chk.first[0].col, 19);
    assert_true(chk.max_error == 1.0);
    free(c);
    compute_problem_free(&p);
}

static void test_random_pass_tolerance(void **state)
{
    (void)state;
    struct compute_problem p;
    make(&p, COMPUTE_FP32, COMPUTE_PASS_RANDOM, 96);
    float *c = device_fp32(&p);
    struct compute_check chk;
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, 0);
    assert_true(chk.max_error > 0.0);             /* float rounding is visible ... */
    assert_true(chk.max_error < chk.max_tolerance); /* ... and within the bound */
    /* An error of ten tolerances at one element is caught. */
    double tol = compute_problem_tolerance(&p, 7, 11);
    assert_true(tol > 0.0);
    c[7 * 96 + 11] = (float)(p.ref[7 * 96 + 11] + 10.0 * tol);
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, 1);
    assert_int_equal(chk.first[0].row, 7);
    assert_int_equal(chk.first[0].col, 11);
    /* A device that computes in half precision when asked for single is caught too. */
    const float *a = p.a, *b = p.b;
    for (size_t i = 0; i < 96; i++)
        for (size_t j = 0; j < 96; j++) {
            double acc = 0.0;
            for (size_t k = 0; k < 96; k++)
                acc = compute_half_to_double(compute_half_from_double(
                    acc + compute_half_to_double(compute_half_from_double((double)a[i * 96 + k] * b[k * 96 + j]))));
            c[i * 96 + j] = (float)acc;
        }
    compute_verify(&p, c, NULL, &chk);
    assert_true(chk.wrong > 96 * 96 / 2);
    free(c);
    double tol96 = chk.max_tolerance;
    compute_problem_free(&p);

    /* The tolerance grows with N. */
    make(&p, COMPUTE_FP32, COMPUTE_PASS_RANDOM, 384);
    c = device_fp32(&p);
    compute_verify(&p, c, NULL, &chk);
    assert_int_equal(chk.wrong, 0);
    assert_true(chk.max_tolerance > 2.0 * tol96);
    free(c);
    compute_problem_free(&p);
}

static void test_exact_inputs_stay_exact(void **state)
{
    (void)state;
    /* fp16 beyond 2048: A is thinned out so that every partial sum stays <= 2048. */
    static const struct {
        enum compute_prec prec;
        unsigned n;
        double limit;
    } cases[] = {
        {COMPUTE_FP16, 100, 2048.0}, {COMPUTE_FP16, 2048, 2048.0}, {COMPUTE_FP16, 3000, 2048.0},
        {COMPUTE_FP32, 1000, 16777216.0}, {COMPUTE_FP32, 7, 16777216.0},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct compute_problem p;
        unsigned n = cases[c].n;
        assert_int_equal(compute_problem_generate(&p, cases[c].prec, COMPUTE_PASS_EXACT, n, SEED), 0);
        double maxb = 0.0;
        for (size_t i = 0; i < (size_t)n * n; i++) {
            maxb = fmax(maxb, fabs(p.bd[i]));
            assert_true(p.bd[i] != 0.0 && p.bd[i] == floor(p.bd[i]));
            assert_true(compute_value_get(cases[c].prec, p.b, i) == p.bd[i]);
        }
        for (unsigned i = 0; i < n; i++) {
            double row = 0.0;
            for (unsigned k = 0; k < n; k++)
                row += fabs(p.ad[(size_t)i * n + k]);
            assert_true(row * maxb <= cases[c].limit); /* bounds every partial sum of row i */
        }
        compute_problem_free(&p);
    }
    /* The random fp16 pass is refused where its error bound reaches the values. */
    struct compute_problem p;
    assert_int_equal(compute_problem_generate(&p, COMPUTE_FP16, COMPUTE_PASS_RANDOM, 1022, SEED), 1);
    compute_problem_free(&p);
    assert_int_equal(compute_problem_generate(&p, COMPUTE_FP16, COMPUTE_PASS_RANDOM, 64, SEED), 0);
    compute_problem_free(&p);
}

/* fp32 and fp64 passes of a kind get the same inputs, so one reference serves both; fp16's differ. */
static void test_fp32_fp64_share_inputs(void **state)
{
    (void)state;
    for (int kind = 0; kind < COMPUTE_N_PASS; kind++) {
        struct compute_problem p32, p64, p16;
        make(&p32, COMPUTE_FP32, (enum compute_pass_kind)kind, 50);
        assert_int_equal(compute_problem_generate(&p64, COMPUTE_FP64, (enum compute_pass_kind)kind, 50, SEED), 0);
        assert_memory_equal(p32.ad, p64.ad, 50 * 50 * sizeof(double));
        assert_memory_equal(p32.bd, p64.bd, 50 * 50 * sizeof(double));
        assert_int_equal(compute_problem_reference_like(&p64, &p32), 0);
        assert_memory_equal(p32.ref, p64.ref, 50 * 50 * sizeof(double));
        assert_true(p64.ref != p32.ref);
        /* Different inputs: computed, not copied. */
        make(&p16, COMPUTE_FP16, (enum compute_pass_kind)kind, 50);
        double *c16 = malloc(50 * 50 * sizeof(double));
        memcpy(c16, p16.ref, 50 * 50 * sizeof(double));
        assert_int_equal(compute_problem_reference_like(&p16, &p32), 0);
        assert_memory_equal(c16, p16.ref, 50 * 50 * sizeof(double));
        assert_true(memcmp(p16.ref, p32.ref, 50 * 50 * sizeof(double)) != 0);
        free(c16);
        compute_problem_free(&p32);
        compute_problem_free(&p64);
        compute_problem_free(&p16);
    }
}

static void test_half_conversions(void **state)
{
    (void)state;
    assert_int_equal(compute_half_from_double(1.0), 0x3c00);
    assert_int_equal(compute_half_from_double(-2.0), 0xc000);
    assert_int_equal(compute_half_from_double(65504.0), 0x7bff);
    assert_int_equal(compute_half_from_double(65519.0), 0x7bff);
    assert_int_equal(compute_half_from_double(65520.0), 0x7c00);
    assert_int_equal(compute_half_from_double(0x1p-24), 0x0001);
    assert_int_equal(compute_half_from_double(0x1p-14), 0x0400);
    assert_int_equal(compute_half_from_double(0.1), 0x2e66);
    assert_int_equal(compute_half_from_double(1.0 + 0x1p-11), 0x3c00); /* a tie rounds to even */
    assert_int_equal(compute_half_from_double(1.0 + 3 * 0x1p-11), 0x3c02);
    assert_true(isnan(compute_half_to_double(compute_half_from_double(NAN))));
    assert_true(isinf(compute_half_to_double(0xfc00)) && compute_half_to_double(0xfc00) < 0);
    for (unsigned h = 0; h < 0x10000; h++) {
        double v = compute_half_to_double((uint16_t)h);
        if (!isnan(v))
            assert_int_equal(compute_half_from_double(v), h);
    }
}

static void test_round_trip_pattern(void **state)
{
    (void)state;
    uint32_t buf[1024];
    for (size_t i = 0; i < 1024; i++)
        buf[i] = compute_pattern_word(i);
    assert_int_equal(compute_pattern_check(buf, sizeof(buf)), 0);
    buf[77] ^= 0x100;
    buf[900] = 0;
    assert_int_equal(compute_pattern_check(buf, sizeof(buf)), 2);
    /* The pattern is not constant: a stuck buffer would not pass. */
    assert_true(compute_pattern_word(0) != compute_pattern_word(1));
    assert_true(compute_pattern_word(1) != compute_pattern_word(3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correct_result_passes),
        cmocka_unit_test(test_one_flipped_element),
        cmocka_unit_test(test_one_nan),
        cmocka_unit_test(test_all_zeros),
        cmocka_unit_test(test_transposed),
        cmocka_unit_test(test_copied_input_and_unchanged_buffer),
        cmocka_unit_test(test_fp64_exact_corruption),
        cmocka_unit_test(test_random_pass_tolerance),
        cmocka_unit_test(test_exact_inputs_stay_exact),
        cmocka_unit_test(test_fp32_fp64_share_inputs),
        cmocka_unit_test(test_half_conversions),
        cmocka_unit_test(test_round_trip_pattern),
        cmocka_unit_test(test_reference_is_the_plain_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
