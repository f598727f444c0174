/* libarch.c: name the libraries the dynamic linker skips because they are built for another machine or class. */
#include "libarch.h"

#include <stdlib.h>

#include "strutil.h"

struct report_finding *libarch_add(struct report *r, const char *id, const char *subject, const char *path,
                                   const struct ldsearch_elf *elf, const char *via, const char *lead, const char *then)
{
    struct ldsearch_elf host;
    ldsearch_elf_host(&host);
    char hb[64], fb[64];
    ldsearch_elf_describe(&host, hb, sizeof(hb));
    ldsearch_elf_describe(elf, fb, sizeof(fb));
    char *clean = str_sanitize(str_dup(path));
    struct report_finding *fd = report_add_finding(r, id, subject ? subject : clean, "%s%s is built for %s, not for this "
                                                                                    "%s host: %s",
                                                   lead ? lead : "", clean ? clean : "?", fb, hb, then);
    if (fd) {
        report_finding_add_evidence(fd, "ELF header", "%s", fb);
        report_finding_add_evidence(fd, "host", "%s", hb);
        if (via)
            report_finding_add_evidence(fd, "found via", "%s", via);
    }
    free(clean);
    return fd;
}

int libarch_file(const struct hostfs *fs, const char *path, struct ldsearch_elf *out)
{
    struct ldsearch_elf e;
    if (!path || ldsearch_elf_read(fs, path, &e) != 1 || ldsearch_elf_native(&e))
        return 0;
    *out = e;
    return 1;
}

size_t libarch_report(struct report *r, const char *id, const struct ldsearch *s, const char *name,
                      const char *what)
{
    struct ldsearch_foreign *f = NULL;
    size_t n = 0;
    if (ldsearch_foreign_find(s, name, &f, &n) != 0)
        return 0;
    /* glibc's loader (elf/dl-load.c, open_verify) skips a file whose class, byte order or e_machine
     * is not its own and goes on searching, so dlopen says only "cannot open shared object file". */
    char *lead = str_printf("%s ", what);
    char *then = str_printf("the dynamic linker skips it, as if %s were not installed", name);
    for (size_t i = 0; i < n; i++)
        libarch_add(r, id, f[i].path, f[i].path, &f[i].elf, f[i].via, lead, then ? then : "the dynamic linker skips it");
    free(lead);
    free(then);
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
