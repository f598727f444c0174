/* fuzz_cudadriver.c: libFuzzer target for what the cuda probe parses from the driver: file names and PCI bus ids. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = strndup((const char *)data, size);
    if (!s)
        return 0;
    /* A version comes only from "libcuda.so.<digits and dots>", is a substring of the name, and has
     * at least one dot, none first, last or doubled. */
    char *v = cuda_driver_file_version(s);
    if (v) {
        size_t n = strlen(v);
        if (strncmp(s, "libcuda.so.", 11) != 0 || strcmp(s + 11, v) != 0 || n == 0 || v[0] == '.' ||
            v[n - 1] == '.' || !strchr(v, '.') || strstr(v, ".."))
            abort();
        for (size_t i = 0; i < n; i++)
            if (!isdigit((unsigned char)v[i]) && v[i] != '.')
                abort();
        free(v);
    }
    /* A normalised bus id is always domain:bus:device.function in lowercase hex, and parses back. */
    char out[24];
    memset(out, 'x', sizeof(out));
    if (cuda_driver_normalize_busid(s, out, sizeof(out)) == 0) {
        unsigned d, b, dev, fn;
        char tail;
        if (!memchr(out, '\0', sizeof(out)) || sscanf(out, "%x:%2x:%2x.%1x%c", &d, &b, &dev, &fn, &tail) != 4 ||
            strlen(out) < 12 || dev > 0x1f || fn > 7)
            abort();
        for (const char *p = out; *p; p++)
            if (isupper((unsigned char)*p))
                abort();
    }
    free(s);
    return 0;
}
