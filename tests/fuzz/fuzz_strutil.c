/* fuzz_strutil.c: libFuzzer target for number parsing, trimming and sanitising of outside text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = strndup((const char *)data, size);
    if (!s)
        return 0;
    uint64_t u;
    int64_t i;
    double d;
    (void)str_to_u64(s, 0, &u);
    (void)str_to_i64(s, 10, &i);
    (void)str_to_double(s, &d);
    str_sanitize(s);
    /* After sanitising: no control characters but tab. */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            abort();
    str_trim(s);
    free(s);
    return 0;
}
