/* test_dlsyms.c: unit tests of the dlsym table helper against a real system library (libm). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <math.h>

#include "dlsyms.h"

struct mtable {
    double (*cos_fn)(double);
    double (*sqrt_fn)(double);
    double (*nope)(double);
};

static const char *const sqrt_fallbacks[] = {"gpucheckup_no_such_symbol_v9", "sqrt", NULL};

static void *open_libm(void)
{
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    assert_non_null(h);
    return h;
}

/* A required name resolves; a fallback list is walked in order; a missing optional stays NULL. */
static void test_load_with_fallbacks(void **state)
{
    (void)state;
    void *h = open_libm();
    const struct dlsym_entry tab[] = {
        {"cos", true, NULL, offsetof(struct mtable, cos_fn)},
        {"gpucheckup_no_such_symbol_v2", true, sqrt_fallbacks, offsetof(struct mtable, sqrt_fn)},
        {"gpucheckup_absent", false, NULL, offsetof(struct mtable, nope)},
    };
    struct mtable t = {0};
    t.nope = cos; /* must be overwritten with NULL */
    const char *missing = "untouched";
    assert_int_equal(dlsyms_load(h, tab, 3, &t, &missing), 0);
    assert_null(missing);
    assert_non_null(t.cos_fn);
    assert_true(t.cos_fn(0.0) == 1.0);
    assert_non_null(t.sqrt_fn);
    assert_true(t.sqrt_fn(16.0) == 4.0);
    assert_null(t.nope);
    assert_string_equal(dlsyms_resolved_name(h, &tab[1]), "sqrt");
    assert_string_equal(dlsyms_resolved_name(h, &tab[0]), "cos");
    assert_null(dlsyms_resolved_name(h, &tab[2]));
    dlclose(h);
}

/* The first missing required symbol is named; later rows are still resolved. */
static void test_missing_required(void **state)
{
    (void)state;
    void *h = open_libm();
    const struct dlsym_entry tab[] = {
        {"gpucheckup_absent_a", false, NULL, offsetof(struct mtable, nope)},
        {"gpucheckup_absent_b", true, NULL, offsetof(struct mtable, sqrt_fn)},
        {"cos", true, NULL, offsetof(struct mtable, cos_fn)},
    };
    struct mtable t = {0};
    const char *missing = NULL;
    assert_int_equal(dlsyms_load(h, tab, 3, &t, &missing), -1);
    assert_non_null(missing);
    assert_string_equal(missing, "gpucheckup_absent_b");
    assert_non_null(t.cos_fn);
    assert_null(t.sqrt_fn);
    assert_int_equal(dlsyms_load(h, tab, 3, &t, NULL), -1); /* MISSING may be NULL */
    dlclose(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_with_fallbacks),
        cmocka_unit_test(test_missing_required),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
