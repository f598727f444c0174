/* test_levelzero_abi.c: the levelzero probe's own Level Zero declarations against the installed ze_api.h (libze-dev). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <level_zero/ze_api.h>

#include "levelzero_internal.h"

#define SAME(ours, theirs, member, m2) assert_int_equal(offsetof(ours, member), offsetof(theirs, m2))

static void test_device_properties(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct lz_device_properties), sizeof(ze_device_properties_t));
    SAME(struct lz_device_properties, ze_device_properties_t, type, type);
    SAME(struct lz_device_properties, ze_device_properties_t, vendorId, vendorId);
    SAME(struct lz_device_properties, ze_device_properties_t, flags, flags);
    SAME(struct lz_device_properties, ze_device_properties_t, maxMemAllocSize, maxMemAllocSize);
    SAME(struct lz_device_properties, ze_device_properties_t, timerResolution, timerResolution);
    SAME(struct lz_device_properties, ze_device_properties_t, uuid, uuid);
    SAME(struct lz_device_properties, ze_device_properties_t, name, name);
    assert_int_equal(ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, 0x3);
    assert_int_equal(ZE_DEVICE_PROPERTY_FLAG_INTEGRATED, 1);
    assert_int_equal(ZE_DEVICE_TYPE_GPU, 1);
}

static void test_pci_properties(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct lz_pci_ext_properties), sizeof(ze_pci_ext_properties_t));
    SAME(struct lz_pci_ext_properties, ze_pci_ext_properties_t, domain, address.domain);
    SAME(struct lz_pci_ext_properties, ze_pci_ext_properties_t, function, address.function);
    SAME(struct lz_pci_ext_properties, ze_pci_ext_properties_t, gen, maxSpeed.genVersion);
    SAME(struct lz_pci_ext_properties, ze_pci_ext_properties_t, max_bandwidth, maxSpeed.maxBandwidth);
    assert_int_equal(ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES, 0x10008);
}

static void test_result_names(void **state)
{
    (void)state;
    assert_string_equal(levelzero_result_name(ZE_RESULT_ERROR_UNINITIALIZED), "ZE_RESULT_ERROR_UNINITIALIZED");
    assert_string_equal(levelzero_result_name(ZE_RESULT_ERROR_DEVICE_LOST), "ZE_RESULT_ERROR_DEVICE_LOST");
    assert_string_equal(levelzero_result_name(ZE_RESULT_ERROR_UNSUPPORTED_VERSION), "ZE_RESULT_ERROR_UNSUPPORTED_VERSION");
    assert_null(levelzero_result_name(0x12345));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_properties),
        cmocka_unit_test(test_pci_properties),
        cmocka_unit_test(test_result_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
