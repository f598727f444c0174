/* result_cpu.h: the cpu probe's typed facts other probes read: architecture, x86-64 level, usable flags. */
#ifndef GPUCHECKUP_RESULT_CPU_H
#define GPUCHECKUP_RESULT_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"
#include "typed.h"

/* Issue 38, as result_pci: the facts others read, typed, beside the section's JSON, which the probe still
 * builds as data. result_cpu_ops has no to_json: the JSON printed is the data, byte for byte; the probe's
 * own section and a captured one are read into these facts by one parser, which takes nothing out. */

/* One data.flags member: a SIMD flag and whether the CPU and the OS let a program use it. */
struct result_cpu_flag {
    char *name;
    enum gc_tri usable;
};

struct result_cpu {
    char *architecture;  /* data.architecture ("x86_64", "aarch64"...), NULL: unknown */
    int x86_64_level;    /* data.x86_64_level (1..4), -1: unknown (or not x86) */
    struct result_cpu_flag *flags;
    size_t n_flags;
};

extern const struct report_result_ops result_cpu_ops;

/* The facts of the cpu section's DATA, or NULL on allocation failure. DATA is left as it is. */
struct result_cpu *result_cpu_read(json_object *data);
/* The cpu facts of R when the cpu section ran ok, else NULL. */
const struct result_cpu *result_cpu_get(const struct report *r);
/* Is flag NAME usable: unknown when C is NULL or the section does not say. */
enum gc_tri result_cpu_flag(const struct result_cpu *c, const char *name);

#endif
