/* test_ldsearch.c: the shared dynamic-linker search: ld.so.conf includes, reasons, candidates, pip wheel dirs, under a fake root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfdyn.h"
#include "ldsearch.h"
#include "../icd/cache_builder.h"

static char tree[64];

static void mkdirs(const char *rel)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s/%s", tree, rel);
    for (char *p = buf + strlen(tree) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

/* Write TEXT to the file REL (under the tree), creating its directory. */
static void put(const char *rel, const char *text)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", rel);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        mkdirs(dir);
    }
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", tree, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Copy this test's own executable (an ELF of this machine) to REL: a loadable-looking library. */
static void put_elf(const char *rel)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", rel);
    *strrchr(dir, '/') = '\0';
    mkdirs(dir);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", tree, rel);
    FILE *in = fopen("/proc/self/exe", "rb"), *out = fopen(p, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tree, sizeof(tree), "/tmp/gc-ldsearch-XXXXXX");
    return mkdtemp(tree) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
    return system(cmd) == 0 ? 0 : -1;
}

/* ld.so.conf with include globs (sorted, relative to the including file's directory, nested), and the
 * file that named each directory. */
static void test_conf_includes(void **state)
{
    (void)state;
    put("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/top # comment\n");
    put("etc/ld.so.conf.d/b.conf", "/opt/b\n");
    put("etc/ld.so.conf.d/a.conf", "/opt/a, /opt/a2\ninclude sub/*.conf\n");
    put("etc/ld.so.conf.d/sub/x.conf", "/opt/x/\n");
    put("etc/ld.so.conf.d/z.txt", "/opt/not-included\n");
    put("etc/ld.so.conf.d/c.conf", "/opt/a\n"); /* a duplicate keeps its first file */
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct ldsearch s;
    assert_int_equal(ldsearch_init(&s, &fs, NULL), 0);
    const char *want[] = {"/opt/a", "/opt/a2", "/opt/x", "/opt/b", "/opt/top"};
    const char *from[] = {"/etc/ld.so.conf.d/a.conf", "/etc/ld.so.conf.d/a.conf", "/etc/ld.so.conf.d/sub/x.conf",
                          "/etc/ld.so.conf.d/b.conf", "/etc/ld.so.conf"};
    assert_int_equal(s.n_conf, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(s.conf_dirs[i], want[i]);
        assert_string_equal(s.conf_files[i], from[i]);
    }
    assert_int_equal(s.cache_err, -ENOENT);
    ldsearch_free(&s);
    hostfs_close(&fs);
}

/* An include loop ends (depth and file limits), and garbage include patterns do nothing. */
static void test_conf_loop(void **state)
{
    (void)state;
    put("etc/ld.so.conf", "include /etc/ld.so.conf\n/opt/loop\ninclude /nonexistent/*.conf\ninclude [\n");
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct ldsearch s;
    assert_int_equal(ldsearch_init(&s, &fs, NULL), 0);
    assert_int_equal(s.n_conf, 1);
    assert_string_equal(s.conf_dirs[0], "/opt/loop");
    ldsearch_free(&s);
    hostfs_close(&fs);
}

/* LD_LIBRARY_PATH as ld.so splits it (':' and ';', empty = cwd), each directory with the element as
 * written; the element that brought a library in; candidates in the linker's order. */
static void test_ld_path_and_candidates(void **state)
{
    (void)state;
    put_elf("a/libfoo.so.1");
    put_elf("usr/lib/libfoo.so.1");
    put_elf("usr/lib/libfoo.so.2");
    put("usr/lib/libfoo.so.3", "not an ELF file\n");
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct ldsearch s;
    assert_int_equal(ldsearch_init(&s, &fs, "/a/;/b::/a"), 0);
    assert_true(s.n_ld >= 3);
    assert_string_equal(s.ld_dirs[0], "/a");
    assert_string_equal(s.ld_elems[0], "/a/");
    assert_string_equal(s.ld_dirs[1], "/b");
    assert_string_equal(s.ld_elems[2], ""); /* the empty element: the cwd */
    for (size_t i = 3; i < s.n_ld; i++)
        assert_string_not_equal(s.ld_dirs[i], "/a"); /* the second /a is the same directory */

    struct ldsearch_hit hit;
    char *p = ldsearch_find_hit(&s, "libfoo.so.1", &hit);
    assert_non_null(p);
    assert_string_equal(p, "/a/libfoo.so.1");
    assert_string_equal(hit.via, "LD_LIBRARY_PATH");
    assert_string_equal(hit.entry, "/a/");
    free(p);
    free(hit.entry);
    p = ldsearch_find_hit(&s, "libfoo.so.2", &hit);
    assert_non_null(p);
    assert_string_equal(p, "/usr/lib/libfoo.so.2");
    assert_string_equal(hit.via, "default");
    assert_string_equal(hit.entry, "/usr/lib");
    free(p);
    free(hit.entry);
    assert_null(ldsearch_find_hit(&s, "libfoo.so.3", &hit)); /* not loadable */
    assert_null(hit.entry);

    struct ldsearch_file *f = NULL;
    size_t n = 0;
    assert_int_equal(ldsearch_candidates(&s, "libfoo.so.*", &f, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(f[0].path, "/a/libfoo.so.1");
    assert_string_equal(f[0].via, "LD_LIBRARY_PATH");
    assert_string_equal(f[1].path, "/usr/lib/libfoo.so.1");
    assert_string_equal(f[1].via, "default");
    assert_string_equal(f[2].name, "libfoo.so.2");
    assert_true(f[0].order < f[1].order && f[1].order < f[2].order);
    ldsearch_files_free(f, n);
    ldsearch_free(&s);
    hostfs_close(&fs);
}

/* ld.so.cache entries: this architecture's only, the key and path as the reason, LD_LIBRARY_PATH first. */
static void test_cache_candidates(void **state)
{
    (void)state;
    put_elf("opt/cuda/lib/libcudart.so.13");
    put_elf("opt/other/libcudart.so.13");
    put_elf("opt/x32/libcudart.so.13");
    struct cache_ent ents[] = {
        {0x0303, "libcudart.so.13", "/opt/cuda/lib/libcudart.so.13"},     /* libc6, x86-64 */
        {0x0003, "libcudart.so.13", "/opt/x32/libcudart.so.13"},          /* libc6, 32-bit */
        {0x0303, "libcudart.so.12", "/opt/gone/libcudart.so.12"},         /* dangling */
        {0x0303, "libother.so.1", "/opt/cuda/lib/libother.so.1"},
    };
    unsigned char cache[2048];
    size_t clen = cache_build(cache, sizeof(cache), ents, 4, false);
    assert_true(clen > 0);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/etc", tree);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/etc/ld.so.cache", tree);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(cache, 1, clen, f), clen);
    fclose(f);
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct ldsearch s;
    assert_int_equal(ldsearch_init(&s, &fs, "/opt/other"), 0);
    struct ldsearch_file *c = NULL;
    size_t n = 0;
    assert_int_equal(ldsearch_candidates(&s, "libcudart.so.*", &c, &n), 0);
#if defined(__x86_64__) && defined(__LP64__)
    assert_int_equal(n, 2);
    assert_string_equal(c[0].path, "/opt/other/libcudart.so.13");
    assert_string_equal(c[0].via, "LD_LIBRARY_PATH");
    assert_string_equal(c[0].entry, "/opt/other");
    assert_string_equal(c[1].path, "/opt/cuda/lib/libcudart.so.13");
    assert_string_equal(c[1].via, "ld.so.cache");
    assert_string_equal(c[1].entry, "libcudart.so.13 => /opt/cuda/lib/libcudart.so.13");
    ldsearch_free(&s);
    assert_int_equal(ldsearch_init(&s, &fs, NULL), 0);
    struct ldsearch_hit hit;
    char *found = ldsearch_find_hit(&s, "libcudart.so.13", &hit);
    assert_non_null(found);
    assert_string_equal(found, "/opt/cuda/lib/libcudart.so.13");
    assert_string_equal(hit.via, "ld.so.cache");
    assert_string_equal(hit.entry, "libcudart.so.13 => /opt/cuda/lib/libcudart.so.13");
    free(found);
    free(hit.entry);
#endif
    ldsearch_files_free(c, n);
    ldsearch_free(&s);
    hostfs_close(&fs);
}

static const struct ldsearch_wheel *wheel_find(const struct ldsearch_wheel *w, size_t n, const char *dir)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(w[i].dir, dir) == 0)
            return &w[i];
    return NULL;
}

/* pip wheel lib dirs: a python3 on PATH (venv prefix, CUDA 13 and CUDA 12 layouts), VIRTUAL_ENV, the
 * system's dist-packages and ~/.local; python3-config alone is no interpreter. */
static void test_wheels(void **state)
{
    (void)state;
    put("opt/torch/.venv/bin/python3", "");
    put("opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13", "");
    put("opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9", "");
    put("opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2", "");
    put("opt/torch/.venv/lib/python3.12/site-packages/nvidia/__init__.py", "");
    put("opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvtx/include/x.h", ""); /* no lib dir */
    put("opt/cfg/bin/python3-config", "");
    put("opt/cfg/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12", "");
    put("opt/venv12/lib/python3.10/site-packages/nvidia/cublas/lib/libcublas.so.12", "");
    put("opt/venv12/lib/python3.10/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12", "");
    put("usr/lib/python3/dist-packages/nvidia/cudnn/lib/libcudnn.so.8", "");
    put("home/u/.local/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2", "");
    put("root/.pyenv/shims/python3", "#!/bin/sh\n");
    put("root/.pyenv/versions/3.11.9/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12", "");
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct ldsearch_wheel *w = NULL;
    size_t n = 0;
    assert_int_equal(ldsearch_wheels(&fs, "/opt/cfg/bin:/opt/torch/.venv/bin:relative/bin:/root/.pyenv/shims", "/opt/venv12", "/home/u",
                                     &w, &n),
                     0);
    const char *site = "/opt/torch/.venv/lib/python3.12/site-packages";
    const struct ldsearch_wheel *x = wheel_find(w, n, "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib");
    assert_non_null(x);
    assert_string_equal(x->site, site);
    assert_string_equal(x->wheel, "cu13");
    assert_string_equal(x->origin, "python3 on PATH (/opt/torch/.venv/bin/python3)");
    assert_non_null(wheel_find(w, n, "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib"));
    assert_non_null(wheel_find(w, n, "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib"));
    assert_null(wheel_find(w, n, "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvtx/lib"));
    assert_null(wheel_find(w, n, "/opt/cfg/lib/python3.11/site-packages/nvidia/cublas/lib"));
    x = wheel_find(w, n, "/opt/venv12/lib/python3.10/site-packages/nvidia/cuda_runtime/lib");
    assert_non_null(x);
    assert_string_equal(x->origin, "VIRTUAL_ENV");
    assert_non_null(wheel_find(w, n, "/opt/venv12/lib/python3.10/site-packages/nvidia/cublas/lib"));
    x = wheel_find(w, n, "/usr/lib/python3/dist-packages/nvidia/cudnn/lib");
    assert_non_null(x);
    assert_string_equal(x->origin, "system");
    x = wheel_find(w, n, "/home/u/.local/lib/python3.12/site-packages/nvidia/nccl/lib");
    assert_non_null(x);
    assert_string_equal(x->origin, "user (~/.local)");
    x = wheel_find(w, n, "/root/.pyenv/versions/3.11.9/lib/python3.11/site-packages/nvidia/cublas/lib");
    assert_non_null(x);
    assert_string_equal(x->origin, "pyenv version /root/.pyenv/versions/3.11.9 (/root/.pyenv/shims/python3)");
    assert_int_equal(n, 8);
    ldsearch_wheels_free(w, n);

    /* nothing to go on: nothing found, no crash */
    assert_int_equal(ldsearch_wheels(&fs, NULL, NULL, NULL, &w, &n), 0);
    assert_int_equal(n, 1); /* the system's dist-packages only */
    ldsearch_wheels_free(w, n);
    hostfs_close(&fs);
}

/* Directory globs: wildcards in any component, sorted, files skipped. */
static void test_glob_dirs(void **state)
{
    (void)state;
    mkdirs("g/cuda-12.4/lib64");
    mkdirs("g/cuda-13.0/lib64");
    mkdirs("g/cuda-x/lib");
    put("g/cuda-file", "");
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    char **d = NULL;
    size_t n = 0;
    assert_int_equal(ldsearch_glob_dirs(&fs, "/g/cuda*/lib64", &d, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(d[0], "/g/cuda-12.4/lib64");
    assert_string_equal(d[1], "/g/cuda-13.0/lib64");
    ldsearch_strv_free(d, n);
    assert_int_equal(ldsearch_glob_dirs(&fs, "relative/*", &d, &n), 0);
    assert_int_equal(n, 0);
    hostfs_close(&fs);
}

/* ldsearch_list matches as ldsearch_dir_match does (sorted, FNM_PERIOD), from one reading of each
 * directory per search: the same directory under another name (a merged /usr's /lib) is not read
 * again, and a file added since is seen by a new search only. */
static void test_list_reads_each_directory_once(void **state)
{
    (void)state;
    put("usr/lib/libcudart.so.13", "");
    put("usr/lib/libcublas.so.13", "");
    put("usr/lib/.libcudart.so.hidden", "");
    put("usr/lib/other.txt", "");
    char link[PATH_MAX];
    snprintf(link, sizeof(link), "%s/lib", tree);
    assert_int_equal(symlink("usr/lib", link), 0);
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct ldsearch s;
    assert_int_equal(ldsearch_init(&s, &fs, NULL), 0);
    static const char *const patterns[] = {"libcu*.so*", "*", "libcudart.so*", "nothing*"};
    for (size_t k = 0; k < sizeof(patterns) / sizeof(patterns[0]); k++) {
        char **a = NULL, **b = NULL;
        size_t na = 0, nb = 0;
        assert_int_equal(ldsearch_dir_match(&fs, "/usr/lib", patterns[k], &a, &na), 0);
        assert_int_equal(ldsearch_list(&s, "/usr/lib", patterns[k], &b, &nb), 0);
        assert_int_equal(nb, na);
        for (size_t i = 0; i < na; i++)
            assert_string_equal(b[i], a[i]);
        ldsearch_strv_free(a, na);
        ldsearch_strv_free(b, nb);
    }
    char **l = NULL;
    size_t n = 0;
    assert_int_equal(ldsearch_list(&s, "/usr/lib", "libcu*", &l, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(l[0], "libcublas.so.13");
    assert_string_equal(l[1], "libcudart.so.13");
    ldsearch_strv_free(l, n);
    /* added after the search read the directory: not seen through it, by either name */
    put("usr/lib/libcufft.so.12", "");
    assert_int_equal(ldsearch_list(&s, "/lib", "libcu*", &l, &n), 0);
    assert_int_equal(n, 2);
    ldsearch_strv_free(l, n);
    assert_int_equal(ldsearch_list(&s, "/missing", "*", &l, &n), -ENOENT);
    assert_int_equal(n, 0);
    ldsearch_free(&s);
    struct ldsearch s2;
    assert_int_equal(ldsearch_init(&s2, &fs, NULL), 0);
    assert_int_equal(ldsearch_list(&s2, "/lib", "libcu*", &l, &n), 0);
    assert_int_equal(n, 3);
    assert_string_equal(l[2], "libcufft.so.12");
    ldsearch_strv_free(l, n);
    ldsearch_free(&s2);
    hostfs_close(&fs);
}

/* ---- ELF headers: what a library is built for (issue 24 item 6) ---- */

/* The first 64 bytes of an ELF file of CLASS, DATA and MACHINE. */
static void elf_header(unsigned char *h, int class, int data, unsigned machine)
{
    memset(h, 0, 64);
    memcpy(h, ELFMAG, SELFMAG);
    h[EI_CLASS] = (unsigned char)class;
    h[EI_DATA] = (unsigned char)data;
    h[EI_VERSION] = EV_CURRENT;
    h[16] = ET_DYN;
    if (data == ELFDATA2MSB) {
        h[18] = (unsigned char)(machine >> 8);
        h[19] = (unsigned char)machine;
    } else {
        h[18] = (unsigned char)machine;
        h[19] = (unsigned char)(machine >> 8);
    }
}

static void put_bytes(const char *rel, const unsigned char *b, size_t n)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", rel);
    *strrchr(dir, '/') = '\0';
    mkdirs(dir);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", tree, rel);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* A machine this build is not: AArch64, or x86-64 on an AArch64 build. */
static unsigned foreign_machine(void)
{
    struct ldsearch_elf h;
    ldsearch_elf_host(&h);
    return h.machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
}

static void test_elf_parse(void **state)
{
    (void)state;
    unsigned char h[64];
    struct ldsearch_elf e = {0};
    char b[64];
    elf_header(h, ELFCLASS64, ELFDATA2LSB, EM_AARCH64);
    assert_int_equal(ldsearch_elf_parse(h, sizeof(h), &e), 1);
    assert_int_equal(e.bits, 64);
    assert_false(e.big_endian);
    assert_int_equal(e.machine, EM_AARCH64);
    assert_string_equal(ldsearch_elf_describe(&e, b, sizeof(b)), "AArch64, 64-bit");
    assert_int_equal(ldsearch_elf_parse(h, 20, &e), 1); /* e_machine ends at byte 20 */
    /* big-endian: e_machine read in the file's order */
    elf_header(h, ELFCLASS64, ELFDATA2MSB, EM_PPC64);
    assert_int_equal(ldsearch_elf_parse(h, sizeof(h), &e), 1);
    assert_int_equal(e.machine, EM_PPC64);
    assert_string_equal(ldsearch_elf_describe(&e, b, sizeof(b)), "PowerPC64, 64-bit, big-endian");
    elf_header(h, ELFCLASS32, ELFDATA2LSB, 9999);
    assert_int_equal(ldsearch_elf_parse(h, sizeof(h), &e), 1);
    assert_string_equal(ldsearch_elf_describe(&e, b, sizeof(b)), "ELF machine 9999, 32-bit");
    /* not an ELF header: short, no magic, unknown class or byte order; OUT untouched */
    struct ldsearch_elf before = e;
    assert_int_equal(ldsearch_elf_parse(h, 19, &e), 0);
    assert_int_equal(ldsearch_elf_parse(NULL, 64, &e), 0);
    h[EI_CLASS] = 3;
    assert_int_equal(ldsearch_elf_parse(h, sizeof(h), &e), 0);
    h[EI_CLASS] = ELFCLASS64;
    h[EI_DATA] = 0;
    assert_int_equal(ldsearch_elf_parse(h, sizeof(h), &e), 0);
    h[EI_DATA] = ELFDATA2LSB;
    h[1] = 'e';
    assert_int_equal(ldsearch_elf_parse(h, sizeof(h), &e), 0);
    assert_memory_equal(&e, &before, sizeof(e));
    /* the host itself is native, and says what it is */
    struct ldsearch_elf host;
    ldsearch_elf_host(&host);
    assert_true(ldsearch_elf_native(&host));
    assert_int_equal(host.bits, (int)(sizeof(void *) * 8));
#if defined(__x86_64__)
    assert_string_equal(ldsearch_elf_describe(&host, b, sizeof(b)), "x86-64, 64-bit");
#endif
    e = host;
    e.bits = host.bits == 64 ? 32 : 64;
    assert_false(ldsearch_elf_native(&e)); /* another class */
}

/* A library for another machine is skipped by the search, as glibc's loader skips it, and listed by
 * ldsearch_foreign_find with where it was seen; a truncated or garbage file is neither. */
static void test_foreign_libraries(void **state)
{
    (void)state;
    unsigned char h[64];
    elf_header(h, ELFCLASS64, ELFDATA2LSB, foreign_machine());
    put_bytes("a/libbar.so.1", h, sizeof(h));
    put_bytes("b/libbar.so.1", h, 12); /* truncated: not an ELF library */
    put("c/libbar.so.1", "garbage\n");
    char rel[PATH_MAX];
    snprintf(rel, sizeof(rel), "%s/libbar.so.1", ldsearch_default_dirs()[0] + 1);
    put_bytes(rel, h, sizeof(h));
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct ldsearch s;
    assert_int_equal(ldsearch_init(&s, &fs, "/a:/b:/c:/a"), 0);
    struct ldsearch_hit hit;
    assert_null(ldsearch_find_hit(&s, "libbar.so.1", &hit));
    assert_int_equal(ldsearch_elf_loadable(&fs, "/a/libbar.so.1"), 0);
    struct ldsearch_elf e;
    assert_int_equal(ldsearch_elf_read(&fs, "/b/libbar.so.1", &e), 0);
    assert_int_equal(ldsearch_elf_read(&fs, "/nope.so", &e), -ENOENT);

    struct ldsearch_foreign *f = NULL;
    size_t n = 0;
    assert_int_equal(ldsearch_foreign_find(&s, "libbar.so.1", &f, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(f[0].path, "/a/libbar.so.1");
    assert_string_equal(f[0].via, "LD_LIBRARY_PATH");
    assert_int_equal(f[0].elf.machine, foreign_machine());
    assert_int_equal(f[0].elf.bits, 64);
    char want[PATH_MAX];
    snprintf(want, sizeof(want), "%s/libbar.so.1", ldsearch_default_dirs()[0]);
    assert_string_equal(f[1].path, want);
    assert_string_equal(f[1].via, "default");
    ldsearch_foreign_free(f, n);
    /* a name nothing has, or with a slash: nothing */
    assert_int_equal(ldsearch_foreign_find(&s, "libnone.so.1", &f, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(ldsearch_foreign_find(&s, "/a/libbar.so.1", &f, &n), 0);
    assert_int_equal(n, 0);
    ldsearch_free(&s);
    hostfs_close(&fs);
}

/* ldsearch_missing_needed: this test's own executable as a library whose DT_NEEDED names the tree lacks;
 * each copied in as a library (the same ELF, needing the same names) leaves fewer missing, each object read once. */
static void test_missing_needed(void **state)
{
    (void)state;
    put_elf("opt/rt/librt.so.1");
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, tree), 0);
    struct elfdyn d;
    assert_int_equal(elfdyn_read_file(&fs, "/opt/rt/librt.so.1", &d), 0);
    const char *names[32];
    size_t n = 0;
    for (size_t i = 0; i < d.n_needed && n < 32; i++)
        if (strncmp(d.needed[i], "ld-linux", 8) != 0)
            names[n++] = d.needed[i];
    assert_true(n >= 1);
    for (size_t have = 0; have <= n; have++) {
        if (have > 0) {
            char rel[PATH_MAX];
            snprintf(rel, sizeof(rel), "usr/lib/%s", names[have - 1]);
            put_elf(rel);
        }
        struct ldsearch s;
        assert_int_equal(ldsearch_init(&s, &fs, NULL), 0);
        size_t read = 0;
        char *missing = ldsearch_missing_needed(&s, "/opt/rt/librt.so.1", &read);
        assert_int_equal(read, 1 + have);
        if (have == n) {
            assert_null(missing);
        } else {
            assert_non_null(missing);
            for (size_t i = 0; i < n; i++)
                assert_true((strstr(missing, names[i]) != NULL) == (i >= have));
        }
        free(missing);
        assert_null(ldsearch_missing_needed(&s, "/opt/rt/absent.so.1", &read)); /* unreadable: nothing claimed */
        assert_int_equal(read, 0);
        ldsearch_free(&s);
    }
    elfdyn_free(&d);
    hostfs_close(&fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conf_includes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conf_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ld_path_and_candidates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_candidates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wheels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_glob_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_reads_each_directory_once, setup, teardown),
        cmocka_unit_test(test_elf_parse),
        cmocka_unit_test_setup_teardown(test_foreign_libraries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_needed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
