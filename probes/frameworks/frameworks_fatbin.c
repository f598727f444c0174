/* frameworks_fatbin.c: the sm_XX / compute_XX list of an ELF file's .nv_fatbin section, from headers only (no I/O of its own). */
#include "frameworks_fatbin.h"

#include <stdio.h>
#include <string.h>

#define FW_FATBIN_MAGIC 0xBA55ED50u

static uint16_t fw_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t fw_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t fw_le64(const unsigned char *p)
{
    return (uint64_t)fw_le32(p) | ((uint64_t)fw_le32(p + 4) << 32);
}

/* A read of LEN bytes at OFF that stays inside SIZE. */
static int fw_read_in(fw_read_fn rd, void *arg, uint64_t size, uint64_t off, void *buf, size_t len)
{
    if (off > size || len > size - off)
        return -1;
    return rd(arg, off, buf, len);
}

static void fw_arch_add(uint16_t *a, size_t *n, bool *truncated, uint32_t arch)
{
    if (arch == 0 || arch > 9999)
        return;
    size_t i = 0;
    while (i < *n && a[i] < arch)
        i++;
    if (i < *n && a[i] == arch)
        return;
    if (*n >= FW_FATBIN_MAX_ARCHS) {
        *truncated = true;
        return;
    }
    memmove(a + i + 1, a + i, (*n - i) * sizeof(*a));
    a[i] = (uint16_t)arch;
    (*n)++;
}

/* Walk the containers of a .nv_fatbin section at OFF, SIZE bytes long: -2 when they do not hold together. */
static int fw_fatbin_walk(fw_read_fn rd, void *arg, uint64_t fsize, uint64_t off, uint64_t size,
                          struct fw_gpu_code *out)
{
    uint64_t end = off + size, pos = off;
    unsigned zeros = 0; /* 8-byte steps of zeros since the last container */
    while (pos < end && end - pos >= 16) {
        unsigned char h[16];
        if (fw_read_in(rd, arg, fsize, pos, h, sizeof(h)) != 0)
            return -2;
        uint16_t hs = fw_le16(h + 6);
        uint64_t fat = fw_le64(h + 8);
        if (fw_le32(h) != FW_FATBIN_MAGIC) {
            /* padding between containers is zeros up to an 8-byte boundary; anything else is damage */
            if (fw_le32(h) == 0 && fw_le32(h + 4) == 0) {
                if (++zeros > 8)
                    return 0; /* more than alignment: the section's zero-filled tail */
                pos += 8;
                continue;
            }
            return -2;
        }
        zeros = 0;
        if (hs < 16 || hs > end - pos || fat > end - pos - hs)
            return -2;
        out->containers++;
        uint64_t e = pos + hs, cend = pos + hs + fat;
        while (e < cend && cend - e >= 32) {
            if (out->entries >= FW_FATBIN_MAX_ENTRIES) {
                out->truncated = true;
                return 0;
            }
            unsigned char eh[32];
            if (fw_read_in(rd, arg, fsize, e, eh, sizeof(eh)) != 0)
                return -2;
            uint16_t kind = fw_le16(eh);
            uint32_t ehs = fw_le32(eh + 4);
            uint64_t payload = fw_le64(eh + 8);
            if (ehs < 32 || ehs > cend - e || payload > cend - e - ehs)
                return -2;
            out->entries++;
            if (kind == 1)
                fw_arch_add(out->ptx, &out->n_ptx, &out->truncated, fw_le32(eh + 28));
            else if (kind == 2 || kind == 0x10)
                fw_arch_add(out->sass, &out->n_sass, &out->truncated, fw_le32(eh + 28));
            e += ehs + payload;
        }
        pos = cend;
    }
    return 0;
}

int fw_fatbin_read(fw_read_fn rd, void *arg, uint64_t file_size, struct fw_gpu_code *out)
{
    memset(out, 0, sizeof(*out));
    unsigned char eh[64];
    if (fw_read_in(rd, arg, file_size, 0, eh, sizeof(eh)) != 0 || memcmp(eh, "\x7f" "ELF", 4) != 0 || eh[4] != 2 ||
        eh[5] != 1)
        return -1; /* ELFCLASS64, ELFDATA2LSB only: the CUDA wheels are x86-64 and AArch64 */
    uint64_t shoff = fw_le64(eh + 0x28);
    uint16_t shentsize = fw_le16(eh + 0x3a), shnum = fw_le16(eh + 0x3c), shstrndx = fw_le16(eh + 0x3e);
    if (shnum == 0 || shentsize < 64 || shstrndx >= shnum || shnum > FW_FATBIN_MAX_SECTIONS)
        return shnum == 0 ? 0 : -2;
    unsigned char sh[64];
    if (fw_read_in(rd, arg, file_size, shoff + (uint64_t)shstrndx * shentsize, sh, sizeof(sh)) != 0)
        return -2;
    uint64_t stroff = fw_le64(sh + 0x18), strsize = fw_le64(sh + 0x20);
    for (uint16_t i = 0; i < shnum; i++) {
        if (fw_read_in(rd, arg, file_size, shoff + (uint64_t)i * shentsize, sh, sizeof(sh)) != 0)
            return -2;
        uint32_t name = fw_le32(sh), type = fw_le32(sh + 4);
        static const char want[] = ".nv_fatbin"; /* with its NUL: ".nv_fatbin_x" is another */
        char got[sizeof(want)];
        if (type == 8 /* SHT_NOBITS */ || name >= strsize || strsize - name < sizeof(want) ||
            fw_read_in(rd, arg, file_size, stroff + name, got, sizeof(got)) != 0 || memcmp(got, want, sizeof(want)) != 0)
            continue;
        uint64_t off = fw_le64(sh + 0x18), size = fw_le64(sh + 0x20);
        if (off > file_size || size > file_size - off)
            return -2;
        /* one such section per library (the linker merges them): the first is the one */
        return fw_fatbin_walk(rd, arg, file_size, off, size, out) != 0 ? -2 : 1;
    }
    return 0;
}

const char *fw_arch_list(const uint16_t *a, size_t n, const char *prefix, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used + 1 < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s_%u", i ? ", " : "", prefix, (unsigned)a[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    if (n == 0)
        snprintf(buf, len, "none");
    return buf;
}
