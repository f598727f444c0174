/* output.c: writing the report: to stdout, or atomically to a file (temp file, fsync, rename). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strutil.h"
#include "writer.h"
#include "fdio.h"

int output_target(const char *path, char **target)
{
    *target = NULL;
    struct stat st, lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        /* a loop or a link to nowhere: refuse rather than replace the link itself */
        if (stat(path, &st) < 0)
            return -1;
        if (S_ISREG(st.st_mode)) {
            *target = realpath(path, NULL);
            return *target ? 1 : -1;
        }
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return 0;
    *target = strdup(path);
    return *target ? 1 : -1;
}

/* Write to a device, FIFO or socket in place (no temp file, no rename). */
static int output_in_place(const char *path, const char *buf, size_t len, char **err)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        *err = str_printf("--output %s: cannot open it: %s", path, strerror(errno));
        return -1;
    }
    if (fdio_write_all(fd, buf, len) < 0) {
        *err = str_printf("--output %s: write failed: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

int output_emit(const char *path, const char *buf, size_t len, char **err)
{
    *err = NULL;
    if (!path || strcmp(path, "-") == 0) {
        if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
            *err = str_printf("cannot write to standard output: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        *err = str_printf("--output %s: is a directory", path);
        return -1;
    }
    char *target = NULL;
    int kind = output_target(path, &target);
    if (kind == 0)
        return output_in_place(path, buf, len, err);
    if (kind < 0) {
        *err = str_printf("--output %s: %s", path, strerror(errno));
        return -1;
    }
    char *copy = strdup(target);
    if (!copy) {
        free(target);
        *err = str_dup("out of memory");
        return -1;
    }
    const char *dir = dirname(copy);
    char *tmp = str_printf("%s/.gpucheckup.XXXXXX", dir);
    free(copy);
    if (!tmp) {
        free(target);
        *err = str_dup("out of memory");
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *err = str_printf("--output %s: cannot create a file in its directory: %s", path, strerror(errno));
        free(tmp);
        free(target);
        return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    if (fdio_write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
        *err = str_printf("--output %s: write failed: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        free(target);
        return -1;
    }
    close(fd);
    if (rename(tmp, target) < 0) {
        *err = str_printf("--output %s: cannot replace it: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        free(target);
        return -1;
    }
    free(tmp);
    free(target);
    return 0;
}
