/* pci_drivers.c: the pci probe's kernel side: GPU kernel modules, NVIDIA module and library versions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ldsearch.h"
#include "pci_internal.h"
#include "strutil.h"
#include "vendor.h"

const char *const pci_module_names[] = {"nvidia", "nvidia_uvm", "nvidia_drm", "nouveau", "amdgpu",
                                        "radeon", "i915",   "xe",         NULL};

int pci_module_index(const char *name)
{
    for (int i = 0; pci_module_names[i]; i++)
        if (strcmp(pci_module_names[i], name) == 0)
            return i;
    return -1;
}

bool pci_modules_has(const char *text, const char *name, int64_t *refcount)
{
    *refcount = -1;
    size_t nl = strlen(name);
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > nl && strncmp(line, name, nl) == 0 && line[nl] == ' ') {
            /* "name size refcount deps state offset" */
            char buf[128];
            size_t cl = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
            memcpy(buf, line, cl);
            buf[cl] = '\0';
            char *save = NULL, *tok = strtok_r(buf, " \t", &save);
            for (int i = 0; tok && i < 2; i++)
                tok = strtok_r(NULL, " \t", &save);
            int64_t rc;
            if (tok && str_to_i64(tok, 10, &rc) == 0 && rc >= 0)
                *refcount = rc;
            return true;
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

static void pci_modules_collect(struct pci_state *st)
{
    const struct hostfs *fs = st->ctx->fs;
    char *text = NULL;
    int rc = hostfs_read_file(fs, "/proc/modules", 0, &text, NULL);
    bool have_proc = rc == 0;
    struct stat sb;
    bool have_sys = hostfs_stat(fs, "/sys/module", &sb, true) == 0 && S_ISDIR(sb.st_mode);
    if (!have_proc && rc != -ENOENT)
        report_section_add_note(st->sec, "/proc/modules: %s", strerror(-rc));
    else if (!have_proc && have_sys)
        report_section_add_note(st->sec, "no /proc/modules: a kernel without loadable modules; "
                                         "built-in drivers are read from /sys/module");
    else if (!have_proc)
        report_section_add_note(st->sec, "neither /proc/modules nor /sys/module: which modules are loaded "
                                         "is unknown");

    for (int i = 0; pci_module_names[i]; i++) {
        struct pci_module *m = &st->modules[i];
        const char *name = pci_module_names[i];
        m->refcount = -1;
        m->loaded = (have_proc || have_sys) ? 0 : -1;
        if (have_proc && pci_modules_has(text, name, &m->refcount))
            m->loaded = 1;
        if (!have_sys)
            continue;
        char *dir = str_printf("/sys/module/%s", name);
        char *init = str_printf("/sys/module/%s/initstate", name);
        char *ver = str_printf("/sys/module/%s/version", name);
        if (dir && init && ver && hostfs_stat(fs, dir, &sb, true) == 0 && S_ISDIR(sb.st_mode)) {
            char *state = NULL;
            if (hostfs_read_attr(fs, init, &state) == 0) {
                if (strcmp(state, "live") == 0 || strcmp(state, "coming") == 0)
                    m->loaded = 1;
            } else if (m->loaded != 1) {
                /* a module directory without initstate: built into the kernel */
                m->loaded = 1;
                m->builtin = true;
            }
            free(state);
            if (hostfs_read_attr(fs, ver, &m->version) < 0 || !*m->version) {
                free(m->version);
                m->version = NULL;
            }
        }
        free(dir);
        free(init);
        free(ver);
    }
    free(text);
}

/* NVIDIA's libraries that carry the driver version in their file name: the vendor table's row. */
static const char *const *pci_nvidia_libs_list(void)
{
    static const char *const none[] = {NULL};
    const struct vendor *nv = vendor_by_pci_id(VENDOR_PCI_NVIDIA);
    return nv && nv->versioned_libs ? nv->versioned_libs : none;
}

char *pci_nvidia_lib_version(const char *name)
{
    const char *const *libs = pci_nvidia_libs_list();
    for (size_t i = 0; libs[i]; i++) {
        if (!str_starts_with(name, libs[i]))
            continue;
        const char *v = name + strlen(libs[i]);
        return vendor_is_version(v, strlen(v)) ? str_dup(v) : NULL;
    }
    return NULL;
}

/* ---- library search directories ------------------------------------------------------------- */

struct pci_dirset {
    struct pci_state *st;
    dev_t *devs;
    ino_t *inos;
};

static void pci_add_lib_dir(struct pci_dirset *ds, const char *dir)
{
    struct pci_state *st = ds->st;
    if (dir[0] != '/' || st->n_lib_dirs >= 64)
        return;
    struct stat sb;
    if (hostfs_stat(st->ctx->fs, dir, &sb, true) != 0 || !S_ISDIR(sb.st_mode))
        return;
    /* /lib is often /usr/lib (merged /usr): one directory, one scan */
    for (size_t i = 0; i < st->n_lib_dirs; i++)
        if (ds->devs[i] == sb.st_dev && ds->inos[i] == sb.st_ino)
            return;
    char **nd = realloc(st->lib_dirs, (st->n_lib_dirs + 1) * sizeof(*nd));
    if (nd)
        st->lib_dirs = nd;
    dev_t *dv = realloc(ds->devs, (st->n_lib_dirs + 1) * sizeof(*dv));
    if (dv)
        ds->devs = dv;
    ino_t *iv = realloc(ds->inos, (st->n_lib_dirs + 1) * sizeof(*iv));
    if (iv)
        ds->inos = iv;
    if (!nd || !dv || !iv)
        return;
    char *copy = str_sanitize(str_dup(dir));
    if (!copy)
        return;
    size_t l = strlen(copy);
    while (l > 1 && copy[l - 1] == '/')
        copy[--l] = '\0';
    st->lib_dirs[st->n_lib_dirs] = copy;
    ds->devs[st->n_lib_dirs] = sb.st_dev;
    ds->inos[st->n_lib_dirs] = sb.st_ino;
    st->n_lib_dirs++;
}

static const char *const pci_std_lib_dirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib/aarch64-linux-gnu",
    "/usr/lib64", "/lib64", "/usr/lib", "/lib", NULL,
};

/* Drop "." and "dir/.." segments from an absolute PATH, in place. */
static void pci_path_normalize(char *path)
{
    char *out = path, *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - seg);
        if (len == 0 || (len == 1 && seg[0] == '.'))
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (out > path && *--out != '/')
                ;
            continue;
        }
        *out++ = '/';
        memmove(out, seg, len);
        out += len;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
}

/* Follow the symlink chain from PATH (inside the root), as the dynamic loader would: Debian points
 * libcuda.so.1 and friends through /etc/alternatives into nvidia/current/. Heap path or NULL. */
static char *pci_follow_links(const struct hostfs *fs, const char *path)
{
    char *cur = str_dup(path);
    for (int i = 0; cur && i < 8; i++) {
        char *t = NULL;
        if (hostfs_readlink(fs, cur, &t) != 0)
            return cur;
        hostfs_trace(fs, cur);
        char *next;
        if (t[0] == '/') {
            next = str_dup(t);
        } else {
            const char *slash = strrchr(cur, '/');
            next = str_printf("%.*s/%s", (int)(slash - cur), cur, t);
        }
        free(t);
        free(cur);
        cur = next;
        if (cur)
            pci_path_normalize(cur);
    }
    free(cur);
    return NULL; /* a loop */
}

static void pci_nvlib_add(struct pci_state *st, char *path, char *version)
{
    bool dup = false;
    for (size_t i = 0; i < st->n_nvlibs && !dup; i++)
        dup = strcmp(st->nvlibs[i].path, path) == 0;
    struct pci_nvlib *nl = dup || st->n_nvlibs >= 64 ? NULL : realloc(st->nvlibs, (st->n_nvlibs + 1) * sizeof(*nl));
    if (!nl) {
        free(path);
        free(version);
        return;
    }
    st->nvlibs = nl;
    hostfs_trace(st->ctx->fs, path);
    nl[st->n_nvlibs].path = str_sanitize(path);
    nl[st->n_nvlibs].version = version;
    st->n_nvlibs++;
}

/* NAME is the soname link of one of the NVIDIA libraries ("libcuda.so.1"). */
static bool pci_nvidia_soname(const char *name)
{
    const char *const *libs = pci_nvidia_libs_list();
    for (size_t i = 0; libs[i]; i++)
        if (str_starts_with(name, libs[i]) && strcmp(name + strlen(libs[i]), "1") == 0)
            return true;
    return false;
}

static void pci_nvlibs_collect(struct pci_state *st)
{
    struct pci_dirset ds = {.st = st};
    /* The directories /etc/ld.so.conf names (includes followed): the shared search's parser. */
    struct ldsearch search;
    if (ldsearch_init(&search, st->ctx->fs, NULL) == 0)
        for (size_t i = 0; i < search.n_conf; i++)
            pci_add_lib_dir(&ds, search.conf_dirs[i]);
    ldsearch_free(&search);
    for (size_t i = 0; pci_std_lib_dirs[i]; i++)
        pci_add_lib_dir(&ds, pci_std_lib_dirs[i]);
    free(ds.devs);
    free(ds.inos);

    for (size_t i = 0; i < st->n_lib_dirs; i++) {
        DIR *d = hostfs_opendir(st->ctx->fs, st->lib_dirs[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) && st->n_nvlibs < 64) {
            char *v = pci_nvidia_lib_version(e->d_name);
            if (v) {
                char *path = str_printf("%s/%s", st->lib_dirs[i], e->d_name);
                if (path)
                    pci_nvlib_add(st, path, v);
                else
                    free(v);
                continue;
            }
            if (!pci_nvidia_soname(e->d_name))
                continue;
            char *link = str_printf("%s/%s", st->lib_dirs[i], e->d_name);
            char *target = link ? pci_follow_links(st->ctx->fs, link) : NULL;
            const char *base = target ? strrchr(target, '/') : NULL;
            struct stat sb;
            if (base && (v = pci_nvidia_lib_version(base + 1)) &&
                hostfs_stat(st->ctx->fs, target, &sb, true) == 0) {
                hostfs_trace(st->ctx->fs, link);
                pci_nvlib_add(st, target, v);
                target = NULL;
            } else {
                free(v);
            }
            free(target);
            free(link);
        }
        closedir(d);
    }
    /* stable report order */
    for (size_t i = 1; i < st->n_nvlibs; i++)
        for (size_t j = i; j > 0 && strcmp(st->nvlibs[j - 1].path, st->nvlibs[j].path) > 0; j--) {
            struct pci_nvlib t = st->nvlibs[j];
            st->nvlibs[j] = st->nvlibs[j - 1];
            st->nvlibs[j - 1] = t;
        }
}

void pci_drivers_collect(struct pci_state *st)
{
    pci_modules_collect(st);

    st->nv_kmod_open = -1;
    char *text = NULL;
    if (hostfs_read_file(st->ctx->fs, "/proc/driver/nvidia/version", 64 * 1024, &text, NULL) == 0) {
        st->nv_kmod_version = vendor_nvidia_parse_version(text, &st->nv_kmod_open);
        if (st->nv_kmod_version)
            st->nv_kmod_source = str_dup("/proc/driver/nvidia/version");
        else
            report_section_add_note(st->sec, "/proc/driver/nvidia/version: no version found in it");
        free(text);
    }
    int nv = pci_module_index("nvidia");
    if (!st->nv_kmod_version && st->modules[nv].version) {
        char *v = st->modules[nv].version;
        if (vendor_is_version(v, strlen(v))) {
            st->nv_kmod_version = str_dup(v);
            st->nv_kmod_source = str_dup("/sys/module/nvidia/version");
        }
    }
    pci_nvlibs_collect(st);
}
