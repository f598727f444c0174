/* cuda_libs_load.c: the cuda probe's library loading: one child per origin loads them all, a failing one is named alone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cuda_libs.h"
#include "isolate.h"
#include "strutil.h"

/* Group G of the version children: one process loads its libraries one after another. */
struct cuda_libs_group {
    const char *site;  /* the pip site its files come from, or NULL for the search path */
    size_t first, n;   /* its members: order[first .. first + n) */
    struct cuda_libs_group_arg arg;
};

/* The group for library file J: the one of its origin (the search path, or one pip site) that has no file
 * of that name yet. Two files of one name (a SONAME) never share a process: the second would get the
 * first's dependencies. */
static size_t cuda_libs_group_of(struct cuda_lib_entry *const *job_e, const size_t *group_of, size_t j,
                                 const struct cuda_libs_group *g, size_t ng)
{
    const struct cuda_lib_entry *e = job_e[j];
    for (size_t k = 0; k < ng; k++) {
        if (!g[k].site != !e->site || (e->site && strcmp(g[k].site, e->site) != 0))
            continue;
        bool clash = false;
        for (size_t i = 0; i < j && !clash; i++)
            clash = group_of[i] == k && strcmp(job_e[i]->file, e->file) == 0;
        if (!clash)
            return k;
    }
    return ng;
}

/* The answer in SLOT (its child is gone) as a child's result: ok with the object, or bad output. */
static void cuda_libs_slot_result(const struct cuda_libs_slot *slot, struct isolate_result *r)
{
    memset(r, 0, sizeof(*r));
    size_t len = strnlen(slot->json, sizeof(slot->json));
    json_object *v = len < sizeof(slot->json)
                         ? isolate_json_parse(slot->json, len, JSON_TOKENER_DEFAULT_DEPTH, true, NULL)
                         : NULL;
    if (v && !json_object_is_type(v, json_type_object)) {
        json_object_put(v);
        v = NULL;
    }
    if (v) {
        r->status = ISOLATE_OK;
        r->value = v;
    } else {
        r->status = ISOLATE_BAD_OUTPUT;
        r->detail = str_printf("returned malformed output");
    }
}

/* cuda_libs.h says what it does. */
void cuda_libs_load(struct cuda_libs_state *st, struct cuda_lib_entry *const *job_e, size_t n,
                    struct isolate_result *res)
{
    size_t slot_len = n * sizeof(struct cuda_libs_slot);
    struct cuda_libs_slot *slots = mmap(NULL, slot_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct cuda_libs_group *g = calloc(n, sizeof(*g));
    struct isolate_job *jobs = calloc(n, sizeof(*jobs));
    size_t *group_of = calloc(n, sizeof(*group_of)), *order = calloc(n, sizeof(*order));
    const struct cuda_libs_child_arg **gargs = calloc(n, sizeof(*gargs));
    struct cuda_libs_slot **gslots = calloc(n, sizeof(*gslots));
    bool *again = calloc(n, sizeof(*again));
    if (slots == MAP_FAILED || !g || !jobs || !group_of || !order || !gargs || !gslots || !again) {
        st->err = -ENOMEM;
        goto out;
    }
    memset(slots, 0, slot_len);
    size_t ng = 0;
    for (size_t j = 0; j < n; j++) {
        size_t k = cuda_libs_group_of(job_e, group_of, j, g, ng);
        if (k == ng)
            g[ng++].site = job_e[j]->site;
        group_of[j] = k;
        g[k].n++;
    }
    for (size_t k = 0, at = 0; k < ng; k++) {
        g[k].first = at;
        at += g[k].n;
        g[k].n = 0;
    }
    for (size_t j = 0; j < n; j++) { /* each group's files in the probe's order */
        struct cuda_libs_group *gk = &g[group_of[j]];
        size_t at = gk->first + gk->n++;
        order[at] = j;
        gargs[at] = &job_e[j]->arg;
        gslots[at] = &slots[j];
    }
    for (size_t k = 0; k < ng; k++) {
        g[k].arg = (struct cuda_libs_group_arg){.libs = &gargs[g[k].first], .slots = &gslots[g[k].first], .n = g[k].n};
        jobs[k] = (struct isolate_job){.fn = cuda_libs_group_child, .arg = &g[k].arg};
    }
    /* Half the time left: a library that hangs there still leaves time to ask the others alone. */
    probe_isolate_many_part(st->ctx, jobs, ng, 2);

    size_t n_again = 0;
    for (size_t k = 0; k < ng; k++) {
        const struct isolate_result *gr = &jobs[k].result;
        const char *stuck = NULL;
        size_t left = 0;
        for (size_t i = g[k].first; i < g[k].first + g[k].n; i++) {
            size_t j = order[i];
            int state = __atomic_load_n(&slots[j].state, __ATOMIC_ACQUIRE);
            if (state == CUDA_LIBS_SLOT_DONE) {
                cuda_libs_slot_result(&slots[j], &res[j]);
                /* an error here may come from a library loaded before it: only its own child may say so */
                if (res[j].status == ISOLATE_OK && !json_object_object_get_ex(res[j].value, "error", NULL))
                    continue;
                isolate_result_clear(&res[j]);
            } else if (state == CUDA_LIBS_SLOT_LOADING) {
                stuck = job_e[j]->real;
            }
            again[j] = true;
            left++;
        }
        n_again += left;
        if (stuck && !gr->budget_spent)
            report_section_add_note(st->sec, "CUDA libraries: the child loading them together %s while loading %s; "
                                    "the %zu not yet read were then loaded one per child",
                                    gr->detail ? gr->detail : isolate_status_name(gr->status), stuck, left);
        isolate_result_clear(&jobs[k].result);
    }
    if (n_again == 0)
        goto out;
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        if (again[j]) {
            jobs[m] = (struct isolate_job){.fn = cuda_libs_child, .arg = &job_e[j]->arg};
            order[m++] = j;
        }
    probe_isolate_many(st->ctx, jobs, m);
    for (size_t i = 0; i < m; i++)
        res[order[i]] = jobs[i].result; /* ownership moves */
out:
    if (slots != MAP_FAILED)
        munmap(slots, slot_len);
    free(g);
    free(jobs);
    free(group_of);
    free(order);
    free(gargs);
    free(gslots);
    free(again);
}
