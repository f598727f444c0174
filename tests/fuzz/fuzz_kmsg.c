/* fuzz_kmsg.c: libFuzzer target for /dev/kmsg records and the GPU events read from their messages (probes/health/health_kmsg.c, health_events.c). */
#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "health_internal.h"

struct fuzz_kmsg {
    const uint8_t *data;
    size_t size;
    size_t records;
};

/* Is the PCI address ADDR (lowercase, "DDDD:BB:DD.F") in the input, case aside (NO_FUNC: its first 10 bytes)? */
static int fuzz_kmsg_addr_in(const struct fuzz_kmsg *k, const char *addr, int no_func)
{
    size_t n = no_func ? 10 : strlen(addr);
    for (size_t i = 0; i + n <= k->size; i++) {
        size_t j = 0;
        while (j < n && tolower(k->data[i + j]) == addr[j])
            j++;
        if (j == n)
            return 1;
    }
    return 0;
}

static void fuzz_kmsg_record(const struct health_record *rec, void *arg)
{
    struct fuzz_kmsg *k = arg;
    const char *lo = (const char *)k->data, *hi = lo + k->size;
    k->records++;
    /* the message and the DEVICE= value lie inside the input, on one line each */
    assert(rec->msg >= lo && rec->msg + rec->msg_len <= hi);
    assert(!memchr(rec->msg, '\n', rec->msg_len));
    assert(!rec->device || (rec->device >= lo && rec->device + rec->device_len <= hi && !memchr(rec->device, '\n', rec->device_len)));
    assert(rec->level <= 7);
    struct health_match m;
    if (health_classify(rec->msg, rec->msg_len, rec->device, rec->device_len, &m) < 0) {
        assert(m.kind == HEALTH_K_NONE && !m.addr[0]);
        return;
    }
    assert(m.kind > HEALTH_K_NONE && m.kind <= HEALTH_K_LOADED);
    assert(m.family >= HEALTH_F_NONE && m.family < HEALTH_F_N);
    assert(m.kind != HEALTH_K_XID || (m.xid > 0 && m.xid <= 100000));
    if (m.addr[0]) {
        /* a PCI address in its one shape, taken from the input */
        assert(strlen(m.addr) == 12 && m.addr[4] == ':' && m.addr[7] == ':' && m.addr[10] == '.');
        for (size_t i = 0; i < 12; i++)
            assert(i == 4 || i == 7 || i == 10 || isdigit((unsigned char)m.addr[i]) || (m.addr[i] >= 'a' && m.addr[i] <= 'f'));
        assert(fuzz_kmsg_addr_in(k, m.addr, m.addr_no_func));
    }
    assert(health_kind_name(m.kind) != NULL);
    const struct health_xid *x = m.kind == HEALTH_K_XID ? health_xid_find(m.xid) : NULL;
    assert(!x || (x->xid == m.xid && x->meaning && x->action));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_kmsg k = {data, size, 0};
    struct health_kmsg_stats st;
    health_kmsg_parse((const char *)data, size, 1000, fuzz_kmsg_record, &k, &st);
    /* every record handed over is counted, at most the cap, at most one per line */
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    assert(st.records == k.records && st.records <= 1000 && st.records + st.skipped <= lines);
    assert(!st.capped || st.records == 1000);
    return 0;
}
