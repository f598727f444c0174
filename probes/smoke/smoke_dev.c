/* smoke_dev.c: what the files of one device's smoke test share: its stage, its first problem and failed call. */
#include "smoke_dev.h"
#include "smoke_device.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clapi.h"
#include "strutil.h"

static void (*smoke_stage_hook)(const char *stage);

void smoke_set_stage_hook_for_tests(void (*hook)(const char *stage))
{
    smoke_stage_hook = hook;
}

void smoke_stage(struct smoke_dev *d, const char *fmt, ...)
{
    char buf[SMOKE_STAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (d->args->stage) {
        memcpy(d->args->stage, buf, sizeof(buf));
        __sync_synchronize();
    }
    if (smoke_stage_hook)
        smoke_stage_hook(buf);
}

/* Record the first problem for people. */
void smoke_detail(struct smoke_dev *d, const char *fmt, ...)
{
    if (d->detail)
        return;
    va_list ap;
    va_start(ap, fmt);
    d->detail = str_vprintf(fmt, ap);
    va_end(ap);
}

/* True when ERR is CL_SUCCESS; otherwise records CALL as the failed call (the first one wins). */
bool smoke_ok(struct smoke_dev *d, cl_int err, const char *call)
{
    if (err == CL_SUCCESS)
        return true;
    if (!d->error) {
        d->error = clapi_error_json(call, err, true);
        smoke_detail(d, "%s failed: %s", call, clapi_error_name(err));
    }
    return false;
}
