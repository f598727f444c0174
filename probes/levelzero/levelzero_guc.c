/* levelzero_guc.c: the GuC firmware each Intel GPU's kernel driver asked for, whether it runs, and whether the file is installed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hostfs.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "levelzero_internal.h"
#include "strutil.h"

/* Copy the rest of the line at P (up to END) into OUT, trimmed and sanitised. */
static void guc_take(const char *p, const char *end, char *out, size_t cap)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const char *e = p;
    while (e < end && *e != '\n')
        e++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    size_t n = 0;
    for (; p < e && n + 1 < cap; p++)
        out[n++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    while (n > 0 && out[n - 1] == ' ') /* cut short inside a run of spaces */
        n--;
    out[n] = '\0';
}

/* The kernel's dump of a uC firmware, as debugfs guc_info prints it first: i915's intel_uc_fw_dump
 * (drivers/gpu/drm/i915/gt/uc/intel_uc_fw.c) writes "%s firmware: %s\n" (type "GuC", the selected file),
 * "%s firmware wanted: %s\n" only where the kernel fell back to another file, then "\tstatus: %s\n" with
 * intel_uc_fw_status_repr's word; xe's xe_uc_fw_print (drivers/gpu/drm/xe/xe_uc_fw.c) writes the first and
 * the third line the same way. Only the first GuC block is read (later lines describe other things). */
int levelzero_guc_parse(const char *text, size_t len, struct levelzero_guc_info *out)
{
    memset(out, 0, sizeof(*out));
    static const char fw[] = "GuC firmware:", wanted[] = "GuC firmware wanted:", status[] = "status:";
    const char *end = text + len;
    bool in_block = false;
    for (const char *p = text; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        const char *s = p;
        while (s < le && (*s == ' ' || *s == '\t'))
            s++;
        size_t n = (size_t)(le - s);
        if (!in_block && s == p && n >= sizeof(fw) - 1 && memcmp(s, fw, sizeof(fw) - 1) == 0) {
            guc_take(s + sizeof(fw) - 1, le, out->firmware, sizeof(out->firmware));
            in_block = true;
        } else if (in_block && s == p && n >= sizeof(wanted) - 1 && memcmp(s, wanted, sizeof(wanted) - 1) == 0) {
            guc_take(s + sizeof(wanted) - 1, le, out->wanted, sizeof(out->wanted));
        } else if (in_block && s > p && n >= sizeof(status) - 1 && memcmp(s, status, sizeof(status) - 1) == 0) {
            guc_take(s + sizeof(status) - 1, le, out->status, sizeof(out->status));
            break;
        } else if (in_block && s == p) {
            break; /* another top-level line: the block ended without a status */
        }
        p = nl ? nl + 1 : end;
    }
    return out->firmware[0] && out->status[0] ? 0 : -1;
}

/* Is STATUS (intel_uc_fw_status_repr / xe_uc_fw_status_repr) a failure to fetch or load the firmware?
 * "MISSING" (no file), "ERROR" (bad file or version), "INIT FAIL", "LOAD FAIL" and older kernels' "FAIL".
 * "RUNNING", "TRANSFERRED", "PRELOADED" (loaded), and "N/A", "DISABLED" (GuC not used on this GPU or by
 * the enable_guc setting) are not. */
bool levelzero_guc_failed(const char *status)
{
    static const char *const bad[] = {"MISSING", "ERROR", "INIT FAIL", "LOAD FAIL", "FAIL"};
    for (size_t i = 0; status && i < sizeof(bad) / sizeof(bad[0]); i++)
        if (strcmp(status, bad[i]) == 0)
            return true;
    return false;
}

/* The firmware file FILE (relative to the firmware directory) as the kernel's loader looks for it
 * (drivers/base/firmware_loader: /lib/firmware/updates first, then /lib/firmware; compressed .zst and
 * .xz where the kernel is built for them), or NULL when none exists. Heap. */
static char *guc_firmware_file(struct probe_ctx *ctx, const char *file)
{
    static const char *const dirs[] = {"/lib/firmware/updates/", "/lib/firmware/"};
    static const char *const sfx[] = {"", ".zst", ".xz"};
    if (!file[0] || strstr(file, ".."))
        return NULL;
    for (size_t d = 0; d < 2; d++)
        for (size_t s = 0; s < 3; s++) {
            char *p = str_printf("%s%s%s", dirs[d], file, sfx[s]);
            struct stat st;
            if (p && hostfs_stat(ctx->fs, p, &st, true) == 0 && S_ISREG(st.st_mode))
                return p;
            free(p);
        }
    return NULL;
}

/* GPU G's guc_info from debugfs (root only, so NULL where unreadable: nothing is guessed), as
 * {debugfs, firmware, wanted, status, file}. The directory is the DRM minor's (the card's number), newer
 * kernels also name it by PCI address; i915 puts it under gt/ (one GT) or gt0/ (several), xe under gt0/. */
static json_object *guc_one(struct probe_ctx *ctx, const char *addr, const char *card)
{
    const char *dirs[2] = {addr, card && str_starts_with(card, "card") ? card + 4 : NULL};
    static const char *const gts[] = {"gt0", "gt"};
    for (size_t d = 0; d < 2; d++)
        for (size_t g = 0; dirs[d] && g < 2; g++) {
            char *path = str_printf("/sys/kernel/debug/dri/%s/%s/uc/guc_info", dirs[d], gts[g]), *text = NULL;
            size_t len = 0;
            struct levelzero_guc_info info;
            if (!path || hostfs_read_file(ctx->fs, path, 64 * 1024, &text, &len) != 0 ||
                levelzero_guc_parse(text, len, &info) != 0) {
                free(path);
                free(text);
                continue;
            }
            free(text);
            json_object *o = json_object_new_object();
            json_object_object_add(o, "debugfs", json_object_new_string(path));
            json_object_object_add(o, "firmware", json_object_new_string(info.firmware));
            json_object_object_add(o, "wanted", info.wanted[0] ? json_object_new_string(info.wanted) : NULL);
            json_object_object_add(o, "status", json_object_new_string(info.status));
            char *f = guc_firmware_file(ctx, info.firmware);
            if (!f && info.wanted[0])
                f = guc_firmware_file(ctx, info.wanted);
            json_object_object_add(o, "file", jsonstr_or_null(f));
            free(f);
            free(path);
            return o;
        }
    return NULL;
}

void levelzero_guc(struct probe_ctx *ctx, json_object *gpus, const struct result_pci *pci_devs)
{
    for (size_t i = 0; i < json_object_array_length(gpus); i++) {
        json_object *g = json_object_array_get_idx(gpus, i);
        const char *addr = jsonget_str(g, "pci_address"), *drv = jsonget_str(g, "driver"), *card = NULL;
        for (size_t j = 0; pci_devs && j < pci_devs->n_devs; j++) {
            const struct result_pci_dev *d = &pci_devs->devs[j];
            if (!addr || !d->address || strcmp(addr, d->address) != 0)
                continue;
            for (size_t k = 0; k < d->n_drm; k++)
                if (str_starts_with(d->drm[k], "card"))
                    card = d->drm[k];
        }
        bool bound = drv && (strcmp(drv, "i915") == 0 || strcmp(drv, "xe") == 0);
        json_object_object_add(g, "guc", bound ? guc_one(ctx, addr, card) : NULL);
    }
}
