/* cpu.c: the cpu probe: CPU identification, usable SIMD flags, x86-64 level (placeholder until its issue lands). */
#include "probe.h"

static int cpu_run(struct probe_ctx *ctx, struct report_section *sec)
{
    (void)ctx;
    report_section_set_status(sec, REPORT_STATUS_SKIPPED, "not implemented in this build");
    return PROBE_DONE;
}

const struct probe probe_cpu = {
    .name = "cpu",
    .title = "CPU identification, usable SIMD flags, x86-64 level",
    .needs_live = false,
    .run = cpu_run,
};
