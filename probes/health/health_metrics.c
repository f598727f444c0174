/* health_metrics.c: the health section's counters for Prometheus (Xid events, PCIe AER errors), in the generic "metrics" array. */
#include <stdio.h>
#include <string.h>

#include "health_internal.h"
#include "jsonget.h"

/* One {"name", "help", "labels", "value"} item (docs/formats.md: the writer prints it as gpucheckup_NAME). */
static void metric_add(json_object *arr, const char *name, const char *help, json_object *labels, int64_t value)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "name", json_object_new_string(name));
    json_object_object_add(m, "help", json_object_new_string(help));
    json_object_object_add(m, "labels", labels);
    json_object_object_add(m, "value", json_object_new_int64(value));
    json_object_array_add(arr, m);
}

static json_object *metric_labels(const char *k1, const char *v1, const char *k2, const char *v2, const char *k3,
                                  const char *v3)
{
    json_object *l = json_object_new_object();
    json_object_object_add(l, k1, json_object_new_string(v1 ? v1 : ""));
    if (k2)
        json_object_object_add(l, k2, json_object_new_string(v2 ? v2 : ""));
    if (k3)
        json_object_object_add(l, k3, json_object_new_string(v3 ? v3 : ""));
    return l;
}

void health_metrics_report(struct report_section *sec)
{
    size_t ng = 0;
    json_object *gpus = jsonget_array(sec->data, "gpus", &ng);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; gpus && i < ng; i++) {
        json_object *g = json_object_array_get_idx(gpus, i);
        const char *addr = jsonget_str(g, "pci_address");
        size_t ne = 0, na = 0;
        json_object *ev = jsonget_array(g, "events", &ne), *aer = jsonget_array(g, "aer", &na);
        for (size_t k = 0; ev && k < ne; k++) {
            json_object *e = json_object_array_get_idx(ev, k);
            const char *kind = jsonget_str(e, "kind");
            int64_t xid = jsonget_int(e, "xid", -1), count = jsonget_int(e, "count", 0);
            if (!kind || strcmp(kind, "xid") != 0 || xid < 0)
                continue;
            char xs[24];
            snprintf(xs, sizeof(xs), "%lld", (long long)xid);
            metric_add(arr, "xid_events", "NVIDIA Xid events in the kernel log since boot, per GPU and Xid.",
                       metric_labels("gpu", addr, "xid", xs, NULL, NULL), count);
        }
        static const char *const sevs[] = {"fatal", "nonfatal", "correctable"};
        for (size_t k = 0; aer && k < na; k++) {
            json_object *a = json_object_array_get_idx(aer, k);
            for (size_t s = 0; s < 3; s++) {
                int64_t v = jsonget_int(a, sevs[s], -1);
                if (v >= 0)
                    metric_add(arr, "pcie_aer_errors",
                               "PCIe AER errors since boot (sysfs aer_dev_*), per GPU, device (the GPU or a bridge above "
                               "it) and severity.",
                               metric_labels("gpu", addr, "device", jsonget_str(a, "device"), "severity", sevs[s]), v);
            }
        }
    }
    json_object_object_add(sec->data, "metrics", arr);
}
