/* cpu_require.c: the cpu probe's --require names: x86-64-vN and every flag of the CPU flag table. */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_x86.h"
#include "doctor_facts.h"
#include "jsonget.h"
#include "strutil.h"
#include "results/result_cpu.h"

static int cpu_req_parse_level(const char *name, int *arg)
{
    if (!str_starts_with(name, "x86-64-v") || strlen(name) != 9 || name[8] < '1' || name[8] > '4')
        return -1;
    *arg = name[8] - '0';
    return 0;
}

static bool cpu_req_eval_level(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    const struct result_cpu *cpu = result_cpu_get(r);
    if (!cpu || cpu->x86_64_level < 0) {
        *detail = str_printf("the x86-64 level of this CPU is unknown");
        return false;
    }
    int level = cpu->x86_64_level;
    *detail = str_printf("CPU is x86-64-v%d", level);
    return level >= arg;
}

/* Exactly the flag table's names, so every flag `cpu --json` reports can be required. */
static int cpu_req_parse_flag(const char *name, int *arg)
{
    *arg = 0;
    return cpu_flag_index(name) >= 0 ? 0 : -1;
}

static char *cpu_req_flag_forms(void)
{
    size_t len = 0;
    for (size_t j = 0; j < cpu_flag_count; j++)
        len += strlen(cpu_flag_table[j].name) + 2;
    char *flags = calloc(1, len + 1);
    for (size_t j = 0; flags && j < cpu_flag_count; j++) {
        if (j)
            strcat(flags, ", ");
        strcat(flags, cpu_flag_table[j].name);
    }
    char *out = str_printf("a CPU flag (%s)", flags ? flags : "");
    free(flags);
    return out;
}

static bool cpu_req_eval_flag(const struct report *r, const char *name, int arg, char **detail)
{
    (void)arg;
    enum gc_tri v = result_cpu_flag(result_cpu_get(r), name);
    if (v == GC_TRI_UNKNOWN) {
        *detail = str_printf("CPU flag %s is unknown (the CPU probe did not report it)", name);
        return false;
    }
    *detail = str_printf("%s is %s", name, v == GC_TRI_YES ? "usable" : "not usable");
    return v == GC_TRI_YES;
}

const struct probe_require cpu_requires[] = {
    {"x86-64-v1, x86-64-v2, x86-64-v3, x86-64-v4", NULL, cpu_req_parse_level, cpu_req_eval_level, PROBE_CHAIN_OWN},
    {"a CPU flag (avx, avx2, avx512f...)", cpu_req_flag_forms, cpu_req_parse_flag, cpu_req_eval_flag, PROBE_CHAIN_OWN},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_OWN},
};
