/* clblast_warm.c: fill the PoCL kernel cache with CLBlast's GEMM programs, as a first `bench` run with a long budget would. */
/*
 * usage: clblast-warm   (POCL_CACHE_DIR and POCL_DEVICES as the bench tests set them)
 * One SGEMM and one DGEMM at N = 64 on each device of the PoCL platform: CLBlast builds its whole GEMM
 * program (direct and indirect kernels) on the first call of each precision, and PoCL caches the build.
 * The bench tests run it once before asking `bench` for CLBlast's numbers with a budget of a second, which
 * on PoCL covers no build (issue 30: the budget covers builds). Exit 0, or 1 with the reason on stderr.
 */
#include <stdio.h>
#include <string.h>

#include <CL/cl.h>
#include <clblast_c.h>

static int warm(cl_device_id dev)
{
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!ctx)
        return fprintf(stderr, "clblast-warm: clCreateContext: %d\n", err), 1;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (!q)
        return fprintf(stderr, "clblast-warm: clCreateCommandQueue: %d\n", err), 1;
    const size_t n = 64;
    double zeros[64 * 64];
    memset(zeros, 0, sizeof(zeros));
    cl_mem m[3];
    for (int i = 0; i < 3; i++)
        if (!(m[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(zeros), zeros, &err)))
            return fprintf(stderr, "clblast-warm: clCreateBuffer: %d\n", err), 1;
    CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f,
                                       m[0], 0, n, m[1], 0, n, 0.0f, m[2], 0, n, &q, NULL);
    if (s != CLBlastSuccess)
        return fprintf(stderr, "clblast-warm: CLBlastSgemm: %d\n", s), 1;
    char ext[4096] = "";
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof(ext) - 1, ext, NULL);
    if (strstr(ext, "cl_khr_fp64")) {
        s = CLBlastDgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0, m[0], 0, n, m[1],
                         0, n, 0.0, m[2], 0, n, &q, NULL);
        if (s != CLBlastSuccess)
            return fprintf(stderr, "clblast-warm: CLBlastDgemm: %d\n", s), 1;
    }
    clFinish(q);
    return 0;
}

int main(void)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0)
        return fprintf(stderr, "clblast-warm: no OpenCL platform\n"), 1;
    int warmed = 0, rc = 0;
    for (cl_uint p = 0; p < np && p < 16; p++) {
        char name[256] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(name) - 1, name, NULL);
        if (!strstr(name, "Portable Computing Language"))
            continue;
        cl_device_id devs[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
            continue;
        for (cl_uint d = 0; d < nd && d < 16; d++) {
            rc |= warm(devs[d]);
            warmed++;
        }
    }
    if (!warmed)
        return fprintf(stderr, "clblast-warm: no PoCL device\n"), 1;
    return rc;
}
