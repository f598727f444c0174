/* fuzz_cpuinfo.c: libFuzzer target for /proc/cpuinfo text (x86, ARM, RISC-V, POWER, s390 shapes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_cpuinfo.h"
#include "fuzz_common.h"

static const char *const fuzz_cpuinfo_arches[] = {"x86_64", "x86", "aarch64", "arm", "riscv64", "riscv32",
                                                  "ppc64", "s390x", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256 * 1024)
        return 0;
    char *text = strndup((const char *)data, size);
    if (!text)
        return 0;
    size_t len = strlen(text);
    struct cpu_cpuinfo ci;
    if (cpu_cpuinfo_parse(text, &ci) < 0) {
        free(text);
        return 0; /* out of memory */
    }
    if (ci.processors < 0 || (size_t)ci.processors > len / 10)
        abort(); /* "processor:0" is 11 bytes at least */
    if ((ci.packages < 0) != (ci.cores < 0) || ci.packages < -1 || ci.packages == 0 || ci.packages > ci.cores)
        abort();
    if (ci.family < -1 || ci.family > 1000000 || ci.model < -1 || ci.model > 1000000 || ci.stepping < -1 ||
        ci.stepping > 1000000)
        abort();
    if (ci.arch) {
        size_t i = 0;
        while (fuzz_cpuinfo_arches[i] && strcmp(fuzz_cpuinfo_arches[i], ci.arch) != 0)
            i++;
        if (!fuzz_cpuinfo_arches[i])
            abort();
    }
    fuzz_require_sanitized(ci.vendor);
    fuzz_require_sanitized(ci.model_name);
    if (ci.vendor && !*ci.vendor)
        abort();
    if (ci.n_flags > len / 2 + 1 || (ci.n_flags && !ci.flags) || (ci.n_flags && !ci.has_flags_line) ||
        (ci.flags_differ && !ci.has_flags_line))
        abort();
    for (size_t i = 0; i < ci.n_flags; i++) {
        const char *f = ci.flags[i];
        if (!f || !*f || strpbrk(f, " \t\n") || !cpu_cpuinfo_has(&ci, f))
            abort();
        fuzz_require_sanitized(f);
    }
    cpu_cpuinfo_free(&ci);
    if (ci.flags || ci.n_flags || ci.vendor || ci.model_name || ci.arch)
        abort();
    free(text);
    return 0;
}
