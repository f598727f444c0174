/* cpu_internal.h: what the cpu probe's files share (the run's state, cross-file helpers); private to probes/cpu. */
#ifndef GPUCHECKUP_CPU_INTERNAL_H
#define GPUCHECKUP_CPU_INTERNAL_H

#include <stdbool.h>

#include <json-c/json.h>
#include <libcpuid/libcpuid.h>

#include "cpu_cpuinfo.h"
#include "cpu_dump.h"
#include "cpu_x86.h"
#include "probe.h"

enum cpu_source { CPU_SRC_CPUID, CPU_SRC_DUMP, CPU_SRC_CPUINFO };

/* Everything one run of the probe gathers. */
struct cpu_run {
    struct probe_ctx *ctx;
    struct report_section *sec;
    json_object *d;
    enum cpu_source source;
    struct cpu_raw_data_t live_raw;
    struct cpu_dump dump;
    const struct cpu_raw_data_t *raw; /* the logical CPU decoded (live_raw or dump.raw[0]) */
    struct cpu_leaves leaves;
    struct cpu_x86_view view;
    bool x86;
    char *arch;
    struct cpu_cpuinfo ci;
    bool have_ci;
    bool cross_check;       /* CPUID and cpuinfo describe the same machine */
    char *cmdline_tokens;   /* noxsave / clearcpuid= tokens of /proc/cmdline, or NULL */
    json_object *lib;       /* libcpuid's identification from the isolated child, or NULL */
    char *avx_cause;        /* why AVX is not usable, for the summary line, or NULL */
};

/* cpu_lib.c: libcpuid's identification, run in an isolated child; sets c->lib (or adds a note). */
void cpu_run_libcpuid(struct cpu_run *c);
/* Table row I as the kernel's /proc/cpuinfo lists it: CPU_YES / CPU_NO, or CPU_UNKNOWN when there is
 * no flags line or the kernel has no name for the flag. */
int cpu_kernel_flag(const struct cpu_run *c, size_t i);
/* A non-empty string member of c->lib, or NULL; an int member, or -1. */
const char *cpu_lib_get_str(const struct cpu_run *c, const char *key);
int cpu_lib_get_int(const struct cpu_run *c, const char *key);

/* cpu_findings.c: the x86 findings (USABLE_OUT gets the usable flags, CPU_FLAG_MAX entries) and the
 * one-line summaries. */
void cpu_find_x86(struct cpu_run *c, signed char *usable_out);
void cpu_summary_x86(struct cpu_run *c, const signed char *usable);
void cpu_summary_other(struct cpu_run *c);

/* cpu_text.c: the section's text output, from its JSON data. */
void cpu_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

/* The --require names the cpu probe answers (cpu_require.c). */
extern const struct probe_require cpu_requires[];

/* The probe's verdict: its targets and lines (cpu_verdict.c). */
struct doctor_lines;
void cpu_verdict(struct report *r, struct doctor_lines *out);
void cpu_node_labels(const struct report_section *sec,
                     void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg);

#endif
