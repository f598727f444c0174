/* fuzz_icd.c: libFuzzer target for .icd file contents, read as each ICD loader reads them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "icd_impl.h"

#define ICD_ALL_BAD (ICD_BAD_EMPTY | ICD_BAD_CRLF | ICD_BAD_WHITESPACE | ICD_BAD_EXTRA_LINES | ICD_BAD_BINARY | \
                     ICD_BAD_OVERLONG)

static void fuzz_icd_check(const uint8_t *data, size_t size, enum icd_kind kind)
{
    struct icd_parsed p;
    if (icd_parse_content((const char *)data, size, kind, &p) < 0)
        return; /* out of memory */
    /* The library string: a NUL-terminated prefix of the file, with no NUL inside. */
    if (!p.library || p.library_len > size || p.library[p.library_len] != '\0' ||
        strlen(p.library) != p.library_len || (p.library_len && memcmp(p.library, data, p.library_len) != 0))
        abort();
    /* Only known bits; what is fatal is also reported; every bit has a name and words. */
    if ((p.bad & ~(unsigned)ICD_ALL_BAD) || (p.fatal & ~p.bad))
        abort();
    for (unsigned bit = 1; bit <= ICD_BAD_OVERLONG; bit <<= 1)
        if ((p.bad & bit) && (!icd_bad_name(bit) || !icd_bad_text(bit)))
            abort();
    /* An empty string is always fatal; a fatal-free string is a name dlopen can be given. */
    if ((p.library_len == 0) != ((p.fatal & ICD_BAD_EMPTY) != 0))
        abort();
    if ((p.library_len > ICD_NAME_MAX) != ((p.fatal & ICD_BAD_OVERLONG) != 0))
        abort();
    if (!p.fatal) {
        for (size_t i = 0; i < p.library_len; i++) {
            unsigned char c = (unsigned char)p.library[i];
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                abort(); /* CR, LF, controls: all fatal (a tab inside a name is legal) */
        }
        const char *blanks = " \t\v\f";
        if (strchr(blanks, p.library[0]) || strchr(blanks, p.library[p.library_len - 1]))
            abort();
    }
    /* A clean file (nothing odd at all) is one line holding the name, and nothing else. */
    if (!p.bad && !(size == p.library_len || (size == p.library_len + 1 && data[size - 1] == '\n')))
        abort();
    /* ocl-icd's string never spans a newline. */
    if ((kind == ICD_KIND_OCL_ICD || kind == ICD_KIND_NONE) && memchr(p.library, '\n', p.library_len))
        abort();
    icd_parsed_clear(&p);
    if (p.library || p.library_len || p.bad || p.fatal)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    /* A copy of exactly SIZE bytes, so ASan sees any read past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fuzz_icd_check(copy, size, ICD_KIND_OCL_ICD);
    fuzz_icd_check(copy, size, ICD_KIND_KHRONOS);
    fuzz_icd_check(copy, size, ICD_KIND_UNKNOWN);
    fuzz_icd_check(copy, size, ICD_KIND_NONE);
    /* The loader identification strings come from the loader itself (outside input too). */
    char *s = strndup((const char *)copy, size);
    if (s) {
        char *half = s + strlen(s) / 2;
        enum icd_kind k = icd_kind_from_info(s, half);
        if (k != ICD_KIND_OCL_ICD && k != ICD_KIND_KHRONOS && k != ICD_KIND_UNKNOWN)
            abort();
        if (!icd_kind_name(k))
            abort();
        free(s);
    }
    /* A loader's bytes: the vendors directory compiled into it, a whole NUL-terminated path from the input. */
    bool def = false;
    char *dir = icd_vendors_dir_in((const char *)copy, size, &def);
    if (dir) {
        size_t dl = strlen(dir);
        if (dir[0] != '/' || dl < 15 || strcmp(dir + dl - 15, "/OpenCL/vendors") != 0 || !memmem(copy, size, dir, dl) ||
            strcmp(dir, "/etc/OpenCL/vendors") == 0)
            abort();
        for (size_t i = 0; i < dl; i++)
            if ((unsigned char)dir[i] <= ' ' || (unsigned char)dir[i] >= 127)
                abort();
        free(dir);
    }
    if (def && !memmem(copy, size, "/etc/OpenCL/vendors", 19))
        abort();
    free(copy);
    return 0;
}
