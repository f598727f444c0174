/* topology_p2p.c: the topology probe's peer-to-peer facts: each pair's PCIe path, ACS on the bridges, the IOMMU. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "topology_internal.h"

/* A bridge's ACS, read once however many pairs cross it. */
struct topo_acs {
    char addr[TOPO_ADDR_LEN];
    enum topo_acs_status st;
    int err;          /* the read's -errno, 0 when it read */
    size_t len;       /* bytes of config read */
    uint16_t cap, ctl, off;
    bool in_switch;   /* on the path of a GPU pair that stays below the root complex (PIX, PXB) */
    char gpus[TOPO_MAX_DEV * TOPO_ADDR_LEN]; /* the GPUs of those pairs, blank-separated (the doctor's "peer GPUs") */
};

/* Add GPU address ADDR to A's list once. */
static void topo_acs_gpu(struct topo_acs *a, const char *addr)
{
    size_t l = strlen(a->gpus), n = strlen(addr);
    for (const char *p = a->gpus; (p = strstr(p, addr)) != NULL; p += n)
        if ((p == a->gpus || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
            return;
    if (l + n + 2 <= sizeof(a->gpus))
        snprintf(a->gpus + l, sizeof(a->gpus) - l, "%s%s", l ? " " : "", addr);
}

#define TOPO_MAX_ACS 128

static struct topo_acs *topo_acs_of(struct topo_run *t, struct topo_acs *acs, size_t *n, const char *addr)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(acs[i].addr, addr) == 0)
            return &acs[i];
    if (*n >= TOPO_MAX_ACS)
        return NULL;
    struct topo_acs *a = &acs[(*n)++];
    memset(a, 0, sizeof(*a));
    memcpy(a->addr, addr, TOPO_ADDR_LEN);
    char *p = str_printf("/sys/bus/pci/devices/%s/config", addr), *cfg = NULL;
    a->err = p ? hostfs_read_file(t->ctx->fs, p, 4096, &cfg, &a->len) : -ENOMEM;
    free(p);
    a->st = a->err == 0 ? topo_acs_find((const uint8_t *)cfg, a->len, &a->cap, &a->ctl, &a->off) : TOPO_ACS_NO_EXTENDED;
    free(cfg);
    return a;
}

static json_object *topo_hex16(uint16_t v)
{
    char b[8];
    snprintf(b, sizeof(b), "0x%04x", v);
    return json_object_new_string(b);
}

static json_object *topo_acs_json(const struct topo_acs *a)
{
    static const char *const names[] = {"enabled", "absent", "not-checked", "unreadable"};
    json_object *o = json_object_new_object();
    json_object_object_add(o, "bridge", json_object_new_string(a->addr));
    int k = a->st == TOPO_ACS_FOUND ? 0 : a->st == TOPO_ACS_ABSENT ? 1 : a->st == TOPO_ACS_NO_EXTENDED ? 2 : 3;
    json_object_object_add(o, "status", json_object_new_string(names[k]));
    json_object_object_add(o, "in_switch", json_object_new_boolean(a->in_switch));
    json_object_object_add(o, "config_bytes", a->err == 0 ? json_object_new_int64((int64_t)a->len) : NULL);
    json_object *ctl = NULL;
    if (a->st == TOPO_ACS_FOUND) {
        json_object_object_add(o, "offset", topo_hex16(a->off));
        json_object_object_add(o, "capability", topo_hex16(a->cap));
        json_object_object_add(o, "control", topo_hex16(a->ctl));
        ctl = json_object_new_array();
        for (int i = 0; i < 7; i++)
            if ((a->ctl >> i) & 1)
                json_object_array_add(ctl, json_object_new_string(topo_acs_bits[i]));
    }
    json_object_object_add(o, "control_bits", ctl);
    json_object_object_add(o, "redirect", a->st == TOPO_ACS_FOUND
                                              ? json_object_new_boolean(a->ctl & (TOPO_ACS_REQ_REDIR | TOPO_ACS_CMPLT_REDIR))
                                              : NULL);
    return o;
}

/* "ReqRedir+ CmpltRedir+" for the bits of CTL that are set (static buffer of the caller). */
static void topo_acs_words(uint16_t ctl, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < 7; i++)
        if ((ctl >> i) & 1) {
            size_t l = strlen(buf);
            snprintf(buf + l, len - l, "%s%s+", l ? " " : "", topo_acs_bits[i]);
        }
}

static void topo_acs_findings(struct topo_run *t, struct topo_acs *acs, size_t n, const char (*first)[2][12])
{
    /* Only bridges inside a PCIe switch fabric between two GPUs (a PIX or PXB pair) are judged: there
     * redirection sends up to the root complex traffic that would have stayed in the switch. A pair whose
     * path goes through the root complex anyway (PHB, NODE, SYS) takes that way whatever ACS says (Linux
     * itself turns redirection on at root ports when an IOMMU is on): the acs list shows their bridges. */
    size_t unchecked = 0;
    for (size_t i = 0; i < n; i++) {
        struct topo_acs *a = &acs[i];
        if (!a->in_switch)
            continue;
        if (a->st == TOPO_ACS_NO_EXTENDED && a->err == 0 && a->len == 64)
            unchecked++;
        if (a->st != TOPO_ACS_FOUND || !(a->ctl & (TOPO_ACS_REQ_REDIR | TOPO_ACS_CMPLT_REDIR)))
            continue;
        char words[96];
        topo_acs_words(a->ctl, words, sizeof(words));
        struct report_finding *f = report_add_finding(
            t->ctx->report, t->vm ? "topology.acs-redirect-vm" : "topology.acs-redirect", a->addr,
            "PCIe bridge %s between %s and %s has ACS redirection on (ACSCtl: %s): peer-to-peer traffic between "
            "the GPUs goes up through the root complex%s", a->addr, first[i][0], first[i][1], words,
            t->iommu_translated ? " and is translated by the IOMMU" : "");
        if (!f)
            continue;
        report_finding_add_evidence(f, "config", "ACS capability at 0x%03x: capability 0x%04x, control 0x%04x", a->off,
                                    a->cap, a->ctl);
        /* the GPUs whose peer paths cross it: the doctor names this finding as the cause of a peer check's
         * finding about a pair of them (CHECK_F_PEER_PATH) */
        report_finding_add_evidence(f, "peer GPUs", "%s", a->gpus);
        if (t->vm)
            report_finding_add_evidence(f, "virtual machine", "%s", t->vm_why);
        else
            report_finding_set_hint(f, "As root: setpci -s %s ECAP_ACS+0x6.w=0000 (and the same for every bridge "
                                       "named; lost at reboot), or disable ACS in the firmware setup. NCCL's "
                                       "troubleshooting guide describes this.", a->addr);
    }
    if (unchecked && t->n_gpus >= 2) {
        bool live = probe_host_files(t->ctx);
        report_add_finding(t->ctx->report, "topology.acs-unchecked", NULL,
                           "ACS on %zu bridge%s between the GPUs is not checked: %s", unchecked,
                           unchecked == 1 ? "" : "s",
                           live ? (geteuid() == 0 ? "their configuration space reads as 64 bytes"
                                                  : "reading PCIe extended configuration space needs root")
                                : "the tree's configuration space files hold only the first 64 bytes (a non-root copy)");
    }
}

void topo_pairs(struct topo_run *t)
{
    struct topo_acs *acs = calloc(TOPO_MAX_ACS, sizeof(*acs));
    char (*first)[2][12] = calloc(TOPO_MAX_ACS, sizeof(*first)); /* the first PIX/PXB GPU pair through each bridge */
    char (*br)[TOPO_ADDR_LEN] = calloc(TOPO_MAX_DEPTH * 2, TOPO_ADDR_LEN);
    size_t nacs = 0;
    json_object *pairs = json_object_new_array();
    for (size_t i = 0; acs && first && br && i < t->n; i++) {
        for (size_t j = i + 1; j < t->n; j++) {
            const struct topo_dev *a = &t->devs[i], *b = &t->devs[j];
            if (a->kind == TOPO_NIC && b->kind == TOPO_NIC)
                continue;
            size_t nb = 0;
            enum topo_path p = topo_pair_path(a, b, br, TOPO_MAX_DEPTH * 2, &nb);
            json_object *o = json_object_new_object();
            json_object_object_add(o, "a", json_object_new_string(a->label));
            json_object_object_add(o, "b", json_object_new_string(b->label));
            json_object_object_add(o, "path", p == TOPO_PATH_UNKNOWN ? NULL : json_object_new_string(topo_path_names[p]));
            json_object *bl = json_object_new_array();
            for (size_t k = 0; k < nb && k < TOPO_MAX_DEPTH * 2; k++) {
                json_object_array_add(bl, json_object_new_string(br[k]));
                if (a->kind != TOPO_GPU || b->kind != TOPO_GPU)
                    continue;
                struct topo_acs *x = topo_acs_of(t, acs, &nacs, br[k]);
                if (x && !x->in_switch && (p == TOPO_PATH_PIX || p == TOPO_PATH_PXB)) {
                    x->in_switch = true;
                    snprintf(first[x - acs][0], 12, "%s", a->label);
                    snprintf(first[x - acs][1], 12, "%s", b->label);
                }
                if (x && (p == TOPO_PATH_PIX || p == TOPO_PATH_PXB)) {
                    topo_acs_gpu(x, a->addr);
                    topo_acs_gpu(x, b->addr);
                }
            }
            json_object_object_add(o, "bridges", p == TOPO_PATH_UNKNOWN ? NULL : bl);
            if (p == TOPO_PATH_UNKNOWN)
                json_object_put(bl);
            json_object_array_add(pairs, o);
        }
    }
    json_object_object_add(t->d, "pairs", pairs);
    json_object *aj = json_object_new_array();
    for (size_t i = 0; i < nacs; i++)
        json_object_array_add(aj, topo_acs_json(&acs[i]));
    json_object_object_add(t->d, "acs", aj);
    if (acs && first)
        topo_acs_findings(t, acs, nacs, (const char (*)[2][12])first);
    free(acs);
    free(first);
    free(br);
}

/* The kernel parameters of /proc/cmdline that set the IOMMU's mode. */
static json_object *topo_iommu_cmdline(struct topo_run *t)
{
    static const char *const keys[] = {"intel_iommu=", "amd_iommu=", "iommu=", "iommu.passthrough=",
                                       "iommu.strict=", NULL};
    char *text = NULL;
    if (hostfs_read_file(t->ctx->fs, "/proc/cmdline", 65536, &text, NULL) < 0)
        return NULL;
    json_object *arr = json_object_new_array();
    char *save = NULL;
    for (char *tok = strtok_r(text, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
        for (size_t i = 0; keys[i]; i++)
            if (str_starts_with(tok, keys[i])) {
                json_object_array_add(arr, jsonstr_sanitized(tok));
                break;
            }
    free(text);
    return arr;
}

void topo_iommu(struct topo_run *t)
{
    json_object *o = json_object_new_object();
    DIR *dp = hostfs_opendir(t->ctx->fs, "/sys/class/iommu");
    json_object *ua = json_object_new_array();
    struct dirent *e;
    while (dp && (e = readdir(dp)))
        if (e->d_name[0] != '.')
            json_object_array_add(ua, jsonstr_sanitized(e->d_name));
    if (dp)
        closedir(dp);
    json_object_object_add(o, "present", dp ? json_object_new_boolean(json_object_array_length(ua) > 0) : NULL);
    json_object_object_add(o, "units", ua);
    json_object_object_add(o, "kernel_parameters", topo_iommu_cmdline(t));
    json_object *groups = json_object_new_array();
    size_t translated = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->devs[i].kind != TOPO_GPU)
            continue;
        char *p = str_printf("/sys/bus/pci/devices/%s/iommu_group", t->devs[i].addr), *link = NULL, *type = NULL;
        const char *grp = NULL;
        if (p && hostfs_readlink(t->ctx->fs, p, &link) == 0) {
            grp = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
            char *tp = str_printf("/sys/kernel/iommu_groups/%s/type", grp);
            if (tp && strchr(grp, '.') == NULL && hostfs_read_attr(t->ctx->fs, tp, &type) != 0)
                type = NULL;
            free(tp);
        }
        json_object *g = json_object_new_object();
        json_object_object_add(g, "gpu", json_object_new_string(t->devs[i].label));
        json_object_object_add(g, "group", jsonstr_or_null(grp));
        json_object_object_add(g, "type", jsonstr_or_null(type));
        json_object_array_add(groups, g);
        /* DMA and DMA-FQ translate the device's addresses; "identity" passes them through. */
        if (type && (strcmp(type, "DMA") == 0 || strcmp(type, "DMA-FQ") == 0))
            translated++;
        free(type);
        free(link);
        free(p);
    }
    json_object_object_add(o, "groups", groups);
    json_object_object_add(t->d, "iommu", o);
    t->iommu_translated = translated > 0;
    if (translated && t->n_gpus >= 2) {
        struct report_finding *f = report_add_finding(t->ctx->report, "topology.iommu-translated", NULL,
                                                      "%zu of %zu GPUs are in translated IOMMU groups (DMA or DMA-FQ)",
                                                      translated, t->n_gpus);
        if (f)
            report_finding_add_evidence(f, "/sys/kernel/iommu_groups/N/type", "DMA or DMA-FQ");
    }
}
