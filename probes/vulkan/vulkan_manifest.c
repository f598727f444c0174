/* vulkan_manifest.c: which driver manifests (ICD JSON files) the Vulkan loader reads, each parsed and its library checked. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "isolate.h"
#include "jsonget.h"
#include "ldsearch.h"
#include "libarch.h"
#include "strutil.h"
#include "vulkan_internal.h"

/* ---- the manifest's text ---- */

void vulkan_manifest_info_free(struct vulkan_manifest_info *m)
{
    free(m->file_format_version);
    free(m->library_path);
    free(m->api_version);
    memset(m, 0, sizeof(*m));
}

static char *vulkan_manifest_clean(const char *s)
{
    char *c = str_dup(s);
    return c ? str_sanitize(c) : NULL;
}

/* The loader (loader.c, loader_parse_icd_manifest in Vulkan-Loader 1.3) wants file_format_version and
 * ICD.library_path as strings; api_version is optional (a missing one reads as 1.0), other members ignored. */
int vulkan_manifest_parse(const char *buf, size_t len, struct vulkan_manifest_info *out, char **why)
{
    memset(out, 0, sizeof(*out));
    *why = NULL;
    enum json_tokener_error jerr = json_tokener_success;
    json_object *root = isolate_json_parse(buf, len, 16, true, &jerr);
    if (!root) {
        *why = str_printf("not JSON (%s)", json_tokener_error_desc(jerr));
        return -1;
    }
    json_object *icd = NULL, *ffv = NULL, *lib = NULL, *api = NULL;
    if (!json_object_is_type(root, json_type_object))
        *why = str_printf("not a JSON object");
    else if (!json_object_object_get_ex(root, "file_format_version", &ffv) || !json_object_is_type(ffv, json_type_string))
        *why = str_printf("no file_format_version string");
    else if (!json_object_object_get_ex(root, "ICD", &icd) || !json_object_is_type(icd, json_type_object))
        *why = str_printf("no \"ICD\" object");
    else if (!json_object_object_get_ex(icd, "library_path", &lib) || !json_object_is_type(lib, json_type_string) ||
             json_object_get_string_len(lib) == 0)
        *why = str_printf("no ICD.library_path string");
    else if (json_object_object_get_ex(icd, "api_version", &api) && !json_object_is_type(api, json_type_string))
        *why = str_printf("ICD.api_version is not a string");
    if (!*why) {
        out->file_format_version = vulkan_manifest_clean(json_object_get_string(ffv));
        out->library_path = vulkan_manifest_clean(json_object_get_string(lib));
        out->api_version = api ? vulkan_manifest_clean(json_object_get_string(api)) : NULL;
        if (!out->file_format_version || !out->library_path || (api && !out->api_version)) {
            vulkan_manifest_info_free(out);
            *why = str_printf("out of memory");
        }
    }
    json_object_put(root);
    return *why ? -1 : 0;
}

/* ---- where the loader looks ---- */

struct vulkan_find {
    struct probe_ctx *ctx;
    struct vulkan_driver *out;
    size_t n;
    size_t dropped; /* manifests past VULKAN_MAX_MANIFESTS, not looked at */
};

static int vulkan_cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void vulkan_find_add(struct vulkan_find *f, const char *path, const char *via)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->out[i].path, path) == 0)
            return; /* the loader reads a file once */
    if (f->n >= VULKAN_MAX_MANIFESTS) {
        f->dropped++;
        return;
    }
    struct vulkan_driver *d = &f->out[f->n];
    memset(d, 0, sizeof(*d));
    d->path = str_dup(path);
    d->via = str_dup(via);
    d->status = -1;
    if (d->path && d->via)
        f->n++;
    else
        vulkan_driver_free(d);
}

/* Every *.json file of directory DIR (sorted: the loader takes readdir's order, which no one can rely on). */
static void vulkan_find_dir(struct vulkan_find *f, const char *dir, const char *via)
{
    DIR *d = hostfs_opendir(f->ctx->fs, dir);
    if (!d)
        return;
    char *names[VULKAN_MAX_MANIFESTS];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (str_ends_with(de->d_name, ".json") && n >= VULKAN_MAX_MANIFESTS)
            f->dropped++;
        else if (str_ends_with(de->d_name, ".json") && (names[n] = str_dup(de->d_name)))
            n++;
    closedir(d);
    qsort(names, n, sizeof(names[0]), vulkan_cmp_names);
    for (size_t i = 0; i < n; i++) {
        char *p = str_printf("%s%s%s", dir, str_ends_with(dir, "/") ? "" : "/", names[i]);
        if (p) {
            hostfs_trace(f->ctx->fs, p);
            vulkan_find_add(f, p, via ? via : dir);
        }
        free(p);
        free(names[i]);
    }
}

/* A colon-separated list of files or directories (VK_DRIVER_FILES' form). */
static void vulkan_find_list(struct vulkan_find *f, const char *list, const char *var)
{
    char *copy = str_dup(list), *save = NULL;
    for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save)) {
        struct stat st;
        if (hostfs_stat(f->ctx->fs, tok, &st, true) == 0 && S_ISDIR(st.st_mode))
            vulkan_find_dir(f, tok, var);
        else
            vulkan_find_add(f, tok, var);
    }
    free(copy);
}

/* DIRS (colon-separated) each with /vulkan/icd.d appended. */
static void vulkan_find_dirs(struct vulkan_find *f, const char *dirs)
{
    char *copy = str_dup(dirs), *save = NULL;
    for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save)) {
        if (tok[0] != '/')
            continue; /* the XDG base directory specification: relative entries are ignored */
        char *p = str_printf("%s/vulkan/icd.d", tok);
        if (p)
            vulkan_find_dir(f, p, NULL);
        free(p);
    }
    free(copy);
}

static const char *vulkan_env_or(const char *(*env)(const char *), const char *name)
{
    const char *v = env ? env(name) : NULL;
    return v && *v ? v : NULL;
}

/* The loader's order (Vulkan-Loader docs/LoaderDriverInterface.md, "Driver Discovery on Linux"):
 * VK_DRIVER_FILES (or the older VK_ICD_FILENAMES) replaces the search; else VK_ADD_DRIVER_FILES first,
 * then $XDG_CONFIG_HOME (~/.config), $XDG_CONFIG_DIRS (/etc/xdg), /etc, $XDG_DATA_HOME (~/.local/share),
 * $XDG_DATA_DIRS (/usr/local/share:/usr/share), each with /vulkan/icd.d. */
size_t vulkan_manifests_find(struct probe_ctx *ctx, const char *(*env)(const char *), struct vulkan_driver *out,
                             size_t *not_listed)
{
    struct vulkan_find f = {ctx, out, 0, 0};
    const char *files = vulkan_env_or(env, "VK_DRIVER_FILES");
    const char *var = "VK_DRIVER_FILES";
    if (!files) {
        files = vulkan_env_or(env, "VK_ICD_FILENAMES");
        var = "VK_ICD_FILENAMES";
    }
    if (files) {
        vulkan_find_list(&f, files, var);
        *not_listed = f.dropped;
        return f.n;
    }
    const char *add = vulkan_env_or(env, "VK_ADD_DRIVER_FILES");
    if (add)
        vulkan_find_list(&f, add, "VK_ADD_DRIVER_FILES");
    const char *home = vulkan_env_or(env, "HOME");
    const char *cfg_home = vulkan_env_or(env, "XDG_CONFIG_HOME");
    char *p = cfg_home ? str_dup(cfg_home) : home ? str_printf("%s/.config", home) : NULL;
    if (p)
        vulkan_find_dirs(&f, p);
    free(p);
    const char *cfg_dirs = vulkan_env_or(env, "XDG_CONFIG_DIRS");
    vulkan_find_dirs(&f, cfg_dirs ? cfg_dirs : "/etc/xdg");
    vulkan_find_dirs(&f, "/etc");
    const char *data_home = vulkan_env_or(env, "XDG_DATA_HOME");
    p = data_home ? str_dup(data_home) : home ? str_printf("%s/.local/share", home) : NULL;
    if (p)
        vulkan_find_dirs(&f, p);
    free(p);
    const char *data_dirs = vulkan_env_or(env, "XDG_DATA_DIRS");
    vulkan_find_dirs(&f, data_dirs ? data_dirs : "/usr/local/share:/usr/share");
    *not_listed = f.dropped;
    return f.n;
}

void vulkan_driver_free(struct vulkan_driver *d)
{
    free(d->path);
    free(d->via);
    vulkan_manifest_info_free(&d->info);
    free(d->library);
    free(d->real_path);
    free(d->detail);
    json_object_put(d->answer);
    isolate_result_clear(&d->smoke_fail);
    memset(d, 0, sizeof(*d));
}

/* ---- each manifest checked before it is loaded ---- */

static void vulkan_set(struct vulkan_driver *d, int status, char *detail)
{
    d->status = status;
    free(d->detail);
    d->detail = detail;
}

/* Where the loader finds D's library: a path with a slash is taken as it is, relative ones from the
 * manifest's directory; a bare name goes to dlopen's search. Sets D->library, or the status. */
static void vulkan_check_library(struct probe_ctx *ctx, struct ldsearch *s, struct vulkan_driver *d)
{
    const char *lib = d->info.library_path;
    char *path = NULL;
    if (lib[0] == '/') {
        path = str_dup(lib);
    } else if (strchr(lib, '/')) {
        const char *slash = strrchr(d->path, '/');
        path = str_printf("%.*s/%s", slash ? (int)(slash - d->path) : 1, slash ? d->path : ".", lib);
    } else {
        const char *via = NULL;
        path = s ? ldsearch_find(s, lib, &via) : NULL;
        if (!path) {
            vulkan_set(d, RESULT_VULKAN_DRV_MISSING_LIBRARY, str_printf("%s is not in the library search path", lib));
            report_add_finding(ctx->report, "vulkan.missing-library", d->path,
                               "%s names %s, which the dynamic linker does not find", d->path, lib);
            return;
        }
    }
    struct stat st;
    if (!path || hostfs_stat(ctx->fs, path, &st, true) != 0) {
        vulkan_set(d, RESULT_VULKAN_DRV_MISSING_LIBRARY, str_printf("%s does not exist", path ? path : lib));
        report_add_finding(ctx->report, "vulkan.missing-library", d->path, "%s names %s, which does not exist",
                           d->path, path ? path : lib);
        free(path);
        return;
    }
    struct ldsearch_elf elf;
    if (libarch_file(ctx->fs, path, &elf) == 1) {
        vulkan_set(d, RESULT_VULKAN_DRV_WRONG_ARCH, str_printf("%s is built for another architecture", path));
        libarch_add(ctx->report, "vulkan.wrong-arch", d->path, path, &elf, d->path, "The Vulkan driver ",
                    "the loader skips it (expected for a multiarch system's 32-bit driver)");
        free(path);
        return;
    }
    d->library = path;
}

void vulkan_manifests_check(struct probe_ctx *ctx, struct vulkan_driver *d, size_t n)
{
    struct ldsearch s;
    bool have_s = ldsearch_init(&s, ctx->fs, probe_live(ctx) ? getenv("LD_LIBRARY_PATH") : NULL) == 0;
    for (size_t i = 0; i < n; i++) {
        char *buf = NULL, *why = NULL;
        size_t len = 0;
        int rc = hostfs_read_file(ctx->fs, d[i].path, VULKAN_MANIFEST_MAX_BYTES, &buf, &len);
        if (rc < 0) {
            vulkan_set(&d[i], RESULT_VULKAN_DRV_UNREADABLE, str_printf("cannot be read: %s", strerror(-rc)));
            report_add_finding(ctx->report, "vulkan.manifest-unreadable", d[i].path, "%s (%s) cannot be read: %s",
                               d[i].path, d[i].via, strerror(-rc));
        } else if (vulkan_manifest_parse(buf, len, &d[i].info, &why) < 0) {
            vulkan_set(&d[i], RESULT_VULKAN_DRV_MALFORMED, str_printf("malformed: %s", why ? why : "?"));
            report_add_finding(ctx->report, "vulkan.manifest-malformed", d[i].path,
                               "%s is malformed (%s): the Vulkan loader skips it", d[i].path, why ? why : "?");
        } else {
            vulkan_check_library(ctx, have_s ? &s : NULL, &d[i]);
            d[i].real_path = hostfs_real_path(ctx->fs, d[i].path);
        }
        free(why);
        free(buf);
    }
    if (have_s)
        ldsearch_free(&s);
}
