/* pci_dpkg.c: which Debian/Ubuntu package owns a file, from dpkg's file lists (/var/lib/dpkg/info/PKG.list). */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "pci_internal.h"
#include "ldsearch.h"
#include "strutil.h"

/* dpkg keeps one list per installed package, /var/lib/dpkg/info/NAME[:ARCH].list, holding every path the
 * package installed (directories and symlinks included), one absolute path a line (dpkg(1), "FILES"; the
 * same lists `dpkg -S` reads). Packages that are not "Multi-Arch: same" have no ":ARCH" in the name. */
#define DPKG_INFO "/var/lib/dpkg/info"
#define DPKG_LIST_MAX (8u * 1024u * 1024u)   /* one list: the largest real ones are a few MB */
#define DPKG_TOTAL_MAX (128u * 1024u * 1024u) /* all lists read for one question */

bool pci_dpkg_list_has(const char *text, const char *path)
{
    size_t n = path ? strlen(path) : 0;
    if (n == 0)
        return false;
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        if (len > 0 && l[len - 1] == '\r')
            len--;
        if (len == n && memcmp(l, path, n) == 0)
            return true;
        l = nl ? nl + 1 : NULL;
    }
    return false;
}

/* The names a file may have in dpkg's lists: as found, canonical, and the other side of a merged /usr
 * (dpkg lists /usr/lib/... or /lib/..., whichever the package shipped). At most 4, heap. */
static size_t pci_dpkg_names(const struct hostfs *fs, const char *path, char *out[4])
{
    size_t n = 0;
    out[n++] = str_dup(path);
    char *real = ldsearch_realpath(fs, path);
    if (real && strcmp(real, path) != 0)
        out[n++] = real;
    else
        free(real);
    for (size_t i = 0, m = n; i < m && n < 4; i++) {
        if (!out[i])
            continue;
        if (str_starts_with(out[i], "/usr/"))
            out[n++] = str_dup(out[i] + 4);
        else if (out[i][0] == '/')
            out[n++] = str_printf("/usr%s", out[i]);
    }
    return n;
}

static bool pci_dpkg_any(const char *text, char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] && pci_dpkg_list_has(text, names[i]))
            return true;
    return false;
}

char *pci_dpkg_owner(const struct hostfs *fs, const char *path)
{
    /* NVIDIA's and CUDA's packages first (libnvidia-compute-550, nvidia-utils-550, cuda-drivers...): the answer is
     * almost always there, and a system's other lists need not be read at all. */
    static const char *const patterns[] = {"*nvidia*.list", "*cuda*.list", "*.list"};
    char *names[4] = {0};
    size_t n_names = pci_dpkg_names(fs, path, names), total = 0;
    char *owner = NULL;
    for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]) && !owner && total < DPKG_TOTAL_MAX; p++) {
        char **lists = NULL;
        size_t n = 0;
        if (ldsearch_dir_match(fs, DPKG_INFO, patterns[p], &lists, &n) != 0)
            break;
        for (size_t i = 0; i < n && !owner && total < DPKG_TOTAL_MAX; i++) {
            bool seen = false; /* read under an earlier pattern */
            for (size_t q = 0; q < p && !seen; q++)
                seen = fnmatch(patterns[q], lists[i], 0) == 0;
            char *file = seen ? NULL : ldsearch_join(DPKG_INFO, lists[i]), *text = NULL;
            size_t len = 0;
            if (file && hostfs_read_file(fs, file, DPKG_LIST_MAX, &text, &len) == 0) {
                total += len;
                if (pci_dpkg_any(text, names, n_names)) {
                    size_t base = strlen(lists[i]) - strlen(".list");
                    owner = str_printf("%.*s", (int)base, lists[i]);
                }
            }
            free(text);
            free(file);
        }
        ldsearch_strv_free(lists, n);
    }
    for (size_t i = 0; i < n_names; i++)
        free(names[i]);
    return owner;
}
