/* test_cpu_unit.c: unit tests of the cpu probe's decoding (flags, XCR0, levels), dump reader/writer and cpuinfo parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libcpuid/libcpuid.h>

#include "cpu_cpuinfo.h"
#include "cpu_dump.h"
#include "cpu_x86.h"

#define IDX(name) cpu_flag_index(name)

/* Leaves of a plain CPU: vendor VENDOR, leaf 1 signature SIG, leaves up to 0xD and 0x80000008. */
static void leaves_init(struct cpu_leaves *l, const char *vendor, uint32_t sig)
{
    memset(l, 0, sizeof(*l));
    l->basic[0][CPU_EAX] = 0xd;
    memcpy(&l->basic[0][CPU_EBX], vendor, 4);
    memcpy(&l->basic[0][CPU_EDX], vendor + 4, 4);
    memcpy(&l->basic[0][CPU_ECX], vendor + 8, 4);
    l->basic[1][CPU_EAX] = sig;
    l->ext[0][CPU_EAX] = 0x80000008u;
}

/* Set the bit of table row NAME. */
static void leaves_set(struct cpu_leaves *l, const char *name)
{
    const struct cpu_flag_def *f = &cpu_flag_table[IDX(name)];
    uint32_t bit = 1u << f->bit;
    switch (f->reg) {
    case CPU_REG_1_ECX: l->basic[1][CPU_ECX] |= bit; break;
    case CPU_REG_1_EDX: l->basic[1][CPU_EDX] |= bit; break;
    case CPU_REG_7_EBX: l->basic[7][CPU_EBX] |= bit; break;
    case CPU_REG_7_ECX: l->basic[7][CPU_ECX] |= bit; break;
    case CPU_REG_7_EDX: l->basic[7][CPU_EDX] |= bit; break;
    case CPU_REG_7_1_EAX:
    case CPU_REG_7_1_EDX:
        l->basic[7][CPU_EAX] = 1;
        l->have_7_1 = true;
        l->leaf7_1[f->reg == CPU_REG_7_1_EAX ? CPU_EAX : CPU_EDX] |= bit;
        break;
    case CPU_REG_E1_ECX: l->ext[1][CPU_ECX] |= bit; break;
    case CPU_REG_E1_EDX: l->ext[1][CPU_EDX] |= bit; break;
    }
}

/* Every flag up to x86-64 level LEVEL, OS state enabled through XCR0 = XCR0. */
static void leaves_level(struct cpu_leaves *l, int level, uint64_t xcr0)
{
    leaves_init(l, "GenuineIntel", 0x000906ea);
    for (size_t i = 0; i < cpu_flag_count; i++)
        if (cpu_flag_table[i].level > 0 && cpu_flag_table[i].level <= level)
            leaves_set(l, cpu_flag_table[i].name);
    if (level < 3)
        leaves_set(l, "osxsave"); /* an OS with XSAVE, even on a v2 CPU */
    l->have_xcr0 = true;
    l->xcr0 = xcr0;
    l->basic[0xd][CPU_EAX] = (uint32_t)xcr0;
}

static void test_table_is_sane(void **state)
{
    (void)state;
    static const char *const required[] = {"sse", "sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "popcnt", "avx",
                                           "avx2", "fma", "f16c", "bmi1", "bmi2", "movbe", "avx512f", "avx512cd",
                                           "avx512dq", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                                           "amx_tile"};
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        assert_true(IDX(required[i]) >= 0);
    assert_int_equal(IDX("nonexistent"), -1);
    for (size_t i = 0; i < cpu_flag_count; i++) {
        /* A flag without a kernel name (AVX10) cannot count toward a level: levels are also read from /proc/cpuinfo. */
        assert_true(cpu_flag_table[i].kernel != NULL || cpu_flag_table[i].level == 0);
        assert_true(cpu_flag_table[i].bit < 32);
        for (size_t j = i + 1; j < cpu_flag_count; j++) {
            assert_string_not_equal(cpu_flag_table[i].name, cpu_flag_table[j].name);
            assert_false(cpu_flag_table[i].reg == cpu_flag_table[j].reg && cpu_flag_table[i].bit == cpu_flag_table[j].bit);
        }
    }
    assert_string_equal(cpu_flag_table[IDX("sse3")].kernel, "pni");
    /* the psABI level definitions, counted */
    int per_level[5] = {0};
    for (size_t i = 0; i < cpu_flag_count; i++)
        per_level[cpu_flag_table[i].level]++;
    /* cmov cx8 fpu fxsr mmx sse sse2 + lm; not syscall (reported only to 64-bit code on Intel) */
    assert_int_equal(per_level[1], 8);
    assert_int_equal(cpu_flag_table[cpu_flag_index("syscall")].level, 0);
    assert_int_equal(cpu_flag_table[cpu_flag_index("lm")].level, 1);
    assert_int_equal(per_level[2], 7);  /* cx16 lahf popcnt sse3 sse4.1 sse4.2 ssse3 */
    assert_int_equal(per_level[3], 9);  /* avx avx2 bmi1 bmi2 f16c fma lzcnt movbe osxsave */
    assert_int_equal(per_level[4], 5);  /* avx512 f bw cd dq vl */
}

/* Our bit positions against libcpuid's (an independent table): each flag alone, on an Intel CPU. */
static void test_bits_agree_with_libcpuid(void **state)
{
    (void)state;
    int checked = 0;
    for (size_t i = 0; i < cpu_flag_count; i++) {
        const struct cpu_flag_def *f = &cpu_flag_table[i];
        if (f->libcpuid < 0)
            continue;
        struct cpu_leaves l;
        leaves_init(&l, "GenuineIntel", 0x000906ea);
        l.basic[7][CPU_EAX] = 0;
        leaves_set(&l, f->name);
        struct cpu_raw_data_t raw;
        memset(&raw, 0, sizeof(raw));
        memcpy(raw.basic_cpuid, l.basic, sizeof(l.basic));
        memcpy(raw.ext_cpuid, l.ext, sizeof(l.ext));
        struct cpu_id_t id;
        assert_int_equal(cpu_identify(&raw, &id), 0);
        if (!id.flags[f->libcpuid])
            fail_msg("%s: bit %u not decoded by libcpuid as %s", f->name, f->bit, cpu_feature_str(f->libcpuid));
        struct cpu_x86_view v;
        cpu_x86_decode(&l, &v);
        for (size_t j = 0; j < cpu_flag_count; j++)
            assert_int_equal(v.reported[j], j == i ? CPU_YES : CPU_NO);
        checked++;
    }
    assert_true(checked >= 30);
}

static void test_identification(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    leaves_init(&l, "GenuineIntel", 0x000906ea); /* Coffee Lake: family 6, model 0x9e, stepping 10 */
    const char *brand = "       Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz";
    char b[48] = {0};
    memcpy(b, brand, strlen(brand));
    memcpy(l.ext[2], b, 16);
    memcpy(l.ext[3], b + 16, 16);
    memcpy(l.ext[4], b + 32, 16);
    cpu_x86_decode(&l, &v);
    assert_string_equal(v.vendor, "GenuineIntel");
    assert_string_equal(v.brand, "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz");
    assert_int_equal(v.family, 6);
    assert_int_equal(v.model, 0x9e);
    assert_int_equal(v.stepping, 10);
    assert_false(v.hypervisor);

    leaves_init(&l, "AuthenticAMD", 0x00a00f11); /* EPYC Milan */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.family, 0x19);
    assert_int_equal(v.model, 0x01);
    assert_string_equal(v.brand, "");
    assert_string_equal(cpu_x86_microarchitecture("AuthenticAMD", 0x19, 0x01), "Zen 3");
    assert_string_equal(cpu_x86_microarchitecture("AuthenticAMD", 0x19, 0x11), "Zen 4");
    assert_string_equal(cpu_x86_microarchitecture("AuthenticAMD", 0x17, 0x31), "Zen 2");
    assert_string_equal(cpu_x86_microarchitecture("AuthenticAMD", 0x17, 0x08), "Zen+");
    assert_string_equal(cpu_x86_microarchitecture("GenuineIntel", 6, 0x9e), "Kaby Lake / Coffee Lake");
    /* the real H100 machine's CPU: libcpuid 0.6.2 called it "Xeon (Conroe/2M)" */
    assert_string_equal(cpu_x86_microarchitecture("GenuineIntel", 6, 0xcf), "Emerald Rapids");
    assert_string_equal(cpu_x86_microarchitecture("GenuineIntel", 6, 0x8f), "Sapphire Rapids");
    assert_string_equal(cpu_x86_microarchitecture("GenuineIntel", 6, 0x2a), "Sandy Bridge");
    assert_null(cpu_x86_microarchitecture("GenuineIntel", 6, 0x01));
    assert_null(cpu_x86_microarchitecture("GenuineIntel", 0xf, 0x04));

    /* a vendor string with control bytes is sanitised */
    leaves_init(&l, "Evil\x1b[31mCPU", 0x00000f00);
    cpu_x86_decode(&l, &v);
    assert_string_equal(v.vendor, "Evil?[31mCPU");
}

static void test_hypervisor(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    leaves_init(&l, "AuthenticAMD", 0x00a00f11);
    leaves_set(&l, "avx");
    l.basic[1][CPU_ECX] |= 1u << 31;
    cpu_x86_decode(&l, &v);
    assert_true(v.hypervisor);
    assert_null(v.hv_vendor); /* leaf 0x40000000 not read */
    l.have_hv = true;
    l.hv[CPU_EAX] = 0x40000001;
    memcpy(&l.hv[CPU_EBX], "KVMK", 4);
    memcpy(&l.hv[CPU_ECX], "VMKV", 4);
    memcpy(&l.hv[CPU_EDX], "M\0\0\0", 4);
    cpu_x86_decode(&l, &v);
    assert_string_equal(v.hv_signature, "KVMKVMKVM");
    assert_string_equal(v.hv_vendor, "KVM");
    assert_string_equal(cpu_x86_hypervisor_name("Microsoft Hv"), "Hyper-V");
    assert_string_equal(cpu_x86_hypervisor_name("VMwareVMware"), "VMware");
    assert_string_equal(cpu_x86_hypervisor_name("XenVMMXenVMM"), "Xen");
    assert_null(cpu_x86_hypervisor_name("SomethingNew"));
    /* KVM with Hyper-V enlightenments: "Microsoft Hv" first, its own name at 0x40000100 */
    memcpy(&l.hv[CPU_EBX], "Micr", 4);
    memcpy(&l.hv[CPU_ECX], "osof", 4);
    memcpy(&l.hv[CPU_EDX], "t Hv", 4);
    cpu_x86_decode(&l, &v);
    assert_string_equal(v.hv_vendor, "Hyper-V");
    l.have_hv2 = true;
    memcpy(&l.hv2[CPU_EBX], "KVMK", 4);
    memcpy(&l.hv2[CPU_ECX], "VMKV", 4);
    memcpy(&l.hv2[CPU_EDX], "M\0\0\0", 4);
    cpu_x86_decode(&l, &v);
    assert_string_equal(v.hv_signature, "Microsoft Hv");
    assert_string_equal(v.hv_vendor, "KVM");
    /* without the hypervisor bit the leaf is not trusted */
    l.basic[1][CPU_ECX] &= ~(1u << 31);
    cpu_x86_decode(&l, &v);
    assert_false(v.hypervisor);
    assert_string_equal(v.hv_signature, "");
}

static void test_xcr0_gates_avx(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    leaves_level(&l, 3, 0x7);
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.xcr0_source, CPU_XCR0_READ);
    assert_true(v.state_avx);
    assert_int_equal(v.usable[IDX("avx")], CPU_YES);
    assert_int_equal(v.level, 3);

    /* AVX reported, XCR0 without the AVX state: reported yes, usable no, level 2 */
    l.xcr0 = 0x3;
    cpu_x86_decode(&l, &v);
    assert_false(v.state_avx);
    assert_int_equal(v.reported[IDX("avx")], CPU_YES);
    assert_int_equal(v.usable[IDX("avx")], CPU_NO);
    assert_int_equal(v.usable[IDX("fma")], CPU_NO);
    assert_int_equal(v.usable[IDX("avx2")], CPU_NO);
    assert_int_equal(v.usable[IDX("bmi2")], CPU_YES); /* no vector state needed */
    assert_int_equal(v.level, 2);

    /* only SSE state but not x87: AVX needs bits 1 and 2 both */
    l.xcr0 = 0x5;
    cpu_x86_decode(&l, &v);
    assert_false(v.state_avx);

    /* OSXSAVE clear: nothing enabled, whatever XCR0 says (XGETBV would fault) */
    l.xcr0 = 0x7;
    l.basic[1][CPU_ECX] &= ~(1u << 27);
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.xcr0_source, CPU_XCR0_NONE);
    assert_false(v.state_avx);
    assert_int_equal(v.usable[IDX("avx")], CPU_NO);
    assert_int_equal(v.usable[IDX("osxsave")], CPU_NO);
}

static void test_xcr0_gates_avx512_and_amx(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    leaves_level(&l, 4, 0x600e7);
    leaves_set(&l, "amx_tile");
    leaves_set(&l, "avx512_bf16");
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.level, 4);
    assert_true(v.state_avx512);
    assert_true(v.state_amx);
    assert_int_equal(v.usable[IDX("amx_tile")], CPU_YES);
    assert_int_equal(v.usable[IDX("avx512_bf16")], CPU_YES);

    l.xcr0 = 0x7; /* AVX only */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.level, 3);
    assert_int_equal(v.reported[IDX("avx512f")], CPU_YES);
    assert_int_equal(v.usable[IDX("avx512f")], CPU_NO);
    assert_int_equal(v.usable[IDX("avx512_bf16")], CPU_NO);
    assert_int_equal(v.usable[IDX("amx_tile")], CPU_NO);

    l.xcr0 = 0x60007; /* AMX without AVX-512 */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.usable[IDX("amx_tile")], CPU_YES);
    assert_int_equal(v.usable[IDX("avx512f")], CPU_NO);

    l.xcr0 = 0x67; /* one AVX-512 state bit missing */
    cpu_x86_decode(&l, &v);
    assert_false(v.state_avx512);
}

static void test_xcr0_assumed_from_leaf_0xd(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    leaves_level(&l, 4, 0xe7);
    l.have_xcr0 = false;
    l.basic[0xd][CPU_EAX] = 0x7; /* the CPU supports only AVX state */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.xcr0_source, CPU_XCR0_ASSUMED);
    assert_int_equal(v.xcr0, 0x7);
    assert_int_equal(v.usable[IDX("avx")], CPU_YES);
    assert_int_equal(v.usable[IDX("avx512f")], CPU_NO);
    /* no leaf 0xD at all: assume what the flags need */
    l.basic[0][CPU_EAX] = 7;
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.xcr0 & 0xe7, 0xe7);
    assert_int_equal(v.usable[IDX("avx512f")], CPU_YES);
}

/* AVX10: the flag from CPUID.(7,1):EDX[19], version and widths from leaf 0x24, unknown without it. */
static void test_avx10(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    int row = IDX("avx10");
    leaves_level(&l, 4, 0xe7);
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[row], CPU_NO);
    assert_int_equal(v.avx10_version, 0);

    leaves_set(&l, "avx10");
    l.basic[0][CPU_EAX] = 0x24;
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[row], CPU_YES);
    assert_int_equal(v.usable[row], CPU_YES);
    assert_int_equal(v.avx10_version, -1); /* leaf 0x24 not read */

    l.have_24 = true;
    l.leaf24[CPU_EBX] = 0x00070001; /* Granite Rapids: AVX10.1, 128/256/512 */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.avx10_version, 1);
    assert_int_equal(v.avx10_vector_bits, 7);
    l.leaf24[CPU_EBX] = 0x00030002; /* version 2, 128 and 256 only */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.avx10_version, 2);
    assert_int_equal(v.avx10_vector_bits, 3);
    l.leaf24[CPU_EBX] = 0x00070000; /* version 0 from a CPU that claims AVX10: not trusted */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.avx10_version, -1);
    l.leaf24[CPU_EBX] = 0x00070001;
    l.basic[0][CPU_EAX] = 0x23; /* the leaf lies above the highest basic leaf: ignored */
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.avx10_version, -1);

    /* The OS did not enable the opmask/ZMM state: reported, not usable. */
    l.basic[0][CPU_EAX] = 0x24;
    l.xcr0 = 0x7;
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[row], CPU_YES);
    assert_int_equal(v.usable[row], CPU_NO);
}

static void test_levels(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    for (int level = 1; level <= 4; level++) {
        leaves_level(&l, level, 0xe7);
        cpu_x86_decode(&l, &v);
        assert_int_equal(v.level, level);
    }
    /* each v2 requirement alone takes the level down to 1 */
    static const char *const v2[] = {"cx16", "lahf_lm", "popcnt", "sse3", "sse4_1", "sse4_2", "ssse3"};
    for (size_t i = 0; i < sizeof(v2) / sizeof(v2[0]); i++) {
        leaves_level(&l, 4, 0xe7);
        const struct cpu_flag_def *f = &cpu_flag_table[IDX(v2[i])];
        if (f->reg == CPU_REG_1_ECX)
            l.basic[1][CPU_ECX] &= ~(1u << f->bit);
        else
            l.ext[1][CPU_ECX] &= ~(1u << f->bit);
        cpu_x86_decode(&l, &v);
        assert_int_equal(v.level, 1);
        const char *missing[CPU_FLAG_MAX];
        assert_int_equal(cpu_x86_level_missing(v.usable, 2, missing, CPU_FLAG_MAX), 1);
        assert_string_equal(missing[0], v2[i]);
    }
    /* no long mode: not x86-64 at all */
    leaves_level(&l, 4, 0xe7);
    l.ext[1][CPU_EDX] &= ~(1u << 29);
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.level, 0);
    /* SYSCALL clear (Intel, CPUID run by 32-bit code) with long mode: still x86-64, level kept */
    leaves_level(&l, 4, 0xe7);
    l.ext[1][CPU_EDX] &= ~(1u << 11);
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[IDX("syscall")], CPU_NO);
    assert_int_equal(v.level, 4);
    /* lzcnt (abm) is part of v3 */
    leaves_level(&l, 3, 0x7);
    l.ext[1][CPU_ECX] &= ~(1u << 5);
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.level, 2);
}

static void test_missing_leaves(void **state)
{
    (void)state;
    struct cpu_leaves l;
    struct cpu_x86_view v;
    leaves_level(&l, 4, 0xe7);
    leaves_set(&l, "avx512_bf16");
    /* leaf 7 beyond the highest leaf: its bits are stale, not flags */
    l.basic[0][CPU_EAX] = 6;
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[IDX("avx2")], CPU_NO);
    assert_int_equal(v.reported[IDX("avx512_bf16")], CPU_NO);
    /* subleaf 1 exists (leaf 7 EAX = 1) but was not read: unknown */
    l.basic[0][CPU_EAX] = 0xd;
    l.have_7_1 = false;
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[IDX("avx512_bf16")], CPU_UNKNOWN);
    assert_int_equal(v.usable[IDX("avx512_bf16")], CPU_UNKNOWN);
    assert_int_equal(v.level, 4); /* unknown extras do not touch the level */
    /* leaf 7 says it has no subleaf 1: a known no */
    l.basic[7][CPU_EAX] = 0;
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[IDX("avx512_bf16")], CPU_NO);
    /* no extended leaves: lm, lahf_lm, abm, syscall are absent */
    l.ext[0][CPU_EAX] = 0;
    cpu_x86_decode(&l, &v);
    assert_int_equal(v.reported[IDX("lm")], CPU_NO);
    assert_int_equal(v.level, 0);
    /* all zeros decodes to nothing and does not crash */
    memset(&l, 0, sizeof(l));
    cpu_x86_decode(&l, &v);
    assert_string_equal(v.vendor, "");
    assert_int_equal(v.level, 0);
}

/* ---- dumps ---- */

static char *dump_text(const char *vendor_words, const char *extra)
{
    char *s = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&s, &n);
    fprintf(m, "version=0.6.2\n%s\n", vendor_words);
    fprintf(m, "basic_cpuid[1]=00a00f11 01020800 fffa3203 178bfbff\n");
    fprintf(m, "ext_cpuid[0]=80000021 68747541 444d4163 69746e65\n");
    fputs(extra, m);
    fclose(m);
    return s;
}

static const char *const AMD0 = "basic_cpuid[0]=0000000d 68747541 444d4163 69746e65";

static void test_dump_parse_valid(void **state)
{
    (void)state;
    struct cpu_dump d;
    char *err = NULL;
    char *t = dump_text(AMD0, "intel_fn4[7]=00000001 00000002 00000003 00000004\r\n"
                              "newer_leaf[3]=00000001 00000002 00000003 00000004\n"
                              "basic_cpuid[40]=00000001 00000002 00000003 00000004\n"
                              "--------------------------------------------------------------------------------\n"
                              "expected values of a libcpuid test file\n"
                              "gpucheckup.cpuid_7_1=00000020 0 0 0\n"
                              "gpucheckup.xcr0=00000000000600e7\n");
    assert_int_equal(cpu_dump_parse(t, strlen(t), &d, &err), 0);
    assert_null(err);
    assert_string_equal(d.version, "0.6.2");
    assert_int_equal(d.n_raw, 1);
    assert_false(d.multi);
    assert_int_equal(d.raw[0].basic_cpuid[1][CPU_ECX], 0xfffa3203u);
    assert_int_equal(d.raw[0].intel_fn4[7][CPU_EDX], 4);
    assert_int_equal(d.ignored, 2);
    assert_true(d.extras.have_7_1);
    assert_int_equal(d.extras.leaf7_1[CPU_EAX], 0x20);
    assert_true(d.extras.have_xcr0);
    assert_int_equal(d.extras.xcr0, 0x600e7);
    assert_false(d.extras.have_hv);
    cpu_dump_free(&d);
    free(t);
}

/* AIDA64 / InstLatx64 lines: every subleaf lands where libcpuid or the extras keep it, and only there. */
static void test_dump_aida64_subleaves(void **state)
{
    (void)state;
    const char *t = "------[ Versions ]------\r\n"
                    "Program Version : AIDA64 v7.00\r\n"
                    "------[ CPUID Registers / Logical CPU #0 ]------\r\n"
                    "CPUID 00000000: 00000024-756E6547-6C65746E-49656E69 [GenuineIntel]\r\n"
                    "CPUID 00000001: 000A06D1-00000800-FFFAF3BF-BFEBFBFF\r\n"
                    "CPUID 00000004: 00000121-0000003F-0000003F-00000000 [SL 00]\r\n"
                    "CPUID 00000004: 00000122-0000003F-0000003F-00000000 [SL 01]\r\n"
                    "CPUID 00000004: 00000143-0000003F-0000003F-00000000 [SL 02]\r\n"
                    "CPUID 00000004: 00000163-0000003F-0000003F-00000000 [SL 03]\r\n"
                    "CPUID 00000004: 00000000-00000000-00000000-00000099 [SL 20]\r\n"
                    "CPUID 00000007: 00000002-F3BFBFFB-BB417FEE-FFDD4430 [SL 00]\r\n"
                    "CPUID 00000007: 40201D30-00000001-00000000-000E4000 [SL 01]\r\n"
                    "CPUID 00000007: 00000000-00000000-00000000-0000003F [SL 02]\r\n"
                    "CPUID 0000000B: 00000001-00000002-00000100-00000000 [SL 00]\r\n"
                    "CPUID 0000000B: 00000007-00000080-00000201-00000000 [SL 01]\r\n"
                    "CPUID 0000000D: 000E02E7-00002B00-00002B00-00000000 [SL 00]\r\n"
                    "CPUID 0000000D: 00000008-00000000-00000001-00000000 [SL 0B] [CET_U]\r\n"
                    "CPUID 00000014: 00000001-0000005F-00000007-00000000 [SL 00]\r\n"
                    "CPUID 00000014: 02490002-003F003F-00000000-00000000 [SL 01]\r\n"
                    "CPUID 0000001F: 00000001-00000002-00000100-00000000 [SL 00]\r\n"
                    "CPUID 0000001F: 00000007-00000080-00000201-00000000 [SL 01]\r\n"
                    "CPUID 00000024: 00000000-00070001-00000000-00000000 [SL 00] [AVX10]\r\n"
                    "CPUID 40000000: 4000000B-7263694D-666F736F-76482074 [Microsoft Hv]\r\n"
                    "CPUID 80000000: 80000008-00000000-00000000-00000000\r\n"
                    "CPUID 80000001: 00000000-00000000-00000121-2C100800\r\n"
                    "------[ MSR Registers / Logical CPU #0 ]------\r\n"
                    "MSR 0000001B: 0000-0000-FEE0-0900 [Local APIC]\r\n";
    struct cpu_dump d;
    char *err = NULL;
    assert_int_equal(cpu_dump_parse(t, strlen(t), &d, &err), 0);
    assert_null(err);
    assert_int_equal(d.format, CPU_DUMP_FMT_AIDA64);
    assert_string_equal(cpu_dump_format_name(d.format), "aida64");
    assert_int_equal(d.n_raw, 1);
    assert_true(d.multi);
    assert_string_equal(d.version, "");
    const struct cpu_raw_data_t *r = &d.raw[0];
    assert_int_equal(r->basic_cpuid[0][CPU_EAX], 0x24);
    assert_int_equal(r->basic_cpuid[4][CPU_EAX], 0x121);    /* subleaf 0 */
    assert_int_equal(r->intel_fn4[0][CPU_EAX], 0x121);
    assert_int_equal(r->intel_fn4[3][CPU_EAX], 0x163);
    for (int i = 0; i < MAX_INTELFN4_LEVEL; i++)
        assert_int_not_equal(r->intel_fn4[i][CPU_EDX], 0x99); /* [SL 20] is beyond libcpuid's array */
    assert_int_equal(r->basic_cpuid[7][CPU_EBX], 0xF3BFBFFBu); /* not overwritten by [SL 01]/[SL 02] */
    assert_int_equal(r->basic_cpuid[7][CPU_EDX], 0xFFDD4430u);
    assert_true(d.extras.have_7_1);
    assert_int_equal(d.extras.leaf7_1[CPU_EAX], 0x40201D30u);
    assert_int_equal(d.extras.leaf7_1[CPU_EDX], 0x000E4000u);
    assert_int_equal(r->basic_cpuid[0xb][CPU_EAX], 1);
    assert_int_equal(r->intel_fn11[1][CPU_EAX], 7);
    assert_int_equal(r->basic_cpuid[0xd][CPU_EAX], 0x000E02E7u); /* [SL 0B] is hex 11, not 0 */
    assert_int_equal(r->intel_fn14h[1][CPU_EAX], 0x02490002u);
    assert_int_equal(r->basic_cpuid[0x1f][CPU_EAX], 1);
    assert_true(d.extras.have_hv);
    assert_int_equal(d.extras.hv[CPU_EBX], 0x7263694Du);
    assert_int_equal(r->ext_cpuid[1][CPU_EDX], 0x2C100800u);
    assert_false(d.extras.have_xcr0);
    cpu_dump_free(&d);

    /* Older reports: no [SL nn], the subleaves of a leaf as repeated lines; tab-separated; a second CPU. */
    const char *old = "CPUID Registers (CPU #1):\n"
                      "CPUID 00000000  \t0000000D-756E6547-6C65746E-49656E69\n"
                      "CPUID 00000001  \t000206A7-00100800-1FBAE3FF-BFEBFBFF\n"
                      "CPUID 00000004  \t1C004121-01C0003F-0000003F-00000000\n"
                      "CPUID 00000004  \t1C004122-01C0003F-0000003F-00000000\n"
                      "CPUID 00000004  \t1C004143-01C0003F-000001FF-00000000\n"
                      "CPUID 00000005  \t00000040-00000040-00000003-00001120\n"
                      "CPUID 00000004  \t00000000-00000000-00000000-00000077\n" /* not a run: subleaf 0 again */
                      "\n"
                      "CPUID Registers (CPU #2):\n"
                      "CPUID 00000000  \t0000000D-756E6547-6C65746E-49656E69\n"
                      "CPUID 00000001  \t000206A7-02100800-1FBAE3FF-BFEBFBFF\n";
    assert_int_equal(cpu_dump_parse(old, strlen(old), &d, &err), 0);
    assert_int_equal(d.n_raw, 2);
    assert_int_equal(d.raw[0].intel_fn4[1][CPU_EAX], 0x1C004122u);
    assert_int_equal(d.raw[0].intel_fn4[2][CPU_EAX], 0x1C004143u);
    assert_int_equal(d.raw[0].basic_cpuid[4][CPU_EDX], 0x77);
    assert_int_equal(d.raw[1].basic_cpuid[1][CPU_EBX], 0x02100800u);
    cpu_dump_free(&d);

    /* No headers at all: leaf 0 again starts the next CPU (never overwrites the first). */
    const char *bare = "CPUID 00000000 : 00000001 746E6543 736C7561 48727561\n"
                       "CPUID 00000001 : 0000067A 00000000 00000000 00803135\n"
                       "CPUID 00000000 : 00000001 746E6543 736C7561 48727561\n"
                       "CPUID 00000001 : 0000067A 00000000 00000000 00000001\n";
    assert_int_equal(cpu_dump_parse(bare, strlen(bare), &d, &err), 0);
    assert_int_equal(d.n_raw, 2);
    assert_int_equal(d.raw[0].basic_cpuid[1][CPU_EDX], 0x00803135u);
    cpu_dump_free(&d);
}

/* `cpuid -r`: CPU sections, explicit subleaves. */
static void test_dump_cpuid_tool(void **state)
{
    (void)state;
    const char *t = "CPU 0:\n"
                    "   0x00000000 0x00: eax=0x00000010 ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n"
                    "   0x00000001 0x00: eax=0x00a00f11 ebx=0x00020800 ecx=0xfffa3203 edx=0x178bfbff\n"
                    "   0x00000007 0x00: eax=0x00000001 ebx=0x219c07ab ecx=0x0040069c edx=0x88000010\n"
                    "   0x00000007 0x01: eax=0x00000030 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"
                    "   0x0000000d 0x00: eax=0x00000207 ebx=0x00000988 ecx=0x00000988 edx=0x00000000\n"
                    "   0x0000000d 0x01: eax=0x0000000f ebx=0x00000370 ecx=0x00001800 edx=0x00000000\n"
                    "   0x40000000 0x00: eax=0x40000001 ebx=0x4b4d564b ecx=0x564b4d56 edx=0x0000004d\n"
                    "   0x8000001d 0x02: eax=0x00000143 ebx=0x01c0003f ecx=0x000003ff edx=0x00000002\n"
                    "CPU 1:\n"
                    "   0x00000000 0x00: eax=0x00000010 ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n"
                    "   0x00000001 0x00: eax=0x00a00f11 ebx=0x01020800 ecx=0xfffa3203 edx=0x178bfbff\n";
    struct cpu_dump d;
    char *err = NULL;
    assert_int_equal(cpu_dump_parse(t, strlen(t), &d, &err), 0);
    assert_null(err);
    assert_int_equal(d.format, CPU_DUMP_FMT_CPUID_TOOL);
    assert_int_equal(d.n_raw, 2);
    assert_true(d.multi);
    assert_int_equal(d.raw[0].basic_cpuid[7][CPU_EAX], 1);
    assert_int_equal(d.extras.leaf7_1[CPU_EAX], 0x30);
    assert_int_equal(d.raw[0].basic_cpuid[0xd][CPU_EAX], 0x207);
    assert_int_equal(d.raw[0].amd_fn8000001dh[2][CPU_EAX], 0x143);
    assert_true(d.extras.have_hv);
    assert_int_equal(d.raw[1].basic_cpuid[1][CPU_EBX], 0x01020800u);
    cpu_dump_free(&d);
}

/* A fake CPU for cpu_dump_from_query: records what was asked. */
struct fake_cpu {
    int asked[64][2];
    int n;
    bool hypervisor;
    int fail_leaf;
};

static int fake_query(void *arg, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    struct fake_cpu *c = arg;
    if (c->n < 64) {
        c->asked[c->n][0] = (int)leaf;
        c->asked[c->n][1] = (int)sub;
        c->n++;
    }
    if ((int)leaf == c->fail_leaf)
        return -1;
    memset(out, 0, 16);
    if (leaf == 0) {
        out[0] = 7;
        out[1] = 0x68747541, out[2] = 0x444d4163, out[3] = 0x69746e65;
    } else if (leaf == 1) {
        out[0] = 0x00a00f11;
        out[2] = c->hypervisor ? 0x80000000u : 0;
    } else if (leaf == 4) {
        out[0] = sub < 2 ? 0x121 : 0; /* two caches, then type 0 */
    } else if (leaf == 7) {
        out[0] = sub == 0 ? 1 : 0x20;
        out[1] = sub == 0 ? 0x20 : 0;
    } else if (leaf == 0x80000000u) {
        out[0] = 0x80000001u;
    } else if (leaf == 0x80000001u) {
        out[3] = 1u << 29;
    } else if (leaf == 0x40000000u) {
        out[1] = 0x4b4d564b, out[2] = 0x564b4d56, out[3] = 0x4d;
    }
    return 0;
}

static bool fake_asked(const struct fake_cpu *c, int leaf, int sub)
{
    for (int i = 0; i < c->n; i++)
        if (c->asked[i][0] == leaf && c->asked[i][1] == sub)
            return true;
    return false;
}

static void test_dump_from_query(void **state)
{
    (void)state;
    struct fake_cpu c = {.fail_leaf = -1};
    struct cpu_dump d;
    char *err = NULL;
    assert_int_equal(cpu_dump_from_query(fake_query, &c, &d, &err), 0);
    assert_null(err);
    assert_int_equal(d.format, CPU_DUMP_FMT_DEVICE);
    assert_int_equal(d.n_raw, 1);
    assert_false(d.multi);
    assert_true(fake_asked(&c, 4, 2));   /* the leaf 4 walk stops at type 0 */
    assert_false(fake_asked(&c, 4, 3));
    assert_true(fake_asked(&c, 7, 1));   /* leaf 7 EAX says subleaf 1 exists */
    assert_false(fake_asked(&c, 8, 0));  /* beyond leaf 0's maximum */
    assert_false(fake_asked(&c, 0x40000000, 0)); /* no hypervisor bit */
    assert_int_equal(d.raw[0].intel_fn4[1][CPU_EAX], 0x121);
    assert_true(d.extras.have_7_1);
    assert_int_equal(d.extras.leaf7_1[CPU_EAX], 0x20);
    assert_int_equal(d.raw[0].ext_cpuid[1][CPU_EDX], 1u << 29);
    assert_false(d.extras.have_hv);
    cpu_dump_free(&d);

    memset(&c, 0, sizeof(c));
    c.hypervisor = true;
    c.fail_leaf = -1;
    assert_int_equal(cpu_dump_from_query(fake_query, &c, &d, &err), 0);
    assert_true(d.extras.have_hv);
    assert_int_equal(d.extras.hv[CPU_EBX], 0x4b4d564b);
    assert_false(fake_asked(&c, 0x40000100, 0)); /* only asked behind "Microsoft Hv" */
    cpu_dump_free(&d);

    memset(&c, 0, sizeof(c));
    c.fail_leaf = 7;
    assert_int_equal(cpu_dump_from_query(fake_query, &c, &d, &err), -1);
    assert_non_null(err);
    assert_non_null(strstr(err, "leaf 0x7"));
    assert_null(d.raw);
    free(err);
}

/* TEXT must be refused with a message containing WORDS. */
static void dump_refused(const char *text, size_t len, const char *words)
{
    struct cpu_dump d;
    char *err = NULL;
    assert_int_equal(cpu_dump_parse(text, len, &d, &err), -1);
    assert_non_null(err);
    if (!strstr(err, words))
        fail_msg("message \"%s\" lacks \"%s\"", err, words);
    assert_null(d.raw);
    free(err);
}

static void test_dump_parse_refuses(void **state)
{
    (void)state;
    dump_refused("", 0, "empty");
    dump_refused("a\0b", 3, "NUL");
    dump_refused("hello world\n", 12, "not a CPUID dump in a format gpucheckup reads");
    dump_refused("version=0.6.2\n\n\n", 16, "decodes to nothing");
    char *t = dump_text(AMD0, "basic_cpuid[2]=1 2 3\n");
    dump_refused(t, strlen(t), "line 5");
    free(t);
    t = dump_text(AMD0, "basic_cpuid[2]=1 2 3 4 5\n");
    dump_refused(t, strlen(t), "line 5");
    free(t);
    t = dump_text(AMD0, "basic_cpuid[2]=123456789 0 0 0\n");
    dump_refused(t, strlen(t), "line 5");
    free(t);
    t = dump_text(AMD0, "basic_cpuid[2]=0000000g 0 0 0\n");
    dump_refused(t, strlen(t), "line 5");
    free(t);
    t = dump_text(AMD0, CPU_DUMP_SEPARATOR "\ngpucheckup.xcr0=zz\n");
    dump_refused(t, strlen(t), "gpucheckup.xcr0");
    free(t);
    /* leaf 0 with no vendor, or no leaf 1 beyond it */
    t = dump_text("basic_cpuid[0]=0000000d 00000000 00000000 00000000", "");
    dump_refused(t, strlen(t), "no vendor string");
    free(t);
    t = dump_text("basic_cpuid[0]=00000000 68747541 444d4163 69746e65", "");
    dump_refused(t, strlen(t), "decodes to nothing");
    free(t);
    /* only leaf 1, no leaf 0 */
    const char *no0 = "basic_cpuid[1]=00a00f11 01020800 fffa3203 178bfbff\n";
    dump_refused(no0, strlen(no0), "decodes to nothing");
    /* an AIDA64 dump with leaf 0 only decodes to nothing */
    const char *aida = "------[ Versions ]------\nCPUID 00000000: 0000000D-68747541-69746E65-444D4163\n";
    dump_refused(aida, strlen(aida), "decodes to nothing");
    /* a line that starts like a leaf line but is cut short */
    const char *cut = "CPUID 00000000: 0000000D-68747541-69746E65-444D4163\nCPUID 00000001: 00100F43-000\n";
    dump_refused(cut, strlen(cut), "line 2");
    const char *badsl = "CPUID 00000000: 0000000D-68747541-69746E65-444D4163 [SL zz]\n";
    dump_refused(badsl, strlen(badsl), "[SL nn]");
    /* a `cpuid -r` line with a register missing */
    const char *tool = "CPU:\n   0x00000000 0x00: eax=0x00000010 ebx=0x68747541 ecx=0x444d4163\n";
    dump_refused(tool, strlen(tool), "line 2");
    /* other tools' formats are refused with the list of those accepted */
    const char *x86info = "eax in: 0x00000000, eax = 0000000d ebx = 756e6547 ecx = 6c65746e edx = 49656e69\n";
    dump_refused(x86info, strlen(x86info), "AIDA64/InstLatx64");
    const char *arm = "version=0.8.1\narm_midr=00000000413fd0c1\n";
    dump_refused(arm, strlen(arm), "ARM");
    /* a multi-CPU dump with a hole */
    char *m = NULL;
    size_t mn = 0;
    FILE *f = open_memstream(&m, &mn);
    fprintf(f, "version=0.6.2\n_________________ Logical CPU #0 _________________\n%s\n"
               "basic_cpuid[1]=00a00f11 01020800 fffa3203 178bfbff\n"
               "_________________ Logical CPU #2 _________________\n%s\n"
               "basic_cpuid[1]=00a00f11 01020800 fffa3203 178bfbff\n", AMD0, AMD0);
    fclose(f);
    dump_refused(m, strlen(m), "logical CPU #1");
    free(m);
    const char *many = "_________________ Logical CPU #99999 _________________\n";
    dump_refused(many, strlen(many), "more than");
}

static void test_dump_multi(void **state)
{
    (void)state;
    char *m = NULL;
    size_t mn = 0;
    FILE *f = open_memstream(&m, &mn);
    fprintf(f, "version=0.6.2\n");
    for (int cpu = 0; cpu < 3; cpu++)
        fprintf(f, "\n_________________ Logical CPU #%d _________________\n%s\n"
                   "basic_cpuid[1]=00a00f1%d 01020800 fffa3203 178bfbff\n", cpu, AMD0, cpu);
    fclose(f);
    struct cpu_dump d;
    char *err = NULL;
    assert_int_equal(cpu_dump_parse(m, strlen(m), &d, &err), 0);
    assert_true(d.multi);
    assert_int_equal(d.n_raw, 3);
    assert_int_equal(d.raw[2].basic_cpuid[1][CPU_EAX], 0x00a00f12);
    cpu_dump_free(&d);
    free(m);
}

static void test_dump_save_reads_back_in_libcpuid(void **state)
{
    (void)state;
    char dir[] = "/tmp/gc-cpu-unit-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/x.dump", dir);

    struct cpu_raw_data_t raw;
    memset(&raw, 0, sizeof(raw));
    struct cpu_leaves l;
    leaves_level(&l, 3, 0x7);
    memcpy(raw.basic_cpuid, l.basic, sizeof(l.basic));
    memcpy(raw.ext_cpuid, l.ext, sizeof(l.ext));
    raw.amd_fn8000001dh[3][CPU_EBX] = 0xdeadbeef;
    l.have_hv = true;
    l.hv[CPU_EBX] = 0x4b4d564b;
    l.have_hv2 = true;
    l.hv2[CPU_EDX] = 0x12345678;
    l.have_24 = true;
    l.leaf24[CPU_EBX] = 0x00070001;
    char *err = NULL;
    assert_int_equal(cpu_dump_save(path, &raw, &l, &err), 0);
    assert_null(err);

    /* libcpuid's own reader takes it (it stops at the separator before our extras) */
    struct cpu_raw_data_t back;
    memset(&back, 0, sizeof(back));
    assert_int_equal(cpuid_deserialize_raw_data(&back, path), 0);
    assert_memory_equal(&back, &raw, sizeof(raw));

    /* and ours gets the extras too */
    struct cpu_dump d;
    assert_int_equal(cpu_dump_load(path, &d, &err), 0);
    assert_memory_equal(&d.raw[0], &raw, sizeof(raw));
    assert_true(d.extras.have_xcr0);
    assert_int_equal(d.extras.xcr0, 0x7);
    assert_true(d.extras.have_hv);
    assert_int_equal(d.extras.hv[CPU_EBX], 0x4b4d564b);
    assert_true(d.extras.have_hv2);
    assert_int_equal(d.extras.hv2[CPU_EDX], 0x12345678);
    assert_false(d.extras.have_7_1);
    assert_true(d.extras.have_24);
    assert_int_equal(d.extras.leaf24[CPU_EBX], 0x00070001);
    cpu_dump_free(&d);

    /* errors name the problem, leave nothing behind */
    assert_int_equal(cpu_dump_save(dir, &raw, &l, &err), -1);
    assert_non_null(strstr(err, "directory"));
    free(err);
    char bad[300];
    snprintf(bad, sizeof(bad), "%s/missing/x.dump", dir);
    assert_int_equal(cpu_dump_save(bad, &raw, &l, &err), -1);
    assert_non_null(strstr(err, "cannot create"));
    free(err);
    assert_int_equal(cpu_dump_load(dir, &d, &err), -1);
    assert_non_null(strstr(err, "directory"));
    free(err);

    unlink(path);
    assert_int_equal(rmdir(dir), 0); /* empty: no temporary file left */
}

/* ---- /proc/cpuinfo ---- */

static void test_cpuinfo_x86(void **state)
{
    (void)state;
    const char *text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 151\n"
                       "model name\t: 12th Gen Intel(R) Core(TM) i7-12700K\nstepping\t: 2\nphysical id\t: 0\n"
                       "core id\t\t: 0\nflags\t\t: fpu sse sse2 avx avx2 lm hybrid_cpu\n\n"
                       "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 0\nflags\t\t: fpu sse sse2 avx avx2 lm hybrid_cpu\n\n"
                       "processor\t: 2\nphysical id\t: 0\ncore id\t\t: 16\nflags\t\t: fpu sse sse2 avx lm hybrid_cpu\n";
    struct cpu_cpuinfo ci;
    assert_int_equal(cpu_cpuinfo_parse(text, &ci), 0);
    assert_int_equal(ci.processors, 3);
    assert_int_equal(ci.cores, 2);
    assert_int_equal(ci.packages, 1);
    assert_string_equal(ci.arch, "x86_64");
    assert_string_equal(ci.vendor, "GenuineIntel");
    assert_string_equal(ci.model_name, "12th Gen Intel(R) Core(TM) i7-12700K");
    assert_int_equal(ci.family, 6);
    assert_int_equal(ci.model, 151);
    assert_int_equal(ci.stepping, 2);
    assert_true(ci.flags_differ);
    assert_true(cpu_cpuinfo_has(&ci, "avx"));
    assert_false(cpu_cpuinfo_has(&ci, "avx2")); /* not every processor lists it */
    assert_false(cpu_cpuinfo_has(&ci, "av"));
    cpu_cpuinfo_free(&ci);
}

static void test_cpuinfo_other_architectures(void **state)
{
    (void)state;
    struct cpu_cpuinfo ci;
    const char *arm = "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\n"
                      "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\nCPU revision\t: 1\n";
    assert_int_equal(cpu_cpuinfo_parse(arm, &ci), 0);
    assert_string_equal(ci.arch, "aarch64");
    assert_string_equal(ci.vendor, "ARM");
    assert_string_equal(ci.model_name, "Neoverse-V1");
    assert_int_equal(ci.processors, 1);
    assert_int_equal(ci.cores, -1);
    assert_true(cpu_cpuinfo_has(&ci, "sve"));
    cpu_cpuinfo_free(&ci);

    const char *ampere = "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0xc0\nCPU architecture: 8\n"
                         "CPU part\t: 0xac3\n";
    assert_int_equal(cpu_cpuinfo_parse(ampere, &ci), 0);
    assert_string_equal(ci.vendor, "Ampere");
    assert_string_equal(ci.model_name, "part 0xac3");
    cpu_cpuinfo_free(&ci);

    const char *rv = "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc_zicsr_zifencei\nmmu\t\t: sv39\n"
                     "uarch\t\t: sifive,u74-mc\n";
    assert_int_equal(cpu_cpuinfo_parse(rv, &ci), 0);
    assert_string_equal(ci.arch, "riscv64");
    assert_string_equal(ci.model_name, "sifive,u74-mc");
    assert_true(cpu_cpuinfo_has(&ci, "rv64imafdc_zicsr_zifencei"));
    cpu_cpuinfo_free(&ci);

    const char *s390 = "vendor_id       : IBM/S390\n# processors    : 2\nfeatures\t: esan3 zarch stfle msa vx\n";
    assert_int_equal(cpu_cpuinfo_parse(s390, &ci), 0);
    assert_string_equal(ci.arch, "s390x");
    assert_true(cpu_cpuinfo_has(&ci, "vx"));
    cpu_cpuinfo_free(&ci);

    /* junk: no crash, no facts */
    assert_int_equal(cpu_cpuinfo_parse(":\n::::\nprocessor: x\nflags:\n\n\nmodel : -3\n", &ci), 0);
    assert_int_equal(ci.processors, 0);
    assert_null(ci.arch);
    assert_int_equal(ci.n_flags, 0);
    assert_int_equal(ci.model, -1);
    cpu_cpuinfo_free(&ci);
}

/* A garbage file as large as the probe reads (32 MiB) must not take quadratic time: many
 * (physical id, core id) pairs and long differing flags lines once did (found by the reliability
 * work, issue 9). These sizes took minutes before; now well under a second. */
/* A huge /proc/cpuinfo (many processors, very long flag lines) is counted right. Its speed is a
 * benchmark matter, not asserted here: the sizes only need to be far past any real machine. */
static void test_cpuinfo_huge(void **state)
{
    (void)state;
    size_t cap = 4u * 1024u * 1024u, n = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    const int cpus = 4096;
    for (int i = 0; i < cpus; i++)
        n += (size_t)snprintf(text + n, cap - n, "processor\t: %d\nphysical id\t: %d\ncore id\t: %d\n\n", i,
                              i % 4, i / 2); /* two threads per core */
    /* then two processors with 8192 flags each, 8191 in common */
    for (int line = 0; line < 2; line++) {
        n += (size_t)snprintf(text + n, cap - n, "processor\t: %d\nflags\t\t:", cpus + line);
        for (int i = line; i < 8192 + line; i++)
            n += (size_t)snprintf(text + n, cap - n, " f%d", i);
        n += (size_t)snprintf(text + n, cap - n, "\n\n");
    }
    assert_true(n < cap - 1);
    struct cpu_cpuinfo ci;
    assert_int_equal(cpu_cpuinfo_parse(text, &ci), 0);
    assert_int_equal(ci.processors, cpus + 2);
    /* pairs (i % 4, i / 2): i and i + 1 share i / 2 but differ in i % 4, so every pair is new */
    assert_int_equal(ci.cores, cpus);
    assert_int_equal(ci.packages, 4);
    assert_true(ci.flags_differ);
    assert_int_equal(ci.n_flags, 8191);
    assert_true(cpu_cpuinfo_has(&ci, "f1"));
    assert_true(cpu_cpuinfo_has(&ci, "f8191"));
    assert_false(cpu_cpuinfo_has(&ci, "f8192"));
    assert_false(cpu_cpuinfo_has(&ci, "f0"));
    cpu_cpuinfo_free(&ci);
    free(text);
}

/* The dump text is LEN bytes with no NUL after it (as cpu_dump_load reads a file): nothing may read
 * past it, even under ASan's strict_string_checks (the suite's sanitizer stage sets it). */
static void test_dump_parse_unterminated(void **state)
{
    (void)state;
    char *t = dump_text(AMD0, "");
    size_t len = strlen(t);
    char *exact = malloc(len);
    assert_non_null(exact);
    memcpy(exact, t, len);
    struct cpu_dump d;
    char *err = NULL;
    assert_int_equal(cpu_dump_parse(exact, len, &d, &err), 0);
    assert_int_equal(d.n_raw, 1);
    cpu_dump_free(&d);
    /* and a refusal that quotes the last, unterminated line */
    memcpy(exact + len - 4, "zzzz", 4);
    assert_int_equal(cpu_dump_parse(exact, len, &d, &err), -1);
    assert_non_null(err);
    free(err);
    free(exact);
    free(t);
}

/* Duplicate (physical id, core id) pairs count once, however they are ordered. */
static void test_cpuinfo_duplicate_pairs(void **state)
{
    (void)state;
    const char *text = "processor: 0\nphysical id: 1\ncore id: 5\n\n"
                       "processor: 1\nphysical id: 0\ncore id: 5\n\n"
                       "processor: 2\nphysical id: 1\ncore id: 5\n\n"
                       "processor: 3\nphysical id: 1\ncore id: 2\n\n"
                       "processor: 4\nphysical id: 0\ncore id: 5\n\n";
    struct cpu_cpuinfo ci;
    assert_int_equal(cpu_cpuinfo_parse(text, &ci), 0);
    assert_int_equal(ci.processors, 5);
    assert_int_equal(ci.cores, 3);
    assert_int_equal(ci.packages, 2);
    cpu_cpuinfo_free(&ci);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_sane),
        cmocka_unit_test(test_bits_agree_with_libcpuid),
        cmocka_unit_test(test_identification),
        cmocka_unit_test(test_hypervisor),
        cmocka_unit_test(test_xcr0_gates_avx),
        cmocka_unit_test(test_xcr0_gates_avx512_and_amx),
        cmocka_unit_test(test_xcr0_assumed_from_leaf_0xd),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_avx10),
        cmocka_unit_test(test_missing_leaves),
        cmocka_unit_test(test_dump_parse_valid),
        cmocka_unit_test(test_dump_parse_refuses),
        cmocka_unit_test(test_dump_multi),
        cmocka_unit_test(test_dump_aida64_subleaves),
        cmocka_unit_test(test_dump_cpuid_tool),
        cmocka_unit_test(test_dump_from_query),
        cmocka_unit_test(test_dump_save_reads_back_in_libcpuid),
        cmocka_unit_test(test_cpuinfo_x86),
        cmocka_unit_test(test_cpuinfo_other_architectures),
        cmocka_unit_test(test_cpuinfo_huge),
        cmocka_unit_test(test_cpuinfo_duplicate_pairs),
        cmocka_unit_test(test_dump_parse_unterminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
