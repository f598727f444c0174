/* pci.c: the pci probe: GPUs on the PCI bus, kernel drivers, device nodes (placeholder until its issue lands). */
#include "probe.h"

static int pci_run(struct probe_ctx *ctx, struct report_section *sec)
{
    (void)ctx;
    report_section_set_status(sec, REPORT_STATUS_SKIPPED, "not implemented in this build");
    return PROBE_DONE;
}

const struct probe probe_pci = {
    .name = "pci",
    .title = "GPUs on the PCI bus, kernel drivers, device nodes",
    .needs_live = false,
    .run = pci_run,
};
