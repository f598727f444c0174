/* doctor_peers.c: a finding about GPU pairs (a peer check's) explained by one on the path between those GPUs (ACS on a bridge), matched by PCI address. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "doctor.h"

/* A PCI address as numbers: "0000:03:00.0", CUDA's "00000000:03:00.0", upper or lower case alike. */
struct doctor_bdf {
    unsigned dom, bus, dev, fn;
};

/* Parse the address at S (it ends at END, or at its end when END is NULL). 0, or -1 when it is none. */
static int doctor_bdf_parse(const char *s, const char *end, struct doctor_bdf *out)
{
    char buf[32];
    size_t n = end ? (size_t)(end - s) : strlen(s);
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    int used = 0;
    if (sscanf(buf, "%x:%x:%x.%x%n", &out->dom, &out->bus, &out->dev, &out->fn, &used) != 4 || buf[used])
        return -1;
    return 0;
}

static bool doctor_bdf_eq(const struct doctor_bdf *a, const struct doctor_bdf *b)
{
    return a->dom == b->dom && a->bus == b->bus && a->dev == b->dev && a->fn == b->fn;
}

/* Is address A among the blank-separated addresses of LIST? */
static bool doctor_bdf_listed(const char *list, const struct doctor_bdf *a)
{
    for (const char *p = list; p && *p;) {
        p += strspn(p, " ,");
        size_t n = strcspn(p, " ,");
        struct doctor_bdf x;
        if (n && doctor_bdf_parse(p, p + n, &x) == 0 && doctor_bdf_eq(&x, a))
            return true;
        p += n;
    }
    return false;
}

/* Does pair text PAIR ("A->B") join two GPUs of LIST? */
static bool doctor_pair_within(const char *pair, const char *list)
{
    const char *arrow = pair ? strstr(pair, "->") : NULL;
    struct doctor_bdf a, b;
    return arrow && doctor_bdf_parse(pair, arrow, &a) == 0 && doctor_bdf_parse(arrow + 2, NULL, &b) == 0 &&
           doctor_bdf_listed(list, &a) && doctor_bdf_listed(list, &b);
}

/* Does every pair EFF is about (its subject "A->B", its "pair" evidence) join two GPUs of LIST? False when
 * it names no pair. */
static bool doctor_pairs_within(const struct report_finding *eff, const char *list)
{
    size_t n = 0;
    if (eff->subject && strstr(eff->subject, "->")) {
        if (!doctor_pair_within(eff->subject, list))
            return false;
        n++;
    }
    for (size_t i = 0; i < eff->n_evidence; i++) {
        if (!eff->evidence[i].source || strcmp(eff->evidence[i].source, "pair") != 0)
            continue;
        if (!doctor_pair_within(eff->evidence[i].value, list))
            return false;
        n++;
    }
    return n > 0;
}

/* The "peer GPUs" evidence of F, or NULL. */
static const char *doctor_peer_gpus(const struct report_finding *f)
{
    for (size_t i = 0; i < f->n_evidence; i++)
        if (f->evidence[i].source && strcmp(f->evidence[i].source, "peer GPUs") == 0)
            return f->evidence[i].value;
    return NULL;
}

void doctor_link_peers(struct report *r)
{
    for (size_t e = 0; e < r->n_findings; e++) {
        struct report_finding *eff = r->findings[e];
        if (eff->caused_by_id || !(checks_flags(r->catalogue, eff->id) & CHECK_F_PEER_PAIR))
            continue;
        for (size_t c = 0; c < r->n_findings; c++) {
            const struct report_finding *cause = r->findings[c];
            const char *gpus = doctor_peer_gpus(cause);
            if (c == e || !gpus || cause->severity < eff->severity ||
                !(checks_flags(r->catalogue, cause->id) & CHECK_F_PEER_PATH) || !doctor_pairs_within(eff, gpus))
                continue;
            report_finding_set_cause(eff, cause->id, cause->subject);
            break;
        }
    }
}
