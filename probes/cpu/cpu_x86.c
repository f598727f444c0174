/* cpu_x86.c: gpucheckup's own decoding of raw x86 CPUID leaves: flag table, OS-enabled state, x86-64 level. */
#include "cpu_x86.h"

#include <libcpuid/libcpuid.h>
#include <stdio.h>
#include <string.h>

/* Bits from the Intel SDM vol. 2A (CPUID) and AMD APM vol. 3 (appendix E); x86-64 levels from the
 * x86-64 psABI ("Micro-architecture levels"), checked against glibc's get_isa_level
 * (sysdeps/x86/get-isa-level.h): the same lists, except that glibc tests neither SYSCALL (below)
 * nor OSXSAVE (implied there by AVX being usable). Kernel names from arch/x86/include/asm/cpufeatures.h. */
const struct cpu_flag_def cpu_flag_table[] = {
    /* x86-64 baseline (v1) */
    {"fpu", "FPU", "fpu", CPU_REG_1_EDX, 0, CPU_STATE_NONE, 1, CPU_FEATURE_FPU},
    {"cx8", "CMPXCHG8B", "cx8", CPU_REG_1_EDX, 8, CPU_STATE_NONE, 1, CPU_FEATURE_CX8},
    {"cmov", "CMOV", "cmov", CPU_REG_1_EDX, 15, CPU_STATE_NONE, 1, CPU_FEATURE_CMOV},
    {"mmx", "MMX", "mmx", CPU_REG_1_EDX, 23, CPU_STATE_NONE, 1, CPU_FEATURE_MMX},
    {"fxsr", "FXSAVE", "fxsr", CPU_REG_1_EDX, 24, CPU_STATE_NONE, 1, CPU_FEATURE_FXSR},
    {"sse", "SSE", "sse", CPU_REG_1_EDX, 25, CPU_STATE_NONE, 1, CPU_FEATURE_SSE},
    {"sse2", "SSE2", "sse2", CPU_REG_1_EDX, 26, CPU_STATE_NONE, 1, CPU_FEATURE_SSE2},
    /* Long mode decides x86-64. SYSCALL is in the psABI's baseline list, but no level hinges on it:
     * Intel CPUs report CPUID.80000001H:EDX[11] only when CPUID runs in 64-bit mode (Intel SDM vol. 2A,
     * CPUID: "SYSCALL/SYSRET available in 64-bit mode"), so a dump taken by 32-bit code (a Core
     * i7-2600K in InstLatx64's archive) has it clear; glibc's get_isa_level (sysdeps/x86/get-isa-level.h)
     * does not test it either. Every CPU with long mode has SYSCALL in 64-bit mode. */
    {"syscall", "SYSCALL", "syscall", CPU_REG_E1_EDX, 11, CPU_STATE_NONE, 0, CPU_FEATURE_SYSCALL},
    {"lm", "long mode", "lm", CPU_REG_E1_EDX, 29, CPU_STATE_NONE, 1, CPU_FEATURE_LM},
    /* v2 */
    {"sse3", "SSE3", "pni", CPU_REG_1_ECX, 0, CPU_STATE_NONE, 2, CPU_FEATURE_PNI},
    {"ssse3", "SSSE3", "ssse3", CPU_REG_1_ECX, 9, CPU_STATE_NONE, 2, CPU_FEATURE_SSSE3},
    {"sse4_1", "SSE4.1", "sse4_1", CPU_REG_1_ECX, 19, CPU_STATE_NONE, 2, CPU_FEATURE_SSE4_1},
    {"sse4_2", "SSE4.2", "sse4_2", CPU_REG_1_ECX, 20, CPU_STATE_NONE, 2, CPU_FEATURE_SSE4_2},
    {"popcnt", "POPCNT", "popcnt", CPU_REG_1_ECX, 23, CPU_STATE_NONE, 2, CPU_FEATURE_POPCNT},
    {"cx16", "CMPXCHG16B", "cx16", CPU_REG_1_ECX, 13, CPU_STATE_NONE, 2, CPU_FEATURE_CX16},
    {"lahf_lm", "LAHF/SAHF", "lahf_lm", CPU_REG_E1_ECX, 0, CPU_STATE_NONE, 2, CPU_FEATURE_LAHF_LM},
    /* v3 */
    {"avx", "AVX", "avx", CPU_REG_1_ECX, 28, CPU_STATE_AVX, 3, CPU_FEATURE_AVX},
    {"avx2", "AVX2", "avx2", CPU_REG_7_EBX, 5, CPU_STATE_AVX, 3, CPU_FEATURE_AVX2},
    {"fma", "FMA", "fma", CPU_REG_1_ECX, 12, CPU_STATE_AVX, 3, CPU_FEATURE_FMA3},
    {"f16c", "F16C", "f16c", CPU_REG_1_ECX, 29, CPU_STATE_AVX, 3, CPU_FEATURE_F16C},
    {"bmi1", "BMI1", "bmi1", CPU_REG_7_EBX, 3, CPU_STATE_NONE, 3, CPU_FEATURE_BMI1},
    {"bmi2", "BMI2", "bmi2", CPU_REG_7_EBX, 8, CPU_STATE_NONE, 3, CPU_FEATURE_BMI2},
    {"abm", "LZCNT", "abm", CPU_REG_E1_ECX, 5, CPU_STATE_NONE, 3, CPU_FEATURE_ABM},
    {"movbe", "MOVBE", "movbe", CPU_REG_1_ECX, 22, CPU_STATE_NONE, 3, CPU_FEATURE_MOVBE},
    /* The kernel never lists osxsave; its "xsave" means it enabled XSAVE, i.e. set CR4.OSXSAVE. */
    {"osxsave", "OSXSAVE", "xsave", CPU_REG_1_ECX, 27, CPU_STATE_NONE, 3, CPU_FEATURE_OSXSAVE},
    /* v4 */
    {"avx512f", "AVX-512F", "avx512f", CPU_REG_7_EBX, 16, CPU_STATE_AVX512, 4, CPU_FEATURE_AVX512F},
    {"avx512cd", "AVX-512CD", "avx512cd", CPU_REG_7_EBX, 28, CPU_STATE_AVX512, 4, CPU_FEATURE_AVX512CD},
    {"avx512dq", "AVX-512DQ", "avx512dq", CPU_REG_7_EBX, 17, CPU_STATE_AVX512, 4, CPU_FEATURE_AVX512DQ},
    {"avx512bw", "AVX-512BW", "avx512bw", CPU_REG_7_EBX, 30, CPU_STATE_AVX512, 4, CPU_FEATURE_AVX512BW},
    {"avx512vl", "AVX-512VL", "avx512vl", CPU_REG_7_EBX, 31, CPU_STATE_AVX512, 4, CPU_FEATURE_AVX512VL},
    /* beyond the levels: what ML libraries dispatch on */
    {"avx512_vnni", "AVX-512 VNNI", "avx512_vnni", CPU_REG_7_ECX, 11, CPU_STATE_AVX512, 0, CPU_FEATURE_AVX512VNNI},
    {"avx512_bf16", "AVX-512 BF16", "avx512_bf16", CPU_REG_7_1_EAX, 5, CPU_STATE_AVX512, 0, -1},
    {"avx_vnni", "AVX-VNNI", "avx_vnni", CPU_REG_7_1_EAX, 4, CPU_STATE_AVX, 0, -1},
    /* AVX10 (Intel AVX10 Architecture Specification, "Enumeration"): CPUID.(7,1):EDX[19], version and
     * vector widths in leaf 0x24 (cpu_x86_avx10). It runs on the opmask and ZMM register state, as
     * AVX-512 does (Xen's xstate_check asks the same three XCR0 bits for either). Linux names the bit only
     * inside KVM (arch/x86/kvm/reverse_cpuid.h), so /proc/cpuinfo has no flag for it. */
    {"avx10", "AVX10", NULL, CPU_REG_7_1_EDX, 19, CPU_STATE_AVX512, 0, -1},
    {"amx_tile", "AMX-TILE", "amx_tile", CPU_REG_7_EDX, 24, CPU_STATE_AMX, 0, -1},
    {"amx_bf16", "AMX-BF16", "amx_bf16", CPU_REG_7_EDX, 22, CPU_STATE_AMX, 0, -1},
    {"amx_int8", "AMX-INT8", "amx_int8", CPU_REG_7_EDX, 25, CPU_STATE_AMX, 0, -1},
    {"aes", "AES-NI", "aes", CPU_REG_1_ECX, 25, CPU_STATE_NONE, 0, CPU_FEATURE_AES},
    {"pclmulqdq", "PCLMULQDQ", "pclmulqdq", CPU_REG_1_ECX, 1, CPU_STATE_NONE, 0, CPU_FEATURE_PCLMUL},
    {"sha_ni", "SHA", "sha_ni", CPU_REG_7_EBX, 29, CPU_STATE_NONE, 0, CPU_FEATURE_SHA_NI},
};
const size_t cpu_flag_count = sizeof(cpu_flag_table) / sizeof(cpu_flag_table[0]);

_Static_assert(sizeof(cpu_flag_table) / sizeof(cpu_flag_table[0]) <= CPU_FLAG_MAX, "CPU_FLAG_MAX too small");

int cpu_flag_index(const char *name)
{
    for (size_t i = 0; i < cpu_flag_count; i++)
        if (strcmp(cpu_flag_table[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* The register holding REG, or CPU_UNKNOWN / CPU_NO when the leaf is absent. Returns CPU_YES and
 * sets *VAL when the register was read. */
static int cpu_x86_reg(const struct cpu_leaves *l, const struct cpu_x86_view *v, enum cpu_reg reg, uint32_t *val)
{
    switch (reg) {
    case CPU_REG_1_ECX:
    case CPU_REG_1_EDX:
        if (v->max_basic < 1)
            return CPU_NO;
        *val = l->basic[1][reg == CPU_REG_1_ECX ? CPU_ECX : CPU_EDX];
        return CPU_YES;
    case CPU_REG_7_EBX:
    case CPU_REG_7_ECX:
    case CPU_REG_7_EDX:
        if (v->max_basic < 7)
            return CPU_NO;
        *val = l->basic[7][reg == CPU_REG_7_EBX ? CPU_EBX : reg == CPU_REG_7_ECX ? CPU_ECX : CPU_EDX];
        return CPU_YES;
    case CPU_REG_7_1_EAX:
    case CPU_REG_7_1_EDX:
        /* Leaf 7 EAX is the highest subleaf: without subleaf 1 the answer is a known "no". */
        if (v->max_basic < 7 || l->basic[7][CPU_EAX] < 1)
            return CPU_NO;
        if (!l->have_7_1)
            return CPU_UNKNOWN;
        *val = l->leaf7_1[reg == CPU_REG_7_1_EAX ? CPU_EAX : CPU_EDX];
        return CPU_YES;
    case CPU_REG_E1_ECX:
    case CPU_REG_E1_EDX:
        if (v->max_ext < 0x80000001u || v->max_ext > 0x8000ffffu)
            return CPU_NO;
        *val = l->ext[1][reg == CPU_REG_E1_ECX ? CPU_ECX : CPU_EDX];
        return CPU_YES;
    }
    return CPU_UNKNOWN;
}

static void cpu_x86_regs_text(char *out, const uint32_t *regs, const int *order)
{
    for (int i = 0; i < 3; i++)
        memcpy(out + 4 * i, &regs[order[i]], 4);
    out[12] = '\0';
    /* Sanitise: a signature is ASCII; NULs become the end, other bytes '?'. */
    for (int i = 0; i < 12; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c == 0) {
            out[i] = '\0';
            break;
        }
        if (c < 0x20 || c > 0x7e)
            out[i] = '?';
    }
}

/* AVX10's version and vector widths (Intel AVX10 Architecture Specification, "Enumeration"): leaf 0x24
 * subleaf 0, EBX[7:0] the version (>= 1 whenever CPUID.(7,1):EDX[19] is set), EBX[16], [17], [18] the
 * 128-, 256- and 512-bit widths. A version 0 from a CPU that claims AVX10 is garbage: unknown. */
static void cpu_x86_avx10(const struct cpu_leaves *l, struct cpu_x86_view *v)
{
    v->avx10_version = 0;
    v->avx10_vector_bits = 0;
    int row = cpu_flag_index("avx10");
    if (row < 0 || v->reported[row] != CPU_YES)
        return;
    uint32_t ebx = l->leaf24[CPU_EBX];
    if (v->max_basic < 0x24 || !l->have_24 || (ebx & 0xff) == 0) {
        v->avx10_version = -1;
        return;
    }
    v->avx10_version = (int)(ebx & 0xff);
    v->avx10_vector_bits = (ebx >> 16) & 0x7;
}

static void cpu_x86_brand(const struct cpu_leaves *l, struct cpu_x86_view *v)
{
    v->brand[0] = '\0';
    if (v->max_ext < 0x80000004u || v->max_ext > 0x8000ffffu)
        return;
    char raw[49];
    for (int leaf = 0; leaf < 3; leaf++)
        for (int r = 0; r < 4; r++)
            memcpy(raw + 16 * leaf + 4 * r, &l->ext[2 + leaf][r], 4);
    raw[48] = '\0';
    /* Trim leading/trailing spaces, squeeze runs of spaces (Intel pads the front). */
    size_t o = 0;
    bool space = false;
    for (size_t i = 0; i < 48 && raw[i]; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c == ' ') {
            space = o > 0;
            continue;
        }
        if (space && o < sizeof(v->brand) - 1)
            v->brand[o++] = ' ';
        space = false;
        if (o < sizeof(v->brand) - 1)
            v->brand[o++] = (c < 0x20 || c > 0x7e) ? '?' : (char)c;
    }
    v->brand[o] = '\0';
}

static const struct {
    const char *signature;
    const char *name;
} cpu_x86_hypervisors[] = {
    {"KVMKVMKVM", "KVM"},
    {"Linux KVM Hv", "KVM"},
    {"Microsoft Hv", "Hyper-V"},
    {"VMwareVMware", "VMware"},
    {"XenVMMXenVMM", "Xen"},
    {"TCGTCGTCGTCG", "QEMU (TCG)"},
    {"VBoxVBoxVBox", "VirtualBox"},
    {"bhyve bhyve ", "bhyve"},
    {"prl hyperv  ", "Parallels"},
    {" lrpepyh  vr", "Parallels"},
    {"ACRNACRNACRN", "ACRN"},
    {"QNXQVMBSQG", "QNX"},
    {"EVMMEVMMEVMM", "Intel EVMM"},
    {"Jailhouse", "Jailhouse"},
};

const char *cpu_x86_hypervisor_name(const char *signature)
{
    if (!signature)
        return NULL;
    for (size_t i = 0; i < sizeof(cpu_x86_hypervisors) / sizeof(cpu_x86_hypervisors[0]); i++)
        if (strcmp(signature, cpu_x86_hypervisors[i].signature) == 0)
            return cpu_x86_hypervisors[i].name;
    return NULL;
}

/* AMD and Hygon only: their family/model ranges map cleanly onto Zen generations. Intel names come
 * from libcpuid's codename table instead. */
/* Intel family 6 models by their CPUID model number, as Linux names them (arch/x86/include/asm/
 * intel-family.h) and Intel's SDM vol. 4 table 2-1 lists them. Ours because libcpuid 0.6.2's database
 * stops short of them and then answers with its closest match: on a real Emerald Rapids (model 0xcf)
 * it said "Xeon (Conroe/2M)". One model number can cover several marketing generations. */
static const struct {
    int model;
    const char *name;
} cpu_x86_intel6[] = {
    {0x2a, "Sandy Bridge"}, {0x2d, "Sandy Bridge-EP"}, {0x3a, "Ivy Bridge"}, {0x3e, "Ivy Bridge-EP"},
    {0x3c, "Haswell"}, {0x3f, "Haswell-EP"}, {0x45, "Haswell"}, {0x46, "Haswell"},
    {0x3d, "Broadwell"}, {0x47, "Broadwell"}, {0x4f, "Broadwell-EP"}, {0x56, "Broadwell-DE"},
    {0x4e, "Skylake"}, {0x5e, "Skylake"}, {0x55, "Skylake-SP / Cascade Lake / Cooper Lake"},
    {0x57, "Knights Landing"}, {0x85, "Knights Mill"},
    {0x8e, "Kaby Lake / Whiskey Lake / Comet Lake"}, {0x9e, "Kaby Lake / Coffee Lake"},
    {0xa5, "Comet Lake"}, {0xa6, "Comet Lake"}, {0x66, "Cannon Lake"},
    {0x7d, "Ice Lake"}, {0x7e, "Ice Lake"}, {0x6a, "Ice Lake-SP"}, {0x6c, "Ice Lake-D"},
    {0x8c, "Tiger Lake"}, {0x8d, "Tiger Lake"}, {0xa7, "Rocket Lake"},
    {0x97, "Alder Lake"}, {0x9a, "Alder Lake"}, {0xbe, "Alder Lake-N"},
    {0xb7, "Raptor Lake"}, {0xba, "Raptor Lake"}, {0xbf, "Raptor Lake"},
    {0xaa, "Meteor Lake"}, {0xac, "Meteor Lake"}, {0xb5, "Arrow Lake"}, {0xc5, "Arrow Lake"},
    {0xc6, "Arrow Lake"}, {0xbd, "Lunar Lake"}, {0xcc, "Panther Lake"},
    {0x8f, "Sapphire Rapids"}, {0xcf, "Emerald Rapids"}, {0xad, "Granite Rapids"}, {0xae, "Granite Rapids-D"},
    {0xaf, "Sierra Forest"}, {0xb6, "Grand Ridge"}, {0xdd, "Clearwater Forest"},
    {0x5c, "Goldmont (Apollo Lake)"}, {0x5f, "Goldmont (Denverton)"}, {0x7a, "Goldmont Plus"},
    {0x86, "Tremont (Snow Ridge)"}, {0x96, "Tremont (Elkhart Lake)"}, {0x9c, "Tremont (Jasper Lake)"},
};

const char *cpu_x86_microarchitecture(const char *vendor, int family, int model)
{
    if (!vendor)
        return NULL;
    if (strcmp(vendor, "GenuineIntel") == 0) {
        for (size_t i = 0; family == 6 && i < sizeof(cpu_x86_intel6) / sizeof(cpu_x86_intel6[0]); i++)
            if (cpu_x86_intel6[i].model == model)
                return cpu_x86_intel6[i].name;
        return NULL;
    }
    if (strcmp(vendor, "HygonGenuine") == 0 && family == 0x18)
        return "Zen (Dhyana)";
    if (strcmp(vendor, "AuthenticAMD") != 0)
        return NULL;
    switch (family) {
    case 0x17:
        if (model == 0x08 || model == 0x18)
            return "Zen+";
        if (model < 0x30)
            return "Zen";
        return "Zen 2";
    case 0x19:
        if (model < 0x10 || (model >= 0x20 && model < 0x30) || (model >= 0x50 && model < 0x60))
            return "Zen 3";
        if (model >= 0x40 && model < 0x50)
            return "Zen 3+";
        if ((model >= 0x10 && model < 0x20) || (model >= 0x60 && model < 0x80) || (model >= 0xa0 && model < 0xb0))
            return "Zen 4";
        return NULL;
    case 0x1a:
        if (model < 0x80)
            return "Zen 5";
        return NULL;
    case 0x16:
        return "Jaguar";
    case 0x15:
        return "Bulldozer family";
    default:
        return NULL;
    }
}

int cpu_x86_level(const signed char *usable)
{
    int level = 0;
    for (int want = 1; want <= 4; want++) {
        for (size_t i = 0; i < cpu_flag_count; i++)
            if (cpu_flag_table[i].level > 0 && cpu_flag_table[i].level <= want && usable[i] != CPU_YES)
                return level;
        level = want;
    }
    return level;
}

size_t cpu_x86_level_missing(const signed char *usable, int level, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < cpu_flag_count && n < max; i++)
        if (cpu_flag_table[i].level > 0 && cpu_flag_table[i].level <= level && usable[i] != CPU_YES)
            out[n++] = cpu_flag_table[i].name;
    return n;
}

void cpu_x86_decode(const struct cpu_leaves *l, struct cpu_x86_view *v)
{
    memset(v, 0, sizeof(*v));
    v->max_basic = l->basic[0][CPU_EAX];
    v->max_ext = l->ext[0][CPU_EAX];
    static const int vendor_order[3] = {CPU_EBX, CPU_EDX, CPU_ECX};
    cpu_x86_regs_text(v->vendor, l->basic[0], vendor_order);
    cpu_x86_brand(l, v);

    uint32_t sig = v->max_basic >= 1 ? l->basic[1][CPU_EAX] : 0;
    int base_family = (int)((sig >> 8) & 0xf), base_model = (int)((sig >> 4) & 0xf);
    v->family = base_family == 0xf ? base_family + (int)((sig >> 20) & 0xff) : base_family;
    v->model = (base_family == 0x6 || base_family == 0xf) ? (int)(((sig >> 16) & 0xf) << 4) + base_model : base_model;
    v->stepping = (int)(sig & 0xf);

    uint32_t ecx1 = v->max_basic >= 1 ? l->basic[1][CPU_ECX] : 0;
    v->osxsave = (ecx1 >> 27) & 1;
    v->hypervisor = (ecx1 >> 31) & 1;
    v->hybrid = v->max_basic >= 7 && ((l->basic[7][CPU_EDX] >> 15) & 1);

    for (size_t i = 0; i < cpu_flag_count; i++) {
        uint32_t val = 0;
        int have = cpu_x86_reg(l, v, cpu_flag_table[i].reg, &val);
        v->reported[i] = (signed char)(have == CPU_YES ? (int)((val >> cpu_flag_table[i].bit) & 1) : have);
    }
    cpu_x86_avx10(l, v);

    /* What the OS enabled. Without OSXSAVE the OS turned XSAVE off and XGETBV would fault. */
    if (!v->osxsave) {
        v->xcr0_source = CPU_XCR0_NONE;
        v->xcr0 = 0;
    } else if (l->have_xcr0) {
        v->xcr0_source = CPU_XCR0_READ;
        v->xcr0 = l->xcr0;
    } else {
        v->xcr0_source = CPU_XCR0_ASSUMED;
        if (v->max_basic >= 0xd) {
            v->xcr0 = l->basic[0xd][CPU_EAX];
        } else {
            /* No leaf 0xD to say what the CPU supports: assume what its flags need. */
            v->xcr0 = 0x3;
            int avx = cpu_flag_index("avx"), f = cpu_flag_index("avx512f"), t = cpu_flag_index("amx_tile");
            if (v->reported[avx] == CPU_YES)
                v->xcr0 |= CPU_XCR0_AVX;
            if (v->reported[f] == CPU_YES)
                v->xcr0 |= CPU_XCR0_AVX512;
            if (v->reported[t] == CPU_YES)
                v->xcr0 |= CPU_XCR0_AMX;
        }
    }
    v->state_avx = v->osxsave && (v->xcr0 & CPU_XCR0_AVX) == CPU_XCR0_AVX;
    v->state_avx512 = v->state_avx && (v->xcr0 & CPU_XCR0_AVX512) == CPU_XCR0_AVX512;
    v->state_amx = v->osxsave && (v->xcr0 & CPU_XCR0_AMX) == CPU_XCR0_AMX;

    for (size_t i = 0; i < cpu_flag_count; i++) {
        bool state = true;
        switch (cpu_flag_table[i].state) {
        case CPU_STATE_NONE: state = true; break;
        case CPU_STATE_AVX: state = v->state_avx; break;
        case CPU_STATE_AVX512: state = v->state_avx512; break;
        case CPU_STATE_AMX: state = v->state_amx; break;
        }
        if (v->reported[i] == CPU_YES)
            v->usable[i] = state ? CPU_YES : CPU_NO;
        else
            v->usable[i] = v->reported[i];
    }
    v->level = cpu_x86_level(v->usable);

    if (v->hypervisor && l->have_hv) {
        static const int hv_order[3] = {CPU_EBX, CPU_ECX, CPU_EDX};
        cpu_x86_regs_text(v->hv_signature, l->hv, hv_order);
        v->hv_vendor = cpu_x86_hypervisor_name(v->hv_signature);
        if (l->have_hv2 && strcmp(v->hv_signature, "Microsoft Hv") == 0) {
            char second[13];
            cpu_x86_regs_text(second, l->hv2, hv_order);
            if (strcmp(second, "KVMKVMKVM") == 0)
                v->hv_vendor = "KVM";
        }
    }
}
