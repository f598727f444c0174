/* ldsearch.c: the dynamic linker's library search, its ld.so.cache / ld.so.conf parsers, and pip wheel dirs. */
#include "ldsearch.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strutil.h"

#define LDSEARCH_MAX_LINKS 40          /* symlinks followed per path, like the kernel */
#define LDSEARCH_MAX_CONF_FILES 256    /* ld.so.conf files read (includes) */
#define LDSEARCH_MAX_CONF_DEPTH 8      /* include nesting */
#define LDSEARCH_MAX_CACHE (64u << 20) /* ld.so.cache size we accept */
#define LDSEARCH_MAX_SCAN_ENTRIES 4096 /* directory entries looked at per directory */

/* ---- ld.so.cache ---- */

#define LDSEARCH_CACHE_OLD_MAGIC "ld.so-1.7.0"
#define LDSEARCH_CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"
#define LDSEARCH_CACHE_NEW_HEADER 48u /* magic[17] version[3] nlibs len_strings flags pad[3] ext unused[3] */
#define LDSEARCH_CACHE_NEW_ENTRY 24u  /* flags key value osversion hwcap(u64) */
#define LDSEARCH_CACHE_OLD_ENTRY 12u  /* flags key value */
#define LDSEARCH_FLAG_ELF_LIBC6 0x0003
#define LDSEARCH_FLAG_TYPE_MASK 0x00ff
#define LDSEARCH_FLAG_ARCH_MASK 0xff00

static uint32_t ldsearch_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* A NUL-terminated string at OFF inside [BASE, BASE+AVAIL), or NULL. */
static const char *ldsearch_cache_str(const unsigned char *base, size_t avail, uint32_t off)
{
    if (off >= avail)
        return NULL;
    if (!memchr(base + off, '\0', avail - off))
        return NULL;
    return (const char *)base + off;
}

int ldsearch_cache_walk(const char *buf, size_t len, ldsearch_cache_fn fn, void *arg)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t off = 0;
    if (!buf)
        return -1;
    size_t old_len = sizeof(LDSEARCH_CACHE_OLD_MAGIC) - 1;
    if (len >= old_len + 5 && memcmp(b, LDSEARCH_CACHE_OLD_MAGIC, old_len) == 0) {
        /* struct cache_file { char magic[11]; unsigned nlibs; struct file_entry libs[]; } */
        uint32_t nlibs = ldsearch_u32(b + 12);
        if (nlibs > len / LDSEARCH_CACHE_OLD_ENTRY)
            return -1;
        size_t end = 16 + (size_t)nlibs * LDSEARCH_CACHE_OLD_ENTRY;
        off = (end + 7) & ~(size_t)7; /* the new format follows, 8-byte aligned */
    }
    size_t new_len = sizeof(LDSEARCH_CACHE_NEW_MAGIC) - 1;
    if (off > len || len - off < LDSEARCH_CACHE_NEW_HEADER || memcmp(b + off, LDSEARCH_CACHE_NEW_MAGIC, new_len) != 0)
        return -1;
    const unsigned char *h = b + off;
    size_t avail = len - off;
    uint32_t nlibs = ldsearch_u32(h + 20);
    unsigned char endian = h[28] & 3; /* 0 unset, 2 little, 3 big */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (endian == 3 || endian == 1)
        return -1;
#else
    if (endian == 2 || endian == 1)
        return -1;
#endif
    if (nlibs > (avail - LDSEARCH_CACHE_NEW_HEADER) / LDSEARCH_CACHE_NEW_ENTRY)
        return -1;
    int walked = 0;
    for (uint32_t i = 0; i < nlibs; i++) {
        const unsigned char *e = h + LDSEARCH_CACHE_NEW_HEADER + (size_t)i * LDSEARCH_CACHE_NEW_ENTRY;
        int32_t flags = (int32_t)ldsearch_u32(e);
        /* In the new format string offsets count from the start of its header. */
        const char *key = ldsearch_cache_str(h, avail, ldsearch_u32(e + 4));
        const char *value = ldsearch_cache_str(h, avail, ldsearch_u32(e + 8));
        if (!key || !value)
            continue;
        walked++;
        if (fn && fn(key, value, flags, arg))
            break;
    }
    return walked;
}

bool ldsearch_cache_flags_match(int32_t flags)
{
    if ((flags & LDSEARCH_FLAG_TYPE_MASK) != LDSEARCH_FLAG_ELF_LIBC6)
        return false;
    int arch = flags & LDSEARCH_FLAG_ARCH_MASK;
#if defined(__x86_64__) && defined(__LP64__)
    return arch == 0x0300; /* FLAG_X8664_LIB64 */
#elif defined(__x86_64__)
    return arch == 0x0800; /* FLAG_X8664_LIBX32 */
#elif defined(__aarch64__)
    return arch == 0x0a00; /* FLAG_AARCH64_LIB64 */
#elif defined(__powerpc64__)
    return arch == 0x0500; /* FLAG_POWERPC_LIB64 */
#elif defined(__s390x__)
    return arch == 0x0400; /* FLAG_S390_LIB64 */
#elif defined(__i386__)
    return arch == 0;
#else
    (void)arch;
    return true;
#endif
}

/* ---- ld.so.conf ---- */

void ldsearch_conf_parse(const char *text, ldsearch_conf_fn fn, void *arg)
{
    if (!text)
        return;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char *line = strndup(p, n);
        p += n + (eol ? 1 : 0);
        if (!line)
            return;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        char *e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = '\0';
        if (strncmp(s, "include", 7) == 0 && (s[7] == ' ' || s[7] == '\t')) {
            char *save = NULL;
            for (char *tok = strtok_r(s + 8, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
                fn(NULL, tok, arg);
        } else if (strncmp(s, "hwcap", 5) == 0 && (s[5] == ' ' || s[5] == '\t')) {
            /* obsolete hwcap lines: nothing to search */
        } else if (*s) {
            char *save = NULL;
            for (char *tok = strtok_r(s, " \t,:", &save); tok; tok = strtok_r(NULL, " \t,:", &save)) {
                char *eq = strchr(tok, '='); /* old "dir=TYPE" form */
                if (eq)
                    *eq = '\0';
                size_t tl = strlen(tok);
                while (tl > 1 && tok[tl - 1] == '/')
                    tok[--tl] = '\0';
                if (*tok)
                    fn(tok, NULL, arg);
            }
        }
        free(line);
    }
}

/* ---- small string lists ---- */

static int ldsearch_list_add(char ***list, size_t *n, const char *s)
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

/* Append S to LIST with its reason WHY in the parallel list REASONS, unless S is there already. */
static int ldsearch_pair_add(char ***list, char ***reasons, size_t *n, const char *s, const char *why)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0)
            return 0;
    char **nl = realloc(*list, (*n + 1) * sizeof(**list));
    if (!nl)
        return -ENOMEM;
    *list = nl;
    char **nr = realloc(*reasons, (*n + 1) * sizeof(**reasons));
    if (!nr)
        return -ENOMEM;
    *reasons = nr;
    nl[*n] = strdup(s);
    nr[*n] = strdup(why ? why : "");
    if (!nl[*n] || !nr[*n]) {
        free(nl[*n]);
        free(nr[*n]);
        return -ENOMEM;
    }
    (*n)++;
    return 0;
}

void ldsearch_strv_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

char *ldsearch_join(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    return str_printf("%s%s%s", dir, (dl > 0 && dir[dl - 1] == '/') ? "" : "/", name);
}

/* ---- paths ---- */

char *ldsearch_realpath(const struct hostfs *fs, const char *path)
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
            if (++links > LDSEARCH_MAX_LINKS || hostfs_readlink(fs, cand, &target) != 0 || !*target) {
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

char *ldsearch_dir_realpath(const struct hostfs *fs, const char *path)
{
    if (!path || path[0] != '/')
        return str_dup(path);
    const char *slash = strrchr(path, '/');
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return NULL;
    char *rdir = ldsearch_realpath(fs, *dir ? dir : "/");
    free(dir);
    if (!rdir)
        return strdup(path);
    char *r = ldsearch_join(rdir, slash + 1);
    free(rdir);
    return r;
}

static int ldsearch_native_machine(void)
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

int ldsearch_elf_loadable(const struct hostfs *fs, const char *path)
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
    int native = ldsearch_native_machine();
    if (native && machine != (unsigned)native)
        return 0;
    return 1;
}

/* True when PATH exists on FS (following links). */
static bool ldsearch_exists(const struct hostfs *fs, const char *path)
{
    struct stat st;
    return hostfs_stat(fs, path, &st, true) == 0;
}

/* ---- ld.so.conf, with includes ---- */

struct ldsearch_conf_walk {
    struct ldsearch *s;
    const char *file; /* the file being parsed (relative includes start from its directory) */
    int depth;
    int files;
    int err;
};

static void ldsearch_conf_read(struct ldsearch_conf_walk *w, const char *path);

static int ldsearch_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ldsearch_dir_match(const struct hostfs *fs, const char *dir, const char *pattern, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = hostfs_opendir(fs, dir);
    if (!d)
        return -errno;
    struct dirent *de;
    int rc = 0;
    size_t seen = 0;
    while ((de = readdir(d)) && seen++ < LDSEARCH_MAX_SCAN_ENTRIES) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (fnmatch(pattern, de->d_name, FNM_PERIOD) != 0)
            continue;
        if ((rc = ldsearch_list_add(out, n, de->d_name)) < 0)
            break;
    }
    closedir(d);
    if (*n > 1)
        qsort(*out, *n, sizeof(**out), ldsearch_cmp_str);
    return rc;
}

/* Expand PATTERN (a path with wildcards in the last component, as ld.so.conf.d uses). */
static void ldsearch_conf_include(struct ldsearch_conf_walk *w, const char *pattern)
{
    char *abs = NULL;
    if (pattern[0] == '/') {
        abs = strdup(pattern);
    } else {
        const char *slash = strrchr(w->file, '/');
        char *dir = strndup(w->file, slash ? (size_t)(slash - w->file) : 0);
        abs = dir ? ldsearch_join(*dir ? dir : "/", pattern) : NULL;
        free(dir);
    }
    if (!abs) {
        w->err = -ENOMEM;
        return;
    }
    char *slash = strrchr(abs, '/');
    const char *base = slash + 1;
    if (!strpbrk(base, "*?[")) {
        ldsearch_conf_read(w, abs);
        free(abs);
        return;
    }
    *slash = '\0';
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(w->s->fs, *abs ? abs : "/", base, &names, &n) == -ENOMEM)
        w->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = str_printf("%s/%s", abs, names[i]);
        if (p)
            ldsearch_conf_read(w, p);
        free(p);
    }
    ldsearch_strv_free(names, n);
    free(abs);
}

static void ldsearch_conf_line(const char *dir, const char *include, void *arg)
{
    struct ldsearch_conf_walk *w = arg;
    if (dir) {
        if (dir[0] == '/' &&
            ldsearch_pair_add(&w->s->conf_dirs, &w->s->conf_files, &w->s->n_conf, dir, w->file) < 0)
            w->err = -ENOMEM;
        return;
    }
    if (w->depth >= LDSEARCH_MAX_CONF_DEPTH)
        return;
    w->depth++;
    ldsearch_conf_include(w, include);
    w->depth--;
}

static void ldsearch_conf_read(struct ldsearch_conf_walk *w, const char *path)
{
    if (w->files++ >= LDSEARCH_MAX_CONF_FILES)
        return;
    char *text = NULL;
    if (hostfs_read_file(w->s->fs, path, 1024 * 1024, &text, NULL) != 0)
        return;
    const char *saved = w->file;
    w->file = path;
    ldsearch_conf_parse(text, ldsearch_conf_line, w);
    w->file = saved;
    free(text);
}

/* ---- the search ---- */

const char *const *ldsearch_default_dirs(void)
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

void ldsearch_free(struct ldsearch *s)
{
    ldsearch_strv_free(s->ld_dirs, s->n_ld);
    ldsearch_strv_free(s->ld_elems, s->n_ld);
    ldsearch_strv_free(s->conf_dirs, s->n_conf);
    ldsearch_strv_free(s->conf_files, s->n_conf);
    free(s->cache);
    free(s->cwd);
    memset(s, 0, sizeof(*s));
}

int ldsearch_init(struct ldsearch *s, const struct hostfs *fs, const char *ldpath)
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
                    dir = *p ? ldsearch_join(s->cwd, p) : strdup(s->cwd);
                if (dir) {
                    size_t dl = strlen(dir);
                    while (dl > 1 && dir[dl - 1] == '/')
                        dir[--dl] = '\0';
                    int rc = ldsearch_pair_add(&s->ld_dirs, &s->ld_elems, &s->n_ld, dir, p);
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
    s->cache_err = hostfs_read_file(fs, "/etc/ld.so.cache", LDSEARCH_MAX_CACHE, &s->cache, &s->cache_len);
    if (s->cache_err == -ENOMEM)
        return -ENOMEM;
    struct ldsearch_conf_walk w = {.s = s, .file = "/etc/ld.so.conf"};
    ldsearch_conf_read(&w, "/etc/ld.so.conf");
    return w.err;
}

struct ldsearch_cache_find {
    const char *name;
    const char *value;
};

static int ldsearch_cache_find_cb(const char *key, const char *value, int32_t flags, void *arg)
{
    struct ldsearch_cache_find *f = arg;
    if (strcmp(key, f->name) != 0 || !ldsearch_cache_flags_match(flags))
        return 0;
    f->value = value;
    return 1;
}

char *ldsearch_find_hit(const struct ldsearch *s, const char *name, struct ldsearch_hit *hit)
{
    hit->via = NULL;
    hit->entry = NULL;
    if (!name || !*name)
        return NULL;
    if (strchr(name, '/')) {
        char *p;
        if (name[0] == '/') {
            p = strdup(name);
            hit->via = "absolute";
        } else {
            if (!s->cwd)
                return NULL;
            p = ldsearch_join(s->cwd, name);
            hit->via = "relative";
        }
        if (p && ldsearch_exists(s->fs, p))
            return p;
        free(p);
        hit->via = NULL;
        return NULL;
    }
    for (size_t i = 0; i < s->n_ld; i++) {
        char *p = ldsearch_join(s->ld_dirs[i], name);
        if (p && ldsearch_elf_loadable(s->fs, p) == 1) {
            hit->via = "LD_LIBRARY_PATH";
            hit->entry = strdup(s->ld_elems[i]);
            return p;
        }
        free(p);
    }
    if (s->cache) {
        struct ldsearch_cache_find f = {.name = name};
        ldsearch_cache_walk(s->cache, s->cache_len, ldsearch_cache_find_cb, &f);
        if (f.value && ldsearch_exists(s->fs, f.value)) {
            hit->via = "ld.so.cache";
            hit->entry = str_printf("%s => %s", name, f.value);
            return strdup(f.value);
        }
    }
    for (const char *const *d = ldsearch_default_dirs(); *d; d++) {
        char *p = ldsearch_join(*d, name);
        if (p && ldsearch_elf_loadable(s->fs, p) == 1) {
            hit->via = "default";
            hit->entry = strdup(*d);
            return p;
        }
        free(p);
    }
    return NULL;
}

char *ldsearch_find(const struct ldsearch *s, const char *name, const char **via)
{
    struct ldsearch_hit hit;
    char *p = ldsearch_find_hit(s, name, &hit);
    free(hit.entry);
    *via = hit.via;
    return p;
}

/* ---- every candidate for a name pattern ---- */

struct ldsearch_cand {
    const struct ldsearch *s;
    const char *pattern;
    struct ldsearch_file *f;
    size_t n;
    int err;
};

/* Record DIR/NAME (or PATH when DIR is NULL) unless that path was seen already. */
static void ldsearch_cand_add(struct ldsearch_cand *c, const char *path, const char *name, const char *via,
                              const char *entry)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->f[i].path, path) == 0)
            return;
    if (ldsearch_elf_loadable(c->s->fs, path) != 1)
        return;
    struct ldsearch_file *nf = realloc(c->f, (c->n + 1) * sizeof(*nf));
    if (!nf) {
        c->err = -ENOMEM;
        return;
    }
    c->f = nf;
    struct ldsearch_file *f = &c->f[c->n];
    f->name = strdup(name);
    f->path = strdup(path);
    f->entry = strdup(entry ? entry : "");
    f->via = via;
    f->order = (int)c->n;
    if (!f->name || !f->path || !f->entry) {
        free(f->name);
        free(f->path);
        free(f->entry);
        c->err = -ENOMEM;
        return;
    }
    c->n++;
}

static void ldsearch_cand_dir(struct ldsearch_cand *c, const char *dir, const char *via, const char *entry)
{
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(c->s->fs, dir, c->pattern, &names, &n) == -ENOMEM)
        c->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = ldsearch_join(dir, names[i]);
        if (p)
            ldsearch_cand_add(c, p, names[i], via, entry);
        else
            c->err = -ENOMEM;
        free(p);
    }
    ldsearch_strv_free(names, n);
}

static int ldsearch_cand_cache_cb(const char *key, const char *value, int32_t flags, void *arg)
{
    struct ldsearch_cand *c = arg;
    if (value[0] != '/' || !ldsearch_cache_flags_match(flags) || fnmatch(c->pattern, key, FNM_PERIOD) != 0)
        return 0;
    char *entry = str_printf("%s => %s", key, value);
    if (!entry) {
        c->err = -ENOMEM;
        return 1;
    }
    ldsearch_cand_add(c, value, key, "ld.so.cache", entry);
    free(entry);
    return 0;
}

int ldsearch_candidates(const struct ldsearch *s, const char *pattern, struct ldsearch_file **out, size_t *n)
{
    struct ldsearch_cand c = {.s = s, .pattern = pattern};
    for (size_t i = 0; i < s->n_ld; i++)
        ldsearch_cand_dir(&c, s->ld_dirs[i], "LD_LIBRARY_PATH", s->ld_elems[i]);
    if (s->cache)
        ldsearch_cache_walk(s->cache, s->cache_len, ldsearch_cand_cache_cb, &c);
    for (const char *const *d = ldsearch_default_dirs(); *d; d++)
        ldsearch_cand_dir(&c, *d, "default", *d);
    if (c.err < 0) {
        ldsearch_files_free(c.f, c.n);
        *out = NULL;
        *n = 0;
        return c.err;
    }
    *out = c.f;
    *n = c.n;
    return 0;
}

void ldsearch_files_free(struct ldsearch_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].name);
        free(f[i].path);
        free(f[i].entry);
    }
    free(f);
}

/* ---- directory globs ---- */

struct ldsearch_globw {
    const struct hostfs *fs;
    char **out;
    size_t n;
    int err;
};

static void ldsearch_glob_step(struct ldsearch_globw *g, const char *prefix, const char *rest)
{
    while (*rest == '/')
        rest++;
    if (!*rest) {
        struct stat st;
        const char *d = *prefix ? prefix : "/";
        if (hostfs_stat(g->fs, d, &st, true) == 0 && S_ISDIR(st.st_mode) && ldsearch_list_add(&g->out, &g->n, d) < 0)
            g->err = -ENOMEM;
        return;
    }
    const char *slash = strchr(rest, '/');
    char *comp = strndup(rest, slash ? (size_t)(slash - rest) : strlen(rest));
    const char *next = slash ? slash : "";
    if (!comp) {
        g->err = -ENOMEM;
        return;
    }
    if (!strpbrk(comp, "*?[")) {
        char *p = str_printf("%s/%s", prefix, comp);
        if (p)
            ldsearch_glob_step(g, p, next);
        else
            g->err = -ENOMEM;
        free(p);
        free(comp);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_dir_match(g->fs, *prefix ? prefix : "/", comp, &names, &n) == -ENOMEM)
        g->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = str_printf("%s/%s", prefix, names[i]);
        struct stat st;
        if (p && hostfs_stat(g->fs, p, &st, true) == 0 && S_ISDIR(st.st_mode))
            ldsearch_glob_step(g, p, next);
        free(p);
    }
    ldsearch_strv_free(names, n);
    free(comp);
}

int ldsearch_glob_dirs(const struct hostfs *fs, const char *pattern, char ***out, size_t *n)
{
    struct ldsearch_globw g = {.fs = fs};
    if (pattern && pattern[0] == '/')
        ldsearch_glob_step(&g, "", pattern);
    if (g.err < 0) {
        ldsearch_strv_free(g.out, g.n);
        *out = NULL;
        *n = 0;
        return g.err;
    }
    *out = g.out;
    *n = g.n;
    return 0;
}

/* ---- pip wheel layouts ---- */

struct ldsearch_wheelw {
    const struct hostfs *fs;
    struct ldsearch_wheel *w;
    size_t n;
    int err;
};

static void ldsearch_wheel_add(struct ldsearch_wheelw *ww, const char *dir, const char *site, const char *wheel,
                               const char *origin)
{
    for (size_t i = 0; i < ww->n; i++)
        if (strcmp(ww->w[i].dir, dir) == 0)
            return;
    struct ldsearch_wheel *nw = realloc(ww->w, (ww->n + 1) * sizeof(*nw));
    if (!nw) {
        ww->err = -ENOMEM;
        return;
    }
    ww->w = nw;
    struct ldsearch_wheel *w = &ww->w[ww->n];
    w->dir = strdup(dir);
    w->site = strdup(site);
    w->wheel = strdup(wheel);
    w->origin = strdup(origin);
    if (!w->dir || !w->site || !w->wheel || !w->origin) {
        free(w->dir);
        free(w->site);
        free(w->wheel);
        free(w->origin);
        ww->err = -ENOMEM;
        return;
    }
    ww->n++;
}

/* Every PREFIX/lib{,64}/python3.N/{site,dist}-packages/nvidia/X/lib, plus Debian's
 * PREFIX/lib/python3/dist-packages. */
static void ldsearch_wheel_prefix(struct ldsearch_wheelw *ww, const char *prefix, const char *origin)
{
    static const char *const layouts[] = {
        "/lib/python3*/site-packages", "/lib/python3*/dist-packages",
        "/lib64/python3*/site-packages", NULL,
    };
    for (size_t l = 0; layouts[l]; l++) {
        char *pattern = str_printf("%s%s", strcmp(prefix, "/") == 0 ? "" : prefix, layouts[l]);
        char **sites = NULL;
        size_t n_sites = 0;
        if (!pattern || ldsearch_glob_dirs(ww->fs, pattern, &sites, &n_sites) < 0) {
            free(pattern);
            ww->err = -ENOMEM;
            return;
        }
        free(pattern);
        for (size_t i = 0; i < n_sites; i++) {
            char *nv = ldsearch_join(sites[i], "nvidia");
            char **wheels = NULL;
            size_t n_wheels = 0;
            if (nv)
                ldsearch_dir_match(ww->fs, nv, "*", &wheels, &n_wheels);
            for (size_t k = 0; k < n_wheels; k++) {
                char *dir = str_printf("%s/%s/lib", nv, wheels[k]);
                struct stat st;
                if (dir && hostfs_stat(ww->fs, dir, &st, true) == 0 && S_ISDIR(st.st_mode))
                    ldsearch_wheel_add(ww, dir, sites[i], wheels[k], origin);
                free(dir);
            }
            ldsearch_strv_free(wheels, n_wheels);
            free(nv);
        }
        ldsearch_strv_free(sites, n_sites);
    }
}

static bool ldsearch_ends_with(const char *s, const char *suffix)
{
    size_t l = strlen(s), n = strlen(suffix);
    while (l > 1 && s[l - 1] == '/')
        l--;
    return l >= n && strncmp(s + l - n, suffix, n) == 0;
}

int ldsearch_wheels(const struct hostfs *fs, const char *path_env, const char *virtual_env, const char *home,
                    struct ldsearch_wheel **out, size_t *n)
{
    struct ldsearch_wheelw ww = {.fs = fs};
    if (virtual_env && virtual_env[0] == '/')
        ldsearch_wheel_prefix(&ww, virtual_env, "VIRTUAL_ENV");
    /* Each python3 on PATH: its prefix is the directory above bin/. The link itself is not followed:
     * a venv's bin/python3 links to the system interpreter but its site-packages is the venv's. */
    char *copy = path_env ? strdup(path_env) : NULL;
    char *save = NULL;
    for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        char **pys = NULL;
        size_t n_pys = 0;
        ldsearch_dir_match(fs, d, "python3*", &pys, &n_pys);
        bool any = false;
        for (size_t i = 0; i < n_pys && !any; i++) {
            /* python3, python3.12: not python3-config and friends */
            const char *v = pys[i] + 7;
            if (*v && (*v != '.' || strspn(v + 1, "0123456789") != strlen(v + 1)))
                continue;
            char *py = ldsearch_join(d, pys[i]);
            any = py && ldsearch_exists(fs, py);
            if (any) {
                char *prefix = strdup(d);
                size_t pl = prefix ? strlen(prefix) : 0;
                while (pl > 1 && prefix[pl - 1] == '/')
                    prefix[--pl] = '\0';
                char *slash = prefix ? strrchr(prefix, '/') : NULL;
                if (slash) {
                    if (slash == prefix)
                        slash[1] = '\0';
                    else
                        *slash = '\0';
                    char *origin = str_printf("python3 on PATH (%s)", py);
                    if (origin)
                        ldsearch_wheel_prefix(&ww, prefix, origin);
                    free(origin);
                    /* pyenv: PATH holds ROOT/shims/python3, a script; the interpreters are ROOT/versions/X */
                    if (ldsearch_ends_with(d, "/shims")) {
                        char *pattern = str_printf("%s/versions/*", prefix);
                        char **vers = NULL;
                        size_t n_vers = 0;
                        if (pattern)
                            ldsearch_glob_dirs(fs, pattern, &vers, &n_vers);
                        for (size_t k = 0; k < n_vers; k++) {
                            char *o = str_printf("pyenv version %s (%s)", vers[k], py);
                            if (o)
                                ldsearch_wheel_prefix(&ww, vers[k], o);
                            free(o);
                        }
                        ldsearch_strv_free(vers, n_vers);
                        free(pattern);
                    }
                }
                free(prefix);
            }
            free(py);
        }
        ldsearch_strv_free(pys, n_pys);
    }
    free(copy);
    static const char *const system[] = {"/usr", "/usr/local", NULL};
    for (size_t i = 0; system[i]; i++)
        ldsearch_wheel_prefix(&ww, system[i], "system");
    if (home && home[0] == '/') {
        char *local = ldsearch_join(home, ".local");
        if (local)
            ldsearch_wheel_prefix(&ww, local, "user (~/.local)");
        free(local);
    }
    if (ww.err < 0) {
        ldsearch_wheels_free(ww.w, ww.n);
        *out = NULL;
        *n = 0;
        return ww.err;
    }
    *out = ww.w;
    *n = ww.n;
    return 0;
}

void ldsearch_wheels_free(struct ldsearch_wheel *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(w[i].dir);
        free(w[i].site);
        free(w[i].wheel);
        free(w[i].origin);
    }
    free(w);
}
