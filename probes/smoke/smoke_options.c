/* smoke_options.c: the smoke test's options: their --help rows, parsing and the values parsed. */
#include "smoke_options.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "strutil.h"

static struct smoke_options smoke_opts = {SMOKE_WHICH_ALL, SMOKE_DEFAULT_SIZE};

const struct smoke_options *smoke_options(void)
{
    return &smoke_opts;
}

void smoke_options_reset(void)
{
    smoke_opts = (struct smoke_options){SMOKE_WHICH_ALL, SMOKE_DEFAULT_SIZE};
}

static int smoke_opt_which(const char *v, char *err, size_t errlen)
{
    static const char *const names[] = {"all", "gpu", "none"}; /* enum smoke_which */
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(v, names[i]) == 0) {
            smoke_opts.which = (enum smoke_which)i;
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
    smoke_opts.which = SMOKE_WHICH_NONE;
    return 0;
}

static int smoke_opt_size(const char *v, char *err, size_t errlen)
{
    uint64_t u;
    if (str_to_u64(v, 10, &u) < 0 || u < 1 || u > SMOKE_MAX_SIZE) {
        snprintf(err, errlen, "'%.*s%s' is not a whole number from 1 to %u", CLI_QUOTE(v), SMOKE_MAX_SIZE);
        return -1;
    }
    smoke_opts.size = (unsigned)u;
    return 0;
}

const struct probe_option smoke_option_rows[] = {
    {.name = "smoke", .arg = "WHICH", .parse = smoke_opt_which,
     .help = "all (default), gpu or none: which devices get the smoke test\n"
             "(none also skips the CUDA smoke test)"},
    {.name = "no-smoke", .parse = smoke_opt_none, .help = "same as --smoke=none"},
    {.name = "smoke-size", .arg = "N", .parse = smoke_opt_size,
     .help = "matrix size for the smoke test (default 256, 1..4096)"},
    {.name = NULL},
};
