/* cpu_dump_aida.c: reading AIDA64/InstLatx64 CPUID dumps ("CPUID 00000007: ...-...-...-... [SL 00]" lines). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_dump_internal.h"
#include "strutil.h"

/* The decimal number after PREFIX at the start of S (blanks allowed before it), or -1. */
long cpu_dump_number_after(const char *s, const char *prefix)
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
bool cpu_dump_aida_leafish(const char *line, uint32_t *leaf, const char **after)
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

/* A section header that starts a logical CPU in an AIDA64/InstLatx64 dump; returns its number, -2
 * for another section ("------[ MSR Registers ]------"), -1 for none. */
long cpu_dump_aida_header(const char *line)
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

/* One line of an AIDA64 / InstLatx64 dump: a report whose "CPUID" sections hold lines
 *   CPUID 00000007: 00000000-219C07AB-0040069C-88000010 [SL 00]
 * (older ones: "CPUID 00000007  <tab>..." without the colon, or repeated lines for the subleaves of
 * a leaf without "[SL nn]"; the subleaf is hex: "[SL 0B]"). The report's other lines are text and
 * skipped; a line that starts like a leaf line but does not hold four registers is an error.
 * *PREV_LEAF / *PREV_SUB: the previous leaf line of this section. Returns 0, or -1 with *ERR. */
int cpu_dump_line_aida(struct cpu_dump_state *st, const char *line, unsigned lineno, int64_t *prev_leaf,
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
