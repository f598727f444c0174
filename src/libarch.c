/* libarch.c: name the libraries the dynamic linker skips because they are built for another machine or class. */
#include "libarch.h"

size_t libarch_report(struct report *r, const char *id, const struct ldsearch *s, const char *name,
                      const char *what)
{
    struct ldsearch_foreign *f = NULL;
    size_t n = 0;
    if (ldsearch_foreign_find(s, name, &f, &n) != 0)
        return 0;
    struct ldsearch_elf host;
    ldsearch_elf_host(&host);
    char hb[64], fb[64];
    ldsearch_elf_describe(&host, hb, sizeof(hb));
    for (size_t i = 0; i < n; i++) {
        ldsearch_elf_describe(&f[i].elf, fb, sizeof(fb));
        /* glibc's loader (elf/dl-load.c, open_verify) skips a file whose class, byte order or e_machine
         * is not its own and goes on searching, so dlopen says only "cannot open shared object file". */
        struct report_finding *fd =
            report_add_finding(r, id, f[i].path, "%s %s is built for %s, not for this %s host: the dynamic linker "
                                                 "skips it, as if %s were not installed",
                               what, f[i].path, fb, hb, name);
        if (!fd)
            continue;
        report_finding_add_evidence(fd, "ELF header", "%s", fb);
        report_finding_add_evidence(fd, "host", "%s", hb);
        report_finding_add_evidence(fd, "found via", "%s", f[i].via);
    }
    ldsearch_foreign_free(f, n);
    return n;
}

size_t libarch_report_fs(struct report *r, const char *id, const struct hostfs *fs, const char *ldpath,
                         const char *name, const char *what)
{
    struct ldsearch s;
    size_t n = ldsearch_init(&s, fs, ldpath) == 0 ? libarch_report(r, id, &s, name, what) : 0;
    ldsearch_free(&s);
    return n;
}
