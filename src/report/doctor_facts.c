/* doctor_facts.c: the doctor's reads of the probes' sections (their JSON contracts), shared by the verdict and --require. */
#include "doctor_facts.h"

#include "compute_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jsonget.h"
#include "probe.h"
#include "vendor.h"
#include "strutil.h"

/* DATA of section NAME when it ran ok, else NULL. */
json_object *doctor_data(const struct report *r, const char *name)
{
    const struct report_section *s = report_find_section(r, name);
    return s && s->status == REPORT_STATUS_OK ? s->data : NULL;
}

/* Distinct physical GPUs that passed (by PCI address; devices without one count once each). */
size_t doctor_gpu_count(const struct report *r, char *label, size_t len)
{
    /* Every GPU proven to compute through any API (compute_path.h), one per PCI address. */
    struct compute_paths ps = compute_paths_of(r);
    const struct compute_path *p = NULL;
    size_t n = compute_paths_gpus(&ps, COMPUTE_PASSED, &p);
    if (label && len) {
        char who[256];
        snprintf(label, len, "%s (%s)", p ? compute_path_label(p, who, sizeof(who)) : "", p ? p->api_label : "");
        if (!p)
            label[0] = '\0';
    }
    compute_paths_free(&ps);
    return n;
}

/* True when every compute GPU on the PCI bus is an NVIDIA GPU that CUDA enumerates (cuInit succeeded,
 * a CUDA device at its address) and whose CUDA smoke test did not fail: such GPUs compute through
 * CUDA, so a missing OpenCL driver for them is not what keeps the machine from being ready. */
bool doctor_gpus_served(const struct report *r, const struct compute_paths *ps, const char *vendor,
                        const char *other_than, const char **via)
{
    struct bus_gpu bus[256];
    size_t gpus = 0, n = 0;
    bool any_bus = false;
    *via = NULL;
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct probe *pr = probe_registry[p];
        const struct report_section *s = pr->bus_gpus ? report_find_section(r, pr->name) : NULL;
        if (!s || s->status != REPORT_STATUS_OK)
            continue;
        any_bus = true;
        n = pr->bus_gpus(s, bus, sizeof(bus) / sizeof(bus[0]));
        if (n > sizeof(bus) / sizeof(bus[0]))
            return false; /* more GPUs than judged here: not "every" */
        break;
    }
    if (!any_bus)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (vendor && (!bus[i].vendor || strcmp(bus[i].vendor, vendor) != 0))
            continue;
        gpus++;
        const char *label = NULL;
        if (!compute_paths_serve(ps, bus[i].pci_address, other_than, &label))
            return false;
        if (!*via)
            *via = label;
    }
    return gpus > 0;
}

long doctor_bus_gpu_count(const struct report *r)
{
    struct bus_gpu bus[256];
    for (size_t p = 0; probe_registry[p]; p++) {
        const struct probe *pr = probe_registry[p];
        const struct report_section *s = pr->bus_gpus ? report_find_section(r, pr->name) : NULL;
        if (s && s->status == REPORT_STATUS_OK)
            return (long)pr->bus_gpus(s, bus, sizeof(bus) / sizeof(bus[0]));
    }
    return -1;
}

const char *doctor_device_label(const char *addr, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", addr ? addr : "", addr ? " " : "", name ? name : "device");
    return buf;
}

bool doctor_req_version(int best, int want, int scale, const char *what, const char *label, const char *none,
                        char **detail)
{
    if (best < 0) {
        *detail = str_printf("%s", none);
        return false;
    }
    *detail = str_printf("%s %d.%d (%s), %d.%d needed", what, best / scale, best % scale, label, want / scale,
                         want % scale);
    return best >= want;
}
