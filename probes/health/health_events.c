/* health_events.c: what a kernel log message says about a GPU: NVIDIA Xids, amdgpu, i915/xe and PCIe AER events, and the PCI device named. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health_internal.h"
#include "strutil.h"

/* The common Xids, in our own words. Source: NVIDIA's Xid catalogue, "Xid Errors" (docs.nvidia.com/deploy/
 * xid-errors/index.html, its Xid listing with the likely cause of each: user application, driver,
 * hardware, bus, thermal) and "Analyzing Xid Errors with the Xid Catalog" (docs.nvidia.com/deploy/xid-errors/
 * analyzing-xid-catalog.html: each Xid's immediate and investigatory resolution bucket, RESTART_APP,
 * RESET_GPU, RESTART_BM, CONTACT_SUPPORT...). Dynamic page retirement's 48/63/64: docs.nvidia.com/deploy/
 * dynamic-page-retirement. The blame is what the catalogue names first: an application's fault (13, 31,
 * 43, 45, 68, 69, 109) is information by itself; the GPU's or the system's are warnings, errors when
 * recent or repeated (health_report.c states the rule), but those the catalogue answers with "restart the
 * program" or "reset the GPU when convenient" (63, 92, 94: the GPU contained the error or remapped the row)
 * are errors only when repeated. An Xid missing here is information, named by number. */
static const struct health_xid health_xid_table[] = {
    {13, HEALTH_B_APP, "graphics engine exception (often an out-of-range access by the program)",
     "check the program (compute-sanitizer); a hardware cause only if it repeats across programs", false},
    {31, HEALTH_B_APP, "GPU memory page fault (a program used an invalid address)",
     "check the program that faulted; the driver and GPU are usually fine", false},
    {32, HEALTH_B_DRIVER, "invalid or corrupted push buffer stream", "update the driver; check PCIe if it repeats", false},
    {38, HEALTH_B_DRIVER, "driver firmware error", "update the driver; reset the GPU if it repeats", false},
    {43, HEALTH_B_APP, "GPU stopped processing a program's work (the program's fault)",
     "nothing for the GPU; check the program that was stopped", false},
    {45, HEALTH_B_APP, "the driver cleaned up after an earlier error or a killed program",
     "look at the Xid before it; by itself nothing to fix", false},
    {48, HEALTH_B_GPU, "double-bit (uncorrectable) ECC error in GPU memory",
     "reset the GPU or reboot to retire the page; replace the GPU if it recurs", false},
    {56, HEALTH_B_DRIVER, "display engine error", "update the driver", false},
    {57, HEALTH_B_GPU, "error programming the video memory interface", "reset the GPU; service it if it recurs", false},
    {61, HEALTH_B_DRIVER, "internal micro-controller breakpoint or warning", "update the driver; reset the GPU if it repeats", false},
    {62, HEALTH_B_GPU, "internal micro-controller halted", "reset the GPU; service it if it recurs", false},
    {63, HEALTH_B_GPU, "a memory page or row was marked for retirement or remapping",
     "reset the GPU (or reboot) to apply the remapping", true},
    {64, HEALTH_B_GPU, "page retirement or row remapping failed", "reset the GPU; service it if it recurs", false},
    {68, HEALTH_B_APP, "video decoder or encoder exception", "check the program; update the driver if it repeats", false},
    {69, HEALTH_B_APP, "graphics engine class error (a program's bad request)", "check the program", false},
    {74, HEALTH_B_SYSTEM, "NVLink error", "reset the GPUs; check the NVLink bridge or baseboard if it recurs", false},
    {79, HEALTH_B_SYSTEM, "GPU has fallen off the bus (it stopped answering on PCIe)",
     "reboot; check power, cooling, the slot and riser; service the GPU if it recurs", false},
    {92, HEALTH_B_GPU, "high single-bit ECC error rate", "reset the GPU; service it if it recurs", true},
    {94, HEALTH_B_GPU, "contained ECC error (the affected program was stopped)",
     "restart the program; reset the GPU to remap the memory row", true},
    {95, HEALTH_B_GPU, "uncontained ECC error (every program on the GPU was stopped)",
     "reset the GPU; service it if it recurs", false},
    {109, HEALTH_B_APP, "context switch timeout", "check the program; update the driver if it repeats", false},
    {119, HEALTH_B_GPU, "GSP firmware did not answer the driver (RPC timeout)", "reset the GPU or reboot", false},
    {120, HEALTH_B_GPU, "GSP firmware error", "reset the GPU or reboot; service it if it recurs", false},
    {140, HEALTH_B_GPU, "unrecovered ECC error", "reset the GPU; service it if it recurs", false},
    {143, HEALTH_B_GPU, "GPU initialisation failed", "reset the GPU or reboot; service it if it recurs", false},
    {154, HEALTH_B_SYSTEM, "the driver asks for a recovery action (GPU reset, node reboot, or drain)",
     "do what the message's recovery action says", false},
};

const struct health_xid *health_xid_find(int xid)
{
    for (size_t i = 0; i < sizeof(health_xid_table) / sizeof(health_xid_table[0]); i++)
        if (health_xid_table[i].xid == xid)
            return &health_xid_table[i];
    return NULL;
}

static const char *const health_kind_names[] = {
    [HEALTH_K_NONE] = "none", [HEALTH_K_XID] = "xid", [HEALTH_K_OFF_BUS] = "fallen-off-bus",
    [HEALTH_K_INIT_FAILED] = "init-failed", [HEALTH_K_API_MISMATCH] = "api-mismatch", [HEALTH_K_HANG] = "hang",
    [HEALTH_K_RESET] = "reset", [HEALTH_K_FIRMWARE] = "firmware-load-failed", [HEALTH_K_KFD] = "kfd-unsupported",
    [HEALTH_K_AER_FATAL] = "pcie-fatal", [HEALTH_K_AER_NONFATAL] = "pcie-nonfatal",
    [HEALTH_K_AER_CORRECTED] = "pcie-corrected", [HEALTH_K_LOADED] = "driver-loaded",
};
static const char *const health_blame_names[] = {"unknown", "application", "driver", "gpu", "system"};
static const char *const health_family_names[] = {NULL, "nvidia", "amdgpu", "i915", "xe"};

const char *health_kind_name(enum health_kind k)
{
    return (unsigned)k < sizeof(health_kind_names) / sizeof(health_kind_names[0]) ? health_kind_names[k] : "none";
}

const char *health_blame_name(enum health_blame b)
{
    return (unsigned)b < 5 ? health_blame_names[b] : "unknown";
}

const char *health_family_name(enum health_family f)
{
    return (unsigned)f < HEALTH_F_N ? health_family_names[f] : NULL;
}

/* A PCI address at S: "DDDD:BB:DD.F" (FULL) or "DDDD:BB:DD" (not FULL), hex digits; written normalised
 * (lowercase, ".0" added to a short one) into OUT. Returns the length read, 0 when none. */
static size_t health_pci_at(const char *s, bool full, char out[16])
{
    static const char shape[] = "xxxx:xx:xx.x";
    size_t n = full ? 12 : 10;
    for (size_t i = 0; i < n; i++) {
        if (!s[i])
            return 0;
        if (shape[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != shape[i])
            return 0;
    }
    if (full && (s[11] < '0' || s[11] > '7'))
        return 0;
    if (isxdigit((unsigned char)s[n]))
        return 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    memcpy(out + n, full ? "" : ".0", full ? 1 : 3);
    return n;
}

/* The first full PCI address in S after AFTER (or anywhere when AFTER is NULL), into OUT: true when found. */
static bool health_pci_find(const char *s, const char *after, char out[16])
{
    const char *p = after ? strstr(s, after) : s;
    if (!p)
        return false;
    for (p += after ? strlen(after) : 0; *p; p++)
        if (health_pci_at(p, true, out))
            return true;
    return false;
}

/* The driver a dev_printk line starts with ("amdgpu 0000:03:00.0: ..."), by its first word. */
static enum health_family health_prefix_family(const char *s)
{
    static const struct {
        const char *word;
        enum health_family f;
    } words[] = {{"NVRM:", HEALTH_F_NVIDIA}, {"nvidia ", HEALTH_F_NVIDIA}, {"amdgpu", HEALTH_F_AMDGPU},
                 {"kfd ", HEALTH_F_AMDGPU},  {"i915 ", HEALTH_F_I915},    {"xe ", HEALTH_F_XE}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (str_starts_with(s, words[i].word))
            return words[i].f;
    return HEALTH_F_NONE;
}

/* NVRM's lines: Xids, fallen off the bus, RmInitAdapter, API mismatch, the module loading. The Xid line's
 * forms: "NVRM: Xid (PCI:0000:65:00): 79, pid=..., GPU has fallen off the bus." (bus id without its
 * function), older drivers "NVRM: Xid (0000:01:00): 31, ..." (open-gpu-kernel-modules, src/nvidia/src/
 * kernel/diagnostics/nv_debug_dump.c and the Xid documentation's examples). */
static int health_classify_nvrm(const char *s, struct health_match *m)
{
    m->family = HEALTH_F_NVIDIA;
    const char *x = strstr(s, "Xid (");
    if (x) {
        x += 5;
        if (str_starts_with(x, "PCI:"))
            x += 4;
        size_t n = health_pci_at(x, true, m->addr);
        if (!n && (n = health_pci_at(x, false, m->addr)) > 0)
            m->addr_no_func = true;
        const char *close = strstr(x, "): ");
        if (!close)
            return -1;
        char *endp = NULL;
        long v = strtol(close + 3, &endp, 10);
        if (endp == close + 3 || v <= 0 || v > 100000)
            return -1;
        /* Xid 154 also says when the recovery action returns to none ("... to 0x0 (None)"): all is well */
        if (v == 154 && strstr(close, " to 0x0 (None)"))
            return -1;
        m->kind = HEALTH_K_XID;
        m->xid = (int)v;
        return 0;
    }
    if (strstr(s, "fallen off the bus"))
        m->kind = HEALTH_K_OFF_BUS;
    else if (strstr(s, "RmInitAdapter failed"))
        m->kind = HEALTH_K_INIT_FAILED;
    else if (strstr(s, "API mismatch"))
        m->kind = HEALTH_K_API_MISMATCH;
    else if (strstr(s, "loading NVIDIA UNIX"))
        m->kind = HEALTH_K_LOADED;
    else
        return -1;
    if (!health_pci_find(s, NULL, m->addr) && health_pci_find(s, "PCI:", m->addr) == false) {
        const char *p = strstr(s, "PCI:");
        if (p && health_pci_at(p + 4, false, m->addr))
            m->addr_no_func = true;
    }
    return 0;
}

/* amdgpu's, i915's and xe's lines (drivers/gpu/drm/amd/amdgpu/amdgpu_job.c "ring %s timeout",
 * amdgpu_device.c "GPU reset begin!" and "GPU reset(%d) succeeded!", amdkfd/kfd_device.c "%s not supported
 * in kfd"; i915's i915_gpu_error.c "GPU HANG: ecode" and intel_reset.c "Resetting chip for %s"; xe's
 * xe_guc_submit.c "Timedout job"; i915's and xe's "GuC load failed: status = 0x%08X" and intel_uc_fw.c's
 * "%s firmware %s: fetch failed"; the firmware loader's "Direct firmware load for %s failed with error %d").
 * HuC (media only) is left out: compute does not need it. */
static const struct {
    enum health_family family; /* NONE: any GPU driver's line */
    const char *a, *b;         /* both in the message (B may be NULL) */
    enum health_kind kind;
} health_drm_patterns[] = {
    {HEALTH_F_AMDGPU, "[drm] Initialized amdgpu", NULL, HEALTH_K_LOADED},
    {HEALTH_F_I915, "[drm] Initialized i915", NULL, HEALTH_K_LOADED},
    {HEALTH_F_XE, "[drm] Initialized xe", NULL, HEALTH_K_LOADED},
    {HEALTH_F_AMDGPU, " ring ", " timeout", HEALTH_K_HANG},
    {HEALTH_F_AMDGPU, "GPU reset begin", NULL, HEALTH_K_RESET},
    {HEALTH_F_AMDGPU, "GPU reset(", "succeeded", HEALTH_K_RESET},
    {HEALTH_F_AMDGPU, "not supported in kfd", NULL, HEALTH_K_KFD},
    {HEALTH_F_NONE, "GPU HANG", NULL, HEALTH_K_HANG},
    {HEALTH_F_NONE, "Resetting chip", NULL, HEALTH_K_RESET},
    {HEALTH_F_XE, "Timedout job", NULL, HEALTH_K_HANG},
    {HEALTH_F_NONE, "GuC", "load failed", HEALTH_K_FIRMWARE},
    {HEALTH_F_NONE, "GuC initialization failed", NULL, HEALTH_K_FIRMWARE},
    {HEALTH_F_NONE, "GuC firmware ", "fetch failed", HEALTH_K_FIRMWARE},
};

static int health_classify_drm(const char *s, struct health_match *m)
{
    if (strstr(s, "soft recovered")) /* amdgpu's "ring %s timeout, but soft recovered": the job went on */
        return -1;
    enum health_family pf = health_prefix_family(s);
    if (pf == HEALTH_F_NONE && strstr(s, "amdgpu"))
        pf = HEALTH_F_AMDGPU;
    const char *fw = strstr(s, "Direct firmware load for ");
    if (fw && strstr(fw, " failed")) {
        static const char *const dirs[HEALTH_F_N] = {NULL, "nvidia/", "amdgpu/", "i915/", "xe/"};
        for (int f = HEALTH_F_NVIDIA; f < HEALTH_F_N; f++)
            if (str_starts_with(fw + 25, dirs[f])) {
                m->kind = HEALTH_K_FIRMWARE;
                m->family = (enum health_family)f;
                return 0;
            }
        return -1;
    }
    for (size_t i = 0; i < sizeof(health_drm_patterns) / sizeof(health_drm_patterns[0]); i++) {
        const char *a = strstr(s, health_drm_patterns[i].a);
        if (!a || (health_drm_patterns[i].b && !strstr(a, health_drm_patterns[i].b)))
            continue;
        enum health_family f = health_drm_patterns[i].family;
        if (f == HEALTH_F_NONE ? (pf != HEALTH_F_I915 && pf != HEALTH_F_XE) : (pf != f && health_drm_patterns[i].kind != HEALTH_K_LOADED))
            continue;
        m->kind = health_drm_patterns[i].kind;
        m->family = f == HEALTH_F_NONE ? pf : f;
        return 0;
    }
    return -1;
}

/* PCIe AER (drivers/pci/pcie/aer.c): the port's "AER: %s%s error message received from %s" (older kernels
 * "error received: %s") and the device's "PCIe Bus Error: severity=%s, type=%s, (%s)", the severity
 * "Uncorrected (Fatal)", "Uncorrected (Non-Fatal)", "Corrected" (since Linux 6.x "Uncorrectable ...",
 * "Correctable"). */
static int health_classify_aer(const char *s, struct health_match *m, bool *from_source)
{
    const char *sev = strstr(s, "PCIe Bus Error: severity=");
    const char *aer = sev ? NULL : strstr(s, "AER: ");
    const char *recv = aer ? strstr(aer, " error message received from ") : NULL;
    if (aer && !recv)
        recv = strstr(aer, " error received: ");
    if (!sev && !recv)
        return -1;
    const char *text = sev ? sev + 25 : aer + 5;
    const char *stop = sev ? strchr(text, ',') : recv;
    size_t n = stop ? (size_t)(stop - text) : strlen(text);
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*s", (int)(n < sizeof(buf) - 1 ? n : sizeof(buf) - 1), text);
    if (strstr(buf, "(Fatal)"))
        m->kind = HEALTH_K_AER_FATAL;
    else if (strstr(buf, "(Non-Fatal)"))
        m->kind = HEALTH_K_AER_NONFATAL;
    else if (strstr(buf, "Correct"))
        m->kind = HEALTH_K_AER_CORRECTED;
    else
        return -1;
    *from_source = recv && health_pci_find(recv, ": ", m->addr);
    if (!*from_source && recv)
        *from_source = health_pci_find(recv, "from ", m->addr);
    return 0;
}

int health_classify(const char *msg, size_t len, const char *device, size_t device_len, struct health_match *m)
{
    memset(m, 0, sizeof(*m));
    char s[1024];
    snprintf(s, sizeof(s), "%.*s", (int)(len < sizeof(s) - 1 ? len : sizeof(s) - 1), msg);
    if (strlen(s) != (len < sizeof(s) - 1 ? len : sizeof(s) - 1))
        return -1; /* a NUL inside: not a kernel message */
    bool from_source = false;
    int rc;
    if (str_starts_with(s, "NVRM: ") || strstr(s, " NVRM: "))
        rc = health_classify_nvrm(strstr(s, "NVRM: "), m);
    else if ((rc = health_classify_aer(s, m, &from_source)) < 0)
        rc = health_classify_drm(s, m);
    if (rc < 0) {
        memset(m, 0, sizeof(*m));
        return -1;
    }
    if (!m->addr[0] && !from_source) {
        char d[64];
        snprintf(d, sizeof(d), "%.*s", (int)(device_len < sizeof(d) - 1 ? device_len : sizeof(d) - 1), device ? device : "");
        if (!(device && str_starts_with(d, "+pci:") && health_pci_at(d + 5, true, m->addr)))
            health_pci_find(s, NULL, m->addr);
    }
    return 0;
}
