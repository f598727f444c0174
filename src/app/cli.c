/* cli.c: command-line options of gpucheckup, parsed with getopt_long into one struct. */
#include "cli.h"

#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor.h"
#include "probe.h"
#include "strutil.h"

const char *const cli_format_names[] = {"text", "json", "junit", "prometheus", "nfd", "github", NULL};

/* The commands that are not a probe's (each probe's name is a command too), with their --help text. */
static const struct {
    const char *name, *usage, *help;
} cli_core_commands[] = {
    {"check", "check", "every probe, then the verdict (the default)"},
    {"snapshot", "snapshot -o FILE.tar.gz",
     "`check`, then everything it read and found into FILE.tar.gz for another\n"
     "machine (hostnames, serials, MACs, user names redacted); the report\n"
     "goes to stdout"},
};
#define CLI_N_CORE_COMMANDS (sizeof(cli_core_commands) / sizeof(cli_core_commands[0]))

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
    OPT_DEVICE,
    OPT_PROP,
    OPT_REQUIRE,
    OPT_JSON,
    OPT_NO_REDACT,
    OPT_HEALTH,
    OPT_COMPLETION,
    OPT_PROBE = 0x200, /* + the index of a probe's option in cli_parse's table */
};

/* At most this many options from the probes: beyond, cli_parse fails ("internal: ..."), and so does every
 * test that parses options. */
#define CLI_MAX_PROBE_OPTIONS 64

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
    {"device", required_argument, NULL, OPT_DEVICE},
    {"prop", required_argument, NULL, OPT_PROP},
    {"require", required_argument, NULL, OPT_REQUIRE},
    {"health", no_argument, NULL, OPT_HEALTH},
    {"completion", required_argument, NULL, OPT_COMPLETION},
};
#define CLI_N_LONG_OPTIONS (sizeof(cli_long_options) / sizeof(cli_long_options[0]))

/* HEAD, then TEXT from column COL (its further lines there too). A HEAD that does not leave a space
 * before COL gets TEXT on the next line when OWN_LINE, else two spaces after it. */
static void cli_help_row(FILE *out, const char *head, int col, bool own_line, const char *text)
{
    int w = fprintf(out, "%s", head);
    if (w + 1 < col)
        fprintf(out, "%*s", col - w, "");
    else if (own_line)
        fprintf(out, "\n%*s", col, "");
    else
        fputs("  ", out);
    const char *p = text ? text : "";
    do {
        size_t n = strcspn(p, "\n");
        fprintf(out, "%.*s\n", (int)n, p);
        p += n;
        if (*p && *++p)
            fprintf(out, "%*s", col, "");
    } while (*p);
}

/* TEXT from column COL, broken at spaces so that no line passes WIDTH columns (a word longer than the
 * room left stands alone on its line). */
static void cli_help_wrap(FILE *out, const char *text, int col, int width)
{
    int at = 0; /* columns used on the current line after COL; 0: nothing yet */
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        int n = (int)strcspn(p, " ");
        if (n == 0)
            break;
        if (at > 0 && col + at + 1 + n > width) {
            fputc('\n', out);
            at = 0;
        }
        if (at == 0)
            fprintf(out, "%*s%.*s", col, "", n, p);
        else
            fprintf(out, " %.*s", n, p);
        at += (at > 0) + n;
        p += n;
    }
    fputc('\n', out);
}

static void cli_help_command(FILE *out, const char *usage, const char *text)
{
    char head[64];
    snprintf(head, sizeof(head), "  %s", usage);
    cli_help_row(out, head, 21, true, text);
}

/* Each probe's options under its heading, in registry order. */
static void cli_help_probe_options(FILE *out)
{
    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        if (!p->options || !p->options[0].name)
            continue;
        fprintf(out, "\n%s:\n", p->options_title ? p->options_title : p->name);
        for (const struct probe_option *po = p->options; po->name; po++) {
            char head[128];
            snprintf(head, sizeof(head), "      --%s%s%s", po->name, po->arg ? "=" : "", po->arg ? po->arg : "");
            cli_help_row(out, head, 26, false, po->help);
        }
    }
}

void cli_print_help(FILE *out)
{
    fputs("Usage: gpucheckup [COMMAND] [OPTIONS]\n"
          "Is this machine ready to compute on its GPU, and if not, exactly why not?\n"
          "\n"
          "Commands:\n",
          out);
    cli_help_command(out, cli_core_commands[0].usage, cli_core_commands[0].help);
    for (size_t i = 0; probe_registry[i]; i++)
        cli_help_command(out, probe_registry[i]->name, probe_registry[i]->title);
    for (size_t i = 0; probe_registry[i]; i++)
        if (probe_registry[i]->alias)
            cli_help_command(out, probe_registry[i]->alias, probe_registry[i]->alias_title);
    for (size_t i = 1; i < CLI_N_CORE_COMMANDS; i++)
        cli_help_command(out, cli_core_commands[i].usage, cli_core_commands[i].help);
    fputs(
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
        "      --completion=SHELL  print the bash or zsh completion script (from this option\n"
        "                          table), then exit\n"
        "      --health            for health checkers (Slurm, NHC, node-problem-detector): one\n"
        "                          line of at most 80 characters on stdout (READY, NOT-READY or\n"
        "                          UNKNOWN, the root cause's finding ID and subject), exit 0\n"
        "                          ready, 1 not ready, 2 unknown (usage error, gpucheckup's own\n"
        "                          failure, --timeout spent); the report goes only to -o FILE\n"
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
        "OpenCL devices:\n"
        "      --device=P[:D]      only platform P (device D) in opencl/list/smoke/bench\n"
        "      --prop=TEXT         only properties whose name contains TEXT, ignoring case (opencl)\n",
        out);
    cli_help_probe_options(out);
    fputs("\n"
          "Gating:\n"
          "      --require=LIST      comma-separated needs; each unmet one is an error (repeatable):\n",
          out);
    char *forms = doctor_require_forms(true);
    cli_help_wrap(out, forms ? forms : "(out of memory)", 26, 80);
    free(forms);
    fputs(
        "\n"
        "  -h, --help              this help\n"
        "  -V, --version           the version\n"
        "\n"
        "Exit status:\n"
        "  0  ready: no error finding and every --require met\n"
        "  1  not ready: at least one error finding or unmet requirement\n"
        "  2  usage error or unusable input (the message names the option or file;\n"
        "     a snapshot that is not one, truncated, or unsafe to unpack)\n"
        "  3  gpucheckup itself failed (out of memory, cannot write the output, or\n"
        "     cannot load the library the command needs: libxml2 for --format=junit,\n"
        "     libarchive for snapshots, cairo for bench's chart)\n"
        "\n"
        "See gpucheckup(1) for every finding ID and the JSON format.\n",
        out);
}

bool cli_wants_health(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--health") == 0)
            return true;
    }
    return false;
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

/* One option that takes a checked value: 0, 1 when C is not one of them, or -1 with ERR set. */
static int cli_option_value(int c, struct cli_options *o, char *err, size_t errlen)
{
    double d;
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
    case OPT_DEVICE:
        if (cli_parse_device(optarg, &o->device_platform, &o->device_index) < 0) {
            snprintf(err, errlen, "--device: '%.*s%s' is not P or P:D (platform and device indices)",
                     CLI_QUOTE(optarg));
            return -1;
        }
        return 0;
    case OPT_COMPLETION:
        if (strcmp(optarg, "bash") != 0 && strcmp(optarg, "zsh") != 0) {
            snprintf(err, errlen, "--completion: '%.*s%s' is not bash or zsh", CLI_QUOTE(optarg));
            return -1;
        }
        o->completion = optarg;
        return 0;
    case OPT_REQUIRE:
        if (cli_add_requires(o, optarg, err, errlen) < 0) {
            if (!err[0])
                snprintf(err, errlen, "--require: out of memory");
            return -1;
        }
        return 0;
    default:
        return 1;
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
    case OPT_HEALTH:
        o->health = true;
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


/* getopt's table: the core's options, then every probe's in registry order (their defaults set). */
struct cli_table {
    struct option longopts[CLI_N_LONG_OPTIONS + CLI_MAX_PROBE_OPTIONS + 1];
    const struct probe_option *probe[CLI_MAX_PROBE_OPTIONS]; /* OPT_PROBE + k is probe[k] */
};

static int cli_table_build(struct cli_table *t, char *err, size_t errlen)
{
    memcpy(t->longopts, cli_long_options, sizeof(cli_long_options));
    size_t n = CLI_N_LONG_OPTIONS, k = 0;
    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        if (p->options_reset)
            p->options_reset();
        for (const struct probe_option *po = p->options; po && po->name; po++) {
            for (size_t j = 0; j < n; j++)
                if (strcmp(t->longopts[j].name, po->name) == 0) {
                    snprintf(err, errlen, "internal: option --%s is declared twice (probe %s)", po->name, p->name);
                    return -1;
                }
            if (k == CLI_MAX_PROBE_OPTIONS || !po->parse) {
                snprintf(err, errlen, "internal: probe %s's option --%s does not fit", p->name, po->name);
                return -1;
            }
            t->probe[k] = po;
            t->longopts[n++] = (struct option){po->name, po->arg ? required_argument : no_argument, NULL,
                                               OPT_PROBE + (int)k};
            k++;
        }
    }
    t->longopts[n] = (struct option){NULL, 0, NULL, 0};
    return 0;
}

int cli_each_option(void (*fn)(void *arg, const char *name, bool has_value, const char *metavar), void *arg)
{
    /* the value names of the core's options that take one (--help's text); the probes' come from their rows */
    static const struct {
        const char *name, *metavar;
    } metavars[] = {
        {"format", "FMT"}, {"output", "FILE"}, {"root", "DIR"}, {"timeout", "SECONDS"}, {"color", "WHEN"},
        {"colour", "WHEN"}, {"cpuid-dump", "FILE"}, {"save-cpuid", "FILE"}, {"pci-dump", "FILE"},
        {"device", "P[:D]"}, {"prop", "TEXT"}, {"require", "LIST"}, {"completion", "SHELL"},
    };
    struct cli_table *t = malloc(sizeof(*t));
    char err[256];
    if (!t || cli_table_build(t, err, sizeof(err)) < 0) {
        free(t);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; t->longopts[i].name; i++) {
        const char *mv = NULL;
        if (t->longopts[i].val >= OPT_PROBE)
            mv = t->probe[k++]->arg;
        for (size_t j = 0; !mv && j < sizeof(metavars) / sizeof(metavars[0]); j++)
            if (strcmp(metavars[j].name, t->longopts[i].name) == 0)
                mv = metavars[j].metavar;
        fn(arg, t->longopts[i].name, t->longopts[i].has_arg == required_argument, mv);
    }
    free(t);
    return 0;
}

/* A probe's option: its parser stores the value; a complaint gets the option's name before it. */
static int cli_probe_option(const struct probe_option *po, char *err, size_t errlen)
{
    char why[256] = "";
    if (po->parse(po->arg ? optarg : NULL, why, sizeof(why)) == 0)
        return 0;
    snprintf(err, errlen, "--%s: %s", po->name, why[0] ? why : "bad value");
    return -1;
}

/* The command called NAME (a static string), or NULL. */
static const char *cli_command(const char *name)
{
    for (size_t i = 0; i < CLI_N_CORE_COMMANDS; i++)
        if (strcmp(name, cli_core_commands[i].name) == 0)
            return cli_core_commands[i].name;
    const struct probe *p = probe_of_command(name);
    return !p ? NULL : strcmp(p->name, name) == 0 ? p->name : p->alias;
}

static void cli_append(char *buf, size_t len, const char *name)
{
    size_t at = strlen(buf);
    snprintf(buf + at, len - at, "%s%s", at ? ", " : "", name);
}

/* "check, cpu, ..., list, snapshot": every command, in --help's order, into BUF. */
const char *cli_command_list(char *buf, size_t len)
{
    buf[0] = '\0';
    cli_append(buf, len, cli_core_commands[0].name);
    for (size_t i = 0; probe_registry[i]; i++)
        cli_append(buf, len, probe_registry[i]->name);
    for (size_t i = 0; probe_registry[i]; i++)
        if (probe_registry[i]->alias)
            cli_append(buf, len, probe_registry[i]->alias);
    for (size_t i = 1; i < CLI_N_CORE_COMMANDS; i++)
        cli_append(buf, len, cli_core_commands[i].name);
    return buf;
}

int cli_parse(int argc, char **argv, struct cli_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->command = "check";
    o->timeout_s = CLI_DEFAULT_TIMEOUT_S;
    o->device_platform = -1;
    o->device_index = -1;
    err[0] = '\0';
    struct cli_table t;
    if (cli_table_build(&t, err, errlen) < 0)
        return -1;

    optind = 0; /* full re-initialisation of getopt (GNU), so tests can parse repeatedly */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:qvhV", t.longopts, NULL)) != -1) {
        int rc = c >= OPT_PROBE && c < OPT_PROBE + CLI_MAX_PROBE_OPTIONS
                     ? cli_probe_option(t.probe[c - OPT_PROBE], err, errlen)
                     : cli_option(c, argv, o, err, errlen);
        if (rc < 0)
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
        o->command = cli_command(cmd);
        if (!o->command) {
            char list[1024];
            snprintf(err, errlen, "unknown command '%.*s%s' (commands: %s)", CLI_QUOTE(cmd),
                     cli_command_list(list, sizeof(list)));
            return -1;
        }
    }
    return 0;
}
