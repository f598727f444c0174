/* smoke_hint.c: the smoke probe's hints that depend on the device's type and the stage a child stopped in. */
#include <string.h>

#include "smoke_hint.h"

bool smoke_target_is_cpu(const struct cldev_target *t)
{
    size_t n = t->type && json_object_is_type(t->type, json_type_array) ? json_object_array_length(t->type) : 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(t->type, i));
        if (s && (strcmp(s, "CPU") == 0 || strcmp(s, "CL_DEVICE_TYPE_CPU") == 0))
            return true;
    }
    return false;
}

void smoke_timeout_hint(struct report_finding *f, const struct cldev_target *t, const char *stage)
{
    bool cpu = smoke_target_is_cpu(t);
    /* smoke_build.c's stages: "building the kernel from source", "... from device P:D's binary"... */
    if (stage && strncmp(stage, "building the kernel", strlen("building the kernel")) == 0) {
        /* The compiler runs on the host's CPU, whatever the device: no GPU had been given work yet. */
        report_finding_set_hint(f,
                                "Most likely slow, not hung: the run's --timeout ended while the driver was still "
                                "compiling the smoke kernel on the host's CPU (a first build is the slow one; PoCL "
                                "and others keep a kernel cache, so the next is quicker). Run `gpucheckup smoke` "
                                "again with a longer --timeout%s.",
                                cpu ? ", or when the machine is less loaded"
                                    : "; if it never finishes, the driver's compiler hangs: update or reinstall the "
                                      "driver");
    } else if (cpu) {
        report_finding_set_hint(f,
                                "This device is the CPU, not a GPU: no GPU hang to look for. It was still %s when "
                                "the run's --timeout ended; a CPU device shares the cores with every other job, so "
                                "on a loaded machine this is most likely slowness. Run `gpucheckup smoke` again with "
                                "a longer --timeout, or when the machine is less loaded.",
                                stage && *stage ? stage : "running the smoke test");
    }
}
