/* health_kmsg.c: the /dev/kmsg record parser (the kernel's Documentation/ABI/testing/dev-kmsg format). */
#include <string.h>

#include "health_internal.h"

/* An unsigned decimal at *P (before END), at most 19 digits; advances *P. 0 and *OUT, or -1. */
static int health_kmsg_num(const char **p, const char *end, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    size_t n = 0;
    while (s < end && *s >= '0' && *s <= '9' && n < 19) {
        v = v * 10 + (uint64_t)(*s - '0');
        s++;
        n++;
    }
    if (n == 0 || (s < end && *s >= '0' && *s <= '9'))
        return -1;
    *p = s;
    *out = v;
    return 0;
}

/* The header of a record line [LINE, END): "PRIO,SEQ,USEC,FLAGS[,MORE];" Fills REC's numbers and message. */
static int health_kmsg_header(const char *line, const char *end, struct health_record *rec)
{
    const char *p = line;
    uint64_t prio, seq, usec;
    if (health_kmsg_num(&p, end, &prio) < 0 || p >= end || *p++ != ',' || health_kmsg_num(&p, end, &seq) < 0 ||
        p >= end || *p++ != ',' || health_kmsg_num(&p, end, &usec) < 0 || p >= end || *p != ',')
        return -1;
    const char *semi = memchr(p, ';', (size_t)(end - p));
    if (!semi)
        return -1;
    memset(rec, 0, sizeof(*rec));
    rec->level = (unsigned)(prio & 7u);
    rec->seq = seq;
    rec->usec = usec;
    rec->msg = semi + 1;
    rec->msg_len = (size_t)(end - rec->msg);
    return 0;
}

void health_kmsg_parse(const char *buf, size_t len, size_t max, void (*fn)(const struct health_record *rec, void *arg),
                       void *arg, struct health_kmsg_stats *st)
{
    memset(st, 0, sizeof(*st));
    const char *p = buf, *end = buf + len;
    struct health_record rec;
    bool open = false; /* REC holds a record whose continuation lines may follow */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (*p == ' ' && open) {
            const char *k = p + 1;
            if ((size_t)(le - k) > 7 && memcmp(k, "DEVICE=", 7) == 0) {
                rec.device = k + 7;
                rec.device_len = (size_t)(le - rec.device);
            }
        } else {
            if (open) {
                fn(&rec, arg);
                st->records++;
                open = false;
            }
            if (st->records >= max) {
                st->capped = true;
                return;
            }
            if (health_kmsg_header(p, le, &rec) == 0)
                open = true;
            else if (le > p)
                st->skipped++;
        }
        p = nl ? nl + 1 : end;
    }
    if (open && st->records < max) {
        fn(&rec, arg);
        st->records++;
    }
}
