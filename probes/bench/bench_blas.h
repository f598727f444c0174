/* bench_blas.h: the BLAS libraries `bench` compares against, loaded at run time: a CPU CBLAS and CLBlast. */
#ifndef GPUCHECKUP_BENCH_BLAS_H
#define GPUCHECKUP_BENCH_BLAS_H

#include <stddef.h>
#include <stdint.h>
#include <CL/cl.h>

/* CBLAS and CLBlast enumerator values, from their C headers (cblas.h: CblasRowMajor = 101,
 * CblasNoTrans = 111; clblast_c.h: CLBlastLayoutRowMajor = 101, CLBlastTransposeNo = 111). */
#define BENCH_BLAS_ROW_MAJOR 101
#define BENCH_BLAS_NO_TRANS 111

/* The CPU BLAS: the CBLAS sgemm and dgemm of OpenBLAS or of any reference-compatible libcblas/libblas. */
struct bench_cblas {
    void *handle;
    char *path;      /* the file loaded (heap) */
    const char *soname; /* the name that was dlopened (static or from the environment) */
    void (*sgemm)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                  const float *b, int ldb, float beta, float *c, int ldc);
    void (*dgemm)(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a, int lda,
                  const double *b, int ldb, double beta, double *c, int ldc);
    void (*set_threads)(int n); /* openblas_set_num_threads, when present (may be NULL) */
};

/* CLBlast's GEMM entry points (clblast_c.h). */
typedef int (*bench_clblast_sgemm_fn)(int layout, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                                      cl_mem a, size_t ao, size_t lda, cl_mem b, size_t bo, size_t ldb, float beta,
                                      cl_mem c, size_t co, size_t ldc, cl_command_queue *q, cl_event *ev);
typedef int (*bench_clblast_dgemm_fn)(int layout, int ta, int tb, size_t m, size_t n, size_t k, double alpha,
                                      cl_mem a, size_t ao, size_t lda, cl_mem b, size_t bo, size_t ldb, double beta,
                                      cl_mem c, size_t co, size_t ldc, cl_command_queue *q, cl_event *ev);
typedef int (*bench_clblast_hgemm_fn)(int layout, int ta, int tb, size_t m, size_t n, size_t k, uint16_t alpha,
                                      cl_mem a, size_t ao, size_t lda, cl_mem b, size_t bo, size_t ldb, uint16_t beta,
                                      cl_mem c, size_t co, size_t ldc, cl_command_queue *q, cl_event *ev);
struct bench_clblast {
    void *handle;
    char *path;
    bench_clblast_sgemm_fn sgemm;
    bench_clblast_dgemm_fn dgemm;
    bench_clblast_hgemm_fn hgemm; /* may be NULL */
};

/* The Debian packages named in the notes when a library is missing. */
#define BENCH_CBLAS_PACKAGE "libopenblas0"
#define BENCH_CLBLAST_PACKAGE "libclblast1"

/* Load the CPU BLAS: GPUCHECKUP_LIBCBLAS when set (tests: a name that does not exist hides it), else
 * libopenblas.so.0, libcblas.so.3, libblas.so.3, the first with cblas_sgemm and cblas_dgemm. Returns 0, or
 * -1 with ERR saying what was tried. Free with bench_cblas_close. */
int bench_cblas_open(struct bench_cblas *b, char *err, size_t errlen);
void bench_cblas_close(struct bench_cblas *b);

/* Load CLBlast: GPUCHECKUP_LIBCLBLAST when set (tests), else libclblast.so.1. Returns 0 or -1 with ERR.
 * Call in an isolated child only (it links the OpenCL loader). Free with bench_clblast_close. */
int bench_clblast_open(struct bench_clblast *b, char *err, size_t errlen);
void bench_clblast_close(struct bench_clblast *b);

#endif
