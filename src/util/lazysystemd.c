/* lazysystemd.c: the libsystemd functions of the journal fallback and the unit manager's view, loaded at run time (gpucheckup never links -lsystemd). */
#include "lazysystemd.h"

LAZYLIB_DEFINE(struct lazysystemd_api, lazysystemd, LAZYSYSTEMD_FUNCTIONS, lazysystemd_load, LAZYSYSTEMD_SONAME,
               LAZYSYSTEMD_ENV, "reading the journal or asking systemd's manager")
