/* registry.c: the one list of probes, in the order they run. */
#include <string.h>

#include "probe.h"

extern const struct probe probe_cpu;
extern const struct probe probe_pci;
extern const struct probe probe_cuda;
extern const struct probe probe_icd;
extern const struct probe probe_opencl;
extern const struct probe probe_smoke;
extern const struct probe probe_bench;

/* Order matters: pci before opencl and cuda (device to PCI mapping), icd before opencl, opencl before smoke and bench; bench runs only for `gpucheckup bench`. */
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
