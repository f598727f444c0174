/* vulkan_internal.h: the vulkan probe's parts: manifest discovery and parsing, the driver children, findings, text. */
#ifndef GPUCHECKUP_VULKAN_INTERNAL_H
#define GPUCHECKUP_VULKAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "probe.h"
#include "results/result_vulkan.h"

/* The most manifests one run looks at, and the largest manifest read (the loader's are a few hundred bytes). */
#define VULKAN_MAX_MANIFESTS 64
#define VULKAN_MANIFEST_MAX_BYTES (256u * 1024u)

/* What a driver manifest says (vulkan_manifest_parse). Strings heap, sanitised. */
struct vulkan_manifest_info {
    char *file_format_version; /* "1.0.0" */
    char *library_path;        /* ICD.library_path as written */
    char *api_version;         /* ICD.api_version, NULL when absent */
};

/* Parse manifest text BUF (LEN bytes, not trusted) as the Vulkan loader reads a driver manifest: a JSON
 * object with a string file_format_version and an object ICD holding a non-empty string library_path
 * (api_version optional). Returns 0 and fills OUT, or -1 with why in *WHY (heap, caller frees) and OUT
 * empty. Free OUT with vulkan_manifest_info_free. */
int vulkan_manifest_parse(const char *buf, size_t len, struct vulkan_manifest_info *out, char **why);
void vulkan_manifest_info_free(struct vulkan_manifest_info *m);

/* What a driver's child leaves, in memory it shares with gpucheckup, before it goes on from listing its
 * device to that device's smoke test in the same process (one driver load, one instance): its answer so
 * far. When the child then crashes or hangs, the parent still has the driver's facts, and names the smoke
 * test, not the driver, for it. Written by the child only; read by the parent once the child is gone. */
#define VULKAN_PROGRESS_MAX (60u * 1024u)
struct vulkan_progress {
    unsigned stage; /* 0: nothing yet; VULKAN_STAGE_SMOKE: the answer below is whole, the smoke test began */
    unsigned len;   /* bytes of json (not trusted: checked against VULKAN_PROGRESS_MAX) */
    char json[VULKAN_PROGRESS_MAX];
};
#define VULKAN_STAGE_SMOKE 1u

/* One manifest the loader would read, and what became of it. */
struct vulkan_driver {
    char *path;         /* host path of the JSON */
    char *via;          /* how it was found: "VK_DRIVER_FILES", "/usr/share/vulkan/icd.d" */
    struct vulkan_manifest_info info;
    char *library;      /* the library as the child's loader will open it (path under the root, or a bare name) */
    char *real_path;    /* the manifest's on-disk path for VK_DRIVER_FILES in the child */
    int status;         /* enum result_vulkan_driver_status, -1 until known */
    char *detail;
    json_object *answer; /* the enumeration child's answer (sanitised), or NULL */
    struct vulkan_progress *progress; /* shared with its child while it runs, or NULL (no smoke test there) */
    bool smoked;        /* its child ran the smoke test on its only device (index 0)... */
    struct isolate_result smoke_fail; /* ...and crashed or hung in it (status not ISOLATE_OK), or not */
};

/* The manifest search (vulkan_manifest.c): every driver manifest the loader reads, in its order, for the
 * environment ENV (a getenv; NULL: none, as for a tree without --live). Appends to *OUT (at most
 * VULKAN_MAX_MANIFESTS; *NOT_LISTED counts those past it, not looked at); returns how many. Reads through CTX->fs. */
size_t vulkan_manifests_find(struct probe_ctx *ctx, const char *(*env)(const char *), struct vulkan_driver *out,
                             size_t *not_listed);
/* Read and check each found manifest (unreadable, malformed, library missing or foreign), setting status
 * and detail where it cannot be loaded, and adding its finding. */
void vulkan_manifests_check(struct probe_ctx *ctx, struct vulkan_driver *d, size_t n);
void vulkan_driver_free(struct vulkan_driver *d);

/* The children (vulkan_child.c). The enumeration of one driver alone: JSON {api_version, error, result,
 * devices: [...]} (vulkan_child_enumerate's answer). ARG is a struct vulkan_driver. With its progress
 * region, a driver that lists exactly one device the compute options want tested goes on to that device's
 * smoke test in the same child: the answer then has "smoke" (vulkan_child_smoke's answer) too. */
json_object *vulkan_child_enumerate(void *arg);
/* One device's smoke test: ARG is a struct vulkan_smoke_job. */
struct vulkan_smoke_job {
    const struct vulkan_driver *driver;
    int index;       /* the physical device */
    unsigned n;      /* the matrix size */
    double answer_by_ms;
};
json_object *vulkan_child_smoke(void *arg);

/* The shared child (vulkan_shared.c): the K drivers D[IDX[0..K-1]], each with its progress region, all in
 * one child first, as a program's loader has them in one process (each with its own instance, so that
 * each is still judged alone), with 1/VULKAN_SHARED_PART of the time left. For each driver it finished,
 * DONE[j] is set and RES[j] is what its own child would have answered (status OK, its own output);
 * the others (the child crashed or hung there, or never got to them) and those that failed there (an
 * error, a smoke test that did not pass: another driver in the process may have caused it) are left
 * to their own children.
 * Each region is reset for those. When it hung, *BUSY is the j it hung in and *WAITED its milliseconds
 * (else (size_t)-1 and 0). Returns how many it finished. */
#define VULKAN_SHARED_PART 4
size_t vulkan_shared_run(struct probe_ctx *ctx, struct vulkan_driver *d, const size_t *idx, size_t k, bool *done,
                         struct isolate_result *res, size_t *busy, double *waited);

/* The findings (vulkan_findings.c): each driver's outcome, and the stack as a whole. */
void vulkan_driver_outcome(struct probe_ctx *ctx, struct vulkan_driver *d, const struct isolate_result *res);
/* Under --health (the speed policy's rule 2): when the PCI facts say D's hardware is absent, D is not
 * loaded; its status, detail and vulkan.absent-hardware say so. Returns true then, false (nothing
 * recorded) when its hardware may be here. */
bool vulkan_driver_skip_absent(struct probe_ctx *ctx, struct vulkan_driver *d);
/* Under --health without a --require form (rule 3: --health answers for the GPUs): when D is a CPU driver
 * (lavapipe, SwiftShader), it is not loaded: its status is not-loaded and its detail begins with
 * VULKAN_CPU_SKIPPED; no finding. Returns true then. */
#define VULKAN_CPU_SKIPPED "CPU driver, not loaded (--health)"
bool vulkan_driver_skip_cpu(struct probe_ctx *ctx, struct vulkan_driver *d);
/* Is DETAIL (a driver's) that of one vulkan_driver_skip_cpu left unloaded? */
bool vulkan_cpu_skipped(const char *detail);
void vulkan_smoke_outcome(struct probe_ctx *ctx, struct result_vulkan_dev *dev, const struct isolate_result *res);
/* The GPU vendor (vendor.h's name: "intel", "amd", "nvidia") a driver LIBRARY is for, by its file name;
 * NULL for a CPU driver or one not known. */
const char *vulkan_driver_vendor(const char *library);
extern const struct check vulkan_checks[];
extern const size_t vulkan_n_checks;

/* Verdict, --require, NFD labels, text (vulkan_verdict.c). */
extern const struct probe_require vulkan_requires[];
void vulkan_verdict(struct report *r, struct doctor_lines *out);
void vulkan_node_labels(const struct report_section *sec,
                        void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg);
void vulkan_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);
void vulkan_summary(struct report_section *sec, const struct result_vulkan *res);

#endif
