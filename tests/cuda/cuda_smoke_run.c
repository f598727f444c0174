/* cuda_smoke_run.c: run the CUDA smoke test on one GPU (or print its PTX): for real NVIDIA machines and the suite's ptxas check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "isolate.h"
#include "report.h"
#include "strutil.h"

static int usage(void)
{
    fprintf(stderr, "usage: cuda-smoke-run --ptx\n"
                    "       cuda-smoke-run [ORDINAL [N [TIMEOUT_S]]]   (defaults 0 256 60)\n"
                    "Runs the CUDA smoke test in an isolated child on device ORDINAL and prints its\n"
                    "data[\"smoke\"] entry and findings as JSON. Exit 0 when it passed, 1 when not, 2 on bad usage.\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--ptx") == 0) {
        fputs(cuda_smoke_ptx, stdout);
        return ferror(stdout) ? 1 : 0;
    }
    int64_t v[3] = {0, 256, 60};
    static const int64_t lo[3] = {0, 1, 1}, hi[3] = {1024, 4096, 3600};
    if (argc > 4)
        return usage();
    for (int i = 1; i < argc; i++)
        if (str_to_i64(argv[i], 10, &v[i - 1]) != 0 || v[i - 1] < lo[i - 1] || v[i - 1] > hi[i - 1])
            return usage();
    struct cuda_smoke_args a = {.ordinal = (int)v[0], .n = (int)v[1]};
    struct isolate_result res;
    isolate_run(cuda_smoke_child, &a, (int)v[2] * 1000, &res);

    struct report *r = report_new();
    if (!r)
        return 1;
    struct report_section *sec = report_add_section(r, "cuda");
    struct probe_ctx ctx = {.report = r, .timeout_ms = (int)v[2] * 1000};
    cuda_smoke_report(&ctx, sec, &a, &res, 1);
    json_object *out = json_object_new_object(), *smoke = NULL, *findings = json_object_new_array();
    json_object_object_get_ex(sec->data, "smoke", &smoke);
    json_object_object_add(out, "smoke", json_object_get(smoke));
    for (size_t i = 0; i < r->n_findings; i++) {
        const struct report_finding *f = r->findings[i];
        json_object *fo = json_object_new_object();
        json_object_object_add(fo, "id", json_object_new_string(f->id));
        json_object_object_add(fo, "subject", f->subject ? json_object_new_string(f->subject) : NULL);
        json_object_object_add(fo, "message", json_object_new_string(f->message));
        /* Until the cuda probe lists cuda_smoke_checks in the catalogue, its default hints are found here. */
        const char *hint = f->hint;
        for (size_t k = 0; !hint && k < cuda_smoke_n_checks; k++)
            if (strcmp(cuda_smoke_checks[k].id, f->id) == 0)
                hint = cuda_smoke_checks[k].hint;
        json_object_object_add(fo, "hint", hint ? json_object_new_string(hint) : NULL);
        json_object *ev = json_object_new_array();
        for (size_t k = 0; k < f->n_evidence; k++) {
            json_object *eo = json_object_new_object();
            json_object_object_add(eo, "source", json_object_new_string(f->evidence[k].source));
            json_object_object_add(eo, "value", json_object_new_string(f->evidence[k].value));
            json_object_array_add(ev, eo);
        }
        json_object_object_add(fo, "evidence", ev);
        json_object_array_add(findings, fo);
    }
    json_object_object_add(out, "findings", findings);
    json_object_object_add(out, "child", json_object_new_string(isolate_status_name(res.status)));
    json_object_object_add(out, "child_stderr", res.stderr_tail ? json_object_new_string(res.stderr_tail) : NULL);
    puts(json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    bool passed = r->n_findings == 0 && smoke && json_object_array_length(smoke) == 1;
    json_object_put(out);
    report_free(r);
    isolate_result_clear(&res);
    return passed ? 0 : 1;
}
