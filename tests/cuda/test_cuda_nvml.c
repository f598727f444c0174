/* test_cuda_nvml.c: the NVML child run through isolate_run against the suite's fake libnvidia-ml, then its report. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checks.h"
#include "cuda_internal.h"
#include "hostfs.h"
#include "isolate.h"
#include "nvml_api.h"
#include "report.h"

/* One run: the child under the fake's MODE, then cuda_nvml_report into a real report. */
struct run {
    char root[64];
    struct hostfs fs;
    struct report *rep;
    struct report_section *sec;
    struct isolate_result res;
    json_object *nvml; /* data["nvml"], owned by the section */
};

static const char *const env_vars[] = {
    "GC_FAKE_NVML_MODE", "GC_FAKE_NVML_GPUS", "GC_FAKE_NVML_BAD", "GC_FAKE_NVML_BUSIDS", "GC_FAKE_NVML_DRIVER",
    "NSIGHT_CUDA_DEBUGGER", "CUDA_INJECTION32_PATH", "CUDA_INJECTION64_PATH", "CUDA_AUTO_BOOST",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "CUDA_COREDUMP_FILE", "CUDA_DEVICE_WAITS_ON_EXCEPTION", "CUDA_PROFILE",
    "COMPUTE_PROFILE", "OPENCL_PROFILE", "CUDA_LAUNCH_BLOCKING", NULL,
};

static int reset_env(void **state)
{
    (void)state;
    for (size_t i = 0; env_vars[i]; i++)
        unsetenv(env_vars[i]);
    return 0;
}

/* Facts of a machine whose GPUs are bound to nvidia 580.159.04 (BOUND), or of one with no NVIDIA GPU. */
static struct cuda_facts facts_of(bool bound)
{
    struct cuda_facts f;
    memset(&f, 0, sizeof(f));
    f.nvidia_gpu_present = bound;
    f.nvidia_gpu_bound = bound;
    f.nvidia_module_loaded = bound;
    snprintf(f.kernel_driver_version, sizeof(f.kernel_driver_version), "%s", bound ? "580.159.04" : "");
    f.driver_cuda_version = bound ? 13000 : -1;
    f.cuinit_result = bound ? 0 : -1;
    f.device_count = bound ? 1 : -1;
    return f;
}

static void touch(const char *root, const char *rel)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0666);
    assert_true(fd >= 0);
    close(fd);
}

/* A fake root with /dev/nvidiactl and N_NODES /dev/nvidiaN nodes (regular files). */
static void make_root(struct run *r, int n_nodes)
{
    snprintf(r->root, sizeof(r->root), "/tmp/gc-nvml-XXXXXX");
    assert_non_null(mkdtemp(r->root));
    char dev[128];
    snprintf(dev, sizeof(dev), "%s/dev", r->root);
    assert_int_equal(mkdir(dev, 0755), 0);
    touch(r->root, "dev/nvidiactl");
    touch(r->root, "dev/nvidia-uvm");
    for (int i = 0; i < n_nodes; i++) {
        char rel[64];
        snprintf(rel, sizeof(rel), "dev/nvidia%d", i);
        touch(r->root, rel);
    }
    assert_int_equal(hostfs_open(&r->fs, r->root), 0);
}

static void run_nvml(struct run *r, const char *mode, const char *lib, const struct cuda_facts *facts, int n_nodes,
                     int timeout_ms)
{
    memset(r, 0, sizeof(*r));
    if (mode)
        setenv("GC_FAKE_NVML_MODE", mode, 1);
    make_root(r, n_nodes);
    isolate_run(cuda_nvml_child, (void *)lib, timeout_ms, &r->res);
    r->rep = report_new();
    assert_non_null(r->rep);
    r->sec = report_add_section(r->rep, "cuda");
    assert_non_null(r->sec);
    struct probe_ctx ctx = {.opts = NULL, .fs = &r->fs, .report = r->rep, .timeout_ms = timeout_ms, .error = NULL};
    cuda_nvml_report(&ctx, r->sec, &r->res, facts);
    assert_true(json_object_object_get_ex(r->sec->data, "nvml", &r->nvml));
    /* GC_NVML_DUMP=DIR: keep every data["nvml"] for validation against the schema's $defs/cuda_nvml. */
    const char *dump = getenv("GC_NVML_DUMP");
    if (dump) {
        static int seq;
        char path[512];
        snprintf(path, sizeof(path), "%s/nvml-%02d-%s.json", dump, seq++, mode ? mode : lib ? "lib" : "default");
        assert_int_equal(json_object_to_file_ext(path, r->nvml, JSON_C_TO_STRING_PRETTY), 0);
    }
}

static void rm_root(const char *root)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void run_free(struct run *r)
{
    isolate_result_clear(&r->res);
    report_free(r->rep);
    hostfs_close(&r->fs);
    rm_root(r->root);
}

static const char *jstr(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static json_object *jget(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static json_object *device(const struct run *r, size_t i)
{
    json_object *devs = jget(r->nvml, "devices");
    assert_non_null(devs);
    assert_true(i < json_object_array_length(devs));
    return json_object_array_get_idx(devs, i);
}

static const struct check *row(const char *id)
{
    for (size_t i = 0; i < cuda_nvml_n_checks; i++)
        if (strcmp(cuda_nvml_checks[i].id, id) == 0)
            return &cuda_nvml_checks[i];
    return NULL;
}

/* The finding ID about SUBJECT exists, its catalogue row has severity SEV, and (once the cuda probe
 * registers these rows) the report gave it that severity and the row's hint. */
static const struct report_finding *expect(const struct run *r, const char *id, const char *subject,
                                           enum report_severity sev)
{
    const struct report_finding *f = report_find_finding(r->rep, id, subject);
    if (!f) {
        for (size_t i = 0; i < r->rep->n_findings; i++)
            fprintf(stderr, "  have %s [%s] %s\n", r->rep->findings[i]->id,
                    r->rep->findings[i]->subject ? r->rep->findings[i]->subject : "-", r->rep->findings[i]->message);
        fail_msg("no finding %s about %s", id, subject ? subject : "(any)");
    }
    if (strncmp(id, "core.", 5) != 0) {
        const struct check *c = row(id);
        assert_non_null(c);
        assert_int_equal(c->severity, sev);
    }
    if (checks_find(r->rep->catalogue, id))
        assert_int_equal(f->severity, sev);
    assert_non_null(f->message);
    return f;
}

static void expect_count(const struct run *r, size_t n)
{
    if (r->rep->n_findings != n)
        for (size_t i = 0; i < r->rep->n_findings; i++)
            fprintf(stderr, "  have %s [%s] %s\n", r->rep->findings[i]->id,
                    r->rep->findings[i]->subject ? r->rep->findings[i]->subject : "-", r->rep->findings[i]->message);
    assert_int_equal(r->rep->n_findings, n);
}

/* ---- healthy ---------------------------------------------------------------------------------- */

/* One healthy H100 as on the real machine: everything read, nothing flagged (not even info). The
 * library is found as the probe finds it, by name through LD_LIBRARY_PATH. */
static void test_healthy_one(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, NULL, NULL, &facts, 1, 10000);
    assert_int_equal(r.res.status, ISOLATE_OK);
    expect_count(&r, 0);
    assert_string_equal(jstr(r.nvml, "status"), "ok");
    assert_string_equal(jstr(r.nvml, "library"), "libnvidia-ml.so.1");
    assert_non_null(strstr(jstr(r.nvml, "path"), "fake_nvml/libnvidia-ml.so.1"));
    assert_string_equal(jstr(r.nvml, "pci_info_symbol"), "nvmlDeviceGetPciInfo_v3");
    assert_int_equal(json_object_get_int(jget(r.nvml, "init_result")), 0);
    assert_string_equal(jstr(r.nvml, "init_result_name"), "NVML_SUCCESS");
    assert_string_equal(jstr(r.nvml, "driver_version"), "580.159.04");
    assert_string_equal(jstr(r.nvml, "nvml_version"), "13.580.159.04");
    assert_int_equal(json_object_get_int(jget(r.nvml, "cuda_driver_version")), 13000);
    assert_int_equal(json_object_get_int(jget(r.nvml, "device_count")), 1);
    json_object *d = device(&r, 0);
    assert_string_equal(jstr(d, "name"), "NVIDIA H100 80GB HBM3");
    assert_string_equal(jstr(d, "pci_bus_id"), "0000:00:06.0");
    assert_non_null(strstr(jstr(d, "uuid"), "GPU-"));
    assert_true(json_object_get_boolean(jget(d, "persistence_mode")));
    assert_true(json_object_get_boolean(jget(jget(d, "ecc_mode"), "current")));
    assert_int_equal(json_object_get_int(jget(d, "ecc_uncorrected_volatile")), 0);
    assert_false(json_object_get_boolean(jget(jget(d, "mig"), "current")));
    assert_null(jget(jget(d, "mig"), "devices"));
    assert_false(json_object_get_boolean(jget(jget(d, "remapped_rows"), "pending")));
    assert_true(json_object_get_boolean(jget(d, "inforom_valid")));
    assert_int_equal(json_object_get_int(jget(d, "recovery_action")), 0);
    assert_int_equal(json_object_get_int(jget(d, "clocks_event_reasons")), 1);
    /* Page retirement is not supported on an H100: null and listed, never a made-up 0 or false. */
    assert_true(json_object_object_get_ex(d, "retired_pages_pending", NULL));
    assert_null(jget(d, "retired_pages_pending"));
    assert_null(jget(d, "retired_pages"));
    json_object *ns = jget(d, "not_supported");
    assert_non_null(ns);
    assert_int_equal(json_object_array_length(ns), 2);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(ns, 0)), "retired_pages_pending");
    assert_null(jget(d, "errors"));
    json_object *nodes = jget(r.nvml, "device_nodes");
    assert_int_equal(json_object_get_int(jget(nodes, "usable")), 1);
    assert_int_equal(json_object_array_length(jget(nodes, "present")), 1);
    assert_int_equal(json_object_object_length(jget(r.nvml, "environment")), 0);
    run_free(&r);
}

/* Eight GPUs with bus ids from a fake sysfs tree, eight nodes: all read, nothing flagged. */
static void test_healthy_eight(void **state)
{
    (void)state;
    static const char *const ids[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                      "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
    setenv("GC_FAKE_NVML_GPUS", "8", 1);
    setenv("GC_FAKE_NVML_BUSIDS", "0000:18:00.0,0000:2A:00.0,0000:3a:00.0,0000:5d:00.0,0000:9a:00.0,0000:ab:00.0,"
                                  "0000:ba:00.0,0000:db:00.0", 1);
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "healthy", NULL, &facts, 8, 10000);
    expect_count(&r, 0);
    assert_int_equal(json_object_get_int(jget(r.nvml, "device_count")), 8);
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(jstr(device(&r, i), "pci_bus_id"), ids[i]);
        assert_int_equal(json_object_get_int(jget(device(&r, i), "minor_number")), (int)i);
    }
    assert_int_equal(json_object_get_int(jget(jget(r.nvml, "device_nodes"), "usable")), 8);
    run_free(&r);
}

/* Idle, application clocks, SW power cap and sync boost are normal operation, not slowdowns. */
static void test_idle_clocks_not_flagged(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "idle", NULL, &facts, 1, 10000);
    expect_count(&r, 0);
    json_object *names = jget(device(&r, 0), "clocks_event_names");
    assert_int_equal(json_object_array_length(names), 4);
    run_free(&r);
}

/* Everything "not supported" (a consumer GPU in a VM, say): all null and listed, nothing flagged. */
static void test_unsupported_is_null(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "unsupported", NULL, &facts, 1, 10000);
    expect_count(&r, 0);
    json_object *d = device(&r, 0);
    static const char *const keys[] = {"uuid", "persistence_mode", "ecc_mode", "ecc_uncorrected_volatile",
                                       "remapped_rows", "mig", "clocks_event_reasons", "inforom_valid", NULL};
    for (size_t i = 0; keys[i]; i++) {
        assert_true(json_object_object_get_ex(d, keys[i], NULL));
        assert_null(jget(d, keys[i]));
    }
    assert_true(json_object_array_length(jget(d, "not_supported")) >= 8);
    assert_string_equal(jstr(d, "pci_bus_id"), "0000:00:06.0");
    run_free(&r);
}

/* An old driver's library exports only the plain names: the fallbacks find them, the 52-byte PCI info
 * layout gives the bus id from its legacy field, the throttle-reasons name gives the clock reasons. */
static void test_old_symbols(void **state)
{
    (void)state;
    const char *old = getenv("GC_FAKE_NVML_OLD");
    assert_non_null(old);
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "thermal", old, &facts, 1, 10000);
    assert_string_equal(jstr(r.nvml, "status"), "ok");
    assert_string_equal(jstr(r.nvml, "pci_info_symbol"), "nvmlDeviceGetPciInfo");
    assert_string_equal(jstr(device(&r, 0), "pci_bus_id"), "0000:00:06.0");
    /* No nvmlDeviceGetFieldValues in it: the recovery action is null, "not supported". */
    assert_true(json_object_object_get_ex(device(&r, 0), "recovery_action", NULL));
    assert_null(jget(device(&r, 0), "recovery_action"));
    const struct report_finding *f = expect(&r, "cuda.nvml-clocks-slowdown", "0000:00:06.0", REPORT_SEV_WARNING);
    assert_non_null(strstr(f->message, "sw_thermal_slowdown"));
    assert_non_null(strstr(f->message, "hw_thermal_slowdown"));
    expect_count(&r, 1);
    run_free(&r);
}

/* ---- nvmlInit failures ------------------------------------------------------------------------ */

static void test_version_mismatch(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "mismatch", NULL, &facts, 1, 10000);
    assert_string_equal(jstr(r.nvml, "status"), "init-failed");
    assert_int_equal(json_object_get_int(jget(r.nvml, "init_result")), 18);
    assert_string_equal(jstr(r.nvml, "init_result_name"), "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
    const struct report_finding *f =
        expect(&r, "cuda.nvml-version-mismatch", jstr(r.nvml, "path"), REPORT_SEV_ERROR);
    assert_non_null(strstr(f->message, "Driver/library version mismatch"));
    assert_non_null(strstr(f->message, "580.159.04"));
    expect_count(&r, 1);
    run_free(&r);
}

/* Driver not loaded: an error where a GPU is bound to nvidia, info where there is no NVIDIA GPU. */
static void test_driver_not_loaded(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    facts.nvidia_module_loaded = false;
    struct run r;
    run_nvml(&r, "driver-not-loaded", NULL, &facts, 0, 10000);
    const struct report_finding *f = expect(&r, "cuda.nvml-driver-not-loaded", NULL, REPORT_SEV_ERROR);
    assert_non_null(strstr(f->message, "NVML_ERROR_DRIVER_NOT_LOADED (9)"));
    expect_count(&r, 1);
    run_free(&r);

    facts = facts_of(false);
    run_nvml(&r, "driver-not-loaded", NULL, &facts, 0, 10000);
    expect(&r, "cuda.nvml-no-driver", NULL, REPORT_SEV_INFO);
    expect_count(&r, 1);
    assert_int_equal(report_count_severity(r.rep, REPORT_SEV_WARNING), 0);
    run_free(&r);
}

static void test_init_errors(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "no-permission", NULL, &facts, 1, 10000);
    const struct report_finding *f = expect(&r, "cuda.nvml-no-permission", NULL, REPORT_SEV_ERROR);
    assert_non_null(strstr(f->message, "NVML_ERROR_NO_PERMISSION"));
    expect_count(&r, 1);
    run_free(&r);

    run_nvml(&r, "init-unknown", NULL, &facts, 1, 10000);
    f = expect(&r, "cuda.nvml-init-failed", NULL, REPORT_SEV_ERROR);
    assert_non_null(strstr(f->message, "NVML_ERROR_UNKNOWN (999)"));
    expect_count(&r, 1);
    run_free(&r);
}

/* A crash and a hang in nvmlInit become data and a warning naming the library; with no NVIDIA GPU, a
 * note only. */
static void test_crash_and_hang(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "crash", NULL, &facts, 1, 10000);
    assert_int_equal(r.res.status, ISOLATE_SIGNAL);
    assert_string_equal(jstr(r.nvml, "status"), "crash");
    const struct report_finding *f = expect(&r, "cuda.nvml-unusable", "libnvidia-ml.so.1", REPORT_SEV_WARNING);
    assert_non_null(strstr(f->message, "SIGSEGV"));
    expect_count(&r, 1);
    run_free(&r);

    run_nvml(&r, "hang", NULL, &facts, 1, 700);
    assert_int_equal(r.res.status, ISOLATE_TIMEOUT);
    assert_string_equal(jstr(r.nvml, "status"), "timeout");
    expect(&r, "cuda.nvml-unusable", "libnvidia-ml.so.1", REPORT_SEV_WARNING);
    expect_count(&r, 1);
    run_free(&r);

    facts = facts_of(false);
    run_nvml(&r, "crash", NULL, &facts, 0, 10000);
    expect_count(&r, 0);
    assert_non_null(jget(r.sec->data, "notes"));
    run_free(&r);
}

/* No library: a warning only where a GPU is bound to nvidia; a library without NVML's functions. */
static void test_missing_library(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, NULL, "libgc-no-such-nvml.so.1", &facts, 1, 10000);
    assert_string_equal(jstr(r.nvml, "status"), "no-library");
    assert_non_null(jstr(r.nvml, "error"));
    expect(&r, "cuda.nvml-missing", "libnvidia-ml.so.1", REPORT_SEV_WARNING);
    expect_count(&r, 1);
    run_free(&r);

    facts = facts_of(false);
    run_nvml(&r, NULL, "libgc-no-such-nvml.so.1", &facts, 0, 10000);
    expect_count(&r, 0);
    assert_string_equal(jstr(r.nvml, "status"), "no-library");
    run_free(&r);

    facts = facts_of(true);
    run_nvml(&r, NULL, "libm.so.6", &facts, 1, 10000);
    assert_string_equal(jstr(r.nvml, "status"), "missing-symbol");
    assert_string_equal(jstr(r.nvml, "error"), "nvmlInit_v2");
    expect(&r, "cuda.nvml-unusable", jstr(r.nvml, "path"), REPORT_SEV_WARNING);
    expect_count(&r, 1);
    run_free(&r);
}

/* ---- per-GPU states --------------------------------------------------------------------------- */

/* MODE on GPU 1 of two gives exactly finding ID (at SEV) about 0000:01:00.0, nothing about GPU 0. */
static void one_gpu_case(const char *mode, const char *id, enum report_severity sev, const char *in_message)
{
    setenv("GC_FAKE_NVML_GPUS", "2", 1);
    setenv("GC_FAKE_NVML_BAD", "1", 1);
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, mode, NULL, &facts, 2, 10000);
    const struct report_finding *f = expect(&r, id, "0000:01:00.0", sev);
    if (in_message && !strstr(f->message, in_message))
        fail_msg("message \"%s\" lacks \"%s\"", f->message, in_message);
    assert_null(report_find_finding(r.rep, id, "0000:00:06.0"));
    expect_count(&r, 1);
    run_free(&r);
    unsetenv("GC_FAKE_NVML_GPUS");
    unsetenv("GC_FAKE_NVML_BAD");
}

static void test_mig(void **state)
{
    (void)state;
    one_gpu_case("mig-no-instance", "cuda.nvml-mig-no-instance", REPORT_SEV_ERROR, "no MIG device");
    one_gpu_case("mig-pending", "cuda.nvml-mig-pending", REPORT_SEV_INFO, "will be enabled");
    /* MIG with instances computes: nothing flagged; row remapping is not supported under MIG. */
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "mig-ok", NULL, &facts, 1, 10000);
    expect_count(&r, 0);
    json_object *d = device(&r, 0);
    assert_int_equal(json_object_get_int(jget(jget(d, "mig"), "devices")), 2);
    assert_null(jget(d, "remapped_rows"));
    run_free(&r);
}

static void test_memory_health(void **state)
{
    (void)state;
    one_gpu_case("remap-pending", "cuda.nvml-row-remap-pending", REPORT_SEV_WARNING, "1 uncorrectable");
    one_gpu_case("remap-failure", "cuda.nvml-row-remap-failed", REPORT_SEV_ERROR, NULL);
    one_gpu_case("remap-limit", "cuda.nvml-row-remap-limit", REPORT_SEV_ERROR, "512 rows");
    one_gpu_case("retired-limit", "cuda.nvml-retired-pages-limit", REPORT_SEV_ERROR, "70 memory pages");
    one_gpu_case("ecc-unc", "cuda.nvml-ecc-uncorrectable", REPORT_SEV_WARNING, "2 uncorrectable");
    one_gpu_case("ecc-pending", "cuda.nvml-ecc-pending", REPORT_SEV_INFO, "off after a reboot");
    one_gpu_case("inforom-invalid", "cuda.nvml-inforom-invalid", REPORT_SEV_WARNING, NULL);
    one_gpu_case("recovery-reset", "cuda.nvml-recovery-action", REPORT_SEV_ERROR, "asks for a GPU reset");
    one_gpu_case("recovery-reboot", "cuda.nvml-recovery-action", REPORT_SEV_ERROR, "asks for a node reboot");
    one_gpu_case("persistence-off", "cuda.nvml-persistence-off", REPORT_SEV_INFO, NULL);
    one_gpu_case("hw-slowdown", "cuda.nvml-clocks-slowdown", REPORT_SEV_WARNING, "hw_slowdown, hw_power_brake");

    /* A lost GPU cannot say its bus id or UUID: the finding names it by NVML index, and nothing else is
     * said about it (its other values are meaningless). */
    setenv("GC_FAKE_NVML_GPUS", "2", 1);
    setenv("GC_FAKE_NVML_BAD", "1", 1);
    struct cuda_facts lost_facts = facts_of(true);
    struct run lost;
    run_nvml(&lost, "gpu-lost", NULL, &lost_facts, 2, 10000);
    const struct report_finding *lf = expect(&lost, "cuda.nvml-gpu-lost", "NVML GPU 1", REPORT_SEV_ERROR);
    assert_non_null(strstr(lf->message, "NVML_ERROR_GPU_IS_LOST"));
    expect_count(&lost, 1);
    assert_null(jget(device(&lost, 1), "pci_bus_id"));
    assert_string_equal(jstr(jget(device(&lost, 1), "errors"), "pci_bus_id"), "NVML_ERROR_GPU_IS_LOST");
    run_free(&lost);

    /* A GPU the process may not open (device cgroup): info, named by index. */
    run_nvml(&lost, "handle-perm", NULL, &lost_facts, 2, 10000);
    lf = expect(&lost, "cuda.nvml-gpu-blocked", "NVML GPU 1", REPORT_SEV_INFO);
    assert_non_null(strstr(lf->message, "NVML_ERROR_NO_PERMISSION"));
    expect_count(&lost, 1);
    assert_int_equal(report_count_severity(lost.rep, REPORT_SEV_WARNING), 0);
    run_free(&lost);
    unsetenv("GC_FAKE_NVML_GPUS");
    unsetenv("GC_FAKE_NVML_BAD");

    /* Retired pages pending: the GPU that has them, with its counts read. */
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "retired-pending", NULL, &facts, 1, 10000);
    expect(&r, "cuda.nvml-retired-pages-pending", "0000:00:06.0", REPORT_SEV_WARNING);
    expect_count(&r, 1);
    assert_int_equal(json_object_get_int(jget(jget(device(&r, 0), "retired_pages"), "double_bit")), 1);
    run_free(&r);
}

/* ---- the machine around NVML ------------------------------------------------------------------ */

/* DCGM's permissions check: 8 GPUs but 7 /dev/nvidiaN nodes. */
static void test_device_nodes(void **state)
{
    (void)state;
    setenv("GC_FAKE_NVML_GPUS", "8", 1);
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, NULL, NULL, &facts, 7, 10000);
    const struct report_finding *f = expect(&r, "cuda.nvml-device-nodes", "/dev", REPORT_SEV_WARNING);
    assert_non_null(strstr(f->message, "8 GPUs but only 7"));
    expect_count(&r, 1);
    run_free(&r);
}

/* DCGM's environment check, plus CUDA_LAUNCH_BLOCKING other than 0; nothing without an NVIDIA GPU. */
static void test_environment(void **state)
{
    (void)state;
    setenv("CUDA_INJECTION64_PATH", "/opt/nsight/libinject.so", 1);
    setenv("CUDA_LAUNCH_BLOCKING", "0", 1);
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, NULL, NULL, &facts, 1, 10000);
    const struct report_finding *f = expect(&r, "cuda.nvml-cuda-env", "CUDA_INJECTION64_PATH", REPORT_SEV_WARNING);
    assert_non_null(strstr(f->message, "/opt/nsight/libinject.so"));
    expect_count(&r, 1);
    assert_string_equal(jstr(jget(r.nvml, "environment"), "CUDA_INJECTION64_PATH"), "/opt/nsight/libinject.so");
    run_free(&r);

    setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
    setenv("CUDA_PROFILE", "1", 1);
    run_nvml(&r, NULL, NULL, &facts, 1, 10000);
    expect(&r, "cuda.nvml-cuda-env", "CUDA_LAUNCH_BLOCKING", REPORT_SEV_WARNING);
    expect(&r, "cuda.nvml-cuda-env", "CUDA_PROFILE", REPORT_SEV_WARNING);
    expect_count(&r, 3);
    run_free(&r);

    facts = facts_of(false);
    run_nvml(&r, NULL, "libgc-no-such-nvml.so.1", &facts, 0, 10000);
    expect_count(&r, 0);
    run_free(&r);
}

/* NVML's driver version against the kernel module's (/proc/driver/nvidia/version, in the facts). */
static void test_driver_version(void **state)
{
    (void)state;
    setenv("GC_FAKE_NVML_DRIVER", "575.57.08", 1);
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, NULL, NULL, &facts, 1, 10000);
    const struct report_finding *f = expect(&r, "cuda.nvml-driver-version", jstr(r.nvml, "path"), REPORT_SEV_ERROR);
    assert_non_null(strstr(f->message, "575.57.08"));
    assert_non_null(strstr(f->message, "580.159.04"));
    expect_count(&r, 1);
    run_free(&r);

    /* The same version with other text after it (as a parser may keep it) is no mismatch. */
    unsetenv("GC_FAKE_NVML_DRIVER");
    snprintf(facts.kernel_driver_version, sizeof(facts.kernel_driver_version), "580.159.04 (open)");
    run_nvml(&r, NULL, NULL, &facts, 1, 10000);
    expect_count(&r, 0);
    run_free(&r);

    /* Unknown kernel version (no /proc/driver/nvidia/version): nothing to compare. */
    setenv("GC_FAKE_NVML_DRIVER", "575.57.08", 1);
    facts.kernel_driver_version[0] = '\0';
    run_nvml(&r, NULL, NULL, &facts, 1, 10000);
    expect_count(&r, 0);
    run_free(&r);
}

/* ---- text ------------------------------------------------------------------------------------ */

static char *print_nvml(json_object *nvml, int verbose)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    struct text_out t = {.f = f, .color = false, .verbose = verbose, .command = "cuda"};
    cuda_nvml_print_text(nvml, &t);
    fclose(f);
    return buf;
}

static void test_text(void **state)
{
    (void)state;
    struct cuda_facts facts = facts_of(true);
    struct run r;
    run_nvml(&r, "remap-pending", NULL, &facts, 1, 10000);
    char *out = print_nvml(r.nvml, 1);
    assert_non_null(strstr(out, "driver 580.159.04, CUDA 13.0, 1 GPU"));
    assert_non_null(strstr(out, "0000:00:06.0 NVIDIA H100 80GB HBM3: persistence on, ECC on, MIG off, remap pending yes"));
    assert_non_null(strstr(out, "clock events: gpu_idle"));
    free(out);
    run_free(&r);

    run_nvml(&r, "mismatch", NULL, &facts, 1, 10000);
    out = print_nvml(r.nvml, 0);
    assert_non_null(strstr(out, "init-failed, NVML_ERROR_LIB_RM_VERSION_MISMATCH"));
    free(out);
    run_free(&r);
}

/* ---- tables ----------------------------------------------------------------------------------- */

static void test_catalogue(void **state)
{
    (void)state;
    assert_true(cuda_nvml_n_checks >= 20);
    for (size_t i = 0; i < cuda_nvml_n_checks; i++) {
        const struct check *c = &cuda_nvml_checks[i];
        assert_true(strncmp(c->id, "cuda.nvml-", 10) == 0);
        assert_int_equal(strspn(c->id, "abcdefghijklmnopqrstuvwxyz0123456789.-"), strlen(c->id));
        assert_non_null(c->title);
        assert_non_null(c->hint);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(c->id, cuda_nvml_checks[j].id);
    }
}

static void test_return_names(void **state)
{
    (void)state;
    assert_string_equal(nvml_return_name(0), "NVML_SUCCESS");
    assert_string_equal(nvml_return_name(3), "NVML_ERROR_NOT_SUPPORTED");
    assert_string_equal(nvml_return_name(4), "NVML_ERROR_NO_PERMISSION");
    assert_string_equal(nvml_return_name(9), "NVML_ERROR_DRIVER_NOT_LOADED");
    assert_string_equal(nvml_return_name(18), "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
    assert_string_equal(nvml_return_name(999), "NVML_ERROR_UNKNOWN");
    assert_null(nvml_return_name(-1));
    assert_null(nvml_return_name(31));
    int found = 0;
    for (int c = 0; c <= 1000; c++)
        found += nvml_return_name(c) != NULL;
    assert_int_equal(found, 32);
}

/* The layout our struct must share with nvml.h's nvmlPciInfo_t (v3: 68 bytes, busId at 36). */
static void test_pci_layout(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct nvml_pci_info), 68);
    assert_int_equal(offsetof(struct nvml_pci_info, domain), 16);
    assert_int_equal(offsetof(struct nvml_pci_info, pci_subsystem_id), 32);
    assert_int_equal(offsetof(struct nvml_pci_info, bus_id), 36);
    /* nvmlFieldValue_t: 40 bytes, the return code at 28, the value union at 32. */
    assert_int_equal(sizeof(struct nvml_field_value), 40);
    assert_int_equal(offsetof(struct nvml_field_value, value_type), 24);
    assert_int_equal(offsetof(struct nvml_field_value, result), 28);
    assert_int_equal(offsetof(struct nvml_field_value, value), 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_healthy_one, reset_env),
        cmocka_unit_test_setup(test_healthy_eight, reset_env),
        cmocka_unit_test_setup(test_idle_clocks_not_flagged, reset_env),
        cmocka_unit_test_setup(test_unsupported_is_null, reset_env),
        cmocka_unit_test_setup(test_old_symbols, reset_env),
        cmocka_unit_test_setup(test_version_mismatch, reset_env),
        cmocka_unit_test_setup(test_driver_not_loaded, reset_env),
        cmocka_unit_test_setup(test_init_errors, reset_env),
        cmocka_unit_test_setup(test_crash_and_hang, reset_env),
        cmocka_unit_test_setup(test_missing_library, reset_env),
        cmocka_unit_test_setup(test_mig, reset_env),
        cmocka_unit_test_setup(test_memory_health, reset_env),
        cmocka_unit_test_setup(test_device_nodes, reset_env),
        cmocka_unit_test_setup(test_environment, reset_env),
        cmocka_unit_test_setup(test_driver_version, reset_env),
        cmocka_unit_test_setup(test_text, reset_env),
        cmocka_unit_test(test_catalogue),
        cmocka_unit_test(test_return_names),
        cmocka_unit_test(test_pci_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
