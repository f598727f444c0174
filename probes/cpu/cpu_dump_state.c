/* cpu_dump_state.c: what every CPUID dump format's line parser shares: the per-CPU leaf state, hex fields, the bad-line message. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_dump.h"
#include "cpu_dump_internal.h"
#include "strutil.h"

int cpu_dump_grow(struct cpu_dump_state *st, size_t n)
{
    struct cpu_dump *d = st->d;
    if (n <= d->n_raw)
        return 0;
    bool *n0 = realloc(st->seen0, n * sizeof(bool));
    if (!n0)
        return -1;
    st->seen0 = n0;
    bool *n1 = realloc(st->seen1, n * sizeof(bool));
    if (!n1)
        return -1;
    st->seen1 = n1;
    struct cpu_raw_data_t *nr = realloc(d->raw, n * sizeof(*nr));
    if (!nr)
        return -1;
    d->raw = nr;
    /* libcpuid 0.6 leaves fields a dump does not name untouched: start from zeros. */
    memset(&d->raw[d->n_raw], 0, (n - d->n_raw) * sizeof(*nr));
    memset(st->seen0 + d->n_raw, 0, (n - d->n_raw) * sizeof(bool));
    memset(st->seen1 + d->n_raw, 0, (n - d->n_raw) * sizeof(bool));
    d->n_raw = n;
    return 0;
}

/* Start logical CPU IDX (a section header). Returns 0, or -1 with *ERR. */
int cpu_dump_start_cpu(struct cpu_dump_state *st, unsigned long idx, unsigned lineno, char **err)
{
    if (idx >= CPU_DUMP_MAX_CPUS) {
        *err = str_printf("line %u: logical CPU #%lu: more than %u CPUs", lineno, idx, CPU_DUMP_MAX_CPUS);
        return -1;
    }
    if (cpu_dump_grow(st, idx + 1) < 0) {
        *err = str_dup("out of memory");
        return -1;
    }
    st->cur = (long)idx;
    st->d->multi = true;
    return 0;
}

/* The 4 registers of CPUID leaf LEAF, subleaf SUB, for the current CPU, where libcpuid's raw struct
 * (and gpucheckup's extras, for CPU #0) keep them. Subleaf 0 of a basic or extended leaf is its
 * basic_cpuid/ext_cpuid row; the subleaves libcpuid 0.6 records go to its arrays (bounded by their
 * sizes); leaf 7 subleaf 1, leaf 0x24 (AVX10) and the hypervisor leaves to the extras. Everything else is dropped:
 * gpucheckup decodes nothing from it. Returns 0, or -1 (out of memory). */
int cpu_dump_put(struct cpu_dump_state *st, uint32_t leaf, uint32_t sub, const uint32_t regs[4])
{
    if (st->cur < 0) {
        if (cpu_dump_grow(st, 1) < 0)
            return -1;
        st->cur = 0;
    }
    struct cpu_raw_data_t *raw = &st->d->raw[st->cur];
    struct cpu_leaves *x = &st->d->extras;
    uint32_t(*row)[4] = NULL;
    if (sub == 0 && leaf < MAX_CPUID_LEVEL)
        row = &raw->basic_cpuid[leaf];
    else if (sub == 0 && leaf >= 0x80000000u && leaf - 0x80000000u < MAX_EXT_CPUID_LEVEL)
        row = &raw->ext_cpuid[leaf - 0x80000000u];
    if (row) {
        memcpy(*row, regs, sizeof(*row));
        if (leaf <= 1)
            (leaf == 0 ? st->seen0 : st->seen1)[st->cur] = true;
    }
    /* libcpuid keeps these subleaves (subleaf 0 included) in arrays of its own. */
    static const struct {
        uint32_t leaf;
        size_t offset;
        unsigned n;
    } arrays[] = {
        {4, offsetof(struct cpu_raw_data_t, intel_fn4), MAX_INTELFN4_LEVEL},
        {0xb, offsetof(struct cpu_raw_data_t, intel_fn11), MAX_INTELFN11_LEVEL},
        {0x12, offsetof(struct cpu_raw_data_t, intel_fn12h), MAX_INTELFN12H_LEVEL},
        {0x14, offsetof(struct cpu_raw_data_t, intel_fn14h), MAX_INTELFN14H_LEVEL},
        {0x8000001du, offsetof(struct cpu_raw_data_t, amd_fn8000001dh), MAX_AMDFN8000001DH_LEVEL},
    };
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
        if (arrays[i].leaf == leaf && sub < arrays[i].n) {
            uint32_t(*a)[4] = (uint32_t(*)[4])((char *)raw + arrays[i].offset);
            memcpy(a[sub], regs, sizeof(a[sub]));
        }
    }
    if (st->cur != 0)
        return 0;
    if (leaf == 7 && sub == 1) {
        memcpy(x->leaf7_1, regs, sizeof(x->leaf7_1));
        x->have_7_1 = true;
    } else if (leaf == 0x24 && sub == 0) {
        memcpy(x->leaf24, regs, sizeof(x->leaf24));
        x->have_24 = true;
    } else if (leaf == 0x40000000u && sub == 0) {
        memcpy(x->hv, regs, sizeof(x->hv));
        x->have_hv = true;
    } else if (leaf == 0x40000100u && sub == 0) {
        memcpy(x->hv2, regs, sizeof(x->hv2));
        x->have_hv2 = true;
    }
    return 0;
}

/* An excerpt of LINE for a message (heap). */
static char *cpu_dump_excerpt(const char *line, size_t len)
{
    size_t n = len > 40 ? 40 : len;
    char *s = str_printf("%.*s%s", (int)n, line, len > n ? "..." : "");
    return s ? str_sanitize(s) : NULL;
}

char *cpu_dump_bad_line(unsigned lineno, const char *line, const char *what)
{
    char *ex = cpu_dump_excerpt(line, strlen(line));
    char *e = str_printf("line %u is not part of %s: \"%s\"", lineno, what, ex ? ex : "");
    free(ex);
    return e;
}

/* Exactly DIGITS hex digits at *P (or 1..DIGITS with EXACT false) into *V; advances *P. Returns 0 or -1. */
int cpu_dump_hex32(const char **p, unsigned digits, bool exact, uint32_t *v)
{
    unsigned n = 0;
    uint32_t x = 0;
    const char *s = *p;
    while (n < digits && isxdigit((unsigned char)s[n])) {
        int c = tolower((unsigned char)s[n]);
        x = x * 16 + (uint32_t)(c <= '9' ? c - '0' : c - 'a' + 10);
        n++;
    }
    if (n == 0 || (exact && n != digits) || isxdigit((unsigned char)s[n]))
        return -1;
    *v = x;
    *p = s + n;
    return 0;
}

const char *cpu_dump_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}
