/* frameworks_shadow.c: the loader path and the wheels: LD_LIBRARY_PATH shadowing a wheel's library, TensorFlow's cuDNN findable. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frameworks_internal.h"
#include "ldsearch.h"
#include "strutil.h"

#define FW_SHADOW_MAX_LD 32    /* LD_LIBRARY_PATH directories looked at */
#define FW_SHADOW_MAX_WHEELS 48 /* SITE/nvidia/X folders looked at */

/* The version a library's file says: the part after ".so." of the file the path resolves to
 * ("libnvJitLink.so.12.1.105" -> "12.1.105"), into BUF; "" when only the soname is there. */
const char *fw_file_version(const struct hostfs *fs, const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    char *real = ldsearch_realpath(fs, path);
    const char *base = real ? strrchr(real, '/') : NULL, *so = base ? strstr(base, ".so.") : NULL;
    const char *name = strrchr(path, '/');
    /* only a version longer than the soname's own ("12.1.105" beside "libnvJitLink.so.12") */
    if (so && name && strlen(base) > strlen(name))
        snprintf(buf, len, "%s", so + 4);
    free(real);
    return str_sanitize(buf);
}

/* The wheel a library of SITE/nvidia/DIR/lib comes from: the dist-info whose name holds the library's stem
 * ("libnvJitLink.so.12" -> "nvjitlink": nvidia_nvjitlink_cu12), else DIR ("cudnn"). "NAME VERSION" in BUF. */
const char *fw_lib_wheel(const struct hostfs *fs, const char *site, const char *dir, const char *lib, char *buf,
                         size_t len)
{
    char stem[64];
    const char *p = strncmp(lib, "lib", 3) == 0 ? lib + 3 : lib;
    size_t k = 0;
    for (; *p && *p != '.' && k + 1 < sizeof(stem); p++)
        stem[k++] = (char)tolower((unsigned char)*p);
    stem[k] = '\0';
    buf[0] = '\0';
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(fs, site, "nvidia_*.dist-info", &names, &n) < 0)
        return buf;
    for (int pass = 0; pass < 2 && !buf[0]; pass++) {
        const char *want = pass == 0 ? stem : dir;
        for (size_t i = 0; i < n && !buf[0]; i++) {
            char lower[160];
            snprintf(lower, sizeof(lower), "%s", names[i]);
            for (char *c = lower; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            char *dash = strchr(lower, '-');
            if (!dash || !want[0])
                continue;
            *dash = '\0';
            /* the name's words, '_'-separated: "nvidia_nvjitlink_cu12" holds "nvjitlink" */
            char key[80];
            snprintf(key, sizeof(key), "_%s_", want);
            char padded[170];
            snprintf(padded, sizeof(padded), "%s_", lower);
            if (!strstr(padded, key) || strlen(dash + 1) <= strlen(".dist-info"))
                continue; /* not its wheel, or a name cut short in LOWER */
            size_t vl = strlen(dash + 1) - strlen(".dist-info");
            int cut = snprintf(buf, len, "%.*s %.*s", (int)(dash - lower), names[i], (int)vl,
                               names[i] + (dash + 1 - lower));
            (void)cut;
            for (char *c = buf; *c && *c != ' '; c++) /* the project's name as pip writes it */
                *c = *c == '_' ? '-' : *c;
        }
    }
    ldsearch_strv_free(names, n);
    return str_sanitize(buf);
}

/* For each library of WHEELDIR (SITE/nvidia/DIR/lib), the first LD_LIBRARY_PATH directory holding a file of
 * that name: another file than the wheel's is a finding. */
static void fw_shadow_dir(struct probe_ctx *ctx, const char *site, const char *dir, const char *wheeldir,
                          char **ld, size_t nld, const char *who)
{
    char **libs = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(ctx->fs, wheeldir, "lib*.so.*", &libs, &n) < 0)
        return;
    char *wreal = ldsearch_realpath(ctx->fs, wheeldir);
    for (size_t i = 0; i < n; i++) {
        for (size_t d = 0; d < nld; d++) {
            char *cand = ldsearch_join(ld[d], libs[i]), *dreal = ldsearch_realpath(ctx->fs, ld[d]);
            struct stat st;
            bool here = cand && hostfs_stat(ctx->fs, cand, &st, true) == 0 && S_ISREG(st.st_mode);
            bool own = dreal && wreal && strcmp(dreal, wreal) == 0;
            if (here && !own && !report_find_finding(ctx->report, "frameworks.ld-shadow", cand)) {
                char *own_path = ldsearch_join(wheeldir, libs[i]), v[64], wheel[160];
                fw_file_version(ctx->fs, cand, v, sizeof(v));
                /* another wheel's copy (OTHER/nvidia/X/lib): its version from the dist-info beside it */
                const char *tail = strstr(ld[d], "/nvidia/");
                if (!v[0] && tail && strchr(tail + 8, '/') && strcmp(strchr(tail + 8, '/'), "/lib") == 0) {
                    char *osite = str_printf("%.*s", (int)(tail - ld[d]), ld[d]), *x = str_printf("%s", tail + 8);
                    if (osite && x) {
                        *strchr(x, '/') = '\0';
                        fw_lib_wheel(ctx->fs, osite, x, libs[i], v, sizeof(v));
                    }
                    free(osite);
                    free(x);
                }
                fw_lib_wheel(ctx->fs, site, dir, libs[i], wheel, sizeof(wheel));
                struct report_finding *fd = report_add_finding(
                    ctx->report, "frameworks.ld-shadow", cand, "%s: LD_LIBRARY_PATH's %s%s%s%s comes before the "
                    "wheel's own %s%s%s%s: a library of the wheel that finds it through its RUNPATH gets the "
                    "LD_LIBRARY_PATH copy (an older one fails with `undefined symbol`)", who, cand, v[0] ? " (" : "",
                    v, v[0] ? ")" : "", own_path ? own_path : libs[i], wheel[0] ? " (" : "", wheel, wheel[0] ? ")" : "");
                if (fd) {
                    report_finding_set_hint(fd, "Take %s out of LD_LIBRARY_PATH (or put %s before it), e.g. `unset "
                                            "LD_LIBRARY_PATH` in the shell that runs Python.", ld[d], wheeldir);
                    report_finding_add_evidence(fd, "LD_LIBRARY_PATH", "%s", ld[d]);
                }
                free(own_path);
            }
            free(cand);
            free(dreal);
            if (here || own)
                break; /* the loader stops at the first directory with the name */
        }
    }
    free(wreal);
    ldsearch_strv_free(libs, n);
}

void fw_shadow_all(struct probe_ctx *ctx, const struct fw_scan *s)
{
    const char *ldlp = getenv("LD_LIBRARY_PATH");
    if (!ldlp || !*ldlp)
        return;
    char *copy = str_dup(ldlp), *save = NULL, *ld[FW_SHADOW_MAX_LD];
    size_t nld = 0;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t && nld < FW_SHADOW_MAX_LD; t = strtok_r(NULL, ":", &save))
        if (t[0] == '/')
            ld[nld++] = t;
    for (size_t i = 0; i < s->n_found && nld > 0; i++) {
        const struct fw_found *f = &s->found[i];
        bool seen = false; /* one site's wheels once, for its first CUDA copy */
        for (size_t j = 0; j < i && !seen; j++)
            seen = s->found[j].build == FW_BUILD_CUDA && strcmp(s->found[j].site, f->site) == 0;
        if (f->build != FW_BUILD_CUDA || seen)
            continue;
        char who[256], *nv = ldsearch_join(f->site, "nvidia"), **dirs = NULL;
        fw_name(s, f, who, sizeof(who));
        size_t nd = 0;
        if (nv && ldsearch_dir_match(ctx->fs, nv, "*", &dirs, &nd) == 0) {
            for (size_t d = 0; d < nd && d < FW_SHADOW_MAX_WHEELS; d++) {
                char *wd = str_printf("%s/%s/lib", nv, dirs[d]);
                struct stat st;
                if (wd && hostfs_stat(ctx->fs, wd, &st, true) == 0 && S_ISDIR(st.st_mode))
                    fw_shadow_dir(ctx, f->site, dirs[d], wd, ld, nld, who);
                free(wd);
            }
            ldsearch_strv_free(dirs, nd);
        }
        free(nv);
    }
    free(copy);
}

/* TensorFlow dlopens libcudnn.so.MAJOR of the cuDNN it was built with ("Could not load dynamic library
 * 'libcudnn.so.8'", then "Cannot dlopen some GPU libraries": it runs on the CPU). It finds it in its
 * environment's NVIDIA wheel (SITE/nvidia/cudnn/lib, through its RPATH) or on the loader's path. A file
 * check: nothing is loaded. */
void fw_judge_cudnn(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f)
{
    int major = -1;
    if (f->build != FW_BUILD_CUDA || strcmp(f->kind->name, "tensorflow") != 0 ||
        sscanf(f->extra, "cuDNN %d", &major) != 1 || major < 1 || major > 99)
        return;
    char soname[32];
    snprintf(soname, sizeof(soname), "libcudnn.so.%d", major);
    char *wheel = str_printf("%s/nvidia/cudnn/lib/%s", f->site, soname);
    struct stat st;
    bool found = wheel && hostfs_stat(ctx->fs, wheel, &st, true) == 0 && S_ISREG(st.st_mode);
    free(wheel);
    struct ldsearch ls;
    if (!found && ldsearch_init(&ls, ctx->fs, getenv("LD_LIBRARY_PATH")) == 0) {
        const char *via = NULL;
        char *p = ldsearch_find(&ls, soname, &via);
        found = p != NULL;
        free(p);
        ldsearch_free(&ls);
    }
    if (found)
        return;
    char name[256];
    fw_name(s, f, name, sizeof(name));
    struct report_finding *fd = report_add_finding(
        ctx->report, "frameworks.cudnn-missing", f->source, "%s: built with cuDNN %d, and no %s is in %s/nvidia/cudnn/lib "
        "or on the loader's path: TensorFlow says \"Cannot dlopen some GPU libraries\" and runs on the CPU", name, major,
        soname, f->site);
    if (fd)
        report_finding_set_hint(fd, "Install TensorFlow with its CUDA wheels (`%s/bin/python3 -m pip install "
                                "'tensorflow[and-cuda]'`), or cuDNN %d where the loader finds it.", s->envs[f->env].prefix,
                                major);
    if (!f->root || f->gpu != FW_GPU_NO) {
        char *why = str_printf("built with cuDNN %d, and no %s can be found (it will run on the CPU)", major, soname);
        free(f->why);
        f->why = why;
        f->gpu = FW_GPU_NO;
        f->root = "frameworks.cudnn-missing";
    }
}

/* The CUDA libraries TensorFlow dlopens at start besides cuDNN (tsl/platform/default/dso_loader.cc,
 * TryDlopenCUDALibraries: the runtime, cuBLAS, cuBLASLt, cuFFT, cuSOLVER and cuSPARSE handles, by the sonames of
 * its CUDA major; any one failing is "Cannot dlopen all CUDA libraries"), each with the
 * dist-info name of the NVIDIA wheel that ships it (tensorflow[and-cuda]). Any one missing: "Could not load
 * dynamic library", then "Cannot dlopen some GPU libraries", and it runs on the CPU. */
static const struct {
    int cuda;
    const char *soname, *dist;
} fw_tf_libs[] = {
    {12, "libcudart.so.12", "nvidia_cuda_runtime_cu12"}, {12, "libcublas.so.12", "nvidia_cublas_cu12"},
    {12, "libcublasLt.so.12", "nvidia_cublas_cu12"},     {12, "libcufft.so.11", "nvidia_cufft_cu12"},
    {12, "libcusolver.so.11", "nvidia_cusolver_cu12"},   {12, "libcusparse.so.12", "nvidia_cusparse_cu12"},
    {11, "libcudart.so.11.0", "nvidia_cuda_runtime_cu11"}, {11, "libcublas.so.11", "nvidia_cublas_cu11"},
    {11, "libcublasLt.so.11", "nvidia_cublas_cu11"},     {11, "libcufft.so.10", "nvidia_cufft_cu11"},
    {11, "libcusolver.so.11", "nvidia_cusolver_cu11"},   {11, "libcusparse.so.11", "nvidia_cusparse_cu11"},
};

/* SONAME in one of SITE's NVIDIA wheels (SITE/nvidia/ * /lib, TensorFlow's RPATH), its wheel's dist-info DIST
 * installed (pip put its files there), or found by the loader (LS). */
static bool fw_tf_lib_found(const struct hostfs *fs, const char *site, const char *soname, const char *dist,
                            const struct ldsearch *ls)
{
    char **m = NULL;
    size_t n = 0;
    char *pat = str_printf("%s-*.dist-info", dist);
    bool found = pat && ldsearch_dir_match(fs, site, pat, &m, &n) == 0 && n > 0;
    free(pat);
    ldsearch_strv_free(m, n);
    char *nv = ldsearch_join(site, "nvidia");
    char **dirs = NULL;
    size_t nd = 0;
    if (!found && nv && ldsearch_dir_match(fs, nv, "*", &dirs, &nd) == 0) {
        for (size_t d = 0; d < nd && d < FW_SHADOW_MAX_WHEELS && !found; d++) {
            char *p = str_printf("%s/%s/lib/%s", nv, dirs[d], soname);
            struct stat st;
            found = p && hostfs_stat(fs, p, &st, true) == 0 && S_ISREG(st.st_mode);
            free(p);
        }
        ldsearch_strv_free(dirs, nd);
    }
    free(nv);
    const char *via = NULL;
    char *p = found || !ls ? NULL : ldsearch_find(ls, soname, &via);
    found = found || p;
    free(p);
    return found;
}

void fw_judge_tf_libs(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f)
{
    int cuda = atoi(f->cuda);
    if (f->build != FW_BUILD_CUDA || strcmp(f->kind->name, "tensorflow") != 0 || (cuda != 11 && cuda != 12))
        return;
    struct ldsearch ls;
    bool have_ls = ldsearch_init(&ls, ctx->fs, getenv("LD_LIBRARY_PATH")) == 0;
    char missing[512] = "";
    size_t nm = 0;
    for (size_t i = 0; i < sizeof(fw_tf_libs) / sizeof(fw_tf_libs[0]); i++) {
        if (fw_tf_libs[i].cuda != cuda || fw_tf_lib_found(ctx->fs, f->site, fw_tf_libs[i].soname, fw_tf_libs[i].dist,
                                                           have_ls ? &ls : NULL))
            continue;
        size_t l = strlen(missing);
        snprintf(missing + l, sizeof(missing) - l, "%s%s", l ? ", " : "", fw_tf_libs[i].soname);
        nm++;
    }
    if (have_ls)
        ldsearch_free(&ls);
    if (nm == 0)
        return;
    char name[256];
    fw_name(s, f, name, sizeof(name));
    struct report_finding *fd = report_add_finding(
        ctx->report, "frameworks.tf-cuda-libs-missing", f->source, "%s: built with CUDA %s, and %s %s in none of its "
        "NVIDIA wheels (%s/nvidia/*/lib) nor on the loader's path: TensorFlow says \"Cannot dlopen some GPU "
        "libraries\" and runs on the CPU", name, f->cuda, missing, nm == 1 ? "is" : "are", f->site);
    if (fd)
        report_finding_set_hint(fd, "Install TensorFlow with its CUDA wheels (`%s/bin/python3 -m pip install "
                                "'tensorflow[and-cuda]'`), or the CUDA %d libraries where the loader finds them.",
                                s->envs[f->env].prefix, cuda);
    if (!f->root || f->gpu != FW_GPU_NO) {
        char *why = str_printf("built with CUDA %s, and %s cannot be found (it will run on the CPU)", f->cuda, missing);
        free(f->why);
        f->why = why;
        f->gpu = FW_GPU_NO;
        f->root = "frameworks.tf-cuda-libs-missing";
    }
}
