/* run.h: one diagnosis: pick the probes for the command, run them in order, correlate, decide. */
#ifndef GPUCHECKUP_RUN_H
#define GPUCHECKUP_RUN_H

#include <sys/types.h>

#include "cli.h"
#include "hostfs.h"
#include "probe.h"
#include "report.h"

/* Exit codes, as documented in --help, the man page and the README. */
enum {
    GC_EXIT_READY = 0,
    GC_EXIT_NOT_READY = 1,
    GC_EXIT_USAGE = 2,
    GC_EXIT_INTERNAL = 3,
};

/* Run the diagnosis asked for by O against FS, in MODE (probe_mode_of(O, FS): every probe's). On GC_EXIT_READY or GC_EXIT_NOT_READY, *OUT is the
 * report (caller frees with report_free). On GC_EXIT_USAGE or GC_EXIT_INTERNAL, *OUT is NULL and
 * *ERROR holds a message (caller frees). */
int run_diagnosis(const struct cli_options *o, const struct hostfs *fs, enum probe_mode mode, struct report **out,
                  char **error);

/* True once a run's watchdog has left a probe's thread behind, blocked in a read that never returned (the
 * report says which): the report, FS, the options and the snapshot it may still read must then not be
 * freed; the process ends soon after (main). */
bool run_left_threads(void);

/* True if probe NAME runs for command COMMAND (itself, "check", or as a dependency); an explicit_only
 * probe (bench) runs for its own command only. */
bool run_selects(const char *command, const char *name);

/* PRETTY_NAME (or NAME) from an os-release file's TEXT, unquoted and sanitised; heap string
 * (caller frees) or NULL when neither is there. */
char *host_os_release(const char *text);

/* The name of user UID / group GID from the system's user database, as a heap string (caller frees), or
 * NULL when it has none. Reentrant (getpwuid_r, getgrgid_r): probes call them from parallel threads, and
 * getpwuid's static buffer lock would be inherited held by a child forked meanwhile. */
char *host_user_name(uid_t uid);
char *host_group_name(gid_t gid);

/* Fill R->host from FS in MODE: hostname, kernel, OS release, architecture, user, root, live. */
void host_collect(const struct hostfs *fs, enum probe_mode mode, json_object *host);

/* The verdict step after every probe: correlation, --require, verdict text (src/report/doctor.c).
 * Returns 0, or GC_EXIT_USAGE with *ERROR set for an unknown requirement name. */
int doctor_run(const struct cli_options *o, struct report *r, char **error);

#endif
