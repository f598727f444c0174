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
