/* cpu_x86.h: gpucheckup's own decoding of raw x86 CPUID leaves: flag table, OS-enabled state, x86-64 level. */
#ifndef GPUCHECKUP_CPU_X86_H
#define GPUCHECKUP_CPU_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Registers of a CPUID result, in libcpuid's order. */
enum { CPU_EAX = 0, CPU_EBX = 1, CPU_ECX = 2, CPU_EDX = 3 };

/* Where a flag's bit lives. */
enum cpu_reg {
    CPU_REG_1_ECX,    /* leaf 1 */
    CPU_REG_1_EDX,
    CPU_REG_7_EBX,    /* leaf 7, subleaf 0 */
    CPU_REG_7_ECX,
    CPU_REG_7_EDX,
    CPU_REG_7_1_EAX,  /* leaf 7, subleaf 1 */
    CPU_REG_7_1_EDX,
    CPU_REG_E1_ECX,   /* leaf 0x80000001 */
    CPU_REG_E1_EDX,
};

/* The register state (XCR0 bits) the OS must enable before a flag's instructions can run. */
enum cpu_state {
    CPU_STATE_NONE = 0,
    CPU_STATE_AVX,    /* XCR0 bits 1-2 (SSE, AVX) */
    CPU_STATE_AVX512, /* XCR0 bits 1-2 and 5-7 (opmask, ZMM_Hi256, Hi16_ZMM) */
    CPU_STATE_AMX,    /* XCR0 bits 17-18 (XTILECFG, XTILEDATA) */
};

#define CPU_XCR0_AVX 0x6u
#define CPU_XCR0_AVX512 0xe0u
#define CPU_XCR0_AMX 0x60000u

/* One row of the flag table. */
struct cpu_flag_def {
    const char *name;   /* JSON key: /proc/cpuinfo's spelling, except sse3 (the kernel says pni) */
    const char *label;  /* for people: "SSE4.2", "LZCNT (abm)" */
    const char *kernel; /* the name in /proc/cpuinfo "flags"; NULL when the kernel never lists it */
    enum cpu_reg reg;
    unsigned bit;
    enum cpu_state state;
    int level;          /* the x86-64 level whose definition names it (1..4), 0 for none */
    int libcpuid;       /* libcpuid's cpu_feature_t for it, -1 when libcpuid 0.6 has none */
};

/* The table, in display order, and its length. */
extern const struct cpu_flag_def cpu_flag_table[];
extern const size_t cpu_flag_count;
#define CPU_FLAG_MAX 64

/* Index of the row NAME, or -1. */
int cpu_flag_index(const char *name);

/* Raw CPUID as gpucheckup decodes it (libcpuid's raw struct carries basic and ext only). */
struct cpu_leaves {
    uint32_t basic[32][4]; /* leaf N, subleaf 0; meaningful up to basic[0][EAX] */
    uint32_t ext[32][4];   /* leaf 0x80000000 + N; meaningful up to ext[0][EAX] */
    bool have_7_1;         /* leaf 7 subleaf 1 was read (live, or a dump written by gpucheckup) */
    uint32_t leaf7_1[4];
    bool have_24;          /* leaf 0x24 subleaf 0 (AVX10) was read: live, or any dump that records it */
    uint32_t leaf24[4];
    bool have_hv;          /* leaf 0x40000000 (hypervisor vendor) was read */
    uint32_t hv[4];
    bool have_hv2;         /* leaf 0x40000100 was read: KVM's own signature when it poses as
                              Hyper-V (Hyper-V enlightenments) */
    uint32_t hv2[4];
    bool have_xcr0;        /* XCR0 was read with xgetbv (live, or a dump written by gpucheckup) */
    uint64_t xcr0;
};

/* A fact that may be unknown. */
enum cpu_tri { CPU_NO = 0, CPU_YES = 1, CPU_UNKNOWN = -1 };

/* Where the OS-enabled state came from. */
enum cpu_xcr0_source {
    CPU_XCR0_READ,    /* have_xcr0: xgetbv (live) or recorded in the dump */
    CPU_XCR0_NONE,    /* OSXSAVE is 0: the OS enabled no XSAVE state at all (known) */
    CPU_XCR0_ASSUMED, /* a dump without XCR0 but with OSXSAVE=1: assumed = every state the CPU
                         supports (leaf 0xD), as Linux enables */
};

/* The decoded view. */
struct cpu_x86_view {
    char vendor[13];           /* "AuthenticAMD" (sanitised) */
    char brand[49];            /* trimmed brand string, "" when the CPU has none */
    int family, model, stepping; /* display values (extended fields folded in) */
    uint32_t max_basic, max_ext;
    signed char reported[CPU_FLAG_MAX]; /* enum cpu_tri, by table row */
    signed char usable[CPU_FLAG_MAX];   /* reported and its state enabled by the OS */
    bool osxsave;
    enum cpu_xcr0_source xcr0_source;
    uint64_t xcr0;             /* read, or assumed (see xcr0_source); 0 with CPU_XCR0_NONE */
    bool state_avx, state_avx512, state_amx;
    int level;                 /* 0 (lacks the x86-64 baseline) .. 4 */
    bool hypervisor;           /* CPUID.1:ECX[31] */
    char hv_signature[13];     /* leaf 0x40000000 EBX:ECX:EDX (sanitised), "" when not read */
    const char *hv_vendor;     /* "KVM", "VMware"..., NULL when unknown; "KVM" also when KVM poses as
                                  Hyper-V (leaf 0x40000100 says KVMKVMKVM) */
    bool hybrid;               /* CPUID.7:EDX[15]: performance and efficiency cores */
    int avx10_version;         /* AVX10 version from leaf 0x24 (1 = AVX10.1), 0 when the CPU reports no
                                  AVX10, -1 when it does but leaf 0x24 was not read */
    unsigned avx10_vector_bits; /* widths leaf 0x24 reports: 128 | 256 | 512 as bits 0, 1, 2 */
};

/* Decode L into V. Never fails: missing leaves decode as "not reported". */
void cpu_x86_decode(const struct cpu_leaves *l, struct cpu_x86_view *v);

/* The x86-64 level (0..4) that the flags in USABLE (by table row, enum cpu_tri) reach. */
int cpu_x86_level(const signed char *usable);

/* Names (static strings) of the flags of LEVEL's definition that USABLE lacks, into OUT (at most
 * MAX); returns how many. */
size_t cpu_x86_level_missing(const signed char *usable, int level, const char **out, size_t max);

/* A people's name for a hypervisor signature ("KVMKVMKVM" -> "KVM"), or NULL (static strings). */
const char *cpu_x86_hypervisor_name(const char *signature);

/* The microarchitecture for VENDOR/FAMILY/MODEL where gpucheckup knows it ("Zen 3"), or NULL. */
const char *cpu_x86_microarchitecture(const char *vendor, int family, int model);

#endif
