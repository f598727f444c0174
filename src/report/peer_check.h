/* peer_check.h: each compute API's peer check as the core reads it (the typed results' peers op), and --require p2p. */
#ifndef GPUCHECKUP_PEER_CHECK_H
#define GPUCHECKUP_PEER_CHECK_H

#include <stdbool.h>
#include <stddef.h>

struct report;

/* One compute API's peer check. Strings are borrowed from the result; FAILING is the result's list of the
 * ordered pairs that did not pass ("0->1, 1->0", possibly cut short with "..."), "" when none. */
struct peer_check {
    bool has;            /* the result has a peer check (set by the peers op) */
    size_t gpus;         /* GPUs the API sees */
    int pairs, passed;   /* ordered pairs checked; of those, copied and verified both ways */
    const char *not_run; /* why the check did not run, NULL when it ran (or nothing says) */
    const char *failing; /* the pairs that did not pass, "" or NULL when none */
};

/* The help of the Prometheus family p2p_bandwidth_gbps{from,to} that every peer check's passed pairs
 * append to their section's "metrics" (one family whichever API wrote the first series). */
#define PEER_CHECK_METRIC_HELP                                                                                 \
    "GB/s of an 8 MiB verified peer-to-peer copy, per ordered GPU pair (the CUDA peer check's cuMemcpyPeer, " \
    "the HIP peer check's hipMemcpyPeer)."

/* Append "FROM->TO" to the failing-pair list BUF (SIZE bytes), ", " between, "..." once it is full. */
void peer_check_add_failing(char *buf, size_t size, const char *from, const char *to);

/* --require p2p (the doctor's own row): met when some API checked at least one pair and, for every API
 * that checked, every ordered pair of its GPUs passed. */
int peer_req_parse(const char *name, int *arg);
bool peer_req_eval(const struct report *r, const char *name, int arg, char **detail);

#endif
