/* dlsyms.c: resolve a table of symbols from a dlopen()ed vendor library: required vs optional, with fallbacks. */
#include <dlfcn.h>
#include <string.h>

#include "dlsyms.h"

/* The address of NAME in HANDLE, or NULL (a symbol whose value is NULL counts as missing). */
static void *dlsyms_one(void *handle, const char *name)
{
    (void)dlerror();
    void *p = dlsym(handle, name);
    (void)dlerror();
    return p;
}

const char *dlsyms_resolved_name(void *handle, const struct dlsym_entry *e)
{
    if (!handle || !e || !e->name)
        return NULL;
    if (dlsyms_one(handle, e->name))
        return e->name;
    for (size_t i = 0; e->fallbacks && e->fallbacks[i]; i++)
        if (dlsyms_one(handle, e->fallbacks[i]))
            return e->fallbacks[i];
    return NULL;
}

int dlsyms_load(void *handle, const struct dlsym_entry *table, size_t n, void *out, const char **missing)
{
    const char *first_missing = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name = dlsyms_resolved_name(handle, &table[i]);
        void *p = name ? dlsyms_one(handle, name) : NULL;
        /* Function and object pointers share a representation on every platform dlsym serves. */
        memcpy((char *)out + table[i].offset, &p, sizeof(p));
        if (!p && table[i].required && !first_missing)
            first_missing = table[i].name;
    }
    if (missing)
        *missing = first_missing;
    return first_missing ? -1 : 0;
}
