/* test_icd_parse.c: unit tests of the icd probe's parsers: .icd contents, ld.so.cache, ld.so.conf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_builder.h"
#include "icd_impl.h"

static struct icd_parsed parse(const char *buf, size_t len, enum icd_kind kind)
{
    struct icd_parsed p;
    assert_int_equal(icd_parse_content(buf, len, kind, &p), 0);
    assert_non_null(p.library);
    return p;
}

#define PARSE(lit, kind) parse((lit), sizeof(lit) - 1, (kind))

static void test_plain_line_is_fine_for_both(void **state)
{
    (void)state;
    enum icd_kind kinds[] = {ICD_KIND_OCL_ICD, ICD_KIND_KHRONOS, ICD_KIND_UNKNOWN, ICD_KIND_NONE};
    for (size_t i = 0; i < 4; i++) {
        struct icd_parsed p = PARSE("libpocl.so.2.10.0\n", kinds[i]);
        assert_string_equal(p.library, "libpocl.so.2.10.0");
        assert_int_equal(p.bad, 0);
        assert_int_equal(p.fatal, 0);
        icd_parsed_clear(&p);
        p = PARSE("/usr/lib/libx.so", kinds[i]); /* no newline at all */
        assert_string_equal(p.library, "/usr/lib/libx.so");
        assert_int_equal(p.bad, 0);
        icd_parsed_clear(&p);
    }
}

static void test_crlf(void **state)
{
    (void)state;
    struct icd_parsed p = PARSE("libx.so\r\n", ICD_KIND_OCL_ICD);
    assert_string_equal(p.library, "libx.so\r");
    assert_int_equal(p.fatal, ICD_BAD_CRLF);
    assert_int_equal(p.bad, ICD_BAD_CRLF);
    icd_parsed_clear(&p);
    p = PARSE("libx.so\r\n", ICD_KIND_KHRONOS);
    assert_int_equal(p.fatal, ICD_BAD_CRLF);
    icd_parsed_clear(&p);
}

static void test_whitespace(void **state)
{
    (void)state;
    struct icd_parsed p = PARSE("libx.so \n", ICD_KIND_OCL_ICD);
    assert_int_equal(p.fatal, ICD_BAD_WHITESPACE);
    icd_parsed_clear(&p);
    p = PARSE("\tlibx.so\n", ICD_KIND_KHRONOS);
    assert_int_equal(p.fatal, ICD_BAD_WHITESPACE);
    assert_string_equal(p.library, "\tlibx.so");
    icd_parsed_clear(&p);
    /* blanks and a CR: both are named */
    p = PARSE("libx.so \r\n", ICD_KIND_OCL_ICD);
    assert_true(p.bad & ICD_BAD_WHITESPACE);
    assert_true(p.bad & ICD_BAD_CRLF);
    assert_true(p.fatal & ICD_BAD_CRLF);
    icd_parsed_clear(&p);
}

static void test_extra_lines_depend_on_the_loader(void **state)
{
    (void)state;
    /* ocl-icd reads the first line only: harmless there, fatal for Khronos. */
    struct icd_parsed p = PARSE("libx.so\nliby.so\n", ICD_KIND_OCL_ICD);
    assert_string_equal(p.library, "libx.so");
    assert_int_equal(p.bad, ICD_BAD_EXTRA_LINES);
    assert_int_equal(p.fatal, 0);
    icd_parsed_clear(&p);
    p = PARSE("libx.so\nliby.so\n", ICD_KIND_KHRONOS);
    assert_string_equal(p.library, "libx.so\nliby.so");
    assert_int_equal(p.fatal, ICD_BAD_EXTRA_LINES);
    icd_parsed_clear(&p);
    /* two newlines: Khronos strips only one */
    p = PARSE("libx.so\n\n", ICD_KIND_KHRONOS);
    assert_string_equal(p.library, "libx.so\n");
    assert_int_equal(p.fatal, ICD_BAD_EXTRA_LINES);
    icd_parsed_clear(&p);
    p = PARSE("libx.so\n\n", ICD_KIND_OCL_ICD);
    assert_int_equal(p.fatal, 0);
    assert_int_equal(p.bad, ICD_BAD_EXTRA_LINES);
    icd_parsed_clear(&p);
    /* unknown loaders are read the strict (Khronos) way; no loader the Debian (ocl-icd) way */
    p = PARSE("libx.so\nliby.so", ICD_KIND_UNKNOWN);
    assert_int_equal(p.fatal, ICD_BAD_EXTRA_LINES);
    icd_parsed_clear(&p);
    p = PARSE("libx.so\nliby.so", ICD_KIND_NONE);
    assert_int_equal(p.fatal, 0);
    icd_parsed_clear(&p);
}

static void test_empty(void **state)
{
    (void)state;
    struct icd_parsed p = parse("", 0, ICD_KIND_OCL_ICD);
    assert_string_equal(p.library, "");
    assert_int_equal(p.fatal, ICD_BAD_EMPTY);
    icd_parsed_clear(&p);
    p = PARSE("\n", ICD_KIND_KHRONOS);
    assert_string_equal(p.library, "");
    assert_int_equal(p.fatal, ICD_BAD_EMPTY);
    icd_parsed_clear(&p);
    p = parse(NULL, 5, ICD_KIND_KHRONOS);
    assert_int_equal(p.fatal, ICD_BAD_EMPTY);
    icd_parsed_clear(&p);
    /* an empty first line under ocl-icd is an empty name */
    p = PARSE("\nlibx.so\n", ICD_KIND_OCL_ICD);
    assert_true(p.fatal & ICD_BAD_EMPTY);
    icd_parsed_clear(&p);
}

static void test_binary(void **state)
{
    (void)state;
    struct icd_parsed p = PARSE("lib\x01x.so\n", ICD_KIND_OCL_ICD);
    assert_int_equal(p.fatal, ICD_BAD_BINARY);
    icd_parsed_clear(&p);
    /* a NUL ends the string both loaders see: what precedes it still works */
    p = PARSE("libx.so\0garbage\xff\n", ICD_KIND_KHRONOS);
    assert_string_equal(p.library, "libx.so");
    assert_int_equal(p.library_len, 7);
    assert_true(p.bad & ICD_BAD_BINARY);
    assert_int_equal(p.fatal, 0);
    icd_parsed_clear(&p);
    p = PARSE("\0\0\0\0", ICD_KIND_OCL_ICD);
    assert_true(p.fatal & ICD_BAD_EMPTY);
    assert_true(p.bad & ICD_BAD_BINARY);
    icd_parsed_clear(&p);
}

static void test_overlong(void **state)
{
    (void)state;
    size_t n = ICD_NAME_MAX + 10;
    char *buf = malloc(n);
    assert_non_null(buf);
    memset(buf, 'a', n);
    struct icd_parsed p = parse(buf, n, ICD_KIND_OCL_ICD);
    assert_int_equal(p.fatal, ICD_BAD_OVERLONG);
    assert_int_equal(p.library_len, n);
    icd_parsed_clear(&p);
    p = parse(buf, ICD_NAME_MAX, ICD_KIND_OCL_ICD);
    assert_int_equal(p.fatal, 0);
    icd_parsed_clear(&p);
    free(buf);
}

static void test_bad_names_are_distinct(void **state)
{
    (void)state;
    const char *seen[ICD_BAD_COUNT];
    for (unsigned i = 0; i < ICD_BAD_COUNT; i++) {
        seen[i] = icd_bad_name(1u << i);
        assert_non_null(seen[i]);
        assert_non_null(icd_bad_text(1u << i));
        for (unsigned j = 0; j < i; j++)
            assert_string_not_equal(seen[i], seen[j]);
    }
    assert_null(icd_bad_name(1u << ICD_BAD_COUNT));
    assert_string_equal(icd_bad_name(ICD_BAD_CRLF), "crlf");
    assert_string_equal(icd_bad_name(ICD_BAD_EXTRA_LINES), "extra-lines");
}

static void test_kind_from_info(void **state)
{
    (void)state;
    assert_int_equal(icd_kind_from_info("OpenCL ICD Loader", "OCL Icd free software"), ICD_KIND_OCL_ICD);
    assert_int_equal(icd_kind_from_info("Khronos OpenCL ICD Loader", "Khronos Group"), ICD_KIND_KHRONOS);
    assert_int_equal(icd_kind_from_info(NULL, NULL), ICD_KIND_UNKNOWN);
    assert_int_equal(icd_kind_from_info("Vendor loader", "ACME"), ICD_KIND_UNKNOWN);
    assert_string_equal(icd_kind_name(ICD_KIND_OCL_ICD), "ocl-icd");
    assert_string_equal(icd_kind_name(ICD_KIND_KHRONOS), "khronos");
    assert_string_equal(icd_kind_name(ICD_KIND_UNKNOWN), "unknown");
    assert_null(icd_kind_name(ICD_KIND_NONE));
}

struct seen {
    char keys[8][64];
    char values[8][128];
    int32_t flags[8];
    int n;
};

static int collect(const char *key, const char *value, int32_t flags, void *arg)
{
    struct seen *s = arg;
    if (s->n < 8) {
        snprintf(s->keys[s->n], sizeof(s->keys[0]), "%s", key);
        snprintf(s->values[s->n], sizeof(s->values[0]), "%s", value);
        s->flags[s->n] = flags;
    }
    s->n++;
    return 0;
}

static const struct cache_ent entries[] = {
    {0x0303, "libOpenCL.so.1", "/lib/x86_64-linux-gnu/libOpenCL.so.1"},
    {0x0003, "libOpenCL.so.1", "/lib32/libOpenCL.so.1"},
    {0x0303, "libpocl.so.2", "/usr/lib/x86_64-linux-gnu/libpocl.so.2"},
};

static void test_ldcache_new_and_old_formats(void **state)
{
    (void)state;
    unsigned char buf[2048];
    for (int old = 0; old < 2; old++) {
        size_t len = cache_build(buf, sizeof(buf), entries, 3, old);
        assert_true(len > 0);
        struct seen s = {0};
        assert_int_equal(icd_ldcache_walk((const char *)buf, len, collect, &s), 3);
        assert_int_equal(s.n, 3);
        assert_string_equal(s.keys[0], "libOpenCL.so.1");
        assert_string_equal(s.values[0], "/lib/x86_64-linux-gnu/libOpenCL.so.1");
        assert_string_equal(s.values[1], "/lib32/libOpenCL.so.1");
        assert_string_equal(s.keys[2], "libpocl.so.2");
        assert_int_equal(s.flags[1], 0x0003);
    }
#if defined(__x86_64__) && defined(__LP64__)
    assert_true(icd_ldcache_flags_match(0x0303));
    assert_false(icd_ldcache_flags_match(0x0003)); /* a 32-bit library */
#endif
    assert_false(icd_ldcache_flags_match(0x0000)); /* not an ELF libc6 library */
}

static void test_ldcache_rejects_garbage_and_truncation(void **state)
{
    (void)state;
    unsigned char buf[2048];
    size_t len = cache_build(buf, sizeof(buf), entries, 3, false);
    struct seen s = {0};
    assert_int_equal(icd_ldcache_walk("not a cache at all, just text", 29, collect, &s), -1);
    assert_int_equal(icd_ldcache_walk(NULL, 0, collect, &s), -1);
    assert_int_equal(icd_ldcache_walk((const char *)buf, 47, collect, &s), -1); /* header cut */
    assert_int_equal(s.n, 0);
    /* entries announced but cut off: refused as a whole */
    assert_int_equal(icd_ldcache_walk((const char *)buf, 48 + 24, collect, &s), -1);
    /* every prefix: never a crash or a read past the end (ASan watches) */
    for (size_t cut = 0; cut <= len; cut++) {
        unsigned char *copy = malloc(cut ? cut : 1);
        assert_non_null(copy);
        memcpy(copy, buf, cut);
        struct seen t = {0};
        int n = icd_ldcache_walk((const char *)copy, cut, collect, &t);
        assert_true(n <= 3);
        free(copy);
    }
    /* string offsets pointing outside: the entry is skipped */
    unsigned char bad[2048];
    len = cache_build(bad, sizeof(bad), entries, 3, false);
    uint32_t far = 0x7fffffff;
    memcpy(bad + 48 + 4, &far, 4);
    s.n = 0;
    assert_int_equal(icd_ldcache_walk((const char *)bad, len, collect, &s), 2);
    /* the other byte order: refused */
    len = cache_build(bad, sizeof(bad), entries, 3, false);
    bad[28] = 3;
    assert_int_equal(icd_ldcache_walk((const char *)bad, len, collect, &s), -1);
    /* an absurd entry count */
    len = cache_build(bad, sizeof(bad), entries, 3, false);
    uint32_t huge = 0xffffffffu;
    memcpy(bad + 20, &huge, 4);
    assert_int_equal(icd_ldcache_walk((const char *)bad, len, collect, &s), -1);
}

struct conf_seen {
    char dirs[8][64];
    char inc[4][64];
    int nd, ni;
};

static void conf_cb(const char *dir, const char *include, void *arg)
{
    struct conf_seen *c = arg;
    if (dir && c->nd < 8)
        snprintf(c->dirs[c->nd++], 64, "%s", dir);
    if (include && c->ni < 4)
        snprintf(c->inc[c->ni++], 64, "%s", include);
}

static void test_ldconf(void **state)
{
    (void)state;
    struct conf_seen c = {0};
    icd_ldconf_parse("# comment\n"
                     "include /etc/ld.so.conf.d/*.conf\n"
                     "/usr/local/lib\n"
                     "  /opt/a/lib/   # trailing comment\r\n"
                     "hwcap 0 nosegneg\n"
                     "/x:/y,/z\n"
                     "include\tone.conf two.conf\n"
                     "\n"
                     "/old=libc6",
                     conf_cb, &c);
    assert_int_equal(c.nd, 6);
    assert_string_equal(c.dirs[0], "/usr/local/lib");
    assert_string_equal(c.dirs[1], "/opt/a/lib");
    assert_string_equal(c.dirs[2], "/x");
    assert_string_equal(c.dirs[3], "/y");
    assert_string_equal(c.dirs[4], "/z");
    assert_string_equal(c.dirs[5], "/old");
    assert_int_equal(c.ni, 3);
    assert_string_equal(c.inc[0], "/etc/ld.so.conf.d/*.conf");
    assert_string_equal(c.inc[1], "one.conf");
    assert_string_equal(c.inc[2], "two.conf");
    icd_ldconf_parse(NULL, conf_cb, &c);
    assert_int_equal(c.nd, 6);
}

/* The vendors directory compiled into a loader, from its bytes: whole NUL-terminated paths only. */
static void test_compiled_vendors_dir(void **state)
{
    (void)state;
    static const char conda[] = "\0OCL_ICD_VENDORS\0/opt/conda/envs/x/etc/OpenCL/vendors\0\0\0pad";
    bool def = true;
    char *d = icd_vendors_dir_in(conda, sizeof(conda) - 1, &def);
    assert_non_null(d);
    assert_string_equal(d, "/opt/conda/envs/x/etc/OpenCL/vendors");
    assert_false(def);
    free(d);
    /* ocl-icd's Debian build: the default, and only it */
    static const char debian[] = "x\0/etc/OpenCL/vendors\0OPENCL_VENDOR_PATH\0";
    d = icd_vendors_dir_in(debian, sizeof(debian) - 1, &def);
    assert_null(d);
    assert_true(def);
    /* a trailing slash dropped; inside a message, or cut at the end of the input: no path */
    static const char slash[] = "\0/usr/local/etc/OpenCL/vendors/\0";
    d = icd_vendors_dir_in(slash, sizeof(slash) - 1, &def);
    assert_string_equal(d, "/usr/local/etc/OpenCL/vendors");
    free(d);
    static const char msg[] = "\0cannot read /opt/p/etc/OpenCL/vendors: %s\0/opt/q/OpenCL/vendors";
    assert_null(icd_vendors_dir_in(msg, sizeof(msg) - 1, &def));
    assert_false(def);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_line_is_fine_for_both),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_whitespace),
        cmocka_unit_test(test_extra_lines_depend_on_the_loader),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_overlong),
        cmocka_unit_test(test_bad_names_are_distinct),
        cmocka_unit_test(test_kind_from_info),
        cmocka_unit_test(test_ldcache_new_and_old_formats),
        cmocka_unit_test(test_ldcache_rejects_garbage_and_truncation),
        cmocka_unit_test(test_ldconf),
        cmocka_unit_test(test_compiled_vendors_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
