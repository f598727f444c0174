/* smoke_kernel.h: the OpenCL C source of the smoke test's matrix multiply (and a test-only override). */
#ifndef GPUCHECKUP_SMOKE_KERNEL_H
#define GPUCHECKUP_SMOKE_KERNEL_H

#include "compute_check.h"

/* The program source to build: the test override when one is set, else the built-in one. Static. */
const char *smoke_kernel_source(void);
/* Build options that enable the kernels of the optional precisions ("-DSMOKE_FP64" ...). Static. */
const char *smoke_kernel_options(bool fp64, bool fp16);
/* The kernel's name for precision P: "smoke_gemm_fp32"... Static. */
const char *smoke_kernel_name(enum compute_prec p);

/* The global size for matrix size N: dimension 0, one work item per group of eight columns;
 * dimension 1, one per group of four rows. */
size_t smoke_kernel_columns(unsigned n);
size_t smoke_kernel_rows(unsigned n);

/* For tests only (never reachable from the command line or the environment of the shipped binary):
 * build SRC instead of the built-in source; NULL restores it. SRC must outlive the smoke probe run. */
void smoke_set_kernel_source_for_tests(const char *src);

#endif
