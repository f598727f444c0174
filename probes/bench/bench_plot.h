/* bench_plot.h: draw the bench GFLOPS-vs-N chart into an SVG or PNG file (cairo; optional at build time). */
#ifndef GPUCHECKUP_BENCH_PLOT_H
#define GPUCHECKUP_BENCH_PLOT_H
#include <stdbool.h>
#include <stddef.h>

struct bench_plot_series {
    const char *label;         /* "PoCL cpu-haswell / gpucheckup fp32", "CPU OpenBLAS fp32" */
    bool baseline;             /* the CPU BLAS: drawn dashed */
    size_t count;
    const double *n;           /* matrix sizes, ascending */
    const double *gflops;      /* same count; <= 0 = no valid point (wrong result, failed): not drawn */
    double crossover_n;        /* > 0: mark this N on the line (first N where it beats the baseline) */
};

/* true when gpucheckup was built with cairo (the meson option `plot`, auto). */
bool bench_plot_available(void);

/* Load cairo (once per process; bench_plot_write does too): --plot calls it before the benchmark, so
 * that a missing library ends the run at once. 0, or -1 with the message in ERR (ERRLEN bytes): the
 * library and dlerror's words, or "gpucheckup was built without cairo..." in a build without it. */
int bench_plot_load(char *err, size_t errlen);

/* Write the chart to PATH; the format comes from its extension (.svg or .png, case-insensitive).
 * Log-2 x axis (N), log-10 y axis (GFLOPS), a legend, TITLE on top. The file is written atomically
 * (temp file + rename, as src/writers/output.c does). Returns 0, or -1 with a message in ERR (ERRLEN bytes): bad
 * extension, no points, cairo not loadable, write failure, or "gpucheckup was built without cairo: --plot
 * is not available". */
int bench_plot_write(const char *path, const char *title, const struct bench_plot_series *s, size_t count,
                     char *err, size_t errlen);

#endif
