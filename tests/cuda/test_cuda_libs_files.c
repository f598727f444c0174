/* test_cuda_libs_files.c: library versions the files state (names, wheel dist-info, version.json) are taken without loading. */
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

#include "cuda_internal.h"
#include "cuda_libs.h"
#include "hostfs.h"
#include "jsonnum.h"
#include "report.h"

static char tmp_root[64];

static void mkdirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

/* Copy SRC to DIR/NAME; returns its size. */
static long copy_in(const char *dir, const char *name, const char *src)
{
    mkdirs(dir);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *in = fopen(src, "rb"), *out = fopen(p, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    long total = 0;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
        assert_int_equal(fwrite(buf, 1, n, out), n);
        total += (long)n;
    }
    fclose(in);
    fclose(out);
    return total;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    mkdirs(dir);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char *need_env(const char *name)
{
    const char *v = getenv(name);
    assert_non_null(v);
    return v;
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                              : NULL;
}

static int jint(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_int) ? json_object_get_int(v) : -1;
}

struct run {
    struct hostfs fs;
    struct report *r;
    struct report_section *sec;
    json_object *libs;
};

/* The library search and loading on the fake tree ROOT (its libraries are loaded from there). */
static void run_tree(struct run *x, const char *root)
{
    memset(x, 0, sizeof(*x));
    assert_int_equal(hostfs_open(&x->fs, root), 0);
    x->r = report_new();
    x->sec = report_add_section(x->r, "cuda");
    struct probe_ctx ctx = {.fs = &x->fs, .mode = probe_mode_of(NULL, &x->fs), .report = x->r, .timeout_ms = 20000,
                            .deadline_ms = jsonnum_now_ms() + 20000};
    cuda_libs_report_fs(&ctx, x->sec, NULL, &x->fs, NULL);
    assert_true(json_object_object_get_ex(x->sec->data, "libraries", &x->libs));
    if (getenv("GC_TEST_VERBOSE"))
        printf("%s\n", json_object_to_json_string_ext(x->sec->data, JSON_C_TO_STRING_PRETTY));
}

static void run_done(struct run *x)
{
    report_free(x->r);
    hostfs_close(&x->fs);
}

static json_object *by_file(const struct run *x, const char *file)
{
    for (size_t i = 0; i < json_object_array_length(x->libs); i++) {
        json_object *o = json_object_array_get_idx(x->libs, i);
        if (jstr(o, "file") && strcmp(jstr(o, "file"), file) == 0)
            return o;
    }
    fail_msg("%s not listed", file);
    return NULL;
}

static void clean_env(void)
{
    unsetenv("LD_LIBRARY_PATH");
    unsetenv("VIRTUAL_ENV");
    setenv("HOME", tmp_root, 1);
    setenv("PATH", "/usr/bin:/bin", 1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof(tmp_root), "/tmp/gc-cudafiles-XXXXXX");
    assert_non_null(mkdtemp(tmp_root));
    clean_env();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- the parsers ---- */

static void test_dist_dirname(void **state)
{
    (void)state;
    char *d = NULL, *v = NULL;
    assert_int_equal(cuda_dist_dirname("nvidia_cudnn_cu12-9.28.0.42.dist-info", &d, &v), 0);
    assert_string_equal(d, "nvidia_cudnn_cu12");
    assert_string_equal(v, "9.28.0.42");
    free(d);
    free(v);
    assert_int_equal(cuda_dist_dirname("nvidia_nccl_cu13-2.28.9.post1.dist-info", &d, &v), 0);
    assert_string_equal(v, "2.28.9"); /* the numbers only */
    free(d);
    free(v);
    const char *bad[] = {"nvidia_cublas.dist-info", "-13.0.dist-info", "nvidia_cublas-13.dist-info",
                         "nvidia_cublas-13.1.0.3", "nvidia_cublas-beta.dist-info", "nvidia_cublas-.dist-info", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(cuda_dist_dirname(bad[i], &d, &v), -1);
        assert_null(d);
        assert_null(v);
    }
    assert_int_equal(cuda_dist_cuda_major("nvidia_cudnn_cu12"), 12);
    assert_int_equal(cuda_dist_cuda_major("nvidia_nccl_cu13"), 13);
    assert_int_equal(cuda_dist_cuda_major("nvidia_cublas"), -1);
    assert_int_equal(cuda_dist_cuda_major("nvidia_cudnn_cu"), -1);
    assert_int_equal(cuda_dist_cuda_major("nvidia_cudnn_cu12x"), -1);
    assert_int_equal(cuda_dist_cuda_major(NULL), -1);
}

static void test_record_lists(void **state)
{
    (void)state;
    const char *rec = "nvidia/cudnn/lib/libcudnn.so.9,sha256=abc,129240\r\n"
                      "nvidia/cudnn/lib/libcudnn_ops.so.9,sha256=def,39855888\n"
                      "nvidia_cudnn_cu12-9.28.0.42.dist-info/RECORD,,\n"
                      "libtop.so.1,sha256=x,7";
    size_t n = strlen(rec);
    assert_true(cuda_dist_record_lists(rec, n, "libcudnn.so.9", 129240));
    assert_true(cuda_dist_record_lists(rec, n, "libcudnn_ops.so.9", 39855888));
    assert_true(cuda_dist_record_lists(rec, n, "libtop.so.1", 7)); /* last line, no newline, no directory */
    assert_false(cuda_dist_record_lists(rec, n, "libcudnn.so.9", 129241)); /* another build */
    assert_false(cuda_dist_record_lists(rec, n, "cudnn.so.9", 129240));    /* a name's tail is not the name */
    assert_false(cuda_dist_record_lists(rec, n, "RECORD", 0));             /* no size: never */
    assert_false(cuda_dist_record_lists(rec, n, "libcudnn.so.9", -1));
    assert_false(cuda_dist_record_lists(rec, 20, "libcudnn.so.9", 129240)); /* only LEN bytes are read */
    int ma, mi, pa;
    assert_int_equal(cuda_libs_parse_version("9.28.0.42", &ma, &mi, &pa), 0);
    assert_int_equal(ma * 10000 + mi * 100 + pa, 92800);
    assert_int_equal(cuda_libs_parse_version("13.0", &ma, &mi, &pa), 0);
    assert_int_equal(pa, -1);
    assert_int_equal(cuda_libs_parse_version("13", &ma, &mi, &pa), -1);
    assert_int_equal(cuda_libs_parse_version("x.1", &ma, &mi, &pa), -1);
}

/* ---- nothing is loaded for what a file states ---- */

/* A pip site whose cuDNN files would crash while loading: the RECORD of their wheel's dist-info lists them
 * with their sizes, so they are not loaded and take the wheel's version; one whose size differs from the
 * RECORD's is another file: it is loaded (and crashes, which is then reported). */
static void test_wheel_metadata(void **state)
{
    (void)state;
    char root[PATH_MAX], site[PATH_MAX + 64], lib[PATH_MAX + 96], dist[PATH_MAX + 128], rec[1024];
    snprintf(root, sizeof(root), "%s/wheel", tmp_root);
    snprintf(site, sizeof(site), "%s/opt/venv/lib/python3.12/site-packages", root);
    snprintf(lib, sizeof(lib), "%s/nvidia/cudnn/lib", site);
    snprintf(dist, sizeof(dist), "%s/nvidia_cudnn_cu12-9.28.0.42.dist-info", site);
    long main_size = copy_in(lib, "libcudnn.so.9", need_env("GC_FAKE_CUDNN_INIT_CRASH"));
    long ops_size = copy_in(lib, "libcudnn_ops.so.9", need_env("GC_FAKE_CUDNN_INIT_CRASH"));
    snprintf(rec, sizeof(rec),
             "nvidia/cudnn/lib/libcudnn.so.9,sha256=x,%ld\nnvidia/cudnn/lib/libcudnn_ops.so.9,sha256=y,%ld\n"
             "nvidia_cudnn_cu12-9.28.0.42.dist-info/RECORD,,\n",
             main_size, ops_size + 1);
    write_file(dist, "RECORD", rec);
    char bin[PATH_MAX + 16];
    snprintf(bin, sizeof(bin), "%s/opt/venv/bin", root);
    write_file(bin, "python3", "#!/bin/false\n"); /* never run */
    setenv("PATH", "/opt/venv/bin:/usr/bin", 1);
    struct run x;
    run_tree(&x, root);
    json_object *m = by_file(&x, "libcudnn.so.9");
    assert_string_equal(jstr(m, "version"), "9.28.0.42");
    assert_string_equal(jstr(m, "version_from"), "wheel metadata");
    assert_int_equal(jint(m, "cuda_major"), 12);
    assert_string_equal(jstr(m, "cuda_version_from"), "the wheel's name (nvidia_cudnn_cu12)");
    assert_null(jstr(m, "error"));
    json_object *ops = by_file(&x, "libcudnn_ops.so.9");
    assert_null(jstr(ops, "version_from"));
    assert_non_null(jstr(ops, "error")); /* it was loaded: its constructor crashed */
    assert_non_null(strstr(jstr(ops, "error"), "SIGSEGV"));
    run_done(&x);
    clean_env();
}

/* A library whose real file names its version (libcublas.so.13.1.0.3) is not loaded; a cuDNN named so is,
 * since only the library knows the CUDA release it was built for. */
static void test_file_name(void **state)
{
    (void)state;
    char root[PATH_MAX], lib[PATH_MAX + 32], link[PATH_MAX + 64];
    snprintf(root, sizeof(root), "%s/names", tmp_root);
    snprintf(lib, sizeof(lib), "%s/usr/lib", root);
    copy_in(lib, "libcublas.so.13.1.0.3", need_env("GC_FAKE_CUDNN_INIT_CRASH"));
    snprintf(link, sizeof(link), "%s/libcublas.so.13", lib);
    assert_int_equal(symlink("libcublas.so.13.1.0.3", link), 0);
    copy_in(lib, "libcudnn.so.9.19.0", need_env("GC_FAKE_CUDNN_9_19"));
    snprintf(link, sizeof(link), "%s/libcudnn.so.9", lib);
    assert_int_equal(symlink("libcudnn.so.9.19.0", link), 0);
    struct run x;
    run_tree(&x, root);
    json_object *b = by_file(&x, "libcublas.so.13");
    assert_string_equal(jstr(b, "version"), "13.1.0.3");
    assert_string_equal(jstr(b, "version_from"), "file name");
    assert_int_equal(jint(b, "cuda_major"), 13);
    assert_null(jstr(b, "error"));
    json_object *d = by_file(&x, "libcudnn.so.9");
    assert_string_equal(jstr(d, "version_from"), "library");
    assert_string_equal(jstr(d, "version"), "9.19.0");
    assert_string_equal(jstr(d, "cuda_version_from"), "cudnnGetCudartVersion()");
    run_done(&x);
    clean_env();
}

/* A toolkit's version.json names the version of the libraries in it. */
static void test_toolkit_version_json(void **state)
{
    (void)state;
    char root[PATH_MAX], tk[PATH_MAX + 32], lib[PATH_MAX + 48], link[PATH_MAX + 48];
    snprintf(root, sizeof(root), "%s/toolkit", tmp_root);
    snprintf(tk, sizeof(tk), "%s/usr/local/cuda-13.0", root);
    snprintf(lib, sizeof(lib), "%s/lib64", tk);
    copy_in(lib, "libcublas.so.13", need_env("GC_FAKE_CUDNN_INIT_CRASH"));
    write_file(tk, "version.json",
               "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"13.0.2\"}, "
               "\"libcublas\": {\"name\": \"CUDA cuBLAS\", \"version\": \"13.0.2.14\"}}\n");
    snprintf(link, sizeof(link), "%s/usr/local/cuda", root);
    assert_int_equal(symlink("cuda-13.0", link), 0);
    setenv("LD_LIBRARY_PATH", "/usr/local/cuda/lib64", 1);
    struct run x;
    run_tree(&x, root);
    json_object *b = by_file(&x, "libcublas.so.13");
    assert_string_equal(jstr(b, "version"), "13.0.2.14");
    assert_string_equal(jstr(b, "version_from"), "toolkit version.json");
    assert_int_equal(jint(b, "cuda_major"), 13);
    assert_int_equal(jint(b, "cuda_minor"), 0);
    assert_null(jstr(b, "error"));
    run_done(&x);
    clean_env();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dist_dirname),
        cmocka_unit_test(test_record_lists),
        cmocka_unit_test(test_wheel_metadata),
        cmocka_unit_test(test_file_name),
        cmocka_unit_test(test_toolkit_version_json),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
