/* bench_report.c: what the bench probe derives from its children's results: peak, crossover, plot series. */
#include "bench_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonnum.h"
#include "strutil.h"
#include "jsonget.h"

double bench_get_num(json_object *o, const char *key)
{
    double v;
    return jsonget_num(o, key, &v) ? v : NAN;
}

json_object *bench_cpu_sweep_of(json_object *cpu, const char *prec)
{
    json_object *sw = jsonget(cpu, "sweeps");
    for (size_t i = 0; json_object_is_type(sw, json_type_array) && i < json_object_array_length(sw); i++) {
        json_object *s = json_object_array_get_idx(sw, i);
        const char *p = jsonget_str(s, "precision");
        if (p && strcmp(p, prec) == 0)
            return s;
    }
    return NULL;
}

/* The CPU's GFLOPS at size N in BASE (a CPU sweep), NAN when not measured or wrong. */
static double bench_base_at(json_object *base, double n)
{
    json_object *pts = jsonget(base, "points");
    for (size_t i = 0; json_object_is_type(pts, json_type_array) && i < json_object_array_length(pts); i++) {
        json_object *p = json_object_array_get_idx(pts, i);
        if (bench_get_num(p, "n") == n)
            return bench_get_num(p, "gflops");
    }
    return NAN;
}

/* Per point of SW: fraction of PEAK and ratio to the CPU; then the sweep's crossover. */
static void bench_enrich_sweep(json_object *sw, double peak, json_object *base)
{
    json_object *pts = jsonget(sw, "points");
    double cross = NAN, upto = NAN;
    for (size_t i = 0; json_object_is_type(pts, json_type_array) && i < json_object_array_length(pts); i++) {
        json_object *p = json_object_array_get_idx(pts, i);
        double g = bench_get_num(p, "gflops"), n = bench_get_num(p, "n"), c = bench_base_at(base, n);
        /* above 1 the estimate is wrong (a clock below the one the device ran at), not the measurement */
        json_object_object_add(p, "fraction_of_peak",
                               isfinite(peak) && peak > 0 && isfinite(g) && g <= peak ? jsonnum_sig(g / peak, 3) : NULL);
        json_object_object_add(p, "vs_cpu", isfinite(c) && c > 0 && isfinite(g) ? jsonnum_sig(g / c, 3) : NULL);
        if (isfinite(c) && isfinite(g)) {
            upto = n;
            /* "faster" as vs_cpu shows it (3 digits): a tie within rounding is no crossover */
            char r3[40];
            snprintf(r3, sizeof(r3), "%.3g", c > 0 ? g / c : 0.0);
            if (isnan(cross) && strtod(r3, NULL) > 1.0)
                cross = n;
        }
    }
    json_object *x = json_object_new_object();
    json_object_object_add(x, "n", isfinite(cross) ? json_object_new_int((int)cross) : NULL);
    json_object_object_add(x, "compared_up_to", isfinite(upto) ? json_object_new_int((int)upto) : NULL);
    char *text = !base                ? str_dup("no CPU BLAS baseline in this precision")
                 : isfinite(cross) ? str_printf("faster than the CPU BLAS from N = %.0f", cross)
                 : isfinite(upto)  ? str_printf("never faster than the CPU BLAS up to N = %.0f", upto)
                                   : str_dup("no size measured by both");
    json_object_object_add(x, "text", text ? json_object_new_string(text) : NULL);
    free(text);
    json_object_object_add(sw, "crossover", x);
}

void bench_enrich_device(json_object *dev, struct bench_peak_in *in, json_object *cpu)
{
    json_object *pr = jsonget(dev, "properties");
    const char *vendor = jsonget_str(dev, "vendor");
    json_object *type = jsonget(dev, "type");
    in->vendor = vendor;
    in->cpu = false;
    for (size_t i = 0; json_object_is_type(type, json_type_array) && i < json_object_array_length(type); i++)
        in->cpu |= strcmp(json_object_get_string(json_object_array_get_idx(type, i)), "CPU") == 0;
    double cu = bench_get_num(pr, "compute_units"), mhz = bench_get_num(pr, "clock_mhz");
    in->compute_units = isfinite(cu) && cu > 0 && cu < 1e7 ? (unsigned)cu : 0;
    in->clock_mhz = isfinite(mhz) && mhz > 0 && mhz < 1e7 ? (unsigned)mhz : 0;
    json_object *peaks = json_object_new_object();
    double peak_of[3];
    for (int p = 0; p < 3; p++) {
        struct bench_peak pk;
        bench_peak_compute(in, (enum bench_prec)p, &pk);
        peak_of[p] = pk.gflops;
        json_object *o = json_object_new_object();
        json_object_object_add(o, "gflops", jsonnum_sig(pk.gflops, 4));
        json_object_object_add(o, "flops_per_cycle_per_unit", jsonnum_sig(pk.flops_per_cycle, 4));
        json_object_object_add(o, "source", json_object_new_string(pk.source));
        json_object_object_add(peaks, p == 0 ? "fp32" : p == 1 ? "fp64" : "fp16", o);
    }
    json_object_object_add(dev, "peak", peaks);
    json_object *sweeps = jsonget(dev, "sweeps");
    for (size_t i = 0; json_object_is_type(sweeps, json_type_array) && i < json_object_array_length(sweeps); i++) {
        json_object *sw = json_object_array_get_idx(sweeps, i);
        const char *prec = jsonget_str(sw, "precision");
        int p = prec && strcmp(prec, "fp64") == 0 ? 1 : prec && strcmp(prec, "fp16") == 0 ? 2 : 0;
        bench_enrich_sweep(sw, peak_of[p], prec ? bench_cpu_sweep_of(cpu, prec) : NULL);
    }
}

/* One series from sweep SW. Returns false when it has no valid point. */
static bool bench_series_one(json_object *sw, char *label, bool baseline, struct bench_plot_series *s)
{
    json_object *pts = jsonget(sw, "points");
    size_t n = json_object_is_type(pts, json_type_array) ? json_object_array_length(pts) : 0, k = 0;
    double *xs = calloc(n ? n : 1, sizeof(double)), *ys = calloc(n ? n : 1, sizeof(double));
    bool any = false;
    for (size_t i = 0; xs && ys && i < n; i++) {
        json_object *p = json_object_array_get_idx(pts, i);
        double g = bench_get_num(p, "gflops");
        xs[k] = bench_get_num(p, "n");
        ys[k] = isfinite(g) ? g : 0.0;
        any |= ys[k] > 0;
        k++;
    }
    if (!any || !label) {
        free(xs), free(ys), free(label);
        return false;
    }
    double cross = bench_get_num(jsonget(sw, "crossover"), "n");
    *s = (struct bench_plot_series){label, baseline, k, xs, ys, isfinite(cross) ? cross : 0};
    return true;
}

size_t bench_series(json_object *devices, json_object *cpu, struct bench_plot_series **series)
{
    size_t cap = 8, n = 0;
    struct bench_plot_series *s = calloc(cap, sizeof(*s));
    json_object *csw = jsonget(cpu, "sweeps");
    size_t nd = json_object_is_type(devices, json_type_array) ? json_object_array_length(devices) : 0;
    size_t nc = json_object_is_type(csw, json_type_array) ? json_object_array_length(csw) : 0;
    for (size_t d = 0; s && d <= nd; d++) {
        json_object *dev = d < nd ? json_object_array_get_idx(devices, d) : NULL;
        json_object *sws = dev ? jsonget(dev, "sweeps") : csw;
        size_t m = dev ? (json_object_is_type(sws, json_type_array) ? json_object_array_length(sws) : 0) : nc;
        for (size_t i = 0; i < m; i++) {
            json_object *sw = json_object_array_get_idx(sws, i);
            if (n == cap) {
                struct bench_plot_series *t = realloc(s, 2 * cap * sizeof(*s));
                if (!t)
                    break;
                s = t, cap *= 2;
            }
            const char *name = jsonget_str(dev, "name"), *lib = jsonget_str(cpu, "library");
            char *label = dev ? str_printf("%s / %s %s", name ? name : "?", jsonget_str(sw, "implementation"),
                                           jsonget_str(sw, "precision"))
                              : str_printf("CPU BLAS (%s) %s", lib ? lib : "?", jsonget_str(sw, "precision"));
            n += bench_series_one(sw, label, !dev, &s[n]);
        }
    }
    *series = s;
    return s ? n : 0;
}

void bench_series_free(struct bench_plot_series *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        free((char *)s[i].label);
        free((double *)s[i].n);
        free((double *)s[i].gflops);
    }
    free(s);
}
