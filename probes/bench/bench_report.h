/* bench_report.h: what the bench probe derives from its children's results: peak, crossover, plot series. */
#ifndef GPUCHECKUP_BENCH_REPORT_H
#define GPUCHECKUP_BENCH_REPORT_H

#include <stdbool.h>
#include <json-c/json.h>

#include "bench_peak.h"
#include "bench_plot.h"
#include "jsonget.h"

/* Number member KEY of O (NAN when missing or null). */
double bench_get_num(json_object *o, const char *key);

/* The CPU BLAS sweep of precision PREC ("fp32") in CPU (the cpu_blas object), or NULL. */
json_object *bench_cpu_sweep_of(json_object *cpu, const char *prec);

/* Add to device DEV (a child's object) its "peak" per precision (from IN, vendor and properties filled from
 * DEV), and to each sweep point "fraction_of_peak" and "vs_cpu", and to each sweep "crossover"
 * ({n, compared_up_to, text}) against the CPU BLAS object CPU (may be NULL). */
void bench_enrich_device(json_object *dev, struct bench_peak_in *in, json_object *cpu);

/* The plot series of the whole result: one per device sweep and per CPU BLAS sweep with a point. Returns
 * the count; *SERIES and the arrays it points at are heap (free with bench_series_free). */
size_t bench_series(json_object *devices, json_object *cpu, struct bench_plot_series **series);
void bench_series_free(struct bench_plot_series *s, size_t n);

#endif
