/* smoke_prep.c: the smoke test's inputs and CPU references, prepared in a thread while the driver builds. */
#include "smoke_prep.h"

#include <string.h>

static void *smoke_prep_main(void *arg)
{
    struct smoke_prep *sp = arg;
    for (int p = SMOKE_FP32; p <= SMOKE_FP64; p++)
        for (int k = 0; k < SMOKE_N_PASS; k++) {
            int rc = smoke_problem_generate(&sp->pr[p][k], (enum smoke_prec)p, (enum smoke_pass_kind)k, sp->n,
                                            SMOKE_SEED);
            /* fp64 shares fp32's inputs, and so its reference. */
            if (rc == 0 && smoke_problem_reference_like(&sp->pr[p][k], p == SMOKE_FP64 ? &sp->pr[SMOKE_FP32][k] : NULL) < 0)
                rc = -1;
            sp->rc[p][k] = rc;
            sp->ready[p][k] = true;
        }
    return NULL;
}

void smoke_prep_start(struct smoke_prep *sp, unsigned n)
{
    memset(sp, 0, sizeof(*sp));
    sp->n = n;
    if (n <= SMOKE_PREP_MAX_N)
        sp->running = pthread_create(&sp->thread, NULL, smoke_prep_main, sp) == 0;
}

int smoke_prep_take(struct smoke_prep *sp, enum smoke_prec p, enum smoke_pass_kind kind, unsigned n,
                    struct smoke_problem *pr)
{
    if (!sp || p > SMOKE_FP64 || !(sp->running || sp->ready[p][kind]))
        return smoke_problem_generate(pr, p, kind, n, SMOKE_SEED);
    if (sp->running)
        pthread_join(sp->thread, NULL);
    sp->running = false;
    int g = sp->rc[p][kind];
    *pr = sp->pr[p][kind]; /* ownership moves to the caller */
    memset(&sp->pr[p][kind], 0, sizeof(*pr));
    sp->ready[p][kind] = false;
    return g;
}

void smoke_prep_finish(struct smoke_prep *sp)
{
    if (sp->running)
        pthread_join(sp->thread, NULL);
    sp->running = false;
    for (int p = 0; p < SMOKE_N_PREC; p++)
        for (int k = 0; k < SMOKE_N_PASS; k++)
            smoke_problem_free(&sp->pr[p][k]);
}
