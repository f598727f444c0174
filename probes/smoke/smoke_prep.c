/* smoke_prep.c: the smoke test's inputs and CPU references, prepared in a thread while the driver builds. */
#include "smoke_prep.h"

#include <string.h>

static void *smoke_prep_main(void *arg)
{
    struct smoke_prep *sp = arg;
    for (int p = COMPUTE_FP32; p <= COMPUTE_FP64; p++)
        for (int k = 0; k < COMPUTE_N_PASS; k++) {
            int rc = compute_problem_generate(&sp->pr[p][k], (enum compute_prec)p, (enum compute_pass_kind)k, sp->n,
                                            SMOKE_SEED);
            /* fp64 shares fp32's inputs, and so its reference. */
            if (rc == 0 && compute_problem_reference_like(&sp->pr[p][k], p == COMPUTE_FP64 ? &sp->pr[COMPUTE_FP32][k] : NULL) < 0)
                rc = -1;
            sp->rc[p][k] = rc;
        }
    pthread_mutex_lock(&sp->mu);
    sp->done = true;
    pthread_cond_broadcast(&sp->cv);
    pthread_mutex_unlock(&sp->mu);
    return NULL;
}

void smoke_prep_start(struct smoke_prep *sp, unsigned n)
{
    memset(sp, 0, sizeof(*sp));
    sp->n = n;
    if (n > SMOKE_PREP_MAX_N)
        return;
    if (pthread_mutex_init(&sp->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&sp->cv, NULL) != 0) {
        pthread_mutex_destroy(&sp->mu);
        return;
    }
    sp->started = pthread_create(&sp->thread, NULL, smoke_prep_main, sp) == 0;
    if (!sp->started) {
        pthread_cond_destroy(&sp->cv);
        pthread_mutex_destroy(&sp->mu);
    }
}

int smoke_prep_get(struct smoke_prep *sp, enum compute_prec p, enum compute_pass_kind kind, unsigned n,
                   struct compute_problem *own, const struct compute_problem **pr)
{
    memset(own, 0, sizeof(*own));
    if (!sp || !sp->started || p > COMPUTE_FP64 || (unsigned)kind >= COMPUTE_N_PASS || n != sp->n) {
        *pr = own;
        return compute_problem_generate(own, p, kind, n, SMOKE_SEED);
    }
    pthread_mutex_lock(&sp->mu);
    while (!sp->done)
        pthread_cond_wait(&sp->cv, &sp->mu);
    pthread_mutex_unlock(&sp->mu);
    *pr = &sp->pr[p][kind];
    return sp->rc[p][kind];
}

void smoke_prep_finish(struct smoke_prep *sp)
{
    if (sp->started) {
        pthread_join(sp->thread, NULL);
        pthread_cond_destroy(&sp->cv);
        pthread_mutex_destroy(&sp->mu);
    }
    sp->started = false;
    for (int p = 0; p < COMPUTE_N_PREC; p++)
        for (int k = 0; k < COMPUTE_N_PASS; k++)
            compute_problem_free(&sp->pr[p][k]);
}
