/* bench_kernel.c: gpucheckup's own OpenCL GEMM kernels for `bench` (register-blocked for CPUs, tiled for GPUs). */
#include "bench_kernel.h"

#include <string.h>

/* One program, three kernels, three precisions; build options pick the kernel (GC_CPUL, GC_CPU, GC_TILED),
 * the precision (GC_FP64, GC_FP16, else fp32) and the block sizes. Each computes C = A x B for n x n
 * row-major matrices with n a multiple of its block, summing over k in increasing order.
 *
 * gc_gemm_cpul_* (CPUs): each work item keeps a GC_RM x (2 x VW) block of C in vector registers, in named
 * variables (PoCL 3.1 left a private array of accumulators on the stack, without FMA: measured); per k it
 * loads two vectors of a row of B and broadcasts GC_RM elements of A into fused multiply-adds (the shape
 * of the CPU BLAS register kernels, e.g. OpenBLAS's and BLIS's micro-kernels). The items of a work-group
 * walk down the rows of one column panel of C and share its panel of B, which they first copy, GC_KC rows
 * at a time, into local memory: on PoCL that is an ordinary buffer (PoCL docs, "Kernel compiler": its
 * work-item loops run a group's items one after another in one thread), and contiguous where the panel
 * in B is a column of lines n elements apart, which at n = 1024 all fall into the same cache set.
 * gc_gemm_cpu_*: the same without local memory, reading the panel in place (devices with too little).
 *
 * gc_gemm_tiled_*: for GPUs. A work-group of (GC_TS/GC_WN) x (GC_TS/GC_WM) items computes a GC_TS x GC_TS
 * tile of C; per step of GC_TK along k it copies a GC_TS x GC_TK tile of A (transposed) and a GC_TK x GC_TS
 * tile of B into local memory, then each item accumulates a GC_WM x GC_WN block in registers, its elements
 * spaced by the group's width so that neighbouring items touch neighbouring columns (coalesced loads and
 * stores, no local-memory bank conflicts). The scheme is the well-known one of C. Nugteren's "Tutorial:
 * OpenCL SGEMM tuning for Kepler" (kernel 6, "2D register blocking"), written here from its description.
 *
 * fp16 is stored as half and accumulated in float, through vload_half / vstore_half (core OpenCL C, no
 * extension needed to load and store half: OpenCL C 1.2 spec, 6.12.7), so it runs on any device; the CPU
 * kernel converts its B panel to float once, as it copies it to local memory. Indices are int: n <= 46340. */
static const char bench_kernel_src[] =
    "#if defined(GC_FP64)\n"
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "typedef double T; typedef double ACC; typedef double4 ACCV; typedef double LT;\n"
    "#define LDL(p, i) vload4(0, (p) + (i))\n"
    "#define VW 4\n"
    "#define LD1(p, i) ((p)[i])\n"
    "#define LDV(p, i) vload4(0, (p) + (i))\n"
    "#define ST1(v, p, i) ((p)[i] = (v))\n"
    "#define STV(v, p, i) vstore4((v), 0, (p) + (i))\n"
    "#define GC_KERNEL(v) gc_gemm_##v##_fp64\n"
    "#define GC_COPY(d, s) (vstore4(vload4(0, (s)), 0, (d)), vstore4(vload4(1, (s)), 1, (d)))\n"
    "#elif defined(GC_FP16)\n"
    "typedef half T; typedef float ACC; typedef float8 ACCV; typedef float LT; /* B converted once */\n"
    "#define LDL(p, i) vload8(0, (p) + (i))\n"
    "#define VW 8\n"
    "#define LD1(p, i) vload_half((i), (p))\n"
    "#define LDV(p, i) vload_half8(0, (p) + (i))\n"
    "#define ST1(v, p, i) vstore_half((v), (i), (p))\n"
    "#define STV(v, p, i) vstore_half8((v), 0, (p) + (i))\n"
    "#define GC_KERNEL(v) gc_gemm_##v##_fp16\n"
    "#define GC_COPY(d, s) (vstore8(vload_half8(0, (s)), 0, (d)), vstore8(vload_half8(1, (s)), 1, (d)))\n"
    "#else\n"
    "typedef float T; typedef float ACC; typedef float8 ACCV; typedef float LT;\n"
    "#define LDL(p, i) vload8(0, (p) + (i))\n"
    "#define VW 8\n"
    "#define LD1(p, i) ((p)[i])\n"
    "#define LDV(p, i) vload8(0, (p) + (i))\n"
    "#define ST1(v, p, i) ((p)[i] = (v))\n"
    "#define STV(v, p, i) vstore8((v), 0, (p) + (i))\n"
    "#define GC_KERNEL(v) gc_gemm_##v##_fp32\n"
    "#define GC_COPY(d, s) (vstore8(vload8(0, (s)), 0, (d)), vstore8(vload8(1, (s)), 1, (d)))\n"
    "#endif\n"
    "\n"
    "#if defined(GC_CPU) || defined(GC_CPUL)\n"
    "#if defined(__FMA__) || (defined(GC_FP64) && defined(FP_FAST_FMA)) || (!defined(GC_FP64) && defined(FP_FAST_FMAF))\n"
    "#define GC_MAD(x, y, z) fma((x), (y), (z))\n"
    "#else\n"
    "#define GC_MAD(x, y, z) mad((x), (y), (z))\n"
    "#endif\n"
    "#define GC_DECL(i) ACCV c##i##0 = (ACCV)(0), c##i##1 = (ACCV)(0);\n"
    "#define GC_STEP(i) { const ACCV x = (ACCV)(LD1(ap, i * n + k));                 \\\n"
    "                     c##i##0 = GC_MAD(x, b0, c##i##0); c##i##1 = GC_MAD(x, b1, c##i##1); }\n"
    "#define GC_STORE(i) STV(c##i##0, c, (row + i) * n + col); STV(c##i##1, c, (row + i) * n + col + VW);\n"
    "#if GC_RM == 8\n"
    "#define GC_ROWS(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)\n"
    "#define GC_ROWS2(M, j) M(0, j) M(1, j) M(2, j) M(3, j) M(4, j) M(5, j) M(6, j) M(7, j)\n"
    "#elif GC_RM == 6\n"
    "#define GC_ROWS(M) M(0) M(1) M(2) M(3) M(4) M(5)\n"
    "#define GC_ROWS2(M, j) M(0, j) M(1, j) M(2, j) M(3, j) M(4, j) M(5, j)\n"
    "#elif GC_RM == 4\n"
    "#define GC_ROWS(M) M(0) M(1) M(2) M(3)\n"
    "#define GC_ROWS2(M, j) M(0, j) M(1, j) M(2, j) M(3, j)\n"
    "#else\n"
    "#error GC_RM must be 4, 6 or 8\n"
    "#endif\n"
    "#endif\n"
    "\n"
    "#ifdef GC_CPU\n"
    "__kernel void GC_KERNEL(cpu)(const int n, __global const T *a, __global const T *b, __global T *c)\n"
    "{\n"
    "    const int col = (int)get_global_id(0) * (2 * VW);\n"
    "    const int row = (int)get_global_id(1) * GC_RM;\n"
    "    GC_ROWS(GC_DECL)\n"
    "    __global const T *ap = a + row * n;\n"
    "    __global const T *bp = b + col;\n"
    "    for (int k = 0; k < n; k++) {\n"
    "        const ACCV b0 = LDV(bp, k * n), b1 = LDV(bp, k * n + VW);\n"
    "        GC_ROWS(GC_STEP)\n"
    "    }\n"
    "    GC_ROWS(GC_STORE)\n"
    "}\n"
    "#endif\n"
    "\n"
    "#ifdef GC_CPUL\n"
    "#define GC_A8(i) const float8 a##i = vload_half8(0, ap + i * n + k);\n"
    "#define GC_FMA8(i, j) c##i##0 = GC_MAD((ACCV)(a##i.s##j), b0, c##i##0);                \\\n"
    "                      c##i##1 = GC_MAD((ACCV)(a##i.s##j), b1, c##i##1);\n"
    "#define GC_STEPK(j) { const ACCV b0 = LDL(bl, (k + j) * 2 * VW), b1 = LDL(bl, (k + j) * 2 * VW + VW); \\\n"
    "                      GC_ROWS2(GC_FMA8, j) }\n"
    "__kernel void GC_KERNEL(cpul)(const int n, __global const T *a, __global const T *b, __global T *c)\n"
    "{\n"
    "    __local LT bl[GC_KC * 2 * VW];\n"
    "    const int col = (int)get_group_id(0) * (2 * VW);\n"
    "    const int row = (int)get_global_id(1) * GC_RM;\n"
    "    const int ly = (int)get_local_id(1), nl = (int)get_local_size(1);\n"
    "    GC_ROWS(GC_DECL)\n"
    "    for (int k0 = 0; k0 < n; k0 += GC_KC) {\n"
    "        const int kc = min(GC_KC, n - k0);\n"
    "        for (int r = ly; r < kc; r += nl)\n"
    "            GC_COPY(bl + r * 2 * VW, b + (k0 + r) * n + col);\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        __global const T *ap = a + row * n + k0;\n"
    "#ifdef GC_FP16\n"
    "        /* kc is a multiple of 16 (the pad): convert A's halves 8 at a time (one vector instruction where\n"
    "         * the CPU has one), not one by one, then broadcast each lane. */\n"
    "        for (int k = 0; k < kc; k += 8) {\n"
    "            GC_ROWS(GC_A8)\n"
    "            GC_STEPK(0) GC_STEPK(1) GC_STEPK(2) GC_STEPK(3) GC_STEPK(4) GC_STEPK(5) GC_STEPK(6) GC_STEPK(7)\n"
    "        }\n"
    "#else\n"
    "        for (int k = 0; k < kc; k++) {\n"
    "            const ACCV b0 = LDL(bl, k * 2 * VW), b1 = LDL(bl, k * 2 * VW + VW);\n"
    "            GC_ROWS(GC_STEP)\n"
    "        }\n"
    "#endif\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    GC_ROWS(GC_STORE)\n"
    "}\n"
    "#endif\n"
    "\n"
    "#ifdef GC_TILED\n"
    "#define GC_LX (GC_TS / GC_WN)\n"
    "#define GC_LY (GC_TS / GC_WM)\n"
    "__kernel __attribute__((reqd_work_group_size(GC_LX, GC_LY, 1)))\n"
    "void GC_KERNEL(tiled)(const int n, __global const T *a, __global const T *b, __global T *c)\n"
    "{\n"
    "    __local ACC as[GC_TK][GC_TS + 1];\n"
    "    __local ACC bs[GC_TK][GC_TS + 1];\n"
    "    const int lx = (int)get_local_id(0), ly = (int)get_local_id(1);\n"
    "    const int col0 = (int)get_group_id(0) * GC_TS, row0 = (int)get_group_id(1) * GC_TS;\n"
    "    const int tid = ly * GC_LX + lx;\n"
    "    ACC acc[GC_WM][GC_WN];\n"
    "    for (int i = 0; i < GC_WM; i++)\n"
    "        for (int j = 0; j < GC_WN; j++)\n"
    "            acc[i][j] = (ACC)0;\n"
    "    for (int k0 = 0; k0 < n; k0 += GC_TK) {\n"
    "        for (int e = tid; e < GC_TS * GC_TK; e += GC_LX * GC_LY) {\n"
    "            const int r = e / GC_TK, kk = e % GC_TK;\n"
    "            as[kk][r] = LD1(a, (row0 + r) * n + k0 + kk);\n"
    "        }\n"
    "        for (int e = tid; e < GC_TS * GC_TK; e += GC_LX * GC_LY) {\n"
    "            const int kk = e / GC_TS, cc = e % GC_TS;\n"
    "            bs[kk][cc] = LD1(b, (k0 + kk) * n + col0 + cc);\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int kk = 0; kk < GC_TK; kk++) {\n"
    "            ACC bv[GC_WN];\n"
    "            for (int j = 0; j < GC_WN; j++)\n"
    "                bv[j] = bs[kk][lx + j * GC_LX];\n"
    "            for (int i = 0; i < GC_WM; i++) {\n"
    "                const ACC x = as[kk][ly + i * GC_LY];\n"
    "                for (int j = 0; j < GC_WN; j++)\n"
    "                    acc[i][j] = mad(x, bv[j], acc[i][j]);\n"
    "            }\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    for (int i = 0; i < GC_WM; i++)\n"
    "        for (int j = 0; j < GC_WN; j++)\n"
    "            ST1(acc[i][j], c, (row0 + ly + i * GC_LY) * n + col0 + lx + j * GC_LX);\n"
    "}\n"
    "#endif\n";

enum bench_kernel_kind { BENCH_KIND_TILED, BENCH_KIND_CPUL, BENCH_KIND_CPU };

/* One row per kernel variant, in order of preference: bench_kernel_pick takes the first that fits. For
 * CPU rows, bm x bn is the block of C one work item computes and ly the most work items of a group
 * (dimension 1: down the rows of one column panel); for tiled rows, bm = bn = the tile of C one
 * work-group computes and (lx, ly) its required size. The option strings repeat the numbers in the
 * columns (the kernel's view of them). */
struct bench_kernel_row {
    enum bench_prec prec;
    enum bench_kernel_kind kind;
    const char *name;
    const char *options;
    size_t bm, bn;      /* rows x columns of C per work item (CPU) or per work-group (tiled) */
    size_t lx, ly;      /* work-group size (the most, for CPU rows) */
    size_t min_wg;      /* the least CL_DEVICE_MAX_WORK_GROUP_SIZE the row needs */
    unsigned long long local_bytes; /* local memory the row needs */
};

/* Tiled: 64 x 64 tiles by 16 x 16 = 256 items (4 x 4 each), else 32 x 32 tiles by 8 x 8 = 64 items;
 * local memory: two GC_TK x (GC_TS + 1) tiles of the accumulator type. */
#define BENCH_T64 "-DGC_TILED -DGC_TS=64 -DGC_TK=16 -DGC_WM=4 -DGC_WN=4"
#define BENCH_T32 "-DGC_TILED -DGC_TS=32 -DGC_TK=16 -DGC_WM=4 -DGC_WN=4"
#define BENCH_TILE_BYTES(ts, acc) (2ull * 16 * ((ts) + 1) * (acc))
/* CPU: 4 rows x two vectors (8 floats or halves, 4 doubles) = 8 accumulators, which with the two rows of B
 * and the broadcast of A fit AVX2's 16 ymm registers (8 rows spill: measured slower on PoCL 3.1). The
 * local-memory row copies GC_KC = 256 rows of its B panel at a time (16 KiB in fp32), so that the panel is
 * read from contiguous memory; reading it in place walks B with a stride of n, and at n = 1024 (4 KiB rows)
 * every line of the panel falls into the same cache set: about half the speed per CPU second measured. */
#define BENCH_CL "-cl-mad-enable -DGC_CPUL -DGC_RM=4 -DGC_KC=256"
#define BENCH_CP "-cl-mad-enable -DGC_CPU -DGC_RM=4"
#define BENCH_CPU_LY 32

static const struct bench_kernel_row bench_kernel_rows[] = {
    {BENCH_FP32, BENCH_KIND_TILED, "gc_gemm_tiled_fp32", BENCH_T64, 64, 64, 16, 16, 256, BENCH_TILE_BYTES(64, 4)},
    {BENCH_FP64, BENCH_KIND_TILED, "gc_gemm_tiled_fp64", BENCH_T64 " -DGC_FP64", 64, 64, 16, 16, 256,
     BENCH_TILE_BYTES(64, 8)},
    {BENCH_FP16, BENCH_KIND_TILED, "gc_gemm_tiled_fp16", BENCH_T64 " -DGC_FP16", 64, 64, 16, 16, 256,
     BENCH_TILE_BYTES(64, 4)},
    {BENCH_FP32, BENCH_KIND_TILED, "gc_gemm_tiled_fp32", BENCH_T32, 32, 32, 8, 8, 64, BENCH_TILE_BYTES(32, 4)},
    {BENCH_FP64, BENCH_KIND_TILED, "gc_gemm_tiled_fp64", BENCH_T32 " -DGC_FP64", 32, 32, 8, 8, 64,
     BENCH_TILE_BYTES(32, 8)},
    {BENCH_FP16, BENCH_KIND_TILED, "gc_gemm_tiled_fp16", BENCH_T32 " -DGC_FP16", 32, 32, 8, 8, 64,
     BENCH_TILE_BYTES(32, 4)},
    {BENCH_FP32, BENCH_KIND_CPUL, "gc_gemm_cpul_fp32", BENCH_CL, 4, 16, 1, BENCH_CPU_LY, 1, 256ull * 16 * 4},
    {BENCH_FP64, BENCH_KIND_CPUL, "gc_gemm_cpul_fp64", BENCH_CL " -DGC_FP64", 4, 8, 1, BENCH_CPU_LY, 1,
     256ull * 8 * 8},
    {BENCH_FP16, BENCH_KIND_CPUL, "gc_gemm_cpul_fp16", BENCH_CL " -DGC_FP16", 4, 16, 1, BENCH_CPU_LY, 1,
     256ull * 16 * 4},
    {BENCH_FP32, BENCH_KIND_CPU, "gc_gemm_cpu_fp32", BENCH_CP, 4, 16, 1, BENCH_CPU_LY, 1, 0},
    {BENCH_FP64, BENCH_KIND_CPU, "gc_gemm_cpu_fp64", BENCH_CP " -DGC_FP64", 4, 8, 1, BENCH_CPU_LY, 1, 0},
    {BENCH_FP16, BENCH_KIND_CPU, "gc_gemm_cpu_fp16", BENCH_CP " -DGC_FP16", 4, 16, 1, BENCH_CPU_LY, 1, 0},
};
#define BENCH_KERNEL_NROWS (sizeof bench_kernel_rows / sizeof bench_kernel_rows[0])

static bool bench_kernel_fits(const struct bench_kernel_row *r, const struct bench_kernel_hints *h)
{
    if (r->kind == BENCH_KIND_TILED && h->is_cpu)
        return false;
    return h->max_wg_size >= r->min_wg && h->local_mem >= r->local_bytes;
}

int bench_kernel_pick(enum bench_prec p, const struct bench_kernel_hints *h, struct bench_kernel *out)
{
    if (!h || !out)
        return -1;
    for (size_t i = 0; i < BENCH_KERNEL_NROWS; i++) {
        const struct bench_kernel_row *r = &bench_kernel_rows[i];
        /* The last row of a precision is the plain CPU kernel: it runs anywhere, so it is the fallback. */
        if (r->prec != p || (!bench_kernel_fits(r, h) && r->kind != BENCH_KIND_CPU))
            continue;
        out->source = bench_kernel_src;
        out->name = r->name;
        out->options = r->options;
        out->pad = r->bm > r->bn ? r->bm : r->bn; /* powers of two: the larger is a multiple of the other */
        return 0;
    }
    return -1;
}

/* The row K came from: its name and options point into the table (pick copies them). */
static const struct bench_kernel_row *bench_kernel_row_of(const struct bench_kernel *k)
{
    for (size_t i = 0; k && k->name && k->options && i < BENCH_KERNEL_NROWS; i++)
        if (strcmp(bench_kernel_rows[i].name, k->name) == 0 && strcmp(bench_kernel_rows[i].options, k->options) == 0)
            return &bench_kernel_rows[i];
    return NULL;
}

/* The largest power of two that divides TOTAL and is at most WANT (at least 1). Powers of two only: PoCL
 * compiles a work-group function per local size, so few distinct sizes over a sweep mean few compiles. */
static size_t bench_kernel_divisor(size_t total, size_t want)
{
    size_t d = 1;
    while (d * 2 <= want && total % (d * 2) == 0)
        d *= 2;
    return d;
}

void bench_kernel_geometry(const struct bench_kernel *k, const struct bench_kernel_hints *h, size_t np,
                           size_t global[2], size_t local[2])
{
    const struct bench_kernel_row *r = bench_kernel_row_of(k);
    if (!r) {
        /* Not one of ours: one item per element, the runtime picks the group. */
        global[0] = global[1] = np;
        local[0] = local[1] = 0;
        return;
    }
    if (r->kind == BENCH_KIND_TILED) {
        global[0] = np / r->bn * r->lx;
        global[1] = np / r->bm * r->ly;
        local[0] = r->lx;
        local[1] = r->ly;
        return;
    }
    global[0] = np / r->bn;
    global[1] = np / r->bm;
    size_t ly = r->ly;
    if (h && h->max_wg_size > 0 && h->max_wg_size < ly)
        ly = h->max_wg_size;
    local[0] = 1;
    local[1] = bench_kernel_divisor(global[1], ly);
}
