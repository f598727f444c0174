/* process.c: the process probe: the GPU as a systemd unit (--unit), a user (--user) or a running process (--pid) sees it. */
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "jsonget.h"
#include "process_internal.h"
#include "strutil.h"
#include "results/result_pci.h"
#include "results/result_process.h"


static const struct check process_checks[] = {
    {"unit.not-found", REPORT_SEV_WARNING, "No unit file of that name in systemd's search path",
     "Check the name (systemctl list-unit-files | grep NAME); a unit systemd generates at boot is not read.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"unit.masked", REPORT_SEV_WARNING, "The unit is masked (its file is a link to /dev/null)",
     "systemctl unmask NAME", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"unit.private-devices", REPORT_SEV_ERROR, "The unit has PrivateDevices=yes, which hides every GPU device node",
     "Set PrivateDevices=no in a drop-in (systemctl edit NAME), then systemctl restart NAME.",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"unit.device-policy", REPORT_SEV_ERROR, "The unit's DevicePolicy= allows none of some GPU device nodes",
     "Add DeviceAllow= lines for them in a drop-in: DeviceAllow=char-nvidia-frontend rw, char-nvidia-uvm rw "
     "(NVIDIA), char-drm rw and /dev/kfd rw (AMD), char-drm rw (Intel).",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"unit.user-denied", REPORT_SEV_ERROR, "The unit's user cannot open a GPU device node",
     "Add SupplementaryGroups= with the node's group (render, video) in a drop-in, or the user to that group.",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"unit.unknown-user", REPORT_SEV_WARNING, "The unit's User= is not a known user",
     "Create the user (useradd --system NAME), or use DynamicUser=yes with SupplementaryGroups=render.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"unit.env-file-missing", REPORT_SEV_WARNING, "An EnvironmentFile= without a '-' cannot be read",
     "Create the file, or write EnvironmentFile=-PATH to make it optional.", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"unit.env-differs", REPORT_SEV_WARNING,
     "A variable that chooses the GPU or its libraries differs between the unit and this shell",
     "Set the same value in both (Environment= in a drop-in, or your shell's profile), or unset it where it is wrong.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"user.unknown", REPORT_SEV_WARNING, "No such user in the user database",
     "Check the name (getent passwd NAME); under --root only the tree's /etc/passwd is read.", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"user.denied", REPORT_SEV_ERROR, "The user cannot open a GPU device node",
     "Add the user to the node's group (usermod -aG render NAME), then log in again.",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.denied", REPORT_SEV_ERROR, "The process's credentials cannot open a GPU device node",
     "Run it as a user in the node's group (render, video), or add that group to it (a service: SupplementaryGroups=).",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.hides-all-gpus", REPORT_SEV_ERROR,
     "A visible-devices variable of the process or unit leaves none of this machine's GPUs visible",
     "Unset it, or name a device that exists (indexes count from 0).", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.not-readable", REPORT_SEV_WARNING, "Part of /proc/PID could not be read",
     "Run gpucheckup as root or as the process's user: another user's environ, maps and fd need ptrace access.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.other-libcuda", REPORT_SEV_WARNING, "The process loaded another libcuda than gpucheckup's own run",
     "Its LD_LIBRARY_PATH, RUNPATH or container picks another driver library: the one matching the kernel "
     "module is the one to load.", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.node-missing", REPORT_SEV_ERROR, "A GPU device node is missing from the process's own /dev",
     "A container needs the GPU's nodes passed in (docker run --device /dev/kfd --device /dev/dri, or --gpus all "
     "with the NVIDIA Container Toolkit).", CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.other-icds", REPORT_SEV_WARNING, "The process sees other OpenCL ICD files than this report read",
     "A container or another OCL_ICD_VENDORS: mount the vendors directory (and the drivers it names) into it, "
     "or point OCL_ICD_VENDORS at one that lists them.", CHECK_LAYER_LOADER | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.other-library", REPORT_SEV_WARNING,
     "The process's LD_LIBRARY_PATH makes the dynamic linker pick another GPU library than gpucheckup's does",
     "Its environment (a venv, conda, a module, a unit's Environment=) puts another copy first: make both find the "
     "one that matches the driver, or run gpucheckup with its LD_LIBRARY_PATH.", CHECK_LAYER_LOADER | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.cuda-fails", REPORT_SEV_ERROR,
     "libcuda, loaded with the process's environment and credentials, fails to initialise or load",
     "The message names the call and its result: a visible-devices variable, a node its user cannot open, or a "
     "library it cannot read.", CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.other-mount-namespace", REPORT_SEV_INFO, "The process runs in another mount namespace (a container)",
     "This report read gpucheckup's own view of the files; the process's /dev and libraries may differ.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.cgroup-denied", REPORT_SEV_ERROR, "The process's devices cgroup (v1) does not allow a GPU device node",
     "A container: run it with the GPU passed in (docker run --gpus all with the NVIDIA Container Toolkit, or "
     "--device for each node); after a systemd daemon-reload reset its rules, restart it. A service: DeviceAllow=.",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.cgroup-device-program", REPORT_SEV_INFO, "A device program (eBPF, cgroup v2) acts on the process's cgroup",
     "Containers and services with DevicePolicy= have one; if it opens no GPU node (EPERM, NVML's \"Unknown Error\"), "
     "pass the nodes in (--gpus all, --device, DeviceAllow=) and restart it.",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"process.cgroup-unchecked", REPORT_SEV_INFO, "Whether a device program limits the process's cgroup was not checked",
     "Run gpucheckup as root: the kernel names a cgroup's device programs (bpf BPF_PROG_QUERY) to root only.",
     CHECK_LAYER_KERNEL | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
};

static const char *const process_deps[] = {"pci", "cuda", NULL};

static bool process_asked(void)
{
    return process_opts.unit || process_opts.user || process_opts.pid > 0;
}

static int process_run(struct probe_ctx *ctx, struct report_section *sec)
{
    if (!process_asked()) {
        report_section_set_status(sec, REPORT_STATUS_NOT_APPLICABLE, "give --unit NAME, --user NAME or --pid PID");
        return PROBE_DONE;
    }
    if (!sec->data) /* the run gives every section an object; a unit test's may not */
        sec->data = json_object_new_object();
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    if (!result_pci_get(ctx->report))
        report_section_add_note(sec, "the pci section did not run: GPU device nodes are not judged");
    long unit_pid = process_opts.unit ? proc_unit_run(ctx, sec) : 0;
    if (process_opts.user)
        proc_user_run(ctx, sec);
    if (process_opts.pid > 0) {
        int rc = proc_pid_run(ctx, sec, process_opts.pid);
        if (rc != PROBE_DONE)
            return rc;
    } else if (unit_pid > 0 && proc_pid_run(ctx, sec, unit_pid) != PROBE_DONE) {
        free(ctx->error); /* it ended between the two reads: nothing to say of it */
        ctx->error = NULL;
    }
    report_section_add_note(sec, "--user is looked up in the system's user database (NSS) live, in the tree's "
                                 "/etc/passwd and /etc/group under --root; a unit's User= and a process's group "
                                 "names in /etc/passwd and /etc/group only; of a process, only its /dev nodes and "
                                 "OpenCL vendors directory are read in its own view, its LD_LIBRARY_PATH acts only "
                                 "in programs the children start, and a cgroup v2 device program is counted, not "
                                 "read");
    struct result_process *facts = result_process_read(sec->data);
    if (facts)
        report_section_set_result(sec, &result_process_ops, facts);
    return PROBE_DONE;
}

/* Text: the unit's, user's and process's facts, one block each. */
static void process_print_nodes(struct text_out *t, json_object *acc)
{
    size_t n = 0;
    json_object *nodes = jsonget_array(acc, "nodes", &n);
    for (size_t i = 0; nodes && i < n; i++) {
        json_object *o = json_object_array_get_idx(nodes, i);
        text_kv(t, jsonget_str(o, "path"), "%s (%s)", jsonget_tri(o, "can_open") == GC_TRI_YES ? "can open" : "cannot open",
                jsonget_str(o, "by"));
    }
}

static void process_print_env(struct text_out *t, json_object *env)
{
    if (!json_object_is_type(env, json_type_object))
        return;
    json_object_object_foreach(env, k, v) text_kv(t, k, "%s", json_object_get_string(v));
}

/* Its cgroup's device rules: v1 each node's allowed access, v2 the device programs (or why not asked). */
static void process_print_cgroup(struct text_out *t, json_object *cg)
{
    json_object *v1 = jsonget(cg, "v1"), *v2 = jsonget(cg, "v2");
    size_t n = 0;
    json_object *nodes = jsonget_array(v1, "nodes", &n);
    if (v1 && jsonget_str(v1, "error"))
        text_kv(t, "devices cgroup", "%s: %s", jsonget_str(v1, "file"), jsonget_str(v1, "error"));
    for (size_t i = 0; nodes && i < n; i++) {
        json_object *o = json_object_array_get_idx(nodes, i);
        const char *acc = jsonget_str(o, "allowed");
        text_kv(t, "devices cgroup", "%s (%s): %s", jsonget_str(o, "path"), jsonget_str(o, "device"),
                acc && *acc ? acc : "denied");
    }
    if (v2 && jsonget(v2, "device_programs"))
        text_kv(t, "device programs", "%lld (cgroup %s)", (long long)jsonget_int(v2, "device_programs", 0),
                jsonget_str(v2, "path"));
    else if (v2)
        text_kv(t, "device programs", "%s", jsonget_str(v2, "why") ? jsonget_str(v2, "why") : "?");
}

static void process_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *u = jsonget(sec->data, "unit"), *us = jsonget(sec->data, "user"), *p = jsonget(sec->data, "pid");
    if (u) {
        text_heading(t, "Unit");
        text_kv(t, "name", "%s", jsonget_str(u, "name"));
        text_kv(t, "file", "%s", jsonget_str(u, "file") ? jsonget_str(u, "file") : "(none)");
        if (jsonget_str(u, "source"))
            text_kv(t, "source", "%s", strcmp(jsonget_str(u, "source"), "manager") == 0
                                           ? "systemd's manager (D-Bus)"
                                           : "its files");
        if (jsonget_str(u, "manager_reason"))
            text_kv(t, "manager", "not used: %s", jsonget_str(u, "manager_reason"));
        static const char *const keys[] = {"user", "group", "device_policy", "exec_start", NULL};
        for (size_t i = 0; keys[i]; i++)
            if (jsonget_str(u, keys[i]))
                text_kv(t, keys[i], "%s", jsonget_str(u, keys[i]));
        if (jsonget_tri(u, "private_devices") == GC_TRI_YES)
            text_kv(t, "private_devices", "yes");
        process_print_env(t, jsonget(u, "environment"));
        process_print_nodes(t, jsonget(u, "access"));
    }
    if (us) {
        text_heading(t, "User");
        text_kv(t, "name", "%s", jsonget_str(us, "name"));
        process_print_nodes(t, us);
    }
    if (p) {
        text_heading(t, "Process");
        text_kv(t, "pid", "%lld", (long long)jsonget_int(p, "pid", -1));
        text_kv(t, "uid", "%lld", (long long)jsonget_int(p, "uid", -1));
        process_print_env(t, jsonget(p, "environment"));
        size_t n = 0;
        json_object *libs = jsonget_array(p, "libraries", &n);
        for (size_t i = 0; libs && i < n; i++)
            text_kv(t, "library", "%s", jsonget_str(json_object_array_get_idx(libs, i), "path"));
        json_object *pred = jsonget_object(p, "predicted");
        if (pred) {
            json_object_object_foreach(pred, so, e) {
                const char *its = jsonget_str(e, "its");
                if (its)
                    text_kv(t, so, "%s (its LD_LIBRARY_PATH)", its);
            }
        }
        json_object *as = jsonget(p, "cuda_as_it");
        if (as && jsonget(as, "devices"))
            text_kv(t, "CUDA as it", "%lld device(s)", (long long)jsonget_int(as, "devices", 0));
        else if (as && jsonget(as, "cuinit"))
            text_kv(t, "CUDA as it", "cuInit %lld (%s)", (long long)jsonget_int(as, "cuinit", 0),
                    jsonget_str(as, "error_name") ? jsonget_str(as, "error_name") : "?");
        else if (as)
            text_kv(t, "CUDA as it", "%s", jsonget_str(as, "dlopen_error")        ? jsonget_str(as, "dlopen_error")
                                           : jsonget_str(as, "credentials_error") ? jsonget_str(as, "credentials_error")
                                                                                  : jsonget_str(as, "status"));
        json_object *open = jsonget_array(p, "open_nodes", &n);
        for (size_t i = 0; open && i < n; i++)
            text_kv(t, "open node", "%s", json_object_get_string(json_object_array_get_idx(open, i)));
        json_object *ras = jsonget(p, "run_as_it");
        if (ras)
            text_kv(t, "run as it", "%s", jsonget_tri(ras, "credentials") == GC_TRI_YES ? "its environment and credentials"
                                          : jsonget_tri(ras, "environment") == GC_TRI_YES ? "its environment"
                                          : jsonget_str(ras, "why") ? jsonget_str(ras, "why") : "no");
        process_print_cgroup(t, jsonget(p, "cgroup"));
        process_print_nodes(t, jsonget(p, "access"));
    }
}

const struct probe probe_process = {
    .name = "process",
    .stack = PROBE_STACK_PROCESS,
    .title = "the GPU as a systemd service (--unit), a user (--user) or a running\n"
             "process (--pid) sees it (only with one of them)",
    .deps = process_deps,
    .checks = process_checks,
    .n_checks = sizeof(process_checks) / sizeof(process_checks[0]),
    .options = process_option_rows,
    .options_title = "Another program's view (process)",
    .options_reset = process_options_reset,
    .result = &result_process_ops,
    .in_check = process_asked,
    .prepare = proc_target_prepare,
    .run = process_run,
    .print_text = process_print_text,
};
