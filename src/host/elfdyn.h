/* elfdyn.h: an ELF object's dynamic section (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH), read in small bounded pieces. */
#ifndef GPUCHECKUP_ELFDYN_H
#define GPUCHECKUP_ELFDYN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hostfs.h"

#define ELFDYN_MAX_NEEDED 256   /* DT_NEEDED entries kept (a real library has about 15) */
#define ELFDYN_MAX_STR 4096     /* longest name or search path read from the string table */
#define ELFDYN_MAX_PHNUM 1024   /* program headers accepted (a real library has about 12) */
#define ELFDYN_MAX_DYN (64u << 10) /* bytes of PT_DYNAMIC read (a real one is under 1 KiB) */

/* What the dynamic section says. Strings are the file's bytes (not sanitised), each shorter than
 * ELFDYN_MAX_STR; NULL when the entry is absent. */
struct elfdyn {
    char **needed;  /* DT_NEEDED names, in the file's order */
    size_t n_needed;
    char *soname;   /* DT_SONAME */
    char *rpath;    /* DT_RPATH */
    char *runpath;  /* DT_RUNPATH */
};

/* Reads LEN bytes at OFF into BUF: returns the bytes read (fewer at the end of the file), or -errno. */
typedef ssize_t (*elfdyn_read_fn)(void *arg, uint64_t off, void *buf, size_t len);

/* Read an ELF object's dynamic section through RD: the ELF header, the program headers, PT_DYNAMIC and
 * each string it names (never the rest of the file). Either class and byte order. Returns 0 (OUT filled;
 * an object without PT_DYNAMIC gives an empty OUT), -ENOEXEC when the bytes are not ELF or are malformed
 * or truncated (offsets outside the file, a string without its end), -ENOMEM, or RD's -errno. Free OUT
 * with elfdyn_free (also after an error). */
int elfdyn_read(elfdyn_read_fn rd, void *arg, struct elfdyn *out);
/* elfdyn_read over LEN bytes at BUF (untrusted: the fuzz target's entry). */
int elfdyn_parse(const unsigned char *buf, size_t len, struct elfdyn *out);
/* elfdyn_read on the file PATH through FS (a regular file, else -ENOEXEC; -errno when it cannot be opened). */
int elfdyn_read_file(const struct hostfs *fs, const char *path, struct elfdyn *out);
void elfdyn_free(struct elfdyn *d);

#endif
