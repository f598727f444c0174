/* icd_impl.h: internals of the icd probe shared by its files: .icd parsing, library lookup, children. */
#ifndef GPUCHECKUP_ICD_IMPL_H
#define GPUCHECKUP_ICD_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "clonce_parts.h"
#include "hostfs.h"
#include "isolate.h"
#include "ldsearch.h"
#include "probe.h"
#include "results/result_pci.h"
#include "vendor.h"

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

/* ---- the library search, as dlopen does it: src/host/ldsearch.h ----
 * The icd probe's names for the shared dynamic-linker search, kept so that the probe's files and the icd
 * unit and fuzz tests written before the search moved to src/host/ldsearch.c read unchanged. */
#define icd_search ldsearch
#define icd_search_init ldsearch_init
#define icd_search_free ldsearch_free
#define icd_search_default_dirs ldsearch_default_dirs
#define icd_search_find ldsearch_find
#define icd_fs_realpath ldsearch_realpath
#define icd_fs_dir_realpath ldsearch_dir_realpath
#define icd_elf_loadable ldsearch_elf_loadable
#define icd_ldcache_fn ldsearch_cache_fn
#define icd_ldcache_walk ldsearch_cache_walk
#define icd_ldcache_flags_match ldsearch_cache_flags_match
#define icd_ldconf_fn ldsearch_conf_fn
#define icd_ldconf_parse ldsearch_conf_parse

/* ---- every libOpenCL.so* (icd_lib.c) ---- */

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

/* Child work (isolate_fn). Each returns a JSON object describing what it saw. */
json_object *icd_child_vendor(void *arg);   /* one vendor library alone */
json_object *icd_child_pair(void *arg);     /* lib then lib2 in one process: {"first", "second"} */
json_object *icd_child_loader(void *arg);   /* identify a loader with no vendor loaded */
/* The combined view (ARG a struct icd_child_arg, clonce_parts.h): clGetPlatformIDs through the real
 * loader; also the shared child's icd part (icd_clonce_part). */
json_object *icd_child_combined(void *arg);
/* In the child that ran icd_child_combined: the vendor libraries the loader holds, each asked
 * (struct clonce_part's icd_loaded says what it returns). */
json_object *icd_child_loaded(const char *loader, int out_fd);
/* The icd probe's part of the shared child (icd_part.c), listed in probe_icd. */
extern const struct clonce_part icd_clonce_part;

/* ---- the probe's shared state (icd.c, icd_loader.c, icd_collect.c, icd_probe.c, icd_conflict.c,
 * icd_text.c) ---- */

/* Default vendors directory of both loaders. */
#define ICD_VENDORS_DIR "/etc/OpenCL/vendors"
/* Largest .icd file read (a real one is a line); larger is "overlong". */
#define ICD_MAX_FILE (64 * 1024)
/* Vendor libraries probed (one child each, all at once); more are listed, not loaded. */
#define ICD_MAX_PROBES 64
/* Pairwise conflict search: at most this many children. */
#define ICD_MAX_PAIR_JOBS 32

struct icd_entry {
    char *file;         /* .icd path read through ctx->fs, or NULL for an environment entry */
    const char *source; /* "vendors-dir", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES" */
    char *library;      /* what the loader passes to dlopen (raw bytes), or NULL */
    unsigned bad, fatal;
    char *found;        /* where the library search found it (on this machine), or NULL */
    const char *via;
    char *resolved;     /* canonical path of the library, or NULL */
    dev_t dev;
    ino_t ino;
    bool have_id;
    const char *status; /* NULL while undecided */
    char *detail;
    int dup_of;
    bool probed;
    double elapsed_ms;
    json_object *platforms; /* array, owned */
    char *output;           /* what the child wrote on stderr (tail), or NULL */
    bool fifo;              /* the .icd is a FIFO: ocl-icd blocks on it */
    bool classified;        /* drv, hw and hw_why are set */
    const struct vendor_cl *drv; /* the driver recognised from the vendor table, or NULL */
    enum vendor_hw hw;      /* whether the hardware it needs is here */
    char hw_why[192];       /* what the PCI facts show about it */
    bool absent;            /* its failure or emptiness is that of a driver for absent hardware */
};

struct icd_state {
    struct probe_ctx *ctx;
    struct report_section *sec;
    struct hostfs own_libfs;
    bool have_own_libfs;
    const struct hostfs *libfs; /* this machine's files: libraries are loaded here */
    struct icd_search search;
    struct icd_loader_file *loaders;
    size_t n_loaders;
    json_object **loader_info; /* per loaders[i] (first of its group): the identification, or NULL */
    json_object *loader;       /* the default loader's identification ({"ok":...}), or NULL */
    char *loader_error;        /* why no loader, or NULL */
    enum icd_kind kind;
    const char *vendors_from;
    char *vendors_dir;
    int vendors_dir_err;
    char **ignored;            /* files in the vendors dir the loaders skip (not *.icd) */
    size_t n_ignored;
    struct icd_entry *e;
    size_t n;
    json_object *combined;
    bool root;                 /* running as root */
    const struct result_pci *pci; /* the pci section's facts when that probe ran ok, or NULL (not owned) */
};

/* icd_vendorsdir.c: the vendors directory compiled into a loader. */
/* The first "/.../OpenCL/vendors" string (NUL-terminated, a trailing '/' dropped) in the bytes BUF (LEN) of a
 * loader that is not /etc/OpenCL/vendors (heap), or NULL; *HAS_DEFAULT: that one is there too. */
char *icd_vendors_dir_in(const char *buf, size_t len, bool *has_default);
/* The directory compiled into the loader programs get when it is not /etc/OpenCL/vendors (heap, *LOADER its
 * file), else NULL (also when the loader cannot be read). */
char *icd_compiled_vendors_dir(const struct icd_state *st, const char **loader);
/* icd.loader-vendors-dir: /etc/OpenCL/vendors' .icd files that the compiled-in DIR of LOADER lacks. */
void icd_compiled_dir_findings(struct icd_state *st, const char *loader, const char *dir);

/* small helpers (icd_util.c) */
/* While icd_run replays a snapshot: the environment its run saw (ENV, the icd section's "env"), which
 * icd_env answers from; NULL: this process's again. */
void icd_env_replay(json_object *env);
const char *icd_env(const char *name);
char *icd_sanitized(const char *s);
char *icd_absolute(const struct icd_state *st, const char *path);
const char *icd_basename(const char *p);
const char *icd_subject(const struct icd_entry *e);
const char *icd_jstr(json_object *o, const char *key);
bool icd_jbool(json_object *o, const char *key, bool dflt);
bool icd_jint(json_object *o, const char *key, int64_t *out);
bool icd_is_ocl_semantics(enum icd_kind k);
volatile int *icd_stages_new(size_t n);
void icd_stages_free(volatile int *p, size_t n);
struct icd_entry *icd_entry_new(struct icd_state *st, const char *file, const char *source);
/* Free what entry E holds (not E). */
void icd_entry_clear(struct icd_entry *e);
void icd_set(struct icd_entry *e, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
json_object *icd_json_ms(double ms);
char *icd_child_failure(const struct isolate_result *r, int stage, double timeout_s);
char *icd_output_tail(const char *out);

/* the loader (icd_loader.c) */
void icd_identify(struct icd_state *st);
/* Under a snapshot (icd_replay.c): the loader as the snapshot's run identified it, no child run. */
void icd_identify_captured(struct icd_state *st);
/* Under a snapshot: the driver children's findings and summary, as captured. */
void icd_replay_captured(struct icd_state *st);
json_object *icd_loader_file_info(const struct icd_state *st, size_t i);
const char *icd_loader_kind_of(json_object *info);
void icd_crosscheck_winner(struct icd_state *st);
void icd_check_loaders(struct icd_state *st);

/* ---- --health (icd_health.c): drivers for absent hardware are not loaded (the speed policy's rule 2), nor
 * CPU drivers unless a --require form is given (rule 3: --health answers for the GPUs) ---- */

struct icd_health_plan {
    char *src;    /* the vendors directory both loaders read in this run (heap) */
    char **skip;  /* its .icd files not loaded: drivers for absent hardware, and CPU drivers (heap paths) */
    size_t n_skip;
    size_t kept;  /* its .icd files the loader reads (0: it loads no driver at all) */
    char *dir;    /* a temporary vendors directory holding copies of the others, or NULL */
};
/* Under --health, live or --root --live (with or without PCI facts): which .icd files of the one vendors directory
 * both loaders read name a driver for absent hardware (vendor_cl_hardware ABSENT, the library's name
 * saying whose it is) or, without a --require form, a CPU driver (NOT_NEEDED: PoCL, Intel's CPU runtime, a
 * Mesa driver its environment makes a CPU driver). Returns true and fills P (with MAKE_DIR, P->dir too) when
 * some are, even when none is left (P->kept 0: the loader loads nothing, and the icd and opencl probes say
 * so instead of "no platform"); false (P empty, every driver loaded as before) otherwise, or when the
 * environment adds drivers the plan cannot stand in for. Free with icd_health_plan_free, which removes P->dir. */
bool icd_health_plan(const struct probe_ctx *ctx, bool make_dir, struct icd_health_plan *p);
void icd_health_plan_free(struct icd_health_plan *p);
/* The combined view's detail when --health left the loader no driver (status not-run). */
#define ICD_HEALTH_NONE_LOADED "not loaded (--health): only CPU drivers and drivers for absent hardware are registered"
/* Is .icd FILE one P leaves unloaded? */
bool icd_health_skips(const struct icd_health_plan *p, const char *file);
/* Does --health leave CPU drivers unloaded in this run (no --require form given)? */
bool icd_health_skips_cpu(const struct probe_ctx *ctx);
/* The icd part's --health callbacks (struct clonce_part). */
char *icd_health_vendors(const struct probe_ctx *ctx, size_t *kept, json_object **skipped);
void icd_health_done(char *dir);

/* libraries built for another machine or ELF class (icd_arch.c) */
/* After E's library search (E->found, E->resolved set): when the file the loader would dlopen for E is
 * an ELF file for another machine, class or byte order, and no copy for this machine comes first, add
 * icd.wrong-arch, set E's status "wrong-arch" and return true. */
bool icd_check_arch(struct icd_state *st, struct icd_entry *e);
/* Where no loader loads: each libOpenCL.so.1 on the search path built for another machine as
 * icd.loader-wrong-arch, made the cause of icd.no-loader. */
void icd_check_loader_arch(struct icd_state *st);

/* which .icd files and libraries the loader reads, each checked before loading (icd_collect.c) */
void icd_collect(struct icd_state *st);
void icd_precheck(struct icd_state *st);

/* each vendor library alone, and which driver it is (icd_probe.c) */
char *icd_platforms_text(json_object *arr);
void icd_classify(const struct icd_state *st, struct icd_entry *e);
void icd_probe_all(struct icd_state *st);

/* drivers that crash only together (icd_conflict.c) */
bool icd_status_is(const char *s, const char *a, const char *b, const char *c, const char *d);
void icd_check_conflict(struct icd_state *st);

/* facts, summary, text (icd_text.c) */
void icd_fill_data(struct icd_state *st);
void icd_summary(struct icd_state *st);
/* Today's summary label for an older one ("Loader", "ICD"), heap, or NULL (struct probe.label_today). */
char *icd_label_today(const char *label);
void icd_no_icds(struct icd_state *st);
void icd_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

#endif
