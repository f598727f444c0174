/* bench_cairo.c: the cairo functions of `bench --plot`, loaded at run time by --plot only (never linked). */
#include "bench_cairo.h"

#include "lazylib.h"

struct bench_cairo_api bench_cairo;

static const struct dlsym_entry bench_cairo_syms[] = {
#define BENCH_CAIRO_ROW(name) LAZYLIB_ROW(struct bench_cairo_api, name)
    BENCH_CAIRO_FUNCTIONS(BENCH_CAIRO_ROW)
#undef BENCH_CAIRO_ROW
};

static struct lazylib bench_cairo_lib =
    LAZYLIB_INIT(BENCH_CAIRO_SONAME, BENCH_CAIRO_ENV, "drawing the chart", bench_cairo_syms, &bench_cairo);

int bench_cairo_load(const char **err)
{
    return lazylib_load(&bench_cairo_lib, err);
}
