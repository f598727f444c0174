/* bench_verify.h: `bench`'s GEMM inputs (the smoke test's problems, padded) and their check against the CPU. */
#ifndef GPUCHECKUP_BENCH_VERIFY_H
#define GPUCHECKUP_BENCH_VERIFY_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "bench_kernel.h"
#include "compute_check.h"

/* Up to this N every element is compared with a full double-precision reference (compute_verify). Above it
 * the plain reference would cost more than the benchmark: the reference comes from the CPU BLAS's dgemm
 * when one is loaded (every element still compared: method "blas-reference"); without one, BENCH_SAMPLES
 * elements are compared one by one and every row is checked by random projections (Freivalds: C x = A (B x)
 * for random +-1 vectors x, within the sum of the row's element tolerances): method "sampled", which
 * catches gross errors (a lazy or broken kernel) but not one element slightly off. */
#define BENCH_FULL_CHECK_N 512u
#define BENCH_SAMPLES 2048u
#define BENCH_PROJECTIONS 2u
/* What the output buffer holds before the first run (so "the kernel wrote nothing" is seen). */
#define BENCH_SENTINEL 0.1234

/* One size's problem: inputs in device format, padded to NP with zeros. */
struct bench_problem {
    struct compute_problem sp;  /* n x n inputs, exact values and norms (owned) */
    size_t np;                /* padded size (>= n) */
    void *a, *b;              /* np x np device-format inputs, zero padding (owned) */
    void *sentinel;           /* np x np filled with BENCH_SENTINEL: the output's starting contents (owned) */
};

/* The outcome of one check. */
struct bench_check {
    const char *method;       /* "full", "blas-reference" or "sampled" */
    struct compute_check c;     /* full: every element; sampled: the sampled elements */
    size_t rows_wrong;        /* sampled: rows that failed the projection check */
    size_t rows;              /* sampled: rows checked by projection (N) */
};

/* Element size of P in bytes: 4, 8, 2. */
size_t bench_prec_size(enum bench_prec p);
/* "fp32", "fp64", "fp16". */
const char *bench_prec_name(enum bench_prec p);

/* Make the problem of size N padded to NP (>= N) from SEED. The random pass of the smoke test when it means
 * something at N, else its exact pass (fp16 from N = 1022). Returns 0, or -1 when out of memory.
 * Free with bench_problem_free (also after a failure). */
int bench_problem_make(struct bench_problem *bp, enum bench_prec p, unsigned n, size_t np, unsigned long long seed);
void bench_problem_free(struct bench_problem *bp);

/* A CBLAS dgemm (cblas_dgemm's signature), used to compute large references. */
typedef void (*bench_dgemm_fn)(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                               const double *b, int ldb, double beta, double *c, int ldc);

/* Check GOT (np x np, device format) against the problem; DGEMM (may be NULL) computes the reference of
 * sizes above BENCH_FULL_CHECK_N. Returns 0, or -1 when out of memory. */
int bench_problem_check(struct bench_problem *bp, const void *got, bench_dgemm_fn dgemm, struct bench_check *out);
/* True when OUT found no error. */
bool bench_check_ok(const struct bench_check *out);
/* One line for people about a failed check (heap, caller frees; NULL when out of memory). */
char *bench_check_describe(const struct bench_check *out);
/* A sweep point's verdict into PT: status (ok or wrong), check, max_error, wrong_elements, wrong_rows,
 * detail (why, for a wrong one). */
void bench_check_to_json(json_object *pt, const struct bench_check *chk);

#endif
