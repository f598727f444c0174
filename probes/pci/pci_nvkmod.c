/* pci_nvkmod.c: where the NVIDIA kernel module stands, from files: built for the running kernel, by DKMS for which, blacklisted. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonstr.h"
#include "pci_internal.h"
#include "strutil.h"

/* Where modprobe reads its configuration (modprobe.d(5)), in its order of precedence. */
static const char *const pci_modprobe_dirs[] = {
    "/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d", "/lib/modprobe.d", "/usr/lib/modprobe.d", NULL,
};

/* Caps on hostile input: modules.dep of a distribution kernel is under 1 MB; entries kept per list. */
#define PCI_NVKMOD_DEP_MAX (16u * 1024u * 1024u)
#define PCI_NVKMOD_MAX_LIST 32u
#define PCI_NVKMOD_MAX_DIR 256u /* entries of one directory (modprobe.d, DKMS's tree) looked at */

bool pci_nvkmod_is_core_name(const char *name, size_t len)
{
    /* The module GPUs bind to, under the names distributions give it: "nvidia" (NVIDIA's installer,
     * Ubuntu's linux-modules-nvidia-*), "nvidia-current" and "nvidia-tesla-535" / "nvidia-legacy-390xx"
     * (Debian's renamed builds: nvidia-kernel-dkms' dkms.conf DEST_MODULE_NAME, loaded through the
     * alias in /etc/modprobe.d/nvidia.conf). Its companions (-modeset, -uvm, -drm, -peermem) are not it. */
    static const char *const companions[] = {"modeset", "uvm", "drm", "peermem", NULL};
    if (len < 6 || strncmp(name, "nvidia", 6) != 0)
        return false;
    if (len == 6)
        return true;
    if (name[6] != '-' && name[6] != '_')
        return false;
    for (size_t i = 0; companions[i]; i++) {
        size_t cl = strlen(companions[i]);
        if (len > cl && memcmp(name + len - cl, companions[i], cl) == 0 &&
            (name[len - cl - 1] == '-' || name[len - cl - 1] == '_'))
            return false;
    }
    return true;
}

static void pci_nvkmod_add(char ***list, size_t *n, char *s)
{
    if (!s)
        return;
    if (*n >= PCI_NVKMOD_MAX_LIST) {
        free(s);
        return;
    }
    char **nl = realloc(*list, (*n + 1) * sizeof(*nl));
    if (!nl) {
        free(s);
        return;
    }
    *list = nl;
    nl[(*n)++] = s;
}

/* The module's base name in a modules.dep path ("updates/dkms/nvidia-current.ko.xz"): [*B, *B + *LEN). */
static bool pci_nvkmod_ko_name(const char *path, size_t plen, const char **b, size_t *len)
{
    const char *slash = NULL;
    for (size_t i = 0; i < plen; i++)
        if (path[i] == '/')
            slash = path + i;
    const char *base = slash ? slash + 1 : path;
    size_t blen = plen - (size_t)(base - path);
    for (size_t i = 0; i + 3 <= blen; i++)
        if (memcmp(base + i, ".ko", 3) == 0 && (i + 3 == blen || base[i + 3] == '.')) {
            *b = base;
            *len = i;
            return true;
        }
    return false;
}

void pci_nvkmod_scan_dep(const char *text, char ***files, size_t *n)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *colon = memchr(line, ':', len);
        const char *b;
        size_t bl;
        if (colon && pci_nvkmod_ko_name(line, (size_t)(colon - line), &b, &bl) && pci_nvkmod_is_core_name(b, bl))
            pci_nvkmod_add(files, n, str_printf("%.*s", (int)(colon - line), line));
        line = end ? end + 1 : NULL;
    }
}

/* Is NAME[0..LEN) nouveau (the module has no other name)? */
static bool pci_nvkmod_is_nouveau(const char *name, size_t len)
{
    return len == 7 && memcmp(name, "nouveau", 7) == 0;
}

/* One modprobe.d line that stops module IS_IT from loading: "blacklist NAME" (no autoloading by the
 * GPU's modalias, which is how it loads at boot) or "install NAME /bin/false" (no loading at all). */
static bool pci_nvkmod_blocks(const char *line, size_t len, bool (*is_it)(const char *, size_t))
{
    char buf[512];
    if (len >= sizeof(buf))
        return false;
    memcpy(buf, line, len);
    buf[len] = '\0';
    char *save = NULL, *cmd = strtok_r(buf, " \t", &save), *name = cmd ? strtok_r(NULL, " \t", &save) : NULL;
    if (!cmd || !name || !is_it(name, strlen(name)))
        return false;
    if (strcmp(cmd, "blacklist") == 0)
        return true;
    if (strcmp(cmd, "install") != 0)
        return false;
    char *prog = strtok_r(NULL, " \t", &save);
    static const char *const nops[] = {"/bin/false", "/usr/bin/false", "/bin/true", "/usr/bin/true", "false", "true",
                                       NULL};
    for (size_t i = 0; prog && nops[i]; i++)
        if (strcmp(prog, nops[i]) == 0)
            return true;
    return false;
}

static void pci_nvkmod_scan_modprobe_for(const char *file, const char *text, bool (*is_it)(const char *, size_t),
                                         char ***found, size_t *n)
{
    unsigned lineno = 0;
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        lineno++;
        while (len > 0 && (*line == ' ' || *line == '\t')) {
            line++;
            len--;
        }
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
            len--;
        if (len > 0 && *line != '#' && pci_nvkmod_blocks(line, len, is_it))
            pci_nvkmod_add(found, n, str_printf("%s:%u: %.*s", file, lineno, (int)len, line));
        line = end ? end + 1 : NULL;
    }
}

void pci_nvkmod_scan_modprobe(const char *file, const char *text, char ***found, size_t *n)
{
    pci_nvkmod_scan_modprobe_for(file, text, pci_nvkmod_is_core_name, found, n);
}

void pci_nvkmod_scan_nouveau(const char *file, const char *text, char ***found, size_t *n)
{
    pci_nvkmod_scan_modprobe_for(file, text, pci_nvkmod_is_nouveau, found, n);
}

/* WITH_RD: rd.driver.blacklist= too, which stops a module only inside a dracut initramfs (dracut.cmdline(7)). */
static void pci_nvkmod_scan_cmdline_for(const char *text, bool (*is_it)(const char *, size_t), bool with_rd,
                                        char ***found, size_t *n)
{
    /* modprobe.blacklist= (modprobe(8): read from the kernel command line) and module_blacklist= (the
     * kernel's own: kernel-parameters.txt), each a comma-separated list. */
    const char *const keys[] = {"modprobe.blacklist=", "module_blacklist=", with_rd ? "rd.driver.blacklist=" : NULL,
                                NULL};
    char *copy = str_dup(text);
    char *save = NULL;
    for (char *tok = copy ? strtok_r(copy, " \t\n", &save) : NULL; tok; tok = strtok_r(NULL, " \t\n", &save))
        for (size_t k = 0; keys[k]; k++) {
            if (!str_starts_with(tok, keys[k]))
                continue;
            char *save2 = NULL;
            for (char *m = strtok_r(tok + strlen(keys[k]), ",", &save2); m; m = strtok_r(NULL, ",", &save2))
                if (is_it(m, strlen(m))) {
                    pci_nvkmod_add(found, n, str_printf("/proc/cmdline: %s%s", keys[k], m));
                    break;
                }
        }
    free(copy);
}

void pci_nvkmod_scan_cmdline(const char *text, char ***found, size_t *n)
{
    pci_nvkmod_scan_cmdline_for(text, pci_nvkmod_is_core_name, false, found, n);
}

/* Entries of directory PATH (sorted, "." and ".." left out), at most PCI_NVKMOD_MAX_DIR; those past it are
 * counted in *OVER (the section says so). */
static size_t pci_nvkmod_list(const struct hostfs *fs, const char *path, char ***out, size_t *over)
{
    *out = NULL;
    size_t n = 0;
    DIR *d = hostfs_opendir(fs, path);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char **nl = n < PCI_NVKMOD_MAX_DIR ? realloc(*out, (n + 1) * sizeof(*nl)) : NULL;
        char *name = nl ? str_dup(e->d_name) : NULL;
        if (nl)
            *out = nl;
        if (name)
            nl[n++] = name;
        else
            (*over)++;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp((*out)[j - 1], (*out)[j]) > 0; j--) {
            char *t = (*out)[j];
            (*out)[j] = (*out)[j - 1];
            (*out)[j - 1] = t;
        }
    return n;
}

static void pci_nvkmod_free_list(char **l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(l[i]);
    free(l);
}

/* DKMS's tree (dkms(8): /var/lib/dkms/MODULE/VERSION/KERNEL/ARCH/module/): every nvidia module version and
 * the kernels it was built for. */
static void pci_nvkmod_dkms(struct pci_state *st)
{
    struct pci_nvkmod *k = &st->nvkmod;
    const struct hostfs *fs = st->ctx->fs;
    char **mods = NULL;
    size_t nm = pci_nvkmod_list(fs, "/var/lib/dkms", &mods, &k->not_read);
    for (size_t i = 0; i < nm; i++) {
        if (strncmp(mods[i], "nvidia", 6) != 0 || !pci_nvkmod_is_core_name(mods[i], strlen(mods[i])))
            continue;
        char *mdir = str_printf("/var/lib/dkms/%s", mods[i]);
        char **vers = NULL;
        size_t nv = mdir ? pci_nvkmod_list(fs, mdir, &vers, &k->not_read) : 0;
        for (size_t v = 0; v < nv; v++) {
            if (str_starts_with(vers[v], "kernel-") || strcmp(vers[v], "original_module") == 0)
                continue;
            char *vdir = str_printf("%s/%s", mdir, vers[v]);
            char **kernels = NULL;
            size_t nk = vdir ? pci_nvkmod_list(fs, vdir, &kernels, &k->not_read) : 0;
            struct pci_nvkmod_dkms *nd = k->n_dkms < PCI_NVKMOD_MAX_LIST
                                             ? realloc(k->dkms, (k->n_dkms + 1) * sizeof(*nd)) : NULL;
            if (nd) {
                k->dkms = nd;
                struct pci_nvkmod_dkms *e = &nd[k->n_dkms++];
                memset(e, 0, sizeof(*e));
                e->module = str_dup(mods[i]);
                e->version = str_dup(vers[v]);
                for (size_t j = 0; j < nk; j++) {
                    struct stat sb;
                    char *kd = str_printf("%s/%s", vdir, kernels[j]);
                    /* a kernel's build directory; "source" and "build" are DKMS's own */
                    if (kd && strcmp(kernels[j], "source") != 0 && strcmp(kernels[j], "build") != 0 &&
                        hostfs_stat(fs, kd, &sb, true) == 0 && S_ISDIR(sb.st_mode)) {
                        pci_nvkmod_add(&e->kernels, &e->n_kernels, kernels[j]);
                        kernels[j] = NULL;
                    }
                    free(kd);
                }
            }
            pci_nvkmod_free_list(kernels, nk);
            free(vdir);
        }
        pci_nvkmod_free_list(vers, nv);
        free(mdir);
    }
    pci_nvkmod_free_list(mods, nm);
}

void pci_nvkmod_collect(struct pci_state *st)
{
    struct pci_nvkmod *k = &st->nvkmod;
    const struct hostfs *fs = st->ctx->fs;
    char *text = NULL;
    k->checked = true;
    k->modules_dep = -1;
    if (hostfs_read_file(fs, "/proc/sys/kernel/osrelease", 4096, &text, NULL) == 0) {
        const char *rel = str_trim(text);
        if (rel[0] && !strchr(rel, '/') && strcmp(rel, "..") != 0 && strcmp(rel, ".") != 0)
            k->kernel = str_dup(rel);
        free(text);
        text = NULL;
    }
    if (k->kernel) {
        char *dep = str_printf("/lib/modules/%s/modules.dep", k->kernel);
        int rc = dep ? hostfs_read_file(fs, dep, PCI_NVKMOD_DEP_MAX, &text, NULL) : -ENOMEM;
        if (rc == 0) {
            k->modules_dep = 1;
            pci_nvkmod_scan_dep(text, &k->files, &k->n_files);
            for (size_t i = 0; i < k->n_files; i++)
                if (k->files[i][0] != '/') {
                    char *abs = str_printf("/lib/modules/%s/%s", k->kernel, k->files[i]);
                    if (abs) {
                        free(k->files[i]);
                        k->files[i] = abs;
                    }
                }
        } else if (rc == -ENOENT) {
            k->modules_dep = 0;
        } else {
            report_section_add_note(st->sec, "%s: %s", dep ? dep : "modules.dep", strerror(-rc));
        }
        free(text);
        text = NULL;
        free(dep);
    }
    pci_nvkmod_dkms(st);
    for (size_t i = 0; pci_modprobe_dirs[i]; i++) {
        char **names = NULL;
        size_t n = pci_nvkmod_list(fs, pci_modprobe_dirs[i], &names, &k->not_read);
        for (size_t j = 0; j < n; j++) {
            if (!str_ends_with(names[j], ".conf"))
                continue;
            char *p = str_printf("%s/%s", pci_modprobe_dirs[i], names[j]);
            if (p && hostfs_read_file(fs, p, 0, &text, NULL) == 0) {
                pci_nvkmod_scan_modprobe(p, text, &k->blocked_by, &k->n_blocked_by);
                pci_nvkmod_scan_nouveau(p, text, &k->nouveau_blocked, &k->n_nouveau_blocked);
            }
            free(text);
            text = NULL;
            free(p);
        }
        pci_nvkmod_free_list(names, n);
    }
    if (k->not_read > 0)
        report_section_add_note(st->sec, "%zu entr%s of modprobe.d and DKMS's directories past the first %u of each "
                                         "%s not read: a blacklist there is not seen",
                                k->not_read, k->not_read == 1 ? "y" : "ies", PCI_NVKMOD_MAX_DIR,
                                k->not_read == 1 ? "was" : "were");
    if (hostfs_read_file(fs, "/proc/cmdline", 0, &text, NULL) == 0) {
        pci_nvkmod_scan_cmdline(text, &k->blocked_by, &k->n_blocked_by);
        pci_nvkmod_scan_cmdline_for(text, pci_nvkmod_is_nouveau, true, &k->nouveau_cmdline, &k->n_nouveau_cmdline);
    }
    free(text);
}

void pci_nvkmod_free(struct pci_nvkmod *k)
{
    free(k->kernel);
    pci_nvkmod_free_list(k->files, k->n_files);
    pci_nvkmod_free_list(k->blocked_by, k->n_blocked_by);
    pci_nvkmod_free_list(k->nouveau_blocked, k->n_nouveau_blocked);
    pci_nvkmod_free_list(k->nouveau_cmdline, k->n_nouveau_cmdline);
    for (size_t i = 0; i < k->n_dkms; i++) {
        free(k->dkms[i].module);
        free(k->dkms[i].version);
        pci_nvkmod_free_list(k->dkms[i].kernels, k->dkms[i].n_kernels);
    }
    free(k->dkms);
    memset(k, 0, sizeof(*k));
}

json_object *pci_nvkmod_json(const struct pci_nvkmod *k)
{
    json_object *o = json_object_new_object();
    /* every string here was read from the tree (file names, modprobe.d lines): sanitised */
    json_object_object_add(o, "running_kernel", jsonstr_sanitized(k->kernel));
    json_object_object_add(o, "files", k->modules_dep >= 0 ? jsonstr_array_sanitized(k->files, k->n_files) : NULL);
    json_object *dkms = json_object_new_array();
    for (size_t i = 0; i < k->n_dkms; i++) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "module", jsonstr_sanitized(k->dkms[i].module));
        json_object_object_add(d, "version", jsonstr_sanitized(k->dkms[i].version));
        json_object_object_add(d, "kernels", jsonstr_array_sanitized(k->dkms[i].kernels, k->dkms[i].n_kernels));
        json_object_array_add(dkms, d);
    }
    json_object_object_add(o, "dkms", dkms);
    json_object_object_add(o, "blocked_by", jsonstr_array_sanitized(k->blocked_by, k->n_blocked_by));
    json_object *nb = jsonstr_array_sanitized(k->nouveau_blocked, k->n_nouveau_blocked);
    for (size_t i = 0; nb && i < k->n_nouveau_cmdline; i++)
        json_object_array_add(nb, jsonstr_sanitized(k->nouveau_cmdline[i]));
    json_object_object_add(o, "nouveau_blocked_by", nb);
    return o;
}
