/* bench_cairo.h: the cairo functions of `bench --plot`, loaded at run time by --plot only (never linked). */
#ifndef GPUCHECKUP_BENCH_CAIRO_H
#define GPUCHECKUP_BENCH_CAIRO_H

#include <cairo-svg.h>
#include <cairo.h>

/* The library's SONAME (objdump -p /usr/lib/x86_64-linux-gnu/libcairo.so on Debian 12), and the
 * environment variable that names another file instead, for tests. */
#define BENCH_CAIRO_SONAME "libcairo.so.2"
#define BENCH_CAIRO_ENV "GPUCHECKUP_LIBCAIRO"

#define BENCH_CAIRO_FUNCTIONS(X)               \
    X(cairo_arc)                               \
    X(cairo_clip)                              \
    X(cairo_create)                            \
    X(cairo_destroy)                           \
    X(cairo_fill)                              \
    X(cairo_image_surface_create)              \
    X(cairo_line_to)                           \
    X(cairo_move_to)                           \
    X(cairo_paint)                             \
    X(cairo_rectangle)                         \
    X(cairo_reset_clip)                        \
    X(cairo_restore)                           \
    X(cairo_rotate)                            \
    X(cairo_save)                              \
    X(cairo_select_font_face)                  \
    X(cairo_set_dash)                          \
    X(cairo_set_font_size)                     \
    X(cairo_set_line_width)                    \
    X(cairo_set_source_rgb)                    \
    X(cairo_show_text)                         \
    X(cairo_status_to_string)                  \
    X(cairo_stroke)                            \
    X(cairo_surface_destroy)                   \
    X(cairo_surface_finish)                    \
    X(cairo_surface_status)                    \
    X(cairo_surface_write_to_png_stream)       \
    X(cairo_svg_surface_create_for_stream)     \
    X(cairo_text_extents)                      \
    X(cairo_translate)

struct bench_cairo_api {
#define BENCH_CAIRO_MEMBER(name) __typeof__(&name) name;
    BENCH_CAIRO_FUNCTIONS(BENCH_CAIRO_MEMBER)
#undef BENCH_CAIRO_MEMBER
};

/* The table: filled by bench_cairo_load, read only after it returned 0 (in the same thread, or one
 * that learnt so from it). */
extern struct bench_cairo_api bench_cairo;

/* Load cairo (once per process; thread-safe). 0, or -1 with *ERR naming the library and dlerror's
 * words (a static string). */
int bench_cairo_load(const char **err);

#endif
