/* icd_parse.c: parsers of outside input for the icd probe: .icd contents (ld.so.cache/conf: src/host/ldsearch.c). */
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
