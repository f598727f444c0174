/* cpu_dump.c: raw CPUID dumps: format detection, libcpuid's format (plus gpucheckup's extras) and the dispatch (the shared parser state: cpu_dump_state.c). */
#include "cpu_dump.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_dump_internal.h"
#include "strutil.h"

/* The arrays of libcpuid's raw struct, by the name its serializer writes. */
struct cpu_dump_array {
    const char *name;
    size_t offset; /* of the uint32_t[N][4] array in struct cpu_raw_data_t */
    unsigned n;
};

#define CPU_DUMP_ARRAY(field, count) {#field, offsetof(struct cpu_raw_data_t, field), count}
static const struct cpu_dump_array cpu_dump_arrays[] = {
    CPU_DUMP_ARRAY(basic_cpuid, MAX_CPUID_LEVEL),
    CPU_DUMP_ARRAY(ext_cpuid, MAX_EXT_CPUID_LEVEL),
    CPU_DUMP_ARRAY(intel_fn4, MAX_INTELFN4_LEVEL),
    CPU_DUMP_ARRAY(intel_fn11, MAX_INTELFN11_LEVEL),
    CPU_DUMP_ARRAY(intel_fn12h, MAX_INTELFN12H_LEVEL),
    CPU_DUMP_ARRAY(intel_fn14h, MAX_INTELFN14H_LEVEL),
    CPU_DUMP_ARRAY(amd_fn8000001dh, MAX_AMDFN8000001DH_LEVEL),
};

void cpu_dump_free(struct cpu_dump *d)
{
    free(d->raw);
    d->raw = NULL;
    d->n_raw = 0;
}

void cpu_leaves_from_raw(const struct cpu_raw_data_t *raw, struct cpu_leaves *l)
{
    memset(l, 0, sizeof(*l));
    _Static_assert(MAX_CPUID_LEVEL == 32 && MAX_EXT_CPUID_LEVEL == 32, "libcpuid raw layout changed");
    memcpy(l->basic, raw->basic_cpuid, sizeof(l->basic));
    memcpy(l->ext, raw->ext_cpuid, sizeof(l->ext));
}

/* Parse up to 4 hex words separated by blanks, then the end of S. Returns how many, or -1 on junk. */
static int cpu_dump_hex_words(const char *s, uint64_t *out, int max, unsigned max_digits)
{
    int n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            return n;
        if (n == max)
            return -1;
        unsigned digits = 0;
        uint64_t v = 0;
        while (isxdigit((unsigned char)*s)) {
            if (++digits > max_digits)
                return -1;
            int c = tolower((unsigned char)*s);
            v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
            s++;
        }
        if (digits == 0 || (*s != '\0' && *s != ' ' && *s != '\t'))
            return -1;
        out[n++] = v;
    }
}

/* "name[index]=rest": split LINE (NUL-terminated, modified). Returns 0 or -1. */
static int cpu_dump_split_indexed(char *line, char **name, unsigned long *index, char **rest)
{
    char *p = line;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')
        p++;
    if (p == line || *p != '[')
        return -1;
    *p++ = '\0';
    char *digits = p;
    while (isdigit((unsigned char)*p))
        p++;
    if (p == digits || p - digits > 6 || p[0] != ']' || p[1] != '=')
        return -1;
    p[0] = '\0';
    *name = line;
    *index = strtoul(digits, NULL, 10);
    *rest = p + 2;
    return 0;
}

/* "name=rest" with a lower-case identifier (dots allowed). Returns 0 or -1. */
static int cpu_dump_split_plain(char *line, char **name, char **rest)
{
    char *p = line;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_' || *p == '.')
        p++;
    if (p == line || *p != '=')
        return -1;
    *p = '\0';
    *name = line;
    *rest = p + 1;
    return 0;
}

/* One line of gpucheckup's extras (after the separator). Unknown lines are ignored (libcpuid's own
 * test files keep expected values there). Returns 0, or -1 with *ERR. */
static int cpu_dump_extra(struct cpu_dump *d, char *line, unsigned lineno, char **err)
{
    char *name, *rest;
    if (!str_starts_with(line, "gpucheckup.") || cpu_dump_split_plain(line, &name, &rest) < 0)
        return 0;
    uint64_t w[4];
    int n;
    uint32_t *dst = NULL;
    bool *have = NULL;
    if (strcmp(name, "gpucheckup.cpuid_7_1") == 0)
        dst = d->extras.leaf7_1, have = &d->extras.have_7_1;
    else if (strcmp(name, "gpucheckup.cpuid_24") == 0)
        dst = d->extras.leaf24, have = &d->extras.have_24;
    else if (strcmp(name, "gpucheckup.cpuid_40000000") == 0)
        dst = d->extras.hv, have = &d->extras.have_hv;
    else if (strcmp(name, "gpucheckup.cpuid_40000100") == 0)
        dst = d->extras.hv2, have = &d->extras.have_hv2;
    if (dst) {
        n = cpu_dump_hex_words(rest, w, 4, 8);
        if (n != 4) {
            *err = str_printf("line %u: %s needs four 32-bit hex words", lineno, name);
            return -1;
        }
        for (int i = 0; i < 4; i++)
            dst[i] = (uint32_t)w[i];
        *have = true;
    } else if (strcmp(name, "gpucheckup.xcr0") == 0) {
        n = cpu_dump_hex_words(rest, w, 1, 16);
        if (n != 1) {
            *err = str_printf("line %u: gpucheckup.xcr0 needs one 64-bit hex value", lineno);
            return -1;
        }
        d->extras.xcr0 = w[0];
        d->extras.have_xcr0 = true;
    }
    return 0;
}

/* Which format TEXT is in: decided by the first line that only one of them has. */
static enum cpu_dump_format cpu_dump_detect(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    char line[96];
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t n = ll < sizeof(line) - 1 ? ll : sizeof(line) - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        p = nl ? nl + 1 : end;
        char *s = str_trim(line);
        uint32_t leaf;
        const char *after;
        char *name, *rest;
        unsigned long idx;
        if (str_starts_with(s, "version=") || s[0] == '_')
            return CPU_DUMP_FMT_LIBCPUID;
        if (cpu_dump_aida_leafish(s, &leaf, &after) || (!cpu_dump_tool_header(s) && cpu_dump_aida_header(s) != -1))
            return CPU_DUMP_FMT_AIDA64;
        if (cpu_dump_tool_leafish(s))
            return CPU_DUMP_FMT_CPUID_TOOL;
        if (cpu_dump_tool_header(s))
            continue; /* both `cpuid -r` and a few AIDA64-style files have "CPU 0:" */
        if (cpu_dump_split_indexed(s, &name, &idx, &rest) == 0)
            return CPU_DUMP_FMT_LIBCPUID;
    }
    return CPU_DUMP_FMT_UNKNOWN;
}

const char *cpu_dump_format_name(enum cpu_dump_format f)
{
    switch (f) {
    case CPU_DUMP_FMT_LIBCPUID: return "libcpuid";
    case CPU_DUMP_FMT_AIDA64: return "aida64";
    case CPU_DUMP_FMT_CPUID_TOOL: return "cpuid-r";
    case CPU_DUMP_FMT_DEVICE: return "dev-cpuid";
    case CPU_DUMP_FMT_UNKNOWN: break;
    }
    return "unknown";
}

/* One line of libcpuid's format. Returns 0, or -1 with *ERR. */
static int cpu_dump_line_libcpuid(struct cpu_dump_state *st, char *line, const char *orig, size_t olen,
                                  unsigned lineno, bool *arm, char **err)
{
    struct cpu_dump *d = st->d;
    if (str_starts_with(line, "version=")) {
        snprintf(d->version, sizeof(d->version), "%s", line + 8);
        str_sanitize(d->version);
        return 0;
    }
    if (line[0] == '_') {
        const char *tag = strstr(line, "Logical CPU #");
        long idx = tag ? cpu_dump_number_after(tag, "Logical CPU #") : -1;
        if (idx < 0 || strspn(line, "_") < 3) {
            *err = cpu_dump_bad_line(lineno, line, "a libcpuid raw CPUID dump");
            return -1;
        }
        return cpu_dump_start_cpu(st, (unsigned long)idx, lineno, err);
    }
    char *name, *rest;
    unsigned long index;
    uint64_t w[4];
    if (cpu_dump_split_indexed(line, &name, &index, &rest) == 0 && cpu_dump_hex_words(rest, w, 4, 8) == 4) {
        if (st->cur < 0 && cpu_dump_grow(st, 1) == 0)
            st->cur = 0;
        if (st->cur < 0) {
            *err = str_dup("out of memory");
            return -1;
        }
        const struct cpu_dump_array *a = NULL;
        for (size_t i = 0; i < sizeof(cpu_dump_arrays) / sizeof(cpu_dump_arrays[0]); i++)
            if (strcmp(cpu_dump_arrays[i].name, name) == 0)
                a = &cpu_dump_arrays[i];
        if (!a || index >= a->n) {
            d->ignored++; /* a leaf a newer libcpuid records */
            return 0;
        }
        uint32_t(*regs)[4] = (uint32_t(*)[4])((char *)&d->raw[st->cur] + a->offset);
        for (int i = 0; i < 4; i++)
            regs[index][i] = (uint32_t)w[i];
        if (a->offset == offsetof(struct cpu_raw_data_t, basic_cpuid) && index <= 1)
            (index == 0 ? st->seen0 : st->seen1)[st->cur] = true;
        return 0;
    }
    /* Again from the original text (split_indexed wrote NULs into LINE). */
    char *copy = str_copy_n(orig, olen);
    if (!copy) {
        *err = str_dup("out of memory");
        return -1;
    }
    char *t = str_trim(copy);
    int rc = 0;
    if (cpu_dump_split_plain(t, &name, &rest) == 0 && cpu_dump_hex_words(rest, w, 1, 16) == 1) {
        if (str_starts_with(name, "arm_"))
            *arm = true; /* libcpuid >= 0.7 dumps ARM system registers */
        d->ignored++;
    } else {
        char *again = str_copy_n(orig, olen);
        *err = cpu_dump_bad_line(lineno, again ? str_trim(again) : "", "a libcpuid raw CPUID dump");
        free(again);
        rc = -1;
    }
    free(copy);
    return rc;
}

/* Checks every format's result must pass. Returns 0, or -1 with *ERR. */
int cpu_dump_finish(struct cpu_dump_state *st, bool arm, char **err)
{
    struct cpu_dump *d = st->d;
    const char *l01 = d->format == CPU_DUMP_FMT_LIBCPUID ? "basic_cpuid[0] and basic_cpuid[1] lines"
                                                         : "leaf 0 and leaf 1 (subleaf 0) lines";
    if (d->n_raw == 0 || !st->seen0[0] || !st->seen1[0]) {
        *err = str_printf("decodes to nothing: no %s%s", l01,
                          arm ? " (an ARM dump: gpucheckup decodes x86 CPUID dumps only)" : "");
        return -1;
    }
    for (size_t i = 0; i < d->n_raw; i++) {
        if (!st->seen0[i] || !st->seen1[i]) {
            *err = str_printf("decodes to nothing for logical CPU #%zu: its %s are missing", i, l01);
            return -1;
        }
    }
    /* Leaf 0 must name a vendor and at least leaf 1. */
    const uint32_t *l0 = d->raw[0].basic_cpuid[0];
    char vendor[13];
    memcpy(vendor, &l0[CPU_EBX], 4);
    memcpy(vendor + 4, &l0[CPU_EDX], 4);
    memcpy(vendor + 8, &l0[CPU_ECX], 4);
    vendor[12] = '\0';
    bool printable = true;
    for (int i = 0; i < 12; i++)
        if ((unsigned char)vendor[i] < 0x20 || (unsigned char)vendor[i] > 0x7e)
            printable = false;
    if (l0[CPU_EAX] < 1 || !printable) {
        *err = str_printf("decodes to nothing: leaf 0 has %s", l0[CPU_EAX] < 1 ? "no leaf 1 beyond it" : "no vendor string");
        return -1;
    }
    return 0;
}

int cpu_dump_parse(const char *text, size_t len, struct cpu_dump *d, char **err)
{
    memset(d, 0, sizeof(*d));
    *err = NULL;
    if (len == 0) {
        *err = str_dup("the file is empty");
        return -1;
    }
    if (memchr(text, '\0', len)) {
        *err = str_dup("not a text file (it contains NUL bytes), so not a CPUID dump");
        return -1;
    }
    d->format = cpu_dump_detect(text, len);
    if (d->format == CPU_DUMP_FMT_UNKNOWN) {
        *err = str_dup("not a CPUID dump in a format gpucheckup reads: " CPU_DUMP_FORMATS);
        return -1;
    }
    struct cpu_dump_state st = {.d = d, .cur = -1};
    bool trailer = false, arm = false;
    int64_t prev_leaf = -1;
    uint32_t prev_sub = 0;
    unsigned lineno = 0;
    const char *p = text, *end = text + len;
    char *line = NULL;
    int rc = -1;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        const char *lstart = p;
        free(line);
        line = str_copy_n(p, ll);
        p = nl ? nl + 1 : end;
        if (!line) {
            *err = str_dup("out of memory");
            goto out;
        }
        char *s = str_trim(line); /* also drops a CR from a dump that went through Windows */
        if (s[0] == '\0')
            continue;
        switch (d->format) {
        case CPU_DUMP_FMT_LIBCPUID:
            if (trailer) {
                if (cpu_dump_extra(d, s, lineno, err) < 0)
                    goto out;
            } else if (strspn(s, "-") == strlen(s) && strlen(s) >= 10) {
                trailer = true;
            } else if (cpu_dump_line_libcpuid(&st, s, lstart, ll, lineno, &arm, err) < 0) {
                goto out;
            }
            break;
        case CPU_DUMP_FMT_AIDA64:
            if (cpu_dump_line_aida(&st, s, lineno, &prev_leaf, &prev_sub, err) < 0)
                goto out;
            break;
        case CPU_DUMP_FMT_CPUID_TOOL:
            if (cpu_dump_line_tool(&st, s, lineno, err) < 0)
                goto out;
            break;
        default:
            goto out;
        }
    }
    if (cpu_dump_finish(&st, arm, err) < 0)
        goto out;
    rc = 0;
out:
    free(line);
    free(st.seen0);
    free(st.seen1);
    if (rc < 0)
        cpu_dump_free(d);
    return rc;
}
