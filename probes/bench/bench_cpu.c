/* bench_cpu.c: `bench`'s baseline: the CPU BLAS (OpenBLAS or another CBLAS) sweep, in its own child. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "bench_verify.h"
#include "jsonnum.h"
#include "strutil.h"

/* One CBLAS GEMM of size N on P's inputs into C. */
static void bench_cpu_gemm(const struct bench_cblas *b, enum bench_prec p, struct bench_problem *pr, void *c)
{
    int n = (int)pr->sp.n;
    if (p == BENCH_FP32)
        b->sgemm(BENCH_BLAS_ROW_MAJOR, BENCH_BLAS_NO_TRANS, BENCH_BLAS_NO_TRANS, n, n, n, 1.0f, pr->a, n, pr->b, n,
                 0.0f, c, n);
    else
        b->dgemm(BENCH_BLAS_ROW_MAJOR, BENCH_BLAS_NO_TRANS, BENCH_BLAS_NO_TRANS, n, n, n, 1.0, pr->a, n, pr->b, n, 0.0,
                 c, n);
}

/* Time and verify size N. Returns the point (NULL: out of memory) and the median run time in *RUN_MS. */
static json_object *bench_cpu_point(const struct bench_cblas *b, enum bench_prec p, unsigned n, bool warm,
                                    double *run_ms)
{
    struct bench_problem pr;
    size_t bytes = (size_t)n * n * bench_prec_size(p);
    void *c = NULL;
    if (bench_problem_make(&pr, p, n, n, BENCH_SEED + n) < 0 || !(c = malloc(bytes))) {
        bench_problem_free(&pr);
        return NULL;
    }
    memcpy(c, pr.sentinel, bytes);
    if (warm)
        bench_cpu_gemm(b, p, &pr, c);
    double ms[BENCH_MAX_RUNS];
    unsigned runs = 0;
    while (runs < BENCH_MAX_RUNS) {
        double t0 = jsonnum_now_ms();
        bench_cpu_gemm(b, p, &pr, c);
        ms[runs++] = jsonnum_now_ms() - t0;
        if (runs >= BENCH_MIN_RUNS && ms[runs - 1] >= BENCH_SHORT_RUN_MS)
            break;
    }
    struct bench_check chk;
    json_object *pt = NULL;
    if (bench_problem_check(&pr, c, NULL, &chk) == 0) { /* not the library checking itself */
        bool right = bench_check_ok(&chk);
        double med = bench_median(ms, runs), flops = 2.0 * n * (double)n * n;
        pt = json_object_new_object();
        json_object_object_add(pt, "n", json_object_new_int((int)n));
        bench_check_to_json(pt, &chk);
        json_object_object_add(pt, "runs", json_object_new_int((int)runs));
        json_object_object_add(pt, "timer", json_object_new_string("host"));
        json_object_object_add(pt, "ms", jsonnum_ms(med));
        json_object_object_add(pt, "host_ms", jsonnum_ms(med));
        json_object_object_add(pt, "ms_min", jsonnum_ms(ms[0]));
        json_object_object_add(pt, "ms_max", jsonnum_ms(ms[runs - 1]));
        json_object_object_add(pt, "gflops", right && med > 0 ? jsonnum_sig(flops / (med * 1e6), 4) : NULL);
        json_object_object_add(pt, "gflops_min", right && ms[runs - 1] > 0 ? jsonnum_sig(flops / (ms[runs - 1] * 1e6), 4) : NULL);
        json_object_object_add(pt, "gflops_max", right && ms[0] > 0 ? jsonnum_sig(flops / (ms[0] * 1e6), 4) : NULL);
        *run_ms = med;
    }
    free(c);
    bench_problem_free(&pr);
    return pt;
}

static json_object *bench_cpu_sweep(const struct bench_cpu_args *a, const struct bench_cblas *b, enum bench_prec p,
                                    double budget_ms)
{
    json_object *sw = json_object_new_object(), *points = json_object_new_array();
    json_object_object_add(sw, "precision", json_object_new_string(bench_prec_name(p)));
    json_object_object_add(sw, "budget_ms", jsonnum_ms(budget_ms));
    static const unsigned sizes[] = BENCH_SIZES;
    unsigned max_n = a->max_n ? a->max_n : BENCH_MAX_N, last_n = 0;
    double t0 = jsonnum_now_ms(), last_ms = NAN;
    const char *stopped = "max-size", *status = "ok";
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && sizes[i] <= max_n; i++) {
        unsigned n = sizes[i];
        if (last_n && jsonnum_now_ms() - t0 + last_ms * pow((double)n / last_n, 3.0) * (BENCH_MIN_RUNS + 1) > budget_ms) {
            stopped = "budget";
            break;
        }
        bench_stage(a->stage, "CPU BLAS %s N=%u", bench_prec_name(p), n);
        double ms = NAN;
        json_object *pt = bench_cpu_point(b, p, n, i == 0, &ms);
        if (!pt) {
            stopped = "error";
            break;
        }
        json_object *st = NULL;
        if (json_object_object_get_ex(pt, "status", &st) && strcmp(json_object_get_string(st), "wrong") == 0)
            status = "wrong";
        json_object_array_add(points, pt);
        last_n = n;
        last_ms = ms;
    }
    json_object_object_add(sw, "status", json_object_new_string(status));
    json_object_object_add(sw, "stopped", json_object_new_string(stopped));
    json_object_object_add(sw, "elapsed_ms", jsonnum_ms(jsonnum_now_ms() - t0));
    json_object_object_add(sw, "points", points);
    return sw;
}

json_object *bench_cpu_child(void *arg)
{
    struct bench_cpu_args *a = arg;
    struct bench_cblas b;
    char msg[512];
    json_object *out = json_object_new_object();
    bench_stage(a->stage, "loading the CPU BLAS");
    if (bench_cblas_open(&b, msg, sizeof(msg)) < 0) {
        json_object_object_add(out, "status", json_object_new_string("missing"));
        json_object_object_add(out, "detail", json_object_new_string(str_sanitize(msg)));
        return out;
    }
    json_object_object_add(out, "status", json_object_new_string("loaded"));
    json_object_object_add(out, "library", json_object_new_string(b.soname));
    json_object_object_add(out, "path", json_object_new_string(str_sanitize(b.path)));
    json_object *sweeps = json_object_new_array();
    double w = ((a->precs & 1u) ? 2.0 : 0.0) + ((a->precs & 2u) ? 1.0 : 0.0);
    for (int p = 0; p < 2 && w > 0; p++)
        if (a->precs & (1u << p))
            json_object_array_add(sweeps, bench_cpu_sweep(a, &b, (enum bench_prec)p, a->budget_ms * (p == 0 ? 2.0 : 1.0) / w));
    json_object_object_add(out, "sweeps", sweeps);
    bench_stage(a->stage, "done");
    bench_cblas_close(&b);
    return out;
}
