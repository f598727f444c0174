/* process_unit.c: a systemd service's unit file and drop-ins, read in systemd's order, and their GPU settings. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "process_internal.h"
#include "strutil.h"

void proc_list_add(struct proc_list *l, const char *s)
{
    if (l->n >= 4096)
        return; /* a unit is not that long; a fuzzed one may be */
    char **v = realloc(l->v, (l->n + 1) * sizeof(*v));
    if (!v)
        return;
    l->v = v;
    char *c = str_dup(s);
    if (c)
        l->v[l->n++] = c;
}

void proc_list_clear(struct proc_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

bool proc_list_has(const struct proc_list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return true;
    return false;
}

const char *proc_env_get(const struct proc_list *l, const char *key)
{
    size_t k = strlen(key);
    for (size_t i = l->n; i-- > 0;)
        if (strncmp(l->v[i], key, k) == 0 && l->v[i][k] == '=')
            return l->v[i] + k + 1;
    return NULL;
}

/* Set KEY=VALUE in L: an earlier assignment of KEY goes (the last one wins, as in systemd). */
static void proc_env_set(struct proc_list *l, const char *item)
{
    const char *eq = strchr(item, '=');
    if (!eq || eq == item)
        return; /* systemd ignores an item that is not an assignment */
    size_t k = (size_t)(eq - item) + 1;
    for (size_t i = 0; i < l->n; i++)
        if (strncmp(l->v[i], item, k) == 0) {
            free(l->v[i]);
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
            l->n--;
            break;
        }
    proc_list_add(l, item);
}

/* systemd's boolean words (parse_boolean): -1 for anything else. */
static int proc_bool(const char *v)
{
    static const char *const yes[] = {"1", "yes", "y", "true", "t", "on", NULL};
    static const char *const no[] = {"0", "no", "n", "false", "f", "off", NULL};
    for (size_t i = 0; yes[i]; i++)
        if (strcasecmp(v, yes[i]) == 0)
            return 1;
    for (size_t i = 0; no[i]; i++)
        if (strcasecmp(v, no[i]) == 0)
            return 0;
    return -1;
}

/* The next word of *P (systemd's extract_first_word with quotes and C escapes, simplified: "..." and
 * '...' group, a backslash takes the next character), into a heap string; NULL at the end. */
static char *proc_word(const char **p)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s) {
        *p = s;
        return NULL;
    }
    size_t cap = strlen(s) + 1, n = 0;
    char *w = malloc(cap);
    if (!w)
        return NULL;
    char quote = 0;
    for (; *s; s++) {
        if (!quote && (*s == ' ' || *s == '\t'))
            break;
        if (*s == '\\' && s[1]) {
            s++;
            w[n++] = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
        } else if (!quote && (*s == '"' || *s == '\'')) {
            quote = *s;
        } else if (quote && *s == quote) {
            quote = 0;
        } else {
            w[n++] = *s;
        }
    }
    w[n] = '\0';
    *p = s;
    return str_sanitize(w); /* an escape may have made a control character */
}

void proc_unit_env_items(struct proc_list *list, const char *value)
{
    const char *p = value;
    for (char *w; (w = proc_word(&p)) != NULL; free(w))
        proc_env_set(list, w);
}

/* A list setting: an empty value resets it (systemd.unit(5)), else each word is added. */
static void proc_words(struct proc_list *l, const char *v)
{
    if (!*v) {
        proc_list_clear(l);
        return;
    }
    const char *p = v;
    for (char *w; (w = proc_word(&p)) != NULL; free(w))
        proc_list_add(l, w);
}

static void proc_set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = *v ? str_dup(v) : NULL;
}

/* One KEY=VALUE of [Service]. */
static void proc_unit_key(struct proc_unit *u, const char *key, const char *v)
{
    if (strcmp(key, "Environment") == 0) {
        if (!*v)
            proc_list_clear(&u->env);
        else
            proc_unit_env_items(&u->env, v);
    } else if (strcmp(key, "EnvironmentFile") == 0) {
        if (!*v)
            proc_list_clear(&u->env_files);
        else
            proc_list_add(&u->env_files, v);
    } else if (strcmp(key, "User") == 0) {
        proc_set_str(&u->user, v);
    } else if (strcmp(key, "Group") == 0) {
        proc_set_str(&u->group, v);
    } else if (strcmp(key, "SupplementaryGroups") == 0) {
        proc_words(&u->supp, v);
    } else if (strcmp(key, "DynamicUser") == 0) {
        u->dynamic_user = *v ? proc_bool(v) : -1;
    } else if (strcmp(key, "PrivateDevices") == 0) {
        u->private_devices = *v ? proc_bool(v) : -1;
    } else if (strcmp(key, "DevicePolicy") == 0) {
        proc_set_str(&u->device_policy, v);
    } else if (strcmp(key, "DeviceAllow") == 0) {
        if (!*v)
            proc_list_clear(&u->device_allow);
        else
            proc_list_add(&u->device_allow, v);
    } else if (strcmp(key, "ExecStart") == 0) {
        proc_set_str(&u->exec_start, v); /* an empty one resets the list; a service runs its last */
    }
}

/* One logical line (continuations joined): a section header, a comment, or an assignment. */
static void proc_unit_line(struct proc_unit *u, char *line, bool *in_service)
{
    char *l = str_sanitize(str_trim(line));
    if (!*l || *l == '#' || *l == ';')
        return;
    if (*l == '[') {
        *in_service = strcmp(l, "[Service]") == 0;
        return;
    }
    char *eq = strchr(l, '=');
    if (!eq || !*in_service)
        return;
    *eq = '\0';
    proc_unit_key(u, str_trim(l), str_trim(eq + 1));
}

int proc_unit_parse(struct proc_unit *u, const char *text, size_t len)
{
    /* systemd.syntax(7): a line ending in a backslash continues on the next (the backslash becomes a
     * space); comment lines inside a continuation are skipped. Sections: [Service] only matters here. */
    bool in_service = false;
    char *acc = NULL;
    size_t acc_n = 0;
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        char *line = str_copy_n(text + i, j - i);
        i = j + 1;
        if (!line) {
            free(acc);
            return -1;
        }
        for (char *c = line; *c; c++)
            if (*c == '\r' || *c == '\0')
                *c = ' ';
        char *t = str_trim(line);
        if (acc && (*t == '#' || *t == ';')) {
            free(line);
            continue;
        }
        size_t tl = strlen(t);
        bool cont = tl > 0 && t[tl - 1] == '\\' && (*t != '[' || acc);
        if (cont)
            t[tl - 1] = ' ';
        if (cont || acc) {
            size_t add = strlen(t);
            char *n = realloc(acc, acc_n + add + 1);
            if (!n) {
                free(line);
                free(acc);
                return -1;
            }
            memcpy(n + acc_n, t, add + 1);
            acc = n;
            acc_n += add;
            free(line);
            if (cont && acc_n < 65536)
                continue;
            proc_unit_line(u, acc, &in_service);
            free(acc);
            acc = NULL;
            acc_n = 0;
            continue;
        }
        proc_unit_line(u, t, &in_service);
        free(line);
    }
    if (acc)
        proc_unit_line(u, acc, &in_service);
    free(acc);
    return 0;
}

/* systemd.unit(5)'s system unit search path, highest precedence first (without the control, transient
 * and generator directories, which only systemd itself writes). */
static const char *const proc_unit_dirs[] = {
    "/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
    "/lib/systemd/system", NULL,
};

/* Is PATH a link to /dev/null (masked)? */
static bool proc_masked(const struct hostfs *fs, const char *path)
{
    char *t = NULL;
    bool m = hostfs_readlink(fs, path, &t) == 0 && strcmp(t, "/dev/null") == 0;
    free(t);
    return m;
}

/* The drop-ins of UNIT (name.service.d/[*].conf from every directory; a file name found in an earlier
 * directory hides the same name in later ones), sorted by file name as systemd applies them. */
static void proc_unit_dropins(const struct hostfs *fs, const char *unit, struct proc_list *paths)
{
    struct proc_list names = {0};
    for (size_t d = 0; proc_unit_dirs[d]; d++) {
        char *dir = str_printf("%s/%s.d", proc_unit_dirs[d], unit);
        DIR *dh = dir ? hostfs_opendir(fs, dir) : NULL;
        for (struct dirent *e; dh && (e = readdir(dh)) != NULL;) {
            if (!str_ends_with(e->d_name, ".conf") || proc_list_has(&names, e->d_name))
                continue;
            proc_list_add(&names, e->d_name);
            char *p = str_printf("%s/%s", dir, e->d_name);
            if (p)
                proc_list_add(paths, p);
            free(p);
        }
        if (dh)
            closedir(dh);
        free(dir);
    }
    /* sort the paths by their file names */
    for (size_t i = 1; i < paths->n; i++)
        for (size_t j = i; j > 0 && strcmp(strrchr(paths->v[j - 1], '/'), strrchr(paths->v[j], '/')) > 0; j--) {
            char *t = paths->v[j];
            paths->v[j] = paths->v[j - 1];
            paths->v[j - 1] = t;
        }
    proc_list_clear(&names);
}

/* Read PATH and apply it to U. */
static int proc_unit_apply(const struct hostfs *fs, const char *path, struct proc_unit *u)
{
    char *text = NULL;
    size_t len = 0;
    int rc = hostfs_read_file(fs, path, 0, &text, &len);
    if (rc != 0)
        return rc;
    rc = proc_unit_parse(u, text, len);
    free(text);
    return rc < 0 ? -ENOMEM : 0;
}

int proc_unit_load(const struct hostfs *fs, const char *name, struct proc_unit *u)
{
    memset(u, 0, sizeof(*u));
    u->dynamic_user = u->private_devices = -1;
    const char *dot = strrchr(name, '.');
    u->name = dot && dot != name ? str_dup(name) : str_printf("%s.service", name);
    if (!u->name)
        return -ENOMEM;
    /* foo@bar.service is read from foo@.service when it has no file of its own */
    char *tmpl = NULL;
    const char *at = strchr(u->name, '@');
    if (at && at[1] != '.') {
        const char *sfx = strrchr(u->name, '.');
        tmpl = str_printf("%.*s%s", (int)(at - u->name + 1), u->name, sfx);
    }
    for (int pass = 0; pass < 2 && !u->fragment && !u->masked; pass++) {
        const char *want = pass == 0 ? u->name : tmpl;
        for (size_t d = 0; want && proc_unit_dirs[d]; d++) {
            char *p = str_printf("%s/%s", proc_unit_dirs[d], want);
            struct stat st;
            if (p && hostfs_stat(fs, p, &st, false) == 0) {
                if (proc_masked(fs, p))
                    u->masked = true;
                else
                    u->fragment = p, p = NULL;
                free(p);
                break;
            }
            free(p);
        }
    }
    free(tmpl);
    if (u->masked)
        return 0;
    if (!u->fragment)
        return -ENOENT;
    proc_unit_apply(fs, u->fragment, u);
    struct proc_list drops = {0};
    proc_unit_dropins(fs, u->name, &drops);
    for (size_t i = 0; i < drops.n; i++)
        if (!proc_masked(fs, drops.v[i]) && proc_unit_apply(fs, drops.v[i], u) == 0)
            proc_list_add(&u->dropins, drops.v[i]);
    proc_list_clear(&drops);
    return 0;
}

void proc_unit_free(struct proc_unit *u)
{
    free(u->name);
    free(u->fragment);
    free(u->user);
    free(u->group);
    free(u->device_policy);
    free(u->exec_start);
    proc_list_clear(&u->dropins);
    proc_list_clear(&u->env);
    proc_list_clear(&u->env_files);
    proc_list_clear(&u->supp);
    proc_list_clear(&u->device_allow);
}

int proc_env_file(const struct hostfs *fs, const char *file, struct proc_list *l)
{
    char *text = NULL;
    int rc = hostfs_read_file(fs, file, 0, &text, NULL);
    if (rc != 0)
        return rc;
    /* systemd.exec(5): one KEY=VALUE a line, # and ; start comments, quotes around the value go */
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *t = str_trim(line);
        if (!*t || *t == '#' || *t == ';')
            continue;
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char *k = str_trim(t), *v = str_trim(eq + 1);
        size_t vl = strlen(v);
        if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
            v[vl - 1] = '\0';
            v++;
        }
        char *item = str_sanitize(str_printf("%s=%s", k, v));
        if (item && *k)
            proc_env_set(l, item);
        free(item);
    }
    free(text);
    return 0;
}
