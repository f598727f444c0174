/* cuda_libs_deps.c: a CUDA library left unloaded (its version stated by a file) still fails for a missing dependency: its DT_NEEDED, resolved as the loader would. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_libs.h"
#include "elfdyn.h"
#include "ldsearch.h"
#include "strutil.h"

/* The search path lists of D, for people: " (DT_RUNPATH $ORIGIN/../lib)", or "". */
static char *cuda_libs_deps_paths(const struct elfdyn *d)
{
    if (d->runpath)
        return str_printf("its DT_RUNPATH %s, ", d->runpath);
    if (d->rpath)
        return str_printf("its DT_RPATH %s, ", d->rpath);
    return strdup("");
}

/* True when NAME is in another NVIDIA wheel's lib/ of E's pip site (SITE/nvidia/ * /lib): PyTorch and JAX
 * load those first (torch's _preload_cuda_deps), so older wheels whose RUNPATH is only $ORIGIN (cuSPARSE
 * 12.1's, needing nvJitLink) still load in them. */
static bool cuda_libs_deps_in_site(const struct cuda_libs_state *st, const struct cuda_lib_entry *e, const char *name)
{
    if (!e->site || strchr(name, '/'))
        return false;
    char *pattern = ldsearch_join(e->site, "nvidia/*/lib");
    char **dirs = NULL;
    size_t n = 0;
    bool found = false;
    if (pattern && ldsearch_glob_dirs(st->fs, pattern, &dirs, &n) == 0)
        for (size_t i = 0; i < n && !found; i++) {
            char *p = ldsearch_join(dirs[i], name);
            found = p && ldsearch_elf_loadable(st->fs, p) == 1;
            free(p);
        }
    ldsearch_strv_free(dirs, n);
    free(pattern);
    return found;
}

/* E's dependencies that the loader finds nowhere, as "a, b" (heap), or NULL when all are found (or E's
 * dynamic section cannot be read: nothing is claimed then). */
static char *cuda_libs_deps_missing(struct cuda_libs_state *st, const struct cuda_lib_entry *e, char **paths)
{
    struct elfdyn d;
    char *missing = NULL;
    *paths = NULL;
    if (elfdyn_read_file(st->fs, e->real, &d) == 0) {
        for (size_t i = 0; i < d.n_needed; i++) {
            struct ldsearch_hit hit;
            bool unsure = false;
            char *p = ldsearch_find_needed(&st->search, d.needed[i], e->path, d.rpath, d.runpath, &hit, &unsure);
            free(hit.entry);
            if (p || unsure || cuda_libs_deps_in_site(st, e, d.needed[i])) {
                free(p);
                continue;
            }
            char *grown = missing ? str_printf("%s, %s", missing, d.needed[i]) : strdup(d.needed[i]);
            free(missing);
            if (!(missing = grown)) {
                st->err = -ENOMEM;
                break;
            }
        }
        if (missing)
            *paths = cuda_libs_deps_paths(&d);
    }
    elfdyn_free(&d);
    return missing;
}

void cuda_libs_deps(struct cuda_libs_state *st)
{
    /* The loader's answer is this host's: a tree searched instead (the unit tests') says nothing of it. */
    if (!st->fs->live)
        return;
    for (size_t i = 0; i < st->n && !st->err; i++) {
        struct cuda_lib_entry *e = &st->e[i];
        if (!e->have_version || e->error)
            continue;
        char *paths = NULL;
        char *missing = cuda_libs_deps_missing(st, e, &paths);
        if (!missing)
            continue;
        /* Worded as dlopen's own error ends, so that a missing libcuda.so.1 is traced to its cause. */
        const char *comma = strchr(missing, ',');
        e->error = str_printf("needs %s (DT_NEEDED), which %s nowhere the dynamic loader looks (%sLD_LIBRARY_PATH, "
                              "ld.so.cache, the default directories): loading it fails with \"%.*s: cannot open "
                              "shared object file\" (read from its dynamic section; it was not loaded, as a file "
                              "states its version)",
                              missing, comma ? "are" : "is", paths ? paths : "",
                              (int)(comma ? (size_t)(comma - missing) : strlen(missing)), missing);
        free(missing);
        free(paths);
        if (!e->error)
            st->err = -ENOMEM;
        else
            str_sanitize(e->error);
    }
}
