/* result_process.h: the process probe's typed facts: the unit, user and process judged, and what they cannot do. */
#ifndef GPUCHECKUP_RESULT_PROCESS_H
#define GPUCHECKUP_RESULT_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"
#include "typed.h"

/* As result_pci and result_opencl: the facts others may read, typed, beside the JSON the probe builds as
 * data (no to_json: the JSON printed is the data, byte for byte); the probe's own section and a captured
 * one are read by one lenient parser that takes nothing out of it. Counts are -1 when not known. */

/* data.unit */
struct result_process_unit {
    char *name;               /* "ollama.service" */
    bool found;               /* a unit file was read (file is not null) */
    bool masked;
    bool from_manager;        /* source is "manager" (systemd's D-Bus view), else its files */
    enum gc_tri private_devices;
    char *user;               /* User=, NULL: unset */
    long main_pid;            /* > 0 when it runs, 0 not running or unknown */
    int nodes, denied;        /* its user against the GPU nodes (access.nodes): how many, how many it cannot open */
};

/* data.user */
struct result_process_user {
    char *name;
    long uid;                 /* -1: no such user */
    bool from_nss;            /* source is "nss" (the system's databases), else the files */
    int nodes, denied;
};

/* data.pid */
struct result_process_pid {
    long pid;
    char *name;               /* its comm, NULL: unknown */
    long uid;                 /* -1: unknown (status not read) */
    enum gc_tri other_mount_namespace;
    char **libraries;         /* the GPU libraries it mapped (paths) */
    size_t n_libraries;
    char **open_nodes;        /* the GPU device nodes it holds open */
    size_t n_open_nodes;
    int nodes, denied;        /* its credentials against the GPU nodes (access.nodes) */
    int not_readable;         /* parts of /proc/PID not read */
    int cgroup_denied;        /* v1: GPU nodes its devices.list does not let it read and write; -1 not read */
    int device_programs;      /* v2: device programs acting on its cgroup; -1 not asked */
};

struct result_process {
    struct result_process_unit *unit; /* NULL: no --unit */
    struct result_process_user *user; /* NULL: no --user */
    struct result_process_pid *pid;   /* NULL: no process judged (neither --pid nor a running --unit) */
};

extern const struct report_result_ops result_process_ops;

/* The facts of the process section's DATA, or NULL on allocation failure. DATA is left as it is. */
struct result_process *result_process_read(json_object *data);
/* The process facts of R when the process section ran ok, else NULL. */
const struct result_process *result_process_get(const struct report *r);

#endif
