/* cpu_dump.c: raw CPUID dumps in libcpuid's text format (plus gpucheckup's extras): strict reading, atomic writing. */
#include "cpu_dump.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strutil.h"
#include "writer.h"
#include "fdio.h"

/* The arrays of libcpuid's raw struct, by the name its serializer writes. */
struct cpu_dump_array {
    const char *name;
    size_t offset; /* of the uint32_t[N][4] array in struct cpu_raw_data_t */
    unsigned n;
};

#define CPU_DUMP_ARRAY(field, count) {#field, offsetof(struct cpu_raw_data_t, field), count}
static const struct cpu_dump_array cpu_dump_arrays[] = {
    CPU_DUMP_ARRAY(basic_cpuid, MAX_CPUID_LEVEL),
    CPU_DUMP_ARRAY(ext_cpuid, MAX_EXT_CPUID_LEVEL),
    CPU_DUMP_ARRAY(intel_fn4, MAX_INTELFN4_LEVEL),
    CPU_DUMP_ARRAY(intel_fn11, MAX_INTELFN11_LEVEL),
    CPU_DUMP_ARRAY(intel_fn12h, MAX_INTELFN12H_LEVEL),
    CPU_DUMP_ARRAY(intel_fn14h, MAX_INTELFN14H_LEVEL),
    CPU_DUMP_ARRAY(amd_fn8000001dh, MAX_AMDFN8000001DH_LEVEL),
};

void cpu_dump_free(struct cpu_dump *d)
{
    free(d->raw);
    d->raw = NULL;
    d->n_raw = 0;
}

void cpu_leaves_from_raw(const struct cpu_raw_data_t *raw, struct cpu_leaves *l)
{
    memset(l, 0, sizeof(*l));
    _Static_assert(MAX_CPUID_LEVEL == 32 && MAX_EXT_CPUID_LEVEL == 32, "libcpuid raw layout changed");
    memcpy(l->basic, raw->basic_cpuid, sizeof(l->basic));
    memcpy(l->ext, raw->ext_cpuid, sizeof(l->ext));
}

/* The N bytes at S as a new string (heap). Not strndup: the dump text need not be NUL-terminated,
 * and a checker (ASan's strict_string_checks) makes strndup read on to a NUL. */
static char *cpu_dump_copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* An excerpt of LINE for a message (heap). */
static char *cpu_dump_excerpt(const char *line, size_t len)
{
    size_t n = len > 40 ? 40 : len;
    char *s = str_printf("%.*s%s", (int)n, line, len > n ? "..." : "");
    return s ? str_sanitize(s) : NULL;
}

/* Parse up to 4 hex words separated by blanks, then the end of S. Returns how many, or -1 on junk. */
static int cpu_dump_hex_words(const char *s, uint64_t *out, int max, unsigned max_digits)
{
    int n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            return n;
        if (n == max)
            return -1;
        unsigned digits = 0;
        uint64_t v = 0;
        while (isxdigit((unsigned char)*s)) {
            if (++digits > max_digits)
                return -1;
            int c = tolower((unsigned char)*s);
            v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
            s++;
        }
        if (digits == 0 || (*s != '\0' && *s != ' ' && *s != '\t'))
            return -1;
        out[n++] = v;
    }
}

/* "name[index]=rest": split LINE (NUL-terminated, modified). Returns 0 or -1. */
static int cpu_dump_split_indexed(char *line, char **name, unsigned long *index, char **rest)
{
    char *p = line;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')
        p++;
    if (p == line || *p != '[')
        return -1;
    *p++ = '\0';
    char *digits = p;
    while (isdigit((unsigned char)*p))
        p++;
    if (p == digits || p - digits > 6 || p[0] != ']' || p[1] != '=')
        return -1;
    p[0] = '\0';
    *name = line;
    *index = strtoul(digits, NULL, 10);
    *rest = p + 2;
    return 0;
}

/* "name=rest" with a lower-case identifier (dots allowed). Returns 0 or -1. */
static int cpu_dump_split_plain(char *line, char **name, char **rest)
{
    char *p = line;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_' || *p == '.')
        p++;
    if (p == line || *p != '=')
        return -1;
    *p = '\0';
    *name = line;
    *rest = p + 1;
    return 0;
}

static int cpu_dump_grow(struct cpu_dump *d, size_t n, bool **seen0, bool **seen1)
{
    if (n <= d->n_raw)
        return 0;
    bool *n0 = realloc(*seen0, n * sizeof(bool));
    if (!n0)
        return -1;
    *seen0 = n0;
    bool *n1 = realloc(*seen1, n * sizeof(bool));
    if (!n1)
        return -1;
    *seen1 = n1;
    struct cpu_raw_data_t *nr = realloc(d->raw, n * sizeof(*nr));
    if (!nr)
        return -1;
    d->raw = nr;
    /* libcpuid 0.6 leaves fields a dump does not name untouched: start from zeros. */
    memset(&d->raw[d->n_raw], 0, (n - d->n_raw) * sizeof(*nr));
    memset(*seen0 + d->n_raw, 0, (n - d->n_raw) * sizeof(bool));
    memset(*seen1 + d->n_raw, 0, (n - d->n_raw) * sizeof(bool));
    d->n_raw = n;
    return 0;
}

/* One line of gpucheckup's extras (after the separator). Unknown lines are ignored (libcpuid's own
 * test files keep expected values there). Returns 0, or -1 with *ERR. */
static int cpu_dump_extra(struct cpu_dump *d, char *line, unsigned lineno, char **err)
{
    char *name, *rest;
    if (!str_starts_with(line, "gpucheckup.") || cpu_dump_split_plain(line, &name, &rest) < 0)
        return 0;
    uint64_t w[4];
    int n;
    uint32_t *dst = NULL;
    bool *have = NULL;
    if (strcmp(name, "gpucheckup.cpuid_7_1") == 0)
        dst = d->extras.leaf7_1, have = &d->extras.have_7_1;
    else if (strcmp(name, "gpucheckup.cpuid_40000000") == 0)
        dst = d->extras.hv, have = &d->extras.have_hv;
    else if (strcmp(name, "gpucheckup.cpuid_40000100") == 0)
        dst = d->extras.hv2, have = &d->extras.have_hv2;
    if (dst) {
        n = cpu_dump_hex_words(rest, w, 4, 8);
        if (n != 4) {
            *err = str_printf("line %u: %s needs four 32-bit hex words", lineno, name);
            return -1;
        }
        for (int i = 0; i < 4; i++)
            dst[i] = (uint32_t)w[i];
        *have = true;
    } else if (strcmp(name, "gpucheckup.xcr0") == 0) {
        n = cpu_dump_hex_words(rest, w, 1, 16);
        if (n != 1) {
            *err = str_printf("line %u: gpucheckup.xcr0 needs one 64-bit hex value", lineno);
            return -1;
        }
        d->extras.xcr0 = w[0];
        d->extras.have_xcr0 = true;
    }
    return 0;
}

int cpu_dump_parse(const char *text, size_t len, struct cpu_dump *d, char **err)
{
    memset(d, 0, sizeof(*d));
    *err = NULL;
    if (len == 0) {
        *err = str_dup("the file is empty");
        return -1;
    }
    if (memchr(text, '\0', len)) {
        *err = str_dup("not a text file (it contains NUL bytes), so not a libcpuid raw CPUID dump");
        return -1;
    }
    bool *seen0 = NULL, *seen1 = NULL; /* per CPU: basic_cpuid[0] and [1] lines seen */
    bool trailer = false, arm = false;
    long cur = -1;
    unsigned lineno = 0;
    const char *p = text, *end = text + len;
    char *line = NULL;
    int rc = -1;

    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        const char *lstart = p;
        free(line);
        line = cpu_dump_copy(p, ll);
        p = nl ? nl + 1 : end;
        if (!line) {
            *err = str_dup("out of memory");
            goto out;
        }
        str_trim(line); /* also drops a CR from a dump that went through Windows */
        if (line[0] == '\0')
            continue;
        if (trailer) {
            if (cpu_dump_extra(d, line, lineno, err) < 0)
                goto out;
            continue;
        }
        if (strspn(line, "-") == strlen(line) && strlen(line) >= 10) {
            trailer = true;
            continue;
        }
        if (str_starts_with(line, "version=")) {
            snprintf(d->version, sizeof(d->version), "%s", line + 8);
            str_sanitize(d->version);
            continue;
        }
        if (line[0] == '_') {
            const char *tag = strstr(line, "Logical CPU #");
            char *stop = NULL;
            unsigned long idx = tag ? strtoul(tag + 13, &stop, 10) : 0;
            if (!tag || stop == tag + 13 || strspn(line, "_") < 3) {
                char *ex = cpu_dump_excerpt(line, strlen(line));
                *err = str_printf("line %u is not part of a libcpuid raw CPUID dump: \"%s\"", lineno, ex ? ex : "");
                free(ex);
                goto out;
            }
            if (idx >= CPU_DUMP_MAX_CPUS) {
                *err = str_printf("line %u: logical CPU #%lu: more than %u CPUs", lineno, idx, CPU_DUMP_MAX_CPUS);
                goto out;
            }
            if (cpu_dump_grow(d, idx + 1, &seen0, &seen1) < 0) {
                *err = str_dup("out of memory");
                goto out;
            }
            cur = (long)idx;
            d->multi = true;
            continue;
        }
        char *name, *rest;
        unsigned long index;
        uint64_t w[4];
        if (cpu_dump_split_indexed(line, &name, &index, &rest) == 0 && cpu_dump_hex_words(rest, w, 4, 8) == 4) {
            if (cur < 0) {
                if (cpu_dump_grow(d, 1, &seen0, &seen1) < 0) {
                    *err = str_dup("out of memory");
                    goto out;
                }
                cur = 0;
            }
            const struct cpu_dump_array *a = NULL;
            for (size_t i = 0; i < sizeof(cpu_dump_arrays) / sizeof(cpu_dump_arrays[0]); i++)
                if (strcmp(cpu_dump_arrays[i].name, name) == 0)
                    a = &cpu_dump_arrays[i];
            if (!a || index >= a->n) {
                d->ignored++; /* a leaf a newer libcpuid records */
                continue;
            }
            uint32_t(*regs)[4] = (uint32_t(*)[4])((char *)&d->raw[cur] + a->offset);
            for (int i = 0; i < 4; i++)
                regs[index][i] = (uint32_t)w[i];
            if (a->offset == offsetof(struct cpu_raw_data_t, basic_cpuid) && index <= 1)
                (index == 0 ? seen0 : seen1)[cur] = true;
            continue;
        }
        /* Restore the line for the next shapes (split_indexed wrote NULs into it). */
        free(line);
        line = cpu_dump_copy(lstart, ll);
        if (!line) {
            *err = str_dup("out of memory");
            goto out;
        }
        str_trim(line);
        if (cpu_dump_split_plain(line, &name, &rest) == 0 && cpu_dump_hex_words(rest, w, 1, 16) == 1) {
            if (str_starts_with(name, "arm_"))
                arm = true; /* libcpuid >= 0.7 dumps ARM system registers */
            d->ignored++;
            continue;
        }
        char *ex = cpu_dump_excerpt(line, strlen(line));
        *err = str_printf("line %u is not part of a libcpuid raw CPUID dump: \"%s\"", lineno, ex ? ex : "");
        free(ex);
        goto out;
    }

    if (d->n_raw == 0 || !seen0[0] || !seen1[0]) {
        *err = str_printf("decodes to nothing: no basic_cpuid[0] and basic_cpuid[1] lines%s",
                          arm ? " (an ARM dump: gpucheckup decodes x86 CPUID dumps only)" : "");
        goto out;
    }
    for (size_t i = 0; i < d->n_raw; i++) {
        if (!seen0[i] || !seen1[i]) {
            *err = str_printf("decodes to nothing for logical CPU #%zu: its basic_cpuid[0] and [1] lines are missing", i);
            goto out;
        }
    }
    /* Leaf 0 must name a vendor and at least leaf 1. */
    const uint32_t *l0 = d->raw[0].basic_cpuid[0];
    char vendor[13];
    memcpy(vendor, &l0[CPU_EBX], 4);
    memcpy(vendor + 4, &l0[CPU_EDX], 4);
    memcpy(vendor + 8, &l0[CPU_ECX], 4);
    vendor[12] = '\0';
    bool printable = true;
    for (int i = 0; i < 12; i++)
        if ((unsigned char)vendor[i] < 0x20 || (unsigned char)vendor[i] > 0x7e)
            printable = false;
    if (l0[CPU_EAX] < 1 || !printable) {
        *err = str_printf("decodes to nothing: leaf 0 (basic_cpuid[0]) has %s", l0[CPU_EAX] < 1 ? "no leaf 1 beyond it"
                                                                                                 : "no vendor string");
        goto out;
    }
    rc = 0;
out:
    free(line);
    free(seen0);
    free(seen1);
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
        *err = str_printf("cannot open it: %s", strerror(errno));
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
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        *err = str_dup("is not a regular file or a pipe");
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
