/* dlsyms.h: resolve a table of symbols from a dlopen()ed vendor library: required vs optional, with fallbacks. */
#ifndef GPUCHECKUP_DLSYMS_H
#define GPUCHECKUP_DLSYMS_H

#include <stdbool.h>
#include <stddef.h>

/* One function a caller wants from a library. The resolved address is stored at OFFSET bytes into the
 * caller's table struct (a struct of function pointers: use offsetof). NAME is tried first, then each
 * of FALLBACKS (NULL-terminated, may be NULL) in order: list the newest versioned name first
 * ("cuDeviceTotalMem_v2") and older ones after. */
struct dlsym_entry {
    const char *name;
    bool required;                  /* missing: dlsyms_load fails */
    const char *const *fallbacks;   /* other names for the same function, tried in order; may be NULL */
    size_t offset;                  /* where the pointer goes in the caller's table */
};

/* Resolve every entry of TABLE (N rows) in HANDLE into the struct at OUT. Optional symbols that are
 * missing are left NULL. Returns 0 when every required symbol was found; otherwise -1 with *MISSING
 * (when MISSING is not NULL) pointing at the first required name that is missing (a string of TABLE,
 * not to be freed). Never calls dlerror's callers' state into question: dlerror() is cleared first. */
int dlsyms_load(void *handle, const struct dlsym_entry *table, size_t n, void *out, const char **missing);

/* The name under which entry E resolved in HANDLE (E->name or a fallback), or NULL if none did. */
const char *dlsyms_resolved_name(void *handle, const struct dlsym_entry *e);

#endif
