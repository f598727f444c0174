/* icd_arch.c: the icd probe's libraries built for another machine or ELF class: each .icd file's driver, the loader. */
#include <stdlib.h>
#include <string.h>

#include "icd_impl.h"
#include "libarch.h"
#include "strutil.h"

/* What both loaders then do: ocl-icd (ocl_icd_loader.c, _load_icd) and the Khronos loader
 * (loader/linux/icd_linux.c, khrIcdVendorAdd) dlopen the library, and on failure go on to the next
 * .icd file without a word; glibc's open_verify (elf/dl-load.c) skips a file of another class or
 * e_machine as if it were not there. */
static const char icd_arch_then[] = "the dynamic linker refuses it, so ocl-icd and the Khronos loader drop this "
                                    "driver without a word, as if it were not installed";

/* The finding for E, whose library is the foreign file PATH (met VIA the search) built for ELF;
 * MORE other foreign files of that name were seen too (listed by the caller as evidence). */
static struct report_finding *icd_arch_finding(struct icd_state *st, struct icd_entry *e, const char *path,
                                               const struct ldsearch_elf *elf, const char *via)
{
    const char *who = e->file ? e->file : e->source;
    char *lib = icd_sanitized(e->library);
    char *lead = str_printf("%s names %s, but ", who, lib ? lib : "?");
    char built[64];
    ldsearch_elf_describe(elf, built, sizeof(built));
    icd_set(e, "wrong-arch", "%s is built for %s", path, built);
    struct report_finding *f = libarch_add(st->ctx->report, "icd.wrong-arch", icd_subject(e), path, elf, via, lead,
                                           icd_arch_then);
    if (f)
        report_finding_set_hint(f,
                                "Install this driver's build for this machine's architecture (`dpkg -S %s` names "
                                "its package; `dpkg --print-architecture` the host's), or remove %s.",
                                path, e->file ? e->file : "the entry");
    free(lead);
    free(lib);
    return f;
}

bool icd_check_arch(struct icd_state *st, struct icd_entry *e)
{
    if (!e->library)
        return false;
    struct ldsearch_elf elf;
    if (strchr(e->library, '/')) {
        /* A path: dlopen opens that one file or nothing. */
        const char *path = e->resolved ? e->resolved : e->found;
        if (!e->found || !libarch_file(st->libfs, path, &elf))
            return false;
        icd_arch_finding(st, e, path, &elf, e->via);
        return true;
    }
    if (e->found) /* a copy for this machine is found first: the others do not matter */
        return false;
    struct ldsearch_foreign *fo = NULL;
    size_t n = 0;
    if (ldsearch_foreign_find(&st->search, e->library, &fo, &n) != 0 || n == 0) {
        ldsearch_foreign_free(fo, n);
        return false;
    }
    struct report_finding *f = icd_arch_finding(st, e, fo[0].path, &fo[0].elf, fo[0].via);
    for (size_t i = 1; f && i < n; i++) {
        char built[64];
        report_finding_add_evidence(f, "also skipped", "%s (%s, via %s)", fo[i].path,
                                    ldsearch_elf_describe(&fo[i].elf, built, sizeof(built)), fo[i].via);
    }
    ldsearch_foreign_free(fo, n);
    return true;
}

void icd_check_loader_arch(struct icd_state *st)
{
    struct report *r = st->ctx->report;
    /* GPUCHECKUP_LIBOPENCL names the one loader gpucheckup tries (clapi.c): a name searched, or a file. */
    const char *name = icd_env("GPUCHECKUP_LIBOPENCL");
    if (!name || !*name)
        name = "libOpenCL.so.1";
    struct ldsearch_foreign *fo = NULL;
    size_t n = 0;
    if (strchr(name, '/')) {
        char *path = icd_absolute(st, name);
        struct ldsearch_elf elf;
        if (path && libarch_file(st->libfs, path, &elf) && (fo = calloc(1, sizeof(*fo)))) {
            fo->path = path;
            fo->elf = elf;
            fo->via = "GPUCHECKUP_LIBOPENCL";
            n = 1;
            path = NULL;
        }
        free(path);
    } else if (ldsearch_foreign_find(&st->search, name, &fo, &n) != 0) {
        n = 0;
    }
    if (n == 0) {
        ldsearch_foreign_free(fo, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        libarch_add(r, "icd.loader-wrong-arch", fo[i].path, fo[i].path, &fo[i].elf, fo[i].via,
                    "The OpenCL ICD loader ",
                    strchr(name, '/') ? "dlopen refuses it: no OpenCL program that loads it can start"
                                      : "the dynamic linker skips it, and no libOpenCL.so.1 for this machine is on "
                                        "the library path: no OpenCL program can start");
    /* icd.no-loader is this file's consequence (looked up here, where it is needed). */
    char *first = icd_sanitized(fo[0].path);
    struct report_finding *nl = report_find_finding(r, "icd.no-loader", "libOpenCL.so.1");
    if (nl && first && report_find_finding(r, "icd.loader-wrong-arch", first)) {
        report_finding_set_cause(nl, "icd.loader-wrong-arch", first);
        report_finding_set_hint(nl,
                                "%s is an OpenCL loader for another machine: install the loader built for this "
                                "one (`sudo apt-get install ocl-icd-libopencl1:$(dpkg --print-architecture)`)",
                                first);
    }
    free(first);
    ldsearch_foreign_free(fo, n);
}
