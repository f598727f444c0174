/* frameworks_import.c: --import: each environment's Python imports its framework in a child; the answer meets the prediction. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frameworks_internal.h"
#include "frameworks_parse.h"
#include "jsonget.h"
#include "ldsearch.h"
#include "strutil.h"

#define FW_IMPORT_OUT_MAX (64 * 1024) /* the script prints a few hundred bytes */
#define FW_IMPORT_TEXT_MAX 300        /* an exception's line, a device's name, as reported */
#define FW_IMPORT_LIST_MAX 16         /* devices, providers */

/* What each framework is asked, for messages (the script's branches ask exactly this). */
static const struct {
    const char *kind;
    const char *asked;
} fw_asked[] = {
    {"torch", "torch.cuda.is_available() and a matmul on cuda:0"},
    {"tensorflow", "tf.config.list_physical_devices('GPU')"},
    {"jax", "jax.devices()"},
    {"cupy", "cupy.cuda.runtime.getDeviceCount()"},
    {"onnxruntime", "onnxruntime.get_available_providers()"},
    {"paddle", "paddle.device.cuda.device_count()"},
};

static const char *fw_asked_of(const char *kind)
{
    for (size_t i = 0; i < sizeof(fw_asked) / sizeof(fw_asked[0]); i++)
        if (strcmp(fw_asked[i].kind, kind) == 0)
            return fw_asked[i].asked;
    return kind;
}

struct fw_import_job {
    char *python;        /* the interpreter run (heap) */
    char *argv0;         /* its argv[0] (heap): PREFIX/bin/python3 where the interpreter is pyvenv.cfg's, so that
                            Python still finds the venv (PEP 405: from argv[0]'s folder and the one above) */
    const char *module;  /* the fw_kinds row's name: the script's argv[1] */
};

/* In the isolated child: run PYTHON -B -c SCRIPT MODULE as a grandchild (same process group: a timeout kills
 * both), its stdout on a pipe, its stderr the child's (the result's stderr_tail). Returns {"stdout": what it
 * printed, "exit": its status or "signal": the signal}. */
static json_object *fw_import_child(void *arg)
{
    const struct fw_import_job *j = arg;
    int p[2];
    if (pipe(p) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid < 0)
        return NULL;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(p[1], STDOUT_FILENO);
        close(p[0]);
        close(p[1]);
        /* Python finds a venv's pyvenv.cfg from argv[0], not from the link's target */
        char *const argv[] = {j->argv0, (char *)"-B", (char *)"-c", (char *)fw_import_script, (char *)j->module, NULL};
        execv(j->python, argv);
        fprintf(stderr, "cannot run %s: %s\n", j->python, strerror(errno));
        _exit(127);
    }
    close(p[1]);
    char *buf = malloc(FW_IMPORT_OUT_MAX + 1);
    size_t len = 0;
    for (;;) {
        char tmp[4096];
        ssize_t r = read(p[0], tmp, sizeof(tmp));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t take = buf && len < FW_IMPORT_OUT_MAX ? (size_t)r : 0;
        if (take > FW_IMPORT_OUT_MAX - len)
            take = FW_IMPORT_OUT_MAX - len;
        if (take)
            memcpy(buf + len, tmp, take);
        len += take;
    }
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    json_object *o = json_object_new_object();
    if (buf)
        buf[len] = '\0';
    json_object_object_add(o, "stdout", json_object_new_string_len(buf ? buf : "", buf ? (int)len : 0));
    if (WIFSIGNALED(st))
        json_object_object_add(o, "signal", json_object_new_int(WTERMSIG(st)));
    else
        json_object_object_add(o, "exit", json_object_new_int(WEXITSTATUS(st)));
    free(buf);
    return o;
}

static bool fw_is_file(const struct hostfs *fs, const char *path)
{
    struct stat st;
    return hostfs_stat(fs, path, &st, false) == 0 && !S_ISDIR(st.st_mode);
}

/* The interpreter of environment E (a new string), or NULL: the one it was found by, its bin/python3, the
 * interpreter its pyvenv.cfg names (`executable`, else `home`/python3), for the user site the system's.
 * *ARGV0 (a new string) is what it is run as. */
static char *fw_env_python(const struct hostfs *fs, const struct fw_env *e, char **argv0)
{
    char *py = e->python && fw_is_file(fs, e->python) ? str_dup(e->python) : ldsearch_join(e->prefix, "bin/python3");
    if (py && fw_is_file(fs, py)) {
        *argv0 = str_dup(py);
        if (*argv0)
            return py;
        free(py);
        return NULL;
    }
    *argv0 = py; /* a venv whose link is gone: its base interpreter, run under the venv's name */
    py = NULL;
    char *cfg = ldsearch_join(e->prefix, "pyvenv.cfg"), *text = NULL;
    size_t len = 0;
    if (cfg && hostfs_read_file(fs, cfg, FW_MAX_READ, &text, &len) == 0 && text) {
        char exe[1024], home[1024];
        if (fw_cfg_get(text, len, "executable", exe, sizeof(exe)) && exe[0] == '/' && fw_is_file(fs, exe)) {
            py = str_dup(exe);
        } else if (fw_cfg_get(text, len, "home", home, sizeof(home)) && home[0] == '/') {
            py = ldsearch_join(home, "python3");
            if (py && !fw_is_file(fs, py)) {
                free(py);
                py = NULL;
            }
        }
    }
    free(text);
    free(cfg);
    if (!py && e->kind && strcmp(e->kind, "user") == 0 && fw_is_file(fs, "/usr/bin/python3")) {
        py = str_dup("/usr/bin/python3");
        free(*argv0);
        *argv0 = str_dup(py);
    }
    if (!py || !*argv0) {
        free(py);
        free(*argv0);
        *argv0 = py = NULL;
    }
    return py;
}

/* A string of the script's output, bounded and sanitised, or NULL. */
static json_object *fw_out_str(json_object *o, const char *key)
{
    const char *s = jsonget_str(o, key);
    if (!s || !*s)
        return NULL;
    char buf[FW_IMPORT_TEXT_MAX + 1];
    snprintf(buf, sizeof(buf), "%s", s);
    return json_object_new_string(str_sanitize(buf));
}

static json_object *fw_out_strv(json_object *o, const char *key)
{
    json_object *a = jsonget(o, key);
    if (!a || !json_object_is_type(a, json_type_array))
        return NULL;
    json_object *r = json_object_new_array();
    for (size_t i = 0; r && i < json_object_array_length(a) && i < FW_IMPORT_LIST_MAX; i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(a, i));
        char buf[FW_IMPORT_TEXT_MAX + 1];
        snprintf(buf, sizeof(buf), "%s", s ? s : "");
        json_object_array_add(r, json_object_new_string(str_sanitize(buf)));
    }
    return r;
}

static json_object *fw_out_bool(json_object *o, const char *key)
{
    json_object *v = jsonget(o, key);
    return v && json_object_is_type(v, json_type_boolean) ? json_object_new_boolean(json_object_get_boolean(v)) : NULL;
}

/* The last non-empty line of TEXT (the child's stderr tail: a traceback's exception), into BUF. */
static const char *fw_last_line(const char *text, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!text)
        return buf;
    size_t end = strlen(text);
    while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' '))
        end--;
    size_t start = end;
    while (start > 0 && text[start - 1] != '\n')
        start--;
    snprintf(buf, len, "%.*s", (int)(end - start), text + start);
    return str_sanitize(buf);
}

/* The import object of one copy from the child's RES: what the framework said, or why it said nothing
 * (*FAILED: it could not be imported at all; the reason is the object's "error"). */
static json_object *fw_import_object(const char *python, const struct isolate_result *res, bool *failed)
{
    json_object *imp = json_object_new_object();
    char line[FW_IMPORT_TEXT_MAX + 1], *err = NULL;
    *failed = false;
    json_object_object_add(imp, "python", json_object_new_string(python));
    json_object *out = NULL;
    if (res->status == ISOLATE_OK) {
        const char *text = jsonget_str(res->value, "stdout");
        out = text && *text ? isolate_json_parse(text, strlen(text), 4, true, NULL) : NULL;
        json_object *sig = jsonget(res->value, "signal");
        int64_t code = jsonget_int(res->value, "exit", -1);
        if (sig)
            err = str_printf("Python was killed by %s: %s", isolate_signal_name(json_object_get_int(sig)),
                             fw_last_line(res->stderr_tail, line, sizeof(line)));
        else if (!out || !json_object_is_type(out, json_type_object))
            err = str_printf("Python %s: %s", code != 0
                             ? "failed" : "printed no answer", fw_last_line(res->stderr_tail, line, sizeof(line)));
    } else if (res->budget_spent) {
        json_object_object_add(imp, "status", json_object_new_string("not-run"));
        json_object_object_add(imp, "error", json_object_new_string("not run: the run's time (--timeout) was spent"));
        return imp;
    } else {
        err = str_printf("%s%s%s", res->detail ? res->detail : isolate_status_name(res->status),
                         res->stderr_tail ? ": " : "", fw_last_line(res->stderr_tail, line, sizeof(line)));
    }
    if (out && !err) {
        const char *stage = jsonget_str(out, "stage");
        json_object_object_add(imp, "version", fw_out_str(out, "version"));
        json_object_object_add(imp, "file", fw_out_str(out, "file"));
        json_object_object_add(imp, "cuda", fw_out_str(out, "cuda"));
        json_object_object_add(imp, "available", fw_out_bool(out, "available"));
        int64_t n = jsonget_int(out, "n", -1);
        if (n >= 0)
            json_object_object_add(imp, "device_count", json_object_new_int64(n));
        json_object_object_add(imp, "devices", fw_out_strv(out, "devices"));
        json_object_object_add(imp, "providers", fw_out_strv(out, "providers"));
        json_object_object_add(imp, "matmul", fw_out_bool(out, "matmul"));
        json_object_object_add(imp, "gpu", fw_out_bool(out, "gpu"));
        json_object *e = fw_out_str(out, "error");
        bool at_import = !stage || strcmp(stage, "query") != 0;
        json_object_object_add(imp, "status", json_object_new_string(e && at_import ? "failed" : "ok"));
        json_object_object_add(imp, "error", e);
        *failed = e && at_import;
    } else {
        str_sanitize(err);
        json_object_object_add(imp, "status",
                               json_object_new_string(res->status == ISOLATE_TIMEOUT ? "timeout" : "failed"));
        json_object_object_add(imp, "error", json_object_new_string(err ? err : "no answer"));
        *failed = true;
    }
    json_object_object_add(imp, "seconds", json_object_new_double((double)(int64_t)(res->elapsed_ms / 10.0) / 100.0));
    json_object_put(out);
    free(err);
    return imp;
}

/* "True (1 device: NVIDIA H100)", "['AzureExecutionProvider', 'CPUExecutionProvider']": what it said, in BUF. */
static const char *fw_said(const struct fw_found *f, json_object *imp, char *buf, size_t len)
{
    json_object *list = jsonget(imp, strcmp(f->kind->name, "onnxruntime") == 0 ? "providers" : "devices");
    char names[400] = "";
    size_t used = 0;
    for (size_t i = 0; list && i < json_object_array_length(list) && used + 1 < sizeof(names); i++) {
        int w = snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
                         json_object_get_string(json_object_array_get_idx(list, i)));
        used += w > 0 ? (size_t)w : 0;
    }
    if (used >= sizeof(names))
        used = sizeof(names) - 1;
    json_object *avail = jsonget(imp, "available"), *mm = jsonget(imp, "matmul");
    const char *err = jsonget_str(imp, "error");
    if (strcmp(f->kind->name, "torch") == 0)
        snprintf(buf, len, "is_available() %s%s%s%s%s", avail && json_object_get_boolean(avail) ? "True" : "False",
                 used ? " (" : "", names, used ? ")" : "", !mm ? "" : json_object_get_boolean(mm)
                 ? ", the matmul right" : ", the matmul wrong");
    else if (strcmp(f->kind->name, "onnxruntime") == 0)
        snprintf(buf, len, "providers %s", used ? names : "none");
    else
        snprintf(buf, len, "%s", used ? names : "no GPU device");
    if (err) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, "%s%s", l ? "; " : "", err);
    }
    return buf;
}

/* Compare copy F's prediction with IMP, what the framework said; findings for a failure or a disagreement. */
static void fw_import_judge(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f, json_object *imp,
                            bool failed)
{
    char name[256], said[700];
    fw_name(s, f, name, sizeof(name));
    const char *python = jsonget_str(imp, "python"), *err = jsonget_str(imp, "error");
    if (failed) {
        struct report_finding *fd = report_add_finding(ctx->report, "frameworks.import-failed", python,
                                                       "%s: cannot be imported by %s: %s", name, python, err);
        if (fd)
            report_finding_set_hint(fd, "Run `%s -c 'import %s'` to see the whole error; reinstall %s or what it "
                                    "says is missing in that environment (`%s -m pip install --force-reinstall "
                                    "%s`).", python, f->kind->name, f->kind->label, python,
                                    f->dist[0] ? f->dist : f->kind->name);
        /* missing pinned wheels were predicted to fail the import: that is the prediction proven, not wrong */
        bool predicted = f->root && strcmp(f->root, "frameworks.nvidia-pins") == 0;
        if (fd && predicted)
            report_finding_set_cause(fd, f->root, f->source);
        json_object_object_add(imp, "agrees", predicted ? json_object_new_boolean(true) : NULL);
        return;
    }
    json_object_object_add(imp, "said", json_object_new_string(fw_said(f, imp, said, sizeof(said))));
    json_object *gpu = jsonget(imp, "gpu");
    if (!gpu || f->gpu == FW_GPU_UNKNOWN) {
        json_object_object_add(imp, "agrees", NULL);
        return;
    }
    bool says = json_object_get_boolean(gpu), predicted = f->gpu == FW_GPU_YES;
    json_object_object_add(imp, "agrees", json_object_new_boolean(says == predicted));
    if (says == predicted)
        return;
    struct report_finding *fd = report_add_finding(
        ctx->report, "frameworks.prediction-wrong", python, "%s: gpucheckup said it will %suse the GPU (%s), but "
        "imported by %s, %s says it will %s: %s", name, predicted ? "" : "not ", f->why ? f->why : "",
        python, fw_asked_of(f->kind->name), says ? "" : "not", said);
    if (fd)
        report_finding_add_evidence(fd, python, "%s: %s", fw_asked_of(f->kind->name), said);
}

/* Without --import nothing is run. Under --root (a tree or a snapshot, with or without --live) the
 * environments are the tree's: their Python is never run, here or anywhere. */
void fw_import_all(struct probe_ctx *ctx, struct report_section *sec, struct fw_scan *s)
{
    if (!frameworks_import_wanted() || s->n_found == 0)
        return;
    if (!probe_host_files(ctx)) {
        report_section_add_note(sec, "--import: nothing imported: the environments are --root's, whose Python is "
                                "never run (only a run on this machine without --root imports)");
        return;
    }
    struct isolate_job *jobs = calloc(s->n_found, sizeof(*jobs));
    struct fw_import_job *args = calloc(s->n_found, sizeof(*args));
    size_t n = 0;
    for (size_t i = 0; jobs && args && i < s->n_found; i++) {
        struct fw_found *f = &s->found[i];
        args[i].python = fw_env_python(ctx->fs, &s->envs[f->env], &args[i].argv0);
        args[i].module = f->kind->name;
        if (!args[i].python) {
            f->imported = json_object_new_object();
            json_object_object_add(f->imported, "status", json_object_new_string("not-run"));
            json_object_object_add(f->imported, "error", json_object_new_string(
                "not run: no interpreter found (bin/python3, pyvenv.cfg; --python=PATH names one)"));
            continue;
        }
        jobs[n].fn = fw_import_child;
        jobs[n].arg = &args[i];
        n++;
    }
    if (n > 0)
        probe_isolate_many(ctx, jobs, n);
    for (size_t j = 0; j < n; j++) {
        struct fw_import_job *a = jobs[j].arg;
        struct fw_found *f = &s->found[(size_t)(a - args)];
        bool failed = false;
        f->imported = fw_import_object(a->python, &jobs[j].result, &failed);
        if (!jobs[j].result.budget_spent)
            fw_import_judge(ctx, s, f, f->imported, failed);
        isolate_result_clear(&jobs[j].result);
    }
    for (size_t i = 0; args && i < s->n_found; i++) {
        free(args[i].python);
        free(args[i].argv0);
    }
    free(args);
    free(jobs);
}
