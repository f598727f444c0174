/* icd.c: the icd probe: the OpenCL ICD loader and vendor drivers (placeholder until its issue lands). */
#include "probe.h"

static int icd_run(struct probe_ctx *ctx, struct report_section *sec)
{
    (void)ctx;
    report_section_set_status(sec, REPORT_STATUS_SKIPPED, "not implemented in this build");
    return PROBE_DONE;
}

const struct probe probe_icd = {
    .name = "icd",
    .title = "the OpenCL ICD loader and vendor drivers",
    .needs_live = true,
    .run = icd_run,
};
