/* health_internal.h: the health probe's private interface: the kernel log's records, the events read from them, PCIe AER counters. */
#ifndef GPUCHECKUP_HEALTH_INTERNAL_H
#define GPUCHECKUP_HEALTH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "probe.h"

/* ---- /dev/kmsg records (health_kmsg.c) ---- */

/* What is read of the kernel log at most: a ring buffer is 128 KiB to a few MiB (CONFIG_LOG_BUF_SHIFT,
 * log_buf_len=); more than this is not a kernel log, and the cap is said in the report. */
#define HEALTH_KMSG_MAX_BYTES (4u * 1024 * 1024)
#define HEALTH_KMSG_MAX_RECORDS 100000u

/* One record as /dev/kmsg prints it (the kernel's Documentation/ABI/testing/dev-kmsg):
 * "PRIO,SEQ,USEC,FLAGS[,...];MESSAGE\n" then " KEY=VALUE\n" continuation lines (SUBSYSTEM=, DEVICE=).
 * Pointers are into the parsed buffer, not NUL-terminated. */
struct health_record {
    unsigned level;           /* syslog level, 0 (emerg) to 7 (debug): PRIO & 7 */
    uint64_t seq;
    uint64_t usec;            /* microseconds since boot */
    const char *msg;
    size_t msg_len;
    const char *device;       /* DEVICE= value ("+pci:0000:00:06.0"), or NULL */
    size_t device_len;
};

struct health_kmsg_stats {
    size_t records;   /* records handed to the callback */
    size_t skipped;   /* lines that are neither a record nor a continuation */
    bool capped;      /* stopped at MAX records */
};

/* Walk BUF (LEN bytes, any content): call FN(REC, ARG) for each record, at most MAX of them, in order.
 * Fills *ST. Never reads past LEN. */
void health_kmsg_parse(const char *buf, size_t len, size_t max, void (*fn)(const struct health_record *rec, void *arg),
                       void *arg, struct health_kmsg_stats *st);

/* ---- events (health_events.c) ---- */

enum health_kind {
    HEALTH_K_NONE = 0,
    HEALTH_K_XID,          /* NVRM: Xid (PCI:...): N, ... */
    HEALTH_K_OFF_BUS,      /* NVRM: GPU ...: GPU has fallen off the bus. (outside an Xid line) */
    HEALTH_K_INIT_FAILED,  /* NVRM: ... RmInitAdapter failed! */
    HEALTH_K_API_MISMATCH, /* NVRM: API mismatch: the client has the version ... */
    HEALTH_K_HANG,         /* amdgpu ring timeout, i915/xe GPU HANG */
    HEALTH_K_RESET,        /* amdgpu GPU reset, i915/xe Resetting chip */
    HEALTH_K_FIRMWARE,     /* a GPU firmware file not loaded, GuC/HuC load failed */
    HEALTH_K_KFD,          /* amdgpu: ... not supported in kfd */
    HEALTH_K_AER_FATAL,    /* PCIe AER: uncorrectable (fatal) */
    HEALTH_K_AER_NONFATAL, /* PCIe AER: uncorrectable (non-fatal) */
    HEALTH_K_AER_CORRECTED,
    HEALTH_K_LOADED,       /* a GPU driver (re)loaded: its events before this belong to an earlier instance */
};

/* The driver family an event is of, for "since the driver loaded". */
enum health_family { HEALTH_F_NONE = 0, HEALTH_F_NVIDIA, HEALTH_F_AMDGPU, HEALTH_F_I915, HEALTH_F_XE, HEALTH_F_N };

/* Who an Xid usually points at (NVIDIA's Xid catalogue: see health_xid_table in health_events.c). */
enum health_blame { HEALTH_B_UNKNOWN = 0, HEALTH_B_APP, HEALTH_B_DRIVER, HEALTH_B_GPU, HEALTH_B_SYSTEM };

struct health_xid {
    int xid;
    enum health_blame blame;
    const char *meaning; /* our own short words */
    const char *action;
    bool repeat_only;    /* the GPU itself recovered (a remapped row, a contained error): an error only when it
                            repeats, a warning once however recent */
};

struct health_match {
    enum health_kind kind;
    enum health_family family;
    int xid;             /* HEALTH_K_XID: the number */
    char addr[16];       /* the PCI address it names ("0000:65:00.0"), "" when none */
    bool addr_no_func;   /* the Xid form "PCI:0000:65:00": domain, bus and device only (addr ends ".0") */
};

/* Classify one record's message (MSG, LEN bytes) with its DEVICE= value (may be NULL): 0 and *M filled
 * when it is an event of ours, -1 otherwise. */
int health_classify(const char *msg, size_t len, const char *device, size_t device_len, struct health_match *m);
/* The catalogue row of Xid N, or NULL when gpucheckup's table does not list it. */
const struct health_xid *health_xid_find(int xid);
const char *health_kind_name(enum health_kind k);
const char *health_blame_name(enum health_blame b);
const char *health_family_name(enum health_family f);

/* ---- the run (health.c, health_log.c, health_aer.c) ---- */

/* One event kind on one device, counted over the log. */
struct health_event {
    struct health_match m;
    size_t count;
    uint64_t first_usec, last_usec;
    char sample[240];    /* the first message, sanitised and cut */
};

#define HEALTH_MAX_EVENTS 256
#define HEALTH_MAX_GPUS 64
#define HEALTH_MAX_BRIDGES 8

struct health_gpu {
    char addr[16];
    char name[96];
    char vendor[8];      /* "10de" ... from the pci section */
    char bridges[HEALTH_MAX_BRIDGES][16]; /* the bridges above it, nearest first */
    size_t n_bridges;
    json_object *link;   /* the pci section's link object (borrowed), or NULL */
};

struct health_log {
    const char *source;  /* "kmsg", "journal", "tree" or "none" */
    char *reason;        /* why none (heap), or NULL */
    size_t records, bytes, skipped, lost;
    bool capped;
    bool have_now;
    uint64_t now_usec;   /* seconds since boot now (/proc/uptime), else the last record's time */
    uint64_t loaded_usec[HEALTH_F_N]; /* each driver's last load, 0 when not seen */
    struct health_event events[HEALTH_MAX_EVENTS];
    size_t n_events;
    size_t events_dropped;
};

/* Read the current boot's kernel messages from the systemd journal, calling FN(record, LOG) for each
 * (at most HEALTH_KMSG_MAX_RECORDS); sets LOG's records and capped. 0, or -1 with *WHY (heap). */
int health_journal_read(struct health_log *log, void (*fn)(const struct health_record *rec, void *arg), char **why);
/* Read and count the kernel log into LOG (zeroed by the caller). */
void health_log_read(struct probe_ctx *ctx, struct health_log *log);
/* The kernel log's part of the section: its JSON, findings and summary line. */
void health_log_report(struct probe_ctx *ctx, struct report_section *sec, const struct health_log *log,
                       const struct health_gpu *gpus, size_t n_gpus, json_object *gpus_json);
/* The PCIe AER counters of each GPU and the bridges above it: JSON into each GPU's object of GPUS_JSON,
 * findings (non-fatal ones dated by LOG) and a summary line. */
void health_aer_report(struct probe_ctx *ctx, struct report_section *sec, const struct health_log *log,
                       const struct health_gpu *gpus, size_t n_gpus, json_object *gpus_json);
/* Non-fatal AER errors of device ADDR in LOG: 1 when hot (recent or repeated), 0 when the log has them and
 * none is hot, or was read whole and has none (older than its oldest record), -1 when it cannot tell (no log,
 * or one read in part). */
int health_log_nonfatal_hot(const struct health_log *log, const char *addr);

/* The temperature of each GPU with a hwmon in sysfs (amdgpu, i915, xe), against its temp1_crit: JSON
 * "temperature" in each GPU's object, health.gpu-hot, a summary line (health_hwmon.c). */
void health_hwmon_report(struct probe_ctx *ctx, struct report_section *sec, const struct health_gpu *gpus,
                         size_t n_gpus, json_object *gpus_json);
extern const struct check health_hwmon_checks[];
extern const size_t health_hwmon_n_checks;

/* The processes that hold a GPU device node open (/proc/PID/fd, bounded), with DRM fdinfo's memory: JSON
 * "holders", health.gpu-held or health.gpu-memory-held-most per GPU (health_holders.c). Skipped (holders.skipped
 * and a note) where N_GPUS is 0 and no GPU device node exists: nothing to hold. */
void health_holders_report(struct probe_ctx *ctx, struct report_section *sec, size_t n_gpus);
extern const struct check health_holders_checks[];
extern const size_t health_holders_n_checks;

/* The counters of the section for Prometheus: data "metrics" (Xid events, PCIe AER errors) from its "gpus"
 * (health_metrics.c). */
void health_metrics_report(struct report_section *sec);

/* N with thousands separators ("1,234") into BUF. */
void health_thousands(char *buf, size_t size, size_t n);
/* The array member KEY of object O, made empty first when missing. Borrowed. */
json_object *health_array_member(json_object *o, const char *key);

extern const struct check health_checks[];
extern const size_t health_n_checks;

#endif
