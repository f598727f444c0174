/* bench_kernel.h: the OpenCL C source and launch geometry of gpucheckup's own GEMM kernel for `bench`. */
#ifndef GPUCHECKUP_BENCH_KERNEL_H
#define GPUCHECKUP_BENCH_KERNEL_H
#include <stdbool.h>
#include <stddef.h>

enum bench_prec { BENCH_FP32 = 0, BENCH_FP64 = 1, BENCH_FP16 = 2 };

/* What the launcher knows of the device (from clGetDeviceInfo). */
struct bench_kernel_hints {
    bool is_cpu;              /* CL_DEVICE_TYPE_CPU (PoCL): tile for caches, not local memory */
    size_t max_wg_size;       /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    unsigned long long local_mem; /* CL_DEVICE_LOCAL_MEM_SIZE, bytes */
    unsigned compute_units;
    const char *vendor;       /* CL_DEVICE_VENDOR, may be NULL */
};

/* One variant of the kernel, chosen for a precision and a device. All strings are static. */
struct bench_kernel {
    const char *source;        /* whole OpenCL C program */
    const char *name;          /* kernel function name */
    const char *options;       /* build options (may be "") */
    size_t pad;                /* matrices are padded to a multiple of this (N -> ceil(N/pad)*pad),
                                  zero-filled by the caller; 1 = no padding needed */
};

/* Pick the kernel for P on a device like H. Returns 0, or -1 when P is not supported by the kernel set. */
int bench_kernel_pick(enum bench_prec p, const struct bench_kernel_hints *h, struct bench_kernel *out);

/* Launch geometry for padded size NP (a multiple of k->pad): global and local sizes, 2-D.
 * LOCAL[0] == 0 means "let the runtime choose" (pass NULL local size). */
void bench_kernel_geometry(const struct bench_kernel *k, const struct bench_kernel_hints *h, size_t np,
                           size_t global[2], size_t local[2]);

#endif
