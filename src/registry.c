/* registry.c: the one list of probes, in the order of the report. */
#include <string.h>

#include "probe.h"

extern const struct probe probe_cpu;
extern const struct probe probe_pci;
extern const struct probe probe_cuda;
extern const struct probe probe_icd;
extern const struct probe probe_opencl;
extern const struct probe probe_smoke;
extern const struct probe probe_bench;

/* The order of the sections and findings in the report. When each runs is decided by the deps each
 * probe declares (run.c): pci before cuda, icd and opencl (device to PCI mapping), opencl before smoke and bench;
 * bench runs only for `gpucheckup bench`. */
const struct probe *const probe_registry[] = {
    &probe_cpu,
    &probe_pci,
    &probe_cuda,
    &probe_icd,
    &probe_opencl,
    &probe_smoke,
    &probe_bench,
    NULL,
};

const struct probe *probe_find(const char *name)
{
    for (size_t i = 0; probe_registry[i]; i++)
        if (strcmp(probe_registry[i]->name, name) == 0)
            return probe_registry[i];
    return NULL;
}
