/* run.h: one diagnosis: pick the probes for the command, run them in order, correlate, decide. */
#ifndef GPUCHECKUP_RUN_H
#define GPUCHECKUP_RUN_H

#include "cli.h"
#include "hostfs.h"
#include "probe.h"
#include "report.h"

/* Run the diagnosis asked for by O against FS, in MODE (probe_mode_of(O, FS): every probe's). On GC_EXIT_READY or GC_EXIT_NOT_READY, *OUT is the
 * report (caller frees with report_free). On GC_EXIT_USAGE or GC_EXIT_INTERNAL, *OUT is NULL and
 * *ERROR holds a message (caller frees). */
int run_diagnosis(const struct cli_options *o, const struct hostfs *fs, enum probe_mode mode, struct report **out,
                  char **error);

/* True once a run's watchdog has left a probe's thread behind, blocked in a read that never returned (the
 * report says which): the report, FS, the options and the snapshot it may still read must then not be
 * freed; the process ends soon after (main). */
bool run_left_threads(void);

#endif
