/* smoke_platform.c: one smoke child per OpenCL platform, its devices side by side in threads there. */
#include "jsonnum.h"
#include "smoke_platform.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smoke_prep.h"
#include "strutil.h"

/* ---- In the child ---------------------------------------------------------------------------- */

struct smoke_sync {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t left; /* devices still running */
};

struct smoke_worker {
    struct smoke_device_args *args;
    struct smoke_sync *sync;
    json_object *result; /* set once, under sync->mu */
    double elapsed_ms;
    bool done;
};

static void smoke_worker_finish(struct smoke_worker *w, json_object *result, double t0)
{
    pthread_mutex_lock(&w->sync->mu);
    w->result = result;
    w->elapsed_ms = jsonnum_now_ms() - t0;
    w->done = true;
    w->sync->left--;
    pthread_cond_signal(&w->sync->cv);
    pthread_mutex_unlock(&w->sync->mu);
}

static void smoke_worker_test(struct smoke_worker *w)
{
    double t0 = jsonnum_now_ms();
    smoke_worker_finish(w, smoke_device_child(w->args), t0);
}

static void *smoke_worker_main(void *arg)
{
    smoke_worker_test(arg);
    /* Done: wait here for the child's end rather than exit. A thread's exit runs the drivers'
     * thread-local destructors while other devices are still under test; and under AddressSanitizer
     * it aborts the child when the thread ran LLVM's compiler, which replaced the thread's signal
     * stack (LLVM's Signals.inc) with one the sanitizer cannot unmap (seen with PoCL 3.1). */
    for (;;)
        pause();
    return NULL;
}

/* Wait (SYNC->mu held) until every device is done or DEADLINE_MS has passed. */
static void smoke_sync_wait(struct smoke_sync *sync, double deadline_ms)
{
    while (sync->left > 0) {
        double left = deadline_ms - jsonnum_now_ms();
        if (left <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts); /* jsonnum_now_ms's clock, and the condition's */
        long long ns = (long long)ts.tv_nsec + (long long)(left * 1e6);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        pthread_cond_timedwait(&sync->cv, &sync->mu, &ts);
    }
}

/* The build share of DEVS[IDX[K]]'s platform among the N devices IDX: NULL when it is the platform's
 * only one; else the one of the first device of that platform, or a new one for the first (a child of
 * one platform has one; the shared cl-once child one per platform, so that each device builds, and
 * names its stages, exactly as in its platform's own child). */
static struct smoke_build_share *smoke_platform_share(struct smoke_device_args *devs, const size_t *idx, size_t n,
                                                      size_t k)
{
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
        same += devs[idx[i]].platform == devs[idx[k]].platform;
    if (same < 2)
        return NULL;
    for (size_t i = 0; i < k; i++)
        if (devs[idx[i]].platform == devs[idx[k]].platform)
            return devs[idx[i]].share;
    return smoke_build_share_new();
}

json_object *smoke_platform_test(struct smoke_device_args *devs, const size_t *idx, size_t n, double deadline_ms)
{
    /* Nothing here is freed: a thread may still be inside a hung driver when the child answers, and
     * the process ends right after (isolate_child's _exit), which stops such threads too. */
    struct smoke_sync *sync = calloc(1, sizeof(*sync));
    struct smoke_worker *w = calloc(n ? n : 1, sizeof(*w));
    pthread_condattr_t ca;
    if (!sync || !w || pthread_condattr_init(&ca) != 0)
        return NULL;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_mutex_init(&sync->mu, NULL) != 0 || pthread_cond_init(&sync->cv, &ca) != 0)
        return NULL;
    sync->left = n;
    /* One set of inputs and references for all the devices (all of the same size): computing them
     * once per device cost each extra device a sixth of the child's CPU time (perf, 4 PoCL devices). */
    struct smoke_prep *prep = n > 1 ? calloc(1, sizeof(*prep)) : NULL;
    if (prep)
        smoke_prep_start(prep, devs[idx[0]].n);
    for (size_t i = 0; i < n; i++) {
        w[i].args = &devs[idx[i]];
        if (prep && w[i].args->n == prep->n)
            w[i].args->prep = prep; /* our copy of the parent's array: the parent's stays NULL */
        /* One kernel build for the devices of the same model, the others load its binary. */
        w[i].args->share = smoke_platform_share(devs, idx, n, i);
    }
    for (size_t i = 0; i < n; i++) {
        w[i].sync = sync;
        pthread_t th;
        if (pthread_create(&th, NULL, smoke_worker_main, &w[i]) == 0)
            pthread_detach(th);
        else /* no thread: test it here, one after another (the parent's deadline still holds) */
            smoke_worker_test(&w[i]);
    }
    json_object *out = json_object_new_object(), *arr = json_object_new_array();
    if (!out || !arr)
        return NULL;
    pthread_mutex_lock(&sync->mu);
    smoke_sync_wait(sync, deadline_ms);
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "result", w[i].done ? w[i].result : NULL);
        json_object_object_add(d, "elapsed_ms", w[i].done ? jsonnum_ms(w[i].elapsed_ms) : NULL);
        json_object_array_add(arr, d);
    }
    pthread_mutex_unlock(&sync->mu);
    json_object_object_add(out, "devices", arr);
    return out;
}

json_object *smoke_platform_child(void *arg)
{
    struct smoke_platform_args *pa = arg;
    return smoke_platform_test(pa->devs, pa->idx, pa->n, pa->deadline_ms);
}

/* ---- In the parent ------------------------------------------------------------------------------ */

struct smoke_plat_run {
    struct smoke_device_args *devs;
    struct isolate_result *res;
    size_t *idx;                    /* device indices, grouped by platform */
    struct smoke_platform_args *pa; /* by platform job */
    bool *rerun;                    /* by device: its platform's child crashed, test it alone */
    smoke_done_fn done;
    void *arg;
};

/* DST takes SRC's outcome (not its value), for a device that shared SRC's child. */
static void smoke_result_copy(struct isolate_result *dst, const struct isolate_result *src)
{
    *dst = *src;
    dst->value = NULL;
    dst->stderr_tail = src->stderr_tail ? str_dup(src->stderr_tail) : NULL;
    dst->detail = src->detail ? str_dup(src->detail) : NULL;
}

/* A platform's child is over: each of its devices gets its own result, or is marked for a rerun. */
static void smoke_platform_done(size_t index, const struct isolate_job *job, void *arg)
{
    struct smoke_plat_run *run = arg;
    const struct smoke_platform_args *pa = &run->pa[index];
    const struct isolate_result *pr = &job->result;
    json_object *devs = NULL;
    bool shaped = pr->status == ISOLATE_OK && json_object_object_get_ex(pr->value, "devices", &devs) &&
                  json_object_is_type(devs, json_type_array) && json_object_array_length(devs) == pa->n;
    bool crashed = !shaped && pr->status != ISOLATE_TIMEOUT && pr->status != ISOLATE_SPAWN_FAILED;
    for (size_t k = 0; k < pa->n; k++) {
        size_t i = pa->idx[k];
        struct isolate_result *r = &run->res[i];
        if (crashed && pa->n > 1) {
            run->rerun[i] = true; /* which device's driver crashed: each alone tells */
            continue;
        }
        smoke_result_copy(r, pr);
        json_object *d = shaped ? json_object_array_get_idx(devs, k) : NULL, *v = NULL, *ms = NULL;
        if (d && json_object_object_get_ex(d, "result", &v) && json_object_is_type(v, json_type_object)) {
            r->value = json_object_get(v);
            if (json_object_object_get_ex(d, "elapsed_ms", &ms) &&
                (json_object_is_type(ms, json_type_double) || json_object_is_type(ms, json_type_int)))
                r->elapsed_ms = json_object_get_double(ms);
        } else if (shaped) {
            /* Still running when the child answered at its deadline: the stage slot says where. */
            r->status = ISOLATE_TIMEOUT;
            free(r->detail);
            r->detail = str_printf("timed out after %.1f s", pr->elapsed_ms / 1000.0);
        } else if (pr->status == ISOLATE_OK) {
            r->status = ISOLATE_BAD_OUTPUT;
            free(r->detail);
            r->detail = str_printf("returned an unexpected result");
        }
        if (run->done)
            run->done(i, r, run->arg);
    }
}

/* One child per device marked in RUN->rerun, with what is left of the budget. */
static void smoke_rerun_alone(struct probe_ctx *ctx, struct smoke_plat_run *run, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += run->rerun[i];
    if (k == 0)
        return;
    struct isolate_job *jobs = calloc(k, sizeof(*jobs));
    size_t *which = calloc(k, sizeof(*which));
    k = 0;
    for (size_t i = 0; jobs && which && i < n; i++) {
        if (!run->rerun[i])
            continue;
        if (run->devs[i].stage)
            memset(run->devs[i].stage, 0, SMOKE_STAGE_MAX);
        jobs[k] = (struct isolate_job){.fn = smoke_device_child, .arg = &run->devs[i]};
        which[k++] = i;
    }
    if (jobs && which)
        probe_isolate_many(ctx, jobs, k);
    for (size_t j = 0; j < k; j++) {
        run->res[which[j]] = jobs[j].result; /* ownership moves */
        if (run->done)
            run->done(which[j], &run->res[which[j]], run->arg);
    }
    for (size_t i = 0; (!jobs || !which) && i < n; i++) {
        if (!run->rerun[i])
            continue;
        run->res[i] = (struct isolate_result){.status = ISOLATE_SPAWN_FAILED, .error = ENOMEM};
        run->res[i].detail = str_printf("out of memory");
        if (run->done)
            run->done(i, &run->res[i], run->arg);
    }
    free(jobs);
    free(which);
}

void smoke_platform_run(struct probe_ctx *ctx, struct smoke_device_args *devs, size_t n, struct isolate_result *res,
                        smoke_done_fn done, void *arg)
{
    memset(res, 0, n * sizeof(*res));
    if (n == 0)
        return;
    struct smoke_plat_run run = {.devs = devs, .res = res, .done = done, .arg = arg};
    run.idx = calloc(n, sizeof(*run.idx));
    run.pa = calloc(n, sizeof(*run.pa));
    run.rerun = calloc(n, sizeof(*run.rerun));
    struct isolate_job *jobs = calloc(n, sizeof(*jobs));
    if (!run.idx || !run.pa || !run.rerun || !jobs) {
        for (size_t i = 0; i < n; i++)
            res[i] = (struct isolate_result){.status = ISOLATE_SPAWN_FAILED, .error = ENOMEM,
                                             .detail = str_printf("out of memory")};
        goto out;
    }
    /* Group the devices by platform, platforms in the order they first appear. */
    size_t np = 0, m = 0;
    bool *taken = run.rerun; /* borrowed while grouping, cleared after */
    /* The child answers a little before the run's deadline, so that what finished is kept. */
    double deadline = probe_answer_by_ms(probe_deadline_ms(ctx));
    for (size_t i = 0; i < n; i++) {
        if (taken[i])
            continue;
        struct smoke_platform_args *pa = &run.pa[np];
        *pa = (struct smoke_platform_args){.devs = devs, .idx = &run.idx[m], .deadline_ms = deadline};
        for (size_t j = i; j < n; j++)
            if (!taken[j] && devs[j].platform == devs[i].platform) {
                taken[j] = true;
                run.idx[m++] = j;
                pa->n++;
            }
        jobs[np] = (struct isolate_job){.fn = smoke_platform_child, .arg = pa};
        np++;
    }
    memset(run.rerun, 0, n * sizeof(*run.rerun));
    probe_isolate_many_cb(ctx, jobs, np, smoke_platform_done, &run);
    for (size_t q = 0; q < np; q++)
        isolate_result_clear(&jobs[q].result);
    smoke_rerun_alone(ctx, &run, n);
out:
    free(jobs);
    free(run.idx);
    free(run.pa);
    free(run.rerun);
}
