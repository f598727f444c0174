/* test_cuda_api.c: the CUresult name table, and the driver API table loaded from the real CUDA stub libcuda. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"

/* Every code in the table is found (so it is sorted for the binary search); unknown codes are NULL. */
static void test_result_names(void **state)
{
    (void)state;
    assert_string_equal(cuda_result_name(0), "CUDA_SUCCESS");
    assert_string_equal(cuda_result_name(34), "CUDA_ERROR_STUB_LIBRARY");
    assert_string_equal(cuda_result_name(100), "CUDA_ERROR_NO_DEVICE");
    assert_string_equal(cuda_result_name(221), "CUDA_ERROR_JIT_COMPILER_NOT_FOUND");
    assert_string_equal(cuda_result_name(802), "CUDA_ERROR_SYSTEM_NOT_READY");
    assert_string_equal(cuda_result_name(804), "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
    assert_string_equal(cuda_result_name(999), "CUDA_ERROR_UNKNOWN");
    assert_null(cuda_result_name(-1));
    assert_null(cuda_result_name(35));
    assert_null(cuda_result_name(100000));
    int found = 0;
    for (int c = 0; c <= 1000; c++)
        found += cuda_result_name(c) != NULL;
    assert_true(found >= 50);
}

/* The real stub (GC_CUDA_STUB, the toolkit's stubs/libcuda.so) exports every symbol of the table under
 * the versioned names, and its cuInit answers CUDA_ERROR_STUB_LIBRARY. */
static void test_real_stub(void **state)
{
    (void)state;
    const char *stub = getenv("GC_CUDA_STUB");
    assert_non_null(stub);
    void *h = dlopen(stub, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    struct cuda_api api;
    memset(&api, 0, sizeof(api));
    const char *missing = "x";
    assert_int_equal(cuda_api_load(h, &api, &missing), 0);
    assert_null(missing);
    assert_ptr_equal(api.handle, h);
    assert_true(cuda_api_has_compute(&api));
    assert_ptr_equal((void *)api.cuDeviceTotalMem, dlsym(h, "cuDeviceTotalMem_v2"));
    assert_ptr_equal((void *)api.cuMemAlloc, dlsym(h, "cuMemAlloc_v2"));
    assert_int_equal(api.cuInit(0), CUDA_ERROR_STUB_LIBRARY);
    dlclose(h);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest table_tests[] = {
        cmocka_unit_test(test_result_names),
    };
    const struct CMUnitTest stub_tests[] = {
        cmocka_unit_test(test_real_stub),
    };
    /* "stub": the real-stub test, registered by meson only where the CUDA toolkit's stub exists. */
    if (argc > 1 && strcmp(argv[1], "stub") == 0)
        return cmocka_run_group_tests(stub_tests, NULL, NULL);
    return cmocka_run_group_tests(table_tests, NULL, NULL);
}
