/* clonce.c: the one child through libOpenCL that the icd, opencl and smoke probes share in a run (issue 17). */
#include "clonce.h"

#include <pthread.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "isolate.h"
#include "jsonnum.h"
#include "opencl_internal.h"
#include "run.h"
#include "strutil.h"

/* Bytes of the icd part's output kept (as isolate.c keeps of a child's). */
#define CLONCE_TAIL 4096
/* The page shared with the child: the icd part's answer must fit in it, or it is not kept apart. */
#define CLONCE_PAGE (1u << 20)

/* Written by the child, read by the parent once the child is gone (never trusted: bounds checked). */
struct clonce_page {
    volatile int stage;    /* the icd part's stage (icd_child_arg.stage) */
    volatile int icd_done; /* the icd part returned: a failure after this is the opencl part's */
    volatile int ready;    /* json holds the icd part's answer */
    double done_ms;        /* jsonnum_now_ms when the icd part returned */
    size_t out_len;
    char out[CLONCE_TAIL]; /* the last bytes the icd part wrote on stdout/stderr */
    size_t len;
    char json[];           /* the icd part's answer, plain JSON */
};
#define CLONCE_JSON_MAX (CLONCE_PAGE - offsetof(struct clonce_page, json))

/* The vendor libraries' answers (clonce_answer), written by the child after the icd part; never
 * trusted. A page of its own, so that the icd part's page keeps its shape. */
struct clonce_answers {
    volatile int phase; /* CLONCE_ANSWERS_* */
    size_t len;
    char json[];        /* icd_child_loaded's array, plain JSON */
};
enum { CLONCE_ANSWERS_NONE = 0, CLONCE_ANSWERS_RUNNING, CLONCE_ANSWERS_DONE };
#define CLONCE_ANSWERS_MAX (CLONCE_PAGE - offsetof(struct clonce_answers, json))
/* The memory shared with a child that runs the smoke part: reserved, not committed (the pages the
 * child writes are all it costs); the enumeration must fit in it, or the smoke part does not run. */
#define CLONCE_SMOKE_MAP (16u << 20)

/* Written by the child, read by the parent once the child is gone (never trusted: bounds checked). */
struct clonce_smoke_page {
    volatile int enum_ready;  /* enum_json holds the enumeration: the smoke part may begin */
    double enum_done_ms;      /* jsonnum_now_ms when the enumeration returned */
    size_t enum_len;
    volatile int enum_out_done; /* the enumeration's output, kept apart, is on the result pipe now and
                                   its tail in enum_out: the opencl probe may take the enumeration
                                   before the child ends (set only when the output was kept apart) */
    size_t enum_out_len;
    char enum_out[CLONCE_TAIL]; /* the last bytes the icd part and the enumeration wrote, as on the pipe */
    struct smoke_shared_page smoke; /* the smoke part's devices and stages */
    char enum_json[];         /* the enumeration's answer, plain JSON */
};
#define CLONCE_ENUM_MAX (CLONCE_SMOKE_MAP - offsetof(struct clonce_smoke_page, enum_json))

bool clonce_wanted(const struct probe_ctx *ctx)
{
    const char *cmd = ctx->opts ? ctx->opts->command : NULL;
    return ctx->once && ctx->fs && ctx->fs->live && !ctx->snapshot && cmd && run_selects(cmd, "opencl");
}

enum run_once_role clonce_claim(struct probe_ctx *ctx)
{
    if (!clonce_wanted(ctx))
        return RUN_ONCE_ALONE;
    return run_once_claim(ctx->once, CLONCE_KEY);
}

int clonce_job_init(struct clonce_job *j, const struct probe_ctx *ctx)
{
    memset(j, 0, sizeof(*j));
    j->out_fd = -1;
    void *p = mmap(NULL, CLONCE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    j->page = p;
    const char *cmd = ctx->opts ? ctx->opts->command : NULL;
    j->icd_part = cmd && run_selects(cmd, "icd");
    /* Without this page the child answers for no driver: each then has its own child, as before. */
    void *q = j->icd_part ? mmap(NULL, CLONCE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                          : MAP_FAILED;
    j->answers = q == MAP_FAILED ? NULL : q;
    /* The icd part's output goes to a file of its own, so that what drivers print while the opencl
     * part reads their properties is not taken for what they printed while being listed. */
    j->out_fd = memfd_create("gpucheckup-icd-output", MFD_CLOEXEC);
    j->arg = (struct icd_child_arg){.stage = &j->page->stage};
    j->start_ms = jsonnum_now_ms();
    j->deadline_ms = ctx->deadline_ms > 0 ? ctx->deadline_ms : j->start_ms + ctx->timeout_ms;
    /* The smoke probe runs in this run too: its test of the devices follows the enumeration here,
     * with the drivers already loaded, rather than in children that load them all again. */
    smoke_shared_plan(ctx, &j->plan);
    if (j->plan.on) {
        void *sp = mmap(NULL, CLONCE_SMOKE_MAP, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE,
                        -1, 0);
        j->smoke = sp == MAP_FAILED ? NULL : sp;
        j->plan.on = j->smoke != NULL;
    }
    return 0;
}

void clonce_job_free(struct clonce_job *j)
{
    if (j->page)
        munmap(j->page, CLONCE_PAGE);
    if (j->answers)
        munmap(j->answers, CLONCE_PAGE);
    j->answers = NULL;
    if (j->out_fd >= 0)
        close(j->out_fd);
    if (j->smoke)
        munmap(j->smoke, CLONCE_SMOKE_MAP);
    j->smoke = NULL;
    j->page = NULL;
    j->out_fd = -1;
}

/* In the child: stdout and stderr onto FD (stdio's buffers emptied first). */
static void clonce_redirect(int fd)
{
    fflush(NULL);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
}

/* In the child: the last CLONCE_TAIL bytes of the first END bytes of FD into BUF; returns how many. */
static size_t clonce_read_tail(int fd, off_t end, char *buf)
{
    off_t start = end > CLONCE_TAIL ? end - CLONCE_TAIL : 0;
    size_t got = 0;
    while (start + (off_t)got < end) {
        ssize_t r = pread(fd, buf + got, (size_t)(end - start) - got, start + (off_t)got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

/* In the child: bytes FROM to END of FD onto TO (the result pipe, or stderr once redirected to it). */
static void clonce_copy_range(int fd, off_t from, off_t end, int to)
{
    char buf[16384];
    for (off_t at = from; at < end;) {
        ssize_t r = pread(fd, buf, sizeof(buf) < (size_t)(end - at) ? sizeof(buf) : (size_t)(end - at), at);
        if (r <= 0 || fdio_write_all(to, buf, (size_t)r) != 0)
            break;
        at += r;
    }
}

/* In the child, after the enumeration, when its output went to J's file from offset FROM on (the icd
 * part's before it is on the pipe already): its tail onto the smoke page, then the output onto the
 * pipe PIPE_FD, where it would have gone, and stdout and stderr back there. What the pipe holds is
 * then as before, and the page holds the tail the parent would take from it (issue 17: the opencl
 * probe reads the enumeration without waiting for the smoke part). */
static void clonce_enum_output(struct clonce_job *j, int pipe_fd, off_t from)
{
    struct clonce_smoke_page *sp = j->smoke;
    fflush(NULL);
    off_t end = lseek(j->out_fd, 0, SEEK_CUR);
    if (end > 0)
        sp->enum_out_len = clonce_read_tail(j->out_fd, end, sp->enum_out);
    if (end > from)
        clonce_copy_range(j->out_fd, from, end, pipe_fd);
    __atomic_store_n(&sp->enum_out_done, 1, __ATOMIC_RELEASE);
    clonce_redirect(pipe_fd);
    close(pipe_fd);
}

/* How long the shared child waits for its answers for the vendor libraries (clonce_answer): they are
 * a second question to drivers already loaded (about a millisecond each); a driver that hangs on it
 * is left to the icd probe's own child for it, and must not hold the enumeration and the smoke test. */
#define CLONCE_ANSWER_LIMIT_MS 1000.0

/* The answering thread's work: the loader's libraries (LOADER, ours), answered into the page. */
struct clonce_answering {
    struct clonce_answers *an;
    char *loader;
    int fd; /* where what drivers print while answered goes */
};

static void *clonce_answer_main(void *arg)
{
    struct clonce_answering *a = arg;
    json_object *arr = icd_child_loaded(a->loader, a->fd);
    size_t len = 0;
    const char *s = json_object_to_json_string_length(arr, JSON_C_TO_STRING_PLAIN, &len);
    if (s && len <= CLONCE_ANSWERS_MAX) {
        memcpy(a->an->json, s, len);
        a->an->len = len;
    }
    json_object_put(arr);
    __atomic_store_n(&a->an->phase, CLONCE_ANSWERS_DONE, __ATOMIC_RELEASE);
    return NULL;
}

/* In the child, after the icd part: each vendor library the loader holds answered (icd_child_loaded)
 * into J's answers page, so that the icd probe need not load it again in a child of its own. None
 * when the icd part printed anything, or its output was not kept apart: it could not be told apart
 * per driver. The answers come from a thread of their own, waited for CLONCE_ANSWER_LIMIT_MS at most
 * (a third of the time left, if less): past that the page stays "running", the icd probe gives the
 * drivers children of their own, and the child goes on without them (its end ends the thread). */
static void clonce_answer(struct clonce_job *j, json_object *icd)
{
    struct clonce_answers *an = j->answers;
    if (!an)
        return;
    __atomic_store_n(&an->phase, CLONCE_ANSWERS_RUNNING, __ATOMIC_RELEASE);
    json_object *v = NULL;
    const char *loader = json_object_object_get_ex(icd, "loaded", &v) ? json_object_get_string(v) : NULL;
    int fd = -1, keep = -1;
    struct clonce_answering *a = NULL;
    if (loader && j->out_fd >= 0 && j->page->ready && j->page->out_len == 0 &&
        (fd = memfd_create("gpucheckup-icd-answers", MFD_CLOEXEC)) >= 0 && (keep = dup(STDERR_FILENO)) >= 0 &&
        (a = calloc(1, sizeof(*a))) && (a->loader = str_dup(loader))) {
        /* What drivers print while answered goes nowhere: such a driver gets its own child. */
        a->an = an;
        a->fd = fd;
        clonce_redirect(fd);
        pthread_t th;
        if (pthread_create(&th, NULL, clonce_answer_main, a) == 0) {
            double left = j->deadline_ms - jsonnum_now_ms();
            double limit = left / 3 < CLONCE_ANSWER_LIMIT_MS ? left / 3 : CLONCE_ANSWER_LIMIT_MS;
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            long long ns = until.tv_nsec + (long long)((limit > 0 ? limit : 0) * 1e6);
            until.tv_sec += (time_t)(ns / 1000000000LL);
            until.tv_nsec = (long)(ns % 1000000000LL);
            if (pthread_timedjoin_np(th, NULL, &until) != 0) {
                pthread_detach(th); /* hung in a driver: the page says "running"; nothing is freed */
                a = NULL;
                fd = -1;
            }
        } else {
            __atomic_store_n(&an->phase, CLONCE_ANSWERS_DONE, __ATOMIC_RELEASE); /* none: len 0 */
        }
        clonce_redirect(keep);
    } else {
        __atomic_store_n(&an->phase, CLONCE_ANSWERS_DONE, __ATOMIC_RELEASE);
    }
    if (a) {
        free(a->loader);
        free(a);
    }
    if (keep >= 0)
        close(keep);
    if (fd >= 0)
        close(fd);
}

/* In the child, after the enumeration CL (a member of O, the answer): keep CL where the parent finds
 * it whatever happens next, then run the smoke part (its answer into O's "smoke"). A smoke part that
 * crashes or hangs must not cost the icd and opencl probes their answers (issue 17). */
static void clonce_smoke_part(struct clonce_job *j, json_object *o, json_object *cl, int pipe_fd, off_t from)
{
    struct clonce_smoke_page *sp = j->smoke;
    double done_ms = jsonnum_now_ms();
    if (pipe_fd >= 0)
        clonce_enum_output(j, pipe_fd, from);
    size_t len = 0;
    const char *s = json_object_to_json_string_length(cl, JSON_C_TO_STRING_PLAIN, &len);
    if (!s || len > CLONCE_ENUM_MAX)
        return; /* not kept apart: no smoke part here, the smoke probe tests the devices itself */
    memcpy(sp->enum_json, s, len);
    sp->enum_len = len;
    sp->enum_done_ms = done_ms;
    __atomic_store_n(&sp->enum_ready, 1, __ATOMIC_RELEASE);
    /* What the drivers print while testing goes nowhere: the output on the pipe stays the icd part's
     * and the enumeration's, as the opencl section reports it (a smoke child's output is evidence
     * only of its crash, and a crash here sends the devices to children of their own, which say it). */
    fflush(NULL);
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0) {
        dup2(null_fd, STDOUT_FILENO);
        dup2(null_fd, STDERR_FILENO);
        close(null_fd);
    }
    json_object_object_add(o, "smoke", smoke_shared_child(&j->plan, &sp->smoke, cl));
}

json_object *clonce_child(void *arg)
{
    struct clonce_job *j = arg;
    struct clonce_page *pg = j->page;
    int pipe_fd = j->out_fd >= 0 ? dup(STDERR_FILENO) : -1;
    if (pipe_fd >= 0)
        clonce_redirect(j->out_fd);
    /* The icd part first, as the icd probe's combined child does it alone; without the icd probe in
     * the run (the opencl, list and smoke commands) there is none, and it counts as done at once. */
    json_object *icd = j->icd_part ? icd_child_combined(&j->arg) : NULL;
    fflush(NULL);
    pg->done_ms = jsonnum_now_ms();
    /* With a smoke part after it, the enumeration's output is kept apart too, until it is done. */
    bool apart = pipe_fd >= 0 && j->smoke;
    off_t end = 0;
    if (pipe_fd >= 0) {
        end = lseek(j->out_fd, 0, SEEK_CUR);
        if (end > 0)
            pg->out_len = clonce_read_tail(j->out_fd, end, pg->out);
        if (apart) {
            if (end > 0)
                clonce_copy_range(j->out_fd, 0, end, pipe_fd);
        } else {
            clonce_redirect(pipe_fd);
            close(pipe_fd);
            if (end > 0)
                clonce_copy_range(j->out_fd, 0, end, STDERR_FILENO);
        }
    }
    size_t len = 0;
    const char *s = icd ? json_object_to_json_string_length(icd, JSON_C_TO_STRING_PLAIN, &len) : NULL;
    if (s && len <= CLONCE_JSON_MAX) {
        memcpy(pg->json, s, len);
        pg->len = len;
        __atomic_store_n(&pg->ready, 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&pg->icd_done, 1, __ATOMIC_RELEASE);
    json_object *o = json_object_new_object();
    if (icd) {
        clonce_answer(j, icd);
        json_object_object_add(o, "icd", icd);
    }
    /* Then the opencl probe's enumeration, with every driver already loaded. */
    json_object *cl = ocl_enumerate(NULL);
    json_object_object_add(o, "opencl", cl);
    if (j->smoke)
        clonce_smoke_part(j, o, cl, apart ? pipe_fd : -1, end > 0 ? end : 0);
    return o;
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
    json_object *slots = smoke_shared_page_json(&sp->smoke);
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
    if (role == RUN_ONCE_WAIT || clonce_start(ctx, probe_budget_ms(ctx)) == 0)
        return clonce_opencl_early(ctx, out);
    struct isolate_result res, raw;
    json_object *aux = NULL;
    struct clonce_job j;
    if (clonce_job_init(&j, ctx) != 0) {
        clonce_publish_alone(ctx);
        return false;
    }
    run_once_attach(ctx->once, CLONCE_KEY, &j);
    isolate_run(clonce_child, &j, probe_budget_ms(ctx), &raw);
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
    int timeout_ms;
    pthread_t th;
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
    isolate_run(clonce_child, &j, r->timeout_ms, &raw);
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
    pthread_join(r->th, NULL);
    free(r);
}

int clonce_start(struct probe_ctx *ctx, int timeout_ms)
{
    struct clonce_runner *r = calloc(1, sizeof(*r));
    if (!r)
        return -1;
    r->ctx = ctx;
    r->timeout_ms = timeout_ms;
    if (pthread_create(&r->th, NULL, clonce_runner_main, r) != 0) {
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
    if (clonce_claim(ctx) != RUN_ONCE_MINE)
        return;
    if (clonce_start(ctx, probe_budget_ms(ctx)) != 0)
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
    /* Its runner's thread gone before the smoke probe forks children of its own (as before, when the
     * probe that claimed the child joined it): see RUN_MAX_PARALLEL in src/run.c. */
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
