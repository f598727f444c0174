/* nvdriver.c: the newest CUDA version an NVIDIA driver version supports, from NVIDIA's release table (no library run). */
#include "nvdriver.h"

#include <stdio.h>

/* The CUDA Toolkit release notes, table "CUDA Toolkit and Corresponding Driver Versions": the minimum Linux
 * x86_64 driver of each CUDA release's GA (what cuDriverGetVersion then answers), newest first. Checked against
 * real drivers: 535.261.03 answers 12020, 580.159.04 answers 13000. */
static const struct {
    int major, minor, patch; /* the minimum driver */
    int cuda;                /* 1000 * major + 10 * minor */
} nvdriver_table[] = {
    {580, 65, 6, 13000}, {575, 51, 3, 12090},  {570, 26, 0, 12080},  {560, 28, 3, 12060},  {555, 42, 2, 12050},
    {550, 54, 14, 12040}, {545, 23, 6, 12030}, {535, 54, 3, 12020},  {530, 30, 2, 12010},  {525, 60, 13, 12000},
    {520, 61, 5, 11080}, {515, 43, 4, 11070},  {510, 39, 1, 11060},  {495, 29, 5, 11050},  {470, 42, 1, 11040},
    {465, 19, 1, 11030}, {460, 27, 3, 11020},  {455, 23, 0, 11010},  {450, 36, 6, 11000},
};

int nvdriver_cuda_version(const char *version)
{
    int major = -1, minor = 0, patch = 0, used = 0;
    if (!version || sscanf(version, "%d%n", &major, &used) != 1 || major < 100 || major > 9999)
        return -1;
    if (version[used] == '.' && sscanf(version + used, ".%d.%d", &minor, &patch) < 1)
        return -1;
    for (size_t i = 0; i < sizeof(nvdriver_table) / sizeof(nvdriver_table[0]); i++) {
        int d = major - nvdriver_table[i].major;
        if (d == 0)
            d = minor - nvdriver_table[i].minor;
        if (d == 0)
            d = patch - nvdriver_table[i].patch;
        if (d >= 0)
            return nvdriver_table[i].cuda;
    }
    return -1;
}
