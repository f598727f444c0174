/* fake_libcublas.c: a fake libcublas.so.N for bench's tests: SGEMM on the host (the fake libcuda's device memory is host memory). */
#include <stdlib.h>
#include <string.h>

/* Environment: GC_FAKE_CUBLAS=lazy: cublasSgemm_v2 answers success and computes nothing; =create-fails:
 * cublasCreate_v2 returns CUBLAS_STATUS_NOT_INITIALIZED (1). Otherwise C = alpha A B + beta C, column-major,
 * as cuBLAS documents cublas<t>gemm() (only CUBLAS_OP_N, which is all gpucheckup asks for). */

#define EXPORT __attribute__((visibility("default")))

static int fake_handle;

static int fake_mode(const char *m)
{
    const char *v = getenv("GC_FAKE_CUBLAS");
    return v && strcmp(v, m) == 0;
}

EXPORT int cublasCreate_v2(void **handle)
{
    if (fake_mode("create-fails"))
        return 1;
    *handle = &fake_handle;
    return 0;
}

EXPORT int cublasDestroy_v2(void *handle)
{
    return handle == &fake_handle ? 0 : 1;
}

EXPORT int cublasSgemm_v2(void *handle, int ta, int tb, int m, int n, int k, const float *alpha, const float *a,
                          int lda, const float *b, int ldb, const float *beta, float *c, int ldc)
{
    if (handle != &fake_handle)
        return 1;
    if (ta != 0 || tb != 0)
        return 15; /* CUBLAS_STATUS_NOT_SUPPORTED */
    if (m < 0 || n < 0 || k < 0 || lda < m || ldb < k || ldc < m)
        return 7; /* CUBLAS_STATUS_INVALID_VALUE */
    if (fake_mode("lazy"))
        return 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float s = 0.0f;
            for (int t = 0; t < k; t++)
                s += a[i + (size_t)t * lda] * b[t + (size_t)j * ldb];
            c[i + (size_t)j * ldc] = *alpha * s + (*beta == 0.0f ? 0.0f : *beta * c[i + (size_t)j * ldc]);
        }
    return 0;
}
