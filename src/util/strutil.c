/* strutil.c: small string helpers shared by every module. */
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *str_vprintf(const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return NULL;
    char *buf = malloc((size_t)n + 1);
    if (!buf)
        return NULL;
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    return buf;
}

char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = str_vprintf(fmt, ap);
    va_end(ap);
    return s;
}

char *str_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

char *str_copy_n(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

char *str_trim(char *s)
{
    if (!s)
        return s;
    char *p = s;
    while (*p && isspace((unsigned char)*p))
        p++;
    if (p != s)
        memmove(s, p, strlen(p) + 1);
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

bool str_starts_with(const char *s, const char *prefix)
{
    return s && prefix && strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
    if (!s || !suffix)
        return false;
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

static bool str_only_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return *p == '\0';
}

/* Where the number in S starts (after leading white space), or NULL when S is NULL or blank; errno is
 * cleared for the strto* call that follows. */
static const char *str_num_begin(const char *s)
{
    if (!s)
        return NULL;
    while (isspace((unsigned char)*s))
        s++;
    errno = 0;
    return *s ? s : NULL;
}

int str_to_u64(const char *s, int base, uint64_t *out)
{
    s = str_num_begin(s);
    if (!s || *s == '-' || *s == '+')
        return -1;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, base);
    if (errno || end == s || !str_only_space(end))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int str_to_i64(const char *s, int base, int64_t *out)
{
    s = str_num_begin(s);
    if (!s)
        return -1;
    char *end = NULL;
    long long v = strtoll(s, &end, base);
    if (errno || end == s || !str_only_space(end))
        return -1;
    *out = (int64_t)v;
    return 0;
}

int str_to_double(const char *s, double *out)
{
    s = str_num_begin(s);
    if (!s)
        return -1;
    char *end = NULL;
    double v = strtod(s, &end);
    if (errno || end == s || !str_only_space(end) || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Length of the valid UTF-8 sequence at P (1..4), or 0 if it is not one. */
static size_t str_utf8_len(const unsigned char *p)
{
    size_t n;
    unsigned int cp;
    if (p[0] < 0x80)
        return 1;
    else if ((p[0] & 0xe0) == 0xc0)
        n = 2, cp = p[0] & 0x1f;
    else if ((p[0] & 0xf0) == 0xe0)
        n = 3, cp = p[0] & 0x0f;
    else if ((p[0] & 0xf8) == 0xf0)
        n = 4, cp = p[0] & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    static const unsigned int min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

char *str_sanitize(char *s)
{
    if (!s)
        return s;
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
            *p++ = '?';
            continue;
        }
        size_t n = str_utf8_len(p);
        if (n == 0) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
    return s;
}

void str_set_vprintf(char **dst, const char *fmt, va_list ap)
{
    free(*dst);
    *dst = fmt ? str_sanitize(str_vprintf(fmt, ap)) : NULL;
}
