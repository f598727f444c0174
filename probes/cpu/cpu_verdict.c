/* cpu_verdict.c: the cpu probe's verdict (the cpu_avx target, the line for prebuilt TensorFlow) and its node labels. */
#include <stdio.h>
#include <stdlib.h>

#include "doctor.h"
#include "doctor_facts.h"
#include "jsonget.h"
#include "strutil.h"
#include "results/result_cpu.h"

extern const struct probe probe_cpu;

/* Node labels: the x86-64 level, and AVX-512 usable (the CPU has it and the OS enabled its registers). */
void cpu_node_labels(const struct report_section *sec,
                     void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg)
{
    const struct result_cpu *c = sec->result_ops == &result_cpu_ops ? sec->result : NULL;
    struct result_cpu *own = c ? NULL : result_cpu_read(sec->data); /* a section without its result */
    if (!c && !(c = own))
        return;
    if (c->x86_64_level >= 1 && c->x86_64_level <= 4) {
        char b[8];
        snprintf(b, sizeof(b), "%d", c->x86_64_level);
        emit(arg, "cpu", "x86-64-level", b);
    }
    if (c->flags_known)
        emit(arg, "cpu", "avx512", result_cpu_flag(c, "avx512f") == GC_TRI_YES ? "true" : "false");
    result_cpu_free(own);
}

/* Prebuilt TensorFlow needs AVX (since 1.6: "Illegal instruction" without it): the cpu_avx target, with
 * the reason the cpu probe found for a missing AVX (a hypervisor or the OS hiding it). */
void cpu_verdict(struct report *r, struct doctor_lines *out)
{
    enum gc_tri avx = result_cpu_flag(result_cpu_get(r), "avx");
    if (avx == GC_TRI_UNKNOWN)
        return;
    size_t nreasons = 0;
    const char **reasons = doctor_target_reasons(r, &probe_cpu, &nreasons);
    bool ok = avx == GC_TRI_YES;
    const struct report_finding *root = ok ? NULL : doctor_target_root(r, &probe_cpu);
    if (root && root->severity == REPORT_SEV_INFO)
        root = NULL;
    char *detail = ok ? str_printf("AVX is usable")
                      : str_printf("AVX is not usable%s%s", root ? ": " : "", root ? root->message : "");
    report_set_target(r, "cpu_avx", ok, detail, reasons);
    doctor_lines_add(out, str_printf("CPU for prebuilt TensorFlow (AVX): %s", ok ? "ok" : detail));
    free(detail);
    free(reasons);
}
