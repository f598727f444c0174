/* health_hwmon.c: the temperature of each AMD and Intel GPU from its hwmon in sysfs, against its critical limit (issue 40). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health_internal.h"
#include "jsonget.h"
#include "strutil.h"

#define HWMON_MAX_DIRS 8   /* hwmonN entries looked at per GPU (a GPU has one) */
#define HWMON_HOT_MARGIN 10 /* degrees below temp1_crit from which it is a warning */

/* The kernel's Documentation/hwmon/sysfs-interface.rst: temp1_input and temp1_crit in millidegrees
 * Celsius. amdgpu (Documentation/gpu/amdgpu/thermal.rst: temp1 is the edge sensor, with temp1_crit),
 * i915 and xe publish them under the PCI device's hwmon directory (/sys/class/drm/cardN/device/hwmon is
 * the same directory). NVIDIA's driver has none: NVML's temperature is in the cuda probe. */
const struct check health_hwmon_checks[] = {
    {"health.gpu-hot", REPORT_SEV_WARNING, "A GPU is within 10 degrees of its critical temperature",
     "The GPU will throttle or shut down at its critical temperature: check its fans, the case's airflow and the room; "
     "`sensors` shows the same hwmon values.", CHECK_LAYER_HARDWARE | CHECK_F_NEVER_CAUSE},
};
const size_t health_hwmon_n_checks = sizeof(health_hwmon_checks) / sizeof(health_hwmon_checks[0]);

/* millidegrees at PATH as whole degrees, or -1000 when unreadable. */
static long hwmon_read_c(struct probe_ctx *ctx, const char *dir, const char *file)
{
    char *path = str_printf("%s/%s", dir, file), *v = NULL;
    long c = -1000;
    if (path && hostfs_read_attr(ctx->fs, path, &v) == 0) {
        char *end = NULL;
        long m = strtol(v, &end, 10);
        if (end && end != v && *end == '\0' && m > -100000 && m < 300000)
            c = m / 1000;
    }
    free(v);
    free(path);
    return c;
}

/* GPU G's temperature into its object GJ ("temperature": {"celsius", "critical", "hwmon"}); a warning near crit. */
static void hwmon_gpu(struct probe_ctx *ctx, const struct health_gpu *g, json_object *gj, char *list, size_t max)
{
    char *base = str_printf("/sys/bus/pci/devices/%s/hwmon", g->addr);
    DIR *d = base ? hostfs_opendir(ctx->fs, base) : NULL;
    struct dirent *e;
    long temp = -1000, crit = -1000;
    char *which = NULL;
    for (int seen = 0; d && (e = readdir(d)) && seen < HWMON_MAX_DIRS && temp == -1000;) {
        if (strncmp(e->d_name, "hwmon", 5) != 0)
            continue;
        seen++;
        char *dir = str_printf("%s/%s", base, e->d_name);
        temp = dir ? hwmon_read_c(ctx, dir, "temp1_input") : -1000;
        if (temp != -1000) {
            crit = hwmon_read_c(ctx, dir, "temp1_crit");
            which = str_dup(e->d_name);
        }
        free(dir);
    }
    if (d)
        closedir(d);
    free(base);
    if (temp == -1000) {
        free(which);
        return;
    }
    json_object *t = json_object_new_object();
    json_object_object_add(t, "celsius", json_object_new_int64(temp));
    /* amdgpu answers 0 or an absurd value on some boards: only a plausible limit counts. */
    bool have_crit = crit > 40 && crit < 200;
    json_object_object_add(t, "critical", have_crit ? json_object_new_int64(crit) : NULL);
    json_object_object_add(t, "hwmon", json_object_new_string(which));
    json_object_object_add(gj, "temperature", t);
    size_t len = strlen(list);
    snprintf(list + len, max - len, "%s%s %ld C", len ? ", " : "", g->addr, temp);
    if (have_crit && temp >= crit - HWMON_HOT_MARGIN) {
        struct report_finding *f =
            report_add_finding(ctx->report, "health.gpu-hot", g->addr, "%s (%s) is at %ld C, its critical temperature is %ld C",
                               g->name[0] ? g->name : "the GPU", g->addr, temp, crit);
        if (f) {
            report_finding_add_evidence(f, "temp1_input", "%ld C (%s)", temp, which);
            report_finding_add_evidence(f, "temp1_crit", "%ld C", crit);
        }
    }
    free(which);
}

void health_hwmon_report(struct probe_ctx *ctx, struct report_section *sec, const struct health_gpu *gpus,
                         size_t n_gpus, json_object *gpus_json)
{
    char list[512] = "";
    for (size_t i = 0; i < n_gpus; i++)
        hwmon_gpu(ctx, &gpus[i], json_object_array_get_idx(gpus_json, i), list, sizeof(list));
    if (list[0])
        report_section_add_line(sec, report_find_finding(ctx->report, "health.gpu-hot", NULL) ? REPORT_MARK_WARN
                                                                                           : REPORT_MARK_OK,
                                "Temperature", "%s", list);
}
