/* clonce.h: the one child through libOpenCL that the icd, opencl and smoke probes share in a run (issue 17). */
#ifndef GPUCHECKUP_CLONCE_H
#define GPUCHECKUP_CLONCE_H

#include <stdbool.h>
#include <json-c/json.h>

#include "clonce_parts.h"
#include "isolate.h"
#include "probe.h"
#include "runonce.h"

/* The shared job's name in the run's run_once set. */
#define CLONCE_KEY "opencl-through-the-loader"

/* One run of the shared child: the icd probe's combined view (its part's icd_combined) when the icd
 * probe runs too, then the opencl probe's enumeration (its part's enumerate), then, when the smoke
 * probe runs too, its test of the devices it selects (its part's smoke_child), in one process that
 * loads every driver once. The parts come from the registry (clonce_part_find), in that order. */
struct clonce_job {
    const struct clonce_part *icd, *opencl, *smoke_part; /* the parts found (NULL: none) */
    bool icd_part;             /* the icd probe runs (check, icd): the child begins with its part */
    struct icd_child_arg arg;  /* the icd part's; its stage lives in PAGE */
    char *health_dir;          /* --health: the vendors directory the icd part's loader reads (the icd
                                  part's icd_health_vendors), or NULL */
    size_t health_kept;        /* the .icd files it holds (0: the loader loads no driver) */
    json_object *health_skipped; /* the .icd files it leaves out (array of paths), or NULL */
    struct clonce_page *page;  /* shared with the child: the stage and the icd part's answer */
    int out_fd;                /* memfd taking the icd part's output, or -1 */
    double start_ms;
    double deadline_ms;        /* the run's deadline (jsonnum_now_ms's clock) */
    struct clonce_answers *answers; /* shared with the child: the vendor libraries answered (or NULL) */
    struct smoke_shared_plan plan;   /* the smoke part (plan.on false: none) */
    struct clonce_smoke_page *smoke; /* shared with the child when plan.on: the enumeration, kept before
                                        the smoke part starts, and the smoke part's devices */
};

/* The part of the shared child that the registry's probe NAME lists (struct probe's clonce_part), or
 * NULL when no probe of that name has one. */
const struct clonce_part *clonce_part_find(const char *name);

/* True when this run has the shared child: the opencl probe runs, on the live machine (no --root: under
 * it the icd probe's loader reads the tree's vendors, the opencl probe this machine's). The icd probe,
 * when it runs too, and the smoke probe, which follows the opencl probe, share it. */
bool clonce_wanted(const struct probe_ctx *ctx);

/* Claim the shared child for the icd probe: RUN_ONCE_MINE (then clonce_job_init, run clonce_child
 * in a batch, clonce_publish), RUN_ONCE_WAIT (clonce_icd_wait), RUN_ONCE_ALONE (run the combined
 * child alone, as without sharing). */
enum run_once_role clonce_claim(struct probe_ctx *ctx);
/* For the run of CTX (the smoke part is planned from its options). Returns 0, or -1 when the shared
 * pages cannot be had (then clonce_publish_alone). */
int clonce_job_init(struct clonce_job *j, const struct probe_ctx *ctx);
void clonce_job_free(struct clonce_job *j);
/* The child's work (isolate_fn, ARG a struct clonce_job): {"icd": ..., "opencl": ..., "smoke": ...}
 * ("smoke" only when planned: the smoke part's smoke_child answer). */
json_object *clonce_child(void *arg);
/* J ran with outcome RES: hand it to the run (waiters wake), and fill *EFF and *AUX with the
 * runner's own copies of what the sharers see (free with isolate_result_clear, json_object_put). */
void clonce_publish(struct probe_ctx *ctx, const struct clonce_job *j, const struct isolate_result *res,
                    struct isolate_result *eff, json_object **aux);
/* A claimed job that could not run: tell the waiters to work alone. */
void clonce_publish_alone(struct probe_ctx *ctx);

/* The icd probe's combined view from the shared child (its own RES when it ran it, else waited for):
 * fills *OUT as if the icd part's icd_combined had run alone (*STAGE its stage) and returns true, or returns
 * false when the icd part's answer is lost (the child failed after it): run the combined child alone. */
bool clonce_icd_view(struct probe_ctx *ctx, const struct isolate_result *res, json_object *aux,
                     struct isolate_result *out, int *stage);
/* For the icd probe that did not run it: wait for the shared child, then clonce_icd_view. */
bool clonce_icd_wait(struct probe_ctx *ctx, struct isolate_result *out, int *stage);

/* ---- the icd probe's per-driver answers (issue 17): after its icd part the shared child describes
 * each vendor library the loader holds, as the icd probe's own child per driver would ---- */

/* Start the shared child for the probe that claimed it (RUN_ONCE_MINE) in a thread of its own, with
 * what is left of the run's budget when it forks: it publishes when done, and the run joins it (run_once_set_reaper: nobody waits for
 * its smoke part but the smoke probe). Returns 0, or -1 when no thread could be had (nothing
 * started, nothing published). */
int clonce_start(struct probe_ctx *ctx);

/* The opencl probe's prestart (struct probe): the shared child starts as the run does, before the pci
 * probe the icd and opencl probes wait for is done; they then share it as waiters, and the run's
 * run_once reaps its thread. Nothing is started when the run does not share it (clonce_wanted). */
void clonce_prestart(struct probe_ctx *ctx);
/* (Under --health nothing is started ahead: which drivers the child loads waits for the PCI facts.) */

/* What clonce_icd_early found. */
enum clonce_early {
    CLONCE_EARLY_PENDING = 0, /* nothing yet: the icd part is still running (or hung) */
    CLONCE_EARLY_VIEW,        /* *VIEW and *STAGE filled as by clonce_icd_view; *DRIVERS maybe */
    CLONCE_EARLY_LOST,        /* the child is done but the icd part's answer is lost: run it alone */
};
/* Wait until UNTIL_MS (jsonnum_now_ms clock) for the icd part of the shared child and its answers for
 * the vendor libraries, whether the child is still running (read from its pages) or published. On
 * CLONCE_EARLY_VIEW, *DRIVERS is the child's answers (the icd part's icd_loaded array, the caller's) or NULL. */
enum clonce_early clonce_icd_early(struct probe_ctx *ctx, double until_ms, struct isolate_result *view, int *stage,
                                   json_object **drivers);

/* For the opencl probe: the enumeration from the shared child into *RES (started here when the opencl
 * probe claims first), its crash or hang included, as soon as the child has kept it: a smoke part
 * after it is not waited for. Returns false when it must enumerate alone: nothing is shared in this
 * run, or the shared child could not be set up. */
bool clonce_opencl(struct probe_ctx *ctx, struct isolate_result *res);

/* For the smoke probe, in a run where the shared child ran its smoke part: wait for the child's
 * outcome (and for the thread that ran it to end); *RES a copy of it, *SMOKE its smoke part's answer
 * (NULL unless the child ended well) and *SLOTS the devices that part tested with their stages
 * (the smoke part's smoke_page_json; NULL when it never started). Free them with isolate_result_clear and
 * json_object_put. Returns false (nothing filled) when no smoke part was planned: the smoke probe
 * tests every device itself. */
bool clonce_smoke(struct probe_ctx *ctx, struct isolate_result *res, json_object **smoke, json_object **slots);

#endif
