/* fuzz_kfd.c: libFuzzer target for the KFD topology's node properties files (probes/rocm/rocm_kfd.c). */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocm_internal.h"

/* Is there a line "NAME DIGITS" in the input whose digits read V (leading zeros allowed)? */
static int has_line(const uint8_t *data, size_t size, const char *name, int64_t v)
{
    size_t k = strlen(name);
    for (size_t i = 0; i + k + 1 < size; i++) {
        if ((i > 0 && data[i - 1] != '\n') || memcmp(data + i, name, k) != 0 || data[i + k] != ' ')
            continue;
        int64_t x = 0;
        size_t j = i + k + 1, digits = 0;
        for (; j < size && data[j] >= '0' && data[j] <= '9' && x <= INT64_MAX / 10; j++, digits++)
            x = x * 10 + (data[j] - '0');
        if (digits > 0 && (j == size || data[j] == '\n') && x == v)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rocm_kfd_props p;
    size_t n = rocm_kfd_parse((const char *)data, size, &p);
    const struct {
        const char *name;
        int64_t v;
    } m[] = {{"cpu_cores_count", p.cpu_cores_count}, {"simd_count", p.simd_count}, {"gfx_target_version", p.gfx_target_version},
             {"vendor_id", p.vendor_id}, {"device_id", p.device_id}, {"location_id", p.location_id}, {"domain", p.domain},
             {"drm_render_minor", p.drm_render_minor}};
    size_t set = 0;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        assert(m[i].v >= -1);
        if (m[i].v >= 0) {
            set++;
            /* a value is taken from the input only, as the kernel writes it (leading zeros aside) */
            assert(has_line(data, size, m[i].name, m[i].v));
        }
    }
    assert(set <= n);
    char buf[24];
    const char *g = rocm_gfx_name(p.gfx_target_version, buf, sizeof(buf));
    if (g) {
        assert(strncmp(g, "gfx", 3) == 0 && strlen(g) >= 5 && strlen(g) <= 9);
        assert(strspn(g + 3, "0123456789abcdef") == strlen(g + 3));
    }
    const char *a = rocm_kfd_pci_address(&p, buf, sizeof(buf));
    if (a) {
        unsigned d, b, s, f;
        assert(strlen(a) == 12 && sscanf(a, "%4x:%2x:%2x.%1x", &d, &b, &s, &f) == 4 && s < 32 && f < 8);
    }
    return 0;
}
