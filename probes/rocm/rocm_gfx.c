/* rocm_gfx.c: which AMD GPU targets (gfx) the ROCm releases support on Linux, and the override users set for the others. */
#include <string.h>

#include "rocm_internal.h"

/* Source: AMD, "System requirements (Linux)", the supported GPUs tables (LLVM target column) of ROCm 6.x and 7.x:
 * https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
 * (gfx906 is listed as deprecated there since ROCm 6.x; gfx1102 and the RDNA2 parts but gfx1030 are on the
 * Windows HIP SDK's list only). A target not in this table is ROCM_UNKNOWN: never called unsupported.
 * Overrides: HSA_OVERRIDE_GFX_VERSION=MAJOR.MINOR.STEP makes the ROCr runtime report that target instead
 * (ROCR-Runtime, src/core/util/flag.h, "HSA_OVERRIDE_GFX_VERSION"); the values below are the ones users set
 * for a target of the same family whose code runs on it (e.g. 10.3.0 on gfx1031: ROCm/ROCm issue 2353). AMD
 * does not support them: they are a workaround, named as such. */
static const struct rocm_gfx rocm_gfx_table[] = {
    {"gfx950", "Instinct MI350X, MI355X", false, ROCM_SUPPORTED, NULL},
    {"gfx942", "Instinct MI300X, MI300A, MI325X", false, ROCM_SUPPORTED, NULL},
    {"gfx90a", "Instinct MI210, MI250, MI250X", false, ROCM_SUPPORTED, NULL},
    {"gfx908", "Instinct MI100", false, ROCM_SUPPORTED, NULL},
    {"gfx906", "Instinct MI50, MI60, Radeon VII, Radeon Pro VII", false, ROCM_DEPRECATED, NULL},
    {"gfx900", "Instinct MI25, Radeon RX Vega 56/64", false, ROCM_UNSUPPORTED, NULL},
    {"gfx803", "Radeon RX 470/480/570/580, R9 Fury", false, ROCM_UNSUPPORTED, NULL},
    /* GCN 2 and 3 chips KFD takes (kfd_device.c, kgd2kfd_probe: Kaveri, Hawaii with amdgpu.exp_hw_support=1,
     * Carrizo, Tonga) but no ROCm release supports */
    {"gfx700", "Kaveri APU graphics (A10-7850K)", true, ROCM_UNSUPPORTED, NULL},
    {"gfx701", "Radeon R9 290/390 (X), FirePro W9100 (Hawaii)", false, ROCM_UNSUPPORTED, NULL},
    {"gfx801", "Carrizo APU graphics (A10-8700P)", true, ROCM_UNSUPPORTED, NULL},
    {"gfx802", "Radeon R9 285/380 (X) (Tonga)", false, ROCM_UNSUPPORTED, NULL},
    {"gfx902", "Ryzen 2000/3000 APU graphics (Raven)", true, ROCM_UNSUPPORTED, NULL},
    {"gfx90c", "Ryzen 4000/5000 APU graphics (Renoir, Cezanne)", true, ROCM_UNSUPPORTED, "9.0.0"},
    {"gfx1010", "Radeon RX 5700 (XT)", false, ROCM_UNSUPPORTED, NULL},
    {"gfx1012", "Radeon RX 5500, Radeon Pro W5500", false, ROCM_UNSUPPORTED, NULL},
    {"gfx1030", "Radeon RX 6800/6900/6950 XT, Radeon PRO W6800", false, ROCM_SUPPORTED, NULL},
    {"gfx1031", "Radeon RX 6700/6750 XT", false, ROCM_UNSUPPORTED, "10.3.0"},
    {"gfx1032", "Radeon RX 6600/6650 XT, Radeon PRO W6600", false, ROCM_UNSUPPORTED, "10.3.0"},
    {"gfx1034", "Radeon RX 6400/6500 XT", false, ROCM_UNSUPPORTED, "10.3.0"},
    {"gfx1035", "Radeon 660M/680M (Rembrandt APU)", true, ROCM_UNSUPPORTED, "10.3.0"},
    {"gfx1036", "Ryzen 7000/9000 desktop CPU graphics (Raphael, Granite Ridge)", true, ROCM_UNSUPPORTED, NULL},
    {"gfx1100", "Radeon RX 7900 XTX/XT/GRE, Radeon PRO W7900/W7800", false, ROCM_SUPPORTED, NULL},
    {"gfx1101", "Radeon RX 7800 XT/7700 XT, Radeon PRO W7700", false, ROCM_SUPPORTED, NULL},
    {"gfx1102", "Radeon RX 7600 (XT)", false, ROCM_UNSUPPORTED, "11.0.0"},
    {"gfx1103", "Radeon 760M/780M (Phoenix APU)", true, ROCM_UNSUPPORTED, "11.0.0"},
    {"gfx1150", "Radeon 880M/890M (Strix Point APU)", true, ROCM_UNSUPPORTED, NULL},
    {"gfx1151", "Radeon 8060S (Ryzen AI Max, Strix Halo)", true, ROCM_SUPPORTED, NULL},
    {"gfx1200", "Radeon RX 9060 (XT)", false, ROCM_SUPPORTED, NULL},
    {"gfx1201", "Radeon RX 9070 (XT/GRE), Radeon AI PRO R9700", false, ROCM_SUPPORTED, NULL},
};

/* Chips amdgpu drives but KFD refuses (kfd_device.c, kgd2kfd_probe: no case for them, so the kernel logs
 * "<CHIP> not supported in kfd" and gives them no topology node): GCN 1 (Southern Islands), GCN 2 but Kaveri
 * and Hawaii, and GCN 3's Topaz and Stoney. Hawaii only with amdgpu.exp_hw_support=1 ("KFD support on Hawaii is
 * experimental"). PCI device IDs as amdgpu's pciidlist (amdgpu_drv.c) gives them, as ranges. */
static const struct rocm_kfd_chip rocm_kfd_chips[] = {
    {0x6600, 0x6631, "Oland", "GCN 1 (Southern Islands)", "Radeon HD 8570, R7 240/250", false},
    {0x6660, 0x666f, "Hainan", "GCN 1 (Southern Islands)", "Radeon HD 8500M, R5 M330", false},
    {0x6780, 0x679f, "Tahiti", "GCN 1 (Southern Islands)", "Radeon HD 7950/7970, R9 280 (X)", false},
    {0x6800, 0x6819, "Pitcairn", "GCN 1 (Southern Islands)", "Radeon HD 7850/7870, R9 270 (X)/370", false},
    {0x6820, 0x683f, "Cape Verde", "GCN 1 (Southern Islands)", "Radeon HD 7750/7770, R7 250X", false},
    {0x6640, 0x665f, "Bonaire", "GCN 2 (Sea Islands)", "Radeon HD 7790, R7 260 (X)", false},
    {0x67a0, 0x67bf, "Hawaii", "GCN 2 (Sea Islands)", "Radeon R9 290/390 (X), FirePro W9100", true},
    {0x9830, 0x983f, "Kabini", "GCN 2 (Sea Islands)", "Athlon/Sempron APU graphics", false},
    {0x9850, 0x985f, "Mullins", "GCN 2 (Sea Islands)", "A4/A6 Micro APU graphics", false},
    {0x6900, 0x6907, "Topaz", "GCN 3 (Volcanic Islands)", "Radeon R7 M260/M265", false},
    {0x98e4, 0x98e4, "Stoney", "GCN 3 (Volcanic Islands)", "A4/A9 APU graphics", false},
};

const struct rocm_kfd_chip *rocm_kfd_chip_find(unsigned device_id)
{
    for (size_t i = 0; i < sizeof(rocm_kfd_chips) / sizeof(rocm_kfd_chips[0]); i++)
        if (device_id >= rocm_kfd_chips[i].first && device_id <= rocm_kfd_chips[i].last)
            return &rocm_kfd_chips[i];
    return NULL;
}

const struct rocm_gfx *rocm_gfx_find(const char *gfx)
{
    for (size_t i = 0; gfx && i < sizeof(rocm_gfx_table) / sizeof(rocm_gfx_table[0]); i++)
        if (strcmp(rocm_gfx_table[i].gfx, gfx) == 0)
            return &rocm_gfx_table[i];
    return NULL;
}

const char *rocm_support_name(enum rocm_support s)
{
    static const char *const names[] = {"supported", "deprecated", "unsupported", "unknown"};
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}
