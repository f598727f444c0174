/* hang_on_load.c: fakes for the timeout-budget test: libraries whose loading never returns. */
#include <stdlib.h>
#include <unistd.h>

/* HANG_ALWAYS: the constructor never returns (a libOpenCL.so copy that deadlocks when loaded).
 * Otherwise (linked into a working fake ICD): loading works alone, but the second such library
 * loaded into one process never returns, so each driver works alone and any two hang together. */
__attribute__((constructor)) static void hang_on_load(void)
{
#ifndef HANG_ALWAYS
    if (!getenv("GC_REL_TOGETHER_LOADED")) {
        setenv("GC_REL_TOGETHER_LOADED", "1", 1);
        return;
    }
#endif
    for (;;)
        pause();
}
