/* ldsearch_path.c: paths as the dynamic linker sees them: symlinks resolved through hostfs, ELF class checks. */
#include "ldsearch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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

static int ldsearch_native_machine(void)
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

int ldsearch_elf_loadable(const struct hostfs *fs, const char *path)
{
    int fd = hostfs_openat(fs, path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    unsigned char h[20];
    ssize_t n = read(fd, h, sizeof(h));
    close(fd);
    if (n < (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
        return 0;
    if (h[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (h[EI_DATA] != ELFDATA2LSB)
        return 0;
    unsigned machine = (unsigned)h[18] | ((unsigned)h[19] << 8);
#else
    if (h[EI_DATA] != ELFDATA2MSB)
        return 0;
    unsigned machine = ((unsigned)h[18] << 8) | (unsigned)h[19];
#endif
    int native = ldsearch_native_machine();
    if (native && machine != (unsigned)native)
        return 0;
    return 1;
}

bool ldsearch_exists(const struct hostfs *fs, const char *path)
{
    struct stat st;
    return hostfs_stat(fs, path, &st, true) == 0;
}

