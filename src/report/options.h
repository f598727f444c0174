/* options.h: what the command line asks of a run (struct cli_options, parsed by src/app/cli.c), and its exit codes: what probes and writers read. */
#ifndef GPUCHECKUP_OPTIONS_H
#define GPUCHECKUP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Exit codes, as documented in --help, the man page and the README. */
enum {
    GC_EXIT_READY = 0,
    GC_EXIT_NOT_READY = 1,
    GC_EXIT_USAGE = 2,
    GC_EXIT_INTERNAL = 3,
};

struct snapshot;

/* Output formats; every one walks the same report (see writer.h). */
enum cli_format {
    CLI_FORMAT_TEXT = 0,
    CLI_FORMAT_JSON,
    CLI_FORMAT_JUNIT,      /* JUnit XML for CI test reports */
    CLI_FORMAT_PROMETHEUS, /* node_exporter textfile collector */
    CLI_FORMAT_NFD,        /* Kubernetes Node Feature Discovery features.d file */
    CLI_FORMAT_GITHUB,     /* GitHub Actions workflow commands */
};

/* Format names, indexed by enum cli_format. */
extern const char *const cli_format_names[];
enum cli_color { CLI_COLOR_AUTO = 0, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER };

#define CLI_DEFAULT_TIMEOUT_S 15.0
#define CLI_MAX_TIMEOUT_S 3600.0

/* A value quoted in a message: its first CLI_QUOTE_MAX bytes, then "..." (a huge value would push
 * the explanation out of the caller's message buffer). Use with "'%.*s%s'"; probes' option parsers too. */
#define CLI_QUOTE_MAX 64
#define CLI_QUOTE(s) \
    (int)(strlen(s) > CLI_QUOTE_MAX ? CLI_QUOTE_MAX : strlen(s)), (s), strlen(s) > CLI_QUOTE_MAX ? "..." : ""

struct cli_options {
    const char *command;     /* "check" (default) or a probe name, or "list" */
    enum cli_format format;
    bool compact;
    const char *output;      /* -o FILE, or NULL for stdout */
    const char *root;        /* --root DIR (or a snapshot), or NULL for the live system */
    bool no_redact;          /* snapshot --no-redact: keep hostnames, serials, MACs, user names */
    const struct snapshot *snapshot; /* set by main when --root names a snapshot (not an option) */
    bool live;               /* --live: run live-only probes even under --root */
    double timeout_s;        /* the whole run, end to end */
    enum cli_color color;
    bool quiet;
    int verbose;
    bool help, version, list_checks;
    const char *completion;  /* --completion=bash|zsh: print the completion script */
    bool health;             /* --health: the node health contract (one line, exit 0/1/2; writer.h) */
    /* options the core keeps (main.c's snapshot uses the CPUID ones; --device serves opencl, list, smoke
     * and bench); a probe's own options live in the probe (struct probe.options) */
    const char *cpuid_dump;  /* --cpuid-dump FILE */
    const char *save_cpuid;  /* --save-cpuid FILE */
    const char *pci_dump;    /* --pci-dump FILE */
    int device_platform;     /* --device P[:D]: platform index, or -1 */
    int device_index;        /* device index within it, or -1 for all */
    const char *prop;        /* --prop TEXT: only properties whose name contains TEXT */
    char **requires;         /* --require items, split on commas, each trimmed (owned) */
    size_t n_requires;
};

#endif
