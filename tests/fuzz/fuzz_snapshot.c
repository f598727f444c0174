/* fuzz_snapshot.c: libFuzzer target for the snapshot reader (--root FILE.tar.gz, src/snapshot/snapshot_read.c). */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "snapshot.h"

static char fuzz_dir[64];
static char fuzz_input[128];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* a private TMPDIR: what the reader unpacks lands there, and must be gone after snapshot_close */
    snprintf(fuzz_dir, sizeof(fuzz_dir), "/tmp/gc-fuzz-snapshot-XXXXXX");
    if (!mkdtemp(fuzz_dir))
        abort();
    setenv("TMPDIR", fuzz_dir, 1);
    snprintf(fuzz_input, sizeof(fuzz_input), "%s/input.tar.gz", fuzz_dir);
    return 0;
}

/* Entries of the private TMPDIR besides the input. */
static int fuzz_leftovers(void)
{
    DIR *d = opendir(fuzz_dir);
    if (!d)
        abort();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "input.tar.gz"))
            n++;
    closedir(d);
    return n;
}

/* Nothing unpacked is a device, FIFO, socket or hard-linked file. */
static int fuzz_check_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)p;
    (void)flag;
    (void)ftw;
    if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode))
        abort();
    if (S_ISREG(st->st_mode) && (st->st_nlink != 1 || (st->st_mode & (S_ISUID | S_ISGID))))
        abort();
    if (S_ISREG(st->st_mode) && (uint64_t)st->st_size > SNAPSHOT_MEMBER_MAX)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = open(fuzz_input, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    close(fd);
    struct snapshot s;
    char *err = NULL;
    int rc = snapshot_open(fuzz_input, &s, &err);
    if (rc == 0) /* a file is a snapshot or an error, never "a plain directory" */
        abort();
    if (rc == -2) /* libarchive could not be loaded: nothing of the input was read */
        abort();
    if (rc < 0) {
        /* the message names the file, and says something after it */
        if (!err || !strstr(err, fuzz_input) || strlen(err) <= strlen(fuzz_input) + 10)
            abort();
        free(err);
        if (fuzz_leftovers() != 0) /* nothing left behind on failure */
            abort();
        return 0;
    }
    if (err || !s.tree || !s.report || !s.manifest || !s.tmpdir || strncmp(s.tmpdir, fuzz_dir, strlen(fuzz_dir)) != 0)
        abort();
    struct stat st;
    if (lstat(s.tree, &st) < 0 || !S_ISDIR(st.st_mode))
        abort();
    nftw(s.tmpdir, fuzz_check_one, 16, FTW_PHYS);
    snapshot_close(&s);
    if (fuzz_leftovers() != 0)
        abort();
    return 0;
}
