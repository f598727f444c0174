/* probe.h: the probe interface: each probes/NAME/NAME.c exports one `const struct probe`, listed in registry.c. */
#ifndef GPUCHECKUP_PROBE_H
#define GPUCHECKUP_PROBE_H

#include <stdbool.h>
#include <stdio.h>

#include "checks.h"
#include "options.h"
#include "hostfs.h"
#include "isolate.h"
#include "report.h"

struct snapshot;
struct run_once;
struct clonce_part;

/* Where a run's reads go: computed once per run (probe_mode_of, in main.c) and handed to every probe
 * in its context. Probes ask the predicates below, never --root, --live or the snapshot themselves. */
enum probe_mode {
    /* No --root (or --root /): host files, drivers, CPUID and this process's environment are this
     * machine's, and nothing is replayed. */
    PROBE_MODE_LIVE,
    /* --root DIR, a captured tree: every host file is read from DIR (hostfs); probes that need the live
     * machine (struct probe.needs_live) are skipped; the cpu probe decodes the tree's /proc/cpuinfo (or
     * --cpuid-dump); nothing is loaded, no CPUID read, this process's environment not used. */
    PROBE_MODE_TREE,
    /* --root DIR --live: host files from DIR; the live probes run on this machine (its drivers, its
     * CPUID; the icd probe loads the tree's .icd libraries as this machine finds them). */
    PROBE_MODE_TREE_LIVE,
    /* --root SNAPSHOT (a tarball or its unpacked directory): host files from the snapshot's tree; each
     * probe that needs the live machine is replayed from the captured report (its section and findings),
     * but for a snapshot_rerun probe (icd), which checks the tree again and replays only its live parts
     * (the loader, the drivers' outcomes, the environment, icd.insecure); the cpu probe decodes the
     * snapshot's CPUID dump when it holds one (probe_cpuid_dump). */
    PROBE_MODE_SNAPSHOT,
    /* --root SNAPSHOT --live: host files from the snapshot's tree; the live probes run on this machine and
     * the cpu probe reads this machine's CPUID (nothing of theirs is replayed), except the icd probe: its
     * .icd files are the snapshot's, so it replays its live parts as under PROBE_MODE_SNAPSHOT. */
    PROBE_MODE_SNAPSHOT_LIVE,
};

/* The mode of a run with options O over FS (O->snapshot set when --root named a snapshot). */
enum probe_mode probe_mode_of(const struct cli_options *o, const struct hostfs *fs);
/* May MODE's run use this machine: load drivers, read CPUID, take this process's environment? */
static inline bool probe_mode_live(enum probe_mode m)
{
    return m == PROBE_MODE_LIVE || m == PROBE_MODE_TREE_LIVE || m == PROBE_MODE_SNAPSHOT_LIVE;
}

/* What a probe gets to work with. */
struct probe_ctx {
    const struct cli_options *opts;
    const struct hostfs *fs;  /* every host file read goes through this */
    enum probe_mode mode;     /* the run's (probe_live, probe_host_files, probe_snapshot ask it); a unit
                                 test's context over a tree sets it (0 is PROBE_MODE_LIVE) */
    struct report *report;    /* the deps' sections and findings are there (report_find_section); the
                                 probe runs in a thread beside probes it does not depend on: it writes
                                 only its own section and findings (report_add_finding) */
    int timeout_ms;           /* --timeout: the whole run's budget, end to end (for messages) */
    double deadline_ms;       /* when the run's budget ends, on jsonnum_now_ms's clock: children get
                                 what is left (probe_budget_ms), never more */
    bool budget_spent;        /* set by probe_budget_ms when it had nothing left to give */
    char *error;              /* set (heap) by a probe returning PROBE_INPUT_ERROR: the message */
    const struct snapshot *snapshot; /* the snapshot --root names, or NULL: probes read what it captured
                                        through probe_captured and probe_cpuid_dump only */
    struct run_once *once;    /* isolated work two probes of the run share (src/sandbox/runonce.h), or NULL
                                 outside a run (a unit test's context): each probe then works alone */
};

/* May the probe use this machine: load drivers, read CPUID, take this process's environment
 * (PROBE_MODE_LIVE, TREE_LIVE, SNAPSHOT_LIVE)? */
static inline bool probe_live(const struct probe_ctx *ctx)
{
    return probe_mode_live(ctx->mode);
}
/* Are the host files read this machine's own (no --root: PROBE_MODE_LIVE)? Owners, modes and access
 * rights then speak of this machine, and its user database may name what the files do not. */
static inline bool probe_host_files(const struct probe_ctx *ctx)
{
    return ctx->mode == PROBE_MODE_LIVE;
}
/* Does the run read a snapshot (PROBE_MODE_SNAPSHOT, SNAPSHOT_LIVE): its tree, and what it captured? */
static inline bool probe_snapshot(const struct probe_ctx *ctx)
{
    return ctx->mode == PROBE_MODE_SNAPSHOT || ctx->mode == PROBE_MODE_SNAPSHOT_LIVE;
}

/* The captured inputs, the one way probes reach the snapshot's contents. The captured section of probe
 * NAME (borrowed), or NULL when the run reads no snapshot or it holds none. */
json_object *probe_captured(const struct probe_ctx *ctx, const char *name);
/* The CPUID dump the cpu probe decodes: --cpuid-dump FILE, else under PROBE_MODE_SNAPSHOT the snapshot's
 * own (cpuid.dump), else NULL (CPUID or /proc/cpuinfo). Borrowed. */
const char *probe_cpuid_dump(const struct probe_ctx *ctx);

/* The milliseconds left before CTX's deadline (CTX->timeout_ms when no deadline is set, as in a unit
 * test's context). 0 when the budget is spent; that case also sets CTX->budget_spent, which the run
 * reports as core.timeout-spent. Children are started through probe_isolate_*, which ask it. */
int probe_budget_ms(struct probe_ctx *ctx);
/* When the run's budget ends, on jsonnum_now_ms's clock: CTX->deadline_ms, or for a context without a
 * run around it (a unit test's) CTX->timeout_ms from now. What a child is told as its own deadline. */
double probe_deadline_ms(const struct probe_ctx *ctx);
/* When a child should answer with what it finished, a little before DEADLINE_MS (a tenth of what is
 * left, at most 250 ms), so that the parent still has time to say what did not. */
double probe_answer_by_ms(double deadline_ms);

/* The way a probe starts isolated children (isolate.h): each call gives its children what is left of
 * the run's budget (probe_budget_ms), never more; with none left nothing starts (every result
 * ISOLATE_SPAWN_FAILED with .budget_spent) and CTX->budget_spent is set. Same returns as isolate_run,
 * isolate_run_many and isolate_run_many_cb. */
enum isolate_status probe_isolate_run(struct probe_ctx *ctx, isolate_fn fn, void *arg, struct isolate_result *res);
int probe_isolate_many(struct probe_ctx *ctx, struct isolate_job *jobs, size_t n);
int probe_isolate_many_cb(struct probe_ctx *ctx, struct isolate_job *jobs, size_t n, isolate_done_fn done,
                          void *arg);
/* probe_isolate_many with 1/PART of what is left (PART >= 1): a first try that leaves time for a second. */
int probe_isolate_many_part(struct probe_ctx *ctx, struct isolate_job *jobs, size_t n, int part);

/* Return values of probe.run. */
enum {
    PROBE_DONE = 0,           /* the section's status says how it went (ok, skipped, failed...) */
    PROBE_INPUT_ERROR = -2,   /* unusable user input (e.g. a garbage --cpuid-dump): exit 2, ctx->error */
    PROBE_INTERNAL_ERROR = -3 /* gpucheckup itself failed (out of memory): exit 3, ctx->error */
};

/* Text output state handed to writers and probe printers. */
struct text_out {
    FILE *f;
    bool color;
    int verbose;
    const char *command; /* the command being run ("check", "opencl", "list"...) */
};

/* A further array of catalogue rows, for a probe built from parts that each own their rows (cuda).
 * N points at the count (an extern const size_t of the part's file is not a constant expression). */
struct check_set {
    const struct check *rows;
    const size_t *n;
};

/* Whose root causes explain an unmet requirement (and a verdict target): */
enum probe_chain {
    PROBE_CHAIN_GPU,   /* every finding about the GPU stack (a catalogue layer other than none) */
    PROBE_CHAIN_STACK, /* the owning probe's findings and those of the hardware and kernel layers */
    PROBE_CHAIN_OWN,   /* the owning probe's findings only */
};

/* A --require name a probe answers (struct probe.requires, ended by a row with PARSE NULL). */
struct probe_require {
    const char *form;      /* as --require's error and --help list it: "gpu", "gpus>=N"; for an open
                              family, its short form for --help ("a CPU flag (avx, avx2, ...)"), or NULL */
    char *(*forms)(void);  /* for an open family, the whole list built (heap): "a CPU flag (avx, ...)" */
    /* 0 with *ARG set when NAME is this requirement, -1 when it is not (or malformed). */
    int (*parse)(const char *name, int *arg);
    /* Met? *DETAIL (heap) says why. Reads the report's sections (doctor_facts.h). */
    bool (*eval)(const struct report *r, const char *name, int arg, char **detail);
    enum probe_chain chain;
};

/* A command-line option a probe owns (struct probe.options, ended by a row with NAME NULL): cli.c
 * parses and documents it (--help); the value lives in the probe's own storage, which the probe reads. */
struct probe_option {
    const char *name;  /* the long name without its dashes: "bench-time" */
    const char *arg;   /* the value's name in --help ("SECONDS"), or NULL for an option without a value */
    const char *help;  /* --help's text for it, lines separated by '\n' */
    /* Store VALUE (NULL for an option without one) in the probe's storage: 0, or -1 with what is
     * wrong with it in ERR (cli.c puts "--NAME: " before it). Called while parsing only. */
    int (*parse)(const char *value, char *err, size_t errlen);
};

struct doctor_lines;
struct bus_gpu;

/* The stack a probe's lines are about, in the order people read them: the Summary prints sections by it
 * (registry order within a stack), and the verdict lines come by it too, except the CPU's, which come
 * last (each API, then frameworks, then the CPU: docs/guide.md "The verdict"). PROBE_STACK_UNSET (a
 * probe that says none) comes after all the others. The JSON keeps registry order. */
enum probe_stack {
    PROBE_STACK_UNSET = 0,
    PROBE_STACK_CPU,
    PROBE_STACK_BUS,       /* the GPUs on the PCI bus, WSL2's */
    PROBE_STACK_KERNEL,    /* the kernel log, PCIe errors */
    PROBE_STACK_TOPOLOGY,
    PROBE_STACK_CUDA,
    PROBE_STACK_ROCM,
    PROBE_STACK_OPENCL,    /* the loader, ICDs, platforms and devices, the smoke test */
    PROBE_STACK_LEVELZERO,
    PROBE_STACK_VULKAN,
    PROBE_STACK_FRAMEWORKS,
    PROBE_STACK_BENCH,
    PROBE_STACK_PROCESS,
};
/* The rank of STACK's summary lines (1 first), and of its verdict lines. */
int probe_summary_rank(enum probe_stack stack);
int probe_verdict_rank(enum probe_stack stack);

struct probe {
    const char *name;         /* command name and JSON key: "cpu" */
    const char *title;        /* what its command does, for --help's command list (lines split by '\n') */
    const char *alias;        /* a second command that runs it and prints its section another way (its
                                 print_text reads text_out.command), or NULL: opencl's "list" */
    const char *alias_title;  /* --help's line for the alias */
    bool needs_live;          /* uses this machine (drivers, CPUID): skipped under --root unless --live */
    bool snapshot_rerun;      /* needs_live, yet under --root SNAPSHOT (without --live) it runs: it checks
                                 the tree again and replays the captured live parts itself (icd) */
    bool explicit_only;       /* runs only for its own command (bench: seconds of load), never in `check`
                                 nor as another probe's dependency */
    bool (*in_check)(void);   /* when set, `check` runs it only while this says so (the process probe:
                                 only when one of its options is given); its own command always runs it */
    const char *compute_api;  /* the compute API whose path this probe's findings are on ("opencl", "cuda"),
                                 or NULL for a probe below every API (the bus, the CPU): a verdict line
                                 for an API takes its reasons from that path and the layers below every
                                 API (hardware, firmware, kernel), never from another API's findings */
    const char *compute_api_label; /* the same for people: "OpenCL", "CUDA" */
    enum probe_stack stack;   /* where its summary and verdict lines go among the others' (above) */
    const char *vendor;       /* the one GPU vendor its stack is (vendor.h's name: cuda's is "nvidia"), so
                                 every finding of it is about that vendor; NULL for a probe of any vendor */
    const char *const *deps;  /* probes whose sections or findings this one reads (NULL-terminated, may
                                 be NULL): they run first, also for a single-probe command; a probe
                                 starts as soon as they are done, beside the others (run.c) */
    const struct check *checks; /* finding IDs this probe can emit */
    size_t n_checks;
    const struct check_set *check_sets; /* more rows, ended by {NULL, NULL}; may be NULL */
    const struct probe_require *requires; /* the --require names it answers; may be NULL */
    const struct probe_option *options; /* its command-line options; may be NULL */
    const char *options_title; /* --help's heading above them: "Benchmark (bench)" */
    void (*options_reset)(void); /* set their defaults: cli_parse calls it before parsing; may be NULL */
    /* The kind of typed result it publishes in its section (struct report_result_ops), or NULL when
     * its section holds JSON data only. A captured section (--root FILE.tar.gz) is read back into it. */
    const struct report_result_ops *result;
    /* Its part of the shared OpenCL child (probes/clonce/clonce_parts.h), which that child finds here
     * by walking the registry, or NULL: the icd, opencl and smoke probes have one. */
    const struct clonce_part *clonce_part;
    /* Fill SEC (status, data or typed result, summary lines) and add findings to ctx->report. Never exits, never
     * calls report_add_section. Returns PROBE_DONE, PROBE_INPUT_ERROR or PROBE_INTERNAL_ERROR. */
    int (*run)(struct probe_ctx *ctx, struct report_section *sec);
    /* Work that reads nothing of the deps' results, started on the probe's context as the run starts,
     * before the deps are done: a slow child gets going at once. What it leaves running it hands to
     * the run's run_once (run_once_set_reaper), which finishes it whether or not run is called. May be
     * NULL; the run may skip it (an ASan build does), so run must not count on it. */
    void (*prestart)(struct probe_ctx *ctx);
    /* Called once for each probe of the run, in registry order, before any prestart, thread or child, in
     * the main thread, never skipped: what the whole run must see from its start (the process probe's --pid
     * sets the run's target, isolate_target.c). May be NULL. */
    void (*prepare)(struct probe_ctx *ctx);
    /* The vendor ("nvidia", vendor.h's names) of SUBJECT, a finding's subject, when SUBJECT is something of
     * this probe's (a PCI address, an .icd file) as its section SEC says; NULL otherwise. Where it knows
     * the subject but not its vendor, it may leave a text naming it in *TEXT (a library's path) for the
     * doctor's vendor words, and returns NULL. May be NULL. */
    const char *(*subject_vendor)(const struct report_section *sec, const char *subject, const char **text);
    /* The compute GPUs on the bus this probe sees in its section SEC (compute_path.h's struct bus_gpu), at
     * most MAX into OUT; returns how many there are (may exceed MAX). The doctor judges whether every GPU
     * computes through some API against them. May be NULL. */
    size_t (*bus_gpus)(const struct report_section *sec, struct bus_gpu *out, size_t max);
    /* Its node labels (Kubernetes Node Feature Discovery, --format=nfd): calls EMIT(ARG, GROUP, NAME, VALUE)
     * for each fact worth scheduling on, from its section SEC (which ran ok); the writer checks each
     * value's syntax and leaves out one that breaks it. May be NULL. */
    void (*node_labels)(const struct report_section *sec,
                        void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg);
    /* Its verdict targets and lines for people, once causes are linked: sets its targets with
     * report_set_target and appends its lines to OUT (doctor.h). The doctor calls the probes from the
     * last to the first, after setting the gpu target itself. May be NULL. */
    void (*verdict)(struct report *r, struct doctor_lines *out);
    /* Today's summary label for LABEL, one an older gpucheckup wrote ("Loader" before every label named
     * its stack): heap, or NULL when LABEL is today's. A snapshot's captured lines are replayed through
     * it. May be NULL. */
    char *(*label_today)(const char *label);
    /* Print the section's details for people (walks SEC's typed result or SEC->data only). May be NULL. */
    void (*print_text)(const struct report_section *sec, const struct report *r, struct text_out *t);
};

/* The registry: every probe in report order (NULL-terminated); they run as their deps allow. */
extern const struct probe *const probe_registry[];
/* The probe called NAME, or NULL. */
const struct probe *probe_find(const char *name);
/* The probe COMMAND runs: the one of that name, or whose alias it is (list: opencl); NULL for the core's
 * commands (check, snapshot) and unknown ones. */
const struct probe *probe_of_command(const char *command);
/* True if probe NAME runs for command COMMAND (itself, "check", or as a dependency); an explicit_only
 * probe (bench) runs for its own command only. */
bool probe_selects(const char *command, const char *name);
/* Every registered probe's catalogue rows (what report_new hands the report). */
const struct checks_catalogue *probe_catalogue(void);

/* Text helpers for probe printers: colour only when T->color. */
void text_heading(struct text_out *t, const char *title);
/* "  key: value" with the key padded to a column. */
void text_kv(struct text_out *t, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A mark such as "[ ok ]" (coloured), as text. */
const char *text_mark(const struct text_out *t, enum report_mark m);
/* SGR colour start/end for a mark (empty strings without colour). */
const char *text_color_on(const struct text_out *t, enum report_mark m);
const char *text_color_off(const struct text_out *t);

#endif
