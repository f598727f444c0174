/* test_clquery.c: unit tests of the shared OpenCL query layer against a fake clapi table (no driver loaded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "clquery.h"

/* ---- the fake driver: what each query answers ---- */

#define FAKE_MAX_ANSWERS 8

struct fake_answer {
    cl_uint what;
    cl_int err;           /* returned by both calls */
    const void *value;
    size_t size;          /* what the size query reports */
    size_t written;       /* what the value call reports (0: SIZE) */
};

static struct {
    struct fake_answer a[FAKE_MAX_ANSWERS];
    size_t n;
    unsigned calls;
    cl_uint platforms, devices;   /* counts answered to the count query */
    cl_uint listed;               /* what the list call reports (0: the count) */
    cl_int count_err, list_err;
    unsigned asked[16];           /* query ids asked, in order */
    size_t n_asked;
} fake;

static void fake_reset(void)
{
    memset(&fake, 0, sizeof(fake));
}

static void fake_add(cl_uint what, cl_int err, const void *value, size_t size)
{
    assert_true(fake.n < FAKE_MAX_ANSWERS);
    fake.a[fake.n++] = (struct fake_answer){what, err, value, size, 0};
}

static cl_int fake_info(cl_uint what, size_t size, void *value, size_t *size_ret)
{
    fake.calls++;
    if (fake.n_asked < 16)
        fake.asked[fake.n_asked++] = what;
    for (size_t i = 0; i < fake.n; i++) {
        const struct fake_answer *f = &fake.a[i];
        if (f->what != what)
            continue;
        if (f->err != CL_SUCCESS)
            return f->err;
        if (value) {
            if (size < f->size)
                return CL_INVALID_VALUE;
            memcpy(value, f->value, f->size);
        }
        if (size_ret)
            *size_ret = value && f->written ? f->written : f->size;
        return CL_SUCCESS;
    }
    return CL_INVALID_VALUE;
}

static cl_int fake_device_info(cl_device_id d, cl_device_info what, size_t size, void *value, size_t *size_ret)
{
    (void)d;
    return fake_info(what, size, value, size_ret);
}

static cl_int fake_platform_info(cl_platform_id p, cl_platform_info what, size_t size, void *value, size_t *size_ret)
{
    (void)p;
    return fake_info(what, size, value, size_ret);
}

static cl_int fake_list(cl_uint total, cl_uint num, void **out, cl_uint *n)
{
    fake.calls++;
    if (!out) {
        if (fake.count_err != CL_SUCCESS)
            return fake.count_err;
        *n = total;
        return CL_SUCCESS;
    }
    if (fake.list_err != CL_SUCCESS)
        return fake.list_err;
    cl_uint k = fake.listed ? fake.listed : total;
    for (cl_uint i = 0; i < num && i < k; i++)
        out[i] = (void *)(uintptr_t)(0x1000 + i);
    if (n)
        *n = k;
    return CL_SUCCESS;
}

static cl_int fake_platform_ids(cl_uint num, cl_platform_id *ids, cl_uint *n)
{
    return fake_list(fake.platforms, num, (void **)ids, n);
}

static cl_int fake_device_ids(cl_platform_id p, cl_device_type type, cl_uint num, cl_device_id *ids, cl_uint *n)
{
    (void)p;
    (void)type;
    return fake_list(fake.devices, num, (void **)ids, n);
}

static struct clapi fake_api(void)
{
    struct clapi api;
    memset(&api, 0, sizeof(api));
    api.clGetDeviceInfo = fake_device_info;
    api.clGetPlatformInfo = fake_platform_info;
    api.clGetPlatformIDs = fake_platform_ids;
    api.clGetDeviceIDs = fake_device_ids;
    return api;
}

#define DEV ((cl_device_id)(uintptr_t)0x42)

/* ---- enumeration ---- */

static void test_enumeration(void **state)
{
    (void)state;
    struct clapi api = fake_api();
    cl_platform_id *p = NULL;
    cl_device_id *d = NULL;
    cl_uint n = 99;

    fake_reset();
    fake.platforms = 3;
    assert_int_equal(clquery_platform_ids(&api, &p, &n), CL_SUCCESS);
    assert_int_equal(n, 3);
    assert_ptr_equal(p[2], (void *)(uintptr_t)0x1002);
    free(p);

    /* none: the loader's own code comes back, nothing allocated */
    fake_reset();
    fake.count_err = CL_PLATFORM_NOT_FOUND_KHR;
    assert_int_equal(clquery_platform_ids(&api, &p, &n), CL_PLATFORM_NOT_FOUND_KHR);
    assert_null(p);
    assert_int_equal(n, 0);
    fake_reset();
    assert_int_equal(clquery_platform_ids(&api, &p, &n), CL_SUCCESS);
    assert_null(p);
    assert_int_equal(n, 0);

    /* a count beyond reason is capped; a list call that fails is the error */
    fake_reset();
    fake.platforms = 4000000000u;
    assert_int_equal(clquery_platform_ids(&api, &p, &n), CL_SUCCESS);
    assert_int_equal(n, CLQUERY_MAX_PLATFORMS);
    free(p);
    fake_reset();
    fake.platforms = 2;
    fake.list_err = CL_OUT_OF_RESOURCES;
    assert_int_equal(clquery_platform_ids(&api, &p, &n), CL_OUT_OF_RESOURCES);
    assert_null(p);
    assert_int_equal(n, 0);

    /* fewer listed than counted: only those */
    fake_reset();
    fake.devices = 5;
    fake.listed = 2;
    assert_int_equal(clquery_device_ids(&api, NULL, CL_DEVICE_TYPE_ALL, &d, &n), CL_SUCCESS);
    assert_int_equal(n, 2);
    free(d);
    fake_reset();
    fake.count_err = CL_DEVICE_NOT_FOUND;
    assert_int_equal(clquery_device_ids(&api, NULL, CL_DEVICE_TYPE_GPU, &d, &n), CL_DEVICE_NOT_FOUND);
    assert_null(d);
    fake_reset();
    fake.devices = 100000;
    assert_int_equal(clquery_device_ids(&api, NULL, CL_DEVICE_TYPE_ALL, &d, &n), CL_SUCCESS);
    assert_int_equal(n, CLQUERY_MAX_DEVICES);
    free(d);
}

/* ---- strings ---- */

static void test_strings(void **state)
{
    (void)state;
    struct clapi api = fake_api();
    cl_int err = 0;

    fake_reset();
    fake_add(CL_DEVICE_NAME, CL_SUCCESS, "fake GPU", 9);
    char *s = clquery_device_str(&api, DEV, CL_DEVICE_NAME, &err);
    assert_string_equal(s, "fake GPU");
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(fake.calls, 2);
    free(s);

    /* no NUL from the driver: still a terminated string */
    fake_reset();
    fake_add(CL_PLATFORM_NAME, CL_SUCCESS, "abc", 3);
    s = clquery_platform_str(&api, NULL, CL_PLATFORM_NAME, &err);
    assert_string_equal(s, "abc");
    free(s);
    s = clquery_platform_str_fn(fake_platform_info, NULL, CL_PLATFORM_NAME, NULL);
    assert_string_equal(s, "abc");
    free(s);

    /* an empty answer is an empty string, asked once */
    fake_reset();
    fake_add(CL_DEVICE_EXTENSIONS, CL_SUCCESS, "", 0);
    s = clquery_device_str(&api, DEV, CL_DEVICE_EXTENSIONS, &err);
    assert_string_equal(s, "");
    assert_int_equal(fake.calls, 1);
    free(s);

    /* refused, and too long: NULL with the reason */
    fake_reset();
    fake_add(CL_DEVICE_NAME, CL_INVALID_DEVICE, NULL, 0);
    assert_null(clquery_device_str(&api, DEV, CL_DEVICE_NAME, &err));
    assert_int_equal(err, CL_INVALID_DEVICE);
    fake_reset();
    fake_add(CL_DEVICE_NAME, CL_SUCCESS, "x", (size_t)CLQUERY_STR_MAX + 1);
    assert_null(clquery_device_str(&api, DEV, CL_DEVICE_NAME, &err));
    assert_int_equal(err, CL_INVALID_VALUE);
    assert_int_equal(fake.calls, 1); /* the value itself is never asked for */
}

/* ---- numbers ---- */

static void test_numbers(void **state)
{
    (void)state;
    struct clapi api = fake_api();
    uint64_t v = 7;
    cl_uint u = 1500;
    cl_ulong ul = 0x123456789ull;
    cl_device_type t = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT;

    fake_reset();
    fake_add(CL_DEVICE_MAX_CLOCK_FREQUENCY, CL_SUCCESS, &u, sizeof(u));
    fake_add(CL_DEVICE_GLOBAL_MEM_SIZE, CL_SUCCESS, &ul, sizeof(ul));
    fake_add(CL_DEVICE_TYPE, CL_SUCCESS, &t, sizeof(t));
    assert_int_equal(clquery_device_uint(&api, DEV, CL_DEVICE_MAX_CLOCK_FREQUENCY, 4, &v), CL_SUCCESS);
    assert_int_equal(v, 1500);
    assert_int_equal(clquery_device_uint(&api, DEV, CL_DEVICE_GLOBAL_MEM_SIZE, 8, &v), CL_SUCCESS);
    assert_true(v == 0x123456789ull);
    assert_true(clquery_device_uint_or0(&api, DEV, CL_DEVICE_TYPE, sizeof(t)) == t);

    /* a 4-byte value asked as 8 bytes: the driver says 4, the upper bytes stay 0 */
    assert_int_equal(clquery_device_uint(&api, DEV, CL_DEVICE_MAX_CLOCK_FREQUENCY, 8, &v), CL_SUCCESS);
    assert_int_equal(v, 1500);
    /* an 8-byte value asked in 4 bytes is refused by the driver: 0 */
    assert_int_equal(clquery_device_uint(&api, DEV, CL_DEVICE_GLOBAL_MEM_SIZE, 4, &v), CL_INVALID_VALUE);
    assert_int_equal(v, 0);
    /* sizes that are no integer, and unknown queries */
    assert_int_equal(clquery_device_uint(&api, DEV, CL_DEVICE_TYPE, 3, &v), CL_INVALID_VALUE);
    assert_int_equal(clquery_device_uint(&api, DEV, CL_DEVICE_TYPE, 16, &v), CL_INVALID_VALUE);
    assert_int_equal(clquery_device_uint_or0(&api, DEV, CL_DEVICE_VENDOR_ID, 4), 0);

    /* a driver that claims to have written more than it had room for is not believed */
    fake_reset();
    fake_add(CL_DEVICE_MAX_COMPUTE_UNITS, CL_SUCCESS, &u, sizeof(u));
    fake.a[0].written = 64;
    assert_int_equal(clquery_device_uint(&api, DEV, CL_DEVICE_MAX_COMPUTE_UNITS, 4, &v), CL_INVALID_VALUE);
    assert_int_equal(v, 0);
}

/* ---- extensions ---- */

static void test_has_ext(void **state)
{
    (void)state;
    const char *exts = "cl_khr_fp64  cl_khr_icd\tcl_nv_device_attribute_query cl_khr_fp16_extra ";
    assert_true(clquery_has_ext(exts, "cl_khr_fp64"));
    assert_true(clquery_has_ext(exts, "cl_khr_icd"));
    assert_true(clquery_has_ext(exts, "cl_nv_device_attribute_query"));
    assert_false(clquery_has_ext(exts, "cl_khr_fp16")); /* only a longer name has it as a prefix */
    assert_false(clquery_has_ext(exts, "cl_khr_fp"));
    assert_false(clquery_has_ext(exts, "khr_fp64"));
    assert_false(clquery_has_ext("cl_khr_fp64_extra", "cl_khr_fp64"));
    assert_false(clquery_has_ext(NULL, "cl_khr_fp64"));
    assert_false(clquery_has_ext(exts, ""));
    assert_false(clquery_has_ext(exts, NULL));
    assert_true(clquery_has_ext("cl_khr_fp16_extra cl_khr_fp16", "cl_khr_fp16")); /* past a longer one */
}

/* ---- PCI address ---- */

static void test_pci_format(void **state)
{
    (void)state;
    char buf[CLQUERY_PCI_LEN];
    struct clquery_pci_raw r;

    memset(&r, 0, sizeof(r));
    assert_int_equal(clquery_pci_format(&r, buf), CLQUERY_PCI_NONE);
    assert_string_equal(buf, "");
    assert_null(clquery_pci_source_name(CLQUERY_PCI_NONE));

    r = (struct clquery_pci_raw){.have_khr = true, .khr_domain = 0x10000, .khr_bus = 0xc1, .khr_device = 0x1f,
                                 .khr_function = 7, .have_nv = true, .nv_bus = 1};
    assert_int_equal(clquery_pci_format(&r, buf), CLQUERY_PCI_KHR);
    assert_string_equal(buf, "10000:c1:1f.7");
    assert_string_equal(clquery_pci_source_name(CLQUERY_PCI_KHR), "cl_khr_pci_bus_info");

    /* KHR out of range: the next source answers */
    r.khr_device = 32;
    r.have_amd = true;
    r.amd_bus = 0x83;
    r.amd_function = 1;
    assert_int_equal(clquery_pci_format(&r, buf), CLQUERY_PCI_AMD);
    assert_string_equal(buf, "0000:83:00.1");
    assert_string_equal(clquery_pci_source_name(CLQUERY_PCI_AMD), "amd_topology");

    /* NVIDIA: slot = device << 3 | function; the domain when answered and in range */
    r = (struct clquery_pci_raw){.have_nv = true, .nv_bus = 0x41, .nv_slot = 11};
    assert_int_equal(clquery_pci_format(&r, buf), CLQUERY_PCI_NV);
    assert_string_equal(buf, "0000:41:01.3");
    r.have_nv_domain = true;
    r.nv_domain = 2;
    assert_int_equal(clquery_pci_format(&r, buf), CLQUERY_PCI_NV);
    assert_string_equal(buf, "0002:41:01.3");
    r.nv_domain = -1;
    assert_int_equal(clquery_pci_format(&r, buf), CLQUERY_PCI_NV);
    assert_string_equal(buf, "0000:41:01.3");
    assert_string_equal(clquery_pci_source_name(CLQUERY_PCI_NV), "nvidia_attribute_query");

    /* the widest answer still fits the buffer */
    r = (struct clquery_pci_raw){.have_khr = true, .khr_domain = 0xffffffffLL, .khr_bus = 0xff, .khr_device = 0x1f,
                                 .khr_function = 7};
    assert_int_equal(clquery_pci_format(&r, buf), CLQUERY_PCI_KHR);
    assert_string_equal(buf, "ffffffff:ff:1f.7");
}

static void test_device_pci_khr(void **state)
{
    (void)state;
    struct clapi api = fake_api();
    char buf[CLQUERY_PCI_LEN];
    cl_device_pci_bus_info_khr info = {0, 3, 0, 0};

    fake_reset();
    fake_add(CL_DEVICE_PCI_BUS_INFO_KHR, CL_SUCCESS, &info, sizeof(info));
    /* not listed: not asked */
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_khr_fp64", buf), CLQUERY_PCI_NONE);
    assert_int_equal(fake.calls, 0);
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_khr_pci_bus_info cl_amd_device_attribute_query", buf),
                     CLQUERY_PCI_KHR);
    assert_string_equal(buf, "0000:03:00.0");
    assert_int_equal(fake.calls, 1); /* answered: AMD's query is not asked */

    /* a short answer is no address */
    fake_reset();
    fake_add(CL_DEVICE_PCI_BUS_INFO_KHR, CL_SUCCESS, &info, sizeof(info));
    fake.a[0].written = 8;
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_khr_pci_bus_info", buf), CLQUERY_PCI_NONE);
}

/* The bug behind issue 13: a device without cl_khr_pci_bus_info still has an address. */
static void test_device_pci_vendor_queries(void **state)
{
    (void)state;
    struct clapi api = fake_api();
    char buf[CLQUERY_PCI_LEN];
    unsigned char topo[24] = {0};
    cl_uint one = CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
    memcpy(topo, &one, sizeof(one));
    topo[21] = 0xc3; /* a bus above 127: read as unsigned */
    topo[22] = 0;
    topo[23] = 0;

    fake_reset();
    fake_add(CL_DEVICE_PCI_BUS_INFO_KHR, CL_INVALID_VALUE, NULL, 0);
    fake_add(CL_DEVICE_TOPOLOGY_AMD, CL_SUCCESS, topo, sizeof(topo));
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_khr_pci_bus_info cl_amd_device_attribute_query", buf),
                     CLQUERY_PCI_AMD);
    assert_string_equal(buf, "0000:c3:00.0");

    /* a topology that is not PCIe, or of the wrong size, is no address */
    topo[0] = 2;
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_amd_device_attribute_query", buf), CLQUERY_PCI_NONE);
    topo[0] = 1;
    fake.a[1].written = 20;
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_amd_device_attribute_query", buf), CLQUERY_PCI_NONE);

    cl_uint bus = 0x65, slot = (2 << 3) | 1, domain = 1;
    fake_reset();
    fake_add(CLQUERY_PCI_BUS_ID_NV, CL_SUCCESS, &bus, sizeof(bus));
    fake_add(CLQUERY_PCI_SLOT_ID_NV, CL_SUCCESS, &slot, sizeof(slot));
    fake_add(CLQUERY_PCI_DOMAIN_ID_NV, CL_INVALID_VALUE, NULL, 0); /* a driver before CUDA 10.2 */
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_nv_device_attribute_query", buf), CLQUERY_PCI_NV);
    assert_string_equal(buf, "0000:65:02.1");
    fake.a[2] = (struct fake_answer){CLQUERY_PCI_DOMAIN_ID_NV, CL_SUCCESS, &domain, sizeof(domain), 0};
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_nv_device_attribute_query", buf), CLQUERY_PCI_NV);
    assert_string_equal(buf, "0001:65:02.1");
    /* the bus without the slot is no address */
    fake.a[1].err = CL_INVALID_VALUE;
    assert_int_equal(clquery_device_pci(&api, DEV, "cl_nv_device_attribute_query", buf), CLQUERY_PCI_NONE);
    /* and without the extension nothing is asked */
    fake.calls = 0;
    assert_int_equal(clquery_device_pci(&api, DEV, NULL, buf), CLQUERY_PCI_NONE);
    assert_int_equal(fake.calls, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enumeration),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_has_ext),
        cmocka_unit_test(test_pci_format),
        cmocka_unit_test(test_device_pci_khr),
        cmocka_unit_test(test_device_pci_vendor_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
