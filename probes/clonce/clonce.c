/* clonce.c: the cl-once child the icd, opencl and smoke probes share in a run: the probes' side (issue 17). */
#include "clonce_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "isolate.h"
#include "jsonnum.h"
#include "probe.h"
#include "strutil.h"

bool clonce_wanted(const struct probe_ctx *ctx)
{
    const char *cmd = ctx->opts ? ctx->opts->command : NULL;
    return ctx->once && ctx->mode == PROBE_MODE_LIVE && cmd && probe_selects(cmd, "opencl");
}

enum run_once_role clonce_claim(struct probe_ctx *ctx)
{
    if (!clonce_wanted(ctx))
        return RUN_ONCE_ALONE;
    return run_once_claim(ctx->once, CLONCE_KEY);
}


/* A child's output tail as isolate.c makes it (the last bytes, sanitised), or NULL when empty. */
static char *clonce_tail(const char *buf, size_t len)
{
    if (len == 0)
        return NULL;
    char *t = str_copy_n(buf, len); /* BUF may fill its whole page without a NUL */
    return t ? str_sanitize(t) : NULL;
}

/* In the parent, once the child is gone: what is left in J's output file (the icd part's output,
 * when the child died before copying it on), as a tail; NULL when empty. */
static char *clonce_file_tail(const struct clonce_job *j)
{
    struct stat sb;
    if (j->out_fd < 0 || fstat(j->out_fd, &sb) != 0 || sb.st_size <= 0)
        return NULL;
    char *buf = malloc(CLONCE_TAIL);
    if (!buf)
        return NULL;
    size_t got = clonce_read_tail(j->out_fd, sb.st_size, buf);
    char *t = clonce_tail(buf, got);
    free(buf);
    return t;
}

/* LEN bytes of JSON at BUF (a page the child wrote: not trusted) as a value of type T, or NULL. */
static json_object *clonce_parse(const char *buf, size_t len, json_type t)
{
    json_object *v = isolate_json_parse(buf, len, JSON_TOKENER_DEFAULT_DEPTH, false, NULL);
    if (v && !json_object_is_type(v, t)) {
        json_object_put(v);
        v = NULL;
    }
    return v;
}

/* J's answers for the vendor libraries into A: "drivers" (the array) when complete, "answering"
 * when the child was still answering when it ended (it died or hung there, after the icd part). */
static void clonce_aux_answers(const struct clonce_job *j, json_object *a)
{
    const struct clonce_answers *an = j->answers;
    if (!an)
        return;
    int phase = __atomic_load_n(&an->phase, __ATOMIC_ACQUIRE);
    if (phase == CLONCE_ANSWERS_RUNNING)
        json_object_object_add(a, "answering", json_object_new_boolean(true));
    size_t len = an->len;
    json_object *d = phase == CLONCE_ANSWERS_DONE && len > 0 && len <= CLONCE_ANSWERS_MAX
                         ? clonce_parse(an->json, len, json_type_array)
                         : NULL;
    if (d)
        json_object_object_add(a, "drivers", d);
}

/* Into A (the runner's notes), when J ran a smoke part: that it was planned, its devices and their
 * stages, when the enumeration ended, and the enumeration itself when the child's answer (RES) is lost. */
static void clonce_smoke_aux(const struct clonce_job *j, const struct isolate_result *res, json_object *a)
{
    const struct clonce_smoke_page *sp = j->smoke;
    json_object_object_add(a, "smoke_planned", json_object_new_boolean(true));
    json_object *slots = j->smoke_part->smoke_page_json(&sp->smoke);
    if (slots)
        json_object_object_add(a, "smoke_slots", slots);
    if (!__atomic_load_n(&sp->enum_ready, __ATOMIC_ACQUIRE))
        return;
    double ms = sp->enum_done_ms - j->start_ms;
    if (isfinite(ms) && ms >= 0)
        json_object_object_add(a, "enum_ms", json_object_new_double(ms));
    size_t len = sp->enum_len;
    if (res->status != ISOLATE_OK && len <= CLONCE_ENUM_MAX) {
        json_object *v = clonce_parse(sp->enum_json, len, json_type_object);
        if (v)
            json_object_object_add(a, "opencl", v);
    }
}

/* The notes on J's icd part as clonce_icd_view reads them: its stage, whether it finished (DONE),
 * then its time, its output and, when the page holds it whole, its answer ("icd"). */
static json_object *clonce_icd_notes(const struct clonce_job *j, bool done)
{
    const struct clonce_page *pg = j->page;
    json_object *a = json_object_new_object();
    json_object_object_add(a, "stage", json_object_new_int(pg->stage));
    json_object_object_add(a, "icd_done", json_object_new_boolean(done));
    if (!done)
        return a;
    json_object_object_add(a, "icd_ms", json_object_new_double(pg->done_ms - j->start_ms));
    char *t = clonce_tail(pg->out, pg->out_len <= CLONCE_TAIL ? pg->out_len : 0);
    json_object_object_add(a, "icd_output", t ? json_object_new_string(t) : NULL);
    free(t);
    size_t len = pg->len;
    json_object *v = __atomic_load_n(&pg->ready, __ATOMIC_ACQUIRE) && len <= CLONCE_JSON_MAX
                         ? clonce_parse(pg->json, len, json_type_object)
                         : NULL;
    if (v)
        json_object_object_add(a, "icd", v);
    return a;
}

/* True when J's child ended in its enumeration while its output was kept apart (a smoke part was
 * planned): that output is in J's file, after the icd part's. */
static bool clonce_enum_output_held(const struct clonce_job *j)
{
    return j->smoke && __atomic_load_n(&j->page->icd_done, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&j->smoke->enum_out_done, __ATOMIC_ACQUIRE);
}

void clonce_publish(struct probe_ctx *ctx, const struct clonce_job *j, const struct isolate_result *res,
                    struct isolate_result *eff, json_object **aux)
{
    run_once_copy_result(eff, res);
    bool done = __atomic_load_n(&j->page->icd_done, __ATOMIC_ACQUIRE) != 0;
    json_object *a = clonce_icd_notes(j, done);
    if (!done || clonce_enum_output_held(j)) {
        /* Died (or hung) in the icd part, or in an enumeration whose output was kept apart: what it
         * printed is still in the file, not (all) on the pipe. */
        char *t = clonce_file_tail(j);
        if (t) {
            free(eff->stderr_tail);
            eff->stderr_tail = t;
        }
    }
    clonce_aux_answers(j, a);
    if (j->smoke)
        clonce_smoke_aux(j, res, a);
    *aux = a;
    run_once_publish(ctx->once, CLONCE_KEY, eff, a);
}

void clonce_publish_alone(struct probe_ctx *ctx)
{
    struct isolate_result none;
    memset(&none, 0, sizeof(none));
    none.status = ISOLATE_SPAWN_FAILED;
    json_object *a = json_object_new_object();
    json_object_object_add(a, "alone", json_object_new_boolean(true));
    run_once_publish(ctx->once, CLONCE_KEY, &none, a);
    json_object_put(a);
}

static bool clonce_alone(json_object *aux)
{
    json_object *v = NULL;
    return !aux || (json_object_object_get_ex(aux, "alone", &v) && json_object_get_boolean(v));
}

bool clonce_icd_view(struct probe_ctx *ctx, const struct isolate_result *res, json_object *aux,
                     struct isolate_result *out, int *stage)
{
    memset(out, 0, sizeof(*out));
    *stage = 0;
    if (clonce_alone(aux))
        return false;
    json_object *v = NULL;
    *stage = json_object_object_get_ex(aux, "stage", &v) ? json_object_get_int(v) : 0;
    if (json_object_object_get_ex(aux, "icd_done", &v) && json_object_get_boolean(v)) {
        json_object *icd = NULL;
        if (!json_object_object_get_ex(aux, "icd", &icd) && res->status == ISOLATE_OK)
            json_object_object_get_ex(res->value, "icd", &icd);
        if (!json_object_is_type(icd, json_type_object))
            return false; /* its answer is lost: the icd part runs alone */
        out->status = ISOLATE_OK;
        if (json_object_deep_copy(icd, &out->value, NULL) != 0)
            return false;
        out->elapsed_ms = json_object_object_get_ex(aux, "icd_ms", &v) ? json_object_get_double(v) : res->elapsed_ms;
        const char *t = json_object_object_get_ex(aux, "icd_output", &v) ? json_object_get_string(v) : NULL;
        out->stderr_tail = str_dup(t);
        return true;
    }
    /* The child failed in the icd part: that is the combined view's outcome, as when it ran alone. */
    run_once_copy_result(out, res);
    json_object_put(out->value);
    out->value = NULL;
    if (out->status == ISOLATE_OK) /* finished without the icd part's mark: not to be trusted */
        out->status = ISOLATE_BAD_OUTPUT;
    if (out->budget_spent)
        ctx->budget_spent = true;
    return true;
}

bool clonce_icd_wait(struct probe_ctx *ctx, struct isolate_result *out, int *stage)
{
    struct isolate_result res;
    json_object *aux = NULL;
    run_once_wait(ctx->once, CLONCE_KEY, &res, &aux);
    bool ok = clonce_icd_view(ctx, &res, aux, out, stage);
    isolate_result_clear(&res);
    json_object_put(aux);
    return ok;
}

/* The opencl probe's view of the shared outcome RES (AUX: the runner's notes) into *OUT. */
static bool clonce_opencl_view(struct probe_ctx *ctx, const struct isolate_result *res, json_object *aux,
                               struct isolate_result *out)
{
    memset(out, 0, sizeof(*out));
    if (clonce_alone(aux))
        return false;
    if (res->status != ISOLATE_OK && json_object_get_boolean(json_object_object_get(aux, "answering")))
        return false; /* it ended while answering for the icd probe, before the enumeration: enumerate alone */
    json_object *kept = NULL, *ms = NULL;
    bool timed = json_object_object_get_ex(aux, "enum_ms", &ms) && json_object_is_type(ms, json_type_double);
    if (res->status != ISOLATE_OK && json_object_object_get_ex(aux, "opencl", &kept) &&
        json_object_is_type(kept, json_type_object)) {
        /* The child failed in its smoke part, after it had kept the enumeration: that is the
         * enumeration's answer, as if the smoke part had run elsewhere (the smoke probe names the device). */
        out->status = ISOLATE_OK;
        if (json_object_deep_copy(kept, &out->value, NULL) != 0)
            return false;
        out->elapsed_ms = timed ? json_object_get_double(ms) : res->elapsed_ms;
        out->stderr_tail = str_dup(res->stderr_tail); /* the smoke part's output went elsewhere */
        return true;
    }
    if (res->status == ISOLATE_OK) {
        json_object *cl = NULL;
        if (!json_object_object_get_ex(res->value, "opencl", &cl) || !cl)
            return false;
        run_once_copy_result(out, res);
        json_object_put(out->value);
        out->value = NULL;
        if (json_object_deep_copy(cl, &out->value, NULL) != 0) {
            isolate_result_clear(out);
            return false;
        }
        if (timed) /* the child went on with the smoke part: the enumeration ended before */
            out->elapsed_ms = json_object_get_double(ms);
        return true;
    }
    /* A crash or a hang is the enumeration's too, as when it ran beside the icd part: alone it makes
     * the same calls into the same drivers (listing the platforms, their properties, their devices),
     * and it reports no more than the signal and the output. Running it again would spend the time a
     * hang leaves nothing of, and after a crash could run out of it and call that a hang. */
    run_once_copy_result(out, res);
    json_object_put(out->value);
    out->value = NULL;
    if (out->budget_spent)
        ctx->budget_spent = true;
    return true;
}

/* run_once_peek callback (P the running job, ARG a struct isolate_result *, empty): once the
 * enumeration and its output's tail are on the smoke page (the child goes on with the smoke part),
 * the opencl probe's view of them, as clonce_opencl_view makes it of the child's healthy answer. The
 * page is the child's: bounds checked, parsed and type-checked; anything odd leaves ARG empty (the
 * probe then waits for the child's end, as before). */
static void clonce_peek_enum(void *p, void *arg)
{
    const struct clonce_job *j = p;
    struct isolate_result *out = arg;
    const struct clonce_smoke_page *sp = j->smoke;
    if (!sp || !__atomic_load_n(&sp->enum_out_done, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&sp->enum_ready, __ATOMIC_ACQUIRE))
        return;
    double ms = sp->enum_done_ms - j->start_ms;
    size_t len = sp->enum_len, olen = sp->enum_out_len;
    if (!isfinite(ms) || ms < 0 || len > CLONCE_ENUM_MAX || olen > CLONCE_TAIL)
        return;
    json_object *v = clonce_parse(sp->enum_json, len, json_type_object);
    if (!v)
        return;
    memset(out, 0, sizeof(*out));
    out->status = ISOLATE_OK;
    out->value = v;
    out->elapsed_ms = ms;
    out->stderr_tail = clonce_tail(sp->enum_out, olen);
}

/* For the opencl probe, while the shared child runs (started by whichever probe claimed it): its
 * view of the enumeration as soon as the child has kept it (clonce_peek_enum), or of the child's
 * outcome once published (it failed before, or kept nothing apart). Returns as clonce_opencl. */
static bool clonce_opencl_early(struct probe_ctx *ctx, struct isolate_result *out)
{
    for (;;) {
        struct isolate_result res;
        json_object *aux = NULL;
        /* Woken at once when it is published; the page is looked at every few milliseconds. */
        if (run_once_wait_ms(ctx->once, CLONCE_KEY, 5, &res, &aux)) {
            bool ok = clonce_opencl_view(ctx, &res, aux, out);
            isolate_result_clear(&res);
            json_object_put(aux);
            return ok;
        }
        struct isolate_result early;
        memset(&early, 0, sizeof(early));
        run_once_peek(ctx->once, CLONCE_KEY, clonce_peek_enum, &early);
        if (early.value) {
            *out = early;
            return true;
        }
        isolate_result_clear(&early);
    }
}

bool clonce_opencl(struct probe_ctx *ctx, struct isolate_result *out)
{
    memset(out, 0, sizeof(*out));
    enum run_once_role role = clonce_claim(ctx);
    if (role == RUN_ONCE_ALONE)
        return false;
    /* The child runs in a thread of its own (the run reaps it), so that the enumeration can be taken
     * while the child goes on with the smoke part; with no thread to be had, here, as before. */
    if (role == RUN_ONCE_WAIT || clonce_start(ctx) == 0)
        return clonce_opencl_early(ctx, out);
    struct isolate_result res, raw;
    json_object *aux = NULL;
    struct clonce_job j;
    if (clonce_job_init(&j, ctx) != 0) {
        clonce_publish_alone(ctx);
        return false;
    }
    run_once_attach(ctx->once, CLONCE_KEY, &j);
    probe_isolate_run(ctx, clonce_child, &j, &raw);
    clonce_publish(ctx, &j, &raw, &res, &aux);
    isolate_result_clear(&raw);
    clonce_job_free(&j);
    bool ok = clonce_opencl_view(ctx, &res, aux, out);
    isolate_result_clear(&res);
    json_object_put(aux);
    return ok;
}

/* ---- the icd probe's side of the answers ---- */

struct clonce_runner {
    struct probe_ctx *ctx;
    struct probe_ctx own; /* a copy of *CTX made as it starts: the child gets what is left of the budget
                             when it is forked, and this thread writes no probe's context (the outcome's
                             budget_spent reaches the sharers through clonce_publish) */
    struct isolate_thread th;
};

/* The shared child run in a thread of its own, for the probe that claimed it. */
static void *clonce_runner_main(void *arg)
{
    struct clonce_runner *r = arg;
    struct clonce_job j;
    if (clonce_job_init(&j, r->ctx) != 0) {
        clonce_publish_alone(r->ctx);
        return NULL;
    }
    run_once_attach(r->ctx->once, CLONCE_KEY, &j);
    struct isolate_result raw, eff;
    json_object *aux = NULL;
    probe_isolate_run(&r->own, clonce_child, &j, &raw);
    clonce_publish(r->ctx, &j, &raw, &eff, &aux);
    isolate_result_clear(&raw);
    isolate_result_clear(&eff);
    json_object_put(aux);
    clonce_job_free(&j);
    return NULL;
}

/* run_once reaper: join the runner THREAD (it has published, or is about to). */
static void clonce_join(void *thread)
{
    struct clonce_runner *r = thread;
    if (!r)
        return;
    isolate_thread_join(&r->th);
    free(r);
}

int clonce_start(struct probe_ctx *ctx)
{
    struct clonce_runner *r = calloc(1, sizeof(*r));
    if (!r)
        return -1;
    r->ctx = ctx;
    r->own = *ctx;
    if (isolate_thread_start(&r->th, clonce_runner_main, r) != 0) {
        free(r);
        return -1;
    }
    /* Neither the icd nor the opencl probe waits for the child's end (its smoke part): the run does. */
    run_once_set_reaper(ctx->once, CLONCE_KEY, clonce_join, r);
    return 0;
}

void clonce_prestart(struct probe_ctx *ctx)
{
    /* A dump file given (--pci-dump, --cpuid-dump) can end the run as a usage error before the icd
     * and opencl probes start; a child started ahead would keep that answer waiting for it. */
    if (ctx->opts && (ctx->opts->pci_dump || ctx->opts->cpuid_dump))
        return;
    /* Under --health the drivers it loads depend on the PCI facts (drivers for absent hardware are not
     * loaded): the icd or opencl probe starts it once the pci probe is done. */
    if (ctx->opts && ctx->opts->health)
        return;
    if (clonce_claim(ctx) != RUN_ONCE_MINE)
        return;
    if (clonce_start(ctx) != 0)
        clonce_publish_alone(ctx); /* no thread: the icd and opencl probes work alone */
}

/* run_once_peek callback (P the running job, ARG a json_object **): once the icd part and the answers
 * are on the child's pages, the notes clonce_publish would make of them, before the child ends. */
static void clonce_peek_pages(void *p, void *arg)
{
    const struct clonce_job *j = p;
    json_object **out = arg;
    if (!j->page || !j->answers || !__atomic_load_n(&j->page->icd_done, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&j->answers->phase, __ATOMIC_ACQUIRE) != CLONCE_ANSWERS_DONE)
        return;
    json_object *a = clonce_icd_notes(j, true);
    if (!json_object_object_get_ex(a, "icd", NULL)) { /* not (yet) whole on its page */
        json_object_put(a);
        return;
    }
    clonce_aux_answers(j, a);
    *out = a;
}

/* The answers in AUX (the caller's), or NULL. */
static json_object *clonce_take_drivers(json_object *aux)
{
    json_object *d = NULL;
    if (!json_object_object_get_ex(aux, "drivers", &d) || !json_object_is_type(d, json_type_array))
        return NULL;
    return json_object_get(d);
}

enum clonce_early clonce_icd_early(struct probe_ctx *ctx, double until_ms, struct isolate_result *view, int *stage,
                                   json_object **drivers)
{
    memset(view, 0, sizeof(*view));
    *stage = 0;
    *drivers = NULL;
    for (;;) {
        double left = until_ms - jsonnum_now_ms();
        /* Woken at once when it is published; the pages are looked at every few milliseconds. */
        int wait = left > 5.0 ? 5 : left > 0.0 ? (int)left : 0;
        struct isolate_result res;
        json_object *aux = NULL;
        if (run_once_wait_ms(ctx->once, CLONCE_KEY, wait, &res, &aux)) {
            bool ok = clonce_icd_view(ctx, &res, aux, view, stage);
            if (ok)
                *drivers = clonce_take_drivers(aux);
            isolate_result_clear(&res);
            json_object_put(aux);
            return ok ? CLONCE_EARLY_VIEW : CLONCE_EARLY_LOST;
        }
        json_object *peek = NULL;
        run_once_peek(ctx->once, CLONCE_KEY, clonce_peek_pages, &peek);
        if (peek) {
            struct isolate_result running = {.status = ISOLATE_OK};
            bool ok = clonce_icd_view(ctx, &running, peek, view, stage);
            if (ok)
                *drivers = clonce_take_drivers(peek);
            json_object_put(peek);
            return ok ? CLONCE_EARLY_VIEW : CLONCE_EARLY_LOST;
        }
        if (jsonnum_now_ms() >= until_ms)
            return CLONCE_EARLY_PENDING;
    }
}

bool clonce_smoke(struct probe_ctx *ctx, struct isolate_result *res, json_object **smoke, json_object **slots)
{
    memset(res, 0, sizeof(*res));
    *smoke = *slots = NULL;
    if (!clonce_wanted(ctx))
        return false;
    /* Claimed already (the opencl probe, which the smoke probe follows, took its enumeration): wait
     * for the child's end, its smoke part. */
    json_object *aux = NULL, *v = NULL;
    run_once_wait(ctx->once, CLONCE_KEY, res, &aux);
    /* Its runner's thread gone now, not at the end of the run. */
    run_once_reap(ctx->once, CLONCE_KEY);
    if (clonce_alone(aux) || !json_object_object_get_ex(aux, "smoke_planned", &v) || !json_object_get_boolean(v)) {
        isolate_result_clear(res);
        json_object_put(aux);
        return false;
    }
    if (res->status == ISOLATE_OK && json_object_object_get_ex(res->value, "smoke", &v) &&
        json_object_is_type(v, json_type_object))
        *smoke = json_object_get(v);
    if (json_object_object_get_ex(aux, "smoke_slots", &v) && json_object_is_type(v, json_type_array))
        *slots = json_object_get(v);
    json_object_put(aux);
    return true;
}
