/* vulkan_shared.c: every driver in one child first, as a program's loader has them all in one process; a driver's own child only where that one did not finish it. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "strutil.h"
#include "vulkan_child.h"

/* The last bytes of a driver's output kept with its answer (isolate.c keeps as many of a child's). */
#define VULKAN_SHARED_OUTPUT 4096

/* Stages of a progress region beyond VULKAN_STAGE_SMOKE, written by the shared child only. */
#define VULKAN_STAGE_DONE 2u  /* json is the driver's whole answer, smoke test included */
#define VULKAN_STAGE_BEGUN 3u /* the shared child is at this driver now (json empty) */
#define VULKAN_STAGE_LISTED 4u /* listed, its smoke test still to come (json empty) */

struct vulkan_shared_job {
    struct vulkan_driver *d;
    const size_t *idx;
    size_t k;
};

/* In the child: stdout and stderr into a fresh memory file, so that each driver's output is its own. */
static int vulkan_shared_capture(void)
{
    int fd = memfd_create("gpucheckup-vulkan-output", MFD_CLOEXEC);
    if (fd >= 0) {
        fflush(stdout);
        fflush(stderr);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
    }
    return fd;
}

/* The last VULKAN_SHARED_OUTPUT bytes FD holds, sanitised, into OUT as "output" (nothing when empty). */
static void vulkan_shared_output(int fd, json_object *out)
{
    if (fd < 0)
        return;
    fflush(stdout);
    fflush(stderr);
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > VULKAN_SHARED_OUTPUT ? end - VULKAN_SHARED_OUTPUT : 0;
    char buf[VULKAN_SHARED_OUTPUT + 1];
    ssize_t got = end > 0 ? pread(fd, buf, (size_t)(end - from), from) : 0;
    if (got > 0) {
        buf[got] = '\0';
        str_sanitize(buf);
        json_object_object_add(out, "output", json_object_new_string(buf));
    }
}

/* ANSWER, whole, into P with VULKAN_STAGE_DONE; false when it does not fit (the driver then gets its own child). */
static bool vulkan_shared_say_done(struct vulkan_progress *p, json_object *answer)
{
    size_t len = 0;
    const char *s = json_object_to_json_string_length(answer, JSON_C_TO_STRING_PLAIN, &len);
    if (!s || len >= VULKAN_PROGRESS_MAX)
        return false;
    memcpy(p->json, s, len);
    p->len = (unsigned)len;
    __atomic_store_n(&p->stage, VULKAN_STAGE_DONE, __ATOMIC_RELEASE);
    return true;
}

/* The shared child: each driver in turn with its own instance (VK_DRIVER_FILES naming it alone, as in its
 * own child), then the smoke test of each driver that lists one device. Each answer goes into its
 * driver's progress region; the return value says nothing more. */
static json_object *vulkan_shared_child(void *arg)
{
    const struct vulkan_shared_job *job = arg;
    int saved_out = dup(STDOUT_FILENO), saved_err = dup(STDERR_FILENO);
    struct vulkan_loader *l = calloc(job->k ? job->k : 1, sizeof(*l));
    json_object **out = calloc(job->k ? job->k : 1, sizeof(*out));
    int *fd = calloc(job->k ? job->k : 1, sizeof(*fd));
    bool *smoke = calloc(job->k ? job->k : 1, sizeof(*smoke));
    if (!l || !out || !fd || !smoke)
        return NULL;
    for (size_t j = 0; j < job->k; j++) {
        struct vulkan_driver *d = &job->d[job->idx[j]];
        __atomic_store_n(&d->progress->stage, VULKAN_STAGE_BEGUN, __ATOMIC_RELEASE);
        fd[j] = vulkan_shared_capture();
        out[j] = json_object_new_object();
        smoke[j] = vulkan_child_list(d, &l[j], out[j]);
        if (!smoke[j]) {
            vulkan_shared_output(fd[j], out[j]);
            vulkan_shared_say_done(d->progress, out[j]);
        } else {
            __atomic_store_n(&d->progress->stage, VULKAN_STAGE_LISTED, __ATOMIC_RELEASE);
        }
    }
    for (size_t j = 0; j < job->k; j++) {
        struct vulkan_driver *d = &job->d[job->idx[j]];
        if (!smoke[j] || fd[j] < 0)
            continue;
        fflush(stdout);
        fflush(stderr);
        dup2(fd[j], STDOUT_FILENO);
        dup2(fd[j], STDERR_FILENO);
        if (!vulkan_child_say_progress(d->progress, out[j]))
            continue; /* too large to keep: its own child lists it again */
        json_object_object_add(out[j], "smoke", vulkan_child_smoke_here(&l[j], out[j]));
        vulkan_shared_output(fd[j], out[j]);
        vulkan_shared_say_done(d->progress, out[j]);
    }
    if (saved_out >= 0)
        dup2(saved_out, STDOUT_FILENO);
    if (saved_err >= 0)
        dup2(saved_err, STDERR_FILENO);
    return json_object_new_object(); /* instances, devices and memory files are left to _exit */
}

/* Driver D's answer from its region, when the shared child finished it and it neither failed nor failed
 * its smoke test: into *RES (status OK, its output as stderr_tail). False otherwise (its own child then). */
static bool vulkan_shared_take(const struct vulkan_driver *d, struct isolate_result *res)
{
    const struct vulkan_progress *p = d->progress;
    if (__atomic_load_n(&p->stage, __ATOMIC_ACQUIRE) != VULKAN_STAGE_DONE || p->len == 0 || p->len >= VULKAN_PROGRESS_MAX)
        return false;
    json_object *v = isolate_json_parse(p->json, p->len, JSON_TOKENER_DEFAULT_DEPTH, true, NULL);
    /* A failure there is confirmed alone: another driver in the same process may have caused it. */
    json_object *smoke = NULL, *st = NULL;
    bool failed = v && json_object_is_type(v, json_type_object) &&
                  (json_object_object_get_ex(v, "error", NULL) ||
                   (json_object_object_get_ex(v, "smoke", &smoke) &&
                    (!json_object_object_get_ex(smoke, "status", &st) || !json_object_is_type(st, json_type_string) ||
                     strcmp(json_object_get_string(st), "pass") != 0)));
    if (!v || !json_object_is_type(v, json_type_object) || failed) {
        json_object_put(v);
        return false;
    }
    *res = (struct isolate_result){.status = ISOLATE_OK, .value = v};
    json_object *o = NULL;
    if (json_object_object_get_ex(v, "output", &o)) {
        const char *s = json_object_get_string(o);
        res->stderr_tail = s && *s ? str_dup(s) : NULL;
        json_object_object_del(v, "output");
    }
    return true;
}

size_t vulkan_shared_run(struct probe_ctx *ctx, struct vulkan_driver *d, const size_t *idx, size_t k, bool *done,
                         struct isolate_result *res, size_t *busy, double *waited)
{
    *busy = (size_t)-1;
    *waited = 0;
    struct vulkan_shared_job job = {d, idx, k};
    struct isolate_job ij = {.fn = vulkan_shared_child, .arg = &job};
    /* A quarter of what is left: a driver that hangs it leaves the rest to the drivers' own children. */
    probe_isolate_many_part(ctx, &ij, 1, VULKAN_SHARED_PART);
    size_t n = 0;
    for (size_t j = 0; j < k; j++) {
        unsigned stage = __atomic_load_n(&d[idx[j]].progress->stage, __ATOMIC_ACQUIRE);
        if (ij.result.status == ISOLATE_TIMEOUT && (stage == VULKAN_STAGE_BEGUN || stage == VULKAN_STAGE_SMOKE)) {
            *busy = j; /* the one it was at: where it hung */
            *waited = ij.result.elapsed_ms;
        }
        done[j] = vulkan_shared_take(&d[idx[j]], &res[j]);
        n += done[j];
        memset(d[idx[j]].progress, 0, offsetof(struct vulkan_progress, json)); /* a fresh region for a rerun */
    }
    isolate_result_clear(&ij.result);
    return n;
}
