/* lazyarchive.c: the libarchive functions of snapshots, loaded at run time (gpucheckup never links -larchive). */
#include "lazyarchive.h"

LAZYLIB_DEFINE(struct lazyarchive_api, lazyarchive, LAZYARCHIVE_FUNCTIONS, lazyarchive_load, LAZYARCHIVE_SONAME,
               LAZYARCHIVE_ENV, "reading or writing a snapshot")
