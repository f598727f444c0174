/* cpu_cpuinfo.h: parsing the kernel's /proc/cpuinfo (x86 "flags", ARM "Features", others) into facts. */
#ifndef GPUCHECKUP_CPU_CPUINFO_H
#define GPUCHECKUP_CPU_CPUINFO_H

#include <stdbool.h>
#include <stddef.h>

struct cpu_cpuinfo {
    int processors;        /* "processor" entries (online logical CPUs), 0 when none */
    int packages;          /* distinct "physical id" values, -1 when the file has none */
    int cores;             /* distinct (physical id, core id) pairs, -1 when the file has none */
    char *arch;            /* guessed from the fields: "x86_64", "x86", "aarch64", "arm", "riscv64",
                              "ppc64", "s390x", or NULL (heap) */
    char *vendor;          /* x86 vendor_id; ARM implementer as a name ("ARM", "Ampere") or code */
    char *model_name;      /* x86 "model name"; other architectures' model line where there is one */
    int family, model, stepping; /* x86 "cpu family", "model", "stepping"; -1 when absent */
    char **flags;          /* x86 "flags" / ARM "Features" / RISC-V "isa" extensions...: the tokens
                              every processor lists (heap array of heap strings) */
    size_t n_flags;
    bool has_flags_line;   /* some processor had a flags/Features line */
    bool flags_differ;     /* processors list different flags (hybrid CPUs, or a broken file) */
};

/* Parse TEXT (NUL-terminated) into CI. Returns 0, or -1 when out of memory. Never fails on junk:
 * unknown lines are ignored. Free with cpu_cpuinfo_free(). */
int cpu_cpuinfo_parse(const char *text, struct cpu_cpuinfo *ci);
void cpu_cpuinfo_free(struct cpu_cpuinfo *ci);
/* True when every processor lists FLAG. */
bool cpu_cpuinfo_has(const struct cpu_cpuinfo *ci, const char *flag);

#endif
