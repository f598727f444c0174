/* test_elfdyn.c: the dynamic-section reader on this test's own executable: names, bounded reads, every truncation, bad headers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfdyn.h"
#include "hostfs.h"

/* A read function over a buffer that counts what it was asked for. */
struct counted {
    const unsigned char *buf;
    size_t len, asked, calls;
};

static ssize_t counted_read(void *arg, uint64_t off, void *out, size_t len)
{
    struct counted *c = arg;
    c->asked += len;
    c->calls++;
    if (off >= c->len)
        return 0;
    size_t n = c->len - off < len ? c->len - off : len;
    memcpy(out, c->buf + off, n);
    return (ssize_t)n;
}

static unsigned char *self_image(size_t *len)
{
    int fd = open("/proc/self/exe", O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    unsigned char *buf = malloc((size_t)st.st_size);
    assert_non_null(buf);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        assert_true(n > 0);
        got += (size_t)n;
    }
    close(fd);
    *len = got;
    return buf;
}

static bool has_needed(const struct elfdyn *d, const char *prefix)
{
    for (size_t i = 0; i < d->n_needed; i++)
        if (strncmp(d->needed[i], prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

/* This executable links cmocka and the C library (glibc's libc.so.6: the loader's search is glibc's). */
static void test_self(void **state)
{
    (void)state;
    size_t len;
    unsigned char *img = self_image(&len);
    struct counted c = {.buf = img, .len = len};
    struct elfdyn d;
    assert_int_equal(elfdyn_read(counted_read, &c, &d), 0);
    assert_true(has_needed(&d, "libcmocka.so"));
    assert_true(has_needed(&d, "libc.so.6"));
    /* header + program headers + PT_DYNAMIC + one bounded read per string: never the file */
    assert_true(c.calls <= 3 + d.n_needed + 3);
    assert_true(c.asked <= 64 + 64 * 56 + ELFDYN_MAX_DYN + (d.n_needed + 3) * ELFDYN_MAX_STR);
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, NULL), 0);
    struct elfdyn f;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    assert_true(n > 0);
    self[n] = '\0';
    assert_int_equal(elfdyn_read_file(&fs, self, &f), 0);
    assert_int_equal(f.n_needed, d.n_needed);
    for (size_t i = 0; i < d.n_needed; i++)
        assert_string_equal(f.needed[i], d.needed[i]);
    elfdyn_free(&f);
    assert_int_equal(elfdyn_read_file(&fs, "/nonexistent-gc-elfdyn/x.so", &f), -ENOENT);
    assert_int_equal(elfdyn_read_file(&fs, "/proc", &f), -ENOEXEC); /* not a regular file */
    hostfs_close(&fs);
    elfdyn_free(&d);
    free(img);
}

/* Every prefix of the file reads as its full self, or as malformed: never more, never a crash. */
static void test_truncations(void **state)
{
    (void)state;
    size_t len;
    unsigned char *img = self_image(&len);
    struct elfdyn full;
    assert_int_equal(elfdyn_parse(img, len, &full), 0);
    size_t step = len / 4096 + 1;
    for (size_t n = 0; n < len; n += (n < 8192 ? 1 : step)) {
        unsigned char *cut = malloc(n ? n : 1);
        assert_non_null(cut);
        memcpy(cut, img, n);
        struct elfdyn d;
        int rc = elfdyn_parse(cut, n, &d);
        assert_true(rc == 0 || rc == -ENOEXEC);
        if (rc == 0) {
            assert_true(d.n_needed == full.n_needed);
            for (size_t i = 0; i < d.n_needed; i++)
                assert_string_equal(d.needed[i], full.needed[i]);
        }
        elfdyn_free(&d);
        free(cut);
    }
    elfdyn_free(&full);
    free(img);
}

static void test_bad_headers(void **state)
{
    (void)state;
    size_t len;
    unsigned char *img = self_image(&len);
    struct elfdyn d;
    assert_int_equal(elfdyn_parse((const unsigned char *)"not an ELF file at all, just text....", 36, &d), -ENOEXEC);
    elfdyn_free(&d);
    unsigned char cls = img[EI_CLASS];
    img[EI_CLASS] = 7; /* no such class */
    assert_int_equal(elfdyn_parse(img, len, &d), -ENOEXEC);
    elfdyn_free(&d);
    img[EI_CLASS] = cls;
    /* e_phoff and e_phnum where this build's class puts them */
    Elf64_Ehdr *h64 = (Elf64_Ehdr *)img;
    Elf32_Ehdr *h32 = (Elf32_Ehdr *)img;
    const Elf64_Half phnums[] = {0, 0xffff /* PN_XNUM: more than the reader takes */};
    for (size_t k = 0; k < 2; k++) {
        if (cls == ELFCLASS64)
            h64->e_phnum = phnums[k];
        else
            h32->e_phnum = phnums[k];
        assert_int_equal(elfdyn_parse(img, len, &d), -ENOEXEC);
        elfdyn_free(&d);
    }
    if (cls == ELFCLASS64) { /* program headers past the end */
        h64->e_phnum = 4;
        h64->e_phoff = (Elf64_Off)len;
    } else {
        h32->e_phnum = 4;
        h32->e_phoff = (Elf32_Off)len;
    }
    assert_int_equal(elfdyn_parse(img, len, &d), -ENOEXEC);
    elfdyn_free(&d);
    free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_bad_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
