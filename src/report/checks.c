/* checks.c: the catalogue of every finding ID: core rows here, the probes' rows handed in (struct checks_catalogue). */
#include "checks.h"

#include <string.h>

static const struct check checks_core[] = {
    {"core.probe-failed", REPORT_SEV_WARNING, "A probe could not complete; what it checks is unknown",
     "Run again with --verbose; if it persists, report a bug with the JSON output (--json).", CHECK_LAYER_NONE},
    {"core.isolated-child-failed", REPORT_SEV_WARNING,
     "An isolated child process could not be started (fork or pipe failed, or no fork was possible before "
     "the deadline)",
     "Check the process and file-descriptor limits (ulimit -u, ulimit -n) and free memory.", CHECK_LAYER_NONE},
    {"core.timeout-spent", REPORT_SEV_WARNING,
     "The run's --timeout was spent before a probe could run all of its isolated children",
     "Another finding names what hung; fix that, or give the run more time with --timeout.", CHECK_LAYER_NONE},
    {"core.probe-timed-out", REPORT_SEV_WARNING,
     "A probe was still blocked inside gpucheckup when the run's --timeout passed (a read that never "
     "returned); its results are left out",
     "The finding names the file it was reading: a hung NFS or FUSE mount, or a device gone from the bus "
     "(see dmesg). Fix that; more --timeout does not help a read that never returns.", CHECK_LAYER_NONE},
    {"core.not-a-regular-file", REPORT_SEV_WARNING,
     "A host file gpucheckup reads is a FIFO, socket or device node, not a regular file; it was not read",
     "Reading it could block the run for good or have side effects. In a captured tree (--root), replace it "
     "by the file it stands for; on a live machine, find what created it.", CHECK_LAYER_NONE},
    {"require.unmet", REPORT_SEV_ERROR, "A requirement given with --require is not met",
     "See the finding's message for what is missing; the other findings say why.", CHECK_LAYER_NONE},
};

#define CHECKS_N_CORE (sizeof(checks_core) / sizeof(checks_core[0]))

/* The row for ID and its owner, or NULL. */
static const struct check *checks_lookup(const struct checks_catalogue *cat, const char *id, const char **owner)
{
    for (size_t i = 0; id && i < CHECKS_N_CORE; i++)
        if (strcmp(checks_core[i].id, id) == 0) {
            *owner = "core";
            return &checks_core[i];
        }
    for (size_t p = 0; id && cat && p < cat->n; p++)
        for (size_t i = 0; i < cat->parts[p].n; i++)
            if (strcmp(cat->parts[p].rows[i].id, id) == 0) {
                *owner = cat->parts[p].owner;
                return &cat->parts[p].rows[i];
            }
    *owner = NULL;
    return NULL;
}

const struct check *checks_find(const struct checks_catalogue *cat, const char *id)
{
    const char *owner;
    return checks_lookup(cat, id, &owner);
}

void checks_foreach(const struct checks_catalogue *cat, void (*fn)(const struct check *c, const char *owner, void *arg),
                    void *arg)
{
    for (size_t i = 0; i < CHECKS_N_CORE; i++)
        fn(&checks_core[i], "core", arg);
    for (size_t p = 0; cat && p < cat->n; p++)
        for (size_t i = 0; i < cat->parts[p].n; i++)
            fn(&cat->parts[p].rows[i], cat->parts[p].owner, arg);
}

enum check_layer checks_layer(const struct checks_catalogue *cat, const char *id)
{
    const struct check *c = checks_find(cat, id);
    if (!c)
        return CHECK_LAYER_NONE;
    enum check_layer l = (enum check_layer)(c->layer & CHECK_LAYER_MASK);
    return l == CHECK_LAYER_UNSET ? CHECK_LAYER_NONE : l;
}

const char *checks_layer_name(enum check_layer l)
{
    static const char *const names[] = {"unset", "none", "hardware", "firmware", "kernel", "loader", "driver", "runtime",
                                        "compute", "framework"};
    return (size_t)l < sizeof(names) / sizeof(names[0]) ? names[l] : "unset";
}

unsigned checks_flags(const struct checks_catalogue *cat, const char *id)
{
    const struct check *c = checks_find(cat, id);
    return c ? c->layer & ~CHECK_LAYER_MASK : 0;
}

const char *checks_owner(const struct checks_catalogue *cat, const char *id)
{
    const char *owner;
    checks_lookup(cat, id, &owner);
    return owner;
}
