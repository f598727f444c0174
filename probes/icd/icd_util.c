/* icd_util.c: the small helpers every part of the icd probe shares (environment, names, JSON members, stage pages, entries). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "icd_impl.h"
#include "isolate.h"
#include "jsonget.h"
#include "strutil.h"

/* Under a snapshot: the environment its run saw (the icd section's "env"), not this process's, so
 * the .icd files are looked for where that run looked. Set only while icd_run runs. */
static json_object *icd_replay_env;

void icd_env_replay(json_object *env)
{
    icd_replay_env = env;
}

const char *icd_env(const char *name)
{
    if (icd_replay_env)
        return json_object_get_string(json_object_object_get(icd_replay_env, name));
    const char *v = getenv(name);
    return v;
}

char *icd_sanitized(const char *s)
{
    return s ? str_sanitize(str_dup(s)) : NULL;
}

/* PATH made absolute against the current directory (hostfs wants absolute paths). Caller frees. */
char *icd_absolute(const struct icd_state *st, const char *path)
{
    if (path[0] == '/' || !st->search.cwd)
        return str_dup(path);
    return str_printf("%s/%s", st->search.cwd, path);
}

const char *icd_basename(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p;
}

/* The name a finding is about: the .icd file, or the library for an environment entry. */
const char *icd_subject(const struct icd_entry *e)
{
    return e->file ? e->file : e->library ? e->library : e->source;
}

/* The probe's names for jsonget's readers (its many callers stay as they are). */
const char *icd_jstr(json_object *o, const char *key)
{
    return jsonget_str(o, key);
}

bool icd_jbool(json_object *o, const char *key, bool dflt)
{
    int t = jsonget_tri(o, key);
    return t < 0 ? dflt : t == 1;
}

/* Integer KEY of O into *OUT; false when absent or not an integer. */
bool icd_jint(json_object *o, const char *key, int64_t *out)
{
    return jsonget_int_ex(o, key, out);
}

bool icd_is_ocl_semantics(enum icd_kind k)
{
    /* No loader: read files as Debian's default loader (ocl-icd) would. */
    return k == ICD_KIND_OCL_ICD || k == ICD_KIND_NONE;
}

/* Shared pages where children write their stage. */
volatile int *icd_stages_new(size_t n)
{
    if (n == 0)
        n = 1;
    void *p = mmap(NULL, n * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    return p;
}

void icd_stages_free(volatile int *p, size_t n)
{
    if (p)
        munmap((void *)p, (n ? n : 1) * sizeof(int));
}

void icd_entry_clear(struct icd_entry *e)
{
    free(e->file);
    free(e->library);
    free(e->found);
    free(e->resolved);
    free(e->detail);
    free(e->output);
    json_object_put(e->platforms);
}

struct icd_entry *icd_entry_new(struct icd_state *st, const char *file, const char *source)
{
    struct icd_entry *ne = realloc(st->e, (st->n + 1) * sizeof(*ne));
    if (!ne)
        return NULL;
    st->e = ne;
    struct icd_entry *e = &st->e[st->n++];
    memset(e, 0, sizeof(*e));
    e->file = str_dup(file);
    e->source = source;
    e->dup_of = -1;
    e->elapsed_ms = -1;
    e->platforms = json_object_new_array();
    return e;
}

void icd_set(struct icd_entry *e, const char *status, const char *fmt, ...)
{
    e->status = status;
    va_list ap;
    va_start(ap, fmt);
    str_set_vprintf(&e->detail, fmt, ap);
    va_end(ap);
}

/* Milliseconds as a JSON number with three decimals (null when not finite). */
json_object *icd_json_ms(double ms)
{
    if (!(ms >= 0 && ms < 1e12))
        return NULL;
    char buf[32];
    snprintf(buf, sizeof(buf), "%.3f", ms);
    return json_object_new_double_s(ms, buf);
}

/* A short description of a finished child that did not return a value. */
char *icd_child_failure(const struct isolate_result *r, int stage, double timeout_s)
{
    const char *where = icd_stage_name(stage);
    switch (r->status) {
    case ISOLATE_SIGNAL:
        return str_printf("killed by %s in %s", isolate_signal_name(r->signal), where);
    case ISOLATE_TIMEOUT:
        /* The child had what was left of the run's budget, at most --timeout. */
        return str_printf("no answer within %.1f s (in %s)", r->elapsed_ms > 0 && r->elapsed_ms / 1000.0 < timeout_s
                                                                 ? r->elapsed_ms / 1000.0 : timeout_s, where);
    case ISOLATE_EXIT:
        return str_printf("the process ended in %s (%s)", where, r->detail ? r->detail : "exit");
    case ISOLATE_BAD_OUTPUT:
        return str_printf("the driver wrote garbage into gpucheckup's result pipe in %s", where);
    default:
        return str_printf("%s", r->detail ? r->detail : "could not start the child process");
    }
}

/* The last line of a child's output, shortened, for evidence (caller frees), or NULL. */
char *icd_output_tail(const char *out)
{
    if (!out)
        return NULL;
    size_t len = strlen(out);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ' || out[len - 1] == '?'))
        len--;
    if (len == 0)
        return NULL;
    size_t start = len > 300 ? len - 300 : 0;
    return str_sanitize(strndup(out + start, len - start));
}
