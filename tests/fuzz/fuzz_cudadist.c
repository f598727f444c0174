/* fuzz_cudadist.c: libFuzzer target for what the cuda probe reads from NVIDIA wheels: dist-info names, RECORD lines, versions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_libs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    /* The RECORD exactly as given (not NUL-terminated: only LEN bytes may be read). */
    uint8_t *rec = malloc(size ? size : 1);
    if (!rec)
        return 0;
    memcpy(rec, data, size);
    (void)cuda_dist_record_lists((const char *)rec, size, "libcudnn.so.9", 129240);
    (void)cuda_dist_record_lists((const char *)rec, size, "x", 0);
    free(rec);
    char *s = strndup((const char *)data, size);
    if (!s)
        return 0;
    /* A dist-info name parses into a name that is a prefix of the input and a version of digits and dots,
     * at least one dot, none last. */
    char *dist = NULL, *version = NULL;
    if (cuda_dist_dirname(s, &dist, &version) == 0) {
        size_t dl = strlen(dist), vl = strlen(version);
        if (dl == 0 || strncmp(s, dist, dl) != 0 || s[dl] != '-' || vl == 0 || version[vl - 1] == '.' ||
            !strchr(version, '.') || strspn(version, "0123456789.") != vl)
            abort();
        int ma, mi, pa;
        if (cuda_libs_parse_version(version, &ma, &mi, &pa) == 0 && (ma < 0 || mi < 0))
            abort();
        free(dist);
        free(version);
    } else if (dist || version) {
        abort();
    }
    int cu = cuda_dist_cuda_major(s);
    if (cu < -1 || cu > 999)
        abort();
    free(s);
    return 0;
}
