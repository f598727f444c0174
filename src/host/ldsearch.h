/* ldsearch.h: the dynamic linker's library search (LD_LIBRARY_PATH, ld.so.cache, ld.so.conf, default dirs) and pip wheel dirs. */
#ifndef GPUCHECKUP_LDSEARCH_H
#define GPUCHECKUP_LDSEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostfs.h"

/* ---- parsers of outside input (pure functions, no I/O: unit-tested and fuzzed) ---- */

/* Called for each cache entry: KEY (soname), VALUE (path), FLAGS (glibc's). Return non-zero to stop. */
typedef int (*ldsearch_cache_fn)(const char *key, const char *value, int32_t flags, void *arg);
/* Walk the entries of an ld.so.cache image (glibc's "glibc-ld.so.cache1.1" format, optionally after
 * the old "ld.so-1.7.0" part). Returns the number of entries walked, or -1 when BUF is not such a
 * file (or is truncated, or of the other byte order). Never reads outside BUF. */
int ldsearch_cache_walk(const char *buf, size_t len, ldsearch_cache_fn fn, void *arg);
/* True when an entry with FLAGS is a library this process's architecture can load. */
bool ldsearch_cache_flags_match(int32_t flags);

/* Called for each line of an ld.so.conf file: a directory (DIR) or an include pattern (INCLUDE). */
typedef void (*ldsearch_conf_fn)(const char *dir, const char *include, void *arg);
/* Parse ld.so.conf text: comments, "include PATTERN" lines, "hwcap" lines (ignored), directories
 * (several per line are allowed, separated by blanks, commas or colons). */
void ldsearch_conf_parse(const char *text, ldsearch_conf_fn fn, void *arg);

/* ---- the search, as dlopen does it ---- */

struct ldsearch {
    const struct hostfs *fs; /* where libraries are looked up (this machine's /) */
    char **ld_dirs;          /* LD_LIBRARY_PATH, in order ("" entries become the cwd), deduplicated */
    char **ld_elems;         /* for each ld_dirs[i]: the element as written in LD_LIBRARY_PATH ("" for empty) */
    size_t n_ld;
    char *cache;             /* /etc/ld.so.cache contents, or NULL */
    size_t cache_len;
    int cache_err;           /* 0, or -errno reading it */
    char **conf_dirs;        /* directories named by /etc/ld.so.conf (includes followed) */
    char **conf_files;       /* for each conf_dirs[i]: the ld.so.conf file that named it */
    size_t n_conf;
    char *cwd;               /* for relative names with a slash; may be NULL */
    struct ldsearch_memo *memo; /* directories already listed by this search (ldsearch_list): one
                                   search belongs to one thread */
};

/* Set up S on FS with LD_LIBRARY_PATH value LDPATH (may be NULL) and this process's cwd; read
 * /etc/ld.so.cache and /etc/ld.so.conf (includes expanded, globs sorted as ldconfig does) through FS.
 * Returns 0 or -ENOMEM. Free with ldsearch_free. */
int ldsearch_init(struct ldsearch *s, const struct hostfs *fs, const char *ldpath);
void ldsearch_free(struct ldsearch *s);
/* The system directories searched after the cache on this architecture (NULL-terminated, static). */
const char *const *ldsearch_default_dirs(void);

/* Where a library was found: VIA is "absolute", "relative", "LD_LIBRARY_PATH", "ld.so.cache" or
 * "default"; ENTRY says which element of that source brought it in (the LD_LIBRARY_PATH element as
 * written, the cache key "libfoo.so.1 => /path", the default directory). */
struct ldsearch_hit {
    const char *via;
    char *entry;  /* heap, may be NULL */
};

/* Resolve NAME as dlopen(NAME) would: absolute, relative to the cwd when it has a slash, else
 * LD_LIBRARY_PATH, the cache, the default directories. Returns the path found (heap, caller frees)
 * and sets *VIA, or NULL when nothing is found. */
char *ldsearch_find(const struct ldsearch *s, const char *name, const char **via);
/* ldsearch_find, also saying which entry of the search brought the file in (HIT->entry: caller frees). */
char *ldsearch_find_hit(const struct ldsearch *s, const char *name, struct ldsearch_hit *hit);

/* Where the dynamic loader finds NAME, a DT_NEEDED entry of the object at OBJ_PATH (the path it was found
 * at: $ORIGIN is its directory) whose dynamic section has RPATH and RUNPATH (either may be NULL; see
 * elfdyn.h), for a program that dlopens that object: a name with a slash as a path; the loader's own name
 * (ld-linux*, ld64.so.*) as always there (HIT->via "the loader"); else DT_RPATH (only without DT_RUNPATH),
 * LD_LIBRARY_PATH, DT_RUNPATH, the cache, the default directories (HIT->via "DT_RPATH", "DT_RUNPATH" or as
 * ldsearch_find_hit says). Libraries the program itself loaded before are not modelled. Returns the path
 * found (heap) or NULL; *UNSURE is set when a search path entry held a token not expanded here ($LIB,
 * $PLATFORM), so a miss may be wrong. HIT->entry: caller frees. */
char *ldsearch_find_needed(const struct ldsearch *s, const char *name, const char *obj_path, const char *rpath,
                           const char *runpath, struct ldsearch_hit *hit, bool *unsure);

/* The most objects ldsearch_missing_needed reads (a ROCm or Level Zero runtime's closure has about 20). */
#define LDSEARCH_CLOSURE_MAX 96
/* What dlopen(PATH) would miss, judged from the files without loading anything: the DT_NEEDED names of PATH
 * and of every dependency found (transitively, each object read once, at most LDSEARCH_CLOSURE_MAX) that
 * ldsearch_find_needed finds nowhere, as "libfoo.so.1, libbar.so.2" (heap), or NULL when every one is found,
 * PATH's dynamic section cannot be read, or a miss would be unsure ($LIB, $PLATFORM): nothing is claimed then.
 * *READ (may be NULL) is set to the number of objects read. */
char *ldsearch_missing_needed(const struct ldsearch *s, const char *path, size_t *read);

/* One candidate file seen by ldsearch_candidates. */
struct ldsearch_file {
    char *name;        /* file name: "libcudart.so.13" */
    char *path;        /* where it was seen: DIR/NAME or the cache value */
    const char *via;   /* "LD_LIBRARY_PATH", "ld.so.cache", "default" */
    char *entry;       /* the search entry (as in struct ldsearch_hit) */
    int order;         /* position in the dynamic linker's order (lower is searched first) */
};

/* Every file whose name matches the fnmatch PATTERN ("libcudart.so*") on the search path, in the
 * dynamic linker's order: each LD_LIBRARY_PATH directory, the cache entries (this architecture's only),
 * the default directories. The same path seen twice is kept once (its first way). Only ELF libraries
 * this process can load are kept. Sets *OUT (free with ldsearch_files_free) and *N. 0 or -ENOMEM. */
int ldsearch_candidates(const struct ldsearch *s, const char *pattern, struct ldsearch_file **out, size_t *n);
void ldsearch_files_free(struct ldsearch_file *f, size_t n);

/* ---- paths and files (through hostfs) ---- */

/* Canonical form of PATH on FS (every symlink resolved, no "." or ".."), or NULL when a component
 * is missing, a loop, or unreadable. Caller frees. */
char *ldsearch_realpath(const struct hostfs *fs, const char *path);
/* PATH with its directory canonicalised but the last component kept (a symlink stays a symlink):
 * "/lib/x86_64-linux-gnu/libOpenCL.so.1" -> "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1". Caller frees. */
char *ldsearch_dir_realpath(const struct hostfs *fs, const char *path);
/* What an ELF file's header says it is built for (e_ident's class and data, e_machine). */
struct ldsearch_elf {
    int bits;         /* 32 or 64 (ELFCLASS32, ELFCLASS64) */
    bool big_endian;  /* ELFDATA2MSB */
    unsigned machine; /* e_machine: EM_X86_64, EM_AARCH64... */
};
/* Parse the first LEN bytes of a file at BUF (not trusted; at least 20 are needed). Returns 1 when
 * they are an ELF header of a known class and byte order (OUT filled), else 0 (OUT untouched). */
int ldsearch_elf_parse(const unsigned char *buf, size_t len, struct ldsearch_elf *out);
/* This process's own class, byte order and machine (machine 0 where the build knows none). */
void ldsearch_elf_host(struct ldsearch_elf *out);
/* True when E is what this process can load (its class, byte order and machine). */
bool ldsearch_elf_native(const struct ldsearch_elf *e);
/* "AArch64, 64-bit" (", big-endian" added for that order; "ELF machine N" for a machine not in the
 * table), written into BUF of SIZE bytes; returns BUF. */
const char *ldsearch_elf_describe(const struct ldsearch_elf *e, char *buf, size_t size);
/* Read PATH's ELF header through FS: 1 (OUT filled), 0 when it is not a regular ELF file (a short or
 * garbage header included), -errno when it cannot be opened. */
int ldsearch_elf_read(const struct hostfs *fs, const char *path, struct ldsearch_elf *out);
/* 1 when PATH is an ELF shared object this process can load, 0 when it is another ELF class or
 * machine or not ELF, -errno when unreadable. */
int ldsearch_elf_loadable(const struct hostfs *fs, const char *path);

/* A file the search for a name passed over because it is an ELF file for another machine, class or
 * byte order, as glibc's loader does silently (it goes on to the next directory). */
struct ldsearch_foreign {
    char *path;             /* where it is: DIR/NAME or the cache's value */
    char *name;             /* the name dlopen would ask for: NAME, or the cache's key */
    const char *via;        /* "LD_LIBRARY_PATH", "ld.so.cache" or "default" (static) */
    struct ldsearch_elf elf;
};
/* Every file named NAME (no slash) that dlopen(NAME) would look at and skip as foreign: in each
 * LD_LIBRARY_PATH directory, each cache entry for NAME whatever its architecture flags, each default
 * directory; each path once, in that order. Sets *OUT (free with ldsearch_foreign_free) and *N.
 * Returns 0 or -ENOMEM. */
int ldsearch_foreign_find(const struct ldsearch *s, const char *name, struct ldsearch_foreign **out, size_t *n);
/* ldsearch_foreign_find for every name matching the fnmatch PATTERN ("libcudart.so*", no slash) in those
 * same places, in that order; each path once. 0 or -ENOMEM. */
int ldsearch_foreign_match(const struct ldsearch *s, const char *pattern, struct ldsearch_foreign **out, size_t *n);
void ldsearch_foreign_free(struct ldsearch_foreign *f, size_t n);
/* Entries of DIR (on FS) whose name matches the fnmatch PATTERN, sorted, at most 4096 looked at.
 * Sets *OUT (free with ldsearch_strv_free) and *N. Returns 0 or -errno. */
int ldsearch_dir_match(const struct hostfs *fs, const char *dir, const char *pattern, char ***out, size_t *n);
/* ldsearch_dir_match through S: each directory (by device and inode: /lib and /usr/lib are one on a
 * merged-/usr system) is read once per search, then matched from memory; the cuda probe asks every
 * directory of the path for each of its library families. */
int ldsearch_list(const struct ldsearch *s, const char *dir, const char *pattern, char ***out, size_t *n);
/* Directories matching PATTERN, an absolute path with wildcards in any component ("/usr/local/cuda*
 * /lib64"), sorted per level. Sets *OUT (free with ldsearch_strv_free) and *N. 0 or -ENOMEM. */
int ldsearch_glob_dirs(const struct hostfs *fs, const char *pattern, char ***out, size_t *n);
/* DIR + "/" + NAME without doubling the slash. Caller frees; NULL when out of memory. */
char *ldsearch_join(const char *dir, const char *name);
void ldsearch_strv_free(char **v, size_t n);

/* ---- pip wheel layouts ---- */

/* One directory of NVIDIA pip wheel libraries: SITE/nvidia/X/lib. */
struct ldsearch_wheel {
    char *dir;          /* ".../site-packages/nvidia/cu13/lib" */
    char *site;         /* ".../site-packages" */
    char *wheel;        /* "cu13", "cublas", "cudnn"... (the directory under nvidia/) */
    char *origin;       /* why this site dir was looked at: "python3 on PATH (/opt/v/bin/python3)",
                           "VIRTUAL_ENV", "system", "user (~/.local)" */
};

/* Where pip installs the NVIDIA wheels' libraries: for each python3* on PATH_ENV (its prefix: the
 * directory above bin/, symlinks not followed, so a venv keeps its own; for a pyenv shims/ dir, each of
 * its versions/X), VIRTUAL_ENV (may be NULL),
 * the system prefixes (/usr/lib, /usr/local/lib, /usr/lib64) and HOME/.local (HOME may be NULL):
 * every PREFIX/lib{,64}/python3.N/{site,dist}-packages/nvidia/ * /lib and .../dist-packages too, read
 * through FS (python itself is never run). Each directory once, first origin kept. Sets *OUT (free with
 * ldsearch_wheels_free) and *N. Returns 0 or -ENOMEM. */
int ldsearch_wheels(const struct hostfs *fs, const char *path_env, const char *virtual_env, const char *home,
                    struct ldsearch_wheel **out, size_t *n);
void ldsearch_wheels_free(struct ldsearch_wheel *w, size_t n);
/* Python's site directories under PREFIX (an environment's, "/usr", "/opt/venv"), read through FS:
 * PREFIX/lib{,64}/python3.N/site-packages, PREFIX/lib/python3.N/dist-packages and Debian's
 * PREFIX/lib/python3/dist-packages, in that order, each sorted. Sets *OUT (free with ldsearch_strv_free)
 * and *N. 0 or -ENOMEM. */
int ldsearch_site_dirs(const struct hostfs *fs, const char *prefix, char ***out, size_t *n);

#endif
