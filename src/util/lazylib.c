/* lazylib.c: a library only some commands need (libxml2, libarchive, cairo), dlopen()ed the first time one asks. */
#include "lazylib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>


/* Open L's library and resolve its table; on failure the message goes to L->error. */
static void lazylib_open(struct lazylib *l)
{
    const char *env = l->env ? getenv(l->env) : NULL;
    const char *name = env && *env ? env : l->soname;
    /* the variable is named when it chose the file: the default was not tried */
    char lib[512];
    snprintf(lib, sizeof(lib), "%s%s%s%s", name, name == env ? " (" : "", name == env ? l->env : "",
             name == env ? ")" : "");
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    /* dlerror's text lives in the thread's buffer until its next dl call: copied at once */
    const char *e = h ? NULL : dlerror();
    if (!h)
        snprintf(l->error, sizeof(l->error), "%s needs %s, which cannot be loaded: %s", l->what, lib,
                 e ? e : "unknown error");
    const char *missing = NULL;
    if (h && dlsyms_load(h, l->syms, l->n_syms, l->table, &missing) < 0) {
        (void)dlerror(); /* ask again, for dlerror's words about it ("undefined symbol: NAME") */
        e = dlsym(h, missing) ? NULL : dlerror();
        snprintf(l->error, sizeof(l->error), "%s needs %s, which has no %s: %s", l->what, lib, missing,
                 e ? e : "its address is NULL");
        dlclose(h);
        h = NULL;
    }
    l->ok = h != NULL;
}

int lazylib_load(struct lazylib *l, const char **err)
{
    pthread_mutex_lock(&l->lock);
    if (!l->tried) {
        lazylib_open(l);
        l->tried = true;
    }
    bool ok = l->ok;
    pthread_mutex_unlock(&l->lock);
    if (!ok && err)
        *err = l->error;
    return ok ? 0 : -1;
}
