/* fuzz_cpudump.c: libFuzzer target for raw CPUID dumps (--cpuid-dump) and gpucheckup's decoding of them. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
