/* jsonget.c: typed reads of one member of a JSON object (the one copy of the getters doctor, probes and text use). */
#include "jsonget.h"

json_object *jsonget(json_object *o, const char *key)
{
    json_object *v = NULL;
    /* json_object_object_get_ex answers false for a NULL or non-object O. */
    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *jsonget_str(json_object *o, const char *key)
{
    json_object *v = jsonget(o, key);
    return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int64_t jsonget_int(json_object *o, const char *key, int64_t def)
{
    json_object *v = jsonget(o, key);
    return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : def;
}

enum gc_tri jsonget_tri(json_object *o, const char *key)
{
    json_object *v = jsonget(o, key);
    return v && json_object_is_type(v, json_type_boolean) ? gc_tri_from_bool(json_object_get_boolean(v)) : GC_TRI_UNKNOWN;
}

bool jsonget_num(json_object *o, const char *key, double *out)
{
    json_object *v = jsonget(o, key);
    if (!v || !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return false;
    *out = json_object_get_double(v);
    return true;
}

json_object *jsonget_array(json_object *o, const char *key, size_t *n)
{
    json_object *v = jsonget(o, key);
    if (!v || !json_object_is_type(v, json_type_array)) {
        *n = 0;
        return NULL;
    }
    *n = json_object_array_length(v);
    return v;
}

bool jsonget_int_ex(json_object *o, const char *key, int64_t *out)
{
    json_object *v = jsonget(o, key);
    if (!v || !json_object_is_type(v, json_type_int))
        return false;
    *out = json_object_get_int64(v);
    return true;
}

json_object *jsonget_object(json_object *o, const char *key)
{
    json_object *v = jsonget(o, key);
    return v && json_object_is_type(v, json_type_object) ? v : NULL;
}
