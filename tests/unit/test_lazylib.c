/* test_lazylib.c: unit tests of the load-on-first-use library tables (src/util/lazylib.h), on libm and a missing name. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lazylib.h"
#include "lazyxml.h"

#define LIBM_FUNCTIONS(X, T) X(T, cos) X(T, sqrt)

struct libm_api {
    LIBM_FUNCTIONS(LAZYLIB_MEMBER, 0)
};

/* libm_table and libm_load(), as the real tables are made */
LAZYLIB_DEFINE(struct libm_api, libm_table, LIBM_FUNCTIONS, libm_load, "libm.so.6", "GC_TEST_LAZY_LIBM", "the test")

static const struct dlsym_entry libm_syms[] = {LIBM_FUNCTIONS(LAZYLIB_ROW, struct libm_api)};
static const struct dlsym_entry libm_bad_syms[] = {
    LAZYLIB_ROW(struct libm_api, cos)
    {"gpucheckup_no_such_function", true, NULL, offsetof(struct libm_api, sqrt)},
};

static void *load_libm(void *arg)
{
    const char *err = NULL;
    *(int *)arg = libm_load(&err);
    return NULL;
}

/* Threads asking at once all get the one loaded table; the functions are the library's. */
static void test_loads_once_from_many_threads(void **state)
{
    (void)state;
    unsetenv("GC_TEST_LAZY_LIBM");
    pthread_t t[8];
    int rc[8];
    for (int i = 0; i < 8; i++) {
        rc[i] = -7;
        assert_int_equal(pthread_create(&t[i], NULL, load_libm, &rc[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(rc[i], 0);
    }
    assert_true(libm_table.cos(0.0) == 1.0);
    assert_true(libm_table.sqrt(16.0) == 4.0);
    /* the answer is kept: a later override changes nothing */
    setenv("GC_TEST_LAZY_LIBM", "libgc-no-such-libm.so.6", 1);
    const char *err = "untouched";
    assert_int_equal(libm_load(&err), 0);
    assert_string_equal(err, "untouched");
    unsetenv("GC_TEST_LAZY_LIBM");
}

/* The override names the file, and the message names it, the variable, the user and dlerror's words;
 * the failure is kept too. A library that loads but lacks a function: named, with dlerror's words. */
static void test_messages(void **state)
{
    (void)state;
    static struct libm_api table;
    static struct lazylib lib = LAZYLIB_INIT("libm.so.6", "GC_TEST_LAZY_MISSING", "--frobnicate", libm_syms, &table);
    setenv("GC_TEST_LAZY_MISSING", "libgc-no-such-libm.so.6", 1);
    const char *err = NULL;
    assert_int_equal(lazylib_load(&lib, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, "--frobnicate needs libgc-no-such-libm.so.6 (GC_TEST_LAZY_MISSING), which cannot be "
                                "loaded: libgc-no-such-libm.so.6: cannot open shared object file"));
    unsetenv("GC_TEST_LAZY_MISSING"); /* libm itself would load now: the first answer stands */
    const char *again = NULL;
    assert_int_equal(lazylib_load(&lib, &again), -1);
    assert_ptr_equal(again, err);
    assert_null(table.cos);

    static struct libm_api bad;
    static struct lazylib badlib = LAZYLIB_INIT("libm.so.6", NULL, "the test", libm_bad_syms, &bad);
    assert_int_equal(lazylib_load(&badlib, &err), -1);
    assert_non_null(strstr(err, "the test needs libm.so.6, which has no gpucheckup_no_such_function: "));
    assert_non_null(strstr(err, "undefined symbol: gpucheckup_no_such_function"));
}

/* The real table: every libxml2 function the JUnit writer calls resolves in the system's library. */
static void test_libxml2_table_is_complete(void **state)
{
    (void)state;
    unsetenv(LAZYXML_ENV);
    const char *err = NULL;
    assert_int_equal(lazyxml_load(&err), 0);
    const void *const *p = (const void *const *)&lazyxml;
    for (size_t i = 0; i < sizeof(lazyxml) / sizeof(void *); i++)
        assert_non_null(p[i]);
    xmlBufferPtr b = lazyxml.xmlBufferCreate();
    assert_non_null(b);
    assert_int_equal(lazyxml.xmlBufferLength(b), 0);
    lazyxml.xmlBufferFree(b);
}

static const struct CMUnitTest lazylib_tests[] = {
    cmocka_unit_test(test_loads_once_from_many_threads),
    cmocka_unit_test(test_messages),
    cmocka_unit_test(test_libxml2_table_is_complete),
};

int main(void)
{
    return cmocka_run_group_tests(lazylib_tests, NULL, NULL);
}
