/* nvdriver.h: what an NVIDIA driver version says without running it: the newest CUDA version it supports. */
#ifndef GPUCHECKUP_NVDRIVER_H
#define GPUCHECKUP_NVDRIVER_H

/* The newest CUDA version driver VERSION ("535.261.03", as /proc/driver/nvidia/version and
 * /sys/module/nvidia/version state it) supports, as cuDriverGetVersion answers it (12020 = 12.2), from NVIDIA's
 * table of the minimum driver of each CUDA release; -1 when VERSION is not a driver version or older than any
 * CUDA 11. For a driver newer than the table knows, the newest CUDA the table knows (a lower bound). */
int nvdriver_cuda_version(const char *version);

#endif
