/* cuda_bench_xfer.c: bench's copy bandwidth: host to each CUDA device (pageable and pinned) and peer to peer per ordered pair, timed and verified. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_parts.h"
#include "cuda_api.h"
#include "cuda_internal.h"
#include "jsonget.h"
#include "jsonnum.h"
#include "strutil.h"

/* 32 MiB per copy: long enough for PCIe and NVLink to reach their rate (NVIDIA's bandwidthTest sample uses
 * 32 MB), small enough for any GPU. Each figure is the median of XF_RUNS timed copies after one untimed. */
#define XF_BYTES (32u << 20)
#define XF_RUNS 5
#define XF_MAX_DEVS 16

enum xf_kind { XF_PAGEABLE, XF_PINNED, XF_PEER };

struct xf {
    struct cuda_api api;
    char *stage;
    double end_ms;
    int n;
    CUcontext ctx[XF_MAX_DEVS];
    CUdeviceptr buf[XF_MAX_DEVS];
    uint32_t *pattern, *back; /* pageable host buffers: the source, and what is read back */
    uint32_t *pinned;         /* cuMemAllocHost's buffer, or NULL */
};

static void xf_stage(struct xf *x, const char *what, int a, int b)
{
    if (x->stage && b >= 0)
        snprintf(x->stage, BENCH_PARTS_STAGE_MAX, "%s %d -> %d", what, a, b);
    else if (x->stage)
        snprintf(x->stage, BENCH_PARTS_STAGE_MAX, "%s %d", what, a);
}

static char *xf_failed(const char *call, CUresult r)
{
    const char *name = cuda_result_name(r);
    return name ? str_printf("%s failed: %s (%d)", call, name, r) : str_printf("%s failed: CUresult %d", call, r);
}

static int xf_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One copy of KIND into device TO's buffer (from device FROM's for a peer copy), waited for: a pageable copy
 * may return before its DMA ends (the driver API's "API synchronization behavior"). */
static CUresult xf_copy(struct xf *x, enum xf_kind kind, int from, int to)
{
    CUresult r = kind == XF_PEER ? x->api.cuMemcpyPeer(x->buf[to], x->ctx[to], x->buf[from], x->ctx[from], XF_BYTES)
                                 : x->api.cuMemcpyHtoD(x->buf[to], kind == XF_PINNED ? x->pinned : x->pattern, XF_BYTES);
    return r ? r : x->api.cuCtxSynchronize();
}

/* Clear TO's buffer, copy (untimed once, then XF_RUNS timed), read it back and compare with the pattern.
 * Fills O's KEY (GB/s, the median; null when the clock saw no time) and "verified"; NULL or the failure. */
static char *xf_measure(struct xf *x, enum xf_kind kind, int from, int to, json_object *o, const char *key)
{
    CUresult r;
    if ((r = x->api.cuCtxSetCurrent(x->ctx[to])) || (r = x->api.cuMemsetD32(x->buf[to], 0, XF_BYTES / 4)) ||
        (r = x->api.cuCtxSynchronize()))
        return xf_failed("clearing the device buffer", r);
    double ms[XF_RUNS];
    for (int k = -1; k < XF_RUNS; k++) {
        double t0 = jsonnum_now_ms();
        if ((r = xf_copy(x, kind, from, to)))
            return xf_failed(kind == XF_PEER ? "cuMemcpyPeer" : "cuMemcpyHtoD", r);
        if (k >= 0)
            ms[k] = jsonnum_now_ms() - t0;
    }
    qsort(ms, XF_RUNS, sizeof(ms[0]), xf_cmp);
    double med = ms[XF_RUNS / 2];
    json_object_object_add(o, key, med > 0 ? jsonnum_sig((double)XF_BYTES / (med / 1000.0) / 1e9, 4) : NULL);
    memset(x->back, 0, XF_BYTES);
    if ((r = x->api.cuMemcpyDtoH(x->back, x->buf[to], XF_BYTES)))
        return xf_failed("cuMemcpyDtoH (reading back)", r);
    json_object *v = jsonget(o, "verified");
    bool same = memcmp(x->back, x->pattern, XF_BYTES) == 0 && (!v || json_object_get_boolean(v));
    json_object_object_add(o, "verified", json_object_new_boolean(same));
    return NULL;
}

static void xf_entry_end(json_object *o, char *fail)
{
    json_object_object_add(o, "detail", fail ? cuda_smoke_json_str(fail, 1000) : NULL);
    free(fail);
}

/* Host to each device: pageable, then pinned. */
static void xf_h2d(struct xf *x, json_object *arr)
{
    for (int i = 0; i < x->n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "ordinal", json_object_new_int(i));
        json_object_object_add(o, "pageable_gbps", NULL);
        json_object_object_add(o, "pinned_gbps", NULL);
        char *fail = NULL;
        if (jsonnum_now_ms() > x->end_ms) {
            fail = str_dup("not measured: the benchmark's time ran out");
        } else {
            xf_stage(x, "host-to-device copies to CUDA device", i, -1);
            fail = xf_measure(x, XF_PAGEABLE, -1, i, o, "pageable_gbps");
            if (!fail && x->pinned)
                fail = xf_measure(x, XF_PINNED, -1, i, o, "pinned_gbps");
        }
        xf_entry_end(o, fail);
        json_object_array_add(arr, o);
    }
}

/* Each ordered pair: peer to peer where the driver allows it, else the same call staged through the host. */
static void xf_p2p(struct xf *x, json_object *arr)
{
    for (int i = 0; i < x->n; i++)
        for (int j = 0; j < x->n; j++) {
            if (i == j)
                continue;
            json_object *o = json_object_new_object();
            json_object_object_add(o, "from", json_object_new_int(i));
            json_object_object_add(o, "to", json_object_new_int(j));
            int can = 0;
            CUdevice di, dj;
            bool known = x->api.cuDeviceCanAccessPeer && x->api.cuDeviceGet(&di, i) == CUDA_SUCCESS &&
                         x->api.cuDeviceGet(&dj, j) == CUDA_SUCCESS && x->api.cuDeviceCanAccessPeer(&can, dj, di) == 0;
            json_object_object_add(o, "peer_access", known ? json_object_new_boolean(can != 0) : NULL);
            json_object_object_add(o, "gbps", NULL);
            char *fail = NULL;
            CUresult r;
            if (jsonnum_now_ms() > x->end_ms)
                fail = str_dup("not measured: the benchmark's time ran out");
            else if (!x->api.cuMemcpyPeer)
                fail = str_dup("libcuda.so.1 has no cuMemcpyPeer");
            else if (can && (r = x->api.cuCtxSetCurrent(x->ctx[j])) == CUDA_SUCCESS &&
                     (r = x->api.cuCtxEnablePeerAccess(x->ctx[i], 0)) != CUDA_SUCCESS &&
                     r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
                fail = xf_failed("cuCtxEnablePeerAccess", r);
            /* the source holds the pattern whatever an earlier copy left there */
            if (!fail && ((r = x->api.cuCtxSetCurrent(x->ctx[i])) || (r = xf_copy(x, XF_PAGEABLE, -1, i))))
                fail = xf_failed("filling the source buffer", r);
            if (!fail) {
                xf_stage(x, "peer copies from CUDA device", i, j);
                fail = xf_measure(x, XF_PEER, i, j, o, "gbps");
            }
            xf_entry_end(o, fail);
            json_object_array_add(arr, o);
        }
}

/* Contexts, a device buffer each holding the pattern, the host buffers; NULL or the failure. */
static char *xf_setup(struct xf *x)
{
    CUresult r;
    int count = 0;
    if ((r = x->api.cuInit(0)))
        return xf_failed("cuInit", r);
    if ((r = x->api.cuDeviceGetCount(&count)))
        return xf_failed("cuDeviceGetCount", r);
    x->n = count < XF_MAX_DEVS ? count : XF_MAX_DEVS;
    x->pattern = malloc(XF_BYTES);
    x->back = malloc(XF_BYTES);
    if (!x->pattern || !x->back)
        return str_dup("out of host memory");
    for (size_t k = 0; k < XF_BYTES / 4; k++)
        x->pattern[k] = (uint32_t)(k * 2654435761u) ^ 0x5EEDu;
    for (int i = 0; i < x->n; i++) {
        CUdevice dev;
        if ((r = x->api.cuDeviceGet(&dev, i)) || (r = x->api.cuDevicePrimaryCtxRetain(&x->ctx[i], dev)) ||
            (r = x->api.cuCtxSetCurrent(x->ctx[i])) || (r = x->api.cuMemAlloc(&x->buf[i], XF_BYTES)))
            return xf_failed("setting up a device buffer", r);
    }
    void *p = NULL;
    if (x->api.cuMemAllocHost && x->api.cuMemAllocHost(&p, XF_BYTES) == CUDA_SUCCESS && p) {
        x->pinned = p;
        memcpy(x->pinned, x->pattern, XF_BYTES);
    }
    return NULL;
}

json_object *bench_cuda_transfer_child(void *arg)
{
    const struct bench_cuda_xfer_args *a = arg;
    json_object *o = json_object_new_object();
    struct xf x;
    memset(&x, 0, sizeof(x));
    x.stage = a ? a->stage : NULL;
    x.end_ms = jsonnum_now_ms() + (a ? a->budget_ms : 0);
    json_object_object_add(o, "bytes", json_object_new_int64(XF_BYTES));
    json_object_object_add(o, "runs", json_object_new_int(XF_RUNS));
    const char *missing = NULL;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    char *fail = NULL;
    if (!h || cuda_api_load(h, &x.api, &missing) < 0 || !cuda_api_has_compute(&x.api))
        fail = str_dup(h ? "libcuda.so.1 lacks a compute function" : "dlopen(\"libcuda.so.1\") failed");
    else
        fail = xf_setup(&x);
    json_object_object_add(o, "pinned", json_object_new_boolean(x.pinned != NULL));
    json_object *h2d = json_object_new_array(), *p2p = json_object_new_array();
    if (!fail) {
        xf_h2d(&x, h2d);
        xf_p2p(&x, p2p);
    }
    json_object_object_add(o, "h2d", h2d);
    json_object_object_add(o, "p2p", p2p);
    json_object_object_add(o, "status", json_object_new_string(fail ? "error" : "ok"));
    xf_entry_end(o, fail);
    /* No frees: the child ends now, and the driver frees what it holds. */
    return o;
}
