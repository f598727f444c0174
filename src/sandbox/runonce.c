/* runonce.c: isolated work two probes of one run both need, done once: the first to claim runs it, the others get a copy. */
#include "runonce.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isolate.h"
#include "strutil.h"

/* Jobs one run can share; a claim past this many runs alone. */
#define RUN_ONCE_MAX 8

struct run_once_cell {
    const char *key;
    bool published;
    struct isolate_result res;
    json_object *aux;
    void *attached; /* the runner's, while it runs (run_once_attach) */
    void (*reap)(void *p); /* run_once_set_reaper's, until called */
    void *reap_arg;
};

struct run_once {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct run_once_cell cells[RUN_ONCE_MAX];
    size_t n;
};

struct run_once *run_once_new(void)
{
    struct run_once *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    pthread_mutex_init(&o->mu, NULL);
    /* run_once_wait_ms counts on the monotonic clock, as every deadline of the run does (jsonnum.c). */
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&o->cv, &ca);
    pthread_condattr_destroy(&ca);
    return o;
}

void run_once_free(struct run_once *o)
{
    if (!o)
        return;
    /* The runners' threads first: each publishes before it ends, under O's lock. */
    for (size_t i = 0; i < o->n; i++)
        run_once_reap(o, o->cells[i].key);
    for (size_t i = 0; i < o->n; i++) {
        isolate_result_clear(&o->cells[i].res);
        json_object_put(o->cells[i].aux);
    }
    pthread_cond_destroy(&o->cv);
    pthread_mutex_destroy(&o->mu);
    free(o);
}

/* The cell of KEY, or NULL. Called with O->mu held. */
static struct run_once_cell *run_once_find(struct run_once *o, const char *key)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->cells[i].key, key) == 0)
            return &o->cells[i];
    return NULL;
}

enum run_once_role run_once_claim(struct run_once *o, const char *key)
{
    if (!o || !key)
        return RUN_ONCE_ALONE;
    enum run_once_role role = RUN_ONCE_WAIT;
    pthread_mutex_lock(&o->mu);
    if (!run_once_find(o, key)) {
        if (o->n < RUN_ONCE_MAX) {
            o->cells[o->n++] = (struct run_once_cell){.key = key};
            role = RUN_ONCE_MINE;
        } else {
            role = RUN_ONCE_ALONE;
        }
    }
    pthread_mutex_unlock(&o->mu);
    return role;
}

void run_once_copy_result(struct isolate_result *to, const struct isolate_result *from)
{
    *to = *from;
    to->value = NULL;
    if (from->value && json_object_deep_copy(from->value, &to->value, NULL) != 0)
        to->value = NULL;
    to->stderr_tail = str_dup(from->stderr_tail);
    to->detail = str_dup(from->detail);
}

void run_once_publish(struct run_once *o, const char *key, const struct isolate_result *res, json_object *aux)
{
    if (!o || !key)
        return;
    pthread_mutex_lock(&o->mu);
    struct run_once_cell *c = run_once_find(o, key);
    if (c && !c->published) {
        run_once_copy_result(&c->res, res);
        if (aux && json_object_deep_copy(aux, &c->aux, NULL) != 0)
            c->aux = NULL;
        c->published = true;
        c->attached = NULL;
        pthread_cond_broadcast(&o->cv);
    }
    pthread_mutex_unlock(&o->mu);
}

void run_once_wait(struct run_once *o, const char *key, struct isolate_result *res, json_object **aux)
{
    memset(res, 0, sizeof(*res));
    *aux = NULL;
    if (!o || !key) {
        res->status = ISOLATE_SPAWN_FAILED;
        return;
    }
    /* The wait without the fork gate; taken back before O's lock, to copy (the gate comes first). */
    int held = isolate_gate_release();
    pthread_mutex_lock(&o->mu);
    struct run_once_cell *c;
    while ((c = run_once_find(o, key)) && !c->published)
        pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
    isolate_gate_restore(held);
    pthread_mutex_lock(&o->mu);
    c = run_once_find(o, key);
    if (c) {
        /* Copies made under the lock: json-c's reference counts are not shared between threads. */
        run_once_copy_result(res, &c->res);
        if (c->aux && json_object_deep_copy(c->aux, aux, NULL) != 0)
            *aux = NULL;
    } else {
        res->status = ISOLATE_SPAWN_FAILED; /* never claimed: the caller should not have waited */
    }
    pthread_mutex_unlock(&o->mu);
}

/* Fill *RES and *AUX with copies of published cell C. Called with O->mu held. */
static void run_once_take(const struct run_once_cell *c, struct isolate_result *res, json_object **aux)
{
    run_once_copy_result(res, &c->res);
    if (c->aux && json_object_deep_copy(c->aux, aux, NULL) != 0)
        *aux = NULL;
}

bool run_once_wait_ms(struct run_once *o, const char *key, int timeout_ms, struct isolate_result *res,
                      json_object **aux)
{
    memset(res, 0, sizeof(*res));
    *aux = NULL;
    if (!o || !key) {
        res->status = ISOLATE_SPAWN_FAILED;
        return true;
    }
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    long ms = timeout_ms > 0 ? timeout_ms : 0;
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    bool got = false;
    int held = isolate_gate_release(); /* as in run_once_wait */
    pthread_mutex_lock(&o->mu);
    struct run_once_cell *c;
    while ((c = run_once_find(o, key)) && !c->published)
        if (pthread_cond_timedwait(&o->cv, &o->mu, &until) != 0)
            break;
    pthread_mutex_unlock(&o->mu);
    isolate_gate_restore(held);
    pthread_mutex_lock(&o->mu);
    c = run_once_find(o, key);
    if (!c) {
        res->status = ISOLATE_SPAWN_FAILED; /* never claimed */
        got = true;
    } else if (c->published) {
        run_once_take(c, res, aux);
        got = true;
    }
    pthread_mutex_unlock(&o->mu);
    return got;
}

void run_once_attach(struct run_once *o, const char *key, void *p)
{
    if (!o || !key)
        return;
    pthread_mutex_lock(&o->mu);
    struct run_once_cell *c = run_once_find(o, key);
    if (c && !c->published)
        c->attached = p;
    pthread_mutex_unlock(&o->mu);
}

bool run_once_peek(struct run_once *o, const char *key, void (*fn)(void *p, void *arg), void *arg)
{
    if (!o || !key)
        return false;
    bool called = false;
    pthread_mutex_lock(&o->mu);
    struct run_once_cell *c = run_once_find(o, key);
    if (c && !c->published && c->attached) {
        fn(c->attached, arg);
        called = true;
    }
    pthread_mutex_unlock(&o->mu);
    return called;
}

void run_once_set_reaper(struct run_once *o, const char *key, void (*reap)(void *p), void *p)
{
    if (!o || !key)
        return;
    pthread_mutex_lock(&o->mu);
    struct run_once_cell *c = run_once_find(o, key);
    if (c) {
        c->reap = reap;
        c->reap_arg = p;
    }
    pthread_mutex_unlock(&o->mu);
}

void run_once_reap(struct run_once *o, const char *key)
{
    if (!o || !key)
        return;
    void (*reap)(void *) = NULL;
    void *p = NULL;
    pthread_mutex_lock(&o->mu);
    struct run_once_cell *c = run_once_find(o, key);
    if (c) {
        reap = c->reap;
        p = c->reap_arg;
        c->reap = NULL;
        c->reap_arg = NULL;
    }
    pthread_mutex_unlock(&o->mu);
    if (reap) /* unlocked: the thread it joins publishes under the lock */
        reap(p);
}
