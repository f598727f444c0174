/* test_vendor.c: unit tests of the vendor table: lookups by PCI ID, name, module, library and platform, and hardware. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "vendor.h"
#include "results/result_pci.h"

static const char *cl_name(const struct vendor_cl *d)
{
    return d ? d->name : "(none)";
}

static void test_gpu_vendor_lookups(void **state)
{
    (void)state;
    const struct vendor *nv = vendor_by_pci_id(0x10de);
    assert_non_null(nv);
    assert_string_equal(nv->name, "nvidia");
    assert_true(vendor_list_has(nv->modules, "nvidia"));
    assert_true(vendor_list_has(nv->blocking_modules, "nouveau"));
    assert_true(vendor_list_has(nv->nodes, "/dev/nvidiactl"));
    assert_true(vendor_list_has(nv->nodes, "/dev/nvidia-uvm"));
    assert_true(vendor_list_has(nv->opencl_libs, "libnvidia-opencl.so.1"));
    assert_true(vendor_list_has(nv->compute_libs, "libcuda.so.1"));
    assert_true(vendor_list_has(nv->compute_libs, "libnvidia-ml.so.1"));
    assert_ptr_equal(vendor_by_name("NVIDIA"), nv);
    assert_ptr_equal(vendor_by_module("nouveau"), nv);
    assert_ptr_equal(vendor_by_module("nvidia_uvm"), nv);

    const struct vendor *amd = vendor_by_pci_id(0x1002);
    assert_non_null(amd);
    assert_string_equal(amd->name, "amd");
    assert_ptr_equal(vendor_by_pci_id(0x1022), amd);
    assert_true(vendor_list_has(amd->nodes, "/dev/kfd"));
    assert_ptr_equal(vendor_by_module("radeon"), amd);
    assert_false(vendor_list_has(amd->modules, "radeon"));

    const struct vendor *intel = vendor_by_name("intel");
    assert_non_null(intel);
    assert_int_equal(intel->pci_id, 0x8086);
    assert_ptr_equal(vendor_by_module("xe"), intel);
    assert_ptr_equal(vendor_by_module("i915"), intel);

    assert_null(vendor_by_pci_id(0x1234));
    assert_null(vendor_by_pci_id(-1));
    assert_null(vendor_by_pci_id(0));
    assert_null(vendor_by_name("pocl"));
    assert_null(vendor_by_name(NULL));
    assert_null(vendor_by_module("vfio-pci"));
    assert_null(vendor_by_module(NULL));

    /* The pci section writes "10de"; people write "0x10de". Anything else is no vendor. */
    assert_ptr_equal(vendor_by_pci_text("10de"), nv);
    assert_ptr_equal(vendor_by_pci_text("0x8086"), intel);
    assert_ptr_equal(vendor_by_pci_text("1022"), amd);
    assert_null(vendor_by_pci_text(""));
    assert_null(vendor_by_pci_text("0x"));
    assert_null(vendor_by_pci_text("10de0"));
    assert_null(vendor_by_pci_text("zz"));
    assert_null(vendor_by_pci_text("-10de"));
    assert_null(vendor_by_pci_text(NULL));
}

static void test_opencl_driver_by_library(void **state)
{
    (void)state;
    /* The names Debian's packages install (dpkg -L), and the vendors' own. */
    assert_string_equal(cl_name(vendor_cl_by_library("/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so")),
                        "intel-neo");
    assert_string_equal(cl_name(vendor_cl_by_library("libMesaOpenCL.so.1")), "clover");
    assert_string_equal(cl_name(vendor_cl_by_library("/usr/lib/x86_64-linux-gnu/libRusticlOpenCL.so.1.0.0")),
                        "rusticl");
    assert_string_equal(cl_name(vendor_cl_by_library("libpocl.so.2.10.0")), "pocl");
    assert_string_equal(cl_name(vendor_cl_by_library("libnvidia-opencl.so.1")), "nvidia");
    assert_string_equal(cl_name(vendor_cl_by_library("/opt/rocm/lib/libamdocl64.so")), "amd");
    assert_string_equal(cl_name(vendor_cl_by_library("libamdocl-orca64.so")), "amd");
    assert_string_equal(cl_name(vendor_cl_by_library("/opt/intel/oneapi/lib/libintelocl.so")), "intel-cpu");
    /* Only the file name counts, not the directory. */
    assert_null(vendor_cl_by_library("/opt/intel/lib/libfoo.so"));
    assert_null(vendor_cl_by_library("libgcfakeicd-error.so"));
    assert_null(vendor_cl_by_library(""));
    assert_null(vendor_cl_by_library(NULL));
    /* .icd file names as a last resort */
    assert_string_equal(cl_name(vendor_cl_by_library("/etc/OpenCL/vendors/rusticl.icd")), "rusticl");
    assert_string_equal(cl_name(vendor_cl_by_library("/etc/OpenCL/vendors/mesa.icd")), "clover");
}

static void test_opencl_driver_by_platform(void **state)
{
    (void)state;
    assert_string_equal(cl_name(vendor_cl_by_platform("Intel(R) OpenCL Graphics")), "intel-neo");
    assert_string_equal(cl_name(vendor_cl_by_platform("Intel(R) OpenCL HD Graphics")), "intel-neo");
    assert_string_equal(cl_name(vendor_cl_by_platform("Intel(R) OpenCL")), "intel-cpu");
    assert_string_equal(cl_name(vendor_cl_by_platform("Intel(R) CPU Runtime for OpenCL(TM) Applications")),
                        "intel-cpu");
    assert_string_equal(cl_name(vendor_cl_by_platform("NVIDIA CUDA")), "nvidia");
    assert_string_equal(cl_name(vendor_cl_by_platform("AMD Accelerated Parallel Processing")), "amd");
    assert_string_equal(cl_name(vendor_cl_by_platform("Advanced Micro Devices, Inc.")), "amd");
    assert_string_equal(cl_name(vendor_cl_by_platform("Portable Computing Language")), "pocl");
    assert_string_equal(cl_name(vendor_cl_by_platform("The pocl project")), "pocl");
    assert_string_equal(cl_name(vendor_cl_by_platform("rusticl")), "rusticl");
    assert_string_equal(cl_name(vendor_cl_by_platform("Clover")), "clover");
    assert_null(vendor_cl_by_platform("gpucheckup fake working"));
    assert_null(vendor_cl_by_platform(NULL));
}

static void test_rows_are_consistent(void **state)
{
    (void)state;
    size_t n = 0;
    const struct vendor_cl *rows = vendor_cl_all(&n);
    assert_true(n >= 7);
    static const char *const vendors[] = {"nvidia", "amd", "intel", "pocl", "mesa", NULL};
    for (size_t i = 0; i < n; i++) {
        const struct vendor_cl *d = &rows[i];
        assert_ptr_equal(vendor_cl_by_name(d->name), d);
        assert_true(vendor_list_has(vendors, d->vendor));
        assert_non_null(d->needs_text);
        if (d->needs == VENDOR_NEEDS_NOTHING) {
            assert_null(d->gpu_vendors);
            continue;
        }
        assert_non_null(d->gpu_vendors);
        assert_true(d->gpu_vendors[0] != 0);
        /* A driver of one GPU vendor drives that vendor's GPUs. */
        if (d->needs == VENDOR_NEEDS_OWN_GPU)
            assert_ptr_equal(vendor_by_pci_id(d->gpu_vendors[0]), vendor_by_name(d->vendor));
    }
    assert_null(vendor_cl_by_name("nope"));
}

/* The pci probe's module list (probes/pci/pci_drivers.c), in its JSON order. */
extern const char *const pci_module_names[];

static void test_pci_modules_follow_the_table(void **state)
{
    (void)state;
    /* The pci probe reports, vendor by vendor in table order, the compute modules then the blocking
     * ones: the same names in the same order, so the two cannot drift apart. */
    size_t k = 0;
    static const int ids[] = {0x10de, 0x1002, 0x8086};
    for (size_t v = 0; v < sizeof(ids) / sizeof(ids[0]); v++) {
        const struct vendor *row = vendor_by_pci_id(ids[v]);
        assert_non_null(row);
        for (size_t i = 0; row->modules && row->modules[i]; i++, k++) {
            assert_non_null(pci_module_names[k]);
            assert_string_equal(pci_module_names[k], row->modules[i]);
        }
        for (size_t i = 0; row->blocking_modules && row->blocking_modules[i]; i++, k++) {
            assert_non_null(pci_module_names[k]);
            assert_string_equal(pci_module_names[k], row->blocking_modules[i]);
        }
    }
    assert_null(pci_module_names[k]);
}

/* A pci section's data as the pci probe writes it. */
static json_object *pci_data(const char *source, int visible, const char *const *vendor_ids)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "source", json_object_new_string(source));
    if (visible >= 0)
        json_object_object_add(o, "bus_visible", json_object_new_boolean(visible));
    json_object *devs = json_object_new_array();
    for (size_t i = 0; vendor_ids && vendor_ids[i]; i++) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "address", json_object_new_string("0000:00:02.0"));
        json_object_object_add(d, "vendor_id", json_object_new_string(vendor_ids[i]));
        json_object_object_add(d, "driver", json_object_new_string("i915"));
        json_object_array_add(devs, d);
    }
    json_object_object_add(o, "devices", devs);
    return o;
}

/* The vendor a finding's subject or message names: module, driver and node names count. */
static void test_vendor_in_text(void **state)
{
    (void)state;
    assert_string_equal(vendor_in_text("nouveau is loaded"), "nvidia");
    assert_string_equal(vendor_in_text("/dev/kfd: Permission denied"), "amd");
    assert_string_equal(vendor_in_text("the ROCm runtime"), "amd");
    assert_string_equal(vendor_in_text("bound to I915"), "intel");
    assert_null(vendor_in_text("/etc/OpenCL/vendors/pocl.icd"));
    /* a Debian architecture is no vendor; the word after it still counts */
    assert_null(vendor_in_text("/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 (package ocl-icd-libopencl1:amd64)"));
    assert_string_equal(vendor_in_text("libfoo:amd64 beside an AMD GPU"), "amd");
    assert_string_equal(vendor_in_text("libcuda1:amd64 for an Intel iGPU"), "intel");
    assert_null(vendor_in_text(""));
    assert_null(vendor_in_text(NULL));
}

/* vendor_cl_hardware on the pci facts read from the section's JSON PCI (NULL: no facts). */
static enum vendor_hw hw_of(const struct vendor_cl *d, json_object *pci, const char *env, char *why, size_t len)
{
    struct result_pci *facts = pci ? result_pci_read(pci) : NULL;
    assert_true(!pci || facts);
    enum vendor_hw h = vendor_cl_hardware(d, facts, env, why, len);
    result_pci_ops.free(facts);
    return h;
}

static void test_hardware(void **state)
{
    (void)state;
    char why[192];
    const struct vendor_cl *neo = vendor_cl_by_name("intel-neo"), *pocl = vendor_cl_by_name("pocl");
    const struct vendor_cl *rusticl = vendor_cl_by_name("rusticl"), *clover = vendor_cl_by_name("clover");
    const struct vendor_cl *amd = vendor_cl_by_name("amd");

    json_object *none = pci_data("sysfs", 1, NULL);
    assert_int_equal(hw_of(neo, none, NULL, why, sizeof(why)), VENDOR_HW_ABSENT);
    assert_non_null(strstr(why, "8086 (Intel)"));
    assert_int_equal(hw_of(pocl, none, NULL, why, sizeof(why)), VENDOR_HW_NOT_NEEDED);
    assert_int_equal(hw_of(rusticl, none, NULL, why, sizeof(why)), VENDOR_HW_ABSENT);
    /* RUSTICL_ENABLE=llvmpipe makes rusticl a CPU driver; a longer word does not. */
    assert_int_equal(hw_of(rusticl, none, "radeonsi,llvmpipe", why, sizeof(why)), VENDOR_HW_NOT_NEEDED);
    assert_int_equal(hw_of(rusticl, none, "llvmpipe:0", why, sizeof(why)), VENDOR_HW_NOT_NEEDED);
    assert_int_equal(hw_of(rusticl, none, "llvmpipex", why, sizeof(why)), VENDOR_HW_ABSENT);
    assert_int_equal(hw_of(rusticl, none, "iris", why, sizeof(why)), VENDOR_HW_ABSENT);
    json_object_put(none);

    static const char *const intel_gpu[] = {"8086", NULL};
    json_object *intel = pci_data("sysfs", 1, intel_gpu);
    assert_int_equal(hw_of(neo, intel, NULL, why, sizeof(why)), VENDOR_HW_PRESENT);
    assert_non_null(strstr(why, "0000:00:02.0"));
    assert_non_null(strstr(why, "i915"));
    assert_int_equal(hw_of(rusticl, intel, NULL, why, sizeof(why)), VENDOR_HW_PRESENT);
    assert_int_equal(hw_of(clover, intel, NULL, why, sizeof(why)), VENDOR_HW_ABSENT);
    json_object_put(intel);

    static const char *const amd_alt[] = {"1022", NULL};
    json_object *alt = pci_data("sysfs", 1, amd_alt);
    assert_int_equal(hw_of(amd, alt, NULL, why, sizeof(why)), VENDOR_HW_PRESENT);
    json_object_put(alt);

    /* Without a full view of this machine's bus nothing is called absent. */
    assert_int_equal(hw_of(neo, NULL, NULL, why, sizeof(why)), VENDOR_HW_UNKNOWN);
    json_object *dump = pci_data("dump", 1, NULL);
    assert_int_equal(hw_of(neo, dump, NULL, why, sizeof(why)), VENDOR_HW_UNKNOWN);
    json_object_put(dump);
    json_object *hidden = pci_data("sysfs", 0, NULL);
    assert_int_equal(hw_of(neo, hidden, NULL, why, sizeof(why)), VENDOR_HW_UNKNOWN);
    json_object_put(hidden);
    json_object *nofield = pci_data("sysfs", -1, NULL);
    assert_int_equal(hw_of(neo, nofield, NULL, why, sizeof(why)), VENDOR_HW_UNKNOWN);
    json_object_put(nofield);
    static const char *const dead[] = {"ffff", NULL};
    json_object *allones = pci_data("sysfs", 1, dead);
    assert_int_equal(hw_of(neo, allones, NULL, why, sizeof(why)), VENDOR_HW_UNKNOWN);
    json_object_put(allones);
    assert_int_equal(hw_of(NULL, NULL, NULL, why, sizeof(why)), VENDOR_HW_UNKNOWN);

    assert_string_equal(vendor_hw_name(VENDOR_HW_ABSENT), "absent");
    assert_string_equal(vendor_hw_name(VENDOR_HW_NOT_NEEDED), "not-needed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_vendor_lookups),
        cmocka_unit_test(test_opencl_driver_by_library),
        cmocka_unit_test(test_opencl_driver_by_platform),
        cmocka_unit_test(test_rows_are_consistent),
        cmocka_unit_test(test_hardware),
        cmocka_unit_test(test_vendor_in_text),
        cmocka_unit_test(test_pci_modules_follow_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
