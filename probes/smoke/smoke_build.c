/* smoke_build.c: the smoke test's kernel build: from source, or from the binary of an identical device's build. */
#include "smoke_dev.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonnum.h"
#include "smoke_kernel.h"
#include "strutil.h"

static char *smoke_build_log(struct smoke_dev *d, cl_program prog)
{
    size_t len = 0;
    if (d->api.clGetProgramBuildInfo(prog, d->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) != CL_SUCCESS || len == 0)
        return NULL;
    if (len > (4u << 20))
        len = 4u << 20;
    char *s = calloc(1, len + 1);
    if (s && d->api.clGetProgramBuildInfo(prog, d->dev, CL_PROGRAM_BUILD_LOG, len, s, NULL) != CL_SUCCESS) {
        free(s);
        return NULL;
    }
    return s;
}

/* Create and build the program with OPTIONS. Returns the CL error (d->prog set on success). */
cl_int smoke_build(struct smoke_dev *d, const char *options, char **log)
{
    cl_int err = CL_SUCCESS;
    const char *src = smoke_kernel_source();
    *log = NULL;
    cl_program prog = d->api.clCreateProgramWithSource(d->ctx, 1, &src, NULL, &err);
    if (err != CL_SUCCESS || !prog) {
        smoke_ok(d, err != CL_SUCCESS ? err : CL_INVALID_PROGRAM, "clCreateProgramWithSource");
        return err != CL_SUCCESS ? err : CL_INVALID_PROGRAM;
    }
    double t0 = jsonnum_now_ms();
    err = d->api.clBuildProgram(prog, 1, &d->dev, options, NULL, NULL);
    d->build_ms = jsonnum_now_ms() - t0;
    if (err != CL_SUCCESS) {
        *log = smoke_build_log(d, prog);
        d->api.clReleaseProgram(prog);
        return err;
    }
    d->prog = prog;
    return CL_SUCCESS;
}

struct smoke_build_share {
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* on CLOCK_MONOTONIC */
    bool claimed, done;    /* a device is building (claimed), and has finished (done) */
    char *key;             /* the builder's model and options */
    int platform, device;  /* the builder */
    unsigned char *binary; /* its program binary, or NULL (failed, or the driver gave none) */
    size_t len;
};

struct smoke_build_share *smoke_build_share_new(void)
{
    struct smoke_build_share *sh = calloc(1, sizeof(*sh));
    pthread_condattr_t ca;
    if (!sh || pthread_condattr_init(&ca) != 0) {
        free(sh);
        return NULL;
    }
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    bool ok = pthread_mutex_init(&sh->mu, NULL) == 0 && pthread_cond_init(&sh->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!ok) {
        free(sh);
        return NULL;
    }
    return sh;
}

/* The program binary of D's program for its one device (heap), or NULL. */
static unsigned char *smoke_program_binary(struct smoke_dev *d, size_t *len)
{
    size_t n = 0;
    if (!d->api.clGetProgramInfo ||
        d->api.clGetProgramInfo(d->prog, CL_PROGRAM_BINARY_SIZES, sizeof(n), &n, NULL) != CL_SUCCESS || n == 0 ||
        n > (256u << 20))
        return NULL;
    unsigned char *bin = malloc(n);
    if (bin && d->api.clGetProgramInfo(d->prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL) != CL_SUCCESS) {
        free(bin);
        return NULL;
    }
    *len = n;
    return bin;
}

/* Build D's program from BIN (another device's binary) with OPTIONS. True on success (d->prog set);
 * on failure nothing is recorded: the caller builds the source. */
static bool smoke_build_binary(struct smoke_dev *d, const char *options, const unsigned char *bin, size_t len)
{
    if (!d->api.clCreateProgramWithBinary)
        return false;
    cl_int err = CL_SUCCESS, status = CL_SUCCESS;
    double t0 = jsonnum_now_ms();
    cl_program prog = d->api.clCreateProgramWithBinary(d->ctx, 1, &d->dev, &len, &bin, &status, &err);
    if (err != CL_SUCCESS || status != CL_SUCCESS || !prog) {
        if (prog)
            d->api.clReleaseProgram(prog);
        return false;
    }
    if (d->api.clBuildProgram(prog, 1, &d->dev, options, NULL, NULL) != CL_SUCCESS) {
        d->api.clReleaseProgram(prog);
        return false;
    }
    d->build_ms = jsonnum_now_ms() - t0;
    d->prog = prog;
    d->from_binary = true;
    return true;
}

/* smoke_build with OPTIONS, sharing it with the child's other devices of the same model: the first
 * one builds the source and offers its binary; the others wait for it (at most SMOKE_SHARE_WAIT_MS)
 * and build that binary, or the source when they cannot. */
cl_int smoke_build_shared(struct smoke_dev *d, const char *options, char **log)
{
    struct smoke_build_share *sh = d->args->share;
    char *key = sh && d->model ? str_printf("%s\n%s", d->model, options) : NULL;
    if (!key)
        return smoke_build(d, options, log);
    pthread_mutex_lock(&sh->mu);
    if (!sh->claimed) {
        sh->claimed = true;
        sh->key = key;
        sh->platform = d->args->platform;
        sh->device = d->args->device;
        pthread_mutex_unlock(&sh->mu);
        smoke_stage(d, "building the kernel from source (shared with the devices like it)");
        cl_int err = smoke_build(d, options, log);
        size_t len = 0;
        unsigned char *bin = err == CL_SUCCESS ? smoke_program_binary(d, &len) : NULL;
        pthread_mutex_lock(&sh->mu);
        sh->binary = bin;
        sh->len = len;
        sh->done = true;
        pthread_cond_broadcast(&sh->cv);
        pthread_mutex_unlock(&sh->mu);
        return err;
    }
    bool same = strcmp(sh->key, key) == 0, wait = same && !sh->done;
    int bp = sh->platform, bd = sh->device;
    pthread_mutex_unlock(&sh->mu); /* no stage (nor its test hook) under the lock */
    free(key);
    if (wait)
        smoke_stage(d, "building the kernel: waiting for device %d:%d's build", bp, bd);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += SMOKE_SHARE_WAIT_MS / 1000;
    until.tv_nsec += (long)(SMOKE_SHARE_WAIT_MS % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&sh->mu);
    while (same && !sh->done)
        if (pthread_cond_timedwait(&sh->cv, &sh->mu, &until) != 0 && !sh->done)
            break; /* the first build takes too long (or hangs): build the source here */
    const unsigned char *bin = same && sh->done ? sh->binary : NULL; /* not changed once done */
    size_t len = sh->len;
    pthread_mutex_unlock(&sh->mu);
    if (bin) {
        smoke_stage(d, "building the kernel from device %d:%d's binary", bp, bd);
        if (smoke_build_binary(d, options, bin, len))
            return CL_SUCCESS;
    }
    smoke_stage(d, "building the kernel from source");
    return smoke_build(d, options, log);
}
