/* jsonstr.h: JSON values built from strings gpucheckup did not write (files, drivers, children): null-safe, sanitised. */
#ifndef GPUCHECKUP_JSONSTR_H
#define GPUCHECKUP_JSONSTR_H

#include <stddef.h>
#include <json-c/json.h>

/* S as a JSON string, or NULL (JSON null) when S is NULL. S is trusted (gpucheckup's own text). */
json_object *jsonstr_or_null(const char *s);

/* A sanitised copy of S (str_sanitize: control and non-ASCII bytes made visible) as a JSON string, or
 * NULL when S is NULL or memory ran out. */
json_object *jsonstr_sanitized(const char *s);

/* The N strings of V (read from outside: each sanitised as jsonstr_sanitized does) as a JSON array; NULL
 * when memory ran out. */
json_object *jsonstr_array_sanitized(char *const *v, size_t n);

/* Bounds for jsonstr_clean_copy. */
struct jsonstr_limits {
    int depth;     /* nesting beyond this becomes null */
    size_t string; /* bytes kept of each string */
    size_t items;  /* elements kept of each array */
    size_t key;    /* bytes kept of each object key */
};

/* A deep copy of V that an isolated child returned: every string and key sanitised and cut, arrays and
 * nesting bounded by LIM; types other than string, number, boolean, array and object become null. */
json_object *jsonstr_clean_copy(json_object *v, const struct jsonstr_limits *lim);

#endif
