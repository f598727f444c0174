/* fuzz_results.c: libFuzzer target for the typed results read back from captured sections (--root FILE.tar.gz). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compute_path.h"
#include "doctor_facts.h"
#include "levelzero_internal.h"
#include "report.h"
#include "results/result_cpu.h"
#include "results/result_cuda.h"
#include "results/result_icd.h"
#include "results/result_opencl.h"
#include "results/result_pci.h"
#include "results/result_process.h"
#include "results/result_smoke.h"
#include "results/result_vulkan.h"
#include "rocm_internal.h"

/* OPS's result read from DATA (taken), its section printed: a heap string, or NULL when out of memory.
 * The readers of the doctor run over it on the way. */
static char *fuzz_results_round(const struct report_result_ops *ops, json_object *data)
{
    struct report *r = report_new();
    if (!r) {
        json_object_put(data);
        return NULL;
    }
    struct report_section *s = report_add_section(r, ops->section);
    if (!s) {
        json_object_put(data);
        report_free(r);
        return NULL;
    }
    json_object_put(s->data);
    s->data = data;
    char *out = NULL;
    if (report_section_adopt(s, ops) == 0) {
        report_section_set_status(s, REPORT_STATUS_OK, NULL);
        const struct result_smoke *sm = result_smoke_get(r);
        for (size_t i = 0; sm && i < sm->n_devs; i++) {
            const struct result_smoke_dev *d = &sm->devs[i];
            /* Enums hold a value of their table, or say unknown. */
            if ((d->have & RESULT_SMOKE_HAVE_STATUS) && !gc_name(&result_smoke_status_names, (int)d->status))
                abort();
            if (d->gpu != GC_TRI_UNKNOWN && d->gpu != GC_TRI_NO && d->gpu != GC_TRI_YES)
                abort();
            for (int p = 0; p < COMPUTE_N_PREC; p++)
                if (d->prec[p] != -1 && !gc_name(&result_smoke_prec_status_names, d->prec[p]))
                    abort();
        }
        const struct result_cuda *c = result_cuda_get(r);
        for (size_t i = 0; c && i < c->n_devs; i++) {
            int st = result_cuda_smoke_of(c, c->devs[i].ordinal);
            if (c->devs[i].cc < -1 || c->devs[i].cc > 999 || (st < 0 && st != -1 && st != -2) ||
                (st >= 0 && !gc_name(&result_cuda_smoke_status_names, st)))
                abort();
        }
        if (c && c->driver_status != -1 && !gc_name(&result_cuda_driver_status_names, c->driver_status))
            abort();
        const struct result_vulkan *v = result_vulkan_get(r);
        for (size_t i = 0; v && i < v->n_devs; i++)
            if ((v->devs[i].smoke != -1 && !gc_name(&result_vulkan_smoke_status_names, v->devs[i].smoke)) ||
                (v->devs[i].type != -1 && !gc_name(&result_vulkan_dev_type_names, v->devs[i].type)))
                abort();
        for (size_t i = 0; v && i < v->n_drivers; i++)
            if (v->drivers[i].status != -1 && !gc_name(&result_vulkan_driver_status_names, v->drivers[i].status))
                abort();
        const struct result_icd *icd = result_icd_get(r);
        for (size_t i = 0; icd && i < icd->n_icds; i++) {
            const struct result_icd_file *f = &icd->icds[i];
            if ((unsigned)f->hardware > VENDOR_HW_UNKNOWN || (f->absent_hardware && !f->has_driver))
                abort();
            for (size_t p = 0; p < f->run.n_platforms; p++)
                if (f->run.platforms[p].devices < -1 || f->run.platforms[p].gpu_devices < -1)
                    abort();
            free(result_icd_platforms_text(&f->run));
        }
        /* The doctor's reads must not trip on anything a capture can hold. */
        const struct result_smoke_dev *first = NULL;
        if (result_smoke_passed_devices(r, true, result_smoke_fp64_passed, &first) > 0 && !first)
            abort();
        (void)doctor_gpu_count(r, NULL, 0);
        const struct result_cuda_dev *cfirst = NULL;
        if (result_cuda_passed(r, -1, &cfirst) > 0 && !cfirst)
            abort();
        (void)result_cuda_driver_version(r);
        /* The compute paths a result publishes (rocm's and levelzero's are GPUs; levelzero runs no compute test). */
        struct compute_paths ps = compute_paths_of(r);
        for (size_t i = 0; i < ps.n; i++)
            if ((unsigned)ps.v[i].proof > COMPUTE_UNTESTED ||
                ((ops == &result_rocm_ops || ops == &result_levelzero_ops) && !ps.v[i].gpu) ||
                (ops == &result_levelzero_ops && ps.v[i].proof != COMPUTE_UNTESTED))
                abort();
        compute_paths_free(&ps);
        json_object *j = report_section_json(s);
        const char *t = j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN) : NULL;
        out = t ? strdup(t) : NULL;
        json_object_put(j);
    }
    report_free(r);
    return out;
}

/* True when json-c itself prints DOC the same once read back. Not so for a number its lenient reader
 * trims: "-0e+" is a double printed -0 that reads back as the integer 0, "00e+" one printed 00; no
 * typed result could print such a document the same twice, and gpucheckup never writes one. */
static bool fuzz_results_json_c_stable(json_object *doc)
{
    const char *t = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
    char *first = t ? strdup(t) : NULL;
    json_object *back = first ? json_tokener_parse(first) : NULL;
    const char *u = back ? json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN) : NULL;
    bool same = u && strcmp(first, u) == 0;
    json_object_put(back);
    free(first);
    return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    static const struct report_result_ops *const kinds[] = {&result_smoke_ops, &result_cuda_ops, &result_vulkan_ops,
                                                            &result_rocm_ops, &result_levelzero_ops, &result_pci_ops,
                                                            &result_cpu_ops, &result_opencl_ops, &result_process_ops,
                                                            &result_icd_ops};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        json_tokener *tok = json_tokener_new();
        if (!tok)
            return 0;
        json_object *doc = json_tokener_parse_ex(tok, (const char *)data, (int)size);
        json_tokener_free(tok);
        if (!json_object_is_type(doc, json_type_object)) {
            json_object_put(doc);
            return 0;
        }
        if (!fuzz_results_json_c_stable(doc)) {
            json_object_put(doc);
            return 0;
        }
        /* Printed once, the section reads back into the same result and prints the same again. */
        char *once = fuzz_results_round(kinds[k], doc);
        if (!once)
            continue;
        json_object *again = json_tokener_parse(once);
        if (!again)
            abort();
        char *twice = fuzz_results_round(kinds[k], again);
        if (twice && strcmp(once, twice) != 0) {
            /* Said before dying, so that a short CI run's log shows what did not read back the same. */
            fprintf(stderr, "fuzz-results: %s printed differently when read back\nonce:  %s\ntwice: %s\n",
                    kinds[k]->section, once, twice);
            abort();
        }
        free(once);
        free(twice);
    }
    return 0;
}
