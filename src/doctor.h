/* doctor.h: the step after every probe: root causes, --require, verdict targets and verdict text. */
#ifndef GPUCHECKUP_DOCTOR_H
#define GPUCHECKUP_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

/* Check every requirement name in NAMES (N of them) before any probe runs. Returns 0, or -1 with a
 * message in *ERROR (caller frees) naming the first unknown one and listing the valid forms. */
int doctor_validate_requires(char *const *names, size_t n, char **error);

/* Mark consequences with caused_by, following the root-cause rules. */
void doctor_link_causes(struct report *r);

/* Evaluate one requirement against the report's sections; returns met, with *DETAIL (heap) saying
 * why. NAME must have passed doctor_validate_requires. */
bool doctor_eval_require(const struct report *r, const char *name, char **detail);

/* Fill r->targets and r->verdict_text from the sections and findings. */
void doctor_verdict(struct report *r);

/* The vendor ("nvidia", "amd", "intel") a finding is about, from its subject and the sections'
 * facts; NULL when unknown or not vendor-specific. Static string. */
const char *doctor_finding_vendor(const struct report *r, const struct report_finding *f);

#endif
