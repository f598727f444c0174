/* fuzz_vkmanifest.c: libFuzzer target for Vulkan driver manifests (ICD JSON), read as the Vulkan loader reads them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "vulkan_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    /* A copy of exactly SIZE bytes, so ASan sees any read past the end. */
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct vulkan_manifest_info m;
    char *why = NULL;
    int rc = vulkan_manifest_parse(copy, size, &m, &why);
    if (rc == 0) {
        /* Accepted: the members the loader needs, each sanitised, the library never empty. */
        if (why || !m.file_format_version || !m.library_path || !m.library_path[0])
            abort();
        fuzz_require_sanitized(m.file_format_version);
        fuzz_require_sanitized(m.library_path);
        if (m.api_version)
            fuzz_require_sanitized(m.api_version);
        /* A JSON text is at least {"ICD":{"library_path":"x"},"file_format_version":""}. */
        if (size < 48)
            abort();
    } else {
        /* Refused: a reason for people, and nothing half filled. */
        if (rc != -1 || !why || !why[0] || m.file_format_version || m.library_path || m.api_version)
            abort();
        fuzz_require_sanitized(why);
    }
    free(why);
    vulkan_manifest_info_free(&m);
    free(copy);
    return 0;
}
