/* fuzz_ldcache.c: libFuzzer target for /etc/ld.so.cache images (glibc's old and new formats). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldsearch.h"

struct fuzz_ldcache {
    const char *buf;
    size_t len;
    int seen;
    int stop_at; /* stop the walk after this many entries (0: never) */
};

/* S must be a NUL-terminated string inside the image. */
static void fuzz_ldcache_inside(const struct fuzz_ldcache *w, const char *s)
{
    if (s < w->buf || s >= w->buf + w->len)
        abort();
    if (!memchr(s, '\0', (size_t)(w->buf + w->len - s)))
        abort();
}

static int fuzz_ldcache_entry(const char *key, const char *value, int32_t flags, void *arg)
{
    struct fuzz_ldcache *w = arg;
    fuzz_ldcache_inside(w, key);
    fuzz_ldcache_inside(w, value);
    (void)ldsearch_cache_flags_match(flags);
    w->seen++;
    return w->stop_at && w->seen >= w->stop_at;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1024 * 1024)
        return 0;
    char *copy = malloc(size ? size : 1); /* exactly SIZE bytes: ASan sees a read past the end */
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct fuzz_ldcache w = {.buf = copy, .len = size, .stop_at = 0};
    int n = ldsearch_cache_walk(copy, size, fuzz_ldcache_entry, &w);
    /* -1 (not a cache) walks nothing; otherwise every entry walked was handed over, and each entry
     * takes 24 bytes of the image. */
    if (n < 0 ? (n != -1 || w.seen != 0) : (n != w.seen || (size_t)n > size / 24))
        abort();
    /* Without a callback the count is the same. */
    if (ldsearch_cache_walk(copy, size, NULL, NULL) != n)
        abort();
    /* Stopping early stops at once. */
    if (n > 1) {
        struct fuzz_ldcache s = {.buf = copy, .len = size, .stop_at = 1 + (int)(size % (size_t)n)};
        int m = ldsearch_cache_walk(copy, size, fuzz_ldcache_entry, &s);
        if (m != s.stop_at || s.seen != s.stop_at)
            abort();
    }
    free(copy);
    return 0;
}
