/* checks.c: the catalogue of every finding ID: core rows here, probe rows in each probe. */
#include "checks.h"

#include <string.h>

#include "probe.h"

static const struct check checks_core[] = {
    {"core.probe-failed", REPORT_SEV_WARNING, "A probe could not complete; what it checks is unknown",
     "Run again with --verbose; if it persists, report a bug with the JSON output (--json).", CHECK_LAYER_NONE},
    {"core.isolated-child-failed", REPORT_SEV_WARNING,
     "An isolated child process could not be started (fork or pipe failed)",
     "Check the process and file-descriptor limits (ulimit -u, ulimit -n) and free memory.", CHECK_LAYER_NONE},
    {"core.timeout-spent", REPORT_SEV_WARNING,
     "The run's --timeout was spent before a probe could run all of its isolated children",
     "Another finding names what hung; fix that, or give the run more time with --timeout.", CHECK_LAYER_NONE},
    {"require.unmet", REPORT_SEV_ERROR, "A requirement given with --require is not met",
     "See the finding's message for what is missing; the other findings say why.", CHECK_LAYER_NONE},
};

const struct check *checks_find(const char *id)
{
    for (size_t i = 0; i < sizeof(checks_core) / sizeof(checks_core[0]); i++)
        if (strcmp(checks_core[i].id, id) == 0)
            return &checks_core[i];
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct probe *pr = probe_registry[p];
        for (size_t i = 0; i < pr->n_checks; i++)
            if (strcmp(pr->checks[i].id, id) == 0)
                return &pr->checks[i];
        for (const struct check_set *cs = pr->check_sets; cs && cs->rows; cs++)
            for (size_t i = 0; i < *cs->n; i++)
                if (strcmp(cs->rows[i].id, id) == 0)
                    return &cs->rows[i];
    }
    return NULL;
}

void checks_foreach(void (*fn)(const struct check *c, const char *owner, void *arg), void *arg)
{
    for (size_t i = 0; i < sizeof(checks_core) / sizeof(checks_core[0]); i++)
        fn(&checks_core[i], "core", arg);
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct probe *pr = probe_registry[p];
        for (size_t i = 0; i < pr->n_checks; i++)
            fn(&pr->checks[i], pr->name, arg);
        for (const struct check_set *cs = pr->check_sets; cs && cs->rows; cs++)
            for (size_t i = 0; i < *cs->n; i++)
                fn(&cs->rows[i], pr->name, arg);
    }
}

enum check_layer checks_layer(const char *id)
{
    const struct check *c = checks_find(id);
    if (!c)
        return CHECK_LAYER_NONE;
    return c->layer == CHECK_LAYER_UNSET ? CHECK_LAYER_NONE : c->layer;
}

const char *checks_layer_name(enum check_layer l)
{
    static const char *const names[] = {"unset", "none", "hardware", "kernel", "loader", "driver", "runtime",
                                        "compute"};
    return (size_t)l < sizeof(names) / sizeof(names[0]) ? names[l] : "unset";
}

struct checks_owner_find {
    const char *id;
    const char *owner;
};

static void checks_owner_cb(const struct check *c, const char *owner, void *arg)
{
    struct checks_owner_find *f = arg;
    if (!f->owner && strcmp(c->id, f->id) == 0)
        f->owner = owner;
}

const char *checks_owner(const char *id)
{
    struct checks_owner_find f = {id, NULL};
    if (id)
        checks_foreach(checks_owner_cb, &f);
    return f.owner;
}
