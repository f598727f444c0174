/* test_jsonget.c: unit tests of the JSON member getters: each type, wrong types, null, missing and non-objects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jsonget.h"

static json_object *sample(void)
{
    return json_tokener_parse("{\"s\": \"text\", \"i\": 9007199254740993, \"neg\": -4, \"d\": 2.5, \"t\": true,"
                              " \"f\": false, \"n\": null, \"a\": [1, 2, 3], \"o\": {\"s\": \"inner\"}}");
}

static void test_present_members(void **state)
{
    (void)state;
    json_object *o = sample();
    assert_non_null(o);
    assert_string_equal(jsonget_str(o, "s"), "text");
    assert_string_equal(jsonget_str(jsonget(o, "o"), "s"), "inner");
    assert_true(jsonget_int(o, "i", 0) == INT64_C(9007199254740993));
    assert_int_equal(jsonget_int(o, "neg", 0), -4);
    assert_int_equal(jsonget_tri(o, "t"), 1);
    assert_int_equal(jsonget_tri(o, "f"), 0);
    double d = 0;
    assert_true(jsonget_num(o, "d", &d));
    assert_true(d == 2.5);
    assert_true(jsonget_num(o, "neg", &d));
    assert_true(d == -4.0);
    size_t n = 99;
    assert_non_null(jsonget_array(o, "a", &n));
    assert_int_equal(n, 3);
    json_object_put(o);
}

static void test_wrong_type_missing_and_null(void **state)
{
    (void)state;
    json_object *o = sample();
    assert_null(jsonget(o, "missing"));
    assert_null(jsonget(o, "n"));
    assert_null(jsonget_str(o, "i"));
    assert_null(jsonget_str(o, "n"));
    assert_int_equal(jsonget_int(o, "d", -7), -7); /* a double is not an integer */
    assert_int_equal(jsonget_int(o, "s", -7), -7);
    assert_int_equal(jsonget_int(o, "n", -7), -7);
    assert_int_equal(jsonget_tri(o, "n"), -1);
    assert_int_equal(jsonget_tri(o, "i"), -1);
    assert_int_equal(jsonget_tri(o, "missing"), -1);
    double d = 42;
    assert_false(jsonget_num(o, "s", &d));
    assert_false(jsonget_num(o, "t", &d));
    assert_true(d == 42); /* untouched */
    size_t n = 99;
    assert_null(jsonget_array(o, "o", &n));
    assert_int_equal(n, 0);
    json_object_put(o);
}

static void test_not_an_object(void **state)
{
    (void)state;
    assert_null(jsonget(NULL, "s"));
    assert_null(jsonget_str(NULL, "s"));
    assert_int_equal(jsonget_int(NULL, "i", 5), 5);
    assert_int_equal(jsonget_tri(NULL, "t"), -1);
    json_object *a = json_tokener_parse("[{\"s\": \"x\"}]");
    assert_null(jsonget(a, "s"));
    assert_null(jsonget_str(a, "0"));
    json_object_put(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_present_members),
        cmocka_unit_test(test_wrong_type_missing_and_null),
        cmocka_unit_test(test_not_an_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
