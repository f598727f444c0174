/* isolate.c: run untrusted work (vendor drivers) in forked children with a timeout; JSON comes back. */
#include "jsonnum.h"
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "strutil.h"

#define ISOLATE_TAIL_MAX 4096

/* The byte a child writes after its JSON, just before it closes its pipes and exits: "all said". No
 * JSON text json-c prints holds it (control characters in strings are escaped). */
#define ISOLATE_ALL_SAID '\x04'

/* Held while a batch creates its pipes and forks (see isolate_spawn_all): every fork happens under it. */
static pthread_mutex_t isolate_spawn_lock = PTHREAD_MUTEX_INITIALIZER;

/* The fork gate (see isolate.h). Writers first: a fork waiting for it holds back threads coming back
 * from a wait, so it never starves while they take turns holding it. */
static pthread_rwlock_t isolate_gate = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static _Thread_local int isolate_gate_depth;
/* How many forks wait for the gate now (isolate_gate_yield reads it without a lock). */
static atomic_int isolate_gate_waiting;

void isolate_gate_enter(void)
{
    if (isolate_gate_depth++ == 0)
        pthread_rwlock_rdlock(&isolate_gate);
}

void isolate_gate_leave(void)
{
    if (isolate_gate_depth > 0 && --isolate_gate_depth == 0)
        pthread_rwlock_unlock(&isolate_gate);
}

int isolate_gate_release(void)
{
    int held = isolate_gate_depth;
    if (held > 0) {
        isolate_gate_depth = 0;
        pthread_rwlock_unlock(&isolate_gate);
    }
    return held;
}

void isolate_gate_yield(void)
{
    if (isolate_gate_depth > 0 && atomic_load_explicit(&isolate_gate_waiting, memory_order_relaxed) > 0) {
        pthread_rwlock_unlock(&isolate_gate);
        pthread_rwlock_rdlock(&isolate_gate); /* writers first: after the waiting fork */
    }
}

void isolate_gate_restore(int held)
{
    if (held > 0 && isolate_gate_depth == 0) {
        pthread_rwlock_rdlock(&isolate_gate);
        isolate_gate_depth = held;
    }
}

/* The gate alone, waiting at most until DEADLINE_MS (jsonnum_now_ms's clock). Returns 0, or an errno. */
static int isolate_gate_close(double deadline_ms)
{
    double s = deadline_ms / 1000.0;
    if (s < 0)
        s = 0;
    struct timespec until = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    if (until.tv_nsec >= 1000000000L)
        until.tv_nsec = 999999999L;
    atomic_fetch_add(&isolate_gate_waiting, 1);
    int e = pthread_rwlock_clockwrlock(&isolate_gate, CLOCK_MONOTONIC, &until);
    atomic_fetch_sub(&isolate_gate_waiting, 1);
    return e;
}

/* fork(), holding the gate alone (waiting for it until DEADLINE_MS at most; the caller holds none of
 * it): no other thread of ours is anywhere a child could inherit a lock held. */
static pid_t isolate_fork(double deadline_ms)
{
    int e = isolate_gate_close(deadline_ms);
    if (e != 0) {
        errno = e; /* ETIMEDOUT: fork() itself never says that */
        return -1;
    }
    fflush(NULL); /* nothing buffered may be written twice; no other thread can add to a buffer now */
    pid_t pid = fork();
    e = errno;
    /* In the child too: its only thread is the one that holds it. */
    pthread_rwlock_unlock(&isolate_gate);
    errno = e;
    return pid;
}

static void *isolate_thread_main(void *p)
{
    struct isolate_thread *t = p;
    /* Alive: the sanitizers' and glibc's setup of this thread (which allocates) is over. */
    pthread_mutex_lock(&t->mu);
    t->alive = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    isolate_gate_enter();
    t->fn(t->arg);
    isolate_gate_leave();
    pthread_mutex_lock(&t->mu);
    t->finished = true;
    pthread_cond_broadcast(&t->cv);
    while (!t->go)
        pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int isolate_thread_start(struct isolate_thread *t, void *(*fn)(void *), void *arg)
{
    *t = (struct isolate_thread){.fn = fn, .arg = arg};
    if (pthread_mutex_init(&t->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&t->cv, NULL) != 0) {
        pthread_mutex_destroy(&t->mu);
        return -1;
    }
    if (pthread_create(&t->th, NULL, isolate_thread_main, t) != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        return -1;
    }
    /* Holding the gate (when this thread does) until the new one is set up: no child is forked while
     * it allocates outside the gate. */
    pthread_mutex_lock(&t->mu);
    while (!t->alive)
        pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

bool isolate_thread_finished(struct isolate_thread *t)
{
    pthread_mutex_lock(&t->mu);
    bool f = t->finished;
    pthread_mutex_unlock(&t->mu);
    return f;
}

/* How long a join waits for the gate alone before it lets the thread end anyway: only a thread stuck
 * while holding the gate (a read that never returns) makes it wait that long. */
#define ISOLATE_JOIN_GATE_MS 2000.0

void isolate_thread_join(struct isolate_thread *t)
{
    isolate_thread_join_by(t, jsonnum_now_ms() + ISOLATE_JOIN_GATE_MS);
}

void isolate_thread_join_by(struct isolate_thread *t, double gate_until_ms)
{
    int held = isolate_gate_release();
    pthread_mutex_lock(&t->mu);
    while (!t->finished)
        pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    bool closed = isolate_gate_close(gate_until_ms) == 0;
    pthread_mutex_lock(&t->mu);
    t->go = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
    if (closed)
        pthread_rwlock_unlock(&isolate_gate);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    isolate_gate_restore(held);
}

static const struct {
    int sig;
    const char *name;
} isolate_signals[] = {
    {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGTRAP, "SIGTRAP"},
    {SIGSYS, "SIGSYS"},   {SIGPIPE, "SIGPIPE"}, {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},
    {SIGQUIT, "SIGQUIT"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGALRM, "SIGALRM"},
    {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},
};

const char *isolate_signal_name(int sig)
{
    for (size_t i = 0; i < sizeof(isolate_signals) / sizeof(isolate_signals[0]); i++)
        if (isolate_signals[i].sig == sig)
            return isolate_signals[i].name;
    static _Thread_local char buf[32]; /* probes run in threads */
    snprintf(buf, sizeof(buf), "signal %d", sig);
    return buf;
}

const char *isolate_status_name(enum isolate_status s)
{
    static const char *const names[] = {"ok", "signal", "exit", "timeout", "bad-output", "spawn-failed"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "spawn-failed";
}

void isolate_result_clear(struct isolate_result *res)
{
    json_object_put(res->value);
    free(res->stderr_tail);
    free(res->detail);
    memset(res, 0, sizeof(*res));
}

json_object *isolate_json_parse(const char *buf, size_t len, int depth, bool whole, enum json_tokener_error *err)
{
    enum json_tokener_error e = json_tokener_error_size; /* no tokener: too big, or no memory */
    json_object *v = NULL;
    json_tokener *tok = len <= (size_t)INT32_MAX ? json_tokener_new_ex(depth) : NULL;
    if (tok) {
        /* json-c's parser switches to the C locale for numbers: duplocale, newlocale and freelocale take
         * glibc's locale lock for writing, which a forked child would inherit held. Threads of ours hold
         * the gate anyway; this covers a caller that never entered it. */
        isolate_gate_enter();
        v = json_tokener_parse_ex(tok, buf, (int)len);
        isolate_gate_leave();
        e = json_tokener_get_error(tok);
        if (e == json_tokener_success && whole && tok->char_offset != (int)len)
            e = json_tokener_error_parse_unexpected;
        if (e != json_tokener_success) {
            json_object_put(v);
            v = NULL;
        }
        json_tokener_free(tok);
    }
    if (err)
        *err = e;
    return v;
}

/* In the child: never returns. PARENT is gpucheckup's pid, taken before the fork. */
static void isolate_child(isolate_fn fn, void *arg, int out_fd, int err_fd, pid_t parent)
{
    setpgid(0, 0);
    /* In its own process group the child gets no Ctrl-C, and nobody kills it when gpucheckup dies
     * (SIGKILL, SIGINT): without this a hanging driver would outlive the run forever. Checked
     * after the prctl in case the parent died in between. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(71);
    /* Before any vendor code: as root, NVIDIA's libcuda and NVML create /dev/nvidiactl when it is
     * missing (mknodat 195:255) and may run the setuid nvidia-modprobe. A failure (not root) is no
     * failure of the child: such a user has nothing to give up. */
    (void)isolate_drop_host_privileges();
    /* --pid's credentials (isolate_target.c): a child that cannot take them runs nothing */
    if (isolate_target_apply() != 0) {
        static const char msg[] = "gpucheckup: the child could not take the target process's credentials\n";
        (void)!write(err_fd, msg, sizeof(msg) - 1);
        _exit(72);
    }
    /* Default dispositions: a crash must be reported as a crash. */
    for (size_t i = 0; i < sizeof(isolate_signals) / sizeof(isolate_signals[0]); i++)
        signal(isolate_signals[i].sig, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, STDIN_FILENO);
        close(devnull);
    }
    dup2(err_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    if (err_fd > STDERR_FILENO)
        close(err_fd);
    json_object *v = fn(arg);
    fflush(NULL);
    if (!v)
        _exit(0);
    size_t len = 0;
    const char *s = json_object_to_json_string_length(v, JSON_C_TO_STRING_PLAIN, &len);
    const char said = ISOLATE_ALL_SAID;
    int rc = (s && fdio_write_all(out_fd, s, len) == 0 && fdio_write_all(out_fd, &said, 1) == 0) ? 0 : 70;
    if (rc == 0) {
        /* Everything is said: letting go of the pipes lets the parent go on now. On its own the kernel
         * closes them only after tearing down this address space, which with a few drivers and LLVM
         * mapped takes milliseconds (isolate_wait_all). stdout and stderr become /dev/null (stdin's,
         * read-only) rather than closed: a driver thread opening a file now must not get fd 1 or 2. */
        close(out_fd);
        dup2(STDIN_FILENO, STDOUT_FILENO);
        dup2(STDIN_FILENO, STDERR_FILENO);
    }
    /* No json_object_put: the process ends here, and freeing could run into a driver's broken heap. */
    _exit(rc);
}

struct isolate_child_state {
    pid_t pid;
    int out_fd, err_fd;
    char *out;
    size_t out_len, out_cap;
    bool out_overflow;
    char tail[ISOLATE_TAIL_MAX];
    size_t tail_len;
    bool exited;
    int wstatus;
    bool reap_later; /* exited as far as we care: all said, pipes closed; reaped by isolate_reap */
    bool timed_out;
    double kill_until; /* when killed at the deadline with its siblings: how long its reaping may wait */
    bool finished; /* result filled (and reported to the callback) */
    double start;
};

/* Read what is available on FD into the state; returns false at EOF or error. */
static bool isolate_drain(struct isolate_child_state *c, int fd, bool is_out)
{
    char buf[65536];
    ssize_t r = read(fd, buf, sizeof(buf));
    if (r < 0)
        return errno == EINTR || errno == EAGAIN;
    if (r == 0)
        return false;
    size_t n = (size_t)r;
    if (is_out) {
        if (c->out_overflow || c->out_len + n > ISOLATE_MAX_OUTPUT) {
            c->out_overflow = true;
            return true;
        }
        if (c->out_len + n + 1 > c->out_cap) {
            size_t cap = c->out_cap ? c->out_cap : 8192;
            while (cap < c->out_len + n + 1)
                cap *= 2;
            char *p = realloc(c->out, cap);
            if (!p) {
                c->out_overflow = true;
                return true;
            }
            c->out = p;
            c->out_cap = cap;
        }
        memcpy(c->out + c->out_len, buf, n);
        c->out_len += n;
        c->out[c->out_len] = '\0';
    } else {
        /* Keep the last ISOLATE_TAIL_MAX bytes. */
        if (n >= ISOLATE_TAIL_MAX) {
            memcpy(c->tail, buf + n - ISOLATE_TAIL_MAX, ISOLATE_TAIL_MAX);
            c->tail_len = ISOLATE_TAIL_MAX;
        } else {
            size_t keep = c->tail_len + n > ISOLATE_TAIL_MAX ? ISOLATE_TAIL_MAX - n : c->tail_len;
            memmove(c->tail, c->tail + c->tail_len - keep, keep);
            memcpy(c->tail + keep, buf, n);
            c->tail_len = keep + n;
        }
    }
    return true;
}

/* Children that said all and closed their pipes, still tearing down: reaped when they are gone. */
static pthread_mutex_t isolate_reap_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t isolate_reap_pids[64];
static size_t isolate_reap_n;

/* Reap every child on the list that is gone by now. */
static void isolate_reap(void)
{
    pthread_mutex_lock(&isolate_reap_lock);
    size_t k = 0;
    for (size_t i = 0; i < isolate_reap_n; i++) {
        int st;
        pid_t w;
        while ((w = waitpid(isolate_reap_pids[i], &st, WNOHANG)) < 0 && errno == EINTR)
            ;
        if (w == 0)
            isolate_reap_pids[k++] = isolate_reap_pids[i];
    }
    isolate_reap_n = k;
    pthread_mutex_unlock(&isolate_reap_lock);
}

/* C's output ends with ISOLATE_ALL_SAID: its child wrote the whole of its JSON. */
static bool isolate_marked(const struct isolate_child_state *c)
{
    return !c->out_overflow && c->out_len > 0 && c->out[c->out_len - 1] == ISOLATE_ALL_SAID;
}

/* C's child said all (its JSON and ISOLATE_ALL_SAID) and closed both pipes: its outcome is known, and
 * all it has left is _exit(0). */
static bool isolate_all_said(const struct isolate_child_state *c)
{
    return !c->exited && c->out_fd < 0 && c->err_fd < 0 && isolate_marked(c);
}

/* C is done for us; reap it later if it has not gone yet (no waiting for its teardown). */
static void isolate_reap_later(struct isolate_child_state *c)
{
    pthread_mutex_lock(&isolate_reap_lock);
    bool listed = isolate_reap_n < sizeof(isolate_reap_pids) / sizeof(isolate_reap_pids[0]);
    if (listed)
        isolate_reap_pids[isolate_reap_n++] = c->pid;
    pthread_mutex_unlock(&isolate_reap_lock);
    /* A full list: wait for this one, as without it. Not into c->wstatus: the SIGKILL its group just got
     * may have caught it between its last word and its _exit, and its outcome is already known. */
    int st;
    int held = listed ? 0 : isolate_gate_release();
    if (!listed)
        while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
            ;
    isolate_gate_restore(held);
}

/* How long a child killed with SIGKILL is waited for before it is left to be reaped later: a driver stuck in
 * the kernel can take a while to die, and one blocked in a read of a hung FUSE or NFS mount dies only once
 * that read is answered. The run's deadline is kept (--timeout plus at most a second). */
#define ISOLATE_KILL_WAIT_MS 300.0

/* Reap C, killed, waiting ISOLATE_KILL_WAIT_MS at most; else it goes on the list isolate_reap empties. */
static void isolate_kill_wait(struct isolate_child_state *c)
{
    int held = isolate_gate_release();
    double until = c->kill_until > 0 ? c->kill_until : jsonnum_now_ms() + ISOLATE_KILL_WAIT_MS;
    bool gone = false;
    for (;;) {
        pid_t w = waitpid(c->pid, &c->wstatus, WNOHANG);
        if (w == c->pid || (w < 0 && errno != EINTR)) {
            gone = true;
            break;
        }
        if (jsonnum_now_ms() >= until)
            break;
        struct timespec ts = {0, 2 * 1000000L};
        nanosleep(&ts, NULL);
    }
    isolate_gate_restore(held);
    if (gone)
        return;
    pthread_mutex_lock(&isolate_reap_lock);
    if (isolate_reap_n < sizeof(isolate_reap_pids) / sizeof(isolate_reap_pids[0]))
        isolate_reap_pids[isolate_reap_n++] = c->pid; /* else a zombie until gpucheckup ends */
    pthread_mutex_unlock(&isolate_reap_lock);
}

static void isolate_finish(struct isolate_child_state *c, struct isolate_result *res, double deadline_ms)
{
    if (isolate_marked(c))
        c->out_len--; /* the mark is not part of the JSON */
    res->elapsed_ms = jsonnum_now_ms() - c->start;
    if (c->tail_len > 0) {
        res->stderr_tail = str_copy_n(c->tail, c->tail_len); /* a full tail has no NUL */
        str_sanitize(res->stderr_tail);
    }
    if (c->timed_out) {
        res->status = ISOLATE_TIMEOUT;
        /* what it was given: from its start to the run's deadline */
        double given = deadline_ms - c->start;
        res->detail = str_printf("timed out after %.1f s", (given > 0 ? given : 0) / 1000.0);
    } else if (WIFSIGNALED(c->wstatus)) {
        res->status = ISOLATE_SIGNAL;
        res->signal = WTERMSIG(c->wstatus);
        res->detail = str_printf("killed by %s", isolate_signal_name(res->signal));
    } else if (WIFEXITED(c->wstatus) && WEXITSTATUS(c->wstatus) != 0) {
        res->status = ISOLATE_EXIT;
        res->exit_code = WEXITSTATUS(c->wstatus);
        res->detail = str_printf("exited with status %d", res->exit_code);
    } else if (c->out_len == 0 && !c->out_overflow) {
        res->status = ISOLATE_EXIT;
        res->exit_code = 0;
        res->detail = str_printf("exited without a result");
    } else {
        enum json_tokener_error jerr = json_tokener_success;
        json_object *v = NULL;
        if (!c->out_overflow)
            v = isolate_json_parse(c->out, c->out_len, JSON_TOKENER_DEFAULT_DEPTH, true, &jerr);
        if (v && jerr == json_tokener_success) {
            res->status = ISOLATE_OK;
            res->value = v;
        } else {
            json_object_put(v);
            res->status = ISOLATE_BAD_OUTPUT;
            res->detail = c->out_overflow
                              ? str_printf("returned more than %u bytes", ISOLATE_MAX_OUTPUT)
                              : str_printf("returned malformed output (%s)", json_tokener_error_desc(jerr));
        }
    }
}

/* Job I is over (exited, or past the deadline): kill what is left of its group, reap it, fill its
 * result and tell the caller. */
static void isolate_complete(struct isolate_child_state *c, struct isolate_job *jobs, size_t i, double deadline_ms,
                             isolate_done_fn done, void *arg)
{
    /* Kill the whole group: the child at the deadline, and anything it left behind. */
    if (!c->exited)
        c->timed_out = true;
    kill(-c->pid, SIGKILL);
    if (c->reap_later) {
        isolate_reap_later(c);
    } else if (!c->exited) {
        isolate_kill_wait(c);
        c->exited = true;
    }
    if (c->out_fd >= 0)
        close(c->out_fd);
    if (c->err_fd >= 0)
        close(c->err_fd);
    c->out_fd = c->err_fd = -1;
    isolate_finish(c, &jobs[i].result, deadline_ms);
    free(c->out);
    c->out = NULL;
    c->finished = true;
    if (done)
        done(i, &jobs[i], arg);
}

int isolate_run_many(struct isolate_job *jobs, size_t n, int timeout_ms)
{
    return isolate_run_many_cb(jobs, n, timeout_ms, NULL, NULL);
}

/* Every job fails before it starts: ERR (errno-like), DETAIL; BUDGET when the run's time is spent. */
static void isolate_fail_all(struct isolate_job *jobs, size_t n, int err, bool budget, const char *detail,
                             isolate_done_fn done, void *arg)
{
    for (size_t i = 0; i < n; i++) {
        memset(&jobs[i].result, 0, sizeof(jobs[i].result));
        jobs[i].result.status = ISOLATE_SPAWN_FAILED;
        jobs[i].result.error = err;
        jobs[i].result.budget_spent = budget;
        jobs[i].result.detail = str_dup(detail);
        if (done)
            done(i, &jobs[i], arg);
    }
}

/* Fork one child per job, each with its own stdout/stderr pipes, giving up on the gate at DEADLINE_MS.
 * Returns how many started. */
static size_t isolate_spawn_all(struct isolate_job *jobs, size_t n, struct isolate_child_state *cs,
                                double deadline_ms)
{
    pid_t parent = getpid();
    size_t started = 0;
    /* Probes run in threads: while one creates its pipes and forks, no other may fork, or that
     * other child would hold this batch's write ends open (delaying the end of file) for its life.
     * The gate comes first: let go of it before taking the lock (no fork happens without the lock,
     * so what this thread allocates meanwhile is safe), and take it back after. */
    int held = isolate_gate_release();
    pthread_mutex_lock(&isolate_spawn_lock);
    for (size_t i = 0; i < n; i++) {
        struct isolate_result *res = &jobs[i].result;
        memset(res, 0, sizeof(*res));
        cs[i].pid = -1;
        cs[i].out_fd = cs[i].err_fd = -1;
        int po[2], pe[2];
        if (pipe2(po, O_CLOEXEC) < 0) {
            res->status = ISOLATE_SPAWN_FAILED;
            res->error = errno;
            res->detail = str_printf("pipe: %s", strerror(errno));
            continue;
        }
        if (pipe2(pe, O_CLOEXEC) < 0) {
            res->status = ISOLATE_SPAWN_FAILED;
            res->error = errno;
            res->detail = str_printf("pipe: %s", strerror(errno));
            close(po[0]);
            close(po[1]);
            continue;
        }
        cs[i].start = jsonnum_now_ms();
        pid_t pid = isolate_fork(deadline_ms);
        if (pid < 0) {
            res->status = ISOLATE_SPAWN_FAILED;
            res->error = errno;
            res->detail = errno == ETIMEDOUT ? str_printf("not started: another thread of gpucheckup did not "
                                                          "let a child be forked before the deadline")
                                             : str_printf("fork: %s", strerror(errno));
            close(po[0]);
            close(po[1]);
            close(pe[0]);
            close(pe[1]);
            continue;
        }
        if (pid == 0) {
            close(po[0]);
            close(pe[0]);
            /* Close the read ends of earlier siblings' pipes: they are not ours. */
            for (size_t j = 0; j < i; j++) {
                if (cs[j].out_fd >= 0)
                    close(cs[j].out_fd);
                if (cs[j].err_fd >= 0)
                    close(cs[j].err_fd);
            }
            isolate_child(jobs[i].fn, jobs[i].arg, po[1], pe[1], parent);
        }
        setpgid(pid, pid); /* also done in the child; whichever runs first wins */
        close(po[1]);
        close(pe[1]);
        fcntl(po[0], F_SETFL, O_NONBLOCK);
        fcntl(pe[0], F_SETFL, O_NONBLOCK);
        cs[i].pid = pid;
        cs[i].out_fd = po[0];
        cs[i].err_fd = pe[0];
        started++;
    }
    pthread_mutex_unlock(&isolate_spawn_lock);
    isolate_gate_restore(held);
    return started;
}

/* Read every child's pipes and reap them until all are done or DEADLINE (jsonnum_now_ms's clock) has
 * passed; each one that ends before that is completed (and reported through DONE) at once. The deadline is
 * the caller's, unchanged: the time spent waiting for the spawn lock and the gate is charged to it. */
static void isolate_wait_all(struct isolate_child_state *cs, struct isolate_job *jobs, size_t n, double deadline,
                             isolate_done_fn done, void *arg)
{
    struct pollfd *pfd = calloc(2 * n, sizeof(*pfd));
    for (;;) {
        size_t np = 0, alive = 0;
        for (size_t i = 0; i < n; i++) {
            if (cs[i].pid < 0 || cs[i].finished)
                continue;
            if (!cs[i].exited) {
                int st;
                pid_t w = waitpid(cs[i].pid, &st, WNOHANG);
                if (w == cs[i].pid) {
                    cs[i].exited = true;
                    cs[i].wstatus = st;
                }
            }
            if (isolate_all_said(&cs[i])) {
                cs[i].exited = cs[i].reap_later = true;
                cs[i].wstatus = 0; /* what its _exit(0) will say */
            }
            if (cs[i].exited && cs[i].out_fd < 0 && cs[i].err_fd < 0) {
                /* Gone and everything read: report it now, not when the slowest sibling ends. */
                isolate_complete(&cs[i], jobs, i, deadline, done, arg);
                continue;
            }
            if (!cs[i].exited)
                alive++;
            if (pfd && cs[i].out_fd >= 0)
                pfd[np++] = (struct pollfd){.fd = cs[i].out_fd, .events = POLLIN};
            if (pfd && cs[i].err_fd >= 0)
                pfd[np++] = (struct pollfd){.fd = cs[i].err_fd, .events = POLLIN};
        }
        double now = jsonnum_now_ms();
        if (alive == 0 && np == 0)
            break;
        if (now >= deadline)
            break;
        if (alive == 0) {
            /* Every child is gone; a pipe still open belongs to a grandchild: read what is there. */
            for (size_t i = 0; i < n; i++) {
                if (cs[i].pid < 0 || cs[i].finished)
                    continue;
                if (cs[i].out_fd >= 0 && !isolate_drain(&cs[i], cs[i].out_fd, true)) {
                    close(cs[i].out_fd);
                    cs[i].out_fd = -1;
                }
                if (cs[i].err_fd >= 0 && !isolate_drain(&cs[i], cs[i].err_fd, false)) {
                    close(cs[i].err_fd);
                    cs[i].err_fd = -1;
                }
            }
            break;
        }
        int wait_ms = (int)(deadline - now);
        /* Re-check exits: a child may die while a grandchild keeps its pipes. Once every pipe has
         * closed, only the reaping is left: check often, so a finished child costs no extra wait. */
        int cap = np == 0 ? 1 : 20;
        if (wait_ms > cap)
            wait_ms = cap;
        int held = isolate_gate_release(); /* a wait: other threads may fork meanwhile */
        if (!pfd) {
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
            isolate_gate_restore(held);
            continue;
        }
        int pr = poll(pfd, np, wait_ms);
        isolate_gate_restore(held);
        if (pr <= 0)
            continue;
        for (size_t k = 0; k < np; k++) {
            if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            for (size_t i = 0; i < n; i++) {
                bool is_out = cs[i].out_fd == pfd[k].fd;
                if (!is_out && cs[i].err_fd != pfd[k].fd)
                    continue;
                if (!isolate_drain(&cs[i], pfd[k].fd, is_out)) {
                    close(pfd[k].fd);
                    if (is_out)
                        cs[i].out_fd = -1;
                    else
                        cs[i].err_fd = -1;
                }
                break;
            }
        }
    }
    free(pfd);
}

int isolate_run_many_until(struct isolate_job *jobs, size_t n, double deadline_ms, isolate_done_fn done, void *arg)
{
    if (n == 0)
        return 0;
    if (!(deadline_ms > jsonnum_now_ms())) {
        /* The run's one deadline has passed: starting a child only to kill it would blame its driver. */
        isolate_fail_all(jobs, n, ETIME, true, "not started: the run's --timeout was already spent", done, arg);
        return -1;
    }
    isolate_reap(); /* earlier children that said all before they were gone */
    struct isolate_child_state *cs = calloc(n, sizeof(*cs));
    if (!cs) {
        isolate_fail_all(jobs, n, ENOMEM, false, "out of memory", done, arg);
        return -1;
    }
    size_t started = isolate_spawn_all(jobs, n, cs, deadline_ms);
    isolate_wait_all(cs, jobs, n, deadline_ms, done, arg);

    /* What still runs is killed all at once, and waited for once: ISOLATE_KILL_WAIT_MS for all of them */
    double kill_until = jsonnum_now_ms() + ISOLATE_KILL_WAIT_MS;
    for (size_t i = 0; i < n; i++)
        if (cs[i].pid > 0 && !cs[i].finished) {
            kill(-cs[i].pid, SIGKILL);
            cs[i].kill_until = kill_until;
        }
    for (size_t i = 0; i < n; i++) {
        if (cs[i].pid < 0) {
            if (done)
                done(i, &jobs[i], arg); /* could not be started: its result says why */
            continue;
        }
        if (!cs[i].finished)
            isolate_complete(&cs[i], jobs, i, deadline_ms, done, arg);
    }
    free(cs);
    return started > 0 ? 0 : -1;
}

int isolate_run_many_cb(struct isolate_job *jobs, size_t n, int timeout_ms, isolate_done_fn done, void *arg)
{
    /* TIMEOUT_MS <= 0: nothing left; isolate_run_many_until fails every job as budget spent */
    double deadline = timeout_ms > 0 ? jsonnum_now_ms() + timeout_ms : 0;
    return isolate_run_many_until(jobs, n, deadline, done, arg);
}

enum isolate_status isolate_run(isolate_fn fn, void *arg, int timeout_ms, struct isolate_result *res)
{
    struct isolate_job job = {.fn = fn, .arg = arg};
    isolate_run_many(&job, 1, timeout_ms);
    *res = job.result;
    return res->status;
}

enum isolate_status isolate_run_until(isolate_fn fn, void *arg, double deadline_ms, struct isolate_result *res)
{
    struct isolate_job job = {.fn = fn, .arg = arg};
    isolate_run_many_until(&job, 1, deadline_ms, NULL, NULL);
    *res = job.result;
    return res->status;
}
