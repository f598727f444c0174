/* bench_cairo.h: the cairo functions of `bench --plot`, loaded at run time by --plot only (never linked). */
#ifndef GPUCHECKUP_BENCH_CAIRO_H
#define GPUCHECKUP_BENCH_CAIRO_H

#include <cairo-svg.h>
#include <cairo.h>

#include "lazylib.h"

/* The library's SONAME (objdump -p /usr/lib/x86_64-linux-gnu/libcairo.so on Debian 12), and the
 * environment variable that names another file instead, for tests. */
#define BENCH_CAIRO_SONAME "libcairo.so.2"
#define BENCH_CAIRO_ENV "GPUCHECKUP_LIBCAIRO"

#define BENCH_CAIRO_FUNCTIONS(X, T)                 \
    X(T, cairo_arc)                                 \
    X(T, cairo_clip)                                \
    X(T, cairo_create)                              \
    X(T, cairo_destroy)                             \
    X(T, cairo_fill)                                \
    X(T, cairo_image_surface_create)                \
    X(T, cairo_line_to)                             \
    X(T, cairo_move_to)                             \
    X(T, cairo_paint)                               \
    X(T, cairo_rectangle)                           \
    X(T, cairo_reset_clip)                          \
    X(T, cairo_restore)                             \
    X(T, cairo_rotate)                              \
    X(T, cairo_save)                                \
    X(T, cairo_select_font_face)                    \
    X(T, cairo_set_dash)                            \
    X(T, cairo_set_font_size)                       \
    X(T, cairo_set_line_width)                      \
    X(T, cairo_set_source_rgb)                      \
    X(T, cairo_show_text)                           \
    X(T, cairo_status_to_string)                    \
    X(T, cairo_stroke)                              \
    X(T, cairo_surface_destroy)                     \
    X(T, cairo_surface_finish)                      \
    X(T, cairo_surface_status)                      \
    X(T, cairo_surface_write_to_png_stream)         \
    X(T, cairo_svg_surface_create_for_stream)       \
    X(T, cairo_text_extents)                        \
    X(T, cairo_translate)

struct bench_cairo_api {
    BENCH_CAIRO_FUNCTIONS(LAZYLIB_MEMBER, 0)
};

/* The table: filled by bench_cairo_load, read only after it returned 0 (in the same thread, or one
 * that learnt so from it). */
extern struct bench_cairo_api bench_cairo;

/* Load cairo (once per process; thread-safe). 0, or -1 with *ERR naming the library and dlerror's
 * words (a static string). */
int bench_cairo_load(const char **err);

#endif
