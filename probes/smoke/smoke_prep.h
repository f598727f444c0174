/* smoke_prep.h: the smoke test's inputs and CPU references, prepared in a thread while the driver builds. */
#ifndef GPUCHECKUP_SMOKE_PREP_H
#define GPUCHECKUP_SMOKE_PREP_H

#include <pthread.h>
#include <stdbool.h>

#include "smoke_verify.h"

/* Inputs are the same on every run and every machine: a failure can be reproduced. */
#define SMOKE_SEED 0x5EED0F5310CEull

/* Largest N whose fp32 and fp64 inputs and references are prepared ahead, in a thread, while the
 * driver loads and builds (about 40 MB at 512); beyond it each pass prepares its own. */
#define SMOKE_PREP_MAX_N 512

/* Inputs and references prepared by a helper thread while the device's thread loads the driver and
 * builds the kernel: on a CPU device (or a busy host) the reference would otherwise compete with the
 * kernel for the same cores. fp16 is rare and always prepared on demand. */
struct smoke_prep {
    unsigned n;
    pthread_t thread;
    bool running;
    bool ready[SMOKE_N_PREC][SMOKE_N_PASS];
    int rc[SMOKE_N_PREC][SMOKE_N_PASS];
    struct smoke_problem pr[SMOKE_N_PREC][SMOKE_N_PASS];
};

/* Start preparing SP's problems of size N (nothing is started beyond SMOKE_PREP_MAX_N). */
void smoke_prep_start(struct smoke_prep *sp, unsigned n);

/* The problem of precision P and pass KIND, into *PR (ownership moves to the caller): prepared
 * ahead when SP has it (waiting for the thread), else generated now. Returns smoke_problem_generate's
 * value (0, 1: not meaningful at this size, -1: out of memory). SP may be NULL. */
int smoke_prep_take(struct smoke_prep *sp, enum smoke_prec p, enum smoke_pass_kind kind, unsigned n,
                    struct smoke_problem *pr);

/* Wait for the thread and free what was not taken. */
void smoke_prep_finish(struct smoke_prep *sp);

#endif
