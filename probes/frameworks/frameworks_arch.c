/* frameworks_arch.c: the GPU architectures in each CUDA build's own library against each device's compute capability. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "doctor_facts.h"
#include "frameworks_fatbin.h"
#include "frameworks_internal.h"
#include "jsonget.h"
#include "ldsearch.h"
#include "results/result_cuda.h"
#include "strutil.h"

/* The library that holds each framework's own GPU kernels, relative to its site directory (the first that
 * exists). CuPy compiles its kernels at run time (NVRTC): nothing to read. */
static const struct {
    const char *kind;
    const char *rel;
} fw_kernel_libs[] = {
    {"torch", "torch/lib/libtorch_cuda.so"},
    {"torch", "torch/lib/libtorch_cuda_cu.so"}, /* PyTorch 1.x split it in two */
    {"tensorflow", "tensorflow/libtensorflow_cc.so.2"},
    {"onnxruntime", "onnxruntime/capi/libonnxruntime_providers_cuda.so"},
    {"jax", "jax_plugins/xla_cuda13/xla_cuda_plugin.so"},
    {"jax", "jax_plugins/xla_cuda12/xla_cuda_plugin.so"},
    {"paddle", "paddle/libs/libphi.so"}, /* its kernels (paddle/base/libpaddle.so has a few) */
};

static int fw_pread(void *arg, uint64_t off, void *buf, size_t len)
{
    int fd = *(int *)arg;
    size_t got = 0;
    while (got < len) {
        ssize_t r = hostfs_pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Read F's kernel library's fatbinaries into F->code (F->code_file names it). */
static void fw_code_read(const struct hostfs *fs, struct fw_found *f)
{
    for (size_t i = 0; i < sizeof(fw_kernel_libs) / sizeof(fw_kernel_libs[0]); i++) {
        if (strcmp(fw_kernel_libs[i].kind, f->kind->name) != 0)
            continue;
        char *path = ldsearch_join(f->site, fw_kernel_libs[i].rel);
        int fd = path ? hostfs_open_file(fs, path) : -ENOMEM;
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
            f->code = calloc(1, sizeof(*f->code));
            if (f->code) {
                f->code_status = fw_fatbin_read(fw_pread, &fd, (uint64_t)st.st_size, f->code);
                snprintf(f->code_file, sizeof(f->code_file), "%s", path);
            }
        }
        if (fd >= 0)
            close(fd);
        free(path);
        if (f->code)
            return;
    }
}

/* Whether CODE runs on a device of compute capability CC (major * 10 + minor): 2 its SASS (a cubin of the
 * same major and a minor not above it: binary compatibility), 1 only PTX of an architecture not above it
 * (the driver JIT-compiles it), 0 neither. *PTX is the PTX used. */
static int fw_code_runs(const struct fw_gpu_code *c, int cc, unsigned *ptx)
{
    for (size_t i = 0; i < c->n_sass; i++)
        if (c->sass[i] / 10 == cc / 10 && c->sass[i] % 10 <= cc % 10)
            return 2;
    *ptx = 0;
    for (size_t i = 0; i < c->n_ptx; i++)
        if (c->ptx[i] <= cc)
            *ptx = c->ptx[i];
    return *ptx ? 1 : 0;
}

void fw_judge_arch(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f)
{
    if (f->build != FW_BUILD_CUDA)
        return;
    fw_code_read(ctx->fs, f);
    if (!f->code || f->code_status != 1 || f->code->n_sass + f->code->n_ptx == 0)
        return;
    const struct result_cuda *cuda = result_cuda_get(ctx->report);
    char name[256], sass[400], ptx[200];
    fw_name(s, f, name, sizeof(name));
    fw_arch_list(f->code->sass, f->code->n_sass, "sm", sass, sizeof(sass));
    fw_arch_list(f->code->ptx, f->code->n_ptx, "compute", ptx, sizeof(ptx));
    size_t n = cuda ? cuda->n_devs : 0, judged = 0, missing = 0;
    char first[160] = "";
    for (size_t i = 0; i < n; i++) {
        const struct result_cuda_dev *d = &cuda->devs[i];
        const char *dn = d->name;
        if (d->cc < 10) /* unknown, or major 0 */
            continue;
        char cc[16];
        snprintf(cc, sizeof(cc), "%d.%d", d->cc / 10, d->cc % 10);
        judged++;
        int arch = d->cc;
        unsigned jit = 0;
        int runs = fw_code_runs(f->code, arch, &jit);
        long long ord = d->ordinal >= 0 ? d->ordinal : (long long)i;
        if (runs == 1) {
            struct report_finding *fd = report_add_finding(
                ctx->report, "frameworks.arch-ptx-only", f->code_file, "%s: no sm_%d code for GPU %lld (%s, compute "
                "capability %s): the driver JIT-compiles its compute_%u PTX at first use (a slow first start)", name,
                arch, ord, dn ? dn : "unnamed", cc, jit);
            if (fd)
                report_finding_add_evidence(fd, f->code_file, "SASS %s; PTX %s", sass, ptx);
        } else if (runs == 0) {
            missing++;
            if (!first[0])
                snprintf(first, sizeof(first), "GPU %lld (%s) is sm_%d", ord, dn ? dn : "unnamed", arch);
            struct report_finding *fd = report_add_finding(
                ctx->report, "frameworks.arch-missing", f->code_file, "%s: built for %s (PTX: %s), no code GPU %lld "
                "(%s, compute capability %s, sm_%d) can run: \"no kernel image is available for execution on the "
                "device\"", name, sass, ptx, ord, dn ? dn : "unnamed", cc, arch);
            if (fd) {
                report_finding_set_hint(fd, "Install a %s build that includes sm_%d (another CUDA series' wheel: its "
                                        "release notes list the architectures), or run it on a GPU it is built for.",
                                        f->kind->label, arch);
                report_finding_add_evidence(fd, f->code_file, "SASS %s; PTX %s", sass, ptx);
            }
        }
    }
    if (judged > 0 && missing == judged && (!f->root || f->gpu != FW_GPU_NO)) {
        char *why = str_printf("its GPU code is for %s (PTX: %s), and %s%s", sass, ptx, first,
                               missing > 1 ? " (every GPU here lacks its code)" : "");
        free(f->why);
        f->why = why;
        f->gpu = FW_GPU_NO;
        f->root = "frameworks.arch-missing";
    }
}
