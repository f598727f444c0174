/* rocm_rocblas.c: which gfx targets the installed rocBLAS carries kernels for (its Tensile library files). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "rocm_internal.h"
#include "strutil.h"

/* The most directory entries read, and targets kept (AMD's library directory holds a few thousand files). */
#define ROCM_RB_MAX_FILES 100000
#define ROCM_RB_MAX_TARGETS 64

/* Add every "gfxNNN" token of NAME to TARGETS (a JSON array of unique strings). */
static void rocm_rb_tokens(const char *name, json_object *targets)
{
    for (const char *p = strstr(name, "gfx"); p; p = strstr(p + 3, "gfx")) {
        size_t n = 3 + strspn(p + 3, "0123456789abcdef");
        if (n < 6 || n > 9 || json_object_array_length(targets) >= ROCM_RB_MAX_TARGETS)
            continue;
        char t[12];
        snprintf(t, sizeof(t), "%.*s", (int)n, p);
        bool have = false;
        for (size_t i = 0; i < json_object_array_length(targets) && !have; i++)
            have = strcmp(json_object_get_string(json_object_array_get_idx(targets, i)), t) == 0;
        if (!have)
            json_object_array_add(targets, json_object_new_string(t));
    }
}

/* Read DIR's file names into TARGETS; true when DIR could be listed. */
static bool rocm_rb_list(struct probe_ctx *ctx, const char *dir, json_object *targets)
{
    DIR *d = hostfs_opendir(ctx->fs, dir);
    if (!d)
        return false;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < ROCM_RB_MAX_FILES; n++)
        rocm_rb_tokens(e->d_name, targets);
    closedir(d);
    return true;
}

static int rocm_rb_cmp(const void *a, const void *b)
{
    return strcmp(json_object_get_string(*(json_object *const *)a), json_object_get_string(*(json_object *const *)b));
}

/* The Tensile library directory beside LIB: AMD's packages put it at <libdir>/rocblas/library, Debian's
 * at <libdir>/rocblas/<version>/library. Heap, or NULL. */
static char *rocm_rb_dir(struct probe_ctx *ctx, const char *lib, json_object *targets)
{
    const char *slash = strrchr(lib, '/');
    if (!slash)
        return NULL;
    char *base = str_printf("%.*s/rocblas", (int)(slash - lib), lib), *flat = str_printf("%s/library", base ? base : "");
    if (flat && rocm_rb_list(ctx, flat, targets)) {
        free(base);
        return flat;
    }
    free(flat);
    DIR *d = base ? hostfs_opendir(ctx->fs, base) : NULL;
    char *found = NULL;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char *sub = str_printf("%s/%s/library", base, e->d_name);
        if (sub && rocm_rb_list(ctx, sub, targets))
            found = sub;
        else
            free(sub);
    }
    if (d)
        closedir(d);
    free(base);
    return found;
}

json_object *rocm_rocblas_read(struct probe_ctx *ctx)
{
    /* librocblas.so.0 in ROCm 5, .so.4 in ROCm 6, .so.5 in ROCm 7. */
    static const char *const names[] = {"librocblas.so.5", "librocblas.so.4", "librocblas.so.0"};
    struct ldsearch s;
    char *lib = NULL;
    if (ldsearch_init(&s, ctx->fs, probe_live(ctx) ? getenv("LD_LIBRARY_PATH") : NULL) < 0)
        return NULL;
    for (size_t i = 0; !lib && i < sizeof(names) / sizeof(names[0]); i++) {
        const char *via = NULL;
        lib = ldsearch_find(&s, names[i], &via);
    }
    ldsearch_free(&s);
    if (!lib)
        return NULL;
    json_object *o = json_object_new_object(), *targets = json_object_new_array();
    char *dir = rocm_rb_dir(ctx, lib, targets);
    json_object_array_sort(targets, rocm_rb_cmp);
    json_object_object_add(o, "library", jsonstr_sanitized(lib));
    json_object_object_add(o, "tensile_dir", jsonstr_or_null(dir));
    json_object_object_add(o, "targets", targets);
    free(lib);
    free(dir);
    return o;
}

bool rocm_rocblas_has(json_object *rb, const char *gfx)
{
    json_object *t = jsonget(rb, "targets");
    for (size_t i = 0; gfx && t && json_object_is_type(t, json_type_array) && i < json_object_array_length(t); i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(t, i));
        if (s && strcmp(s, gfx) == 0)
            return true;
    }
    return false;
}

const char *rocm_override_gfx(const char *v, char *buf, size_t len)
{
    unsigned a, b, c;
    char tail;
    if (!v || sscanf(v, "%u.%u.%u%c", &a, &b, &c, &tail) != 3 || a > 99 || b > 99 || c > 99)
        return NULL;
    return rocm_gfx_name((int64_t)a * 10000 + b * 100 + c, buf, len);
}
