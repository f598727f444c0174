/* doctor.c: the step after every probe: root causes, --require, verdict targets and verdict text. */
#include "doctor.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cpu_x86.h"
#include "jsonget.h"
#include "run.h"
#include "strutil.h"
#include "vendor.h"

/* ---- reading the sections' facts (the probes' JSON contracts) ---- */

/* DATA of section NAME when it ran ok, else NULL. */
static json_object *doctor_data(const struct report *r, const char *name)
{
    const struct report_section *s = report_find_section(r, name);
    return s && s->status == REPORT_STATUS_OK ? s->data : NULL;
}

static bool doctor_type_has(json_object *dev, const char *type)
{
    json_object *t = jsonget(dev, "type");
    if (t && json_object_is_type(t, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(t); i++)
            if (strcasecmp(json_object_get_string(json_object_array_get_idx(t, i)), type) == 0)
                return true;
    } else if (t && json_object_is_type(t, json_type_string)) {
        return strcasestr(json_object_get_string(t), type) != NULL;
    }
    return false;
}

/* Smoke-tested devices that passed, optionally only GPUs; calls FN for each. Returns the count. */
static size_t doctor_passed_devices(const struct report *r, bool gpu_only, bool (*want)(json_object *dev),
                                    json_object **first)
{
    json_object *devs = jsonget(doctor_data(r, "smoke"), "devices");
    size_t n = 0;
    if (first)
        *first = NULL;
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        const char *st = jsonget_str(d, "status");
        if (!st || strcmp(st, "pass") != 0)
            continue;
        if (gpu_only && !doctor_type_has(d, "GPU"))
            continue;
        if (want && !want(d))
            continue;
        if (first && !*first)
            *first = d;
        n++;
    }
    return n;
}

static bool doctor_fp64_passed(json_object *dev)
{
    const char *p = jsonget_str(jsonget(dev, "precisions"), "fp64");
    return p && strcmp(p, "pass") == 0;
}

/* Distinct physical GPUs that passed (by PCI address; devices without one count once each). */
static size_t doctor_gpu_count(const struct report *r)
{
    json_object *devs = jsonget(doctor_data(r, "smoke"), "devices");
    size_t n = 0;
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        const char *st = jsonget_str(d, "status");
        if (!st || strcmp(st, "pass") != 0 || !doctor_type_has(d, "GPU"))
            continue;
        const char *addr = jsonget_str(d, "pci_address");
        bool seen = false;
        for (size_t j = 0; addr && j < i; j++) {
            json_object *e = json_object_array_get_idx(devs, j);
            const char *a2 = jsonget_str(e, "pci_address"), *s2 = jsonget_str(e, "status");
            seen |= a2 && s2 && strcmp(s2, "pass") == 0 && doctor_type_has(e, "GPU") && strcmp(a2, addr) == 0;
        }
        if (!seen)
            n++;
    }
    return n;
}

/* Highest OpenCL version (major*100+minor) of any device, or -1 if none known. */
static int doctor_best_opencl_version(const struct report *r, const char **name)
{
    json_object *plats = jsonget(doctor_data(r, "opencl"), "platforms");
    int best = -1;
    for (size_t i = 0; plats && json_object_is_type(plats, json_type_array) && i < json_object_array_length(plats); i++) {
        json_object *devs = jsonget(json_object_array_get_idx(plats, i), "devices");
        for (size_t j = 0; devs && json_object_is_type(devs, json_type_array) && j < json_object_array_length(devs); j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            const char *v = jsonget_str(d, "opencl_version");
            unsigned maj = 0, min = 0;
            if (v && sscanf(v, "%u.%u", &maj, &min) == 2 && maj < 100 && min < 100 && (int)(maj * 100 + min) > best) {
                best = (int)(maj * 100 + min);
                if (name)
                    *name = jsonget_str(d, "name");
            }
        }
    }
    return best;
}

/* ---- the cuda section's facts (probes/cuda: data["driver"], data["devices"], data["smoke"]) ---- */

/* The CUDA wheel series of PyTorch, TensorFlow and JAX, the one table the verdict and --require use.
 * A series runs when the driver supports its CUDA major version (CUDA minor version compatibility: a
 * 12.x runtime runs on any driver that supports 12.0; CUDA Compatibility guide, "Minor Version
 * Compatibility") and the GPU's compute capability is one the toolkit still builds for:
 * - CUDA 12: sm_50 and newer (CUDA 12.0 release notes: Kepler, sm_35/sm_37, removed);
 * - CUDA 13: sm_75 and newer (CUDA 13.0 release notes, "Deprecated Architectures": Maxwell, Pascal
 *   and Volta, sm_50 to sm_72, removed).
 * Frameworks may build their wheels for fewer architectures than the toolkit allows. */
static const struct {
    const char *target; /* verdict target name */
    const char *label;
    int cuda_major;
    int min_cc;         /* major * 10 + minor */
} doctor_cuda_series[] = {
    {"cuda12", "CUDA 12", 12, 50},
    {"cuda13", "CUDA 13", 13, 75},
};

/* The CUDA devices array, or NULL when the cuda section did not run ok. */
static json_object *doctor_cuda_devices(const struct report *r)
{
    json_object *d = jsonget(doctor_data(r, "cuda"), "devices");
    return d && json_object_is_type(d, json_type_array) ? d : NULL;
}

/* Compute capability of a CUDA device as major * 10 + minor, or -1. */
static int doctor_cuda_cc(json_object *dev)
{
    int64_t ma = jsonget_int(dev, "cc_major", -1), mi = jsonget_int(dev, "cc_minor", -1);
    return ma >= 0 && ma < 100 && mi >= 0 && mi < 10 ? (int)(ma * 10 + mi) : -1;
}

/* The CUDA smoke status of DEV ("pass", "fail"...), or NULL when unknown. */
static const char *doctor_cuda_smoke(const struct report *r, json_object *dev)
{
    json_object *sd = jsonget(doctor_data(r, "cuda"), "smoke"); /* one entry per GPU tested */
    int64_t ord = jsonget_int(dev, "ordinal", -1);
    for (size_t i = 0; sd && json_object_is_type(sd, json_type_array) && i < json_object_array_length(sd); i++) {
        json_object *s = json_object_array_get_idx(sd, i);
        if (jsonget_int(s, "ordinal", -2) == ord)
            return jsonget_str(s, "status");
    }
    return NULL;
}

/* CUDA devices that passed the CUDA smoke test with compute capability >= MIN_CC (-1: any). */
static size_t doctor_cuda_passed(const struct report *r, int min_cc, json_object **first)
{
    json_object *devs = doctor_cuda_devices(r);
    size_t n = 0;
    if (first)
        *first = NULL;
    for (size_t i = 0; devs && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        const char *st = doctor_cuda_smoke(r, d);
        if (!st || strcmp(st, "pass") != 0 || doctor_cuda_cc(d) < min_cc)
            continue;
        if (first && !*first)
            *first = d;
        n++;
    }
    return n;
}

/* cuDriverGetVersion (13000 = 13.0), or -1. */
static int doctor_cuda_driver_version(const struct report *r)
{
    json_object *drv = jsonget(doctor_data(r, "cuda"), "driver");
    int64_t v = jsonget_int(drv, "driver_version", -1);
    return v > 0 && v < 1000000 ? (int)v : -1;
}

/* Why the CUDA smoke test gives no answer for DEV, or NULL when it ran. */
static const char *doctor_cuda_smoke_missing(const struct report *r)
{
    return jsonget_str(doctor_data(r, "cuda"), "smoke_not_run");
}

/* True when every compute GPU on the PCI bus is an NVIDIA GPU that CUDA enumerates (cuInit succeeded,
 * a CUDA device at its address) and whose CUDA smoke test did not fail: such GPUs compute through
 * CUDA, so a missing OpenCL driver for them is not what keeps the machine from being ready. */
static bool doctor_gpus_compute_via_cuda(const struct report *r)
{
    json_object *devs = doctor_cuda_devices(r);
    json_object *pci = jsonget(doctor_data(r, "pci"), "devices");
    if (!devs || json_object_array_length(devs) == 0 || !pci || !json_object_is_type(pci, json_type_array))
        return false;
    size_t gpus = 0;
    for (size_t i = 0; i < json_object_array_length(pci); i++) {
        json_object *p = json_object_array_get_idx(pci, i);
        const char *kind = jsonget_str(p, "kind"), *addr = jsonget_str(p, "address");
        if (!kind || strcmp(kind, "compute-gpu") != 0)
            continue;
        gpus++;
        const char *vid = jsonget_str(p, "vendor_id");
        if (!vid || strcmp(vid, "10de") != 0 || !addr)
            return false;
        bool ok = false;
        for (size_t j = 0; j < json_object_array_length(devs) && !ok; j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            const char *a = jsonget_str(d, "pci_address"), *st = doctor_cuda_smoke(r, d);
            ok = a && strcmp(a, addr) == 0 && (!st || strcmp(st, "pass") == 0 || strcmp(st, "not-run") == 0);
        }
        if (!ok)
            return false;
    }
    return gpus > 0;
}

/* OpenCL findings that stop being errors when every GPU computes through CUDA: they say the GPU
 * cannot be used through OpenCL, which PyTorch, TensorFlow and JAX on NVIDIA do not need. */
static void doctor_cuda_relief(struct report *r)
{
    if (!doctor_gpus_compute_via_cuda(r))
        return;
    static const char *const ids[] = {"cl.cpu-only", "cl.no-platforms", "icd.no-loader", NULL};
    for (size_t i = 0; i < r->n_findings; i++) {
        struct report_finding *f = &r->findings[i];
        if (f->severity != REPORT_SEV_ERROR)
            continue;
        bool want = false;
        for (size_t k = 0; ids[k]; k++)
            want |= strcmp(f->id, ids[k]) == 0;
        const char *v = doctor_finding_vendor(r, f);
        want |= (str_starts_with(f->id, "cl.") || str_starts_with(f->id, "icd.")) && v && strcmp(v, "nvidia") == 0 &&
                strcmp(f->id, "cl.enumeration-crash") != 0 && strcmp(f->id, "cl.enumeration-hang") != 0;
        if (!want)
            continue;
        char *m = str_printf("%s (a warning only: the GPU computes through CUDA)", f->message ? f->message : "");
        if (m) {
            free(f->message);
            f->message = m;
        }
        f->severity = REPORT_SEV_WARNING;
    }
}

/* ---- requirements ---- */

enum doctor_req_kind {
    REQ_GPU, REQ_OPENCL, REQ_FP64, REQ_GPUS, REQ_CLVER, REQ_LEVEL, REQ_FLAG, REQ_CUDA, REQ_CUDAVER, REQ_CC, REQ_BAD
};

/* Parse NAME; *ARG gets the number for gpus>=N, version*100 for opencl-version, the level. */
static enum doctor_req_kind doctor_parse_require(const char *name, int *arg)
{
    *arg = 0;
    if (strcmp(name, "gpu") == 0)
        return REQ_GPU;
    if (strcmp(name, "opencl") == 0)
        return REQ_OPENCL;
    if (strcmp(name, "fp64") == 0)
        return REQ_FP64;
    if (str_starts_with(name, "gpus>=")) {
        uint64_t n;
        if (str_to_u64(name + 6, 10, &n) < 0 || n < 1 || n > 4096)
            return REQ_BAD;
        *arg = (int)n;
        return REQ_GPUS;
    }
    if (str_starts_with(name, "opencl-version>=")) {
        const char *v = name + 16;
        unsigned maj, min;
        char tail;
        if (sscanf(v, "%u.%u%c", &maj, &min, &tail) != 2 || maj < 1 || maj > 9 || min > 9 || !isdigit((unsigned char)v[0]))
            return REQ_BAD;
        *arg = (int)(maj * 100 + min);
        return REQ_CLVER;
    }
    if (strcmp(name, "cuda") == 0)
        return REQ_CUDA;
    if (str_starts_with(name, "cuda>=") || str_starts_with(name, "compute-capability>=")) {
        bool cuda = name[0] == 'c' && name[1] == 'u';
        const char *v = name + (cuda ? 6 : 20);
        unsigned maj = 0, min = 0;
        int used = 0;
        /* X or X.Y, digits only: CUDA 12.4 -> 12040 (cuDriverGetVersion's encoding), CC 8.6 -> 86. */
        if (!isdigit((unsigned char)v[0]))
            return REQ_BAD;
        if (sscanf(v, "%2u%n", &maj, &used) != 1)
            return REQ_BAD;
        if (v[used] == '.') {
            int used2 = 0;
            if (!isdigit((unsigned char)v[used + 1]) || sscanf(v + used + 1, "%1u%n", &min, &used2) != 1)
                return REQ_BAD;
            used += 1 + used2;
        }
        if (v[used] != '\0' || maj < 1)
            return REQ_BAD;
        *arg = cuda ? (int)(maj * 1000 + min * 10) : (int)(maj * 10 + min);
        return cuda ? REQ_CUDAVER : REQ_CC;
    }
    if (str_starts_with(name, "x86-64-v") && strlen(name) == 9 && name[8] >= '1' && name[8] <= '4') {
        *arg = name[8] - '0';
        return REQ_LEVEL;
    }
    /* CPU flags: exactly the CPU probe's table, so every flag `cpu --json` reports can be required. */
    if (cpu_flag_index(name) >= 0)
        return REQ_FLAG;
    return REQ_BAD;
}

int doctor_validate_requires(char *const *names, size_t n, char **error)
{
    for (size_t i = 0; i < n; i++) {
        int arg;
        if (doctor_parse_require(names[i], &arg) != REQ_BAD)
            continue;
        size_t len = 0;
        for (size_t j = 0; j < cpu_flag_count; j++)
            len += strlen(cpu_flag_table[j].name) + 2;
        char *flags = calloc(1, len + 1);
        for (size_t j = 0; flags && j < cpu_flag_count; j++) {
            if (j)
                strcat(flags, ", ");
            strcat(flags, cpu_flag_table[j].name);
        }
        *error = str_printf("--require: unknown requirement '%s'; valid: gpu, opencl, fp64, gpus>=N, "
                            "opencl-version>=X.Y, cuda, cuda>=X.Y, compute-capability>=X.Y, x86-64-v1, x86-64-v2, "
                            "x86-64-v3, x86-64-v4, or a CPU flag (%s)",
                            names[i], flags ? flags : "");
        free(flags);
        return -1;
    }
    return 0;
}

static const char *doctor_dev_label(json_object *d, char *buf, size_t len)
{
    const char *name = jsonget_str(d, "name"), *addr = jsonget_str(d, "pci_address");
    snprintf(buf, len, "%s%s%s", addr ? addr : "", addr ? " " : "", name ? name : "device");
    return buf;
}

bool doctor_eval_require(const struct report *r, const char *name, char **detail)
{
    int arg;
    enum doctor_req_kind k = doctor_parse_require(name, &arg);
    bool smoke_ran = doctor_data(r, "smoke") != NULL;
    json_object *first = NULL;
    char label[256];
    *detail = NULL;
    switch (k) {
    case REQ_GPU:
    case REQ_OPENCL:
    case REQ_FP64: {
        if (!smoke_ran) {
            *detail = str_printf("the smoke test did not run, so no device is proven to compute");
            return false;
        }
        size_t n = doctor_passed_devices(r, k == REQ_GPU, k == REQ_FP64 ? doctor_fp64_passed : NULL, &first);
        if (n == 0) {
            *detail = str_printf(k == REQ_GPU      ? "no GPU passed the smoke test"
                                 : k == REQ_FP64   ? "no device passed the smoke test in fp64"
                                                   : "no OpenCL device passed the smoke test");
            return false;
        }
        *detail = str_printf("%zu device%s passed, e.g. %s", n, n == 1 ? "" : "s",
                             doctor_dev_label(first, label, sizeof(label)));
        return true;
    }
    case REQ_GPUS: {
        if (!smoke_ran) {
            *detail = str_printf("the smoke test did not run, so no GPU is proven to compute");
            return false;
        }
        size_t n = doctor_gpu_count(r);
        *detail = str_printf("%zu GPU%s passed the smoke test, %d needed", n, n == 1 ? "" : "s", arg);
        return (int)n >= arg;
    }
    case REQ_CLVER: {
        const char *dev = NULL;
        int best = doctor_best_opencl_version(r, &dev);
        if (best < 0) {
            *detail = str_printf("no OpenCL device found");
            return false;
        }
        *detail = str_printf("best device supports OpenCL %d.%d (%s), %d.%d needed", best / 100, best % 100,
                             dev ? dev : "unnamed", arg / 100, arg % 100);
        return best >= arg;
    }
    case REQ_LEVEL: {
        json_object *lv = jsonget(doctor_data(r, "cpu"), "x86_64_level");
        if (!lv || !json_object_is_type(lv, json_type_int)) {
            *detail = str_printf("the x86-64 level of this CPU is unknown");
            return false;
        }
        int level = json_object_get_int(lv);
        *detail = str_printf("CPU is x86-64-v%d", level);
        return level >= arg;
    }
    case REQ_FLAG: {
        json_object *flags = jsonget(doctor_data(r, "cpu"), "flags");
        json_object *f = jsonget(flags, name);
        if (!f || !json_object_is_type(f, json_type_boolean)) {
            *detail = str_printf("CPU flag %s is unknown (the CPU probe did not report it)", name);
            return false;
        }
        bool ok = json_object_get_boolean(f);
        *detail = str_printf("%s is %s", name, ok ? "usable" : "not usable");
        return ok;
    }
    case REQ_CUDA: {
        if (!doctor_data(r, "cuda")) {
            *detail = str_printf("the cuda probe did not run");
            return false;
        }
        size_t n = doctor_cuda_passed(r, -1, &first);
        if (n == 0) {
            const char *why = doctor_cuda_smoke_missing(r);
            *detail = why ? str_printf("no CUDA device is proven to compute: the CUDA smoke test did not run (%s)", why)
                          : str_printf("no CUDA device passed the CUDA smoke test");
            return false;
        }
        *detail = str_printf("%zu CUDA device%s passed, e.g. %s", n, n == 1 ? "" : "s",
                             doctor_dev_label(first, label, sizeof(label)));
        return true;
    }
    case REQ_CUDAVER: {
        int v = doctor_cuda_driver_version(r);
        if (v < 0) {
            *detail = str_printf("the CUDA version of the NVIDIA driver is unknown (no working libcuda)");
            return false;
        }
        *detail = str_printf("the NVIDIA driver supports CUDA %d.%d, %d.%d needed", v / 1000, (v % 1000) / 10,
                             arg / 1000, (arg % 1000) / 10);
        return v >= arg;
    }
    case REQ_CC: {
        json_object *devs = doctor_cuda_devices(r);
        int best = -1;
        for (size_t i = 0; devs && i < json_object_array_length(devs); i++) {
            json_object *d = json_object_array_get_idx(devs, i);
            if (doctor_cuda_cc(d) > best) {
                best = doctor_cuda_cc(d);
                first = d;
            }
        }
        if (best < 0) {
            *detail = str_printf("no CUDA device with a known compute capability");
            return false;
        }
        *detail = str_printf("best CUDA device has compute capability %d.%d (%s), %d.%d needed", best / 10, best % 10,
                             doctor_dev_label(first, label, sizeof(label)), arg / 10, arg % 10);
        return best >= arg;
    }
    case REQ_BAD:
    default:
        *detail = str_printf("unknown requirement");
        return false;
    }
}

/* ---- root causes ---- */

static const char *doctor_vendor_from_id(const char *vid)
{
    const struct vendor *v = vendor_by_pci_text(vid);
    return v ? v->name : NULL;
}

static const char *doctor_vendor_from_text(const char *s)
{
    if (!s)
        return NULL;
    static const struct {
        const char *word, *vendor;
    } words[] = {
        {"nvidia", "nvidia"}, {"nouveau", "nvidia"}, {"geforce", "nvidia"}, {"cuda", "nvidia"},
        {"amdgpu", "amd"},    {"radeon", "amd"},     {"/dev/kfd", "amd"},   {"advanced micro", "amd"},
        {"amd", "amd"},       {"rocm", "amd"},       {"intel", "intel"},    {"i915", "intel"},
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcasestr(s, words[i].word))
            return words[i].vendor;
    return NULL;
}

const char *doctor_finding_vendor(const struct report *r, const struct report_finding *f)
{
    const char *subj = f->subject;
    if (subj) {
        /* A PCI address: the device's vendor. */
        json_object *devs = jsonget(doctor_data(r, "pci"), "devices");
        for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
            json_object *d = json_object_array_get_idx(devs, i);
            const char *a = jsonget_str(d, "address");
            if (a && strcmp(a, subj) == 0) {
                const char *v = doctor_vendor_from_id(jsonget_str(d, "vendor_id"));
                if (v)
                    return v;
            }
        }
        /* An .icd file: the vendor the ICD probe recognised. */
        json_object *icds = jsonget(doctor_data(r, "icd"), "icds");
        for (size_t i = 0; icds && json_object_is_type(icds, json_type_array) && i < json_object_array_length(icds); i++) {
            json_object *d = json_object_array_get_idx(icds, i);
            const char *file = jsonget_str(d, "file");
            if (file && strcmp(file, subj) == 0) {
                const struct vendor *gv = vendor_by_name(jsonget_str(d, "vendor"));
                if (gv)
                    return gv->name;
                return doctor_vendor_from_text(jsonget_str(d, "library"));
            }
        }
        const char *v = doctor_vendor_from_text(subj);
        if (v)
            return v;
    }
    return doctor_vendor_from_text(f->message);
}

/* Tiers: a finding can only be caused by one in an earlier tier. 0 = not part of the GPU chain. */
static int doctor_tier(const char *id)
{
    static const struct {
        const char *prefix;
        int tier;
    } tiers[] = {
        {"pci.not-responding", 1},
        {"pci.", 2},
        {"drv.", 2},
        {"dev.", 2},
        {"icd.no-loader", 3},
        {"icd.", 4},
        {"cl.", 5},
        {"smoke.", 6},
        {"cuda.", 5},
    };
    for (size_t i = 0; i < sizeof(tiers) / sizeof(tiers[0]); i++)
        if (str_starts_with(id, tiers[i].prefix))
            return tiers[i].tier;
    return 0;
}

/* Findings that cannot cause anything else (informational, or about link speed/insecurity). */
static bool doctor_can_cause(const struct report_finding *f)
{
    static const char *const never[] = {"pci.no-gpu", "pci.link-degraded", "pci.link-slow", "icd.insecure",
                                        "icd.multiple-loaders", "icd.duplicate", NULL};
    if (f->severity == REPORT_SEV_INFO)
        return false;
    for (size_t i = 0; never[i]; i++)
        if (strcmp(f->id, never[i]) == 0)
            return false;
    return true;
}

/* Findings that speak of every vendor at once: any earlier cause explains them. */
static bool doctor_is_aggregate(const char *id)
{
    return strcmp(id, "cl.no-platforms") == 0 || strcmp(id, "cl.cpu-only") == 0;
}

static struct report_finding *doctor_root_of(struct report *r, struct report_finding *f)
{
    for (int hops = 0; f && f->caused_by_id && hops < 16; hops++) {
        struct report_finding *c = report_find_finding(r, f->caused_by_id, f->caused_by_subject);
        if (!c || c == f)
            break;
        f = c;
    }
    return f;
}

/* Link consequences to causes inside the CPU and GPU chains. */
static void doctor_link_chains(struct report *r)
{
    /* CPU: the reason AVX is missing explains cpu.no-avx. */
    struct report_finding *no_avx = report_find_finding(r, "cpu.no-avx", NULL);
    if (no_avx && !no_avx->caused_by_id) {
        static const char *const cpu_causes[] = {"cpu.avx-hidden-by-hypervisor", "cpu.avx-disabled-by-os", NULL};
        for (size_t i = 0; cpu_causes[i]; i++) {
            struct report_finding *c = report_find_finding(r, cpu_causes[i], NULL);
            if (c) {
                report_finding_set_cause(no_avx, c->id, c->subject);
                break;
            }
        }
    }

    /* The GPU chain: PCI/driver/node problems, then ICDs, then OpenCL, then smoke. */
    for (size_t e = 0; e < r->n_findings; e++) {
        struct report_finding *eff = &r->findings[e];
        int te = doctor_tier(eff->id);
        if (te == 0 || eff->caused_by_id)
            continue;
        const char *ve = doctor_finding_vendor(r, eff);
        struct report_finding *best = NULL;
        int best_tier = 99;
        for (size_t c = 0; c < r->n_findings; c++) {
            struct report_finding *cause = &r->findings[c];
            int tc = doctor_tier(cause->id);
            if (c == e || tc == 0 || tc >= te || !doctor_can_cause(cause))
                continue;
            const char *vc = doctor_finding_vendor(r, cause);
            bool same_subject = cause->subject && eff->subject && strcmp(cause->subject, eff->subject) == 0;
            bool match = same_subject || (vc && ve && strcmp(vc, ve) == 0) ||
                         (doctor_is_aggregate(eff->id)) || strcmp(cause->id, "icd.no-loader") == 0;
            if (!match)
                continue;
            if (tc < best_tier) {
                best = cause;
                best_tier = tc;
            }
        }
        if (best) {
            struct report_finding *root = doctor_root_of(r, best);
            /* Re-fetch: report_find_finding returns pointers into r->findings, which do not move here. */
            report_finding_set_cause(eff, root->id, root->subject);
        }
    }
}

static const char *const doctor_gpu_prefixes[] = {"pci.", "drv.", "dev.", "icd.", "cl.", "smoke.", "cuda.", NULL};
static const char *const doctor_cuda_prefixes[] = {"pci.", "drv.", "dev.", "cuda.", NULL};
static const char *const doctor_cpu_prefixes[] = {"cpu.", NULL};
static const struct report_finding *doctor_first_root(const struct report *r, const char *const *prefixes);

/* An unmet requirement is explained by the most severe root cause of its chain (GPU or CPU). */
static void doctor_link_requirements(struct report *r)
{
    for (size_t i = 0; i < r->n_findings; i++) {
        struct report_finding *f = &r->findings[i];
        if (strcmp(f->id, "require.unmet") != 0 || f->caused_by_id || !f->subject)
            continue;
        int arg;
        enum doctor_req_kind k = doctor_parse_require(f->subject, &arg);
        const char *const *chain = (k == REQ_FLAG || k == REQ_LEVEL)                      ? doctor_cpu_prefixes
                                   : (k == REQ_CUDA || k == REQ_CUDAVER || k == REQ_CC) ? doctor_cuda_prefixes
                                                                                        : doctor_gpu_prefixes;
        const struct report_finding *root = doctor_first_root(r, chain);
        if (root)
            report_finding_set_cause(f, root->id, root->subject);
    }
}

void doctor_link_causes(struct report *r)
{
    doctor_link_chains(r);
    doctor_link_requirements(r);
}

/* ---- verdict ---- */

/* IDs of root-cause findings (not caused by another) whose ID starts with one of PREFIXES. */
static const char **doctor_reasons(const struct report *r, const char *const *prefixes, size_t *n)
{
    const char **ids = calloc(r->n_findings + 1, sizeof(*ids));
    *n = 0;
    for (size_t i = 0; ids && i < r->n_findings; i++) {
        const struct report_finding *f = &r->findings[i];
        if (f->caused_by_id || f->severity == REPORT_SEV_INFO)
            continue;
        bool want = false;
        for (size_t p = 0; prefixes[p]; p++)
            want |= str_starts_with(f->id, prefixes[p]);
        bool dup = false;
        for (size_t j = 0; j < *n; j++)
            dup |= strcmp(ids[j], f->id) == 0;
        if (want && !dup)
            ids[(*n)++] = f->id;
    }
    return ids;
}

/* Findings that explain nothing: never a verdict's root cause (a driver for absent hardware). */
static bool doctor_never_root(const struct report_finding *f)
{
    return strcmp(f->id, "icd.absent-hardware") == 0;
}

/* The most severe root cause (not caused by another) among PREFIXES, or NULL. Info findings count
 * only when nothing more severe is there (pci.no-gpu explains a missing GPU). */
static const struct report_finding *doctor_first_root(const struct report *r, const char *const *prefixes)
{
    size_t n = 0;
    const struct report_finding **sorted = report_sorted_findings(r, &n);
    const struct report_finding *found = NULL;
    for (size_t i = 0; i < n && !found; i++) {
        if (sorted[i]->caused_by_id || doctor_never_root(sorted[i]))
            continue;
        for (size_t p = 0; prefixes[p] && !found; p++)
            if (str_starts_with(sorted[i]->id, prefixes[p]))
                found = sorted[i];
    }
    free(sorted);
    return found;
}

/* The CUDA wheel line and the cuda12/cuda13 targets: "CUDA for PyTorch / TensorFlow / JAX wheels
 * (CUDA 12, CUDA 13): ...". Returns the line (heap). */
static char *doctor_cuda_verdict(struct report *r)
{
    size_t nreasons = 0;
    const char **reasons = doctor_reasons(r, doctor_cuda_prefixes, &nreasons);
    const struct report_finding *root = doctor_first_root(r, doctor_cuda_prefixes);
    int dv = doctor_cuda_driver_version(r);
    json_object *devs = doctor_cuda_devices(r);
    size_t ndev = devs ? json_object_array_length(devs) : 0;
    const char *smoke_missing = doctor_cuda_smoke_missing(r);
    char *parts[2] = {NULL, NULL}, *whys[2] = {NULL, NULL};
    bool all_ready = true, any_ready = false;
    char label[256];
    size_t ns = sizeof(doctor_cuda_series) / sizeof(doctor_cuda_series[0]);
    for (size_t i = 0; i < ns && i < 2; i++) {
        int need = doctor_cuda_series[i].cuda_major * 1000;
        json_object *dev = NULL;
        size_t n = doctor_cuda_passed(r, doctor_cuda_series[i].min_cc, &dev);
        char *why;
        if (dv < 0 || ndev == 0)
            why = root ? str_printf("%s (%s)", root->message, root->id)
                       : str_printf("no CUDA device%s", dv < 0 ? " (no working NVIDIA driver)" : "");
        else if (dv < need)
            why = str_printf("the driver supports CUDA %d.%d only", dv / 1000, (dv % 1000) / 10);
        else if (n > 0)
            why = NULL;
        else {
            int best = -1;
            for (size_t j = 0; j < ndev; j++)
                if (doctor_cuda_cc(json_object_array_get_idx(devs, j)) > best)
                    best = doctor_cuda_cc(json_object_array_get_idx(devs, j));
            if (best >= 0 && best < doctor_cuda_series[i].min_cc)
                why = str_printf("compute capability %d.%d is below the %d.%d this series needs", best / 10, best % 10,
                                 doctor_cuda_series[i].min_cc / 10, doctor_cuda_series[i].min_cc % 10);
            else if (smoke_missing)
                why = str_printf("not proven: the CUDA smoke test did not run (%s)", smoke_missing);
            else
                why = root ? str_printf("no GPU passed the CUDA smoke test: %s (%s)", root->message, root->id)
                           : str_printf("no GPU passed the CUDA smoke test");
        }
        char *detail = why ? str_printf("not ready: %s", why)
                           : str_printf("ready on %s", doctor_dev_label(dev, label, sizeof(label)));
        report_set_target(r, doctor_cuda_series[i].target, why == NULL, detail, reasons);
        parts[i] = str_printf("%s %s", doctor_cuda_series[i].label, why ? detail : "ready");
        all_ready &= why == NULL;
        any_ready |= why == NULL;
        whys[i] = why;
        free(detail);
    }
    free(reasons);
    json_object *first = NULL;
    doctor_cuda_passed(r, -1, &first);
    char *line;
    if (dv < 0 && !root)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available (no NVIDIA driver)");
    else if (root && root->severity == REPORT_SEV_INFO && !any_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: not available: %s (%s)", root->message, root->id);
    else if (all_ready)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): ready on %s (driver CUDA "
                          "%d.%d)",
                          doctor_dev_label(first, label, sizeof(label)), dv / 1000, (dv % 1000) / 10);
    else if (whys[0] && whys[1] && strcmp(whys[0], whys[1]) == 0)
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels (CUDA 12, CUDA 13): not ready: %s", whys[0]);
    else
        line = str_printf("CUDA for PyTorch / TensorFlow / JAX wheels: %s; %s", parts[0] ? parts[0] : "",
                          parts[1] ? parts[1] : "");
    for (size_t i = 0; i < 2; i++) {
        free(parts[i]);
        free(whys[i]);
    }
    return line;
}

void doctor_verdict(struct report *r)
{
    const char *const *gpu_prefixes = doctor_gpu_prefixes;
    const char *const *cpu_prefixes = doctor_cpu_prefixes;
    char *lines[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t nl = 0;
    char label[256];
    size_t nreasons;

    bool smoke_ran = doctor_data(r, "smoke") != NULL;
    bool opencl_ran = doctor_data(r, "opencl") != NULL;
    bool gpu_missing = false;
    json_object *cuda_gpu = NULL;
    size_t ncuda = doctor_cuda_passed(r, -1, &cuda_gpu);
    if (!smoke_ran && !opencl_ran && ncuda > 0) {
        const char **reasons = doctor_reasons(r, gpu_prefixes, &nreasons);
        char *detail = str_printf("ready on %s (CUDA)", doctor_dev_label(cuda_gpu, label, sizeof(label)));
        report_set_target(r, "gpu", true, detail, reasons);
        free(detail);
        free(reasons);
    }
    if (smoke_ran || opencl_ran) {
        const char **reasons = doctor_reasons(r, gpu_prefixes, &nreasons);
        const struct report_finding *root = doctor_first_root(r, gpu_prefixes);
        json_object *gpu = NULL, *any = NULL;
        size_t ngpu = 0, nany = 0;
        if (smoke_ran) {
            ngpu = doctor_passed_devices(r, true, NULL, &gpu);
            nany = doctor_passed_devices(r, false, NULL, &any);
        }
        char *detail;
        if (!smoke_ran && ncuda > 0) {
            detail = str_printf("ready on %s (CUDA)", doctor_dev_label(cuda_gpu, label, sizeof(label)));
            report_set_target(r, "gpu", true, detail, reasons);
            free(detail);
        } else if (!smoke_ran) {
            detail = str_printf("the smoke test did not run: no device is proven to compute");
            report_set_target(r, "gpu", false, detail, reasons);
            lines[nl++] = str_printf("GPU compute (OpenCL): not tested (the smoke test did not run)");
            free(detail);
        } else if (ngpu > 0) {
            detail = str_printf("ready on %s", doctor_dev_label(gpu, label, sizeof(label)));
            report_set_target(r, "gpu", true, detail, reasons);
            lines[nl++] = str_printf("GPU compute (OpenCL): %s%s", detail, ngpu > 1 ? " and more" : "");
            free(detail);
        } else if (ncuda > 0) {
            /* No GPU computes through OpenCL, but one does through CUDA: the GPU target is ready (the
             * OpenCL findings are warnings then: doctor_cuda_relief). */
            detail = root ? str_printf("%s (%s)", root->message, root->id) : str_printf("no GPU passed the smoke test");
            lines[nl++] = str_printf("GPU compute (OpenCL): not available: %s", detail);
            free(detail);
            detail = str_printf("ready on %s (CUDA)", doctor_dev_label(cuda_gpu, label, sizeof(label)));
            report_set_target(r, "gpu", true, detail, reasons);
            free(detail);
        } else {
            detail = root ? str_printf("%s (%s)", root->message, root->id) : str_printf("no GPU passed the smoke test");
            if (root && nreasons == 0 && reasons)
                reasons[nreasons++] = root->id; /* an info root cause such as pci.no-gpu */
            report_set_target(r, "gpu", false, detail, reasons);
            lines[nl++] = str_printf("GPU compute (OpenCL): %s: %s",
                                     root && root->severity == REPORT_SEV_INFO ? "not available" : "not ready", detail);
            free(detail);
            gpu_missing = true;
        }
        if (smoke_ran) {
            detail = nany > 0 ? str_printf("ready on %zu device%s, e.g. %s", nany, nany == 1 ? "" : "s",
                                           doctor_dev_label(any, label, sizeof(label)))
                              : str_printf("no OpenCL device passed the smoke test");
            report_set_target(r, "opencl", nany > 0, detail, reasons);
            lines[nl++] = str_printf("OpenCL: %s", detail);
            free(detail);
        }
        free(reasons);
    }
    if (doctor_data(r, "cuda") && nl < 6)
        lines[nl++] = doctor_cuda_verdict(r);

    json_object *flags = jsonget(doctor_data(r, "cpu"), "flags");
    json_object *avx = jsonget(flags, "avx");
    if (avx && json_object_is_type(avx, json_type_boolean)) {
        const char **reasons = doctor_reasons(r, cpu_prefixes, &nreasons);
        bool ok = json_object_get_boolean(avx);
        const struct report_finding *root = ok ? NULL : doctor_first_root(r, cpu_prefixes);
        if (root && root->severity == REPORT_SEV_INFO)
            root = NULL;
        char *detail = ok ? str_printf("AVX is usable") : str_printf("AVX is not usable%s%s%s", root ? ": " : "",
                                                                       root ? root->message : "", "");
        report_set_target(r, "cpu_avx", ok, detail, reasons);
        lines[nl++] = str_printf("CPU for prebuilt TensorFlow (AVX): %s", ok ? "ok" : detail);
        free(detail);
        free(reasons);
    }

    size_t ne = report_count_severity(r, REPORT_SEV_ERROR), nw = report_count_severity(r, REPORT_SEV_WARNING);
    char *verdict = report_is_ready(r)
                        ? str_printf("Verdict: ready (%zu warning%s)%s", nw, nw == 1 ? "" : "s",
                                     gpu_missing ? ", but no GPU computes here: --require gpu makes that an error"
                                                 : "")
                        : str_printf("Verdict: not ready (%zu error%s, %zu warning%s)", ne, ne == 1 ? "" : "s", nw,
                                     nw == 1 ? "" : "s");
    size_t len = strlen(verdict ? verdict : "") + 1;
    for (size_t i = 0; i < nl; i++)
        len += strlen(lines[i] ? lines[i] : "") + 1;
    char *text = calloc(1, len);
    for (size_t i = 0; text && i < nl; i++) {
        if (lines[i]) {
            strcat(text, lines[i]);
            strcat(text, "\n");
        }
    }
    if (text && verdict)
        strcat(text, verdict);
    for (size_t i = 0; i < nl; i++)
        free(lines[i]);
    free(verdict);
    free(r->verdict_text);
    r->verdict_text = text;
}

int doctor_run(const struct cli_options *o, struct report *r, char **error)
{
    if (doctor_validate_requires(o->requires, o->n_requires, error) < 0)
        return GC_EXIT_USAGE;
    for (size_t i = 0; i < o->n_requires; i++) {
        char *detail = NULL;
        bool met = doctor_eval_require(r, o->requires[i], &detail);
        report_add_requirement(r, o->requires[i], met, "%s", detail ? detail : "");
        if (!met)
            report_add_finding(r, "require.unmet", o->requires[i], "Requirement '%s' is not met: %s", o->requires[i],
                               detail ? detail : "");
        free(detail);
    }
    doctor_cuda_relief(r);
    doctor_link_causes(r);
    doctor_verdict(r);
    return 0;
}
