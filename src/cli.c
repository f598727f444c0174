/* cli.c: command-line options of gpucheckup, parsed with getopt_long into one struct. */
#include "cli.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strutil.h"

const char *const cli_format_names[] = {"text", "json", "junit", "prometheus", "nfd", "github", NULL};

const char *const cli_commands[] = {"check", "cpu", "pci", "cuda", "icd", "opencl", "smoke", "list", "snapshot", "bench", NULL};

enum {
    OPT_FORMAT = 0x100,
    OPT_COMPACT,
    OPT_ROOT,
    OPT_LIVE,
    OPT_TIMEOUT,
    OPT_COLOR,
    OPT_LIST_CHECKS,
    OPT_CPUID_DUMP,
    OPT_SAVE_CPUID,
    OPT_PCI_DUMP,
    OPT_SMOKE,
    OPT_NO_SMOKE,
    OPT_SMOKE_SIZE,
    OPT_DEVICE,
    OPT_PROP,
    OPT_REQUIRE,
    OPT_JSON,
    OPT_NO_REDACT,
    OPT_BENCH_TIME,
    OPT_BENCH_PRECISION,
    OPT_PLOT,
};

/* A value quoted in a message: its first CLI_QUOTE_MAX bytes, then "..." (a huge value would push
 * the explanation out of the caller's message buffer). Use with "'%.*s%s'". */
#define CLI_QUOTE_MAX 64
#define CLI_QUOTE(s) \
    (int)(strlen(s) > CLI_QUOTE_MAX ? CLI_QUOTE_MAX : strlen(s)), (s), strlen(s) > CLI_QUOTE_MAX ? "..." : ""

static const struct option cli_long_options[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"compact", no_argument, NULL, OPT_COMPACT},
    {"output", required_argument, NULL, 'o'},
    {"root", required_argument, NULL, OPT_ROOT},
    {"live", no_argument, NULL, OPT_LIVE},
    {"no-redact", no_argument, NULL, OPT_NO_REDACT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"color", required_argument, NULL, OPT_COLOR},
    {"colour", required_argument, NULL, OPT_COLOR},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"list-checks", no_argument, NULL, OPT_LIST_CHECKS},
    {"cpuid-dump", required_argument, NULL, OPT_CPUID_DUMP},
    {"save-cpuid", required_argument, NULL, OPT_SAVE_CPUID},
    {"pci-dump", required_argument, NULL, OPT_PCI_DUMP},
    {"smoke", required_argument, NULL, OPT_SMOKE},
    {"no-smoke", no_argument, NULL, OPT_NO_SMOKE},
    {"smoke-size", required_argument, NULL, OPT_SMOKE_SIZE},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"prop", required_argument, NULL, OPT_PROP},
    {"require", required_argument, NULL, OPT_REQUIRE},
    {"bench-time", required_argument, NULL, OPT_BENCH_TIME},
    {"bench-precision", required_argument, NULL, OPT_BENCH_PRECISION},
    {"plot", required_argument, NULL, OPT_PLOT},
    {NULL, 0, NULL, 0},
};

void cli_print_help(FILE *out)
{
    fputs(
        "Usage: gpucheckup [COMMAND] [OPTIONS]\n"
        "Is this machine ready to compute on its GPU, and if not, exactly why not?\n"
        "\n"
        "Commands:\n"
        "  check              every probe, then the verdict (the default)\n"
        "  cpu                CPU identification, usable SIMD flags, x86-64 level\n"
        "  pci                GPUs and accelerators on the PCI bus, kernel drivers, device nodes\n"
        "  cuda               the NVIDIA CUDA stack: libcuda and cuInit, each GPU, NVML, the CUDA\n"
        "                     libraries frameworks load, a CUDA smoke test\n"
        "  icd                the OpenCL ICD loader and each vendor driver (.icd file)\n"
        "  opencl             every OpenCL platform and device with its properties\n"
        "  list               one line per OpenCL platform and device, with its PCI address\n"
        "  smoke              a small matrix multiply on each OpenCL device, checked exactly\n"
        "  snapshot -o FILE.tar.gz\n"
        "                     `check`, then everything it read and found into FILE.tar.gz for another\n"
        "                     machine (hostnames, serials, MACs, user names redacted); the report\n"
        "                     goes to stdout\n"
        "  bench              GEMM speed per OpenCL device (gpucheckup's kernel, CLBlast) against\n"
        "                     the CPU BLAS, every result verified; bandwidth, launch latency, peak\n"
        "                     (only when asked for: `check` never runs it)\n"
        "\n"
        "Output:\n"
        "      --json              same as --format=json\n"
        "      --format=FMT        text (default), json, or for other consumers:\n"
        "                          junit (JUnit XML for CI test reports), prometheus\n"
        "                          (node_exporter textfile collector), nfd (Kubernetes Node\n"
        "                          Feature Discovery features.d labels), github (GitHub\n"
        "                          Actions ::error/::warning/::notice annotations)\n"
        "      --compact           JSON on one line\n"
        "  -o, --output=FILE       write the report to FILE (atomically) instead of stdout\n"
        "      --color=WHEN        auto (default), always or never; NO_COLOR is honoured\n"
        "  -q, --quiet             only findings and the verdict\n"
        "  -v, --verbose           more detail (details of every probe in `check`)\n"
        "      --list-checks       every finding ID gpucheckup can report, then exit\n"
        "\n"
        "Where to look:\n"
        "      --root=DIR          read /sys, /proc, /dev and /etc under DIR (a captured tree);\n"
        "                          probes that need the live machine are skipped\n"
        "      --root=FILE.tar.gz  replay a snapshot (or its unpacked directory): cpu, pci and the\n"
        "                          .icd file checks run again on it; opencl, smoke, cuda and the\n"
        "                          driver loading show the captured results, marked [captured]\n"
        "      --no-redact         snapshot: keep hostnames, serials, MACs and user names\n"
        "      --live              with --root: still run OpenCL, CUDA, smoke and CPUID on this machine\n"
        "      --timeout=SECONDS   limit for the whole run, end to end: every driver child gets what\n"
        "                          is left of it (default 15, max 3600)\n"
        "      --cpuid-dump=FILE   decode a raw CPUID dump instead of this CPU: libcpuid's format,\n"
        "                          an AIDA64/InstLatx64 report, `cpuid -r` output, or /dev/cpu/N/cpuid\n"
        "      --save-cpuid=FILE   write this CPU's raw CPUID dump to FILE (with `cpu` or `check`)\n"
        "      --pci-dump=FILE     read an `lspci -x` dump instead of the live PCI bus\n"
        "\n"
        "OpenCL and smoke test:\n"
        "      --smoke=WHICH       all (default), gpu or none: which devices get the smoke test\n"
        "                          (none also skips the CUDA smoke test)\n"
        "      --no-smoke          same as --smoke=none\n"
        "      --smoke-size=N      matrix size for the smoke test (default 256, 1..4096)\n"
        "      --device=P[:D]      only platform P (device D) in opencl/list/smoke/bench\n"
        "      --prop=TEXT         only properties whose name contains TEXT, ignoring case (opencl)\n"
        "\n"
        "Benchmark (bench):\n"
        "      --bench-time=SECONDS  time budget of the whole run, split over the devices and the\n"
        "                          CPU BLAS (default 10, max 3600)\n"
        "      --bench-precision=LIST  comma-separated fp32, fp64, fp16 (default all the device has)\n"
        "      --plot=FILE         also draw GFLOPS against N into FILE (.svg or .png; needs a build\n"
        "                          with cairo, else exit status 2)\n"
        "\n"
        "Gating:\n"
        "      --require=LIST      comma-separated needs; each unmet one is an error (repeatable):\n"
        "                          gpu, opencl, fp64, gpus>=N, opencl-version>=X.Y, cuda,\n"
        "                          cuda>=X.Y, compute-capability>=X.Y,\n"
        "                          x86-64-v1..x86-64-v4, or a CPU flag (avx, avx2, avx512f...)\n"
        "\n"
        "  -h, --help              this help\n"
        "  -V, --version           the version\n"
        "\n"
        "Exit status:\n"
        "  0  ready: no error finding and every --require met\n"
        "  1  not ready: at least one error finding or unmet requirement\n"
        "  2  usage error or unusable input (the message names the option or file;\n"
        "     a snapshot that is not one, truncated, or unsafe to unpack)\n"
        "  3  gpucheckup itself failed (out of memory, cannot write the output)\n"
        "\n"
        "See gpucheckup(1) for every finding ID and the JSON format.\n",
        out);
}

bool cli_wants_json(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "--format=json") == 0)
            return true;
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc && strcmp(argv[i + 1], "json") == 0)
            return true;
    }
    return false;
}

void cli_options_free(struct cli_options *o)
{
    for (size_t i = 0; i < o->n_requires; i++)
        free(o->requires[i]);
    free(o->requires);
    o->requires = NULL;
    o->n_requires = 0;
}

static int cli_add_requires(struct cli_options *o, const char *arg, char *err, size_t errlen)
{
    char *copy = strdup(arg);
    if (!copy)
        return -1;
    int rc = 0;
    char *save = NULL;
    size_t added = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        str_trim(tok);
        if (!*tok)
            continue;
        char **p = realloc(o->requires, (o->n_requires + 1) * sizeof(*p));
        if (!p) {
            rc = -1;
            break;
        }
        o->requires = p;
        o->requires[o->n_requires] = strdup(tok);
        if (!o->requires[o->n_requires]) {
            rc = -1;
            break;
        }
        o->n_requires++;
        added++;
    }
    free(copy);
    if (rc == 0 && added == 0) {
        snprintf(err, errlen, "--require: empty requirement list");
        rc = -1;
    }
    return rc;
}

/* Parse "P" or "P:D" (non-negative integers). */
static int cli_parse_device(const char *s, int *p, int *d)
{
    char *colon = strchr(s, ':');
    uint64_t a, b;
    if (!colon) {
        if (str_to_u64(s, 10, &a) < 0 || a > 65535)
            return -1;
        *p = (int)a;
        *d = -1;
        return 0;
    }
    char *left = strndup(s, (size_t)(colon - s));
    if (!left)
        return -1;
    int rc = str_to_u64(left, 10, &a);
    free(left);
    if (rc < 0 || a > 65535 || str_to_u64(colon + 1, 10, &b) < 0 || b > 65535)
        return -1;
    *p = (int)a;
    *d = (int)b;
    return 0;
}

/* True if S ends with SUFFIX, ignoring ASCII case. */
static bool str_ends_with_nocase(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* Parse "fp32,fp64,fp16" (any non-empty subset, any order, no empty items) into a bit set. */
static int cli_parse_precisions(const char *s, unsigned *out)
{
    static const char *const names[] = {"fp32", "fp64", "fp16"};
    unsigned set = 0;
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        while (i < 3 && !(strlen(names[i]) == len && strncmp(p, names[i], len) == 0))
            i++;
        if (i == 3)
            return -1;
        set |= 1u << i;
        if (!p[len])
            break;
        p += len + 1;
    }
    *out = set;
    return 0;
}

/* The options of `bench`: 0, 1 when C is not one of them, or -1 with ERR set. */
static int cli_option_bench(int c, struct cli_options *o, char *err, size_t errlen)
{
    double d;
    switch (c) {
    case OPT_BENCH_TIME:
        if (str_to_double(optarg, &d) < 0 || d <= 0 || d > CLI_MAX_BENCH_TIME_S) {
            snprintf(err, errlen, "--bench-time: '%.*s%s' is not a number of seconds above 0 and at most %.0f",
                     CLI_QUOTE(optarg), CLI_MAX_BENCH_TIME_S);
            return -1;
        }
        o->bench_time_s = d;
        return 0;
    case OPT_BENCH_PRECISION:
        if (cli_parse_precisions(optarg, &o->bench_precs) < 0) {
            snprintf(err, errlen, "--bench-precision: '%.*s%s' is not a comma-separated list of fp32, fp64, fp16",
                     CLI_QUOTE(optarg));
            return -1;
        }
        return 0;
    case OPT_PLOT:
        if (!*optarg) {
            snprintf(err, errlen, "--plot: empty file name");
            return -1;
        }
        if (!str_ends_with_nocase(optarg, ".svg") && !str_ends_with_nocase(optarg, ".png")) {
            snprintf(err, errlen, "--plot: '%.*s%s' does not end in .svg or .png (the format comes from it)",
                     CLI_QUOTE(optarg));
            return -1;
        }
        o->plot = optarg;
        return 0;
    default:
        return 1;
    }
}

/* One option that takes a checked value: 0, 1 when C is not one of them, or -1 with ERR set. */
static int cli_option_value(int c, struct cli_options *o, char *err, size_t errlen)
{
    double d;
    uint64_t u;
    switch (c) {
    case OPT_FORMAT:
        for (size_t i = 0; cli_format_names[i]; i++)
            if (strcmp(optarg, cli_format_names[i]) == 0) {
                o->format = (enum cli_format)i;
                return 0;
            }
        snprintf(err, errlen, "--format: '%.*s%s' is not a format (use text, json, junit, prometheus, nfd or github)",
                 CLI_QUOTE(optarg));
        return -1;
    case 'o':
        if (!*optarg) {
            snprintf(err, errlen, "--output: empty file name");
            return -1;
        }
        o->output = optarg;
        return 0;
    case OPT_ROOT:
        if (!*optarg) {
            snprintf(err, errlen, "--root: empty directory name");
            return -1;
        }
        o->root = optarg;
        return 0;
    case OPT_TIMEOUT:
        if (str_to_double(optarg, &d) < 0 || d <= 0 || d > CLI_MAX_TIMEOUT_S) {
            snprintf(err, errlen, "--timeout: '%.*s%s' is not a number of seconds between 0 and %.0f",
                     CLI_QUOTE(optarg), CLI_MAX_TIMEOUT_S);
            return -1;
        }
        o->timeout_s = d;
        return 0;
    case OPT_COLOR:
        if (strcmp(optarg, "auto") == 0)
            o->color = CLI_COLOR_AUTO;
        else if (strcmp(optarg, "always") == 0)
            o->color = CLI_COLOR_ALWAYS;
        else if (strcmp(optarg, "never") == 0)
            o->color = CLI_COLOR_NEVER;
        else {
            snprintf(err, errlen, "--color: '%.*s%s' is not one of auto, always, never", CLI_QUOTE(optarg));
            return -1;
        }
        return 0;
    case OPT_CPUID_DUMP:
    case OPT_SAVE_CPUID:
    case OPT_PCI_DUMP:
        if (!*optarg) {
            snprintf(err, errlen, "--%s: empty file name",
                     c == OPT_CPUID_DUMP ? "cpuid-dump" : c == OPT_SAVE_CPUID ? "save-cpuid" : "pci-dump");
            return -1;
        }
        if (c == OPT_CPUID_DUMP)
            o->cpuid_dump = optarg;
        else if (c == OPT_SAVE_CPUID)
            o->save_cpuid = optarg;
        else
            o->pci_dump = optarg;
        return 0;
    case OPT_SMOKE:
        if (strcmp(optarg, "all") == 0)
            o->smoke = CLI_SMOKE_ALL;
        else if (strcmp(optarg, "gpu") == 0)
            o->smoke = CLI_SMOKE_GPU;
        else if (strcmp(optarg, "none") == 0)
            o->smoke = CLI_SMOKE_NONE;
        else {
            snprintf(err, errlen, "--smoke: '%.*s%s' is not one of all, gpu, none", CLI_QUOTE(optarg));
            return -1;
        }
        return 0;
    case OPT_SMOKE_SIZE:
        if (str_to_u64(optarg, 10, &u) < 0 || u < 1 || u > CLI_MAX_SMOKE_SIZE) {
            snprintf(err, errlen, "--smoke-size: '%.*s%s' is not a whole number from 1 to %u", CLI_QUOTE(optarg),
                     CLI_MAX_SMOKE_SIZE);
            return -1;
        }
        o->smoke_size = (unsigned)u;
        return 0;
    case OPT_DEVICE:
        if (cli_parse_device(optarg, &o->device_platform, &o->device_index) < 0) {
            snprintf(err, errlen, "--device: '%.*s%s' is not P or P:D (platform and device indices)",
                     CLI_QUOTE(optarg));
            return -1;
        }
        return 0;
    case OPT_REQUIRE:
        if (cli_add_requires(o, optarg, err, errlen) < 0) {
            if (!err[0])
                snprintf(err, errlen, "--require: out of memory");
            return -1;
        }
        return 0;
    default:
        return cli_option_bench(c, o, err, errlen);
    }
}

/* One option returned by getopt_long: 0, or -1 with ERR set. */
static int cli_option(int c, char **argv, struct cli_options *o, char *err, size_t errlen)
{
    int rc = cli_option_value(c, o, err, errlen);
    if (rc <= 0)
        return rc;
    switch (c) {
    case OPT_JSON:
        o->format = CLI_FORMAT_JSON;
        break;
    case OPT_COMPACT:
        o->compact = true;
        break;
    case OPT_LIVE:
        o->live = true;
        break;
    case OPT_NO_REDACT:
        o->no_redact = true;
        break;
    case 'q':
        o->quiet = true;
        break;
    case 'v':
        o->verbose++;
        break;
    case 'h':
        o->help = true;
        break;
    case 'V':
        o->version = true;
        break;
    case OPT_LIST_CHECKS:
        o->list_checks = true;
        break;
    case OPT_NO_SMOKE:
        o->smoke = CLI_SMOKE_NONE;
        break;
    case OPT_PROP:
        o->prop = optarg;
        break;
    case ':':
        if (optopt >= OPT_FORMAT || optopt == 0)
            snprintf(err, errlen, "%.*s%s: missing value", CLI_QUOTE(argv[optind - 1]));
        else
            snprintf(err, errlen, "-%c: missing value", optopt);
        return -1;
    case '?':
    default:
        if (optopt && optopt < OPT_FORMAT)
            snprintf(err, errlen, "unknown option '-%c' (see --help)", optopt);
        else
            snprintf(err, errlen, "unknown option '%.*s%s' (see --help)", CLI_QUOTE(argv[optind - 1]));
        return -1;
    }
    return 0;
}


int cli_parse(int argc, char **argv, struct cli_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->command = "check";
    o->timeout_s = CLI_DEFAULT_TIMEOUT_S;
    o->smoke_size = CLI_DEFAULT_SMOKE_SIZE;
    o->device_platform = -1;
    o->device_index = -1;
    o->bench_time_s = CLI_DEFAULT_BENCH_TIME_S;
    o->bench_precs = CLI_BENCH_PREC_ALL;
    err[0] = '\0';

    optind = 0; /* full re-initialisation of getopt (GNU), so tests can parse repeatedly */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:qvhV", cli_long_options, NULL)) != -1) {
        if (cli_option(c, argv, o, err, errlen) < 0)
            return -1;
    }
    /* GNU getopt moves operands behind the options: at most one, the command. */
    if (optind < argc) {
        const char *cmd = argv[optind++];
        if (optind < argc) {
            snprintf(err, errlen, "unexpected argument '%.*s%s' after command '%.*s%s'", CLI_QUOTE(argv[optind]),
                     CLI_QUOTE(cmd));
            return -1;
        }
        o->command = NULL;
        for (size_t i = 0; cli_commands[i]; i++)
            if (strcmp(cmd, cli_commands[i]) == 0)
                o->command = cli_commands[i];
        if (!o->command) {
            snprintf(err, errlen, "unknown command '%.*s%s' (commands: check, cpu, pci, cuda, icd, opencl, list, smoke, snapshot, bench)",
                     CLI_QUOTE(cmd));
            return -1;
        }
    }
    return 0;
}
