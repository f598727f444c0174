/* health_log.c: the kernel log since boot read once (/dev/kmsg live, else the journal; the tree's dev/kmsg file), its GPU events counted, timed and judged. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "health_internal.h"
#include "strutil.h"

/* ---- reading and counting ---- */

/* Count M at record REC's time: one entry per (kind, Xid, device, driver). AER lines of one error (the
 * port's "error message received from" and the device's "PCIe Bus Error") fall within a second of each
 * other: an AER event within a second of the last of its kind on the device is the same one. */
static void health_log_count(struct health_log *log, const struct health_match *m, const struct health_record *rec)
{
    bool aer = m->kind == HEALTH_K_AER_FATAL || m->kind == HEALTH_K_AER_NONFATAL || m->kind == HEALTH_K_AER_CORRECTED;
    for (size_t i = 0; i < log->n_events; i++) {
        struct health_event *e = &log->events[i];
        if (e->m.kind != m->kind || e->m.xid != m->xid || e->m.family != m->family || strcmp(e->m.addr, m->addr) != 0)
            continue;
        if (!(aer && rec->usec >= e->last_usec && rec->usec - e->last_usec < 1000000))
            e->count++;
        if (rec->usec > e->last_usec)
            e->last_usec = rec->usec;
        return;
    }
    if (log->n_events >= HEALTH_MAX_EVENTS) {
        log->events_dropped++;
        return;
    }
    struct health_event *e = &log->events[log->n_events++];
    memset(e, 0, sizeof(*e));
    e->m = *m;
    e->count = 1;
    e->first_usec = e->last_usec = rec->usec;
    size_t n = rec->msg_len < sizeof(e->sample) - 1 ? rec->msg_len : sizeof(e->sample) - 1;
    memcpy(e->sample, rec->msg, n);
    e->sample[n] = '\0';
    str_sanitize(e->sample);
}

static void health_log_record(const struct health_record *rec, void *arg)
{
    struct health_log *log = arg;
    struct health_match m;
    if (rec->usec > log->now_usec && !log->have_now)
        log->now_usec = rec->usec;
    if (health_classify(rec->msg, rec->msg_len, rec->device, rec->device_len, &m) < 0)
        return;
    if (m.kind == HEALTH_K_LOADED) {
        if (m.family > HEALTH_F_NONE && m.family < HEALTH_F_N)
            log->loaded_usec[m.family] = rec->usec;
        return;
    }
    health_log_count(log, &m, rec);
}

/* Why the live kernel log could not be read (heap). */
static char *health_log_why(struct probe_ctx *ctx, int rc)
{
    if (rc == -ENOENT)
        return str_dup("there is no /dev/kmsg");
    if (rc != -EPERM && rc != -EACCES)
        return str_printf("/dev/kmsg: %s", strerror(-rc));
    uint64_t restrict_ = 0;
    bool known = hostfs_read_u64(ctx->fs, "/proc/sys/kernel/dmesg_restrict", &restrict_) == 0;
    if (geteuid() != 0 && known && restrict_ != 0)
        return str_dup("not root and kernel.dmesg_restrict=1: reading the kernel log needs root (or CAP_SYSLOG)");
    return str_printf("/dev/kmsg: %s%s", strerror(-rc), geteuid() != 0 ? " (not root)" : "");
}

/* Now, in seconds since boot (/proc/uptime), into LOG. */
static void health_log_uptime(struct probe_ctx *ctx, struct health_log *log)
{
    char *up = NULL;
    double secs = 0;
    if (hostfs_read_file(ctx->fs, "/proc/uptime", 4096, &up, NULL) == 0) {
        char *sp = strchr(up, ' ');
        if (sp)
            *sp = '\0';
        if (str_to_double(str_trim(up), &secs) == 0 && secs >= 0 && secs < 1e10) {
            log->have_now = true;
            log->now_usec = (uint64_t)(secs * 1e6);
        }
    }
    free(up);
}

void health_log_read(struct probe_ctx *ctx, struct health_log *log)
{
    char *buf = NULL;
    size_t len = 0;
    bool live = probe_host_files(ctx);
    int rc = hostfs_read_stream(ctx->fs, "/dev/kmsg", HEALTH_KMSG_MAX_BYTES, &buf, &len, &log->capped, &log->lost);
    if (rc < 0 && live) {
        health_log_uptime(ctx, log);
        char *journal_why = NULL;
        if (health_journal_read(log, health_log_record, &journal_why) == 0) {
            log->source = "journal";
            return;
        }
        char *kmsg_why = health_log_why(ctx, rc);
        log->source = "none";
        log->reason = str_printf("%s; %s", kmsg_why, journal_why);
        free(kmsg_why);
        free(journal_why);
        return;
    }
    if (rc < 0) {
        log->source = "none";
        log->reason = live ? health_log_why(ctx, rc)
                           : rc == -ENOENT ? str_dup("the tree has no dev/kmsg")
                           : rc == -EINVAL ? str_dup("the tree's dev/kmsg is not a regular file in /dev/kmsg's record format")
                                           : str_printf("the tree's dev/kmsg: %s", strerror(-rc));
        return;
    }
    if (!live && len == 0) { /* a snapshot of a run that could not read the log keeps a placeholder */
        free(buf);
        log->source = "none";
        log->reason = str_dup("the tree's dev/kmsg is empty (a snapshot keeps an empty placeholder where it could not read the log)");
        return;
    }
    log->source = live ? "kmsg" : "tree";
    log->bytes = len;
    health_log_uptime(ctx, log);
    struct health_kmsg_stats st;
    health_kmsg_parse(buf, len, HEALTH_KMSG_MAX_RECORDS, health_log_record, log, &st);
    free(buf);
    log->records = st.records;
    log->skipped = st.skipped;
    log->capped = log->capped || st.capped;
    if (log->records == 0 && len > 0) {
        log->source = "none";
        log->reason = str_dup("the tree's dev/kmsg holds no record in /dev/kmsg's format");
    }
}
