/* result_process.c: the process probe's typed facts, read from the section's JSON. */
#include "results/result_process.h"

#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "strutil.h"

static void result_process_strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void result_process_free(void *res)
{
    struct result_process *r = res;
    if (!r)
        return;
    if (r->unit) {
        free(r->unit->name);
        free(r->unit->user);
        free(r->unit);
    }
    if (r->user) {
        free(r->user->name);
        free(r->user);
    }
    if (r->pid) {
        free(r->pid->name);
        result_process_strv_free(r->pid->libraries, r->pid->n_libraries);
        result_process_strv_free(r->pid->open_nodes, r->pid->n_open_nodes);
        free(r->pid);
    }
    free(r);
}

/* S as a new string, NULL for NULL; *OK false on allocation failure. */
static char *result_process_dup(const char *s, bool *ok)
{
    char *c = s ? str_dup(s) : NULL;
    if (s && !c)
        *ok = false;
    return c;
}

/* A node list (objects with can_open): how many in *NODES, how many cannot be opened in *DENIED; -1 when
 * ARR is not an array. */
static void result_process_nodes(json_object *arr, int *nodes, int *denied)
{
    *nodes = *denied = -1;
    if (!json_object_is_type(arr, json_type_array))
        return;
    *nodes = (int)json_object_array_length(arr);
    *denied = 0;
    for (int i = 0; i < *nodes; i++)
        *denied += jsonget_tri(json_object_array_get_idx(arr, (size_t)i), "can_open") == GC_TRI_NO;
}

/* The strings of ARR, or of member KEY of each of its objects when KEY is set, into *OUT (*N of them). */
static bool result_process_strv(json_object *arr, const char *key, char ***out, size_t *n)
{
    size_t len = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    if (len && !(*out = calloc(len, sizeof(char *))))
        return false;
    for (size_t i = 0; i < len; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        const char *s = key ? jsonget_str(e, key) : json_object_is_type(e, json_type_string) ? json_object_get_string(e)
                                                                                               : NULL;
        if (s && !((*out)[(*n)++] = str_dup(s)))
            return false;
    }
    return true;
}

static bool result_process_read_unit(struct result_process_unit *u, json_object *o)
{
    bool ok = true;
    u->name = result_process_dup(jsonget_str(o, "name"), &ok);
    u->user = result_process_dup(jsonget_str(o, "user"), &ok);
    u->found = jsonget_str(o, "file") != NULL;
    u->masked = jsonget_tri(o, "masked") == GC_TRI_YES;
    u->from_manager = jsonget_str(o, "source") && strcmp(jsonget_str(o, "source"), "manager") == 0;
    u->private_devices = jsonget_tri(o, "private_devices");
    int64_t mp = jsonget_int(o, "main_pid", 0);
    u->main_pid = mp > 0 ? (long)mp : 0;
    result_process_nodes(jsonget(jsonget(o, "access"), "nodes"), &u->nodes, &u->denied);
    return ok;
}

static bool result_process_read_user(struct result_process_user *u, json_object *o)
{
    bool ok = true;
    u->name = result_process_dup(jsonget_str(o, "name"), &ok);
    u->uid = json_object_is_type(jsonget(o, "uid"), json_type_int) ? (long)jsonget_int(o, "uid", -1) : -1;
    u->from_nss = jsonget_str(o, "source") && strcmp(jsonget_str(o, "source"), "nss") == 0;
    result_process_nodes(jsonget(o, "nodes"), &u->nodes, &u->denied);
    return ok;
}

static bool result_process_read_pid(struct result_process_pid *p, json_object *o)
{
    bool ok = true;
    p->pid = (long)jsonget_int(o, "pid", -1);
    p->name = result_process_dup(jsonget_str(o, "name"), &ok);
    p->uid = json_object_is_type(jsonget(o, "uid"), json_type_int) ? (long)jsonget_int(o, "uid", -1) : -1;
    p->other_mount_namespace = jsonget_tri(o, "other_mount_namespace");
    result_process_nodes(jsonget(jsonget(o, "access"), "nodes"), &p->nodes, &p->denied);
    json_object *nr = jsonget(o, "not_readable");
    p->not_readable = json_object_is_type(nr, json_type_array) ? (int)json_object_array_length(nr) : -1;
    int n;
    json_object *cg = jsonget(o, "cgroup");
    result_process_nodes(jsonget(jsonget(cg, "v1"), "nodes"), &n, &p->cgroup_denied);
    json_object *dp = jsonget(jsonget(cg, "v2"), "device_programs");
    p->device_programs = json_object_is_type(dp, json_type_int) ? (int)json_object_get_int64(dp) : -1;
    return ok && result_process_strv(jsonget(o, "libraries"), "path", &p->libraries, &p->n_libraries) &&
           result_process_strv(jsonget(o, "open_nodes"), NULL, &p->open_nodes, &p->n_open_nodes);
}

struct result_process *result_process_read(json_object *data)
{
    struct result_process *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    json_object *u = jsonget(data, "unit"), *us = jsonget(data, "user"), *p = jsonget(data, "pid");
    if (json_object_is_type(u, json_type_object) &&
        (!(r->unit = calloc(1, sizeof(*r->unit))) || !result_process_read_unit(r->unit, u)))
        goto fail;
    if (json_object_is_type(us, json_type_object) &&
        (!(r->user = calloc(1, sizeof(*r->user))) || !result_process_read_user(r->user, us)))
        goto fail;
    if (json_object_is_type(p, json_type_object) &&
        (!(r->pid = calloc(1, sizeof(*r->pid))) || !result_process_read_pid(r->pid, p)))
        goto fail;
    return r;
fail:
    result_process_free(r);
    return NULL;
}

static void *result_process_from_json(json_object *data)
{
    return result_process_read(data);
}

const struct report_result_ops result_process_ops = {
    .section = "process",
    .to_json = NULL,
    .from_json = result_process_from_json,
    .free = result_process_free,
};

const struct result_process *result_process_get(const struct report *r)
{
    return report_result(r, &result_process_ops);
}
