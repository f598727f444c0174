/* fuzz_fatbin.c: libFuzzer target for the frameworks probe's fatbin reader (ELF section headers, .nv_fatbin containers and entries). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frameworks_fatbin.h"

struct fuzz_file {
    const uint8_t *data;
    size_t size;
    size_t reads;
};

static int fuzz_read(void *arg, uint64_t off, void *buf, size_t len)
{
    struct fuzz_file *f = arg;
    /* the reader promises to stay inside the size it was given */
    assert(off <= f->size && len <= f->size - off);
    /* headers only: never a payload-sized read */
    assert(len <= 64);
    f->reads++;
    memcpy(buf, f->data + off, len);
    return 0;
}

static void fuzz_sorted(const uint16_t *a, size_t n)
{
    assert(n <= FW_FATBIN_MAX_ARCHS);
    for (size_t i = 0; i < n; i++) {
        assert(a[i] > 0 && a[i] <= 9999);
        assert(i == 0 || a[i - 1] < a[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_file f = {data, size, 0};
    struct fw_gpu_code code;
    int rc = fw_fatbin_read(fuzz_read, &f, size, &code);
    assert(rc >= -2 && rc <= 1);
    fuzz_sorted(code.sass, code.n_sass);
    fuzz_sorted(code.ptx, code.n_ptx);
    assert(code.entries <= FW_FATBIN_MAX_ENTRIES);
    /* one .nv_fatbin section is walked: its entries lie one after another, each at least 32 bytes */
    assert(code.entries <= size / 32);
    if (rc == -1 || rc == 0)
        assert(code.n_sass == 0 && code.n_ptx == 0 && code.entries == 0);
    char buf[48];
    fw_arch_list(code.sass, code.n_sass, "sm", buf, sizeof(buf));
    assert(strlen(buf) < sizeof(buf));
    return 0;
}
