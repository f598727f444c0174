/* fuzz_unitfile.c: libFuzzer target for systemd unit files and drop-ins, as the process probe reads them (probes/process/process_unit.c). */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "process_internal.h"

static void check_list(const struct proc_list *l, bool assignments)
{
    assert(l->n <= 4096);
    for (size_t i = 0; i < l->n; i++) {
        assert(l->v[i]);
        fuzz_require_sanitized(l->v[i]);
        if (!assignments)
            continue;
        /* KEY=value, a key of at least one byte, each key once (the last assignment wins) */
        const char *eq = strchr(l->v[i], '=');
        assert(eq && eq != l->v[i]);
        for (size_t k = 0; k < i; k++)
            assert(strncmp(l->v[k], l->v[i], (size_t)(eq - l->v[i]) + 1) != 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct proc_unit u;
    memset(&u, 0, sizeof(u));
    u.dynamic_user = u.private_devices = -1;
    /* twice: a drop-in applied over the unit file */
    for (int pass = 0; pass < 2; pass++) {
        int rc = proc_unit_parse(&u, (const char *)data, size);
        assert(rc == 0 || rc == -1);
    }
    check_list(&u.env, true);
    check_list(&u.env_files, false);
    check_list(&u.supp, false);
    check_list(&u.device_allow, false);
    assert(u.dynamic_user >= -1 && u.dynamic_user <= 1);
    assert(u.private_devices >= -1 && u.private_devices <= 1);
    const char *strs[] = {u.user, u.group, u.device_policy, u.exec_start};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        assert(!strs[i] || *strs[i]); /* an empty value resets to unset */
        fuzz_require_sanitized(strs[i]);
    }
    /* nothing is read outside [Service]: without that header, nothing is set */
    if (!memmem(data, size, "[Service]", 9))
        assert(u.env.n == 0 && !u.user && u.private_devices == -1 && !u.exec_start);
    proc_unit_free(&u);
    return 0;
}
