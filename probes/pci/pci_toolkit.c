/* pci_toolkit.c: the host's NVIDIA Container Toolkit configuration: no-cgroups = true on a cgroup v2 host that runs Docker. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pci_internal.h"
#include "strutil.h"

#define PCI_TOOLKIT_CONFIG "/etc/nvidia-container-runtime/config.toml"

/* One TOML line's start, blanks skipped. */
static const char *pci_toolkit_skip(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p;
}

int pci_toolkit_no_cgroups(const char *text, size_t len, int *line_no)
{
    const char *p = text, *end = text + len;
    bool in_cli = false;
    int value = -1, n = 0;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        n++;
        const char *s = pci_toolkit_skip(p, le);
        if (s < le && *s == '[') {
            /* a table header: [nvidia-container-cli] (the toolkit's own spelling; quoted keys are not used) */
            const char *close = memchr(s, ']', (size_t)(le - s));
            in_cli = close && close - s - 1 == 20 && memcmp(s + 1, "nvidia-container-cli", 20) == 0;
        } else if (in_cli && (size_t)(le - s) > 10 && memcmp(s, "no-cgroups", 10) == 0) {
            const char *q = pci_toolkit_skip(s + 10, le);
            if (q < le && *q == '=') {
                q = pci_toolkit_skip(q + 1, le);
                bool t = (size_t)(le - q) >= 4 && memcmp(q, "true", 4) == 0;
                bool f = (size_t)(le - q) >= 5 && memcmp(q, "false", 5) == 0;
                const char *after = pci_toolkit_skip(q + (t ? 4 : 5), le);
                if ((t || f) && (after == le || *after == '#' || *after == '\r')) {
                    value = t ? 1 : 0;
                    if (line_no)
                        *line_no = n;
                }
            }
        }
        p = nl ? nl + 1 : NULL;
    }
    return value;
}

/* Docker's daemon, which starts --gpus containers through the toolkit's runtime hook with cgroups managed by runc. */
static const char *pci_toolkit_dockerd(const struct hostfs *fs)
{
    static const char *const paths[] = {"/usr/bin/dockerd", "/usr/sbin/dockerd", "/usr/local/bin/dockerd",
                                        "/etc/docker/daemon.json", NULL};
    struct stat sb;
    for (size_t i = 0; paths[i]; i++)
        if (hostfs_stat(fs, paths[i], &sb, true) == 0)
            return paths[i];
    return NULL;
}

void pci_toolkit_findings(struct pci_state *st)
{
    const struct hostfs *fs = st->ctx->fs;
    struct stat sb;
    char *text = NULL;
    size_t len = 0;
    int line = 0;
    /* cgroup v2 (the unified hierarchy at /sys/fs/cgroup): runc's eBPF device filter allows only the devices the
     * OCI spec lists; with no-cgroups the toolkit adds none for the GPU's nodes */
    if (hostfs_stat(fs, "/sys/fs/cgroup/cgroup.controllers", &sb, true) != 0)
        return;
    const char *dockerd = pci_toolkit_dockerd(fs);
    if (!dockerd || hostfs_read_file(fs, PCI_TOOLKIT_CONFIG, 256 * 1024, &text, &len) != 0)
        return;
    int v = pci_toolkit_no_cgroups(text, len, &line);
    free(text);
    if (v != 1)
        return;
    struct report_finding *f = report_add_finding(
        st->ctx->report, "container.toolkit-no-cgroups", PCI_TOOLKIT_CONFIG,
        "%s sets no-cgroups = true (line %d, [nvidia-container-cli]) on this cgroup v2 host, which runs Docker: "
        "containers started with --gpus get the NVIDIA device nodes but no device rule for them, and NVML fails "
        "inside them (\"Failed to initialize NVML: Unknown Error\")",
        PCI_TOOLKIT_CONFIG, line);
    if (!f)
        return;
    report_finding_add_evidence(f, PCI_TOOLKIT_CONFIG, "line %d: no-cgroups = true", line);
    report_finding_add_evidence(f, "/sys/fs/cgroup/cgroup.controllers", "present (cgroup v2)");
    report_finding_add_evidence(f, dockerd, "present (Docker)");
}
