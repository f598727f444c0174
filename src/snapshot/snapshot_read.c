/* snapshot_read.c: --root FILE.tar.gz: a snapshot unpacked safely, and its captured results replayed. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checks.h"
#include "isolate.h"
#include "jsonget.h"
#include "lazyarchive.h"
#include "probe.h"
#include "snapshot.h"
#include "strutil.h"

/* A --root that is a file, but not a snapshot (the words a plain --root FILE gave before). */
#define SNAP_NOT "Not a directory, nor a gpucheckup snapshot (a gzip tarball)"

/* A JSON file of the snapshot (ours, not a host file), at most 64 MiB. NULL when unreadable. */
static json_object *snap_load_json(const char *dir, const char *name)
{
    char *p = str_printf("%s/%s", dir, name);
    int fd = p ? open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) : -1;
    free(p);
    if (fd < 0)
        return NULL;
    struct stat st;
    json_object *doc = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < 64 * 1024 * 1024) {
        char *buf = malloc((size_t)st.st_size + 1);
        size_t n = 0;
        while (buf && n < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
            if (r <= 0)
                break;
            n += (size_t)r;
        }
        if (buf && n == (size_t)st.st_size) {
            doc = isolate_json_parse(buf, n, 128, false, NULL);
            if (doc && !json_object_is_type(doc, json_type_object)) {
                json_object_put(doc);
                doc = NULL;
            }
        }
        free(buf);
    }
    close(fd);
    return doc;
}

static int snap_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(p);
    return 0;
}

static void snap_rmtree(const char *dir)
{
    /* FTW_PHYS: links are removed, never followed */
    nftw(dir, snap_rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* A member name is safe when it lies under SNAPSHOT_TOP, relative, with no "." or ".." part. */
static bool snap_name_safe(const char *name)
{
    if (!str_starts_with(name, SNAPSHOT_TOP) || (name[strlen(SNAPSHOT_TOP)] != '/' && name[strlen(SNAPSHOT_TOP)]))
        return false;
    const char *p = name;
    while (*p) {
        const char *s = strchr(p, '/');
        size_t n = s ? (size_t)(s - p) : strlen(p);
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        if (!s)
            break;
        p = s + 1;
    }
    return strlen(name) < PATH_MAX - 64;
}

/* A relative symlink at member NAME must stay inside the snapshot's tree: its ".." parts come first
 * (a ".." after a name could climb out of where a linked name leads) and do not climb above tree/.
 * Absolute targets are read inside the --root tree by hostfs (RESOLVE_IN_ROOT), except below /sys,
 * which libpci reads by its real path: there a link is relative, as the kernel makes them. */
static bool snap_link_safe(const char *name, const char *target)
{
    static const char sys[] = SNAPSHOT_TOP "/tree/sys";
    if (!target || !*target)
        return false;
    if (target[0] == '/')
        return !(str_starts_with(name, sys) && (name[sizeof(sys) - 1] == '/' || !name[sizeof(sys) - 1]));
    bool named = false;
    int depth = -1; /* the depth of the link's directory below SNAPSHOT_TOP */
    for (const char *p = name; *p; p++)
        depth += *p == '/';
    const char *p = target;
    while (*p) {
        const char *s = strchr(p, '/');
        size_t n = s ? (size_t)(s - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (named)
                return false;
            depth--;
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            depth++;
            named = true;
        }
        if (depth < 1) /* above SNAPSHOT_TOP/tree */
            return false;
        if (!s)
            break;
        p = s + 1;
    }
    return true;
}

/* Copy the data of the current member, counting against *TOTAL. 0 or -1 with *ERR. */
static int snap_copy_data(struct archive *in, struct archive *out, size_t *total, char **err)
{
    const void *buf;
    size_t size;
    la_int64_t off;
    for (;;) {
        int r = lazyarchive.archive_read_data_block(in, &buf, &size, &off);
        if (r == ARCHIVE_EOF)
            return 0;
        if (r < ARCHIVE_WARN) {
            *err = str_printf("truncated or corrupt: %s", lazyarchive_error(in, "?"));
            return -1;
        }
        *total += size;
        if (*total > SNAPSHOT_TOTAL_MAX) {
            *err = str_printf("unpacks to more than %u MiB", SNAPSHOT_TOTAL_MAX >> 20);
            return -1;
        }
        if (lazyarchive.archive_write_data_block(out, buf, size, off) < ARCHIVE_WARN) {
            *err = str_printf("cannot unpack: %s", lazyarchive_error(out, "?"));
            return -1;
        }
    }
}

/* Check one member's header and point it into DEST. 0, or -1 with *ERR. */
static int snap_check_entry(struct archive_entry *e, const char *dest, char **err)
{
    const char *name = lazyarchive.archive_entry_pathname(e);
    if (!name || !snap_name_safe(name)) {
        *err = str_printf("member '%.200s' lies outside %s/ (absolute, \"..\" or foreign)", name ? name : "(none)",
                          SNAPSHOT_TOP);
        return -1;
    }
    mode_t type = lazyarchive.archive_entry_filetype(e);
    if (lazyarchive.archive_entry_hardlink(e) || (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)) {
        *err = str_printf("member '%.200s' is a hard link, device or FIFO: a snapshot holds none", name);
        return -1;
    }
    if (type == AE_IFLNK && !snap_link_safe(name, lazyarchive.archive_entry_symlink(e))) {
        *err = str_printf("member '%.200s' is a symbolic link leading out of the snapshot", name);
        return -1;
    }
    if (lazyarchive.archive_entry_size(e) < 0 || (uint64_t)lazyarchive.archive_entry_size(e) > SNAPSHOT_MEMBER_MAX) {
        *err = str_printf("member '%.200s' is larger than %u MiB", name, SNAPSHOT_MEMBER_MAX >> 20);
        return -1;
    }
    char *full = str_printf("%s/%s", dest, name);
    if (!full) {
        *err = str_dup("out of memory");
        return -1;
    }
    lazyarchive.archive_entry_set_pathname(e, full);
    free(full);
    mode_t perm = lazyarchive.archive_entry_perm(e) & 0777;
    lazyarchive.archive_entry_set_perm(e, type == AE_IFDIR ? perm | 0700 : perm);
    return 0;
}

/* Unpack tarball PATH into DEST. 0, or -1 with *ERR (not naming PATH). */
static int snap_unpack(const char *path, const char *dest, char **err)
{
    struct archive *in = lazyarchive.archive_read_new();
    struct archive *out = lazyarchive.archive_write_disk_new();
    int rc = -1;
    if (!in || !out) {
        *err = str_dup("out of memory");
        goto done;
    }
    lazyarchive.archive_read_support_filter_gzip(in);
    lazyarchive.archive_read_support_filter_none(in);
    lazyarchive.archive_read_support_format_tar(in);
    int flags = ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_PERM |
                ARCHIVE_EXTRACT_NO_OVERWRITE;
    if (geteuid() == 0) /* device nodes' owners and groups matter to the pci probe */
        flags |= ARCHIVE_EXTRACT_OWNER;
    lazyarchive.archive_write_disk_set_options(out, flags);
    if (lazyarchive.archive_read_open_filename(in, path, 64 * 1024) != ARCHIVE_OK) {
        *err = str_printf(SNAP_NOT ": %s", lazyarchive_error(in, "?"));
        goto done;
    }
    size_t count = 0, total = 0;
    for (;;) {
        struct archive_entry *e;
        int r = lazyarchive.archive_read_next_header(in, &e);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            *err = str_printf(SNAP_NOT ": %s", lazyarchive_error(in, "unreadable"));
            goto done;
        }
        if (++count > SNAPSHOT_MEMBERS_MAX) {
            *err = str_printf("more than %u members", SNAPSHOT_MEMBERS_MAX);
            goto done;
        }
        if (snap_check_entry(e, dest, err) < 0)
            goto done;
        if (lazyarchive.archive_write_header(out, e) < ARCHIVE_WARN) {
            *err = str_printf("cannot unpack %.200s: %s", lazyarchive.archive_entry_pathname(e),
                              lazyarchive_error(out, "?"));
            goto done;
        }
        if (lazyarchive.archive_entry_size(e) > 0 && snap_copy_data(in, out, &total, err) < 0)
            goto done;
        if (lazyarchive.archive_write_finish_entry(out) < ARCHIVE_WARN) {
            *err = str_printf("cannot unpack: %s", lazyarchive_error(out, "?"));
            goto done;
        }
    }
    if (count == 0) {
        *err = str_dup(SNAP_NOT ": an empty archive");
        goto done;
    }
    rc = 0;
done:
    if (in)
        lazyarchive.archive_read_free(in);
    if (out)
        lazyarchive.archive_write_free(out);
    return rc;
}

/* Fill S from the snapshot directory DIR (manifest.json, report.json, tree/, cpuid.dump). */
static int snap_load(struct snapshot *s, const char *dir, char **err)
{
    s->dir = strdup(dir);
    s->tree = str_printf("%s/tree", dir);
    s->manifest = snap_load_json(dir, "manifest.json");
    if (!s->dir || !s->tree) {
        *err = str_dup("out of memory");
        return -1;
    }
    const char *fmt = json_object_get_string(json_object_object_get(s->manifest, "format"));
    if (!fmt || strcmp(fmt, SNAPSHOT_FORMAT_NAME) != 0) {
        *err = str_dup("not a gpucheckup snapshot: no manifest.json naming the format");
        return -1;
    }
    int ver = json_object_get_int(json_object_object_get(s->manifest, "format_version"));
    if (ver < 1 || ver > SNAPSHOT_FORMAT_VERSION) {
        *err = str_printf("snapshot format version %d: this gpucheckup reads version 1 to %d", ver,
                          SNAPSHOT_FORMAT_VERSION);
        return -1;
    }
    s->report = snap_load_json(dir, "report.json");
    if (!s->report) {
        *err = str_dup("the snapshot has no readable report.json");
        return -1;
    }
    struct stat st;
    if (lstat(s->tree, &st) < 0 || !S_ISDIR(st.st_mode)) {
        *err = str_dup("the snapshot has no tree/ directory");
        return -1;
    }
    char *dump = str_printf("%s/cpuid.dump", dir);
    if (dump && lstat(dump, &st) == 0 && S_ISREG(st.st_mode))
        s->cpuid_dump = dump;
    else
        free(dump);
    return 0;
}

static int snap_fail(struct snapshot *s, const char *path, char *why, char **err)
{
    *err = str_printf("--root %.*s: %s", PATH_MAX, path, why ? why : "out of memory");
    free(why);
    snapshot_close(s);
    return -1;
}

int snapshot_open(const char *path, struct snapshot *s, char **err)
{
    memset(s, 0, sizeof(*s));
    *err = NULL;
    struct stat st;
    if (stat(path, &st) < 0)
        return 0; /* hostfs_open says why */
    char *why = NULL;
    if (S_ISDIR(st.st_mode)) {
        char *top = str_printf("%s/" SNAPSHOT_TOP, path);
        char *m1 = str_printf("%s/manifest.json", path);
        const char *dir = NULL;
        struct stat ms;
        if (m1 && lstat(m1, &ms) == 0)
            dir = path;
        else if (top && stat(top, &ms) == 0 && S_ISDIR(ms.st_mode))
            dir = top;
        int rc = dir ? snap_load(s, dir, &why) : 0;
        free(top);
        free(m1);
        if (rc < 0)
            return snap_fail(s, path, why, err);
        if (dir && !(s->path = strdup(path)))
            return snap_fail(s, path, NULL, err);
        return dir ? 1 : 0;
    }
    if (!S_ISREG(st.st_mode))
        return snap_fail(s, path, str_dup("neither a directory nor a snapshot file"), err);
    const char *lerr = NULL;
    if (lazyarchive_load(&lerr) < 0) {
        snap_fail(s, path, str_dup(lerr), err);
        return -2;
    }
    const char *tmp = getenv("TMPDIR");
    char *tmpl = str_printf("%s/gpucheckup-snapshot-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!tmpl || !mkdtemp(tmpl)) {
        why = str_printf("cannot make a temporary directory: %s", strerror(errno));
        free(tmpl);
        return snap_fail(s, path, why, err);
    }
    /* the real path: the extraction refuses symbolic links on the way */
    s->tmpdir = realpath(tmpl, NULL);
    if (!s->tmpdir) {
        rmdir(tmpl);
        free(tmpl);
        return snap_fail(s, path, str_dup("cannot resolve the temporary directory"), err);
    }
    free(tmpl);
    if (snap_unpack(path, s->tmpdir, &why) < 0)
        return snap_fail(s, path, why, err);
    char *dir = str_printf("%s/" SNAPSHOT_TOP, s->tmpdir);
    int rc = dir ? snap_load(s, dir, &why) : -1;
    free(dir);
    if (rc < 0)
        return snap_fail(s, path, why, err);
    if (!(s->path = strdup(path)))
        return snap_fail(s, path, NULL, err);
    return 1;
}

void snapshot_close(struct snapshot *s)
{
    json_object_put(s->report);
    json_object_put(s->manifest);
    if (s->tmpdir)
        snap_rmtree(s->tmpdir);
    free(s->tmpdir);
    free(s->path);
    free(s->dir);
    free(s->tree);
    free(s->cpuid_dump);
    memset(s, 0, sizeof(*s));
}

json_object *snapshot_captured_section(const struct snapshot *s, const char *name)
{
    json_object *sec = json_object_object_get(s->report, name);
    return json_object_is_type(sec, json_type_object) ? sec : NULL;
}

struct snap_owner {
    const char *id;
    const char *owner;
};

static void snap_find_owner(const struct check *c, const char *owner, void *arg)
{
    struct snap_owner *o = arg;
    if (!o->owner && strcmp(c->id, o->id) == 0)
        o->owner = owner;
}

static void snap_add_finding(struct report *r, json_object *jf)
{
    const char *id = jsonget_str(jf, "id");
    struct report_finding *f = report_add_finding(r, id, jsonget_str(jf, "subject"), "%s",
                                                  jsonget_str(jf, "message") ? jsonget_str(jf, "message") : "");
    if (!f)
        return;
    f->captured = true;
    const char *sev = jsonget_str(jf, "severity");
    for (int i = REPORT_SEV_INFO; sev && i <= REPORT_SEV_ERROR; i++)
        if (strcmp(sev, report_severity_name((enum report_severity)i)) == 0)
            f->severity = (enum report_severity)i;
    const char *hint = jsonget_str(jf, "hint");
    if (hint)
        report_finding_set_hint(f, "%s", hint);
    else {
        free(f->hint);
        f->hint = NULL;
    }
    json_object *ev = json_object_object_get(jf, "evidence");
    for (size_t i = 0; json_object_is_type(ev, json_type_array) && i < json_object_array_length(ev) && i < 256; i++) {
        json_object *e = json_object_array_get_idx(ev, i);
        if (jsonget_str(e, "source"))
            report_finding_add_evidence(f, jsonget_str(e, "source"), "%s", jsonget_str(e, "value") ? jsonget_str(e, "value") : "");
    }
    json_object *cb = json_object_object_get(jf, "caused_by");
    if (jsonget_str(cb, "id"))
        report_finding_set_cause(f, jsonget_str(cb, "id"), jsonget_str(cb, "subject"));
}

void snapshot_replay_findings(const struct snapshot *s, struct report *r, const char *owner, const char *const *ids)
{
    json_object *fa = json_object_object_get(s->report, "findings");
    for (size_t i = 0; json_object_is_type(fa, json_type_array) && i < json_object_array_length(fa); i++) {
        json_object *jf = json_object_array_get_idx(fa, i);
        struct snap_owner o = {.id = jsonget_str(jf, "id")};
        if (!o.id)
            continue;
        checks_foreach(r->catalogue, snap_find_owner, &o);
        if (!o.owner || strcmp(o.owner, owner) != 0) /* unknown IDs (a newer gpucheckup) are not guessed at */
            continue;
        bool wanted = !ids;
        for (size_t k = 0; ids && ids[k]; k++)
            wanted |= strcmp(ids[k], o.id) == 0;
        if (wanted)
            snap_add_finding(r, jf);
    }
}

static const char *const snap_marks[] = {"ok", "info", "warning", "error", "skipped"};

bool snapshot_replay_section(const struct snapshot *s, struct report *r, struct report_section *sec)
{
    json_object *cap = snapshot_captured_section(s, sec->name);
    if (!cap)
        return false;
    const char *st = jsonget_str(cap, "status");
    enum report_status status = REPORT_STATUS_SKIPPED;
    for (int i = REPORT_STATUS_OK; st && i <= REPORT_STATUS_FAILED; i++)
        if (strcmp(st, report_status_name((enum report_status)i)) == 0)
            status = (enum report_status)i;
    const char *reason = jsonget_str(cap, "reason");
    if (reason)
        report_section_set_status(sec, status, "%s", reason);
    else
        report_section_set_status(sec, status, NULL);
    json_object *sum = json_object_object_get(cap, "summary");
    for (size_t i = 0; json_object_is_type(sum, json_type_array) && i < json_object_array_length(sum); i++) {
        json_object *l = json_object_array_get_idx(sum, i);
        const char *mk = jsonget_str(l, "mark");
        enum report_mark mark = REPORT_MARK_INFO;
        for (size_t k = 0; mk && k < sizeof(snap_marks) / sizeof(snap_marks[0]); k++)
            if (strcmp(mk, snap_marks[k]) == 0)
                mark = (enum report_mark)k;
        const char *was = jsonget_str(l, "label");
        const struct probe *p = probe_find(sec->name);
        char *today = p && p->label_today ? p->label_today(was) : NULL;
        report_section_add_line(sec, mark, today ? today : was ? was : "?", "%s",
                                jsonget_str(l, "text") ? jsonget_str(l, "text") : "");
        free(today);
    }
    json_object_object_foreach(cap, key, val)
    {
        if (strcmp(key, "status") && strcmp(key, "reason") && strcmp(key, "duration_ms") && strcmp(key, "summary") &&
            strcmp(key, "captured"))
            json_object_object_add(sec->data, key, json_object_get(val));
    }
    sec->captured = true;
    snapshot_replay_findings(s, r, sec->name, NULL);
    return true;
}
