/* fuzz_frameworks.c: libFuzzer target for the frameworks probe's readers of version.py, build_info.py, METADATA, pyvenv.cfg. */
#define _GNU_SOURCE /* memmem */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frameworks_parse.h"
#include "fuzz_common.h"

static size_t fuzz_pins;

static void fuzz_pin(const char *name, const char *spec, void *arg)
{
    (void)arg;
    fuzz_require_sanitized(name);
    fuzz_require_sanitized(spec);
    assert(strncasecmp(name, "nvidia", 6) == 0 || strncasecmp(name, "cuda-", 5) == 0);
    fuzz_pins++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the text is not NUL-terminated: the parsers must stay inside SIZE (ASan sees a read past it) */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    static const char *const names[] = {"__version__", "cuda", "hip", "xpu", "package_name", "cuda_version"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char out[16];
        enum fw_py v = fw_py_assign(text, size, names[i], out, sizeof(out));
        assert(v >= FW_PY_MISSING && v <= FW_PY_OTHER);
        assert(strlen(out) < sizeof(out));
        fuzz_require_sanitized(out);
        assert(v == FW_PY_STR || out[0] == '\0');
        v = fw_py_dict_get(text, size, "build_info", names[i], out, sizeof(out));
        assert(strlen(out) < sizeof(out));
        fuzz_require_sanitized(out);
        /* a string value is a piece of the input (cut to fit, non-printable bytes as '?') */
        if (v == FW_PY_STR && out[0] && !strchr(out, '?'))
            assert(memmem(text, size, out, strlen(out)) != NULL);
    }
    /* pyvenv.cfg: a value is a piece of the input, whole or not at all */
    static const char *const keys[] = {"home", "executable"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char out[16];
        bool got = fw_cfg_get(text, size, keys[i], out, sizeof(out));
        assert(strlen(out) < sizeof(out));
        fuzz_require_sanitized(out);
        assert(got || out[0] == '\0');
        if (got && out[0] && !strchr(out, '?'))
            assert(memmem(text, size, out, strlen(out)) != NULL);
    }
    fuzz_pins = 0;
    size_t n = fw_meta_pins(text, size, 8, fuzz_pin, NULL);
    assert(n == fuzz_pins && n <= 8);
    free(text);
    return 0;
}
