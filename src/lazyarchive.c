/* lazyarchive.c: the libarchive functions of snapshots, loaded at run time (gpucheckup never links -larchive). */
#include "lazyarchive.h"

#include "lazylib.h"

struct lazyarchive_api lazyarchive;

static const struct dlsym_entry lazyarchive_syms[] = {
#define LAZYARCHIVE_ROW(name) LAZYLIB_ROW(struct lazyarchive_api, name)
    LAZYARCHIVE_FUNCTIONS(LAZYARCHIVE_ROW)
#undef LAZYARCHIVE_ROW
};

static struct lazylib lazyarchive_lib = LAZYLIB_INIT(LAZYARCHIVE_SONAME, LAZYARCHIVE_ENV,
                                                     "reading or writing a snapshot", lazyarchive_syms, &lazyarchive);

int lazyarchive_load(const char **err)
{
    return lazylib_load(&lazyarchive_lib, err);
}
