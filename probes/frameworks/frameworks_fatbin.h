/* frameworks_fatbin.h: which GPU architectures an ELF library's CUDA fatbinaries carry (section .nv_fatbin), read by bounded reads. */
#ifndef GPUCHECKUP_FRAMEWORKS_FATBIN_H
#define GPUCHECKUP_FRAMEWORKS_FATBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FW_FATBIN_MAX_ARCHS 32         /* distinct architectures kept per kind (more are counted, not kept) */
#define FW_FATBIN_MAX_ENTRIES 1000000  /* entry headers read at most (libcublasLt.so.13 has about 5,400) */
#define FW_FATBIN_MAX_SECTIONS 65280   /* section headers looked at (below SHN_LORESERVE) */

/* The GPU code found: SASS (cubins, "sm_XX": XX = major * 10 + minor) and PTX ("compute_XX"), each
 * sorted and unique. */
struct fw_gpu_code {
    uint16_t sass[FW_FATBIN_MAX_ARCHS];
    size_t n_sass;
    uint16_t ptx[FW_FATBIN_MAX_ARCHS];
    size_t n_ptx;
    size_t containers, entries;
    bool truncated;                    /* a bound was reached: what was read is kept */
};

/* Reads LEN bytes at OFF of the file into BUF: 0 when all were read, -1 otherwise. */
typedef int (*fw_read_fn)(void *arg, uint64_t off, void *buf, size_t len);

/* What GPU code the ELF file behind RD (FILE_SIZE bytes) carries: the 64-byte ELF header, the section
 * headers, the section names and each fatbin container's and entry's header are read, never a payload.
 * A container: magic 0xBA55ED50, u16 version, u16 header size, u64 size of its entries; an entry: u16 kind
 * (1 PTX, 2 or 0x10 an ELF cubin), u32 header size at 4, u64 payload size at 8, u32 architecture at 28;
 * the next entry follows its header and payload. The first .nv_fatbin section is the one read (the linker
 * merges them into one). Returns 1 (OUT filled), 0 (an ELF file without
 * .nv_fatbin), -1 (not a little-endian 64-bit ELF file), -2 (the fatbin does not hold together, or its
 * file is cut short: OUT keeps what was read before). Never reads outside FILE_SIZE. */
int fw_fatbin_read(fw_read_fn rd, void *arg, uint64_t file_size, struct fw_gpu_code *out);

/* "sm_75, sm_80, sm_90" (SASS) or "compute_90" (PTX) into BUF (LEN >= 1); "none" when empty. */
const char *fw_arch_list(const uint16_t *a, size_t n, const char *prefix, char *buf, size_t len);

#endif
