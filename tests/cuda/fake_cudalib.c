/* fake_cudalib.c: a fake libcudart / libcudnn / libcublas for the library tests: a chosen version, or a crash or hang when asked. */
#include <stddef.h>
#include <unistd.h>

/* FAKE_CUDALIB_MODE: 0 answers FAKE_CUDALIB_VERSION, 1 crashes (SIGSEGV), 2 hangs, when asked its version;
 * 3 crashes, 4 hangs in its constructor (while dlopen loads it). */
#ifndef FAKE_CUDALIB_MODE
#define FAKE_CUDALIB_MODE 0
#endif
#ifndef FAKE_CUDALIB_CUDART
#define FAKE_CUDALIB_CUDART 13000
#endif
#ifndef FAKE_CUDALIB_VERSION
#define FAKE_CUDALIB_VERSION 13010
#endif

static int fake_cudalib_answer(void)
{
#if FAKE_CUDALIB_MODE == 1
    volatile int *volatile p = NULL;
    return *p;
#elif FAKE_CUDALIB_MODE == 2
    for (;;)
        pause();
    return 0;
#else
    return FAKE_CUDALIB_VERSION;
#endif
}

#if FAKE_CUDALIB_MODE == 3 || FAKE_CUDALIB_MODE == 4
__attribute__((constructor)) static void fake_cudalib_init(void)
{
#if FAKE_CUDALIB_MODE == 3
    volatile int *volatile p = NULL;
    *p = 1;
#else
    for (;;)
        pause();
#endif
}
#endif

/* cudaRuntimeGetVersion(int *) -> cudaError_t */
int cudaRuntimeGetVersion(int *v)
{
    *v = fake_cudalib_answer();
    return 0;
}

/* cudnnGetVersion(void) -> size_t, cudnnGetCudartVersion(void) -> size_t */
size_t cudnnGetVersion(void)
{
    return (size_t)fake_cudalib_answer();
}

size_t cudnnGetCudartVersion(void)
{
    return FAKE_CUDALIB_CUDART;
}

/* cublasGetProperty(libraryPropertyType, int *) -> cublasStatus_t: FAKE_CUDALIB_VERSION read as
 * major*10000 + minor*100 + patch (13.1.0: 130100). */
int cublasGetProperty(int type, int *v)
{
    int n = fake_cudalib_answer();
    *v = type == 0 ? n / 10000 : type == 1 ? (n / 100) % 100 : n % 100;
    return 0;
}

#ifdef FAKE_CUDALIB_NEEDS_CUDA
/* A reference to libcuda.so.1 (cuDriverGetVersion), so that the link keeps its DT_NEEDED entry. */
int cuDriverGetVersion(int *v);
int fake_cudalib_driver_version(void);
int fake_cudalib_driver_version(void)
{
    int v = 0;
    return cuDriverGetVersion(&v) == 0 ? v : -1;
}
#endif
