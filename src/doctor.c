/* doctor.c: the verdict step after every probe: correlation, --require, the verdict line. */
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "strutil.h"

int doctor_run(const struct cli_options *o, struct report *r, char **error)
{
    if (o->n_requires > 0) {
        *error = str_printf("--require %s: requirements are not supported by this build yet", o->requires[0]);
        return GC_EXIT_USAGE;
    }
    size_t ne = report_count_severity(r, REPORT_SEV_ERROR);
    size_t nw = report_count_severity(r, REPORT_SEV_WARNING);
    free(r->verdict_text);
    if (report_is_ready(r))
        r->verdict_text = str_printf("Verdict: ready (%zu warning%s)", nw, nw == 1 ? "" : "s");
    else
        r->verdict_text = str_printf("Verdict: not ready (%zu error%s, %zu warning%s)", ne, ne == 1 ? "" : "s", nw,
                                     nw == 1 ? "" : "s");
    return 0;
}
