/* cpu_dump.c: raw CPUID dumps (libcpuid's format plus gpucheckup's extras, AIDA64/InstLatx64, `cpuid -r`, /dev/cpu/N/cpuid): strict reading, atomic writing. */
#include "cpu_dump.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "strutil.h"
#include "writer.h"
#include "fdio.h"

/* The character major of /dev/cpu/N/cpuid (Linux: CPUID_MAJOR in arch/x86/kernel/cpuid.c). */
#define CPU_DUMP_CPUID_MAJOR 203u

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

/* The N bytes at S as a new string (heap). Not strndup: the dump text need not be NUL-terminated,
 * and a checker (ASan's strict_string_checks) makes strndup read on to a NUL. */
static char *cpu_dump_copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* An excerpt of LINE for a message (heap). */
static char *cpu_dump_excerpt(const char *line, size_t len)
{
    size_t n = len > 40 ? 40 : len;
    char *s = str_printf("%.*s%s", (int)n, line, len > n ? "..." : "");
    return s ? str_sanitize(s) : NULL;
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

/* The parser's state: the dump being filled, which logical CPU lines go to, and per CPU whether
 * leaves 0 and 1 were seen (without them there is nothing to decode). */
struct cpu_dump_state {
    struct cpu_dump *d;
    bool *seen0, *seen1;
    long cur; /* logical CPU the next leaf belongs to; -1 before the first */
};

static int cpu_dump_grow(struct cpu_dump_state *st, size_t n)
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
static int cpu_dump_start_cpu(struct cpu_dump_state *st, unsigned long idx, unsigned lineno, char **err)
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
 * sizes); leaf 7 subleaf 1 and the hypervisor leaves to the extras. Everything else is dropped:
 * gpucheckup decodes nothing from it. Returns 0, or -1 (out of memory). */
static int cpu_dump_put(struct cpu_dump_state *st, uint32_t leaf, uint32_t sub, const uint32_t regs[4])
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
    } else if (leaf == 0x40000000u && sub == 0) {
        memcpy(x->hv, regs, sizeof(x->hv));
        x->have_hv = true;
    } else if (leaf == 0x40000100u && sub == 0) {
        memcpy(x->hv2, regs, sizeof(x->hv2));
        x->have_hv2 = true;
    }
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

/* Exactly DIGITS hex digits at *P (or 1..DIGITS with EXACT false) into *V; advances *P. Returns 0 or -1. */
static int cpu_dump_hex32(const char **p, unsigned digits, bool exact, uint32_t *v)
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

static const char *cpu_dump_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* The decimal number after PREFIX at the start of S (blanks allowed before it), or -1. */
static long cpu_dump_number_after(const char *s, const char *prefix)
{
    if (!str_starts_with(s, prefix))
        return -1;
    s = cpu_dump_blanks(s + strlen(prefix));
    if (!isdigit((unsigned char)*s))
        return -1;
    long v = 0;
    for (int n = 0; isdigit((unsigned char)*s); s++, n++) {
        if (n >= 7)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

/* Does LINE start like an AIDA64/InstLatx64 leaf line ("CPUID 00000007" then ':' or a blank)? */
static bool cpu_dump_aida_leafish(const char *line, uint32_t *leaf, const char **after)
{
    if (strncmp(line, "CPUID", 5) != 0 || (line[5] != ' ' && line[5] != '\t'))
        return false;
    const char *p = cpu_dump_blanks(line + 5);
    if (cpu_dump_hex32(&p, 8, true, leaf) < 0)
        return false;
    if (*p != ':' && *p != ' ' && *p != '\t')
        return false;
    p = cpu_dump_blanks(p);
    if (*p == ':') /* "CPUID 00000000 : ..." in some old reports */
        p++;
    *after = p;
    return true;
}

/* Does LINE start like a `cpuid -r` leaf line ("0x00000007 0x00:")? */
static bool cpu_dump_tool_leafish(const char *line)
{
    const char *p = line;
    uint32_t v;
    if (strncmp(p, "0x", 2) != 0)
        return false;
    p += 2;
    if (cpu_dump_hex32(&p, 8, true, &v) < 0 || (*p != ' ' && *p != '\t'))
        return false;
    p = cpu_dump_blanks(p);
    return strncmp(p, "0x", 2) == 0;
}

/* `cpuid -r`'s header of a logical CPU: "CPU:" (with -1) or "CPU 12:". */
static bool cpu_dump_tool_header(const char *line)
{
    size_t n = strlen(line);
    return strcmp(line, "CPU:") == 0 ||
           (n > 5 && strncmp(line, "CPU ", 4) == 0 && strspn(line + 4, "0123456789") == n - 5 && line[n - 1] == ':');
}

/* A section header that starts a logical CPU in an AIDA64/InstLatx64 dump; returns its number, -2
 * for another section ("------[ MSR Registers ]------"), -1 for none. */
static long cpu_dump_aida_header(const char *line)
{
    long n;
    if (str_starts_with(line, "------[")) {
        const char *in = line + 7;
        in = cpu_dump_blanks(in);
        if ((n = cpu_dump_number_after(in, "Logical CPU #")) >= 0 ||
            (n = cpu_dump_number_after(in, "CPUID Registers / Logical CPU #")) >= 0)
            return n;
        return -2;
    }
    /* "CPU#000 AffMask: 0x..." and "CPUID Registers (CPU #1):", "(CPU #1 Virtual):" */
    if ((n = cpu_dump_number_after(line, "CPU#")) >= 0 && strstr(line, "AffMask"))
        return n;
    if ((n = cpu_dump_number_after(line, "CPUID Registers (CPU #")) >= 0)
        return n;
    if (cpu_dump_tool_header(line))
        return 0; /* "CPU 0:" over AIDA64-style lines in a few InstLatx64 files */
    return -1;
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

static char *cpu_dump_bad_line(unsigned lineno, const char *line, const char *what)
{
    char *ex = cpu_dump_excerpt(line, strlen(line));
    char *e = str_printf("line %u is not part of %s: \"%s\"", lineno, what, ex ? ex : "");
    free(ex);
    return e;
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
    char *copy = cpu_dump_copy(orig, olen);
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
        char *again = cpu_dump_copy(orig, olen);
        *err = cpu_dump_bad_line(lineno, again ? str_trim(again) : "", "a libcpuid raw CPUID dump");
        free(again);
        rc = -1;
    }
    free(copy);
    return rc;
}

/* One line of an AIDA64 / InstLatx64 dump: a report whose "CPUID" sections hold lines
 *   CPUID 00000007: 00000000-219C07AB-0040069C-88000010 [SL 00]
 * (older ones: "CPUID 00000007  <tab>..." without the colon, or repeated lines for the subleaves of
 * a leaf without "[SL nn]"; the subleaf is hex: "[SL 0B]"). The report's other lines are text and
 * skipped; a line that starts like a leaf line but does not hold four registers is an error.
 * *PREV_LEAF / *PREV_SUB: the previous leaf line of this section. Returns 0, or -1 with *ERR. */
static int cpu_dump_line_aida(struct cpu_dump_state *st, const char *line, unsigned lineno, int64_t *prev_leaf,
                              uint32_t *prev_sub, char **err)
{
    long hdr = cpu_dump_aida_header(line);
    if (hdr >= 0) {
        *prev_leaf = -1;
        /* Sections are numbered in the order they come (some dumps start at "CPU #1"). */
        return cpu_dump_start_cpu(st, st->d->n_raw, lineno, err);
    }
    if (hdr == -2) {
        *prev_leaf = -1;
        st->cur = st->d->multi || st->cur >= 0 ? -2 : -1; /* outside any CPU's section */
        return 0;
    }
    uint32_t leaf;
    const char *p;
    if (!cpu_dump_aida_leafish(line, &leaf, &p))
        return 0;
    uint32_t regs[4];
    p = cpu_dump_blanks(p);
    for (int i = 0; i < 4; i++) {
        /* Registers joined by '-' (AIDA64) or blanks (some EVEREST-era reports). */
        if (i > 0 && *p == '-')
            p++;
        else if (i > 0 && (*p == ' ' || *p == '\t'))
            p = cpu_dump_blanks(p);
        else if (i > 0)
            p = "";
        if (cpu_dump_hex32(&p, 8, true, &regs[i]) < 0) {
            *err = cpu_dump_bad_line(lineno, line, "an AIDA64/InstLatx64 CPUID dump (it needs four registers "
                                                   "written 00000000-00000000-00000000-00000000)");
            return -1;
        }
    }
    if (*p != '\0' && *p != ' ' && *p != '\t') {
        *err = cpu_dump_bad_line(lineno, line, "an AIDA64/InstLatx64 CPUID dump");
        return -1;
    }
    p = cpu_dump_blanks(p);
    uint32_t sub;
    if (str_starts_with(p, "[SL")) {
        p = cpu_dump_blanks(p + 3);
        if (cpu_dump_hex32(&p, 8, false, &sub) < 0 || *p != ']') {
            *err = cpu_dump_bad_line(lineno, line, "an AIDA64/InstLatx64 CPUID dump (a bad [SL nn] subleaf)");
            return -1;
        }
    } else {
        /* No subleaf written: the Nth line of a leaf in a row is its subleaf N. */
        sub = *prev_leaf == (int64_t)leaf ? *prev_sub + 1 : 0;
    }
    *prev_leaf = leaf;
    *prev_sub = sub;
    if (leaf == 0 && sub == 0 && st->cur >= 0 && st->seen0[st->cur]) {
        /* Some files list the CPUs one after the other with no header: leaf 0 again starts the next. */
        if (cpu_dump_start_cpu(st, st->d->n_raw, lineno, err) < 0)
            return -1;
    }
    if (st->cur == -2) {
        /* Leaf lines in another section (after "------[ MSR Registers ]------"): never seen in a
         * real dump, and not said to be any CPU's. */
        *err = str_printf("line %u: a CPUID line outside a \"Logical CPU\" section", lineno);
        return -1;
    }
    if (cpu_dump_put(st, leaf, sub, regs) < 0) {
        *err = str_dup("out of memory");
        return -1;
    }
    return 0;
}

/* One line of `cpuid -r` (Todd Allen's cpuid tool): "CPU:" or "CPU N:" headers, then
 *   0x00000007 0x00: eax=0x00000000 ebx=0x219c07ab ecx=0x0040069c edx=0x88000010
 * Anything else is an error. Returns 0, or -1 with *ERR. */
static int cpu_dump_line_tool(struct cpu_dump_state *st, const char *line, unsigned lineno, char **err)
{
    if (cpu_dump_tool_header(line))
        return cpu_dump_start_cpu(st, st->d->n_raw, lineno, err);
    const char *p = line;
    uint32_t leaf, sub, regs[4];
    static const char *const names[4] = {"eax=0x", "ebx=0x", "ecx=0x", "edx=0x"};
    bool ok = strncmp(p, "0x", 2) == 0;
    if (ok) {
        p += 2;
        ok = cpu_dump_hex32(&p, 8, true, &leaf) == 0;
    }
    if (ok) {
        p = cpu_dump_blanks(p);
        ok = strncmp(p, "0x", 2) == 0;
        p += ok ? 2 : 0;
    }
    if (ok)
        ok = cpu_dump_hex32(&p, 8, false, &sub) == 0 && *p++ == ':';
    for (int i = 0; ok && i < 4; i++) {
        p = cpu_dump_blanks(p);
        ok = strncmp(p, names[i], 6) == 0;
        p += ok ? 6 : 0;
        ok = ok && cpu_dump_hex32(&p, 8, true, &regs[i]) == 0;
    }
    if (!ok || *cpu_dump_blanks(p) != '\0') {
        *err = cpu_dump_bad_line(lineno, line, "a `cpuid -r` dump");
        return -1;
    }
    if (cpu_dump_put(st, leaf, sub, regs) < 0) {
        *err = str_dup("out of memory");
        return -1;
    }
    return 0;
}

/* Checks every format's result must pass. Returns 0, or -1 with *ERR. */
static int cpu_dump_finish(struct cpu_dump_state *st, bool arm, char **err)
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
        line = cpu_dump_copy(p, ll);
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

/* Reads one CPUID leaf through /dev/cpu/N/cpuid: the file offset is the leaf (low 32 bits) and
 * subleaf (high 32 bits), each read returns EAX, EBX, ECX, EDX (Linux arch/x86/kernel/cpuid.c). */
static int cpu_dump_device_query(void *arg, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    int fd = *(const int *)arg;
    uint32_t buf[4];
    ssize_t r;
    do
        r = pread(fd, buf, sizeof(buf), (off_t)(((uint64_t)sub << 32) | leaf));
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof(buf))
        return -1;
    memcpy(out, buf, sizeof(buf));
    return 0;
}

int cpu_dump_from_query(cpu_dump_query_fn query, void *arg, struct cpu_dump *d, char **err)
{
    memset(d, 0, sizeof(*d));
    *err = NULL;
    d->format = CPU_DUMP_FMT_DEVICE;
    struct cpu_dump_state st = {.d = d, .cur = -1};
    uint32_t r[4];
    int rc = -1;
#define CPU_DUMP_Q(leaf, sub)                                                                                    \
    do {                                                                                                         \
        if (query(arg, (leaf), (sub), r) < 0) {                                                                  \
            *err = str_printf("reading CPUID leaf 0x%" PRIx32 " subleaf %" PRIu32 " failed", (uint32_t)(leaf), \
                              (uint32_t)(sub));                                                                  \
            goto out;                                                                                            \
        }                                                                                                        \
        if (cpu_dump_put(&st, (leaf), (sub), r) < 0) {                                                           \
            *err = str_dup("out of memory");                                                                     \
            goto out;                                                                                            \
        }                                                                                                        \
    } while (0)
    CPU_DUMP_Q(0u, 0u);
    uint32_t max = r[CPU_EAX];
    for (uint32_t leaf = 1; leaf <= max && leaf < MAX_CPUID_LEVEL; leaf++) {
        CPU_DUMP_Q(leaf, 0u);
        /* Subleaf loops as libcpuid's cpuid_get_raw_data walks them, plus leaf 7 subleaf 1. */
        if (leaf == 4)
            for (uint32_t s = 1; s < MAX_INTELFN4_LEVEL && (r[CPU_EAX] & 0x1f) != 0; s++)
                CPU_DUMP_Q(4u, s);
        else if (leaf == 7 && r[CPU_EAX] >= 1)
            CPU_DUMP_Q(7u, 1u);
        else if (leaf == 0xb)
            for (uint32_t s = 1; s < MAX_INTELFN11_LEVEL; s++)
                CPU_DUMP_Q(0xbu, s);
        else if (leaf == 0x12)
            for (uint32_t s = 1; s < MAX_INTELFN12H_LEVEL; s++)
                CPU_DUMP_Q(0x12u, s);
        else if (leaf == 0x14)
            for (uint32_t s = 1; s < MAX_INTELFN14H_LEVEL; s++)
                CPU_DUMP_Q(0x14u, s);
    }
    CPU_DUMP_Q(0x80000000u, 0u);
    uint32_t max_ext = r[CPU_EAX];
    if (max_ext > 0x80000000u && max_ext <= 0x8000ffffu) {
        for (uint32_t leaf = 0x80000001u; leaf <= max_ext && leaf - 0x80000000u < MAX_EXT_CPUID_LEVEL; leaf++) {
            CPU_DUMP_Q(leaf, 0u);
            if (leaf == 0x8000001du)
                for (uint32_t s = 1; s < MAX_AMDFN8000001DH_LEVEL; s++)
                    CPU_DUMP_Q(leaf, s);
        }
    }
    if (max >= 1 && (d->raw[0].basic_cpuid[1][CPU_ECX] >> 31) & 1) {
        CPU_DUMP_Q(0x40000000u, 0u);
        /* "Microsoft Hv" may be KVM with Hyper-V enlightenments: its own name is at 0x40000100. */
        if (r[CPU_EBX] == 0x7263694d && r[CPU_ECX] == 0x666f736f && r[CPU_EDX] == 0x76482074)
            CPU_DUMP_Q(0x40000100u, 0u);
    }
#undef CPU_DUMP_Q
    if (cpu_dump_finish(&st, false, err) < 0)
        goto out;
    rc = 0;
out:
    free(st.seen0);
    free(st.seen1);
    if (rc < 0)
        cpu_dump_free(d);
    return rc;
}

int cpu_dump_load(const char *path, struct cpu_dump *d, char **err)
{
    memset(d, 0, sizeof(*d));
    *err = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        *err = str_printf("cannot open it: %s%s", strerror(e),
                          str_starts_with(path, "/dev/cpu/") && (e == EPERM || e == EACCES)
                              ? " (reading /dev/cpu/N/cpuid needs root: CAP_SYS_RAWIO)"
                          : str_starts_with(path, "/dev/cpu/") && (e == ENOENT || e == ENXIO || e == ENODEV)
                              ? " (/dev/cpu/N/cpuid needs the cpuid kernel module: modprobe cpuid)"
                              : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        *err = str_printf("cannot stat it: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        *err = str_dup("is a directory, not a CPUID dump file");
        close(fd);
        return -1;
    }
    if (S_ISCHR(st.st_mode)) {
        /* Linux's cpuid driver (arch/x86/kernel/cpuid.c) registers character major 203 ("cpu/cpuid",
         * Documentation/admin-guide/devices.txt). Any other device could block or mean nothing. */
        if (major(st.st_rdev) != CPU_DUMP_CPUID_MAJOR) {
            *err = str_dup("is a character device but not a /dev/cpu/N/cpuid device");
            close(fd);
            return -1;
        }
        int rc = cpu_dump_from_query(cpu_dump_device_query, &fd, d, err);
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        *err = str_dup("is not a regular file, a pipe or a /dev/cpu/N/cpuid device");
        close(fd);
        return -1;
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > CPU_DUMP_MAX_BYTES) {
        *err = str_printf("is %jd bytes: too large for a CPUID dump (at most %u)", (intmax_t)st.st_size, CPU_DUMP_MAX_BYTES);
        close(fd);
        return -1;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        *err = str_dup("out of memory");
        return -1;
    }
    for (;;) {
        if (n == cap) {
            if (cap >= CPU_DUMP_MAX_BYTES + 1) {
                free(buf);
                close(fd);
                *err = str_printf("too large for a CPUID dump (more than %u bytes)", CPU_DUMP_MAX_BYTES);
                return -1;
            }
            size_t ncap = cap * 2 > CPU_DUMP_MAX_BYTES + 1 ? CPU_DUMP_MAX_BYTES + 1 : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                close(fd);
                *err = str_dup("out of memory");
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *err = str_printf("read failed: %s", strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > CPU_DUMP_MAX_BYTES) {
        free(buf);
        *err = str_printf("too large for a CPUID dump (more than %u bytes)", CPU_DUMP_MAX_BYTES);
        return -1;
    }
    int rc = cpu_dump_parse(buf, n, d, err);
    free(buf);
    return rc;
}

int cpu_dump_save(const char *user_path, const struct cpu_raw_data_t *raw, const struct cpu_leaves *extras,
                  char **err)
{
    *err = NULL;
    struct stat st;
    if (stat(user_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        *err = str_dup("is a directory");
        return -1;
    }
    /* Renaming over a device or a symlink would replace it (as root, /dev/stdout itself): save
     * into regular files only, and through a symlink into the file it names. */
    char *path = NULL;
    int kind = output_target(user_path, &path);
    if (kind <= 0) {
        *err = kind == 0 ? str_dup("is not a regular file (a CPUID dump is saved to a file)")
                         : str_printf("cannot follow it: %s", strerror(errno));
        return -1;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? (slash == path ? str_dup("/") : strndup(path, (size_t)(slash - path))) : str_dup(".");
    char *tmp = dir ? str_printf("%s/.gpucheckup-cpuid.XXXXXX", dir) : NULL;
    if (!tmp) {
        free(dir);
        free(path);
        *err = str_dup("out of memory");
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *err = str_printf("cannot create a file in %s: %s", dir, strerror(errno));
        free(dir);
        free(tmp);
        free(path);
        return -1;
    }
    free(dir);
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) < 0) {
        /* Not fatal: the dump is still written, only more private than usual. */
    }

    /* libcpuid's own serializer writes its part (it takes a non-const pointer: give it a copy). */
    struct cpu_raw_data_t copy = *raw;
    int rc = -1;
    if (cpuid_serialize_raw_data(&copy, tmp) < 0) {
        *err = str_printf("libcpuid could not write the dump: %s", cpuid_error());
        goto out;
    }
    int afd = open(tmp, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (afd < 0) {
        *err = str_printf("cannot reopen the temporary file: %s", strerror(errno));
        goto out;
    }
    char *extra = str_printf("%s\n"
                             "gpucheckup.note=gpucheckup's additions below: libcpuid stops reading at the line above\n",
                             CPU_DUMP_SEPARATOR);
    if (extra && extras->have_7_1) {
        char *n = str_printf("%sgpucheckup.cpuid_7_1=%08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n", extra,
                             extras->leaf7_1[0], extras->leaf7_1[1], extras->leaf7_1[2], extras->leaf7_1[3]);
        free(extra);
        extra = n;
    }
    if (extra && extras->have_hv) {
        char *n = str_printf("%sgpucheckup.cpuid_40000000=%08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n",
                             extra, extras->hv[0], extras->hv[1], extras->hv[2], extras->hv[3]);
        free(extra);
        extra = n;
    }
    if (extra && extras->have_hv2) {
        char *n = str_printf("%sgpucheckup.cpuid_40000100=%08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n",
                             extra, extras->hv2[0], extras->hv2[1], extras->hv2[2], extras->hv2[3]);
        free(extra);
        extra = n;
    }
    if (extra && extras->have_xcr0) {
        char *n = str_printf("%sgpucheckup.xcr0=%016" PRIx64 "\n", extra, extras->xcr0);
        free(extra);
        extra = n;
    }
    if (!extra || fdio_write_all(afd, extra, strlen(extra)) < 0 || fsync(afd) < 0) {
        *err = extra ? str_printf("write failed: %s", strerror(errno)) : str_dup("out of memory");
        free(extra);
        close(afd);
        goto out;
    }
    free(extra);
    if (close(afd) < 0) {
        *err = str_printf("write failed: %s", strerror(errno));
        goto out;
    }
    /* Read it back: a short write (full disk) must not leave a dump that will not load. */
    struct cpu_dump check;
    char *cerr = NULL;
    if (cpu_dump_load(tmp, &check, &cerr) < 0) {
        *err = str_printf("the written dump does not read back: %s", cerr ? cerr : "?");
        free(cerr);
        goto out;
    }
    cpu_dump_free(&check);
    if (rename(tmp, path) < 0) {
        *err = str_printf("cannot replace it: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    close(fd);
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    free(path);
    return rc;
}
