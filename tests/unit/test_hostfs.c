/* test_hostfs.c: unit tests of the host filesystem module on a tree made under a temp dir. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "hostfs.h"

static char tree[256];

static void put(const char *rel, const char *content)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tree, rel);
    /* mkdir -p of the parent */
    for (char *p = path + strlen(tree) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static void link_at(const char *target, const char *rel)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tree, rel);
    assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tree, sizeof(tree), "/tmp/gc-hostfs-XXXXXX");
    assert_non_null(mkdtemp(tree));
    put("sys/devices/pci0000:00/0000:00:02.0/vendor", "0x10de\n");
    put("sys/devices/pci0000:00/0000:00:02.0/class", "0x030200\n");
    put("sys/devices/pci0000:00/0000:00:02.0/label", "  spaced\tvalue \n");
    put("sys/devices/pci0000:00/0000:00:02.0/garbage", "zz\n");
    put("sys/bus/pci/drivers/.keep", "");
    put("sys/bus/pci/devices/.keep", "");
    link_at("../../../devices/pci0000:00/0000:00:02.0", "sys/bus/pci/devices/0000:00:02.0");
    /* a captured driver link whose target was not captured */
    link_at("../../../bus/pci/drivers/nvidia", "sys/devices/pci0000:00/0000:00:02.0/driver");
    /* an absolute link, as a careless capture may contain: must stay inside the root */
    link_at("/etc/secret", "sys/abs");
    put("etc/secret", "inside\n");
    link_at("loop2", "sys/loop1");
    link_at("loop1", "sys/loop2");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_open_errors(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, "/nonexistent-gpucheckup"), -ENOENT);
    char file[300];
    snprintf(file, sizeof(file), "%s/etc/secret", tree);
    assert_int_equal(hostfs_open(&fs, file), -ENOTDIR);
    assert_int_equal(hostfs_open(&fs, NULL), 0);
    assert_true(fs.live);
    hostfs_close(&fs);
}

static void test_reads_through_links(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    assert_false(fs.live);
    uint64_t v = 0;
    assert_int_equal(hostfs_read_u64(&fs, "/sys/bus/pci/devices/0000:00:02.0/vendor", &v), 0);
    assert_int_equal(v, 0x10de);
    assert_int_equal(hostfs_read_u64(&fs, "/sys/devices/pci0000:00/0000:00:02.0/garbage", &v), -EINVAL);
    char *s = NULL;
    assert_int_equal(hostfs_read_attr(&fs, "/sys/devices/pci0000:00/0000:00:02.0/label", &s), 0);
    assert_string_equal(s, "spaced\tvalue");
    free(s);
    assert_int_equal(hostfs_read_attr(&fs, "/sys/nothing/here", &s), -ENOENT);
    assert_null(s);
    hostfs_close(&fs);
}

/* Renames elsewhere on the system while reads walk "../" links in a tree: openat2's RESOLVE_IN_ROOT answers
 * EAGAIN on such a race, which hostfs retries (CI saw a pci attribute read fail now and then). */
static volatile int renamer_stop;

static void *renamer(void *arg)
{
    const char *dir = arg;
    char a[300], b[300];
    snprintf(a, sizeof(a), "%s/ra", dir);
    snprintf(b, sizeof(b), "%s/rb", dir);
    FILE *f = fopen(a, "w");
    if (f)
        fclose(f);
    while (!renamer_stop) {
        if (rename(a, b) == 0)
            rename(b, a);
    }
    return NULL;
}

static void test_reads_survive_concurrent_renames(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    pthread_t t;
    renamer_stop = 0;
    assert_int_equal(pthread_create(&t, NULL, renamer, tree), 0);
    int failed = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t v = 0;
        if (hostfs_read_u64(&fs, "/sys/bus/pci/devices/0000:00:02.0/vendor", &v) != 0 || v != 0x10de)
            failed++;
    }
    renamer_stop = 1;
    pthread_join(t, NULL);
    hostfs_close(&fs);
    assert_int_equal(failed, 0);
}

static void test_dangling_driver_link_readable(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    char *t = NULL;
    assert_int_equal(hostfs_readlink(&fs, "/sys/bus/pci/devices/0000:00:02.0/driver", &t), 0);
    assert_string_equal(t, "../../../bus/pci/drivers/nvidia");
    free(t);
    struct stat st;
    assert_int_equal(hostfs_stat(&fs, "/sys/devices/pci0000:00/0000:00:02.0/driver", &st, false), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_true(hostfs_stat(&fs, "/sys/devices/pci0000:00/0000:00:02.0/driver", &st, true) < 0);
    hostfs_close(&fs);
}

static void test_cannot_escape_root(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    char *s = NULL;
    /* The absolute link resolves inside the tree (openat2), or is refused: never the host's /etc. */
    int rc = hostfs_read_attr(&fs, "/sys/abs", &s);
    if (rc == 0)
        assert_string_equal(s, "inside");
    free(s);
    s = NULL;
    rc = hostfs_read_file(&fs, "/../../../../etc/passwd", 0, &s, NULL);
    assert_true(rc < 0 || strstr(s, "root:") == NULL);
    free(s);
    s = NULL;
    assert_true(hostfs_read_attr(&fs, "/sys/loop1", &s) < 0); /* ELOOP, no hang */
    hostfs_close(&fs);
}

static void test_size_cap_and_directories(void **state)
{
    (void)state;
    char big[5000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    put("proc/big", big);
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    char *s = NULL;
    size_t len = 0;
    assert_int_equal(hostfs_read_file(&fs, "/proc/big", 1000, &s, &len), -EFBIG);
    assert_int_equal(hostfs_read_file(&fs, "/proc/big", 0, &s, &len), 0);
    assert_int_equal(len, sizeof(big) - 1);
    free(s);
    assert_int_equal(hostfs_read_file(&fs, "/sys", 0, &s, &len), -EISDIR);
    DIR *d = hostfs_opendir(&fs, "/sys/bus/pci/devices");
    assert_non_null(d);
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        found += strcmp(e->d_name, "0000:00:02.0") == 0;
    closedir(d);
    assert_int_equal(found, 1);
    char *rp = hostfs_real_path(&fs, "/sys/bus/pci");
    char want[400];
    snprintf(want, sizeof(want), "%s/sys/bus/pci", tree);
    assert_string_equal(rp, want);
    free(rp);
    hostfs_close(&fs);
}

static void test_trace_lists_paths(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    char *buf = NULL;
    size_t len = 0;
    fs.trace = open_memstream(&buf, &len);
    uint64_t v;
    hostfs_read_u64(&fs, "/sys/bus/pci/devices/0000:00:02.0/vendor", &v);
    fclose(fs.trace);
    fs.trace = NULL;
    assert_non_null(strstr(buf, "/sys/bus/pci/devices/0000:00:02.0/vendor\n"));
    free(buf);
    hostfs_close(&fs);
}

/* Issue 37: a FIFO, a socket or a device node where a file belongs is never read (opening a FIFO without
 * O_NONBLOCK waits for a writer for good; this test would hang): -EINVAL, recorded in the thread's tracker
 * with what it is, once per path; a sysfs-like regular file still reads; a directory is -EISDIR, not
 * recorded. hostfs_check_file says the same without opening for reading (libpci's files). */
static void test_not_regular_files_refused(void **state)
{
    (void)state;
    char p[512];
    put("sys/devices/pci0000:00/0000:00:02.0/device", "0x2330\n");
    snprintf(p, sizeof(p), "%s/sys/devices/pci0000:00/0000:00:02.0/fifo", tree);
    assert_int_equal(mkfifo(p, 0644), 0);
    snprintf(p, sizeof(p), "%s/sys/devices/pci0000:00/0000:00:02.0/sock", tree);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    assert_true(strlen(p) < sizeof(sa.sun_path));
    memcpy(sa.sun_path, p, strlen(p) + 1);
    assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    snprintf(p, sizeof(p), "%s/dev", tree);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/dev/null", tree);
    bool have_chr = mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0; /* root only */

    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct hostfs_track t;
    hostfs_track_init(&t);
    assert_null(hostfs_track_use(&t));
    char *s = NULL;
    assert_int_equal(hostfs_read_file(&fs, "/sys/bus/pci/devices/0000:00:02.0/fifo", 0, &s, NULL), -EINVAL);
    assert_null(s);
    assert_int_equal(hostfs_read_attr(&fs, "/sys/bus/pci/devices/0000:00:02.0/fifo", &s), -EINVAL);
    assert_int_equal(hostfs_read_file(&fs, "/sys/bus/pci/devices/0000:00:02.0/sock", 0, &s, NULL), -EINVAL);
    assert_int_equal(hostfs_open_file(&fs, "/sys"), -EISDIR);
    assert_int_equal(hostfs_check_file(&fs, "/sys/bus/pci/devices/0000:00:02.0/fifo"), -EINVAL);
    assert_int_equal(hostfs_check_file(&fs, "/sys/bus/pci/devices/0000:00:02.0/vendor"), 0);
    assert_int_equal(hostfs_check_file(&fs, "/sys/bus/pci/devices/0000:00:02.0/absent"), -ENOENT);
    if (have_chr)
        assert_int_equal(hostfs_read_file(&fs, "/dev/null", 0, &s, NULL), -EINVAL);
    /* regular files, as sysfs attributes are, still read */
    uint64_t v = 0;
    assert_int_equal(hostfs_read_u64(&fs, "/sys/bus/pci/devices/0000:00:02.0/device", &v), 0);
    assert_int_equal(v, 0x2330);

    char where[HOSTFS_TRACK_PATH];
    assert_false(hostfs_track_where(&t, where, sizeof(where)));
    assert_string_equal(where, "/sys/bus/pci/devices/0000:00:02.0/device");
    assert_int_equal(t.n_refused, have_chr ? 3 : 2); /* the FIFO once, though refused three times */
    assert_string_equal(t.refused[0].path, "/sys/bus/pci/devices/0000:00:02.0/fifo");
    assert_string_equal(t.refused[0].kind, "a FIFO");
    assert_string_equal(t.refused[1].path, "/sys/bus/pci/devices/0000:00:02.0/sock");
    assert_string_equal(t.refused[1].kind, "a socket");
    if (have_chr)
        assert_string_equal(t.refused[2].kind, "a character device");
    assert_ptr_equal(hostfs_track_use(NULL), &t);
    hostfs_track_destroy(&t);
    hostfs_close(&fs);
    close(sfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_reads_through_links),
        cmocka_unit_test(test_reads_survive_concurrent_renames),
        cmocka_unit_test(test_dangling_driver_link_readable),
        cmocka_unit_test(test_cannot_escape_root),
        cmocka_unit_test(test_size_cap_and_directories),
        cmocka_unit_test(test_trace_lists_paths),
        cmocka_unit_test(test_not_regular_files_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
