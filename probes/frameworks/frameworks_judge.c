/* frameworks_judge.c: will each framework copy use a GPU here, and if not, the root cause: findings and reasons. */
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "doctor_facts.h"
#include "results/result_cuda.h"
#include "frameworks_internal.h"
#include "frameworks_parse.h"
#include "jsonget.h"
#include "ldsearch.h"
#include "nvdriver.h"
#include "strutil.h"
#include "results/result_cpu.h"
#include "results/result_cuda.h"
#include "results/result_pci.h"

const struct check fw_checks[] = {
    {"frameworks.cpu-build", REPORT_SEV_INFO, "A framework is a CPU-only build: it will not use a GPU",
     "Nothing to fix unless you want it on the GPU: install its GPU build (PyTorch: the CUDA wheel from "
     "https://pytorch.org/get-started/locally/; TensorFlow: `pip install tensorflow[and-cuda]`; JAX: "
     "`pip install jax[cuda12]`).", CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_CAUSE},
    {"frameworks.cuda-too-new", REPORT_SEV_WARNING,
     "A framework is built for a CUDA major version the NVIDIA driver cannot run",
     "Install the framework's build for the CUDA version the driver runs, or upgrade the NVIDIA driver "
     "(CUDA 12.x needs 525.60.13 or newer, CUDA 13.x 580 or newer).", CHECK_LAYER_FRAMEWORK},
    {"frameworks.wrong-vendor", REPORT_SEV_WARNING,
     "A framework is built for another vendor's GPUs than this machine has (ROCm on NVIDIA, CUDA on AMD)",
     "Install the framework's build for this machine's GPUs (CUDA for NVIDIA, ROCm for AMD).", CHECK_LAYER_FRAMEWORK},
    {"frameworks.unreadable", REPORT_SEV_WARNING,
     "A framework's build file is missing, unreadable or of a form gpucheckup does not know",
     "Reinstall the framework (`pip install --force-reinstall`); if it is intact, report its version to "
     "gpucheckup.", CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_CAUSE},
    {"frameworks.tf-no-avx", REPORT_SEV_WARNING,
     "TensorFlow's x86-64 wheels are built with AVX, which this CPU (or its OS) does not provide: importing it "
     "dies with 'Illegal instruction'", "Run it on a CPU with AVX (in a VM: pass the host CPU's features through, "
     "e.g. QEMU -cpu host), or build TensorFlow from source without AVX.", CHECK_LAYER_FRAMEWORK},
    {"frameworks.nvidia-pins", REPORT_SEV_WARNING,
     "A framework's pinned NVIDIA wheels (nvidia-*, cuda-toolkit) are missing or at other versions than it pins",
     "Install the versions its METADATA pins (the finding names the `pip install` line), or reinstall the framework "
     "with its dependencies.", CHECK_LAYER_FRAMEWORK},
    {"frameworks.ld-shadow", REPORT_SEV_WARNING,
     "A copy of one of the CUDA wheels' libraries earlier on LD_LIBRARY_PATH is taken before the wheel's own",
     "Take that directory out of LD_LIBRARY_PATH (`unset LD_LIBRARY_PATH` in the shell that runs Python), or put the "
     "wheel's library directory before it.", CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_CAUSE},
    {"frameworks.cudnn-missing", REPORT_SEV_WARNING,
     "TensorFlow's cuDNN (libcudnn.so.MAJOR of the version it was built with) is neither in its NVIDIA wheel nor on "
     "the loader's path", "Install TensorFlow with its CUDA wheels (`pip install 'tensorflow[and-cuda]'`), or that "
     "cuDNN where the loader finds it.", CHECK_LAYER_FRAMEWORK},
    {"frameworks.arch-missing", REPORT_SEV_WARNING,
     "A framework's GPU code has no architecture a GPU here can run (no SASS of its compute capability, no PTX "
     "to JIT-compile)", "Install a build of the framework that includes the GPU's architecture, or use a GPU it is "
     "built for.", CHECK_LAYER_FRAMEWORK},
    {"frameworks.arch-ptx-only", REPORT_SEV_INFO,
     "A framework has only PTX for a GPU here: the driver JIT-compiles it at first use",
     "Nothing to fix; the first start is slow (the driver caches the result in ~/.nv/ComputeCache). A build with "
     "SASS for the GPU avoids it.", CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_CAUSE},
    /* --import (frameworks_import.c) */
    {"frameworks.import-failed", REPORT_SEV_WARNING,
     "A framework cannot be imported by its environment's Python (an exception, a crash or a hang)",
     "Run the environment's Python with `-c 'import NAME'` to see the whole error, then reinstall the framework "
     "or what it says is missing in that environment.", CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_CAUSE},
    {"frameworks.prediction-wrong", REPORT_SEV_WARNING,
     "gpucheckup's prediction for a framework differs from what the framework says when imported",
     "What the framework says is what your programs get; the finding names what gpucheckup read and what the "
     "framework said. Please report it to gpucheckup with the `--json --import` output.",
     CHECK_LAYER_FRAMEWORK | CHECK_F_NEVER_CAUSE},
    /* JAX's CUDA plugin checks cuDNN, cuBLAS, cuFFT, cuSOLVER, cuSPARSE and cuPTI at start; PyTorch and TensorFlow
     * check cuDNN's minor (frameworks_minor.c names the rules). */
    {"frameworks.lib-older-minor", REPORT_SEV_WARNING,
     "The copy of a CUDA library the loader takes first for a framework is an older minor than the framework needs",
     "Take the directory of the older copy off LD_LIBRARY_PATH so the framework's wheel is used, or install the "
     "version its METADATA asks for (the finding names the `pip install` line).", CHECK_LAYER_FRAMEWORK},
    {"frameworks.tf-cuda-libs-missing", REPORT_SEV_WARNING,
     "TensorFlow's CUDA libraries (runtime, cuBLAS, cuFFT, cuSOLVER, cuSPARSE of its CUDA major) are neither in its "
     "NVIDIA wheels nor on the loader's path", "Install TensorFlow with its CUDA wheels (`pip install "
     "'tensorflow[and-cuda]'`), or those libraries where the loader finds them.", CHECK_LAYER_FRAMEWORK},
};
const size_t fw_n_checks = sizeof(fw_checks) / sizeof(fw_checks[0]);

/* The oldest driver that runs a CUDA major version (CUDA Toolkit release notes, "CUDA Toolkit and
 * Corresponding Driver Versions", minor version compatibility rows; CUDA 13.0: r580). */
static const struct {
    int major;
    const char *driver;
} fw_cuda_drivers[] = {{11, "450.80.02"}, {12, "525.60.13"}, {13, "580"}};

/* What the bus says: how many compute GPUs of each vendor (PCI vendor IDs), and whether it knows. */
struct fw_machine {
    bool pci_known;
    int nvidia, amd, intel, other;
    int dv;                   /* the driver's CUDA version (13000 = 13.0), -1 unknown */
    bool dv_from_module;      /* DV is the kernel module's version read in NVIDIA's table (libcuda not run: a
                                 captured tree), not cuDriverGetVersion's answer */
    char driver[64];          /* the NVIDIA driver's version ("535.261.03"), "" unknown */
    bool cuda_ran;            /* the cuda section ran */
    const char *driver_status; /* the cuda section's driver.status ("ok", "init-failed", ...), NULL unknown */
    size_t cuda_passed;
    const struct result_cuda_dev *cuda_dev;
    const char *smoke_missing;
};

static void fw_machine_read(const struct report *r, struct fw_machine *m)
{
    memset(m, 0, sizeof(*m));
    const struct result_pci *pci = result_pci_get(r);
    m->pci_known = pci && pci->have_devices;
    for (size_t i = 0; m->pci_known && i < pci->n_devs; i++) {
        const struct result_pci_dev *d = &pci->devs[i];
        const char *vid = d->vendor_id;
        if (!vid || !result_pci_dev_computes(d))
            continue;
        int *slot = strcmp(vid, "10de") == 0 ? &m->nvidia : strcmp(vid, "1002") == 0 ? &m->amd
                  : strcmp(vid, "8086") == 0 ? &m->intel : &m->other;
        (*slot)++;
    }
    const struct result_cuda *cuda = result_cuda_get(r);
    m->cuda_ran = cuda != NULL;
    m->dv = result_cuda_driver_version(r);
    m->driver_status = cuda ? gc_name(&result_cuda_driver_status_names, cuda->driver_status) : NULL;
    const char *v = cuda ? cuda->library_version : NULL;
    if (!v)
        v = cuda ? cuda->kernel_module_version : NULL;
    snprintf(m->driver, sizeof(m->driver), "%s", v ? v : "");
    m->cuda_passed = result_cuda_passed(r, -1, &m->cuda_dev);
    m->smoke_missing = result_cuda_smoke_missing(r);
    /* libcuda not run (a captured tree, --root alone): the tree's kernel module (/proc/driver/nvidia/version,
     * /sys/module/nvidia/version, as the pci probe read them) still says which CUDA the driver runs */
    const char *kmod = pci ? pci->nvidia_kmod_version : NULL;
    if (!m->cuda_ran && kmod && nvdriver_cuda_version(kmod) > 0) {
        m->dv = nvdriver_cuda_version(kmod);
        m->dv_from_module = true;
        snprintf(m->driver, sizeof(m->driver), "%s", kmod);
    }
}

static const char *fw_min_driver(int major)
{
    for (size_t i = 0; i < sizeof(fw_cuda_drivers) / sizeof(fw_cuda_drivers[0]); i++)
        if (fw_cuda_drivers[i].major == major)
            return fw_cuda_drivers[i].driver;
    return NULL;
}

static void fw_set_why(struct fw_found *f, enum fw_gpu gpu, const char *root, char *why)
{
    f->gpu = gpu;
    f->root = root;
    free(f->why);
    f->why = why;
}

/* A CUDA build: can this driver run it, and does a GPU compute through CUDA? */
static void fw_judge_cuda(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f, const struct fw_machine *m)
{
    char name[256], label[256];
    fw_name(s, f, name, sizeof(name));
    int major = fw_version_major(f->cuda);
    if (m->pci_known && m->nvidia == 0 && m->amd > 0) {
        fw_set_why(f, FW_GPU_NO, "frameworks.wrong-vendor",
                   str_printf("built for CUDA %s (NVIDIA), and this machine's GPUs are AMD", f->cuda));
        report_add_finding(ctx->report, "frameworks.wrong-vendor", f->source, "%s: %s", name, f->why);
        return;
    }
    if (!m->cuda_ran && !m->dv_from_module) {
        fw_set_why(f, FW_GPU_UNKNOWN, NULL, str_printf("built for CUDA %s; the CUDA driver was not checked", f->cuda));
        return;
    }
    if (m->dv < 0) {
        fw_set_why(f, FW_GPU_NO, NULL, str_printf("built for CUDA %s, and no CUDA driver works here", f->cuda));
        return;
    }
    if (major > 0 && m->dv < major * 1000) {
        const char *need = fw_min_driver(major);
        fw_set_why(f, FW_GPU_NO, "frameworks.cuda-too-new",
                   str_printf("built for CUDA %s, the driver%s%s runs CUDA %d.%d at most", f->cuda, m->driver[0] ? " " : "",
                              m->driver, m->dv / 1000, (m->dv % 1000) / 10));
        struct report_finding *fd = report_add_finding(ctx->report, "frameworks.cuda-too-new", f->source, "%s: will not "
                                                       "use the GPU: %s", name, f->why);
        if (fd)
            report_finding_set_hint(fd, "Install %s's build for CUDA %d (its wheel index names it, e.g. cu%d...), or "
                                    "upgrade the NVIDIA driver to %s or newer for CUDA %d.", f->kind->label,
                                    m->dv / 1000, m->dv / 1000, need ? need : "one", major);
        if (fd)
            report_finding_add_evidence(fd, f->source, "CUDA %s", f->cuda);
        return;
    }
    if (m->dv_from_module) {
        fw_set_why(f, FW_GPU_UNKNOWN, NULL, str_printf("CUDA %s build the driver can run (NVIDIA kernel module %s: CUDA "
                                                       "%d.%d); not proven: libcuda was not run on this tree",
                                                       f->cuda, m->driver, m->dv / 1000, (m->dv % 1000) / 10));
        return;
    }
    if (m->cuda_passed == 0 && m->driver_status && strcmp(m->driver_status, "ok") != 0 &&
        strcmp(m->driver_status, "no-library") != 0) {
        /* cuInit failed (CUDA_VISIBLE_DEVICES hiding every GPU, a driver mismatch...): the framework's own cuInit
         * fails the same way; the line names the cuda probe's root cause */
        fw_set_why(f, FW_GPU_NO, NULL, str_printf("CUDA %s build, and the CUDA driver does not initialise here (%s)",
                                                  f->cuda, m->driver_status));
        return;
    }
    if (m->cuda_passed > 0) {
        fw_set_why(f, FW_GPU_YES, NULL, str_printf("CUDA %s build, the driver runs CUDA %d.%d; %s passed the CUDA smoke "
                                                   "test", f->cuda, m->dv / 1000, (m->dv % 1000) / 10,
                                                   result_cuda_label(m->cuda_dev, label, sizeof(label))));
    } else if (m->smoke_missing) {
        fw_set_why(f, FW_GPU_UNKNOWN, NULL, str_printf("CUDA %s build the driver can run; not proven: the CUDA smoke "
                                                       "test did not run (%s)", f->cuda, m->smoke_missing));
    } else {
        fw_set_why(f, FW_GPU_NO, NULL, str_printf("CUDA %s build, and no GPU passed the CUDA smoke test", f->cuda));
    }
}

static void fw_judge_one(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f, const struct fw_machine *m)
{
    char name[256];
    fw_name(s, f, name, sizeof(name));
    const char *no_gpu = report_find_finding(ctx->report, "pci.no-gpu", NULL) ? "pci.no-gpu"
                       : report_find_finding(ctx->report, "cuda.no-gpu", NULL) ? "cuda.no-gpu" : NULL;
    bool gpu_absent = m->pci_known && m->nvidia + m->amd + m->intel + m->other == 0;
    if (f->damaged)
        report_add_finding(ctx->report, "frameworks.unreadable", f->source[0] ? f->source : f->site,
                           "%s: cannot tell its build: %s", name, f->damaged);
    switch (f->build) {
    case FW_BUILD_CPU:
        fw_set_why(f, FW_GPU_NO, "frameworks.cpu-build", str_printf("a CPU-only build (%s)", f->dist));
        report_add_finding(ctx->report, "frameworks.cpu-build", f->source[0] ? f->source : f->site,
                           "%s is a CPU-only build (%s): it will not use a GPU", name, f->dist);
        return;
    case FW_BUILD_UNKNOWN:
        fw_set_why(f, FW_GPU_UNKNOWN, f->damaged ? "frameworks.unreadable" : NULL,
                   str_dup(f->damaged ? "its build could not be read" : "its build does not say which GPUs it is for"));
        return;
    default:
        break;
    }
    if (gpu_absent || (!m->pci_known && no_gpu)) {
        int major = f->build == FW_BUILD_CUDA ? fw_version_major(f->cuda) : -1;
        if (major > 0 && m->cuda_ran && m->dv >= 0 && m->dv < major * 1000) /* said, no finding: no GPU for it */
            fw_set_why(f, FW_GPU_NO, no_gpu, str_printf("there is no GPU on this machine (and once there is one: built "
                                                        "for CUDA %s, the driver%s%s runs CUDA %d.%d at most)", f->cuda,
                                                        m->driver[0] ? " " : "", m->driver, m->dv / 1000,
                                                        (m->dv % 1000) / 10));
        else
            fw_set_why(f, FW_GPU_NO, no_gpu, str_dup("there is no GPU on this machine"));
        return;
    }
    if (f->build == FW_BUILD_CUDA) {
        fw_judge_cuda(ctx, s, f, m);
    } else if (f->build == FW_BUILD_ROCM && m->pci_known && m->amd == 0 && m->nvidia > 0) {
        fw_set_why(f, FW_GPU_NO, "frameworks.wrong-vendor",
                   str_printf("built for ROCm%s%s (AMD), and this machine's GPUs are NVIDIA", f->rocm[0] ? " " : "",
                              f->rocm));
        report_add_finding(ctx->report, "frameworks.wrong-vendor", f->source, "%s: %s", name, f->why);
    } else {
        fw_set_why(f, FW_GPU_UNKNOWN, NULL, str_printf("a %s build: gpucheckup does not check that stack yet",
                                                       f->build == FW_BUILD_ROCM ? "ROCm" : "XPU (oneAPI)"));
    }
}

/* The pins of F in STATE ("missing", "other-version"): "nvidia-cudnn-cu13==9.26.0.51 (installed 9.1.0)" into
 * LIST, "'nvidia-cudnn-cu13==9.26.0.51'" into REQ (each appended, cut to fit). */
static void fw_pins_list(const struct fw_found *f, const char *state, char *list, size_t ll, char *req, size_t rl)
{
    for (size_t i = 0; f->pins && i < json_object_array_length(f->pins); i++) {
        json_object *pin = json_object_array_get_idx(f->pins, i);
        const char *st = jsonget_str(pin, "state"), *name = jsonget_str(pin, "name"), *inst = jsonget_str(pin, "installed");
        if (!st || !name || strcmp(st, state) != 0)
            continue;
        char r[200];
        fw_pin_req(jsonget_str(pin, "spec") ? jsonget_str(pin, "spec") : "", r, sizeof(r));
        size_t l = strlen(list), q = strlen(req);
        int cut = snprintf(list + l, ll - l, "%s%s%s%s%s%s", l ? ", " : "", name, r, inst ? " (installed " : "",
                           inst ? inst : "", inst ? ")" : "");
        cut += snprintf(req + q, rl - q, " '%s%s'", name, r);
        (void)cut;
    }
}

/* Whether the loader finds, outside F's environment, every library of every missing pin of F (a conda
 * environment's, a system CUDA's or cuDNN's): their places into WHERE. */
static bool fw_pins_elsewhere(struct probe_ctx *ctx, const struct fw_found *f, struct fw_pin_where *where)
{
    struct ldsearch ls;
    if (ldsearch_init(&ls, ctx->fs, getenv("LD_LIBRARY_PATH")) != 0)
        return false;
    bool all = true;
    for (size_t i = 0; all && f->pins && i < json_object_array_length(f->pins); i++) {
        json_object *pin = json_object_array_get_idx(f->pins, i);
        const char *st = jsonget_str(pin, "state");
        if (st && strcmp(st, "missing") == 0)
            all = fw_pin_found_elsewhere(ctx->fs, &ls, jsonget_str(pin, "name"), jsonget_str(pin, "spec"), where) == 1;
    }
    ldsearch_free(&ls);
    return all;
}

/* The pinned NVIDIA wheels (fw_pins_check): missing ones are the first root cause, below any other (the import
 * fails on their libraries before torch looks for a GPU); other versions are a finding of their own. */
static void fw_judge_pins(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f)
{
    if (f->build != FW_BUILD_CUDA || f->pins_missing + f->pins_other + f->pins_extra == 0)
        return;
    char name[256], missing[700] = "", other[700] = "", extra[700] = "", req[1400] = "";
    fw_name(s, f, name, sizeof(name));
    fw_pins_list(f, "missing", missing, sizeof(missing), req, sizeof(req));
    fw_pins_list(f, "other-version", other, sizeof(other), req, sizeof(req));
    fw_pins_list(f, "extra-missing", extra, sizeof(extra), req, sizeof(req));
    const struct fw_env *env = &s->envs[f->env];
    char *py = env->python ? str_dup(env->python) : str_printf("%s/bin/python3", env->prefix);
    struct fw_pin_where *where = calloc(1, sizeof(*where));
    bool found = missing[0] && where && fw_pins_elsewhere(ctx, f, where);
    struct report_finding *fd = report_add_finding(
        ctx->report, "frameworks.nvidia-pins", f->source, "%s: %s%s%s%s%s%s%s%s%s%s%s", name,
        missing[0] ? "the NVIDIA wheels it pins are not installed beside it: " : "", missing,
        found ? " (the loader finds their libraries elsewhere: " : "", found ? where->text : "", found ? ")" : "",
        missing[0] && other[0] ? "; " : "", other[0] ? "installed at other versions than it pins: " : "", other,
        (missing[0] || other[0]) && extra[0] ? "; " : "", extra[0] ? "of its CUDA extra's wheels, not installed while "
        "others of it are (a half-done `pip install` of the extra, or another framework's wheels): " : "", extra);
    if (fd) {
        report_finding_set_hint(fd, "Install what %s pins: `%s -m pip install%s` (or reinstall it with its "
                                "dependencies: `%s -m pip install --force-reinstall %s`).", f->kind->label,
                                py ? py : "python3", req, py ? py : "python3", f->dist);
        for (size_t i = 0; f->pins && i < json_object_array_length(f->pins); i++) {
            json_object *pin = json_object_array_get_idx(f->pins, i);
            const char *st = jsonget_str(pin, "state");
            if (st && (strcmp(st, "missing") == 0 || strcmp(st, "other-version") == 0 ||
                       strcmp(st, "extra-missing") == 0))
                report_finding_add_evidence(fd, f->site, "Requires-Dist: %s %s: %s%s%s", jsonget_str(pin, "name"),
                                            jsonget_str(pin, "spec"), st, jsonget_str(pin, "installed") ? " "
                                            : "", jsonget_str(pin, "installed") ? jsonget_str(pin, "installed") : "");
        }
    }
    if (found) {
        /* torch's libraries name them by soname (and its import falls back to the loader's copies), so the import
         * will probably work; the finding stays a warning: pip's environment is inconsistent, and those copies
         * are not the versions it was built and tested with (an older one can fail on a missing symbol) */
        char *why = str_printf("%s%sits pinned NVIDIA wheels are missing (%s), but the loader finds their libraries "
                               "in %s: it will probably work with those", f->why ? f->why : "",
                               f->why ? "; " : "", missing, where->dirs);
        fw_set_why(f, f->gpu, f->root, why);
    } else if (missing[0]) {
        /* torch's import fails; TensorFlow and JAX import, fail to load them and run on the CPU */
        bool torch = strcmp(f->kind->name, "torch") == 0;
        char *why = str_printf("the NVIDIA wheels it pins are missing (%s): %s on their libraries%s%s", missing,
                               torch ? "importing it fails" : "loading its CUDA libraries fails (it runs on the CPU)",
                               f->why ? "; also " : "", f->why ? f->why : "");
        fw_set_why(f, FW_GPU_NO, "frameworks.nvidia-pins", why);
    }
    free(where);
    free(py);
}

/* TensorFlow's x86-64 wheels use AVX since 1.6 (its install guide: "the TensorFlow pip packages are built with
 * AVX"): where the cpu section says AVX is not usable, `import tensorflow` dies with SIGILL, whatever the GPU. */
static void fw_judge_avx(struct probe_ctx *ctx, const struct fw_scan *s, struct fw_found *f)
{
    const struct result_cpu *cpu = result_cpu_get(ctx->report);
    const char *arch = cpu ? cpu->architecture : NULL;
    if (strcmp(f->kind->name, "tensorflow") != 0 || !arch || strcmp(arch, "x86_64") != 0 ||
        result_cpu_flag(cpu, "avx") != GC_TRI_NO)
        return;
    char name[256];
    fw_name(s, f, name, sizeof(name));
    report_add_finding(ctx->report, "frameworks.tf-no-avx", f->source[0] ? f->source : f->site, "%s: this CPU has "
                       "no usable AVX, which TensorFlow's x86-64 wheels are built with: `import tensorflow` dies "
                       "with \"Illegal instruction\"", name);
    char *why = str_printf("this CPU has no usable AVX: importing it dies with \"Illegal instruction\"%s%s",
                           f->why ? "; also " : "", f->why ? f->why : "");
    fw_set_why(f, FW_GPU_NO, "frameworks.tf-no-avx", why);
}

void fw_judge_all(struct probe_ctx *ctx, struct fw_scan *s)
{
    struct fw_machine m;
    fw_machine_read(ctx->report, &m);
    for (size_t i = 0; i < s->n_found; i++) {
        fw_judge_one(ctx, s, &s->found[i], &m);
        fw_judge_arch(ctx, s, &s->found[i]);
        fw_judge_cudnn(ctx, s, &s->found[i]);
        fw_judge_tf_libs(ctx, s, &s->found[i]);
        fw_judge_pins(ctx, s, &s->found[i]);
        fw_judge_minor(ctx, s, &s->found[i]);
        fw_judge_avx(ctx, s, &s->found[i]);
    }
    fw_shadow_all(ctx, s);
}
