/* cuda_libs.h: internals of the cuda probe's library part: the library families, the version child, the rules. */
#ifndef GPUCHECKUP_CUDA_LIBS_H
#define GPUCHECKUP_CUDA_LIBS_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "isolate.h"
#include "ldsearch.h"
#include "probe.h"

/* How a family's version is read from the library itself. */
enum cuda_lib_kind {
    CUDA_LIB_CUDART,    /* cudaRuntimeGetVersion(&v): 13000 = 13.0 */
    CUDA_LIB_PROPERTY,  /* <prefix>GetProperty(MAJOR_VERSION 0 / MINOR_VERSION 1 / PATCH_LEVEL 2, &v) */
    CUDA_LIB_CUDNN,     /* cudnnGetVersion(): see cuda_libs_cudnn_decode */
    CUDA_LIB_NCCL,      /* ncclGetVersion(&v): see cuda_libs_nccl_decode */
    CUDA_LIB_NVRTC,     /* nvrtcVersion(&major, &minor) */
    CUDA_LIB_NVJITLINK, /* nvJitLinkVersion(&major, &minor) (CUDA 12.3 on) */
};

struct cuda_lib_family {
    const char *key;        /* data["libraries"][].library: "cudart", "cublasLt", "cudnn_ops" */
    const char *pattern;    /* fnmatch pattern of its files: "libcudart.so.*" */
    enum cuda_lib_kind kind;
    const char *version_fn; /* the symbol that answers the version */
    const char *cudart_fn;  /* optional: the symbol answering the CUDA runtime it was built for, or NULL */
    const char *label;      /* for people: "cuDNN", "cuBLAS" */
    /* optional: the key of the family's main library ("cudnn"), for members that may lack version_fn. A
     * member that loads but has no version_fn is healthy: it takes the version of that main library in
     * its own directory (cuDNN 9.2x's libcudnn_ext.so.9 exports no cudnnGetVersion). NULL: version_fn is
     * required. */
    const char *version_of;
};

extern const struct cuda_lib_family cuda_lib_families[];
extern const size_t cuda_lib_n_families;

/* What the child is asked. */
struct cuda_libs_child_arg {
    const char *path;                     /* absolute path of the file to dlopen */
    const struct cuda_lib_family *family;
    int soname_major;                     /* N of libX.so.N (cuDNN's encoding depends on it), or -1 */
};

/* isolate work: dlopen ARG->path, call the family's version function(s). Returns
 * {"raw": n, "major": n, "minor": n, "patch": n|null, "cudart_version": n|null} or {"error": "..."}; for a
 * family with version_of, a file that loads without version_fn answers {"no_version_fn": "<symbol>"}. */
json_object *cuda_libs_child(void *arg);

/* One library's answer in a group child, in memory shared with the parent (MAP_SHARED): written as the
 * child goes, so that a crash or a hang at one library still leaves the answers of those before it. */
#define CUDA_LIBS_SLOT_SIZE 8192
enum { CUDA_LIBS_SLOT_NOT_STARTED = 0, CUDA_LIBS_SLOT_LOADING = 1, CUDA_LIBS_SLOT_DONE = 2 };
struct cuda_libs_slot {
    int state;                                     /* CUDA_LIBS_SLOT_*, stored last (release) */
    char json[CUDA_LIBS_SLOT_SIZE - sizeof(int)];  /* cuda_libs_child's object, NUL-terminated */
};

/* What a group child is asked: N libraries, loaded one after another in one process (dependencies shared
 * between them are loaded once), each answer into its slot. */
struct cuda_libs_group_arg {
    const struct cuda_libs_child_arg *const *libs;
    struct cuda_libs_slot *const *slots;
    size_t n;
};

/* isolate work: cuda_libs_child for each of ARG's libraries in order, each result into its slot.
 * Returns {"loaded": n}. */
json_object *cuda_libs_group_child(void *arg);

/* cudnnGetVersion's value as major/minor/patch: cuDNN 8 and older encode major*1000+minor*100+patch,
 * cuDNN 9 major*10000+minor*100+patch (cudnn_version.h of each). SONAME_MAJOR (the N of
 * libcudnn.so.N) picks the encoding; -1 guesses from the value. Returns 0, or -1 when RAW does not
 * decode to SONAME_MAJOR. */
int cuda_libs_cudnn_decode(long raw, int soname_major, int *major, int *minor, int *patch);
/* ncclGetVersion's value: from NCCL 2.9 on major*10000+minor*100+patch, before major*1000+minor*100+patch
 * (nccl.h, NCCL_VERSION(X,Y,Z)). Returns 0 or -1. */
int cuda_libs_nccl_decode(long raw, int *major, int *minor, int *patch);

/* The CUDA major a library release belongs to, from NVIDIA's component tables (cuda_libs_files.c says which),
 * or -1 when not known. FAMILY is the key ("cufft"...), MAJOR.MINOR.PATCH the library's version. */
int cuda_libs_cuda_major_of(const char *family, int major, int minor, int patch);

/* Minimum Linux driver for a CUDA major's runtime (minor version compatibility), "450.80.02", or NULL. */
const char *cuda_libs_min_driver(int cuda_major);
/* Compare dotted driver versions numerically: <0, 0, >0. Missing parts count as 0. */
int cuda_libs_vercmp(const char *a, const char *b);

/* ---- what was found (cuda_libs.c), judged by cuda_libs_findings.c ---- */

struct cuda_lib_entry {
    const struct cuda_lib_family *family;
    char *key;          /* "cudart", "cudnn_ops" */
    char *file;         /* "libcudart.so.13" */
    char *path;         /* where it was found */
    char *real;         /* canonical file */
    const char *via;    /* "LD_LIBRARY_PATH", "ld.so.cache", "default", "pip" */
    char *entry;        /* the search entry / wheel origin */
    char *wheel;        /* the wheel's lib dir, or NULL */
    char *site;         /* the wheel's site-packages, or NULL */
    bool loaded_first;
    int soname_major;
    /* from the child */
    bool have_version;
    int major, minor, patch;
    long cudart_version; /* the CUDA runtime the library was built for (cuBLAS, cuDNN), or -1 */
    char *version;       /* "13.0.96" */
    const char *version_from; /* "library", "main library", "file name", "SONAME", or NULL */
    bool no_version_fn;  /* loaded, but has no version function of its own (family->version_of) */
    int cuda_major, cuda_minor;
    char *cuda_source;   /* how cuda_major was decided */
    char *error;
    bool crashed;        /* its child was killed by a signal (error says which) */
    char *load_path;     /* the file on disk the child dlopens (REAL under --root) */
    struct cuda_libs_child_arg arg; /* what its child was asked */
};

struct cuda_toolkit {
    char *dir;     /* "/usr/local/cuda-13.0" */
    char *why;     /* "/usr/local/cuda", "nvcc on PATH (/usr/local/cuda/bin/nvcc)" */
    char *version; /* "13.0.2", or NULL */
    char *source;  /* the file the version came from */
    int major, minor;
    json_object *components; /* version.json, or NULL */
};

struct cuda_libs_state {
    struct probe_ctx *ctx;
    const struct hostfs *fs; /* where libraries are looked up: this machine's files (see cuda_libs_report_fs) */
    struct report_section *sec;
    const struct cuda_facts *facts;
    struct ldsearch search;
    struct cuda_lib_entry *e;
    size_t n;
    struct cuda_toolkit *tk;
    size_t n_tk;
    const char *not_loaded; /* why no library is loaded (listed only, versions from file names), or NULL */
    bool truncated; /* more files than CUDA_LIBS_MAX_FILES */
    int err;
};

/* cuda_libs_no_load_reason's answer on a host without an NVIDIA GPU, module or libcuda.so.1. */
#define CUDA_LIBS_NO_GPU "no NVIDIA GPU or driver on this host"

/* cuda_libs_report with the library search on FS (tests pass a fake tree, whose libraries they load):
 * NOT_LOADED NULL loads each library in a child for its version; else the libraries are only listed,
 * with NOT_LOADED as the reason (cuda_libs_no_load_reason). */
void cuda_libs_report_fs(struct probe_ctx *ctx, struct report_section *sec, const struct cuda_facts *facts,
                         const struct hostfs *fs, const char *not_loaded);

/* Ask the N files of JOB_E (each with its arg filled) their versions into RES (by file; free each with
 * isolate_result_clear). One child per origin (the search path, each pip site) loads them all in order,
 * each answer kept as it comes (struct cuda_libs_slot); the files it did not answer for (it crashed, hung,
 * or a file reported an error there) are then asked again one child each, which names the culprit, and a
 * note on ST->sec says where the shared child stopped. Defined in cuda_libs_load.c. */
void cuda_libs_load(struct cuda_libs_state *st, struct cuda_lib_entry *const *job_e, size_t n,
                    struct isolate_result *res);

/* ---- versions the files state (cuda_libs_files.c): what needs no loading ---- */

/* Give each library of ST whose version a file states that version (have_version, version_from "file name",
 * "wheel metadata" or "toolkit version.json"), with the CUDA release it belongs to: the real file's name
 * ("libcublas.so.13.0.2.14"), the RECORD of an NVIDIA wheel's dist-info (in the pip site, or a toolkit's
 * dist-info/ directory) listing the file with its size, the version.json of the toolkit holding it. A
 * library whose CUDA release only the library itself can tell (cuDNN outside a -cuNN wheel) is left to be
 * loaded. */
void cuda_libs_file_versions(struct cuda_libs_state *st);
/* The version toolkit TK's version.json gives the component of library family FAMILY ("cublas" ->
 * libcublas's), or NULL. */
const char *cuda_toolkit_component_version(const struct cuda_toolkit *tk, const char *family);
/* The real file's full version from its name: ".../libcudart.so.13.0.96" -> "13.0.96", or NULL. */
const char *cuda_libs_name_version(const char *real);
/* For each library of ST given its version by a file (so never loaded), the dependencies its dynamic
 * section names (DT_NEEDED, first level) resolved as the dynamic loader would (ldsearch_find_needed): one
 * found nowhere sets the entry's error (cuda.lib-load-failed names it), as loading it would have. Only where
 * ST->fs is this host's "/" (the loader's answer is this host's). Defined in cuda_libs_deps.c. */
void cuda_libs_deps(struct cuda_libs_state *st);
/* "9.28.0.42" -> 9, 28, 0 (PATCH -1 when absent). Returns 0, or -1 when V has no MAJOR.MINOR. */
int cuda_libs_parse_version(const char *v, int *major, int *minor, int *patch);
/* A dist-info directory's name, "nvidia_cudnn_cu12-9.28.0.42.dist-info": *DIST "nvidia_cudnn_cu12" and
 * *VERSION "9.28.0.42" (its leading numbers; caller frees both). Returns 0 or -1. */
int cuda_dist_dirname(const char *name, char **dist, char **version);
/* The CUDA major a wheel's name states ("nvidia_cudnn_cu12": 12), or -1. */
int cuda_dist_cuda_major(const char *dist);
/* Whether a wheel's RECORD (TEXT, LEN bytes: "path,hash,size" lines) lists a file named BASE of SIZE bytes. */
bool cuda_dist_record_lists(const char *text, size_t len, const char *base, long long size);

/* Add the cuda.lib-* findings and the summary lines for what ST found. */
void cuda_libs_findings(struct cuda_libs_state *st);

/* The unversioned libcuda.so (cuda_libs_libcuda.c): the toolkit's stub ahead of the driver, or missing. */
void cuda_libs_libcuda_findings(struct cuda_libs_state *st);

/* True when two version strings agree on every dotted component both give ("13.0.96" and "13.0"). */
bool cuda_libs_same_version(const char *a, const char *b);

#endif
