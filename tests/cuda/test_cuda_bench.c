/* test_cuda_bench.c: bench's CUDA part: the check of a GEMM result, in full and sampled (above N = 512). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute_check.h"
#include "cuda_internal.h"

#define POISON 0x7FC0FFEEu

/* The problem of size N and its right result as fp32 (the double reference rounded). */
static float *make(struct compute_problem *p, unsigned n)
{
    assert_int_equal(compute_problem_generate(p, COMPUTE_FP32, COMPUTE_PASS_RANDOM, n, 0xBE4C4F5EEDull + n), 0);
    assert_int_equal(compute_problem_reference(p), 0);
    float *out = malloc((size_t)n * n * sizeof(float));
    assert_non_null(out);
    for (size_t i = 0; i < (size_t)n * n; i++)
        out[i] = (float)p->ref[i];
    return out;
}

static void check(unsigned n, const char *want_method)
{
    struct compute_problem p;
    float *out = make(&p, n);
    size_t nn = (size_t)n * n;
    uint32_t *prior = malloc(nn * sizeof(uint32_t));
    assert_non_null(prior);
    for (size_t i = 0; i < nn; i++)
        prior[i] = POISON;
    struct compute_check chk;
    const char *method = NULL;
    /* right */
    assert_true(cuda_bench_verify(&p, out, prior, &chk, &method));
    assert_string_equal(method, want_method);
    assert_int_equal(chk.wrong, 0);
    assert_true(chk.elements == (strcmp(want_method, "full") == 0 ? nn : CUDA_BENCH_SAMPLES));
    assert_true(chk.max_error < 1e-3);
    /* half the rows off by one: caught, in full and in the samples alike */
    for (size_t i = nn / 2; i < nn; i++)
        out[i] += 1.0f;
    assert_true(cuda_bench_verify(&p, out, prior, &chk, &method));
    assert_true(chk.wrong > chk.elements / 4 && chk.wrong < chk.elements * 3 / 4);
    assert_false(chk.unchanged);
    assert_true(chk.n_first > 0);
    /* the output as it was before the run: every element wrong, and said to be unchanged */
    memcpy(out, prior, nn * sizeof(float));
    assert_true(cuda_bench_verify(&p, out, prior, &chk, &method));
    assert_int_equal(chk.wrong, chk.elements);
    assert_true(chk.unchanged);
    assert_int_equal(chk.nonfinite, chk.elements);
    /* all zeros */
    memset(out, 0, nn * sizeof(float));
    assert_true(cuda_bench_verify(&p, out, prior, &chk, &method));
    assert_true(chk.all_zero);
    assert_true(chk.wrong > 0);
    free(prior);
    free(out);
    compute_problem_free(&p);
}

static void test_full(void **state)
{
    (void)state;
    check(64, "full");
    check(CUDA_BENCH_FULL_N, "full");
}

static void test_sampled(void **state)
{
    (void)state;
    check(CUDA_BENCH_FULL_N + 256, "sampled");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_full), cmocka_unit_test(test_sampled)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
