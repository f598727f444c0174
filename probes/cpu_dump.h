/* cpu_dump.h: raw CPUID dumps in libcpuid's text format (plus gpucheckup's extras): strict reading, atomic writing. */
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

struct cpu_dump {
    char version[32];            /* the "version=" line (libcpuid's version, "0.6.2"), "" when absent */
    struct cpu_raw_data_t *raw;  /* heap array of n_raw logical CPUs; raw[0] is the one decoded */
    size_t n_raw;
    bool multi;                  /* "Logical CPU #N" sections (cpuid_serialize_all_raw_data) */
    struct cpu_leaves extras;    /* have_7_1 / have_hv / have_hv2 / have_xcr0 and their values, for CPU #0 */
    size_t ignored;              /* well-formed lines gpucheckup does not use (newer libcpuid leaves) */
};

/* Parse the dump text TEXT (LEN bytes). Returns 0, or -1 with a message in *ERR (heap, caller frees)
 * saying why it is not a usable dump: empty, not libcpuid's format (with the line), or nothing to
 * decode. On success free D with cpu_dump_free(). */
int cpu_dump_parse(const char *text, size_t len, struct cpu_dump *d, char **err);

/* Read and parse the file PATH (a regular file or a pipe). Returns 0, or -1 with *ERR (heap) naming
 * the problem (not the path: the caller adds it). */
int cpu_dump_load(const char *path, struct cpu_dump *d, char **err);

void cpu_dump_free(struct cpu_dump *d);

/* Write RAW with libcpuid's serializer, then gpucheckup's extras from EXTRAS, to PATH atomically
 * (temp file in the same directory, fsync, rename) and read it back as a check. Returns 0, or -1 with
 * *ERR (heap, caller frees). */
int cpu_dump_save(const char *path, const struct cpu_raw_data_t *raw, const struct cpu_leaves *extras, char **err);

/* Copy the leaves gpucheckup decodes from RAW into L (extras cleared). */
void cpu_leaves_from_raw(const struct cpu_raw_data_t *raw, struct cpu_leaves *l);

#endif
