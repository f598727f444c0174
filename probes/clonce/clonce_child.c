/* clonce_child.c: the shared cl-once child: its pages, the icd part, the answers, the enumeration, the smoke part. */
#include "clonce_internal.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "jsonnum.h"
#include "probe.h"
#include "strutil.h"

const struct clonce_part *clonce_part_find(const char *name)
{
    for (size_t i = 0; probe_registry[i]; i++)
        if (strcmp(probe_registry[i]->name, name) == 0)
            return probe_registry[i]->clonce_part;
    return NULL;
}

int clonce_job_init(struct clonce_job *j, const struct probe_ctx *ctx)
{
    memset(j, 0, sizeof(*j));
    j->out_fd = -1;
    /* Read in the parent, before the fork: the registry's const rows, nothing a thread changes. */
    j->icd = clonce_part_find("icd");
    j->opencl = clonce_part_find("opencl");
    j->smoke_part = clonce_part_find("smoke");
    if (!j->opencl || !j->opencl->enumerate)
        return -1; /* no enumeration to share: each probe works alone */
    void *p = mmap(NULL, CLONCE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    j->page = p;
    const char *cmd = ctx->opts ? ctx->opts->command : NULL;
    j->icd_part = cmd && probe_selects(cmd, "icd") && j->icd && j->icd->icd_combined && j->icd->icd_loaded;
    /* Without this page the child answers for no driver: each then has its own child, as before. */
    void *q = j->icd_part ? mmap(NULL, CLONCE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                          : MAP_FAILED;
    j->answers = q == MAP_FAILED ? NULL : q;
    /* The icd part's output goes to a file of its own, so that what drivers print while the opencl
     * part reads their properties is not taken for what they printed while being listed. */
    j->out_fd = memfd_create("gpucheckup-icd-output", MFD_CLOEXEC);
    j->arg = (struct icd_child_arg){.stage = &j->page->stage};
    /* --health: the loader reads only the .icd files of drivers whose hardware may be here; the icd
     * probe leaves the others unloaded too (the speed policy's rule 2). Without the icd probe in the run
     * (the opencl command) the enumeration's loader reads the same directory, and says what it left out. */
    if (j->icd && j->icd->icd_health_vendors && j->icd->icd_health_done)
        j->arg.vendors_env = j->health_dir = j->icd->icd_health_vendors(ctx, &j->health_kept, &j->health_skipped);
    j->start_ms = jsonnum_now_ms();
    j->deadline_ms = probe_deadline_ms(ctx); /* the run's one deadline */
    /* The smoke probe runs in this run too: its test of the devices follows the enumeration here,
     * with the drivers already loaded, rather than in children that load them all again. */
    if (j->smoke_part && j->smoke_part->smoke_plan && j->smoke_part->smoke_child && j->smoke_part->smoke_page_json)
        j->smoke_part->smoke_plan(ctx, &j->plan);
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
    if (j->health_dir)
        j->icd->icd_health_done(j->health_dir);
    j->health_dir = NULL;
    json_object_put(j->health_skipped);
    j->health_skipped = NULL;
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

size_t clonce_read_tail(int fd, off_t end, char *buf)
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
    json_object *(*loaded)(const char *loader, int out_fd); /* the icd part's icd_loaded */
};

static void *clonce_answer_main(void *arg)
{
    struct clonce_answering *a = arg;
    json_object *arr = a->loaded(a->loader, a->fd);
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

/* In the child, after the icd part: each vendor library the loader holds answered (the icd part's icd_loaded)
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
        a->loaded = j->icd->icd_loaded;
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
    json_object_object_add(o, "smoke", j->smoke_part->smoke_child(&j->plan, &sp->smoke, cl));
}

/* In the child, under --health once the loader has read its vendors directory: OCL_ICD_VENDORS back to
 * the run's own VENDORS (NULL: unset), which the smoke part's children and any later reader see. */
static void clonce_vendors_back(const struct clonce_job *j, const char *vendors)
{
    if (!j->health_dir)
        return;
    if (vendors)
        setenv("OCL_ICD_VENDORS", vendors, 1);
    else
        unsetenv("OCL_ICD_VENDORS");
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
    char *vendors = j->health_dir ? str_dup(getenv("OCL_ICD_VENDORS")) : NULL;
    json_object *icd = j->icd_part ? j->icd->icd_combined(&j->arg) : NULL;
    if (j->icd_part) /* the loader has read its vendors: the enumeration records the run's variable */
        clonce_vendors_back(j, vendors);
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
    /* Then the opencl probe's enumeration, with every driver already loaded; without the icd part, its
     * loader reads --health's vendors directory here (the icd part's icd_child_combined does the same). */
    if (!j->icd_part && j->health_dir)
        setenv("OCL_ICD_VENDORS", j->health_dir, 1);
    json_object *cl = j->opencl->enumerate(NULL);
    if (!j->icd_part)
        clonce_vendors_back(j, vendors);
    free(vendors);
    json_object *en = NULL;
    /* --health, no icd probe in the run to say it: the .icd files the loader was not given (schema). */
    if (!j->icd_part && j->health_skipped && json_object_object_get_ex(cl, "enumeration", &en) &&
        json_object_is_type(en, json_type_object))
        json_object_object_add(en, "health_skipped", json_object_get(j->health_skipped));
    /* --health left the loader no driver (only CPU drivers and drivers for absent hardware): its empty
     * answer is no fault, and the opencl probe says what was not loaded instead (schema: not_loaded). */
    if (j->health_dir && j->health_kept == 0 && json_object_object_get_ex(cl, "enumeration", &en) &&
        json_object_is_type(en, json_type_object))
        json_object_object_add(en, "not_loaded", json_object_new_string(
                                                       "only CPU drivers and drivers for absent hardware are registered: "
                                                       "none loaded (--health)"));
    json_object_object_add(o, "opencl", cl);
    if (j->smoke)
        clonce_smoke_part(j, o, cl, apart ? pipe_fd : -1, end > 0 ? end : 0);
    return o;
}
