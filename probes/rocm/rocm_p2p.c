/* rocm_p2p.c: the HIP peer check: every ordered pair of AMD GPUs that passed the HIP smoke test copies a pattern peer to peer, verified exactly. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "isolate.h"
#include "jsonget.h"
#include "jsonnum.h"
#include "jsonstr.h"
#include "peer_check.h"
#include "rocm_internal.h"

/* 8 MiB per buffer, as the CUDA peer check copies: a bandwidth figure on PCIe and xGMI, small for any GPU. */
#define ROCM_P2P_BYTES (8u << 20)
#define ROCM_P2P_MAX_GPUS 16
#define ROCM_P2P_MAX_PAIRS (ROCM_P2P_MAX_GPUS * (ROCM_P2P_MAX_GPUS - 1))
/* Copies timed per pair: the figure is their median (the first pays for setting up the peer mapping). */
#define ROCM_P2P_COPIES 3
/* hipErrorPeerAccessAlreadyEnabled (hip_runtime_api.h, ROCm 5 to 7) */
#define ROCM_HIP_PEER_ALREADY_ENABLED 704

/* About ordered GPU pairs (the subject "A->B", or "pair" evidence): ACS on a bridge between them is their
 * cause where the topology probe found it (doctor_peers.c), as for the CUDA peer check's findings. */
#define ROCM_P2P_LAYER (CHECK_LAYER_RUNTIME | CHECK_F_PEER_PAIR)

const struct check rocm_p2p_checks[] = {
    {"rocm.p2p-corrupt", REPORT_SEV_ERROR, "Two AMD GPUs claim peer access but a HIP peer-to-peer copy between them came back wrong",
     "Do not run multi-GPU jobs (RCCL) across this pair. Check `dmesg` for amdgpu and AER errors, the PCIe switch and "
     "the IOMMU/ACS settings (gpucheckup topology), and set NCCL_P2P_DISABLE=1 (RCCL reads it) as a stopgap.",
     ROCM_P2P_LAYER},
    {"rocm.p2p-hang", REPORT_SEV_ERROR, "A HIP peer-to-peer copy between two AMD GPUs did not finish in time",
     "This is how an RCCL all-reduce hangs: ACS redirection or an IOMMU in translated mode on the path between the "
     "GPUs (see gpucheckup topology; AMD recommends iommu=pt), or a broken xGMI link. Check `dmesg` for amdgpu/AER "
     "errors; NCCL_P2P_DISABLE=1 is a stopgap.", ROCM_P2P_LAYER},
    {"rocm.p2p-failed", REPORT_SEV_ERROR, "A HIP call of the peer check failed between two AMD GPUs",
     "The evidence names the call and its hipError_t; check `dmesg` for amdgpu errors.", ROCM_P2P_LAYER},
    {"rocm.p2p-unsupported", REPORT_SEV_INFO, "The HIP runtime says two AMD GPUs cannot access each other's memory",
     "Their traffic goes through host memory (RCCL falls back to it): slower, not broken. Common on consumer GPUs, "
     "across CPU sockets, without large BAR, and where ACS or the IOMMU redirects peer traffic (gpucheckup topology).",
     ROCM_P2P_LAYER},
};
const size_t rocm_p2p_n_checks = sizeof(rocm_p2p_checks) / sizeof(rocm_p2p_checks[0]);

/* Shared with the parent (an anonymous shared mapping): each device's PCI address, the pair in flight and
 * each finished pair's outcome, so that a child killed at the deadline still tells what it had found. */
struct rp_shared {
    char bus[ROCM_P2P_MAX_GPUS][16]; /* hipDeviceGetPCIBusId's answer, "" when none */
    int from, to;                    /* the pair in flight, -1 when none */
    unsigned n_done;
    struct {
        int from, to;
        char status[16];
        double gbps; /* NAN: none */
    } done[ROCM_P2P_MAX_PAIRS];
};

struct rp_args {
    int ordinals[ROCM_P2P_MAX_GPUS];
    size_t n;
    struct rp_shared *sh; /* or NULL */
};

/* Our own declarations of the HIP calls used (hip_runtime_api.h; every call returns an int hipError_t). */
struct rp_api {
    int (*setDevice)(int);
    int (*malloc_)(void **, size_t);
    int (*memcpy_)(void *, const void *, size_t, int);
    int (*memset_)(void *, int, size_t);
    int (*deviceSynchronize)(void);
    int (*canAccessPeer)(int *, int, int);
    int (*enablePeer)(int, unsigned);
    int (*disablePeer)(int);
    int (*memcpyPeer)(void *, int, const void *, int, size_t);
    int (*busId)(char *, int, int);
    const char *(*errorName)(int);
};

/* ---- the child ----------------------------------------------------------------------------------- */

static const char *rp_load(struct rp_api *a)
{
    static const char *const hips[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
    void *h = NULL;
    for (size_t i = 0; !h && i < sizeof(hips) / sizeof(hips[0]); i++)
        h = dlopen(hips[i], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return "libamdhip64";
    const struct {
        const char *name;
        void **slot;
    } t[] = {
        {"hipSetDevice", (void **)&a->setDevice}, {"hipMalloc", (void **)&a->malloc_}, {"hipMemcpy", (void **)&a->memcpy_},
        {"hipMemset", (void **)&a->memset_}, {"hipDeviceSynchronize", (void **)&a->deviceSynchronize},
        {"hipDeviceCanAccessPeer", (void **)&a->canAccessPeer}, {"hipDeviceEnablePeerAccess", (void **)&a->enablePeer},
        {"hipMemcpyPeer", (void **)&a->memcpyPeer},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (!(*t[i].slot = dlsym(h, t[i].name)))
            return t[i].name;
    a->disablePeer = (int (*)(int))dlsym(h, "hipDeviceDisablePeerAccess");
    a->busId = (int (*)(char *, int, int))dlsym(h, "hipDeviceGetPCIBusId");
    a->errorName = (const char *(*)(int))dlsym(h, "hipGetErrorName");
    return NULL;
}

static json_object *rp_fail(const struct rp_api *api, json_object *p, const char *call, int rc)
{
    const char *name = api->errorName ? api->errorName(rc) : NULL;
    json_object_object_add(p, "status", json_object_new_string("failed"));
    json_object_object_add(p, "failed_call", json_object_new_string(call));
    json_object_object_add(p, "error_code", json_object_new_int(rc));
    json_object_object_add(p, "error_name", jsonstr_sanitized(name));
    return p;
}

static int rp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The pattern on A, the destination on B cleared, ROCM_P2P_COPIES timed hipMemcpyPeer, read back and compared.
 * BUF: each device's buffer. */
static json_object *rp_copy(const struct rp_api *api, void *const *buf, int oa, int ob, size_t ia, size_t ib,
                            uint32_t *host, uint32_t *back, json_object *p)
{
    size_t nw = ROCM_P2P_BYTES / sizeof(uint32_t);
    uint32_t seed = (uint32_t)(oa * 131 + ob * 7 + 1) * 2654435761u;
    for (size_t i = 0; i < nw; i++)
        host[i] = seed ^ (uint32_t)(i * 2246822519u);
    int rc;
    if ((rc = api->setDevice(oa)) != 0 || (rc = api->memcpy_(buf[ia], host, ROCM_P2P_BYTES, 1)) != 0)
        return rp_fail(api, p, "hipMemcpy", rc);
    if ((rc = api->setDevice(ob)) != 0 || (rc = api->memset_(buf[ib], 0x5a, ROCM_P2P_BYTES)) != 0 ||
        (rc = api->deviceSynchronize()) != 0)
        return rp_fail(api, p, "hipMemset", rc);
    if ((rc = api->setDevice(oa)) != 0)
        return rp_fail(api, p, "hipSetDevice", rc);
    double ms[ROCM_P2P_COPIES];
    for (int k = 0; k < ROCM_P2P_COPIES; k++) {
        double t0 = jsonnum_now_ms();
        if ((rc = api->memcpyPeer(buf[ib], ob, buf[ia], oa, ROCM_P2P_BYTES)) != 0)
            return rp_fail(api, p, "hipMemcpyPeer", rc);
        /* to its completion on both GPUs (the copy may run on either's engines) */
        if ((rc = api->deviceSynchronize()) != 0 || (rc = api->setDevice(ob)) != 0 || (rc = api->deviceSynchronize()) != 0 ||
            (rc = api->setDevice(oa)) != 0)
            return rp_fail(api, p, "hipDeviceSynchronize", rc);
        ms[k] = jsonnum_now_ms() - t0;
    }
    memset(back, 0, ROCM_P2P_BYTES);
    if ((rc = api->setDevice(ob)) != 0 || (rc = api->memcpy_(back, buf[ib], ROCM_P2P_BYTES, 2)) != 0)
        return rp_fail(api, p, "hipMemcpy", rc);
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < nw; i++)
        if (back[i] != host[i] && wrong++ == 0)
            first = i;
    json_object_object_add(p, "bytes", json_object_new_int64(ROCM_P2P_BYTES));
    json_object_object_add(p, "wrong_words", json_object_new_int64((int64_t)wrong));
    if (wrong) {
        json_object_object_add(p, "first_wrong_offset", json_object_new_int64((int64_t)(first * sizeof(uint32_t))));
        json_object_object_add(p, "status", json_object_new_string("corrupt"));
        return p;
    }
    qsort(ms, ROCM_P2P_COPIES, sizeof(ms[0]), rp_cmp_double);
    double med = ms[ROCM_P2P_COPIES / 2];
    json_object_object_add(p, "ms", jsonnum_ms(med));
    /* A copy faster than the host clock can tell gives no figure rather than an infinite one. */
    json_object_object_add(p, "bandwidth_gbps", med > 0.001 ? jsonnum_sig(ROCM_P2P_BYTES / (med * 1e6), 4) : NULL);
    json_object_object_add(p, "status", json_object_new_string("pass"));
    return p;
}

/* One ordered pair, device index IA -> IB (ordinals OA -> OB). */
static json_object *rp_pair(const struct rp_api *api, void *const *buf, int oa, int ob, size_t ia, size_t ib,
                            uint32_t *host, uint32_t *back)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "from", json_object_new_int(oa));
    json_object_object_add(p, "to", json_object_new_int(ob));
    if (!buf[ia] || !buf[ib])
        return rp_fail(api, p, "hipMalloc", -1);
    int can = 0, rc = api->canAccessPeer(&can, oa, ob);
    if (rc != 0)
        return rp_fail(api, p, "hipDeviceCanAccessPeer", rc);
    json_object_object_add(p, "can_access_peer", json_object_new_boolean(can != 0));
    if (!can) {
        json_object_object_add(p, "status", json_object_new_string("unsupported"));
        return p;
    }
    if ((rc = api->setDevice(oa)) == 0 && (rc = api->enablePeer(ob, 0)) == ROCM_HIP_PEER_ALREADY_ENABLED)
        rc = 0;
    if (rc != 0)
        return rp_fail(api, p, "hipDeviceEnablePeerAccess", rc);
    rp_copy(api, buf, oa, ob, ia, ib, host, back, p);
    /* One peer mapping at a time, as a job enables only the ones it uses. */
    if (api->disablePeer && api->setDevice(oa) == 0)
        api->disablePeer(ob);
    return p;
}

static void rp_record(struct rp_shared *sh, json_object *p)
{
    if (!sh || sh->n_done >= ROCM_P2P_MAX_PAIRS)
        return;
    unsigned k = sh->n_done;
    json_object *bw = jsonget(p, "bandwidth_gbps");
    sh->done[k].from = (int)jsonget_int(p, "from", -1);
    sh->done[k].to = (int)jsonget_int(p, "to", -1);
    snprintf(sh->done[k].status, sizeof(sh->done[k].status), "%s", jsonget_str(p, "status"));
    sh->done[k].gbps = bw ? json_object_get_double(bw) : NAN;
    sh->n_done = k + 1;
}

static json_object *rp_child(void *arg)
{
    const struct rp_args *a = arg;
    json_object *out = json_object_new_object(), *pairs = json_object_new_array();
    json_object_object_add(out, "pairs", pairs);
    struct rp_api api;
    memset(&api, 0, sizeof(api));
    const char *missing = rp_load(&api);
    if (missing) {
        json_object_object_add(out, "error", json_object_new_string(missing));
        return out;
    }
    void *buf[ROCM_P2P_MAX_GPUS] = {0};
    for (size_t i = 0; i < a->n; i++) {
        char bus[64] = "";
        if (a->sh && api.busId && api.busId(bus, (int)sizeof(bus), a->ordinals[i]) == 0)
            snprintf(a->sh->bus[i], sizeof(a->sh->bus[i]), "%.15s", bus);
        if (api.setDevice(a->ordinals[i]) != 0 || api.malloc_(&buf[i], ROCM_P2P_BYTES) != 0)
            buf[i] = NULL;
    }
    uint32_t *host = malloc(ROCM_P2P_BYTES), *back = malloc(ROCM_P2P_BYTES);
    for (size_t i = 0; host && back && i < a->n; i++)
        for (size_t j = 0; j < a->n; j++) {
            if (i == j)
                continue;
            if (a->sh) {
                a->sh->from = a->ordinals[i];
                a->sh->to = a->ordinals[j];
            }
            json_object *p = rp_pair(&api, buf, a->ordinals[i], a->ordinals[j], i, j, host, back);
            json_object_array_add(pairs, p);
            rp_record(a->sh, p);
        }
    if (a->sh)
        a->sh->from = a->sh->to = -1;
    free(host);
    free(back);
    /* Device buffers go with the child. */
    return out;
}

/* ---- the parent: run ----------------------------------------------------------------------------- */

static json_object *rp_not_run(json_object *o, const char *why)
{
    json_object_object_add(o, "pairs", json_object_new_array());
    json_object_object_add(o, "not_run", json_object_new_string(why));
    return o;
}

/* The PCI address of the HIP device with ordinal ORD: hipDeviceGetPCIBusId's (SH), else the ORD-th GPU
 * agent's (HIP numbers the GPU agents ROCr shows in their order), or NULL. */
static const char *rp_bus(const struct rp_shared *sh, const struct rp_args *a, json_object *agents, int ord)
{
    for (size_t i = 0; sh && i < a->n; i++)
        if (a->ordinals[i] == ord && sh->bus[i][0])
            return sh->bus[i];
    for (size_t j = 0, g = 0; agents && j < json_object_array_length(agents); j++) {
        json_object *ag = json_object_array_get_idx(agents, j);
        const char *t = jsonget_str(ag, "device_type");
        if (t && strcmp(t, "gpu") == 0 && (int)g++ == ord)
            return jsonget_str(ag, "pci_address");
    }
    return NULL;
}

/* The pairs a killed child had finished, from the shared page, and the one in flight (STATUS hang|crash). */
static void rp_from_shared(const struct rp_shared *sh, json_object *pairs, const char *status)
{
    static const char *const known[] = {"pass", "unsupported", "corrupt", "failed"};
    unsigned n = sh->n_done < ROCM_P2P_MAX_PAIRS ? sh->n_done : ROCM_P2P_MAX_PAIRS;
    for (unsigned i = 0; i < n; i++) {
        const char *st = NULL;
        for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
            if (strncmp(sh->done[i].status, known[k], sizeof(sh->done[i].status)) == 0)
                st = known[k];
        if (!st)
            continue;
        json_object *p = json_object_new_object();
        json_object_object_add(p, "from", json_object_new_int(sh->done[i].from));
        json_object_object_add(p, "to", json_object_new_int(sh->done[i].to));
        json_object_object_add(p, "status", json_object_new_string(st));
        if (isfinite(sh->done[i].gbps) && sh->done[i].gbps >= 0)
            json_object_object_add(p, "bandwidth_gbps", jsonnum_sig(sh->done[i].gbps, 4));
        json_object_array_add(pairs, p);
    }
    json_object *p = json_object_new_object();
    bool named = sh->from >= 0 && sh->to >= 0;
    json_object_object_add(p, "from", named ? json_object_new_int(sh->from) : NULL);
    json_object_object_add(p, "to", named ? json_object_new_int(sh->to) : NULL);
    json_object_object_add(p, "status", json_object_new_string(status));
    json_object_array_add(pairs, p);
}

static const struct jsonstr_limits rp_limits = {.depth = 4, .string = 256, .items = ROCM_P2P_MAX_PAIRS, .key = SIZE_MAX};

json_object *rocm_p2p_run(struct probe_ctx *ctx, json_object *data)
{
    json_object *o = json_object_new_object(), *devs = jsonget(jsonget(data, "smoke"), "devices");
    json_object *agents = jsonget(jsonget(jsonget(data, "runtime"), "hsa"), "agents");
    struct rp_args args;
    memset(&args, 0, sizeof(args));
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *e = json_object_array_get_idx(devs, i);
        const char *st = jsonget_str(e, "status");
        if (st && strcmp(st, "pass") == 0 && args.n < ROCM_P2P_MAX_GPUS)
            args.ordinals[args.n++] = (int)jsonget_int(e, "ordinal", (int64_t)i);
    }
    const char *smoke_not_run = jsonget_str(jsonget(data, "smoke"), "not_run");
    if (args.n < 2 && smoke_not_run) {
        char why[160];
        snprintf(why, sizeof(why), "the HIP smoke test did not run: %s", smoke_not_run);
        return rp_not_run(o, why);
    }
    if (args.n < 2)
        return rp_not_run(o, "fewer than two GPUs passed the HIP smoke test");
    if (probe_budget_ms(ctx) <= 0)
        return rp_not_run(o, "the run's --timeout was already spent");
    void *shared = mmap(NULL, sizeof(struct rp_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    args.sh = shared == MAP_FAILED ? NULL : shared; /* zero-filled */
    if (args.sh)
        args.sh->from = args.sh->to = -1;
    struct isolate_result res;
    memset(&res, 0, sizeof(res));
    probe_isolate_run(ctx, rp_child, &args, &res);
    json_object *v = res.status == ISOLATE_OK ? jsonstr_clean_copy(res.value, &rp_limits) : NULL;
    json_object *pairs = v ? json_object_get(jsonget(v, "pairs")) : NULL;
    if (!pairs || !json_object_is_type(pairs, json_type_array)) {
        json_object_put(pairs);
        pairs = json_object_new_array();
    }
    if (res.status != ISOLATE_OK && args.sh)
        rp_from_shared(args.sh, pairs, res.status == ISOLATE_TIMEOUT ? "hang" : "crash");
    json_object_object_add(o, "pairs", pairs);
    json_object *bus = json_object_new_array();
    for (size_t i = 0; i < args.n; i++) {
        json_object *d = json_object_new_object();
        json_object_object_add(d, "ordinal", json_object_new_int(args.ordinals[i]));
        json_object_object_add(d, "pci_bus_id", jsonstr_or_null(rp_bus(args.sh, &args, agents, args.ordinals[i])));
        json_object_array_add(bus, d);
    }
    json_object_object_add(o, "devices", bus);
    const char *err = jsonget_str(v, "error");
    json_object_object_add(o, "error", jsonstr_or_null(err));
    json_object_object_add(o, "detail", res.status == ISOLATE_OK ? NULL : jsonstr_sanitized(res.detail));
    json_object_put(v);
    isolate_result_clear(&res);
    if (shared != MAP_FAILED)
        munmap(shared, sizeof(struct rp_shared));
    return o;
}

/* ---- the parent: findings and summary lines ------------------------------------------------------- */

/* One side (KEY "from" or "to") of pair P of P2P in SIDE: its PCI address from the devices, else "hip:N". */
static void rp_side(json_object *p2p, json_object *p, const char *key, char side[40])
{
    int ord = (int)jsonget_int(p, key, -1);
    const char *addr = NULL;
    json_object *devs = jsonget(p2p, "devices");
    for (size_t i = 0; devs && json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs); i++) {
        json_object *d = json_object_array_get_idx(devs, i);
        if (jsonget_int(d, "ordinal", -2) == ord)
            addr = jsonget_str(d, "pci_bus_id");
    }
    if (addr)
        snprintf(side, 40, "%s", addr);
    else if (ord >= 0)
        snprintf(side, 40, "hip:%d", ord);
    else
        snprintf(side, 40, "?");
}

/* "A->B" for pair P of P2P (PCI addresses from its devices, else "hip:N") in BUF. */
static const char *rp_subject(json_object *p2p, json_object *p, char *buf, size_t len)
{
    char side[2][40];
    rp_side(p2p, p, "from", side[0]);
    rp_side(p2p, p, "to", side[1]);
    snprintf(buf, len, "%s->%s", side[0], side[1]);
    return buf;
}

/* The Prometheus series of a pair P that passed with bandwidth BW, appended to the section's generic
 * "metrics" list (the CUDA peer check's family: one name, from/to by PCI address). */
static void rp_metric(struct report_section *sec, json_object *p2p, json_object *p, double bw)
{
    json_object *metrics = jsonget(sec->data, "metrics");
    if (!metrics) {
        metrics = json_object_new_array();
        if (!metrics || json_object_object_add(sec->data, "metrics", metrics) != 0) {
            json_object_put(metrics);
            return;
        }
    }
    if (!json_object_is_type(metrics, json_type_array))
        return;
    char a[40], b[40];
    rp_side(p2p, p, "from", a);
    rp_side(p2p, p, "to", b);
    json_object *m = json_object_new_object(), *lab = json_object_new_object();
    json_object_object_add(m, "name", json_object_new_string("p2p_bandwidth_gbps"));
    json_object_object_add(m, "help", json_object_new_string(PEER_CHECK_METRIC_HELP));
    json_object_object_add(lab, "from", json_object_new_string(a));
    json_object_object_add(lab, "to", json_object_new_string(b));
    json_object_object_add(m, "labels", lab);
    json_object_object_add(m, "value", json_object_new_double(bw));
    json_object_array_add(metrics, m);
}

static bool rp_is(json_object *p, const char *status)
{
    const char *st = jsonget_str(p, "status");
    return st && strcmp(st, status) == 0;
}

/* One finding and line for a pair that did not pass (nor lacked access). */
static void rp_report_bad(struct probe_ctx *ctx, struct report_section *sec, json_object *p2p, json_object *p)
{
    char subject[96], label[120];
    rp_subject(p2p, p, subject, sizeof(subject));
    snprintf(label, sizeof(label), "ROCm P2P %s", subject);
    const char *st = jsonget_str(p, "status"), *det = jsonget_str(p2p, "detail");
    if (rp_is(p, "corrupt")) {
        struct report_finding *f = report_add_finding(
            ctx->report, "rocm.p2p-corrupt", subject, "A HIP peer-to-peer copy %s came back wrong: %lld of %lld words differ",
            subject, (long long)jsonget_int(p, "wrong_words", -1), (long long)(ROCM_P2P_BYTES / sizeof(uint32_t)));
        if (f)
            report_finding_add_evidence(f, "first wrong byte offset", "%lld", (long long)jsonget_int(p, "first_wrong_offset", -1));
        report_section_add_line(sec, REPORT_MARK_ERROR, label, "the peer copy came back wrong");
    } else if (rp_is(p, "hang") || rp_is(p, "crash")) {
        bool hang = rp_is(p, "hang");
        report_add_finding(ctx->report, hang ? "rocm.p2p-hang" : "rocm.p2p-failed", subject,
                           "The HIP peer check %s while copying %s: %s", hang ? "did not finish in time" : "ended abnormally",
                           subject, det ? det : "no detail");
        report_section_add_line(sec, REPORT_MARK_ERROR, label, "%s", hang ? "hang" : "crash");
    } else {
        const char *call = jsonget_str(p, "failed_call"), *name = jsonget_str(p, "error_name");
        report_add_finding(ctx->report, "rocm.p2p-failed", subject, "The HIP peer check %s failed: %s returned %s (%lld)",
                           subject, call ? call : "a call", name ? name : "an error", (long long)jsonget_int(p, "error_code", -1));
        report_section_add_line(sec, REPORT_MARK_ERROR, label, "a peer-check call failed%s%s", st ? ": " : "", st ? st : "");
    }
}

/* One information finding and line for every pair without peer access (a node of consumer GPUs has many:
 * one each would bury the rest); its subject is the pair when there is one, else each pair is evidence. */
static void rp_unsupported(struct probe_ctx *ctx, struct report_section *sec, json_object *p2p, json_object *pairs)
{
    size_t n = json_object_array_length(pairs), k = 0;
    char list[512] = "", first[96] = "";
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(pairs, i);
        char pair[96];
        if (!rp_is(p, "unsupported"))
            continue;
        rp_subject(p2p, p, pair, sizeof(pair));
        if (k++ == 0)
            snprintf(first, sizeof(first), "%s", pair);
        size_t used = strlen(list);
        if (k <= 8)
            snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", pair);
        else if (k == 9)
            snprintf(list + used, sizeof(list) - used, ", ...");
    }
    if (k == 0)
        return;
    struct report_finding *f = report_add_finding(ctx->report, "rocm.p2p-unsupported", k == 1 ? first : NULL,
                                                  "The HIP runtime says %zu of %zu GPU pair%s cannot access each other's "
                                                  "memory (hipDeviceCanAccessPeer: 0): %s", k, n, n == 1 ? "" : "s", list);
    for (size_t i = 0; f && k > 1 && i < n; i++) {
        json_object *p = json_object_array_get_idx(pairs, i);
        char pair[96];
        if (rp_is(p, "unsupported"))
            report_finding_add_evidence(f, "pair", "%s", rp_subject(p2p, p, pair, sizeof(pair)));
    }
    report_section_add_line(sec, REPORT_MARK_INFO, "ROCm P2P access", "%zu of %zu GPU pairs without peer access: %s", k, n, list);
}

void rocm_p2p_report(struct probe_ctx *ctx, struct report_section *sec, json_object *p2p)
{
    json_object *pairs = jsonget(p2p, "pairs");
    if (!pairs || !json_object_is_type(pairs, json_type_array))
        return;
    size_t n = json_object_array_length(pairs), ok = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(pairs, i), *bw = jsonget(p, "bandwidth_gbps");
        if (rp_is(p, "unsupported"))
            continue;
        if (!rp_is(p, "pass")) {
            rp_report_bad(ctx, sec, p2p, p);
            continue;
        }
        ok++;
        if (bw && (json_object_is_type(bw, json_type_double) || json_object_is_type(bw, json_type_int))) {
            lo = fmin(lo, json_object_get_double(bw));
            hi = fmax(hi, json_object_get_double(bw));
            rp_metric(sec, p2p, p, json_object_get_double(bw));
        }
    }
    const char *err = jsonget_str(p2p, "error");
    if (err && n == 0)
        report_add_finding(ctx->report, "rocm.p2p-failed", NULL, "The HIP peer check cannot run: %s is missing", err);
    if (ok > 0) {
        char speed[64] = "";
        if (isfinite(lo) && hi - lo < 0.05)
            snprintf(speed, sizeof(speed), ", %.1f GB/s", lo);
        else if (isfinite(lo))
            snprintf(speed, sizeof(speed), ", %.1f-%.1f GB/s", lo, hi);
        report_section_add_line(sec, REPORT_MARK_OK, "ROCm P2P", "%zu of %zu GPU pair%s copied 8 MiB peer to peer, verified%s",
                                ok, n, n == 1 ? "" : "s", speed);
    }
    rp_unsupported(ctx, sec, p2p, pairs);
}
