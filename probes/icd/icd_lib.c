/* icd_lib.c: the icd probe's scan for every libOpenCL.so* (the search itself: src/host/ldsearch.c). */
#include "icd_impl.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

#define ICD_MAX_SCAN_ENTRIES 4096 /* directory entries looked at under /opt/intel */

/* ---- every libOpenCL.so* ---- */

struct icd_scan {
    const struct ldsearch *s;
    struct icd_loader_file *l;
    size_t n;
    int err;
};

static void icd_scan_add(struct icd_scan *sc, const char *path, const char *source, bool searched)
{
    char *canon = ldsearch_dir_realpath(sc->s->fs, path);
    if (!canon) {
        sc->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < sc->n; i++) {
        if (strcmp(sc->l[i].path, canon) == 0) {
            sc->l[i].searched = sc->l[i].loadable && (sc->l[i].searched || searched);
            free(canon);
            return;
        }
    }
    struct icd_loader_file *nl = realloc(sc->l, (sc->n + 1) * sizeof(*nl));
    if (!nl) {
        free(canon);
        sc->err = -ENOMEM;
        return;
    }
    sc->l = nl;
    struct icd_loader_file *f = &sc->l[sc->n];
    memset(f, 0, sizeof(*f));
    f->path = canon;
    f->source = source;
    f->searched = searched;
    f->resolved = ldsearch_realpath(sc->s->fs, canon);
    struct stat st;
    if (f->resolved && hostfs_stat(sc->s->fs, f->resolved, &st, true) == 0 && S_ISREG(st.st_mode)) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->have_id = true;
        f->loadable = ldsearch_elf_loadable(sc->s->fs, f->resolved) == 1;
    }
    if (!f->loadable)
        f->searched = false;
    f->group = (int)sc->n;
    for (size_t i = 0; i < sc->n; i++)
        if (f->have_id && sc->l[i].have_id && sc->l[i].dev == f->dev && sc->l[i].ino == f->ino) {
            f->group = sc->l[i].group;
            break;
        }
    sc->n++;
}

static void icd_scan_dir(struct icd_scan *sc, const char *dir, const char *source, bool searched)
{
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_list(sc->s, dir, "libOpenCL.so*", &names, &n) == -ENOMEM)
        sc->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = ldsearch_join(dir, names[i]);
        if (p)
            icd_scan_add(sc, p, source, searched);
        free(p);
    }
    ldsearch_strv_free(names, n);
}

static int icd_scan_cache_cb(const char *key, const char *value, int32_t flags, void *arg)
{
    struct icd_scan *sc = arg;
    if (str_starts_with(key, "libOpenCL.so") && ldsearch_cache_flags_match(flags) && value[0] == '/')
        icd_scan_add(sc, value, "ld.so.cache", true);
    return 0;
}

/* Every directory under DIR (not following symlinked directories), to DEPTH levels. */
static void icd_scan_tree(struct icd_scan *sc, const char *dir, int depth, size_t *budget)
{
    icd_scan_dir(sc, dir, "sdk", false);
    if (depth <= 0)
        return;
    char **names = NULL;
    size_t n = 0;
    ldsearch_list(sc->s, dir, "*", &names, &n);
    for (size_t i = 0; i < n && *budget > 0; i++, (*budget)--) {
        char *p = ldsearch_join(dir, names[i]);
        struct stat st;
        if (p && hostfs_stat(sc->s->fs, p, &st, false) == 0 && S_ISDIR(st.st_mode))
            icd_scan_tree(sc, p, depth - 1, budget);
        free(p);
    }
    ldsearch_strv_free(names, n);
}

int icd_loaders_scan(const struct ldsearch *s, struct icd_loader_file **out, size_t *n)
{
    struct icd_scan sc = {.s = s};
    /* In dlopen's order first, so a file found several ways keeps the first way. */
    for (size_t i = 0; i < s->n_ld; i++)
        icd_scan_dir(&sc, s->ld_dirs[i], "LD_LIBRARY_PATH", true);
    if (s->cache)
        ldsearch_cache_walk(s->cache, s->cache_len, icd_scan_cache_cb, &sc);
    for (const char *const *d = ldsearch_default_dirs(); *d; d++)
        icd_scan_dir(&sc, *d, "default", true);
    for (size_t i = 0; i < s->n_conf; i++)
        icd_scan_dir(&sc, s->conf_dirs[i], "ld.so.conf", false);
    static const char *const sdk[] = {
        "/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib", "/usr/local/cuda*/lib",
        "/opt/cuda*/lib64",       "/opt/rocm*/lib",                 "/opt/rocm*/opencl/lib",
        "/opt/amdgpu-pro/lib/*",  "/opt/amdgpu/lib/*",              NULL,
    };
    for (size_t i = 0; sdk[i]; i++) {
        char **dirs = NULL;
        size_t n_dirs = 0;
        if (ldsearch_glob_dirs(s->fs, sdk[i], &dirs, &n_dirs) < 0)
            sc.err = -ENOMEM;
        for (size_t k = 0; k < n_dirs; k++)
            icd_scan_dir(&sc, dirs[k], "sdk", false);
        ldsearch_strv_free(dirs, n_dirs);
    }
    size_t budget = ICD_MAX_SCAN_ENTRIES;
    struct stat st;
    if (hostfs_stat(s->fs, "/opt/intel", &st, true) == 0 && S_ISDIR(st.st_mode))
        icd_scan_tree(&sc, "/opt/intel", 6, &budget);

    /* Which one dlopen("libOpenCL.so.1") takes. */
    const char *via = NULL;
    char *win = ldsearch_find(s, "libOpenCL.so.1", &via);
    if (win) {
        char *canon = ldsearch_dir_realpath(s->fs, win);
        bool found = false;
        for (size_t i = 0; canon && i < sc.n; i++)
            if (strcmp(sc.l[i].path, canon) == 0) {
                sc.l[i].wins = true;
                found = true;
                break;
            }
        if (canon && !found) {
            icd_scan_add(&sc, canon, via ? via : "default", true);
            if (sc.n > 0 && strcmp(sc.l[sc.n - 1].path, canon) == 0)
                sc.l[sc.n - 1].wins = true;
        }
        free(canon);
        free(win);
    }
    if (sc.err < 0) {
        icd_loaders_free(sc.l, sc.n);
        *out = NULL;
        *n = 0;
        return sc.err;
    }
    *out = sc.l;
    *n = sc.n;
    return 0;
}

void icd_loaders_free(struct icd_loader_file *l, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(l[i].path);
        free(l[i].resolved);
    }
    free(l);
}
