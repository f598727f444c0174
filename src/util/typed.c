/* typed.c: the tri-state's and the enum name tables' conversions to and from JSON. */
#include "typed.h"

#include <string.h>

json_object *gc_tri_json(enum gc_tri t)
{
    return t == GC_TRI_UNKNOWN ? NULL : json_object_new_boolean(t == GC_TRI_YES);
}

const char *gc_tri_name(enum gc_tri t)
{
    return t == GC_TRI_YES ? "yes" : t == GC_TRI_NO ? "no" : "unknown";
}

const char *gc_name(const struct gc_names *t, int v)
{
    return v >= 0 && (size_t)v < t->n ? t->names[v] : NULL;
}

int gc_name_parse(const struct gc_names *t, const char *s)
{
    for (size_t i = 0; s && i < t->n; i++)
        if (t->names[i] && strcmp(t->names[i], s) == 0)
            return (int)i;
    return -1;
}

json_object *gc_name_json(const struct gc_names *t, int v)
{
    const char *s = gc_name(t, v);
    return s ? json_object_new_string(s) : NULL;
}
