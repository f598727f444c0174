/* cpu_text.c: the cpu probe's text output, printed from its section's JSON data. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "jsonget.h"
#include "results/result_cpu.h"

/* ---- text ----------------------------------------------------------------------------------- */

/* "key  a b c ..." wrapped under the value column. */
static void cpu_text_list(struct text_out *t, const char *key, const char *const *names, size_t n)
{
    if (n == 0) {
        text_kv(t, key, "(none)");
        return;
    }
    char line[96] = "";
    bool first = true;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || strlen(line) + strlen(names[i]) + 1 > 70) {
            if (first)
                text_kv(t, key, "%s", line);
            else
                fprintf(t->f, "  %-22s %s\n", "", line);
            first = false;
            line[0] = '\0';
            if (i == n)
                break;
        }
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", line[0] ? " " : "", names[i]);
    }
}

/* "key  text", word-wrapped under the value column. */
static void cpu_text_wrap(struct text_out *t, const char *key, const char *text)
{
    const size_t width = 72;
    bool first = true;
    const char *p = text;
    while (*p) {
        size_t len = strlen(p);
        if (len > width) {
            len = width;
            while (len > 0 && p[len] != ' ')
                len--;
            if (len == 0)
                len = width;
        }
        fprintf(t->f, "  %-22s %.*s\n", first ? key : "", (int)len, p);
        first = false;
        p += len;
        while (*p == ' ')
            p++;
    }
}

/* Where the CPU view came from: this machine's CPUID, a dump (path, format), or /proc/cpuinfo. */
static void cpu_text_source(struct text_out *t, json_object *d, const char *src)
{
    if (src && strcmp(src, "cpuid") == 0)
        text_kv(t, "source", "CPUID of this machine");
    else if (src && strcmp(src, "dump") == 0) {
        json_object *dj = NULL;
        json_object_object_get_ex(d, "dump", &dj);
        const char *ver = jsonget_str(dj, "libcpuid_version");
        const char *fmt = jsonget_str(dj, "format");
        text_kv(t, "source", "CPUID dump %s (%s%s%s)", jsonget_str(dj, "path") ? jsonget_str(dj, "path") : "",
                !fmt || strcmp(fmt, "libcpuid") == 0 ? "libcpuid" : strcmp(fmt, "aida64") == 0 ? "AIDA64/InstLatx64"
                : strcmp(fmt, "cpuid-r") == 0                     ? "cpuid -r"
                                                                  : "/dev/cpu/N/cpuid",
                ver ? " " : "", ver ? ver : "");
    } else
        text_kv(t, "source", "/proc/cpuinfo (the kernel's flags; no CPUID)");
}

/* Architecture, vendor, brand, family/model/stepping, microarchitecture, core counts and types. */
static void cpu_text_ident(struct text_out *t, json_object *d, const struct result_cpu *c)
{
    const char *s;
    if (c->architecture)
        text_kv(t, "architecture", "%s", c->architecture);
    if ((s = jsonget_str(d, "vendor")))
        text_kv(t, "vendor", "%s", s);
    if ((s = jsonget_str(d, "brand")))
        text_kv(t, "brand", "%s", s);
    int fam = (int)jsonget_int(d, "family", -1), mod = (int)jsonget_int(d, "model", -1), step = (int)jsonget_int(d, "stepping", -1);
    if (fam >= 0)
        text_kv(t, "family/model/stepping", "%d/%d/%d (0x%x/0x%x/0x%x)", fam, mod, step, (unsigned)fam,
                (unsigned)(mod < 0 ? 0 : mod), (unsigned)(step < 0 ? 0 : step));
    const char *ua = jsonget_str(d, "microarchitecture"), *cn = jsonget_str(d, "codename");
    const char *vend = jsonget_str(d, "vendor");
    /* For Intel our model table is newer than libcpuid 0.6's, whose guess for a model it does not know
     * is another CPU's name: once ours is known, libcpuid's stays in the JSON only. */
    if (ua && vend && strcmp(vend, "GenuineIntel") == 0)
        cn = NULL;
    if (ua || cn)
        text_kv(t, "microarchitecture", "%s%s%s%s", ua ? ua : "", ua && cn ? " (libcpuid: " : cn ? "libcpuid: " : "",
                cn ? cn : "", ua && cn ? ")" : "");
    int cores = (int)jsonget_int(d, "cores", -1), logical = (int)jsonget_int(d, "logical_cpus", -1), pk = (int)jsonget_int(d, "packages", -1);
    if (cores > 0 || logical > 0) {
        char buf[96] = "";
        if (cores > 0)
            snprintf(buf, sizeof(buf), "%d core%s", cores, cores == 1 ? "" : "s");
        if (logical > 0)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%d logical CPU%s", buf[0] ? ", " : "", logical,
                     logical == 1 ? "" : "s");
        if (pk > 0)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", %d package%s", pk, pk == 1 ? "" : "s");
        text_kv(t, "cores", "%s", buf);
    }
    json_object *types = NULL;
    if (json_object_object_get_ex(d, "core_types", &types) && json_object_is_type(types, json_type_array) &&
        json_object_array_length(types) > 1) {
        for (size_t i = 0; i < json_object_array_length(types); i++) {
            json_object *e = json_object_array_get_idx(types, i);
            text_kv(t, i == 0 ? "core types" : "", "%s: %d cores, %d logical CPUs%s%s",
                    jsonget_str(e, "purpose") ? jsonget_str(e, "purpose") : "?", (int)jsonget_int(e, "cores", -1),
                    (int)jsonget_int(e, "logical_cpus", -1), jsonget_str(e, "codename") ? ", " : "",
                    jsonget_str(e, "codename") ? jsonget_str(e, "codename") : "");
        }
    }
}

/* "AVX10.1, 128/256/512-bit vectors" when CPUID reports AVX10. */
static void cpu_text_avx10(struct text_out *t, json_object *d)
{
    json_object *a = NULL, *ver = NULL, *bits = NULL;
    if (!json_object_object_get_ex(d, "avx10", &a) || !json_object_is_type(a, json_type_object))
        return;
    json_object_object_get_ex(a, "version", &ver);
    json_object_object_get_ex(a, "vector_bits", &bits);
    if (!ver || !bits) {
        text_kv(t, "AVX10", "reported (version unknown: CPUID leaf 0x24 not read)");
        return;
    }
    char widths[32] = "";
    for (size_t i = 0; i < json_object_array_length(bits); i++)
        snprintf(widths + strlen(widths), sizeof(widths) - strlen(widths), "%s%d", i ? "/" : "",
                 json_object_get_int(json_object_array_get_idx(bits, i)));
    text_kv(t, "AVX10", "AVX10.%d, %s-bit vectors", json_object_get_int(ver), widths[0] ? widths : "no");
}

/* Hypervisor, the OS-enabled register state, the x86-64 level. */
static void cpu_text_state(struct text_out *t, json_object *d, const char *src, const struct result_cpu *c)
{
    json_object *os = NULL;
    json_object_object_get_ex(d, "os_enabled", &os);
    json_object *hv = NULL;
    json_object_object_get_ex(d, "hypervisor", &hv);
    if (hv) {
        const char *hvn = jsonget_str(hv, "vendor"), *sig = jsonget_str(hv, "signature");
        text_kv(t, "hypervisor", "%s%s%s%s", hvn ? hvn : "present (vendor not known)", sig ? " (\"" : "", sig ? sig : "",
                sig ? "\")" : "");
    } else if (src && strcmp(src, "cpuinfo") != 0) {
        text_kv(t, "hypervisor", "none (bare metal)");
    }
    if (os) {
        char xcr0[48] = "XCR0 unknown";
        json_object *xv;
        if (json_object_object_get_ex(os, "xcr0", &xv) && xv)
            snprintf(xcr0, sizeof(xcr0), "XCR0=0x%" PRIx64, (uint64_t)json_object_get_int64(xv));
        const char *osrc = jsonget_str(os, "source");
        json_object *a, *b, *m;
        json_object_object_get_ex(os, "avx", &a);
        json_object_object_get_ex(os, "avx512", &b);
        json_object_object_get_ex(os, "amx", &m);
        text_kv(t, "OS-enabled state", "AVX %s, AVX-512 %s, AMX %s (%s%s)", json_object_get_boolean(a) ? "yes" : "no",
                json_object_get_boolean(b) ? "yes" : "no", json_object_get_boolean(m) ? "yes" : "no",
                osrc && strcmp(osrc, "osxsave") == 0 ? "OSXSAVE is 0" : xcr0,
                osrc && strcmp(osrc, "assumed") == 0 ? ": the dump has none, assumed as Linux sets it" : "");
    }
    json_object *missing = NULL;
    json_object_object_get_ex(d, "x86_64_missing", &missing);
    if (c->x86_64_level >= 0) {
        int level = c->x86_64_level;
        char next[16];
        snprintf(next, sizeof(next), "v%d", level + 1);
        json_object *nm = NULL;
        char buf[160] = "";
        if (missing && json_object_object_get_ex(missing, next, &nm))
            for (size_t i = 0; i < json_object_array_length(nm) && strlen(buf) < 120; i++)
                snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " %s",
                         json_object_get_string(json_object_array_get_idx(nm, i)));
        if (level >= 1)
            text_kv(t, "x86-64 level", "v%d%s%s%s%s%s", level, buf[0] ? " (" : "", buf[0] ? next : "",
                    buf[0] ? " lacks:" : "", buf[0] ? buf : "", buf[0] ? ")" : "");
        else
            text_kv(t, "x86-64 level", "none: not an x86-64 CPU (lacks:%s)", buf);
    }
    cpu_text_avx10(t, d);
}

/* The flag table rows by state, and the kernel's feature list. */
static void cpu_text_flags(struct text_out *t, json_object *d, const struct result_cpu *c)
{
    json_object *cflags = NULL;
    json_object_object_get_ex(d, "cpuid_flags", &cflags);
    if (c->flags_known) {
        const char *use[CPU_FLAG_MAX], *nrep[CPU_FLAG_MAX], *dis[CPU_FLAG_MAX], *unk[CPU_FLAG_MAX];
        size_t nu = 0, nn = 0, nd = 0, nk = 0;
        for (size_t i = 0; i < cpu_flag_count; i++) {
            const char *name = cpu_flag_table[i].name;
            enum gc_tri u = result_cpu_flag(c, name);
            json_object *cr = NULL;
            if (cflags)
                json_object_object_get_ex(cflags, name, &cr);
            if (u == GC_TRI_UNKNOWN)
                unk[nk++] = name;
            else if (u == GC_TRI_YES)
                use[nu++] = name;
            else if (cr && json_object_get_boolean(cr))
                dis[nd++] = name;
            else
                nrep[nn++] = name;
        }
        cpu_text_list(t, "usable", use, nu);
        cpu_text_list(t, cflags ? "not reported" : "not listed by kernel", nrep, nn);
        if (cflags)
            cpu_text_list(t, "disabled by OS", dis, nd);
        if (nk)
            cpu_text_list(t, "unknown", unk, nk);
    }
    json_object *feats = NULL;
    if (json_object_object_get_ex(d, "features", &feats) && json_object_is_type(feats, json_type_array)) {
        size_t n = json_object_array_length(feats);
        const char **names = calloc(n ? n : 1, sizeof(char *));
        if (names) {
            for (size_t i = 0; i < n; i++)
                names[i] = json_object_get_string(json_object_array_get_idx(feats, i));
            cpu_text_list(t, "kernel features", names, n);
            free(names);
        }
    }
}

void cpu_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *d = sec->data, *x;
    const struct result_cpu *c = sec->result_ops == &result_cpu_ops ? sec->result : NULL;
    struct result_cpu *own = c ? NULL : result_cpu_read(d); /* a section without its result */
    if (!c && !(c = own))
        return;
    text_heading(t, "CPU");
    const char *src = jsonget_str(d, "source");
    cpu_text_source(t, d, src);
    cpu_text_ident(t, d, c);
    cpu_text_state(t, d, src, c);
    cpu_text_flags(t, d, c);
    json_object *notes = NULL;
    if (json_object_object_get_ex(d, "notes", &notes) && json_object_is_type(notes, json_type_array))
        for (size_t i = 0; i < json_object_array_length(notes); i++)
            cpu_text_wrap(t, i == 0 ? "notes" : "", json_object_get_string(json_object_array_get_idx(notes, i)));
    if (json_object_object_get_ex(d, "saved_dump", &x) && x)
        text_kv(t, "saved dump", "%s", json_object_get_string(x));
    result_cpu_free(own);
}
