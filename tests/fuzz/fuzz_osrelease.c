/* fuzz_osrelease.c: libFuzzer target for the /etc/os-release parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = strndup((const char *)data, size);
    if (!s)
        return 0;
    free(host_os_release(s));
    free(s);
    return 0;
}
