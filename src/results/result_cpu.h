/* result_cpu.h: the cpu probe's typed facts other probes read: architecture, x86-64 level, usable flags. */
#ifndef GPUCHECKUP_RESULT_CPU_H
#define GPUCHECKUP_RESULT_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "report.h"
#include "typed.h"

/* Issue 38: the facts others read, typed, and the source of those members' JSON (result_cpu_ops.to_json).
 * The probe builds the section as data, then reads it into these facts with FROM_JSON, which takes each
 * member of the expected shape out of DATA and leaves a null in its place (KEEPS_PLACES): the section
 * prints DATA's members in their order, the typed ones from here, so its JSON stays byte for byte whatever
 * the order the probe's paths (or an older capture) wrote. A member of another shape stays in DATA. */

/* One data.flags member: a SIMD flag and whether the CPU and the OS let a program use it. */
struct result_cpu_flag {
    char *name;
    enum gc_tri usable;
};

/* Bits of struct result_cpu.have: the members the result prints (to_json); a live run has them all. */
enum {
    RESULT_CPU_HAVE_ARCHITECTURE = 1u << 0,
    RESULT_CPU_HAVE_X86_64_LEVEL = 1u << 1,
    RESULT_CPU_HAVE_FLAGS = 1u << 2,
};

struct result_cpu {
    unsigned have;       /* RESULT_CPU_HAVE_* */
    char *architecture;  /* data.architecture ("x86_64", "aarch64"...), NULL: unknown */
    int x86_64_level;    /* data.x86_64_level (1..4), -1: unknown (or not x86) */
    bool flags_known;    /* data.flags is an object (null: not x86, or no flag table) */
    struct result_cpu_flag *flags;
    size_t n_flags;
};

extern const struct report_result_ops result_cpu_ops;

/* The facts of the cpu section's DATA, or NULL on allocation failure. DATA is left as it is, and the
 * result prints nothing (HAVE is 0): for a reader of a section that has no result. */
struct result_cpu *result_cpu_read(json_object *data);
/* Free a result of result_cpu_read (NULL is fine). */
void result_cpu_free(struct result_cpu *r);
/* The cpu facts of R when the cpu section ran ok, else NULL. */
const struct result_cpu *result_cpu_get(const struct report *r);
/* Is flag NAME usable: unknown when C is NULL or the section does not say. */
enum gc_tri result_cpu_flag(const struct result_cpu *c, const char *name);

#endif
