/* smoke_options.c: the compute tests' options: their --help rows and parsing into the core's values. */
#include "smoke_options.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "compute_options.h"
#include "smoke_hint.h"
#include "strutil.h"

unsigned smoke_size_for(const struct cldev_target *t)
{
    return compute_options_size_for(smoke_target_is_cpu(t));
}

void smoke_options_reset(void)
{
    compute_options_reset();
}

static void smoke_set_which(enum compute_which which)
{
    struct compute_options o = *compute_options();
    o.which = which;
    compute_options_set(&o);
}

static int smoke_opt_which(const char *v, char *err, size_t errlen)
{
    static const char *const names[] = {"all", "gpu", "none"}; /* enum compute_which */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(v, names[i]) == 0) {
            smoke_set_which((enum compute_which)i);
            return 0;
        }
    snprintf(err, errlen, "'%.*s%s' is not one of all, gpu, none", CLI_QUOTE(v));
    return -1;
}

static int smoke_opt_none(const char *v, char *err, size_t errlen)
{
    (void)v;
    (void)err;
    (void)errlen;
    smoke_set_which(COMPUTE_WHICH_NONE);
    return 0;
}

static int smoke_opt_size(const char *v, char *err, size_t errlen)
{
    uint64_t u;
    if (str_to_u64(v, 10, &u) < 0 || u < 1 || u > COMPUTE_MAX_SIZE) {
        snprintf(err, errlen, "'%.*s%s' is not a whole number from 1 to %u", CLI_QUOTE(v), COMPUTE_MAX_SIZE);
        return -1;
    }
    struct compute_options o = *compute_options();
    o.size = (unsigned)u;
    o.size_set = true;
    compute_options_set(&o);
    return 0;
}

const struct probe_option smoke_option_rows[] = {
    {.name = "smoke", .arg = "WHICH", .parse = smoke_opt_which,
     .help = "all (default), gpu or none: which devices get the smoke test\n"
             "(none also skips the CUDA smoke test)"},
    {.name = "no-smoke", .parse = smoke_opt_none, .help = "same as --smoke=none"},
    {.name = "smoke-size", .arg = "N", .parse = smoke_opt_size,
     .help = "matrix size for the smoke test (default 256, 64 on a CPU\n"
             "device; 1..4096)"},
    {.name = NULL},
};
