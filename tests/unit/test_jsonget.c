/* test_jsonget.c: unit tests of the JSON helpers: member getters (jsonget) and values from untrusted strings (jsonstr). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "jsonstr.h"

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
    int64_t i = 0;
    assert_true(jsonget_int_ex(o, "neg", &i));
    assert_int_equal(i, -4);
    assert_string_equal(jsonget_str(jsonget_object(o, "o"), "s"), "inner");
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
    int64_t i = 42;
    assert_false(jsonget_int_ex(o, "d", &i));
    assert_false(jsonget_int_ex(o, "n", &i));
    assert_false(jsonget_int_ex(o, "missing", &i));
    assert_false(jsonget_int_ex(NULL, "i", &i));
    assert_int_equal(i, 42); /* untouched */
    assert_null(jsonget_object(o, "a"));
    assert_null(jsonget_object(o, "n"));
    assert_null(jsonget_object(o, "s"));
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

static void test_jsonstr_strings(void **state)
{
    (void)state;
    assert_null(jsonstr_or_null(NULL));
    assert_null(jsonstr_sanitized(NULL));
    json_object *o = jsonstr_sanitized("bad\x1b[31m\xff" "byte");
    const char *s = json_object_get_string(o);
    for (const char *p = s; *p; p++)
        assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
    assert_non_null(strstr(s, "bad"));
    json_object_put(o);
}

static void test_jsonstr_clean_copy_bounds(void **state)
{
    (void)state;
    json_object *v = json_tokener_parse("{\"long\": \"abcdefghij\", \"keykeykeykey\": 1, \"a\": [1, 2, 3, 4, 5],"
                                        " \"deep\": {\"d\": {\"d\": {\"d\": 7}}}, \"ctl\": \"x\\u0007y\","
                                        " \"b\": true, \"f\": 2.5, \"n\": null}");
    assert_non_null(v);
    const struct jsonstr_limits lim = {.depth = 2, .string = 4, .items = 3, .key = 6};
    json_object *c = jsonstr_clean_copy(v, &lim);
    assert_string_equal(jsonget_str(c, "long"), "abcd");
    assert_int_equal(jsonget_int(c, "keykey", -1), 1); /* key cut to 6 bytes */
    size_t n = 0;
    assert_non_null(jsonget_array(c, "a", &n));
    assert_int_equal(n, 3);
    json_object *d = jsonget(jsonget(c, "deep"), "d");
    assert_non_null(d);
    assert_null(jsonget(d, "d")); /* depth 3 is beyond the bound */
    const char *ctl = jsonget_str(c, "ctl");
    assert_non_null(ctl);
    assert_null(strchr(ctl, '\a'));
    assert_int_equal(jsonget_tri(c, "b"), 1);
    double f = 0;
    assert_true(jsonget_num(c, "f", &f) && f == 2.5);
    assert_null(jsonget(c, "n"));
    json_object_put(c);
    json_object_put(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_present_members),
        cmocka_unit_test(test_wrong_type_missing_and_null),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_jsonstr_strings),
        cmocka_unit_test(test_jsonstr_clean_copy_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
