/* icd_impl.h: internals of the icd probe shared by its files: .icd parsing, library lookup, children. */
#ifndef GPUCHECKUP_ICD_IMPL_H
#define GPUCHECKUP_ICD_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "hostfs.h"

/* Which ICD loader reads the vendors: decides how OCL_ICD_VENDORS and .icd files are read. */
enum icd_kind {
    ICD_KIND_NONE = 0, /* no loader could be loaded */
    ICD_KIND_OCL_ICD,  /* OCL-dev/ocl-icd (Debian's libOpenCL.so.1) */
    ICD_KIND_KHRONOS,  /* KhronosGroup/OpenCL-ICD-Loader (also bundled by SDKs) */
    ICD_KIND_UNKNOWN,  /* a loader without clGetICDLoaderInfoOCLICD, or one we do not recognise */
};

/* "ocl-icd", "khronos", "unknown"; NULL for ICD_KIND_NONE. */
const char *icd_kind_name(enum icd_kind k);
/* The kind a loader's CL_ICDL_NAME / CL_ICDL_VENDOR answer stands for (either may be NULL). */
enum icd_kind icd_kind_from_info(const char *name, const char *vendor);

/* ---- .icd file contents (icd_parse.c; pure functions, no I/O: unit-tested and fuzzed) ---- */

/* What is odd about an .icd file (bits of icd_parsed.bad). */
enum {
    ICD_BAD_EMPTY = 1u << 0,       /* no library name at all */
    ICD_BAD_CRLF = 1u << 1,        /* a carriage return (DOS line ending) */
    ICD_BAD_WHITESPACE = 1u << 2,  /* leading or trailing blanks around the name */
    ICD_BAD_EXTRA_LINES = 1u << 3, /* more than one line */
    ICD_BAD_BINARY = 1u << 4,      /* NUL bytes or control characters */
    ICD_BAD_OVERLONG = 1u << 5,    /* longer than any path dlopen accepts */
};
#define ICD_BAD_COUNT 6
/* Longest library name that can name a file (PATH_MAX - 1). */
#define ICD_NAME_MAX 4095

struct icd_parsed {
    char *library; /* the string the loader passes to dlopen (raw bytes, NUL-terminated; heap) */
    size_t library_len;
    unsigned bad;   /* every oddity found in the file (ICD_BAD_*) */
    unsigned fatal; /* the subset that makes the loader of KIND drop the file */
};

/* Read an .icd file's contents (BUF, LEN bytes, may contain NULs) as the loader of KIND does
 * (ICD_KIND_OCL_ICD: the first line; others: the whole file less one final newline). Returns 0 and
 * fills OUT (free with icd_parsed_clear), or -1 when out of memory. */
int icd_parse_content(const char *buf, size_t len, enum icd_kind kind, struct icd_parsed *out);
void icd_parsed_clear(struct icd_parsed *p);
/* Short name of one ICD_BAD_* bit ("crlf", "whitespace", "extra-lines", "empty", "binary",
 * "overlong"), or NULL. */
const char *icd_bad_name(unsigned bit);
/* Words for people ("a CRLF line ending (\r before the newline)"), or NULL. */
const char *icd_bad_text(unsigned bit);

/* ---- ld.so.cache and ld.so.conf (icd_parse.c; pure functions) ---- */

/* Called for each cache entry: KEY (soname), VALUE (path), FLAGS (glibc's). Return non-zero to stop. */
typedef int (*icd_ldcache_fn)(const char *key, const char *value, int32_t flags, void *arg);
/* Walk the entries of an ld.so.cache image (glibc's "glibc-ld.so.cache1.1" format, optionally after
 * the old "ld.so-1.7.0" part). Returns the number of entries walked, or -1 when BUF is not such a
 * file (or is truncated, or of the other byte order). Never reads outside BUF. */
int icd_ldcache_walk(const char *buf, size_t len, icd_ldcache_fn fn, void *arg);
/* True when an entry with FLAGS is a library this process's architecture can load. */
bool icd_ldcache_flags_match(int32_t flags);

/* Called for each line of an ld.so.conf file: a directory (DIR) or an include pattern (INCLUDE). */
typedef void (*icd_ldconf_fn)(const char *dir, const char *include, void *arg);
/* Parse ld.so.conf text: comments, "include PATTERN" lines, "hwcap" lines (ignored), directories
 * (several per line are allowed, separated by blanks, commas or colons). */
void icd_ldconf_parse(const char *text, icd_ldconf_fn fn, void *arg);

/* ---- the library search, as dlopen does it (icd_lib.c) ---- */

struct icd_search {
    const struct hostfs *fs; /* where libraries are looked up (this machine's /) */
    char **ld_dirs;          /* LD_LIBRARY_PATH, in order ("" entries become the cwd) */
    size_t n_ld;
    char *cache;             /* /etc/ld.so.cache contents, or NULL */
    size_t cache_len;
    int cache_err;           /* 0, or -errno reading it */
    char **conf_dirs;        /* directories named by /etc/ld.so.conf (includes followed) */
    size_t n_conf;
    char *cwd;               /* for relative names with a slash; may be NULL */
};

/* Set up S on FS with LD_LIBRARY_PATH value LDPATH (may be NULL) and this process's cwd. Returns 0
 * or -ENOMEM. Free with icd_search_free. */
int icd_search_init(struct icd_search *s, const struct hostfs *fs, const char *ldpath);
void icd_search_free(struct icd_search *s);
/* The system directories searched after the cache (NULL-terminated, static). */
const char *const *icd_search_default_dirs(void);

/* Resolve NAME as dlopen(NAME) would: absolute, relative to the cwd when it has a slash, else
 * LD_LIBRARY_PATH, the cache, the default directories. Returns the path found (heap, caller frees)
 * and sets *VIA ("absolute", "relative", "LD_LIBRARY_PATH", "ld.so.cache", "default"), or NULL
 * when nothing is found. */
char *icd_search_find(const struct icd_search *s, const char *name, const char **via);

/* Canonical form of PATH on FS (every symlink resolved, no "." or ".."), or NULL when a component
 * is missing, a loop, or unreadable. Caller frees. */
char *icd_fs_realpath(const struct hostfs *fs, const char *path);
/* PATH with its directory canonicalised but the last component kept (a symlink stays a symlink):
 * "/lib/x86_64-linux-gnu/libOpenCL.so.1" -> "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1". Caller frees. */
char *icd_fs_dir_realpath(const struct hostfs *fs, const char *path);
/* 1 when PATH is an ELF shared object this process can load, 0 when it is another ELF class or
 * machine or not ELF, -errno when unreadable. */
int icd_elf_loadable(const struct hostfs *fs, const char *path);

/* One libOpenCL.so* file found by icd_loaders_scan. */
struct icd_loader_file {
    char *path;         /* where it was found (directory canonicalised) */
    char *resolved;     /* canonical file, or NULL (dangling) */
    const char *source; /* "LD_LIBRARY_PATH", "ld.so.cache", "default", "ld.so.conf", "sdk" */
    bool searched;      /* on this process's library search path */
    bool wins;          /* what dlopen("libOpenCL.so.1") loads here */
    dev_t dev;
    ino_t ino;
    bool have_id;       /* dev/ino valid */
    bool loadable;      /* an ELF library of this machine's architecture (a 32-bit one is not) */
    int group;          /* index of the first file with the same dev/ino (itself when first) */
};

/* Find every libOpenCL.so* reachable through S (LD_LIBRARY_PATH, cache, ld.so.conf, default dirs)
 * and in the usual SDK folders. Sets *OUT (array, free with icd_loaders_free) and *N. Returns 0 or
 * -ENOMEM. */
int icd_loaders_scan(const struct icd_search *s, struct icd_loader_file **out, size_t *n);
void icd_loaders_free(struct icd_loader_file *l, size_t n);

/* ---- children (icd_child.c): run only inside isolate_run / isolate_run_many ---- */

/* Where a child is: written to shared memory so a crash or hang can be placed. */
enum icd_stage {
    ICD_STAGE_START = 0,
    ICD_STAGE_DLOPEN,
    ICD_STAGE_GEFA,          /* clGetExtensionFunctionAddress */
    ICD_STAGE_ENTRY,         /* clIcdGetPlatformIDsKHR */
    ICD_STAGE_PLATFORM_INFO, /* clGetPlatformInfo */
    ICD_STAGE_DEVICE_IDS,    /* clGetDeviceIDs */
    ICD_STAGE_LOADER_INFO,   /* clGetICDLoaderInfoOCLICD */
    ICD_STAGE_PLATFORM_IDS,  /* clGetPlatformIDs through the loader */
    ICD_STAGE_DONE,
};
/* "dlopen", "clIcdGetPlatformIDsKHR"...; "start" for unknown values. */
const char *icd_stage_name(int stage);

struct icd_child_arg {
    const char *lib;          /* vendor/pair: the library string handed to dlopen; loader: a path,
                                 or NULL for the default loader (clapi_open) */
    const char *lib2;         /* pair: the second library, loaded after LIB in the same process */
    int dlflags;              /* RTLD_* for vendor libraries */
    const char *vendors_env;  /* combined: OCL_ICD_VENDORS for the loader, or NULL to keep ours */
    volatile int *stage;      /* shared page: the stage reached (lib2 adds 0x100); may be NULL */
};

/* Child work (isolate_fn). Each returns a JSON object describing what it saw. */
json_object *icd_child_vendor(void *arg);   /* one vendor library alone */
json_object *icd_child_pair(void *arg);     /* lib then lib2 in one process: {"first", "second"} */
json_object *icd_child_loader(void *arg);   /* identify a loader with no vendor loaded */
json_object *icd_child_combined(void *arg); /* clGetPlatformIDs through the real loader */

#endif
