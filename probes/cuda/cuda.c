/* cuda.c: the cuda probe: the NVIDIA CUDA stack end to end (driver API, NVML, libraries, smoke), orchestrated. */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute_options.h"
#include "cuda_api.h"
#include "cuda_driver.h"
#include "cuda_internal.h"
#include "isolate.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "results/result_cuda.h"
#include "strutil.h"
#include "vendor.h"
#include "results/result_pci.h"


/* The probe's catalogue: each part owns its rows (cuda_internal.h declares them). */
static const struct check_set cuda_check_sets[] = {
    {cuda_driver_checks, &cuda_driver_n_checks},
    {cuda_nvml_checks, &cuda_nvml_n_checks},
    {cuda_nvml_mem_checks, &cuda_nvml_mem_n_checks},
    {cuda_nvml_thermal_checks, &cuda_nvml_thermal_n_checks},
    {cuda_resume_checks, &cuda_resume_n_checks},
    {cuda_libs_checks, &cuda_libs_n_checks},
    {cuda_smoke_checks, &cuda_smoke_n_checks},
    {cuda_p2p_checks, &cuda_p2p_n_checks},
    {cuda_nvlink_checks, &cuda_nvlink_n_checks},
    {NULL, NULL},
};


/* Environment variables that change what CUDA sees or loads (recorded as facts). */
static const char *const cuda_env_vars[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_HOME", "CUDA_PATH", "CUDA_VERSION", NULL,
};

/* What is kept of the driver child's JSON (strings sanitised and cut, sizes bounded). */
static const struct jsonstr_limits cuda_child_limits = {.depth = 8, .string = 4096, .items = 1024, .key = SIZE_MAX};

/* ---- facts from the pci section ----------------------------------------------------------------- */

/* Fill FACTS from the pci section (and /proc/driver/nvidia/version when pci could not read the
 * kernel side); returns the pci facts when they list the bus's devices (borrowed), else NULL. *PCI_KNOWN says whether the pci
 * facts can be trusted to say "no NVIDIA GPU". */
static const struct result_pci *cuda_facts_collect(struct probe_ctx *ctx, struct report_section *sec, struct cuda_facts *f,
                                       bool *pci_known, int *uvm_loaded)
{
    memset(f, 0, sizeof(*f));
    f->driver_cuda_version = -1;
    f->cuinit_result = -1;
    f->device_count = -1;
    *pci_known = false;
    *uvm_loaded = -1;
    const struct result_pci *pd = result_pci_get(ctx->report);
    if (pd && pd->have_devices) {
        *pci_known = true;
        for (size_t i = 0; i < pd->n_devs; i++) {
            const struct result_pci_dev *d = &pd->devs[i];
            const char *vid = d->vendor_id, *drv = d->driver;
            if (!vid || strcmp(vid, "10de") != 0 || !result_pci_dev_computes(d))
                continue;
            f->nvidia_gpu_present = true;
            if (drv && strcmp(drv, "nvidia") == 0)
                f->nvidia_gpu_bound = true;
        }
    } else {
        report_section_add_note(sec, "no PCI facts (pci probe %s): GPU checks that need them are skipped",
                                result_pci_status(ctx->report));
    }
    f->wsl2 = pd && pd->platform == RESULT_PCI_PLATFORM_WSL2;
    if (f->wsl2)
        report_section_add_note(sec, "WSL2: the GPU is the Windows host's (CUDA's bus IDs are the host's), so CUDA "
                                     "devices are not matched to guest sysfs, and no /dev/nvidia* node is expected");
    f->nvidia_module_loaded = result_pci_module_loaded(pd, "nvidia") == GC_TRI_YES;
    *uvm_loaded = result_pci_module_loaded(pd, "nvidia_uvm");
    f->nvidia_module_unloadable = pd && pd->nvidia_kmod_unloadable;
    const char *kv = pd ? pd->nvidia_kmod_version : NULL;
    if (kv) {
        snprintf(f->kernel_driver_version, sizeof(f->kernel_driver_version), "%s", kv);
    } else if (!pd || !pd->have_modules) {
        /* pci did not look at the kernel (a --pci-dump run): read the version file ourselves. */
        char *text = NULL;
        if (hostfs_read_file(ctx->fs, "/proc/driver/nvidia/version", 64 * 1024, &text, NULL) == 0) {
            int open_mod = -1;
            char *v = vendor_nvidia_parse_version(text, &open_mod);
            if (v) {
                snprintf(f->kernel_driver_version, sizeof(f->kernel_driver_version), "%s", v);
                f->nvidia_module_loaded = true;
            }
            free(v);
            free(text);
        }
    }
    return pd && pd->have_devices ? pd : NULL;
}

/* ---- the driver child's result ------------------------------------------------------------------ */

static const char *cuda_compute_mode_name(int64_t m)
{
    /* cuda.h, enum CUcomputemode_enum (1, exclusive thread, was removed in CUDA 8 but may be reported). */
    switch (m) {
    case 0:
        return "default";
    case 1:
        return "exclusive-thread";
    case 2:
        return "prohibited";
    case 3:
        return "exclusive-process";
    default:
        return NULL;
    }
}

/* Turn the child's device object into the report's (normalised bus id tied to the pci section). */
static json_object *cuda_device_json(json_object *cd, const struct result_pci *pci_devs)
{
    json_object *o = jsonstr_clean_copy(cd, &cuda_child_limits);
    char addr[48] = "";
    const char *bus = jsonget_str(o, "pci_bus_id");
    if (cuda_driver_normalize_busid(bus, addr, sizeof(addr)) != 0 &&
        cuda_driver_normalize_busid(jsonget_str(o, "pci_from_attributes"), addr, sizeof(addr)) != 0)
        addr[0] = '\0';
    json_object_object_del(o, "pci_from_attributes");
    json_object_object_add(o, "pci_address", addr[0] ? json_object_new_string(addr) : NULL);
    bool matched = addr[0] && result_pci_dev_at(pci_devs, addr);
    json_object_object_add(o, "on_pci_bus", pci_devs && addr[0] ? json_object_new_boolean(matched) : NULL);
    int64_t ma = jsonget_int(o, "cc_major", -1), mi = jsonget_int(o, "cc_minor", -1);
    if (ma >= 0 && mi >= 0 && ma < 100 && mi < 100) {
        char cc[16];
        snprintf(cc, sizeof(cc), "%d.%d", (int)ma, (int)mi);
        json_object_object_add(o, "compute_capability", json_object_new_string(cc));
    } else {
        json_object_object_add(o, "compute_capability", NULL);
    }
    int64_t cm = jsonget_int(o, "compute_mode", -1);
    const char *cmn = cuda_compute_mode_name(cm);
    json_object_object_add(o, "compute_mode", cmn ? json_object_new_string(cmn) : NULL);
    int64_t ecc = jsonget_int(o, "ecc_enabled", -1), integ = jsonget_int(o, "integrated", -1),
            mgb = jsonget_int(o, "multi_gpu_board", -1);
    json_object_object_add(o, "ecc_enabled", ecc >= 0 ? json_object_new_boolean(ecc != 0) : NULL);
    json_object_object_add(o, "integrated", integ >= 0 ? json_object_new_boolean(integ != 0) : NULL);
    json_object_object_add(o, "multi_gpu_board", mgb >= 0 ? json_object_new_boolean(mgb != 0) : NULL);
    return o;
}

/* Run the driver child's outcome into data["driver"] / data["devices"] and the findings. */
static void cuda_driver_report(struct cuda_run *cr, struct isolate_result *res)
{
    struct report *r = cr->ctx->report;
    json_object *data = cr->sec->data;
    json_object *drv = json_object_new_object();
    json_object *devices = json_object_new_array();
    json_object *child = res->status == ISOLATE_OK && json_object_is_type(res->value, json_type_object)
                             ? jsonstr_clean_copy(res->value, &cuda_child_limits)
                             : NULL;
    struct result_cuda *rc = result_cuda_of(cr->sec);
    enum result_cuda_driver_status status;
    if (res->status == ISOLATE_SPAWN_FAILED) {
        status = RESULT_CUDA_DRV_FAILED;
        if (!res->budget_spent) /* no time left: core.timeout-spent says so */
            report_add_finding(r, "core.isolated-child-failed", "cuda", "The CUDA driver child could not start: %s",
                               res->detail ? res->detail : "fork failed");
    } else if (res->status == ISOLATE_TIMEOUT) {
        status = RESULT_CUDA_DRV_TIMEOUT;
        struct report_finding *f = report_add_finding(r, "cuda.driver-hang", "libcuda.so.1",
                                                      "Loading libcuda.so.1 and cuInit(0) %s",
                                                      res->detail ? res->detail : "timed out");
        if (res->stderr_tail && *res->stderr_tail)
            report_finding_add_evidence(f, "output", "%s", res->stderr_tail);
    } else if (!child) {
        status = RESULT_CUDA_DRV_CRASH;
        struct report_finding *f = report_add_finding(r, "cuda.driver-crash", "libcuda.so.1",
                                                      "Loading libcuda.so.1 and cuInit(0) failed: %s",
                                                      res->detail ? res->detail : isolate_status_name(res->status));
        if (res->stderr_tail && *res->stderr_tail)
            report_finding_add_evidence(f, "output", "%s", res->stderr_tail);
    } else {
        json_object *lib = jsonget(child, "library");
        if (!lib || !json_object_is_type(lib, json_type_object))
            status = RESULT_CUDA_DRV_NO_LIBRARY;
        else if (jsonget_str(child, "missing_symbol"))
            status = RESULT_CUDA_DRV_MISSING_SYMBOLS;
        else if (jsonget_int(jsonget(child, "cuinit"), "code", -1) == CUDA_SUCCESS)
            status = RESULT_CUDA_DRV_OK;
        else
            status = RESULT_CUDA_DRV_INIT_FAILED;
    }
    json_object_object_add(drv, "status", gc_name_json(&result_cuda_driver_status_names, (int)status));
    json_object_object_add(drv, "detail", res->status == ISOLATE_OK || !res->detail ? NULL : json_object_new_string(res->detail));
    static const char *const keys[] = {"library", "dlopen_error", "missing_symbol", "cuinit", "driver_version",
                                       "device_count", "has_compute", NULL};
    for (size_t i = 0; keys[i]; i++) {
        json_object *v = jsonget(child, keys[i]);
        json_object_object_add(drv, keys[i], v ? json_object_get(v) : NULL);
    }
    int64_t dv = jsonget_int(child, "driver_version", -1);
    if (dv > 0 && dv < 1000000) {
        char b[32];
        snprintf(b, sizeof(b), "%d.%d", (int)(dv / 1000), (int)(dv % 1000) / 10);
        json_object_object_add(drv, "cuda_version", json_object_new_string(b));
    } else {
        json_object_object_add(drv, "cuda_version", NULL);
    }
    json_object_object_add(drv, "kernel_module_version",
                           cr->facts.kernel_driver_version[0] ? json_object_new_string(cr->facts.kernel_driver_version)
                                                              : NULL);
    json_object_object_add(drv, "elapsed_ms", json_object_new_double(res->elapsed_ms >= 0 ? res->elapsed_ms : 0));
    if (res->stderr_tail && *res->stderr_tail)
        json_object_object_add(drv, "output", json_object_new_string(res->stderr_tail));

    json_object *cdevs = jsonget(child, "devices");
    for (size_t i = 0; cdevs && json_object_is_type(cdevs, json_type_array) && i < json_object_array_length(cdevs); i++) {
        json_object *d = json_object_array_get_idx(cdevs, i);
        if (!json_object_is_type(d, json_type_object))
            continue;
        json_object *dev = cuda_device_json(d, cr->pci_devs);
        json_object_array_add(devices, dev);
        if (rc)
            result_cuda_add_dev(rc, dev);
    }
    const char *dlerr = jsonget_str(child, "dlopen_error");
    cr->facts.libcuda_missing = child && status == RESULT_CUDA_DRV_NO_LIBRARY &&
                                (!dlerr || strstr(dlerr, "cannot open shared object file"));
    const char *libver = jsonget_str(jsonget(child, "library"), "version");
    snprintf(cr->facts.libcuda_version, sizeof(cr->facts.libcuda_version), "%s", libver ? libver : "");
    cr->facts.cuinit_result = (int)jsonget_int(jsonget(child, "cuinit"), "code", -1);
    cr->facts.driver_cuda_version = (int)(dv > 0 && dv < 1000000 ? dv : -1);
    if (rc) {
        rc->driver_status = (int)status;
        rc->driver_version = cr->facts.driver_cuda_version;
    }
    cr->facts.device_count = cr->facts.cuinit_result == CUDA_SUCCESS ? (int)json_object_array_length(devices) : -1;

    json_object_object_add(data, "driver", drv);
    json_object_object_add(data, "devices", devices);
    cuda_findings_secure_boot(cr);
    if (child && status == RESULT_CUDA_DRV_NO_LIBRARY)
        cuda_findings_no_library(cr, drv);
    else if (child)
        cuda_findings_loaded(cr, drv, devices);
    json_object_put(child);
}

/* ---- the smoke children ------------------------------------------------------------------------ */

static void cuda_smoke_run(struct cuda_run *cr)
{
    json_object *devices = jsonget(cr->sec->data, "devices");
    size_t nd = devices ? json_object_array_length(devices) : 0;
    const char *why = NULL;
    if (compute_options()->which == COMPUTE_WHICH_NONE)
        why = "--no-smoke";
    else if (cr->facts.cuinit_result != CUDA_SUCCESS)
        why = "the CUDA driver did not initialise";
    else if (nd == 0)
        why = "no CUDA device";
    else if (probe_budget_ms(cr->ctx) <= 0) /* core.timeout-spent names it */
        why = "the run's --timeout was already spent";
    if (why) {
        /* data["smoke"] is the smoke part's array (one entry per GPU tested): empty, and why. */
        json_object_object_add(cr->sec->data, "smoke", json_object_new_array());
        json_object_object_add(cr->sec->data, "smoke_not_run", json_object_new_string(why));
        struct result_cuda *rc = result_cuda_of(cr->sec);
        if (rc && !rc->smoke_not_run)
            rc->smoke_not_run = str_dup(why);
        return;
    }
    struct cuda_smoke_args *args = calloc(nd, sizeof(*args));
    struct isolate_job *jobs = calloc(nd, sizeof(*jobs));
    struct isolate_result *results = calloc(nd, sizeof(*results));
    if (!args || !jobs || !results) {
        free(args);
        free(jobs);
        free(results);
        report_section_add_note(cr->sec, "CUDA smoke test skipped: out of memory");
        return;
    }
    for (size_t i = 0; i < nd; i++) {
        args[i].ordinal = (int)jsonget_int(json_object_array_get_idx(devices, i), "ordinal", (int64_t)i);
        args[i].n = (int)compute_options()->size;
        jobs[i].fn = cuda_smoke_child;
        jobs[i].arg = &args[i];
    }
    probe_isolate_many(cr->ctx, jobs, nd);
    for (size_t i = 0; i < nd; i++)
        results[i] = jobs[i].result;
    cuda_smoke_report(cr->ctx, cr->sec, args, results, nd);
    for (size_t i = 0; i < nd; i++)
        isolate_result_clear(&results[i]);
    free(results);
    free(jobs);
    free(args);
}

/* ---- summary ------------------------------------------------------------------------------------ */

static void cuda_summary(struct cuda_run *cr)
{
    struct report_section *sec = cr->sec;
    json_object *data = sec->data, *drv = jsonget(data, "driver"), *lib = jsonget(drv, "library");
    const struct result_cuda *rc = result_cuda_of(sec);
    int status = rc ? rc->driver_status : -1;
    const char *status_name = gc_name(&result_cuda_driver_status_names, status);
    const char *cname = jsonget_str(jsonget(drv, "cuinit"), "name");
    const char *path = jsonget_str(lib, "path");
    const char *cv = jsonget_str(drv, "cuda_version");
    json_object *devices = jsonget(data, "devices");
    size_t nd = devices ? json_object_array_length(devices) : 0;
    if (status < 0 || status == RESULT_CUDA_DRV_NO_LIBRARY) {
        bool info = report_find_finding(cr->ctx->report, "cuda.no-driver", NULL) != NULL ||
                    (!cr->facts.nvidia_gpu_present && cr->pci_known);
        report_section_add_line(sec, info ? REPORT_MARK_INFO : REPORT_MARK_ERROR, "CUDA", "no NVIDIA driver: libcuda.so.1 %s%s",
                                jsonget_str(drv, "dlopen_error") && !strstr(jsonget_str(drv, "dlopen_error"), "cannot open shared object file")
                                    ? "cannot be loaded" : "not found",
                                info ? " (no NVIDIA GPU)" : "");
    } else if (status == RESULT_CUDA_DRV_CRASH || status == RESULT_CUDA_DRV_TIMEOUT || status == RESULT_CUDA_DRV_FAILED) {
        report_section_add_line(sec, REPORT_MARK_ERROR, "CUDA", "driver child %s: %s", status_name,
                                jsonget_str(drv, "detail") ? jsonget_str(drv, "detail") : "no detail");
    } else if (status != RESULT_CUDA_DRV_OK) {
        bool info = !cr->facts.nvidia_gpu_present && cr->pci_known &&
                    !report_find_finding(cr->ctx->report, "cuda.stub-library", NULL);
        report_section_add_line(sec, info ? REPORT_MARK_INFO : REPORT_MARK_ERROR, "CUDA", "cuInit failed: %s (%lld), libcuda %s",
                                cname ? cname : "unknown", (long long)jsonget_int(jsonget(drv, "cuinit"), "code", -1),
                                path ? path : "?");
    } else {
        const char *kv = jsonget_str(lib, "version");
        /* cuInit worked, but a driver-level finding (a version mismatch...) still marks the line. */
        enum report_mark mark = nd ? REPORT_MARK_OK : REPORT_MARK_WARN;
        for (size_t i = 0; i < cr->ctx->report->n_findings; i++) {
            const struct report_finding *f = cr->ctx->report->findings[i];
            if (str_starts_with(f->id, "cuda.") && f->severity == REPORT_SEV_ERROR &&
                strcmp(f->id, "cuda.compute-prohibited") != 0)
                mark = REPORT_MARK_ERROR;
        }
        report_section_add_line(sec, mark, "CUDA", "driver %s, CUDA %s, %zu device%s (%s)",
                                kv ? kv : "of unknown version", cv ? cv : "?", nd, nd == 1 ? "" : "s", path ? path : "?");
    }
    for (size_t i = 0; i < nd; i++) {
        json_object *d = json_object_array_get_idx(devices, i);
        char label[32], mem[32] = "memory ?";
        int64_t ord = jsonget_int(d, "ordinal", (int64_t)i);
        snprintf(label, sizeof(label), "CUDA %lld", (long long)ord);
        int64_t bytes = jsonget_int(d, "memory_bytes", -1);
        if (bytes >= 0)
            snprintf(mem, sizeof(mem), "%.1f GiB", (double)bytes / (1024.0 * 1024.0 * 1024.0));
        const char *cc = jsonget_str(d, "compute_capability"), *addr = jsonget_str(d, "pci_address");
        int sst = ord >= 0 && ord < 65536 ? result_cuda_smoke_of(rc, (int)ord) : -1;
        const char *smoke = gc_name(&result_cuda_smoke_status_names, sst);
        const char *cm = jsonget_str(d, "compute_mode");
        bool bad = (smoke && sst != RESULT_CUDA_SMOKE_PASS) || (cm && strcmp(cm, "prohibited") == 0);
        report_section_add_line(sec, bad ? REPORT_MARK_ERROR : REPORT_MARK_OK, label,
                                "%s%s%s, compute capability %s, %s, %lld SMs%s%s",
                                jsonget_str(d, "name") ? jsonget_str(d, "name") : "unnamed device", addr ? " " : "",
                                addr ? addr : "", cc ? cc : "?", mem, (long long)jsonget_int(d, "multiprocessors", -1),
                                smoke ? ", smoke " : "", smoke ? smoke : "");
    }
}

/* The speed policy's rule 1 (docs/performance.md): on this host's files (no --root), where NVIDIA's hardware is
 * absent (vendor_cl_hardware: the PCI facts list every GPU and none is NVIDIA's; no /dev/nvidia* node), is each
 * of libcuda.so.1 (*DRV) and libnvidia-ml.so.1 (*NVML) found nowhere by the dynamic linker's search? Then
 * dlopen's answer is known without a child: the result a child would give (its dlopen failing) is made here.
 * Both false (load as before) otherwise: a libcuda.so.1 that is there is still loaded, its findings (a stub, a
 * broken driver) drawn from what it answers. */
static void cuda_not_loadable(struct probe_ctx *ctx, bool *drv, bool *nvml)
{
    char why[160];
    *drv = *nvml = false;
    if (!ctx->fs->live ||
        vendor_cl_hardware(vendor_cl_by_name("nvidia"), result_pci_get(ctx->report), NULL, why, sizeof(why)) != VENDOR_HW_ABSENT)
        return;
    DIR *d = hostfs_opendir(ctx->fs, "/dev");
    if (!d)
        return;
    bool node = false;
    struct dirent *e;
    while (!node && (e = readdir(d)))
        node = str_starts_with(e->d_name, "nvidia") || strcmp(e->d_name, "dxg") == 0; /* WSL2's GPU: load as before */
    closedir(d);
    /* The child's dlopen("libcuda.so.1") searches the path the dynamic linker read when gpucheckup started:
     * gpucheckup's own LD_LIBRARY_PATH, also under --pid, whose environment the run takes afterwards. */
    struct ldsearch s;
    if (node || ldsearch_init(&s, ctx->fs, isolate_target_own_getenv("LD_LIBRARY_PATH")) != 0)
        return;
    const char *via = NULL;
    char *p = ldsearch_find(&s, "libcuda.so.1", &via), *q = p ? NULL : ldsearch_find(&s, "libnvidia-ml.so.1", &via);
    ldsearch_free(&s);
    *drv = !p;
    *nvml = !p && !q;
    free(p);
    free(q);
}

/* JOB's result as its child would have answered where FILE cannot be opened (cuda_not_loadable): the
 * driver child's {"dlopen_error"} or the NVML child's {"status": "no-library"}. */
static void cuda_not_loaded_result(struct isolate_job *job, const char *file, bool nvml)
{
    json_object *o = json_object_new_object();
    char *err = str_printf("%s: cannot open shared object file: not found by the dynamic linker's search (read from "
                           "the files; not loaded: no NVIDIA GPU on this host)", file);
    if (nvml) {
        json_object_object_add(o, "library", json_object_new_string(file));
        json_object_object_add(o, "status", json_object_new_string("no-library"));
        json_object_object_add(o, "error", jsonstr_or_null(err));
    } else {
        json_object_object_add(o, "dlopen_error", jsonstr_or_null(err));
    }
    free(err);
    memset(&job->result, 0, sizeof(job->result));
    job->result.status = ISOLATE_OK;
    job->result.value = o;
}

static int cuda_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct cuda_run cr = {.ctx = ctx, .sec = sec};
    /* The typed facts the doctor reads, filled beside the JSON by the parts below (result_cuda.h). */
    report_section_set_result(sec, &result_cuda_ops, result_cuda_new());
    cr.pci_devs = cuda_facts_collect(ctx, sec, &cr.facts, &cr.pci_known, &cr.uvm_loaded);

    json_object *env = json_object_new_object();
    for (size_t i = 0; cuda_env_vars[i]; i++) {
        const char *v = getenv(cuda_env_vars[i]);
        if (v) {
            char *s = str_dup(v);
            json_object_object_add(env, cuda_env_vars[i], json_object_new_string(s ? str_sanitize(s) : ""));
            free(s);
        }
    }
    json_object_object_add(sec->data, "environment", env);

    /* One batch: the driver API and NVML children side by side (no CUDA library in this process). */
    struct isolate_job jobs[2] = {
        {.fn = cuda_driver_child, .arg = NULL},
        {.fn = cuda_nvml_child, .arg = NULL},
    };
    bool skip_drv, skip_nvml;
    cuda_not_loadable(ctx, &skip_drv, &skip_nvml);
    if (skip_drv)
        cuda_not_loaded_result(&jobs[0], "libcuda.so.1", false);
    if (skip_nvml)
        cuda_not_loaded_result(&jobs[1], "libnvidia-ml.so.1", true);
    if (!skip_nvml) /* (skip_nvml only with skip_drv: a libcuda that is there brings its NVML child too) */
        probe_isolate_many(ctx, jobs + (skip_drv ? 1 : 0), skip_drv ? 1 : 2);
    cuda_driver_report(&cr, &jobs[0].result);
    cr.facts.nvidia_module_loaded |= cr.facts.kernel_driver_version[0] != '\0';
    cr.facts.pci_known = cr.pci_known;
    cuda_nvml_report(ctx, sec, &jobs[1].result, &cr.facts);
    cuda_nvml_mem_metrics(sec);
    isolate_result_clear(&jobs[0].result);
    isolate_result_clear(&jobs[1].result);

    cuda_libs_report(ctx, sec, &cr.facts);
    cuda_smoke_run(&cr);
    cuda_p2p_run(ctx, sec);
    cuda_summary(&cr);
    if (result_cuda_of(sec))
        result_cuda_read_driver(result_cuda_of(sec), sec->data);
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    return PROBE_DONE;
}

static const char *const cuda_deps[] = {"pci", NULL};

/* Today's summary label for one an older gpucheckup wrote (struct probe.label_today). */
static char *cuda_label_today(const char *label)
{
    static const struct report_label_rename renamed[] = {{"CUDA libs", "CUDA libraries"}};
    return report_label_renamed(renamed, sizeof(renamed) / sizeof(renamed[0]), label);
}

const struct probe probe_cuda = {
    .name = "cuda",
    .stack = PROBE_STACK_CUDA,
    .label_today = cuda_label_today,
    .compute_api = "cuda",
    .compute_api_label = "CUDA",
    .vendor = "nvidia",
    .title = "the NVIDIA CUDA stack: libcuda and cuInit, each GPU, NVML, the CUDA\n"
             "libraries frameworks load, a CUDA smoke test (`check` only lists those\n"
             "libraries, unloaded, on a host with no NVIDIA GPU and no driver, and\n"
             "--health does not look for them there; under --root they are the\n"
             "tree's and never loaded)",
    .needs_live = true,
    .deps = cuda_deps,
    .check_sets = cuda_check_sets,
    .requires = cuda_requires,
    .options = cuda_option_rows,
    .options_title = "GPU health (cuda)",
    .options_reset = cuda_mem_opts_reset,
    .result = &result_cuda_ops,
    .run = cuda_run,
    .verdict = cuda_verdict,
    .print_text = cuda_print_text,
    .node_labels = cuda_node_labels,
};
