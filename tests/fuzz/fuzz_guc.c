/* fuzz_guc.c: libFuzzer target for debugfs guc_info, the GuC firmware the kernel selected and its status (probes/levelzero/levelzero_guc.c). */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "levelzero_internal.h"

/* S is printable ASCII, without space at either end, and fits its field (CAP bytes with the NUL). */
static void check_field(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    assert(n < cap);
    for (size_t i = 0; i < n; i++)
        assert(s[i] >= 0x20 && s[i] < 0x7f);
    assert(n == 0 || (s[0] != ' ' && s[n - 1] != ' '));
    fuzz_require_sanitized(s);
}

/* Is NEEDLE (no '?', which stands for a byte replaced) inside the input? */
static int in_input(const uint8_t *data, size_t size, const char *needle)
{
    size_t k = strlen(needle);
    if (strchr(needle, '?'))
        return 1;
    for (size_t i = 0; i + k <= size; i++)
        if (memcmp(data + i, needle, k) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct levelzero_guc_info g;
    int rc = levelzero_guc_parse((const char *)data, size, &g);
    check_field(g.firmware, sizeof(g.firmware));
    check_field(g.wanted, sizeof(g.wanted));
    check_field(g.status, sizeof(g.status));
    if (rc == 0) {
        assert(g.firmware[0] && g.status[0]);
        assert(in_input(data, size, "GuC firmware:") && in_input(data, size, "status:"));
        /* a value is taken from the input only (unless cut to its field's size) */
        assert(strlen(g.firmware) + 1 == sizeof(g.firmware) || in_input(data, size, g.firmware));
        assert(strlen(g.status) + 1 == sizeof(g.status) || in_input(data, size, g.status));
    } else {
        assert(rc == -1);
    }
    (void)levelzero_guc_failed(g.status);
    return 0;
}
