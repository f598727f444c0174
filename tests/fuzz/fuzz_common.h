/* fuzz_common.h: invariants shared by the libFuzzer targets (what "sanitised" means, and so on). */
#ifndef GPUCHECKUP_FUZZ_COMMON_H
#define GPUCHECKUP_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

/* True when S is what str_sanitize leaves: sanitising it again changes nothing (no control
 * characters but tab, no DEL, valid UTF-8). NULL counts as sanitised. */
static inline bool fuzz_is_sanitized(const char *s)
{
    if (!s)
        return true;
    char *copy = strdup(s);
    if (!copy)
        return true;
    bool same = strcmp(str_sanitize(copy), s) == 0;
    free(copy);
    return same;
}

/* Abort unless S is sanitised. */
static inline void fuzz_require_sanitized(const char *s)
{
    if (!fuzz_is_sanitized(s))
        abort();
}

#endif
