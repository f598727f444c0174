/* fuzz_elfdyn.c: libFuzzer target for ELF dynamic sections (src/host/elfdyn.c): DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfdyn.h"

/* S is a string of the input: some NUL-terminated run of its bytes, shorter than the reader's bound. */
static void from_input(const char *s, const uint8_t *data, size_t size)
{
    if (!s)
        return;
    size_t n = strlen(s);
    if (n >= ELFDYN_MAX_STR)
        abort();
    for (size_t i = 0; i + n < size; i++)
        if (data[i + n] == '\0' && memcmp(data + i, s, n) == 0)
            return;
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct elfdyn d;
    int rc = elfdyn_parse(data, size, &d);
    if (rc != 0 && rc != -ENOEXEC && rc != -ENOMEM)
        abort();
    if (rc == 0) {
        if (size < 52 || memcmp(data, "\177ELF", 4) != 0 || d.n_needed > ELFDYN_MAX_NEEDED)
            abort();
        for (size_t i = 0; i < d.n_needed; i++) {
            if (!d.needed[i] || !d.needed[i][0])
                abort();
            from_input(d.needed[i], data, size);
        }
        from_input(d.soname, data, size);
        from_input(d.rpath, data, size);
        from_input(d.runpath, data, size);
    }
    elfdyn_free(&d);
    if (d.needed || d.n_needed || d.soname || d.rpath || d.runpath)
        abort();
    return 0;
}
