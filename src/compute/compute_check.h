/* compute_check.h: a compute check's inputs, CPU reference and result checks (pure C; every smoke test, bench). */
#ifndef GPUCHECKUP_COMPUTE_CHECK_H
#define GPUCHECKUP_COMPUTE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "typed.h"

/* The precisions the smoke test runs in. */
enum compute_prec {
    COMPUTE_FP32 = 0,
    COMPUTE_FP64,
    COMPUTE_FP16,
    COMPUTE_N_PREC,
};

/* The two passes of each precision. */
enum compute_pass_kind {
    COMPUTE_PASS_EXACT = 0, /* small integers: every product and partial sum is exact, compared exactly */
    COMPUTE_PASS_RANDOM,    /* random values in [-1, 1]: compared within a tolerance that grows with N */
    COMPUTE_N_PASS,
};

/* How many mismatches a check keeps (the first ones in row-major order). */
#define COMPUTE_MAX_MISMATCHES 8

/* "fp32", "fp64", "fp16": their names in the JSON (also read back by result_smoke.c). */
extern const struct gc_names compute_prec_names;
const char *compute_prec_name(enum compute_prec p);
/* Bytes of one element on the device: 4, 8, 2. */
size_t compute_prec_size(enum compute_prec p);
/* "exact", "random". */
const char *compute_pass_name(enum compute_pass_kind k);

/* IEEE half (binary16) conversions, round to nearest even; NaN and infinities kept. */
uint16_t compute_half_from_double(double v);
double compute_half_to_double(uint16_t h);

/* One pass: inputs in device format and their exact values, and the reference result. */
struct compute_problem {
    enum compute_prec prec;
    enum compute_pass_kind kind;
    unsigned n;
    void *a, *b;       /* device-format inputs, n*n elements each, row-major (owned) */
    double *ad, *bd;   /* the same values as doubles (owned) */
    double *ref;       /* the reference C = A x B (owned; filled by compute_problem_reference) */
    double *row_norm;  /* RANDOM: Euclidean norm of each row of A (owned) */
    double *col_norm;  /* RANDOM: Euclidean norm of each column of B (owned) */
    double tol_scale;  /* RANDOM: tolerance of element (i,j) = tol_scale * row_norm[i] * col_norm[j] + tol_abs */
    double tol_abs;
};

/* Generate the inputs of one pass of size N (>= 1) from SEED (deterministic). The exact pass keeps
 * every partial sum within the precision's integer range, thinning A out where N needs it (fp16).
 * Returns 0, -1 when out of memory, or 1 when the pass means nothing at this size (the random pass
 * when (N+2) * unit roundoff >= 1/2, i.e. fp16 from N = 1022: the error bound reaches the values
 * themselves). Free with
 * compute_problem_free (also after a non-zero return). */
int compute_problem_generate(struct compute_problem *p, enum compute_prec prec, enum compute_pass_kind kind, unsigned n,
                           uint64_t seed);
/* Compute the reference result (in double; exact for the exact pass). Returns 0 or -1 (memory). */
int compute_problem_reference(struct compute_problem *p);
/* The same, but copying the reference of SAME when it has the very same inputs (the fp32 and fp64
 * passes of one kind do, at every size); computes it otherwise. Returns 0 or -1 (memory). */
int compute_problem_reference_like(struct compute_problem *p, const struct compute_problem *same);
void compute_problem_free(struct compute_problem *p);

/* Tolerance of element (ROW, COL): 0 for the exact pass. */
double compute_problem_tolerance(const struct compute_problem *p, unsigned row, unsigned col);

struct compute_mismatch {
    unsigned row, col;
    double expected;
    double got; /* may be NaN or infinite */
};

/* The outcome of comparing a device result with the reference. */
struct compute_check {
    size_t elements;      /* n*n */
    size_t wrong;         /* elements not equal (exact) or outside the tolerance (random), non-finite included */
    size_t nonfinite;     /* NaN or infinite elements */
    double max_error;     /* largest |got - expected|; INFINITY when an element is not finite */
    double max_tolerance; /* largest tolerance applied (0 for the exact pass) */
    struct compute_mismatch first[COMPUTE_MAX_MISMATCHES];
    size_t n_first;
    /* Why the output is wrong, when it is trivially so (only looked for when wrong > 0): */
    bool all_zero;        /* every element is zero */
    bool unchanged;       /* the output buffer still holds what was there before the kernel */
    bool copied_a;        /* the output is input A */
    bool copied_b;        /* the output is input B */
    bool transposed;      /* the output is the transpose of the right result */
};

/* Compare GOT (device format, n*n elements) with P's reference. PRIOR (device format, may be NULL)
 * is what the output buffer held before the kernel ran. Fills OUT. */
void compute_verify(const struct compute_problem *p, const void *got, const void *prior, struct compute_check *out);

/* Add one checked pass's measurements to its JSON object PO: kernel_ms and host_ms (KMS, HMS; NaN: not
 * measured), max_error, tolerance and wrong_elements from CHK. The OpenCL and CUDA smoke tests share it. */
void compute_check_add_json(json_object *po, const struct compute_check *chk, double kms, double hms);

/* One line describing a failed check for people: "3 of 65536 elements wrong, first at row 0, column 5:
 * expected 12, got 13" or "the output is all zeros". Returns a heap string (caller frees), NULL when
 * out of memory. */
char *compute_check_describe(const struct compute_check *c);

/* A device-format value as a double. */
double compute_value_get(enum compute_prec p, const void *buf, size_t i);
/* Store V into element I of a device-format buffer (rounded to the precision). */
void compute_value_set(enum compute_prec p, void *buf, size_t i, double v);

/* The buffer round-trip pattern: word I of it (address-dependent, every bit toggles). */
uint32_t compute_pattern_word(size_t i);
/* Count the 32-bit words of GOT (LEN bytes, a multiple of 4) that differ from the pattern. */
size_t compute_pattern_check(const void *got, size_t len);

#endif
