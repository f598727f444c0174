/* test_strutil.c: unit tests of the string helpers (number parsing, trimming, sanitising). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "strutil.h"

static void test_numbers(void **state)
{
    (void)state;
    uint64_t u;
    int64_t i;
    double d;
    assert_int_equal(str_to_u64("0x10de\n", 0, &u), 0);
    assert_int_equal(u, 0x10de);
    assert_int_equal(str_to_u64(" 42 ", 10, &u), 0);
    assert_int_equal(u, 42);
    assert_int_equal(str_to_u64("", 10, &u), -1);
    assert_int_equal(str_to_u64("-1", 10, &u), -1);
    assert_int_equal(str_to_u64("12abc", 10, &u), -1);
    assert_int_equal(str_to_u64("99999999999999999999999", 10, &u), -1);
    assert_int_equal(str_to_i64("-5", 10, &i), 0);
    assert_int_equal(i, -5);
    assert_int_equal(str_to_double("2.5", &d), 0);
    assert_true(d == 2.5);
    assert_int_equal(str_to_double("nan", &d), -1);
    assert_int_equal(str_to_double("inf", &d), -1);
    assert_int_equal(str_to_double("1e999", &d), -1);
}

static void test_trim_and_affixes(void **state)
{
    (void)state;
    char s[] = "  \t hello world \r\n";
    assert_string_equal(str_trim(s), "hello world");
    assert_true(str_starts_with("libOpenCL.so.1", "libOpenCL"));
    assert_false(str_starts_with("lib", "libOpenCL"));
    assert_true(str_ends_with("nvidia.icd", ".icd"));
    assert_false(str_ends_with("icd", ".icd"));
}

static void test_sanitise_keeps_utf8_drops_garbage(void **state)
{
    (void)state;
    char ok[] = "Gr\xc3\xbc\xc3\x9f Ger\xc3\xa4t \xe2\x9c\x93";
    char copy[sizeof(ok)];
    memcpy(copy, ok, sizeof(ok));
    assert_string_equal(str_sanitize(ok), copy);
    char bad[] = "a\xff" "b\xc3" "c\x1b" "d\xed\xa0\x80" "e";
    assert_string_equal(str_sanitize(bad), "a?b?c?d???e");
}

/* str_copy_n copies exactly N bytes of a text that need not end in NUL. */
static void test_copy_n(void **state)
{
    (void)state;
    const char text[4] = {'a', 'b', 'c', 'd'}; /* no NUL */
    char *c = str_copy_n(text, 3);
    assert_string_equal(c, "abc");
    free(c);
    c = str_copy_n(text, 0);
    assert_string_equal(c, "");
    free(c);
}

static void set_printf(char **dst, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    str_set_vprintf(dst, fmt, ap);
    va_end(ap);
}

/* A message field a new status replaces: the old text freed, the new one sanitised, NULL clears. */
static void test_set_vprintf(void **state)
{
    (void)state;
    char *msg = NULL;
    set_printf(&msg, "%s %d", "first", 1);
    assert_string_equal(msg, "first 1");
    set_printf(&msg, "bad\x01" "byte %s", "x\x02y");
    assert_string_equal(msg, "bad?byte x?y");
    set_printf(&msg, NULL);
    assert_null(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_n),
        cmocka_unit_test(test_set_vprintf),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_trim_and_affixes),
        cmocka_unit_test(test_sanitise_keeps_utf8_drops_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
