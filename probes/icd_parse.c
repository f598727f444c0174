/* icd_parse.c: parsers of outside input for the icd probe: .icd contents, ld.so.cache, ld.so.conf. */
#include "icd_impl.h"

#include <stdlib.h>
#include <string.h>

const char *icd_kind_name(enum icd_kind k)
{
    switch (k) {
    case ICD_KIND_OCL_ICD:
        return "ocl-icd";
    case ICD_KIND_KHRONOS:
        return "khronos";
    case ICD_KIND_UNKNOWN:
        return "unknown";
    case ICD_KIND_NONE:
        break;
    }
    return NULL;
}

enum icd_kind icd_kind_from_info(const char *name, const char *vendor)
{
    if (name && strstr(name, "Khronos"))
        return ICD_KIND_KHRONOS;
    if (vendor && strstr(vendor, "Khronos"))
        return ICD_KIND_KHRONOS;
    /* ocl-icd answers "OpenCL ICD Loader" / "OCL Icd free software". */
    if ((name && strcmp(name, "OpenCL ICD Loader") == 0) || (vendor && strstr(vendor, "OCL Icd")))
        return ICD_KIND_OCL_ICD;
    return ICD_KIND_UNKNOWN;
}

/* ---- .icd contents ---- */

static const struct {
    unsigned bit;
    const char *name;
    const char *text;
} icd_bad_table[ICD_BAD_COUNT] = {
    {ICD_BAD_EMPTY, "empty", "empty: no library name"},
    {ICD_BAD_CRLF, "crlf", "a CRLF line ending (a carriage return before the newline)"},
    {ICD_BAD_WHITESPACE, "whitespace", "blanks before or after the library name"},
    {ICD_BAD_EXTRA_LINES, "extra-lines", "more than one line"},
    {ICD_BAD_BINARY, "binary", "binary content (NUL or control bytes)"},
    {ICD_BAD_OVERLONG, "overlong", "longer than any file name can be"},
};

const char *icd_bad_name(unsigned bit)
{
    for (size_t i = 0; i < ICD_BAD_COUNT; i++)
        if (icd_bad_table[i].bit == bit)
            return icd_bad_table[i].name;
    return NULL;
}

const char *icd_bad_text(unsigned bit)
{
    for (size_t i = 0; i < ICD_BAD_COUNT; i++)
        if (icd_bad_table[i].bit == bit)
            return icd_bad_table[i].text;
    return NULL;
}

static bool icd_is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static bool icd_is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

void icd_parsed_clear(struct icd_parsed *p)
{
    free(p->library);
    memset(p, 0, sizeof(*p));
}

int icd_parse_content(const char *buf, size_t len, enum icd_kind kind, struct icd_parsed *out)
{
    memset(out, 0, sizeof(*out));
    if (!buf)
        len = 0;
    const unsigned char *b = (const unsigned char *)buf;
    const unsigned char *nul = len ? memchr(b, '\0', len) : NULL;
    const unsigned char *nl = len ? memchr(b, '\n', len) : NULL;

    /* The string each loader hands to dlopen. */
    size_t end;
    if (kind == ICD_KIND_OCL_ICD || kind == ICD_KIND_NONE) {
        /* ocl-icd: fgets of the first line, cut at a NUL, one newline stripped. */
        end = nl ? (size_t)(nl - b) : len;
        if (nul && (size_t)(nul - b) < end)
            end = (size_t)(nul - b);
    } else {
        /* Khronos: the whole file as a C string, one final newline stripped. */
        end = nul ? (size_t)(nul - b) : len;
        if (!nul && len > 0 && b[len - 1] == '\n')
            end = len - 1;
    }
    out->library = malloc(end + 1);
    if (!out->library)
        return -1;
    if (end)
        memcpy(out->library, b, end);
    out->library[end] = '\0';
    out->library_len = end;

    /* What the whole file shows. */
    size_t first_end = nl ? (size_t)(nl - b) : len; /* the first line, without its newline */
    size_t line_end = first_end;
    if (nul && (size_t)(nul - b) < line_end)
        line_end = (size_t)(nul - b);
    if (line_end > 0 && b[line_end - 1] == '\r')
        line_end--;
    if (len == 0 || line_end == 0)
        out->bad |= ICD_BAD_EMPTY;
    if (len && memchr(b, '\r', len))
        out->bad |= ICD_BAD_CRLF;
    if (line_end > 0 && (icd_is_blank(b[0]) || icd_is_blank(b[line_end - 1])))
        out->bad |= ICD_BAD_WHITESPACE;
    if (nl && (size_t)(nl - b) + 1 < len)
        out->bad |= ICD_BAD_EXTRA_LINES;
    for (size_t i = 0; i < len; i++)
        if (b[i] == '\0' || icd_is_control(b[i])) {
            out->bad |= ICD_BAD_BINARY;
            break;
        }
    if (end > ICD_NAME_MAX)
        out->bad |= ICD_BAD_OVERLONG;

    /* What makes this loader's dlopen fail: judged on its own string. */
    const unsigned char *s = (const unsigned char *)out->library;
    if (end == 0)
        out->fatal |= ICD_BAD_EMPTY;
    if (memchr(s, '\r', end))
        out->fatal |= ICD_BAD_CRLF;
    if (end > 0 && (icd_is_blank(s[0]) || icd_is_blank(s[end - 1])))
        out->fatal |= ICD_BAD_WHITESPACE;
    if (memchr(s, '\n', end))
        out->fatal |= ICD_BAD_EXTRA_LINES;
    for (size_t i = 0; i < end; i++)
        if (icd_is_control(s[i]) && s[i] != '\n' && s[i] != '\r') {
            out->fatal |= ICD_BAD_BINARY;
            break;
        }
    if (end > ICD_NAME_MAX)
        out->fatal |= ICD_BAD_OVERLONG;
    out->bad |= out->fatal;
    return 0;
}

/* ---- ld.so.cache ---- */

#define ICD_CACHE_OLD_MAGIC "ld.so-1.7.0"
#define ICD_CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"
#define ICD_CACHE_NEW_HEADER 48u /* magic[17] version[3] nlibs len_strings flags pad[3] ext unused[3] */
#define ICD_CACHE_NEW_ENTRY 24u  /* flags key value osversion hwcap(u64) */
#define ICD_CACHE_OLD_ENTRY 12u  /* flags key value */
#define ICD_FLAG_ELF_LIBC6 0x0003
#define ICD_FLAG_TYPE_MASK 0x00ff
#define ICD_FLAG_ARCH_MASK 0xff00

static uint32_t icd_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* A NUL-terminated string at OFF inside [BASE, BASE+AVAIL), or NULL. */
static const char *icd_cache_str(const unsigned char *base, size_t avail, uint32_t off)
{
    if (off >= avail)
        return NULL;
    if (!memchr(base + off, '\0', avail - off))
        return NULL;
    return (const char *)base + off;
}

int icd_ldcache_walk(const char *buf, size_t len, icd_ldcache_fn fn, void *arg)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t off = 0;
    if (!buf)
        return -1;
    size_t old_len = sizeof(ICD_CACHE_OLD_MAGIC) - 1;
    if (len >= old_len + 5 && memcmp(b, ICD_CACHE_OLD_MAGIC, old_len) == 0) {
        /* struct cache_file { char magic[11]; unsigned nlibs; struct file_entry libs[]; } */
        uint32_t nlibs = icd_u32(b + 12);
        if (nlibs > len / ICD_CACHE_OLD_ENTRY)
            return -1;
        size_t end = 16 + (size_t)nlibs * ICD_CACHE_OLD_ENTRY;
        off = (end + 7) & ~(size_t)7; /* the new format follows, 8-byte aligned */
    }
    size_t new_len = sizeof(ICD_CACHE_NEW_MAGIC) - 1;
    if (off > len || len - off < ICD_CACHE_NEW_HEADER || memcmp(b + off, ICD_CACHE_NEW_MAGIC, new_len) != 0)
        return -1;
    const unsigned char *h = b + off;
    size_t avail = len - off;
    uint32_t nlibs = icd_u32(h + 20);
    unsigned char endian = h[28] & 3; /* 0 unset, 2 little, 3 big */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (endian == 3 || endian == 1)
        return -1;
#else
    if (endian == 2 || endian == 1)
        return -1;
#endif
    if (nlibs > (avail - ICD_CACHE_NEW_HEADER) / ICD_CACHE_NEW_ENTRY)
        return -1;
    int walked = 0;
    for (uint32_t i = 0; i < nlibs; i++) {
        const unsigned char *e = h + ICD_CACHE_NEW_HEADER + (size_t)i * ICD_CACHE_NEW_ENTRY;
        int32_t flags = (int32_t)icd_u32(e);
        /* In the new format string offsets count from the start of its header. */
        const char *key = icd_cache_str(h, avail, icd_u32(e + 4));
        const char *value = icd_cache_str(h, avail, icd_u32(e + 8));
        if (!key || !value)
            continue;
        walked++;
        if (fn && fn(key, value, flags, arg))
            break;
    }
    return walked;
}

bool icd_ldcache_flags_match(int32_t flags)
{
    if ((flags & ICD_FLAG_TYPE_MASK) != ICD_FLAG_ELF_LIBC6)
        return false;
    int arch = flags & ICD_FLAG_ARCH_MASK;
#if defined(__x86_64__) && defined(__LP64__)
    return arch == 0x0300; /* FLAG_X8664_LIB64 */
#elif defined(__x86_64__)
    return arch == 0x0800; /* FLAG_X8664_LIBX32 */
#elif defined(__aarch64__)
    return arch == 0x0a00; /* FLAG_AARCH64_LIB64 */
#elif defined(__powerpc64__)
    return arch == 0x0500; /* FLAG_POWERPC_LIB64 */
#elif defined(__s390x__)
    return arch == 0x0400; /* FLAG_S390_LIB64 */
#elif defined(__i386__)
    return arch == 0;
#else
    (void)arch;
    return true;
#endif
}

/* ---- ld.so.conf ---- */

void icd_ldconf_parse(const char *text, icd_ldconf_fn fn, void *arg)
{
    if (!text)
        return;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p, n);
        p += n + (eol ? 1 : 0);
        if (!line)
            return;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = '\0';
        if (strncmp(s, "include", 7) == 0 && (s[7] == ' ' || s[7] == '\t')) {
            char *save = NULL;
            for (char *tok = strtok_r(s + 8, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
                fn(NULL, tok, arg);
        } else if (strncmp(s, "hwcap", 5) == 0 && (s[5] == ' ' || s[5] == '\t')) {
            /* obsolete hwcap lines: nothing to search */
        } else if (*s) {
            char *save = NULL;
            for (char *tok = strtok_r(s, " \t,:", &save); tok; tok = strtok_r(NULL, " \t,:", &save)) {
                char *eq = strchr(tok, '='); /* old "dir=TYPE" form */
                if (eq)
                    *eq = '\0';
                size_t tl = strlen(tok);
                while (tl > 1 && tok[tl - 1] == '/')
                    tok[--tl] = '\0';
                if (*tok)
                    fn(tok, NULL, arg);
            }
        }
        free(line);
    }
}
