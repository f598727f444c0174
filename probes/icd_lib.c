/* icd_lib.c: the icd probe's library lookup: dlopen's search order, symlinks, ELF checks, loader scan. */
#include "icd_impl.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strutil.h"

#define ICD_MAX_LINKS 40          /* symlinks followed per path, like the kernel */
#define ICD_MAX_CONF_FILES 256    /* ld.so.conf files read (includes) */
#define ICD_MAX_CONF_DEPTH 8      /* include nesting */
#define ICD_MAX_CACHE (64u << 20) /* ld.so.cache size we accept */
#define ICD_MAX_SCAN_ENTRIES 4096 /* directory entries looked at under /opt/intel */

/* ---- small string lists ---- */

static int icd_list_add(char ***list, size_t *n, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0)
            return 0;
    char **nl = realloc(*list, (*n + 1) * sizeof(**list));
    if (!nl)
        return -ENOMEM;
    *list = nl;
    nl[*n] = strdup(s);
    if (!nl[*n])
        return -ENOMEM;
    (*n)++;
    return 0;
}

static void icd_list_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* DIR + "/" + NAME without doubling the slash. Caller frees. */
static char *icd_join(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    return str_printf("%s%s%s", dir, (dl > 0 && dir[dl - 1] == '/') ? "" : "/", name);
}

/* ---- paths ---- */

char *icd_fs_realpath(const struct hostfs *fs, const char *path)
{
    if (!path || path[0] != '/')
        return NULL;
    char *done = strdup("");  /* canonical prefix, "" meaning "/" */
    char *todo = strdup(path); /* what is left to walk */
    int links = 0;
    if (!done || !todo)
        goto fail;
    for (;;) {
        char *p = todo;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *slash = strchr(p, '/');
        size_t clen = slash ? (size_t)(slash - p) : strlen(p);
        char *comp = strndup(p, clen);
        char *rest = strdup(slash ? slash : "");
        if (!comp || !rest) {
            free(comp);
            free(rest);
            goto fail;
        }
        free(todo);
        todo = rest;
        if (strcmp(comp, ".") == 0) {
            free(comp);
            continue;
        }
        if (strcmp(comp, "..") == 0) {
            char *last = strrchr(done, '/');
            if (last)
                *last = '\0';
            free(comp);
            continue;
        }
        char *cand = str_printf("%s/%s", done, comp);
        free(comp);
        if (!cand)
            goto fail;
        struct stat st;
        if (hostfs_stat(fs, cand, &st, false) != 0) {
            free(cand);
            goto fail;
        }
        if (S_ISLNK(st.st_mode)) {
            char *target = NULL;
            if (++links > ICD_MAX_LINKS || hostfs_readlink(fs, cand, &target) != 0 || !*target) {
                free(target);
                free(cand);
                goto fail;
            }
            free(cand);
            char *nt = str_printf("%s%s", target, todo);
            if (target[0] == '/')
                done[0] = '\0';
            free(target);
            if (!nt)
                goto fail;
            free(todo);
            todo = nt;
            continue;
        }
        if (todo[0] && !S_ISDIR(st.st_mode)) {
            /* a file in the middle of the path: only "/" or nothing may follow */
            const char *q = todo;
            while (*q == '/')
                q++;
            if (*q) {
                free(cand);
                goto fail;
            }
        }
        free(done);
        done = cand;
    }
    free(todo);
    if (!done[0]) {
        free(done);
        return strdup("/");
    }
    return done;
fail:
    free(done);
    free(todo);
    return NULL;
}

char *icd_fs_dir_realpath(const struct hostfs *fs, const char *path)
{
    if (!path || path[0] != '/')
        return str_dup(path);
    const char *slash = strrchr(path, '/');
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return NULL;
    char *rdir = icd_fs_realpath(fs, *dir ? dir : "/");
    free(dir);
    if (!rdir)
        return strdup(path);
    char *r = icd_join(rdir, slash + 1);
    free(rdir);
    return r;
}

static int icd_native_machine(void)
{
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#elif defined(__i386__)
    return EM_386;
#elif defined(__powerpc64__)
    return EM_PPC64;
#elif defined(__s390x__)
    return EM_S390;
#elif defined(__riscv)
    return EM_RISCV;
#elif defined(__arm__)
    return EM_ARM;
#else
    return 0;
#endif
}

int icd_elf_loadable(const struct hostfs *fs, const char *path)
{
    int fd = hostfs_openat(fs, path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    unsigned char h[20];
    ssize_t n = read(fd, h, sizeof(h));
    close(fd);
    if (n < (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
        return 0;
    if (h[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (h[EI_DATA] != ELFDATA2LSB)
        return 0;
    unsigned machine = (unsigned)h[18] | ((unsigned)h[19] << 8);
#else
    if (h[EI_DATA] != ELFDATA2MSB)
        return 0;
    unsigned machine = ((unsigned)h[18] << 8) | (unsigned)h[19];
#endif
    int native = icd_native_machine();
    if (native && machine != (unsigned)native)
        return 0;
    return 1;
}

/* True when PATH exists on FS (following links). */
static bool icd_exists(const struct hostfs *fs, const char *path)
{
    struct stat st;
    return hostfs_stat(fs, path, &st, true) == 0;
}

/* ---- ld.so.conf, with includes ---- */

struct icd_conf_walk {
    struct icd_search *s;
    const char *file; /* the file being parsed (relative includes start from its directory) */
    int depth;
    int files;
    int err;
};

static void icd_conf_read(struct icd_conf_walk *w, const char *path);

static int icd_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Entries of DIR (on FS) whose name matches the fnmatch PATTERN, sorted. Returns 0 or -errno. */
static int icd_dir_match(const struct hostfs *fs, const char *dir, const char *pattern, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = hostfs_opendir(fs, dir);
    if (!d)
        return -errno;
    struct dirent *de;
    int rc = 0;
    size_t seen = 0;
    while ((de = readdir(d)) && seen++ < ICD_MAX_SCAN_ENTRIES) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (fnmatch(pattern, de->d_name, FNM_PERIOD) != 0)
            continue;
        if ((rc = icd_list_add(out, n, de->d_name)) < 0)
            break;
    }
    closedir(d);
    if (*n > 1)
        qsort(*out, *n, sizeof(**out), icd_cmp_str);
    return rc;
}

/* Expand PATTERN (a path with wildcards in the last component, as ld.so.conf.d uses). */
static void icd_conf_include(struct icd_conf_walk *w, const char *pattern)
{
    char *abs = NULL;
    if (pattern[0] == '/') {
        abs = strdup(pattern);
    } else {
        const char *slash = strrchr(w->file, '/');
        char *dir = strndup(w->file, slash ? (size_t)(slash - w->file) : 0);
        abs = dir ? icd_join(*dir ? dir : "/", pattern) : NULL;
        free(dir);
    }
    if (!abs) {
        w->err = -ENOMEM;
        return;
    }
    char *slash = strrchr(abs, '/');
    const char *base = slash + 1;
    if (!strpbrk(base, "*?[")) {
        icd_conf_read(w, abs);
        free(abs);
        return;
    }
    *slash = '\0';
    char **names = NULL;
    size_t n = 0;
    if (icd_dir_match(w->s->fs, *abs ? abs : "/", base, &names, &n) == -ENOMEM)
        w->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = str_printf("%s/%s", abs, names[i]);
        if (p)
            icd_conf_read(w, p);
        free(p);
    }
    icd_list_free(names, n);
    free(abs);
}

static void icd_conf_line(const char *dir, const char *include, void *arg)
{
    struct icd_conf_walk *w = arg;
    if (dir) {
        if (dir[0] == '/' && icd_list_add(&w->s->conf_dirs, &w->s->n_conf, dir) < 0)
            w->err = -ENOMEM;
        return;
    }
    if (w->depth >= ICD_MAX_CONF_DEPTH)
        return;
    w->depth++;
    icd_conf_include(w, include);
    w->depth--;
}

static void icd_conf_read(struct icd_conf_walk *w, const char *path)
{
    if (w->files++ >= ICD_MAX_CONF_FILES)
        return;
    char *text = NULL;
    if (hostfs_read_file(w->s->fs, path, 1024 * 1024, &text, NULL) != 0)
        return;
    const char *saved = w->file;
    w->file = path;
    icd_ldconf_parse(text, icd_conf_line, w);
    w->file = saved;
    free(text);
}

/* ---- the search ---- */

const char *const *icd_search_default_dirs(void)
{
    static const char *const dirs[] = {
#if defined(__x86_64__) && defined(__LP64__)
        "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
        "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#elif defined(__i386__)
        "/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu",
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        "/lib/powerpc64le-linux-gnu", "/usr/lib/powerpc64le-linux-gnu",
#elif defined(__s390x__)
        "/lib/s390x-linux-gnu", "/usr/lib/s390x-linux-gnu",
#elif defined(__riscv) && __riscv_xlen == 64
        "/lib/riscv64-linux-gnu", "/usr/lib/riscv64-linux-gnu",
#endif
#if defined(__LP64__)
        "/lib64", "/usr/lib64",
#endif
        "/lib", "/usr/lib", NULL,
    };
    return dirs;
}

void icd_search_free(struct icd_search *s)
{
    icd_list_free(s->ld_dirs, s->n_ld);
    icd_list_free(s->conf_dirs, s->n_conf);
    free(s->cache);
    free(s->cwd);
    memset(s, 0, sizeof(*s));
}

int icd_search_init(struct icd_search *s, const struct hostfs *fs, const char *ldpath)
{
    memset(s, 0, sizeof(*s));
    s->fs = fs;
    char buf[4096];
    if (getcwd(buf, sizeof(buf)))
        s->cwd = strdup(buf);
    if (ldpath && *ldpath) {
        /* glibc splits LD_LIBRARY_PATH on ':' and ';'; an empty entry is the current directory. */
        char *copy = strdup(ldpath);
        if (!copy)
            return -ENOMEM;
        char *p = copy;
        for (;;) {
            char *sep = strpbrk(p, ":;");
            if (sep)
                *sep = '\0';
            if (!strchr(p, '$')) { /* $ORIGIN and friends: nothing we can expand */
                char *dir = NULL;
                if (p[0] == '/')
                    dir = strdup(p);
                else if (s->cwd)
                    dir = *p ? icd_join(s->cwd, p) : strdup(s->cwd);
                if (dir) {
                    size_t dl = strlen(dir);
                    while (dl > 1 && dir[dl - 1] == '/')
                        dir[--dl] = '\0';
                    int rc = icd_list_add(&s->ld_dirs, &s->n_ld, dir);
                    free(dir);
                    if (rc < 0) {
                        free(copy);
                        return rc;
                    }
                }
            }
            if (!sep)
                break;
            p = sep + 1;
        }
        free(copy);
    }
    s->cache_err = hostfs_read_file(fs, "/etc/ld.so.cache", ICD_MAX_CACHE, &s->cache, &s->cache_len);
    if (s->cache_err == -ENOMEM)
        return -ENOMEM;
    struct icd_conf_walk w = {.s = s, .file = "/etc/ld.so.conf"};
    icd_conf_read(&w, "/etc/ld.so.conf");
    return w.err;
}

struct icd_cache_find {
    const char *name;
    const char *value;
};

static int icd_cache_find_cb(const char *key, const char *value, int32_t flags, void *arg)
{
    struct icd_cache_find *f = arg;
    if (strcmp(key, f->name) != 0 || !icd_ldcache_flags_match(flags))
        return 0;
    f->value = value;
    return 1;
}

char *icd_search_find(const struct icd_search *s, const char *name, const char **via)
{
    *via = NULL;
    if (!name || !*name)
        return NULL;
    if (strchr(name, '/')) {
        char *p;
        if (name[0] == '/') {
            p = strdup(name);
            *via = "absolute";
        } else {
            if (!s->cwd)
                return NULL;
            p = icd_join(s->cwd, name);
            *via = "relative";
        }
        if (p && icd_exists(s->fs, p))
            return p;
        free(p);
        *via = NULL;
        return NULL;
    }
    for (size_t i = 0; i < s->n_ld; i++) {
        char *p = icd_join(s->ld_dirs[i], name);
        if (p && icd_elf_loadable(s->fs, p) == 1) {
            *via = "LD_LIBRARY_PATH";
            return p;
        }
        free(p);
    }
    if (s->cache) {
        struct icd_cache_find f = {.name = name};
        icd_ldcache_walk(s->cache, s->cache_len, icd_cache_find_cb, &f);
        if (f.value && icd_exists(s->fs, f.value)) {
            *via = "ld.so.cache";
            return strdup(f.value);
        }
    }
    for (const char *const *d = icd_search_default_dirs(); *d; d++) {
        char *p = icd_join(*d, name);
        if (p && icd_elf_loadable(s->fs, p) == 1) {
            *via = "default";
            return p;
        }
        free(p);
    }
    return NULL;
}

/* ---- every libOpenCL.so* ---- */

struct icd_scan {
    const struct icd_search *s;
    struct icd_loader_file *l;
    size_t n;
    int err;
};

static void icd_scan_add(struct icd_scan *sc, const char *path, const char *source, bool searched)
{
    char *canon = icd_fs_dir_realpath(sc->s->fs, path);
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
    f->resolved = icd_fs_realpath(sc->s->fs, canon);
    struct stat st;
    if (f->resolved && hostfs_stat(sc->s->fs, f->resolved, &st, true) == 0 && S_ISREG(st.st_mode)) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        f->have_id = true;
        f->loadable = icd_elf_loadable(sc->s->fs, f->resolved) == 1;
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
    if (icd_dir_match(sc->s->fs, dir, "libOpenCL.so*", &names, &n) == -ENOMEM)
        sc->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = icd_join(dir, names[i]);
        if (p)
            icd_scan_add(sc, p, source, searched);
        free(p);
    }
    icd_list_free(names, n);
}

static int icd_scan_cache_cb(const char *key, const char *value, int32_t flags, void *arg)
{
    struct icd_scan *sc = arg;
    if (str_starts_with(key, "libOpenCL.so") && icd_ldcache_flags_match(flags) && value[0] == '/')
        icd_scan_add(sc, value, "ld.so.cache", true);
    return 0;
}

/* Directories matching PATTERN (an absolute path, wildcards allowed in any component). */
static void icd_scan_glob(struct icd_scan *sc, const char *prefix, const char *rest, const char *source)
{
    while (*rest == '/')
        rest++;
    if (!*rest) {
        icd_scan_dir(sc, *prefix ? prefix : "/", source, false);
        return;
    }
    const char *slash = strchr(rest, '/');
    char *comp = strndup(rest, slash ? (size_t)(slash - rest) : strlen(rest));
    const char *next = slash ? slash : "";
    if (!comp) {
        sc->err = -ENOMEM;
        return;
    }
    if (!strpbrk(comp, "*?[")) {
        char *p = str_printf("%s/%s", prefix, comp);
        if (p)
            icd_scan_glob(sc, p, next, source);
        free(p);
        free(comp);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    icd_dir_match(sc->s->fs, *prefix ? prefix : "/", comp, &names, &n);
    for (size_t i = 0; i < n; i++) {
        char *p = str_printf("%s/%s", prefix, names[i]);
        struct stat st;
        if (p && hostfs_stat(sc->s->fs, p, &st, true) == 0 && S_ISDIR(st.st_mode))
            icd_scan_glob(sc, p, next, source);
        free(p);
    }
    icd_list_free(names, n);
    free(comp);
}

/* Every directory under DIR (not following symlinked directories), to DEPTH levels. */
static void icd_scan_tree(struct icd_scan *sc, const char *dir, int depth, size_t *budget)
{
    icd_scan_dir(sc, dir, "sdk", false);
    if (depth <= 0)
        return;
    char **names = NULL;
    size_t n = 0;
    icd_dir_match(sc->s->fs, dir, "*", &names, &n);
    for (size_t i = 0; i < n && *budget > 0; i++, (*budget)--) {
        char *p = icd_join(dir, names[i]);
        struct stat st;
        if (p && hostfs_stat(sc->s->fs, p, &st, false) == 0 && S_ISDIR(st.st_mode))
            icd_scan_tree(sc, p, depth - 1, budget);
        free(p);
    }
    icd_list_free(names, n);
}

int icd_loaders_scan(const struct icd_search *s, struct icd_loader_file **out, size_t *n)
{
    struct icd_scan sc = {.s = s};
    /* In dlopen's order first, so a file found several ways keeps the first way. */
    for (size_t i = 0; i < s->n_ld; i++)
        icd_scan_dir(&sc, s->ld_dirs[i], "LD_LIBRARY_PATH", true);
    if (s->cache)
        icd_ldcache_walk(s->cache, s->cache_len, icd_scan_cache_cb, &sc);
    for (const char *const *d = icd_search_default_dirs(); *d; d++)
        icd_scan_dir(&sc, *d, "default", true);
    for (size_t i = 0; i < s->n_conf; i++)
        icd_scan_dir(&sc, s->conf_dirs[i], "ld.so.conf", false);
    static const char *const sdk[] = {
        "/usr/local/cuda*/lib64", "/usr/local/cuda*/targets/*/lib", "/usr/local/cuda*/lib",
        "/opt/cuda*/lib64",       "/opt/rocm*/lib",                 "/opt/rocm*/opencl/lib",
        "/opt/amdgpu-pro/lib/*",  "/opt/amdgpu/lib/*",              NULL,
    };
    for (size_t i = 0; sdk[i]; i++)
        icd_scan_glob(&sc, "", sdk[i], "sdk");
    size_t budget = ICD_MAX_SCAN_ENTRIES;
    struct stat st;
    if (hostfs_stat(s->fs, "/opt/intel", &st, true) == 0 && S_ISDIR(st.st_mode))
        icd_scan_tree(&sc, "/opt/intel", 6, &budget);

    /* Which one dlopen("libOpenCL.so.1") takes. */
    const char *via = NULL;
    char *win = icd_search_find(s, "libOpenCL.so.1", &via);
    if (win) {
        char *canon = icd_fs_dir_realpath(s->fs, win);
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
