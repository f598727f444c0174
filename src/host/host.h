/* host.h: the report's host object (hostname, kernel, OS, user), and the user and group names probes print. */
#ifndef GPUCHECKUP_HOST_H
#define GPUCHECKUP_HOST_H

#include <sys/types.h>
#include <json-c/json.h>

#include "hostfs.h"
#include "probe.h"

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

#endif
