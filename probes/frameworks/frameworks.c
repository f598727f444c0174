/* frameworks.c: the frameworks probe: which PyTorch, TensorFlow, JAX, CuPy, ONNX Runtime, PaddlePaddle are installed, and for what GPU. */
#include <stdlib.h>
#include <string.h>

#include "frameworks_internal.h"
#include "jsonget.h"
#include "strutil.h"

static json_object *fw_str(const char *s)
{
    return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *fw_archs(const uint16_t *a, size_t n)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; arr && i < n; i++)
        json_object_array_add(arr, json_object_new_int(a[i]));
    return arr;
}

/* The architectures in its own GPU library's fatbinaries (frameworks_arch.c), or null. */
static json_object *fw_code_json(const struct fw_found *f)
{
    if (!f->code)
        return NULL;
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    static const char *const status[] = {"damaged", "not-elf", "no-fatbin", "ok"};
    json_object_object_add(o, "file", json_object_new_string(f->code_file));
    json_object_object_add(o, "status", json_object_new_string(status[f->code_status + 2]));
    json_object_object_add(o, "sass", fw_archs(f->code->sass, f->code->n_sass));
    json_object_object_add(o, "ptx", fw_archs(f->code->ptx, f->code->n_ptx));
    json_object_object_add(o, "containers", json_object_new_int64((int64_t)f->code->containers));
    json_object_object_add(o, "entries", json_object_new_int64((int64_t)f->code->entries));
    json_object_object_add(o, "truncated", json_object_new_boolean(f->code->truncated));
    return o;
}

static json_object *fw_found_json(const struct fw_found *f)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "name", json_object_new_string(f->kind->name));
    json_object_object_add(o, "label", json_object_new_string(f->kind->label));
    json_object_object_add(o, "distribution", fw_str(f->dist));
    json_object_object_add(o, "version", fw_str(f->version));
    json_object_object_add(o, "build", json_object_new_string(fw_build_name(f->build)));
    json_object_object_add(o, "cuda_version", fw_str(f->cuda));
    json_object_object_add(o, "rocm_version", fw_str(f->rocm));
    json_object_object_add(o, "detail", fw_str(f->extra));
    json_object_object_add(o, "site", json_object_new_string(f->site));
    json_object_object_add(o, "source", fw_str(f->source));
    json_object_object_add(o, "nvidia_pins", f->pins ? json_object_get(f->pins) : NULL);
    json_object_object_add(o, "damaged", fw_str(f->damaged));
    json_object_object_add(o, "gpu", f->gpu == FW_GPU_UNKNOWN ? NULL : json_object_new_boolean(f->gpu == FW_GPU_YES));
    json_object_object_add(o, "why", fw_str(f->why));
    json_object_object_add(o, "root", fw_str(f->root));
    if (f->imported)
        json_object_object_add(o, "import", json_object_get(f->imported));
    json_object_object_add(o, "gpu_code", fw_code_json(f));
    return o;
}

static json_object *fw_strv(char **v, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; a && i < n; i++)
        json_object_array_add(a, json_object_new_string(v[i]));
    return a;
}

static void fw_section_fill(struct report_section *sec, const struct fw_scan *s)
{
    json_object *envs = json_object_new_array();
    for (size_t e = 0; envs && e < s->n_envs; e++) {
        const struct fw_env *env = &s->envs[e];
        json_object *o = json_object_new_object(), *fws = json_object_new_array();
        if (!o || !fws) {
            json_object_put(o);
            json_object_put(fws);
            continue;
        }
        json_object_object_add(o, "prefix", json_object_new_string(env->prefix));
        json_object_object_add(o, "kind", fw_str(env->kind));
        json_object_object_add(o, "origin", fw_str(env->origin));
        json_object_object_add(o, "python", fw_str(env->python));
        json_object_object_add(o, "sites", fw_strv(env->sites, env->n_sites));
        for (size_t i = 0; i < s->n_found; i++)
            if (s->found[i].env == e)
                json_object_array_add(fws, fw_found_json(&s->found[i]));
        json_object_object_add(o, "frameworks", fws);
        json_object_array_add(envs, o);
    }
    json_object_object_add(sec->data, "environments", envs);
    json_object_object_add(sec->data, "frameworks_not_listed", json_object_new_int64((int64_t)s->dropped));
    json_object_object_add(sec->data, "environments_not_examined", json_object_new_int64((int64_t)s->envs_dropped));
    if (s->envs_dropped > 0)
        report_section_add_note(sec, "%zu more Python environment%s (past the first %d, or past 32 in a conda "
                                     "list or envs directory) %s not examined: --python=PATH names one to look at",
                                s->envs_dropped, s->envs_dropped == 1 ? "" : "s", FW_MAX_ENVS,
                                s->envs_dropped == 1 ? "was" : "were");
    if (s->dists_dropped > 0)
        report_section_add_note(sec, "%zu installed distribution%s (dist-info folders past the first %d of a site) %s "
                                     "not looked at: a framework among them may be missed",
                                s->dists_dropped, s->dists_dropped == 1 ? "" : "s", FW_MAX_DISTS,
                                s->dists_dropped == 1 ? "was" : "were");
    if (s->dropped > 0)
        report_section_add_note(sec, "%zu more framework cop%s past the first %d %s not listed", s->dropped,
                                s->dropped == 1 ? "y" : "ies", FW_MAX_FOUND, s->dropped == 1 ? "was" : "were");
}

/* --import's line under a copy's: what the framework said, and whether that is what gpucheckup predicted. */
static void fw_import_line(struct report_section *sec, const struct fw_found *f)
{
    const char *status = jsonget_str(f->imported, "status"), *err = jsonget_str(f->imported, "error");
    const char *said = jsonget_str(f->imported, "said");
    json_object *gpu = jsonget(f->imported, "gpu"), *agrees = jsonget(f->imported, "agrees");
    if (!status || strcmp(status, "ok") != 0) {
        report_section_add_line(sec, status && strcmp(status, "not-run") == 0 ? REPORT_MARK_SKIP : REPORT_MARK_WARN,
                                "  imported", "%s%s", err ? err : "no answer", agrees && json_object_get_boolean(agrees)
                                ? " (as predicted: it fails without the wheels it pins)" : "");
        return;
    }
    bool says = gpu && json_object_get_boolean(gpu);
    report_section_add_line(sec, !agrees ? REPORT_MARK_INFO : json_object_get_boolean(agrees) ? REPORT_MARK_OK
                            : REPORT_MARK_WARN, "  imported", "%s %s: says it will %suse the GPU%s (%s)",
                            f->kind->label, jsonget_str(f->imported, "version") ? jsonget_str(f->imported, "version")
                            : "", says ? "" : "not ", !agrees ? "" : json_object_get_boolean(agrees)
                            ? ", as predicted" : ", not as predicted (frameworks.prediction-wrong)",
                            said ? said : "");
}

static void fw_lines(struct report_section *sec, const struct fw_scan *s)
{
    if (s->n_found == 0) {
        report_section_add_line(sec, REPORT_MARK_INFO, "Frameworks", "none found in %zu Python environment%s", s->n_envs,
                                s->n_envs == 1 ? "" : "s");
        report_section_add_note(sec, "no PyTorch, TensorFlow, JAX, CuPy, ONNX Runtime or PaddlePaddle in %zu Python environment%s "
                                "(--python=PATH names others)", s->n_envs, s->n_envs == 1 ? "" : "s");
        return;
    }
    for (size_t i = 0; i < s->n_found; i++) {
        const struct fw_found *f = &s->found[i];
        /* a warning where this copy is at fault; information where the machine has no GPU for it */
        bool own = f->root && str_starts_with(f->root, "frameworks.") && f->build != FW_BUILD_CPU;
        enum report_mark mark = f->gpu == FW_GPU_YES ? REPORT_MARK_OK
                              : own ? REPORT_MARK_WARN
                              : f->gpu == FW_GPU_NO ? REPORT_MARK_INFO : REPORT_MARK_SKIP;
        report_section_add_line(sec, mark, f->kind->label, "%s (%s): %s build%s%s: %s",
                                f->version[0] ? f->version : "version unknown", s->envs[f->env].prefix,
                                fw_build_name(f->build), f->cuda[0] ? " for CUDA " : "", f->cuda, f->why ? f->why : "");
        if (f->imported)
            fw_import_line(sec, f);
    }
}

static int frameworks_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct fw_scan *s = calloc(1, sizeof(*s));
    if (!s) {
        ctx->error = str_dup("out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    fw_envs_find(ctx->fs, s);
    fw_read_all(ctx->fs, s);
    fw_judge_all(ctx, s);
    fw_import_all(ctx, sec, s);
    fw_section_fill(sec, s);
    fw_lines(sec, s);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    fw_scan_free(s);
    free(s);
    return PROBE_DONE;
}

static const struct check_set frameworks_check_sets[] = {
    {fw_checks, &fw_n_checks},
    {NULL, NULL},
};

static const char *const frameworks_deps[] = {"cpu", "pci", "cuda", NULL};

const struct probe probe_frameworks = {
    .name = "frameworks",
    .stack = PROBE_STACK_FRAMEWORKS,
    .title = "PyTorch, TensorFlow, JAX, CuPy, ONNX Runtime and PaddlePaddle in each\n"
             "Python environment (VIRTUAL_ENV, CONDA_PREFIX, python3 on PATH, conda's\n"
             "lists, the system's, the user site, --python): what each is built for,\n"
             "read from its files (nothing is imported), and whether it will use\n"
             "the GPU, or why not",
    .deps = frameworks_deps,
    .check_sets = frameworks_check_sets,
    .requires = frameworks_requires,
    .options = frameworks_option_rows,
    .options_title = "Frameworks (frameworks, check)",
    .options_reset = frameworks_options_reset,
    .run = frameworks_run,
    .verdict = frameworks_verdict,
};
