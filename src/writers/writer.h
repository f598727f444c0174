/* writer.h: the writers (text for people, JSON and the consumers' formats for machines); all only walk the report. */
#ifndef GPUCHECKUP_WRITER_H
#define GPUCHECKUP_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

#include "options.h"
#include "report.h"

#define GC_SCHEMA_VERSION 1

/* The whole JSON document for R (new reference; caller puts it). EXIT_CODE goes into the verdict. */
json_object *write_json_document(const struct report *r, const struct cli_options *o, int exit_code);
/* The JSON document for a run that could not produce a report: KIND is "usage", "input" or
 * "internal"; MESSAGE says what is wrong. */
json_object *write_json_error(const char *kind, const char *message, int exit_code);
/* Serialise DOC (pretty unless COMPACT) into F, with a final newline. 0 or -1. */
int write_json_to(FILE *f, json_object *doc, bool compact);

/* The text report for people. COLOR: use ANSI colours. */
void write_text(FILE *f, const struct report *r, const struct cli_options *o, int exit_code, bool color);

/* What the writers for other consumers know about the run besides the report. */
struct writer_run {
    int exit_code;     /* the exit status gpucheckup returns */
    double started_s;  /* when the run began, seconds since the Unix epoch */
    double duration_s; /* how long the run took, in seconds */
};

/* The consumers' formats (--format=junit|prometheus|nfd|github). Each writes its whole document to
 * F and returns 0, or -1 when memory ran out or F failed. None changes the exit status. */
/* JUnit XML (write_junit.c): one testsuite per probe, one testcase per check. libxml2 is loaded on
 * the first call (lazyxml.h); -1 when it cannot be (load it first, lazyxml_load, to say why). */
int write_junit(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run);
/* Prometheus text exposition format for node_exporter's textfile collector (write_prometheus.c). */
int write_prometheus(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run);
/* Kubernetes Node Feature Discovery features.d file: label=value lines (write_nfd.c). */
int write_nfd(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run);
/* GitHub Actions workflow commands, one per finding (write_github.c). */
int write_github(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run);

/* The node health contract (--health, write_health.c): exit 0 ready, 1 not ready, 2 unknown (gpucheckup
 * could not decide), and one line of at most WRITER_HEALTH_MAX printable ASCII bytes naming the status
 * word, the root cause's finding ID and its subject. */
enum { WRITER_HEALTH_READY = 0, WRITER_HEALTH_NOT_READY = 1, WRITER_HEALTH_UNKNOWN = 2 };
#define WRITER_HEALTH_MAX 80
/* The health exit code of a run that returned EXIT_CODE with report R (NULL when it produced none). */
int writer_health_exit(const struct report *r, int exit_code);
/* The line for HEALTH (writer_health_exit's) into BUF of LEN bytes (no newline; cut to fit). Without a
 * report (R NULL), KIND ("usage", "input", "internal") and MESSAGE say why. */
void writer_health_line(char *buf, size_t len, const struct report *r, int health, const char *kind,
                        const char *message);

/* Write LEN bytes of BUF to PATH atomically (temp file in the same directory, fsync, rename), or to
 * stdout when PATH is NULL. Returns 0, or -1 with a message in *ERR (caller frees). A PATH that is
 * a device, FIFO or socket (/dev/stdout, /dev/null) is written in place; a symlink to a regular file
 * has its target replaced (see output_target). */
int output_emit(const char *path, const char *buf, size_t len, char **err);

/* How output_emit writes PATH. Returns 1 and sets *TARGET (heap, caller frees) to the regular file
 * it replaces: PATH itself, or where PATH's symlinks lead; 0 when PATH exists and is neither a
 * regular file nor a directory (written in place: renaming over /dev/stdout would replace the
 * link, not write to it); -1 with errno set when PATH is a symlink that cannot be followed (ELOOP,
 * ENOENT for one that leads nowhere) or memory runs out. */
int output_target(const char *path, char **target);

#endif
