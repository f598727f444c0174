/* process_internal.h: the process probe's parts: a systemd unit, a user's and a process's view of the GPU. */
#ifndef GPUCHECKUP_PROCESS_INTERNAL_H
#define GPUCHECKUP_PROCESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "probe.h"

/* The options (process_options.c): NULL / -1 when not given. */
struct process_opts {
    char *unit;
    char *user;
    long pid;
};
extern struct process_opts process_opts;
/* The probe's option rows and their reset (process_options.c). */
extern const struct probe_option process_option_rows[];
void process_options_reset(void);

/* A growing list of heap strings. */
struct proc_list {
    char **v;
    size_t n;
};
void proc_list_add(struct proc_list *l, const char *s);
void proc_list_clear(struct proc_list *l);
bool proc_list_has(const struct proc_list *l, const char *s);

/* ---- process_unit.c: a systemd unit's files and the settings that matter to a GPU ---------------- */

/* What the unit's files set (settings later in the files override earlier ones, as systemd applies them). */
struct proc_unit {
    char *name;              /* "ollama.service" */
    char *fragment;          /* the unit file read, or NULL when none was found */
    bool masked;             /* the unit file is a link to /dev/null */
    struct proc_list dropins; /* the drop-ins applied, in order */
    struct proc_list env;    /* Environment= items, "KEY=value", in order */
    struct proc_list env_files; /* EnvironmentFile= values as written ("-/etc/default/x" is optional) */
    char *user, *group;      /* User=, Group= (NULL: unset, root) */
    struct proc_list supp;   /* SupplementaryGroups= */
    int dynamic_user;        /* -1 unset, 0, 1 */
    int private_devices;     /* -1 unset, 0, 1 */
    char *device_policy;     /* "auto", "closed", "strict" or NULL */
    struct proc_list device_allow; /* DeviceAllow= items: "SPECIFIER [rwm]" */
    char *exec_start;        /* the last ExecStart= */
};
/* Apply the [Service] settings of one unit file or drop-in TEXT (LEN bytes) to U. Never fails on input
 * (what it cannot parse it leaves out); -1 on allocation failure only. */
int proc_unit_parse(struct proc_unit *u, const char *text, size_t len);
/* Split an Environment= value into its items (quotes, backslash escapes) and apply them to LIST. */
void proc_unit_env_items(struct proc_list *list, const char *value);
/* Read unit NAME (".service" appended when it has no suffix) from FS in systemd's search order into U. 0, or
 * -ENOENT when no unit file exists (U->name set). */
int proc_unit_load(const struct hostfs *fs, const char *name, struct proc_unit *u);
void proc_unit_free(struct proc_unit *u);
/* The value of KEY in the "K=V" list L (the last one), or NULL. */
const char *proc_env_get(const struct proc_list *l, const char *key);
/* Read an EnvironmentFile= FILE's assignments into L. 0 or -errno. */
int proc_env_file(const struct hostfs *fs, const char *file, struct proc_list *l);

/* ---- process_access.c: who may open the GPU's device nodes ------------------------------------- */

/* A compute device node, as the pci probe published it, with its ACL when one could be read. */
struct proc_node {
    const char *path;
    unsigned mode;
    long uid, gid;
    const char *group;       /* its group's name, or NULL */
    unsigned char acl[256];  /* system.posix_acl_access, raw */
    size_t acl_len;          /* 0: none (or not read) */
    bool acl_read;           /* the xattr was read (or found absent) */
};
/* Credentials to judge with. */
struct proc_cred {
    long uid;                /* -1: a uid that owns nothing (systemd's DynamicUser=) */
    gid_t gids[64];          /* primary first */
    size_t n;
};
/* The compute nodes in the pci section (at most MAX), ACLs read through FS. */
size_t proc_nodes(struct probe_ctx *ctx, struct proc_node *out, size_t max);
/* Can C read and write N? WHY (a sentence piece) says on what it was decided. */
bool proc_node_allows(const struct proc_node *n, const struct proc_cred *c, char *why, size_t len);
/* /etc/passwd's entry for NAME (or a number): 0 with *UID, *GID, or -1. TEXT may be NULL. */
int proc_passwd_find(const char *text, const char *name, long *uid, long *gid);
/* The GID of group NAME (or a number) in /etc/group TEXT, or -1. */
long proc_group_gid(const char *text, const char *name);
/* The name of GID in TEXT (heap), or NULL. */
char *proc_group_name(const char *text, long gid);
/* Add to C every group of TEXT that lists USER as a member. */
void proc_group_members(const char *text, const char *user, struct proc_cred *c);
void proc_cred_add(struct proc_cred *c, long gid);
/* The groups of C by name ("render, video"), heap. */
char *proc_cred_names(const char *group_text, const struct proc_cred *c);
/* Judge every node for C: a finding ID for each one it cannot open (SUBJECT_FMT names whose). Adds a
 * JSON array of the nodes and their answers to DATA under "nodes". Returns how many it cannot open. */
size_t proc_judge_nodes(struct probe_ctx *ctx, json_object *data, const struct proc_cred *c, const char *who,
                        const char *id, const char *group_text);
/* The variables that choose the GPU or its libraries (NULL-terminated); VK_* and NVIDIA_* count too. */
bool proc_gpu_var(const char *name);
/* A visible-devices variable NAME=VALUE that leaves none of this machine's GPUs of its vendor visible:
 * process.hides-all-gpus, WHO in its message ("process 123 (python3)", "unit x.service"), "TAG: NAME" its
 * subject (TAG "pid 123", "x.service"). */
void proc_judge_visibility(struct probe_ctx *ctx, const char *who, const char *tag, const char *name,
                           const char *value);
/* process_nss.c: user NAME (or a uid) from the system's databases (NSS), asked in an isolated child: 0 with C
 * (uid, primary group first, then getgrouplist's), *GID, each group's name (or number) appended to NAMES;
 * -ENOENT when no database knows the user; -EIO with *WHY (heap) when they could not be asked. */
int proc_nss_user(struct probe_ctx *ctx, const char *name, struct proc_cred *c, long *gid, json_object *names,
                  char **why);
/* --user NAME: the section's "user" object and its findings. */
void proc_user_run(struct probe_ctx *ctx, struct report_section *sec);

/* ---- process_pid.c ------------------------------------------------------------------------------ */
/* --pid PID: the section's "pid" object and its findings; PROBE_INPUT_ERROR when no such process. */
int proc_pid_run(struct probe_ctx *ctx, struct report_section *sec, long pid);
/* process_view.c: its own view of the files through /proc/PID/root: the GPU's nodes in its /dev, the OpenCL
 * vendors directory; O's "own_view" and findings. *ERR: 0, or -errno when /proc/PID/root cannot be opened. */
void proc_view(struct probe_ctx *ctx, long pid, json_object *o, const char *who, int *err);
/* process_cgroup.c: the device rules of its cgroup into O's "cgroup": v1 devices.list judged for each compute
 * node (process.cgroup-denied); v2, live, the device programs attached (process.cgroup-device-program, or
 * process.cgroup-unchecked when the kernel would not say). */
void proc_cgroup(struct probe_ctx *ctx, long pid, json_object *o, const char *who);
/* process_asit.c: the libraries LD_LIBRARY_PATH=ITS_LDPATH makes the dynamic linker pick, against
 * gpucheckup's own (O's "predicted", process.other-library); returns its libcuda.so.1 (heap) or NULL. */
char *proc_predicted(struct probe_ctx *ctx, json_object *o, const char *who, const char *its_ldpath);
/* LIB (its libcuda) loaded in an isolated child with the process's environment ENV (NUL-separated) and,
 * where gpucheckup is root, its credentials C: cuInit and the device count into O's "cuda_as_it";
 * process.cuda-fails when it fails. */
void proc_cuda_as_it(struct probe_ctx *ctx, json_object *o, const char *who, const char *lib, const char *env,
                     size_t env_len, const struct proc_cred *c);
/* The version part of a library's file name ("libcudnn.so.9.1.0" -> "9.1.0"), or NULL. */
const char *proc_lib_version(const char *base);
/* Is BASE (a file name) a GPU library worth naming? */
bool proc_gpu_lib(const char *base);

/* ---- process_target.c: --pid, live: the run as the process (isolate_target.c) ---------------------- */
/* The probe's prepare: before the run starts, the process's (--pid's, else a running --unit's MainPID or its
 * cgroup's first) environment becomes the run's (every probe's getenv and every child), and where gpucheckup
 * is root and it is not, every child takes its uid, gid and groups. Live runs only; nothing when /proc/PID
 * cannot be read (the section says why). */
void proc_target_prepare(struct probe_ctx *ctx);
/* O's "run_as_it" for PID when the run was prepared for it. */
void proc_target_describe(long pid, json_object *o);
/* Did the run take PID's environment or credentials? */
bool proc_target_is(long pid);

/* ---- process_manager.c: the unit as systemd's manager sees it, over D-Bus (sd-bus) --------------- */
struct proc_manager {
    char *why;               /* why the manager was not asked or did not answer (heap), or NULL */
    char *active_state;      /* ActiveState ("active", "inactive", ...), or NULL */
    long main_pid;           /* MainPID (0: not running), -1 unknown */
};
/* Ask the manager? Live runs only, where systemd runs (/run/systemd/system) or DBUS_SYSTEM_BUS_ADDRESS names a bus. */
bool proc_manager_wanted(struct probe_ctx *ctx);
/* Unit NAME's merged settings from the manager into U (zeroed here; free with proc_unit_free) and PM. 0, or
 * -1 with PM->why (U untouched). */
int proc_manager_load(struct probe_ctx *ctx, const char *name, struct proc_unit *u, struct proc_manager *pm);

/* ---- process_unitfind.c: --unit, found once a run ------------------------------------------------ */
struct proc_unit_found {
    struct proc_unit u;      /* the manager's settings where it answered, else the files' */
    int rc;                  /* 0, or proc_unit_load's -ENOENT (no unit file) */
    bool manager;            /* U is the manager's */
    struct proc_manager pm;  /* why not, its ActiveState, MainPID */
    long main_pid;           /* its running process (> 0), or 0: not running (or not found) */
    const char *pid_source;  /* "the manager's MainPID" or "the first of its cgroup's" */
};
/* The target's prepare (live, --unit without --pid): find the unit now, before the run takes any process's
 * environment, and keep it for the run. Its running process, or 0. */
long proc_unit_prepare(struct probe_ctx *ctx);
/* The unit into F (free with proc_unit_found_free): what prepare kept, else found now. The manager's MainPID
 * when it answers, else the first process of its cgroup. */
void proc_unit_find(struct probe_ctx *ctx, struct proc_unit_found *f);
void proc_unit_found_free(struct proc_unit_found *f);

/* ---- process_unitcheck.c ------------------------------------------------------------------------ */
/* --unit NAME: the section's "unit" object and its findings. Returns the unit's first process from its
 * cgroup (system.slice/NAME/cgroup.procs, v2 or v1's systemd hierarchy) when it runs, else 0. */
long proc_unit_run(struct probe_ctx *ctx, struct report_section *sec);

#endif
