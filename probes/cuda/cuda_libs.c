/* cuda_libs.c: the cuda probe's library part (placeholder until the library search lands: reports nothing). */
#include "cuda_internal.h"

void cuda_libs_report(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_facts *facts)
{
    (void)ctx;
    (void)sec;
    (void)facts;
}
