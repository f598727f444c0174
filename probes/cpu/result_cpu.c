/* result_cpu.c: the cpu probe's typed facts, read from the section's JSON. */
#include "results/result_cpu.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

static void result_cpu_free(void *res)
{
    struct result_cpu *r = res;
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

static void *result_cpu_from_json(json_object *data)
{
    return result_cpu_read(data);
}

const struct report_result_ops result_cpu_ops = {
    .section = "cpu",
    .to_json = NULL,
    .from_json = result_cpu_from_json,
    .free = result_cpu_free,
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
