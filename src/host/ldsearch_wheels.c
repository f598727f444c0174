/* ldsearch_wheels.c: directory globs and the library folders of pip wheels (site-packages/nvidia/<x>/lib). */
#include "ldsearch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ldsearch_internal.h"
#include "strutil.h"

/* ---- directory globs ---- */

struct ldsearch_globw {
    const struct hostfs *fs;
    char **out;
    size_t n;
    int err;
};

static void ldsearch_glob_step(struct ldsearch_globw *g, const char *prefix, const char *rest)
{
    while (*rest == '/')
        rest++;
    if (!*rest) {
        struct stat st;
        const char *d = *prefix ? prefix : "/";
        if (hostfs_stat(g->fs, d, &st, true) == 0 && S_ISDIR(st.st_mode) && ldsearch_list_add(&g->out, &g->n, d) < 0)
            g->err = -ENOMEM;
        return;
    }
    const char *slash = strchr(rest, '/');
    char *comp = strndup(rest, slash ? (size_t)(slash - rest) : strlen(rest));
    const char *next = slash ? slash : "";
    if (!comp) {
        g->err = -ENOMEM;
        return;
    }
    if (!strpbrk(comp, "*?[")) {
        char *p = str_printf("%s/%s", prefix, comp);
        if (p)
            ldsearch_glob_step(g, p, next);
        else
            g->err = -ENOMEM;
        free(p);
        free(comp);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(g->fs, *prefix ? prefix : "/", comp, &names, &n) == -ENOMEM)
        g->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = str_printf("%s/%s", prefix, names[i]);
        struct stat st;
        if (p && hostfs_stat(g->fs, p, &st, true) == 0 && S_ISDIR(st.st_mode))
            ldsearch_glob_step(g, p, next);
        free(p);
    }
    ldsearch_strv_free(names, n);
    free(comp);
}

int ldsearch_glob_dirs(const struct hostfs *fs, const char *pattern, char ***out, size_t *n)
{
    struct ldsearch_globw g = {.fs = fs};
    if (pattern && pattern[0] == '/')
        ldsearch_glob_step(&g, "", pattern);
    if (g.err < 0) {
        ldsearch_strv_free(g.out, g.n);
        *out = NULL;
        *n = 0;
        return g.err;
    }
    *out = g.out;
    *n = g.n;
    return 0;
}

/* ---- pip wheel layouts ---- */

struct ldsearch_wheelw {
    const struct hostfs *fs;
    struct ldsearch_wheel *w;
    size_t n;
    int err;
};

static void ldsearch_wheel_add(struct ldsearch_wheelw *ww, const char *dir, const char *site, const char *wheel,
                               const char *origin)
{
    for (size_t i = 0; i < ww->n; i++)
        if (strcmp(ww->w[i].dir, dir) == 0)
            return;
    struct ldsearch_wheel *nw = realloc(ww->w, (ww->n + 1) * sizeof(*nw));
    if (!nw) {
        ww->err = -ENOMEM;
        return;
    }
    ww->w = nw;
    struct ldsearch_wheel *w = &ww->w[ww->n];
    w->dir = strdup(dir);
    w->site = strdup(site);
    w->wheel = strdup(wheel);
    w->origin = strdup(origin);
    if (!w->dir || !w->site || !w->wheel || !w->origin) {
        free(w->dir);
        free(w->site);
        free(w->wheel);
        free(w->origin);
        ww->err = -ENOMEM;
        return;
    }
    ww->n++;
}

/* Python's site directories under a prefix: PREFIX/lib{,64}/python3.N/{site,dist}-packages, and Debian's
 * PREFIX/lib/python3/dist-packages (matched by the python3* glob). */
int ldsearch_site_dirs(const struct hostfs *fs, const char *prefix, char ***out, size_t *n)
{
    static const char *const layouts[] = {
        "/lib/python3*/site-packages", "/lib/python3*/dist-packages",
        "/lib64/python3*/site-packages", NULL,
    };
    char **all = NULL;
    size_t n_all = 0;
    int err = 0;
    /* one directory met twice (a venv's lib64 is a link to lib): listed once, by device and inode */
    struct { dev_t dev; ino_t ino; } seen[64];
    size_t n_seen = 0;
    for (size_t l = 0; layouts[l] && err == 0; l++) {
        char *pattern = str_printf("%s%s", strcmp(prefix, "/") == 0 ? "" : prefix, layouts[l]);
        char **sites = NULL;
        size_t n_sites = 0;
        if (!pattern || ldsearch_glob_dirs(fs, pattern, &sites, &n_sites) < 0)
            err = -ENOMEM;
        free(pattern);
        for (size_t i = 0; i < n_sites && err == 0; i++) {
            struct stat sb;
            bool dup = false;
            if (hostfs_stat(fs, sites[i], &sb, true) == 0) {
                for (size_t k = 0; k < n_seen && !dup; k++)
                    dup = seen[k].dev == sb.st_dev && seen[k].ino == sb.st_ino;
                if (!dup && n_seen < sizeof(seen) / sizeof(seen[0])) {
                    seen[n_seen].dev = sb.st_dev;
                    seen[n_seen++].ino = sb.st_ino;
                }
            }
            if (!dup && ldsearch_list_add(&all, &n_all, sites[i]) < 0)
                err = -ENOMEM;
        }
        ldsearch_strv_free(sites, n_sites);
    }
    if (err < 0) {
        ldsearch_strv_free(all, n_all);
        all = NULL;
        n_all = 0;
    }
    *out = all;
    *n = n_all;
    return err;
}

/* Every site directory of PREFIX's nvidia/X/lib. */
static void ldsearch_wheel_prefix(struct ldsearch_wheelw *ww, const char *prefix, const char *origin)
{
    char **sites = NULL;
    size_t n_sites = 0;
    if (ldsearch_site_dirs(ww->fs, prefix, &sites, &n_sites) < 0) {
        ww->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < n_sites; i++) {
        char *nv = ldsearch_join(sites[i], "nvidia");
        char **wheels = NULL;
        size_t n_wheels = 0;
        if (nv)
            ldsearch_dir_match(ww->fs, nv, "*", &wheels, &n_wheels);
        for (size_t k = 0; k < n_wheels; k++) {
            char *dir = str_printf("%s/%s/lib", nv, wheels[k]);
            struct stat st;
            if (dir && hostfs_stat(ww->fs, dir, &st, true) == 0 && S_ISDIR(st.st_mode))
                ldsearch_wheel_add(ww, dir, sites[i], wheels[k], origin);
            free(dir);
        }
        ldsearch_strv_free(wheels, n_wheels);
        free(nv);
    }
    ldsearch_strv_free(sites, n_sites);
}

static bool ldsearch_ends_with(const char *s, const char *suffix)
{
    size_t l = strlen(s), n = strlen(suffix);
    while (l > 1 && s[l - 1] == '/')
        l--;
    return l >= n && strncmp(s + l - n, suffix, n) == 0;
}

int ldsearch_wheels(const struct hostfs *fs, const char *path_env, const char *virtual_env, const char *home,
                    struct ldsearch_wheel **out, size_t *n)
{
    struct ldsearch_wheelw ww = {.fs = fs};
    if (virtual_env && virtual_env[0] == '/')
        ldsearch_wheel_prefix(&ww, virtual_env, "VIRTUAL_ENV");
    /* Each python3 on PATH: its prefix is the directory above bin/. The link itself is not followed:
     * a venv's bin/python3 links to the system interpreter but its site-packages is the venv's. */
    char *copy = path_env ? strdup(path_env) : NULL;
    char *save = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        char **pys = NULL;
        size_t n_pys = 0;
        ldsearch_dir_match(fs, d, "python3*", &pys, &n_pys);
        bool any = false;
        for (size_t i = 0; i < n_pys && !any; i++) {
            /* python3, python3.12: not python3-config and friends */
            const char *v = pys[i] + 7;
            if (*v && (*v != '.' || strspn(v + 1, "0123456789") != strlen(v + 1)))
                continue;
            char *py = ldsearch_join(d, pys[i]);
            any = py && ldsearch_exists(fs, py);
            if (any) {
                char *prefix = strdup(d);
                size_t pl = prefix ? strlen(prefix) : 0;
                while (pl > 1 && prefix[pl - 1] == '/')
                    prefix[--pl] = '\0';
                char *slash = prefix ? strrchr(prefix, '/') : NULL;
                if (slash) {
                    if (slash == prefix)
                        slash[1] = '\0';
                    else
                        *slash = '\0';
                    char *origin = str_printf("python3 on PATH (%s)", py);
                    if (origin)
                        ldsearch_wheel_prefix(&ww, prefix, origin);
                    free(origin);
                    /* pyenv: PATH holds ROOT/shims/python3, a script; the interpreters are ROOT/versions/X */
                    if (ldsearch_ends_with(d, "/shims")) {
                        char *pattern = str_printf("%s/versions/*", prefix);
                        char **vers = NULL;
                        size_t n_vers = 0;
                        if (pattern)
                            ldsearch_glob_dirs(fs, pattern, &vers, &n_vers);
                        for (size_t k = 0; k < n_vers; k++) {
                            char *o = str_printf("pyenv version %s (%s)", vers[k], py);
                            if (o)
                                ldsearch_wheel_prefix(&ww, vers[k], o);
                            free(o);
                        }
                        ldsearch_strv_free(vers, n_vers);
                        free(pattern);
                    }
                }
                free(prefix);
            }
            free(py);
        }
        ldsearch_strv_free(pys, n_pys);
    }
    free(copy);
    static const char *const system[] = {"/usr", "/usr/local", NULL};
    for (size_t i = 0; system[i]; i++)
        ldsearch_wheel_prefix(&ww, system[i], "system");
    if (home && home[0] == '/') {
        char *local = ldsearch_join(home, ".local");
        if (local)
            ldsearch_wheel_prefix(&ww, local, "user (~/.local)");
        free(local);
    }
    if (ww.err < 0) {
        ldsearch_wheels_free(ww.w, ww.n);
        *out = NULL;
        *n = 0;
        return ww.err;
    }
    *out = ww.w;
    *n = ww.n;
    return 0;
}

void ldsearch_wheels_free(struct ldsearch_wheel *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(w[i].dir);
        free(w[i].site);
        free(w[i].wheel);
        free(w[i].origin);
    }
    free(w);
}
