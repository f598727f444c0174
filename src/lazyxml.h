/* lazyxml.h: the libxml2 functions the JUnit writer uses, loaded at run time (gpucheckup never links -lxml2). */
#ifndef GPUCHECKUP_LAZYXML_H
#define GPUCHECKUP_LAZYXML_H

#include <libxml/xmlwriter.h>

/* The library's SONAME (objdump -p /usr/lib/x86_64-linux-gnu/libxml2.so on Debian 12), and the
 * environment variable that names another file instead, for tests. */
#define LAZYXML_SONAME "libxml2.so.2"
#define LAZYXML_ENV "GPUCHECKUP_LIBXML2"

#define LAZYXML_FUNCTIONS(X)                  \
    X(xmlBufferContent)                       \
    X(xmlBufferCreate)                        \
    X(xmlBufferFree)                          \
    X(xmlBufferLength)                        \
    X(xmlFreeTextWriter)                      \
    X(xmlNewTextWriterMemory)                 \
    X(xmlTextWriterEndDocument)               \
    X(xmlTextWriterEndElement)                \
    X(xmlTextWriterSetIndent)                 \
    X(xmlTextWriterSetIndentString)           \
    X(xmlTextWriterStartDocument)             \
    X(xmlTextWriterStartElement)              \
    X(xmlTextWriterWriteAttribute)            \
    X(xmlTextWriterWriteElement)              \
    X(xmlTextWriterWriteFormatAttribute)      \
    X(xmlTextWriterWriteString)

struct lazyxml_api {
#define LAZYXML_MEMBER(name) __typeof__(&name) name;
    LAZYXML_FUNCTIONS(LAZYXML_MEMBER)
#undef LAZYXML_MEMBER
};

/* The table: filled by lazyxml_load, read only after it returned 0 (in the same thread, or one that
 * learnt so from it). */
extern struct lazyxml_api lazyxml;

/* Load libxml2 (once per process; thread-safe). 0, or -1 with *ERR naming the library and dlerror's
 * words (a static string). */
int lazyxml_load(const char **err);

#endif
