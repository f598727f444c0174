/* libarch.h: name the libraries the dynamic linker skips because they are built for another machine or class. */
#ifndef GPUCHECKUP_LIBARCH_H
#define GPUCHECKUP_LIBARCH_H

#include <stddef.h>

#include "ldsearch.h"
#include "report.h"

/* For a library NAME ("libcuda.so.1") that dlopen(NAME) did not find: add finding ID (the calling
 * probe's catalogue row) to R once for each file of that name the search S passes over because its ELF
 * header says another machine, class or byte order (ldsearch_foreign_find), naming the file, what it
 * is built for and what this host is (e.g. "AArch64, 64-bit", "x86-64, 64-bit"). WHAT says what the
 * library is for people ("the NVIDIA driver's libcuda"). Returns how many were added (0: none such). */
size_t libarch_report(struct report *r, const char *id, const struct ldsearch *s, const char *name,
                      const char *what);
/* libarch_report over a search of FS with LD_LIBRARY_PATH value LDPATH (may be NULL), set up and freed
 * here. */
size_t libarch_report_fs(struct report *r, const char *id, const struct hostfs *fs, const char *ldpath,
                         const char *name, const char *what);

#endif
