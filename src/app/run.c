/* run.c: one diagnosis: pick the probes for the command, run them as their deps allow, correlate, decide. */
#include "jsonnum.h"
#include "run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doctor.h"
#include "isolate.h"
#include "probe.h"
#include "runonce.h"
#include "snapshot.h"
#include "strutil.h"

static bool run_needs(const struct probe *p, const char *name, int depth)
{
    if (strcmp(p->name, name) == 0)
        return true;
    if (depth > 8 || !p->deps)
        return false;
    for (size_t i = 0; p->deps[i]; i++) {
        const struct probe *d = probe_find(p->deps[i]);
        if (d && run_needs(d, name, depth + 1))
            return true;
    }
    return false;
}

bool run_selects(const char *command, const char *name)
{
    const struct probe *self = probe_find(name);
    if (self && self->explicit_only && strcmp(command, name) != 0)
        return false;
    if (strcmp(command, "check") == 0)
        return !self || !self->in_check || self->in_check();
    const struct probe *p = probe_of_command(command);
    return p && run_needs(p, name, 0);
}

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

/* One selected probe in a run: its section, its own context and findings, where it stands. */
struct run_slot {
    const struct probe *p;
    size_t sec;               /* index into the report's sections (the array moves while it grows) */
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
    pthread_cond_t cv;
    struct run_slot *slots;
    size_t n;
    struct report *r;
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

/* The probe's work, in its own thread: only its section, its view and its context are written. */
static void *run_worker_main(void *arg)
{
    struct run_worker *w = arg;
    struct run_slot *sl = w->slot;
    struct report_section *sec = &w->s->r->sections[sl->sec];
    run_invoke(sl, sec);
    pthread_mutex_lock(&w->s->mu);
    sl->state = RUN_DONE;
    pthread_cond_broadcast(&w->s->cv);
    pthread_mutex_unlock(&w->s->mu);
    free(w);
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
    struct run_worker *w = malloc(sizeof(*w));
    if (w) {
        *w = (struct run_worker){.s = s, .slot = sl};
        if (isolate_thread_start(&sl->thread, run_worker_main, w) == 0) {
            sl->threaded = true;
            return;
        }
    }
    /* No thread: run it here, unlocked (only this probe's state is written). */
    pthread_mutex_unlock(&s->mu);
    run_invoke(sl, sec);
    free(w);
    pthread_mutex_lock(&s->mu);
    sl->state = RUN_DONE;
}

/* Join every worker whose probe is done: its thread ends while no child is forked (isolate_thread_join).
 * Called with S->mu held; lets go of it meanwhile. Returns true when it joined one. */
static bool run_join_done(struct run_sched *s)
{
    bool any = false;
    for (size_t i = 0; i < s->n; i++) {
        struct run_slot *sl = &s->slots[i];
        if (sl->threaded && sl->state == RUN_DONE) {
            sl->threaded = false;
            pthread_mutex_unlock(&s->mu);
            isolate_thread_join(&sl->thread);
            pthread_mutex_lock(&s->mu);
            any = true;
        }
    }
    return any;
}

/* Run every slot, each as soon as the probes it depends on are done: independent probes run at the
 * same time (cpu and pci; then cuda, icd and opencl, which read only pci; smoke once opencl is done). */
static void run_schedule(struct run_sched *s)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        bool all_done = true, started = false, failed = false;
        for (size_t i = 0; i < s->n; i++)
            failed = failed || (s->slots[i].state == RUN_DONE && s->slots[i].rc != PROBE_DONE);
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
        /* The gate is let go for the wait and taken back only once S->mu is (the gate comes first). */
        int held = isolate_gate_release();
        pthread_cond_wait(&s->cv, &s->mu);
        pthread_mutex_unlock(&s->mu);
        isolate_gate_restore(held);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Move SL's own findings into R, in the order the probe added them, then the run's own about it. */
static int run_merge(struct report *r, struct run_slot *sl)
{
    size_t own = sl->view.n_findings - sl->n_seen;
    struct report_finding *f = realloc(r->findings, (r->n_findings + own + 1) * sizeof(*f));
    if (!f)
        return -1;
    r->findings = f;
    if (own > 0)
        memcpy(r->findings + r->n_findings, sl->view.findings + sl->n_seen, own * sizeof(*f));
    r->n_findings += own;
    free(sl->view.findings);
    sl->view.findings = NULL;
    sl->view.n_findings = sl->n_seen = 0;
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
    struct run_sched s = {.slots = calloc(n ? n : 1, sizeof(*s.slots)), .r = r};
    if (!r || !s.slots) {
        free(s.slots);
        report_free(r);
        *error = str_dup("out of memory");
        return GC_EXIT_INTERNAL;
    }
    /* What the icd and opencl probes' children learn through libOpenCL is learnt once (issue 17). */
    struct run_once *once = run_once_new();

    int timeout_ms = (int)(o->timeout_s * 1000.0 + 0.5);
    if (timeout_ms < 1)
        timeout_ms = 1;
    /* One deadline for the whole run (issue 17): --timeout bounds it end to end, whatever hangs. */
    double deadline_ms = jsonnum_now_ms() + timeout_ms;
    /* Every section first, in registry order (the report's order), before any probe runs. */
    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        if (!run_selects(o->command, p->name))
            continue;
        if (!report_add_section(r, p->name)) {
            free(s.slots);
            run_once_free(once);
            report_free(r);
            *error = str_dup("out of memory");
            return GC_EXIT_INTERNAL;
        }
        s.slots[s.n++] = (struct run_slot){
            .p = p,
            .sec = r->n_sections - 1,
            .ctx = {.opts = o, .fs = fs, .mode = mode, .report = r, .snapshot = o->snapshot,
                    .timeout_ms = timeout_ms, .deadline_ms = deadline_ms, .once = once},
        };
    }
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    for (size_t i = 0; i < s.n; i++)
        if (s.slots[i].p->prestart)
            s.slots[i].p->prestart(&s.slots[i].ctx);
    /* The host section while what was started ahead runs (no probe reads it). */
    host_collect(fs, mode, r->host);
    if (mode == PROBE_MODE_SNAPSHOT || mode == PROBE_MODE_SNAPSHOT_LIVE)
        run_note_snapshot(o->snapshot, r->host);
    run_schedule(&s);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    run_once_free(once);

    /* Findings in registry order, as if the probes had run one after another; the first probe (in
     * that order) that failed outright decides the exit. */
    int rc = 0;
    for (size_t i = 0; i < s.n; i++) {
        struct run_slot *sl = &s.slots[i];
        if (rc == 0 && (sl->rc == PROBE_INPUT_ERROR || sl->rc == PROBE_INTERNAL_ERROR)) {
            *error = sl->ctx.error ? sl->ctx.error : str_printf("%s: probe failed", sl->p->name);
            sl->ctx.error = NULL;
            rc = sl->rc == PROBE_INPUT_ERROR ? GC_EXIT_USAGE : GC_EXIT_INTERNAL;
        }
        free(sl->ctx.error);
        if (run_merge(r, sl) < 0 && rc == 0) {
            *error = str_dup("out of memory");
            rc = GC_EXIT_INTERNAL;
        }
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.slots[i].view.findings); /* only after a failed merge: the findings stay with R */
    free(s.slots);
    if (rc == 0)
        rc = doctor_run(o, r, error);
    if (rc == 0)
        report_marks_agree(r);
    if (rc != 0) {
        report_free(r);
        return rc;
    }
    *out = r;
    return report_is_ready(r) ? GC_EXIT_READY : GC_EXIT_NOT_READY;
}
