/* lazysystemd.c: the libsystemd functions of the journal fallback, loaded at run time (gpucheckup never links -lsystemd). */
#include "lazysystemd.h"

LAZYLIB_DEFINE(struct lazysystemd_api, lazysystemd, LAZYSYSTEMD_FUNCTIONS, lazysystemd_load, LAZYSYSTEMD_SONAME,
               LAZYSYSTEMD_ENV, "reading the kernel log from the journal")
