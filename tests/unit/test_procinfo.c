/* test_procinfo.c: src/host/procinfo.c on a fake /proc: parent and start from stat, user from status and passwd, command, start time, ours. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procinfo.h"

static char tree[64];

static void put(const char *rel, const char *text)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", tree, rel);
    for (char *s = p + strlen(tree) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tree, sizeof(tree), "/tmp/gc-procinfo-XXXXXX");
    return mkdtemp(tree) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_fake_proc(void **state)
{
    (void)state;
    /* a command with a space and a parenthesis: the fields count from the last ')' */
    put("proc/4321/stat", "4321 (my (job) x) S 77 4321 4321 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 8 0 360000 0\n");
    put("proc/4321/status", "Name:\tpython3\nUmask:\t0022\nUid:\t1000\t1000\t1000\t1000\n");
    put("proc/4321/comm", "pyth\x01on3\n");
    put("proc/5/status", "Name:\tx\nUid:\t4242\t4242\t4242\t4242\n");
    put("proc/stat", "cpu  1 2 3 4\nbtime 1790000000\nprocesses 9\n");
    put("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n");
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    unsigned long long start = 0;
    assert_int_equal(procinfo_stat(&fs, 4321, &start), 77);
    assert_int_equal(start, 360000);
    assert_int_equal(procinfo_stat(&fs, 99, &start), -1);
    char *u = procinfo_user(&fs, 4321, NULL);
    assert_string_equal(u, "alice"); /* /etc/passwd read through FS */
    free(u);
    u = procinfo_user(&fs, 4321, "bob:x:1000:1000::/home/bob:/bin/sh\n");
    assert_string_equal(u, "bob"); /* the passwd text given */
    free(u);
    u = procinfo_user(&fs, 5, NULL);
    assert_string_equal(u, "uid 4242");
    free(u);
    assert_null(procinfo_user(&fs, 99, NULL));
    char *c = procinfo_comm(&fs, 4321);
    assert_non_null(c);
    assert_null(strchr(c, '\x01')); /* sanitised */
    free(c);
    char started[40];
    procinfo_started(&fs, 4321, started, sizeof(started));
    long hz = sysconf(_SC_CLK_TCK);
    if (hz == 100)
        assert_string_equal(started, "2026-09-21 15:13 UTC"); /* btime + 360000 ticks */
    else
        assert_true(strstr(started, " UTC") != NULL);
    procinfo_started(&fs, 99, started, sizeof(started));
    assert_string_equal(started, "");
    hostfs_close(&fs);
}

static void test_ours_live(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, "/"), 0);
    assert_true(procinfo_is_ours(&fs, (long)getpid()));
    assert_false(procinfo_is_ours(&fs, (long)getppid())); /* the parent is not this process's */
    assert_false(procinfo_is_ours(&fs, 1));
    hostfs_close(&fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fake_proc, setup, teardown),
        cmocka_unit_test(test_ours_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
