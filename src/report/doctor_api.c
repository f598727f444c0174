/* doctor_api.c: the verdict skeleton every compute API's probe shares (ready / not available / not ready, its target and line). */
#include "doctor.h"

#include <stdlib.h>

#include "probe.h"
#include "strutil.h"

void doctor_api_verdict(struct report *r, struct doctor_lines *out, const struct doctor_api_verdict *v)
{
    size_t nreasons = 0;
    const char **reasons = doctor_target_reasons(r, v->probe, &nreasons);
    const struct report_finding *root = doctor_target_root(r, v->probe);
    bool ready = v->reached && !((v->flags & DOCTOR_API_ERROR_BLOCKS) && root && root->severity == REPORT_SEV_ERROR);
    char *detail;
    if (ready)
        detail = v->ready_detail ? v->ready_detail : str_printf("ready");
    else if (root)
        detail = str_printf("not %s: %s (%s)",
                            root->severity == REPORT_SEV_INFO && !(v->flags & DOCTOR_API_SAY_NOT_READY) ? "available"
                                                                                                         : "ready",
                            root->message, root->id);
    else
        detail = str_printf("%s", v->none);
    if (!ready)
        free(v->ready_detail);
    report_set_target(r, v->probe->name, ready, detail, reasons);
    doctor_lines_add(out, str_printf("%s: %s", v->label, detail));
    free(detail);
    free(reasons);
}
