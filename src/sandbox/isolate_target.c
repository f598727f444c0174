/* isolate_target.c: the run's target (--pid): its environment for the whole run, its credentials for every child. */
#include "isolate.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strutil.h"

/* Set once, before the run's threads and children start, never changed while they run (children read it
 * after fork without a lock). */
static struct {
    bool creds;               /* children take UID, GIDS */
    uid_t uid;
    gid_t gids[64];
    size_t n;
    bool env;                 /* the environment was replaced */
    char **own;               /* gpucheckup's own environment as it was (NULL-terminated, heap) */
    char **taken;             /* the strings put into the environment for the run (heap; kept reachable, for
                                 the environment may drop them: leak checkers must not see them lost) */
    size_t n_taken;
} isolate_target;

extern char **environ;

/* The tool's own knobs stay: a target never chooses what gpucheckup itself loads (GPUCHECKUP_LIBOPENCL...). */
static bool isolate_target_own_var(const char *item)
{
    return strncmp(item, "GPUCHECKUP_", 11) == 0;
}

int isolate_target_set_env(const char *env, size_t len)
{
    if (isolate_target.env)
        return -EALREADY;
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **own = calloc(n + 1, sizeof(char *));
    if (!own)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(own[i] = str_dup(environ[i]))) {
            for (size_t k = 0; k < i; k++)
                free(own[k]);
            free(own);
            return -ENOMEM;
        }
    size_t items = 0;
    for (size_t i = 0; i < len; i++)
        items += env[i] == '\0';
    char **taken = calloc(items + 1, sizeof(char *));
    if (!taken) {
        for (size_t k = 0; k < n; k++)
            free(own[k]);
        free(own);
        return -ENOMEM;
    }
    size_t nt = 0;
    clearenv();
    for (size_t i = 0; i < len && nt <= items;) {
        const char *item = env + i;
        size_t k = strnlen(item, len - i);
        i += k + 1;
        const char *eq = memchr(item, '=', k);
        char *copy = eq && eq != item && !isolate_target_own_var(item) ? str_copy_n(item, k) : NULL;
        if (copy && putenv(copy) == 0) /* the environment keeps it for the rest of the run */
            taken[nt++] = copy;
        else
            free(copy);
    }
    for (size_t i = 0; i < n; i++)
        if (isolate_target_own_var(own[i]))
            putenv(own[i]); /* our own knob, the saved string itself */
    isolate_target.taken = taken;
    isolate_target.n_taken = nt;
    isolate_target.own = own;
    isolate_target.env = true;
    return 0;
}

void isolate_target_restore_env(void)
{
    if (!isolate_target.env)
        return;
    clearenv();
    for (char **e = isolate_target.own; *e; e++)
        putenv(*e); /* the saved strings stay allocated for the rest of the process */
    isolate_target.env = false;
}

const char *isolate_target_own_getenv(const char *name)
{
    if (!isolate_target.env || !isolate_target.own)
        return getenv(name);
    size_t n = strlen(name);
    for (char **e = isolate_target.own; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

char *const *isolate_target_own_environ(void)
{
    return isolate_target.env && isolate_target.own ? isolate_target.own : environ;
}

bool isolate_target_env_active(void)
{
    return isolate_target.env;
}

int isolate_target_set_creds(long uid, const gid_t *gids, size_t n)
{
    if (geteuid() != 0 || uid <= 0 || n == 0)
        return -EPERM; /* only root gives up anything; never more than either side has */
    if (n > sizeof(isolate_target.gids) / sizeof(isolate_target.gids[0]))
        n = sizeof(isolate_target.gids) / sizeof(isolate_target.gids[0]);
    memcpy(isolate_target.gids, gids, n * sizeof(gid_t));
    isolate_target.n = n;
    isolate_target.uid = (uid_t)uid;
    isolate_target.creds = true;
    return 0;
}

bool isolate_target_creds_active(void)
{
    return isolate_target.creds;
}

int isolate_target_apply(void)
{
    if (!isolate_target.creds)
        return 0;
    if (setgroups(isolate_target.n, isolate_target.gids) != 0 || setgid(isolate_target.gids[0]) != 0 ||
        setuid(isolate_target.uid) != 0)
        return -errno;
    /* setuid from root to another uid drops every capability; make sure nothing is left to regain */
    if (setuid(0) == 0 || getuid() != isolate_target.uid || geteuid() != isolate_target.uid)
        return -EPERM;
    return 0;
}
