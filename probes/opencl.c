/* opencl.c: the opencl probe: OpenCL platforms and devices (placeholder until its issue lands). */
#include "probe.h"

static int opencl_run(struct probe_ctx *ctx, struct report_section *sec)
{
    (void)ctx;
    report_section_set_status(sec, REPORT_STATUS_SKIPPED, "not implemented in this build");
    return PROBE_DONE;
}

const struct probe probe_opencl = {
    .name = "opencl",
    .title = "OpenCL platforms and devices",
    .needs_live = true,
    .run = opencl_run,
};
