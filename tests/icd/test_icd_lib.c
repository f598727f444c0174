/* test_icd_lib.c: unit tests of the icd probe's library search and loader scan on a fake tree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_builder.h"
#include "icd_impl.h"

static char tree[256];
static unsigned char elf[64]; /* the start of this very executable: an ELF this process can load */
static const char *multiarch; /* the first default directory ("/lib/x86_64-linux-gnu" here) */

static void mkdirs(const char *rel)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tree, rel);
    for (char *p = path + strlen(tree) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    mkdir(path, 0755);
}

static void put(const char *rel, const void *content, size_t len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", tree, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdirs(path + strlen(tree) + 1);
    *slash = '/';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(content, 1, len, f), len);
    fclose(f);
}

static void put_elf(const char *rel)
{
    put(rel, elf, sizeof(elf));
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
    FILE *self = fopen("/proc/self/exe", "rb");
    assert_non_null(self);
    assert_int_equal(fread(elf, 1, sizeof(elf), self), sizeof(elf));
    fclose(self);
    multiarch = icd_search_default_dirs()[0];
    snprintf(tree, sizeof(tree), "/tmp/gc-icdlib-XXXXXX");
    assert_non_null(mkdtemp(tree));

    /* merged /usr: /lib -> usr/lib */
    mkdirs("usr/lib");
    link_at("usr/lib", "lib");
    /* a config with a relative include */
    const char *conf = "include ld.so.conf.d/*.conf\n";
    put("etc/ld.so.conf", conf, strlen(conf));
    put("etc/ld.so.conf.d/a.conf", "/opt/vendor/lib\n", 16);
    put("etc/ld.so.conf.d/b.conf", "/opt/other\n", 11);
    put("etc/ld.so.conf.d/skip.txt", "/opt/never\n", 11);
    /* a vendor loader, reached through the cache */
    put_elf("opt/vendor/lib/libOpenCL.so.1.0.0");
    link_at("libOpenCL.so.1.0.0", "opt/vendor/lib/libOpenCL.so.1");
    struct cache_ent ents[] = {
        {0x0303, "libOpenCL.so.1", "/opt/vendor/lib/libOpenCL.so.1"},
        {0x0303, "libgone.so.1", "/opt/vendor/lib/libgone.so.1"},
    };
    unsigned char cache[1024];
    size_t clen = cache_build(cache, sizeof(cache), ents, 2, false);
    assert_true(clen > 0);
    put("etc/ld.so.cache", cache, clen);
    /* the distribution's loader in the default directory, under /usr/lib (merged) */
    char rel[256];
    snprintf(rel, sizeof(rel), "usr%s/libOpenCL.so.1", multiarch); /* "/lib/x" -> "usr/lib/x" */
    if (strncmp(multiarch, "/lib/", 5) == 0) {
        put_elf(rel);
        snprintf(rel, sizeof(rel), "usr%s/libdef.so", multiarch);
        put_elf(rel);
    } else {
        snprintf(rel, sizeof(rel), "%s/libdef.so", multiarch + 1);
        put_elf(rel);
    }
    /* a loader of the other ELF class in a configured directory */
    unsigned char elf32[sizeof(elf)];
    memcpy(elf32, elf, sizeof(elf));
    elf32[4] = elf[4] == 2 ? 1 : 2; /* EI_CLASS: 64 <-> 32 bits */
    put("opt/other/libOpenCL.so.1", elf32, sizeof(elf32));
    /* LD_LIBRARY_PATH: a text file posing as a library (skipped), a real one */
    put("ldpath/libOpenCL.so.1", "not an ELF file\n", 16);
    put_elf("ldpath2/libbar.so");
    /* an SDK loader off the search path */
    put_elf("usr/local/cuda-12.4/lib64/libOpenCL.so.1");
    link_at("cuda-12.4", "usr/local/cuda");
    /* a relative name resolved from the current directory */
    put_elf("work/rel/x.so");
    /* a symlink loop */
    link_at("loop2", "opt/loop1");
    link_at("loop1", "opt/loop2");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
    return system(cmd) == 0 ? 0 : -1;
}

static void open_search(struct hostfs *fs, struct icd_search *s, const char *ldpath)
{
    assert_int_equal(hostfs_open(fs, tree), 0);
    assert_int_equal(icd_search_init(s, fs, ldpath), 0);
    free(s->cwd);
    s->cwd = strdup("/work");
}

static void test_search_order(void **state)
{
    (void)state;
    struct hostfs fs;
    struct icd_search s;
    open_search(&fs, &s, "/ldpath:/ldpath2");
    assert_int_equal(s.n_ld, 2);
    assert_non_null(s.cache);
    const char *via = NULL;
    char *p = icd_search_find(&s, "libbar.so", &via);
    assert_string_equal(p, "/ldpath2/libbar.so");
    assert_string_equal(via, "LD_LIBRARY_PATH");
    free(p);
    /* /ldpath has a libOpenCL.so.1 that is no ELF file: dlopen passes over it to the cache */
    p = icd_search_find(&s, "libOpenCL.so.1", &via);
    assert_string_equal(p, "/opt/vendor/lib/libOpenCL.so.1");
    assert_string_equal(via, "ld.so.cache");
    free(p);
    /* a cache entry whose file is gone: on to the default directories, which lack it too */
    p = icd_search_find(&s, "libgone.so.1", &via);
    assert_null(p);
    assert_null(via);
    p = icd_search_find(&s, "libdef.so", &via);
    assert_non_null(p);
    assert_string_equal(via, "default");
    free(p);
    p = icd_search_find(&s, "/opt/vendor/lib/libOpenCL.so.1", &via);
    assert_string_equal(p, "/opt/vendor/lib/libOpenCL.so.1");
    assert_string_equal(via, "absolute");
    free(p);
    assert_null(icd_search_find(&s, "/opt/vendor/lib/libmissing.so", &via));
    p = icd_search_find(&s, "rel/x.so", &via);
    assert_string_equal(p, "/work/rel/x.so");
    assert_string_equal(via, "relative");
    free(p);
    assert_null(icd_search_find(&s, "", &via));
    assert_null(icd_search_find(&s, NULL, &via));
    icd_search_free(&s);
    hostfs_close(&fs);
}

static void test_ldconf_includes(void **state)
{
    (void)state;
    struct hostfs fs;
    struct icd_search s;
    open_search(&fs, &s, NULL);
    assert_int_equal(s.n_ld, 0);
    assert_int_equal(s.n_conf, 2);
    assert_string_equal(s.conf_dirs[0], "/opt/vendor/lib");
    assert_string_equal(s.conf_dirs[1], "/opt/other");
    icd_search_free(&s);
    hostfs_close(&fs);
}

static void test_ld_library_path_forms(void **state)
{
    (void)state;
    struct hostfs fs;
    struct icd_search s;
    /* empty entries are the current directory; $ORIGIN cannot be expanded; ';' separates too */
    assert_int_equal(hostfs_open(&fs, tree), 0);
    assert_int_equal(icd_search_init(&s, &fs, "/a/::$ORIGIN/lib;rel"), 0);
    assert_true(s.n_ld >= 2);
    assert_string_equal(s.ld_dirs[0], "/a");
    icd_search_free(&s);
    hostfs_close(&fs);
}

static void test_realpath(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    char *p = icd_fs_realpath(&fs, "/opt/vendor/lib/libOpenCL.so.1");
    assert_string_equal(p, "/opt/vendor/lib/libOpenCL.so.1.0.0");
    free(p);
    p = icd_fs_realpath(&fs, "/opt/vendor/../vendor/./lib//libOpenCL.so.1");
    assert_string_equal(p, "/opt/vendor/lib/libOpenCL.so.1.0.0");
    free(p);
    p = icd_fs_realpath(&fs, "/lib");
    assert_string_equal(p, "/usr/lib");
    free(p);
    p = icd_fs_realpath(&fs, "/");
    assert_string_equal(p, "/");
    free(p);
    assert_null(icd_fs_realpath(&fs, "/opt/loop1"));
    assert_null(icd_fs_realpath(&fs, "/opt/nothing"));
    assert_null(icd_fs_realpath(&fs, "relative"));
    assert_null(icd_fs_realpath(&fs, "/etc/ld.so.conf/below-a-file"));
    p = icd_fs_dir_realpath(&fs, "/lib/whatever.so");
    assert_string_equal(p, "/usr/lib/whatever.so");
    free(p);
    hostfs_close(&fs);
}

static void test_elf_check(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    assert_int_equal(icd_elf_loadable(&fs, "/ldpath2/libbar.so"), 1);
    assert_int_equal(icd_elf_loadable(&fs, "/ldpath/libOpenCL.so.1"), 0);
    assert_int_equal(icd_elf_loadable(&fs, "/etc"), 0);
    assert_int_equal(icd_elf_loadable(&fs, "/nope.so"), -ENOENT);
    hostfs_close(&fs);
}

static const struct icd_loader_file *find(const struct icd_loader_file *l, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i].path, path) == 0)
            return &l[i];
    return NULL;
}

static void test_loader_scan(void **state)
{
    (void)state;
    struct hostfs fs;
    struct icd_search s;
    open_search(&fs, &s, "/ldpath");
    struct icd_loader_file *l = NULL;
    size_t n = 0;
    assert_int_equal(icd_loaders_scan(&s, &l, &n), 0);
    const struct icd_loader_file *ld = find(l, n, "/ldpath/libOpenCL.so.1");
    assert_non_null(ld);
    assert_string_equal(ld->source, "LD_LIBRARY_PATH");
    assert_false(ld->loadable); /* not an ELF file: dlopen passes over it */
    assert_false(ld->searched);
    assert_false(ld->wins);
    const struct icd_loader_file *l32 = find(l, n, "/opt/other/libOpenCL.so.1");
    assert_non_null(l32);
    assert_true(l32->have_id);
    assert_false(l32->loadable); /* another ELF class: no shadow for this process */
    const struct icd_loader_file *v = find(l, n, "/opt/vendor/lib/libOpenCL.so.1");
    assert_non_null(v);
    assert_string_equal(v->source, "ld.so.cache");
    assert_true(v->wins);
    assert_true(v->loadable);
    assert_string_equal(v->resolved, "/opt/vendor/lib/libOpenCL.so.1.0.0");
    const struct icd_loader_file *v2 = find(l, n, "/opt/vendor/lib/libOpenCL.so.1.0.0");
    assert_non_null(v2);
    assert_string_equal(v2->source, "ld.so.conf");
    assert_false(v2->searched);
    assert_int_equal(v2->group, v->group); /* the same file */
    const struct icd_loader_file *cuda = find(l, n, "/usr/local/cuda-12.4/lib64/libOpenCL.so.1");
    assert_non_null(cuda);
    assert_string_equal(cuda->source, "sdk");
    assert_false(cuda->searched);
    assert_true(cuda->group != v->group);
    /* reached as /usr/local/cuda and /usr/local/cuda-12.4: listed once */
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += strstr(l[i].path, "cuda") != NULL;
    assert_int_equal(count, 1);
    if (strncmp(multiarch, "/lib/", 5) == 0) {
        char want[256];
        snprintf(want, sizeof(want), "/usr%s/libOpenCL.so.1", multiarch);
        const struct icd_loader_file *def = find(l, n, want);
        assert_non_null(def);
        assert_string_equal(def->source, "default");
        assert_false(def->wins);
    }
    icd_loaders_free(l, n);
    icd_search_free(&s);
    hostfs_close(&fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_order),    cmocka_unit_test(test_ldconf_includes),
        cmocka_unit_test(test_ld_library_path_forms), cmocka_unit_test(test_realpath),
        cmocka_unit_test(test_elf_check),       cmocka_unit_test(test_loader_scan),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
