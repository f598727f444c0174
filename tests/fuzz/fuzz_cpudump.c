/* fuzz_cpudump.c: libFuzzer target for raw CPUID dumps (--cpuid-dump: every format) and gpucheckup's decoding of them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_dump.h"
#include "cpu_x86.h"
#include "fuzz_common.h"

/* A CPUID signature: printable ASCII up to its end. */
static void fuzz_cpudump_ascii(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == cap)
        abort(); /* not terminated */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
            abort();
}

static void fuzz_cpudump_decode(const struct cpu_dump *d)
{
    struct cpu_leaves l;
    cpu_leaves_from_raw(&d->raw[0], &l);
    l.have_7_1 = d->extras.have_7_1;
    memcpy(l.leaf7_1, d->extras.leaf7_1, sizeof(l.leaf7_1));
    l.have_24 = d->extras.have_24;
    memcpy(l.leaf24, d->extras.leaf24, sizeof(l.leaf24));
    l.have_hv = d->extras.have_hv;
    memcpy(l.hv, d->extras.hv, sizeof(l.hv));
    l.have_hv2 = d->extras.have_hv2;
    memcpy(l.hv2, d->extras.hv2, sizeof(l.hv2));
    l.have_xcr0 = d->extras.have_xcr0;
    l.xcr0 = d->extras.xcr0;

    struct cpu_x86_view v;
    cpu_x86_decode(&l, &v);
    fuzz_cpudump_ascii(v.vendor, sizeof(v.vendor));
    fuzz_cpudump_ascii(v.brand, sizeof(v.brand));
    fuzz_cpudump_ascii(v.hv_signature, sizeof(v.hv_signature));
    size_t bl = strlen(v.brand);
    if (bl && (v.brand[0] == ' ' || v.brand[bl - 1] == ' ' || strstr(v.brand, "  ")))
        abort(); /* trimmed and squeezed */
    if (v.level < 0 || v.level > 4 || v.level != cpu_x86_level(v.usable))
        abort();
    for (size_t i = 0; i < cpu_flag_count; i++) {
        if (v.reported[i] < -1 || v.reported[i] > 1 || v.usable[i] < -1 || v.usable[i] > 1)
            abort();
        /* usable only when reported; never more known than reported */
        if (v.usable[i] == CPU_YES && v.reported[i] != CPU_YES)
            abort();
        if (v.reported[i] != CPU_YES && v.usable[i] != v.reported[i])
            abort();
    }
    if (v.state_avx512 && !v.state_avx)
        abort();
    /* AVX10's version comes only with the flag, and only from leaf 0x24's 8-bit field */
    int a10 = cpu_flag_index("avx10");
    if (v.avx10_version != 0 && (a10 < 0 || v.reported[a10] != CPU_YES))
        abort();
    if (v.avx10_version < -1 || v.avx10_version > 255 || v.avx10_vector_bits > 7 ||
        (v.avx10_version <= 0 && v.avx10_vector_bits != 0))
        abort();
    if (!v.osxsave && (v.xcr0 || v.xcr0_source != CPU_XCR0_NONE || v.state_avx || v.state_amx))
        abort();
    const char *missing[CPU_FLAG_MAX];
    size_t nm = cpu_x86_level_missing(v.usable, v.level, missing, CPU_FLAG_MAX);
    if (nm != 0)
        abort(); /* the level reached lacks nothing */
    if (v.level < 4 && cpu_x86_level_missing(v.usable, v.level + 1, missing, CPU_FLAG_MAX) == 0)
        abort(); /* and the next one lacks something */
    (void)cpu_x86_microarchitecture(v.vendor, v.family, v.model);
}

/* A CPU whose answers come from the input: leaf/subleaf pick 16 bytes of it (the /dev/cpu/N/cpuid
 * path, cpu_dump_from_query). Counts the questions. */
struct fuzz_cpu {
    const uint8_t *data;
    size_t size;
    unsigned asked;
};

static int fuzz_cpudump_query(void *arg, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    struct fuzz_cpu *c = arg;
    c->asked++;
    if (c->size < 16)
        return -1;
    size_t slots = c->size / 16;
    size_t i = ((size_t)(leaf & 0xff) * 8 + (leaf >> 30) * 3 + sub) % slots;
    memcpy(out, c->data + 16 * i, 16);
    return 0;
}

static void fuzz_cpudump_device(const uint8_t *data, size_t size)
{
    struct fuzz_cpu c = {data, size, 0};
    struct cpu_dump d;
    char *err = NULL;
    if (cpu_dump_from_query(fuzz_cpudump_query, &c, &d, &err) < 0) {
        if (!err || !*err || d.raw || d.n_raw)
            abort();
        fuzz_require_sanitized(err);
        free(err);
    } else {
        if (err || d.format != CPU_DUMP_FMT_DEVICE || d.n_raw != 1 || d.multi || d.ignored || d.extras.have_xcr0)
            abort();
        fuzz_cpudump_decode(&d);
        cpu_dump_free(&d);
    }
    /* leaves 0..31 (with bounded subleaf walks), 0x80000000..0x8000001f, two hypervisor leaves */
    if (c.asked > 32 + 8 + 3 * 4 + 1 + 32 + 4 + 2)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_cpudump_device(data, size);
    if (size > 256 * 1024)
        return 0;
    char *copy = malloc(size ? size : 1); /* exactly SIZE bytes, not NUL-terminated: the parser takes LEN */
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct cpu_dump d;
    char *err = NULL;
    int rc = cpu_dump_parse(copy, size, &d, &err);
    if (rc < 0) {
        /* Every failure says why, in sanitised words; nothing is left allocated. */
        if (!err || !*err || d.raw || d.n_raw)
            abort();
        fuzz_require_sanitized(err);
        free(err);
    } else {
        if (err || !d.raw || d.n_raw == 0 || d.n_raw > CPU_DUMP_MAX_CPUS || (!d.multi && d.n_raw != 1))
            abort();
        if (d.format != CPU_DUMP_FMT_LIBCPUID && d.format != CPU_DUMP_FMT_AIDA64 && d.format != CPU_DUMP_FMT_CPUID_TOOL)
            abort(); /* a text is never "unknown" once accepted, nor a device */
        /* only libcpuid's format has a version line, gpucheckup's extras (XCR0) and ignored lines */
        if (d.format != CPU_DUMP_FMT_LIBCPUID && (d.version[0] || d.extras.have_xcr0 || d.ignored))
            abort();
        if (strnlen(d.version, sizeof(d.version)) == sizeof(d.version))
            abort();
        fuzz_require_sanitized(d.version);
        if (d.raw[0].basic_cpuid[0][0] < 1)
            abort(); /* accepted only with a leaf 1 */
        fuzz_cpudump_decode(&d);
        cpu_dump_free(&d);
        if (d.raw || d.n_raw)
            abort();
    }
    free(copy);
    return 0;
}
