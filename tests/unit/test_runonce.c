/* test_runonce.c: unit tests of the run's shared jobs: one claimer runs, every other waits for its own copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isolate.h"
#include "runonce.h"

static void test_no_set_means_alone(void **state)
{
    (void)state;
    assert_int_equal(run_once_claim(NULL, "k"), RUN_ONCE_ALONE);
    struct run_once *o = run_once_new();
    assert_non_null(o);
    assert_int_equal(run_once_claim(o, NULL), RUN_ONCE_ALONE);
    run_once_free(o);
}

static void test_first_claim_runs_the_others_wait(void **state)
{
    (void)state;
    struct run_once *o = run_once_new();
    assert_int_equal(run_once_claim(o, "enum"), RUN_ONCE_MINE);
    assert_int_equal(run_once_claim(o, "enum"), RUN_ONCE_WAIT);
    assert_int_equal(run_once_claim(o, "other"), RUN_ONCE_MINE); /* each key on its own */
    assert_int_equal(run_once_claim(o, "other"), RUN_ONCE_WAIT);
    run_once_free(o);
}

/* Every waiter gets the published outcome as its own copy: changing one changes neither the
 * publisher's nor another waiter's. */
static void test_waiters_get_their_own_copies(void **state)
{
    (void)state;
    struct run_once *o = run_once_new();
    assert_int_equal(run_once_claim(o, "enum"), RUN_ONCE_MINE);
    struct isolate_result res = {.status = ISOLATE_OK, .elapsed_ms = 12.5};
    res.value = json_object_new_object();
    json_object_object_add(res.value, "platforms", json_object_new_int(3));
    res.stderr_tail = strdup("driver chatter");
    json_object *aux = json_object_new_object();
    json_object_object_add(aux, "stage", json_object_new_int(7));
    run_once_publish(o, "enum", &res, aux);
    /* the publisher keeps its own */
    json_object_object_add(res.value, "platforms", json_object_new_int(99));
    json_object_put(aux);

    struct isolate_result a, b;
    json_object *aa = NULL, *ab = NULL;
    run_once_wait(o, "enum", &a, &aa);
    run_once_wait(o, "enum", &b, &ab);
    assert_int_equal(a.status, ISOLATE_OK);
    assert_true(a.elapsed_ms == 12.5);
    assert_string_equal(a.stderr_tail, "driver chatter");
    assert_ptr_not_equal(a.stderr_tail, b.stderr_tail);
    assert_int_equal(json_object_get_int(json_object_object_get(a.value, "platforms")), 3);
    assert_int_equal(json_object_get_int(json_object_object_get(aa, "stage")), 7);
    json_object_object_add(a.value, "platforms", json_object_new_int(5));
    assert_int_equal(json_object_get_int(json_object_object_get(b.value, "platforms")), 3);
    isolate_result_clear(&a);
    isolate_result_clear(&b);
    json_object_put(aa);
    json_object_put(ab);
    isolate_result_clear(&res);
    run_once_free(o);
}

struct waiter {
    struct run_once *o;
    struct isolate_result res;
    json_object *aux;
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    run_once_wait(w->o, "enum", &w->res, &w->aux);
    return NULL;
}

/* Waiters that start before the outcome is published block until it is, then all see it. */
static void test_waiters_block_until_published(void **state)
{
    (void)state;
    struct run_once *o = run_once_new();
    assert_int_equal(run_once_claim(o, "enum"), RUN_ONCE_MINE);
    struct waiter w[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].o = o;
        w[i].res.status = ISOLATE_OK; /* overwritten by the wait */
        assert_int_equal(pthread_create(&th[i], NULL, waiter_main, &w[i]), 0);
    }
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    struct isolate_result res = {.status = ISOLATE_SIGNAL, .signal = 11};
    res.detail = strdup("killed by SIGSEGV");
    run_once_publish(o, "enum", &res, NULL);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(w[i].res.status, ISOLATE_SIGNAL);
        assert_int_equal(w[i].res.signal, 11);
        assert_string_equal(w[i].res.detail, "killed by SIGSEGV");
        assert_null(w[i].res.value);
        assert_null(w[i].aux);
        isolate_result_clear(&w[i].res);
    }
    /* a second publish does not replace the first outcome */
    struct isolate_result again = {.status = ISOLATE_OK};
    run_once_publish(o, "enum", &again, NULL);
    struct isolate_result late;
    json_object *laux = NULL;
    run_once_wait(o, "enum", &late, &laux);
    assert_int_equal(late.status, ISOLATE_SIGNAL);
    isolate_result_clear(&late);
    isolate_result_clear(&res);
    run_once_free(o);
}

/* Waiting on a job nobody claimed returns at once (a failed start), never hangs. */
static void test_wait_unclaimed_returns(void **state)
{
    (void)state;
    struct run_once *o = run_once_new();
    struct isolate_result r;
    json_object *aux = (json_object *)1;
    run_once_wait(o, "never", &r, &aux);
    assert_int_equal(r.status, ISOLATE_SPAWN_FAILED);
    assert_null(aux);
    run_once_free(o);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A timed wait returns false after about its time when nothing is published, and true with the
 * outcome once it is; on a job nobody claimed it returns at once. */
static void test_wait_ms(void **state)
{
    (void)state;
    struct run_once *o = run_once_new();
    assert_int_equal(run_once_claim(o, "enum"), RUN_ONCE_MINE);
    struct isolate_result r;
    json_object *aux = NULL;
    double t0 = now_ms();
    assert_false(run_once_wait_ms(o, "enum", 60, &r, &aux));
    double spent = now_ms() - t0;
    assert_true(spent >= 55.0);
    assert_true(spent < 5000.0);
    assert_null(aux);
    assert_false(run_once_wait_ms(o, "enum", 0, &r, &aux));
    json_object *a = json_object_new_object();
    json_object_object_add(a, "n", json_object_new_int(3));
    struct isolate_result res = {.status = ISOLATE_TIMEOUT};
    run_once_publish(o, "enum", &res, a);
    json_object_put(a);
    assert_true(run_once_wait_ms(o, "enum", 0, &r, &aux));
    assert_int_equal(r.status, ISOLATE_TIMEOUT);
    assert_int_equal(json_object_get_int(json_object_object_get(aux, "n")), 3);
    isolate_result_clear(&r);
    json_object_put(aux);
    aux = NULL;
    assert_true(run_once_wait_ms(o, "never", 1000, &r, &aux));
    assert_int_equal(r.status, ISOLATE_SPAWN_FAILED);
    run_once_free(o);
}

static void add_one(void *p, void *arg)
{
    (void)arg;
    (*(int *)p)++;
}

/* What the runner attaches is seen through run_once_peek while it runs, never once it has published
 * (then it may be gone), nor before anything is attached. */
static void test_attach_and_peek(void **state)
{
    (void)state;
    struct run_once *o = run_once_new();
    int seen = 0;
    assert_false(run_once_peek(o, "enum", add_one, NULL)); /* not claimed */
    assert_int_equal(run_once_claim(o, "enum"), RUN_ONCE_MINE);
    assert_false(run_once_peek(o, "enum", add_one, NULL)); /* nothing attached */
    run_once_attach(o, "enum", &seen);
    assert_true(run_once_peek(o, "enum", add_one, NULL));
    assert_true(run_once_peek(o, "enum", add_one, NULL));
    assert_int_equal(seen, 2);
    struct isolate_result res = {.status = ISOLATE_OK};
    run_once_publish(o, "enum", &res, NULL);
    assert_false(run_once_peek(o, "enum", add_one, NULL));
    run_once_attach(o, "enum", &seen); /* too late: published */
    assert_false(run_once_peek(o, "enum", add_one, NULL));
    assert_int_equal(seen, 2);
    assert_false(run_once_peek(NULL, "enum", add_one, NULL));
    run_once_free(o);
}

/* A runner that publishes from a thread nobody waits for, then lingers (its cleanup) until RELEASE. */
struct late_runner {
    struct run_once *o;
    pthread_t th;
    volatile int release; /* set by the test: the thread may end */
    int reaped;           /* how many times the reaper ran */
    int ended;            /* the thread had ended when the reaper returned */
};

static void *late_runner_main(void *arg)
{
    struct late_runner *r = arg;
    struct isolate_result res = {.status = ISOLATE_OK};
    run_once_publish(r->o, "enum", &res, NULL);
    while (!__atomic_load_n(&r->release, __ATOMIC_ACQUIRE))
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    return NULL;
}

static void late_runner_reap(void *p)
{
    struct late_runner *r = p;
    __atomic_store_n(&r->release, 1, __ATOMIC_RELEASE);
    pthread_join(r->th, NULL);
    r->ended = 1;
    r->reaped++;
}

/* A job whose thread nobody joins (the icd and opencl probes take the shared child's answers and go
 * on) is reaped once: by run_once_reap when asked, else by run_once_free, before it frees anything. */
static void test_reaper(void **state)
{
    (void)state;
    struct late_runner r1 = {0}, r2 = {0};
    r1.o = run_once_new();
    assert_int_equal(run_once_claim(r1.o, "enum"), RUN_ONCE_MINE);
    assert_int_equal(pthread_create(&r1.th, NULL, late_runner_main, &r1), 0);
    run_once_set_reaper(r1.o, "enum", late_runner_reap, &r1);
    struct isolate_result res;
    json_object *aux = NULL;
    run_once_wait(r1.o, "enum", &res, &aux); /* published: the thread still runs */
    assert_int_equal(res.status, ISOLATE_OK);
    isolate_result_clear(&res);
    assert_int_equal(r1.reaped, 0);
    run_once_reap(r1.o, "enum");
    assert_int_equal(r1.reaped, 1);
    assert_int_equal(r1.ended, 1);
    run_once_reap(r1.o, "enum"); /* once only */
    run_once_reap(r1.o, "other");
    run_once_free(r1.o);
    assert_int_equal(r1.reaped, 1);

    r2.o = run_once_new();
    assert_int_equal(run_once_claim(r2.o, "enum"), RUN_ONCE_MINE);
    assert_int_equal(pthread_create(&r2.th, NULL, late_runner_main, &r2), 0);
    run_once_set_reaper(r2.o, "enum", late_runner_reap, &r2);
    run_once_set_reaper(r2.o, "unclaimed", late_runner_reap, &r2); /* no such job: ignored */
    run_once_free(r2.o); /* nobody reaped it: the run does, while its lock is still there to publish under */
    assert_int_equal(r2.reaped, 1);
    assert_int_equal(r2.ended, 1);
    run_once_set_reaper(NULL, "enum", late_runner_reap, &r2);
    run_once_reap(NULL, "enum");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_set_means_alone),
        cmocka_unit_test(test_first_claim_runs_the_others_wait),
        cmocka_unit_test(test_waiters_get_their_own_copies),
        cmocka_unit_test(test_waiters_block_until_published),
        cmocka_unit_test(test_wait_unclaimed_returns),
        cmocka_unit_test(test_wait_ms),
        cmocka_unit_test(test_attach_and_peek),
        cmocka_unit_test(test_reaper),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
