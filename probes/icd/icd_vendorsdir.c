/* icd_vendorsdir.c: the vendors directory compiled into the OpenCL loader programs get (a loader built in another prefix). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "icd_impl.h"
#include "ldsearch.h"
#include "probe.h"
#include "strutil.h"

#define ICD_LOADER_MAX_READ (16u * 1024 * 1024) /* libOpenCL is well under 1 MB; a larger file is no loader */
#define ICD_VENDORS_TAIL "/OpenCL/vendors"

char *icd_vendors_dir_in(const char *buf, size_t len, bool *has_default)
{
    const size_t tl = strlen(ICD_VENDORS_TAIL);
    char *first = NULL;
    *has_default = false;
    for (size_t i = 0; i + tl <= len;) {
        const char *hit = memmem(buf + i, len - i, ICD_VENDORS_TAIL, tl);
        if (!hit)
            break;
        size_t at = (size_t)(hit - buf), s = at, e = at + tl;
        i = at + 1;
        /* the whole string: printable, no blank, from a NUL (or the start) to a NUL, at most 512 bytes */
        while (s > 0 && at - s < 512 && buf[s - 1] > ' ' && buf[s - 1] < 127)
            s--;
        if (e < len && buf[e] == '/')
            e++;
        if (buf[s] != '/' || (s > 0 && buf[s - 1] != '\0') || e >= len || buf[e] != '\0')
            continue;
        size_t n = e - s;
        if (n > 1 && buf[e - 1] == '/')
            n--;
        if (n == strlen(ICD_VENDORS_DIR) && memcmp(buf + s, ICD_VENDORS_DIR, n) == 0)
            *has_default = true;
        else if (!first)
            first = strndup(buf + s, n);
    }
    return first;
}

/* The loader programs get: the identified one's file (live), else the one dlopen would take (files). */
static const char *icd_loader_file(const struct icd_state *st)
{
    const char *p = st->loader ? icd_jstr(st->loader, "path") : NULL;
    if (p && p[0] == '/')
        return p;
    for (size_t i = 0; i < st->n_loaders; i++)
        if (st->loaders[i].wins && st->loaders[i].resolved)
            return st->loaders[i].resolved;
    return NULL;
}

char *icd_compiled_vendors_dir(const struct icd_state *st, const char **loader)
{
    *loader = NULL;
    /* under --root --live the loader is this machine's and the vendors the tree's: the environment says */
    if (st->libfs != st->ctx->fs)
        return NULL;
    const char *lib = icd_loader_file(st);
    char *buf = NULL;
    size_t len = 0;
    if (!lib || hostfs_read_file(st->libfs, lib, ICD_LOADER_MAX_READ, &buf, &len) != 0)
        return NULL;
    bool def = false;
    char *dir = icd_vendors_dir_in(buf, len, &def);
    free(buf);
    if (def || !dir) { /* it reads /etc/OpenCL/vendors (ocl-icd also names it), or nothing is known */
        free(dir);
        return NULL;
    }
    *loader = lib;
    return str_sanitize(dir);
}

/* The .icd names of DIR (on FS) that OTHER lacks, ", "-joined (heap), and how many; NULL when none. */
static char *icd_names_missing(const struct hostfs *fs, const char *dir, const char *other, size_t *count)
{
    char **names = NULL, **have = NULL;
    size_t n = 0, nh = 0;
    char *out = NULL;
    *count = 0;
    if (ldsearch_dir_match(fs, dir, "*.icd", &names, &n) != 0)
        return NULL;
    if (ldsearch_dir_match(fs, other, "*.icd", &have, &nh) != 0)
        nh = 0;
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        for (size_t j = 0; j < nh && !found; j++)
            found = strcmp(names[i], have[j]) == 0;
        if (found)
            continue;
        char *joined = str_printf("%s%s%s", out ? out : "", out ? ", " : "", names[i]);
        free(out);
        out = joined;
        (*count)++;
    }
    ldsearch_strv_free(names, n);
    ldsearch_strv_free(have, nh);
    return out ? str_sanitize(out) : NULL;
}

void icd_compiled_dir_findings(struct icd_state *st, const char *loader, const char *dir)
{
    size_t n = 0;
    char *lost = icd_names_missing(st->ctx->fs, ICD_VENDORS_DIR, dir, &n);
    if (!lost)
        return;
    struct report_finding *f = report_add_finding(
        st->ctx->report, "icd.loader-vendors-dir", dir,
        "The OpenCL loader %s reads its vendors from %s (compiled into it), not %s: the %zu driver%s registered "
        "there (%s) %s invisible to programs that load it, though each may work alone",
        loader, dir, ICD_VENDORS_DIR, n, n == 1 ? "" : "s", lost, n == 1 ? "is" : "are");
    if (f) {
        report_finding_add_evidence(f, loader, "compiled-in vendors directory: %s", dir);
        report_finding_add_evidence(f, ICD_VENDORS_DIR, "%s", lost);
        report_finding_set_hint(f, "Register the drivers where this loader looks (`sudo mkdir -p %s && sudo ln -s "
                                   "%s/*.icd %s/`; a conda env: `conda install ocl-icd-system`), or point it at the "
                                   "system's directory (`export OCL_ICD_VENDORS=%s`), or use the system's loader.",
                                dir, ICD_VENDORS_DIR, dir, ICD_VENDORS_DIR);
    }
    free(lost);
}
