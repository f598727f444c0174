/* cpu_dump_cpuidr.c: reading `cpuid -r` dumps (the Debian package cpuid: "0x00000007 0x00: eax=0x... ebx=0x..." lines). */
#include <stdlib.h>
#include <string.h>

#include "cpu_dump_internal.h"
#include "strutil.h"

/* Does LINE start like a `cpuid -r` leaf line ("0x00000007 0x00:")? */
bool cpu_dump_tool_leafish(const char *line)
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
bool cpu_dump_tool_header(const char *line)
{
    size_t n = strlen(line);
    return strcmp(line, "CPU:") == 0 ||
           (n > 5 && strncmp(line, "CPU ", 4) == 0 && strspn(line + 4, "0123456789") == n - 5 && line[n - 1] == ':');
}

/* One line of `cpuid -r` (Todd Allen's cpuid tool): "CPU:" or "CPU N:" headers, then
 *   0x00000007 0x00: eax=0x00000000 ebx=0x219c07ab ecx=0x0040069c edx=0x88000010
 * Anything else is an error. Returns 0, or -1 with *ERR. */
int cpu_dump_line_tool(struct cpu_dump_state *st, const char *line, unsigned lineno, char **err)
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
