/* strutil.h: small string helpers shared by every module (printf to heap, trimming, parsing). */
#ifndef GPUCHECKUP_STRUTIL_H
#define GPUCHECKUP_STRUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* printf into a new heap string; NULL on failure. Caller frees. */
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_vprintf(const char *fmt, va_list ap);
/* strdup that accepts NULL (returns NULL). */
char *str_dup(const char *s);
/* The N bytes at S as a new string (heap), or NULL. Not strndup: the text need not be NUL-terminated,
 * and a checker (ASan's strict_string_checks) makes strndup read on to a NUL, which is quadratic over
 * a long text cut in many pieces (a 32 MiB /proc/cpuinfo). */
char *str_copy_n(const char *s, size_t n);
/* Remove leading and trailing whitespace in place; returns S. */
char *str_trim(char *s);
/* True if S starts with PREFIX. */
bool str_starts_with(const char *s, const char *prefix);
/* True if S ends with SUFFIX. */
bool str_ends_with(const char *s, const char *suffix);
/* Parse a whole string as an unsigned integer in BASE (0 = auto). Leading/trailing whitespace allowed.
 * Returns 0 and sets *OUT, or -1 if S is empty, has junk, or overflows. */
int str_to_u64(const char *s, int base, uint64_t *out);
/* Parse a whole string as a signed integer; same rules as str_to_u64. */
int str_to_i64(const char *s, int base, int64_t *out);
/* Parse a whole string as a finite double; 0 or -1. */
int str_to_double(const char *s, double *out);
/* Replace non-printable bytes with '?', in place; returns S. Used on everything read from outside
 * before it goes into a report. */
char *str_sanitize(char *s);

/* Free *DST and set it to FMT printed and sanitised (str_sanitize), or to NULL when FMT is NULL or the
 * printing fails: a message field that a new status replaces. */
void str_set_vprintf(char **dst, const char *fmt, va_list ap);

#endif
