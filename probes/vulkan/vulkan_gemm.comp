// vulkan_gemm.comp: gpucheckup's Vulkan smoke test: C = A x B for row-major n x n fp32 matrices.
// One invocation per element of C (x = column, y = row); invocations outside n x n do nothing. The dot
// product runs k = 0..n-1 with one fma() per term, as the OpenCL and CUDA smoke kernels do: the exact
// pass is exact in any order, and the random pass's tolerance (src/compute/compute_check.c) bounds fma
// and mul+add alike. Compiled to SPIR-V at build time by glslangValidator (probes/vulkan/meson.build).
#version 450

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer MatA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatB { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer MatC { float c[]; };

layout(push_constant) uniform Size { uint n; } size;

void main()
{
    uint col = gl_GlobalInvocationID.x;
    uint row = gl_GlobalInvocationID.y;
    uint n = size.n;
    if (col >= n || row >= n)
        return;
    precise float acc = 0.0;
    for (uint k = 0u; k < n; k++)
        acc = fma(a[row * n + k], b[k * n + col], acc);
    c[row * n + col] = acc;
}
