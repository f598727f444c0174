/* jsonstr.c: JSON values built from untrusted strings: the one copy of the helpers the probes each wrote. */
#include "jsonstr.h"

#include <stdlib.h>
#include <string.h>

#include "strutil.h"

json_object *jsonstr_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

json_object *jsonstr_sanitized(const char *s)
{
    char *c = str_dup(s);
    if (!c)
        return NULL;
    json_object *o = json_object_new_string(str_sanitize(c));
    free(c);
    return o;
}

static json_object *jsonstr_clean_at(json_object *v, const struct jsonstr_limits *lim, int depth)
{
    if (!v || depth > lim->depth)
        return NULL;
    switch (json_object_get_type(v)) {
    case json_type_boolean:
        return json_object_new_boolean(json_object_get_boolean(v));
    case json_type_int:
        return json_object_new_int64(json_object_get_int64(v));
    case json_type_double:
        return json_object_new_double(json_object_get_double(v));
    case json_type_string: {
        char *s = strndup(json_object_get_string(v), lim->string);
        json_object *out = s ? json_object_new_string(str_sanitize(s)) : NULL;
        free(s);
        return out;
    }
    case json_type_array: {
        json_object *out = json_object_new_array();
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n && i < lim->items; i++)
            json_object_array_add(out, jsonstr_clean_at(json_object_array_get_idx(v, i), lim, depth + 1));
        return out;
    }
    case json_type_object: {
        json_object *out = json_object_new_object();
        json_object_object_foreach(v, key, val) {
            char *k = strndup(key, lim->key);
            if (k)
                json_object_object_add(out, str_sanitize(k), jsonstr_clean_at(val, lim, depth + 1));
            free(k);
        }
        return out;
    }
    default:
        return NULL;
    }
}

json_object *jsonstr_clean_copy(json_object *v, const struct jsonstr_limits *lim)
{
    return jsonstr_clean_at(v, lim, 0);
}

json_object *jsonstr_array_sanitized(char *const *v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && i < n; i++)
        json_object_array_add(a, jsonstr_sanitized(v[i]));
    return a;
}
