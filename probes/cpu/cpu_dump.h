/* cpu_dump.h: raw CPUID dumps (libcpuid's format plus gpucheckup's extras, AIDA64/InstLatx64, `cpuid -r`, /dev/cpu/N/cpuid): strict reading, atomic writing. */
#ifndef GPUCHECKUP_CPU_DUMP_H
#define GPUCHECKUP_CPU_DUMP_H

#include <libcpuid/libcpuid.h>
#include <stdbool.h>
#include <stddef.h>

#include "cpu_x86.h"

/* Largest dump file read, and most logical CPUs kept from a multi-CPU dump. */
#define CPU_DUMP_MAX_BYTES (16u * 1024u * 1024u)
#define CPU_DUMP_MAX_CPUS 4096u

/* The line that ends libcpuid's part of a dump: libcpuid's reader stops there, so gpucheckup's extras
 * (leaf 7 subleaf 1, the hypervisor leaf and XCR0, which libcpuid 0.6 does not record) follow it. */
#define CPU_DUMP_SEPARATOR "--------------------------------------------------------------------------------"

/* The formats read, detected from the content (the first line only one of them has). */
enum cpu_dump_format {
    CPU_DUMP_FMT_UNKNOWN = 0,
    CPU_DUMP_FMT_LIBCPUID,   /* basic_cpuid[N]=... (cpuid_serialize_raw_data, gpucheckup --save-cpuid) */
    CPU_DUMP_FMT_AIDA64,     /* AIDA64 / EVEREST reports as InstLatx64 archives them: CPUID 00000007: ...-...-...-... [SL 00] */
    CPU_DUMP_FMT_CPUID_TOOL, /* `cpuid -r` (the Debian package cpuid): 0x00000007 0x00: eax=0x... ebx=0x... */
    CPU_DUMP_FMT_DEVICE,     /* read live from a /dev/cpu/N/cpuid device (Linux's cpuid module) */
};

/* The accepted formats, for messages. */
#define CPU_DUMP_FORMATS                                                                                     \
    "libcpuid's (basic_cpuid[0]=... lines, as --save-cpuid writes), AIDA64/InstLatx64's (CPUID 00000000: "   \
    "0000000D-756E6547-6C65746E-49656E69 lines), `cpuid -r`'s (0x00000000 0x00: eax=0x... lines), or a "    \
    "/dev/cpu/N/cpuid device"

struct cpu_dump {
    enum cpu_dump_format format;
    char version[32];            /* the "version=" line (libcpuid's version, "0.6.2"), "" when absent */
    struct cpu_raw_data_t *raw;  /* heap array of n_raw logical CPUs; raw[0] is the one decoded */
    size_t n_raw;
    bool multi;                  /* per-CPU sections ("Logical CPU #N", "CPU#000 AffMask", "CPU 0:") */
    struct cpu_leaves extras;    /* have_7_1 / have_hv / have_hv2 / have_xcr0 and their values, for CPU #0 */
    size_t ignored;              /* libcpuid format: well-formed lines gpucheckup does not use (newer
                                    libcpuid leaves); other formats hold many leaves libcpuid 0.6 has no
                                    place for, and do not count them */
};

/* Parse the dump text TEXT (LEN bytes) in any of the text formats above. Leaves land where libcpuid's
 * raw struct keeps them (subleaf 0 in basic_cpuid/ext_cpuid, the subleaves of leaves 4, 0xB, 0x12,
 * 0x14 and 0x8000001D in its arrays) and in the extras (leaf 7 subleaf 1, 0x24, 0x40000000, 0x40000100, for
 * CPU #0). Returns 0, or -1 with a message in *ERR (heap, caller frees) saying why it is not a usable
 * dump: empty, in no format gpucheckup reads (naming those it does), a bad line (with its number), or
 * nothing to decode. On success free D with cpu_dump_free(). */
const char *cpu_dump_format_name(enum cpu_dump_format f);
int cpu_dump_parse(const char *text, size_t len, struct cpu_dump *d, char **err);

/* Asks for one CPUID leaf/subleaf; fills OUT (EAX, EBX, ECX, EDX). Returns 0, or -1 when it cannot. */
typedef int (*cpu_dump_query_fn)(void *arg, uint32_t leaf, uint32_t sub, uint32_t out[4]);

/* Build a one-CPU dump by asking QUERY for the leaves gpucheckup and libcpuid 0.6 use (format
 * CPU_DUMP_FMT_DEVICE). Returns 0, or -1 with *ERR (heap). */
int cpu_dump_from_query(cpu_dump_query_fn query, void *arg, struct cpu_dump *d, char **err);

/* Read and parse the file PATH (a regular file or a pipe in a text format, or a /dev/cpu/N/cpuid
 * character device). Returns 0, or -1 with *ERR (heap) naming the problem (not the path: the caller
 * adds it). */
int cpu_dump_load(const char *path, struct cpu_dump *d, char **err);

void cpu_dump_free(struct cpu_dump *d);

/* Write RAW with libcpuid's serializer, then gpucheckup's extras from EXTRAS, to PATH atomically
 * (temp file in the same directory, fsync, rename) and read it back as a check. Returns 0, or -1 with
 * *ERR (heap, caller frees). */
int cpu_dump_save(const char *path, const struct cpu_raw_data_t *raw, const struct cpu_leaves *extras, char **err);

/* Copy the leaves gpucheckup decodes from RAW into L (extras cleared). */
void cpu_leaves_from_raw(const struct cpu_raw_data_t *raw, struct cpu_leaves *l);

#endif
