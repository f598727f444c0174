/* lazyxml.h: the libxml2 functions the JUnit writer uses, loaded at run time (gpucheckup never links -lxml2). */
#ifndef GPUCHECKUP_LAZYXML_H
#define GPUCHECKUP_LAZYXML_H

#include <libxml/xmlwriter.h>

#include "lazylib.h"

/* The library's SONAME (objdump -p /usr/lib/x86_64-linux-gnu/libxml2.so on Debian 12), and the
 * environment variable that names another file instead, for tests. */
#define LAZYXML_SONAME "libxml2.so.2"
#define LAZYXML_ENV "GPUCHECKUP_LIBXML2"

#define LAZYXML_FUNCTIONS(X, T)                     \
    X(T, xmlBufferContent)                          \
    X(T, xmlBufferCreate)                           \
    X(T, xmlBufferFree)                             \
    X(T, xmlBufferLength)                           \
    X(T, xmlFreeTextWriter)                         \
    X(T, xmlNewTextWriterMemory)                    \
    X(T, xmlTextWriterEndDocument)                  \
    X(T, xmlTextWriterEndElement)                   \
    X(T, xmlTextWriterSetIndent)                    \
    X(T, xmlTextWriterSetIndentString)              \
    X(T, xmlTextWriterStartDocument)                \
    X(T, xmlTextWriterStartElement)                 \
    X(T, xmlTextWriterWriteAttribute)               \
    X(T, xmlTextWriterWriteElement)                 \
    X(T, xmlTextWriterWriteFormatAttribute)         \
    X(T, xmlTextWriterWriteString)

struct lazyxml_api {
    LAZYXML_FUNCTIONS(LAZYLIB_MEMBER, 0)
};

/* The table: filled by lazyxml_load, read only after it returned 0 (in the same thread, or one that
 * learnt so from it). */
extern struct lazyxml_api lazyxml;

/* Load libxml2 (once per process; thread-safe). 0, or -1 with *ERR naming the library and dlerror's
 * words (a static string). */
int lazyxml_load(const char **err);

#endif
