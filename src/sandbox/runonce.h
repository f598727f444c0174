/* runonce.h: isolated work two probes of one run both need, done once: the first to claim runs it, the others get a copy. */
#ifndef GPUCHECKUP_RUNONCE_H
#define GPUCHECKUP_RUNONCE_H

#include <stdbool.h>
#include <json-c/json.h>

#include "isolate.h"

/* The run's shared jobs (one per run_diagnosis, made by run.c; probes reach it as probe_ctx.once). */
struct run_once;

/* A new, empty set of shared jobs, or NULL when out of memory. */
struct run_once *run_once_new(void);
/* Free O and every outcome it holds, once the jobs handed to it (run_once_set_reaper) are reaped (no
 * other claimed job may still be running). */
void run_once_free(struct run_once *o);

/* What run_once_claim tells the caller to do. */
enum run_once_role {
    RUN_ONCE_ALONE = -1, /* nothing is shared (O is NULL, or out of memory): do the work yourself */
    RUN_ONCE_WAIT = 0,   /* another probe claimed it: run_once_wait for its outcome */
    RUN_ONCE_MINE = 1,   /* run it, then run_once_publish: always, whatever happened, or waiters wait forever */
};

/* Claim the job called KEY (a string that outlives O). The first caller gets RUN_ONCE_MINE; later
 * ones RUN_ONCE_WAIT. Thread-safe. */
enum run_once_role run_once_claim(struct run_once *o, const char *key);

/* The outcome of job KEY, claimed by the caller: RES (the child's result) and AUX (what the runner
 * adds, may be NULL) are copied; the caller keeps its own. Wakes every waiter. */
void run_once_publish(struct run_once *o, const char *key, const struct isolate_result *res, json_object *aux);

/* Wait until job KEY (claimed by another) is published, then fill *RES and *AUX with the caller's own
 * copies (free with isolate_result_clear and json_object_put; *AUX may be NULL). */
void run_once_wait(struct run_once *o, const char *key, struct isolate_result *res, json_object **aux);

/* run_once_wait for at most TIMEOUT_MS: returns true and fills *RES and *AUX as it does once job KEY
 * is published, or returns false (nothing filled) when it is not published by then. */
bool run_once_wait_ms(struct run_once *o, const char *key, int timeout_ms, struct isolate_result *res,
                      json_object **aux);

/* While job KEY (claimed by the caller) runs: attach P, which others may look at through run_once_peek
 * until the caller publishes (P must stay valid until then). */
void run_once_attach(struct run_once *o, const char *key, void *p);

/* Call FN(P, ARG) under O's lock, P being what the runner of job KEY attached, unless nothing is
 * attached or the job is published (P may be gone). Returns whether FN was called. */
bool run_once_peek(struct run_once *o, const char *key, void (*fn)(void *p, void *arg), void *arg);

/* Job KEY (claimed by the caller) runs in a thread of the caller's that nobody waits for: hand its
 * end to O. run_once_reap, or else run_once_free before it frees anything, calls REAP(P) once (it
 * joins that thread, which must publish KEY), so that no job outlives the run. */
void run_once_set_reaper(struct run_once *o, const char *key, void (*reap)(void *p), void *p);

/* Call job KEY's reaper now, if it has one not called yet (it returns once the job's thread is gone). */
void run_once_reap(struct run_once *o, const char *key);

/* A deep copy of FROM into *TO (free with isolate_result_clear). */
void run_once_copy_result(struct isolate_result *to, const struct isolate_result *from);

#endif
