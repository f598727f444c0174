/* health_journal.c: the current boot's kernel messages from the systemd journal (sd-journal), where /dev/kmsg is not readable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health_internal.h"
#include "lazysystemd.h"
#include "strutil.h"

/* Issue 40: with kernel.dmesg_restrict=1 only root reads /dev/kmsg, but journald keeps the same records
 * (transport "kernel") readable by the adm and systemd-journal groups. libsystemd's sd-journal reads them
 * (its file format, rotation and access rules are its own business, not ours to parse), dlopen()ed here
 * only (lazysystemd.h), on the probe's own thread: it starts no thread. */

/* Field NAME's value of the current entry (not NUL-terminated): 0, *VAL and *LEN, or -1. */
static int health_journal_field(sd_journal *j, const char *name, const char **val, size_t *len)
{
    const void *d = NULL;
    size_t n = 0, k = strlen(name);
    if (lazysystemd.sd_journal_get_data(j, name, &d, &n) < 0 || n <= k || ((const char *)d)[k] != '=')
        return -1;
    *val = (const char *)d + k + 1;
    *len = n - k - 1;
    return 0;
}

/* The entry's record: MESSAGE, the time since boot and the PCI device (_KERNEL_DEVICE "+pci:ADDR", or
 * _UDEV_SYSNAME with _KERNEL_SUBSYSTEM=pci). DEV is the buffer for the latter. 0, or -1 (no message). */
static int health_journal_entry(sd_journal *j, struct health_record *rec, char *dev, size_t dev_size)
{
    const char *v;
    size_t n;
    memset(rec, 0, sizeof(*rec));
    if (health_journal_field(j, "MESSAGE", &rec->msg, &rec->msg_len) < 0)
        return -1;
    sd_id128_t boot;
    uint64_t usec = 0;
    if (lazysystemd.sd_journal_get_monotonic_usec(j, &usec, &boot) == 0)
        rec->usec = usec;
    if (health_journal_field(j, "PRIORITY", &v, &n) == 0 && n >= 1 && v[0] >= '0' && v[0] <= '7')
        rec->level = (unsigned)(v[0] - '0');
    /* MESSAGE is valid until the next sd_journal_get_data: copy the device first into DEV. */
    if (health_journal_field(j, "_KERNEL_DEVICE", &v, &n) == 0 && n < dev_size) {
        memcpy(dev, v, n);
        dev[n] = '\0';
    } else if (health_journal_field(j, "_UDEV_SYSNAME", &v, &n) == 0 && n + 5 < dev_size) {
        snprintf(dev, dev_size, "+pci:%.*s", (int)n, v);
    } else {
        dev[0] = '\0';
    }
    if (dev[0]) {
        rec->device = dev;
        rec->device_len = strlen(dev);
    }
    /* get_data may reuse its buffer: fetch MESSAGE again last. */
    return health_journal_field(j, "MESSAGE", &rec->msg, &rec->msg_len);
}

int health_journal_read(struct health_log *log, void (*fn)(const struct health_record *rec, void *arg), char **why)
{
    const char *err = NULL;
    if (lazysystemd_load(&err) < 0) {
        *why = str_dup(err ? err : "libsystemd could not be loaded");
        return -1;
    }
    sd_id128_t boot;
    int rc = lazysystemd.sd_id128_get_boot(&boot);
    if (rc < 0) {
        *why = str_printf("the journal: the boot ID is unknown (%s)", strerror(-rc));
        return -1;
    }
    sd_journal *j = NULL;
    const char *dir = getenv("GPUCHECKUP_JOURNAL_DIR"); /* tests only (HACKING.md) */
    rc = dir && *dir ? lazysystemd.sd_journal_open_directory(&j, dir, 0)
                     : lazysystemd.sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM);
    if (rc < 0) {
        *why = str_printf("the journal: %s", strerror(-rc));
        return -1;
    }
    char match[64];
    char id[SD_ID128_STRING_MAX];
    snprintf(match, sizeof(match), "_BOOT_ID=%s", lazysystemd.sd_id128_to_string(boot, id));
    (void)lazysystemd.sd_journal_set_data_threshold(j, 4096);
    if (lazysystemd.sd_journal_add_match(j, "_TRANSPORT=kernel", 0) < 0 || lazysystemd.sd_journal_add_match(j, match, 0) < 0) {
        lazysystemd.sd_journal_close(j);
        *why = str_dup("the journal: a match could not be added");
        return -1;
    }
    size_t records = 0;
    bool capped = false;
    char dev[64];
    struct health_record rec;
    while ((rc = lazysystemd.sd_journal_next(j)) > 0) {
        if (records >= HEALTH_KMSG_MAX_RECORDS) {
            capped = true;
            break;
        }
        if (health_journal_entry(j, &rec, dev, sizeof(dev)) < 0)
            continue;
        rec.seq = records;
        fn(&rec, log);
        records++;
    }
    lazysystemd.sd_journal_close(j);
    if (records == 0) {
        /* A journal the user may not read looks empty: no entry is no evidence. */
        *why = rc < 0 ? str_printf("the journal: %s", strerror(-rc))
                      : str_dup("the journal holds no kernel message of this boot that this user may read "
                                "(reading it needs the adm or systemd-journal group)");
        return -1;
    }
    log->records = records;
    log->capped = capped;
    return 0;
}
