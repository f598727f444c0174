/* smoke_shared.h: the smoke test inside the shared cl-once child, after its enumeration (issue 17). */
#ifndef GPUCHECKUP_SMOKE_SHARED_H
#define GPUCHECKUP_SMOKE_SHARED_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "clonce_parts.h"
#include "isolate.h"
#include "probe.h"
#include "smoke_device.h"
#include "smoke_platform.h"

/* The smoke probe's part of the shared child (its plan, its work in the child, its page read back;
 * the types in clonce_parts.h), listed in probe_smoke. */
extern const struct clonce_part smoke_clonce_part;

/* For the smoke probe: smoke_platform_run, except that the devices the shared cl-once child tested
 * take its answers (a device still running at its deadline, or in a child that hung, a timeout with
 * its stage), and only the others (all of them when nothing was shared, or when the shared child
 * crashed in its smoke part) get children of their own, with what is left of the budget. */
void smoke_shared_run(struct probe_ctx *ctx, struct smoke_device_args *devs, size_t n, struct isolate_result *res,
                      smoke_done_fn done, void *arg);

#endif
