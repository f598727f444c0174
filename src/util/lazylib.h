/* lazylib.h: a library only some commands need (libxml2, libarchive, cairo), dlopen()ed the first time one asks. */
#ifndef GPUCHECKUP_LAZYLIB_H
#define GPUCHECKUP_LAZYLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "dlsyms.h"

/* Issue 17: linking these libraries cost every command ~5 ms of start-up (libarchive and cairo pull
 * in some 25 more libraries) and every fork the page tables of their mappings; only --format=junit,
 * snapshot, --root FILE.tar.gz and bench --plot use them. So the binary does not link them: each is a
 * table of function pointers (members named as the library's functions and typed from its own
 * headers, which stay a build dependency), filled by lazylib_load once per process.
 *
 * One module for the three: opening, the test override, once-only and the message are the same code;
 * each library's table (lazyxml.h, lazyarchive.h, the bench probe's bench_cairo.h) includes only its
 * own library's headers, so a file that needs libxml2 sees nothing of cairo. */

/* A library's functions are an X-macro list LIST(X, T) of X(T, name) (LAZYXML_FUNCTIONS): its table
 * is struct { LIST(LAZYLIB_MEMBER, 0) }, a member per function named and typed as the library's own
 * (from its headers), and LAZYLIB_DEFINE in one .c file makes the rest. */
#define LAZYLIB_MEMBER(type, name) __typeof__(&name) name;
/* A dlsyms row of LIST: every function is required. TYPE is the table struct. */
#define LAZYLIB_ROW(type, name) {#name, true, NULL, offsetof(type, name)},

struct lazylib {
    const char *soname;                /* "libxml2.so.2" */
    const char *env;                   /* "GPUCHECKUP_LIBXML2": another file name or path, for tests */
    const char *what;                  /* what needs it, the message's subject: "--format=junit" */
    const struct dlsym_entry *syms;    /* every function, LAZYLIB_ROW rows */
    size_t n_syms;
    void *table;                       /* the struct the rows point into */
    /* state, set by lazylib_load only */
    pthread_mutex_t lock;
    bool tried;
    bool ok;
    char error[1024];
};

/* A struct lazylib initializer (a static object's: the mutex starts unlocked). */
#define LAZYLIB_INIT(soname_, env_, what_, syms_, table_)                                                      \
    {                                                                                                          \
        .soname = (soname_), .env = (env_), .what = (what_), .syms = (syms_),                                  \
        .n_syms = sizeof(syms_) / sizeof((syms_)[0]), .table = (table_), .lock = PTHREAD_MUTEX_INITIALIZER,    \
    }

/* Load L's library and resolve its table, the first time any thread calls this; later calls return
 * the first answer. Returns 0 (the table is filled, for good: the library is never closed), or -1
 * with *ERR (when not NULL) pointing at a message naming the library, what it is for and what
 * dlerror() said (L's buffer, valid for the process). Thread-safe. The dlopen runs inside the fork
 * guard (isolate.h): no driver child is forked while the loader's lists are half updated. */
int lazylib_load(struct lazylib *l, const char **err);

/* The table TABLE (of type TYPE) of the functions in LIST, and LOADFN, its lazylib_load: library
 * SONAME or the file the environment variable ENV names, WHAT the subject of its message. */
#define LAZYLIB_DEFINE(type, table, list, loadfn, soname, env, what)                                            \
    type table;                                                                                                 \
    static const struct dlsym_entry loadfn##_syms[] = {list(LAZYLIB_ROW, type)};                                \
    static struct lazylib loadfn##_lib = LAZYLIB_INIT(soname, env, what, loadfn##_syms, &table);               \
    int loadfn(const char **err)                                                                                \
    {                                                                                                           \
        return lazylib_load(&loadfn##_lib, err);                                                                \
    }

#endif
