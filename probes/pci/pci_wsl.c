/* pci_wsl.c: Windows Subsystem for Linux: recognise WSL2's paravirtual GPU (/dev/dxg) and WSL1, and what breaks GPU use there. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pci_internal.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "ldsearch.h"
#include "strutil.h"

/* Facts, from Microsoft's sources and WSL's own files:
 * - WSL2 kernels' release ends in "-microsoft-standard-WSL2" (microsoft/WSL2-Linux-Kernel,
 *   CONFIG_LOCALVERSION); the 4.19-era kernels said "-microsoft-standard" only. WSL1 has no Linux kernel:
 *   its osrelease is the Windows build with "-Microsoft" ("4.4.0-19041-Microsoft"), and it has no /dev/dxg.
 * - dxgkrnl (drivers/hv/dxgkrnl/dxgmodule.c) registers the misc device /dev/dxg and binds the Hyper-V
 *   vPCI functions 1414:008e (virtual render) and 1414:008a (compute accelerator); built in, no module.
 * - WSL mounts the Windows driver's Linux libraries (libcuda, libnvidia-ml, nvidia-smi, libdxcore,
 *   libd3d12) read-only at /usr/lib/wsl/lib and writes /etc/ld.so.conf.d/ld.wsl.conf naming it (unless
 *   /etc/wsl.conf's [automount] ldconfig=false); [gpu] enabled=false there gives the distribution no GPU. */
#define WSL_LIB_DIR "/usr/lib/wsl/lib"
#define WSL_CONF "/etc/wsl.conf"

const struct check pci_wsl_checks[] = {
    {"wsl.wsl1", REPORT_SEV_ERROR, "This is WSL1, which cannot use a GPU (GPU compute needs WSL2)",
     "Convert the distribution to WSL2 from Windows: `wsl --set-version <distro> 2` (`wsl -l -v` lists the "
     "distributions and their versions), then start it again.", CHECK_LAYER_KERNEL | CHECK_F_PLATFORM},
    {"wsl.gpu-disabled", REPORT_SEV_ERROR, "/etc/wsl.conf turns GPU access off for this WSL distribution",
     "Remove `enabled=false` from the [gpu] section of /etc/wsl.conf (or set it to true), then restart the "
     "distribution from Windows: `wsl --shutdown`, and open it again.", CHECK_LAYER_KERNEL | CHECK_F_PLATFORM},
    {"wsl.no-dxg", REPORT_SEV_ERROR, "WSL2 without /dev/dxg: Windows gives this distribution no GPU",
     "Update WSL (`wsl --update` in Windows), install the GPU vendor's current Windows driver (it carries WSL "
     "support; never a Linux driver inside WSL), then `wsl --shutdown` and start the distribution again.",
     CHECK_LAYER_KERNEL | CHECK_F_PLATFORM},
    {"wsl.lib-path-missing", REPORT_SEV_ERROR,
     "WSL2: " WSL_LIB_DIR " (the Windows driver's libcuda and NVML) is not on the dynamic linker's path",
     "Let WSL write /etc/ld.so.conf.d/ld.wsl.conf again: remove `ldconfig=false` from /etc/wsl.conf's "
     "[automount] section and restart with `wsl --shutdown`; or add " WSL_LIB_DIR " to it yourself "
     "(`echo " WSL_LIB_DIR " | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig`), or to LD_LIBRARY_PATH. "
     "ldconfig's warning \"" WSL_LIB_DIR "/libcuda.so.1 is not a symbolic link\" is harmless: leave that "
     "read-only mount alone.", CHECK_LAYER_DRIVER | CHECK_F_KIND_FILE},
    {"wsl.linux-driver-library", REPORT_SEV_ERROR,
     "WSL2: a Linux NVIDIA driver library inside WSL comes before the Windows driver's in " WSL_LIB_DIR,
     "Under WSL2 the Windows driver is the only NVIDIA driver: remove the Linux one (`dpkg -S FILE` names its "
     "package; e.g. `sudo apt remove --purge 'libnvidia-compute-*' 'nvidia-driver-*'`; install CUDA with the "
     "`cuda-toolkit` package, never `cuda` or `cuda-drivers`), then `sudo ldconfig`.", CHECK_LAYER_DRIVER | CHECK_F_KIND_FILE},
    {"wsl.linux-nvidia-smi", REPORT_SEV_WARNING,
     "WSL2: a Linux NVIDIA driver's nvidia-smi comes before the Windows driver's in " WSL_LIB_DIR,
     "Remove the Linux driver's package (`dpkg -S $(command -v nvidia-smi)` names it; usually nvidia-utils-NNN): "
     "under WSL2, " WSL_LIB_DIR "/nvidia-smi is the one that talks to the Windows driver.", CHECK_LAYER_DRIVER},
};
const size_t pci_wsl_n_checks = sizeof(pci_wsl_checks) / sizeof(pci_wsl_checks[0]);

/* Does /etc/wsl.conf TEXT set KEY in [SECTION] to false ("false", "0", "no": WSL reads booleans so)?
 * Section and key names are case-insensitive; "#" and ";" start comments. */
bool pci_wsl_conf_false(const char *text, const char *section, const char *key)
{
    bool in = false;
    for (const char *l = text; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        char line[256];
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), l);
        line[strcspn(line, "#;\r")] = '\0';
        char *s = str_trim(line);
        if (*s == '[') {
            char *e = strchr(s, ']');
            if (e)
                *e = '\0';
            in = strcasecmp(str_trim(s + 1), section) == 0;
        } else if (in && strchr(s, '=')) {
            char *eq = strchr(s, '=');
            *eq = '\0';
            char *v = str_trim(eq + 1);
            if (strcasecmp(str_trim(s), key) == 0)
                return strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcasecmp(v, "no") == 0;
        }
        l = nl ? nl + 1 : NULL;
    }
    return false;
}

void pci_wsl_collect(struct pci_state *st)
{
    struct pci_platform *p = &st->platform;
    const struct hostfs *fs = st->ctx->fs;
    struct stat sb;
    char *rel = NULL;
    if (hostfs_read_attr(fs, "/proc/sys/kernel/osrelease", &rel) == 0)
        p->osrelease = rel;
    p->dxg = hostfs_stat(fs, "/dev/dxg", &sb, true) == 0;
    p->lib_dir = hostfs_stat(fs, WSL_LIB_DIR, &sb, true) == 0 && S_ISDIR(sb.st_mode);
    bool paravirt = false;
    for (size_t i = 0; i < st->n_gpus; i++)
        paravirt |= st->gpus[i].kind == PCI_KIND_PARAVIRT;
    bool ms = p->osrelease && strcasestr(p->osrelease, "microsoft");
    if (p->dxg || paravirt || (ms && strstr(p->osrelease, "WSL2")) || (ms && p->lib_dir))
        p->kind = PCI_PLATFORM_WSL2;
    else if (ms)
        p->kind = PCI_PLATFORM_WSL1;
    if (p->kind == PCI_PLATFORM_NONE)
        return;
    /* This process's LD_LIBRARY_PATH in live modes; the captured run's when a snapshot is replayed. */
    const char *ld = probe_live(st->ctx) ? getenv("LD_LIBRARY_PATH")
                     : probe_snapshot(st->ctx)
                         ? jsonget_str(jsonget(probe_captured(st->ctx, "pci"), "platform"), "ld_library_path")
                         : NULL;
    p->ld_library_path = ld ? str_dup(ld) : NULL;
    char *conf = NULL;
    if (hostfs_read_file(fs, WSL_CONF, 64 * 1024, &conf, NULL) == 0) {
        p->gpu_disabled = pci_wsl_conf_false(conf, "gpu", "enabled");
        free(conf);
    }
}

/* How a Linux driver's FILE came first, for the message: ldsearch's hit.via is "LD_LIBRARY_PATH", "ld.so.cache"
 * or "default" (the loader's own directories, searched after the cache). */
static const char *pci_wsl_route(const struct ldsearch_hit *hit)
{
    if (!hit->via)
        return "the search";
    if (strcmp(hit->via, "default") == 0)
        return "the loader's default directories";
    if (strcmp(hit->via, "ld.so.cache") == 0)
        return "ld.so.cache, which lists it before " WSL_LIB_DIR "'s";
    return hit->via;
}

/* A Linux NVIDIA driver's PATH (found for NAME through HIT, or on PATH when HIT is NULL) where WSL's should be: the
 * finding names the package that owns it (dpkg's lists) and, for LD_LIBRARY_PATH, the entry to drop. */
static void pci_wsl_linux_file(struct pci_state *st, const char *id, const char *name, const char *path,
                               const struct ldsearch_hit *hit)
{
    struct report_finding *f;
    char *pkg = pci_dpkg_owner(st->ctx->fs, path);
    if (hit)
        f = report_add_finding(st->ctx->report, id, path,
                               "%s is found first at %s (through %s), not in %s: a Linux NVIDIA driver's library, "
                               "which cannot drive the GPU under WSL2%s%s%s",
                               name, path, pci_wsl_route(hit), WSL_LIB_DIR, pkg ? " (package " : "", pkg ? pkg : "",
                               pkg ? ")" : "");
    else
        f = report_add_finding(st->ctx->report, id, path,
                               "`nvidia-smi` runs %s (a Linux driver's, found on PATH before %s/nvidia-smi), which "
                               "fails under WSL2 (\"couldn't communicate with the NVIDIA driver\")%s%s%s",
                               path, WSL_LIB_DIR, pkg ? " (package " : "", pkg ? pkg : "", pkg ? ")" : "");
    if (!f) {
        free(pkg);
        return;
    }
    if (hit)
        report_finding_add_evidence(f, path, "found first for %s (%s%s%s)", name, hit->via ? hit->via : "?",
                                    hit->entry ? ": " : "", hit->entry ? hit->entry : "");
    report_finding_add_evidence(f, "/var/lib/dpkg/info", "%s%s", pkg ? pkg : "no package lists this file",
                                pkg ? ".list names it" : " (installed by hand, or not by dpkg)");
    bool ld = hit && hit->via && strcmp(hit->via, "LD_LIBRARY_PATH") == 0;
    char *dir = ld ? str_dup(path) : NULL;
    if (dir && strrchr(dir, '/'))
        *strrchr(dir, '/') = '\0';
    /* microsoft/WSL#9099: LD_LIBRARY_PATH naming /usr/lib/x86_64-linux-gnu made nvidia-smi fail the same way */
    report_finding_set_hint(f, "Under WSL2 the Windows driver is the only NVIDIA driver: %s%s%s%s%s%s%s (install CUDA "
                               "with the `cuda-toolkit` package, never `cuda` or `cuda-drivers`, which pull a Linux "
                               "driver in)%s. Never write into %s: it is the Windows driver's read-only mount.",
                            pkg ? "remove the Linux driver's package: `sudo apt remove --purge " : "",
                            pkg ? pkg : "remove the Linux driver that installed ", pkg ? "`" : path,
                            pkg ? "" : " (`dpkg -S` does not know it: remove it by hand or with the installer that "
                                       "put it there, e.g. `sudo nvidia-uninstall`)",
                            dir ? "; and take " : "", dir ? dir : "",
                            dir ? " out of LD_LIBRARY_PATH (or put " WSL_LIB_DIR " before it)" : "",
                            hit ? ", then `sudo ldconfig`" : "", WSL_LIB_DIR);
    free(dir);
    free(pkg);
}

/* Is PATH WSL's own file, directly or through links (/usr/bin/nvidia-smi linked to the DriverStore's, as the NVIDIA
 * Container Toolkit's CDI hook makes it in a container on WSL: docker/buildx#3320)? */
static bool pci_wsl_own_file(const struct hostfs *fs, const char *path)
{
    if (str_starts_with(path, "/usr/lib/wsl/"))
        return true;
    char *real = ldsearch_realpath(fs, path);
    bool own = real && str_starts_with(real, "/usr/lib/wsl/");
    free(real);
    return own;
}

/* The first libcuda.so.1 / libnvidia-ml.so.1 on the loader's path outside WSL's directory, whether that directory
 * is on the path at all (an ld.so.conf file or LD_LIBRARY_PATH), and a Linux driver's nvidia-smi. */
static void pci_wsl_lib_findings(struct pci_state *st, struct ldsearch *s)
{
    struct report *r = st->ctx->report;
    struct report_finding *f;
    bool on_path = false;
    for (size_t i = 0; i < s->n_conf && !on_path; i++)
        if (strcmp(s->conf_dirs[i], WSL_LIB_DIR) == 0 || strcmp(s->conf_dirs[i], WSL_LIB_DIR "/") == 0)
            on_path = true;
    for (size_t i = 0; i < s->n_ld && !on_path; i++)
        on_path = strcmp(s->ld_dirs[i], WSL_LIB_DIR) == 0;
    if (!on_path && st->platform.lib_dir) {
        f = report_add_finding(r, "wsl.lib-path-missing", WSL_LIB_DIR,
                               "%s holds the Windows driver's libraries, but neither an ld.so.conf file nor "
                               "LD_LIBRARY_PATH names it: programs find no libcuda.so.1 there",
                               WSL_LIB_DIR);
        report_finding_add_evidence(f, "/etc/ld.so.conf.d/ld.wsl.conf", "absent or not naming %s", WSL_LIB_DIR);
        report_finding_add_evidence(f, "LD_LIBRARY_PATH", "%s", st->platform.ld_library_path
                                                                    ? st->platform.ld_library_path : "(not set)");
    }
    static const char *const libs[] = {"libcuda.so.1", "libnvidia-ml.so.1"};
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        struct ldsearch_hit hit = {0};
        char *path = ldsearch_find_hit(s, libs[i], &hit);
        if (path && !pci_wsl_own_file(st->ctx->fs, path))
            pci_wsl_linux_file(st, "wsl.linux-driver-library", libs[i], path, &hit);
        free(path);
        free(hit.entry);
    }
    /* WSL appends its directory to the distribution's PATH, so the standard directories come first (a Linux
     * driver's nvidia-utils package puts nvidia-smi in /usr/bin). The tree's, not this process's PATH: the same
     * answer live, under --root and on replay. */
    static const char *const bins[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};
    struct stat sb;
    for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
        char *smi = ldsearch_join(bins[i], "nvidia-smi");
        bool found = smi && hostfs_stat(st->ctx->fs, smi, &sb, true) == 0 && S_ISREG(sb.st_mode);
        if (found && !pci_wsl_own_file(st->ctx->fs, smi))
            pci_wsl_linux_file(st, "wsl.linux-nvidia-smi", "nvidia-smi", smi, NULL);
        free(smi);
        if (found)
            break;
    }
}

void pci_wsl_findings(struct pci_state *st)
{
    struct report *r = st->ctx->report;
    const struct pci_platform *p = &st->platform;
    struct report_finding *f;
    if (p->kind == PCI_PLATFORM_WSL1) {
        f = report_add_finding(r, "wsl.wsl1", NULL, "This distribution runs under WSL1 (kernel release %s): WSL1 "
                                                    "has no GPU access",
                               p->osrelease ? p->osrelease : "?");
        report_finding_add_evidence(f, "/proc/sys/kernel/osrelease", "%s", p->osrelease ? p->osrelease : "?");
        report_finding_add_evidence(f, "/dev/dxg", "absent");
        return;
    }
    if (p->kind != PCI_PLATFORM_WSL2)
        return;
    if (p->gpu_disabled) {
        f = report_add_finding(r, "wsl.gpu-disabled", WSL_CONF, "%s sets [gpu] enabled=false: WSL gives this "
                                                                "distribution no GPU",
                               WSL_CONF);
        report_finding_add_evidence(f, WSL_CONF, "[gpu] enabled=false");
    } else if (!p->dxg) {
        f = report_add_finding(r, "wsl.no-dxg", "/dev/dxg", "This is WSL2 (%s) but /dev/dxg does not exist: no GPU "
                                                            "is passed to it",
                               p->osrelease ? p->osrelease : "?");
        report_finding_add_evidence(f, "/dev/dxg", "absent");
    }
    struct ldsearch s;
    if (ldsearch_init(&s, st->ctx->fs, p->ld_library_path) == 0) {
        pci_wsl_stacks_collect(st, &s);
        pci_wsl_lib_findings(st, &s);
        ldsearch_free(&s);
    }
}

json_object *pci_wsl_json(const struct pci_platform *p)
{
    static const char *const kinds[] = {"bare-metal-or-vm", "wsl1", "wsl2"};
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string(kinds[p->kind]));
    json_object_object_add(o, "dxg", json_object_new_boolean(p->dxg));
    json_object_object_add(o, "lib_dir", p->lib_dir ? json_object_new_string(WSL_LIB_DIR) : NULL);
    json_object_object_add(o, "osrelease", jsonstr_or_null(p->osrelease));
    if (p->kind != PCI_PLATFORM_NONE) {
        json_object_object_add(o, "gpu_disabled", json_object_new_boolean(p->gpu_disabled));
        json_object_object_add(o, "ld_library_path", jsonstr_or_null(p->ld_library_path));
    }
    if (p->kind == PCI_PLATFORM_WSL2)
        json_object_object_add(o, "wsl", pci_wsl_stacks_json(p));
    return o;
}
