/* fuzz_pcikernel.c: libFuzzer target for the pci probe's kernel-side text: /proc/modules,
 * /proc/driver/nvidia/version, NVIDIA library file names, /etc/group, modules.dep, modprobe.d, the kernel
 * command line, /etc/wsl.conf, dpkg's file lists, PID 1's environment (/proc/1/environ) and the NVIDIA Container
 * Toolkit's config.toml. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "pci_internal.h"
#include "vendor.h"

/* A version token as gpucheckup reports it: digits and dots, a dot, no empty part, at most 32. */
static void fuzz_pcikernel_version(const char *v)
{
    size_t l = strlen(v);
    if (l == 0 || l > 32 || !isdigit((unsigned char)v[0]) || !isdigit((unsigned char)v[l - 1]) ||
        !strchr(v, '.') || strstr(v, "..") || strspn(v, "0123456789.") != l)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char *text = strndup((const char *)data, size);
    if (!text)
        return 0;

    /* /proc/modules: every module gpucheckup looks for. */
    for (int i = 0; pci_module_names[i]; i++) {
        int64_t ref = 12345;
        bool has = pci_modules_has(text, pci_module_names[i], &ref);
        if (ref < -1 || (!has && ref != -1))
            abort();
        if (has) {
            /* listed at the start of a line, followed by a blank */
            size_t nl = strlen(pci_module_names[i]);
            bool found = false;
            for (const char *p = text; p && !found; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                found = strncmp(p, pci_module_names[i], nl) == 0 && p[nl] == ' ';
            if (!found)
                abort();
        }
        if (pci_module_index(pci_module_names[i]) != i)
            abort();
    }

    /* /proc/driver/nvidia/version */
    int open = 7;
    char *v = vendor_nvidia_parse_version(text, &open);
    if (open < -1 || open > 1 || (open != -1 && !strstr(text, "Kernel Module")))
        abort();
    if (v) {
        fuzz_pcikernel_version(v);
        if (!strstr(text, v) || !strstr(text, "NVRM version:"))
            abort();
        free(v);
    }

    /* A directory entry name: libcuda.so.550.90.07 and friends. */
    char *lv = pci_nvidia_lib_version(text);
    if (lv) {
        fuzz_pcikernel_version(lv);
        size_t tl = strlen(text), ll = strlen(lv);
        if (ll >= tl || strcmp(text + tl - ll, lv) != 0 || strncmp(text, "lib", 3) != 0)
            abort();
        free(lv);
    }

    /* /etc/group: the group of a device node, and whether a user is listed in it. */
    static const struct {
        gid_t gid;
        const char *user;
    } queries[] = {{0, NULL}, {44, "gc"}, {109, "root"}, {4242, ""}};
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        int listed = 9;
        char *name = pci_group_lookup(text, queries[q].gid, queries[q].user, &listed);
        if (listed < -1 || listed > 1 || (listed == 1 && !queries[q].user))
            abort();
        if (name) {
            if (!*name || strchr(name, ':') || strchr(name, '\n') || listed == -1)
                abort();
            fuzz_require_sanitized(name);
            free(name);
        } else if (listed != -1) {
            abort(); /* out of memory aside, a matching line gives its name */
        }
    }
    /* modules.dep, modprobe.d and /proc/cmdline (pci_nvkmod.c): each entry found is the NVIDIA core module
     * under a distribution's name, and comes from the text; at most 32 of each. */
    char **found = NULL;
    size_t nf = 0;
    pci_nvkmod_scan_dep(text, &found, &nf);
    if (nf > 32)
        abort();
    for (size_t i = 0; i < nf; i++) {
        if (!strstr(text, found[i]) || !strstr(found[i], "nvidia") || !strstr(found[i], ".ko"))
            abort();
        free(found[i]);
    }
    free(found);
    found = NULL;
    nf = 0;
    pci_nvkmod_scan_modprobe("/etc/modprobe.d/x.conf", text, &found, &nf);
    pci_nvkmod_scan_cmdline(text, &found, &nf);
    if (nf > 32)
        abort();
    for (size_t i = 0; i < nf; i++) {
        if (!strstr(found[i], "nvidia") ||
            (strncmp(found[i], "/etc/modprobe.d/x.conf:", 23) != 0 && strncmp(found[i], "/proc/cmdline: ", 15) != 0))
            abort();
        free(found[i]);
    }
    free(found);
    found = NULL;
    nf = 0;
    pci_nvkmod_scan_nouveau("/etc/modprobe.d/x.conf", text, &found, &nf);
    if (nf > 32)
        abort();
    for (size_t i = 0; i < nf; i++) {
        if (!strstr(found[i], "nouveau") || strncmp(found[i], "/etc/modprobe.d/x.conf:", 23) != 0)
            abort();
        free(found[i]);
    }
    free(found);

    /* /etc/wsl.conf: a yes/no, never a crash; a text without "enabled" cannot say false */
    bool off = pci_wsl_conf_false(text, "gpu", "enabled");
    if (off && !strcasestr(text, "enabled"))
        abort();

    /* dpkg's file lists: a path is named only as a whole line */
    static const char *const paths[] = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/bin/nvidia-smi", "/"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (!pci_dpkg_list_has(text, paths[i]))
            continue;
        size_t n = strlen(paths[i]);
        bool line = false;
        for (const char *p = text; p && !line; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
            line = strncmp(p, paths[i], n) == 0 && (p[n] == '\0' || p[n] == '\n' || p[n] == '\r');
        if (!line)
            abort();
    }
    if (pci_dpkg_list_has(text, "") || pci_dpkg_list_has(text, NULL))
        abort();

    /* /proc/1/environ (NUL-separated, so the raw bytes): container=NAME, NAME found in the input as given */
    char *cn = pci_container_environ((const char *)data, size);
    if (cn) {
        if (strlen(cn) == 0 || strlen(cn) > 245 || !memmem(data, size, cn, strlen(cn)))
            abort();
        enum pci_container c = pci_container_from_manager(cn);
        if (c < PCI_CONTAINER_NONE || c > PCI_CONTAINER_OTHER)
            abort();
        free(cn);
    }

    /* the NVIDIA Container Toolkit's config.toml (raw bytes): no-cgroups set only under its table, on a line of it */
    int ln = 0, nc = pci_toolkit_no_cgroups((const char *)data, size, &ln);
    if (nc < -1 || nc > 1 || (nc >= 0 && (ln < 1 || !memmem(data, size, "no-cgroups", 10) ||
                                          !memmem(data, size, "[nvidia-container-cli]", 22))))
        abort();

    free(text);
    return 0;
}
