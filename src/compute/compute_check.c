/* compute_check.c: a compute check's inputs, CPU reference and result checks (pure C, no API). */
#include "compute_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonnum.h"
#include "strutil.h"

static const char *const smoke_prec_tab[COMPUTE_N_PREC] = {
    [COMPUTE_FP32] = "fp32", [COMPUTE_FP64] = "fp64", [COMPUTE_FP16] = "fp16"};
const struct gc_names compute_prec_names = GC_NAMES(smoke_prec_tab);

static const struct {
    size_t size;
    int digits;        /* significand bits: integers up to 2^digits are exact */
    double unit;       /* unit roundoff, 2^-digits */
    double min_normal; /* smallest normal value (flush-to-zero allowance) */
} smoke_precs[COMPUTE_N_PREC] = {
    [COMPUTE_FP32] = {4, 24, 0x1p-24, 0x1p-126},
    [COMPUTE_FP64] = {8, 53, 0x1p-53, 0x1p-1022},
    [COMPUTE_FP16] = {2, 11, 0x1p-11, 0x1p-14},
};

const char *compute_prec_name(enum compute_prec p)
{
    const char *n = gc_name(&compute_prec_names, (int)p);
    return n ? n : "unknown";
}

size_t compute_prec_size(enum compute_prec p)
{
    return (unsigned)p < COMPUTE_N_PREC ? smoke_precs[p].size : 0;
}

const char *compute_pass_name(enum compute_pass_kind k)
{
    return k == COMPUTE_PASS_EXACT ? "exact" : k == COMPUTE_PASS_RANDOM ? "random" : "unknown";
}

uint16_t compute_half_from_double(double v)
{
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v))
        return sign | 0x7e00;
    double a = fabs(v);
    if (a >= 65520.0) /* halfway between 65504 and the next step rounds up, to infinity */
        return sign | 0x7c00;
    if (a < 0x1p-14) {
        /* Subnormal (or zero): a multiple of 2^-24; 1024 of them is the smallest normal, same bits. */
        return sign | (uint16_t)rint(ldexp(a, 24));
    }
    int ex = 0;
    double f = frexp(a, &ex); /* a = f * 2^ex, f in [0.5, 1) */
    int e = ex - 1;           /* a = (2f) * 2^e, 2f in [1, 2) */
    double q = rint((2.0 * f - 1.0) * 1024.0);
    if (q >= 1024.0) {
        q = 0.0;
        e++;
    }
    if (e > 15)
        return sign | 0x7c00;
    return sign | (uint16_t)((unsigned)(e + 15) << 10) | (uint16_t)q;
}

double compute_half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    unsigned m = h & 0x3ffu;
    double v;
    if (e == 0)
        v = ldexp((double)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp((double)(1024u + m), e - 25);
    return (h & 0x8000) ? -v : v;
}

double compute_value_get(enum compute_prec p, const void *buf, size_t i)
{
    switch (p) {
    case COMPUTE_FP32:
        return (double)((const float *)buf)[i];
    case COMPUTE_FP64:
        return ((const double *)buf)[i];
    case COMPUTE_FP16:
        return compute_half_to_double(((const uint16_t *)buf)[i]);
    default:
        return NAN;
    }
}

void compute_value_set(enum compute_prec p, void *buf, size_t i, double v)
{
    switch (p) {
    case COMPUTE_FP32:
        ((float *)buf)[i] = (float)v;
        break;
    case COMPUTE_FP64:
        ((double *)buf)[i] = v;
        break;
    case COMPUTE_FP16:
        ((uint16_t *)buf)[i] = compute_half_from_double(v);
        break;
    default:
        break;
    }
}

/* splitmix64: small, fast, good enough for test data, and the same everywhere. */
static uint64_t smoke_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void compute_problem_free(struct compute_problem *p)
{
    free(p->a);
    free(p->b);
    free(p->ad);
    free(p->bd);
    free(p->ref);
    free(p->row_norm);
    free(p->col_norm);
    memset(p, 0, sizeof(*p));
}

/* gamma_k = k*u / (1 - k*u): the classic bound on the relative error of a k-term dot product. */
static double smoke_gamma(double k, double u)
{
    return k * u / (1.0 - k * u);
}

int compute_problem_generate(struct compute_problem *p, enum compute_prec prec, enum compute_pass_kind kind, unsigned n,
                           uint64_t seed)
{
    memset(p, 0, sizeof(*p));
    if ((unsigned)prec >= COMPUTE_N_PREC || n == 0)
        return -1;
    p->prec = prec;
    p->kind = kind;
    p->n = n;
    size_t nn = (size_t)n * n, es = smoke_precs[prec].size;
    double u = smoke_precs[prec].unit;
    if (kind == COMPUTE_PASS_RANDOM && (n + 2.0) * u >= 0.5)
        return 1;
    p->a = malloc(nn * es);
    p->b = malloc(nn * es);
    p->ad = malloc(nn * sizeof(double));
    p->bd = malloc(nn * sizeof(double));
    if (!p->a || !p->b || !p->ad || !p->bd)
        return -1;
    /* The seed leaves the precision out: fp32 and fp64 get the same inputs (one reference serves both). */
    uint64_t st = seed ^ ((uint64_t)kind << 48) ^ n;

    if (kind == COMPUTE_PASS_EXACT) {
        /* Every partial sum of a row times a column stays below 2^digits, so it is an exact integer:
         * terms per row * m^2 <= 2^digits. Beyond N = 2^digits (fp16 only), A is thinned out: row i
         * keeps the columns k with k % stride == i % stride. */
        double limit = ldexp(1.0, smoke_precs[prec].digits);
        unsigned stride = 1, m = 1;
        if ((double)n > limit)
            stride = (unsigned)ceil((double)n / limit);
        else
            m = (unsigned)floor(sqrt(limit / (double)n));
        if (m > 8)
            m = 8;
        if (m < 1)
            m = 1;
        for (size_t i = 0; i < nn; i++) {
            for (int which = 0; which < 2; which++) {
                uint64_t r = smoke_rand(&st);
                double v = (double)(1 + (r >> 1) % m) * ((r & 1) ? -1.0 : 1.0);
                if (which == 0 && stride > 1 && (i % n) % stride != (i / n) % stride)
                    v = 0.0;
                compute_value_set(prec, which == 0 ? p->a : p->b, i, v);
                (which == 0 ? p->ad : p->bd)[i] = v;
            }
        }
        return 0;
    }

    for (size_t i = 0; i < nn; i++) {
        for (int which = 0; which < 2; which++) {
            double v = (double)(smoke_rand(&st) >> 11) * 0x1p-53 * 2.0 - 1.0;
            void *buf = which == 0 ? p->a : p->b;
            if (prec == COMPUTE_FP64)
                v = (double)(float)v; /* the fp32 pass's inputs: products exact, sums test doubles */
            compute_value_set(prec, buf, i, v);
            (which == 0 ? p->ad : p->bd)[i] = compute_value_get(prec, buf, i); /* the rounded value */
        }
    }
    p->row_norm = calloc(n, sizeof(double));
    p->col_norm = calloc(n, sizeof(double));
    if (!p->row_norm || !p->col_norm)
        return -1;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n; k++) {
            p->row_norm[i] += p->ad[i * n + k] * p->ad[i * n + k];
            p->col_norm[k] += p->bd[i * n + k] * p->bd[i * n + k];
        }
    for (size_t i = 0; i < n; i++) {
        p->row_norm[i] = sqrt(p->row_norm[i]);
        p->col_norm[i] = sqrt(p->col_norm[i]);
    }
    /* |computed - exact| <= gamma_(n+2) * sum_k |a_ik b_kj| <= gamma * |a_i| |b_j| (Cauchy-Schwarz),
     * for the device and again for the double reference; twice that, for margin. Plus n times the
     * smallest normal: devices may flush subnormal products to zero. */
    p->tol_scale = 2.0 * (smoke_gamma(n + 2.0, u) + smoke_gamma(n + 2.0, 0x1p-53));
    p->tol_abs = (double)n * smoke_precs[prec].min_normal;
    return 0;
}

/* Two doubles in one SIMD register where the target has one (GCC and clang vector extension: SSE2 on
 * x86-64, NEON on arm64, pairs of scalars elsewhere). */
typedef double smoke_v2 __attribute__((vector_size(2 * sizeof(double))));

static smoke_v2 smoke_v2_load(const double *p)
{
    smoke_v2 v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static void smoke_v2_store(double *p, smoke_v2 v)
{
    memcpy(p, &v, sizeof(v));
}

/* Rows I0..I0+ROWS-1 (ROWS <= 4) of C = A x B in columns J0..J0+3, from BP (those columns of B, packed
 * four doubles per row of B). Each element is the sum over k in ascending order from 0.0, as the plain
 * i-k-j loop adds it, so the result is the same to the bit (no fused multiply-add: C11 mode keeps
 * products and sums apart). */
static void smoke_reference_block(const double *restrict ad, const double *restrict bp, double *restrict c,
                                  size_t n, size_t i0, size_t rows, size_t j0)
{
    const double *a0 = ad + i0 * n, *a1 = rows > 1 ? a0 + n : a0, *a2 = rows > 2 ? a0 + 2 * n : a0,
                 *a3 = rows > 3 ? a0 + 3 * n : a0;
    smoke_v2 c00 = {0.0, 0.0}, c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    for (size_t k = 0; k < n; k++) {
        smoke_v2 b0 = smoke_v2_load(bp + 4 * k), b1 = smoke_v2_load(bp + 4 * k + 2);
        smoke_v2 x0 = {a0[k], a0[k]}, x1 = {a1[k], a1[k]}, x2 = {a2[k], a2[k]}, x3 = {a3[k], a3[k]};
        c00 += x0 * b0;
        c01 += x0 * b1;
        c10 += x1 * b0;
        c11 += x1 * b1;
        c20 += x2 * b0;
        c21 += x2 * b1;
        c30 += x3 * b0;
        c31 += x3 * b1;
    }
    const smoke_v2 out[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
    for (size_t r = 0; r < rows; r++) {
        smoke_v2_store(c + (i0 + r) * n + j0, out[r][0]);
        smoke_v2_store(c + (i0 + r) * n + j0 + 2, out[r][1]);
    }
}

int compute_problem_reference(struct compute_problem *p)
{
    size_t n = p->n;
    free(p->ref);
    p->ref = calloc(n * n, sizeof(double));
    double *bp = malloc(n * 4 * sizeof(double));
    if (!p->ref || !bp) {
        free(bp);
        return -1;
    }
    /* Blocks of 4 x 4 elements held in registers while k runs; B's four columns packed together, so the
     * walk down them reads consecutive memory (a walk down B itself, with rows a power of two apart,
     * would fall into a few cache sets and miss all the time). About 4x the plain loop at N = 256. */
    size_t j0 = 0;
    for (; j0 + 4 <= n; j0 += 4) {
        for (size_t k = 0; k < n; k++)
            memcpy(bp + 4 * k, p->bd + k * n + j0, 4 * sizeof(double));
        for (size_t i0 = 0; i0 < n; i0 += 4)
            smoke_reference_block(p->ad, bp, p->ref, n, i0, n - i0 < 4 ? n - i0 : 4, j0);
    }
    /* The last N mod 4 columns, one element at a time in the same order. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = j0; j < n; j++) {
            double acc = 0.0;
            for (size_t k = 0; k < n; k++)
                acc += p->ad[i * n + k] * p->bd[k * n + j];
            p->ref[i * n + j] = acc;
        }
    free(bp);
    return 0;
}

int compute_problem_reference_like(struct compute_problem *p, const struct compute_problem *same)
{
    size_t bytes = (size_t)p->n * p->n * sizeof(double);
    if (!same || !same->ref || same->n != p->n || same->kind != p->kind || memcmp(same->ad, p->ad, bytes) != 0 ||
        memcmp(same->bd, p->bd, bytes) != 0)
        return compute_problem_reference(p);
    free(p->ref);
    p->ref = malloc(bytes);
    if (!p->ref)
        return -1;
    memcpy(p->ref, same->ref, bytes);
    return 0;
}

double compute_problem_tolerance(const struct compute_problem *p, unsigned row, unsigned col)
{
    if (p->kind == COMPUTE_PASS_EXACT || !p->row_norm || !p->col_norm)
        return 0.0;
    return p->tol_scale * p->row_norm[row] * p->col_norm[col] + p->tol_abs;
}

/* True when element I of GOT matches EXPECTED within TOL (exact when TOL is 0). NaN never matches. */
static bool smoke_matches(double got, double expected, double tol)
{
    if (!isfinite(got))
        return false;
    return tol == 0.0 ? got == expected : fabs(got - expected) <= tol;
}

void compute_verify(const struct compute_problem *p, const void *got, const void *prior, struct compute_check *out)
{
    memset(out, 0, sizeof(*out));
    size_t n = p->n, nn = n * n;
    out->elements = nn;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            size_t idx = i * n + j;
            double g = compute_value_get(p->prec, got, idx), e = p->ref[idx];
            double tol = compute_problem_tolerance(p, (unsigned)i, (unsigned)j);
            if (tol > out->max_tolerance)
                out->max_tolerance = tol;
            if (!isfinite(g)) {
                out->nonfinite++;
                out->max_error = INFINITY;
            } else if (fabs(g - e) > out->max_error) {
                out->max_error = fabs(g - e);
            }
            if (smoke_matches(g, e, tol))
                continue;
            out->wrong++;
            if (out->n_first < COMPUTE_MAX_MISMATCHES)
                out->first[out->n_first++] =
                    (struct compute_mismatch){.row = (unsigned)i, .col = (unsigned)j, .expected = e, .got = g};
        }
    }
    if (out->wrong == 0)
        return;

    /* Trivially wrong outputs, named so that people see at once what happened. */
    bool zero = true, copy_a = true, copy_b = true, trans = n > 1;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            size_t idx = i * n + j;
            double g = compute_value_get(p->prec, got, idx);
            if (g != 0.0)
                zero = false;
            if (g != p->ad[idx])
                copy_a = false;
            if (g != p->bd[idx])
                copy_b = false;
            if (trans && !smoke_matches(g, p->ref[j * n + i], compute_problem_tolerance(p, (unsigned)j, (unsigned)i)))
                trans = false;
        }
    }
    out->all_zero = zero;
    out->copied_a = copy_a;
    out->copied_b = copy_b;
    out->transposed = trans;
    out->unchanged = prior && memcmp(got, prior, nn * smoke_precs[p->prec].size) == 0;
}

char *compute_check_describe(const struct compute_check *c)
{
    const char *what = c->unchanged    ? "the kernel left the output buffer as it was"
                       : c->all_zero   ? "the output is all zeros"
                       : c->copied_a   ? "the output is a copy of input A"
                       : c->copied_b   ? "the output is a copy of input B"
                       : c->transposed ? "the output is the transpose of the right result"
                                       : NULL;
    char nonfinite[64] = "";
    if (c->nonfinite > 0)
        snprintf(nonfinite, sizeof(nonfinite), " (%zu NaN or infinite)", c->nonfinite);
    if (c->n_first == 0)
        return str_printf("%zu of %zu elements wrong%s%s%s", c->wrong, c->elements, nonfinite, what ? ": " : "",
                          what ? what : "");
    const struct compute_mismatch *m = &c->first[0];
    return str_printf("%zu of %zu elements wrong%s%s%s; first at row %u, column %u: expected %.9g, got %.9g",
                      c->wrong, c->elements, nonfinite, what ? ": " : "", what ? what : "", m->row, m->col,
                      m->expected, m->got);
}

uint32_t compute_pattern_word(size_t i)
{
    return (uint32_t)(i * 0x9E3779B9u) ^ ((i & 1) ? 0xAAAAAAAAu : 0x55555555u);
}

size_t compute_pattern_check(const void *got, size_t len)
{
    const unsigned char *g = got;
    size_t bad = 0;
    for (size_t i = 0; i < len / 4; i++) {
        uint32_t w;
        memcpy(&w, g + 4 * i, 4);
        if (w != compute_pattern_word(i))
            bad++;
    }
    return bad;
}

void compute_check_add_json(json_object *po, const struct compute_check *chk, double kms, double hms)
{
    json_object_object_add(po, "kernel_ms", jsonnum_ms(kms));
    json_object_object_add(po, "host_ms", jsonnum_ms(hms));
    json_object_object_add(po, "max_error", jsonnum_sig(chk->max_error, 6));
    json_object_object_add(po, "tolerance", jsonnum_sig(chk->max_tolerance, 6));
    json_object_object_add(po, "wrong_elements", json_object_new_int64((int64_t)chk->wrong));
}
