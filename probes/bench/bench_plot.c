/* bench_plot.c: the `bench --plot` chart (GFLOPS against N, log axes) drawn with cairo into SVG or PNG. */
#include "bench_plot.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "strutil.h"

#define BENCH_PLOT_NO_CAIRO "gpucheckup was built without cairo: --plot is not available"

/* The format PATH's extension names: 0 SVG, 1 PNG, -1 neither. */
static int bench_plot_format(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (!dot || strchr(dot, '/'))
        return -1;
    if (strcasecmp(dot, ".svg") == 0)
        return 0;
    if (strcasecmp(dot, ".png") == 0)
        return 1;
    return -1;
}

#ifndef GPUCHECKUP_HAVE_CAIRO

bool bench_plot_available(void)
{
    return false;
}

int bench_plot_load(char *err, size_t errlen)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", BENCH_PLOT_NO_CAIRO);
    return -1;
}

int bench_plot_write(const char *path, const char *title, const struct bench_plot_series *s, size_t count,
                     char *err, size_t errlen)
{
    (void)path;
    (void)title;
    (void)s;
    (void)count;
    (void)bench_plot_format;
    if (err && errlen)
        snprintf(err, errlen, "%s", BENCH_PLOT_NO_CAIRO);
    return -1;
}

#else

#include <math.h>
#include <stdlib.h>

#include "bench_cairo.h"
#include "writer.h"

/* Layout, in pixels (SVG points): a fixed plot area, the legend below it, one row per series. */
#define PLOT_W 960.0
#define PLOT_LEFT 84.0
#define PLOT_RIGHT 28.0
#define PLOT_TOP 56.0
#define PLOT_AREA_H 420.0
#define PLOT_LEGEND_GAP 64.0
#define PLOT_LEGEND_ROW 20.0
#define PLOT_MAX_SERIES 64
#define PLOT_LABEL_MAX 120

/* Where the axes map: x = log2 N over [x0, x1], y = log10 GFLOPS over [y0, y1], into the pixel box. */
struct plot_frame {
    double x0, x1, y0, y1;
    double px, py, pw, ph;
};

/* A growable memory buffer cairo writes the file into (written to disk at the end, atomically). */
struct plot_buf {
    char *data;
    size_t len, cap;
    bool oom;
};

static const double plot_palette[][3] = {
    {0.12, 0.47, 0.71}, {0.84, 0.15, 0.16}, {0.17, 0.63, 0.17}, {1.00, 0.50, 0.05}, {0.58, 0.40, 0.74},
    {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.09, 0.75, 0.81}, {0.74, 0.74, 0.13}, {0.30, 0.30, 0.30},
};
#define PLOT_NCOLOURS (sizeof plot_palette / sizeof plot_palette[0])

bool bench_plot_available(void)
{
    return true;
}

int bench_plot_load(char *err, size_t errlen)
{
    const char *lerr = NULL;
    if (bench_cairo_load(&lerr) == 0)
        return 0;
    if (err && errlen)
        snprintf(err, errlen, "%s", lerr);
    return -1;
}

static bool plot_point_ok(const struct bench_plot_series *s, size_t i)
{
    return s->n && s->gflops && isfinite(s->n[i]) && s->n[i] > 0 && isfinite(s->gflops[i]) && s->gflops[i] > 0;
}

/* The data ranges, rounded out to whole powers; returns the number of drawable points. */
static size_t plot_ranges(const struct bench_plot_series *s, size_t count, struct plot_frame *f)
{
    double nmin = INFINITY, nmax = -INFINITY, gmin = INFINITY, gmax = -INFINITY;
    size_t points = 0;
    for (size_t k = 0; k < count; k++)
        for (size_t i = 0; i < s[k].count; i++) {
            if (!plot_point_ok(&s[k], i))
                continue;
            points++;
            nmin = fmin(nmin, s[k].n[i]);
            nmax = fmax(nmax, s[k].n[i]);
            gmin = fmin(gmin, s[k].gflops[i]);
            gmax = fmax(gmax, s[k].gflops[i]);
        }
    if (!points)
        return 0;
    /* A fifth of an octave of room on both sides, so that the end points do not sit on the frame. */
    f->x0 = log2(nmin) - 0.2;
    f->x1 = log2(nmax) + 0.2;
    if (nmax <= nmin) {
        f->x0 -= 1;
        f->x1 += 1;
    }
    f->y0 = floor(log10(gmin));
    f->y1 = ceil(log10(gmax));
    if (f->y1 <= f->y0)
        f->y1 = f->y0 + 1;
    f->px = PLOT_LEFT;
    f->py = PLOT_TOP;
    f->pw = PLOT_W - PLOT_LEFT - PLOT_RIGHT;
    f->ph = PLOT_AREA_H;
    return points;
}

static double plot_x(const struct plot_frame *f, double n)
{
    return f->px + (log2(n) - f->x0) / (f->x1 - f->x0) * f->pw;
}

static double plot_y(const struct plot_frame *f, double gflops)
{
    return f->py + f->ph - (log10(gflops) - f->y0) / (f->y1 - f->y0) * f->ph;
}

/* Draw TEXT with its anchor at (X, Y): AX 0 left, 0.5 centre, 1 right; AY likewise from the top. */
static void plot_text(cairo_t *cr, double x, double y, double ax, double ay, const char *text)
{
    cairo_text_extents_t e;
    bench_cairo.cairo_text_extents(cr, text, &e);
    bench_cairo.cairo_move_to(cr, x - e.x_advance * ax, y - e.y_bearing - e.height * ay);
    bench_cairo.cairo_show_text(cr, text);
}

/* Printable ASCII only: labels carry driver strings, and cairo refuses invalid UTF-8. */
static void plot_clean(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "(unnamed)");
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            *p = '?';
}

/* Grid, ticks with their labels, and the axis titles. */
static void plot_axes(cairo_t *cr, const struct plot_frame *f)
{
    char buf[32];
    bench_cairo.cairo_set_font_size(cr, 12);
    bench_cairo.cairo_set_line_width(cr, 1);
    const double ybot = f->py + f->ph, step = f->x1 - f->x0 > 12 ? 2 : 1;
    for (double e = ceil(f->x0); e <= f->x1 + 1e-9; e += step) {
        const double x = plot_x(f, exp2(e));
        bench_cairo.cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        bench_cairo.cairo_move_to(cr, x, f->py);
        bench_cairo.cairo_line_to(cr, x, ybot);
        bench_cairo.cairo_stroke(cr);
        bench_cairo.cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        snprintf(buf, sizeof buf, "%.0f", exp2(e));
        plot_text(cr, x, ybot + 6, 0.5, 0, buf);
    }
    for (double d = f->y0; d <= f->y1 + 1e-9; d++) {
        for (int m = 2; m < 10 && d < f->y1; m++) { /* minor lines at 2..9 x the decade */
            const double y = plot_y(f, (double)m * pow(10, d));
            bench_cairo.cairo_set_source_rgb(cr, 0.95, 0.95, 0.95);
            bench_cairo.cairo_move_to(cr, f->px, y);
            bench_cairo.cairo_line_to(cr, f->px + f->pw, y);
            bench_cairo.cairo_stroke(cr);
            if (f->y1 - f->y0 <= 2 && (m == 2 || m == 5)) { /* few decades: label 2x and 5x too */
                bench_cairo.cairo_set_source_rgb(cr, 0.4, 0.4, 0.4);
                snprintf(buf, sizeof buf, "%g", (double)m * pow(10, d));
                plot_text(cr, f->px - 8, y, 1, 0.5, buf);
            }
        }
        const double y = plot_y(f, pow(10, d));
        bench_cairo.cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
        bench_cairo.cairo_move_to(cr, f->px, y);
        bench_cairo.cairo_line_to(cr, f->px + f->pw, y);
        bench_cairo.cairo_stroke(cr);
        bench_cairo.cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        snprintf(buf, sizeof buf, "%g", pow(10, d));
        plot_text(cr, f->px - 8, y, 1, 0.5, buf);
    }
    bench_cairo.cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    bench_cairo.cairo_rectangle(cr, f->px, f->py, f->pw, f->ph);
    bench_cairo.cairo_stroke(cr);
    bench_cairo.cairo_set_font_size(cr, 13);
    plot_text(cr, f->px + f->pw / 2, ybot + 28, 0.5, 0, "matrix size N (N x N x N GEMM)");
    bench_cairo.cairo_save(cr);
    bench_cairo.cairo_translate(cr, 22, f->py + f->ph / 2);
    bench_cairo.cairo_rotate(cr, -M_PI / 2);
    plot_text(cr, 0, 0, 0.5, 0.5, "GFLOPS");
    bench_cairo.cairo_restore(cr);
}

static void plot_style(cairo_t *cr, const struct bench_plot_series *s, size_t k)
{
    const double *c = plot_palette[k % PLOT_NCOLOURS];
    static const double dash[] = {8, 5};
    bench_cairo.cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    bench_cairo.cairo_set_line_width(cr, s->baseline ? 2.5 : 2);
    bench_cairo.cairo_set_dash(cr, dash, s->baseline ? 2 : 0, 0);
}

/* A marker: a filled circle, or a filled square for a baseline. */
static void plot_marker(cairo_t *cr, double x, double y, bool square)
{
    if (square)
        bench_cairo.cairo_rectangle(cr, x - 3.5, y - 3.5, 7, 7);
    else
        bench_cairo.cairo_arc(cr, x, y, 3.5, 0, 2 * M_PI);
    bench_cairo.cairo_fill(cr);
}

/* The series' GFLOPS at N, interpolated on the log axes between its valid points; < 0 outside them. */
static double plot_value_at(const struct bench_plot_series *s, double n)
{
    double pn = -1, pg = -1;
    for (size_t i = 0; i < s->count; i++) {
        if (!plot_point_ok(s, i))
            continue;
        if (s->n[i] == n)
            return s->gflops[i];
        if (pn > 0 && pn < n && s->n[i] > n) {
            const double t = (log2(n) - log2(pn)) / (log2(s->n[i]) - log2(pn));
            return pow(10, log10(pg) + t * (log10(s->gflops[i]) - log10(pg)));
        }
        pn = s->n[i];
        pg = s->gflops[i];
    }
    return -1;
}

/* The crossover: a ring on the line, a dotted drop to the x axis, and "crossover N=..." beside it. */
static void plot_crossover(cairo_t *cr, const struct plot_frame *f, const struct bench_plot_series *s)
{
    const double g = s->crossover_n > 0 ? plot_value_at(s, s->crossover_n) : -1;
    if (!(g > 0))
        return;
    static const double dots[] = {2, 3};
    const double x = plot_x(f, s->crossover_n), y = plot_y(f, g);
    bench_cairo.cairo_save(cr);
    bench_cairo.cairo_set_dash(cr, dots, 2, 0);
    bench_cairo.cairo_set_line_width(cr, 1.2);
    bench_cairo.cairo_move_to(cr, x, y + 9);
    bench_cairo.cairo_line_to(cr, x, f->py + f->ph);
    bench_cairo.cairo_stroke(cr);
    bench_cairo.cairo_set_dash(cr, NULL, 0, 0);
    bench_cairo.cairo_set_line_width(cr, 2);
    bench_cairo.cairo_arc(cr, x, y, 9, 0, 2 * M_PI);
    bench_cairo.cairo_stroke(cr);
    char buf[64];
    snprintf(buf, sizeof buf, "crossover N=%.0f", s->crossover_n);
    bench_cairo.cairo_set_font_size(cr, 11);
    plot_text(cr, x + 12, y + 12, 0, 0, buf);
    bench_cairo.cairo_restore(cr);
}

/* One series: its line (broken where a point is not valid), its markers, its crossover. */
static void plot_series(cairo_t *cr, const struct plot_frame *f, const struct bench_plot_series *s, size_t k)
{
    bench_cairo.cairo_save(cr);
    bench_cairo.cairo_rectangle(cr, f->px, f->py, f->pw, f->ph);
    bench_cairo.cairo_clip(cr);
    plot_style(cr, s, k);
    bool pen = false;
    for (size_t i = 0; i < s->count; i++) {
        if (!plot_point_ok(s, i)) {
            pen = false;
            continue;
        }
        const double x = plot_x(f, s->n[i]), y = plot_y(f, s->gflops[i]);
        if (pen)
            bench_cairo.cairo_line_to(cr, x, y);
        else
            bench_cairo.cairo_move_to(cr, x, y);
        pen = true;
    }
    bench_cairo.cairo_stroke(cr);
    for (size_t i = 0; i < s->count; i++)
        if (plot_point_ok(s, i))
            plot_marker(cr, plot_x(f, s->n[i]), plot_y(f, s->gflops[i]), s->baseline);
    bench_cairo.cairo_reset_clip(cr);
    plot_crossover(cr, f, s);
    bench_cairo.cairo_restore(cr);
}

static void plot_legend(cairo_t *cr, const struct plot_frame *f, const struct bench_plot_series *s, size_t count)
{
    char label[PLOT_LABEL_MAX + 16];
    bench_cairo.cairo_set_font_size(cr, 12);
    for (size_t k = 0; k < count; k++) {
        const double y = f->py + f->ph + PLOT_LEGEND_GAP + (double)k * PLOT_LEGEND_ROW;
        const double x = f->px + 8;
        bench_cairo.cairo_save(cr);
        plot_style(cr, &s[k], k);
        bench_cairo.cairo_move_to(cr, x, y);
        bench_cairo.cairo_line_to(cr, x + 36, y);
        bench_cairo.cairo_stroke(cr);
        plot_marker(cr, x + 18, y, s[k].baseline);
        bench_cairo.cairo_restore(cr);
        plot_clean(label, PLOT_LABEL_MAX, s[k].label);
        size_t len = strlen(label);
        if (s[k].baseline)
            snprintf(label + len, sizeof label - len, " (baseline)");
        bench_cairo.cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        plot_text(cr, x + 46, y, 0, 0.5, label);
    }
}

static double plot_height(size_t count)
{
    return PLOT_TOP + PLOT_AREA_H + PLOT_LEGEND_GAP + (double)count * PLOT_LEGEND_ROW + 8;
}

/* Everything, onto surface SF. */
static void plot_draw(cairo_surface_t *sf, const struct plot_frame *f, const char *title,
                      const struct bench_plot_series *s, size_t count)
{
    cairo_t *cr = bench_cairo.cairo_create(sf);
    bench_cairo.cairo_set_source_rgb(cr, 1, 1, 1);
    bench_cairo.cairo_paint(cr);
    bench_cairo.cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    plot_axes(cr, f);
    for (size_t k = 0; k < count; k++)
        plot_series(cr, f, &s[k], k);
    plot_legend(cr, f, s, count);
    char t[PLOT_LABEL_MAX + 1];
    plot_clean(t, sizeof t, title ? title : "gpucheckup bench");
    bench_cairo.cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    bench_cairo.cairo_set_font_size(cr, 16);
    cairo_text_extents_t e;
    bench_cairo.cairo_text_extents(cr, t, &e);
    if (e.x_advance > PLOT_W - 40) /* a long title: smaller, to fit the width */
        bench_cairo.cairo_set_font_size(cr, 16 * (PLOT_W - 40) / e.x_advance);
    bench_cairo.cairo_set_source_rgb(cr, 0, 0, 0);
    plot_text(cr, PLOT_W / 2, 18, 0.5, 0, t);
    bench_cairo.cairo_destroy(cr);
}

static cairo_status_t plot_buf_write(void *closure, const unsigned char *data, unsigned int len)
{
    struct plot_buf *b = closure;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + len)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->oom = true;
            return CAIRO_STATUS_WRITE_ERROR;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return CAIRO_STATUS_SUCCESS;
}

/* XML text: & < > " escaped, into a new heap string. */
static char *plot_xml_escape(const char *s)
{
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += strchr("&<>\"", *p) ? 6 : 1;
    char *out = malloc(n), *o = out;
    if (!out)
        return NULL;
    for (const char *p = s; *p; p++) {
        const char *rep = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '"' ? "&quot;" : NULL;
        if (rep)
            o = stpcpy(o, rep);
        else
            *o++ = *p;
    }
    *o = '\0';
    return out;
}

/* cairo draws text as glyph outlines, so an SVG holds no words: give it a <title> and a <desc> naming
 * the chart and every series (what screen readers and text search see; SVG 1.1, 5.4 "desc and title"). */
static char *plot_svg_text(const char *title, const struct bench_plot_series *s, size_t count)
{
    size_t cap = 256 + count * (PLOT_LABEL_MAX + 48);
    char *raw = malloc(cap), *t = malloc(PLOT_LABEL_MAX + 1);
    if (!raw || !t) {
        free(raw);
        free(t);
        return NULL;
    }
    plot_clean(t, PLOT_LABEL_MAX + 1, title ? title : "gpucheckup bench");
    size_t len = (size_t)snprintf(raw, cap, "%s\n%s. Series:", t, "GFLOPS against matrix size N, log axes");
    for (size_t k = 0; k < count && len < cap; k++) {
        plot_clean(t, PLOT_LABEL_MAX + 1, s[k].label);
        len += (size_t)snprintf(raw + len, cap - len, "%s %s%s", k ? ";" : "", t, s[k].baseline ? " (baseline)" : "");
        if (len < cap && s[k].crossover_n > 0)
            len += (size_t)snprintf(raw + len, cap - len, ", beats the baseline from N=%.0f", s[k].crossover_n);
    }
    free(t);
    char *nl = strchr(raw, '\n');
    *nl = '\0';
    char *et = plot_xml_escape(raw), *ed = plot_xml_escape(nl + 1);
    free(raw);
    char *out = et && ed ? str_printf("<title>%s</title>\n<desc>%s</desc>\n", et, ed) : NULL;
    free(et);
    free(ed);
    return out;
}

/* Put TEXT right after the SVG start tag in B. 0, or -1 when B holds no <svg ...> or memory runs out. */
static int plot_svg_insert(struct plot_buf *b, const char *text)
{
    if (!text || plot_buf_write(b, (const unsigned char *)"", 1) != CAIRO_STATUS_SUCCESS)
        return -1;
    b->len--; /* a terminating NUL for strstr, not part of the file */
    char *svg = strstr(b->data, "<svg");
    char *end = svg ? strchr(svg, '>') : NULL;
    if (!end)
        return -1;
    const size_t at = (size_t)(end + 1 - b->data), tl = strlen(text);
    if (plot_buf_write(b, (const unsigned char *)text, (unsigned)tl) != CAIRO_STATUS_SUCCESS)
        return -1;
    /* Rotate the appended text into place: [at, len - tl) moves right by tl. */
    char *tmp = malloc(tl);
    if (!tmp)
        return -1;
    memcpy(tmp, b->data + b->len - tl, tl);
    memmove(b->data + at + tl, b->data + at, b->len - tl - at);
    memcpy(b->data + at, tmp, tl);
    free(tmp);
    return 0;
}

/* Render into B in FORMAT (0 SVG, 1 PNG); a cairo status. */
static cairo_status_t plot_render(int format, const struct plot_frame *f, const char *title,
                                  const struct bench_plot_series *s, size_t count, struct plot_buf *b)
{
    const double h = plot_height(count);
    cairo_surface_t *sf = format == 0 ? bench_cairo.cairo_svg_surface_create_for_stream(plot_buf_write, b, PLOT_W, h)
                                      : bench_cairo.cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)PLOT_W, (int)h);
    cairo_status_t st = bench_cairo.cairo_surface_status(sf);
    if (st == CAIRO_STATUS_SUCCESS) {
        plot_draw(sf, f, title, s, count);
        if (format == 1)
            st = bench_cairo.cairo_surface_write_to_png_stream(sf, plot_buf_write, b);
        bench_cairo.cairo_surface_finish(sf);
        if (st == CAIRO_STATUS_SUCCESS)
            st = bench_cairo.cairo_surface_status(sf);
    }
    bench_cairo.cairo_surface_destroy(sf);
    return st;
}

int bench_plot_write(const char *path, const char *title, const struct bench_plot_series *s, size_t count,
                     char *err, size_t errlen)
{
    char dummy[1];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof dummy;
    }
    const int format = bench_plot_format(path);
    if (format < 0) {
        snprintf(err, errlen, "--plot %s: unknown format: the file name must end in .svg or .png", path ? path : "");
        return -1;
    }
    struct plot_frame f;
    if (count > PLOT_MAX_SERIES)
        count = PLOT_MAX_SERIES;
    if (!s || plot_ranges(s, count, &f) == 0) {
        snprintf(err, errlen, "--plot %s: no result to draw (every size failed or gave a wrong answer)", path);
        return -1;
    }
    char lerr[1024];
    if (bench_plot_load(lerr, sizeof lerr) < 0) {
        snprintf(err, errlen, "--plot %s: %s", path, lerr);
        return -1;
    }
    struct plot_buf b = {0};
    cairo_status_t st = plot_render(format, &f, title, s, count, &b);
    if (st != CAIRO_STATUS_SUCCESS || b.oom) {
        snprintf(err, errlen, "--plot %s: cannot draw the chart: %s", path,
                 b.oom ? "out of memory" : bench_cairo.cairo_status_to_string(st));
        free(b.data);
        return -1;
    }
    if (format == 0) {
        char *text = plot_svg_text(title, s, count);
        int rc = plot_svg_insert(&b, text);
        free(text);
        if (rc != 0) {
            snprintf(err, errlen, "--plot %s: cannot draw the chart: out of memory", path);
            free(b.data);
            return -1;
        }
    }
    char *msg = NULL;
    int rc = output_emit(path, b.data, b.len, &msg);
    if (rc != 0) /* output_emit names --output; this is --plot's file */
        snprintf(err, errlen, "--plot %s", msg && str_starts_with(msg, "--output ") ? msg + 8 : msg ? msg : "");
    free(msg);
    free(b.data);
    return rc;
}

#endif
