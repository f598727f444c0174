/* test_cuda_libs.c: the CUDA library part: version decoding, the real toolkit's libraries, pip layouts, bad paths, fakes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_internal.h"
#include "cuda_libs.h"
#include "hostfs.h"
#include "jsonnum.h"
#include "report.h"

/* ---- helpers ---- */

struct libs_run {
    struct hostfs fs;
    struct report *r;
    struct report_section *sec;
    json_object *libs;
};

/* Run cuda_libs_report on this machine (ROOT NULL), or search the fake tree ROOT for libraries, with
 * FACTS (may be NULL) and TIMEOUT_MS. */
static void libs_run(struct libs_run *x, const char *root, const struct cuda_facts *facts, int timeout_ms)
{
    memset(x, 0, sizeof(*x));
    assert_int_equal(hostfs_open(&x->fs, root), 0);
    x->r = report_new();
    assert_non_null(x->r);
    x->sec = report_add_section(x->r, "cuda");
    assert_non_null(x->sec);
    /* one deadline for everything, as a run sets it */
    struct probe_ctx ctx = {.fs = &x->fs, .mode = probe_mode_of(NULL, &x->fs), .report = x->r, .timeout_ms = timeout_ms,
                            .deadline_ms = jsonnum_now_ms() + timeout_ms};
    if (root)
        cuda_libs_report_fs(&ctx, x->sec, facts, &x->fs, NULL); /* the library search itself on the fake tree */
    else
        cuda_libs_report(&ctx, x->sec, facts);
    x->sec = report_find_section(x->r, "cuda");
    assert_true(json_object_object_get_ex(x->sec->data, "libraries", &x->libs));
    if (getenv("GC_TEST_VERBOSE"))
        printf("%s\n", json_object_to_json_string_ext(x->sec->data, JSON_C_TO_STRING_PRETTY));
}

static void libs_done(struct libs_run *x)
{
    report_free(x->r);
    hostfs_close(&x->fs);
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

static bool jbool(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* The first library object with LIBRARY and FOUND_VIA (NULL: any) and, when LOADED_FIRST, loaded first. */
static json_object *libs_find(const struct libs_run *x, const char *library, const char *via, bool loaded_first)
{
    for (size_t i = 0; i < json_object_array_length(x->libs); i++) {
        json_object *o = json_object_array_get_idx(x->libs, i);
        const char *l = jstr(o, "library"), *v = jstr(o, "found_via");
        if (l && strcmp(l, library) == 0 && (!via || (v && strcmp(v, via) == 0)) && (!loaded_first || jbool(o, "loaded_first")))
            return o;
    }
    return NULL;
}

/* The catalogue severity of ID (the report's own severity comes from there once the probe is registered). */
static int check_severity(const char *id)
{
    for (size_t i = 0; i < cuda_libs_n_checks; i++)
        if (strcmp(cuda_libs_checks[i].id, id) == 0)
            return (int)cuda_libs_checks[i].severity;
    return -1;
}

/* Number of cuda.lib-* findings at warning or error. */
static size_t libs_serious(const struct libs_run *x)
{
    size_t n = 0;
    for (size_t i = 0; i < x->r->n_findings; i++) {
        const char *id = x->r->findings[i]->id;
        if (strncmp(id, "cuda.lib-", 9) == 0 && check_severity(id) >= REPORT_SEV_WARNING) {
            printf("serious: %s %s: %s\n", id, x->r->findings[i]->subject ? x->r->findings[i]->subject : "",
                   x->r->findings[i]->message);
            n++;
        }
    }
    return n;
}

/* #define NAME value from the toolkit header FILE (under GC_CUDA_HOME/include), or -1. */
static long header_define(const char *file, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/include/%s", getenv("GC_CUDA_HOME"), file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[1024];
    long v = -1;
    size_t nl = strlen(name);
    while (fgets(line, sizeof(line), f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "#define ", 8) != 0)
            continue;
        p += 8;
        while (*p == ' ')
            p++;
        if (strncmp(p, name, nl) == 0 && (p[nl] == ' ' || p[nl] == '\t')) {
            v = strtol(p + nl, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

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

/* Symlink DIR/NAME -> TARGET, creating DIR. */
static void link_in(const char *dir, const char *name, const char *target)
{
    mkdirs(dir);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    unlink(p);
    assert_int_equal(symlink(target, p), 0);
}

/* A fake venv under the temp dir whose bin/python3 is a plain file (never run). Returns its site dir. */
static const char *make_venv(const char *name)
{
    static char site[PATH_MAX];
    char bin[PATH_MAX];
    snprintf(bin, sizeof(bin), "%s/%s/bin", tmp_root, name);
    mkdirs(bin);
    char py[PATH_MAX + 16];
    snprintf(py, sizeof(py), "%s/python3", bin);
    FILE *f = fopen(py, "w");
    assert_non_null(f);
    fputs("#!/bin/false\n", f);
    fclose(f);
    chmod(py, 0755);
    snprintf(site, sizeof(site), "%s/%s/lib/python3.12/site-packages", tmp_root, name);
    mkdirs(site);
    char path[2 * PATH_MAX];
    snprintf(path, sizeof(path), "%s:/usr/bin:/bin", bin);
    setenv("PATH", path, 1);
    return site;
}

static void clean_env(void)
{
    unsetenv("LD_LIBRARY_PATH");
    unsetenv("VIRTUAL_ENV");
    unsetenv("LIBRARY_PATH");
    setenv("HOME", tmp_root, 1);
    setenv("PATH", "/usr/bin:/bin", 1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof(tmp_root), "/tmp/gc-cudalibs-XXXXXX");
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

static const char *need_env(const char *name)
{
    const char *v = getenv(name);
    assert_non_null(v);
    return v;
}

/* ---- pure rules ---- */

static void test_decode(void **state)
{
    (void)state;
    int ma, mi, pa;
    /* cudnn_version.h of cuDNN 9 and 8 */
    assert_int_equal(cuda_libs_cudnn_decode(91900, 9, &ma, &mi, &pa), 0);
    assert_int_equal(ma, 9);
    assert_int_equal(mi, 19);
    assert_int_equal(pa, 0);
    assert_int_equal(cuda_libs_cudnn_decode(8907, 8, &ma, &mi, &pa), 0);
    assert_int_equal(ma, 8);
    assert_int_equal(mi, 9);
    assert_int_equal(pa, 7);
    assert_int_equal(cuda_libs_cudnn_decode(8907, 9, &ma, &mi, &pa), -1); /* not a cuDNN 9 */
    assert_int_equal(cuda_libs_cudnn_decode(0, 9, &ma, &mi, &pa), -1);
    assert_int_equal(cuda_libs_cudnn_decode(90100, -1, &ma, &mi, &pa), 0);
    assert_int_equal(ma, 9);
    assert_int_equal(mi, 1);
    /* nccl.h NCCL_VERSION: 2.28.9 -> 22809, 2.8.4 -> 2804 */
    assert_int_equal(cuda_libs_nccl_decode(22809, &ma, &mi, &pa), 0);
    assert_true(ma == 2 && mi == 28 && pa == 9);
    assert_int_equal(cuda_libs_nccl_decode(2804, &ma, &mi, &pa), 0);
    assert_true(ma == 2 && mi == 8 && pa == 4);
}

/* A file name's version and the library's own answer of one release are the same version (the real H100
 * machine: the toolkit's libcudart.so.13.0.96 against the wheel's 13.0); real differences stay. */
static void test_same_version(void **state)
{
    (void)state;
    assert_true(cuda_libs_same_version("13.0.96", "13.0"));
    assert_true(cuda_libs_same_version("13.0", "13.0.96"));
    assert_true(cuda_libs_same_version("13.1.0.3", "13.1.0"));
    assert_true(cuda_libs_same_version("2.28.9", "2.28.9"));
    assert_false(cuda_libs_same_version("9.14.0", "9.19.0"));
    assert_false(cuda_libs_same_version("2.28.3", "2.28.9"));
    assert_false(cuda_libs_same_version("13.0", "12.0"));
    assert_false(cuda_libs_same_version("13.10", "13.1"));
}

static void test_tables(void **state)
{
    (void)state;
    assert_string_equal(cuda_libs_min_driver(11), "450.80.02");
    assert_string_equal(cuda_libs_min_driver(12), "525.60.13");
    assert_string_equal(cuda_libs_min_driver(13), "580");
    assert_null(cuda_libs_min_driver(10));
    assert_true(cuda_libs_vercmp("580.159.04", "580") > 0);
    assert_true(cuda_libs_vercmp("580", "580.0") == 0);
    assert_true(cuda_libs_vercmp("535.54.03", "580") < 0);
    assert_true(cuda_libs_vercmp("525.60.13", "525.60.13") == 0);
    assert_true(cuda_libs_vercmp("525.60.9", "525.60.13") < 0);
    assert_int_equal(cuda_libs_cuda_major_of("cufft", 12, 0, 0), 13);
    assert_int_equal(cuda_libs_cuda_major_of("cufft", 11, 3, 3), 12);
    assert_int_equal(cuda_libs_cuda_major_of("cusparse", 12, 6, 3), 13);
    assert_int_equal(cuda_libs_cuda_major_of("cusparse", 12, 5, 10), 12);
    assert_int_equal(cuda_libs_cuda_major_of("cusolver", 11, 4, 1), 11);
    assert_int_equal(cuda_libs_cuda_major_of("cusolver", 11, 4, 2), 12);
    assert_int_equal(cuda_libs_cuda_major_of("cusolver", 12, 0, 4), 13);
    assert_int_equal(cuda_libs_cuda_major_of("cublas", 13, 1, 0), 13);
    assert_int_equal(cuda_libs_cuda_major_of("nccl", 2, 28, 9), -1);
}

/* ---- no libraries ---- */

static void test_empty_root(void **state)
{
    (void)state;
    char root[PATH_MAX + 8];
    snprintf(root, sizeof(root), "%s/empty", tmp_root);
    mkdirs(root);
    struct cuda_facts facts = {.driver_cuda_version = -1, .cuinit_result = -1, .device_count = -1};
    struct libs_run x;
    libs_run(&x, root, &facts, 5000);
    assert_int_equal(json_object_array_length(x.libs), 0);
    assert_int_equal(x.r->n_findings, 0); /* no NVIDIA GPU: nothing at all */
    assert_int_equal(x.sec->n_lines, 0);
    libs_done(&x);
    facts.nvidia_gpu_present = true;
    libs_run(&x, root, &facts, 5000);
    assert_non_null(report_find_finding(x.r, "cuda.lib-none", NULL));
    assert_int_equal(check_severity("cuda.lib-none"), REPORT_SEV_INFO);
    libs_done(&x);
}

/* ---- LD_LIBRARY_PATH naming stubs or a missing toolkit; LIBRARY_PATH is never judged ---- */

static void test_ld_path(void **state)
{
    (void)state;
    char stubs[PATH_MAX + 32], env[3 * PATH_MAX];
    snprintf(stubs, sizeof(stubs), "%s/cuda/lib64/stubs", tmp_root);
    mkdirs(stubs);
    char cupti[PATH_MAX + 32];
    snprintf(cupti, sizeof(cupti), "%s/cuda/extras/CUPTI/lib64", tmp_root);
    snprintf(env, sizeof(env), "%s:/nonexistent/cuda-11.8/lib64:/nonexistent/other/lib:%s", stubs, cupti);
    setenv("LD_LIBRARY_PATH", env, 1);
    setenv("LIBRARY_PATH", "/usr/local/cuda/lib64/stubs", 1);
    struct libs_run x;
    libs_run(&x, NULL, NULL, 5000);
    assert_non_null(report_find_finding(x.r, "cuda.lib-ld-path-stubs", stubs));
    assert_non_null(report_find_finding(x.r, "cuda.lib-ld-path-missing", "/nonexistent/cuda-11.8/lib64"));
    assert_null(report_find_finding(x.r, "cuda.lib-ld-path-missing", "/nonexistent/other/lib")); /* not CUDA's */
    assert_null(report_find_finding(x.r, "cuda.lib-ld-path-missing", cupti)); /* its toolkit is there */
    assert_null(report_find_finding(x.r, "cuda.lib-ld-path-stubs", "/usr/local/cuda/lib64/stubs"));
    assert_int_equal(check_severity("cuda.lib-ld-path-stubs"), REPORT_SEV_WARNING);
    libs_done(&x);
    clean_env();
}

/* The driver part's stub finding (cuda.stub-library, libcuda loaded from that stubs dir) is the cause. */
static void test_ld_path_stub_cause(void **state)
{
    (void)state;
    char stubs[PATH_MAX + 32], lib[PATH_MAX + 64];
    snprintf(stubs, sizeof(stubs), "%s/cuda2/lib64/stubs", tmp_root);
    mkdirs(stubs);
    snprintf(lib, sizeof(lib), "%s/libcuda.so", stubs);
    setenv("LD_LIBRARY_PATH", stubs, 1);
    struct libs_run x;
    memset(&x, 0, sizeof(x));
    assert_int_equal(hostfs_open(&x.fs, NULL), 0);
    x.r = report_new();
    x.sec = report_add_section(x.r, "cuda");
    assert_non_null(report_add_finding(x.r, "cuda.stub-library", lib, "the stub"));
    struct probe_ctx ctx = {.fs = &x.fs, .report = x.r, .timeout_ms = 10000};
    cuda_libs_report(&ctx, x.sec, NULL);
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-ld-path-stubs", stubs);
    assert_non_null(f);
    assert_non_null(f->caused_by_id);
    assert_string_equal(f->caused_by_id, "cuda.stub-library");
    assert_string_equal(f->caused_by_subject, lib);
    report_free(x.r);
    hostfs_close(&x.fs);
    clean_env();
}

/* A library that links libcuda.so.1 (cuDNN 9's runtime-compiled engines do) cannot load where libcuda cannot:
 * its failure is caused by the driver part's finding, never a root of its own ("reinstall the package"). */
static void test_needs_missing_libcuda(void **state)
{
    (void)state;
    char d[PATH_MAX + 8];
    snprintf(d, sizeof(d), "%s/needs", tmp_root);
    link_in(d, "libcublas.so.13", need_env("GC_FAKE_CUBLAS_NEEDS_CUDA"));
    setenv("LD_LIBRARY_PATH", d, 1);
    struct libs_run x;
    memset(&x, 0, sizeof(x));
    assert_int_equal(hostfs_open(&x.fs, NULL), 0);
    x.r = report_new();
    x.sec = report_add_section(x.r, "cuda");
    assert_non_null(report_add_finding(x.r, "cuda.no-libcuda", "libcuda.so.1", "no libcuda.so.1"));
    struct probe_ctx ctx = {.fs = &x.fs, .report = x.r, .timeout_ms = 10000, .mode = PROBE_MODE_LIVE};
    cuda_libs_report(&ctx, x.sec, NULL);
    const struct report_finding *f = NULL;
    for (size_t i = 0; i < x.r->n_findings && !f; i++)
        if (strcmp(x.r->findings[i]->id, "cuda.lib-load-failed") == 0 && strstr(x.r->findings[i]->message, "libcublas"))
            f = x.r->findings[i];
    assert_non_null(f);
    assert_non_null(strstr(f->message, "libcuda.so.1"));
    assert_non_null(f->caused_by_id);
    assert_string_equal(f->caused_by_id, "cuda.no-libcuda");
    report_free(x.r);
    hostfs_close(&x.fs);
    clean_env();
}

/* ---- a library that crashes or hangs when asked its version is a finding naming it ---- */

static void test_crash_hang(void **state)
{
    (void)state;
    char d1[PATH_MAX + 8], d2[PATH_MAX + 8], env[2 * PATH_MAX + 16];
    snprintf(d1, sizeof(d1), "%s/crash", tmp_root);
    snprintf(d2, sizeof(d2), "%s/hang", tmp_root);
    link_in(d1, "libcudart.so.13", need_env("GC_FAKE_CUDART_CRASH"));
    link_in(d2, "libcudnn.so.9", need_env("GC_FAKE_CUDNN_HANG"));
    snprintf(env, sizeof(env), "%s:%s", d1, d2);
    setenv("LD_LIBRARY_PATH", env, 1);
    struct libs_run x;
    libs_run(&x, NULL, NULL, 1500);
    const struct report_finding *c = report_find_finding(x.r, "cuda.lib-load-failed", need_env("GC_FAKE_CUDART_CRASH"));
    assert_non_null(c);
    assert_non_null(strstr(c->message, "libcudart.so.13"));
    assert_non_null(strstr(c->message, "SIGSEGV"));
    const struct report_finding *h = report_find_finding(x.r, "cuda.lib-load-failed", need_env("GC_FAKE_CUDNN_HANG"));
    assert_non_null(h);
    assert_non_null(strstr(h->message, "timed out"));
    json_object *o = libs_find(&x, "cudart", "LD_LIBRARY_PATH", true);
    assert_non_null(o);
    assert_string_equal(jstr(o, "search_entry"), d1);
    assert_null(jstr(o, "version"));
    assert_non_null(jstr(o, "error"));
    libs_done(&x);
    clean_env();
}

/* Issue 24 item 8: cuda.lib-driver-too-old names the driver it found, also where only its userspace is
 * there (no kernel module: Debian's libcuda1 535.261.03, cuDriverGetVersion 12020), and what it supports. */
static void test_driver_too_old_names_the_driver(void **state)
{
    (void)state;
    char d[PATH_MAX + 8];
    snprintf(d, sizeof(d), "%s/cu13", tmp_root);
    link_in(d, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_0"));
    setenv("LD_LIBRARY_PATH", d, 1);
    struct cuda_facts facts = {.driver_cuda_version = 12020, .cuinit_result = 100, .device_count = -1};
    strcpy(facts.libcuda_version, "535.261.03");
    struct libs_run x;
    libs_run(&x, NULL, &facts, 30000);
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-driver-too-old", NULL);
    assert_non_null(f);
    assert_non_null(strstr(f->message, "needs NVIDIA driver 580 or newer"));
    assert_non_null(strstr(f->message, "driver 535.261.03 here supports CUDA 12.2"));
    libs_done(&x);
    /* with the kernel module's version, that one is named */
    strcpy(facts.kernel_driver_version, "535.54.03");
    libs_run(&x, NULL, &facts, 30000);
    f = report_find_finding(x.r, "cuda.lib-driver-too-old", NULL);
    assert_non_null(f);
    assert_non_null(strstr(f->message, "driver 535.54.03 here supports CUDA 12.2"));
    libs_done(&x);
    clean_env();
}

/* Issue 31: under WSL2 the driver is the Windows host's: cuDriverGetVersion (12.8 here) against the runtime found
 * (CUDA 13.0) names both, and the fix is the Windows driver (by branch, R580), never a Linux one. */
static void test_driver_too_old_under_wsl2_is_the_windows_driver(void **state)
{
    (void)state;
    char d[PATH_MAX + 8];
    snprintf(d, sizeof(d), "%s/cu13wsl", tmp_root);
    link_in(d, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_0"));
    setenv("LD_LIBRARY_PATH", d, 1);
    struct cuda_facts facts = {.driver_cuda_version = 12080, .cuinit_result = 0, .device_count = 1, .wsl2 = true};
    struct libs_run x;
    libs_run(&x, NULL, &facts, 30000);
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-driver-too-old", NULL);
    assert_non_null(f);
    assert_non_null(strstr(f->message, "libcudart.so.13 (CUDA 13.0)"));
    assert_non_null(strstr(f->message, "needs a Windows NVIDIA driver R580 or newer"));
    assert_non_null(strstr(f->message, "supports CUDA 12.8"));
    assert_non_null(strstr(f->hint, "NVIDIA driver in Windows"));
    assert_non_null(strstr(f->hint, "wsl --shutdown"));
    assert_non_null(strstr(f->hint, "never install a Linux NVIDIA driver"));
    assert_null(strstr(f->hint, "Install NVIDIA driver"));
    assert_null(strstr(f->message, "NVIDIA driver 580 or newer"));
    libs_done(&x);
    /* a Windows driver new enough (CUDA 13.0): nothing */
    facts.driver_cuda_version = 13000;
    libs_run(&x, NULL, &facts, 30000);
    assert_null(report_find_finding(x.r, "cuda.lib-driver-too-old", NULL));
    libs_done(&x);
    clean_env();
}

/* Copy SRC to DIR/NAME, creating DIR. */
static void copy_in(const char *dir, const char *name, const char *src)
{
    mkdirs(dir);
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *in = fopen(src, "rb"), *out = fopen(p, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

/* One child loads every library in order; a library whose constructor crashes or hangs in the middle of
 * the list (cuDNN, between the runtime and cudnn_ops) still leaves the libraries before and after it
 * read, and is named by a child of its own. */
static void culprit_run(const char *name, const char *culprit, int timeout_ms, const char *how)
{
    char root[PATH_MAX + 8], dir[PATH_MAX + 32];
    snprintf(root, sizeof(root), "%s/%s", tmp_root, name);
    snprintf(dir, sizeof(dir), "%s/gclibs", root);
    copy_in(dir, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_0"));
    copy_in(dir, "libcudnn.so.9", need_env(culprit));
    copy_in(dir, "libcudnn_ops.so.9", need_env("GC_FAKE_CUDNN_9_19"));
    setenv("LD_LIBRARY_PATH", "/gclibs", 1); /* inside the tree */
    struct libs_run x;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    libs_run(&x, root, NULL, timeout_ms);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1000.0 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_true(ms < timeout_ms + 1000.0); /* the one deadline holds, rerun included */
    assert_int_equal(json_object_array_length(x.libs), 3);
    json_object *rt = libs_find(&x, "cudart", "LD_LIBRARY_PATH", true);
    json_object *ops = libs_find(&x, "cudnn_ops", "LD_LIBRARY_PATH", true);
    json_object *bad = libs_find(&x, "cudnn", "LD_LIBRARY_PATH", true);
    assert_non_null(rt);
    assert_non_null(ops);
    assert_non_null(bad);
    assert_string_equal(jstr(rt, "version"), "13.0");    /* before the culprit */
    assert_string_equal(jstr(ops, "version"), "9.19.0"); /* after it */
    assert_null(jstr(rt, "error"));
    assert_null(jstr(ops, "error"));
    assert_null(jstr(bad, "version"));
    assert_non_null(strstr(jstr(bad, "error"), how));
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-load-failed", "/gclibs/libcudnn.so.9");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "libcudnn.so.9"));
    assert_non_null(strstr(f->message, how));
    assert_int_equal(libs_serious(&x), 1); /* only the culprit */
    /* the shared child got as far as the culprit: the runtime was read there, the other two alone */
    json_object *notes = NULL;
    assert_true(json_object_object_get_ex(x.sec->data, "notes", &notes));
    assert_int_equal(json_object_array_length(notes), 1);
    const char *note = json_object_get_string(json_object_array_get_idx(notes, 0));
    assert_non_null(strstr(note, "while loading /gclibs/libcudnn.so.9"));
    assert_non_null(strstr(note, "the 2 not yet read"));
    libs_done(&x);
    clean_env();
}

static void test_one_child_culprit_crash(void **state)
{
    (void)state;
    culprit_run("ctor-crash", "GC_FAKE_CUDNN_INIT_CRASH", 10000, "SIGSEGV");
}

static void test_one_child_culprit_hang(void **state)
{
    (void)state;
    culprit_run("ctor-hang", "GC_FAKE_CUDNN_INIT_HANG", 2000, "timed out");
}

/* Files of one name (a SONAME) from two places are never loaded in one process: each gets its own. */
static void test_same_name_apart(void **state)
{
    (void)state;
    char root[PATH_MAX + 8], a[PATH_MAX + 32], b[PATH_MAX + 32];
    snprintf(root, sizeof(root), "%s/same-name", tmp_root);
    snprintf(a, sizeof(a), "%s/a", root);
    snprintf(b, sizeof(b), "%s/b", root);
    copy_in(a, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_1"));
    copy_in(b, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_0"));
    setenv("LD_LIBRARY_PATH", "/a:/b", 1);
    struct libs_run x;
    libs_run(&x, root, NULL, 10000);
    assert_int_equal(json_object_array_length(x.libs), 2);
    assert_string_equal(jstr(json_object_array_get_idx(x.libs, 0), "version"), "13.1");
    assert_string_equal(jstr(json_object_array_get_idx(x.libs, 1), "version"), "13.0");
    assert_false(json_object_object_get_ex(x.sec->data, "notes", NULL));
    libs_done(&x);
    clean_env();
}


/* Under --root (a captured tree, another machine), libraries are looked up in the tree and never loaded:
 * neither the tree's (whose constructor would crash here) nor this host's (on LD_LIBRARY_PATH, which says
 * nothing about the tree and is not judged there). */
static void test_root_never_loads(void **state)
{
    (void)state;
    char root[PATH_MAX + 8], lib[PATH_MAX + 32], d[PATH_MAX + 8], env[2 * PATH_MAX];
    snprintf(root, sizeof(root), "%s/captured", tmp_root);
    snprintf(lib, sizeof(lib), "%s/usr/lib", root);
    copy_in(lib, "libcudart.so.13.0.96", need_env("GC_FAKE_CUDNN_INIT_CRASH"));
    char link[PATH_MAX + 64];
    snprintf(link, sizeof(link), "%s/libcudart.so.13", lib);
    assert_int_equal(symlink("libcudart.so.13.0.96", link), 0);
    copy_in(lib, "libcudnn.so.9", need_env("GC_FAKE_CUDNN_INIT_HANG"));
    snprintf(d, sizeof(d), "%s/live-only", tmp_root);
    link_in(d, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_1"));
    snprintf(env, sizeof(env), "%s:/nonexistent/cuda-11.8/lib64:%s/cuda/lib64/stubs", d, tmp_root);
    setenv("LD_LIBRARY_PATH", env, 1);
    struct libs_run x;
    memset(&x, 0, sizeof(x));
    assert_int_equal(hostfs_open(&x.fs, root), 0);
    x.r = report_new();
    x.sec = report_add_section(x.r, "cuda");
    /* a tree with an NVIDIA GPU and its driver: still nothing is loaded */
    struct cuda_facts facts = {.driver_cuda_version = 13000, .cuinit_result = 0, .device_count = 1,
                               .nvidia_gpu_present = true, .nvidia_gpu_bound = true, .pci_known = true};
    struct probe_ctx ctx = {.fs = &x.fs, .mode = probe_mode_of(NULL, &x.fs), .report = x.r, .timeout_ms = 10000};
    assert_non_null(cuda_libs_no_load_reason(&ctx, &facts));
    cuda_libs_report(&ctx, x.sec, &facts);
    assert_true(json_object_object_get_ex(x.sec->data, "libraries", &x.libs));
    assert_int_equal(json_object_array_length(x.libs), 2);
    json_object *rt = libs_find(&x, "cudart", "default", true);
    assert_non_null(rt);
    assert_string_equal(jstr(rt, "path"), "/usr/lib/libcudart.so.13.0.96");
    assert_string_equal(jstr(rt, "version"), "13.0.96");
    assert_string_equal(jstr(rt, "version_from"), "file name");
    assert_null(jstr(rt, "error"));
    json_object *dnn = libs_find(&x, "cudnn", "default", true);
    assert_non_null(dnn);
    assert_string_equal(jstr(dnn, "version"), "9");
    assert_string_equal(jstr(dnn, "version_from"), "SONAME");
    assert_null(libs_find(&x, "cudart", "LD_LIBRARY_PATH", false));
    json_object *why = NULL;
    assert_true(json_object_object_get_ex(x.sec->data, "libraries_not_loaded", &why));
    assert_non_null(strstr(json_object_get_string(why), "--root"));
    assert_int_equal(x.r->n_findings, 0); /* no load failure, no LD_LIBRARY_PATH finding */
    assert_int_equal(x.sec->n_lines, 2);
    assert_non_null(strstr(x.sec->lines[0].text, "not loaded: "));
    libs_done(&x);
    clean_env();
}

/* A check on a host with no NVIDIA GPU and no driver lists the libraries without loading them; a GPU, the
 * nvidia module, any libcuda.so.1, `gpucheckup cuda` or a --require naming CUDA loads them. */
static void test_no_gpu_no_driver_no_load(void **state)
{
    (void)state;
    struct hostfs fs;
    assert_int_equal(hostfs_open(&fs, NULL), 0);
    struct cli_options o = {.command = "check"};
    struct probe_ctx ctx = {.fs = &fs, .opts = &o, .timeout_ms = 10000};
    struct cuda_facts none = {.driver_cuda_version = -1, .cuinit_result = -1, .device_count = -1,
                              .pci_known = true, .libcuda_missing = true};
    const char *why = cuda_libs_no_load_reason(&ctx, &none);
    assert_non_null(why);
    assert_string_equal(why, "no NVIDIA GPU or driver on this host");
    struct cuda_facts f = none;
    f.nvidia_gpu_present = true;
    assert_null(cuda_libs_no_load_reason(&ctx, &f));
    f = none;
    f.nvidia_module_loaded = true;
    assert_null(cuda_libs_no_load_reason(&ctx, &f));
    f = none;
    snprintf(f.kernel_driver_version, sizeof(f.kernel_driver_version), "580.159.04");
    assert_null(cuda_libs_no_load_reason(&ctx, &f));
    f = none;
    f.libcuda_missing = false; /* a stub, a broken libcuda, a driver without its GPU */
    assert_null(cuda_libs_no_load_reason(&ctx, &f));
    f = none;
    f.pci_known = false; /* no PCI facts: cannot say there is no GPU */
    assert_null(cuda_libs_no_load_reason(&ctx, &f));
    assert_null(cuda_libs_no_load_reason(&ctx, NULL));
    o.command = "cuda";
    assert_null(cuda_libs_no_load_reason(&ctx, &none));
    o.command = "check";
    char *reqs[] = {"opencl", "cuda>=12.4"};
    o.requires = reqs;
    o.n_requires = 1;
    assert_non_null(cuda_libs_no_load_reason(&ctx, &none));
    o.n_requires = 2;
    assert_null(cuda_libs_no_load_reason(&ctx, &none));
    char *cc[] = {"compute-capability>=8.0"};
    o.requires = cc;
    o.n_requires = 1;
    assert_null(cuda_libs_no_load_reason(&ctx, &none));
    o.requires = NULL;
    o.n_requires = 0;

    /* listed, not loaded: a library whose constructor would crash is only named */
    char d[PATH_MAX + 8];
    snprintf(d, sizeof(d), "%s/noload", tmp_root);
    link_in(d, "libcudnn.so.9", need_env("GC_FAKE_CUDNN_INIT_CRASH"));
    link_in(d, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_1"));
    setenv("LD_LIBRARY_PATH", d, 1);
    struct report *r = report_new();
    struct report_section *sec = report_add_section(r, "cuda");
    ctx.report = r;
    cuda_libs_report(&ctx, sec, &none);
    json_object *libs = NULL, *why_j = NULL;
    assert_true(json_object_object_get_ex(sec->data, "libraries", &libs));
    assert_true(json_object_object_get_ex(sec->data, "libraries_not_loaded", &why_j));
    assert_string_equal(json_object_get_string(why_j), "no NVIDIA GPU or driver on this host");
    bool seen_cudnn = false;
    for (size_t i = 0; i < json_object_array_length(libs); i++) {
        json_object *o2 = json_object_array_get_idx(libs, i);
        assert_null(jstr(o2, "error"));
        assert_null(jstr(o2, "cuda_version_from"));
        assert_true(jstr(o2, "version_from") == NULL || strcmp(jstr(o2, "version_from"), "library") != 0);
        seen_cudnn |= strcmp(jstr(o2, "path"), need_env("GC_FAKE_CUDNN_INIT_CRASH")) == 0;
    }
    assert_true(seen_cudnn);
    for (size_t i = 0; i < r->n_findings; i++) /* the host's other libraries: nothing that needs a load */
        assert_int_equal(strncmp(r->findings[i]->id, "cuda.lib-", 9) != 0 ||
                             strcmp(r->findings[i]->id, "cuda.lib-ld-path-stubs") == 0 ||
                             strcmp(r->findings[i]->id, "cuda.lib-ld-path-missing") == 0, 1);
    assert_string_equal(sec->lines[0].text, "not loaded: no NVIDIA GPU or driver on this host (versions from file names)");
    report_free(r);
    hostfs_close(&fs);
    clean_env();
}

/* A fake --root tree: the system's libcudart (13.1, default directory) differs from the pip wheel's
 * (13.0, a venv whose python3 is on PATH): information only, each program loads its own. A cuDNN
 * sub-library of another release than libcudnn beside it is a warning. */
static void test_fake_root(void **state)
{
    (void)state;
    char root[PATH_MAX], sys[PATH_MAX + 32], wheel[PATH_MAX + 64], bin[PATH_MAX + 16];
    snprintf(root, sizeof(root), "%s/root", tmp_root);
    snprintf(sys, sizeof(sys), "%s/usr/lib/x86_64-linux-gnu", root);
    snprintf(wheel, sizeof(wheel), "%s/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib", root);
    snprintf(bin, sizeof(bin), "%s/opt/venv/bin", root);
    copy_in(sys, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_1"));
    copy_in(sys, "libcudnn.so.9", need_env("GC_FAKE_CUDNN_CU12"));
    copy_in(sys, "libcudnn_ops.so.9", need_env("GC_FAKE_CUDNN_9_19"));
    copy_in(wheel, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_0"));
    copy_in(bin, "python3", need_env("GC_FAKE_CUDART_13_0")); /* any file: python is never run */
    setenv("PATH", "/opt/venv/bin:/usr/bin", 1);
    struct libs_run x;
    libs_run(&x, root, NULL, 10000);
#if defined(__x86_64__) && defined(__LP64__)
    json_object *sysrt = libs_find(&x, "cudart", "default", true);
    assert_non_null(sysrt);
    assert_string_equal(jstr(sysrt, "path"), "/usr/lib/x86_64-linux-gnu/libcudart.so.13");
    assert_string_equal(jstr(sysrt, "version"), "13.1");
    json_object *piprt = libs_find(&x, "cudart", "pip", false);
    assert_non_null(piprt);
    assert_string_equal(jstr(piprt, "wheel"), "/opt/venv/lib/python3.12/site-packages/nvidia/cu13/lib");
    assert_string_equal(jstr(piprt, "version"), "13.0");
    assert_string_equal(jstr(piprt, "search_entry"), "python3 on PATH (/opt/venv/bin/python3)");
    const struct report_finding *f =
        report_find_finding(x.r, "cuda.lib-versions-differ", "/opt/venv/lib/python3.12/site-packages");
    assert_non_null(f);
    assert_non_null(strstr(f->message, "13.1"));
    assert_int_equal(check_severity("cuda.lib-versions-differ"), REPORT_SEV_INFO);
    assert_null(report_find_finding(x.r, "cuda.lib-version-conflict", NULL));
    /* cuDNN 9.10.0 with a 9.19.0 libcudnn_ops beside it */
    json_object *ops = libs_find(&x, "cudnn_ops", "default", true);
    assert_non_null(ops);
    assert_string_equal(jstr(ops, "version"), "9.19.0");
    const struct report_finding *mixed =
        report_find_finding(x.r, "cuda.lib-cudnn-mixed", "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9");
    assert_non_null(mixed);
    assert_non_null(strstr(mixed->message, "beside it (both in /usr/lib/x86_64-linux-gnu, found via default)"));
    /* that cuDNN is built for CUDA 12, the runtime loaded first is 13 */
    assert_non_null(report_find_finding(x.r, "cuda.lib-cudnn-cuda-mismatch", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"));
#endif
    libs_done(&x);
    clean_env();
}

/* A tree with more library files than we examine: the first 128, and a note saying so. */
static void test_too_many_files(void **state)
{
    (void)state;
    char root[PATH_MAX], sys[PATH_MAX + 32];
    snprintf(root, sizeof(root), "%s/many", tmp_root);
    snprintf(sys, sizeof(sys), "%s/usr/lib/x86_64-linux-gnu", root);
    copy_in(sys, "libcudnn_graph.so.9", need_env("GC_FAKE_CUDNN_9_19"));
    for (int i = 0; i < 140; i++) {
        char name[64];
        snprintf(name, sizeof(name), "libcudnn_s%03d.so.9", i);
        link_in(sys, name, "libcudnn_graph.so.9"); /* one file, one child, many names */
    }
    struct libs_run x;
    libs_run(&x, root, NULL, 10000);
#if defined(__x86_64__) && defined(__LP64__)
    assert_int_equal(json_object_array_length(x.libs), 128);
    json_object *notes = NULL;
    assert_true(json_object_object_get_ex(x.sec->data, "notes", &notes));
    assert_non_null(strstr(json_object_to_json_string(notes), "only the first 128"));
    json_object *o = json_object_array_get_idx(x.libs, 127);
    assert_string_equal(jstr(o, "version"), "9.19.0");
#endif
    libs_done(&x);
    clean_env();
}

/* ---- the real toolkit (GC_CUDA_HOME): versions match its own headers ---- */

static void expect_version(const struct libs_run *x, const char *library, long major, long minor, long patch)
{
    json_object *o = libs_find(x, library, NULL, true);
    if (!o)
        fail_msg("%s not found", library);
    char want[64];
    if (patch >= 0)
        snprintf(want, sizeof(want), "%ld.%ld.%ld", major, minor, patch);
    else
        snprintf(want, sizeof(want), "%ld.%ld", major, minor);
    const char *v = jstr(o, "version");
    if (!v || strncmp(v, want, strlen(want)) != 0 || (v[strlen(want)] && v[strlen(want)] != '.'))
        fail_msg("%s: version %s, headers say %s", library, v ? v : "null", want);
}

static void test_toolkit_versions(void **state)
{
    (void)state;
    const char *home = need_env("GC_CUDA_HOME");
    char lib[PATH_MAX + 8];
    snprintf(lib, sizeof(lib), "%s/lib64", home);
    setenv("LD_LIBRARY_PATH", lib, 1);
    struct cuda_facts facts = {.nvidia_gpu_present = false, .driver_cuda_version = -1, .cuinit_result = -1,
                               .device_count = -1};
    struct libs_run x;
    libs_run(&x, NULL, &facts, 30000);
    long rt = header_define("cuda_runtime_api.h", "CUDART_VERSION");
    assert_true(rt > 0);
    expect_version(&x, "cudart", rt / 1000, (rt % 1000) / 10, -1);
    json_object *cudart = libs_find(&x, "cudart", "LD_LIBRARY_PATH", true);
    assert_non_null(cudart);
    assert_string_equal(jstr(cudart, "search_entry"), lib);
    assert_int_equal(jint(cudart, "cuda_major"), rt / 1000);
    expect_version(&x, "cublas", header_define("cublas_api.h", "CUBLAS_VER_MAJOR"),
                   header_define("cublas_api.h", "CUBLAS_VER_MINOR"), header_define("cublas_api.h", "CUBLAS_VER_PATCH"));
    expect_version(&x, "cublasLt", header_define("cublas_api.h", "CUBLAS_VER_MAJOR"),
                   header_define("cublas_api.h", "CUBLAS_VER_MINOR"), header_define("cublas_api.h", "CUBLAS_VER_PATCH"));
    expect_version(&x, "cufft", header_define("cufft.h", "CUFFT_VER_MAJOR"), header_define("cufft.h", "CUFFT_VER_MINOR"),
                   header_define("cufft.h", "CUFFT_VER_PATCH"));
    expect_version(&x, "cusparse", header_define("cusparse.h", "CUSPARSE_VER_MAJOR"),
                   header_define("cusparse.h", "CUSPARSE_VER_MINOR"), header_define("cusparse.h", "CUSPARSE_VER_PATCH"));
    expect_version(&x, "cusolver", header_define("cusolver_common.h", "CUSOLVER_VER_MAJOR"),
                   header_define("cusolver_common.h", "CUSOLVER_VER_MINOR"),
                   header_define("cusolver_common.h", "CUSOLVER_VER_PATCH"));
    expect_version(&x, "cudnn", header_define("cudnn_version.h", "CUDNN_MAJOR"),
                   header_define("cudnn_version.h", "CUDNN_MINOR"), header_define("cudnn_version.h", "CUDNN_PATCHLEVEL"));
    expect_version(&x, "nccl", header_define("nccl.h", "NCCL_MAJOR"), header_define("nccl.h", "NCCL_MINOR"),
                   header_define("nccl.h", "NCCL_PATCH"));
    /* NVRTC and nvJitLink carry the CUDA version itself */
    expect_version(&x, "nvrtc", rt / 1000, (rt % 1000) / 10, -1);
    expect_version(&x, "nvJitLink", rt / 1000, (rt % 1000) / 10, -1);
    /* every library of this toolkit belongs to its CUDA major, by whichever rule */
    const char *fams[] = {"cublas", "cublasLt", "cufft", "cusparse", "cusolver", "cudnn", "nvrtc", "nvJitLink"};
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
        json_object *o = libs_find(&x, fams[i], NULL, true);
        assert_non_null(o);
        if (jint(o, "cuda_major") != rt / 1000)
            fail_msg("%s: cuda_major %d, toolkit %ld", fams[i], jint(o, "cuda_major"), rt / 1000);
    }
    /* cuDNN 9's sub-libraries answer through libcudnn_graph */
    if (header_define("cudnn_version.h", "CUDNN_MAJOR") >= 9)
        expect_version(&x, "cudnn_ops", header_define("cudnn_version.h", "CUDNN_MAJOR"),
                       header_define("cudnn_version.h", "CUDNN_MINOR"),
                       header_define("cudnn_version.h", "CUDNN_PATCHLEVEL"));
    /* a healthy machine without GPU: no warning, no error */
    assert_int_equal(libs_serious(&x), 0);
    libs_done(&x);

    /* with the driver of the real H100 machine (580.159.04, CUDA 13.0): still clean */
    strcpy(facts.kernel_driver_version, "580.159.04");
    facts.driver_cuda_version = 13000;
    facts.nvidia_gpu_present = facts.nvidia_gpu_bound = facts.nvidia_module_loaded = true;
    libs_run(&x, NULL, &facts, 30000);
    assert_int_equal(libs_serious(&x), 0);
    assert_null(report_find_finding(x.r, "cuda.lib-driver-too-old", NULL));
    libs_done(&x);

    /* an older driver: the runtime needs a newer one */
    strcpy(facts.kernel_driver_version, "535.54.03");
    facts.driver_cuda_version = 12020;
    libs_run(&x, NULL, &facts, 30000);
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-driver-too-old", NULL);
    assert_non_null(f);
    assert_non_null(strstr(f->message, "580"));
    assert_non_null(strstr(f->message, "535.54.03"));
    assert_int_equal(check_severity("cuda.lib-driver-too-old"), REPORT_SEV_WARNING);
    libs_done(&x);
    clean_env();
}

/* A pip layout (CUDA 13 wheels: nvidia/cu13/lib, nvidia/cudnn/lib) found through a python3 on PATH. */
static void test_pip_layout(void **state)
{
    (void)state;
    const char *home = need_env("GC_CUDA_HOME");
    const char *site = make_venv("venv");
    char cu13[PATH_MAX + 32], cudnn[PATH_MAX + 32], t[PATH_MAX + 32];
    snprintf(cu13, sizeof(cu13), "%s/nvidia/cu13/lib", site);
    snprintf(cudnn, sizeof(cudnn), "%s/nvidia/cudnn/lib", site);
    const char *libs[] = {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libnvJitLink.so.13"};
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        snprintf(t, sizeof(t), "%s/lib64/%s", home, libs[i]);
        link_in(cu13, libs[i], t);
    }
    snprintf(t, sizeof(t), "%s/lib64/libcudnn.so.9", home);
    link_in(cudnn, "libcudnn.so.9", t);
    struct libs_run x;
    libs_run(&x, NULL, NULL, 30000);
    json_object *o = libs_find(&x, "cudart", "pip", false);
    assert_non_null(o);
    assert_string_equal(jstr(o, "wheel"), cu13);
    assert_non_null(strstr(jstr(o, "search_entry"), "python3 on PATH"));
    assert_false(jbool(o, "loaded_first"));
    long rt = header_define("cuda_runtime_api.h", "CUDART_VERSION");
    assert_int_equal(jint(o, "cuda_major"), rt / 1000);
    o = libs_find(&x, "cudnn", "pip", false);
    assert_non_null(o);
    assert_string_equal(jstr(o, "wheel"), cudnn);
    assert_non_null(jstr(o, "version"));
    /* the same files as the system's: no conflict */
    assert_null(report_find_finding(x.r, "cuda.lib-version-conflict", NULL));
    assert_null(report_find_finding(x.r, "cuda.lib-versions-differ", NULL));
    assert_null(report_find_finding(x.r, "cuda.lib-cudnn-cuda-mismatch", NULL));
    libs_done(&x);

    /* The same layout through VIRTUAL_ENV, with no python3 on PATH */
    char venv[PATH_MAX + 8];
    snprintf(venv, sizeof(venv), "%s/venv", tmp_root);
    setenv("PATH", "/usr/bin:/bin", 1);
    setenv("VIRTUAL_ENV", venv, 1);
    libs_run(&x, NULL, NULL, 30000);
    o = libs_find(&x, "cudart", "pip", false);
    assert_non_null(o);
    assert_string_equal(jstr(o, "search_entry"), "VIRTUAL_ENV");
    libs_done(&x);
    clean_env();
}

/* LD_LIBRARY_PATH puts another libcudart.so.13 (the suite's fake, 13.1) before the wheel's real one. */
static void test_conflict_and_toolkit(void **state)
{
    (void)state;
    const char *home = need_env("GC_CUDA_HOME");
    const char *site = make_venv("venv2");
    char cu13[PATH_MAX + 32], t[PATH_MAX + 32], ld[PATH_MAX + 8];
    snprintf(cu13, sizeof(cu13), "%s/nvidia/cu13/lib", site);
    snprintf(t, sizeof(t), "%s/lib64/libcudart.so.13", home);
    link_in(cu13, "libcudart.so.13", t);
    snprintf(ld, sizeof(ld), "%s/ldfirst", tmp_root);
    link_in(ld, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_1"));
    setenv("LD_LIBRARY_PATH", ld, 1);
    struct libs_run x;
    libs_run(&x, NULL, NULL, 30000);
    json_object *first = libs_find(&x, "cudart", "LD_LIBRARY_PATH", true);
    assert_non_null(first);
    assert_string_equal(jstr(first, "version"), "13.1");
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-version-conflict", "libcudart.so.13");
    assert_non_null(f);
    assert_non_null(strstr(f->message, cu13));
    assert_int_equal(check_severity("cuda.lib-version-conflict"), REPORT_SEV_WARNING);
    /* /usr/local/cuda is 13.0 while 13.1 loads first: information only */
    if (access("/usr/local/cuda/include/cuda_runtime_api.h", R_OK) == 0 && strstr(home, "/usr/local/cuda")) {
        assert_non_null(report_find_finding(x.r, "cuda.lib-toolkit-differs", NULL));
        assert_int_equal(check_severity("cuda.lib-toolkit-differs"), REPORT_SEV_INFO);
    }
    libs_done(&x);
    clean_env();
}

/* A cuDNN wheel built for CUDA 12 next to a CUDA 13 runtime wheel. */
static void test_cudnn_mismatch(void **state)
{
    (void)state;
    const char *home = need_env("GC_CUDA_HOME");
    const char *site = make_venv("venv3");
    char cu13[PATH_MAX + 32], cudnn[PATH_MAX + 32], t[PATH_MAX + 32];
    snprintf(cu13, sizeof(cu13), "%s/nvidia/cu13/lib", site);
    snprintf(cudnn, sizeof(cudnn), "%s/nvidia/cudnn/lib", site);
    snprintf(t, sizeof(t), "%s/lib64/libcudart.so.13", home);
    link_in(cu13, "libcudart.so.13", t);
    link_in(cudnn, "libcudnn.so.9", need_env("GC_FAKE_CUDNN_CU12"));
    struct libs_run x;
    libs_run(&x, NULL, NULL, 30000);
    json_object *o = libs_find(&x, "cudnn", "pip", false);
    assert_non_null(o);
    assert_string_equal(jstr(o, "version"), "9.10.0");
    assert_int_equal(jint(o, "cuda_major"), 12);
    char sub[PATH_MAX + 64];
    snprintf(sub, sizeof(sub), "%s/libcudnn.so.9", cudnn);
    (void)sub;
    assert_non_null(report_find_finding(x.r, "cuda.lib-cudnn-cuda-mismatch", need_env("GC_FAKE_CUDNN_CU12")));
    libs_done(&x);
    clean_env();
}

/* The unversioned libcuda.so (issue 36): the toolkit's stub first on LD_LIBRARY_PATH while libcuda.so.1 is the
 * driver's is a warning caused by the LD_LIBRARY_PATH entry; the driver's own libcuda.so first is nothing; a
 * driver with no libcuda.so anywhere is information only; a stub libcuda.so.1 is the driver part's to say. */
static void test_unversioned_libcuda(void **state)
{
    (void)state;
    char root[PATH_MAX], drv[PATH_MAX + 16], stubs[PATH_MAX + 40];
    snprintf(root, sizeof(root), "%s/unver", tmp_root);
    snprintf(drv, sizeof(drv), "%s/drv", root);
    snprintf(stubs, sizeof(stubs), "%s/usr/local/cuda/lib64/stubs", root);
    copy_in(drv, "libcuda.so.580.95.05", need_env("GC_FAKE_CUDART_13_0")); /* any ELF: never loaded */
    link_in(drv, "libcuda.so.1", "libcuda.so.580.95.05");
    copy_in(stubs, "libcuda.so", need_env("GC_FAKE_CUDART_13_0"));
    /* 1: stubs first, the driver's directory without libcuda.so */
    setenv("LD_LIBRARY_PATH", "/usr/local/cuda/lib64/stubs:/drv", 1);
    struct libs_run x;
    libs_run(&x, root, NULL, 10000);
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-unversioned-stub", NULL);
    assert_non_null(f);
    assert_string_equal(f->subject, "/usr/local/cuda/lib64/stubs/libcuda.so");
    assert_non_null(strstr(f->message, "LD_LIBRARY_PATH entry /usr/local/cuda/lib64/stubs"));
    assert_non_null(strstr(f->message, "libcuda.so.1 is the driver's /drv/libcuda.so.580.95.05"));
    assert_non_null(strstr(f->hint, "Remove /usr/local/cuda/lib64/stubs from LD_LIBRARY_PATH"));
    assert_string_equal(f->caused_by_id, "cuda.lib-ld-path-stubs");
    assert_int_equal(check_severity("cuda.lib-unversioned-stub"), REPORT_SEV_WARNING);
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-missing", NULL));
    libs_done(&x);
    /* 2: the driver's own libcuda.so first: nothing */
    link_in(drv, "libcuda.so", "libcuda.so.1");
    setenv("LD_LIBRARY_PATH", "/drv:/usr/local/cuda/lib64/stubs", 1);
    libs_run(&x, root, NULL, 10000);
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-stub", NULL));
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-missing", NULL));
    libs_done(&x);
    /* 3: WSL's layout: only libcuda.so.1 (and the versioned file), no libcuda.so anywhere, and nothing that
     * needs that name (no toolkit, no Triton): nothing, as on a driver-only host */
    char wsl[PATH_MAX + 24];
    snprintf(wsl, sizeof(wsl), "%s/usr/lib/wsl/lib", root);
    copy_in(wsl, "libcuda.so.1.1", need_env("GC_FAKE_CUDART_13_0"));
    link_in(wsl, "libcuda.so.1", "libcuda.so.1.1");
    setenv("LD_LIBRARY_PATH", "/usr/lib/wsl/lib", 1);
    libs_run(&x, root, NULL, 10000);
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-missing", NULL));
    libs_done(&x);
    /* 3b: a CUDA toolkit (its version.json) builds with -lcuda: now information, naming it */
    char tkv[PATH_MAX + 40];
    snprintf(tkv, sizeof(tkv), "%s/usr/local/cuda/version.json", root);
    FILE *vj = fopen(tkv, "w");
    assert_non_null(vj);
    fputs("{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"13.0.2\"}}\n", vj);
    fclose(vj);
    libs_run(&x, root, NULL, 10000);
    f = report_find_finding(x.r, "cuda.lib-unversioned-missing", "/usr/lib/wsl/lib");
    assert_non_null(f);
    bool named = false;
    for (size_t i = 0; i < f->n_evidence; i++)
        named |= strcmp(f->evidence[i].source, "needed by") == 0 && strstr(f->evidence[i].value, "CUDA toolkit");
    assert_true(named);
    assert_int_equal(check_severity("cuda.lib-unversioned-missing"), REPORT_SEV_INFO);
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-stub", NULL));
    libs_done(&x);
    /* 3c: no toolkit; a venv with an NVIDIA wheel: nothing; Triton beside it (links -lcuda when it compiles):
     * information, naming Triton */
    assert_int_equal(unlink(tkv), 0);
    char site[PATH_MAX + 64], cu13[PATH_MAX + 96], triton[PATH_MAX + 96];
    snprintf(site, sizeof(site), "%s/venv/lib/python3.12/site-packages", root);
    snprintf(cu13, sizeof(cu13), "%s/nvidia/cu13/lib", site);
    copy_in(cu13, "libcudart.so.13", need_env("GC_FAKE_CUDART_13_0"));
    setenv("VIRTUAL_ENV", "/venv", 1);
    libs_run(&x, root, NULL, 10000);
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-missing", NULL));
    libs_done(&x);
    snprintf(triton, sizeof(triton), "%s/triton", site);
    mkdirs(triton);
    libs_run(&x, root, NULL, 10000);
    f = report_find_finding(x.r, "cuda.lib-unversioned-missing", "/usr/lib/wsl/lib");
    assert_non_null(f);
    named = false;
    for (size_t i = 0; i < f->n_evidence; i++)
        named |= strcmp(f->evidence[i].source, "needed by") == 0 && strstr(f->evidence[i].value, "Triton in /venv/");
    assert_true(named);
    libs_done(&x);
    unsetenv("VIRTUAL_ENV");
    /* 4: the stub is libcuda.so.1 itself (cuda.stub-library's case) or there is no driver: nothing here */
    link_in(stubs, "libcuda.so.1", "libcuda.so");
    setenv("LD_LIBRARY_PATH", "/usr/local/cuda/lib64/stubs", 1);
    libs_run(&x, root, NULL, 10000);
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-stub", NULL));
    assert_null(report_find_finding(x.r, "cuda.lib-unversioned-missing", NULL));
    libs_done(&x);
    clean_env();
}

/* cuda.lib-cudnn-mixed names both directories and how each was found when they differ (issue 36). */
static void test_cudnn_mixed_two_dirs(void **state)
{
    (void)state;
    char root[PATH_MAX], a[PATH_MAX + 16], b[PATH_MAX + 16];
    snprintf(root, sizeof(root), "%s/mixed", tmp_root);
    snprintf(a, sizeof(a), "%s/opt/cudnn", root);
    snprintf(b, sizeof(b), "%s/opt/old", root);
    copy_in(a, "libcudnn.so.9", need_env("GC_FAKE_CUDNN_CU12"));
    copy_in(b, "libcudnn_ops.so.9", need_env("GC_FAKE_CUDNN_9_19"));
    setenv("LD_LIBRARY_PATH", "/opt/cudnn:/opt/old", 1);
    struct libs_run x;
    libs_run(&x, root, NULL, 10000);
    const struct report_finding *f = report_find_finding(x.r, "cuda.lib-cudnn-mixed", "/opt/old/libcudnn_ops.so.9");
    assert_non_null(f);
    assert_null(strstr(f->message, "beside"));
    assert_non_null(strstr(f->message, "libcudnn_ops.so.9 is cuDNN 9.19.0 (in /opt/old, found via LD_LIBRARY_PATH entry "
                                       "/opt/old)"));
    assert_non_null(strstr(f->message, "libcudnn.so.9 is cuDNN 9.10.0 (in /opt/cudnn, found via LD_LIBRARY_PATH entry "
                                       "/opt/cudnn)"));
    libs_done(&x);
    clean_env();
}

int main(int argc, char **argv)
{
    const struct CMUnitTest base[] = {
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_same_version),
        cmocka_unit_test(test_empty_root),
        cmocka_unit_test(test_root_never_loads),
        cmocka_unit_test(test_no_gpu_no_driver_no_load),
        cmocka_unit_test(test_ld_path),
        cmocka_unit_test(test_ld_path_stub_cause),
        cmocka_unit_test(test_needs_missing_libcuda),
        cmocka_unit_test(test_crash_hang),
        cmocka_unit_test(test_driver_too_old_names_the_driver),
        cmocka_unit_test(test_driver_too_old_under_wsl2_is_the_windows_driver),
        cmocka_unit_test(test_one_child_culprit_crash),
        cmocka_unit_test(test_one_child_culprit_hang),
        cmocka_unit_test(test_same_name_apart),
        cmocka_unit_test(test_fake_root),
        cmocka_unit_test(test_too_many_files),
        cmocka_unit_test(test_unversioned_libcuda),
        cmocka_unit_test(test_cudnn_mixed_two_dirs),
    };
    const struct CMUnitTest toolkit[] = {
        cmocka_unit_test(test_toolkit_versions),
        cmocka_unit_test(test_pip_layout),
        cmocka_unit_test(test_conflict_and_toolkit),
        cmocka_unit_test(test_cudnn_mismatch),
    };
    if (argc > 1 && strcmp(argv[1], "toolkit") == 0)
        return cmocka_run_group_tests(toolkit, setup, teardown);
    return cmocka_run_group_tests(base, setup, teardown);
}
