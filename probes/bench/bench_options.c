/* bench_options.c: bench's options: their --help rows, parsing and the values parsed. */
#include "bench_options.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "options.h"
#include "strutil.h"

static struct bench_options bench_opts = {BENCH_DEFAULT_TIME_S, BENCH_PREC_ALL, NULL};

const struct bench_options *bench_options(void)
{
    return &bench_opts;
}

void bench_options_reset(void)
{
    bench_opts = (struct bench_options){BENCH_DEFAULT_TIME_S, BENCH_PREC_ALL, NULL};
}

static int bench_opt_time(const char *v, char *err, size_t errlen)
{
    double d;
    if (str_to_double(v, &d) < 0 || d <= 0 || d > BENCH_MAX_TIME_S) {
        snprintf(err, errlen, "'%.*s%s' is not a number of seconds above 0 and at most %.0f", CLI_QUOTE(v),
                 BENCH_MAX_TIME_S);
        return -1;
    }
    bench_opts.time_s = d;
    return 0;
}

/* "fp32,fp64,fp16" (any non-empty subset, any order, no empty items) into a bit set. */
static int bench_opt_precision(const char *v, char *err, size_t errlen)
{
    static const char *const names[] = {"fp32", "fp64", "fp16"};
    unsigned set = 0;
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < 3 && !(strlen(names[i]) == len && strncmp(p, names[i], len) == 0))
            i++;
        if (i == 3) {
            snprintf(err, errlen, "'%.*s%s' is not a comma-separated list of fp32, fp64, fp16", CLI_QUOTE(v));
            return -1;
        }
        set |= 1u << i;
        if (!p[len])
            break;
        p += len + 1;
    }
    bench_opts.precs = set;
    return 0;
}

/* True if S ends with SUFFIX, ignoring ASCII case. */
static bool bench_ends_with_nocase(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

static int bench_opt_plot(const char *v, char *err, size_t errlen)
{
    if (!*v) {
        snprintf(err, errlen, "empty file name");
        return -1;
    }
    if (!bench_ends_with_nocase(v, ".svg") && !bench_ends_with_nocase(v, ".png")) {
        snprintf(err, errlen, "'%.*s%s' does not end in .svg or .png (the format comes from it)", CLI_QUOTE(v));
        return -1;
    }
    bench_opts.plot = v;
    return 0;
}

const struct probe_option bench_option_rows[] = {
    {.name = "bench-time", .arg = "SECONDS", .parse = bench_opt_time,
     .help = "time budget of the whole run, split over the devices and the\n"
             "CPU BLAS (default 10, max 3600)"},
    {.name = "bench-precision", .arg = "LIST", .parse = bench_opt_precision,
     .help = "comma-separated fp32, fp64, fp16 (default all the device has)"},
    {.name = "plot", .arg = "FILE", .parse = bench_opt_plot,
     .help = "also draw GFLOPS against N into FILE (.svg or .png; needs a build\n"
             "with cairo, else exit status 2)"},
    {.name = NULL},
};
