/* snapshot_write.c: `gpucheckup snapshot`: every host file a run read, its report and CPUID, into a tarball. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "lazyarchive.h"
#include "snapshot.h"
#include "strutil.h"
#include "writer.h"

/* One archive member, under SNAPSHOT_TOP/. */
struct snap_member {
    char *name;
    mode_t type;   /* S_IFREG, S_IFDIR, S_IFLNK */
    mode_t perm;
    uid_t uid;
    gid_t gid;
    char *data;    /* regular files */
    size_t len;
    char *link;    /* symlinks: the link text */
};

struct snap {
    const struct snapshot_input *in;
    char **paths;  /* sorted set of host paths already queued */
    size_t n_paths;
    char **queue;  /* paths still to visit (borrowed from PATHS) */
    size_t n_queue;
    struct snap_member *m;
    size_t n_m;
    json_object *placeholders; /* [{path, size, why}] */
    json_object *libraries;    /* [{path, size}] */
    bool full;                 /* SNAPSHOT_PATHS_MAX reached */
    time_t now;
};

/* Queue host path P (absolute) once. */
static void snap_queue(struct snap *sn, const char *p)
{
    if (!p || p[0] != '/' || sn->full)
        return;
    /* binary search for the insertion point */
    size_t lo = 0, hi = sn->n_paths;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(sn->paths[mid], p);
        if (c == 0)
            return;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (sn->n_paths >= SNAPSHOT_PATHS_MAX) {
        sn->full = true;
        return;
    }
    char **np = realloc(sn->paths, (sn->n_paths + 1) * sizeof(*np));
    if (!np)
        return;
    sn->paths = np;
    char **nq = realloc(sn->queue, (sn->n_queue + 1) * sizeof(*nq));
    if (!nq)
        return;
    sn->queue = nq;
    char *copy = strdup(p);
    if (!copy)
        return;
    memmove(np + lo + 1, np + lo, (sn->n_paths - lo) * sizeof(*np));
    np[lo] = copy;
    sn->n_paths++;
    sn->queue[sn->n_queue++] = copy;
}

static struct snap_member *snap_add(struct snap *sn, const char *hostpath, mode_t type, const struct stat *st)
{
    struct snap_member *nm = realloc(sn->m, (sn->n_m + 1) * sizeof(*nm));
    if (!nm)
        return NULL;
    sn->m = nm;
    struct snap_member *m = &sn->m[sn->n_m];
    memset(m, 0, sizeof(*m));
    m->name = str_printf(SNAPSHOT_TOP "/tree%s", hostpath);
    if (!m->name)
        return NULL;
    m->type = type;
    m->perm = st ? st->st_mode & 01777 : 0644; /* never set-user-ID or set-group-ID */
    m->uid = st ? st->st_uid : 0;
    m->gid = st ? st->st_gid : 0;
    sn->n_m++;
    return m;
}

static void snap_placeholder(struct snap *sn, const char *path, const struct stat *st, const char *why)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", json_object_new_string(path));
    json_object_object_add(o, "size", st && S_ISREG(st->st_mode) ? json_object_new_int64((int64_t)st->st_size) : NULL);
    json_object_object_add(o, "why", json_object_new_string(why));
    json_object_array_add(sn->placeholders, o);
    const char *base = strrchr(path, '/');
    if (base && strstr(base, ".so") && st && S_ISREG(st->st_mode)) {
        json_object *l = json_object_new_object();
        json_object_object_add(l, "path", json_object_new_string(path));
        json_object_object_add(l, "size", json_object_new_int64((int64_t)st->st_size));
        json_object_array_add(sn->libraries, l);
    }
}

/* PATH's directory part resolved inside the tree (each symlink met is queued, so it is kept as a
 * link) and its last component unresolved: a heap string, or NULL when a part is missing. */
static char *snap_canon(struct snap *sn, const char *path, int depth)
{
    if (depth > 40)
        return NULL;
    char *work = strdup(path);
    char *cur = strdup("");
    if (!work || !cur) {
        free(work);
        free(cur);
        return NULL;
    }
    char *save = NULL, *last = NULL, *result = NULL;
    for (char *comp = strtok_r(work, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
        char *rest = save;
        if (!rest || !*rest) { /* the last component is not followed */
            last = comp;
            break;
        }
        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            char *slash = strrchr(cur, '/');
            if (slash)
                *slash = '\0';
            continue;
        }
        char *cand = str_printf("%s/%s", cur, comp);
        struct stat st;
        if (!cand || hostfs_stat(sn->in->fs, cand, &st, false) < 0) {
            free(cand);
            goto out;
        }
        if (S_ISLNK(st.st_mode)) {
            char *target = NULL;
            snap_queue(sn, cand);
            if (hostfs_readlink(sn->in->fs, cand, &target) < 0) {
                free(cand);
                goto out;
            }
            char *next = target[0] == '/' ? str_printf("%s/%s", target, rest) : str_printf("%s/%s/%s", cur, target, rest);
            free(target);
            free(cand);
            result = next ? snap_canon(sn, next, depth + 1) : NULL;
            free(next);
            free(work);
            free(cur);
            return result;
        }
        if (!S_ISDIR(st.st_mode)) {
            free(cand);
            goto out;
        }
        free(cur);
        cur = cand;
    }
    if (last && strcmp(last, ".") != 0 && strcmp(last, "..") != 0)
        result = str_printf("%s/%s", cur, last);
out:
    free(work);
    free(cur);
    return result;
}

/* Never read: a BAR (sysfs resource*, gigabytes, mmap only), an option ROM, or the VPD (reading it
 * talks to the device, and hangs some: the kernel keeps quirks for those, drivers/pci/vpd.c). */
static bool snap_never_read(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return str_starts_with(path, "/sys/") &&
           ((str_starts_with(base, "resource") && strcmp(base, "resource") != 0) || /* "resource": the BAR table */
            strcmp(base, "rom") == 0 || strcmp(base, "vpd") == 0);
}

/* Secrets no diagnosis needs: password hashes, sudo rules, SSH and TLS keys. */
static bool snap_private(const char *path)
{
    static const char *const prefixes[] = {"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh/", "/etc/ssl/private/",
                                           NULL};
    for (size_t i = 0; prefixes[i]; i++)
        if (str_starts_with(path, prefixes[i]))
            return true;
    return str_ends_with(path, ".key") || str_ends_with(path, ".pem") || strstr(path, "/.ssh/") != NULL;
}

/* The first 64 bytes of a big file: a library's ELF header, which the library search checks
 * (class and machine, as ld.so does), so a replay finds the same libraries. */
static void snap_head(struct snap *sn, const char *path, struct snap_member *m)
{
    int fd = hostfs_open_file(sn->in->fs, path);
    if (fd < 0)
        return;
    m->data = calloc(1, SNAPSHOT_HEAD + 1);
    ssize_t n = m->data ? hostfs_pread(fd, m->data, SNAPSHOT_HEAD, 0) : -1;
    close(fd);
    m->len = n > 0 ? (size_t)n : 0;
}

static void snap_visit_file(struct snap *sn, const char *c, const struct stat *st)
{
    struct snap_member *m = snap_add(sn, c, S_IFREG, st);
    if (!m)
        return;
    if (snap_private(c)) {
        snap_placeholder(sn, c, st, "private: never read");
        return;
    }
    if (snap_never_read(c)) {
        snap_placeholder(sn, c, st, "PCI BAR, ROM or VPD: never read");
        return;
    }
    int rc = st->st_size > SNAPSHOT_FILE_CAP ? -EFBIG
                                             : hostfs_read_file(sn->in->fs, c, SNAPSHOT_FILE_CAP, &m->data, &m->len);
    if (rc == -EFBIG) {
        snap_head(sn, c, m);
        snap_placeholder(sn, c, st, "larger than 128 KiB: only its first 64 bytes are kept");
    } else if (rc < 0) {
        char *why = str_printf("unreadable: %s", strerror(-rc));
        snap_placeholder(sn, c, st, why ? why : "unreadable");
        free(why);
    }
}

/* The kernel log, /dev/kmsg (a character device a probe read): its records since boot kept as a regular
 * file in the same record format, so that a replay reads them again; redacted as every text file is (host
 * names, users). False when C is another device, or the log cannot be read (not root): a placeholder then. */
static bool snap_kmsg(struct snap *sn, const char *c, const struct stat *st)
{
    char *buf = NULL;
    size_t len = 0, lost = 0;
    bool capped = false;
    if (strcmp(c, "/dev/kmsg") != 0 || hostfs_read_stream(sn->in->fs, c, SNAPSHOT_KMSG_CAP, &buf, &len, &capped, &lost) < 0)
        return false;
    struct snap_member *m = snap_add(sn, c, S_IFREG, st);
    if (m) {
        m->data = buf;
        m->len = len;
    } else {
        free(buf);
    }
    return true;
}

/* Small directories of /dev, /etc, /sys: their listing matters (device nodes, .icd files). */
static void snap_list_dir(struct snap *sn, const char *c)
{
    if (!str_starts_with(c, "/dev") && !str_starts_with(c, "/etc/") && !str_starts_with(c, "/sys/"))
        return;
    DIR *d = hostfs_opendir(sn->in->fs, c);
    if (!d)
        return;
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d)) != NULL && n++ < 512) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *p = str_printf("%s/%s", strcmp(c, "/") == 0 ? "" : c, de->d_name);
        /* subdirectories themselves, not their contents */
        struct stat st;
        if (p && hostfs_stat(sn->in->fs, p, &st, false) == 0 && !S_ISDIR(st.st_mode))
            snap_queue(sn, p);
        free(p);
    }
    closedir(d);
}

static void snap_visit(struct snap *sn, const char *path, bool list)
{
    char *c = snap_canon(sn, path, 0);
    if (!c)
        return;
    struct stat st;
    if (strcmp(c, path) != 0 || hostfs_stat(sn->in->fs, c, &st, false) < 0) {
        /* reached through a linked directory: stored once, under its own path */
        snap_queue(sn, c);
        free(c);
        return;
    }
    if (S_ISLNK(st.st_mode)) {
        char *target = NULL;
        struct snap_member *m = NULL;
        if (hostfs_readlink(sn->in->fs, c, &target) == 0 && (m = snap_add(sn, c, S_IFLNK, &st)) != NULL) {
            m->link = strdup(target);
            const char *slash = strrchr(c, '/');
            char *next = target[0] == '/' ? strdup(target) : str_printf("%.*s/%s", (int)(slash - c), c, target);
            snap_queue(sn, next);
            free(next);
        }
        free(target);
    } else if (S_ISDIR(st.st_mode)) {
        snap_add(sn, c, S_IFDIR, &st);
        if (list)
            snap_list_dir(sn, c);
    } else if (S_ISREG(st.st_mode)) {
        snap_visit_file(sn, c, &st);
    } else if (S_ISCHR(st.st_mode) && snap_kmsg(sn, c, &st)) {
        /* kept with its records */
    } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        /* an empty file of the node's mode and owner, as tests/fixtures/capture.sh makes them */
        if (snap_add(sn, c, S_IFREG, &st)) {
            char *why = str_printf("%s device %u:%u", S_ISCHR(st.st_mode) ? "character" : "block",
                                   major(st.st_rdev), minor(st.st_rdev));
            snap_placeholder(sn, c, &st, why ? why : "device node");
            free(why);
        }
    }
    free(c);
}

/* Every attribute of every PCI device: libpci reads them directly, not through hostfs. */
static void snap_pci_devices(struct snap *sn)
{
    DIR *d = hostfs_opendir(sn->in->fs, "/sys/bus/pci/devices");
    if (!d)
        return;
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d)) != NULL && n++ < 4096) {
        if (de->d_name[0] == '.')
            continue;
        char *p = str_printf("/sys/bus/pci/devices/%s", de->d_name);
        char *c = p ? snap_canon(sn, p, 0) : NULL;
        snap_queue(sn, p);
        char *target = NULL;
        char *dev = NULL;
        if (c && hostfs_readlink(sn->in->fs, c, &target) == 0 && target[0] != '/')
            dev = str_printf("/sys/bus/pci/devices/%s", target);
        else if (c)
            dev = strdup(c);
        char *cdev = dev ? snap_canon(sn, dev, 0) : NULL;
        /* the device directory's entries, one level */
        DIR *dd = cdev ? hostfs_opendir(sn->in->fs, cdev) : NULL;
        struct dirent *e;
        while (dd && (e = readdir(dd)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char *a = str_printf("%s/%s", cdev, e->d_name);
            struct stat st;
            if (a && hostfs_stat(sn->in->fs, a, &st, false) == 0 && !S_ISDIR(st.st_mode))
                snap_queue(sn, a);
            free(a);
        }
        if (dd)
            closedir(dd);
        free(cdev);
        free(dev);
        free(target);
        free(c);
        free(p);
    }
    closedir(d);
}

static void snap_collect(struct snap *sn)
{
    const char *t = sn->in->trace, *end = t + sn->in->trace_len;
    while (t < end) {
        const char *nl = memchr(t, '\n', (size_t)(end - t));
        size_t len = nl ? (size_t)(nl - t) : (size_t)(end - t);
        char *p = strndup(t, len);
        snap_queue(sn, p);
        free(p);
        t += len + 1;
    }
    /* traced paths are listed; paths met while following links are not */
    size_t traced = sn->n_queue;
    snap_pci_devices(sn);
    for (size_t i = 0; i < sn->n_queue; i++)
        snap_visit(sn, sn->queue[i], i < traced);
}

static int snap_cmp_member(const void *a, const void *b)
{
    return strcmp(((const struct snap_member *)a)->name, ((const struct snap_member *)b)->name);
}

/* Redact every member: learn first (all files, the report), then replace. */
static void snap_redact(struct snap *sn, struct redactor *rd)
{
    for (size_t i = 0; i < sn->n_m; i++)
        if (sn->m[i].data)
            redact_learn_file(rd, sn->m[i].name + strlen(SNAPSHOT_TOP "/tree"), sn->m[i].data, sn->m[i].len);
    for (size_t i = 0; i < sn->n_m; i++)
        redact_learn_file(rd, "", sn->m[i].name, strlen(sn->m[i].name));
    redact_learn_report(rd, sn->in->report);
    for (size_t i = 0; i < sn->n_m; i++) {
        struct snap_member *m = &sn->m[i];
        char *s = redact_text(rd, m->name, strlen(m->name), NULL);
        if (s) {
            free(m->name);
            m->name = s;
        }
        if (m->link && (s = redact_text(rd, m->link, strlen(m->link), NULL)) != NULL) {
            free(m->link);
            m->link = s;
        }
        if (!m->data)
            continue;
        if (str_ends_with(m->name, "/config") && strstr(m->name, "/tree/sys/")) {
            redact_pci_config((unsigned char *)m->data, m->len);
            continue; /* binary: no text to replace */
        }
        if (memchr(m->data, '\0', m->len)) { /* binary (ld.so.cache, an ELF header): lengths kept */
            redact_binary(rd, m->data, m->len);
            continue;
        }
        size_t nl = 0;
        if ((s = redact_text(rd, m->data, m->len, &nl)) != NULL) {
            free(m->data);
            m->data = s;
            m->len = nl;
        }
    }
}

struct snap_buf {
    char *data;
    size_t len, cap;
};

static la_ssize_t snap_write_cb(struct archive *a, void *arg, const void *buf, size_t n)
{
    struct snap_buf *b = arg;
    if (b->len + n > b->cap) {
        size_t ncap = b->cap ? b->cap : 65536;
        while (ncap < b->len + n)
            ncap *= 2;
        char *nd = realloc(b->data, ncap);
        if (!nd) {
            lazyarchive.archive_set_error(a, ENOMEM, "out of memory");
            return -1;
        }
        b->data = nd;
        b->cap = ncap;
    }
    memcpy(b->data + b->len, buf, n);
    b->len += n;
    return (la_ssize_t)n;
}

static int snap_put(struct archive *a, const struct snap_member *m, time_t now)
{
    struct archive_entry *e = lazyarchive.archive_entry_new();
    if (!e)
        return -1;
    lazyarchive.archive_entry_set_pathname(e, m->name);
    lazyarchive.archive_entry_set_filetype(e, m->type);
    lazyarchive.archive_entry_set_perm(e, m->perm);
    lazyarchive.archive_entry_set_uid(e, m->uid);
    lazyarchive.archive_entry_set_gid(e, m->gid);
    lazyarchive.archive_entry_set_mtime(e, now, 0);
    if (m->type == S_IFLNK)
        lazyarchive.archive_entry_set_symlink(e, m->link);
    lazyarchive.archive_entry_set_size(e, m->type == S_IFREG ? (la_int64_t)m->len : 0);
    int rc = lazyarchive.archive_write_header(a, e);
    if (rc == ARCHIVE_OK && m->type == S_IFREG && m->len > 0 &&
        lazyarchive.archive_write_data(a, m->data, m->len) != (la_ssize_t)m->len)
        rc = ARCHIVE_FATAL;
    lazyarchive.archive_entry_free(e);
    return rc == ARCHIVE_OK ? 0 : -1;
}

/* A member holding BUF (copied). */
static void snap_add_blob(struct snap *sn, const char *name, const char *buf, size_t len)
{
    struct snap_member *nm = realloc(sn->m, (sn->n_m + 1) * sizeof(*nm));
    if (!nm)
        return;
    sn->m = nm;
    struct snap_member *m = &sn->m[sn->n_m];
    memset(m, 0, sizeof(*m));
    m->name = str_printf(SNAPSHOT_TOP "/%s", name);
    m->data = malloc(len + 1);
    if (!m->name || !m->data) {
        free(m->name);
        free(m->data);
        return;
    }
    memcpy(m->data, buf, len);
    m->data[len] = '\0';
    m->len = len;
    m->type = S_IFREG;
    m->perm = 0644;
    sn->n_m++;
}

static void snap_add_json(struct snap *sn, const char *name, json_object *doc)
{
    const char *s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                             JSON_C_TO_STRING_NOSLASHESCAPE);
    if (s)
        snap_add_blob(sn, name, s, strlen(s));
}

static json_object *snap_manifest(struct snap *sn, struct redactor *rd)
{
    json_object *m = json_object_new_object();
    char when[32];
    struct tm tm;
    gmtime_r(&sn->now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_object_add(m, "format", json_object_new_string(SNAPSHOT_FORMAT_NAME));
    json_object_object_add(m, "format_version", json_object_new_int(SNAPSHOT_FORMAT_VERSION));
    json_object_object_add(m, "gpucheckup_version", json_object_new_string(GPUCHECKUP_VERSION));
    json_object_object_add(m, "created", json_object_new_string(when));
    json_object_object_add(m, "redacted", json_object_new_boolean(rd != NULL));
    json_object_object_add(m, "redactions", rd ? redact_summary(rd) : NULL);
    json_object_object_add(m, "files", json_object_new_int64((int64_t)sn->n_m));
    json_object_object_add(m, "paths_truncated", json_object_new_boolean(sn->full));
    json_object_object_add(m, "cpuid_dump", json_object_new_boolean(sn->in->cpuid_dump != NULL));
    json_object_object_add(m, "placeholders", json_object_get(sn->placeholders));
    json_object_object_add(m, "libraries", json_object_get(sn->libraries));
    return m;
}

static void snap_free(struct snap *sn)
{
    for (size_t i = 0; i < sn->n_paths; i++)
        free(sn->paths[i]);
    free(sn->paths);
    free(sn->queue);
    for (size_t i = 0; i < sn->n_m; i++) {
        free(sn->m[i].name);
        free(sn->m[i].data);
        free(sn->m[i].link);
    }
    free(sn->m);
    json_object_put(sn->placeholders);
    json_object_put(sn->libraries);
}

/* The CPUID dump file our run wrote (a temporary file of ours, not a host file). */
static void snap_add_cpuid(struct snap *sn)
{
    if (!sn->in->cpuid_dump)
        return;
    int fd = open(sn->in->cpuid_dump, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char *buf = malloc(SNAPSHOT_FILE_CAP);
    ssize_t n = buf ? read(fd, buf, SNAPSHOT_FILE_CAP) : -1;
    close(fd);
    if (n > 0)
        snap_add_blob(sn, "cpuid.dump", buf, (size_t)n);
    free(buf);
}

static int snap_archive(struct snap *sn, struct snap_buf *b, char **err)
{
    struct archive *a = lazyarchive.archive_write_new();
    if (!a) {
        *err = str_dup("out of memory");
        return -1;
    }
    int rc = -1;
    if (lazyarchive.archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
        lazyarchive.archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
        lazyarchive.archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
        lazyarchive.archive_write_open(a, b, NULL, snap_write_cb, NULL) != ARCHIVE_OK) {
        *err = str_printf("cannot start the archive: %s", lazyarchive_error(a, "?"));
        goto out;
    }
    for (size_t i = 0; i < sn->n_m; i++)
        if (snap_put(a, &sn->m[i], sn->now) < 0) {
            *err = str_printf("cannot archive %s: %s", sn->m[i].name,
                              lazyarchive_error(a, "?"));
            goto out;
        }
    if (lazyarchive.archive_write_close(a) != ARCHIVE_OK) {
        *err = str_printf("cannot finish the archive: %s", lazyarchive_error(a, "?"));
        goto out;
    }
    rc = 0;
out:
    lazyarchive.archive_write_free(a);
    return rc;
}

int snapshot_write(const char *out, const struct snapshot_input *in, char **err)
{
    *err = NULL;
    const char *lerr = NULL;
    if (lazyarchive_load(&lerr) < 0) {
        *err = str_dup(lerr);
        return -1;
    }
    struct snap sn = {.in = in, .now = time(NULL)};
    sn.placeholders = json_object_new_array();
    sn.libraries = json_object_new_array();
    snap_collect(&sn);
    struct redactor *rd = in->redact ? redact_new() : NULL;
    if (in->redact && !rd) {
        snap_free(&sn);
        *err = str_dup("out of memory");
        return -1;
    }
    if (rd)
        snap_redact(&sn, rd);
    snap_add_cpuid(&sn);
    /* the report: redacted as text, so every copy of a secret goes, wherever the probes put it */
    const char *rep = json_object_to_json_string_ext(in->report, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                     JSON_C_TO_STRING_NOSLASHESCAPE);
    if (rep) {
        size_t rl = strlen(rep);
        char *red = rd ? redact_text(rd, rep, rl, &rl) : NULL;
        snap_add_blob(&sn, "report.json", red ? red : rep, rl);
        free(red);
    }
    json_object *man = snap_manifest(&sn, rd);
    if (rd) { /* placeholder paths name host files too */
        const char *ms = json_object_to_json_string_ext(man, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
        size_t ml = 0;
        char *red = ms ? redact_text(rd, ms, strlen(ms), &ml) : NULL;
        if (red)
            snap_add_blob(&sn, "manifest.json", red, ml);
        free(red);
    } else {
        snap_add_json(&sn, "manifest.json", man);
    }
    json_object_put(man);
    redact_free(rd);
    qsort(sn.m, sn.n_m, sizeof(*sn.m), snap_cmp_member);

    struct snap_buf b = {0};
    int rc = snap_archive(&sn, &b, err);
    snap_free(&sn);
    if (rc == 0 && output_emit(out, b.data, b.len, err) < 0)
        rc = -1;
    free(b.data);
    return rc;
}
