/* cuda_nvml.c: the cuda probe's NVML part (placeholder until the NVML queries land: reports nothing). */
#include "cuda_internal.h"

json_object *cuda_nvml_child(void *arg)
{
    (void)arg;
    return json_object_new_object();
}

void cuda_nvml_report(struct probe_ctx *ctx, struct report_section *sec, const struct isolate_result *res,
                      const struct cuda_facts *facts)
{
    (void)ctx;
    (void)sec;
    (void)res;
    (void)facts;
}
