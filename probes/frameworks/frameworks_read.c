/* frameworks_read.c: what each framework copy is built for, read from its own files (the source of each field named). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frameworks_internal.h"
#include "frameworks_parse.h"
#include "jsonget.h"
#include "ldsearch.h"
#include "strutil.h"

/* ---- helpers ---- */

static void fw_norm(char *s)
{
    for (; *s; s++)
        *s = *s == '-' || *s == '.' ? '_' : (*s >= 'A' && *s <= 'Z') ? (char)(*s - 'A' + 'a') : *s;
}

/* The distributions installed in SITE: its *.dist-info folders (at most MAX; those past it are added to *OVER). */
static size_t fw_dists(const struct hostfs *fs, const char *site, struct fw_dist *out, size_t max, size_t *over)
{
    char **names = NULL;
    size_t n = 0, k = 0;
    if (ldsearch_dir_match(fs, site, "*.dist-info", &names, &n) < 0)
        return 0;
    size_t i = 0;
    for (; i < n && k < max; i++) {
        const char *dash = strchr(names[i], '-');
        size_t tail = strlen(".dist-info"), len = strlen(names[i]);
        if (!dash || len <= tail || (size_t)(dash - names[i]) >= sizeof(out[k].name))
            continue;
        struct fw_dist *d = &out[k];
        snprintf(d->name, sizeof(d->name), "%.*s", (int)(dash - names[i]), names[i]);
        fw_norm(d->name);
        snprintf(d->version, sizeof(d->version), "%.*s", (int)(len - tail - (size_t)(dash + 1 - names[i])), dash + 1);
        snprintf(d->dir, sizeof(d->dir), "%s", names[i]);
        str_sanitize(d->version);
        str_sanitize(d->dir);
        k++;
    }
    *over += n - i; /* the dist-info folders past MAX: not looked at, counted */
    ldsearch_strv_free(names, n);
    return k;
}

static const struct fw_dist *fw_dist_find(const struct fw_dist *d, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return &d[i];
    return NULL;
}

static bool fw_is_dir(const struct hostfs *fs, const char *site, const char *name)
{
    char *p = ldsearch_join(site, name);
    struct stat st;
    bool ok = p && hostfs_stat(fs, p, &st, true) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return ok;
}

/* Read SITE/REL (bounded) into *BUF; F->source names it. 0, or -errno (then F->damaged says so when the
 * framework is otherwise there). */
static int fw_read_file(const struct hostfs *fs, const char *site, const char *rel, struct fw_found *f, char **buf,
                        size_t *len)
{
    snprintf(f->source, sizeof(f->source), "%s/%s", site, rel);
    int rc = hostfs_read_file(fs, f->source, FW_MAX_READ, buf, len);
    if (rc < 0) {
        free(f->damaged);
        f->damaged = str_printf("%s: %s", f->source, rc == -EFBIG ? "larger than a build file can be" : strerror(-rc));
    }
    return rc;
}

static void fw_set(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src);
}

static void fw_pin_add(const char *name, const char *spec, void *arg)
{
    json_object *arr = arg, *o = json_object_new_object();
    if (!o)
        return;
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "spec", json_object_new_string(spec));
    json_object_array_add(arr, o);
}

/* The requirements on NVIDIA's wheels in DIST's METADATA (core metadata, Requires-Dist headers). */
static json_object *fw_pins(const struct hostfs *fs, const char *site, const struct fw_dist *dist)
{
    if (!dist)
        return NULL;
    char *path = str_printf("%s/%s/METADATA", site, dist->dir), *buf = NULL;
    size_t len = 0;
    json_object *arr = NULL;
    if (path && hostfs_read_file(fs, path, FW_MAX_READ, &buf, &len) == 0 && (arr = json_object_new_array()))
        fw_meta_pins(buf, len, 64, fw_pin_add, arr);
    free(buf);
    free(path);
    return arr;
}

/* Each pin of F (fw_pins) against the distributions installed beside it (D, N: the same site): adds
 * "installed" (the version there, or null) and "state" ("ok", "missing", "other-version", "optional",
 * "unknown") to each, and counts the missing and the mismatched in F. */
static void fw_pins_check(struct fw_found *f, const struct fw_dist *d, size_t n)
{
    for (size_t i = 0; f->pins && i < json_object_array_length(f->pins); i++) {
        json_object *pin = json_object_array_get_idx(f->pins, i);
        const char *name = jsonget_str(pin, "name"), *spec = jsonget_str(pin, "spec");
        char norm[sizeof(d->name)];
        snprintf(norm, sizeof(norm), "%s", name ? name : "");
        fw_norm(norm);
        const struct fw_dist *have = fw_dist_find(d, n, norm);
        enum fw_pin_state st = fw_pin_eval(spec ? spec : "", have ? have->version : "0");
        /* the site's Python ("lib/python3.11/site-packages": 3.11) against python_version markers */
        char py[16] = "";
        const char *at = strstr(f->site, "/python3.");
        if (at)
            snprintf(py, sizeof(py), "%.*s", (int)strspn(at + 7, "0123456789."), at + 7);
        bool applies = fw_marker_python(spec ? spec : "", py);
        const char *state = !applies ? "other-python" : st == FW_PIN_OPTIONAL ? "optional" : !have ? "missing"
                          : st == FW_PIN_OK ? "ok" : st == FW_PIN_OTHER ? "other-version" : "unknown";
        json_object_object_add(pin, "installed", have ? json_object_new_string(have->version) : NULL);
        json_object_object_add(pin, "state", json_object_new_string(state));
        if (strcmp(state, "missing") == 0)
            f->pins_missing++;
        else if (strcmp(state, "other-version") == 0)
            f->pins_other++;
    }
}

/* The pins of an extra (TensorFlow's `extra == "and-cuda"`, the JAX CUDA plugin's `extra == "with-cuda"`)
 * are wanted only by `pip install NAME[extra]`, which no installed file records. Where one of them is
 * installed beside F, the extra was asked for (pip installs them together), and the others are judged as F's
 * own pins, a missing one "extra-missing": a finding, never the root cause (the installed ones may be another
 * framework's extra: TensorFlow's and JAX's name the same wheels); where none is, they stay "optional" (JAX's
 * cuda12-local, TensorFlow without [and-cuda]). */
static void fw_pins_extra(struct fw_found *f)
{
    bool wanted = false;
    for (size_t i = 0; f->pins && i < json_object_array_length(f->pins) && !wanted; i++) {
        json_object *pin = json_object_array_get_idx(f->pins, i);
        const char *st = jsonget_str(pin, "state");
        wanted = st && strcmp(st, "optional") == 0 && jsonget_str(pin, "installed");
    }
    for (size_t i = 0; wanted && i < json_object_array_length(f->pins); i++) {
        json_object *pin = json_object_array_get_idx(f->pins, i);
        const char *st = jsonget_str(pin, "state"), *spec = jsonget_str(pin, "spec"), *have = jsonget_str(pin, "installed");
        if (!st || strcmp(st, "optional") != 0)
            continue;
        char req[200]; /* the version part, without the markers */
        snprintf(req, sizeof(req), "%.*s", (int)strcspn(spec ? spec : "", ";"), spec ? spec : "");
        enum fw_pin_state e = fw_pin_eval(req, have ? have : "0");
        const char *state = !have ? "extra-missing" : e == FW_PIN_OK ? "ok" : e == FW_PIN_OTHER ? "other-version"
                          : "unknown";
        json_object_object_add(pin, "state", json_object_new_string(state));
        if (strcmp(state, "extra-missing") == 0)
            f->pins_extra++;
        else if (strcmp(state, "other-version") == 0)
            f->pins_other++;
    }
}

/* ---- PyTorch: torch/version.py, written by its setup (tools/generate_torch_version.py): __version__,
 * cuda (CUDA version or None), hip (ROCm's HIP version or None), xpu (SYCL/oneAPI or None). ---- */
static bool fw_torch(const struct hostfs *fs, const char *site, const struct fw_dist *d, size_t n, struct fw_found *f)
{
    const struct fw_dist *dist = fw_dist_find(d, n, "torch");
    if (!dist && !fw_is_dir(fs, site, "torch"))
        return false;
    fw_set(f->dist, sizeof(f->dist), "torch");
    if (dist)
        fw_set(f->version, sizeof(f->version), dist->version);
    f->pins = fw_pins(fs, site, dist);
    fw_pins_check(f, d, n);
    char *buf = NULL;
    size_t len = 0;
    if (fw_read_file(fs, site, "torch/version.py", f, &buf, &len) < 0)
        return true;
    char v[64], cuda[32], hip[32], xpu[32];
    if (fw_py_assign(buf, len, "__version__", v, sizeof(v)) == FW_PY_STR)
        fw_set(f->version, sizeof(f->version), v);
    enum fw_py c = fw_py_assign(buf, len, "cuda", cuda, sizeof(cuda));
    enum fw_py h = fw_py_assign(buf, len, "hip", hip, sizeof(hip));
    enum fw_py x = fw_py_assign(buf, len, "xpu", xpu, sizeof(xpu));
    if (c == FW_PY_STR) {
        f->build = FW_BUILD_CUDA;
        fw_set(f->cuda, sizeof(f->cuda), cuda);
    } else if (h == FW_PY_STR) {
        f->build = FW_BUILD_ROCM;
        fw_set(f->rocm, sizeof(f->rocm), hip);
    } else if (x == FW_PY_STR) {
        f->build = FW_BUILD_XPU;
    } else if (c == FW_PY_NONE && h != FW_PY_OTHER) {
        f->build = FW_BUILD_CPU;
    } else {
        f->damaged = str_printf("%s: no `cuda = ...` line of a known form", f->source);
    }
    free(buf);
    return true;
}

/* ---- TensorFlow: tensorflow/python/platform/build_info.py, generated by its build
 * (tensorflow/tools/build_info/gen_build_info.py): build_info = {...} or OrderedDict([...]) with
 * is_cuda_build, is_rocm_build, cuda_version, cudnn_version, rocm_version. ---- */
static bool fw_tensorflow(const struct hostfs *fs, const char *site, const struct fw_dist *d, size_t n,
                          struct fw_found *f)
{
    static const char *const dists[] = {"tensorflow", "tensorflow_cpu", "tensorflow_gpu", "tf_nightly",
                                        "tensorflow_intel", "tensorflow_rocm", NULL};
    const struct fw_dist *dist = NULL;
    for (size_t i = 0; dists[i] && !dist; i++)
        dist = fw_dist_find(d, n, dists[i]);
    if (!dist && !fw_is_dir(fs, site, "tensorflow"))
        return false;
    if (dist) {
        fw_set(f->dist, sizeof(f->dist), dist->name);
        for (char *p = f->dist; *p; p++)
            *p = *p == '_' ? '-' : *p;
        fw_set(f->version, sizeof(f->version), dist->version);
        f->pins = fw_pins(fs, site, dist);
        fw_pins_check(f, d, n);
        fw_pins_extra(f);
    }
    char *buf = NULL;
    size_t len = 0;
    if (fw_read_file(fs, site, "tensorflow/python/platform/build_info.py", f, &buf, &len) < 0)
        return true;
    char cuda[32], cudnn[32], rocm[32], tmp[8];
    enum fw_py ic = fw_py_dict_get(buf, len, "build_info", "is_cuda_build", tmp, sizeof(tmp));
    enum fw_py ir = fw_py_dict_get(buf, len, "build_info", "is_rocm_build", tmp, sizeof(tmp));
    if (ic == FW_PY_TRUE && fw_py_dict_get(buf, len, "build_info", "cuda_version", cuda, sizeof(cuda)) == FW_PY_STR) {
        f->build = FW_BUILD_CUDA;
        fw_set(f->cuda, sizeof(f->cuda), cuda);
        if (fw_py_dict_get(buf, len, "build_info", "cudnn_version", cudnn, sizeof(cudnn)) == FW_PY_STR)
            snprintf(f->extra, sizeof(f->extra), "cuDNN %s", cudnn);
    } else if (ir == FW_PY_TRUE) {
        f->build = FW_BUILD_ROCM;
        if (fw_py_dict_get(buf, len, "build_info", "rocm_version", rocm, sizeof(rocm)) == FW_PY_STR)
            fw_set(f->rocm, sizeof(f->rocm), rocm);
    } else if (ic == FW_PY_FALSE && ir == FW_PY_FALSE) {
        f->build = FW_BUILD_CPU;
    } else {
        f->damaged = str_printf("%s: no is_cuda_build / is_rocm_build / cuda_version of a known form", f->source);
    }
    free(buf);
    return true;
}

/* ---- JAX: jaxlib's version from its dist-info; its GPU support is a plugin wheel, jax-cuda12-plugin or
 * jax-cuda13-plugin (with jax-cudaNN-pjrt), or jax-rocmNN-plugin (JAX installation guide). Old jaxlib
 * wheels carried the CUDA build in the version's local part ("0.4.13+cuda12.cudnn89"). ---- */
static bool fw_jax(const struct hostfs *fs, const char *site, const struct fw_dist *d, size_t n, struct fw_found *f)
{
    const struct fw_dist *dist = fw_dist_find(d, n, "jaxlib");
    if (!dist && !fw_is_dir(fs, site, "jaxlib"))
        return false;
    fw_set(f->dist, sizeof(f->dist), "jaxlib");
    if (dist) {
        fw_set(f->version, sizeof(f->version), dist->version);
        snprintf(f->source, sizeof(f->source), "%s/%s", site, dist->dir);
    }
    f->build = FW_BUILD_CPU;
    for (size_t i = 0; i < n; i++) {
        const char *nm = d[i].name;
        int major = -1;
        if (sscanf(nm, "jax_cuda%d_plugin", &major) == 1 && major > 0 && str_ends_with(nm, "_plugin")) {
            f->build = FW_BUILD_CUDA;
            snprintf(f->cuda, sizeof(f->cuda), "%d", major);
            /* a long version is cut: the line says which plugin, the JSON keeps its dist-info path */
            int cut = snprintf(f->extra, sizeof(f->extra), "jax-cuda%d-plugin %s", major, d[i].version);
            (void)cut;
            snprintf(f->source, sizeof(f->source), "%s/%s", site, d[i].dir);
            if (f->pins) /* a second plugin (cuda12 and cuda13): the last one's pins */
                json_object_put(f->pins);
            f->pins_missing = f->pins_other = f->pins_extra = 0;
            f->pins = fw_pins(fs, site, &d[i]);
            fw_pins_check(f, d, n);
            fw_pins_extra(f);
        } else if (sscanf(nm, "jax_rocm%d_plugin", &major) == 1 && str_ends_with(nm, "_plugin") &&
                   f->build != FW_BUILD_CUDA) {
            f->build = FW_BUILD_ROCM;
            int cut = snprintf(f->extra, sizeof(f->extra), "jax-rocm%d-plugin %s", major, d[i].version);
            (void)cut;
            snprintf(f->source, sizeof(f->source), "%s/%s", site, d[i].dir);
        }
    }
    const char *local = strstr(f->version, "+cuda");
    if (f->build == FW_BUILD_CPU && local && fw_version_major(local + 5) > 0) {
        f->build = FW_BUILD_CUDA;
        snprintf(f->cuda, sizeof(f->cuda), "%d", fw_version_major(local + 5));
    }
    return true;
}

/* ---- CuPy: one wheel per CUDA series, named for it (cupy-cuda12x, cupy-cuda13x; cupy-rocm-X-Y); the
 * plain `cupy` is a source build whose CUDA is whatever it was compiled against (CuPy's install guide). ---- */
static bool fw_cupy(const struct hostfs *fs, const char *site, const struct fw_dist *d, size_t n, struct fw_found *f)
{
    (void)fs;
    for (size_t i = 0; i < n; i++) {
        const char *nm = d[i].name;
        int major = -1;
        bool cuda = sscanf(nm, "cupy_cuda%d", &major) == 1 && major > 0;
        if (!cuda && !str_starts_with(nm, "cupy_rocm") && strcmp(nm, "cupy") != 0)
            continue;
        fw_set(f->dist, sizeof(f->dist), nm);
        for (char *p = f->dist; *p; p++)
            *p = *p == '_' ? '-' : *p;
        fw_set(f->version, sizeof(f->version), d[i].version);
        snprintf(f->source, sizeof(f->source), "%s/%s", site, d[i].dir);
        if (cuda) {
            f->build = FW_BUILD_CUDA;
            snprintf(f->cuda, sizeof(f->cuda), "%d", major);
        } else if (strcmp(nm, "cupy") != 0) {
            f->build = FW_BUILD_ROCM;
        }
        return true;
    }
    return false;
}

/* ---- ONNX Runtime: onnxruntime/capi/build_and_package_info.py, written by its setup.py: package_name
 * ("onnxruntime", "onnxruntime-gpu"...), __version__, and cuda_version in CUDA builds. ---- */
static bool fw_onnxruntime(const struct hostfs *fs, const char *site, const struct fw_dist *d, size_t n,
                           struct fw_found *f)
{
    (void)d;
    (void)n;
    if (!fw_is_dir(fs, site, "onnxruntime"))
        return false;
    fw_set(f->dist, sizeof(f->dist), "onnxruntime");
    char *buf = NULL;
    size_t len = 0;
    if (fw_read_file(fs, site, "onnxruntime/capi/build_and_package_info.py", f, &buf, &len) < 0)
        return true;
    char pkg[64], v[64], cuda[32];
    if (fw_py_assign(buf, len, "package_name", pkg, sizeof(pkg)) == FW_PY_STR)
        fw_set(f->dist, sizeof(f->dist), pkg);
    if (fw_py_assign(buf, len, "__version__", v, sizeof(v)) == FW_PY_STR)
        fw_set(f->version, sizeof(f->version), v);
    else
        f->damaged = str_printf("%s: no __version__", f->source);
    if (fw_py_assign(buf, len, "cuda_version", cuda, sizeof(cuda)) == FW_PY_STR && cuda[0]) {
        f->build = FW_BUILD_CUDA;
        fw_set(f->cuda, sizeof(f->cuda), cuda);
    } else if (strstr(f->dist, "rocm") || strstr(f->dist, "migraphx")) {
        f->build = FW_BUILD_ROCM;
    } else if (!strstr(f->dist, "gpu")) {
        f->build = FW_BUILD_CPU; /* CPU, or another execution provider (OpenVINO, DirectML): no CUDA/ROCm */
    }
    free(buf);
    return true;
}

/* ---- PaddlePaddle: paddle/version/__init__.py, written by its setup.py: full_version, cuda_version and
 * cudnn_version ('False' in a CPU build), hip_version (None unless ROCm), xpu_version / xpu_xre_version
 * ('False' unless Kunlun XPU). The wheels are paddlepaddle (CPU) and paddlepaddle-gpu. ---- */
static bool fw_paddle(const struct hostfs *fs, const char *site, const struct fw_dist *d, size_t n, struct fw_found *f)
{
    static const char *const dists[] = {"paddlepaddle_gpu", "paddlepaddle", "paddlepaddle_rocm", "paddlepaddle_xpu",
                                        NULL};
    const struct fw_dist *dist = NULL;
    for (size_t i = 0; dists[i] && !dist; i++)
        dist = fw_dist_find(d, n, dists[i]);
    if (!dist && !fw_is_dir(fs, site, "paddle/version"))
        return false;
    fw_set(f->dist, sizeof(f->dist), dist ? dist->name : "paddlepaddle");
    for (char *p = f->dist; *p; p++)
        *p = *p == '_' ? '-' : *p;
    if (dist)
        fw_set(f->version, sizeof(f->version), dist->version);
    char *buf = NULL;
    size_t len = 0;
    if (fw_read_file(fs, site, "paddle/version/__init__.py", f, &buf, &len) < 0)
        return true;
    char v[64], cuda[32], cudnn[32], hip[32], xpu[32];
    if (fw_py_assign(buf, len, "full_version", v, sizeof(v)) == FW_PY_STR)
        fw_set(f->version, sizeof(f->version), v);
    enum fw_py c = fw_py_assign(buf, len, "cuda_version", cuda, sizeof(cuda));
    enum fw_py h = fw_py_assign(buf, len, "hip_version", hip, sizeof(hip));
    enum fw_py x = fw_py_assign(buf, len, "xpu_xre_version", xpu, sizeof(xpu));
    if (x == FW_PY_MISSING)
        x = fw_py_assign(buf, len, "xpu_version", xpu, sizeof(xpu));
    if (c == FW_PY_STR && strcmp(cuda, "False") != 0 && fw_version_major(cuda) > 0) {
        f->build = FW_BUILD_CUDA;
        fw_set(f->cuda, sizeof(f->cuda), cuda);
        if (fw_py_assign(buf, len, "cudnn_version", cudnn, sizeof(cudnn)) == FW_PY_STR && strcmp(cudnn, "False") != 0)
            snprintf(f->extra, sizeof(f->extra), "cuDNN %s", cudnn);
    } else if (h == FW_PY_STR && strcmp(hip, "False") != 0 && hip[0]) {
        f->build = FW_BUILD_ROCM;
        fw_set(f->rocm, sizeof(f->rocm), hip);
    } else if (x == FW_PY_STR && strcmp(xpu, "False") != 0 && xpu[0]) {
        f->build = FW_BUILD_XPU;
    } else if (c == FW_PY_STR && strcmp(cuda, "False") == 0) {
        f->build = FW_BUILD_CPU;
    } else {
        f->damaged = str_printf("%s: no `cuda_version = ...` line of a known form", f->source);
    }
    free(buf);
    return true;
}

const struct fw_kind fw_kinds[] = {
    {"torch", "PyTorch", fw_torch},
    {"tensorflow", "TensorFlow", fw_tensorflow},
    {"jax", "JAX", fw_jax},
    {"cupy", "CuPy", fw_cupy},
    {"onnxruntime", "ONNX Runtime", fw_onnxruntime},
    {"paddle", "PaddlePaddle", fw_paddle},
};
const size_t fw_n_kinds = sizeof(fw_kinds) / sizeof(fw_kinds[0]);

void fw_read_all(const struct hostfs *fs, struct fw_scan *s)
{
    struct fw_dist *dists = calloc(FW_MAX_DISTS, sizeof(*dists));
    if (!dists)
        return;
    for (size_t e = 0; e < s->n_envs; e++)
        for (size_t i = 0; i < s->envs[e].n_sites; i++) {
            const char *site = s->envs[e].sites[i];
            size_t nd = fw_dists(fs, site, dists, FW_MAX_DISTS, &s->dists_dropped);
            for (size_t k = 0; k < fw_n_kinds; k++) {
                struct fw_found f;
                memset(&f, 0, sizeof(f));
                f.kind = &fw_kinds[k];
                f.env = e;
                fw_set(f.site, sizeof(f.site), site);
                if (!fw_kinds[k].read(fs, site, dists, nd, &f))
                    continue;
                if (s->n_found < FW_MAX_FOUND) {
                    s->found[s->n_found++] = f;
                    continue;
                }
                s->dropped++;
                if (f.pins)
                    json_object_put(f.pins);
                free(f.damaged);
            }
        }
    free(dists);
}

const char *fw_build_name(enum fw_build b)
{
    static const char *const names[] = {"unknown", "cpu", "cuda", "rocm", "xpu"};
    return (size_t)b < sizeof(names) / sizeof(names[0]) ? names[b] : "unknown";
}
