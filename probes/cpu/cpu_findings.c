/* cpu_findings.c: the cpu probe's findings (AVX, OS-enabled state, x86-64 level, flag disagreements) and summary line. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "strutil.h"

int cpu_kernel_flag(const struct cpu_run *c, size_t i)
{
    if (!c->have_ci || !c->ci.has_flags_line || !cpu_flag_table[i].kernel)
        return CPU_UNKNOWN;
    return cpu_cpuinfo_has(&c->ci, cpu_flag_table[i].kernel) ? CPU_YES : CPU_NO;
}

/* ---- findings ------------------------------------------------------------------------------- */

static const char *cpu_hv_name(const struct cpu_run *c)
{
    if (c->source != CPU_SRC_CPUINFO && c->view.hv_vendor)
        return c->view.hv_vendor;
    return NULL;
}

/* AVX not usable: cpu.no-avx, caused by the OS or the hypervisor when they explain it. Sets
 * c->avx_cause to a few words for the summary line. */
static void cpu_find_avx(struct cpu_run *c, const signed char *usable, const signed char *reported)
{
    int avx = cpu_flag_index("avx");
    if (usable[avx] != CPU_NO)
        return;
    struct report *r = c->ctx->report;
    const struct cpu_x86_view *v = &c->view;
    bool cpuid = c->source != CPU_SRC_CPUINFO;
    bool hv = cpuid ? v->hypervisor : cpu_cpuinfo_has(&c->ci, "hypervisor");
    const char *cause = NULL;
    struct report_finding *f = NULL;

    if (cpuid && reported[avx] == CPU_YES) {
        cause = "cpu.avx-disabled-by-os";
        if (!v->osxsave)
            f = report_add_finding(r, cause, NULL, "The CPU reports AVX, but the OS did not enable XSAVE (OSXSAVE is 0), "
                                                    "so AVX instructions fault");
        else
            f = report_add_finding(r, cause, NULL, "The CPU reports AVX, but XCR0 (0x%" PRIx64 ") does not enable the "
                                                    "AVX register state (bits 1-2), so AVX instructions fault",
                                   v->xcr0);
        report_finding_add_evidence(f, "CPUID.1:ECX[28] (AVX)", "1");
        report_finding_add_evidence(f, "CPUID.1:ECX[27] (OSXSAVE)", "%d", v->osxsave ? 1 : 0);
        if (v->osxsave)
            report_finding_add_evidence(f, c->source == CPU_SRC_DUMP ? "XCR0 (recorded in the dump)" : "XCR0 (xgetbv)",
                                        "0x%" PRIx64, v->xcr0);
        if (c->cmdline_tokens)
            report_finding_add_evidence(f, "/proc/cmdline", "%s", c->cmdline_tokens);
        c->avx_cause = str_dup("disabled by the OS");
    } else if (!cpuid && c->cmdline_tokens) {
        cause = "cpu.avx-disabled-by-os";
        f = report_add_finding(r, cause, NULL, "The kernel lists no AVX and its command line has \"%s\": the OS "
                                               "probably turned AVX off", c->cmdline_tokens);
        report_finding_add_evidence(f, "/proc/cmdline", "%s", c->cmdline_tokens);
        report_finding_add_evidence(f, "/proc/cpuinfo flags", "no avx");
        c->avx_cause = str_dup("probably disabled by the OS");
    } else if (hv) {
        cause = "cpu.avx-hidden-by-hypervisor";
        const char *name = cpu_hv_name(c);
        c->avx_cause = name ? str_printf("hidden by the %s hypervisor", name) : str_dup("hidden by the hypervisor");
        f = report_add_finding(r, cause, NULL, "This is a %s%svirtual machine and its CPU reports no AVX: the virtual "
                                               "CPU model probably hides it", name ? name : "", name ? " " : "");
        if (cpuid) {
            report_finding_add_evidence(f, "CPUID.1:ECX[31] (hypervisor)", "1");
            if (v->hv_signature[0])
                report_finding_add_evidence(f, "CPUID 0x40000000 (hypervisor vendor)", "%s", v->hv_signature);
            report_finding_add_evidence(f, "CPUID.1:ECX[28] (AVX)", "0");
        } else {
            report_finding_add_evidence(f, "/proc/cpuinfo flags", "hypervisor, no avx");
        }
        if (name && strcmp(name, "KVM") == 0)
            report_finding_set_hint(f, "Give the VM the host's CPU model: QEMU -cpu host, libvirt <cpu "
                                       "mode='host-passthrough'/> (or a named model with AVX such as x86-64-v3), "
                                       "Proxmox CPU type 'host'; then restart the VM.");
        else if (name && strcmp(name, "Hyper-V") == 0)
            report_finding_set_hint(f, "Turn off processor compatibility mode for the VM "
                                       "(Set-VMProcessor -CompatibilityForMigrationEnabled $false), then restart it.");
        else if (name && strcmp(name, "VMware") == 0)
            report_finding_set_hint(f, "Raise or disable the cluster's EVC baseline (or the VM's CPUID mask) so the "
                                       "VM sees AVX; then power-cycle the VM.");
    } else {
        c->avx_cause = str_dup("not in this CPU");
    }

    struct report_finding *n = report_add_finding(r, "cpu.no-avx", NULL,
                                                  "AVX is not usable (%s): prebuilt TensorFlow (1.6 and later) and "
                                                  "other AVX builds will die with \"Illegal instruction\"",
                                                  c->avx_cause ? c->avx_cause : "?");
    if (cpuid)
        report_finding_add_evidence(n, "CPUID.1:ECX[28] (AVX)", "%d", reported[avx] == CPU_YES ? 1 : 0);
    else
        report_finding_add_evidence(n, "/proc/cpuinfo flags", "no avx");
    if (cause)
        report_finding_set_cause(n, cause, NULL);
}

void cpu_find_x86(struct cpu_run *c, signed char *usable_out)
{
    struct report *r = c->ctx->report;
    const struct cpu_x86_view *v = &c->view;
    bool cpuid = c->source != CPU_SRC_CPUINFO;
    signed char usable[CPU_FLAG_MAX] = {0}, reported[CPU_FLAG_MAX] = {0};
    bool have_flags = cpuid || (c->have_ci && c->ci.has_flags_line);
    for (size_t i = 0; i < cpu_flag_count; i++) {
        if (cpuid) {
            usable[i] = v->usable[i];
            reported[i] = v->reported[i];
        } else {
            usable[i] = (signed char)cpu_kernel_flag(c, i);
            reported[i] = CPU_UNKNOWN;
        }
    }
    memcpy(usable_out, usable, sizeof(usable));
    if (!have_flags)
        return;

    cpu_find_avx(c, usable, reported);

    if (cpuid) {
        int f512 = cpu_flag_index("avx512f"), tile = cpu_flag_index("amx_tile");
        if (reported[f512] == CPU_YES && !v->state_avx512 && v->state_avx) {
            struct report_finding *f = report_add_finding(
                r, "cpu.avx512-disabled-by-os", NULL,
                "The CPU reports AVX-512, but XCR0 (0x%" PRIx64 ") does not enable its state (bits 5-7)", v->xcr0);
            report_finding_add_evidence(f, "CPUID.7.0:EBX[16] (AVX512F)", "1");
            report_finding_add_evidence(f, "XCR0", "0x%" PRIx64, v->xcr0);
        }
        if (reported[tile] == CPU_YES && !v->state_amx) {
            struct report_finding *f = report_add_finding(
                r, "cpu.amx-disabled-by-os", NULL,
                "The CPU reports AMX, but XCR0 (0x%" PRIx64 ") does not enable the tile state (bits 17-18)", v->xcr0);
            report_finding_add_evidence(f, "CPUID.7.0:EDX[24] (AMX-TILE)", "1");
            report_finding_add_evidence(f, "XCR0", "0x%" PRIx64, v->xcr0);
        }
    }

    int level = cpu_x86_level(usable);
    if (level < 2) {
        const char *names[CPU_FLAG_MAX];
        size_t n = cpu_x86_level_missing(usable, 2, names, CPU_FLAG_MAX);
        char *list = NULL;
        for (size_t i = 0; i < n; i++) {
            char *x = str_printf("%s%s%s", list ? list : "", list ? " " : "", names[i]);
            free(list);
            list = x;
        }
        struct report_finding *f = report_add_finding(
            r, "cpu.below-x86-64-v2", NULL,
            "The CPU is at x86-64 level %d, below x86-64-v2 (missing: %s): NumPy 2.4 and later x86-64 wheels and "
            "other v2 builds refuse to start", level, list ? list : "?");
        report_finding_add_evidence(f, cpuid ? "CPUID" : "/proc/cpuinfo flags", "missing for x86-64-v2: %s",
                                    list ? list : "?");
        bool hv = cpuid ? v->hypervisor : cpu_cpuinfo_has(&c->ci, "hypervisor");
        if (hv)
            report_finding_set_hint(f, "This is a virtual machine: its CPU model (QEMU's default qemu64, for one) "
                                       "lacks these; give it the host CPU model (-cpu host, host-passthrough) or at "
                                       "least x86-64-v2. Otherwise pin numpy<2.4.");
        free(list);
    }

    /* CPUID (usable) against the kernel's list, when both describe the same machine. */
    if (c->cross_check && c->ci.has_flags_line) {
        for (size_t i = 0; i < cpu_flag_count; i++) {
            int k = cpu_kernel_flag(c, i);
            if (usable[i] == CPU_UNKNOWN || k == CPU_UNKNOWN)
                continue;
            bool kern = k == CPU_YES;
            if (kern == (usable[i] == CPU_YES))
                continue;
            const char *what = usable[i] == CPU_YES ? "usable"
                               : reported[i] == CPU_YES ? "reported but not enabled by the OS"
                                                        : "not reported";
            struct report_finding *f = report_add_finding(
                r, "cpu.flags-disagree", cpu_flag_table[i].name,
                "%s: CPUID says %s, but /proc/cpuinfo %s \"%s\"", cpu_flag_table[i].name, what,
                kern ? "lists" : "does not list", cpu_flag_table[i].kernel);
            report_finding_add_evidence(f, c->source == CPU_SRC_DUMP ? "CPUID (dump)" : "CPUID", "%s %s",
                                        cpu_flag_table[i].name, what);
            report_finding_add_evidence(f, "/proc/cpuinfo flags", "%s %s", cpu_flag_table[i].kernel,
                                        kern ? "listed" : "not listed");
            if (c->cmdline_tokens)
                report_finding_add_evidence(f, "/proc/cmdline", "%s", c->cmdline_tokens);
        }
    }
}

/* ---- summary -------------------------------------------------------------------------------- */

static char *cpu_name(struct cpu_run *c)
{
    json_object *x;
    const char *brand = json_object_object_get_ex(c->d, "brand", &x) && x ? json_object_get_string(x) : NULL;
    const char *vendor = json_object_object_get_ex(c->d, "vendor", &x) && x ? json_object_get_string(x) : NULL;
    const char *ua = json_object_object_get_ex(c->d, "microarchitecture", &x) && x ? json_object_get_string(x) : NULL;
    if (!ua)
        ua = json_object_object_get_ex(c->d, "codename", &x) && x ? json_object_get_string(x) : NULL;
    const char *base = brand ? brand : vendor ? vendor : "unknown CPU";
    if (ua && !strstr(base, ua))
        return str_printf("%s (%s)", base, ua);
    return str_dup(base);
}

static char *cpu_counts_text(struct cpu_run *c)
{
    json_object *x;
    int cores = json_object_object_get_ex(c->d, "cores", &x) && x ? json_object_get_int(x) : 0;
    int logical = json_object_object_get_ex(c->d, "logical_cpus", &x) && x ? json_object_get_int(x) : 0;
    if (cores > 0)
        return str_printf(", %d core%s", cores, cores == 1 ? "" : "s");
    if (logical > 0)
        return str_printf(", %d CPU%s", logical, logical == 1 ? "" : "s");
    return str_dup("");
}

void cpu_summary_x86(struct cpu_run *c, const signed char *usable)
{
    static const struct {
        const char *flag, *label;
    } shown[] = {{"sse4_2", "SSE4.2"}, {"avx", "AVX"}, {"avx2", "AVX2"}, {"fma", "FMA"},
                 {"avx512f", "AVX-512"}, {"amx_tile", "AMX"}};
    char *name = cpu_name(c), *counts = cpu_counts_text(c);
    json_object *x;
    int level = json_object_object_get_ex(c->d, "x86_64_level", &x) && x ? json_object_get_int(x) : -1;
    char list[128] = "";
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        int k = cpu_flag_index(shown[i].flag);
        if (usable[k] == CPU_YES)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? " " : "", shown[i].label);
    }
    int avx = cpu_flag_index("avx");
    char avxnote[96] = "";
    if (usable[avx] == CPU_NO)
        snprintf(avxnote, sizeof(avxnote), "; no AVX (%s)", c->avx_cause ? c->avx_cause : "?");
    char lvl[32];
    if (level >= 1)
        snprintf(lvl, sizeof(lvl), ", x86-64-v%d", level);
    else if (level == 0)
        snprintf(lvl, sizeof(lvl), ", not x86-64");
    else
        snprintf(lvl, sizeof(lvl), ", flags unknown");
    bool warn = usable[avx] == CPU_NO || (level >= 0 && level < 2);
    report_section_add_line(c->sec, warn ? REPORT_MARK_WARN : REPORT_MARK_OK, "CPU", "%s%s%s%s%s%s%s", name, counts, lvl,
                            list[0] ? ": " : "", list, avxnote, c->source == CPU_SRC_DUMP ? " [from a CPUID dump]" : "");
    free(name);
    free(counts);
}

void cpu_summary_other(struct cpu_run *c)
{
    static const char *const interesting[] = {"asimd", "asimddp", "sve", "sve2", "sme", "bf16", "i8mm",
                                              "altivec", "vsx", "vx", "vxe", "v"};
    char *name = cpu_name(c), *counts = cpu_counts_text(c);
    char list[128] = "";
    if (c->have_ci)
        for (size_t i = 0; i < sizeof(interesting) / sizeof(interesting[0]); i++)
            if (cpu_cpuinfo_has(&c->ci, interesting[i]))
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? " " : "", interesting[i]);
    for (char *p = list; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    json_object *x;
    const char *vendor = json_object_object_get_ex(c->d, "vendor", &x) && x ? json_object_get_string(x) : NULL;
    bool with_vendor = vendor && !strstr(name, vendor);
    report_section_add_line(c->sec, REPORT_MARK_OK, "CPU", "%s %s%s%s%s%s%s", c->arch ? c->arch : "unknown architecture",
                            with_vendor ? vendor : "", with_vendor ? " " : "", name, counts, list[0] ? ": " : "", list);
    free(name);
    free(counts);
}

