/* fuzz_require.c: libFuzzer target for --require expressions (validation and evaluation). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char *name = strndup((const char *)data, size);
    if (!name)
        return 0;
    char *err = NULL;
    if (doctor_validate_requires(&name, 1, &err) == 0) {
        struct report *r = report_new();
        struct report_section *s = report_add_section(r, "cpu");
        json_object_object_add(s->data, "x86_64_level", json_object_new_int(3));
        char *detail = NULL;
        (void)doctor_eval_require(r, name, &detail);
        if (!detail)
            abort();
        free(detail);
        report_free(r);
    } else if (!err) {
        abort();
    }
    free(err);
    free(name);
    return 0;
}
