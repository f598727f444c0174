/* frameworks_minor.c: a framework's pinned CUDA library whose copy the loader takes first is an older minor than it needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frameworks_internal.h"
#include "frameworks_parse.h"
#include "jsonget.h"
#include "ldsearch.h"
#include "strutil.h"

#define FW_MINOR_MAX_LD 32 /* LD_LIBRARY_PATH directories looked at */

/* Which pinned libraries a framework refuses at an older minor than it was built with. JAX: its CUDA plugin's
 * _check_cuda_versions (formerly jax/_src/xla_bridge.py) asks cuDNN, cuBLAS, cuFFT, cuSOLVER, cuSPARSE and
 * cuPTI their version at start and fails when one is older (major.minor) than the build ("Found cuDNN version
 * ..., but JAX was built against ..."). PyTorch (torch/backends/cudnn/__init__.py) and TensorFlow (its cuDNN
 * version check) refuse a cuDNN 9 of an older minor than the build's. The pin's minimum stands for the build's
 * version (the plugin pins nvidia-cudnn-cu12>=9.8). Other libraries: no rule, nothing said. */
static const struct {
    const char *kind, *part, *label;
} fw_minor_rules[] = {
    {"jax", "cudnn", "cuDNN"},     {"jax", "cublas", "cuBLAS"},         {"jax", "cufft", "cuFFT"},
    {"jax", "cusolver", "cuSOLVER"}, {"jax", "cusparse", "cuSPARSE"},   {"jax", "cuda-cupti", "cuPTI"},
    {"torch", "cudnn", "cuDNN"},   {"tensorflow", "cudnn", "cuDNN"},
};

/* The rule for F's pin NAME ("nvidia-cudnn-cu12"), or -1. */
static int fw_minor_rule(const struct fw_found *f, const char *name)
{
    for (size_t i = 0; i < sizeof(fw_minor_rules) / sizeof(fw_minor_rules[0]); i++) {
        size_t pl = strlen(fw_minor_rules[i].part);
        if (strcmp(f->kind->name, fw_minor_rules[i].kind) == 0 && strncmp(name, "nvidia-", 7) == 0 &&
            strncmp(name + 7, fw_minor_rules[i].part, pl) == 0 && strncmp(name + 7 + pl, "-cu", 3) == 0)
            return (int)i;
    }
    return -1;
}

/* The lowest version REQ allows ("<10.0,>=9.8": "9.8"; "==9.10.2.21": itself), into OUT; false when none. */
static bool fw_minor_minimum(const char *req, char *out, size_t len)
{
    out[0] = '\0';
    for (const char *p = req; p && *p;) {
        size_t k = strcspn(p, ",");
        if (k > 2 && (strncmp(p, ">=", 2) == 0 || (strncmp(p, "==", 2) == 0 && p[2] != '=') || strncmp(p, "~=", 2) == 0))
            snprintf(out, len, "%.*s", (int)strspn(p + 2, "0123456789."), p + 2);
        p += k + (p[k] == ',');
    }
    return out[0] != '\0';
}

/* Where the loader takes SONAME for a framework whose wheels are in SITE: the first LD_LIBRARY_PATH directory
 * holding it (LD_LIBRARY_PATH comes before the wheels' RUNPATH), else the wheel's own SITE/nvidia/DIR/lib (then
 * false: that copy's version is frameworks.nvidia-pins's business), else ld.so.cache and the default
 * directories. RPATH: the framework finds its wheels through DT_RPATH (PyTorch), before LD_LIBRARY_PATH. PATH (heap), HOW ("LD_LIBRARY_PATH entry X", "ld.so.cache") and VERSION are set when true. */
static bool fw_minor_copy(struct probe_ctx *ctx, const char *site, const char *dir, const char *soname, bool rpath,
                          char **path, char *how, size_t hl, char *version, size_t vl)
{
    char *own = str_printf("%s/nvidia/%s/lib", site, dir), *wreal = own ? ldsearch_realpath(ctx->fs, own) : NULL;
    char *ownfile = own ? ldsearch_join(own, soname) : NULL;
    struct stat ost;
    bool have_own = ownfile && hostfs_stat(ctx->fs, ownfile, &ost, true) == 0;
    free(ownfile);
    /* PyTorch's libraries find the wheels through DT_RPATH, searched before LD_LIBRARY_PATH: its wheel wins */
    const char *ldlp = rpath && have_own ? NULL : getenv("LD_LIBRARY_PATH");
    char *copy = ldlp ? str_dup(ldlp) : NULL, *save = NULL;
    bool found = false, mine = false;
    size_t nld = 0;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t && !found && !mine && nld < FW_MINOR_MAX_LD;
         t = strtok_r(NULL, ":", &save)) {
        if (t[0] != '/')
            continue;
        nld++;
        char *cand = ldsearch_join(t, soname), *dreal = ldsearch_realpath(ctx->fs, t);
        struct stat st;
        mine = dreal && wreal && strcmp(dreal, wreal) == 0;
        if (!mine && cand && hostfs_stat(ctx->fs, cand, &st, true) == 0 && S_ISREG(st.st_mode)) {
            found = true;
            snprintf(how, hl, "LD_LIBRARY_PATH entry %s", t);
            fw_file_version(ctx->fs, cand, version, vl);
            const char *tail = strstr(t, "/nvidia/"); /* another wheel's lib directory: its dist-info says */
            if (!version[0] && tail && strchr(tail + 8, '/') && strcmp(strchr(tail + 8, '/'), "/lib") == 0) {
                char *osite = str_printf("%.*s", (int)(tail - t), t), *x = str_dup(tail + 8), w[160] = "";
                if (osite && x) {
                    *strchr(x, '/') = '\0';
                    fw_lib_wheel(ctx->fs, osite, x, soname, w, sizeof(w));
                }
                const char *sp = strchr(w, ' ');
                snprintf(version, vl, "%s", sp ? sp + 1 : "");
                free(osite);
                free(x);
            }
            *path = cand;
            cand = NULL;
        }
        free(cand);
        free(dreal);
    }
    free(copy);
    if (!found && !mine && !have_own) {
        struct ldsearch ls;
        const char *via = NULL;
        if (ldsearch_init(&ls, ctx->fs, NULL) == 0) {
            char *p = ldsearch_find(&ls, soname, &via);
            if (p) {
                found = true;
                snprintf(how, hl, "%s", via ? via : "the loader's path");
                fw_file_version(ctx->fs, p, version, vl);
                *path = p;
            }
            ldsearch_free(&ls);
        }
    }
    free(own);
    free(wreal);
    return found && version[0];
}

/* What the framework does with the older copy. */
static const char *fw_minor_effect(const struct fw_found *f)
{
    if (strcmp(f->kind->name, "jax") == 0)
        return "JAX fails at start (\"Found %s version %s, but JAX was built against %s\") and has no GPU";
    if (strcmp(f->kind->name, "torch") == 0)
        return "PyTorch refuses it at its first cuDNN use (\"cuDNN version incompatibility\": %s %s, built with %s)";
    return "TensorFlow refuses it (\"Loaded runtime %s library: %s but source was compiled with: %s\") and "
           "convolutions fail";
}

static void fw_minor_one(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f, json_object *pin)
{
    const char *name = jsonget_str(pin, "name"), *spec = jsonget_str(pin, "spec"), *state = jsonget_str(pin, "state");
    int rule = name ? fw_minor_rule(f, name) : -1;
    char so[32], req[200], min[64], *path = NULL, how[600] = "", v[64] = "";
    if (rule < 0 || !spec || (state && strcmp(state, "other-python") == 0))
        return;
    fw_pin_req(spec, req, sizeof(req));
    int vmaj = -1, vmin = -1, mmaj = -1, mmin = -1;
    /* the soname of the minimum's major (cuDNN: ">=9.8" is libcudnn.so.9, whatever "<10.0" says) */
    if (!fw_minor_minimum(req, min, sizeof(min)) || sscanf(min, "%d.%d", &mmaj, &mmin) != 2 ||
        !fw_pin_soname(name, min, so, sizeof(so)))
        return;
    const char *dir = name + 7; /* the wheel's folder: nvidia/cudnn, nvidia/cuda_cupti */
    char wdir[48];
    snprintf(wdir, sizeof(wdir), "%.*s", (int)(strstr(dir, "-cu") ? (size_t)(strrchr(dir, '-') - dir) : strlen(dir)), dir);
    for (char *c = wdir; *c; c++)
        *c = *c == '-' ? '_' : *c;
    if (!fw_minor_copy(ctx, f->site, wdir, so, strcmp(f->kind->name, "torch") == 0, &path, how, sizeof(how), v, sizeof(v)) ||
        sscanf(v, "%d.%d", &vmaj, &vmin) != 2 || vmaj != mmaj || vmin >= mmin) {
        free(path);
        return;
    }
    const char *label = fw_minor_rules[rule].label;
    char who[256], effect[400];
    fw_name(s, f, who, sizeof(who));
    snprintf(effect, sizeof(effect), fw_minor_effect(f), label, v, min);
    struct report_finding *fd = report_add_finding(
        ctx->report, "frameworks.lib-older-minor", path, "%s: the loader takes %s from %s (%s), %s %s, older than "
        "the %s it needs (%s%s): %s", who, so, path, how, label, v, min, name, req, effect);
    if (fd) {
        report_finding_add_evidence(fd, "METADATA", "Requires-Dist: %s%s", name, req);
        report_finding_add_evidence(fd, so, "%s (%s)", path, how);
        if (strncmp(how, "LD_LIBRARY_PATH", 15) == 0)
            report_finding_set_hint(fd, "Take %s out of LD_LIBRARY_PATH so the framework's wheel is used, or put a "
                                    "%s %s or newer there; `%s/bin/python3 -m pip install '%s%s'` installs the wheel.",
                                    how + 22, label, min, s->envs[f->env].prefix, name, req);
        else
            report_finding_set_hint(fd, "Install the wheel beside the framework (`%s/bin/python3 -m pip install "
                                    "'%s%s'`: it is taken before %s), or upgrade the system's %s to %s or newer.",
                                    s->envs[f->env].prefix, name, req, how, label, min);
    }
    if (strcmp(f->kind->name, "jax") == 0 && (!f->root || f->gpu != FW_GPU_NO)) {
        free(f->why);
        f->why = str_printf("the loader takes %s %s (%s), older than the %s it needs", label, v, path, min);
        f->gpu = FW_GPU_NO;
        f->root = "frameworks.lib-older-minor";
    }
    free(path);
}

void fw_judge_minor(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f)
{
    if (f->build != FW_BUILD_CUDA || !f->pins)
        return;
    for (size_t i = 0; i < json_object_array_length(f->pins); i++)
        fw_minor_one(ctx, s, f, json_object_array_get_idx(f->pins, i));
}
