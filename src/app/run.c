/* run.c: one diagnosis: pick the probes for the command, run them as their deps allow, correlate, decide. */
#include "jsonnum.h"
#include "run.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"
#include "host.h"
#include "isolate.h"
#include "probe.h"
#include "runonce.h"
#include "snapshot.h"
#include "strutil.h"

/* host.snapshot: where a replayed snapshot comes from. */
static void run_note_snapshot(const struct snapshot *s, json_object *host)
{
    json_object *o = json_object_new_object();
    static const char *const keys[] = {"created", "gpucheckup_version", "redacted", NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_object *v = json_object_object_get(s->manifest, keys[i]);
        json_object_object_add(o, keys[i], v ? json_object_get(v) : NULL);
    }
    json_object_object_add(o, "path", json_object_new_string(s->path ? s->path : s->dir));
    json_object_object_add(host, "snapshot", o);
    /* what the tree cannot say (uname of the captured machine), the captured report does */
    json_object *cap = json_object_object_get(s->report, "host");
    static const char *const ids[] = {"hostname", "kernel", "architecture", NULL};
    for (size_t i = 0; ids[i]; i++) {
        json_object *v = json_object_object_get(cap, ids[i]);
        if (!json_object_object_get(host, ids[i]) && json_object_is_type(v, json_type_string))
            json_object_object_add(host, ids[i], json_object_get(v));
    }
}

/* How long after the run's deadline the watchdog waits for probes still running before it leaves them
 * behind: children are killed at the deadline, so a probe that is only winding down ends well within it;
 * one that has not is blocked in a read of its own (HACKING.md, "The run's watchdog"). */
#define RUN_WATCHDOG_GRACE_MS 500.0

/* Set once the watchdog has left a thread behind: what it may still touch must outlive the run. */
static atomic_bool run_abandoned_any;

bool run_left_threads(void)
{
    return atomic_load(&run_abandoned_any);
}

/* One selected probe in a run: its section, its own context and findings, where it stands. */
struct run_slot {
    const struct probe *p;
    size_t sec;               /* index into the report's sections (the array moves while it grows) */
    struct report_section own; /* where the probe writes; moved whole into the report's section once it is
                                  done (run_publish), so a probe left behind leaves nothing half-written */
    struct hostfs_track track; /* where its thread is in the host filesystem; what it refused to read */
    bool abandoned;           /* left behind by the watchdog: its thread still owns OWN, VIEW and CTX */
    struct probe_ctx ctx;     /* the probe's own: .error and .budget_spent are per probe */
    struct report view;       /* the shared report as this probe sees it: its dependencies' findings,
                                 then its own (added here, so threads never share a findings array) */
    size_t n_seen;            /* how many of VIEW's findings were inherited */
    int rc;
    enum { RUN_WAITING, RUN_RUNNING, RUN_DONE } state;
    struct isolate_thread thread; /* the worker, when it ran in one, until joined */
    bool threaded;
};

struct run_sched {
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* on CLOCK_MONOTONIC (jsonnum_now_ms's clock) */
    struct run_slot *slots;
    size_t n;
    struct report *r;
    double abandon_ms;        /* the watchdog's time: the run's deadline plus RUN_WATCHDOG_GRACE_MS */
    /* the host section, collected in a thread of its own too (a hung /etc/os-release, say) */
    const struct hostfs *fs;
    enum probe_mode mode;
    json_object *host;        /* the host thread's own object, moved into the report once done */
    struct hostfs_track host_track;
    struct isolate_thread host_thread;
    bool host_threaded, host_done, host_abandoned;
};

struct run_worker {
    struct run_sched *s;
    struct run_slot *slot;
};

/* Run SL's probe on SEC and time it (in a worker thread, or inline when no thread could be had). */
static void run_invoke(struct run_slot *sl, struct report_section *sec)
{
    double t0 = jsonnum_now_ms();
    sl->rc = sl->p->run(&sl->ctx, sec);
    sec->duration_ms = jsonnum_now_ms() - t0;
}

/* SL's probe is done: its section, complete, replaces the report's placeholder (under S->mu). */
static void run_publish(struct run_sched *s, struct run_slot *sl)
{
    report_section_publish(&s->r->sections[sl->sec], &sl->own);
    sl->state = RUN_DONE;
}

/* The probe's work, in its own thread: only its own section, its view and its context are written; the
 * report sees them once done, unless the watchdog has left it behind meanwhile. */
static void *run_worker_main(void *arg)
{
    struct run_worker *w = arg;
    struct run_slot *sl = w->slot;
    struct run_sched *s = w->s;
    free(w);
    hostfs_track_use(&sl->track);
    run_invoke(sl, &sl->own);
    hostfs_track_use(NULL);
    pthread_mutex_lock(&s->mu);
    if (!sl->abandoned)
        run_publish(s, sl);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* The host section, in its own thread. */
static void *run_host_main(void *arg)
{
    struct run_sched *s = arg;
    hostfs_track_use(&s->host_track);
    host_collect(s->fs, s->mode, s->host);
    hostfs_track_use(NULL);
    pthread_mutex_lock(&s->mu);
    s->host_done = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* True when every probe SL depends on (among those selected) is done. */
static bool run_deps_done(const struct run_sched *s, const struct run_slot *sl)
{
    for (size_t i = 0; sl->p->deps && sl->p->deps[i]; i++)
        for (size_t j = 0; j < s->n; j++)
            if (strcmp(s->slots[j].p->name, sl->p->deps[i]) == 0 && s->slots[j].state != RUN_DONE)
                return false;
    return true;
}

/* SL's view: the findings of every finished probe before it in registry order (its dependencies'
 * among them, which is all a probe may read), shared, not copied. Returns -1 when out of memory. */
static int run_view(const struct run_sched *s, struct run_slot *sl)
{
    sl->view = *s->r;
    sl->view.findings = NULL;
    sl->view.n_findings = 0;
    size_t n = 0;
    for (const struct run_slot *o = s->slots; o < sl; o++)
        if (o->state == RUN_DONE)
            n += o->view.n_findings - o->n_seen;
    sl->view.findings = calloc(n ? n : 1, sizeof(*sl->view.findings));
    if (!sl->view.findings)
        return -1;
    for (const struct run_slot *o = s->slots; o < sl; o++)
        if (o->state == RUN_DONE)
            for (size_t k = o->n_seen; k < o->view.n_findings; k++)
                sl->view.findings[sl->view.n_findings++] = o->view.findings[k];
    sl->n_seen = sl->view.n_findings;
    sl->ctx.report = &sl->view;
    return 0;
}

/* Start SL now: in a thread, or here when no thread can be had. Called with S->mu held. */
static void run_start(struct run_sched *s, struct run_slot *sl)
{
    struct report_section *sec = &s->r->sections[sl->sec];
    sl->state = RUN_RUNNING;
    if (run_view(s, sl) < 0) {
        sl->rc = PROBE_INTERNAL_ERROR;
        sl->state = RUN_DONE;
        return;
    }
    /* a snapshot_rerun probe checks the snapshot's tree again and replays the live parts itself (icd) */
    bool replay = sl->ctx.mode == PROBE_MODE_SNAPSHOT;
    if (sl->p->needs_live && !probe_live(&sl->ctx) && !(replay && sl->p->snapshot_rerun)) {
        /* a snapshot's captured section and findings stand in for it (into this probe's view) */
        if (replay && snapshot_replay_section(sl->ctx.snapshot, &sl->view, sec)) {
            if (sl->p->result) /* the typed result again, from its captured JSON */
                report_section_adopt(sec, sl->p->result);
            sl->state = RUN_DONE;
            return;
        }
        report_section_set_status(sec, REPORT_STATUS_SKIPPED,
                                  "needs the live machine, and --root points at another tree "
                                  "(add --live to run it against this machine)");
        sl->state = RUN_DONE;
        return;
    }
    if (sl->p->needs_live && probe_budget_ms(&sl->ctx) <= 0) {
        /* A driver hung earlier and took the whole budget: this probe's children have no time. */
        report_section_set_status(sec, REPORT_STATUS_SKIPPED,
                                  "not started: the run's --timeout of %.1f s was already spent",
                                  sl->ctx.timeout_ms / 1000.0);
        sl->state = RUN_DONE;
        return;
    }
    if (report_section_init(&sl->own, sl->p->name) < 0) {
        sl->rc = PROBE_INTERNAL_ERROR;
        sl->state = RUN_DONE;
        return;
    }
    struct run_worker *w = malloc(sizeof(*w));
    if (w) {
        *w = (struct run_worker){.s = s, .slot = sl};
        if (isolate_thread_start(&sl->thread, run_worker_main, w) == 0) {
            sl->threaded = true;
            return;
        }
    }
    /* No thread: run it here, unlocked (only this probe's state is written). */
    free(w);
    pthread_mutex_unlock(&s->mu);
    struct hostfs_track *prev = hostfs_track_use(&sl->track);
    run_invoke(sl, &sl->own);
    hostfs_track_use(prev);
    pthread_mutex_lock(&s->mu);
    run_publish(s, sl);
}

/* Join a worker whose probe is done: its thread ends while no child is forked (isolate_thread_join), which
 * can wait for other threads' forks (3 to 15 ms each under load); one per call, so that run_schedule starts
 * what became ready meanwhile before the next. Called with S->mu held; lets go of it meanwhile. Returns true
 * when it joined one. */
static bool run_join_done(struct run_sched *s)
{
    bool any = false;
    for (size_t i = 0; i < s->n; i++) {
        struct run_slot *sl = &s->slots[i];
        if (sl->threaded && sl->state == RUN_DONE) {
            sl->threaded = false;
            pthread_mutex_unlock(&s->mu);
            /* a thread stuck holding the gate (in libpci's read, say) delays a join until the watchdog's
             * time at most */
            double until = jsonnum_now_ms() + 2000.0;
            isolate_thread_join_by(&sl->thread, until < s->abandon_ms ? until : s->abandon_ms);
            pthread_mutex_lock(&s->mu);
            any = true;
            break; /* one at a time: a probe that became ready meanwhile starts before the next join */
        }
    }
    return any;
}

/* The watchdog's time has come (S->mu held): every probe still running is left behind, its thread still
 * blocked where its tracker says; its report section stays the placeholder, marked here. Probes not yet
 * started never will be. */
static void run_abandon(struct run_sched *s)
{
    for (size_t i = 0; i < s->n; i++) {
        struct run_slot *sl = &s->slots[i];
        struct report_section *sec = &s->r->sections[sl->sec];
        if (sl->state == RUN_WAITING) {
            report_section_set_status(sec, REPORT_STATUS_SKIPPED, "not started: the run's --timeout of %.1f s "
                                      "was spent", sl->ctx.timeout_ms / 1000.0);
            sl->state = RUN_DONE;
        } else if (sl->state == RUN_RUNNING && sl->threaded) {
            sl->abandoned = true;
            sl->threaded = false; /* never joined: the process ends with it */
            sl->state = RUN_DONE;
            atomic_store(&run_abandoned_any, true);
            report_section_set_status(sec, REPORT_STATUS_FAILED, "timed out: still running at the run's "
                                      "--timeout of %.1f s (core.probe-timed-out says where)",
                                      sl->ctx.timeout_ms / 1000.0);
        }
    }
    if (s->host_threaded && !s->host_done) {
        s->host_abandoned = true;
        atomic_store(&run_abandoned_any, true);
    }
}

/* Wait for S->cv until the watchdog's time at most; the gate is let go meanwhile and taken back only once
 * S->mu is (the gate comes first). */
static void run_wait(struct run_sched *s)
{
    struct timespec until;
    until.tv_sec = (time_t)(s->abandon_ms / 1000.0);
    until.tv_nsec = (long)((s->abandon_ms - (double)until.tv_sec * 1000.0) * 1e6);
    if (until.tv_nsec < 0 || until.tv_nsec >= 1000000000L)
        until.tv_nsec = 0;
    int held = isolate_gate_release();
    pthread_cond_timedwait(&s->cv, &s->mu, &until);
    pthread_mutex_unlock(&s->mu);
    isolate_gate_restore(held);
    pthread_mutex_lock(&s->mu);
}

/* Run every slot, each as soon as the probes it depends on are done: independent probes run at the
 * same time (cpu and pci; then cuda, icd and opencl, which read only pci; smoke once opencl is done).
 * At the watchdog's time, what still runs is left behind (run_abandon). */
static void run_schedule(struct run_sched *s)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        bool all_done = !s->host_threaded || s->host_done || s->host_abandoned, started = false, failed = false;
        for (size_t i = 0; i < s->n; i++)
            failed = failed || (s->slots[i].state == RUN_DONE && !s->slots[i].abandoned &&
                                s->slots[i].rc != PROBE_DONE); /* an abandoned thread may still write rc */
        for (size_t i = 0; i < s->n; i++) {
            struct run_slot *sl = &s->slots[i];
            if (failed && sl->state == RUN_WAITING)
                sl->state = RUN_DONE; /* the run ends with that probe's error: start nothing more */
            all_done = all_done && sl->state == RUN_DONE;
            if (sl->state == RUN_WAITING && run_deps_done(s, sl)) {
                run_start(s, sl);
                started = true;
            }
        }
        if (run_join_done(s) || started)
            continue;
        if (all_done)
            break;
        if (jsonnum_now_ms() >= s->abandon_ms) {
            run_abandon(s);
            continue;
        }
        run_wait(s);
    }
    pthread_mutex_unlock(&s->mu);
}

/* True when R already names PATH with core.not-a-regular-file (several probes may refuse one file). */
static bool run_refusal_named(const struct report *r, const char *path)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (strcmp(r->findings[i]->id, "core.not-a-regular-file") == 0 && r->findings[i]->subject &&
            strcmp(r->findings[i]->subject, path) == 0)
            return true;
    return false;
}

/* core.not-a-regular-file for each path T's thread refused to read (once per path in the report). */
static void run_note_refused(struct report *r, struct hostfs_track *t, const char *who)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->n_refused && i < HOSTFS_TRACK_REFUSED; i++)
        if (!run_refusal_named(r, t->refused[i].path))
            report_add_finding(r, "core.not-a-regular-file", t->refused[i].path,
                               "%s is %s, not a regular file: the %s %s did not read it (reading it could "
                               "block the run for good)", t->refused[i].path, t->refused[i].kind, who,
                               strcmp(who, "host") == 0 ? "section" : "probe");
    if (t->n_refused > HOSTFS_TRACK_REFUSED)
        report_add_finding(r, "core.not-a-regular-file", who, "%zu more files the %s probe reads are not regular "
                           "files either; not read", t->n_refused - HOSTFS_TRACK_REFUSED, who);
    pthread_mutex_unlock(&t->mu);
}

/* core.probe-timed-out for WHO, left behind at the watchdog's time where T says. */
static void run_note_timed_out(struct report *r, struct hostfs_track *t, const char *who, int timeout_ms)
{
    char where[HOSTFS_TRACK_PATH];
    bool in_call = hostfs_track_where(t, where, sizeof(where));
    const char *kind = strcmp(who, "host") == 0 ? "section" : "probe";
    if (!*where)
        report_add_finding(r, "core.probe-timed-out", who, "The %s %s was still running when the run's --timeout "
                           "of %.1f s passed: its results are left out", who, kind, timeout_ms / 1000.0);
    else
        report_add_finding(r, "core.probe-timed-out", who, "The %s %s was still %s %s when the run's --timeout "
                           "of %.1f s passed (a read that never returns: a hung NFS or FUSE mount, a device gone "
                           "from the bus): its results are left out", who, kind,
                           in_call ? "blocked reading" : "running, last reading", where, timeout_ms / 1000.0);
}

/* Move SL's own findings into R, in the order the probe added them, then the run's own about it. */
static int run_merge(struct report *r, struct run_slot *sl)
{
    if (sl->abandoned) { /* its thread still owns its findings: only the run's own about it */
        run_note_timed_out(r, &sl->track, sl->p->name, sl->ctx.timeout_ms);
        run_note_refused(r, &sl->track, sl->p->name);
        return 0;
    }
    size_t own = sl->view.n_findings - sl->n_seen;
    struct report_finding **f = realloc(r->findings, (r->n_findings + own + 1) * sizeof(*f));
    if (!f)
        return -1;
    r->findings = f;
    if (own > 0) /* the pointers move to R; the findings themselves stay where they are */
        memcpy(r->findings + r->n_findings, sl->view.findings + sl->n_seen, own * sizeof(*f));
    r->n_findings += own;
    free(sl->view.findings);
    sl->view.findings = NULL;
    sl->view.n_findings = sl->n_seen = 0;
    run_note_refused(r, &sl->track, sl->p->name);
    const struct report_section *sec = &r->sections[sl->sec];
    if (sec->status == REPORT_STATUS_FAILED)
        report_add_finding(r, "core.probe-failed", sl->p->name, "The %s probe failed: %s", sl->p->name,
                           sec->reason ? sec->reason : "no reason given");
    if (sl->ctx.budget_spent)
        report_add_finding(r, "core.timeout-spent", sl->p->name,
                           "The run's --timeout of %.1f s was spent before the %s probe could start all "
                           "of its isolated children: what they check is unknown",
                           sl->ctx.timeout_ms / 1000.0, sl->p->name);
    return 0;
}

static void run_sched_free(struct run_sched *s);

/* Findings in registry order, as if the probes had run one after another; the first probe (in that order)
 * that failed outright decides the exit; then the doctor. Frees S. */
static int run_finish(const struct cli_options *o, struct report *r, struct run_sched *s, struct report **out,
                      char **error)
{
    int rc = 0;
    for (size_t i = 0; i < s->n; i++) {
        struct run_slot *sl = &s->slots[i];
        if (!sl->abandoned && rc == 0 && (sl->rc == PROBE_INPUT_ERROR || sl->rc == PROBE_INTERNAL_ERROR)) {
            *error = sl->ctx.error ? sl->ctx.error : str_printf("%s: probe failed", sl->p->name);
            sl->ctx.error = NULL;
            rc = sl->rc == PROBE_INPUT_ERROR ? GC_EXIT_USAGE : GC_EXIT_INTERNAL;
        }
        if (!sl->abandoned)
            free(sl->ctx.error);
        if (run_merge(r, sl) < 0 && rc == 0) {
            *error = str_dup("out of memory");
            rc = GC_EXIT_INTERNAL;
        }
    }
    for (size_t i = 0; i < s->n; i++)
        if (!s->slots[i].abandoned)
            free(s->slots[i].view.findings); /* only after a failed merge: the findings stay with R */
    run_sched_free(s);
    if (rc == 0)
        rc = doctor_run(o, r, error);
    if (rc == 0)
        report_marks_agree(r);
    if (rc != 0) {
        if (!run_left_threads())
            report_free(r);
        return rc;
    }
    *out = r;
    return report_is_ready(r) ? GC_EXIT_READY : GC_EXIT_NOT_READY;
}

/* The run's scheduler, its slots and the host section's thread; on the heap, since a thread the watchdog
 * leaves behind may still touch them: then they are never freed (the process ends soon after). */
static struct run_sched *run_sched_new(struct report *r, size_t n, const struct hostfs *fs, enum probe_mode mode)
{
    struct run_sched *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->slots = calloc(n ? n : 1, sizeof(*s->slots));
    s->host = json_object_new_object();
    if (!s->slots || !s->host) {
        free(s->slots);
        json_object_put(s->host);
        free(s);
        return NULL;
    }
    s->r = r;
    s->fs = fs;
    s->mode = mode;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    hostfs_track_init(&s->host_track);
    return s;
}

/* Free S, unless a thread left behind may still use it. */
static void run_sched_free(struct run_sched *s)
{
    if (!s || run_left_threads())
        return;
    for (size_t i = 0; i < s->n; i++) {
        report_section_clear(&s->slots[i].own);
        hostfs_track_destroy(&s->slots[i].track);
    }
    hostfs_track_destroy(&s->host_track);
    json_object_put(s->host);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->slots);
    free(s);
}

/* The host section: collected in its own thread while the probes run (or here when no thread can be had),
 * moved into R once done; left out, with core.probe-timed-out, when the watchdog left it behind. */
static void run_host_start(struct run_sched *s)
{
    if (isolate_thread_start(&s->host_thread, run_host_main, s) == 0) {
        s->host_threaded = true;
        return;
    }
    struct hostfs_track *prev = hostfs_track_use(&s->host_track);
    host_collect(s->fs, s->mode, s->host);
    hostfs_track_use(prev);
    s->host_done = true;
}

static void run_host_finish(struct run_sched *s, int timeout_ms)
{
    if (s->host_abandoned) {
        /* what needs no read of the host (its thread may still write S->host: a fresh object here) */
        json_object *h = s->r->host, *user = json_object_new_object();
        static const char *const unknown[] = {"hostname", "kernel", "architecture", "os", NULL};
        for (size_t i = 0; unknown[i]; i++)
            json_object_object_add(h, unknown[i], NULL);
        json_object_object_add(user, "name", NULL);
        json_object_object_add(user, "uid", json_object_new_int64((int64_t)geteuid()));
        json_object_object_add(user, "root", json_object_new_boolean(geteuid() == 0));
        json_object_object_add(user, "groups", json_object_new_array());
        json_object_object_add(h, "user", user);
        json_object_object_add(h, "root", json_object_new_string(s->fs->root ? s->fs->root : "/"));
        json_object_object_add(h, "live", json_object_new_boolean(s->fs->live));
        run_note_timed_out(s->r, &s->host_track, "host", timeout_ms);
        run_note_refused(s->r, &s->host_track, "host");
        return;
    }
    if (s->host_threaded) {
        double until = jsonnum_now_ms() + 2000.0;
        isolate_thread_join_by(&s->host_thread, until < s->abandon_ms ? until : s->abandon_ms);
        s->host_threaded = false;
    }
    json_object_object_foreach(s->host, key, val) json_object_object_add(s->r->host, key, json_object_get(val));
    run_note_refused(s->r, &s->host_track, "host");
}

int run_diagnosis(const struct cli_options *o, const struct hostfs *fs, enum probe_mode mode, struct report **out,
                  char **error)
{
    *out = NULL;
    *error = NULL;
    /* Unknown --require names fail before any probe runs. */
    if (doctor_validate_requires(o->requires, o->n_requires, error) < 0)
        return GC_EXIT_USAGE;
    struct report *r = report_new();
    size_t n = 0;
    for (size_t i = 0; probe_registry[i]; i++)
        n++;
    struct run_sched *s = r ? run_sched_new(r, n, fs, mode) : NULL;
    if (!s) {
        report_free(r);
        *error = str_dup("out of memory");
        return GC_EXIT_INTERNAL;
    }
    /* What the icd and opencl probes' children learn through libOpenCL is learnt once (issue 17). */
    struct run_once *once = run_once_new();

    int timeout_ms = (int)(o->timeout_s * 1000.0 + 0.5);
    if (timeout_ms < 1)
        timeout_ms = 1;
    /* One deadline for the whole run (issue 17): --timeout bounds it end to end, whatever hangs; it is
     * passed as it is to every child (probe_isolate_*), and the watchdog ends the run soon after it. */
    double deadline_ms = jsonnum_now_ms() + timeout_ms;
    s->abandon_ms = deadline_ms + RUN_WATCHDOG_GRACE_MS;
    /* Every section first, in registry order (the report's order), before any probe runs. */
    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        if (!probe_selects(o->command, p->name))
            continue;
        if (!report_add_section(r, p->name)) {
            run_sched_free(s);
            run_once_free(once);
            report_free(r);
            *error = str_dup("out of memory");
            return GC_EXIT_INTERNAL;
        }
        struct run_slot *sl = &s->slots[s->n++];
        *sl = (struct run_slot){
            .p = p,
            .sec = r->n_sections - 1,
            .ctx = {.opts = o, .fs = fs, .mode = mode, .report = r, .snapshot = o->snapshot,
                    .timeout_ms = timeout_ms, .deadline_ms = deadline_ms, .once = once},
        };
        hostfs_track_init(&sl->track);
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->slots[i].p->prepare)
            s->slots[i].p->prepare(&s->slots[i].ctx);
    for (size_t i = 0; i < s->n; i++)
        if (s->slots[i].p->prestart)
            s->slots[i].p->prestart(&s->slots[i].ctx);
    /* The host section while the probes run (no probe reads it). */
    run_host_start(s);
    run_schedule(s);
    run_host_finish(s, timeout_ms);
    if (mode == PROBE_MODE_SNAPSHOT || mode == PROBE_MODE_SNAPSHOT_LIVE)
        run_note_snapshot(o->snapshot, r->host);
    if (!run_left_threads()) {
        run_once_free(once); /* else a thread left behind may still use it */
        isolate_target_restore_env(); /* --pid's environment was the run's, not the output's */
    }
    return run_finish(o, r, s, out, error);
}
