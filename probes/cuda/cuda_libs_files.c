/* cuda_libs_files.c: library versions their files state (file names, wheels' dist-info, a toolkit's version.json), so that nothing is loaded for them. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cuda_libs.h"
#include "hostfs.h"
#include "ldsearch.h"
#include "strutil.h"

/* A RECORD larger than this is not an NVIDIA wheel's (the largest, nvidia-cuda-nvcc's, is about 100 KiB). */
#define CUDA_DIST_MAX_RECORD (4 * 1024 * 1024)
/* dist-info directories read per place, at most (a site with every NVIDIA wheel has about 20). */
#define CUDA_DIST_MAX_PER_DIR 64

int cuda_libs_parse_version(const char *v, int *major, int *minor, int *patch)
{
    *major = *minor = *patch = -1;
    if (!v || !isdigit((unsigned char)v[0]))
        return -1;
    int *out[3] = {major, minor, patch};
    const char *p = v;
    for (int k = 0; k < 3; k++) {
        if (!isdigit((unsigned char)*p))
            break;
        char *end;
        long x = strtol(p, &end, 10);
        if (x < 0 || x > 1000000 || end - p > 7)
            return -1;
        *out[k] = (int)x;
        if (*end != '.')
            break;
        p = end + 1;
    }
    return *minor >= 0 ? 0 : -1;
}

int cuda_dist_dirname(const char *name, char **dist, char **version)
{
    *dist = *version = NULL;
    size_t n = strlen(name);
    const char *suffix = ".dist-info";
    size_t sl = strlen(suffix);
    if (n <= sl || strcmp(name + n - sl, suffix) != 0)
        return -1;
    const char *dash = memchr(name, '-', n - sl);
    if (!dash || dash == name)
        return -1;
    const char *v = dash + 1;
    size_t vl = strspn(v, "0123456789.");
    while (vl > 0 && v[vl - 1] == '.')
        vl--;
    if (vl == 0 || !isdigit((unsigned char)v[0]) || !memchr(v, '.', vl))
        return -1;
    *dist = strndup(name, (size_t)(dash - name));
    *version = strndup(v, vl);
    if (!*dist || !*version) {
        free(*dist);
        free(*version);
        *dist = *version = NULL;
        return -1;
    }
    return 0;
}

int cuda_dist_cuda_major(const char *dist)
{
    const char *cu = dist ? strrchr(dist, '_') : NULL;
    if (!cu || strncasecmp(cu, "_cu", 3) != 0)
        return -1;
    const char *d = cu + 3;
    size_t nd = strspn(d, "0123456789");
    if (nd == 0 || nd > 3 || d[nd])
        return -1;
    return atoi(d);
}

bool cuda_dist_record_lists(const char *text, size_t len, const char *base, long long size)
{
    size_t bl = strlen(base);
    if (bl == 0 || size < 0)
        return false;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *c1 = memchr(p, ',', (size_t)(le - p)); /* path,hash,size: NVIDIA's paths hold no comma */
        const char *c2 = c1 ? memchr(c1 + 1, ',', (size_t)(le - c1 - 1)) : NULL;
        if (c2 && (size_t)(c1 - p) >= bl && memcmp(c1 - bl, base, bl) == 0 &&
            ((size_t)(c1 - p) == bl || c1[-(long)bl - 1] == '/')) {
            const char *s = c2 + 1;
            size_t sl = (size_t)(le - s);
            while (sl > 0 && (s[sl - 1] == '\r' || s[sl - 1] == ' '))
                sl--;
            char buf[24];
            size_t digits = 0;
            while (digits < sl && isdigit((unsigned char)s[digits]))
                digits++;
            if (sl > 0 && sl < sizeof(buf) && digits == sl) {
                memcpy(buf, s, sl);
                buf[sl] = '\0';
                if (strtoll(buf, NULL, 10) == size)
                    return true;
            }
        }
        p = le + 1;
    }
    return false;
}

/* One NVIDIA wheel's dist-info: its name, version and RECORD. */
struct cuda_dist {
    char *name;    /* "nvidia_cudnn_cu12" */
    char *version; /* "9.28.0.42" */
    char *record;
    size_t record_len;
};

struct cuda_dists {
    struct cuda_dist *d;
    size_t n;
    char **dirs; /* the places already read */
    size_t n_dirs;
};

static void cuda_dists_free(struct cuda_dists *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        free(ds->d[i].name);
        free(ds->d[i].version);
        free(ds->d[i].record);
    }
    free(ds->d);
    for (size_t i = 0; i < ds->n_dirs; i++)
        free(ds->dirs[i]);
    free(ds->dirs);
}

/* Read the NVIDIA wheels' dist-info directories in DIR (a site-packages, a toolkit's dist-info/). */
static void cuda_dists_read(const struct hostfs *fs, const char *dir, struct cuda_dists *ds)
{
    for (size_t i = 0; i < ds->n_dirs; i++)
        if (strcmp(ds->dirs[i], dir) == 0)
            return;
    char **nd = realloc(ds->dirs, (ds->n_dirs + 1) * sizeof(*nd));
    if (!nd)
        return;
    ds->dirs = nd;
    if (!(ds->dirs[ds->n_dirs] = strdup(dir)))
        return;
    ds->n_dirs++;
    DIR *d = hostfs_opendir(fs, dir);
    if (!d)
        return;
    struct dirent *de;
    size_t taken = 0;
    while ((de = readdir(d)) != NULL && taken < CUDA_DIST_MAX_PER_DIR) {
        if (strncasecmp(de->d_name, "nvidia", 6) != 0)
            continue;
        struct cuda_dist x = {0};
        if (cuda_dist_dirname(de->d_name, &x.name, &x.version) != 0)
            continue;
        char *sub = ldsearch_join(dir, de->d_name);
        char *rec = sub ? ldsearch_join(sub, "RECORD") : NULL;
        struct cuda_dist *grown = NULL;
        if (rec && hostfs_read_file(fs, rec, CUDA_DIST_MAX_RECORD, &x.record, &x.record_len) == 0 &&
            (grown = realloc(ds->d, (ds->n + 1) * sizeof(*grown))) != NULL) {
            ds->d = grown;
            ds->d[ds->n++] = x;
            taken++;
        } else {
            free(x.name);
            free(x.version);
            free(x.record);
        }
        free(sub);
        free(rec);
    }
    closedir(d);
}

/* The dist-info whose RECORD lists E's file with its size, or NULL. */
static const struct cuda_dist *cuda_dists_owner(const struct cuda_libs_state *st, const struct cuda_dists *ds,
                                                const struct cuda_lib_entry *e)
{
    struct stat sb;
    const char *slash = strrchr(e->real, '/');
    if (ds->n == 0 || !slash || hostfs_stat(st->fs, e->real, &sb, true) != 0)
        return NULL;
    for (size_t i = 0; i < ds->n; i++)
        if (cuda_dist_record_lists(ds->d[i].record, ds->d[i].record_len, slash + 1, (long long)sb.st_size))
            return &ds->d[i];
    return NULL;
}

const char *cuda_toolkit_component_version(const struct cuda_toolkit *tk, const char *family)
{
    static const struct {
        const char *family, *component;
    } map[] = {
        {"cudart", "cuda_cudart"},   {"cublas", "libcublas"},     {"cublasLt", "libcublas"},
        {"cufft", "libcufft"},       {"cusparse", "libcusparse"}, {"cusolver", "libcusolver"},
        {"nvrtc", "cuda_nvrtc"},     {"nvJitLink", "libnvjitlink"},
    };
    for (size_t k = 0; tk->components && family && k < sizeof(map) / sizeof(map[0]); k++) {
        json_object *c = NULL, *v = NULL;
        if (strcmp(map[k].family, family) == 0 && json_object_object_get_ex(tk->components, map[k].component, &c) &&
            json_object_object_get_ex(c, "version", &v) && json_object_is_type(v, json_type_string))
            return json_object_get_string(v);
    }
    return NULL;
}

/* The version of E's component in the version.json of the toolkit whose directory holds E, or NULL. */
static const char *cuda_libs_toolkit_component(const struct cuda_libs_state *st, const struct cuda_lib_entry *e,
                                               const struct cuda_toolkit **tk_out)
{
    for (size_t i = 0; i < st->n_tk; i++) {
        const struct cuda_toolkit *tk = &st->tk[i];
        size_t dl = strlen(tk->dir);
        if (strncmp(e->real, tk->dir, dl) != 0 || e->real[dl] != '/')
            continue;
        const char *v = cuda_toolkit_component_version(tk, e->key);
        if (v) {
            *tk_out = tk;
            return v;
        }
    }
    return NULL;
}

const char *cuda_libs_name_version(const char *real)
{
    const char *so = real ? strstr(real, ".so.") : NULL;
    if (!so)
        return NULL;
    const char *v = so + 4;
    return strspn(v, "0123456789.") == strlen(v) && strchr(v, '.') ? v : NULL;
}

/* Take VERSION (from FROM) for E when the CUDA release it belongs to is known too, or cannot be known by
 * loading it either (a family without a *GetCudartVersion). Returns true when taken. */
static bool cuda_libs_take_stated(struct cuda_libs_state *st, struct cuda_lib_entry *e, const char *version,
                                  const char *from, const struct cuda_dist *dist, const struct cuda_toolkit *tk)
{
    int ma, mi, pa;
    if (cuda_libs_parse_version(version, &ma, &mi, &pa) != 0 ||
        (e->family->kind == CUDA_LIB_CUDNN && e->soname_major >= 0 && ma != e->soname_major))
        return false;
    int cmaj = -1, cmin = -1;
    char *csrc = NULL;
    enum cuda_lib_kind k = e->family->kind;
    if (k == CUDA_LIB_CUDART || k == CUDA_LIB_NVRTC || k == CUDA_LIB_NVJITLINK) {
        cmaj = ma;
        cmin = mi;
        csrc = strdup("its own version");
    } else if (dist && cuda_dist_cuda_major(dist->name) >= 0) {
        cmaj = cuda_dist_cuda_major(dist->name);
        csrc = str_printf("the wheel's name (%s)", dist->name);
    } else if (tk && tk->major >= 0) {
        cmaj = tk->major;
        cmin = tk->minor;
        csrc = str_printf("%s", tk->source);
    } else if ((cmaj = cuda_libs_cuda_major_of(e->key, ma, mi, pa)) >= 0) {
        csrc = strdup("NVIDIA's component version table");
    } else if (e->family->cudart_fn) {
        return false; /* the library itself says which CUDA it was built for: ask it */
    }
    e->version = strdup(version);
    if (!e->version || (cmaj >= 0 && !csrc)) {
        free(csrc);
        st->err = -ENOMEM;
        return false;
    }
    e->major = ma;
    e->minor = mi;
    e->patch = pa;
    e->version_from = from;
    e->have_version = true;
    e->cuda_major = cmaj;
    e->cuda_minor = cmaj >= 0 ? cmin : -1;
    e->cuda_source = cmaj >= 0 ? csrc : NULL;
    if (cmaj < 0)
        free(csrc);
    return true;
}

void cuda_libs_file_versions(struct cuda_libs_state *st)
{
    struct cuda_dists ds = {0};
    for (size_t i = 0; i < st->n; i++)
        if (st->e[i].site)
            cuda_dists_read(st->fs, st->e[i].site, &ds);
    for (size_t i = 0; i < st->n_tk; i++) {
        char *dir = ldsearch_join(st->tk[i].dir, "dist-info");
        if (dir)
            cuda_dists_read(st->fs, dir, &ds);
        free(dir);
    }
    for (size_t i = 0; i < st->n && !st->err; i++) {
        struct cuda_lib_entry *e = &st->e[i];
        const struct cuda_toolkit *tk = NULL;
        const char *tv = cuda_libs_toolkit_component(st, e, &tk);
        const char *nv = cuda_libs_name_version(e->real);
        if (nv && cuda_libs_take_stated(st, e, nv, "file name", NULL, tk))
            continue;
        const struct cuda_dist *dist = cuda_dists_owner(st, &ds, e);
        if (dist && cuda_libs_take_stated(st, e, dist->version, "wheel metadata", dist, tk))
            continue;
        if (tv)
            (void)cuda_libs_take_stated(st, e, tv, "toolkit version.json", NULL, tk);
    }
    cuda_dists_free(&ds);
}

/* Which CUDA major a library release ships with. Sources: the "CUDA Toolkit Major Component Versions"
 * table of each CUDA Toolkit's release notes (11.0 to 13.0). cuBLAS, NVRTC, nvJitLink and the runtime
 * carry the CUDA major as their own; cuFFT 10.x came with CUDA 11, 11.x with 12, 12.x with 13; cuSPARSE
 * 11.x with CUDA 11, 12.0-12.5 with 12.0-12.9, 12.6 on with 13; cuSOLVER 10.x-11.4.1 with CUDA 11
 * (11.8 ships 11.4.1), 11.4.2-11.7 with 12 (12.0 ships 11.4.2), 12.x with 13. A toolkit's own
 * version.json, when the library belongs to it, takes precedence over this table. */
int cuda_libs_cuda_major_of(const char *family, int major, int minor, int patch)
{
    if (!family || major < 0)
        return -1;
    if (strcmp(family, "cudart") == 0 || strcmp(family, "nvrtc") == 0 || strcmp(family, "nvJitLink") == 0 ||
        strcmp(family, "cublas") == 0 || strcmp(family, "cublasLt") == 0)
        return major;
    if (strcmp(family, "cufft") == 0)
        return major >= 10 ? major + 1 : -1;
    if (strcmp(family, "cusparse") == 0) {
        if (major == 11)
            return 11;
        if (major == 12)
            return minor <= 5 ? 12 : 13;
        return -1;
    }
    if (strcmp(family, "cusolver") == 0) {
        if (major == 10)
            return 11;
        if (major == 11)
            return (minor < 4 || (minor == 4 && patch >= 0 && patch <= 1)) ? 11 : 12;
        if (major == 12)
            return 13;
        return -1;
    }
    return -1;
}
