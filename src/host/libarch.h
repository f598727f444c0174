/* libarch.h: name the libraries the dynamic linker skips because they are built for another machine or class. */
#ifndef GPUCHECKUP_LIBARCH_H
#define GPUCHECKUP_LIBARCH_H

#include <stddef.h>

#include "ldsearch.h"
#include "report.h"

/* Add finding ID to R about SUBJECT (NULL: PATH) for the file PATH whose ELF header ELF is not this
 * host's: "LEAD PATH is built for X, not for this Y host: THEN" (LEAD may be NULL or end in a blank, as
 * "The NVIDIA driver's libcuda "), with the ELF header, the host and VIA (how the search met the file;
 * may be NULL) as evidence. PATH is sanitised here. Returns the finding, or NULL. */
struct report_finding *libarch_add(struct report *r, const char *id, const char *subject, const char *path,
                                   const struct ldsearch_elf *elf, const char *via, const char *lead, const char *then);
/* 1 when PATH (read through FS; may be NULL) is an ELF file for another machine, class or byte order than
 * this process: *OUT is what it is built for. 0 otherwise (this host's, not ELF, unreadable). */
int libarch_file(const struct hostfs *fs, const char *path, struct ldsearch_elf *out);

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
