/* cpu_dump_file.c: CPUID dumps from files and devices: strict loading, /dev/cpu/N/cpuid queries, atomic saving. */
#include "cpu_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cpu_dump_internal.h"
#include "fdio.h"
#include "strutil.h"
#include "writer.h"

/* The character major of /dev/cpu/N/cpuid (Linux: CPUID_MAJOR in arch/x86/kernel/cpuid.c). */
#define CPU_DUMP_CPUID_MAJOR 203u

/* Reads one CPUID leaf through /dev/cpu/N/cpuid: the file offset is the leaf (low 32 bits) and
 * subleaf (high 32 bits), each read returns EAX, EBX, ECX, EDX (Linux arch/x86/kernel/cpuid.c). */
static int cpu_dump_device_query(void *arg, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    int fd = *(const int *)arg;
    uint32_t buf[4];
    ssize_t r;
    do
        r = pread(fd, buf, sizeof(buf), (off_t)(((uint64_t)sub << 32) | leaf));
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof(buf))
        return -1;
    memcpy(out, buf, sizeof(buf));
    return 0;
}

int cpu_dump_from_query(cpu_dump_query_fn query, void *arg, struct cpu_dump *d, char **err)
{
    memset(d, 0, sizeof(*d));
    *err = NULL;
    d->format = CPU_DUMP_FMT_DEVICE;
    struct cpu_dump_state st = {.d = d, .cur = -1};
    uint32_t r[4];
    int rc = -1;
#define CPU_DUMP_Q(leaf, sub)                                                                                    \
    do {                                                                                                         \
        if (query(arg, (leaf), (sub), r) < 0) {                                                                  \
            *err = str_printf("reading CPUID leaf 0x%" PRIx32 " subleaf %" PRIu32 " failed", (uint32_t)(leaf), \
                              (uint32_t)(sub));                                                                  \
            goto out;                                                                                            \
        }                                                                                                        \
        if (cpu_dump_put(&st, (leaf), (sub), r) < 0) {                                                           \
            *err = str_dup("out of memory");                                                                     \
            goto out;                                                                                            \
        }                                                                                                        \
    } while (0)
    CPU_DUMP_Q(0u, 0u);
    uint32_t max = r[CPU_EAX];
    for (uint32_t leaf = 1; leaf <= max && leaf < MAX_CPUID_LEVEL; leaf++) {
        CPU_DUMP_Q(leaf, 0u);
        /* Subleaf loops as libcpuid's cpuid_get_raw_data walks them, plus leaf 7 subleaf 1. */
        if (leaf == 4)
            for (uint32_t s = 1; s < MAX_INTELFN4_LEVEL && (r[CPU_EAX] & 0x1f) != 0; s++)
                CPU_DUMP_Q(4u, s);
        else if (leaf == 7 && r[CPU_EAX] >= 1)
            CPU_DUMP_Q(7u, 1u);
        else if (leaf == 0xb)
            for (uint32_t s = 1; s < MAX_INTELFN11_LEVEL; s++)
                CPU_DUMP_Q(0xbu, s);
        else if (leaf == 0x12)
            for (uint32_t s = 1; s < MAX_INTELFN12H_LEVEL; s++)
                CPU_DUMP_Q(0x12u, s);
        else if (leaf == 0x14)
            for (uint32_t s = 1; s < MAX_INTELFN14H_LEVEL; s++)
                CPU_DUMP_Q(0x14u, s);
    }
    /* AVX10's leaf is above libcpuid's basic rows: read when CPUID.(7,1):EDX[19] announces it. */
    if (max >= 0x24 && d->extras.have_7_1 && ((d->extras.leaf7_1[CPU_EDX] >> 19) & 1))
        CPU_DUMP_Q(0x24u, 0u);
    CPU_DUMP_Q(0x80000000u, 0u);
    uint32_t max_ext = r[CPU_EAX];
    if (max_ext > 0x80000000u && max_ext <= 0x8000ffffu) {
        for (uint32_t leaf = 0x80000001u; leaf <= max_ext && leaf - 0x80000000u < MAX_EXT_CPUID_LEVEL; leaf++) {
            CPU_DUMP_Q(leaf, 0u);
            if (leaf == 0x8000001du)
                for (uint32_t s = 1; s < MAX_AMDFN8000001DH_LEVEL; s++)
                    CPU_DUMP_Q(leaf, s);
        }
    }
    if (max >= 1 && (d->raw[0].basic_cpuid[1][CPU_ECX] >> 31) & 1) {
        CPU_DUMP_Q(0x40000000u, 0u);
        /* "Microsoft Hv" may be KVM with Hyper-V enlightenments: its own name is at 0x40000100. */
        if (r[CPU_EBX] == 0x7263694d && r[CPU_ECX] == 0x666f736f && r[CPU_EDX] == 0x76482074)
            CPU_DUMP_Q(0x40000100u, 0u);
    }
#undef CPU_DUMP_Q
    if (cpu_dump_finish(&st, false, err) < 0)
        goto out;
    rc = 0;
out:
    free(st.seen0);
    free(st.seen1);
    if (rc < 0)
        cpu_dump_free(d);
    return rc;
}

int cpu_dump_load(const char *path, struct cpu_dump *d, char **err)
{
    memset(d, 0, sizeof(*d));
    *err = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        *err = str_printf("cannot open it: %s%s", strerror(e),
                          str_starts_with(path, "/dev/cpu/") && (e == EPERM || e == EACCES)
                              ? " (reading /dev/cpu/N/cpuid needs root: CAP_SYS_RAWIO)"
                          : str_starts_with(path, "/dev/cpu/") && (e == ENOENT || e == ENXIO || e == ENODEV)
                              ? " (/dev/cpu/N/cpuid needs the cpuid kernel module: modprobe cpuid)"
                              : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        *err = str_printf("cannot stat it: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        *err = str_dup("is a directory, not a CPUID dump file");
        close(fd);
        return -1;
    }
    if (S_ISCHR(st.st_mode)) {
        /* Linux's cpuid driver (arch/x86/kernel/cpuid.c) registers character major 203 ("cpu/cpuid",
         * Documentation/admin-guide/devices.txt). Any other device could block or mean nothing. */
        if (major(st.st_rdev) != CPU_DUMP_CPUID_MAJOR) {
            *err = str_dup("is a character device but not a /dev/cpu/N/cpuid device");
            close(fd);
            return -1;
        }
        int rc = cpu_dump_from_query(cpu_dump_device_query, &fd, d, err);
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        *err = str_dup("is not a regular file, a pipe or a /dev/cpu/N/cpuid device");
        close(fd);
        return -1;
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > CPU_DUMP_MAX_BYTES) {
        *err = str_printf("is %jd bytes: too large for a CPUID dump (at most %u)", (intmax_t)st.st_size, CPU_DUMP_MAX_BYTES);
        close(fd);
        return -1;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        *err = str_dup("out of memory");
        return -1;
    }
    for (;;) {
        if (n == cap) {
            if (cap >= CPU_DUMP_MAX_BYTES + 1) {
                free(buf);
                close(fd);
                *err = str_printf("too large for a CPUID dump (more than %u bytes)", CPU_DUMP_MAX_BYTES);
                return -1;
            }
            size_t ncap = cap * 2 > CPU_DUMP_MAX_BYTES + 1 ? CPU_DUMP_MAX_BYTES + 1 : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                close(fd);
                *err = str_dup("out of memory");
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *err = str_printf("read failed: %s", strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > CPU_DUMP_MAX_BYTES) {
        free(buf);
        *err = str_printf("too large for a CPUID dump (more than %u bytes)", CPU_DUMP_MAX_BYTES);
        return -1;
    }
    int rc = cpu_dump_parse(buf, n, d, err);
    free(buf);
    return rc;
}

int cpu_dump_save(const char *user_path, const struct cpu_raw_data_t *raw, const struct cpu_leaves *extras,
                  char **err)
{
    *err = NULL;
    struct stat st;
    if (stat(user_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        *err = str_dup("is a directory");
        return -1;
    }
    /* Renaming over a device or a symlink would replace it (as root, /dev/stdout itself): save
     * into regular files only, and through a symlink into the file it names. */
    char *path = NULL;
    int kind = output_target(user_path, &path);
    if (kind <= 0) {
        *err = kind == 0 ? str_dup("is not a regular file (a CPUID dump is saved to a file)")
                         : str_printf("cannot follow it: %s", strerror(errno));
        return -1;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? (slash == path ? str_dup("/") : strndup(path, (size_t)(slash - path))) : str_dup(".");
    char *tmp = dir ? str_printf("%s/.gpucheckup-cpuid.XXXXXX", dir) : NULL;
    if (!tmp) {
        free(dir);
        free(path);
        *err = str_dup("out of memory");
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *err = str_printf("cannot create a file in %s: %s", dir, strerror(errno));
        free(dir);
        free(tmp);
        free(path);
        return -1;
    }
    free(dir);
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) < 0) {
        /* Not fatal: the dump is still written, only more private than usual. */
    }

    /* libcpuid's own serializer writes its part (it takes a non-const pointer: give it a copy). */
    struct cpu_raw_data_t copy = *raw;
    int rc = -1;
    if (cpuid_serialize_raw_data(&copy, tmp) < 0) {
        *err = str_printf("libcpuid could not write the dump: %s", cpuid_error());
        goto out;
    }
    int afd = open(tmp, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (afd < 0) {
        *err = str_printf("cannot reopen the temporary file: %s", strerror(errno));
        goto out;
    }
    char *extra = str_printf("%s\n"
                             "gpucheckup.note=gpucheckup's additions below: libcpuid stops reading at the line above\n",
                             CPU_DUMP_SEPARATOR);
    if (extra && extras->have_7_1) {
        char *n = str_printf("%sgpucheckup.cpuid_7_1=%08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n", extra,
                             extras->leaf7_1[0], extras->leaf7_1[1], extras->leaf7_1[2], extras->leaf7_1[3]);
        free(extra);
        extra = n;
    }
    if (extra && extras->have_24) {
        char *n = str_printf("%sgpucheckup.cpuid_24=%08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n", extra,
                             extras->leaf24[0], extras->leaf24[1], extras->leaf24[2], extras->leaf24[3]);
        free(extra);
        extra = n;
    }
    if (extra && extras->have_hv) {
        char *n = str_printf("%sgpucheckup.cpuid_40000000=%08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n",
                             extra, extras->hv[0], extras->hv[1], extras->hv[2], extras->hv[3]);
        free(extra);
        extra = n;
    }
    if (extra && extras->have_hv2) {
        char *n = str_printf("%sgpucheckup.cpuid_40000100=%08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n",
                             extra, extras->hv2[0], extras->hv2[1], extras->hv2[2], extras->hv2[3]);
        free(extra);
        extra = n;
    }
    if (extra && extras->have_xcr0) {
        char *n = str_printf("%sgpucheckup.xcr0=%016" PRIx64 "\n", extra, extras->xcr0);
        free(extra);
        extra = n;
    }
    if (!extra || fdio_write_all(afd, extra, strlen(extra)) < 0 || fsync(afd) < 0) {
        *err = extra ? str_printf("write failed: %s", strerror(errno)) : str_dup("out of memory");
        free(extra);
        close(afd);
        goto out;
    }
    free(extra);
    if (close(afd) < 0) {
        *err = str_printf("write failed: %s", strerror(errno));
        goto out;
    }
    /* Read it back: a short write (full disk) must not leave a dump that will not load. */
    struct cpu_dump check;
    char *cerr = NULL;
    if (cpu_dump_load(tmp, &check, &cerr) < 0) {
        *err = str_printf("the written dump does not read back: %s", cerr ? cerr : "?");
        free(cerr);
        goto out;
    }
    cpu_dump_free(&check);
    if (rename(tmp, path) < 0) {
        *err = str_printf("cannot replace it: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    close(fd);
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    free(path);
    return rc;
}
