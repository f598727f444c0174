/* result_cpu.c: the cpu probe's typed facts, read from the section's JSON. */
#include "results/result_cpu.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

void result_cpu_free(struct result_cpu *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_flags; i++)
        free(r->flags[i].name);
    free(r->flags);
    free(r->architecture);
    free(r);
}

struct result_cpu *result_cpu_read(json_object *data)
{
    struct result_cpu *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    const char *arch = jsonget_str(data, "architecture");
    json_object *lv = jsonget(data, "x86_64_level");
    int64_t level = json_object_is_type(lv, json_type_int) ? json_object_get_int64(lv) : -1;
    r->x86_64_level = level >= 0 && level < 100 ? (int)level : -1;
    json_object *flags = jsonget(data, "flags");
    r->flags_known = json_object_is_type(flags, json_type_object);
    size_t n = json_object_is_type(flags, json_type_object) ? (size_t)json_object_object_length(flags) : 0;
    if ((arch && !(r->architecture = str_dup(arch))) || (n && !(r->flags = calloc(n, sizeof(*r->flags)))))
        goto fail;
    if (n) {
        json_object_object_foreach(flags, name, v) {
            struct result_cpu_flag *f = &r->flags[r->n_flags++];
            f->usable = json_object_is_type(v, json_type_boolean) ? gc_tri_from_bool(json_object_get_boolean(v))
                                                                  : GC_TRI_UNKNOWN;
            if (!(f->name = str_dup(name)))
                goto fail;
        }
    }
    return r;
fail:
    result_cpu_free(r);
    return NULL;
}

/* Is V a value the result prints back the same: null, or of type T (and, for an object of flags, each a
 * boolean or null; for the level, in 0..99)? */
static bool result_cpu_takes(json_object *v, enum json_type t)
{
    if (!v)
        return true;
    if (!json_object_is_type(v, t))
        return false;
    if (t == json_type_int)
        return json_object_get_int64(v) >= 0 && json_object_get_int64(v) < 100;
    if (t == json_type_object) {
        json_object_object_foreach(v, name, f)
        {
            (void)name;
            if (f && !json_object_is_type(f, json_type_boolean))
                return false;
        }
    }
    return true;
}

/* The facts of DATA; each member of a shape the result prints back the same leaves DATA, a null keeping
 * its place (result_cpu_ops.keeps_places). */
static void *result_cpu_from_json(json_object *data)
{
    struct result_cpu *r = result_cpu_read(data);
    if (!r)
        return NULL;
    static const struct {
        const char *key;
        enum json_type type;
        unsigned bit;
    } typed[] = {
        {"architecture", json_type_string, RESULT_CPU_HAVE_ARCHITECTURE},
        {"x86_64_level", json_type_int, RESULT_CPU_HAVE_X86_64_LEVEL},
        {"flags", json_type_object, RESULT_CPU_HAVE_FLAGS},
    };
    for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
        json_object *v = NULL;
        if (json_object_object_get_ex(data, typed[i].key, &v) && result_cpu_takes(v, typed[i].type)) {
            r->have |= typed[i].bit;
            json_object_object_add(data, typed[i].key, NULL); /* in place: the member keeps its position */
        }
    }
    return r;
}

/* The typed members, as the probe writes them. */
static json_object *result_cpu_to_json(const void *res)
{
    const struct result_cpu *r = res;
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    if (r->have & RESULT_CPU_HAVE_ARCHITECTURE)
        json_object_object_add(o, "architecture", r->architecture ? json_object_new_string(r->architecture) : NULL);
    if (r->have & RESULT_CPU_HAVE_X86_64_LEVEL)
        json_object_object_add(o, "x86_64_level", r->x86_64_level >= 0 ? json_object_new_int(r->x86_64_level) : NULL);
    if (r->have & RESULT_CPU_HAVE_FLAGS) {
        json_object *f = r->flags_known ? json_object_new_object() : NULL;
        for (size_t i = 0; f && i < r->n_flags; i++)
            json_object_object_add(f, r->flags[i].name, gc_tri_json(r->flags[i].usable));
        json_object_object_add(o, "flags", f);
    }
    return o;
}

static void result_cpu_free_any(void *res)
{
    result_cpu_free(res);
}

const struct report_result_ops result_cpu_ops = {
    .section = "cpu",
    .to_json = result_cpu_to_json,
    .from_json = result_cpu_from_json,
    .free = result_cpu_free_any,
    .keeps_places = true,
};

const struct result_cpu *result_cpu_get(const struct report *r)
{
    return report_result(r, &result_cpu_ops);
}

enum gc_tri result_cpu_flag(const struct result_cpu *c, const char *name)
{
    for (size_t i = 0; c && name && i < c->n_flags; i++)
        if (strcmp(c->flags[i].name, name) == 0)
            return c->flags[i].usable;
    return GC_TRI_UNKNOWN;
}
