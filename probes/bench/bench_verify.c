/* bench_verify.c: `bench`'s GEMM inputs (the smoke test's problems, padded) and their check against the CPU. */
#include "bench_verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_blas.h"
#include "jsonnum.h"
#include "strutil.h"

_Static_assert((int)BENCH_FP32 == (int)COMPUTE_FP32 && (int)BENCH_FP64 == (int)COMPUTE_FP64 &&
                   (int)BENCH_FP16 == (int)COMPUTE_FP16,
               "bench and smoke precisions share their numbering");

size_t bench_prec_size(enum bench_prec p)
{
    return compute_prec_size((enum compute_prec)p);
}

const char *bench_prec_name(enum bench_prec p)
{
    return compute_prec_name((enum compute_prec)p);
}

int bench_problem_make(struct bench_problem *bp, enum bench_prec p, unsigned n, size_t np, unsigned long long seed)
{
    memset(bp, 0, sizeof(*bp));
    enum compute_prec sp = (enum compute_prec)p;
    int rc = compute_problem_generate(&bp->sp, sp, COMPUTE_PASS_RANDOM, n, seed);
    if (rc == 1) {
        compute_problem_free(&bp->sp);
        rc = compute_problem_generate(&bp->sp, sp, COMPUTE_PASS_EXACT, n, seed);
    }
    if (rc != 0)
        return -1;
    size_t es = bench_prec_size(p);
    bp->np = np;
    bp->a = calloc(np * np, es);
    bp->b = calloc(np * np, es);
    bp->sentinel = malloc(np * np * es);
    if (!bp->a || !bp->b || !bp->sentinel)
        return -1;
    for (size_t i = 0; i < n; i++) {
        memcpy((char *)bp->a + i * np * es, (const char *)bp->sp.a + i * n * es, n * es);
        memcpy((char *)bp->b + i * np * es, (const char *)bp->sp.b + i * n * es, n * es);
    }
    for (size_t i = 0; i < np * np; i++)
        compute_value_set(sp, bp->sentinel, i, BENCH_SENTINEL);
    return 0;
}

void bench_problem_free(struct bench_problem *bp)
{
    compute_problem_free(&bp->sp);
    free(bp->a);
    free(bp->b);
    free(bp->sentinel);
    memset(bp, 0, sizeof(*bp));
}

/* The n x n corner of the padded GOT, as a new n x n device-format array (NULL: out of memory). */
static void *bench_corner(const struct bench_problem *bp, const void *got)
{
    size_t n = bp->sp.n, es = compute_prec_size(bp->sp.prec);
    char *c = malloc(n * n * es);
    if (!c)
        return NULL;
    for (size_t i = 0; i < n; i++)
        memcpy(c + i * n * es, (const char *)got + i * bp->np * es, n * es);
    return c;
}

static int bench_check_full(struct bench_problem *bp, const void *got, bench_dgemm_fn dgemm, struct bench_check *out)
{
    if (!bp->sp.ref && dgemm) {
        int n = (int)bp->sp.n;
        bp->sp.ref = malloc((size_t)n * n * sizeof(double));
        if (!bp->sp.ref)
            return -1;
        dgemm(BENCH_BLAS_ROW_MAJOR, BENCH_BLAS_NO_TRANS, BENCH_BLAS_NO_TRANS, n, n, n, 1.0, bp->sp.ad, n, bp->sp.bd, n,
              0.0, bp->sp.ref, n);
    }
    if (!bp->sp.ref && compute_problem_reference(&bp->sp) < 0)
        return -1;
    void *c = bench_corner(bp, got), *prior = bench_corner(bp, bp->sentinel);
    if (!c || !prior) {
        free(c);
        free(prior);
        return -1;
    }
    compute_verify(&bp->sp, c, prior, &out->c);
    free(c);
    free(prior);
    out->method = dgemm ? "blas-reference" : "full";
    return 0;
}

static unsigned long long bench_rand(unsigned long long *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Compare BENCH_SAMPLES elements (the first rows' first columns, then random ones) one by one. */
static void bench_check_samples(const struct bench_problem *bp, const void *got, struct compute_check *c)
{
    const struct compute_problem *p = &bp->sp;
    size_t n = p->n;
    unsigned long long st = 0x9E3779B97F4A7C15ull ^ n;
    size_t zero = 0, same = 0;
    memset(c, 0, sizeof(*c));
    for (size_t s = 0; s < BENCH_SAMPLES; s++) {
        size_t i = s < 64 ? s / 8 : bench_rand(&st) % n, j = s < 64 ? s % 8 : bench_rand(&st) % n;
        double e = 0;
        for (size_t k = 0; k < n; k++)
            e += p->ad[i * n + k] * p->bd[k * n + j];
        double g = compute_value_get(p->prec, got, i * bp->np + j);
        double tol = compute_problem_tolerance(p, (unsigned)i, (unsigned)j);
        double err = isfinite(g) ? fabs(g - e) : INFINITY;
        c->elements++;
        zero += g == 0.0;
        same += g == compute_value_get(p->prec, bp->sentinel, 0);
        if (!isfinite(g))
            c->nonfinite++;
        if (err > c->max_error)
            c->max_error = err;
        if (tol > c->max_tolerance)
            c->max_tolerance = tol;
        if (!(err <= tol)) {
            if (c->n_first < COMPUTE_MAX_MISMATCHES)
                c->first[c->n_first++] = (struct compute_mismatch){(unsigned)i, (unsigned)j, e, g};
            c->wrong++;
        }
    }
    if (c->wrong) {
        c->all_zero = zero == c->elements;
        c->unchanged = same == c->elements;
    }
}

/* Freivalds' check: for random +-1 vectors x, every row of C x must match A (B x) within the sum of the
 * row's element tolerances (plus the double rounding of the sums). Returns the rows that fail, or
 * (size_t)-1 when out of memory. */
static size_t bench_check_projection(const struct bench_problem *bp, const void *got)
{
    const struct compute_problem *p = &bp->sp;
    size_t n = p->n, bad = 0;
    double *x = malloc(n * sizeof(double)), *bx = malloc(n * sizeof(double)), *tolrow = malloc(n * sizeof(double));
    if (!x || !bx || !tolrow) {
        free(x), free(bx), free(tolrow);
        return (size_t)-1;
    }
    unsigned long long st = 0xC0FFEEull ^ n;
    unsigned char *rowbad = calloc(n, 1);
    for (unsigned v = 0; rowbad && v < BENCH_PROJECTIONS; v++) {
        for (size_t j = 0; j < n; j++)
            x[j] = (bench_rand(&st) & 1) ? 1.0 : -1.0;
        for (size_t k = 0; k < n; k++) {
            double s = 0;
            for (size_t j = 0; j < n; j++)
                s += p->bd[k * n + j] * x[j];
            bx[k] = s;
        }
        for (size_t i = 0; i < n; i++) {
            double z = 0, y = 0, mag = 0, tol = 0;
            for (size_t k = 0; k < n; k++) {
                z += p->ad[i * n + k] * bx[k];
                mag += fabs(p->ad[i * n + k] * bx[k]);
            }
            for (size_t j = 0; j < n; j++) {
                double g = compute_value_get(p->prec, got, i * bp->np + j);
                y += g * x[j];
                mag += fabs(g);
                tol += compute_problem_tolerance(p, (unsigned)i, (unsigned)j);
            }
            tolrow[i] = tol + mag * 4.0 * n * 0x1p-53;
            if (!(fabs(y - z) <= tolrow[i]))
                rowbad[i] = 1;
        }
    }
    for (size_t i = 0; rowbad && i < n; i++)
        bad += rowbad[i];
    if (!rowbad)
        bad = (size_t)-1;
    free(rowbad);
    free(x);
    free(bx);
    free(tolrow);
    return bad;
}

int bench_problem_check(struct bench_problem *bp, const void *got, bench_dgemm_fn dgemm, struct bench_check *out)
{
    memset(out, 0, sizeof(*out));
    if (bp->sp.n <= BENCH_FULL_CHECK_N || dgemm)
        return bench_check_full(bp, got, bp->sp.n <= BENCH_FULL_CHECK_N ? NULL : dgemm, out);
    out->method = "sampled";
    out->rows = bp->sp.n;
    bench_check_samples(bp, got, &out->c);
    out->rows_wrong = bench_check_projection(bp, got);
    return out->rows_wrong == (size_t)-1 ? -1 : 0;
}

bool bench_check_ok(const struct bench_check *out)
{
    return out->c.wrong == 0 && out->rows_wrong == 0;
}

char *bench_check_describe(const struct bench_check *out)
{
    if (out->c.wrong > 0) {
        char *s = compute_check_describe(&out->c);
        if (!s || strcmp(out->method, "sampled") != 0)
            return s;
        char *t = str_printf("%s (of the sampled elements; %zu rows fail the projection check)", s, out->rows_wrong);
        free(s);
        return t;
    }
    return str_printf("%zu of %zu rows fail the projection check C x = A (B x)", out->rows_wrong, out->rows);
}

void bench_check_to_json(json_object *pt, const struct bench_check *chk)
{
    bool right = bench_check_ok(chk);
    json_object_object_add(pt, "status", json_object_new_string(right ? "ok" : "wrong"));
    json_object_object_add(pt, "check", json_object_new_string(chk->method));
    json_object_object_add(pt, "max_error", jsonnum_sig(chk->c.max_error, 6));
    json_object_object_add(pt, "wrong_elements", json_object_new_int64((int64_t)chk->c.wrong));
    json_object_object_add(pt, "wrong_rows", json_object_new_int64((int64_t)chk->rows_wrong));
    char *why = right ? NULL : bench_check_describe(chk);
    json_object_object_add(pt, "detail", why ? json_object_new_string(str_sanitize(why)) : NULL);
    free(why);
}
