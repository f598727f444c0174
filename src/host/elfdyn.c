/* elfdyn.c: an ELF object's dynamic section read in bounded pieces (header, program headers, PT_DYNAMIC, its strings). */
#include "elfdyn.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The reader's state: the source, the file's class and byte order, its PT_LOAD segments. */
struct elfdyn_src {
    elfdyn_read_fn rd;
    void *arg;
    bool is64, big;
    unsigned char *ph; /* the program headers */
    size_t phnum, phent;
};

static uint64_t elfdyn_get(const struct elfdyn_src *s, const unsigned char *p, size_t width)
{
    uint64_t v = 0;
    for (size_t i = 0; i < width; i++)
        v |= (uint64_t)p[s->big ? width - 1 - i : i] << (8 * i);
    return v;
}

/* Exactly LEN bytes at OFF, or -ENOEXEC (the file ends before them) / RD's -errno. */
static int elfdyn_pread(const struct elfdyn_src *s, uint64_t off, void *buf, size_t len)
{
    ssize_t n = s->rd(s->arg, off, buf, len);
    if (n < 0)
        return (int)n;
    return (size_t)n == len ? 0 : -ENOEXEC;
}

/* Program header I's type, file offset, address and file size. */
static void elfdyn_phdr(const struct elfdyn_src *s, size_t i, uint32_t *type, uint64_t *off, uint64_t *vaddr,
                        uint64_t *filesz)
{
    const unsigned char *p = s->ph + i * s->phent;
    *type = (uint32_t)elfdyn_get(s, p, 4);
    if (s->is64) {
        *off = elfdyn_get(s, p + 8, 8);
        *vaddr = elfdyn_get(s, p + 16, 8);
        *filesz = elfdyn_get(s, p + 32, 8);
    } else {
        *off = elfdyn_get(s, p + 4, 4);
        *vaddr = elfdyn_get(s, p + 8, 4);
        *filesz = elfdyn_get(s, p + 16, 4);
    }
}

/* The file offset of address ADDR and the file bytes left in its PT_LOAD segment from there, or -ENOEXEC. */
static int elfdyn_addr_off(const struct elfdyn_src *s, uint64_t addr, uint64_t *off, uint64_t *avail)
{
    for (size_t i = 0; i < s->phnum; i++) {
        uint32_t type;
        uint64_t o, va, fs;
        elfdyn_phdr(s, i, &type, &o, &va, &fs);
        if (type != PT_LOAD || addr < va || addr - va >= fs || o > UINT64_MAX - fs)
            continue;
        *off = o + (addr - va);
        *avail = fs - (addr - va);
        return 0;
    }
    return -ENOEXEC;
}

/* The string at VAL in the string table at file offset STR_OFF (STR_AVAIL bytes there): a heap copy in *OUT. */
static int elfdyn_string(const struct elfdyn_src *s, uint64_t str_off, uint64_t str_avail, uint64_t val, char **out)
{
    if (val >= str_avail || str_off > UINT64_MAX - val)
        return -ENOEXEC;
    uint64_t left = str_avail - val;
    size_t len = left < ELFDYN_MAX_STR ? (size_t)left : ELFDYN_MAX_STR;
    char *buf = malloc(len + 1);
    if (!buf)
        return -ENOMEM;
    ssize_t n = s->rd(s->arg, str_off + val, buf, len);
    if (n < 0) {
        free(buf);
        return (int)n;
    }
    if (!memchr(buf, '\0', (size_t)n)) { /* no end within the table, the file or our bound */
        free(buf);
        return -ENOEXEC;
    }
    *out = buf;
    return 0;
}

/* The ELF header: class, byte order and the program headers (read into S->ph). */
static int elfdyn_header(struct elfdyn_src *s)
{
    unsigned char h[64];
    ssize_t n = s->rd(s->arg, 0, h, sizeof(h));
    if (n < 0)
        return (int)n;
    if (n < 52 || memcmp(h, ELFMAG, SELFMAG) != 0 || (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64) ||
        (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB))
        return -ENOEXEC;
    s->is64 = h[EI_CLASS] == ELFCLASS64;
    s->big = h[EI_DATA] == ELFDATA2MSB;
    if (s->is64 && n < 64)
        return -ENOEXEC;
    uint64_t phoff = s->is64 ? elfdyn_get(s, h + 32, 8) : elfdyn_get(s, h + 28, 4);
    s->phent = (size_t)elfdyn_get(s, h + (s->is64 ? 54 : 42), 2);
    s->phnum = (size_t)elfdyn_get(s, h + (s->is64 ? 56 : 44), 2);
    size_t min_ent = s->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    if (s->phnum == 0 || s->phnum > ELFDYN_MAX_PHNUM || s->phent < min_ent || s->phent > 4 * min_ent)
        return -ENOEXEC;
    if (!(s->ph = malloc(s->phnum * s->phent)))
        return -ENOMEM;
    return elfdyn_pread(s, phoff, s->ph, s->phnum * s->phent);
}

/* The dynamic entries that name strings: where they point, gathered before the string table is known. */
struct elfdyn_refs {
    uint64_t needed[ELFDYN_MAX_NEEDED];
    size_t n_needed;
    uint64_t strtab, strsz, soname, rpath, runpath;
    bool have_strtab, have_strsz, have_soname, have_rpath, have_runpath;
};

static void elfdyn_entry(struct elfdyn_refs *r, uint64_t tag, uint64_t val)
{
    switch (tag) {
    case DT_NEEDED:
        if (r->n_needed < ELFDYN_MAX_NEEDED)
            r->needed[r->n_needed++] = val;
        break;
    case DT_STRTAB: r->strtab = val; r->have_strtab = true; break;
    case DT_STRSZ: r->strsz = val; r->have_strsz = true; break;
    case DT_SONAME: r->soname = val; r->have_soname = true; break;
    case DT_RPATH: r->rpath = val; r->have_rpath = true; break;
    case DT_RUNPATH: r->runpath = val; r->have_runpath = true; break;
    default: break;
    }
}

/* Read PT_DYNAMIC (at OFF, FILESZ bytes) into R. */
static int elfdyn_dynamic(const struct elfdyn_src *s, uint64_t off, uint64_t filesz, struct elfdyn_refs *r)
{
    size_t w = s->is64 ? 8 : 4, len = filesz < ELFDYN_MAX_DYN ? (size_t)filesz : ELFDYN_MAX_DYN;
    len -= len % (2 * w);
    unsigned char *d = malloc(len ? len : 1);
    if (!d)
        return -ENOMEM;
    int rc = elfdyn_pread(s, off, d, len);
    for (size_t i = 0; rc == 0 && i < len; i += 2 * w) {
        uint64_t tag = elfdyn_get(s, d + i, w);
        if (tag == DT_NULL)
            break;
        elfdyn_entry(r, tag, elfdyn_get(s, d + i + w, w));
    }
    free(d);
    return rc;
}

static int elfdyn_strings(const struct elfdyn_src *s, const struct elfdyn_refs *r, struct elfdyn *out)
{
    if (!r->n_needed && !r->have_soname && !r->have_rpath && !r->have_runpath)
        return 0;
    uint64_t off, avail;
    if (!r->have_strtab || elfdyn_addr_off(s, r->strtab, &off, &avail) != 0)
        return -ENOEXEC;
    if (r->have_strsz && r->strsz < avail)
        avail = r->strsz;
    if (!(out->needed = calloc(r->n_needed ? r->n_needed : 1, sizeof(*out->needed))))
        return -ENOMEM;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->n_needed; i++) {
        rc = elfdyn_string(s, off, avail, r->needed[i], &out->needed[i]);
        if (rc == 0) {
            out->n_needed++;
            if (!out->needed[i][0]) /* an empty name: no loader accepts it */
                rc = -ENOEXEC;
        }
    }
    if (rc == 0 && r->have_soname)
        rc = elfdyn_string(s, off, avail, r->soname, &out->soname);
    if (rc == 0 && r->have_rpath)
        rc = elfdyn_string(s, off, avail, r->rpath, &out->rpath);
    if (rc == 0 && r->have_runpath)
        rc = elfdyn_string(s, off, avail, r->runpath, &out->runpath);
    return rc;
}

int elfdyn_read(elfdyn_read_fn rd, void *arg, struct elfdyn *out)
{
    memset(out, 0, sizeof(*out));
    struct elfdyn_src s = {.rd = rd, .arg = arg};
    int rc = elfdyn_header(&s);
    struct elfdyn_refs *r = rc == 0 ? calloc(1, sizeof(*r)) : NULL;
    if (rc == 0 && !r)
        rc = -ENOMEM;
    bool found = false;
    for (size_t i = 0; rc == 0 && i < s.phnum && !found; i++) {
        uint32_t type;
        uint64_t off, vaddr, filesz;
        elfdyn_phdr(&s, i, &type, &off, &vaddr, &filesz);
        if (type == PT_DYNAMIC) {
            found = true;
            rc = elfdyn_dynamic(&s, off, filesz, r);
        }
    }
    if (rc == 0 && found)
        rc = elfdyn_strings(&s, r, out);
    free(r);
    free(s.ph);
    return rc;
}

struct elfdyn_mem {
    const unsigned char *buf;
    size_t len;
};

static ssize_t elfdyn_mem_read(void *arg, uint64_t off, void *buf, size_t len)
{
    const struct elfdyn_mem *m = arg;
    if (off >= m->len)
        return 0;
    size_t n = m->len - (size_t)off < len ? m->len - (size_t)off : len;
    memcpy(buf, m->buf + off, n);
    return (ssize_t)n;
}

int elfdyn_parse(const unsigned char *buf, size_t len, struct elfdyn *out)
{
    struct elfdyn_mem m = {.buf = buf, .len = len};
    return elfdyn_read(elfdyn_mem_read, &m, out);
}

static ssize_t elfdyn_fd_read(void *arg, uint64_t off, void *buf, size_t len)
{
    int fd = *(const int *)arg;
    if (off > (uint64_t)INT64_MAX - len)
        return 0;
    size_t done = 0;
    while (done < len) {
        ssize_t n = hostfs_pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

int elfdyn_read_file(const struct hostfs *fs, const char *path, struct elfdyn *out)
{
    memset(out, 0, sizeof(*out));
    int fd = hostfs_open_file(fs, path);
    if (fd == -EINVAL || fd == -EISDIR)
        return -ENOEXEC; /* not a regular file */
    if (fd < 0)
        return fd;
    int rc = elfdyn_read(elfdyn_fd_read, &fd, out);
    close(fd);
    return rc;
}

void elfdyn_free(struct elfdyn *d)
{
    for (size_t i = 0; i < d->n_needed; i++)
        free(d->needed[i]);
    free(d->needed);
    free(d->soname);
    free(d->rpath);
    free(d->runpath);
    memset(d, 0, sizeof(*d));
}
