/* process_options.c: --unit, --user and --pid: their parsing and the values the probe's parts read (a file of
 * their own: every part reads them, and process.c calls the parts). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "process_internal.h"
#include "strutil.h"

struct process_opts process_opts = {NULL, NULL, -1};

void process_options_reset(void)
{
    free(process_opts.unit);
    free(process_opts.user);
    process_opts = (struct process_opts){NULL, NULL, -1};
}

static int process_opt_unit(const char *v, char *err, size_t errlen)
{
    if (!*v || strchr(v, '/')) {
        snprintf(err, errlen, "'%.*s%s' is not a unit name", CLI_QUOTE(v));
        return -1;
    }
    free(process_opts.unit);
    process_opts.unit = str_dup(v);
    return 0;
}

static int process_opt_user(const char *v, char *err, size_t errlen)
{
    if (!*v || strchr(v, ':') || strchr(v, '\n')) {
        snprintf(err, errlen, "'%.*s%s' is not a user name", CLI_QUOTE(v));
        return -1;
    }
    free(process_opts.user);
    process_opts.user = str_dup(v);
    return 0;
}

static int process_opt_pid(const char *v, char *err, size_t errlen)
{
    uint64_t u;
    if (str_to_u64(v, 10, &u) != 0 || u < 1 || u > 4194304) {
        snprintf(err, errlen, "'%.*s%s' is not a process ID", CLI_QUOTE(v));
        return -1;
    }
    process_opts.pid = (long)u;
    return 0;
}

const struct probe_option process_option_rows[] = {
    {.name = "unit", .arg = "NAME", .parse = process_opt_unit,
     .help = "judge systemd service NAME (.service added when missing): its unit\n"
             "file and drop-ins (also under --root), PrivateDevices=, DevicePolicy=,\n"
             "User=, its GPU variables against this shell's; live, systemd's manager\n"
             "over D-Bus, and when it runs the run is its process's as with --pid"},
    {.name = "user", .arg = "NAME", .parse = process_opt_user,
     .help = "which GPU device nodes user NAME can open (the user database, NSS;\n"
             "the tree's /etc/passwd and /etc/group under --root; modes and ACLs)"},
    {.name = "pid", .arg = "PID", .parse = process_opt_pid,
     .help = "what running process PID sees: its GPU variables, credentials, loaded\n"
             "GPU libraries, open GPU nodes, mount namespace, cgroup device rules;\n"
             "live, the whole run takes its environment (as root, its credentials)"},
    {.name = NULL},
};
