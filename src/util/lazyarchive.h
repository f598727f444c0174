/* lazyarchive.h: the libarchive functions of snapshots, loaded at run time (gpucheckup never links -larchive). */
#ifndef GPUCHECKUP_LAZYARCHIVE_H
#define GPUCHECKUP_LAZYARCHIVE_H

#include <archive.h>
#include <archive_entry.h>

#include "lazylib.h"

/* The library's SONAME (objdump -p /usr/lib/x86_64-linux-gnu/libarchive.so on Debian 12), and the
 * environment variable that names another file instead, for tests. */
#define LAZYARCHIVE_SONAME "libarchive.so.13"
#define LAZYARCHIVE_ENV "GPUCHECKUP_LIBARCHIVE"

#define LAZYARCHIVE_FUNCTIONS(X, T)                 \
    X(T, archive_entry_filetype)                    \
    X(T, archive_entry_free)                        \
    X(T, archive_entry_hardlink)                    \
    X(T, archive_entry_new)                         \
    X(T, archive_entry_pathname)                    \
    X(T, archive_entry_perm)                        \
    X(T, archive_entry_set_filetype)                \
    X(T, archive_entry_set_gid)                     \
    X(T, archive_entry_set_mtime)                   \
    X(T, archive_entry_set_pathname)                \
    X(T, archive_entry_set_perm)                    \
    X(T, archive_entry_set_size)                    \
    X(T, archive_entry_set_symlink)                 \
    X(T, archive_entry_set_uid)                     \
    X(T, archive_entry_size)                        \
    X(T, archive_entry_symlink)                     \
    X(T, archive_error_string)                      \
    X(T, archive_read_data_block)                   \
    X(T, archive_read_free)                         \
    X(T, archive_read_new)                          \
    X(T, archive_read_next_header)                  \
    X(T, archive_read_open_filename)                \
    X(T, archive_read_support_filter_gzip)          \
    X(T, archive_read_support_filter_none)          \
    X(T, archive_read_support_format_tar)           \
    X(T, archive_set_error)                         \
    X(T, archive_write_add_filter_gzip)             \
    X(T, archive_write_close)                       \
    X(T, archive_write_data)                        \
    X(T, archive_write_data_block)                  \
    X(T, archive_write_disk_new)                    \
    X(T, archive_write_disk_set_options)            \
    X(T, archive_write_finish_entry)                \
    X(T, archive_write_free)                        \
    X(T, archive_write_header)                      \
    X(T, archive_write_new)                         \
    X(T, archive_write_open)                        \
    X(T, archive_write_set_bytes_in_last_block)     \
    X(T, archive_write_set_format_pax_restricted)

struct lazyarchive_api {
    LAZYARCHIVE_FUNCTIONS(LAZYLIB_MEMBER, 0)
};

/* The table: filled by lazyarchive_load, read only after it returned 0 (in the same thread, or one
 * that learnt so from it). */
extern struct lazyarchive_api lazyarchive;

/* A's error text, or NONE when it has none. */
static inline const char *lazyarchive_error(struct archive *a, const char *none)
{
    const char *s = lazyarchive.archive_error_string(a);
    return s ? s : none;
}

/* Load libarchive (once per process; thread-safe). 0, or -1 with *ERR naming the library and
 * dlerror's words (a static string). */
int lazyarchive_load(const char **err);

#endif
