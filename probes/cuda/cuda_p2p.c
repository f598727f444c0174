/* cuda_p2p.c: the CUDA peer check: every ordered pair of GPUs that passed the smoke test copies a pattern peer to peer, verified exactly. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cuda_api.h"
#include "cuda_internal.h"
#include "jsonget.h"
#include "peer_check.h"
#include "jsonnum.h"
#include "results/result_cuda.h"
#include "strutil.h"

/* 8 MiB per buffer: enough for a bandwidth figure on PCIe and NVLink, small enough for any GPU and deadline. */
#define CUDA_P2P_BYTES (8u << 20)
#define CUDA_P2P_STAGE_MAX 128
#define CUDA_P2P_MAX_GPUS 16

/* About ordered GPU pairs (the subject "A->B", or "pair" evidence): ACS on a bridge between them is their
 * cause where the topology probe found it (doctor_peers.c). */
#define CUDA_P2P_LAYER (CHECK_LAYER_RUNTIME | CHECK_F_PEER_PAIR)

const struct check cuda_p2p_checks[] = {
    {"cuda.p2p-corrupt", REPORT_SEV_ERROR, "Two GPUs claim peer access but a peer-to-peer copy between them came back wrong",
     "Do not run multi-GPU jobs (NCCL) across this pair. Check `dmesg` for Xid and AER errors, the PCIe switch and "
     "the IOMMU/ACS settings (gpucheckup topology), and set NCCL_P2P_DISABLE=1 as a stopgap.", CUDA_P2P_LAYER},
    {"cuda.p2p-hang", REPORT_SEV_ERROR, "A peer-to-peer copy between two GPUs did not finish in time",
     "This is how ncclAllReduce hangs: ACS redirection or an IOMMU in translated mode on the path between the GPUs "
     "(see gpucheckup topology), or a broken NVLink. Check `dmesg` for Xid/AER errors; NCCL_P2P_DISABLE=1 is a "
     "stopgap.", CUDA_P2P_LAYER},
    {"cuda.p2p-failed", REPORT_SEV_ERROR, "A CUDA driver call of the peer check failed between two GPUs",
     "The evidence names the call and its CUresult; check `dmesg` for Xid errors.", CUDA_P2P_LAYER},
    {"cuda.p2p-unsupported", REPORT_SEV_INFO, "The CUDA driver says two GPUs cannot access each other's memory",
     "Their traffic goes through host memory (NCCL falls back to SHM or sockets): slower, not broken. Common on "
     "consumer GPUs, across CPU sockets, and where ACS or the IOMMU redirects peer traffic (gpucheckup topology).",
     CUDA_P2P_LAYER},
};
const size_t cuda_p2p_n_checks = sizeof(cuda_p2p_checks) / sizeof(cuda_p2p_checks[0]);

#define CUDA_P2P_MAX_PAIRS (CUDA_P2P_MAX_GPUS * (CUDA_P2P_MAX_GPUS - 1))

/* Shared with the parent (an anonymous shared mapping): the pair in flight, and each finished pair's
 * outcome, so that a child killed at the deadline still tells what it had found. */
struct cp_shared {
    char stage[CUDA_P2P_STAGE_MAX]; /* "A B": copying from ordinal A to B; "done" at the end */
    unsigned n_done;
    struct {
        int from, to;
        char status[16];
        double gbps; /* NAN: none */
    } done[CUDA_P2P_MAX_PAIRS];
};

struct cuda_p2p_args {
    int ordinals[CUDA_P2P_MAX_GPUS];
    size_t n;
    struct cp_shared *sh; /* or NULL */
};

/* ---- the child ----------------------------------------------------------------------------------- */

struct cp_dev {
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr buf;
    bool ok;
};

static json_object *cp_pair_fail(json_object *p, const char *status, const char *call, CUresult res)
{
    json_object_object_add(p, "status", json_object_new_string(status));
    json_object_object_add(p, "failed_call", json_object_new_string(call));
    json_object_object_add(p, "result", json_object_new_int(res));
    const char *name = cuda_result_name(res);
    json_object_object_add(p, "result_name", name ? json_object_new_string(name) : NULL);
    return p;
}

/* A -> B: pattern on A, poison on B, cuMemcpyPeer, read back from B and compare. */
static json_object *cp_pair(const struct cuda_api *api, struct cp_dev *a, struct cp_dev *b, int oa, int ob,
                            uint32_t *host, uint32_t *back)
{
    json_object *p = json_object_new_object();
    json_object_object_add(p, "from", json_object_new_int(oa));
    json_object_object_add(p, "to", json_object_new_int(ob));
    int can = 0;
    CUresult res = api->cuDeviceCanAccessPeer(&can, a->dev, b->dev);
    if (res != CUDA_SUCCESS)
        return cp_pair_fail(p, "failed", "cuDeviceCanAccessPeer", res);
    json_object_object_add(p, "can_access_peer", json_object_new_boolean(can != 0));
    if (!can) {
        json_object_object_add(p, "status", json_object_new_string("unsupported"));
        return p;
    }
    res = api->cuCtxSetCurrent(a->ctx);
    if (res == CUDA_SUCCESS) {
        res = api->cuCtxEnablePeerAccess(b->ctx, 0);
        if (res == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            res = CUDA_SUCCESS;
    }
    if (res != CUDA_SUCCESS)
        return cp_pair_fail(p, "failed", "cuCtxEnablePeerAccess", res);
    size_t nw = CUDA_P2P_BYTES / sizeof(uint32_t);
    uint32_t seed = (uint32_t)(oa * 131 + ob * 7 + 1) * 2654435761u;
    for (size_t i = 0; i < nw; i++)
        host[i] = seed ^ (uint32_t)(i * 2246822519u);
    if ((res = api->cuMemcpyHtoD(a->buf, host, CUDA_P2P_BYTES)) != CUDA_SUCCESS)
        return cp_pair_fail(p, "failed", "cuMemcpyHtoD", res);
    if ((res = api->cuCtxSetCurrent(b->ctx)) != CUDA_SUCCESS ||
        (res = api->cuMemsetD32(b->buf, 0x7FC0FFEEu, nw)) != CUDA_SUCCESS ||
        (res = api->cuCtxSynchronize()) != CUDA_SUCCESS)
        return cp_pair_fail(p, "failed", "cuMemsetD32", res);
    /* Two copies, each timed to its completion by the host clock: the first pays for setting up the peer
     * mapping, so the faster one is the figure; the buffer read back holds the last copy. */
    double ms = INFINITY;
    for (int k = 0; k < 2; k++) {
        double t0 = jsonnum_now_ms();
        res = api->cuMemcpyPeer(b->buf, b->ctx, a->buf, a->ctx, CUDA_P2P_BYTES);
        if (res == CUDA_SUCCESS)
            res = api->cuCtxSynchronize();
        if (res != CUDA_SUCCESS)
            return cp_pair_fail(p, "failed", "cuMemcpyPeer", res);
        ms = fmin(ms, jsonnum_now_ms() - t0);
    }
    memset(back, 0, CUDA_P2P_BYTES);
    if ((res = api->cuMemcpyDtoH(back, b->buf, CUDA_P2P_BYTES)) != CUDA_SUCCESS)
        return cp_pair_fail(p, "failed", "cuMemcpyDtoH", res);
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < nw; i++)
        if (back[i] != host[i] && wrong++ == 0)
            first = i;
    json_object_object_add(p, "bytes", json_object_new_int64(CUDA_P2P_BYTES));
    json_object_object_add(p, "wrong_words", json_object_new_int64((int64_t)wrong));
    if (wrong) {
        json_object_object_add(p, "first_wrong_offset", json_object_new_int64((int64_t)(first * sizeof(uint32_t))));
        json_object_object_add(p, "status", json_object_new_string("corrupt"));
        return p;
    }
    json_object_object_add(p, "ms", jsonnum_ms(ms));
    /* A copy faster than the host clock can tell gives no figure rather than an infinite one. */
    json_object_object_add(p, "bandwidth_gbps", ms > 0.001 ? jsonnum_sig(CUDA_P2P_BYTES / (ms * 1e6), 4) : NULL);
    json_object_object_add(p, "status", json_object_new_string("pass"));
    return p;
}

static void cp_run(const struct cuda_api *api, const struct cuda_p2p_args *a, json_object *pairs, json_object *out)
{
    struct cp_dev devs[CUDA_P2P_MAX_GPUS];
    memset(devs, 0, sizeof(devs));
    if (!api->cuDeviceCanAccessPeer || !api->cuCtxEnablePeerAccess || !api->cuMemcpyPeer || !cuda_api_has_compute(api)) {
        json_object_object_add(out, "error", json_object_new_string("libcuda lacks the peer functions"));
        return;
    }
    if (api->cuInit(0) != CUDA_SUCCESS) {
        json_object_object_add(out, "error", json_object_new_string("cuInit failed"));
        return;
    }
    for (size_t i = 0; i < a->n; i++) {
        struct cp_dev *d = &devs[i];
        d->ok = api->cuDeviceGet(&d->dev, a->ordinals[i]) == CUDA_SUCCESS &&
                api->cuDevicePrimaryCtxRetain(&d->ctx, d->dev) == CUDA_SUCCESS &&
                api->cuCtxSetCurrent(d->ctx) == CUDA_SUCCESS && api->cuMemAlloc(&d->buf, CUDA_P2P_BYTES) == CUDA_SUCCESS;
    }
    uint32_t *host = malloc(CUDA_P2P_BYTES), *back = malloc(CUDA_P2P_BYTES);
    for (size_t i = 0; host && back && i < a->n; i++)
        for (size_t j = 0; j < a->n; j++) {
            if (i == j)
                continue;
            if (a->sh)
                snprintf(a->sh->stage, CUDA_P2P_STAGE_MAX, "%d %d", a->ordinals[i], a->ordinals[j]);
            json_object *p;
            if (!devs[i].ok || !devs[j].ok) {
                p = json_object_new_object();
                json_object_object_add(p, "from", json_object_new_int(a->ordinals[i]));
                json_object_object_add(p, "to", json_object_new_int(a->ordinals[j]));
                cp_pair_fail(p, "failed", "cuMemAlloc", CUDA_ERROR_UNKNOWN);
            } else {
                p = cp_pair(api, &devs[i], &devs[j], a->ordinals[i], a->ordinals[j], host, back);
                /* One peer mapping at a time: a GPU maps only so many peers (CUDA_ERROR_TOO_MANY_PEERS on
                 * a 16-GPU node otherwise), and a job enables only the ones it uses. */
                if (api->cuCtxDisablePeerAccess && api->cuCtxSetCurrent(devs[i].ctx) == CUDA_SUCCESS)
                    api->cuCtxDisablePeerAccess(devs[j].ctx);
            }
            json_object_array_add(pairs, p);
            if (a->sh && a->sh->n_done < CUDA_P2P_MAX_PAIRS) {
                unsigned k = a->sh->n_done;
                json_object *bw = jsonget(p, "bandwidth_gbps");
                a->sh->done[k].from = a->ordinals[i];
                a->sh->done[k].to = a->ordinals[j];
                snprintf(a->sh->done[k].status, sizeof(a->sh->done[k].status), "%s", jsonget_str(p, "status"));
                a->sh->done[k].gbps = bw ? json_object_get_double(bw) : NAN;
                a->sh->n_done = k + 1;
            }
        }
    if (a->sh)
        snprintf(a->sh->stage, CUDA_P2P_STAGE_MAX, "done");
    free(host);
    free(back);
    /* Buffers and contexts go with the child. */
}

static json_object *cuda_p2p_child(void *arg)
{
    const struct cuda_p2p_args *a = arg;
    json_object *out = json_object_new_object(), *pairs = json_object_new_array();
    json_object_object_add(out, "pairs", pairs);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    struct cuda_api api;
    memset(&api, 0, sizeof(api));
    const char *missing = NULL;
    if (!h || cuda_api_load(h, &api, &missing) < 0)
        json_object_object_add(out, "error", json_object_new_string("libcuda.so.1 could not be loaded"));
    else
        cp_run(&api, a, pairs, out);
    return out;
}

/* ---- the parent ---------------------------------------------------------------------------------- */

static void cp_not_run(struct report_section *sec, const char *why)
{
    json_object *p2p = json_object_new_object();
    json_object_object_add(p2p, "pairs", json_object_new_array());
    json_object_object_add(p2p, "not_run", json_object_new_string(why));
    json_object_object_add(sec->data, "p2p", p2p);
    struct result_cuda *rc = result_cuda_of(sec);
    if (rc && !rc->p2p_not_run)
        rc->p2p_not_run = str_dup(why);
}

/* The PCI address of the GPU with ORDINAL (data.smoke), or "cuda:N". */
static void cp_subject(json_object *smoke, int ordinal, char *buf, size_t size)
{
    for (size_t i = 0; smoke && i < json_object_array_length(smoke); i++) {
        json_object *e = json_object_array_get_idx(smoke, i);
        const char *bus = jsonget_str(e, "pci_bus_id");
        if (jsonget_int(e, "ordinal", -1) == ordinal && bus) {
            snprintf(buf, size, "%s", bus);
            return;
        }
    }
    snprintf(buf, size, "cuda:%d", ordinal);
}

/* Findings, summary lines, the typed counts and the Prometheus series of one checked pair P. */
static void cp_report_pair(struct probe_ctx *ctx, struct report_section *sec, json_object *smoke, json_object *p,
                           json_object *metrics)
{
    int from = (int)jsonget_int(p, "from", -1), to = (int)jsonget_int(p, "to", -1);
    const char *st = jsonget_str(p, "status");
    char sa[40], sb[40], subject[96], label[120];
    cp_subject(smoke, from, sa, sizeof(sa));
    cp_subject(smoke, to, sb, sizeof(sb));
    snprintf(subject, sizeof(subject), "%s->%s", sa, sb);
    snprintf(label, sizeof(label), "CUDA P2P %s", subject);
    struct result_cuda *rc = result_cuda_of(sec);
    if (rc) {
        rc->p2p_pairs++;
        rc->p2p_passed += st && strcmp(st, "pass") == 0;
        if (!st || strcmp(st, "pass") != 0) {
            char fa[16], fb[16];
            snprintf(fa, sizeof(fa), "%d", from);
            snprintf(fb, sizeof(fb), "%d", to);
            peer_check_add_failing(rc->p2p_failing, sizeof(rc->p2p_failing), fa, fb);
        }
    }
    if (st && strcmp(st, "pass") == 0) {
        json_object *bw = jsonget(p, "bandwidth_gbps");
        /* a figure the child printed without a decimal point ("21") comes back as an int */
        if (bw && (json_object_is_type(bw, json_type_double) || json_object_is_type(bw, json_type_int))) {
            json_object *m = json_object_new_object(), *lab = json_object_new_object();
            json_object_object_add(m, "name", json_object_new_string("p2p_bandwidth_gbps"));
            json_object_object_add(m, "help", json_object_new_string(PEER_CHECK_METRIC_HELP));
            json_object_object_add(lab, "from", json_object_new_string(sa));
            json_object_object_add(lab, "to", json_object_new_string(sb));
            json_object_object_add(m, "labels", lab);
            json_object_object_add(m, "value", json_object_new_double(json_object_get_double(bw)));
            json_object_array_add(metrics, m);
        }
        return;
    }
    struct report_finding *f = NULL;
    if (st && strcmp(st, "unsupported") == 0)
        return; /* cp_unsupported: one finding for them all */
    if (st && strcmp(st, "corrupt") == 0) {
        f = report_add_finding(ctx->report, "cuda.p2p-corrupt", subject,
                               "A peer-to-peer copy from GPU %s to GPU %s came back wrong: %lld of %lld words differ",
                               sa, sb, (long long)jsonget_int(p, "wrong_words", -1),
                               (long long)(CUDA_P2P_BYTES / sizeof(uint32_t)));
        if (f)
            report_finding_add_evidence(f, "first wrong byte offset", "%lld",
                                        (long long)jsonget_int(p, "first_wrong_offset", -1));
    } else {
        const char *call = jsonget_str(p, "failed_call"), *rn = jsonget_str(p, "result_name");
        f = report_add_finding(ctx->report, "cuda.p2p-failed", subject, "The peer check from GPU %s to GPU %s failed: %s %s",
                               sa, sb, call ? call : "a call", rn ? rn : "failed");
    }
    report_section_add_line(sec, REPORT_MARK_ERROR, label, "%s",
                            st && strcmp(st, "corrupt") == 0 ? "the peer copy came back wrong" : "a peer-check call failed");
}

/* One information finding and line for every pair without peer access (a node of consumer GPUs has
 * many: one each would bury the rest). The subject is the pair when there is one. */
static void cp_unsupported(struct probe_ctx *ctx, struct report_section *sec, json_object *smoke, json_object *pairs)
{
    size_t n = json_object_array_length(pairs), k = 0;
    char list[512] = "", first[96] = "";
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(pairs, i);
        const char *st = jsonget_str(p, "status");
        if (!st || strcmp(st, "unsupported") != 0)
            continue;
        char sa[40], sb[40], pair[96];
        cp_subject(smoke, (int)jsonget_int(p, "from", -1), sa, sizeof(sa));
        cp_subject(smoke, (int)jsonget_int(p, "to", -1), sb, sizeof(sb));
        snprintf(pair, sizeof(pair), "%s->%s", sa, sb);
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
    struct report_finding *f = report_add_finding(ctx->report, "cuda.p2p-unsupported", k == 1 ? first : NULL,
                                                  "The CUDA driver says %zu of %zu GPU pair%s cannot access each "
                                                  "other's memory (cuDeviceCanAccessPeer: 0): %s",
                                                  k, n, n == 1 ? "" : "s", list);
    /* each pair, for the doctor to match against what stands between them (CHECK_F_PEER_PAIR) */
    for (size_t i = 0; f && k > 1 && i < n; i++) {
        json_object *p = json_object_array_get_idx(pairs, i);
        const char *st = jsonget_str(p, "status");
        char sa[40], sb[40];
        if (!st || strcmp(st, "unsupported") != 0)
            continue;
        cp_subject(smoke, (int)jsonget_int(p, "from", -1), sa, sizeof(sa));
        cp_subject(smoke, (int)jsonget_int(p, "to", -1), sb, sizeof(sb));
        report_finding_add_evidence(f, "pair", "%s->%s", sa, sb);
    }
    report_section_add_line(sec, REPORT_MARK_INFO, "CUDA P2P access", "%zu of %zu GPU pairs without peer access: %s",
                            k, n, list);
}

/* One line for the pairs that passed: how many, and the slowest and fastest copy. */
static void cp_summary(struct report_section *sec, json_object *pairs)
{
    size_t n = json_object_array_length(pairs), ok = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(pairs, i), *bw = jsonget(p, "bandwidth_gbps");
        const char *st = jsonget_str(p, "status");
        if (!st || strcmp(st, "pass") != 0)
            continue;
        ok++;
        /* a figure the child printed without a decimal point ("21") comes back as an int */
        if (bw && (json_object_is_type(bw, json_type_double) || json_object_is_type(bw, json_type_int))) {
            lo = fmin(lo, json_object_get_double(bw));
            hi = fmax(hi, json_object_get_double(bw));
        }
    }
    if (ok == 0)
        return;
    char speed[64] = "";
    if (isfinite(lo) && hi - lo < 0.05)
        snprintf(speed, sizeof(speed), ", %.1f GB/s", lo);
    else if (isfinite(lo))
        snprintf(speed, sizeof(speed), ", %.1f-%.1f GB/s", lo, hi);
    report_section_add_line(sec, REPORT_MARK_OK, "CUDA P2P", "%zu of %zu GPU pair%s copied 8 MiB peer to peer, verified%s",
                            ok, n, n == 1 ? "" : "s", speed);
}

/* A killed child's finished pairs, from the shared page (the child's JSON died with it). */
static void cp_from_shared(struct probe_ctx *ctx, struct report_section *sec, json_object *smoke,
                           const struct cp_shared *sh, json_object *pairs, json_object *metrics)
{
    unsigned n = sh->n_done < CUDA_P2P_MAX_PAIRS ? sh->n_done : CUDA_P2P_MAX_PAIRS;
    static const char *const known[] = {"pass", "unsupported", "corrupt", "failed"};
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
        cp_report_pair(ctx, sec, smoke, p, metrics);
    }
}

/* The pair named by the child's shared STAGE ("A B") when it was killed; false when none. */
static bool cp_hung_pair(const char *stage, int *a, int *b)
{
    return stage && sscanf(stage, "%d %d", a, b) == 2;
}

void cuda_p2p_run(struct probe_ctx *ctx, struct report_section *sec)
{
    json_object *smoke = jsonget(sec->data, "smoke");
    struct cuda_p2p_args args;
    memset(&args, 0, sizeof(args));
    for (size_t i = 0; smoke && json_object_is_type(smoke, json_type_array) && i < json_object_array_length(smoke); i++) {
        json_object *e = json_object_array_get_idx(smoke, i);
        const char *st = jsonget_str(e, "status");
        if (st && strcmp(st, "pass") == 0 && args.n < CUDA_P2P_MAX_GPUS)
            args.ordinals[args.n++] = (int)jsonget_int(e, "ordinal", (int64_t)i);
    }
    if (args.n < 2) {
        cp_not_run(sec, "fewer than two GPUs passed the CUDA smoke test");
        return;
    }
    if (probe_budget_ms(ctx) <= 0) {
        cp_not_run(sec, "the run's --timeout was already spent");
        return;
    }
    void *shared = mmap(NULL, sizeof(struct cp_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    args.sh = shared == MAP_FAILED ? NULL : shared; /* zero-filled */
    struct isolate_job job = {.fn = cuda_p2p_child, .arg = &args};
    probe_isolate_many(ctx, &job, 1);
    json_object *p2p = json_object_new_object(), *pairs = json_object_new_array(), *metrics = json_object_new_array();
    json_object *v = job.result.status == ISOLATE_OK ? job.result.value : NULL, *got = jsonget(v, "pairs");
    for (size_t i = 0; got && json_object_is_type(got, json_type_array) && i < json_object_array_length(got); i++) {
        json_object *p = json_object_array_get_idx(got, i);
        json_object_array_add(pairs, json_object_get(p));
        cp_report_pair(ctx, sec, smoke, p, metrics);
    }
    int ha = -1, hb = -1;
    if (job.result.status != ISOLATE_OK && args.sh)
        cp_from_shared(ctx, sec, smoke, args.sh, pairs, metrics);
    if (job.result.status != ISOLATE_OK) {
        char sa[40] = "?", sb[40] = "?", subject[96];
        bool named = args.sh && cp_hung_pair(args.sh->stage, &ha, &hb);
        if (named) {
            cp_subject(smoke, ha, sa, sizeof(sa));
            cp_subject(smoke, hb, sb, sizeof(sb));
        }
        snprintf(subject, sizeof(subject), "%s->%s", sa, sb);
        bool timeout = job.result.status == ISOLATE_TIMEOUT;
        report_add_finding(ctx->report, timeout ? "cuda.p2p-hang" : "cuda.p2p-failed", subject,
                           "The peer check %s while copying from GPU %s to GPU %s: %s",
                           timeout ? "did not finish in time" : "ended abnormally", sa, sb,
                           job.result.detail ? job.result.detail : "no detail");
        json_object *p = json_object_new_object();
        json_object_object_add(p, "from", named ? json_object_new_int(ha) : NULL);
        json_object_object_add(p, "to", named ? json_object_new_int(hb) : NULL);
        json_object_object_add(p, "status", json_object_new_string(timeout ? "hang" : "crash"));
        json_object_array_add(pairs, p);
        struct result_cuda *rc = result_cuda_of(sec);
        if (rc)
            rc->p2p_pairs++;
        char label[120];
        snprintf(label, sizeof(label), "CUDA P2P %s", subject);
        report_section_add_line(sec, REPORT_MARK_ERROR, label, "%s", timeout ? "hang" : "crash");
    }
    cp_summary(sec, pairs);
    cp_unsupported(ctx, sec, smoke, pairs);
    const char *err = jsonget_str(v, "error");
    json_object_object_add(p2p, "pairs", pairs);
    json_object_object_add(p2p, "error", err ? json_object_new_string(err) : NULL);
    json_object_object_add(sec->data, "p2p", p2p);
    /* Appended to the section's generic "metrics" list (NVML's memory series may be there already). */
    json_object *have = jsonget(sec->data, "metrics");
    if (have && json_object_is_type(have, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(metrics); i++)
            json_object_array_add(have, json_object_get(json_object_array_get_idx(metrics, i)));
        json_object_put(metrics);
    } else if (json_object_array_length(metrics) > 0) {
        json_object_object_add(sec->data, "metrics", metrics);
    } else {
        json_object_put(metrics);
    }
    isolate_result_clear(&job.result);
    if (shared != MAP_FAILED)
        munmap(shared, sizeof(struct cp_shared));
}
