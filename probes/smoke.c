/* smoke.c: the smoke probe: a matrix multiply on each OpenCL device (placeholder until its issue lands). */
#include "probe.h"

static int smoke_run(struct probe_ctx *ctx, struct report_section *sec)
{
    (void)ctx;
    report_section_set_status(sec, REPORT_STATUS_SKIPPED, "not implemented in this build");
    return PROBE_DONE;
}

const struct probe probe_smoke = {
    .name = "smoke",
    .title = "a matrix multiply on each OpenCL device",
    .needs_live = true,
    .run = smoke_run,
};
