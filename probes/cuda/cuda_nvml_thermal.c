/* cuda_nvml_thermal.c: the cuda probe's throttling history and temperature from NVML (issue 40). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_nvml.h"
#include "jsonget.h"
#include "strutil.h"

/* nvmlDeviceGetViolationStatus (nvml.h: "the duration of time during which the device was throttled
 * (lower than requested clocks) due to power or thermal constraints", since the driver loaded). A GPU
 * held to its power limit under full load is normal operation, so the past is information; the
 * current clock-event reasons (cuda.nvml-clocks-slowdown) say whether it happens now. */
const struct check cuda_nvml_thermal_checks[] = {
    {"cuda.nvml-throttled-past", REPORT_SEV_INFO,
     "The GPU has run below its requested clocks for power or heat since the driver loaded",
     "Nothing to do if it was under full load at its power limit; much time held back for heat means poor "
     "cooling: check fans and airflow (`nvidia-smi -q -d PERFORMANCE,TEMPERATURE`).", CHECK_LAYER_RUNTIME},
};
const size_t cuda_nvml_thermal_n_checks = sizeof(cuda_nvml_thermal_checks) / sizeof(cuda_nvml_thermal_checks[0]);

/* "3 h 12 min", "41 s" */
static void thermal_duration(int64_t s, char *out, size_t size)
{
    if (s >= 3600)
        snprintf(out, size, "%lld h %lld min", (long long)(s / 3600), (long long)(s % 3600 / 60));
    else if (s >= 60)
        snprintf(out, size, "%lld min %lld s", (long long)(s / 60), (long long)(s % 60));
    else
        snprintf(out, size, "%lld s", (long long)s);
}

void cuda_nvml_thermal_check(struct probe_ctx *ctx, json_object *d, const char *subj, const char *gpu)
{
    int64_t temp = nvml_num(d, "temperature"), slow = nvml_num(d, "temperature_slowdown");
    /* The current slowdown (cuda_nvml.c) gets the temperature beside it. */
    struct report_finding *now = report_find_finding(ctx->report, "cuda.nvml-clocks-slowdown", subj);
    if (now && temp >= 0)
        report_finding_add_evidence(now, "nvmlDeviceGetTemperature", "%lld C%s%.0lld%s", (long long)temp,
                                    slow > 0 ? " (slowdown at " : "", (long long)(slow > 0 ? slow : 0),
                                    slow > 0 ? " C)" : "");
    json_object *v = jsonget(d, "violation_seconds");
    int64_t power = nvml_num(v, "power"), thermal = nvml_num(v, "thermal");
    if (power <= 0 && thermal <= 0)
        return;
    char p[48], t[48];
    thermal_duration(power > 0 ? power : 0, p, sizeof(p));
    thermal_duration(thermal > 0 ? thermal : 0, t, sizeof(t));
    struct report_finding *f = report_add_finding(
        ctx->report, "cuda.nvml-throttled-past", subj,
        "%s (%s) has run below its requested clocks for %s for power and %s for heat since the driver loaded", gpu,
        subj, p, t);
    if (f) {
        report_finding_add_evidence(f, "nvmlDeviceGetViolationStatus", "power %lld s, thermal %lld s",
                                    (long long)(power > 0 ? power : 0), (long long)(thermal > 0 ? thermal : 0));
        if (temp >= 0)
            report_finding_add_evidence(f, "nvmlDeviceGetTemperature", "%lld C now%s%.0lld%s", (long long)temp,
                                        slow > 0 ? ", slowdown at " : "", (long long)(slow > 0 ? slow : 0),
                                        slow > 0 ? " C" : "");
    }
}
