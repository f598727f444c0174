/* registry.c: the one list of probes, in the order of the report, and the catalogue their rows make. */
#include <pthread.h>
#include <string.h>

#include "probe.h"

extern const struct probe probe_cpu;
extern const struct probe probe_pci;
extern const struct probe probe_topology;
extern const struct probe probe_cuda;
extern const struct probe probe_icd;
extern const struct probe probe_opencl;
extern const struct probe probe_smoke;
extern const struct probe probe_bench;
extern const struct probe probe_frameworks;
extern const struct probe probe_vulkan;
extern const struct probe probe_rocm;
extern const struct probe probe_levelzero;
extern const struct probe probe_health;
extern const struct probe probe_process;

/* A build may list more probes after these: the test suite's fake compute API (tests/fakeapi/) compiles
 * this file again with GPUCHECKUP_EXTRA_PROBES naming a header that declares its probes and defines
 * GPUCHECKUP_EXTRA_PROBE_ROWS ("&probe_x,"), and links it before the core library. */
#ifdef GPUCHECKUP_EXTRA_PROBES
#include GPUCHECKUP_EXTRA_PROBES
#endif
#ifndef GPUCHECKUP_EXTRA_PROBE_ROWS
#define GPUCHECKUP_EXTRA_PROBE_ROWS
#endif

/* The order of the sections and findings in the report. When each runs is decided by the deps each
 * probe declares (run.c): pci before cuda, icd and opencl (device to PCI mapping), opencl before smoke and bench,
 * pci and cuda before frameworks; pci before rocm, topology and health; pci and opencl before levelzero;
 * pci and cuda before process; bench runs only for `gpucheckup bench`, process in `check` only with its
 * options. */
const struct probe *const probe_registry[] = {
    &probe_cpu,
    &probe_pci,
    &probe_health,
    &probe_topology,
    &probe_cuda,
    &probe_rocm,
    &probe_icd,
    &probe_opencl,
    &probe_levelzero,
    &probe_smoke,
    &probe_frameworks,
    &probe_vulkan,
    &probe_bench,
    &probe_process,
    GPUCHECKUP_EXTRA_PROBE_ROWS
    NULL,
};

int probe_summary_rank(enum probe_stack stack)
{
    return stack == PROBE_STACK_UNSET ? 1000 : (int)stack;
}

int probe_verdict_rank(enum probe_stack stack)
{
    return stack == PROBE_STACK_CPU ? 999 : probe_summary_rank(stack);
}

const struct probe *probe_of_command(const char *command)
{
    for (size_t i = 0; probe_registry[i]; i++)
        if (strcmp(probe_registry[i]->name, command) == 0 ||
            (probe_registry[i]->alias && strcmp(probe_registry[i]->alias, command) == 0))
            return probe_registry[i];
    return NULL;
}

const struct probe *probe_find(const char *name)
{
    for (size_t i = 0; probe_registry[i]; i++)
        if (strcmp(probe_registry[i]->name, name) == 0)
            return probe_registry[i];
    return NULL;
}

/* True when probe P is NAME or needs it (its deps, transitively). */
static bool probe_needs(const struct probe *p, const char *name, int depth)
{
    if (strcmp(p->name, name) == 0)
        return true;
    if (depth > 8 || !p->deps)
        return false;
    for (size_t i = 0; p->deps[i]; i++) {
        const struct probe *d = probe_find(p->deps[i]);
        if (d && probe_needs(d, name, depth + 1))
            return true;
    }
    return false;
}

bool probe_selects(const char *command, const char *name)
{
    const struct probe *self = probe_find(name);
    if (self && self->explicit_only && strcmp(command, name) != 0)
        return false;
    if (strcmp(command, "check") == 0)
        return !self || !self->in_check || self->in_check();
    const struct probe *p = probe_of_command(command);
    return p && probe_needs(p, name, 0);
}

/* Every probe's catalogue rows, in registry order (a probe's own rows, then its check_sets'). */
#define PROBE_MAX_PARTS 64
static struct check_part probe_parts[PROBE_MAX_PARTS];
static struct checks_catalogue probe_cat = {probe_parts, 0};
static pthread_once_t probe_cat_once = PTHREAD_ONCE_INIT;

static void probe_catalogue_add(const char *owner, const struct check *rows, size_t n)
{
    if (n > 0 && probe_cat.n < PROBE_MAX_PARTS) /* unit-doctor checks that every row is found */
        probe_parts[probe_cat.n++] = (struct check_part){owner, rows, n};
}

static void probe_catalogue_build(void)
{
    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        probe_catalogue_add(p->name, p->checks, p->n_checks);
        for (const struct check_set *cs = p->check_sets; cs && cs->rows; cs++)
            probe_catalogue_add(p->name, cs->rows, *cs->n);
    }
}

const struct checks_catalogue *probe_catalogue(void)
{
    pthread_once(&probe_cat_once, probe_catalogue_build);
    return &probe_cat;
}

struct report *report_new(void)
{
    return report_new_with(probe_catalogue());
}
