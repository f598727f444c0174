/* compute_path.h: which API proved which device computes: vendor-neutral facts probes' typed results publish. */
#ifndef GPUCHECKUP_COMPUTE_PATH_H
#define GPUCHECKUP_COMPUTE_PATH_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

struct report;

/* The state of a path's proof: the compute test of that API on that device. */
enum compute_proof {
    COMPUTE_PASSED = 0, /* it computed, and right */
    COMPUTE_FAILED,     /* it ran and failed (a wrong result, an error, a crash, a hang) */
    COMPUTE_UNTESTED,   /* the device is there, its test did not run (--no-smoke, not selected, no time) */
};

/* One device reached through one compute API. Strings are borrowed from the typed result that published
 * it: valid while the report lives. */
struct compute_path {
    const char *api;         /* the publishing probe's compute_api: "opencl", "cuda" */
    const char *api_label;   /* for people: "OpenCL", "CUDA" */
    const char *pci_address; /* "0000:01:00.0", NULL when the API does not say */
    const char *name;        /* the device's name, NULL when unknown */
    bool gpu;                /* a GPU or accelerator, not a CPU device */
    enum compute_proof proof;
    char device[24];         /* the API's own name of the device: "0:1" (OpenCL platform:device), "0" (CUDA
                                ordinal), "" when unknown */
    struct json_object *measurements; /* the proof's figures (borrowed; NULL: none): numbers under the names
                                         the writers read, "gflops" and "kernel_ms" */
};

/* A GPU a bus probe sees (struct probe.bus_gpus), whether or not any API reaches it. Strings borrowed
 * from the probe's section. */
struct bus_gpu {
    const char *pci_address;
    const char *vendor; /* vendor.h's name ("nvidia"), NULL when not one of them */
};

/* A list of paths (heap). */
struct compute_paths {
    struct compute_path *v;
    size_t n;
};

/* Append a copy of P (its strings stay borrowed). 0, or -1 on allocation failure. */
int compute_paths_add(struct compute_paths *ps, const struct compute_path *p);
/* Every path the report's sections publish (struct report_result_ops.paths), the probes that run last
 * first (they stand for more of the stack, as the verdict lines do). Free with compute_paths_free. */
struct compute_paths compute_paths_of(const struct report *r);
void compute_paths_free(struct compute_paths *ps);

/* Distinct GPUs (one per PCI address; each without one counts alone) with a path whose proof is PROOF;
 * *FIRST (may be NULL) gets the first such path. */
size_t compute_paths_gpus(const struct compute_paths *ps, enum compute_proof proof, const struct compute_path **first);
/* Is the GPU at PCI address ADDR reached by a path of an API other than OTHER_THAN (NULL: any) that did
 * not fail (passed, or there and untested)? *LABEL (may be NULL) gets the api_label of the first such path. */
bool compute_paths_serve(const struct compute_paths *ps, const char *addr, const char *other_than, const char **label);
/* "ADDR NAME" of P in BUF (either part may be missing). */
const char *compute_path_label(const struct compute_path *p, char *buf, size_t len);

#endif
