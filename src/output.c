/* output.c: writing the report: to stdout, or atomically to a file (temp file, fsync, rename). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "strutil.h"
#include "writer.h"

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
    char *copy = strdup(path);
    if (!copy) {
        *err = str_dup("out of memory");
        return -1;
    }
    const char *dir = dirname(copy);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        *err = str_printf("--output %s: is a directory", path);
        free(copy);
        return -1;
    }
    char *tmp = str_printf("%s/.gpucheckup.XXXXXX", dir);
    free(copy);
    if (!tmp) {
        *err = str_dup("out of memory");
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        *err = str_printf("--output %s: cannot create a file in its directory: %s", path, strerror(errno));
        free(tmp);
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
        return -1;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        *err = str_printf("--output %s: cannot replace it: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}
