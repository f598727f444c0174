/* test_isolate.c: unit tests of the isolation helper: crashes, hangs, garbage, parallel children. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>

#include "isolate.h"
#include "probe.h"
#include "snapshot.h"

static json_object *child_ok(void *arg)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "answer", json_object_new_int(*(int *)arg));
    fprintf(stderr, "driver chatter\n");
    return o;
}

static json_object *child_segv(void *arg)
{
    (void)arg;
    raise(SIGSEGV);
    return NULL;
}

static json_object *child_abort(void *arg)
{
    (void)arg;
    abort();
}

static json_object *child_hang(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static json_object *child_hang_with_grandchild(void *arg)
{
    (void)arg;
    if (fork() == 0)
        for (;;)
            pause();
    for (;;)
        pause();
    return NULL;
}

static json_object *child_no_value(void *arg)
{
    (void)arg;
    return NULL;
}

static json_object *child_exit7(void *arg)
{
    (void)arg;
    _exit(7);
}

static json_object *child_big(void *arg)
{
    (void)arg;
    json_object *a = json_object_new_array();
    for (int i = 0; i < 200000; i++)
        json_object_array_add(a, json_object_new_int(i));
    return a;
}

static void test_ok_value_and_stderr(void **state)
{
    (void)state;
    int v = 42;
    struct isolate_result r;
    assert_int_equal(isolate_run(child_ok, &v, 5000, &r), ISOLATE_OK);
    assert_int_equal(json_object_get_int(json_object_object_get(r.value, "answer")), 42);
    assert_non_null(r.stderr_tail);
    assert_non_null(strstr(r.stderr_tail, "driver chatter"));
    isolate_result_clear(&r);
}

static void test_signals_named(void **state)
{
    (void)state;
    struct isolate_result r;
    assert_int_equal(isolate_run(child_segv, NULL, 5000, &r), ISOLATE_SIGNAL);
    assert_int_equal(r.signal, SIGSEGV);
    assert_string_equal(r.detail, "killed by SIGSEGV");
    isolate_result_clear(&r);
    assert_int_equal(isolate_run(child_abort, NULL, 5000, &r), ISOLATE_SIGNAL);
    assert_string_equal(isolate_signal_name(r.signal), "SIGABRT");
    isolate_result_clear(&r);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_timeout_kills_group(void **state)
{
    (void)state;
    struct isolate_result r;
    double t0 = now_ms();
    assert_int_equal(isolate_run(child_hang_with_grandchild, NULL, 300, &r), ISOLATE_TIMEOUT);
    double dt = now_ms() - t0;
    assert_true(dt >= 290 && dt < 3000);
    assert_non_null(strstr(r.detail, "timed out"));
    isolate_result_clear(&r);
}

static void test_exit_and_no_value(void **state)
{
    (void)state;
    struct isolate_result r;
    assert_int_equal(isolate_run(child_exit7, NULL, 5000, &r), ISOLATE_EXIT);
    assert_int_equal(r.exit_code, 7);
    isolate_result_clear(&r);
    assert_int_equal(isolate_run(child_no_value, NULL, 5000, &r), ISOLATE_EXIT);
    assert_string_equal(r.detail, "exited without a result");
    isolate_result_clear(&r);
}

/* A child whose result pipe carries garbage: replace the helper's serialisation by writing to every
 * descriptor above stderr that is a pipe, then exiting 0. */
static json_object *child_writes_garbage(void *arg)
{
    (void)arg;
    for (int fd = 3; fd < 64; fd++)
        if (write(fd, "{\"not\": json", 12) > 0)
            break;
    _exit(0);
}

static void test_garbage_output(void **state)
{
    (void)state;
    struct isolate_result r;
    assert_int_equal(isolate_run(child_writes_garbage, NULL, 5000, &r), ISOLATE_BAD_OUTPUT);
    assert_non_null(strstr(r.detail, "malformed"));
    assert_null(r.value);
    isolate_result_clear(&r);
}

static void test_large_output(void **state)
{
    (void)state;
    struct isolate_result r;
    assert_int_equal(isolate_run(child_big, NULL, 10000, &r), ISOLATE_OK);
    assert_int_equal(json_object_array_length(r.value), 200000);
    isolate_result_clear(&r);
}

static void test_parallel_mixed(void **state)
{
    (void)state;
    int v = 1;
    struct isolate_job jobs[4] = {
        {.fn = child_ok, .arg = &v},
        {.fn = child_hang, .arg = NULL},
        {.fn = child_segv, .arg = NULL},
        {.fn = child_ok, .arg = &v},
    };
    double t0 = now_ms();
    assert_int_equal(isolate_run_many(jobs, 4, 400), 0);
    double dt = now_ms() - t0;
    assert_true(dt < 3000); /* one shared deadline, not one per child */
    assert_int_equal(jobs[0].result.status, ISOLATE_OK);
    assert_int_equal(jobs[1].result.status, ISOLATE_TIMEOUT);
    assert_int_equal(jobs[2].result.status, ISOLATE_SIGNAL);
    assert_int_equal(jobs[3].result.status, ISOLATE_OK);
    for (int i = 0; i < 4; i++)
        isolate_result_clear(&jobs[i].result);
}

/* Marks that it ran: a job that must not start must leave this alone. */
static json_object *child_touch(void *arg)
{
    FILE *f = fopen((const char *)arg, "w");
    if (f)
        fclose(f);
    return json_object_new_object();
}

static void test_no_time_left_starts_nothing(void **state)
{
    (void)state;
    char path[] = "/tmp/gc-isolate-touch-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    struct isolate_job jobs[2] = {{.fn = child_touch, .arg = path}, {.fn = child_touch, .arg = path}};
    assert_int_equal(isolate_run_many(jobs, 2, 0), -1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(jobs[i].result.status, ISOLATE_SPAWN_FAILED);
        assert_true(jobs[i].result.budget_spent);
        assert_non_null(strstr(jobs[i].result.detail, "--timeout was already spent"));
        isolate_result_clear(&jobs[i].result);
    }
    assert_int_equal(access(path, F_OK), -1); /* no child ran */
    /* with time left the same jobs run, and are not marked */
    struct isolate_result r;
    assert_int_equal(isolate_run(child_touch, path, 5000, &r), ISOLATE_OK);
    assert_false(r.budget_spent);
    assert_int_equal(access(path, F_OK), 0);
    unlink(path);
    isolate_result_clear(&r);
}

static void test_budget_what_is_left(void **state)
{
    (void)state;
    struct probe_ctx ctx = {.timeout_ms = 2000};
    /* no deadline (a unit test's context): every batch gets the whole --timeout */
    assert_int_equal(probe_budget_ms(&ctx), 2000);
    assert_false(ctx.budget_spent);
    /* a deadline 500 ms ahead: about 500 ms, never more than --timeout */
    ctx.deadline_ms = now_ms() + 500;
    int left = probe_budget_ms(&ctx);
    assert_true(left > 300 && left <= 500);
    ctx.deadline_ms = now_ms() + 60000;
    assert_int_equal(probe_budget_ms(&ctx), 2000);
    assert_false(ctx.budget_spent);
    /* past the deadline: nothing, and the context remembers it */
    ctx.deadline_ms = now_ms() - 1;
    assert_int_equal(probe_budget_ms(&ctx), 0);
    assert_true(ctx.budget_spent);
}

/* probe_isolate_*: the children get what is left of the run's budget, and nothing starts when it is spent. */
static void test_probe_isolate_takes_the_budget(void **state)
{
    (void)state;
    struct probe_ctx ctx = {.timeout_ms = 5000, .deadline_ms = now_ms() + 300};
    struct isolate_result r;
    double t0 = now_ms();
    assert_int_equal(probe_isolate_run(&ctx, child_hang, NULL, &r), ISOLATE_TIMEOUT);
    assert_true(now_ms() - t0 < 2000); /* the 300 ms left, not the 5 s of --timeout */
    assert_false(ctx.budget_spent);
    isolate_result_clear(&r);
    struct isolate_job jobs[2] = {{.fn = child_ok}, {.fn = child_ok}};
    probe_isolate_many(&ctx, jobs, 2); /* the budget is spent: nothing starts */
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(jobs[i].result.status, ISOLATE_SPAWN_FAILED);
        assert_true(jobs[i].result.budget_spent);
        isolate_result_clear(&jobs[i].result);
    }
    assert_true(ctx.budget_spent);
    /* a context without a run around it: the deadline is --timeout from now, answered a little before */
    struct probe_ctx alone = {.timeout_ms = 1000};
    double d = probe_deadline_ms(&alone);
    assert_true(d > now_ms() + 900 && d <= now_ms() + 1000);
    double by = probe_answer_by_ms(d);
    assert_true(by < d && by >= d - 100.5);
}

/* The mode: computed from the options and the tree, and what each mode lets a probe do. */
static void test_probe_mode(void **state)
{
    (void)state;
    struct hostfs live = {.live = true}, tree = {.live = false};
    struct snapshot snap = {.cpuid_dump = "captured.dump"};
    struct cli_options o = {0};
    assert_int_equal(probe_mode_of(&o, &live), PROBE_MODE_LIVE);
    assert_int_equal(probe_mode_of(&o, &tree), PROBE_MODE_TREE);
    o.live = true;
    assert_int_equal(probe_mode_of(&o, &live), PROBE_MODE_LIVE);
    assert_int_equal(probe_mode_of(&o, &tree), PROBE_MODE_TREE_LIVE);
    o.snapshot = &snap;
    assert_int_equal(probe_mode_of(&o, &tree), PROBE_MODE_SNAPSHOT_LIVE);
    o.live = false;
    assert_int_equal(probe_mode_of(&o, &tree), PROBE_MODE_SNAPSHOT);
    struct probe_ctx ctx = {.opts = &o, .snapshot = &snap, .mode = PROBE_MODE_SNAPSHOT};
    assert_false(probe_live(&ctx));
    assert_true(probe_snapshot(&ctx));
    assert_string_equal(probe_cpuid_dump(&ctx), "captured.dump");
    ctx.mode = PROBE_MODE_SNAPSHOT_LIVE; /* --live: this machine's CPUID */
    assert_true(probe_live(&ctx) && probe_snapshot(&ctx) && !probe_host_files(&ctx));
    assert_null(probe_cpuid_dump(&ctx));
    o.cpuid_dump = "given.dump";
    assert_string_equal(probe_cpuid_dump(&ctx), "given.dump");
    ctx.mode = PROBE_MODE_TREE;
    assert_false(probe_live(&ctx) || probe_snapshot(&ctx) || probe_host_files(&ctx));
    assert_null(probe_captured(&ctx, "icd"));
    ctx.mode = PROBE_MODE_LIVE;
    assert_true(probe_live(&ctx) && probe_host_files(&ctx) && !probe_snapshot(&ctx));
}

/* One isolate_run from a thread, with TIMEOUT_MS: its result, and when it started and came back. */
struct gate_fork {
    int timeout_ms;
    struct isolate_result r;
    double started_ms, returned_ms;
};

static void *thread_fork_once(void *arg)
{
    struct gate_fork *g = arg;
    int one = 1;
    g->started_ms = now_ms();
    isolate_run(child_ok, &one, g->timeout_ms, &g->r);
    g->returned_ms = now_ms();
    return NULL;
}

static void test_fork_waits_for_the_gate(void **state)
{
    (void)state;
    struct gate_fork g = {.timeout_ms = 5000};
    pthread_t t;
    isolate_gate_enter();
    isolate_gate_enter(); /* nested: one hold */
    assert_int_equal(pthread_create(&t, NULL, thread_fork_once, &g), 0);
    usleep(300 * 1000);
    isolate_gate_leave(); /* still held once */
    usleep(100 * 1000);
    double left = now_ms();
    isolate_gate_leave();
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(g.r.status, ISOLATE_OK);
    isolate_result_clear(&g.r);
    /* the fork waited until the holder had left both holds */
    assert_true(g.returned_ms >= left);
}

/* A thread that never lets go of the gate (stuck in a read, say) does not hang the others' forks past
 * their deadline: they end as not started, and say why. */
static void test_fork_gives_up_on_a_held_gate(void **state)
{
    (void)state;
    struct gate_fork g = {.timeout_ms = 300};
    pthread_t t;
    isolate_gate_enter();
    assert_int_equal(pthread_create(&t, NULL, thread_fork_once, &g), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    isolate_gate_leave();
    assert_int_equal(g.r.status, ISOLATE_SPAWN_FAILED);
    assert_int_equal(g.r.error, ETIMEDOUT);
    assert_non_null(g.r.detail);
    assert_non_null(strstr(g.r.detail, "not started"));
    assert_true(g.returned_ms - g.started_ms >= 250 && g.returned_ms - g.started_ms < 2000);
    isolate_result_clear(&g.r);
    /* and with the gate free again, forks work */
    struct isolate_result r;
    int one = 1;
    assert_int_equal(isolate_run(child_ok, &one, 3000, &r), ISOLATE_OK);
    isolate_result_clear(&r);
}

static json_object *child_sleep_ms(void *arg)
{
    usleep((useconds_t)(intptr_t)arg * 1000);
    return json_object_new_object();
}

struct gate_worker {
    int sleep_ms;      /* the child's */
    int busy_ms;       /* the thread's own work, holding the gate, before its child */
    bool yields;       /* calls isolate_gate_yield every 10 ms of it */
    enum isolate_status status;
    double started_ms; /* when its child was forked (about) */
    double ended_ms;
};

static void *gate_worker_main(void *arg)
{
    struct gate_worker *w = arg;
    for (int ms = 0; ms < w->busy_ms; ms += 10) {
        usleep(10 * 1000); /* "work": the gate stays held */
        if (w->yields)
            isolate_gate_yield();
    }
    struct isolate_result r;
    w->started_ms = now_ms();
    w->status = isolate_run(child_sleep_ms, (void *)(intptr_t)w->sleep_ms, 5000, &r);
    isolate_result_clear(&r);
    w->ended_ms = now_ms();
    return NULL;
}

/* Threads of ours hold the gate while they work and let go of it while they wait for their children:
 * a fork waits for the others' work, never for their waits. */
static void test_threads_wait_without_the_gate(void **state)
{
    (void)state;
    struct gate_worker w[3] = {{.sleep_ms = 600}, {.sleep_ms = 600}, {.sleep_ms = 600}};
    struct isolate_thread t[3];
    double t0 = now_ms();
    for (int i = 0; i < 3; i++)
        assert_int_equal(isolate_thread_start(&t[i], gate_worker_main, &w[i]), 0);
    for (int i = 0; i < 3; i++) {
        isolate_thread_join(&t[i]);
        assert_int_equal(w[i].status, ISOLATE_OK);
    }
    /* three children of 600 ms side by side, not one after another */
    assert_true(now_ms() - t0 < 1500);

    /* one thread busy for 400 ms holding the gate: the other's fork waits for that work */
    struct gate_worker busy = {.sleep_ms = 10, .busy_ms = 400}, quick = {.sleep_ms = 10};
    struct isolate_thread tb, tq;
    t0 = now_ms();
    assert_int_equal(isolate_thread_start(&tb, gate_worker_main, &busy), 0);
    usleep(100 * 1000);
    assert_int_equal(isolate_thread_start(&tq, gate_worker_main, &quick), 0);
    isolate_thread_join(&tq);
    isolate_thread_join(&tb);
    assert_int_equal(quick.status, ISOLATE_OK);
    assert_int_equal(busy.status, ISOLATE_OK);
    assert_true(quick.ended_ms - t0 >= 350); /* its child could be forked only once busy let go */

    /* the same work, yielding now and then: the fork goes first */
    struct gate_worker polite = {.sleep_ms = 10, .busy_ms = 600, .yields = true}, quick2 = {.sleep_ms = 10};
    t0 = now_ms();
    assert_int_equal(isolate_thread_start(&tb, gate_worker_main, &polite), 0);
    usleep(100 * 1000);
    assert_int_equal(isolate_thread_start(&tq, gate_worker_main, &quick2), 0);
    isolate_thread_join(&tq);
    double quick_end = quick2.ended_ms;
    isolate_thread_join(&tb);
    assert_int_equal(quick2.status, ISOLATE_OK);
    assert_true(quick_end - t0 < 450); /* long before polite's 600 ms of work were over */
    assert_true(polite.started_ms - t0 >= 550);
}

static void *gate_nothing(void *arg)
{
    atomic_store((atomic_bool *)arg, true);
    return NULL;
}

/* A thread's end waits for its join, and the join holds the gate alone: a fork asked for meanwhile
 * comes after it. */
static void test_thread_ends_inside_its_join(void **state)
{
    (void)state;
    atomic_bool ran = false;
    struct isolate_thread t;
    assert_int_equal(isolate_thread_start(&t, gate_nothing, &ran), 0);
    while (!isolate_thread_finished(&t))
        usleep(1000);
    assert_true(atomic_load(&ran));
    /* finished, but not ended: it waits for its join */
    assert_int_equal(pthread_tryjoin_np(t.th, NULL), EBUSY);
    isolate_thread_join(&t);
}

static atomic_bool parse_stop;

/* A thread of ours parsing children's JSON (as the probes' threads do), yielding between documents. */
static void *thread_parse_loop(void *arg)
{
    long *parsed = arg;
    const char *doc = "{\"n\":1.5,\"m\":[2.25,3e2,-0.125]}";
    while (!atomic_load(&parse_stop)) {
        json_object *v = isolate_json_parse(doc, strlen(doc), 8, true, NULL);
        *parsed += v != NULL;
        json_object_put(v);
        isolate_gate_yield();
    }
    return NULL;
}

static json_object *child_strerror(void *arg)
{
    (void)arg;
    /* strerror goes through gettext, which takes glibc's locale lock for reading */
    return json_object_new_string(strerror(EIO));
}

static atomic_bool churn_stop;

/* A probe's work: allocations of every size, a yield now and then (as every hostfs read does). */
static void *thread_churn(void *arg)
{
    long *rounds = arg;
    for (long i = 0; !atomic_load(&churn_stop); i++) {
        char *p[16];
        for (int k = 0; k < 16; k++) {
            p[k] = malloc((size_t)(16 + ((i * 31 + k * 97) % 4000)));
            if (p[k])
                p[k][0] = (char)k;
        }
        for (int k = 0; k < 16; k++)
            free(p[k]);
        isolate_gate_yield();
        (*rounds)++;
    }
    return NULL;
}

static json_object *child_allocates(void *arg)
{
    (void)arg;
    /* a driver's first steps: its constructors allocate */
    json_object *o = json_object_new_object();
    for (int i = 0; i < 64; i++) {
        char *p = malloc((size_t)(32 + i * 61));
        if (p)
            p[0] = 1;
        free(p);
    }
    json_object_object_add(o, "ok", json_object_new_boolean(1));
    return o;
}

/* The hang CI's ASan stage saw: a thread of ours allocating at the fork left the allocator's lock held
 * in the child (GCC 12's libasan has no fork handlers), whose first allocation then waited forever.
 * Threads of ours hold the gate while they work, so a fork never lands inside an allocation. (Under
 * glibc's malloc this passes with or without the gate; under ASan, threads outside it hang a child
 * within a few hundred forks.) */
static void test_fork_beside_allocating_threads(void **state)
{
    (void)state;
    struct isolate_thread t[2];
    long rounds[2] = {0, 0};
    atomic_store(&churn_stop, false);
    for (int i = 0; i < 2; i++)
        assert_int_equal(isolate_thread_start(&t[i], thread_churn, &rounds[i]), 0);
    int ok = 0, hung = 0;
    for (int i = 0; i < 400 && !hung; i++) {
        struct isolate_result r;
        enum isolate_status st = isolate_run(child_allocates, NULL, 5000, &r);
        ok += st == ISOLATE_OK;
        hung += st == ISOLATE_TIMEOUT;
        isolate_result_clear(&r);
    }
    atomic_store(&churn_stop, true);
    for (int i = 0; i < 2; i++)
        isolate_thread_join(&t[i]);
    assert_int_equal(hung, 0);
    assert_int_equal(ok, 400);
    assert_true(rounds[0] > 0 && rounds[1] > 0); /* they did work beside the forks */
}

/* The false alarm this guards against: json-c's parser, in another thread, held glibc's locale lock
 * (newlocale, duplocale) at the fork; the child, a driver calling strerror or throwing, waited forever. */
static void test_fork_beside_json_parser(void **state)
{
    (void)state;
    struct isolate_thread t[2];
    long parsed[2] = {0, 0};
    atomic_store(&parse_stop, false);
    for (int i = 0; i < 2; i++)
        assert_int_equal(isolate_thread_start(&t[i], thread_parse_loop, &parsed[i]), 0);
    int hung = 0, ok = 0;
    for (int i = 0; i < 1500; i++) {
        struct isolate_result r;
        enum isolate_status st = isolate_run(child_strerror, NULL, 2000, &r);
        ok += st == ISOLATE_OK && json_object_is_type(r.value, json_type_string);
        hung += st == ISOLATE_TIMEOUT;
        isolate_result_clear(&r);
        if (hung)
            break;
    }
    atomic_store(&parse_stop, true);
    for (int i = 0; i < 2; i++)
        isolate_thread_join(&t[i]);
    assert_int_equal(hung, 0);
    assert_int_equal(ok, 1500);
    assert_true(parsed[0] + parsed[1] > 0);
}

struct held_stream {
    FILE *f;
    int ms;
    atomic_bool held;
    atomic_bool may_end; /* not ended beside the fork: a thread's end allocates and frees (ASan's too) */
};

static void *thread_hold_stream(void *arg)
{
    struct held_stream *h = arg;
    flockfile(h->f);
    atomic_store(&h->held, true);
    usleep((useconds_t)h->ms * 1000);
    funlockfile(h->f);
    while (!atomic_load(&h->may_end))
        usleep(1000);
    return NULL;
}

static json_object *child_chatter(void *arg)
{
    (void)arg;
    fprintf(stderr, "driver chatter on stderr\n");
    printf("driver chatter on stdout\n");
    return json_object_new_object();
}

/* A thread in the middle of writing to stderr (a progress line) when another forks: the fork waits
 * until the stream is free (the parent flushes every stream first), and the child's own writes (a
 * driver's chatter) go through. */
static void test_fork_waits_for_stderr(void **state)
{
    (void)state;
    struct held_stream h = {.f = stderr, .ms = 300};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, thread_hold_stream, &h), 0);
    while (!atomic_load(&h.held))
        usleep(1000);
    double start = now_ms();
    struct isolate_result r;
    assert_int_equal(isolate_run(child_chatter, NULL, 3000, &r), ISOLATE_OK);
    assert_true(now_ms() - start >= 250); /* waited for the writer */
    assert_non_null(r.stderr_tail);
    assert_non_null(strstr(r.stderr_tail, "driver chatter on stderr"));
    assert_non_null(strstr(r.stderr_tail, "driver chatter on stdout"));
    isolate_result_clear(&r);
    atomic_store(&h.may_end, true);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static json_object *child_own_pid(void *arg)
{
    /* a few MiB touched: its teardown takes a moment, which the parent no longer waits for */
    size_t len = (size_t)(intptr_t)arg;
    char *p = malloc(len);
    if (p)
        memset(p, 1, len);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "pid", json_object_new_int64(getpid()));
    return o;
}

/* A child that has said all is not waited for while it tears down, but it is reaped all the same: no
 * zombie is left once the next batch starts. */
static void test_all_said_children_are_reaped(void **state)
{
    (void)state;
    pid_t pids[8];
    for (int i = 0; i < 8; i++) {
        struct isolate_result r;
        assert_int_equal(isolate_run(child_own_pid, (void *)(intptr_t)(16 << 20), 5000, &r), ISOLATE_OK);
        json_object *v = NULL;
        assert_true(json_object_object_get_ex(r.value, "pid", &v));
        pids[i] = (pid_t)json_object_get_int64(v);
        assert_true(pids[i] > 0);
        assert_int_equal(r.exit_code, 0);
        isolate_result_clear(&r);
    }
    usleep(200 * 1000); /* time for the last ones to be gone */
    struct isolate_result r;
    int one = 1;
    assert_int_equal(isolate_run(child_ok, &one, 5000, &r), ISOLATE_OK);
    isolate_result_clear(&r);
    for (int i = 0; i < 8; i++) {
        errno = 0;
        assert_int_equal(kill(pids[i], 0), -1); /* a zombie would still take a signal */
        assert_int_equal(errno, ESRCH);
    }
}

static void test_json_parse(void **state)
{
    (void)state;
    enum json_tokener_error e = json_tokener_success;
    json_object *v = isolate_json_parse("[1,2] ", 6, 4, false, &e);
    assert_non_null(v);
    assert_int_equal(e, json_tokener_success);
    assert_int_equal(json_object_array_length(v), 2);
    json_object_put(v);
    /* WHOLE: a byte after the value is an error */
    assert_null(isolate_json_parse("[1,2]x", 6, 4, true, &e));
    assert_int_equal(e, json_tokener_error_parse_unexpected);
    /* incomplete, too deep, garbage */
    assert_null(isolate_json_parse("{\"a\":", 5, 4, false, &e));
    assert_int_not_equal(e, json_tokener_success);
    assert_null(isolate_json_parse("[[[[[1]]]]]", 11, 3, false, &e));
    assert_int_equal(e, json_tokener_error_depth);
    assert_null(isolate_json_parse("nope", 4, 4, false, NULL));
    /* LEN counts: bytes past it are not read */
    v = isolate_json_parse("[1][2]", 3, 4, true, &e);
    assert_non_null(v);
    assert_int_equal(json_object_array_length(v), 1);
    json_object_put(v);
}

/* ---- what a vendor child may do to the host (issue 24 item 5) ---- */

#define CAPBIT_SETPCAP (UINT64_C(1) << 8)
#define CAPBIT_SYS_MODULE (UINT64_C(1) << 16)
#define CAPBIT_MKNOD (UINT64_C(1) << 27)
#define CAPBITS_HOST (CAPBIT_SYS_MODULE | CAPBIT_MKNOD)

/* The fields of TEXT (/proc/self/status) the tests need, into OUT (CapEff, CapBnd, NoNewPrivs). */
struct proc_caps {
    uint64_t eff, bnd;
    int nnp;
};

static void proc_caps_parse(const char *text, struct proc_caps *out)
{
    const char *p;
    assert_non_null(p = strstr(text, "\nCapEff:"));
    out->eff = strtoull(p + 8, NULL, 16);
    assert_non_null(p = strstr(text, "\nCapBnd:"));
    out->bnd = strtoull(p + 8, NULL, 16);
    assert_non_null(p = strstr(text, "\nNoNewPrivs:"));
    out->nnp = atoi(p + 12);
}

static char *read_self_status(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return NULL;
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* In the child: its /proc/self/status, as vendor code would see it. */
static json_object *child_status(void *arg)
{
    (void)arg;
    char *s = read_self_status();
    return s ? json_object_new_string(s) : NULL;
}

static void run_child_caps(struct proc_caps *c)
{
    struct isolate_result r;
    assert_int_equal(isolate_run(child_status, NULL, 5000, &r), ISOLATE_OK);
    assert_true(json_object_is_type(r.value, json_type_string));
    proc_caps_parse(json_object_get_string(r.value), c);
    isolate_result_clear(&r);
}

/* A vendor child can neither create device nodes nor load modules, and no setuid helper it runs gains
 * anything: CAP_MKNOD and CAP_SYS_MODULE are out of its effective set and (where the parent may drop
 * them: root) out of its bounding set, and no_new_privs is set. The parent keeps what it had. */
static void test_child_cannot_change_host(void **state)
{
    (void)state;
    struct proc_caps before, child, after;
    proc_caps_parse(read_self_status(), &before);
    run_child_caps(&child);
    proc_caps_parse(read_self_status(), &after);
    assert_int_equal(child.eff & CAPBITS_HOST, 0);
    assert_int_equal(child.nnp, 1);
    if (before.eff & CAPBIT_SETPCAP)
        assert_int_equal(child.bnd & CAPBITS_HOST, 0);
    else /* nobody may shrink it without CAP_SETPCAP; no_new_privs makes it moot */
        assert_int_equal(child.bnd, before.bnd);
    /* the parent is untouched: nothing but the child gives anything up */
    assert_int_equal(after.eff, before.eff);
    assert_int_equal(after.bnd, before.bnd);
    assert_int_equal(after.nnp, before.nnp);
}

/* As a user with no capabilities (root's test drops to nobody first), giving up fails with EPERM, and
 * that is no failure of the child: it runs, with no_new_privs set all the same. */
static void test_child_runs_without_privileges(void **state)
{
    (void)state;
    if (geteuid() != 0) { /* this process is that user already */
        struct proc_caps c;
        run_child_caps(&c);
        assert_int_equal(c.nnp, 1);
        return;
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(10);
        struct isolate_result r;
        if (isolate_run(child_status, NULL, 5000, &r) != ISOLATE_OK || !json_object_is_type(r.value, json_type_string))
            _exit(11);
        const char *s = json_object_get_string(r.value);
        const char *e = strstr(s, "\nCapEff:"), *n = strstr(s, "\nNoNewPrivs:");
        if (!e || !n || strtoull(e + 8, NULL, 16) != 0 || atoi(n + 12) != 1)
            _exit(12);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok_value_and_stderr),
        cmocka_unit_test(test_signals_named),
        cmocka_unit_test(test_timeout_kills_group),
        cmocka_unit_test(test_exit_and_no_value),
        cmocka_unit_test(test_garbage_output),
        cmocka_unit_test(test_large_output),
        cmocka_unit_test(test_parallel_mixed),
        cmocka_unit_test(test_no_time_left_starts_nothing),
        cmocka_unit_test(test_budget_what_is_left),
        cmocka_unit_test(test_probe_isolate_takes_the_budget),
        cmocka_unit_test(test_probe_mode),
        cmocka_unit_test(test_fork_waits_for_the_gate),
        cmocka_unit_test(test_fork_gives_up_on_a_held_gate),
        cmocka_unit_test(test_threads_wait_without_the_gate),
        cmocka_unit_test(test_thread_ends_inside_its_join),
        cmocka_unit_test(test_fork_beside_allocating_threads),
        cmocka_unit_test(test_fork_beside_json_parser),
        cmocka_unit_test(test_json_parse),
        cmocka_unit_test(test_fork_waits_for_stderr),
        cmocka_unit_test(test_all_said_children_are_reaped),
        cmocka_unit_test(test_child_cannot_change_host),
        cmocka_unit_test(test_child_runs_without_privileges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
