/* fuzz_cli.c: libFuzzer target for option parsing: the input is argv, NUL-separated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[66];
    int argc = 0;
    argv[argc++] = "gpucheckup";
    for (size_t i = 0; i <= size && argc < 64;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    struct cli_options o;
    char err[512];
    (void)cli_wants_json(argc, argv);
    if (cli_parse(argc, argv, &o, err, sizeof(err)) < 0) {
        /* every failure says why, and the why is not cut off by a long value */
        if (err[0] == '\0' || strlen(err) >= sizeof(err) - 1)
            abort();
    }
    cli_options_free(&o);
    free(buf);
    return 0;
}
