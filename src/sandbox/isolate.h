/* isolate.h: run untrusted work (vendor drivers) in forked children with a timeout; JSON comes back. */
#ifndef GPUCHECKUP_ISOLATE_H
#define GPUCHECKUP_ISOLATE_H

#include <pthread.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

enum isolate_status {
    ISOLATE_OK = 0,     /* the child returned a JSON value and exited 0 */
    ISOLATE_SIGNAL,     /* killed by a signal (crash): see .signal */
    ISOLATE_EXIT,       /* exited with a non-zero status, or exited 0 without returning a value */
    ISOLATE_TIMEOUT,    /* still running at the deadline: killed with SIGKILL */
    ISOLATE_BAD_OUTPUT, /* exited 0 but wrote something that is not JSON */
    ISOLATE_SPAWN_FAILED, /* fork or pipe failed: see .error */
};

/* Work to run in the child. It returns a new JSON value (ownership passes to the helper), or NULL
 * when it has nothing to say (the job then ends ISOLATE_EXIT). It may call _exit, crash or hang:
 * that is what the helper is for. */
typedef json_object *(*isolate_fn)(void *arg);

struct isolate_result {
    enum isolate_status status;
    json_object *value;  /* the child's JSON (ISOLATE_OK only); owned by the result */
    int signal;          /* ISOLATE_SIGNAL: the signal number */
    int exit_code;       /* ISOLATE_EXIT: the exit status */
    int error;           /* ISOLATE_SPAWN_FAILED: errno */
    double elapsed_ms;
    char *stderr_tail;   /* the last few KiB the child wrote to stdout/stderr (sanitised), or NULL */
    char *detail;        /* one human line: "killed by SIGSEGV", "timed out after 5.0 s"... */
    bool budget_spent;   /* ISOLATE_SPAWN_FAILED because no time was left (timeout_ms <= 0): the job was
                            never started, through no fault of its own */
};

struct isolate_job {
    isolate_fn fn;
    void *arg;
    struct isolate_result result; /* filled by isolate_run_many */
};

/* Run every job in its own child process, all at once, each with TIMEOUT_MS. TIMEOUT_MS <= 0 (the
 * run's time budget is spent) starts nothing: every job ends ISOLATE_SPAWN_FAILED with .budget_spent
 * set and .error ETIME. Children get
 * their own process group (killed whole on timeout), stdin from /dev/null, and stdout+stderr
 * captured into stderr_tail. Returns 0 when every job ran (whatever its outcome), or -1 when none
 * could be started. Always fills every job's result; free each with isolate_result_clear(). */
int isolate_run_many(struct isolate_job *jobs, size_t n, int timeout_ms);

/* Called in the parent as soon as job INDEX (of JOBS) has finished, its result filled; jobs finish in
 * any order, each is reported exactly once. ARG is the caller's. */
typedef void (*isolate_done_fn)(size_t index, const struct isolate_job *job, void *arg);

/* isolate_run_many, calling DONE (may be NULL) for each job as it finishes: for progress displays. */
int isolate_run_many_cb(struct isolate_job *jobs, size_t n, int timeout_ms, isolate_done_fn done, void *arg);

/* One job. Returns its status. */
enum isolate_status isolate_run(isolate_fn fn, void *arg, int timeout_ms, struct isolate_result *res);

/* The same, up to an absolute DEADLINE_MS (jsonnum_now_ms's clock), kept as it is from the spawn to the
 * last wait: waiting for the spawn lock or the fork gate is charged to it. A deadline already passed
 * starts nothing (.budget_spent, as TIMEOUT_MS <= 0 above). The run's probes use these. */
int isolate_run_many_until(struct isolate_job *jobs, size_t n, double deadline_ms, isolate_done_fn done, void *arg);
enum isolate_status isolate_run_until(isolate_fn fn, void *arg, double deadline_ms, struct isolate_result *res);

void isolate_result_clear(struct isolate_result *res);

/* The fork gate. Every thread of gpucheckup's own process (main, the probes' workers, the shared OpenCL
 * child's runner) holds it while it runs and lets go of it only while it waits; fork() takes it alone.
 * So no child is forked while another thread is inside malloc, a glibc lock (the locale lock json-c's
 * parser takes for writing, say) or a sanitizer's allocator: the child would inherit that lock held and
 * hang on its first allocation, strerror or gettext call (in a vendor driver, say) until the deadline.
 * GCC 12's libasan, for one, has no fork handlers at all. Two rules keep it free of deadlocks: the gate
 * comes before every other lock (never take it back while holding a mutex), and nothing between a
 * release and its restore allocates or takes a lock a child could need.
 * Enter and leave nest (per thread); a thread that never entered is not held back by the gate. */
void isolate_gate_enter(void);
void isolate_gate_leave(void);
/* Before a wait: let go of the gate entirely; returns what isolate_gate_restore takes back after it. */
int isolate_gate_release(void);
void isolate_gate_restore(int held);
/* A point in long work where a fork waiting for the gate may go first (cheap when none waits). Not
 * while holding a lock another thread may wait for with the gate held. */
void isolate_gate_yield(void);

/* A thread of ours: it runs FN(ARG) holding the gate. Its start (glibc and a sanitizer allocate for a new
 * thread before FN runs) happens while its creator holds the gate and waits; its end (they free then)
 * waits for isolate_thread_join, which holds the gate alone meanwhile. */
struct isolate_thread {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    void *(*fn)(void *);
    void *arg;
    bool alive;    /* set up (what the sanitizers and glibc allocate for a new thread is done) */
    bool finished; /* FN returned */
    bool go;       /* the joiner holds the gate alone: the thread may end */
};

/* Start T running FN(ARG). Returns 0, or -1 (no thread; nothing to join). */
int isolate_thread_start(struct isolate_thread *t, void *(*fn)(void *), void *arg);
/* True once T's FN has returned (T may still be waiting to end). */
bool isolate_thread_finished(struct isolate_thread *t);
/* Wait for T's FN to return, then let T end and join it, no child being forked meanwhile. */
void isolate_thread_join(struct isolate_thread *t);
/* The same, waiting for the gate alone only until GATE_UNTIL_MS (jsonnum_now_ms's clock; isolate_thread_join
 * waits 2 s): a thread stuck holding the gate then costs the join no more than the run has left. */
void isolate_thread_join_by(struct isolate_thread *t, double gate_until_ms);

/* LEN bytes of JSON at BUF (not trusted), nested at most DEPTH deep, parsed inside the gate above: the
 * value, or NULL with the reason in *ERR (may be NULL). WHOLE: bytes after the value are an error too. */
json_object *isolate_json_parse(const char *buf, size_t len, int depth, bool whole, enum json_tokener_error *err);

/* "ok", "signal", "exit", "timeout", "bad-output", "spawn-failed". */
const char *isolate_status_name(enum isolate_status s);
/* "SIGSEGV" for SIGSEGV, "signal 42" style fallback (a buffer of the calling thread's). */
const char *isolate_signal_name(int sig);

/* In a child that is about to run vendor code (every isolate child calls it before the job's function):
 * give up CAP_MKNOD and CAP_SYS_MODULE, from the bounding set and from the effective, permitted and
 * inheritable sets, and set no_new_privs, so that neither the vendor code nor a setuid helper it runs
 * (nvidia-modprobe) can create a device node or load a module: gpucheckup changes nothing on the host.
 * Returns 0, or the first -errno (-EPERM without CAP_SETPCAP, as for every user but root: such a user
 * has none of these capabilities to give up); whatever it returns, everything that could be done is done. */
int isolate_drop_host_privileges(void);

/* ---- isolate_target.c: the run's target (--pid): the GPU as that process sees it -------------------- */
/* Replace this process's environment with ENV (NUL-separated "KEY=value" items, as /proc/PID/environ), keeping
 * gpucheckup's own GPUCHECKUP_* knobs, so the whole run (the probes' own getenv and every child, which inherit
 * it) sees the target's variables. Only before the run's threads start. The dynamic linker read
 * LD_LIBRARY_PATH and LD_PRELOAD at gpucheckup's start: they take effect in programs children exec only.
 * 0, -EALREADY, -ENOMEM (nothing changed). */
int isolate_target_set_env(const char *env, size_t len);
/* Put gpucheckup's own environment back (after the run: its output reads NO_COLOR, COLUMNS...); the
 * children's credentials stay. Only when none of the run's threads is left. */
void isolate_target_restore_env(void);
/* gpucheckup's own value of NAME as it was before isolate_target_set_env (getenv's when it was not called). */
const char *isolate_target_own_getenv(const char *name);
/* gpucheckup's own environment as it was (NULL-terminated; environ when not replaced). */
char *const *isolate_target_own_environ(void);
bool isolate_target_env_active(void);
/* Where gpucheckup runs as root and the target does not: every child started from now on takes UID and
 * GIDS (primary first, N of them, at most 64) before its job runs, never more privilege than either side
 * has (isolate_drop_host_privileges' no_new_privs stays). -EPERM when not root or UID is root (nothing set). */
int isolate_target_set_creds(long uid, const gid_t *gids, size_t n);
bool isolate_target_creds_active(void);
/* In the child (isolate.c calls it before the job's function): take the target's credentials, if set.
 * 0, or -errno: the child must then not run the job. */
int isolate_target_apply(void);

/* Maximum bytes of JSON a child may return (larger output is cut and reported as bad output). */
#define ISOLATE_MAX_OUTPUT (64u * 1024u * 1024u)

#endif
