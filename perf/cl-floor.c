/* cl-floor.c: the least any OpenCL tool must do (load the loader, list platforms and devices): the benchmark's floor. */
/* Built by perf/bench-opencl.sh; loads libOpenCL.so.1 with dlopen like gpucheckup, queries nothing. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*get_platforms_fn)(unsigned, void **, unsigned *);
typedef int (*get_devices_fn)(void *, unsigned long long, unsigned, void **, unsigned *);

int main(void)
{
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cl-floor: %s\n", dlerror());
        return 2;
    }
    get_platforms_fn get_platforms = (get_platforms_fn)dlsym(h, "clGetPlatformIDs");
    get_devices_fn get_devices = (get_devices_fn)dlsym(h, "clGetDeviceIDs");
    if (!get_platforms || !get_devices)
        return 2;
    void *platforms[16];
    unsigned np = 0, total = 0;
    if (get_platforms(16, platforms, &np) != 0)
        np = 0;
    for (unsigned i = 0; i < np && i < 16; i++) {
        void *devices[64];
        unsigned nd = 0;
        if (get_devices(platforms[i], 0xFFFFFFFFull /* CL_DEVICE_TYPE_ALL */, 64, devices, &nd) == 0)
            total += nd;
    }
    printf("%u platforms, %u devices\n", np, total);
    return 0;
}
