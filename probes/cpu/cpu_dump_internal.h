/* cpu_dump_internal.h: what the CPUID dump readers (cpu_dump*.c) share; private to probes/cpu. */
#ifndef GPUCHECKUP_CPU_DUMP_INTERNAL_H
#define GPUCHECKUP_CPU_DUMP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu_dump.h"

/* The parser's state: the dump being filled, which logical CPU lines go to, and per CPU whether
 * leaves 0 and 1 were seen (without them there is nothing to decode). */
struct cpu_dump_state {
    struct cpu_dump *d;
    bool *seen0, *seen1;
    long cur; /* logical CPU the next leaf belongs to; -1 before the first */
};

/* cpu_dump_state.c: the state's operations and scanning helpers, shared by every format's reader. */
/* Room for N logical CPUs in the state's dump. 0 or -1. */
int cpu_dump_grow(struct cpu_dump_state *st, size_t n);
int cpu_dump_start_cpu(struct cpu_dump_state *st, unsigned long idx, unsigned lineno, char **err);
int cpu_dump_put(struct cpu_dump_state *st, uint32_t leaf, uint32_t sub, const uint32_t regs[4]);
/* "line N is not part of WHAT: "<excerpt>"" (heap). */
char *cpu_dump_bad_line(unsigned lineno, const char *line, const char *what);
int cpu_dump_hex32(const char **p, unsigned digits, bool exact, uint32_t *v);
const char *cpu_dump_blanks(const char *s);

/* cpu_dump.c: the end of a parse. */
int cpu_dump_finish(struct cpu_dump_state *st, bool arm, char **err);

/* cpu_dump_aida.c: the AIDA64/InstLatx64 line reader and its scanning helpers (also used by format
 * detection). */
/* The decimal number after PREFIX at the start of S (blanks allowed before it), or -1. */
long cpu_dump_number_after(const char *s, const char *prefix);
bool cpu_dump_aida_leafish(const char *line, uint32_t *leaf, const char **after);
long cpu_dump_aida_header(const char *line);
int cpu_dump_line_aida(struct cpu_dump_state *st, const char *line, unsigned lineno, int64_t *prev_leaf,
                       uint32_t *prev_sub, char **err);

/* cpu_dump_cpuidr.c: `cpuid -r` lines. */
bool cpu_dump_tool_leafish(const char *line);
bool cpu_dump_tool_header(const char *line);
int cpu_dump_line_tool(struct cpu_dump_state *st, const char *line, unsigned lineno, char **err);

#endif
