/* ldsearch_internal.h: what the ldsearch*.c files share and nothing else sees. */
#ifndef GPUCHECKUP_LDSEARCH_INTERNAL_H
#define GPUCHECKUP_LDSEARCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "hostfs.h"

#define LDSEARCH_MAX_LINKS 40          /* symlinks followed per path, like the kernel */
#define LDSEARCH_MAX_SCAN_ENTRIES 4096 /* directory entries looked at per directory */

/* Append a copy of S to LIST unless it is there already; -ENOMEM on failure. */
int ldsearch_list_add(char ***list, size_t *n, const char *s);
/* True when PATH exists on FS (following links). */
bool ldsearch_exists(const struct hostfs *fs, const char *path);

#endif
