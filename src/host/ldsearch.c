/* ldsearch.c: the dynamic linker's library search and its ld.so.cache / ld.so.conf parsers. */
#include "ldsearch.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldsearch_internal.h"
#include "strutil.h"

#define LDSEARCH_MAX_CONF_FILES 256    /* ld.so.conf files read (includes) */
#define LDSEARCH_MAX_CONF_DEPTH 8      /* include nesting */
#define LDSEARCH_MAX_CACHE (64u << 20) /* ld.so.cache size we accept */

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

int ldsearch_list_add(char ***list, size_t *n, const char *s)
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
    char **nr = realloc(*reasons, (*n + 1) * sizeof(**reasons));
    if (!nr)
        return -ENOMEM;
    *reasons = nr;
    char *r = strdup(why ? why : "");
    if (!r || ldsearch_list_add(list, n, s) < 0) {
        free(r);
        return -ENOMEM;
    }
    nr[*n - 1] = r;
    return 0;
}

void ldsearch_strv_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
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

/* The entries of the open directory D matching PATTERN (NULL: all), sorted, into *OUT and *N. */
static int ldsearch_read_dir(DIR *d, const char *pattern, char ***out, size_t *n)
{
    struct dirent *de;
    int rc = 0;
    size_t seen = 0;
    while ((de = readdir(d)) && seen++ < LDSEARCH_MAX_SCAN_ENTRIES) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (pattern && fnmatch(pattern, de->d_name, FNM_PERIOD) != 0)
            continue;
        if ((rc = ldsearch_list_add(out, n, de->d_name)) < 0)
            break;
    }
    if (*n > 1)
        qsort(*out, *n, sizeof(**out), ldsearch_cmp_str);
    return rc;
}

int ldsearch_dir_match(const struct hostfs *fs, const char *dir, const char *pattern, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = hostfs_opendir(fs, dir);
    if (!d)
        return -errno;
    int rc = ldsearch_read_dir(d, pattern, out, n);
    closedir(d);
    return rc;
}

/* One directory a search has read: all its names, sorted. */
struct ldsearch_listing {
    dev_t dev;
    ino_t ino;
    char **names;
    size_t n;
};

struct ldsearch_memo {
    struct ldsearch_listing *l;
    size_t n;
};

static void ldsearch_memo_free(struct ldsearch_memo *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        ldsearch_strv_free(m->l[i].names, m->l[i].n);
    free(m->l);
    free(m);
}

/* The listing of the open directory D in M, read now when it is not there yet; NULL when out of
 * memory (or M is NULL). */
static const struct ldsearch_listing *ldsearch_memo_get(struct ldsearch_memo *m, DIR *d)
{
    struct stat sb;
    if (!m || fstat(dirfd(d), &sb) != 0)
        return NULL;
    for (size_t i = 0; i < m->n; i++)
        if (m->l[i].dev == sb.st_dev && m->l[i].ino == sb.st_ino)
            return &m->l[i];
    struct ldsearch_listing *nl = realloc(m->l, (m->n + 1) * sizeof(*nl));
    if (!nl)
        return NULL;
    m->l = nl;
    struct ldsearch_listing *e = &m->l[m->n];
    *e = (struct ldsearch_listing){.dev = sb.st_dev, .ino = sb.st_ino};
    if (ldsearch_read_dir(d, NULL, &e->names, &e->n) < 0) {
        ldsearch_strv_free(e->names, e->n);
        return NULL;
    }
    m->n++;
    return e;
}

int ldsearch_list(const struct ldsearch *s, const char *dir, const char *pattern, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = hostfs_opendir(s->fs, dir);
    if (!d)
        return -errno;
    const struct ldsearch_listing *l = ldsearch_memo_get(s->memo, d);
    int rc = 0;
    if (!l) {
        rewinddir(d);
        rc = ldsearch_read_dir(d, pattern, out, n); /* no memo: as ldsearch_dir_match */
    } else {
        for (size_t i = 0; i < l->n && rc == 0; i++)
            if (fnmatch(pattern, l->names[i], FNM_PERIOD) == 0)
                rc = ldsearch_list_add(out, n, l->names[i]);
    }
    closedir(d);
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
    if (ldsearch_list(w->s, *abs ? abs : "/", base, &names, &n) == -ENOMEM)
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
    ldsearch_memo_free(s->memo);
    memset(s, 0, sizeof(*s));
}

int ldsearch_init(struct ldsearch *s, const struct hostfs *fs, const char *ldpath)
{
    memset(s, 0, sizeof(*s));
    s->fs = fs;
    s->memo = calloc(1, sizeof(*s->memo)); /* without it, every listing reads its directory */
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
    if (ldsearch_list(c->s, dir, c->pattern, &names, &n) == -ENOMEM)
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

/* ---- files the search skips as foreign ---- */

struct ldsearch_fwalk {
    const struct ldsearch *s;
    const char *name;    /* the file name looked for, or NULL */
    const char *pattern; /* else: the fnmatch pattern names match */
    struct ldsearch_foreign *f;
    size_t n;
    int err;
};

static void ldsearch_fwalk_add(struct ldsearch_fwalk *w, const char *path, const char *name, const char *via)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(w->f[i].path, path) == 0)
            return;
    struct ldsearch_elf e;
    if (ldsearch_elf_read(w->s->fs, path, &e) != 1 || ldsearch_elf_native(&e))
        return;
    struct ldsearch_foreign *nf = realloc(w->f, (w->n + 1) * sizeof(*nf));
    if (!nf) {
        w->err = -ENOMEM;
        return;
    }
    w->f = nf;
    w->f[w->n].path = strdup(path);
    w->f[w->n].name = strdup(name);
    if (!w->f[w->n].path || !w->f[w->n].name) {
        free(w->f[w->n].path);
        free(w->f[w->n].name);
        w->err = -ENOMEM;
        return;
    }
    w->f[w->n].via = via;
    w->f[w->n].elf = e;
    w->n++;
}

static void ldsearch_fwalk_dir(struct ldsearch_fwalk *w, const char *dir, const char *via)
{
    if (w->name) {
        char *p = ldsearch_join(dir, w->name);
        if (p)
            ldsearch_fwalk_add(w, p, w->name, via);
        else
            w->err = -ENOMEM;
        free(p);
        return;
    }
    char **names = NULL;
    size_t n = 0;
    if (ldsearch_list(w->s, dir, w->pattern, &names, &n) == -ENOMEM)
        w->err = -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *p = ldsearch_join(dir, names[i]);
        if (p)
            ldsearch_fwalk_add(w, p, names[i], via);
        else
            w->err = -ENOMEM;
        free(p);
    }
    ldsearch_strv_free(names, n);
}

static int ldsearch_fwalk_cache_cb(const char *key, const char *value, int32_t flags, void *arg)
{
    (void)flags; /* every architecture's entry: a foreign one is what we look for */
    struct ldsearch_fwalk *w = arg;
    if (value[0] == '/' && (w->name ? strcmp(key, w->name) == 0 : fnmatch(w->pattern, key, FNM_PERIOD) == 0))
        ldsearch_fwalk_add(w, value, key, "ld.so.cache");
    return w->err < 0;
}

/* ldsearch_foreign_find and ldsearch_foreign_match: W names the file or the pattern. */
static int ldsearch_fwalk(struct ldsearch_fwalk w, struct ldsearch_foreign **out, size_t *n)
{
    const struct ldsearch *s = w.s;
    for (size_t i = 0; i < s->n_ld; i++)
        ldsearch_fwalk_dir(&w, s->ld_dirs[i], "LD_LIBRARY_PATH");
    if (s->cache)
        ldsearch_cache_walk(s->cache, s->cache_len, ldsearch_fwalk_cache_cb, &w);
    for (const char *const *d = ldsearch_default_dirs(); *d; d++)
        ldsearch_fwalk_dir(&w, *d, "default");
    if (w.err < 0) {
        ldsearch_foreign_free(w.f, w.n);
        return w.err;
    }
    *out = w.f;
    *n = w.n;
    return 0;
}

int ldsearch_foreign_find(const struct ldsearch *s, const char *name, struct ldsearch_foreign **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!name || !*name || strchr(name, '/'))
        return 0;
    return ldsearch_fwalk((struct ldsearch_fwalk){.s = s, .name = name}, out, n);
}

int ldsearch_foreign_match(const struct ldsearch *s, const char *pattern, struct ldsearch_foreign **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!pattern || !*pattern || strchr(pattern, '/'))
        return 0;
    return ldsearch_fwalk((struct ldsearch_fwalk){.s = s, .pattern = pattern}, out, n);
}

void ldsearch_foreign_free(struct ldsearch_foreign *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(f[i].path);
        free(f[i].name);
    }
    free(f);
}
