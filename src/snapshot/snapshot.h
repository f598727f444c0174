/* snapshot.h: `gpucheckup snapshot`: a run captured into a tarball, and its offline replay with --root. */
#ifndef GPUCHECKUP_SNAPSHOT_H
#define GPUCHECKUP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "hostfs.h"
#include "report.h"

#define SNAPSHOT_FORMAT_NAME "gpucheckup-snapshot"
#define SNAPSHOT_FORMAT_VERSION 1
/* The tarball's top directory. */
#define SNAPSHOT_TOP "gpucheckup-snapshot"
/* Capture: a host file larger than this is stored as an empty placeholder (driver libraries, BARs). */
#define SNAPSHOT_FILE_CAP (128 * 1024)
/* ...but the kernel log (/dev/kmsg, a character device): its records since boot are kept, up to this. */
#define SNAPSHOT_KMSG_CAP (4u * 1024 * 1024)
/* ...of which the first bytes are kept: an ELF header (the library search reads it). */
#define SNAPSHOT_HEAD 64
/* Replay: limits on what an untrusted tarball may unpack to. */
#define SNAPSHOT_MEMBER_MAX (16u * 1024 * 1024)
#define SNAPSHOT_TOTAL_MAX (256u * 1024 * 1024)
#define SNAPSHOT_MEMBERS_MAX 100000u
/* Paths the capture follows (the trace, symlink targets, PCI device attributes), at most. */
#define SNAPSHOT_PATHS_MAX 50000u

/* A snapshot opened for replay. */
struct snapshot {
    char *path;           /* as given to --root */
    char *tmpdir;         /* private directory it was unpacked into (removed by snapshot_close), or NULL */
    char *dir;            /* the snapshot's directory (holds manifest.json) */
    char *tree;           /* DIR/tree: what --root reads */
    char *cpuid_dump;     /* DIR/cpuid.dump, or NULL when the snapshot has none */
    json_object *report;  /* the captured report document (report.json) */
    json_object *manifest;
};

/* Open PATH given to --root: a snapshot tarball (unpacked safely into a private temporary directory),
 * or a directory holding an unpacked snapshot (manifest.json, or gpucheckup-snapshot/manifest.json).
 * Returns 1 with S filled (close with snapshot_close), 0 when PATH is a plain directory (a captured
 * tree, not a snapshot: S is left empty), or -1 with a message naming PATH and the problem in *ERR
 * (caller frees); -2 likewise when PATH is a file and libarchive cannot be loaded (lazyarchive.h):
 * gpucheckup could not do it, PATH may be fine. */
int snapshot_open(const char *path, struct snapshot *s, char **err);
/* Free S and remove its temporary directory. */
void snapshot_close(struct snapshot *s);

/* What a finished `snapshot` run hands to the writer. */
struct snapshot_input {
    const struct hostfs *fs;      /* the tree the run read (trace must be off) */
    const char *trace;            /* the GPUCHECKUP_FS_TRACE list of the run: paths, one a line */
    size_t trace_len;
    const char *cpuid_dump;       /* the file --save-cpuid wrote, or NULL */
    json_object *report;          /* the run's JSON document */
    bool redact;
};

/* Write the snapshot tarball to OUT atomically. Returns 0, or -1 with a message in *ERR (caller frees),
 * the words of lazyarchive_load when libarchive cannot be loaded. */
int snapshot_write(const char *out, const struct snapshot_input *in, char **err);

/* Replay: fill SEC (probe NAME, which needs the live machine) from the captured report, marked as
 * captured, and add the captured findings that probe owns. Returns true when the snapshot holds it. */
bool snapshot_replay_section(const struct snapshot *s, struct report *r, struct report_section *sec);
/* Replay: add the captured findings of the probe OWNER whose ID is in IDS (NULL-terminated), marked
 * as captured. */
void snapshot_replay_findings(const struct snapshot *s, struct report *r, const char *owner,
                              const char *const *ids);
/* The captured section of probe NAME's facts (borrowed), or NULL. */
json_object *snapshot_captured_section(const struct snapshot *s, const char *name);

/* Redaction (snapshot_redact.c). A redactor learns secrets, then replaces them in text with stable
 * placeholders: the same secret always becomes the same placeholder. */
struct redactor;
struct redactor *redact_new(void);
void redact_free(struct redactor *rd);
/* KIND: "host", "user", "serial", "mac". Values too short or generic to replace safely are ignored. */
void redact_learn(struct redactor *rd, const char *kind, const char *value);
/* Learn what TEXT of host file PATH holds: hostname files, /etc/group members, DMI serials,
 * /home/NAME paths, MAC addresses. */
void redact_learn_file(struct redactor *rd, const char *path, const char *text, size_t len);
/* Learn serials and UUIDs from a report document (keys naming a serial or UUID) and its host.user. */
void redact_learn_report(struct redactor *rd, json_object *doc);
/* TEXT (LEN bytes) with every learnt secret and every MAC address replaced: a new heap buffer of
 * *OUT_LEN bytes (NUL-terminated), or NULL when out of memory. */
char *redact_text(struct redactor *rd, const char *text, size_t len, size_t *out_len);
/* Redact binary data BUF in place, keeping its length (offsets inside it stay valid): each secret
 * becomes its placeholder cut or padded with 'x' to the secret's length. */
void redact_binary(struct redactor *rd, char *buf, size_t len);
/* Zero the Device Serial Number capability in a PCI configuration space image, in place. */
void redact_pci_config(unsigned char *cfg, size_t len);
/* {"host": n, "user": n, ...}: how many distinct secrets of each kind were replaced (new ref). */
json_object *redact_summary(const struct redactor *rd);

#endif
