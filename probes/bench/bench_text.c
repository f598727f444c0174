/* bench_text.c: the bench section for people: a table per device and a small GFLOPS-against-N chart. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_report.h"
#include "probe.h"

#define BENCH_TEXT_MAX_COLS 12
#define BENCH_CHART_ROWS 10
static const char bench_marks[] = "ox*+#@%&=~^$";

/* The columns of a device's table: its sweeps, then the CPU BLAS sweeps of the same precisions. */
struct bench_cols {
    json_object *sw[BENCH_TEXT_MAX_COLS];
    char title[BENCH_TEXT_MAX_COLS][40];
    size_t n;
};

static void bench_cols_fill(struct bench_cols *c, json_object *dev, json_object *cpu)
{
    json_object *sws = jsonget(dev, "sweeps");
    c->n = 0;
    bool prec_seen[3] = {false, false, false};
    for (size_t i = 0; json_object_is_type(sws, json_type_array) && i < json_object_array_length(sws) &&
                       c->n < BENCH_TEXT_MAX_COLS; i++) {
        json_object *sw = json_object_array_get_idx(sws, i);
        const char *prec = jsonget_str(sw, "precision");
        snprintf(c->title[c->n], sizeof(c->title[0]), "%s %s", jsonget_str(sw, "implementation"), prec);
        c->sw[c->n++] = sw;
        prec_seen[prec && strcmp(prec, "fp64") == 0 ? 1 : prec && strcmp(prec, "fp16") == 0 ? 2 : 0] = true;
    }
    for (int p = 0; p < 2 && c->n < BENCH_TEXT_MAX_COLS; p++) {
        json_object *sw = prec_seen[p] ? bench_cpu_sweep_of(cpu, p == 0 ? "fp32" : "fp64") : NULL;
        if (!sw)
            continue;
        snprintf(c->title[c->n], sizeof(c->title[0]), "CPU BLAS %s", p == 0 ? "fp32" : "fp64");
        c->sw[c->n++] = sw;
    }
}

/* The point of size N in SW, or NULL. */
static json_object *bench_point_at(json_object *sw, double n)
{
    json_object *pts = jsonget(sw, "points");
    for (size_t i = 0; json_object_is_type(pts, json_type_array) && i < json_object_array_length(pts); i++)
        if (bench_get_num(json_object_array_get_idx(pts, i), "n") == n)
            return json_object_array_get_idx(pts, i);
    return NULL;
}

/* The sizes any column measured, ascending (at most 16). */
static size_t bench_sizes(const struct bench_cols *c, double *ns)
{
    static const double all[] = {64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};
    size_t k = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        for (size_t j = 0; j < c->n; j++)
            if (bench_point_at(c->sw[j], all[i])) {
                ns[k++] = all[i];
                break;
            }
    return k;
}

static void bench_table(struct text_out *t, const struct bench_cols *c, const double *ns, size_t nn)
{
    fprintf(t->f, "  GFLOPS (median; wrong = failed the check, not counted)\n  %6s", "N");
    for (size_t j = 0; j < c->n; j++)
        fprintf(t->f, " %16s", c->title[j]);
    fputc('\n', t->f);
    for (size_t i = 0; i < nn; i++) {
        fprintf(t->f, "  %6.0f", ns[i]);
        for (size_t j = 0; j < c->n; j++) {
            json_object *p = bench_point_at(c->sw[j], ns[i]);
            double g = bench_get_num(p, "gflops");
            const char *st = jsonget_str(p, "status");
            char cell[40];
            if (!p)
                snprintf(cell, sizeof(cell), "-");
            else if (st && strcmp(st, "wrong") == 0)
                snprintf(cell, sizeof(cell), "wrong");
            else if (isfinite(g))
                snprintf(cell, sizeof(cell), "%.2f", g);
            else
                snprintf(cell, sizeof(cell), "no time");
            fprintf(t->f, " %16s", cell);
        }
        fputc('\n', t->f);
    }
}

/* GFLOPS (log scale, rows) against N (one column group per size), one mark per column. */
static void bench_chart(struct text_out *t, const struct bench_cols *c, const double *ns, size_t nn)
{
    double lo = INFINITY, hi = 0;
    for (size_t j = 0; j < c->n; j++)
        for (size_t i = 0; i < nn; i++) {
            double g = bench_get_num(bench_point_at(c->sw[j], ns[i]), "gflops");
            if (isfinite(g) && g > 0) {
                lo = g < lo ? g : lo;
                hi = g > hi ? g : hi;
            }
        }
    if (!(hi > 0) || nn == 0)
        return;
    double llo = floor(log10(lo)), lhi = ceil(log10(hi));
    if (lhi <= llo)
        lhi = llo + 1;
    char grid[BENCH_CHART_ROWS][16 * 6 + 1];
    memset(grid, ' ', sizeof(grid));
    for (size_t j = 0; j < c->n; j++)
        for (size_t i = 0; i < nn && i < 16; i++) {
            double g = bench_get_num(bench_point_at(c->sw[j], ns[i]), "gflops");
            if (!(isfinite(g) && g > 0))
                continue;
            int row = (int)lround((log10(g) - llo) / (lhi - llo) * (BENCH_CHART_ROWS - 1));
            char *cell = &grid[BENCH_CHART_ROWS - 1 - row][i * 6 + 2];
            while (*cell != ' ' && cell < &grid[BENCH_CHART_ROWS - 1 - row][i * 6 + 5])
                cell++;
            *cell = bench_marks[j];
        }
    fputs("\n  GFLOPS (log) against N\n", t->f);
    for (int r = 0; r < BENCH_CHART_ROWS; r++) {
        double v = pow(10.0, lhi - (lhi - llo) * r / (BENCH_CHART_ROWS - 1));
        fprintf(t->f, "  %9.3g |%.*s\n", v, (int)(nn * 6), grid[r]);
    }
    fprintf(t->f, "  %9s +", "");
    for (size_t i = 0; i < nn; i++)
        fputs("------", t->f);
    fprintf(t->f, "\n  %9s  ", "N");
    for (size_t i = 0; i < nn; i++)
        fprintf(t->f, "%-6.0f", ns[i]);
    fputs("\n ", t->f);
    for (size_t j = 0; j < c->n; j++)
        fprintf(t->f, " %c %s", bench_marks[j], c->title[j]);
    fputc('\n', t->f);
}

static void bench_device_text(struct text_out *t, json_object *dev, json_object *cpu)
{
    const char *status = jsonget_str(dev, "status");
    fprintf(t->f, "\n  %s %d:%d %s\n", text_mark(t, strcmp(status, "ok") == 0 ? REPORT_MARK_OK : REPORT_MARK_ERROR),
            json_object_get_int(jsonget(dev, "platform_index")), json_object_get_int(jsonget(dev, "device_index")),
            jsonget_str(dev, "name") ? jsonget_str(dev, "name") : "(no name)");
    if (strcmp(status, "ok") != 0) {
        text_kv(t, "status", "%s: %s", status, jsonget_str(dev, "detail") ? jsonget_str(dev, "detail") : "");
        return;
    }
    json_object *pk = jsonget(dev, "peak");
    for (int p = 0; p < 3; p++) {
        const char *pn = p == 0 ? "fp32" : p == 1 ? "fp64" : "fp16";
        json_object *o = jsonget(pk, pn);
        double g = bench_get_num(o, "gflops");
        char key[24];
        snprintf(key, sizeof(key), "peak %s", pn);
        const char *has = jsonget_str(jsonget(dev, "precisions"), pn);
        if (p > 0 && t->verbose == 0 && (!has || strcmp(has, "supported") != 0))
            continue;
        if (isfinite(g))
            text_kv(t, key, "%.1f GFLOPS (%s)", g, jsonget_str(o, "source"));
        else
            text_kv(t, key, "%s", jsonget_str(o, "source") ? jsonget_str(o, "source") : "unknown");
    }
    json_object *bw = jsonget(dev, "bandwidth"), *lat = jsonget(dev, "launch_latency");
    if (bw)
        text_kv(t, "host<->device", "pageable write %.2f, read %.2f GB/s; pinned write %.2f, read %.2f GB/s",
                bench_get_num(bw, "pageable_write_gbs"), bench_get_num(bw, "pageable_read_gbs"),
                bench_get_num(bw, "pinned_write_gbs"), bench_get_num(bw, "pinned_read_gbs"));
    if (lat)
        text_kv(t, "launch latency", "%.1f us median (%.1f to %.1f, %d launches, host clock)",
                bench_get_num(lat, "median_us"), bench_get_num(lat, "min_us"), bench_get_num(lat, "max_us"),
                json_object_get_int(jsonget(lat, "launches")));
    json_object *clb = jsonget(dev, "clblast");
    text_kv(t, "CLBlast", "%s", jsonget_str(clb, "path") ? jsonget_str(clb, "path")
                                : jsonget_str(clb, "detail") ? jsonget_str(clb, "detail") : "not loaded");
    struct bench_cols c;
    bench_cols_fill(&c, dev, cpu);
    for (size_t j = 0; j < c.n; j++) {
        json_object *x = jsonget(c.sw[j], "crossover");
        if (x)
            text_kv(t, c.title[j], "%s", jsonget_str(x, "text"));
        const char *d = jsonget_str(c.sw[j], "detail");
        if (d)
            text_kv(t, "", "%s", d);
        /* what a first run costs: the build in the first call (CLBlast's kernels; the driver caches them) */
        double first = bench_get_num(c.sw[j], "first_call_ms");
        const char *impl = jsonget_str(c.sw[j], "implementation");
        if (isfinite(first) && first >= 1000.0 && impl && strcmp(impl, "clblast") == 0)
            text_kv(t, "", "first call %.1f s of the budget: CLBlast built its kernels (a first run; the driver "
                    "caches them for the next)", first / 1000.0);
    }
    double ns[16];
    size_t nn = bench_sizes(&c, ns);
    if (c.n == 0)
        text_kv(t, "GEMM", "no sweep: the device has none of the precisions asked for (--bench-precision)");
    if (nn == 0)
        return;
    bench_table(t, &c, ns, nn);
    bench_chart(t, &c, ns, nn);
}

void bench_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *cpu = jsonget(sec->data, "cpu_blas"), *devs = jsonget(sec->data, "devices");
    text_heading(t, "Benchmark (GEMM C = A x B, N x N)");
    text_kv(t, "time budget", "%.1f s", bench_get_num(sec->data, "budget_s"));
    const char *cst = jsonget_str(cpu, "status");
    text_kv(t, "CPU BLAS", "%s", cst && strcmp(cst, "loaded") == 0 ? jsonget_str(cpu, "path")
                                 : jsonget_str(cpu, "detail") ? jsonget_str(cpu, "detail") : "not run");
    size_t n = json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
    if (n == 0)
        fputs("  no OpenCL device to benchmark\n", t->f);
    for (size_t i = 0; i < n; i++)
        bench_device_text(t, json_object_array_get_idx(devs, i), cpu);
}
