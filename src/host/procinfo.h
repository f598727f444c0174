/* procinfo.h: who a process is, from /proc/PID through hostfs (its parent, start, user, command): the health and cuda probes' holders. */
#ifndef GPUCHECKUP_PROCINFO_H
#define GPUCHECKUP_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>

#include "hostfs.h"

/* Parents walked up looking for this process (procinfo_is_ours). */
#define PROCINFO_PPID_DEPTH 16

/* The parent PID of PID from FS's /proc/PID/stat (field 4, after the parenthesised command), or -1; *START
 * (when START is not NULL) set to field 22, the start time in clock ticks after boot. */
long procinfo_stat(const struct hostfs *fs, long pid, unsigned long long *start);
/* PID is this process or one of its descendants (up to PROCINFO_PPID_DEPTH parents), FS being this machine's. */
bool procinfo_is_ours(const struct hostfs *fs, long pid);
/* "alice" for PID's real UID (/proc/PID/status, then PASSWD: /etc/passwd's text, or NULL to read it through
 * FS); "uid 1000" when not in passwd; NULL when the process cannot be read (gone, another PID namespace).
 * Heap. */
char *procinfo_user(const struct hostfs *fs, long pid, const char *passwd);
/* PID's command, /proc/PID/comm, sanitised ("python3"), or NULL. Heap. */
char *procinfo_comm(const struct hostfs *fs, long pid);
/* When PID started, "2026-11-29 01:02 UTC" (its start time after /proc/stat's btime), into OUT (SIZE bytes),
 * or "". */
void procinfo_started(const struct hostfs *fs, long pid, char *out, size_t size);

#endif
