/* writer.h: the two writers (text for people, JSON for machines); both only walk the report. */
#ifndef GPUCHECKUP_WRITER_H
#define GPUCHECKUP_WRITER_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

#include "cli.h"
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
