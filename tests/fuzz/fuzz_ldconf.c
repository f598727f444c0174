/* fuzz_ldconf.c: libFuzzer target for ld.so.conf text (directories, include lines, comments). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldsearch.h"

struct fuzz_ldconf {
    const char *text;
    size_t calls;
};

static void fuzz_ldconf_line(const char *dir, const char *include, void *arg)
{
    struct fuzz_ldconf *c = arg;
    c->calls++;
    /* Exactly one of the two, never empty. */
    if ((dir == NULL) == (include == NULL))
        abort();
    const char *s = dir ? dir : include;
    if (!*s)
        abort();
    /* Separators and comments never leak into a value. */
    if (strpbrk(s, include ? " \t\n#" : " \t\n#,:="))
        abort();
    /* A directory keeps no trailing slash (but "/" stays "/"). */
    size_t l = strlen(s);
    if (dir && l > 1 && s[l - 1] == '/')
        abort();
    /* Each value is a piece of the input. */
    if (!strstr(c->text, s))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = strndup((const char *)data, size);
    if (!text)
        return 0;
    struct fuzz_ldconf c = {.text = text};
    ldsearch_conf_parse(text, fuzz_ldconf_line, &c);
    /* Never more values than there are bytes. */
    if (c.calls > strlen(text))
        abort();
    ldsearch_conf_parse(NULL, fuzz_ldconf_line, &c);
    free(text);
    return 0;
}
