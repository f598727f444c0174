/* test_smoke_isolate.c: unit tests of isolate_run_many_cb, the completion callback the smoke progress uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "isolate.h"

static json_object *child_sleep_ms(void *arg)
{
    int ms = *(int *)arg;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "ms", json_object_new_int(ms));
    return o;
}

static json_object *child_hang(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static json_object *child_segv(void *arg)
{
    (void)arg;
    raise(SIGSEGV);
    return NULL;
}

struct record {
    size_t order[8];
    enum isolate_status status[8];
    double elapsed[8];
    size_t n;
    int calls_per_job[8];
};

static void on_done(size_t index, const struct isolate_job *job, void *arg)
{
    struct record *r = arg;
    r->order[r->n] = index;
    r->status[r->n] = job->result.status;
    r->elapsed[r->n] = job->result.elapsed_ms;
    r->n++;
    r->calls_per_job[index]++;
}

/* Jobs are reported once each, in the order they finish, with their result already filled. */
static void test_callback_in_completion_order(void **state)
{
    (void)state;
    int slow = 600, fast = 10, mid = 200;
    struct isolate_job jobs[4] = {
        {.fn = child_sleep_ms, .arg = &slow},
        {.fn = child_sleep_ms, .arg = &fast},
        {.fn = child_sleep_ms, .arg = &mid},
        {.fn = child_segv, .arg = NULL},
    };
    struct record rec;
    memset(&rec, 0, sizeof(rec));
    assert_int_equal(isolate_run_many_cb(jobs, 4, 5000, on_done, &rec), 0);
    assert_int_equal(rec.n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(rec.calls_per_job[i], 1);
    /* The slow one is last; the fast and the mid one come in that order. */
    assert_int_equal(rec.order[3], 0);
    size_t pos_fast = 9, pos_mid = 9;
    for (size_t i = 0; i < 4; i++) {
        if (rec.order[i] == 1)
            pos_fast = i;
        if (rec.order[i] == 2)
            pos_mid = i;
    }
    assert_true(pos_fast < pos_mid);
    /* Each result is complete when reported, and its time is its own, not the slowest sibling's. */
    for (size_t i = 0; i < 4; i++) {
        if (rec.order[i] == 3)
            assert_int_equal(rec.status[i], ISOLATE_SIGNAL);
        else
            assert_int_equal(rec.status[i], ISOLATE_OK);
        if (rec.order[i] == 1)
            assert_true(rec.elapsed[i] < 400);
    }
    assert_int_equal(json_object_get_int(json_object_object_get(jobs[2].result.value, "ms")), 200);
    for (int i = 0; i < 4; i++)
        isolate_result_clear(&jobs[i].result);
}

/* A job still running at the deadline is reported too, as a timeout; a NULL callback is fine. */
static void test_callback_timeout_and_null(void **state)
{
    (void)state;
    int fast = 1;
    struct isolate_job jobs[2] = {
        {.fn = child_hang, .arg = NULL},
        {.fn = child_sleep_ms, .arg = &fast},
    };
    struct record rec;
    memset(&rec, 0, sizeof(rec));
    assert_int_equal(isolate_run_many_cb(jobs, 2, 300, on_done, &rec), 0);
    assert_int_equal(rec.n, 2);
    assert_int_equal(rec.order[0], 1);
    assert_int_equal(rec.order[1], 0);
    assert_int_equal(rec.status[1], ISOLATE_TIMEOUT);
    for (int i = 0; i < 2; i++)
        isolate_result_clear(&jobs[i].result);

    assert_int_equal(isolate_run_many_cb(jobs, 2, 300, NULL, NULL), 0);
    assert_int_equal(jobs[0].result.status, ISOLATE_TIMEOUT);
    assert_int_equal(jobs[1].result.status, ISOLATE_OK);
    for (int i = 0; i < 2; i++)
        isolate_result_clear(&jobs[i].result);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callback_in_completion_order),
        cmocka_unit_test(test_callback_timeout_and_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
