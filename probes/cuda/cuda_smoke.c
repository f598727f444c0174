/* cuda_smoke.c: PLACEHOLDER for the CUDA smoke test; the cuda-smoke branch replaces this whole file. */
#include "cuda_internal.h"

/* Placeholder: the real child runs the PTX SGEMM on device ARG->ordinal. This one loads nothing and
 * says so, so that the orchestration in cuda.c can be built and tested before the smoke part lands. */
json_object *cuda_smoke_child(void *arg)
{
    (void)arg;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string("not-run"));
    return o;
}

/* Placeholder: no API is used. */
json_object *cuda_smoke_device(const struct cuda_api *api, int ordinal, int n)
{
    (void)api;
    (void)ordinal;
    (void)n;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string("not-run"));
    return o;
}

/* Placeholder: records data["smoke"] = {"status": "not-run"} and reports nothing. */
void cuda_smoke_report(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_smoke_args *args,
                       const struct isolate_result *results, size_t n_results)
{
    (void)ctx;
    (void)args;
    (void)results;
    (void)n_results;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string("not-run"));
    json_object_object_add(o, "reason", json_object_new_string("the CUDA smoke test is not built in yet"));
    json_object_object_add(sec->data, "smoke", o);
}
