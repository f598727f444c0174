/* smoke_prep.h: the smoke test's inputs and CPU references, prepared in a thread while the driver builds. */
#ifndef GPUCHECKUP_SMOKE_PREP_H
#define GPUCHECKUP_SMOKE_PREP_H

#include <pthread.h>
#include <stdbool.h>

#include "compute_check.h"

/* Inputs are the same on every run and every machine: a failure can be reproduced. */
#define SMOKE_SEED 0x5EED0F5310CEull

/* Largest N whose fp32 and fp64 inputs and references are prepared ahead, in a thread, while the
 * driver loads and builds (about 40 MB at 512); beyond it each pass prepares its own. */
#define SMOKE_PREP_MAX_N 512

/* Inputs and references prepared by a helper thread while the devices' threads load the driver and
 * build the kernel: on a CPU device (or a busy host) the reference would otherwise compete with the
 * kernel for the same cores. They are the same for every device, so one preparation serves all the
 * devices of a child: the problems are only read once prepared. fp16 is rare and always prepared on
 * demand, by each pass for itself. */
struct smoke_prep {
    unsigned n;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool started; /* the thread was started (and mu, cv initialised) */
    bool done;    /* the thread has finished (under mu) */
    int rc[COMPUTE_N_PREC][COMPUTE_N_PASS];
    struct compute_problem pr[COMPUTE_N_PREC][COMPUTE_N_PASS];
};

/* Start preparing SP's problems of size N (nothing is started beyond SMOKE_PREP_MAX_N). */
void smoke_prep_start(struct smoke_prep *sp, unsigned n);

/* The problem of precision P and pass KIND of size N, into *PR: SP's own, read-only, when SP
 * prepares it (waiting for the thread; any number of threads may ask at once), else generated now
 * into OWN. Free OWN with compute_problem_free afterwards either way (it is zeroed when not used).
 * Returns compute_problem_generate's value (0, 1: not meaningful at this size, -1: out of memory).
 * SP may be NULL. When *PR is OWN, its reference is not computed yet (compute_problem_reference). */
int smoke_prep_get(struct smoke_prep *sp, enum compute_prec p, enum compute_pass_kind kind, unsigned n,
                   struct compute_problem *own, const struct compute_problem **pr);

/* Wait for the thread and free the problems: once no thread reads them any more. */
void smoke_prep_finish(struct smoke_prep *sp);

#endif
