/* ldsearch_path.c: paths as the dynamic linker sees them: symlinks resolved through hostfs, ELF class checks. */
#include "ldsearch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsearch_internal.h"
#include "strutil.h"

char *ldsearch_realpath(const struct hostfs *fs, const char *path)
{
    if (!path || path[0] != '/')
        return NULL;
    char *done = strdup("");  /* canonical prefix, "" meaning "/" */
    char *todo = strdup(path); /* what is left to walk */
    int links = 0;
    if (!done || !todo)
        goto fail;
    for (;;) {
        char *p = todo;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        char *slash = strchr(p, '/');
        size_t clen = slash ? (size_t)(slash - p) : strlen(p);
        char *comp = strndup(p, clen);
        char *rest = strdup(slash ? slash : "");
        if (!comp || !rest) {
            free(comp);
            free(rest);
            goto fail;
        }
        free(todo);
        todo = rest;
        if (strcmp(comp, ".") == 0) {
            free(comp);
            continue;
        }
        if (strcmp(comp, "..") == 0) {
            char *last = strrchr(done, '/');
            if (last)
                *last = '\0';
            free(comp);
            continue;
        }
        char *cand = str_printf("%s/%s", done, comp);
        free(comp);
        if (!cand)
            goto fail;
        struct stat st;
        if (hostfs_stat(fs, cand, &st, false) != 0) {
            free(cand);
            goto fail;
        }
        if (S_ISLNK(st.st_mode)) {
            char *target = NULL;
            if (++links > LDSEARCH_MAX_LINKS || hostfs_readlink(fs, cand, &target) != 0 || !*target) {
                free(target);
                free(cand);
                goto fail;
            }
            free(cand);
            char *nt = str_printf("%s%s", target, todo);
            if (target[0] == '/')
                done[0] = '\0';
            free(target);
            if (!nt)
                goto fail;
            free(todo);
            todo = nt;
            continue;
        }
        if (todo[0] && !S_ISDIR(st.st_mode)) {
            /* a file in the middle of the path: only "/" or nothing may follow */
            const char *q = todo;
            while (*q == '/')
                q++;
            if (*q) {
                free(cand);
                goto fail;
            }
        }
        free(done);
        done = cand;
    }
    free(todo);
    if (!done[0]) {
        free(done);
        return strdup("/");
    }
    return done;
fail:
    free(done);
    free(todo);
    return NULL;
}

char *ldsearch_dir_realpath(const struct hostfs *fs, const char *path)
{
    if (!path || path[0] != '/')
        return str_dup(path);
    const char *slash = strrchr(path, '/');
    char *dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return NULL;
    char *rdir = ldsearch_realpath(fs, *dir ? dir : "/");
    free(dir);
    if (!rdir)
        return strdup(path);
    char *r = ldsearch_join(rdir, slash + 1);
    free(rdir);
    return r;
}

static unsigned ldsearch_native_machine(void)
{
#if defined(__x86_64__)
    return EM_X86_64;
#elif defined(__aarch64__)
    return EM_AARCH64;
#elif defined(__i386__)
    return EM_386;
#elif defined(__powerpc64__)
    return EM_PPC64;
#elif defined(__s390x__)
    return EM_S390;
#elif defined(__riscv)
    return EM_RISCV;
#elif defined(__arm__)
    return EM_ARM;
#else
    return 0;
#endif
}

int ldsearch_elf_parse(const unsigned char *buf, size_t len, struct ldsearch_elf *out)
{
    /* e_ident (16 bytes), e_type (2), e_machine (2): the same offsets in both classes (elf.h). */
    if (!buf || len < 20 || memcmp(buf, ELFMAG, SELFMAG) != 0)
        return 0;
    if (buf[EI_CLASS] != ELFCLASS32 && buf[EI_CLASS] != ELFCLASS64)
        return 0;
    if (buf[EI_DATA] != ELFDATA2LSB && buf[EI_DATA] != ELFDATA2MSB)
        return 0;
    out->bits = buf[EI_CLASS] == ELFCLASS64 ? 64 : 32;
    out->big_endian = buf[EI_DATA] == ELFDATA2MSB;
    out->machine = out->big_endian ? ((unsigned)buf[18] << 8) | buf[19] : ((unsigned)buf[19] << 8) | buf[18];
    return 1;
}

void ldsearch_elf_host(struct ldsearch_elf *out)
{
    out->bits = sizeof(void *) == 8 ? 64 : 32;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    out->big_endian = false;
#else
    out->big_endian = true;
#endif
    out->machine = ldsearch_native_machine();
}

bool ldsearch_elf_native(const struct ldsearch_elf *e)
{
    struct ldsearch_elf h;
    ldsearch_elf_host(&h);
    return e->bits == h.bits && e->big_endian == h.big_endian && (!h.machine || e->machine == h.machine);
}

/* e_machine values (elf.h) as readelf names them, for the machines Linux distributions ship. */
static const struct {
    unsigned machine;
    const char *name;
} ldsearch_machines[] = {
    {EM_386, "Intel 80386"}, {EM_X86_64, "x86-64"},     {EM_AARCH64, "AArch64"},   {EM_ARM, "ARM"},
    {EM_PPC, "PowerPC"},     {EM_PPC64, "PowerPC64"},   {EM_S390, "IBM S/390"},    {EM_RISCV, "RISC-V"},
    {EM_MIPS, "MIPS"},       {EM_SPARCV9, "SPARC v9"},  {EM_IA_64, "IA-64"},       {258, "LoongArch"},
};

const char *ldsearch_elf_describe(const struct ldsearch_elf *e, char *buf, size_t size)
{
    const char *name = NULL;
    for (size_t i = 0; i < sizeof(ldsearch_machines) / sizeof(ldsearch_machines[0]); i++)
        if (ldsearch_machines[i].machine == e->machine)
            name = ldsearch_machines[i].name;
    if (name)
        snprintf(buf, size, "%s, %d-bit%s", name, e->bits, e->big_endian ? ", big-endian" : "");
    else
        snprintf(buf, size, "ELF machine %u, %d-bit%s", e->machine, e->bits, e->big_endian ? ", big-endian" : "");
    return buf;
}

int ldsearch_elf_read(const struct hostfs *fs, const char *path, struct ldsearch_elf *out)
{
    int fd = hostfs_open_file(fs, path);
    if (fd == -EINVAL || fd == -EISDIR)
        return 0; /* not a regular file: not a library */
    if (fd < 0)
        return fd;
    unsigned char h[20];
    ssize_t n = hostfs_pread(fd, h, sizeof(h), 0);
    close(fd);
    return n > 0 ? ldsearch_elf_parse(h, (size_t)n, out) : 0;
}

int ldsearch_elf_loadable(const struct hostfs *fs, const char *path)
{
    struct ldsearch_elf e;
    int rc = ldsearch_elf_read(fs, path, &e);
    return rc == 1 ? ldsearch_elf_native(&e) : rc;
}

bool ldsearch_exists(const struct hostfs *fs, const char *path)
{
    struct stat st;
    return hostfs_stat(fs, path, &st, true) == 0;
}

char *ldsearch_join(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    return str_printf("%s%s%s", dir, (dl > 0 && dir[dl - 1] == '/') ? "" : "/", name);
}
