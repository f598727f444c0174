/* fuzz_pcisysfs.c: libFuzzer target for what the pci probe reads from sysfs: PCI addresses (device
 * directory names), link speed strings, and attribute files read through hostfs (ids, numbers). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "hostfs.h"
#include "pci_internal.h"

static struct hostfs fuzz_fs;
static char fuzz_root[64];
static int fuzz_ready = -1;

static void fuzz_pcisysfs_cleanup(void)
{
    char path[96];
    snprintf(path, sizeof(path), "%s/sys/attr", fuzz_root);
    unlink(path);
    snprintf(path, sizeof(path), "%s/sys", fuzz_root);
    rmdir(path);
    rmdir(fuzz_root);
}

/* A fake root with one attribute file, rewritten for every input. */
static int fuzz_pcisysfs_setup(void)
{
    snprintf(fuzz_root, sizeof(fuzz_root), "%s", "/tmp/gc-fuzz-pcisysfs.XXXXXX");
    if (!mkdtemp(fuzz_root))
        return -1;
    atexit(fuzz_pcisysfs_cleanup);
    char sys[96];
    snprintf(sys, sizeof(sys), "%s/sys", fuzz_root);
    if (mkdir(sys, 0755) < 0 || hostfs_open(&fuzz_fs, fuzz_root) < 0)
        return -1;
    return 0;
}

static void fuzz_pcisysfs_attr(const uint8_t *data, size_t size)
{
    char path[96];
    snprintf(path, sizeof(path), "%s/sys/attr", fuzz_root);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t w = write(fd, data, size);
    close(fd);
    if (w != (ssize_t)size)
        return;
    char *v = NULL;
    if (hostfs_read_attr(&fuzz_fs, "/sys/attr", &v) != 0)
        abort(); /* a regular file under 64 KiB always reads */
    /* trimmed, sanitised, and no longer than the file */
    size_t l = strlen(v);
    if (l > size || (l && (isspace((unsigned char)v[0]) || isspace((unsigned char)v[l - 1]))))
        abort();
    fuzz_require_sanitized(v);
    uint64_t u;
    int rc = hostfs_read_u64(&fuzz_fs, "/sys/attr", &u);
    uint64_t u2;
    if (rc != (str_to_u64(v, 0, &u2) == 0 ? 0 : -EINVAL) || (rc == 0 && u != u2))
        abort();
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    if (fuzz_ready < 0)
        fuzz_ready = fuzz_pcisysfs_setup() == 0;
    char *s = strndup((const char *)data, size);
    if (!s)
        return 0;

    /* A device directory name: accepted only in the kernel's own spelling, which prints back. */
    unsigned dom, bus, dev, fn;
    if (pci_parse_address(s, &dom, &bus, &dev, &fn)) {
        char back[32];
        snprintf(back, sizeof(back), "%04x:%02x:%02x.%u", dom, bus, dev, fn);
        if (strcmp(back, s) != 0 || dev > 0x1f || fn > 7 || bus > 0xff)
            abort();
    }

    /* A link speed: unknown (-1) or a finite positive rate. */
    double sp = pci_parse_link_speed(s);
    if (!(sp == -1 || (isfinite(sp) && sp > 0 && sp <= 1000)))
        abort();
    if (size >= 1) {
        double c = pci_speed_from_code(data[0] & 0xf);
        if (!(c == -1 || (c > 0 && c <= 64)))
            abort();
    }

    /* sysfs resource lines and the Resizable BAR capability: at most 6 BARs, indexes in range, sizes from the
     * input's own numbers. */
    uint64_t size6[6], flags6[6], mask6[6] = {0};
    if (pci_bar_parse_resource(s, size6, flags6, 6) > 6)
        abort();
    if (pci_bar_rebar_config(data, size, mask6, 6) > 6)
        abort();
    for (size_t i = 0; i < 6; i++)
        if (mask6[i] > 0x0fffffffu)
            abort();

    /* Class and IDs as read from config space bytes. */
    if (size >= 6) {
        int cls = data[0] | data[1] << 8, vendor = data[2] | data[3] << 8, device = data[4] | data[5] << 8;
        enum pci_kind k = pci_classify(cls, vendor, device);
        if (k != PCI_KIND_NONE && !pci_kind_name(k))
            abort();
        if (k != PCI_KIND_NONE && (cls >> 8) != 0x03 && (cls >> 8) != 0x12 && cls != 0x0b40)
            abort();
    }
    free(s);

    if (fuzz_ready > 0)
        fuzz_pcisysfs_attr(data, size);
    return 0;
}
