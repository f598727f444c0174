/* typed.h: the vocabulary of typed results: one tri-state, and enum <-> name tables for their JSON. */
#ifndef GPUCHECKUP_TYPED_H
#define GPUCHECKUP_TYPED_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

/* A fact that may be unknown: unknown is never read as no. The values match jsonget_tri's old ints
 * (-1, 0, 1), so `== 1` and `< 0` keep their meaning. In JSON: null, false, true. */
enum gc_tri {
    GC_TRI_UNKNOWN = -1,
    GC_TRI_NO = 0,
    GC_TRI_YES = 1,
};

static inline enum gc_tri gc_tri_from_bool(bool b)
{
    return b ? GC_TRI_YES : GC_TRI_NO;
}

/* null, false or true: a new reference (NULL is JSON null). */
json_object *gc_tri_json(enum gc_tri t);
/* "unknown", "no" or "yes", for people. */
const char *gc_tri_name(enum gc_tri t);

/* An enum's JSON names: NAMES[v] for each value v (0..N-1). Every status enum of a typed result has
 * exactly one such table; its JSON writer and its parser of captured JSON both use it. */
struct gc_names {
    const char *const *names;
    size_t n;
};
#define GC_NAMES(arr) {(arr), sizeof(arr) / sizeof((arr)[0])}

/* The name of V, or NULL when V is out of range. */
const char *gc_name(const struct gc_names *t, int v);
/* The value named S, or -1 (S NULL or not in the table). */
int gc_name_parse(const struct gc_names *t, const char *s);
/* The name of V as a new JSON string (NULL when V is out of range). */
json_object *gc_name_json(const struct gc_names *t, int v);

#endif
