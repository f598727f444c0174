/* doctor.h: the step after every probe: root causes, --require, verdict targets and verdict text. */
#ifndef GPUCHECKUP_DOCTOR_H
#define GPUCHECKUP_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "options.h"
#include "report.h"

/* Check every requirement name in NAMES (N of them) before any probe runs. Returns 0, or -1 with a
 * message in *ERROR (caller frees) naming the first unknown one and listing the valid forms. */
int doctor_validate_requires(char *const *names, size_t n, char **error);

/* Every --require form the parser accepts, from the core's and each registered probe's rows, as one
 * list ("gpu, gpus>=N, ..., or a CPU flag (...)"; caller frees; NULL when out of memory). BRIEF: an open
 * family (a row with a forms() builder) is given by its short form when the row has one (--help);
 * otherwise in full (the unknown-requirement error). */
char *doctor_require_forms(bool brief);

/* Mark consequences with caused_by, following the root-cause rules. */
void doctor_link_causes(struct report *r);
/* The first of those rules: a finding about GPU pairs explained by one on their path (CHECK_F_PEER_PAIR,
 * CHECK_F_PEER_PATH), matched by the pairs' PCI addresses. */
void doctor_link_peers(struct report *r);

/* Evaluate one requirement against the report's sections; returns met, with *DETAIL (heap) saying
 * why. NAME must have passed doctor_validate_requires. */
bool doctor_eval_require(const struct report *r, const char *name, char **detail);

/* Fill r->targets and r->verdict_text from the sections and findings: the gpu target from the compute
 * paths (compute_path.h), then every probe's own targets and lines (struct probe.verdict). */
void doctor_verdict(struct report *r);

/* The lines of the verdict for people, in order, as the probes' verdict callbacks add them. */
#define DOCTOR_MAX_LINES 12
struct doctor_lines {
    char *line[DOCTOR_MAX_LINES]; /* heap, owned */
    int rank[DOCTOR_MAX_LINES];   /* each line's place (probe_verdict_rank of the probe that added it) */
    int cur_rank;                 /* the rank of the probe whose lines are being added */
    size_t n;
    bool gpu_missing;             /* a compute test ran and no GPU passed one: the verdict line says so */
};
/* Append LINE (heap, taken over; NULL is ignored, and so is a line beyond DOCTOR_MAX_LINES). */
void doctor_lines_add(struct doctor_lines *out, char *line);

struct probe;
/* The IDs of the root causes (not caused by another, not info) behind a target of probe P: findings on
 * P's compute API path and in the layers below every API (those about a GPU vendor only where P's API can
 * drive that vendor's GPUs, platform-wide ones always), or for a probe without a compute API, its own.
 * A new array (the caller frees it, not the strings), NULL-terminated, with room for one more; *N the
 * count. */
const char **doctor_target_reasons(const struct report *r, const struct probe *p, size_t *n);
/* The most severe root cause among those (an info one only when nothing worse is there), or NULL. */
const struct report_finding *doctor_target_root(const struct report *r, const struct probe *p);

/* One compute API's verdict (doctor_api_verdict): the probe's own words in the core's shape. */
enum {
    DOCTOR_API_ERROR_BLOCKS = 1u << 0,  /* a root cause of severity error makes a reached API not ready */
    DOCTOR_API_SAY_NOT_READY = 1u << 1, /* an info root cause still reads "not ready" (else "not available") */
};
struct doctor_api_verdict {
    const struct probe *probe; /* its target is the probe's name; reasons and root cause from its path */
    const char *label;         /* the line's lead: "HIP (ROCm)" */
    bool reached;              /* the API reaches (or passed on) a device */
    char *ready_detail;        /* heap (taken over, may be NULL): what the line says when ready */
    const char *none;          /* the detail when not ready and no root cause is known */
    unsigned flags;            /* DOCTOR_API_* */
};
/* Set the API's target and add "LABEL: DETAIL" to OUT: DETAIL is V's ready text when it is ready, else
 * "not available: MESSAGE (ID)" (an info root cause) or "not ready: MESSAGE (ID)" from the root cause of
 * its path, else V's none text. */
void doctor_api_verdict(struct report *r, struct doctor_lines *out, const struct doctor_api_verdict *v);

/* The vendor ("nvidia", "amd", "intel") a finding is about, from its subject and the sections'
 * facts; NULL when unknown or not vendor-specific. Static string. */
const char *doctor_finding_vendor(const struct report *r, const struct report_finding *f);

/* ---- what a probe left behind at the --timeout leaves unknown (doctor_unknown.c) ----
 * A probe named by core.probe-timed-out, and every probe that depends on it (which never started), has
 * no answer: not yes. The registry says what each serves (a compute API, the bus's GPUs, --require forms,
 * verdict targets); "host" and probes that only report serve none. */
/* The probe whose timeout leaves P unknown (P, or one it depends on), or NULL. */
const char *doctor_unknown_cause(const struct report *r, const struct probe *p);
/* "unknown: the WHO probe was still running at the run's --timeout ...", heap. */
char *doctor_unknown_detail(const char *who);
/* core.probe-timed-out becomes an error where the probe left behind serves a verdict in this run: the
 * run is then not ready (exit 1), never ready on an answer it does not have. */
void doctor_unknown_escalate(struct report *r);
/* A --require form of OWNER (NULL: the core's gpu forms) whose answer a timed-out probe held: *MET false,
 * *DETAIL (heap, replaced) says so, *CAUSE the probe left behind; a gpu form already met stays met. */
void doctor_unknown_require(const struct report *r, const struct probe *owner, bool *met, char **detail,
                            const char **cause);
/* The targets P set (those from the FIRST-th on) are not ready when P is unknown. */
void doctor_unknown_targets(struct report *r, const struct probe *p, size_t first);
/* The gpu target, unless proven ready, is unknown when a compute API's probe timed out. */
void doctor_unknown_gpu_target(struct report *r);
/* The probe that answers --require NAME, or NULL for the core's own forms (gpu, gpus>=N) and unknown ones. */
const struct probe *doctor_require_owner(const char *name);

/* The verdict step after every probe: correlation, --require, verdict text (src/report/doctor.c).
 * Returns 0, or GC_EXIT_USAGE with *ERROR set for an unknown requirement name. */
int doctor_run(const struct cli_options *o, struct report *r, char **error);

#endif
