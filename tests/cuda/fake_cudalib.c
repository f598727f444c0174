/* fake_cudalib.c: a fake libcudart / libcudnn for the library tests: a chosen version, or a crash or hang when asked. */
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
