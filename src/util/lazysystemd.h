/* lazysystemd.h: the libsystemd functions of the journal fallback and the unit manager's view, loaded at run time (gpucheckup never links -lsystemd). */
#ifndef GPUCHECKUP_LAZYSYSTEMD_H
#define GPUCHECKUP_LAZYSYSTEMD_H

#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>

#include "lazylib.h"

/* The library's SONAME (objdump -p /usr/lib/x86_64-linux-gnu/libsystemd.so on Debian 12), and the
 * environment variable that names another file instead, for tests. The library creates no thread of
 * its own for these calls: they run on the calling probe's thread. */
#define LAZYSYSTEMD_SONAME "libsystemd.so.0"
#define LAZYSYSTEMD_ENV "GPUCHECKUP_LIBSYSTEMD"
/* sd-bus here only calls methods and reads properties: no sd-event loop, no thread, no fork. */

#define LAZYSYSTEMD_FUNCTIONS(X, T)                 \
    X(T, sd_bus_call_method)                        \
    X(T, sd_bus_error_free)                         \
    X(T, sd_bus_flush_close_unref)                  \
    X(T, sd_bus_get_property)                       \
    X(T, sd_bus_get_property_string)                \
    X(T, sd_bus_get_property_strv)                  \
    X(T, sd_bus_get_property_trivial)               \
    X(T, sd_bus_message_enter_container)            \
    X(T, sd_bus_message_exit_container)             \
    X(T, sd_bus_message_read)                       \
    X(T, sd_bus_message_read_strv)                  \
    X(T, sd_bus_message_skip)                       \
    X(T, sd_bus_message_unref)                      \
    X(T, sd_bus_open_system)                        \
    X(T, sd_bus_set_method_call_timeout)            \
    X(T, sd_id128_get_boot)                         \
    X(T, sd_id128_to_string)                        \
    X(T, sd_journal_add_match)                      \
    X(T, sd_journal_close)                          \
    X(T, sd_journal_get_data)                       \
    X(T, sd_journal_get_monotonic_usec)             \
    X(T, sd_journal_next)                           \
    X(T, sd_journal_open)                           \
    X(T, sd_journal_open_directory)                 \
    X(T, sd_journal_set_data_threshold)

struct lazysystemd_api {
    LAZYSYSTEMD_FUNCTIONS(LAZYLIB_MEMBER, 0)
};

/* The table: filled by lazysystemd_load, read only after it returned 0 (in the same thread, or one
 * that learnt so from it). */
extern struct lazysystemd_api lazysystemd;

/* Load libsystemd (once per process; thread-safe). 0, or -1 with *ERR naming the library and
 * dlerror's words (a static string). */
int lazysystemd_load(const char **err);

#endif
