/* bench_cairo.c: the cairo functions of `bench --plot`, loaded at run time by --plot only (never linked). */
#include "bench_cairo.h"

LAZYLIB_DEFINE(struct bench_cairo_api, bench_cairo, BENCH_CAIRO_FUNCTIONS, bench_cairo_load, BENCH_CAIRO_SONAME,
               BENCH_CAIRO_ENV, "drawing the chart")
