/* ldsearch_needed.c: where the dynamic loader finds a library's DT_NEEDED dependency (RPATH, LD_LIBRARY_PATH, RUNPATH, cache, defaults). */
#include "ldsearch.h"

#include <stdlib.h>
#include <string.h>

#include "elfdyn.h"
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

/* One object of the closure still to read: the path it was found at (heap). */
struct ldsearch_closure {
    char *paths[LDSEARCH_CLOSURE_MAX];
    size_t n;
    char *missing; /* "a, b" (heap) */
    bool unsure, oom;
};

/* Queue P (taken) unless already queued or the closure is full. */
static void ldsearch_closure_add(struct ldsearch_closure *c, char *p)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->paths[i], p) == 0) {
            free(p);
            return;
        }
    if (c->n < LDSEARCH_CLOSURE_MAX)
        c->paths[c->n++] = p;
    else
        free(p);
}

/* NAME found nowhere: add it to the list once. */
static void ldsearch_closure_miss(struct ldsearch_closure *c, const char *name)
{
    size_t nl = strlen(name);
    for (const char *m = c->missing; m && (m = strstr(m, name)) != NULL; m += nl)
        if ((m == c->missing || m[-1] == ' ') && (m[nl] == ',' || m[nl] == '\0'))
            return;
    char *grown = c->missing ? str_printf("%s, %s", c->missing, name) : strdup(name);
    if (!grown) {
        c->oom = true;
        return;
    }
    free(c->missing);
    c->missing = grown;
}

char *ldsearch_missing_needed(const struct ldsearch *s, const char *path, size_t *read)
{
    struct ldsearch_closure c = {.n = 0};
    char *first = path ? strdup(path) : NULL;
    if (read)
        *read = 0;
    if (!first)
        return NULL;
    c.paths[c.n++] = first;
    bool readable = true;
    for (size_t i = 0; i < c.n && !c.oom; i++) {
        struct elfdyn d;
        int rc = elfdyn_read_file(s->fs, c.paths[i], &d);
        if (read && rc == 0)
            (*read)++;
        if (rc != 0 && i == 0)
            readable = false;
        for (size_t k = 0; rc == 0 && k < d.n_needed; k++) {
            struct ldsearch_hit hit;
            bool unsure = false;
            char *p = ldsearch_find_needed(s, d.needed[k], c.paths[i], d.rpath, d.runpath, &hit, &unsure);
            free(hit.entry);
            c.unsure |= unsure;
            if (p && strcmp(hit.via ? hit.via : "", "the loader") == 0)
                free(p);
            else if (p)
                ldsearch_closure_add(&c, p);
            else if (!unsure)
                ldsearch_closure_miss(&c, d.needed[k]);
        }
        elfdyn_free(&d);
    }
    for (size_t i = 0; i < c.n; i++)
        free(c.paths[i]);
    if (!readable || c.oom) {
        free(c.missing);
        return NULL;
    }
    return c.missing;
}
