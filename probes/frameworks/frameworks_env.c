/* frameworks_env.c: the Python environments a user would run, found from files and the process environment only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frameworks_internal.h"
#include "frameworks_parse.h"
#include "ldsearch.h"
#include "strutil.h"

static bool fw_exists(const struct hostfs *fs, const char *path, bool want_dir)
{
    struct stat st;
    if (hostfs_stat(fs, path, &st, want_dir) != 0)
        return false;
    return want_dir ? S_ISDIR(st.st_mode) : true;
}

/* PATH without its trailing slashes (a new string). */
static char *fw_trim_slashes(const char *path)
{
    char *p = str_dup(path);
    size_t l = p ? strlen(p) : 0;
    while (l > 1 && p[l - 1] == '/')
        p[--l] = '\0';
    return p;
}

/* The directory above PATH's last component ("/opt/v/bin" -> "/opt/v"), a new string. */
static char *fw_dirname(const char *path)
{
    char *p = fw_trim_slashes(path);
    char *slash = p ? strrchr(p, '/') : NULL;
    if (slash == p && p)
        p[1] = '\0';
    else if (slash)
        *slash = '\0';
    return p;
}

/* The system's Python is one environment whichever of its prefixes names it. */
static bool fw_is_system_prefix(const char *prefix)
{
    return strcmp(prefix, "/usr") == 0 || strcmp(prefix, "/usr/local") == 0;
}

/* What kind of environment PREFIX is: a venv has pyvenv.cfg (PEP 405: in the folder above bin/, or beside
 * the interpreter), conda a conda-meta/ folder. */
static const char *fw_env_kind(const struct hostfs *fs, const char *prefix, const char *python)
{
    if (fw_is_system_prefix(prefix))
        return "system";
    char *cfg = ldsearch_join(prefix, "pyvenv.cfg");
    bool venv = cfg && fw_exists(fs, cfg, false);
    free(cfg);
    if (!venv && python) {
        char *dir = fw_dirname(python);
        char *beside = dir ? ldsearch_join(dir, "pyvenv.cfg") : NULL;
        venv = beside && fw_exists(fs, beside, false);
        free(beside);
        free(dir);
    }
    if (venv)
        return "venv";
    char *meta = ldsearch_join(prefix, "conda-meta");
    bool conda = meta && fw_exists(fs, meta, true);
    free(meta);
    return conda ? "conda" : "python";
}

static void fw_env_add_sites(const struct hostfs *fs, struct fw_env *e, const char *prefix)
{
    char **sites = NULL;
    size_t n = 0;
    if (ldsearch_site_dirs(fs, prefix, &sites, &n) < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        char **nv = realloc(e->sites, (e->n_sites + 1) * sizeof(*nv));
        if (!nv)
            break;
        e->sites = nv;
        e->sites[e->n_sites] = sites[i];
        sites[i] = NULL;
        e->n_sites++;
    }
    ldsearch_strv_free(sites, n);
}

/* Add the environment at PREFIX (once: a prefix seen before keeps its first origin, and gains PYTHON when it
 * had none). KEEP_EMPTY: listed even without a site directory (one the user named). */
static int fw_env_add(const struct hostfs *fs, struct fw_scan *s, const char *prefix_in, const char *origin,
                      const char *python, bool keep_empty)
{
    char *prefix = fw_trim_slashes(prefix_in);
    if (!prefix)
        return -ENOMEM;
    if (strcmp(prefix, "/usr/local") == 0) { /* the system Python's other prefix */
        free(prefix);
        prefix = str_dup("/usr");
        if (!prefix)
            return -ENOMEM;
    }
    for (size_t i = 0; i < s->n_envs; i++)
        if (strcmp(s->envs[i].prefix, prefix) == 0) {
            if (!s->envs[i].python && python)
                s->envs[i].python = str_dup(python);
            free(prefix);
            return 0;
        }
    if (s->n_envs >= FW_MAX_ENVS) {
        s->envs_dropped++; /* said in the section's note and its environments_not_examined */
        free(prefix);
        return 0;
    }
    struct fw_env *e = &s->envs[s->n_envs];
    memset(e, 0, sizeof(*e));
    e->prefix = prefix;
    fw_env_add_sites(fs, e, prefix);
    if (strcmp(prefix, "/usr") == 0)
        fw_env_add_sites(fs, e, "/usr/local");
    if (e->n_sites == 0 && !keep_empty) {
        free(e->prefix);
        free(e->sites);
        memset(e, 0, sizeof(*e));
        return 0;
    }
    e->kind = str_dup(fw_env_kind(fs, prefix, python));
    e->origin = str_dup(origin);
    e->python = str_dup(python);
    s->n_envs++;
    return 0;
}

/* --python=PATH: an interpreter (PREFIX/bin/python3, or a venv's python beside its pyvenv.cfg) or a folder. */
static void fw_env_from_option(const struct hostfs *fs, struct fw_scan *s, const char *path)
{
    if (fw_exists(fs, path, true)) {
        fw_env_add(fs, s, path, "--python", NULL, true);
        return;
    }
    char *dir = fw_dirname(path);
    const char *base = dir ? strrchr(dir, '/') : NULL;
    char *prefix = base && strcmp(base, "/bin") == 0 ? fw_dirname(dir) : str_dup(dir);
    if (prefix)
        fw_env_add(fs, s, prefix, "--python", path, true);
    free(prefix);
    free(dir);
}

/* The first python3 on PATH_ENV: its prefix is the folder above bin/ (the link itself is not followed: a
 * venv's python3 links to the system interpreter, its packages are the venv's). */
static void fw_env_from_path(const struct hostfs *fs, struct fw_scan *s, const char *path_env)
{
    char *copy = str_dup(path_env), *save = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        char *py = ldsearch_join(d, "python3");
        struct stat st;
        if (py && hostfs_stat(fs, py, &st, false) == 0) {
            char *prefix = fw_dirname(d);
            if (prefix)
                fw_env_add(fs, s, prefix, "python3 on PATH", py, false);
            free(prefix);
            free(py);
            break;
        }
        free(py);
    }
    free(copy);
}

/* ---- conda: the environments it knows of, from its files (conda itself is never run) ---- */

#define FW_CONDA_MAX 32      /* items of one list looked at */
#define FW_CONDA_COUNT 65536 /* items of one list counted (those past FW_CONDA_MAX are not examined) */

struct fw_items {
    char *v[FW_CONDA_MAX];
    size_t n;
    size_t over; /* items past FW_CONDA_MAX */
    const char *home;
};

static void fw_item_add(const char *item, void *arg)
{
    struct fw_items *it = arg;
    if (it->n >= FW_CONDA_MAX) {
        it->over += item[0] == '/' || (item[0] == '~' && item[1] == '/');
        return;
    }
    /* "~/envs" is HOME's (conda expands it so) */
    it->v[it->n] = item[0] == '~' && item[1] == '/' && it->home ? str_printf("%s%s", it->home, item + 1) : str_dup(item);
    if (it->v[it->n] && it->v[it->n][0] == '/')
        it->n++;
    else
        free(it->v[it->n]);
}

static void fw_items_free(struct fw_items *it)
{
    for (size_t i = 0; i < it->n; i++)
        free(it->v[i]);
    it->n = 0;
}

/* Each environment in DIR (an envs directory: its folders with conda-meta/). */
static void fw_env_conda_dir(const struct hostfs *fs, struct fw_scan *s, const char *dir, const char *origin)
{
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(fs, dir, "*", &names, &n) < 0)
        return;
    size_t envs = 0;
    for (size_t i = 0; i < n; i++) {
        char *env = ldsearch_join(dir, names[i]), *meta = env ? ldsearch_join(env, "conda-meta") : NULL;
        if (meta && fw_exists(fs, meta, true)) {
            if (envs++ < FW_CONDA_MAX)
                fw_env_add(fs, s, env, origin, NULL, false);
            else
                s->envs_dropped++;
        }
        free(meta);
        free(env);
    }
    ldsearch_strv_free(names, n);
}

/* ~/.conda/environments.txt (conda writes every environment it creates there), the envs_dirs of ~/.condarc,
 * and the installation CONDA_EXE names (its base environment and base/envs). */
static void fw_envs_conda(const struct hostfs *fs, struct fw_scan *s, const char *home)
{
    struct fw_items it = {.n = 0, .home = home};
    char *path = home ? str_printf("%s/.conda/environments.txt", home) : NULL, *text = NULL;
    size_t len = 0;
    if (path && hostfs_read_file(fs, path, FW_MAX_READ, &text, &len) == 0)
        fw_conda_envs_txt(text, len, FW_CONDA_COUNT, fw_item_add, &it);
    for (size_t i = 0; i < it.n; i++)
        fw_env_add(fs, s, it.v[i], "conda (~/.conda/environments.txt)", NULL, false);
    s->envs_dropped += it.over;
    it.over = 0;
    fw_items_free(&it);
    free(text);
    free(path);
    text = NULL;
    path = home ? str_printf("%s/.condarc", home) : NULL;
    if (path && hostfs_read_file(fs, path, FW_MAX_READ, &text, &len) == 0)
        fw_condarc_list(text, len, "envs_dirs", FW_CONDA_COUNT, fw_item_add, &it);
    for (size_t i = 0; i < it.n; i++)
        fw_env_conda_dir(fs, s, it.v[i], "conda (envs_dirs of ~/.condarc)");
    s->envs_dropped += it.over; /* envs directories not looked into */
    it.over = 0;
    fw_items_free(&it);
    free(text);
    free(path);
    const char *exe = getenv("CONDA_EXE"); /* BASE/bin/conda, set by conda's shell hook */
    char *bin = exe && exe[0] == '/' ? fw_dirname(exe) : NULL, *base = bin ? fw_dirname(bin) : NULL;
    if (base && strcmp(base, "/") != 0) {
        fw_env_add(fs, s, base, "conda base (CONDA_EXE)", NULL, false);
        char *envs = ldsearch_join(base, "envs");
        if (envs)
            fw_env_conda_dir(fs, s, envs, "conda (CONDA_EXE's envs)");
        free(envs);
    }
    free(base);
    free(bin);
}

int fw_envs_find(const struct hostfs *fs, struct fw_scan *s)
{
    const char *const *pys = NULL;
    size_t npy = frameworks_pythons(&pys);
    for (size_t i = 0; i < npy; i++)
        fw_env_from_option(fs, s, pys[i]);
    static const char *const vars[] = {"VIRTUAL_ENV", "CONDA_PREFIX"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0] == '/')
            fw_env_add(fs, s, v, vars[i], NULL, true);
    }
    const char *path = getenv("PATH");
    if (path)
        fw_env_from_path(fs, s, path);
    const char *home = getenv("HOME");
    fw_envs_conda(fs, s, home && home[0] == '/' ? home : NULL);
    fw_env_add(fs, s, "/usr", "system", NULL, false);
    if (home && home[0] == '/') {
        char *local = ldsearch_join(home, ".local");
        if (local)
            fw_env_add(fs, s, local, "user site (~/.local)", NULL, false);
        if (local && s->n_envs > 0 && strcmp(s->envs[s->n_envs - 1].prefix, local) == 0) {
            free(s->envs[s->n_envs - 1].kind);
            s->envs[s->n_envs - 1].kind = str_dup("user");
        }
        free(local);
    }
    return 0;
}

void fw_scan_free(struct fw_scan *s)
{
    for (size_t i = 0; i < s->n_envs; i++) {
        free(s->envs[i].prefix);
        free(s->envs[i].kind);
        free(s->envs[i].origin);
        free(s->envs[i].python);
        ldsearch_strv_free(s->envs[i].sites, s->envs[i].n_sites);
    }
    for (size_t i = 0; i < s->n_found; i++) {
        if (s->found[i].pins)
            json_object_put(s->found[i].pins);
        free(s->found[i].damaged);
        free(s->found[i].why);
        json_object_put(s->found[i].imported);
        free(s->found[i].code);
    }
    s->n_envs = s->n_found = 0;
}
