/* checks.h: the catalogue of every finding ID gpucheckup can emit, with severity and hint template. */
#ifndef GPUCHECKUP_CHECKS_H
#define GPUCHECKUP_CHECKS_H

#include <stddef.h>
#include "report.h"

/* One row of the catalogue. Probes declare their own rows (struct probe.checks); the core adds its own. */
struct check {
    const char *id;          /* "area.name", lowercase with dashes; once shipped, keeps its meaning */
    enum report_severity severity;
    const char *title;       /* one line: what the finding means */
    const char *hint;        /* default fix hint (may be specialised per finding) */
};

/* The row for ID across the core and every registered probe, or NULL. */
const struct check *checks_find(const char *id);

/* Who declares ID: "core", or the name of the probe whose rows hold it; NULL when no row has it. */
const char *checks_owner(const char *id);

/* Call FN for every catalogue row, core rows first, then each probe's in registry order. */
void checks_foreach(void (*fn)(const struct check *c, const char *owner, void *arg), void *arg);

#endif
