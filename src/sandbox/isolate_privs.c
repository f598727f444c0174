/* isolate_privs.c: a vendor child gives up what could change the host (device nodes, kernel modules) before vendor code runs. */
#include "isolate.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Our own minimal view of the capget/capset interface (linux/capability.h, version 3: two 32-bit
 * words per set), so that no libcap is needed. Capability numbers from linux/capability.h. */
#define ISOLATE_CAP_VERSION_3 0x20080522u
#define ISOLATE_CAP_SYS_MODULE 16
#define ISOLATE_CAP_MKNOD 27

struct isolate_cap_header {
    uint32_t version;
    int pid;
};

struct isolate_cap_data {
    uint32_t effective;
    uint32_t permitted;
    uint32_t inheritable;
};

#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS 38
#endif
#ifndef PR_CAPBSET_DROP
#define PR_CAPBSET_DROP 24
#endif

static const int isolate_host_caps[] = {ISOLATE_CAP_MKNOD, ISOLATE_CAP_SYS_MODULE};
#define ISOLATE_N_HOST_CAPS (sizeof(isolate_host_caps) / sizeof(isolate_host_caps[0]))

/* Clear the host capabilities from this thread's effective, permitted and inheritable sets (which
 * clears them from the ambient set too: a capability is ambient only while permitted and inheritable).
 * Lowering one's own sets needs no privilege. 0 or -errno. */
static int isolate_caps_clear(void)
{
    struct isolate_cap_header h = {.version = ISOLATE_CAP_VERSION_3, .pid = 0};
    struct isolate_cap_data d[2] = {{0}};
    if (syscall(SYS_capget, &h, d) != 0)
        return -errno;
    if (h.version != ISOLATE_CAP_VERSION_3)
        return -ENOSYS;
    bool change = false;
    for (size_t i = 0; i < ISOLATE_N_HOST_CAPS; i++) {
        int cap = isolate_host_caps[i];
        uint32_t bit = UINT32_C(1) << (cap % 32);
        struct isolate_cap_data *w = &d[cap / 32];
        if ((w->effective | w->permitted | w->inheritable) & bit)
            change = true;
        w->effective &= ~bit;
        w->permitted &= ~bit;
        w->inheritable &= ~bit;
    }
    if (change && syscall(SYS_capset, &h, d) != 0)
        return -errno;
    return 0;
}

int isolate_drop_host_privileges(void)
{
    int err = 0;
    /* The bounding set first: dropping from it needs CAP_SETPCAP in the effective set, which the
     * capset below leaves alone. Without it (not root) the drop fails with EPERM: nothing to take. */
    for (size_t i = 0; i < ISOLATE_N_HOST_CAPS; i++)
        if (prctl(PR_CAPBSET_DROP, (unsigned long)isolate_host_caps[i], 0UL, 0UL, 0UL) != 0 && !err)
            err = -errno;
    int e = isolate_caps_clear();
    if (e && !err)
        err = e;
    /* A setuid helper (nvidia-modprobe is installed setuid root) or a file with capabilities gains
     * nothing when exec'd from here on. */
    if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) != 0 && !err)
        err = -errno;
    return err;
}
