/* cuda_nvml_nvlink.c: each GPU's NVLinks from NVML (state, the far end, error counters read twice) and their findings (issue 41). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "cuda_nvml.h"
#include "jsonget.h"
#include "nvml_api.h"
#include "strutil.h"

/* A link that is down, or whose error counters grow, slows or stalls NCCL's NVLink transport while every
 * single-GPU test passes (NCCL's troubleshooting guide; DCGM's NVLink health watches the same counters). */
const struct check cuda_nvlink_checks[] = {
    {"cuda.nvlink-inactive", REPORT_SEV_WARNING,
     "A GPU has fewer active NVLinks than another GPU of the same model on this machine: a link is down",
     "Check `nvidia-smi nvlink -s` and `dmesg` for Xid 74 (NVLink error); reseat the NVLink bridge, or on an "
     "NVSwitch system check nvidia-fabricmanager; a reset (`nvidia-smi -r`) or reboot may bring the link back.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
    {"cuda.nvlink-errors", REPORT_SEV_WARNING,
     "NVLink error counters (CRC, replay, recovery) grew while gpucheckup read them",
     "A link that keeps counting errors retransmits (slow NCCL) or fails (Xid 74): check `nvidia-smi nvlink -e`, "
     "the bridge or baseboard, and `dmesg`; the counters reset when the driver reloads.",
     CHECK_LAYER_RUNTIME | CHECK_F_NEVER_CAUSE | CHECK_F_NEVER_ROOT},
};
const size_t cuda_nvlink_n_checks = sizeof(cuda_nvlink_checks) / sizeof(cuda_nvlink_checks[0]);

static const struct {
    int counter;
    const char *key;
} nvlink_counters[] = {
    {NVML_NVLINK_ERROR_DL_REPLAY, "replay_errors"},
    {NVML_NVLINK_ERROR_DL_RECOVERY, "recovery_errors"},
    {NVML_NVLINK_ERROR_DL_CRC_FLIT, "crc_flit_errors"},
    {NVML_NVLINK_ERROR_DL_CRC_DATA, "crc_data_errors"},
};
#define NVLINK_N_COUNTERS (sizeof(nvlink_counters) / sizeof(nvlink_counters[0]))

/* ---- the child ------------------------------------------------------------------------------------ */

/* The far end's PCI address as sysfs writes it, from the bus id NVML filled (the current layout's, else
 * the legacy one's), or NULL. */
static json_object *nvlink_remote(const struct nvml_pci_info *p)
{
    unsigned int dom, bus, dev, fn;
    char tail;
    for (int k = 0; k < 2; k++) {
        char buf[NVML_BUS_ID_SIZE + 1];
        const char *src = k == 0 ? p->bus_id : p->bus_id_legacy;
        size_t n = k == 0 ? sizeof(p->bus_id) : sizeof(p->bus_id_legacy);
        memcpy(buf, src, n);
        buf[n] = '\0';
        if (sscanf(buf, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 && dom <= 0xffff && bus <= 0xff &&
            dev <= 0x1f && fn <= 7) {
            char out[16];
            snprintf(out, sizeof(out), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
            return json_object_new_string(out);
        }
    }
    return NULL;
}

void nvml_query_nvlink(const struct nvml_api *api, nvmlDevice_t dev, json_object *d)
{
    json_object *links = json_object_new_array();
    for (unsigned int l = 0; api->nvmlDeviceGetNvLinkState && l < NVML_NVLINK_MAX_LINKS; l++) {
        nvmlEnableState_t on = 0;
        if (api->nvmlDeviceGetNvLinkState(dev, l, &on) != NVML_SUCCESS)
            continue; /* a link this GPU does not have (NOT_SUPPORTED, INVALID_ARGUMENT) */
        json_object *o = json_object_new_object();
        json_object_object_add(o, "link", json_object_new_int((int)l));
        json_object_object_add(o, "active", json_object_new_boolean(on != 0));
        struct nvml_pci_info p;
        memset(&p, 0, sizeof(p));
        bool far = on && api->nvmlDeviceGetNvLinkRemotePciInfo &&
                   api->nvmlDeviceGetNvLinkRemotePciInfo(dev, l, &p) == NVML_SUCCESS;
        json_object_object_add(o, "remote_pci_bus_id", far ? nvlink_remote(&p) : NULL);
        for (size_t k = 0; k < NVLINK_N_COUNTERS; k++) {
            unsigned long long v = 0;
            bool ok = api->nvmlDeviceGetNvLinkErrorCounter &&
                      api->nvmlDeviceGetNvLinkErrorCounter(dev, l, nvlink_counters[k].counter, &v) == NVML_SUCCESS;
            json_object_object_add(o, nvlink_counters[k].key,
                                   ok && v <= (unsigned long long)INT64_MAX ? json_object_new_int64((int64_t)v) : NULL);
        }
        json_object_array_add(links, o);
    }
    if (json_object_array_length(links) == 0) {
        json_object_put(links);
        links = NULL;
    }
    json_object_object_add(d, "nvlink", links);
}

void nvml_nvlink_recount(const struct nvml_api *api, json_object *devs)
{
    for (size_t i = 0; api->nvmlDeviceGetNvLinkErrorCounter && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i), *links = jsonget(d, "nvlink");
        nvmlDevice_t dev = NULL;
        if (!links || api->nvmlDeviceGetHandleByIndex((unsigned int)nvml_num(d, "index"), &dev) != NVML_SUCCESS)
            continue;
        for (size_t j = 0; j < json_object_array_length(links); j++) {
            json_object *o = json_object_array_get_idx(links, j), *grown = json_object_new_object();
            for (size_t k = 0; k < NVLINK_N_COUNTERS; k++) {
                int64_t before = nvml_num(o, nvlink_counters[k].key);
                unsigned long long v = 0;
                bool ok = before >= 0 && api->nvmlDeviceGetNvLinkErrorCounter(dev, (unsigned int)nvml_num(o, "link"),
                                                                              nvlink_counters[k].counter,
                                                                              &v) == NVML_SUCCESS;
                json_object_object_add(grown, nvlink_counters[k].key,
                                       ok && v >= (unsigned long long)before
                                           ? json_object_new_int64((int64_t)(v - (unsigned long long)before))
                                           : NULL);
            }
            json_object_object_add(o, "grown", grown);
        }
    }
}

/* ---- the parent ----------------------------------------------------------------------------------- */

static size_t nvlink_active(json_object *links, char *down, size_t size)
{
    size_t n = 0;
    if (down && size)
        down[0] = '\0';
    for (size_t j = 0; links && j < json_object_array_length(links); j++) {
        json_object *o = json_object_array_get_idx(links, j);
        if (jsonget_tri(o, "active") == GC_TRI_YES) {
            n++;
        } else if (down) {
            size_t l = strlen(down);
            snprintf(down + l, size - l, "%s%lld", l ? ", " : "", (long long)nvml_num(o, "link"));
        }
    }
    return n;
}

/* cuda.nvlink-errors for D: the links whose counters grew between the child's two reads. */
static void nvlink_check_errors(struct probe_ctx *ctx, json_object *d, const char *subj, const char *gpu)
{
    json_object *links = jsonget(d, "nvlink");
    char what[512] = "";
    for (size_t j = 0; links && j < json_object_array_length(links); j++) {
        json_object *o = json_object_array_get_idx(links, j), *grown = jsonget(o, "grown");
        for (size_t k = 0; k < NVLINK_N_COUNTERS; k++) {
            int64_t g = nvml_num(grown, nvlink_counters[k].key);
            size_t l = strlen(what);
            if (g > 0)
                snprintf(what + l, sizeof(what) - l, "%slink %lld %s +%lld (now %lld)", l ? ", " : "",
                         (long long)nvml_num(o, "link"), nvlink_counters[k].key, (long long)g,
                         (long long)nvml_num(o, nvlink_counters[k].key) + g);
        }
    }
    if (what[0]) {
        struct report_finding *f = report_add_finding(
            ctx->report, "cuda.nvlink-errors", subj, "NVLink errors grew on %s (%s) while gpucheckup read them: %s",
            gpu, subj, what);
        if (f)
            report_finding_add_evidence(f, "nvmlDeviceGetNvLinkErrorCounter", "read twice, a few milliseconds apart");
    }
}

void cuda_nvml_nvlink_check(struct probe_ctx *ctx, json_object *devs)
{
    size_t n = devs && json_object_is_type(devs, json_type_array) ? json_object_array_length(devs) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(devs, i), *links = jsonget(d, "nvlink");
        if (!links)
            continue;
        char *subj = nvml_subject(d);
        const char *name = jsonget_str(d, "name");
        nvlink_check_errors(ctx, d, subj, name ? name : "the GPU");
        /* The most active links another GPU of the same model has: links that model has and this one lost.
         * One GPU alone, or a model whose links are unused (no bridge), is compared with nothing. */
        char down[256];
        size_t mine = nvlink_active(links, down, sizeof(down)), best = 0;
        json_object *peer = NULL;
        for (size_t k = 0; name && k < n; k++) {
            json_object *e = json_object_array_get_idx(devs, k);
            const char *en = jsonget_str(e, "name");
            size_t a = k != i && en && strcmp(en, name) == 0 ? nvlink_active(jsonget(e, "nvlink"), NULL, 0) : 0;
            if (a > best) {
                best = a;
                peer = e;
            }
        }
        if (best > mine) {
            char *ps = nvml_subject(peer);
            struct report_finding *f = report_add_finding(
                ctx->report, "cuda.nvlink-inactive", subj,
                "%s (%s) has %zu active NVLink%s where %s of the same model has %zu: inactive link%s %s", name, subj,
                mine, mine == 1 ? "" : "s", ps, best, strchr(down, ',') ? "s" : "", down[0] ? down : "(none listed)");
            if (f)
                report_finding_add_evidence(f, "nvmlDeviceGetNvLinkState", "%zu of %zu links active", mine,
                                            json_object_array_length(links));
            free(ps);
        }
        free(subj);
    }
}

void cuda_nvml_nvlink_text(json_object *d, FILE *f)
{
    json_object *links = jsonget(d, "nvlink");
    if (!links)
        return;
    char down[256];
    size_t n = json_object_array_length(links), on = nvlink_active(links, down, sizeof(down));
    fprintf(f, "      NVLink: %zu of %zu links active%s%s\n", on, n, down[0] ? ", inactive: " : "", down);
}
