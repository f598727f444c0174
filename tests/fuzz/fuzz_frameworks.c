/* fuzz_frameworks.c: libFuzzer target for the frameworks probe's readers of version.py, build_info.py, METADATA, pyvenv.cfg. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
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
    /* each pin is judged against a few installed versions, and made a pip requirement */
    static const char *const installed[] = {"9.26.0.51", "13.0.3rc1", "2.15.0+cu132", "0", ""};
    for (size_t i = 0; i < sizeof(installed) / sizeof(installed[0]); i++) {
        enum fw_pin_state st = fw_pin_eval(spec, installed[i]);
        assert(st >= FW_PIN_OK && st <= FW_PIN_UNKNOWN);
    }
    (void)fw_marker_python(spec, "3.11");
    char req[32];
    fw_pin_req(spec, req, sizeof(req));
    assert(strlen(req) < sizeof(req) && !strchr(req, ';') && !strchr(req, ' '));
    fuzz_require_sanitized(req);
    fuzz_pins++;
}

static size_t fuzz_items, fuzz_size;

static void fuzz_item(const char *item, void *arg)
{
    fuzz_require_sanitized(item);
    assert(item[0] != '\0');
    if (!strchr(item, '?'))
        assert(memmem(arg, fuzz_size, item, strlen(item)) != NULL);
    fuzz_items++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the text is not NUL-terminated: the parsers must stay inside SIZE (ASan sees a read past it) */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    fuzz_size = size;
    static const char *const names[] = {"__version__", "cuda", "hip", "xpu", "package_name", "cuda_version",
                                        "full_version", "hip_version"};
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
    /* the whole input as a specifier and as an installed version (NUL-terminated copies) */
    char *z = malloc(size + 1);
    if (z) {
        memcpy(z, data, size);
        z[size] = '\0';
        enum fw_pin_state st = fw_pin_eval(z, "1.2.3");
        assert(st >= FW_PIN_OK && st <= FW_PIN_UNKNOWN);
        st = fw_pin_eval("==1.2.*,>=1.0,<2,!=1.2.4,~=1.2", z);
        (void)fw_marker_python(z, "3.11");
        (void)fw_marker_python("; python_version < \"3.15\" and python_version >= '3.9'", z);
        assert(st >= FW_PIN_OK && st <= FW_PIN_UNKNOWN);
        free(z);
    }
    /* conda's lists: each item a sanitised, non-empty piece of the input (whole: never cut), counts bounded */
    fuzz_items = 0;
    size_t ni = fw_conda_envs_txt(text, size, 8, fuzz_item, (void *)text);
    assert(ni == fuzz_items && ni <= 8);
    fuzz_items = 0;
    ni = fw_condarc_list(text, size, "envs_dirs", 8, fuzz_item, (void *)text);
    assert(ni == fuzz_items && ni <= 8);
    fuzz_pins = 0;
    size_t n = fw_meta_pins(text, size, 8, fuzz_pin, NULL);
    assert(n == fuzz_pins && n <= 8);
    free(text);
    return 0;
}
