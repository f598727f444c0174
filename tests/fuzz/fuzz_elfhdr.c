/* fuzz_elfhdr.c: libFuzzer target for ELF headers (src/host/ldsearch_path.c): what a library says it is built for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldsearch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ldsearch_elf e = {.bits = -1, .big_endian = true, .machine = 0xdeadbeefu}, untouched = e;
    int rc = ldsearch_elf_parse(data, size, &e);
    if (rc != 0 && rc != 1)
        abort();
    if (rc == 0) {
        /* not an ELF header: nothing was written */
        if (memcmp(&e, &untouched, sizeof(e)) != 0)
            abort();
        return 0;
    }
    /* An ELF header: at least e_machine's 20 bytes, the magic, a known class; the values from the input. */
    if (size < 20 || memcmp(data, "\177ELF", 4) != 0 || (e.bits != 32 && e.bits != 64) || e.machine > 0xffffu)
        abort();
    if (e.bits != (data[4] == 2 ? 64 : 32) || e.big_endian != (data[5] == 2))
        abort();
    unsigned m = e.big_endian ? ((unsigned)data[18] << 8 | data[19]) : ((unsigned)data[19] << 8 | data[18]);
    if (m != e.machine)
        abort();
    /* Described in a bounded, terminated buffer, whatever the machine. */
    char small[8], big[64];
    ldsearch_elf_describe(&e, small, sizeof(small));
    ldsearch_elf_describe(&e, big, sizeof(big));
    if (strlen(small) >= sizeof(small) || strlen(big) >= sizeof(big) || !strstr(big, "-bit"))
        abort();
    return 0;
}
