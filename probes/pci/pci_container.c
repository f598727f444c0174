/* pci_container.c: recognise a container (docker, podman, Kubernetes) and the NVIDIA Container Toolkit's traces, and say what the container lacks. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pci_internal.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "vendor.h"

/* Facts, and where they come from:
 * - Docker creates an empty /.dockerenv in every container's root (moby daemon/initlayer); podman writes
 *   /run/.containerenv (containers/podman, "containerenv" in its run/ documentation: podman-run(1)).
 * - /proc/1/cgroup names the container's cgroup under cgroup v1 and v2 without a cgroup namespace:
 *   ".../docker-<id>.scope" or "/docker/<id>" (Docker), "/kubepods..." (the kubelet's pods), "libpod-<id>"
 *   (podman), "containerd" / "cri-containerd-<id>" (containerd). With a private cgroup namespace (Docker's
 *   default on cgroup v2) it reads "0::/": the files above decide then.
 * - The NVIDIA Container Toolkit's environment (docs.nvidia.com/datacenter/cloud-native/container-toolkit,
 *   "Specialized Configurations with Docker", "Driver Capabilities"): NVIDIA_VISIBLE_DEVICES "void" or empty
 *   exposes nothing (runc's behaviour), "none" no GPU but the driver; NVIDIA_DRIVER_CAPABILITIES lists
 *   compute, utility (NVML and nvidia-smi), ... or "all".
 * - libnvidia-container (src/nvc_mount.c, mount_procfs) mounts a tmpfs (mode=0555) over /proc/driver/nvidia
 *   and copies the host's params/version/registry into it, then bind-mounts the driver's libraries (libcuda.so.
 *   <version> among them) into the container: both show in /proc/mounts. */

#define NVIDIA_DRIVER_PROC "/proc/driver/nvidia"

const struct check pci_container_checks[] = {
    {"container.no-gpu", REPORT_SEV_ERROR,
     "This container was started without a GPU (the machine may well have one: the container does not get it)",
     "Start the container with the GPU passed in: `docker run --gpus all ...` (NVIDIA Container Toolkit), or "
     "through CDI: `--device nvidia.com/gpu=all` (podman, or docker with CDI); in Kubernetes, request "
     "`nvidia.com/gpu` in the pod's resource limits. NVIDIA_VISIBLE_DEVICES must not be empty, `void` or `none`.",
     CHECK_LAYER_KERNEL | CHECK_F_KIND_FILE},
    {"container.no-utility", REPORT_SEV_WARNING,
     "The container's NVIDIA_DRIVER_CAPABILITIES lacks `utility`: no NVML and no nvidia-smi inside it",
     "Start the container with `-e NVIDIA_DRIVER_CAPABILITIES=compute,utility` (or `all`): without `utility` the "
     "toolkit does not inject libnvidia-ml or nvidia-smi, so monitoring and NVML-based tools fail.",
     CHECK_LAYER_DRIVER | CHECK_F_KIND_FILE},
    /* NVIDIA's notice NVIDIA/nvidia-docker#1730 ("Containers losing access to GPUs with error: Failed to
     * initialize NVML: Unknown Error"): with systemd managing the container's cgroups, a `systemctl
     * daemon-reload` on the host drops the device rules runc set; the container must be deleted and started
     * again to get them back; on the host, `nvidia-ctk system create-dev-char-symlinks --create-all` (the
     * /dev/char links runc needs) keeps it from happening again. */
    {"container.devices-denied", REPORT_SEV_ERROR,
     "NVIDIA device nodes exist in this container but opening them is denied (its cgroup's device rules)",
     "The container lost its GPU access (\"Failed to initialize NVML: Unknown Error\"), typically after a "
     "`systemctl daemon-reload` on the host: delete and start the container again (a `docker restart` may not "
     "be enough; `docker rm` then `docker run --gpus all ...`). On the host, `sudo nvidia-ctk system "
     "create-dev-char-symlinks --create-all` keeps it from recurring (NVIDIA/nvidia-docker#1730).",
     CHECK_LAYER_KERNEL},
    /* ROCm's "Running ROCm Docker containers" (rocm.docs.amd.com, install-on-linux, how-to/docker): /dev/kfd is
     * the compute interface of all GPUs, /dev/dri holds each GPU's render node; both are passed with --device.
     * The nodes are group video/render on the host; a user other than root in the container needs those groups,
     * by number when the image has no such name (ROCm/ROCm-docker#116). */
    {"container.no-amd-devices", REPORT_SEV_ERROR,
     "This container was started without the AMD GPU's device nodes (/dev/kfd, /dev/dri): ROCm sees no GPU",
     "Start the container with the nodes passed in: `docker run --device /dev/kfd --device /dev/dri --group-add "
     "video --group-add render ...` (podman takes the same options; as a user other than root the groups must be "
     "the host's: `--group-add $(getent group render | cut -d: -f3)` where the image lacks the name); in "
     "Kubernetes, request `amd.com/gpu` (AMD's GPU device plugin).",
     CHECK_LAYER_KERNEL},
    /* NVIDIA Container Toolkit, "Configuration": no-cgroups = true is for rootless containers, where the toolkit
     * cannot set device rules; under Docker (rootful, runc's eBPF device filter on cgroup v2) the nodes are then
     * denied: NVML answers "Unknown Error" (NVIDIA/nvidia-container-toolkit issues on cgroup v2). */
    {"container.toolkit-no-cgroups", REPORT_SEV_WARNING,
     "The NVIDIA Container Toolkit is configured with no-cgroups = true on a cgroup v2 host that runs Docker",
     "Set `no-cgroups = false` (or comment it out) in /etc/nvidia-container-runtime/config.toml and start the GPU "
     "containers again; no-cgroups = true is only for rootless podman, which is better served by CDI "
     "(`sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`, then `--device nvidia.com/gpu=all`).",
     CHECK_LAYER_DRIVER},
};
const size_t pci_container_n_checks = sizeof(pci_container_checks) / sizeof(pci_container_checks[0]);

static const char *const pci_container_names[] = {NULL, "docker", "podman", "kubernetes", "containerd", "other"};

/* The container runtime /proc/1/cgroup content TEXT names, or PCI_CONTAINER_NONE. */
enum pci_container pci_container_from_cgroup(const char *text)
{
    if (!text)
        return PCI_CONTAINER_NONE;
    if (strstr(text, "kubepods"))
        return PCI_CONTAINER_KUBERNETES;
    if (strstr(text, "libpod"))
        return PCI_CONTAINER_PODMAN;
    if (strstr(text, "/docker") || strstr(text, "docker-"))
        return PCI_CONTAINER_DOCKER;
    if (strstr(text, "containerd"))
        return PCI_CONTAINER_CONTAINERD;
    return PCI_CONTAINER_NONE;
}

enum pci_container pci_container_from_manager(const char *name)
{
    static const struct {
        const char *name;
        enum pci_container c;
    } names[] = {{"docker", PCI_CONTAINER_DOCKER}, {"podman", PCI_CONTAINER_PODMAN}, {"wsl", PCI_CONTAINER_NONE}};
    if (!name || !*name)
        return PCI_CONTAINER_NONE;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].c;
    return PCI_CONTAINER_OTHER;
}

char *pci_container_environ(const char *text, size_t len)
{
    for (size_t i = 0; text && i < len;) {
        const char *e = memchr(text + i, '\0', len - i);
        size_t n = e ? (size_t)(e - (text + i)) : len - i;
        if (n > 10 && n < 256 && memcmp(text + i, "container=", 10) == 0)
            return str_printf("%.*s", (int)(n - 10), text + i + 10);
        i += n + 1;
    }
    return NULL;
}

/* The label messages give a container of another kind: NAME with anything but letters, digits, '-', '_' and '.'
 * dropped (it is read from the tree), "other" when nothing is left. */
static void pci_container_set_label(struct pci_platform *p, const char *name)
{
    size_t n = 0;
    for (const char *c = name; c && *c && n + 1 < sizeof(p->container_label); c++)
        if (isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.')
            p->container_label[n++] = *c;
    p->container_label[n] = '\0';
    if (n == 0)
        snprintf(p->container_label, sizeof(p->container_label), "other");
}

/* Without a runtime's marker, what systemd's detect_container() (src/basic/virt.c) trusts, in its order: the
 * manager's name in /run/host/container-manager (systemd's container interface), /run/systemd/container (PID 1
 * systemd's copy of its $container), PID 1's own $container (/proc/1/environ; podman, LXC and nspawn set it, Docker
 * does not); then a cgroup namespace, told by the cgroup files themselves: under cgroup v2 the root cgroup has no
 * cgroup.type, so /sys/fs/cgroup/cgroup.type means the hierarchy's root we see is a nested cgroup; under v1 only the
 * root has release_agent. /proc/1/cgroup reading "0::/" is no proof: PID 1 of a host without systemd reads the same. */
static void pci_container_manager(struct pci_platform *p, const struct hostfs *fs)
{
    static const char *const files[] = {"/run/host/container-manager", "/run/systemd/container"};
    struct stat sb;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && p->container == PCI_CONTAINER_NONE; i++) {
        char *name = NULL;
        if (hostfs_read_attr(fs, files[i], &name) == 0 && (p->container = pci_container_from_manager(name))) {
            p->container_from = files[i];
            pci_container_set_label(p, name);
        }
        free(name);
    }
    char *text = NULL;
    size_t len = 0;
    if (p->container == PCI_CONTAINER_NONE && hostfs_read_file(fs, "/proc/1/environ", 64 * 1024, &text, &len) == 0) {
        char *name = pci_container_environ(text, len);
        if ((p->container = pci_container_from_manager(name))) {
            p->container_from = "/proc/1/environ";
            pci_container_set_label(p, name);
        }
        free(name);
        free(text);
    }
    if (p->container != PCI_CONTAINER_NONE)
        return;
    bool v2 = hostfs_stat(fs, "/sys/fs/cgroup/cgroup.events", &sb, true) == 0 &&
              hostfs_stat(fs, "/sys/fs/cgroup/cgroup.type", &sb, true) == 0;
    bool v1 = !v2 && hostfs_stat(fs, "/sys/fs/cgroup/systemd", &sb, true) == 0 && S_ISDIR(sb.st_mode) &&
              hostfs_stat(fs, "/sys/fs/cgroup/systemd/release_agent", &sb, true) == -ENOENT;
    if (v2 || v1) {
        p->container = PCI_CONTAINER_OTHER;
        p->container_from = v2 ? "/sys/fs/cgroup/cgroup.type" : "/sys/fs/cgroup/systemd/release_agent";
        pci_container_set_label(p, "cgroup-namespaced");
    }
}

/* The toolkit's mounts, from /proc/mounts TEXT: a tmpfs on /proc/driver/nvidia, a libcuda.so.<version>
 * mounted as a file (its mount point, heap). */
static void pci_container_mounts(struct pci_platform *p, const char *text)
{
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        char line[1024], src[256], dir[512], type[64];
        int w = snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), l);
        if (w > 0 && sscanf(line, "%255s %511s %63s", src, dir, type) == 3) {
            const char *base = strrchr(dir, '/');
            if (strcmp(dir, NVIDIA_DRIVER_PROC) == 0 && strcmp(type, "tmpfs") == 0)
                p->driver_tmpfs = true;
            else if (base && str_starts_with(base + 1, "libcuda.so.") && !p->injected_libcuda)
                p->injected_libcuda = str_dup(dir);
        }
        l = nl ? nl + 1 : NULL;
    }
}

void pci_container_collect(struct pci_state *st)
{
    struct pci_platform *p = &st->platform;
    const struct hostfs *fs = st->ctx->fs;
    struct stat sb;
    char *text = NULL;
    if (hostfs_read_file(fs, "/proc/1/cgroup", 64 * 1024, &text, NULL) == 0) {
        if ((p->container = pci_container_from_cgroup(text)))
            p->container_from = "/proc/1/cgroup";
        free(text);
        text = NULL;
    }
    if (p->container == PCI_CONTAINER_NONE && hostfs_stat(fs, "/run/.containerenv", &sb, true) == 0) {
        p->container = PCI_CONTAINER_PODMAN;
        p->container_from = "/run/.containerenv";
    }
    if (p->container == PCI_CONTAINER_NONE && hostfs_stat(fs, "/.dockerenv", &sb, true) == 0) {
        p->container = PCI_CONTAINER_DOCKER;
        p->container_from = "/.dockerenv";
    }
    if (p->container == PCI_CONTAINER_NONE)
        pci_container_manager(p, fs);
    if (hostfs_read_file(fs, "/proc/mounts", 1024 * 1024, &text, NULL) == 0) {
        pci_container_mounts(p, text);
        free(text);
    }
    /* The environment is this process's: only where the files are this machine's own too; a snapshot's replay
     * takes what the captured run saw (its pci section's platform). */
    const char *v = NULL, *c = NULL;
    if (probe_live(st->ctx)) {
        v = getenv("NVIDIA_VISIBLE_DEVICES");
        c = getenv("NVIDIA_DRIVER_CAPABILITIES");
    } else if (probe_snapshot(st->ctx)) {
        json_object *tk = jsonget(jsonget(probe_captured(st->ctx, "pci"), "platform"), "nvidia_container_toolkit");
        v = jsonget_str(tk, "visible_devices");
        c = jsonget_str(tk, "driver_capabilities");
    }
    p->nv_visible = v ? str_dup(v) : NULL;
    p->nv_caps = c ? str_dup(c) : NULL;
}

void pci_container_free(struct pci_platform *p)
{
    free(p->injected_libcuda);
    free(p->nv_visible);
    free(p->nv_caps);
}

/* Does the comma-separated list LIST hold WORD? */
static bool pci_list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *s = list; s && *s;) {
        s += strspn(s, " ,");
        size_t len = strcspn(s, ",");
        const char *e = s + len;
        while (e > s && e[-1] == ' ')
            e--;
        if ((size_t)(e - s) == n && strncmp(s, word, n) == 0)
            return true;
        s += len;
    }
    return false;
}

/* NVIDIA's traces in this container: a GPU on the bus, the nvidia module, the toolkit's variables. */
static bool pci_container_nvidia_wanted(const struct pci_state *st)
{
    for (size_t i = 0; i < st->n_gpus; i++)
        if (st->gpus[i].vendor == VENDOR_PCI_NVIDIA && st->gpus[i].kind == PCI_KIND_COMPUTE)
            return true;
    return st->modules[pci_module_index("nvidia")].loaded == 1 || st->platform.nv_visible;
}

/* An NVIDIA node present (nvidiactl or nvidiaN), or NULL. */
static const struct pci_node *pci_container_nv_node(const struct pci_state *st)
{
    for (size_t i = 0; i < st->n_nodes; i++)
        if (st->nodes[i].present && (strcmp(st->nodes[i].path, "/dev/nvidiactl") == 0 ||
                                     (str_starts_with(st->nodes[i].path, "/dev/nvidia") &&
                                      st->nodes[i].path[11] >= '0' && st->nodes[i].path[11] <= '9')))
            return &st->nodes[i];
    return NULL;
}

/* Is the GPU withheld from this container? Sets *WHY for the message. */
static bool pci_container_withheld(const struct pci_state *st, const char **why)
{
    const char *v = st->platform.nv_visible;
    if (v && (!*v || strcmp(v, "void") == 0 || strcmp(v, "none") == 0)) {
        *why = "NVIDIA_VISIBLE_DEVICES asks the toolkit for no GPU";
        return true;
    }
    if (pci_container_wanted_no_nodes(st)) {
        *why = "it has no /dev/nvidiactl and no /dev/nvidiaN";
        return true;
    }
    return false;
}

bool pci_container_wanted_no_nodes(const struct pci_state *st)
{
    return st->platform.container != PCI_CONTAINER_NONE && pci_container_nvidia_wanted(st) &&
           !pci_container_nv_node(st);
}

/* The AMD GPU (bound to amdgpu) a required node belongs to: /dev/kfd, or its render node; NULL for others. */
static const struct pci_gpu *pci_container_amd_of(const struct pci_state *st, const struct pci_node *n)
{
    if (strcmp(n->path, "/dev/kfd") != 0 && !str_starts_with(n->path, "/dev/dri/renderD"))
        return NULL;
    for (size_t i = 0; n->device && i < st->n_gpus; i++)
        if (strcmp(st->gpus[i].addr, n->device) == 0 && st->gpus[i].vendor == VENDOR_PCI_AMD)
            return &st->gpus[i];
    return NULL;
}

bool pci_container_amd_node_missing(const struct pci_state *st, const struct pci_node *n)
{
    return st->platform.container != PCI_CONTAINER_NONE && !n->present && n->required_by && pci_container_amd_of(st, n);
}

/* container.no-amd-devices: the AMD GPUs' compute nodes this container lacks, one finding for all. */
static void pci_container_amd_findings(struct pci_state *st, const char *name)
{
    struct report_finding *f = NULL;
    for (size_t i = 0; i < st->n_nodes; i++) {
        const struct pci_node *n = &st->nodes[i];
        if (!pci_container_amd_node_missing(st, n))
            continue;
        const struct pci_gpu *g = pci_container_amd_of(st, n);
        if (!f)
            f = report_add_finding(st->ctx->report, "container.no-amd-devices", g->addr,
                                   "This is a %s container and the AMD GPU %s (driver %s on the host) has no %s in "
                                   "it: the container was started without the GPU's device nodes",
                                   name, g->addr, g->driver ? g->driver : "?", n->path);
        if (f)
            report_finding_add_evidence(f, n->path, "absent (%s)", n->required_by);
    }
}

void pci_container_findings(struct pci_state *st)
{
    struct report *r = st->ctx->report;
    const struct pci_platform *p = &st->platform;
    struct report_finding *f;
    if (p->container == PCI_CONTAINER_NONE) {
        pci_toolkit_findings(st);
        return;
    }
    const char *name = p->container == PCI_CONTAINER_OTHER ? p->container_label : pci_container_names[p->container];
    const char *why = NULL;
    if (pci_container_withheld(st, &why)) {
        f = report_add_finding(r, "container.no-gpu", NULL, "This is a %s container and %s: the container was "
                                                            "started without GPU access, whatever the machine has",
                               name, why);
        if (p->nv_visible)
            report_finding_add_evidence(f, "NVIDIA_VISIBLE_DEVICES", "\"%s\"", p->nv_visible);
        if (!pci_container_nv_node(st))
            report_finding_add_evidence(f, "/dev/nvidia*", "absent");
        report_finding_add_evidence(f, NVIDIA_DRIVER_PROC, "%s", p->driver_tmpfs ? "the toolkit's tmpfs"
                                                                 : "not mounted by the NVIDIA Container Toolkit");
    }
    pci_container_amd_findings(st, name);
    if (p->nv_caps && pci_list_has(p->nv_caps, "compute") && !pci_list_has(p->nv_caps, "utility") &&
        !pci_list_has(p->nv_caps, "all")) {
        f = report_add_finding(r, "container.no-utility", "NVIDIA_DRIVER_CAPABILITIES",
                               "NVIDIA_DRIVER_CAPABILITIES is \"%s\": the toolkit gave this container CUDA but not "
                               "NVML or nvidia-smi",
                               p->nv_caps);
        report_finding_add_evidence(f, "NVIDIA_DRIVER_CAPABILITIES", "\"%s\"", p->nv_caps);
    }
    /* Device rules act on open(), never on access(): only an open of this machine's node shows them. */
    const struct pci_node *n = pci_container_nv_node(st);
    if (n && probe_host_files(st->ctx)) {
        int fd = hostfs_openat(st->ctx->fs, n->path, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd >= 0)
            close(fd);
        else if (fd == -EPERM) {
            f = report_add_finding(r, "container.devices-denied", n->path,
                                   "%s exists in this %s container but opening it is not permitted (EPERM): the "
                                   "container's device rules deny the GPU",
                                   n->path, name);
            report_finding_add_evidence(f, n->path, "open: %s", strerror(EPERM));
        }
    }
}

void pci_container_group_hint(struct report_finding *f, const struct pci_node *n)
{
    /* A container's /etc/group is its image's: the node's group is the host's, by number (ROCm/ROCm-docker#116:
     * "groups: cannot find name for group ID 993"). `usermod` inside the container changes nothing for the
     * processes docker starts; --group-add gives them the group. */
    report_finding_set_hint(f, "Inside this container the node's group (gid %lld%s%s%s) must be one of this process's "
                               "groups: start the container with `--group-add %lld` (the host's number: `getent group "
                               "%s | cut -d: -f3` on the host), or run the program as root in it; `usermod` inside the "
                               "container does not reach the processes docker starts.",
                            (long long)n->gid, n->group ? ", " : "", n->group ? n->group : "",
                            n->group ? " in this image" : "", (long long)n->gid, n->group ? n->group : "render");
}

json_object *pci_container_json(const struct pci_platform *p)
{
    return p->container == PCI_CONTAINER_NONE ? NULL : json_object_new_string(pci_container_names[p->container]);
}

json_object *pci_container_toolkit_json(const struct pci_platform *p)
{
    if (p->container == PCI_CONTAINER_NONE && !p->nv_visible && !p->nv_caps && !p->driver_tmpfs &&
        !p->injected_libcuda)
        return NULL;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "visible_devices", jsonstr_or_null(p->nv_visible));
    json_object_object_add(o, "driver_capabilities", jsonstr_or_null(p->nv_caps));
    json_object_object_add(o, "driver_tmpfs", json_object_new_boolean(p->driver_tmpfs));
    json_object_object_add(o, "injected_libcuda", jsonstr_or_null(p->injected_libcuda));
    return o;
}
