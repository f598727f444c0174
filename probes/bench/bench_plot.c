/* bench_plot.c: bench-core's placeholder for the --plot chart: always "built without cairo" (bench-kernel's
 * cairo version replaces this file). */
#include "bench_plot.h"

#include <stdio.h>

bool bench_plot_available(void)
{
    return false;
}

int bench_plot_write(const char *path, const char *title, const struct bench_plot_series *s, size_t count,
                     char *err, size_t errlen)
{
    (void)path;
    (void)title;
    (void)s;
    (void)count;
    snprintf(err, errlen, "gpucheckup was built without cairo: --plot is not available");
    return -1;
}
