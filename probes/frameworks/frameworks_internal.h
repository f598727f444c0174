/* frameworks_internal.h: the frameworks probe's parts: environments, framework readers, judgement, verdict. */
#ifndef GPUCHECKUP_FRAMEWORKS_INTERNAL_H
#define GPUCHECKUP_FRAMEWORKS_INTERNAL_H

#include <stdio.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "frameworks_fatbin.h"
#include "hostfs.h"
#include "probe.h"

/* Bounds: what one run looks at (a machine with more is summarised, never read without end). */
#define FW_MAX_ENVS 32
#define FW_MAX_FOUND 64
#define FW_MAX_PYTHONS 8
#define FW_MAX_READ (256 * 1024) /* a version.py or METADATA file larger than this is not one */

/* A Python environment: a prefix and the site directories under it. */
struct fw_env {
    char *prefix;    /* "/opt/venv", "/usr", "/root/.local" */
    char *kind;      /* "venv", "conda", "system", "user", "python" */
    char *origin;    /* why it was looked at: "VIRTUAL_ENV", "python3 on PATH", "--python" ... */
    char *python;    /* its interpreter when known, else NULL */
    char **sites;    /* site-packages / dist-packages directories */
    size_t n_sites;
};

/* The build a framework copy is, from its own files. */
enum fw_build { FW_BUILD_UNKNOWN = 0, FW_BUILD_CPU, FW_BUILD_CUDA, FW_BUILD_ROCM, FW_BUILD_XPU };

/* Whether it will use a GPU here. */
enum fw_gpu { FW_GPU_UNKNOWN = 0, FW_GPU_NO, FW_GPU_YES };

/* One copy of a framework found in one environment. */
struct fw_found {
    const struct fw_kind *kind;
    size_t env;              /* index into the environments */
    char site[512];          /* the site directory it is in */
    char dist[64];           /* its distribution on PyPI: "torch", "tensorflow-cpu", "cupy-cuda12x" */
    char version[64];        /* "2.9.0+cu128"; "" unknown */
    enum fw_build build;
    char cuda[32];           /* CUDA version it is built for ("13.2", "12" for a series); "" */
    char rocm[32];           /* ROCm/HIP version; "" */
    char extra[64];          /* another build fact (TensorFlow's cuDNN major) */
    char source[600];        /* the file the build was read from */
    json_object *pins;       /* METADATA requirements on NVIDIA wheels (array of {name, spec, installed, state}),
                                or NULL */
    size_t pins_missing;     /* pins whose wheel is not installed beside it */
    size_t pins_other;       /* pins installed at a version the pin does not allow */
    size_t pins_extra;       /* an extra's pins not installed while others of it are (fw_pins_extra) */
    char *damaged;           /* what could not be read (heap), or NULL */
    /* the judgement (frameworks_judge.c) */
    enum fw_gpu gpu;
    char *why;               /* heap: "built for CUDA 13.2, the driver 535.261.03 runs CUDA 12.2 at most" */
    const char *root;        /* the finding ID naming the root cause, or NULL */
    /* --import (frameworks_import.c): what the framework said when imported, the section's "import" */
    json_object *imported;
    /* its own GPU kernels' library (frameworks_arch.c) */
    struct fw_gpu_code *code; /* heap, or NULL: no such library read */
    int code_status;          /* fw_fatbin_read's answer */
    char code_file[600];
};

struct fw_scan {
    struct fw_env envs[FW_MAX_ENVS];
    size_t n_envs;
    struct fw_found found[FW_MAX_FOUND];
    size_t n_found;
    size_t dropped;          /* copies past FW_MAX_FOUND */
    size_t envs_dropped;     /* environments not examined: past FW_MAX_ENVS, or past a conda list's cap */
    size_t dists_dropped;    /* dist-info folders past FW_MAX_DISTS in a site, not looked at */
};

/* An installed distribution, from its SITE/NAME-VERSION.dist-info folder's name (PEP 427, PEP 503). */
struct fw_dist {
    char name[64];           /* normalised: lower case, '-' and '.' made '_' ("jax_cuda12_plugin") */
    char version[64];
    char dir[160];           /* the folder's name as it is */
};
#define FW_MAX_DISTS 1024

/* One kind of framework: a row of frameworks_read.c's table. */
struct fw_kind {
    const char *name;        /* "torch": JSON, --require NAME-gpu */
    const char *label;       /* "PyTorch" */
    /* Look for it in SITE (whose distributions are DISTS); fill F (its kind, env and site are set) and
     * return true when it is there. */
    bool (*read)(const struct hostfs *fs, const char *site, const struct fw_dist *dists, size_t n, struct fw_found *f);
};
extern const struct fw_kind fw_kinds[];
extern const size_t fw_n_kinds;

/* frameworks_env.c: the environments to look in, from the process environment and --python. */
int fw_envs_find(const struct hostfs *fs, struct fw_scan *s);
void fw_scan_free(struct fw_scan *s);

/* frameworks_read.c: every framework in every environment's sites. */
void fw_read_all(const struct hostfs *fs, struct fw_scan *s);

/* frameworks_judge.c: the verdict for each copy found, with findings. */
void fw_judge_all(struct probe_ctx *ctx, struct fw_scan *s);
extern const struct check fw_checks[];
extern const size_t fw_n_checks;

/* frameworks_arch.c: the GPU architectures of F's own library against each device's (findings, the root). */
void fw_judge_arch(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f);

/* frameworks_shadow.c: LD_LIBRARY_PATH copies of the CUDA wheels' libraries ahead of the wheels' own. */
void fw_shadow_all(struct probe_ctx *ctx, const struct fw_scan *s);
/* TensorFlow's libcudnn.so.MAJOR findable (its wheel or the loader's path): frameworks.cudnn-missing. */
void fw_judge_cudnn(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f);
/* TensorFlow's other CUDA libraries (cudart, cuBLAS, cuFFT, cuSOLVER, cuSPARSE) findable: tf-cuda-libs-missing. */
void fw_judge_tf_libs(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f);
/* The version a library's file name says past its soname ("libnvJitLink.so.12.1.105": "12.1.105") into BUF. */
const char *fw_file_version(const struct hostfs *fs, const char *path, char *buf, size_t len);

/* frameworks_pinlibs.c: whether the loader (LS) finds every library the missing pin NAME SPEC (a METADATA
 * requirement: "nvidia-cudnn-cu13", "==9.26.0.51") would provide, outside its wheel: 1 all, 0 not all, -1 a
 * wheel whose libraries gpucheckup does not know. Where each was found is appended to WHERE (zeroed first). */
struct fw_pin_where {
    char text[1200]; /* "/usr/local/cuda/lib64 (LD_LIBRARY_PATH): libcublas.so.13, ...; /opt/cudnn/lib (...): ..." */
    char dirs[400];  /* "/usr/local/cuda/lib64, /opt/cudnn/lib" */
    char last[256];  /* the last directory in TEXT */
};
struct ldsearch;
int fw_pin_found_elsewhere(const struct hostfs *fs, const struct ldsearch *ls, const char *name, const char *spec,
                           struct fw_pin_where *where);

/* The soname the NVIDIA wheel NAME ("nvidia-cudnn-cu12") ships for a pin SPEC (">=9.8"), into BUF, or NULL. */
const char *fw_pin_soname(const char *name, const char *spec, char *buf, size_t len);
/* The wheel a library LIB of SITE/nvidia/DIR/lib comes from, "NAME VERSION" from its dist-info, into BUF. */
const char *fw_lib_wheel(const struct hostfs *fs, const char *site, const char *dir, const char *lib, char *buf,
                         size_t len);
/* frameworks_minor.c: a pinned library's copy the loader takes first older (major.minor) than the pin's minimum. */
void fw_judge_minor(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f);

/* frameworks_verdict.c */
void frameworks_verdict(struct report *r, struct doctor_lines *out);
extern const struct probe_require frameworks_requires[];

/* frameworks_options.c: --python=PATH (repeatable), --import. */
extern const struct probe_option frameworks_option_rows[];
void frameworks_options_reset(void);
size_t frameworks_pythons(const char *const **out);
bool frameworks_import_wanted(void); /* --import given */

/* frameworks_import.c: --import: each copy imported by its environment's Python in an isolated child
 * (live runs without --root only), compared with the judgement; notes go to SEC. */
void fw_import_all(struct probe_ctx *ctx, struct report_section *sec, struct fw_scan *s);
/* frameworks_import_py.c: the script the child runs (`python3 -B -c SCRIPT NAME`). */
extern const char fw_import_script[];

const char *fw_build_name(enum fw_build b);
/* "PyTorch 2.9.0+cu128 (/opt/venv)": a copy's name for messages, in BUF (returned). Inline: every part of the
 * probe calls it, and a definition in one of them would make a call cycle between them (unit-shape). */
static inline const char *fw_name(const struct fw_scan *s, const struct fw_found *f, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s (%s)", f->kind->label, f->version[0] ? f->version : "(version unknown)",
             s->envs[f->env].prefix);
    return buf;
}

#endif
