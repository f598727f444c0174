/* cuda_nvml_mem.c: GPU memory held by other processes (NVML), --expect-idle and --require free-memory>=NGiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_nvml.h"
#include "doctor_facts.h"
#include "jsonget.h"
#include "procinfo.h"
#include "strutil.h"

#define MEM_MIB (1024.0 * 1024.0)
#define MEM_GIB (1024.0 * 1024.0 * 1024.0)

/* ---- the catalogue -------------------------------------------------------------------------------
 * NVML's nvmlDeviceGetMemoryInfo and nvmlDeviceGet{Compute,Graphics}RunningProcesses_v3 (nvml.h): the
 * memory other processes hold on each GPU. Processes of gpucheckup itself (its children: the OpenCL
 * or CUDA smoke tests may hold a context while NVML is asked) never count. */
const struct check cuda_nvml_mem_checks[] = {
    {"cuda.nvml-memory-held", REPORT_SEV_INFO, "Other processes hold memory on the GPU",
     "Nothing to do if they are yours or another job's; a leftover process of a killed job holds its memory "
     "until it exits: `nvidia-smi --query-compute-apps=pid,used_memory --format=csv`, then end it.",
     CHECK_LAYER_RUNTIME},
    {"cuda.nvml-memory-held-most", REPORT_SEV_WARNING,
     "Other processes hold more than half of the GPU's memory: a new job may run out of memory",
     "See which processes hold it (the evidence names them); end a leftover process of a killed job "
     "(`kill PID`, as its user or root), or run where the GPU is free.", CHECK_LAYER_RUNTIME},
    {"cuda.nvml-not-idle", REPORT_SEV_ERROR, "--expect-idle: the GPU is held by another process",
     "The GPU should be idle between jobs: end the processes the evidence names (a leftover of a killed job "
     "holds its memory until it exits), or drain the node until they are gone.", CHECK_LAYER_RUNTIME},
};
const size_t cuda_nvml_mem_n_checks = sizeof(cuda_nvml_mem_checks) / sizeof(cuda_nvml_mem_checks[0]);

/* ---- --expect-idle ------------------------------------------------------------------------------ */

static bool mem_expect_idle;

static int mem_opt_expect_idle(const char *v, char *err, size_t errlen)
{
    (void)v;
    (void)err;
    (void)errlen;
    mem_expect_idle = true;
    return 0;
}

void cuda_mem_opts_reset(void)
{
    mem_expect_idle = false;
}

const struct probe_option cuda_option_rows[] = {
    {.name = "expect-idle", .arg = NULL, .parse = mem_opt_expect_idle,
     .help = "health check between jobs: a GPU held by any process other than\n"
             "gpucheckup (NVML's compute and graphics processes) is an error"},
    {NULL, NULL, NULL, NULL},
};

/* ---- the findings ------------------------------------------------------------------------------- */

/* Fill P (one of data.nvml.devices[].processes) with "ours" and, for another program's, "user", "command"
 * and "started"; true when it is another program's. */
static bool mem_describe(const struct hostfs *fs, json_object *p)
{
    long pid = (long)nvml_num(p, "pid");
    if (pid <= 0)
        return false;
    bool ours = procinfo_is_ours(fs, pid);
    json_object_object_add(p, "ours", json_object_new_boolean(ours));
    if (ours)
        return false;
    char *user = procinfo_user(fs, pid, NULL), *comm = procinfo_comm(fs, pid), started[40];
    procinfo_started(fs, pid, started, sizeof(started));
    json_object_object_add(p, "user", user ? json_object_new_string(user) : NULL);
    json_object_object_add(p, "command", comm ? json_object_new_string(comm) : NULL);
    json_object_object_add(p, "started", started[0] ? json_object_new_string(started) : NULL);
    free(user);
    free(comm);
    return true;
}

static void mem_evidence(struct report_finding *f, json_object *p)
{
    const char *user = jsonget_str(p, "user"), *comm = jsonget_str(p, "command"), *st = jsonget_str(p, "started");
    int64_t used = nvml_num(p, "used_memory");
    char mem[48] = "memory not reported";
    if (used >= 0)
        snprintf(mem, sizeof(mem), "%.0f MiB", (double)used / MEM_MIB);
    char what[32];
    snprintf(what, sizeof(what), "pid %lld", (long long)nvml_num(p, "pid"));
    if (!user && !comm)
        report_finding_add_evidence(f, what, "%s process, %s, not visible here (another PID namespace)",
                                    jsonget_str(p, "kind") ? jsonget_str(p, "kind") : "?", mem);
    else
        report_finding_add_evidence(f, what, "%s, user %s, command %s%s%s", mem, user ? user : "?",
                                    comm ? comm : "?", st ? ", started " : "", st ? st : "");
}

void cuda_nvml_mem_check(struct probe_ctx *ctx, json_object *d, const char *subj, const char *gpu)
{
    json_object *procs = jsonget(d, "processes");
    size_t n = json_object_is_type(procs, json_type_array) ? json_object_array_length(procs) : 0;
    int64_t total = nvml_num(jsonget(d, "memory"), "total");
    int64_t held = 0;
    size_t others = 0;
    if (n == 0 && nvml_num(d, "processes_more") <= 0) {
        if (json_object_is_type(procs, json_type_array)) /* NVML answered: nothing held */
            json_object_object_add(d, "held_by_others_bytes", json_object_new_int64(0));
        return;
    }
    /* NVML's PIDs are this machine's: under --root --live, ask this machine's /proc and /etc/passwd. */
    /* Untraced: per-process paths differ from run to run and are no fixture material (GPUCHECKUP_FS_TRACE). */
    struct hostfs own, quiet = *ctx->fs;
    quiet.trace = NULL;
    bool own_open = !ctx->fs->live && hostfs_open(&own, "/") == 0;
    const struct hostfs *fs = own_open ? &own : &quiet;
    json_object *first = NULL;
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(procs, i);
        if (!json_object_is_type(p, json_type_object) || !mem_describe(fs, p))
            continue;
        others++;
        if (!first)
            first = p;
        if (nvml_num(p, "used_memory") > 0)
            held += nvml_num(p, "used_memory");
    }
    int64_t more = nvml_num(d, "processes_more");
    if (own_open)
        hostfs_close(&own);
    json_object_object_add(d, "held_by_others_bytes", json_object_new_int64(held));
    if (others == 0 && more <= 0)
        return;
    const char *id = mem_expect_idle                     ? "cuda.nvml-not-idle"
                     : total > 0 && held * 2 > total     ? "cuda.nvml-memory-held-most"
                                                         : "cuda.nvml-memory-held";
    char share[64] = "";
    if (total > 0)
        snprintf(share, sizeof(share), " of %.1f GiB", (double)total / MEM_GIB);
    const char *cmd = jsonget_str(first, "command");
    size_t count = others + (size_t)(more > 0 ? more : 0);
    char eg[96] = "";
    if (first)
        snprintf(eg, sizeof(eg), ", e.g. pid %lld (%s)", (long long)nvml_num(first, "pid"), cmd ? cmd : "not visible here");
    struct report_finding *f =
        report_add_finding(ctx->report, id, subj, "%zu other process%s hold%s %.1f GiB%s on %s (%s)%s", count,
                           count == 1 ? "" : "es", count == 1 ? "s" : "", (double)held / MEM_GIB, share, gpu, subj, eg);
    for (size_t i = 0; f && i < n && i < 8; i++) {
        json_object *p = json_object_array_get_idx(procs, i);
        if (jsonget_tri(p, "ours") == 0)
            mem_evidence(f, p);
    }
    if (f && more > 0)
        report_finding_add_evidence(f, "nvmlDevice*RunningProcesses", "%lld more than the %u listed per kind",
                                    (long long)more, NVML_MAX_PROCS);
}

void cuda_nvml_mem_metrics(struct report_section *sec)
{
    json_object *devs = jsonget(jsonget(sec->data, "nvml"), "devices");
    size_t n = json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        int64_t held = nvml_num(d, "held_by_others_bytes");
        if (held < 0)
            continue;
        char *subj = nvml_subject(d);
        json_object *m = json_object_new_object(), *l = json_object_new_object();
        json_object_object_add(l, "gpu", json_object_new_string(subj ? subj : "?"));
        json_object_object_add(m, "name", json_object_new_string("gpu_memory_held_bytes"));
        json_object_object_add(m, "help", json_object_new_string("GPU memory held by processes other than gpucheckup "
                                                                 "(NVML's compute and graphics processes), per GPU."));
        json_object_object_add(m, "labels", l);
        json_object_object_add(m, "value", json_object_new_int64(held));
        json_object_array_add(arr, m);
        free(subj);
    }
    if (json_object_array_length(arr) > 0)
        json_object_object_add(sec->data, "metrics", arr);
    else
        json_object_put(arr);
}

/* ---- --require free-memory>=NGiB ------------------------------------------------------------------ */

int cuda_mem_req_parse(const char *name, int *arg)
{
    unsigned v = 0;
    int used = 0;
    if (!str_starts_with(name, "free-memory>="))
        return -1;
    const char *s = name + strlen("free-memory>=");
    if (s[0] < '0' || s[0] > '9' || sscanf(s, "%5u%n", &v, &used) != 1 || strcmp(s + used, "GiB") != 0 || v == 0)
        return -1;
    *arg = (int)v;
    return 0;
}

/* Every GPU NVML reports memory for has at least ARG GiB free (a job may land on any of them); a GPU that
 * NVML cannot ask (blocked, lost) has no memory info and is not counted. */
bool cuda_mem_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    json_object *nvml = jsonget(doctor_data(r, "cuda"), "nvml");
    json_object *devs = jsonget(nvml, "devices");
    size_t n = json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0, counted = 0;
    int64_t need = (int64_t)arg * 1024 * 1024 * 1024, worst = -1;
    char *worst_subj = NULL;
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        int64_t fr = nvml_num(jsonget(d, "memory"), "free");
        if (fr < 0)
            continue;
        counted++;
        if (worst < 0 || fr < worst) {
            worst = fr;
            free(worst_subj);
            worst_subj = nvml_subject(d);
        }
    }
    if (counted == 0) {
        *detail = str_printf("NVML reported no GPU memory (%s)", nvml ? "no GPU answered" : "NVML did not run");
        return false;
    }
    bool ok = worst >= need;
    *detail = str_printf("%s: the least free memory of the %zu GPU%s NVML reports is %.1f GiB (%s), %d GiB needed",
                         ok ? "met" : "not met", counted, counted == 1 ? "" : "s", (double)worst / MEM_GIB,
                         worst_subj ? worst_subj : "?", arg);
    free(worst_subj);
    return ok;
}
