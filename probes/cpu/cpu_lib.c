/* cpu_lib.c: the cpu probe's libcpuid identification (vendor, codename, core counts), run in an isolated child. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "isolate.h"
#include "jsonstr.h"
#include "strutil.h"

/* ---- libcpuid, isolated ------------------------------------------------------------------- */

struct cpu_lib_arg {
    const struct cpu_raw_data_t *raw;
    size_t n_raw;
    bool multi;     /* a multi-CPU dump: identify every logical CPU (hybrid core types) */
    bool live_all;  /* live hybrid CPU: read every logical CPU (changes the child's affinity) */
};

static void cpu_lib_quiet(const char *msg)
{
    (void)msg;
}

/* Runs in an isolated child for dumps and hybrid CPUs: libcpuid decodes untrusted dump data, and
 * reading every logical CPU pins the calling thread to each CPU in turn; neither should touch
 * gpucheckup itself. Returns a new JSON object (libcpuid's identification, or {"error": ...}). */
static json_object *cpu_lib_child(void *arg)
{
    const struct cpu_lib_arg *a = arg;
    cpuid_set_warn_function(cpu_lib_quiet);
    struct cpu_raw_data_t raw = a->raw[0];
    struct cpu_id_t id;
    memset(&id, 0, sizeof(id));
    json_object *o = json_object_new_object();
    if (cpu_identify(&raw, &id) < 0) {
        json_object_object_add(o, "error", jsonstr_sanitized(cpuid_error()));
        return o;
    }
    json_object_object_add(o, "vendor", jsonstr_sanitized(id.vendor_str));
    json_object_object_add(o, "brand", jsonstr_sanitized(id.brand_str));
    json_object_object_add(o, "codename", jsonstr_sanitized(id.cpu_codename));
    json_object_object_add(o, "family", json_object_new_int(id.ext_family));
    json_object_object_add(o, "model", json_object_new_int(id.ext_model));
    json_object_object_add(o, "stepping", json_object_new_int(id.stepping));
    json_object_object_add(o, "cores", json_object_new_int(id.num_cores));
    json_object_object_add(o, "logical_cpus", json_object_new_int(id.num_logical_cpus));
    json_object *flags = json_object_new_object();
    for (size_t i = 0; i < cpu_flag_count; i++)
        if (cpu_flag_table[i].libcpuid >= 0)
            json_object_object_add(flags, cpu_flag_table[i].name,
                                   json_object_new_boolean(id.flags[cpu_flag_table[i].libcpuid] != 0));
    json_object_object_add(o, "flags", flags);

    if (a->live_all || (a->multi && a->n_raw > 1)) {
        struct cpu_raw_data_array_t arr;
        memset(&arr, 0, sizeof(arr));
        bool own = false;
        int rc = 0;
        if (a->live_all) {
            rc = cpuid_get_all_raw_data(&arr);
            own = true;
        } else {
            arr.with_affinity = true;
            arr.num_raw = (logical_cpu_t)a->n_raw;
            arr.raw = (struct cpu_raw_data_t *)a->raw;
        }
        struct system_id_t sys;
        memset(&sys, 0, sizeof(sys));
        if (rc >= 0 && arr.num_raw > 0 && cpu_identify_all(&arr, &sys) >= 0) {
            json_object *types = json_object_new_array();
            for (uint8_t i = 0; i < sys.num_cpu_types; i++) {
                const struct cpu_id_t *t = &sys.cpu_types[i];
                json_object *e = json_object_new_object();
                json_object_object_add(e, "purpose", jsonstr_sanitized(cpu_purpose_str(t->purpose)));
                json_object_object_add(e, "cores", json_object_new_int(t->num_cores));
                json_object_object_add(e, "logical_cpus", json_object_new_int(t->num_logical_cpus));
                json_object_object_add(e, "codename", jsonstr_sanitized(t->cpu_codename));
                json_object_array_add(types, e);
            }
            json_object_object_add(o, "core_types", types);
            cpuid_free_system_id(&sys);
        } else {
            json_object_object_add(o, "core_types_error", jsonstr_sanitized(cpuid_error()));
        }
        if (own)
            cpuid_free_raw_data_array(&arr);
    }
    return o;
}

void cpu_run_libcpuid(struct cpu_run *c)
{
    struct cpu_lib_arg a = {
        .raw = c->source == CPU_SRC_DUMP ? c->dump.raw : c->raw,
        .n_raw = c->source == CPU_SRC_DUMP ? c->dump.n_raw : 1,
        .multi = c->source == CPU_SRC_DUMP && c->dump.multi,
        .live_all = c->source == CPU_SRC_CPUID && c->view.hybrid,
    };
    if (c->source == CPU_SRC_CPUID && !a.live_all) {
        /* This CPU's own leaves, one logical CPU: nothing untrusted, no affinity change, and no fork
         * (the isolation helper can add up to 20 ms waiting for the child to be reaped). */
        c->lib = cpu_lib_child(&a);
        return;
    }
    struct isolate_result res;
    probe_isolate_run(c->ctx, cpu_lib_child, &a, &res);
    if (res.status == ISOLATE_OK && json_object_is_type(res.value, json_type_object)) {
        c->lib = json_object_get(res.value);
    } else {
        report_section_add_note(c->sec, "libcpuid's identification failed in its isolated child (%s): "
                                        "codename and libcpuid cross-check unavailable",
                                res.detail ? res.detail : isolate_status_name(res.status));
    }
    isolate_result_clear(&res);
}

/* A string member of the libcpuid result, or NULL. */
const char *cpu_lib_get_str(const struct cpu_run *c, const char *key)
{
    json_object *v;
    if (!c->lib || !json_object_object_get_ex(c->lib, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    const char *s = json_object_get_string(v);
    return s && *s ? s : NULL;
}

int cpu_lib_get_int(const struct cpu_run *c, const char *key)
{
    json_object *v;
    if (!c->lib || !json_object_object_get_ex(c->lib, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    return json_object_get_int(v);
}

