/* lazyxml.c: the libxml2 functions the JUnit writer uses, loaded at run time (gpucheckup never links -lxml2). */
#include "lazyxml.h"

LAZYLIB_DEFINE(struct lazyxml_api, lazyxml, LAZYXML_FUNCTIONS, lazyxml_load, LAZYXML_SONAME, LAZYXML_ENV,
               "--format=junit")
