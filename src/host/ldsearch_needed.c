/* ldsearch_needed.c: where the dynamic loader finds a library's DT_NEEDED dependency (RPATH, LD_LIBRARY_PATH, RUNPATH, cache, defaults). */
#include "ldsearch.h"

#include <stdlib.h>
#include <string.h>

#include "ldsearch_internal.h"
#include "strutil.h"

/* The loader itself is in every process: a dependency on it is always met (glibc matches it by SONAME). */
static bool ldsearch_is_loader(const char *name)
{
    return strncmp(name, "ld-linux", 8) == 0 || strncmp(name, "ld64.so.", 8) == 0;
}

/* ENTRY of a search path list with $ORIGIN / ${ORIGIN} replaced by ORIGIN; NULL when it uses a token
 * gpucheckup does not expand ($LIB, $PLATFORM). An empty entry is the current directory, as in
 * LD_LIBRARY_PATH ("$ORIGIN:" is common). */
static char *ldsearch_expand(const char *entry, size_t len, const char *origin, const char *cwd)
{
    if (len == 0)
        return strdup(cwd ? cwd : ".");
    char *e = strndup(entry, len);
    if (!e)
        return NULL;
    char *out = strdup("");
    const char *p = e;
    while (out && *p) {
        const char *dollar = strchr(p, '$');
        size_t lit = dollar ? (size_t)(dollar - p) : strlen(p);
        char *grown = str_printf("%s%.*s", out, (int)lit, p);
        free(out);
        out = grown;
        if (!dollar || !out)
            break;
        size_t tok = strncmp(dollar, "$ORIGIN", 7) == 0 ? 7 : strncmp(dollar, "${ORIGIN}", 9) == 0 ? 9 : 0;
        if (!tok) {
            free(out);
            out = NULL;
            break;
        }
        grown = str_printf("%s%s", out, origin);
        free(out);
        out = grown;
        p = dollar + tok;
    }
    free(e);
    return out;
}

/* NAME in the directories of the search path list LIST (":"-separated), or NULL; *UNSURE set when an
 * entry could not be expanded. */
static char *ldsearch_in_list(const struct ldsearch *s, const char *list, const char *origin, const char *name,
                              bool *unsure)
{
    for (const char *p = list; p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        char *dir = ldsearch_expand(p, len, origin, s->cwd);
        if (!dir)
            *unsure = true;
        char *path = dir ? ldsearch_join(dir, name) : NULL;
        free(dir);
        if (path && ldsearch_elf_loadable(s->fs, path) == 1)
            return path;
        free(path);
        p = colon ? colon + 1 : NULL;
    }
    return NULL;
}

char *ldsearch_find_needed(const struct ldsearch *s, const char *name, const char *obj_path, const char *rpath,
                           const char *runpath, struct ldsearch_hit *hit, bool *unsure)
{
    hit->via = NULL;
    hit->entry = NULL;
    *unsure = false;
    if (!name || !*name)
        return NULL;
    if (!strchr(name, '/') && ldsearch_is_loader(name)) {
        hit->via = "the loader";
        return strdup(name);
    }
    if (strchr(name, '/'))
        return ldsearch_find_hit(s, name, hit);
    const char *slash = obj_path ? strrchr(obj_path, '/') : NULL;
    char *origin = slash ? strndup(obj_path, slash == obj_path ? 1 : (size_t)(slash - obj_path)) : NULL;
    char *p = NULL;
    /* DT_RPATH counts only without DT_RUNPATH, and comes before LD_LIBRARY_PATH (glibc's _dl_map_object). */
    if (rpath && !runpath && (p = ldsearch_in_list(s, rpath, origin ? origin : ".", name, unsure)) != NULL)
        hit->via = "DT_RPATH";
    for (size_t i = 0; !p && i < s->n_ld; i++) {
        char *c = ldsearch_join(s->ld_dirs[i], name);
        if (c && ldsearch_elf_loadable(s->fs, c) == 1) {
            hit->via = "LD_LIBRARY_PATH";
            hit->entry = strdup(s->ld_elems[i]);
            p = c;
        } else {
            free(c);
        }
    }
    if (!p && runpath && (p = ldsearch_in_list(s, runpath, origin ? origin : ".", name, unsure)) != NULL)
        hit->via = "DT_RUNPATH";
    free(origin);
    if (p)
        return p;
    /* the cache and the default directories, as for dlopen(NAME) */
    struct ldsearch cut = *s;
    cut.n_ld = 0;
    return ldsearch_find_hit(&cut, name, hit);
}
