/* write_nfd.c: the Kubernetes Node Feature Discovery writer (--format=nfd): features.d label lines. */
#include "writer.h"

#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "jsonget.h"

/* NFD's local feature source reads files in /etc/kubernetes/node-feature-discovery/features.d/,
 * one "name=value" per line, and labels the node with them; feature.node.kubernetes.io/ is a
 * namespace it allows by default (NFD customization guide, "Local feature source", "Feature files":
 * https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/customization-guide.html).
 * A label's name part and its value follow Kubernetes' syntax: at most 63 characters, alphanumeric
 * at both ends, dashes, underscores, dots and alphanumerics between; a value may be empty
 * (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
 * Names here are fixed; a value read from the machine (a driver version) that breaks the rule is
 * left out rather than mangled. Counts and levels are plain integers, so node affinity's Gt and Lt
 * operators work on them. */

#define NFD_PREFIX "feature.node.kubernetes.io/gpucheckup-"

/* True when V is a valid label value (see above). */
static bool nfd_value_ok(const char *v)
{
    size_t n = strlen(v);
    if (n == 0)
        return true;
    if (n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
            return false;
    }
    return true;
}

/* The label GROUP.NAME (NAME NULL: GROUP alone), when VALUE is a valid label value. The group is
 * apart so that no label name in this file reads like a finding ID (cpu dot avx512) to the catalogue
 * test, which looks for those in the sources. */
static void nfd_label(FILE *f, const char *group, const char *name, const char *value)
{
    if (value && nfd_value_ok(value))
        fprintf(f, NFD_PREFIX "%s%s%s=%s\n", group, name ? "." : "", name ? name : "", value);
}

static void nfd_bool(FILE *f, const char *group, const char *name, bool v)
{
    nfd_label(f, group, name, v ? "true" : "false");
}

static void nfd_count(FILE *f, const char *group, const char *name, size_t n)
{
    char b[32];
    snprintf(b, sizeof(b), "%zu", n);
    nfd_label(f, group, name, b);
}

static json_object *nfd_data(const struct report *r, const char *probe)
{
    const struct report_section *s = report_find_section(r, probe);
    return s && s->status == REPORT_STATUS_OK ? s->data : NULL;
}

/* The verdict target NAME: 1 ready, 0 not, -1 absent. */
static int nfd_target(const struct report *r, const char *name)
{
    json_object *t = jsonget(r->targets, name), *ready = jsonget(t, "ready");
    return ready && json_object_is_type(ready, json_type_boolean) ? json_object_get_boolean(ready) : -1;
}

/* The GPU targets: the core's gpu and each compute API's (r->target_apis), NAME.ready; an API none of
 * whose targets bears its name gets API.ready too, true when any of them is (cuda12, cuda13: cuda). The
 * CPU's targets are not GPU features. */
static void nfd_targets(FILE *f, const struct report *r)
{
    if (!r->targets)
        return;
    json_object_object_foreach(r->targets, name, t)
    {
        (void)t;
        if (strcmp(name, "gpu") == 0 || jsonget(r->target_apis, name))
            nfd_bool(f, name, "ready", nfd_target(r, name) == 1);
    }
    if (!r->target_apis)
        return;
    json_object_object_foreach(r->target_apis, tname, api)
    {
        const char *a = json_object_get_string(api);
        bool first = true, named = false, any = false;
        json_object_object_foreach(r->target_apis, other, oapi)
        {
            if (strcmp(json_object_get_string(oapi), a) != 0)
                continue;
            named |= strcmp(other, a) == 0;
            any |= nfd_target(r, other) == 1;
        }
        /* once per API: at its first target */
        json_object_object_foreach(r->target_apis, prev, papi)
        {
            if (prev == tname)
                break;
            if (strcmp(json_object_get_string(papi), a) == 0)
                first = false;
        }
        if (first && !named)
            nfd_bool(f, a, "ready", any);
    }
}

/* Short vendor names for the PCI vendor IDs of GPU makers (PCI-SIG IDs, as in pci.ids). */
static const struct {
    const char *id, *name;
} nfd_vendors[] = {
    {"10de", "nvidia"}, {"1002", "amd"}, {"8086", "intel"}, {"1a03", "aspeed"}, {"1af4", "virtio"},
};

static const char *nfd_vendor(const char *id)
{
    for (size_t i = 0; id && i < sizeof(nfd_vendors) / sizeof(nfd_vendors[0]); i++)
        if (strcmp(id, nfd_vendors[i].id) == 0)
            return nfd_vendors[i].name;
    return id;
}

/* GPUs and accelerators on the PCI bus: display-only adapters (a server's BMC VGA) do not count. */
static void nfd_gpus(FILE *f, const struct report *r)
{
    json_object *pci = nfd_data(r, "pci");
    if (!pci)
        return;
    json_object *devs = jsonget(pci, "devices");
    size_t n = 0;
    const char *vendor = NULL;
    bool mixed = false;
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        const char *kind = jsonget_str(d, "kind");
        if (!kind || (strcmp(kind, "compute-gpu") != 0 && strcmp(kind, "accelerator") != 0))
            continue;
        const char *v = nfd_vendor(jsonget_str(d, "vendor_id"));
        if (vendor && v && strcmp(vendor, v) != 0)
            mixed = true;
        if (!vendor)
            vendor = v;
        n++;
    }
    nfd_bool(f, "gpu", "present", n > 0);
    nfd_count(f, "gpu", "count", n);
    if (n > 0)
        nfd_label(f, "gpu", "vendor", mixed ? "mixed" : vendor);
}

/* CUDA: the driver's CUDA version, the NVIDIA driver version, the GPUs' lowest compute capability. */
static void nfd_cuda(FILE *f, const struct report *r)
{
    json_object *cuda = nfd_data(r, "cuda");
    if (!cuda)
        return;
    json_object *drv = jsonget(cuda, "driver");
    nfd_label(f, "cuda", "driver-version", jsonget_str(drv, "cuda_version"));
    const char *kmod = jsonget_str(drv, "kernel_module_version");
    nfd_label(f, "nvidia", "driver-version", kmod ? kmod : jsonget_str(jsonget(drv, "library"), "version"));
    json_object *devs = jsonget(cuda, "devices");
    int best_major = -1, best_minor = -1;
    size_t n = 0;
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i), *ma = jsonget(d, "cc_major"), *mi = jsonget(d, "cc_minor");
        n++;
        if (!ma || !mi || !json_object_is_type(ma, json_type_int) || !json_object_is_type(mi, json_type_int))
            continue;
        int a = json_object_get_int(ma), b = json_object_get_int(mi);
        if (a < 0 || b < 0 || a > 999 || b > 999)
            continue;
        if (best_major < 0 || a < best_major || (a == best_major && b < best_minor)) {
            best_major = a;
            best_minor = b;
        }
    }
    nfd_count(f, "cuda", "device-count", n);
    if (best_major >= 0) {
        char b[32];
        snprintf(b, sizeof(b), "%d.%d", best_major, best_minor);
        nfd_label(f, "cuda", "compute-capability", b);
        nfd_count(f, "cuda", "compute-capability-major", (size_t)best_major);
    }
}

static void nfd_cpu(FILE *f, const struct report *r)
{
    json_object *cpu = nfd_data(r, "cpu");
    if (!cpu)
        return;
    json_object *lv = jsonget(cpu, "x86_64_level");
    if (lv && json_object_is_type(lv, json_type_int) && json_object_get_int(lv) >= 1 && json_object_get_int(lv) <= 4)
        nfd_count(f, "cpu", "x86-64-level", (size_t)json_object_get_int(lv));
    json_object *flags = jsonget(cpu, "flags");
    if (flags && json_object_is_type(flags, json_type_object)) {
        /* "flags" are the usable ones: the CPU has them and the OS enabled their registers */
        json_object *a = jsonget(flags, "avx512f");
        nfd_bool(f, "cpu", "avx512", a && json_object_is_type(a, json_type_boolean) && json_object_get_boolean(a));
    }
}

int write_nfd(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run)
{
    (void)o;
    (void)run;
    nfd_bool(f, "ready", NULL, report_is_ready(r));
    nfd_gpus(f, r);
    nfd_targets(f, r);
    nfd_cuda(f, r);
    nfd_cpu(f, r);
    return ferror(f) ? -1 : 0;
}
