/* frameworks_verdict.c: one verdict line per framework copy, the NAME-gpu targets and --require NAME-gpu. */
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "doctor_facts.h"
#include "frameworks_internal.h"
#include "jsonget.h"
#include "strutil.h"

/* The framework lines the verdict holds at most (doctor.h's DOCTOR_MAX_LINES is for every probe). */
#define FW_MAX_LINES 6

/* Calls FN for every framework copy in the frameworks section (with its environment's prefix). */
static void fw_each(const struct report *r, void (*fn)(json_object *f, const char *prefix, void *arg), void *arg)
{
    json_object *envs = jsonget(doctor_data(r, "frameworks"), "environments");
    for (size_t e = 0; envs && json_object_is_type(envs, json_type_array) && e < json_object_array_length(envs); e++) {
        json_object *env = json_object_array_get_idx(envs, e), *fws = jsonget(env, "frameworks");
        for (size_t i = 0; fws && json_object_is_type(fws, json_type_array) && i < json_object_array_length(fws); i++)
            fn(json_object_array_get_idx(fws, i), jsonget_str(env, "prefix"), arg);
    }
}

/* What a copy's line and target go by: with --import, what the framework said when imported wins over the
 * prediction (1, 0, -1 unknown); *ROOT and *WHY (owned by F) say why when reality differs from it. */
static int fw_reality(json_object *f, const char **root, const char **why)
{
    json_object *imp = jsonget(f, "import");
    const char *status = jsonget_str(imp, "status");
    int predicted = jsonget_tri(f, "gpu");
    json_object *agrees = jsonget(imp, "agrees");
    if (!status || strcmp(status, "not-run") == 0 || (agrees && json_object_get_boolean(agrees)))
        return predicted;
    if (strcmp(status, "ok") != 0) { /* it cannot even be imported */
        *root = "frameworks.import-failed";
        *why = jsonget_str(imp, "error");
        return 0;
    }
    int said = jsonget_tri(imp, "gpu");
    if (said >= 0 && predicted >= 0 && said != predicted) {
        *root = said ? NULL : "frameworks.prediction-wrong";
        *why = jsonget_str(imp, "said");
    }
    return said >= 0 ? said : predicted;
}

/* The root cause of a copy whose reason is below it (the CUDA stack): the cuda probe's own root. */
static const struct report_finding *fw_stack_root(const struct report *r)
{
    const struct probe *cuda = probe_find("cuda");
    return cuda ? doctor_target_root(r, cuda) : NULL;
}

/* "PyTorch 2.15.0+cu132 (/opt/venv): will not use the GPU: built for CUDA 13.2, ... (frameworks.cuda-too-new)". */
static char *fw_line(const struct report *r, json_object *f, const char *prefix)
{
    const char *label = jsonget_str(f, "label"), *version = jsonget_str(f, "version"), *why = jsonget_str(f, "why");
    const char *root = jsonget_str(f, "root"), *build = jsonget_str(f, "build"), *seen = NULL, *seen_root = NULL;
    int gpu = fw_reality(f, &seen_root, &seen);
    char *why_seen = NULL;
    if (seen) { /* imported, it says otherwise: that is the line, and the prediction is what it was */
        why_seen = str_printf("imported, %s%s (gpucheckup predicted: %s)", jsonget_str(jsonget(f, "import"), "status") &&
                              strcmp(jsonget_str(jsonget(f, "import"), "status"), "ok") != 0 ? "it fails: " : "it says ",
                              seen, why ? why : "?");
        why = why_seen;
        root = seen_root;
    }
    const struct report_finding *stack = NULL;
    if (gpu == 0 && !root && !seen && (stack = fw_stack_root(r)))
        root = stack->id;
    const char *state = gpu == 1 ? "will use the GPU"
                      : build && strcmp(build, "cpu") == 0 ? "CPU only"
                      : gpu == 0 ? "will not use the GPU" : "cannot tell whether it will use the GPU";
    char *line = str_printf("%s %s (%s): %s: %s%s%s%s%s%s", label ? label : "?", version ? version : "(version unknown)",
                            prefix ? prefix : "?", state, why ? why : "", stack ? ": " : "", stack ? stack->message : "",
                            root ? " (" : "", root ? root : "", root ? ")" : "");
    free(why_seen);
    return line;
}

struct fw_lines_walk {
    const struct report *r;
    struct doctor_lines *out;
    size_t n;
};

static void fw_line_one(json_object *f, const char *prefix, void *arg)
{
    struct fw_lines_walk *w = arg;
    if (w->n++ < FW_MAX_LINES)
        doctor_lines_add(w->out, fw_line(w->r, f, prefix));
}

/* One framework's target: ready when one of its copies will use the GPU. */
struct fw_target_walk {
    const struct report *r;
    const char *name;
    size_t copies, ready;
    const char *first_root;
    char *detail;
};

static void fw_target_one(json_object *f, const char *prefix, void *arg)
{
    struct fw_target_walk *w = arg;
    const char *name = jsonget_str(f, "name");
    if (!name || strcmp(name, w->name) != 0)
        return;
    w->copies++;
    const char *seen_root = NULL, *seen = NULL;
    bool ready = fw_reality(f, &seen_root, &seen) == 1;
    if (!w->first_root && !ready) {
        w->first_root = seen ? seen_root : jsonget_str(f, "root");
        /* a reason below it (the CUDA stack's root), as its line names */
        const struct report_finding *stack = !w->first_root && !seen && jsonget_tri(f, "gpu") == 0
                                           ? fw_stack_root(w->r) : NULL;
        if (stack)
            w->first_root = stack->id;
    }
    if (ready && w->ready++ > 0)
        return;
    if (ready || !w->detail) {
        free(w->detail);
        const char *why = seen ? seen : jsonget_str(f, "why");
        w->detail = str_printf("%s %s (%s): %s%s", jsonget_str(f, "label"), jsonget_str(f, "version") ? jsonget_str(f, "version")
                               : "(version unknown)", prefix ? prefix : "?", seen ? "imported: " : "", why ? why : "");
    }
}

static bool fw_target(const struct report *r, const char *fw, struct fw_target_walk *w)
{
    memset(w, 0, sizeof(*w));
    w->r = r;
    w->name = fw;
    fw_each(r, fw_target_one, w);
    return w->ready > 0;
}

void frameworks_verdict(struct report *r, struct doctor_lines *out)
{
    if (!doctor_data(r, "frameworks"))
        return;
    struct fw_lines_walk lw = {r, out, 0};
    fw_each(r, fw_line_one, &lw);
    if (lw.n > FW_MAX_LINES)
        doctor_lines_add(out, str_printf("... and %zu more framework%s (gpucheckup frameworks)", lw.n - FW_MAX_LINES,
                                         lw.n - FW_MAX_LINES == 1 ? "" : "s"));
    for (size_t k = 0; k < fw_n_kinds; k++) {
        struct fw_target_walk w;
        bool ready = fw_target(r, fw_kinds[k].name, &w);
        if (w.copies > 0) {
            char *t = str_printf("%s-gpu", fw_kinds[k].name);
            const char *reasons[2] = {ready ? NULL : w.first_root, NULL};
            if (t)
                report_set_target(r, t, ready, w.detail, reasons);
            free(t);
        }
        free(w.detail);
    }
}

/* --require NAME-gpu: NAME is a row of fw_kinds (its index in *ARG). */
static int fw_req_parse(const char *name, int *arg)
{
    for (size_t k = 0; k < fw_n_kinds; k++) {
        size_t n = strlen(fw_kinds[k].name);
        if (strncmp(name, fw_kinds[k].name, n) == 0 && strcmp(name + n, "-gpu") == 0) {
            *arg = (int)k;
            return 0;
        }
    }
    return -1;
}

static bool fw_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    const struct fw_kind *k = &fw_kinds[arg];
    if (!doctor_data(r, "frameworks")) {
        *detail = str_printf("the frameworks probe did not run");
        return false;
    }
    struct fw_target_walk w;
    bool ready = fw_target(r, k->name, &w);
    *detail = w.copies == 0 ? str_printf("%s is not installed in any Python environment found", k->label)
                            : str_printf("%s", w.detail ? w.detail : "");
    free(w.detail);
    return ready;
}

const struct probe_require frameworks_requires[] = {
    {"torch-gpu, tensorflow-gpu, jax-gpu, cupy-gpu, onnxruntime-gpu, paddle-gpu", NULL, fw_req_parse, fw_req_eval,
     PROBE_CHAIN_STACK},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_STACK},
};
