/* cuda_libs.c: the cuda probe's library part: every CUDA library a framework can load, its version, and what is wrong. */
#include <errno.h>
#include <stdint.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "cuda_libs.h"
#include "results/result_pci.h"
#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "strutil.h"
#include "vendor.h"

/* Library files looked at, at most: each costs a load (and a child of its own when its group's child
 * fails), and a real machine has about 40 (the system's and one pip site's); more is a tree built to
 * exhaust us. */
#define CUDA_LIBS_MAX_FILES 128

/* N of "libX.so.N" (a SONAME: one number after .so.), or -1 for other names. */
static int cuda_libs_soname_major(const char *name)
{
    const char *so = strstr(name, ".so.");
    if (!so)
        return -1;
    const char *d = so + 4;
    if (!*d || strspn(d, "0123456789") != strlen(d) || strlen(d) > 4)
        return -1;
    return atoi(d);
}

/* The family key of a file: the row's, or for cuDNN's sub-libraries the file's own stem ("cudnn_ops"). */
static char *cuda_libs_key(const struct cuda_lib_family *fam, const char *name)
{
    if (fam->key)
        return strdup(fam->key);
    const char *stem = strncmp(name, "lib", 3) == 0 ? name + 3 : name;
    const char *so = strstr(stem, ".so");
    return strndup(stem, so ? (size_t)(so - stem) : strlen(stem));
}

/* The entry for file FILE resolving to REAL on the search path (PIP false) or in a wheel (PIP true). */
static struct cuda_lib_entry *cuda_libs_find_real(struct cuda_libs_state *st, const char *real, const char *file,
                                                  bool pip)
{
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->e[i].real, real) == 0 && strcmp(st->e[i].file, file) == 0 && !st->e[i].wheel == !pip)
            return &st->e[i];
    return NULL;
}

/* Record one file (PATH, named NAME) of family FAM, found VIA ENTRY (and in WHEEL/SITE for pip). */
static void cuda_libs_add(struct cuda_libs_state *st, const struct cuda_lib_family *fam, const char *name,
                          const char *path, const char *via, const char *entry, const char *wheel,
                          const char *site)
{
    int soname = cuda_libs_soname_major(name);
    if (soname < 0)
        return; /* the development link libX.so and full-version names: nothing loads them by name */
    char *real = ldsearch_realpath(st->fs, path);
    if (!real)
        return; /* dangling */
    /* The same file twice on the search path (a symlink in /usr/local/lib to the toolkit's) is one entry;
     * a wheel's file stays its own entry even when it is also on the search path. */
    if (cuda_libs_find_real(st, real, name, wheel != NULL)) {
        free(real);
        return;
    }
    if (st->n >= CUDA_LIBS_MAX_FILES) {
        st->truncated = true;
        free(real);
        return;
    }
    struct cuda_lib_entry *ne = realloc(st->e, (st->n + 1) * sizeof(*ne));
    if (!ne) {
        free(real);
        st->err = -ENOMEM;
        return;
    }
    st->e = ne;
    struct cuda_lib_entry *e = &st->e[st->n++];
    memset(e, 0, sizeof(*e));
    e->family = fam;
    e->key = cuda_libs_key(fam, name);
    e->file = strdup(name);
    e->path = strdup(path);
    e->real = real;
    e->via = via;
    e->entry = entry ? strdup(entry) : NULL;
    e->wheel = wheel ? strdup(wheel) : NULL;
    e->site = site ? strdup(site) : NULL;
    e->soname_major = soname;
    e->major = e->minor = e->patch = -1;
    e->cudart_version = -1;
    e->cuda_major = e->cuda_minor = -1;
    if (!e->key || !e->file || !e->path)
        st->err = -ENOMEM;
}

static void cuda_libs_entry_clear(struct cuda_lib_entry *e)
{
    free(e->key);
    free(e->file);
    free(e->path);
    free(e->real);
    free(e->entry);
    free(e->wheel);
    free(e->site);
    free(e->version);
    free(e->cuda_source);
    free(e->error);
    free(e->load_path);
}

/* Every file on the dynamic linker's path, in its order, then every wheel dir. */
static void cuda_libs_collect(struct cuda_libs_state *st)
{
    for (size_t k = 0; k < cuda_lib_n_families; k++) {
        const struct cuda_lib_family *fam = &cuda_lib_families[k];
        struct ldsearch_file *f = NULL;
        size_t n = 0;
        if (ldsearch_candidates(&st->search, fam->pattern, &f, &n) < 0) {
            st->err = -ENOMEM;
            return;
        }
        for (size_t i = 0; i < n; i++)
            cuda_libs_add(st, fam, f[i].name, f[i].path, f[i].via, f[i].entry, NULL, NULL);
        ldsearch_files_free(f, n);
    }
    struct ldsearch_wheel *w = NULL;
    size_t nw = 0;
    if (ldsearch_wheels(st->fs, getenv("PATH"), getenv("VIRTUAL_ENV"), getenv("HOME"), &w, &nw) < 0) {
        st->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < nw; i++)
        for (size_t k = 0; k < cuda_lib_n_families; k++) {
            char **names = NULL;
            size_t n = 0;
            ldsearch_list(&st->search, w[i].dir, cuda_lib_families[k].pattern, &names, &n);
            for (size_t j = 0; j < n; j++) {
                char *p = ldsearch_join(w[i].dir, names[j]);
                if (p && ldsearch_elf_loadable(st->fs, p) == 1)
                    cuda_libs_add(st, &cuda_lib_families[k], names[j], p, "pip", w[i].origin, w[i].dir, w[i].site);
                free(p);
            }
            ldsearch_strv_free(names, n);
        }
    ldsearch_wheels_free(w, nw);

    /* Which file dlopen(name) takes in this environment. */
    for (size_t i = 0; i < st->n; i++) {
        bool done = false;
        for (size_t j = 0; j < i && !done; j++)
            done = strcmp(st->e[j].file, st->e[i].file) == 0;
        if (done)
            continue;
        const char *via = NULL;
        char *p = ldsearch_find(&st->search, st->e[i].file, &via);
        char *real = p ? ldsearch_realpath(st->fs, p) : NULL;
        struct cuda_lib_entry *hit = real ? cuda_libs_find_real(st, real, st->e[i].file, false) : NULL;
        if (hit)
            hit->loaded_first = true;
        free(real);
        free(p);
    }
}

/* ---- the toolkit (nvcc is never run: its version files are read) ---- */

static void cuda_libs_toolkit_add(struct cuda_libs_state *st, const char *dir, const char *why)
{
    const struct hostfs *fs = st->fs;
    char *real = ldsearch_realpath(fs, dir);
    if (!real)
        return;
    for (size_t i = 0; i < st->n_tk; i++)
        if (strcmp(st->tk[i].dir, real) == 0) {
            free(real);
            return;
        }
    struct cuda_toolkit t = {.dir = real, .major = -1, .minor = -1};
    char *text = NULL, *path = NULL;
    /* version.json (CUDA 11.1 on): {"cuda": {"version": "13.0.2"}, "libcufft": {"version": ...}, ...} */
    path = ldsearch_join(real, "version.json");
    if (path && hostfs_read_file(fs, path, 0, &text, NULL) == 0) {
        json_object *j = isolate_json_parse(text, strlen(text), JSON_TOKENER_DEFAULT_DEPTH, false, NULL);
        json_object *cuda = NULL, *v = NULL;
        if (j && json_object_is_type(j, json_type_object) && json_object_object_get_ex(j, "cuda", &cuda) &&
            json_object_object_get_ex(cuda, "version", &v) && json_object_is_type(v, json_type_string)) {
            t.version = str_sanitize(strdup(json_object_get_string(v)));
            t.source = strdup(path);
            t.components = j;
        } else {
            json_object_put(j);
        }
    }
    free(text);
    text = NULL;
    free(path);
    path = NULL;
    if (!t.version) { /* version.txt (CUDA 11.0 and older): "CUDA Version 10.2.89" */
        path = ldsearch_join(real, "version.txt");
        if (path && hostfs_read_file(fs, path, 4096, &text, NULL) == 0) {
            const char *p = strstr(text, "CUDA Version ");
            if (p) {
                p += 13;
                t.version = strndup(p, strspn(p, "0123456789."));
                t.source = strdup(path);
            }
        }
        free(text);
        text = NULL;
        free(path);
        path = NULL;
    }
    if (!t.version) { /* the toolkit's own header: #define CUDART_VERSION 13000 */
        path = ldsearch_join(real, "include/cuda_runtime_api.h");
        if (path && hostfs_read_file(fs, path, 0, &text, NULL) == 0) {
            const char *p = strstr(text, "#define CUDART_VERSION");
            if (p) {
                long v = strtol(p + 22, NULL, 10);
                if (v > 0 && v < 1000000) {
                    t.version = str_printf("%ld.%ld", v / 1000, (v % 1000) / 10);
                    t.source = strdup(path);
                }
            }
        }
        free(text);
        free(path);
    }
    if (t.version) {
        t.major = atoi(t.version);
        const char *dot = strchr(t.version, '.');
        t.minor = dot ? atoi(dot + 1) : -1;
    } else {
        /* a directory without any version file is not a toolkit we can speak for */
        free(t.dir);
        free(t.source);
        json_object_put(t.components);
        return;
    }
    t.why = strdup(why);
    struct cuda_toolkit *nt = realloc(st->tk, (st->n_tk + 1) * sizeof(*nt));
    if (!nt) {
        free(t.dir);
        free(t.why);
        free(t.version);
        free(t.source);
        json_object_put(t.components);
        st->err = -ENOMEM;
        return;
    }
    st->tk = nt;
    st->tk[st->n_tk++] = t;
}

static void cuda_libs_toolkits(struct cuda_libs_state *st)
{
    const char *path_env = getenv("PATH");
    char *copy = path_env ? strdup(path_env) : NULL;
    char *save = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        char *nvcc = ldsearch_join(d, "nvcc");
        struct stat sb;
        if (nvcc && hostfs_stat(st->fs, nvcc, &sb, true) == 0 && S_ISREG(sb.st_mode)) {
            char *realnvcc = ldsearch_realpath(st->fs, nvcc);
            char *dir = realnvcc ? strdup(realnvcc) : NULL;
            char *slash = dir ? strrchr(dir, '/') : NULL;
            if (slash) { /* .../bin/nvcc -> ... */
                *slash = '\0';
                slash = strrchr(dir, '/');
                if (slash && strcmp(slash, "/bin") == 0) {
                    *slash = '\0';
                    char *why = str_printf("nvcc on PATH (%s)", nvcc);
                    if (why && *dir)
                        cuda_libs_toolkit_add(st, dir, why);
                    free(why);
                }
            }
            free(dir);
            free(realnvcc);
            free(nvcc);
            break; /* the first nvcc on PATH is the one people run */
        }
        free(nvcc);
    }
    free(copy);
    cuda_libs_toolkit_add(st, "/usr/local/cuda", "/usr/local/cuda");
}

/* The toolkit whose version.json lists this library's version, or NULL. */
static const struct cuda_toolkit *cuda_libs_toolkit_of(const struct cuda_libs_state *st, const struct cuda_lib_entry *e)
{
    if (!e->version)
        return NULL;
    size_t l = strlen(e->version);
    for (size_t i = 0; i < st->n_tk; i++) {
        const char *cv = cuda_toolkit_component_version(&st->tk[i], e->key); /* "12.0.0.61" vs our "12.0.0" */
        if (cv && strncmp(cv, e->version, l) == 0 && (cv[l] == '\0' || cv[l] == '.'))
            return &st->tk[i];
    }
    return NULL;
}

static void cuda_libs_toolkits_free(struct cuda_toolkit *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].dir);
        free(t[i].why);
        free(t[i].version);
        free(t[i].source);
        json_object_put(t[i].components);
    }
    free(t);
}

/* ---- versions, from the children ---- */

static void cuda_libs_take_result(struct cuda_libs_state *st, struct cuda_lib_entry *e, const struct isolate_result *r)
{
    json_object *err = NULL;
    if (r->budget_spent)
        return; /* never started, no time left: unknown, not a failure (core.timeout-spent says so) */
    if (r->status != ISOLATE_OK) {
        e->error = str_printf("loading it %s", r->detail ? r->detail : isolate_status_name(r->status));
        e->crashed = r->status == ISOLATE_SIGNAL;
        return;
    }
    if (json_object_object_get_ex(r->value, "error", &err)) {
        e->error = str_sanitize(strdup(json_object_get_string(err)));
        return;
    }
    if (json_object_object_get_ex(r->value, "no_version_fn", NULL)) {
        e->no_version_fn = true; /* loaded fine: cuda_libs_family_versions gives it its main library's */
        return;
    }
    e->major = (int)jsonget_int(r->value, "major", -1);
    e->minor = (int)jsonget_int(r->value, "minor", -1);
    e->patch = (int)jsonget_int(r->value, "patch", -1);
    e->cudart_version = (int)jsonget_int(r->value, "cudart_version", -1);
    if (e->major < 0 || e->minor < 0) {
        e->error = strdup("the library answered no version");
        return;
    }
    e->have_version = true;
    e->version_from = "library";
    /* The file name may carry more digits than the API (cudart and NVRTC answer major.minor only). */
    const char *fv = cuda_libs_name_version(e->real);
    char *api = e->patch >= 0 ? str_printf("%d.%d.%d", e->major, e->minor, e->patch)
                              : str_printf("%d.%d", e->major, e->minor);
    if (fv && api && strncmp(fv, api, strlen(api)) == 0 && (fv[strlen(api)] == '.' || !fv[strlen(api)])) {
        free(api);
        e->version = strdup(fv);
    } else {
        e->version = api;
    }

    /* The CUDA release it belongs to. */
    const struct cuda_toolkit *tk = cuda_libs_toolkit_of(st, e);
    const char *fam = e->key;
    if (e->family->kind == CUDA_LIB_CUDART || e->family->kind == CUDA_LIB_NVRTC ||
        e->family->kind == CUDA_LIB_NVJITLINK) {
        e->cuda_major = e->major;
        e->cuda_minor = e->minor;
        e->cuda_source = strdup("its own version");
    } else if (e->cudart_version > 0) {
        e->cuda_major = (int)(e->cudart_version / 1000);
        e->cuda_minor = (int)((e->cudart_version % 1000) / 10);
        e->cuda_source = str_printf("%s()", e->family->cudart_fn);
    } else if (tk) {
        e->cuda_major = tk->major;
        e->cuda_minor = tk->minor;
        e->cuda_source = str_printf("%s", tk->source);
    } else if ((e->cuda_major = cuda_libs_cuda_major_of(fam, e->major, e->minor, e->patch)) >= 0) {
        e->cuda_source = strdup("NVIDIA's component version table");
    }
}

/* Length of PATH's directory part ("/a/b/libx.so.9": 4), or 0. */
static size_t cuda_libs_dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

/* A member loaded without a version function of its own (family->version_of) is its family's main
 * library's release: the file of that key and SONAME major in the same directory, as cuDNN installs
 * them (a wheel's lib/, a toolkit's lib64/). With none there its version stays unknown, which is no
 * fault: it loaded. */
static void cuda_libs_family_versions(struct cuda_libs_state *st)
{
    for (size_t i = 0; i < st->n; i++) {
        struct cuda_lib_entry *e = &st->e[i];
        if (!e->no_version_fn || !e->family->version_of)
            continue;
        size_t dl = cuda_libs_dir_len(e->real);
        for (size_t j = 0; j < st->n; j++) {
            const struct cuda_lib_entry *m = &st->e[j];
            if (!m->have_version || !m->family->key || strcmp(m->family->key, e->family->version_of) != 0 ||
                m->soname_major != e->soname_major || cuda_libs_dir_len(m->real) != dl ||
                strncmp(m->real, e->real, dl) != 0)
                continue;
            e->major = m->major;
            e->minor = m->minor;
            e->patch = m->patch;
            e->version = m->version ? strdup(m->version) : NULL;
            e->version_from = "main library";
            e->cuda_major = m->cuda_major;
            e->cuda_minor = m->cuda_minor;
            e->cuda_source = str_printf("%s: %s", m->file, m->cuda_source ? m->cuda_source : "unknown");
            break;
        }
    }
}

static void cuda_libs_versions(struct cuda_libs_state *st)
{
    if (st->n == 0)
        return;
    struct cuda_lib_entry **job_e = calloc(st->n, sizeof(*job_e));
    struct isolate_result *res = calloc(st->n, sizeof(*res));
    size_t *job_of = calloc(st->n, sizeof(*job_of));
    if (!job_e || !res || !job_of) {
        free(job_e);
        free(res);
        free(job_of);
        st->err = -ENOMEM;
        return;
    }
    /* What a file states is not asked of the library: loading cuBLAS or cuDNN costs more than the rest of a
     * check. Then one question per library file: a wheel's symlink to a system file shares that file's answer. */
    cuda_libs_file_versions(st);
    cuda_libs_deps(st); /* what loading them would have caught: a dependency missing */
    size_t n_jobs = 0;
    for (size_t i = 0; i < st->n && !st->err; i++) {
        struct cuda_lib_entry *e = &st->e[i];
        job_of[i] = SIZE_MAX;
        if (e->have_version)
            continue;
        size_t j = 0;
        while (j < i && (st->e[j].have_version || strcmp(st->e[j].real, e->real) != 0))
            j++;
        if (j < i) {
            job_of[i] = job_of[j];
            continue;
        }
        e->load_path = hostfs_real_path(st->fs, e->real);
        if (!e->load_path) {
            st->err = -ENOMEM;
            break;
        }
        e->arg.path = e->load_path;
        e->arg.family = e->family;
        e->arg.soname_major = e->soname_major;
        job_e[n_jobs] = e;
        job_of[i] = n_jobs++;
    }
    if (!st->err && n_jobs > 0)
        cuda_libs_load(st, job_e, n_jobs, res);
    for (size_t i = 0; i < st->n && !st->err; i++)
        if (job_of[i] != SIZE_MAX)
            cuda_libs_take_result(st, &st->e[i], &res[job_of[i]]);
    if (!st->err)
        cuda_libs_family_versions(st);
    for (size_t j = 0; j < n_jobs; j++)
        isolate_result_clear(&res[j]);
    free(job_e);
    free(res);
    free(job_of);
}

/* ---- data["libraries"] ---- */

static json_object *cuda_libs_entry_json(const struct cuda_lib_entry *e)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "library", jsonstr_or_null(e->key));
    json_object_object_add(o, "file", jsonstr_or_null(e->file));
    json_object_object_add(o, "path", jsonstr_or_null(e->real));
    json_object_object_add(o, "found_at", jsonstr_or_null(e->path));
    json_object_object_add(o, "found_via", jsonstr_or_null(e->via));
    json_object_object_add(o, "search_entry", jsonstr_or_null(e->entry));
    json_object_object_add(o, "wheel", jsonstr_or_null(e->wheel));
    json_object_object_add(o, "loaded_first", json_object_new_boolean(e->loaded_first));
    json_object_object_add(o, "version", jsonstr_or_null(e->version));
    json_object_object_add(o, "version_from", jsonstr_or_null(e->version_from));
    json_object_object_add(o, "cuda_major", e->cuda_major >= 0 ? json_object_new_int(e->cuda_major) : NULL);
    json_object_object_add(o, "cuda_minor", e->cuda_minor >= 0 ? json_object_new_int(e->cuda_minor) : NULL);
    json_object_object_add(o, "cuda_version_from", jsonstr_or_null(e->cuda_source));
    json_object_object_add(o, "error", jsonstr_or_null(e->error));
    return o;
}

static json_object *cuda_libs_toolkit_json(const struct cuda_toolkit *t, size_t n)
{
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "dir", jsonstr_or_null(t[i].dir));
        json_object_object_add(o, "found_via", jsonstr_or_null(t[i].why));
        json_object_object_add(o, "version", jsonstr_or_null(t[i].version));
        json_object_object_add(o, "version_from", jsonstr_or_null(t[i].source));
        json_object_array_add(a, o);
    }
    return a;
}

/* Sanitise every string that came from the host before it reaches the report. */
static void cuda_libs_sanitize(struct cuda_libs_state *st)
{
    for (size_t i = 0; i < st->n; i++) {
        struct cuda_lib_entry *e = &st->e[i];
        char **fields[] = {&e->key, &e->file, &e->path, &e->real, &e->entry, &e->wheel, &e->site, &e->version};
        for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
            if (*fields[k])
                str_sanitize(*fields[k]);
    }
    for (size_t i = 0; i < st->n_tk; i++) {
        str_sanitize(st->tk[i].dir);
        if (st->tk[i].why)
            str_sanitize(st->tk[i].why);
        if (st->tk[i].source)
            str_sanitize(st->tk[i].source);
    }
}

const char *cuda_libs_no_load_reason(const struct probe_ctx *ctx, const struct cuda_facts *facts)
{
    if (!probe_host_files(ctx))
        return "the libraries are in the --root tree, not on this host";
    const struct cli_options *o = ctx->opts;
    if (o && o->command && strcmp(o->command, "cuda") == 0)
        return NULL; /* asked by name */
    for (size_t i = 0; o && i < o->n_requires; i++)
        if (strstr(o->requires[i], "cuda") || strstr(o->requires[i], "compute-capability"))
            return NULL;
    /* Without a GPU and a driver, no CUDA library can be used here, and loading cuDNN alone costs more than
     * the rest of a check. An NVIDIA GPU on the bus, the nvidia module or any libcuda.so.1 (even a stub or a
     * broken one) means the libraries matter: they are loaded. */
    if (!facts || !facts->pci_known || facts->nvidia_gpu_present || facts->nvidia_module_loaded ||
        facts->kernel_driver_version[0] || !facts->libcuda_missing)
        return NULL;
    return CUDA_LIBS_NO_GPU;
}

static void cuda_libs_run(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_facts *facts,
                          const struct hostfs *fs, const char *not_loaded, const char *ld_library_path);

/* --health on a host where NVIDIA's hardware is absent (no NVIDIA GPU on a bus the PCI facts list whole, no
 * module, no libcuda.so.1): the libraries are not even looked for (the search reads about a thousand files),
 * as none can be used and the health question is about the hardware present. Says so in the section. */
static bool cuda_libs_skip_for_health(struct probe_ctx *ctx, struct report_section *sec, const char *why)
{
    char hw[160];
    if (!ctx->opts || !ctx->opts->health || !why || strcmp(why, CUDA_LIBS_NO_GPU) != 0 ||
        vendor_cl_hardware(vendor_cl_by_name("nvidia"), result_pci_get(ctx->report), NULL, hw, sizeof(hw)) != VENDOR_HW_ABSENT)
        return false;
    json_object_object_add(sec->data, "libraries", json_object_new_array());
    json_object_object_add(sec->data, "libraries_not_loaded", json_object_new_string("not looked for under --health: " CUDA_LIBS_NO_GPU));
    json_object_object_add(sec->data, "toolkits", json_object_new_array());
    report_section_add_note(sec, "CUDA libraries: not looked for under --health (%s)", CUDA_LIBS_NO_GPU);
    return true;
}

void cuda_libs_report(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_facts *facts)
{
    /* Under --root the libraries are looked up in the tree and never loaded; this host's LD_LIBRARY_PATH
     * says nothing about that tree. */
    const char *why = cuda_libs_no_load_reason(ctx, facts);
    if (cuda_libs_skip_for_health(ctx, sec, why))
        return;
    cuda_libs_run(ctx, sec, facts, ctx->fs, why, probe_host_files(ctx) ? getenv("LD_LIBRARY_PATH") : NULL);
}

void cuda_libs_report_fs(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_facts *facts,
                         const struct hostfs *fs, const char *not_loaded)
{
    cuda_libs_run(ctx, sec, facts, fs, not_loaded, getenv("LD_LIBRARY_PATH"));
}

/* Each library's version from its file name ("libcudart.so.13.0.96": 13.0.96), else from its SONAME
 * (libcudart.so.13: 13), without loading it. */
static void cuda_libs_name_versions(struct cuda_libs_state *st)
{
    for (size_t i = 0; i < st->n; i++) {
        struct cuda_lib_entry *e = &st->e[i];
        const char *fv = cuda_libs_name_version(e->real);
        if (fv) {
            e->version = strdup(fv);
            e->version_from = "file name";
        } else if (e->soname_major >= 0) {
            e->version = str_printf("%d", e->soname_major);
            e->version_from = "SONAME";
        }
    }
}

static void cuda_libs_run(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_facts *facts,
                          const struct hostfs *fs, const char *not_loaded, const char *ld_library_path)
{
    struct cuda_libs_state st = {.ctx = ctx, .sec = sec, .facts = facts, .fs = fs, .not_loaded = not_loaded};
    if (ldsearch_init(&st.search, fs, ld_library_path) < 0)
        st.err = -ENOMEM;
    if (!st.err)
        cuda_libs_collect(&st);
    if (!st.err)
        cuda_libs_toolkits(&st);
    if (!st.err && !not_loaded)
        cuda_libs_versions(&st);
    else if (!st.err)
        cuda_libs_name_versions(&st);
    if (st.err) {
        report_section_add_note(sec, "CUDA libraries: out of memory while searching");
    } else {
        cuda_libs_sanitize(&st);
        json_object *a = json_object_new_array();
        for (size_t i = 0; i < st.n; i++)
            json_object_array_add(a, cuda_libs_entry_json(&st.e[i]));
        json_object_object_add(sec->data, "libraries", a);
        json_object_object_add(sec->data, "libraries_not_loaded", not_loaded ? json_object_new_string(not_loaded) : NULL);
        json_object_object_add(sec->data, "toolkits", cuda_libs_toolkit_json(st.tk, st.n_tk));
        if (st.truncated)
            report_section_add_note(sec, "CUDA libraries: more than %d files found; only the first %d were examined",
                                    CUDA_LIBS_MAX_FILES, CUDA_LIBS_MAX_FILES);
        cuda_libs_findings(&st);
    }
    for (size_t i = 0; i < st.n; i++)
        cuda_libs_entry_clear(&st.e[i]);
    free(st.e);
    cuda_libs_toolkits_free(st.tk, st.n_tk);
    ldsearch_free(&st.search);
}
