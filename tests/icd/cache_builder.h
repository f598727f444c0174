/* cache_builder.h: builds glibc ld.so.cache images for the icd unit tests. */
#ifndef GC_TEST_CACHE_BUILDER_H
#define GC_TEST_CACHE_BUILDER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct cache_ent {
    int32_t flags;
    const char *key;
    const char *value;
};

/* Write a cache with the entries E into OUT (CAP bytes); with OLD, an "ld.so-1.7.0" part first.
 * Returns the length, or 0 when CAP is too small. */
static inline size_t cache_build(unsigned char *out, size_t cap, const struct cache_ent *e, size_t n, bool old)
{
    size_t off = 0;
    memset(out, 0, cap);
    if (old) {
        if (cap < 32)
            return 0;
        memcpy(out, "ld.so-1.7.0", 11);
        uint32_t one = 1;
        memcpy(out + 12, &one, 4);
        off = 32; /* 16 + one 12-byte entry, aligned to 8 */
    }
    size_t strings = off + 48 + n * 24;
    size_t need = strings;
    for (size_t i = 0; i < n; i++)
        need += strlen(e[i].key) + 1 + strlen(e[i].value) + 1;
    if (need > cap)
        return 0;
    unsigned char *h = out + off;
    memcpy(h, "glibc-ld.so.cache1.1", 20);
    uint32_t nl = (uint32_t)n, ls = (uint32_t)(need - strings);
    memcpy(h + 20, &nl, 4);
    memcpy(h + 24, &ls, 4);
    h[28] = 2; /* little endian */
    size_t s = strings;
    for (size_t i = 0; i < n; i++) {
        unsigned char *ent = h + 48 + i * 24;
        uint32_t k = (uint32_t)(s - off);
        memcpy(out + s, e[i].key, strlen(e[i].key) + 1);
        s += strlen(e[i].key) + 1;
        uint32_t v = (uint32_t)(s - off);
        memcpy(out + s, e[i].value, strlen(e[i].value) + 1);
        s += strlen(e[i].value) + 1;
        memcpy(ent, &e[i].flags, 4);
        memcpy(ent + 4, &k, 4);
        memcpy(ent + 8, &v, 4);
    }
    return need;
}

#endif
