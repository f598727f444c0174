/* topology_ncclver.c: the NCCL and RCCL libraries found and their versions, from file names and wheels' dist-info (nothing is loaded). */
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "strutil.h"
#include "topology_internal.h"

/* Library files per family: NCCL's (libnccl.so.2.28.3, the wheel's libnccl.so.2) and ROCm's RCCL
 * (librccl.so.1.0.60200: the file's version, not RCCL's own release number). */
static const struct topo_libfam {
    const char *family, *pattern, *prefix, *soname, *dist_glob;
} topo_libfams[] = {
    {"nccl", "libnccl.so*", "libnccl.so.", "libnccl.so.2", "nvidia_nccl_cu*-*.dist-info"},
    {"rccl", "librccl.so*", "librccl.so.", "librccl.so.1", NULL},
};

struct topo_libs {
    struct topo_run *t;
    struct ldsearch s;
    json_object *arr;
    char **seen; /* real paths already listed */
    size_t n_seen;
};

/* The version a library's (real) file name states after PREFIX ("2.28.3"), or NULL (heap): a name that
 * stops at the soname's major ("libnccl.so.2", a wheel's only file) states none. */
static char *topo_file_version(const char *real, const char *prefix)
{
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    size_t pl = strlen(prefix);
    const char *v = base + pl;
    if (strncmp(base, prefix, pl) != 0 || !*v || strspn(v, "0123456789.") != strlen(v) || !strchr(v, '.'))
        return NULL;
    return str_dup(v);
}

/* The version in a dist-info directory's name ("nvidia_nccl_cu12-2.21.5.dist-info": "2.21.5"), or NULL. */
static char *topo_dist_version(const char *name)
{
    const char *dash = strchr(name, '-'), *suffix = strstr(name, ".dist-info"); /* names hold '_', not '-' */
    if (!dash || !suffix || suffix <= dash + 1)
        return NULL;
    return strndup(dash + 1, (size_t)(suffix - dash - 1));
}

static bool topo_libs_seen(struct topo_libs *L, const char *real)
{
    for (size_t i = 0; i < L->n_seen; i++)
        if (strcmp(L->seen[i], real) == 0)
            return true;
    char **n = realloc(L->seen, (L->n_seen + 1) * sizeof(*n));
    if (n && (n[L->n_seen] = str_dup(real)) != NULL)
        L->seen = n, L->n_seen++;
    else if (n)
        L->seen = n;
    return false;
}

/* One library file: PATH as found (VIA: the linker's way, "pip", "ROCm"), listed once by its real path.
 * SITE: the site-packages of a wheel, whose NCCL dist-info names the version of a file that states none. */
static void topo_libs_add(struct topo_libs *L, const struct topo_libfam *fam, const char *path, const char *via,
                          const char *site, const char *first)
{
    char *real = ldsearch_realpath(L->t->ctx->fs, path);
    const char *r = real ? real : path;
    if (topo_libs_seen(L, r)) {
        free(real);
        return;
    }
    char *version = topo_file_version(r, fam->prefix), *dist = NULL;
    const char *from = version ? "file name" : NULL;
    char **names = NULL;
    size_t n = 0;
    if (!version && site && fam->dist_glob && ldsearch_dir_match(L->t->ctx->fs, site, fam->dist_glob, &names, &n) == 0) {
        if (n == 1 && (version = topo_dist_version(names[0])) != NULL) {
            from = "dist-info";
            dist = str_dup(names[0]);
        } else if (n > 1) {
            /* Two NCCL wheels in one environment (nvidia-nccl-cu12 and -cu13): which owns the file is not
             * known from names; pytorch/pytorch#186591 is this layout failing torch's import. */
            struct report_finding *f = report_add_finding(
                L->t->ctx->report, "topology.nccl-wheels-mixed", site,
                "%zu NCCL wheels are installed in %s (%s, %s%s): they share nvidia/nccl/lib", n, site, names[0],
                names[1], n > 2 ? ", ..." : "");
            if (f)
                report_finding_add_evidence(f, path, "which wheel installed it is not known from their names");
        }
    }
    ldsearch_strv_free(names, n);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "library", json_object_new_string(fam->family));
    json_object_object_add(o, "path", jsonstr_sanitized(path));
    json_object_object_add(o, "real_path", jsonstr_sanitized(r));
    json_object_object_add(o, "found_via", json_object_new_string(via));
    json_object_object_add(o, "version", jsonstr_or_null(version));
    json_object_object_add(o, "version_from", from ? json_object_new_string(from) : NULL);
    json_object_object_add(o, "dist_info", jsonstr_or_null(dist));
    json_object_object_add(o, "loaded_first", json_object_new_boolean(first && strcmp(first, r) == 0));
    json_object_array_add(L->arr, o);
    free(version);
    free(dist);
    free(real);
}

static void topo_libs_family(struct topo_libs *L, const struct topo_libfam *fam, struct ldsearch_wheel *w, size_t nw)
{
    const char *via = NULL;
    char *hit = ldsearch_find(&L->s, fam->soname, &via);
    char *first = hit ? ldsearch_realpath(L->t->ctx->fs, hit) : NULL;
    free(hit);
    struct ldsearch_file *f = NULL;
    size_t n = 0;
    if (ldsearch_candidates(&L->s, fam->pattern, &f, &n) == 0)
        for (size_t i = 0; i < n; i++)
            topo_libs_add(L, fam, f[i].path, f[i].via, NULL, first);
    ldsearch_files_free(f, n);
    for (size_t i = 0; i < nw; i++) {
        char **names = NULL;
        size_t k = 0;
        ldsearch_list(&L->s, w[i].dir, fam->pattern, &names, &k);
        for (size_t j = 0; j < k; j++) {
            char *p = ldsearch_join(w[i].dir, names[j]);
            if (p && ldsearch_elf_loadable(L->t->ctx->fs, p) == 1)
                topo_libs_add(L, fam, p, "pip", w[i].site, first);
            free(p);
        }
        ldsearch_strv_free(names, k);
    }
    if (strcmp(fam->family, "rccl") == 0) {
        char **dirs = NULL;
        size_t nd = 0;
        ldsearch_glob_dirs(L->t->ctx->fs, "/opt/rocm*/lib", &dirs, &nd);
        for (size_t i = 0; i < nd; i++) {
            char **names = NULL;
            size_t k = 0;
            ldsearch_list(&L->s, dirs[i], fam->pattern, &names, &k);
            for (size_t j = 0; j < k; j++) {
                char *p = ldsearch_join(dirs[i], names[j]);
                if (p && ldsearch_elf_loadable(L->t->ctx->fs, p) == 1)
                    topo_libs_add(L, fam, p, "ROCm", NULL, first);
                free(p);
            }
            ldsearch_strv_free(names, k);
        }
        ldsearch_strv_free(dirs, nd);
    }
    free(first);
}

/* Into O ("nccl"): "libraries", every libnccl and librccl file on the linker's path (LD_LIBRARY_PATH only
 * where the run may use this machine's environment), in pip wheels and under /opt/rocm*, once per real
 * file, with its version from its file name or its wheel's dist-info. */
void topo_nccl_libraries(struct topo_run *t, json_object *o)
{
    /* NCCL connects GPUs and nodes: on a machine of one GPU and no RDMA device the search (the linker's cache,
     * its directories, every Python environment: tens of milliseconds) is not made. */
    json_object *rdma = jsonget(jsonget(t->d, "rdma"), "devices");
    if (t->n_gpus < 2 && (!rdma || json_object_array_length(rdma) == 0)) {
        json_object_object_add(o, "libraries", NULL);
        return;
    }
    struct topo_libs L = {.t = t, .arr = json_object_new_array()};
    if (ldsearch_init(&L.s, t->ctx->fs, probe_host_files(t->ctx) ? getenv("LD_LIBRARY_PATH") : NULL) != 0) {
        json_object_object_add(o, "libraries", NULL);
        json_object_put(L.arr);
        return;
    }
    struct ldsearch_wheel *w = NULL;
    size_t nw = 0;
    if (ldsearch_wheels(t->ctx->fs, getenv("PATH"), getenv("VIRTUAL_ENV"), getenv("HOME"), &w, &nw) < 0)
        w = NULL, nw = 0;
    for (size_t k = 0; k < sizeof(topo_libfams) / sizeof(topo_libfams[0]); k++)
        topo_libs_family(&L, &topo_libfams[k], w, nw);
    ldsearch_wheels_free(w, nw);
    ldsearch_free(&L.s);
    for (size_t i = 0; i < L.n_seen; i++)
        free(L.seen[i]);
    free(L.seen);
    json_object_object_add(o, "libraries", L.arr);
}
