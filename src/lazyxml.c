/* lazyxml.c: the libxml2 functions the JUnit writer uses, loaded at run time (gpucheckup never links -lxml2). */
#include "lazyxml.h"

#include "lazylib.h"

struct lazyxml_api lazyxml;

static const struct dlsym_entry lazyxml_syms[] = {
#define LAZYXML_ROW(name) LAZYLIB_ROW(struct lazyxml_api, name)
    LAZYXML_FUNCTIONS(LAZYXML_ROW)
#undef LAZYXML_ROW
};

static struct lazylib lazyxml_lib =
    LAZYLIB_INIT(LAZYXML_SONAME, LAZYXML_ENV, "--format=junit", lazyxml_syms, &lazyxml);

int lazyxml_load(const char **err)
{
    return lazylib_load(&lazyxml_lib, err);
}
