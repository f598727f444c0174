/* compute_path.c: collecting the compute paths the report's typed results publish, and counting GPUs over them. */
#include "compute_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "probe.h"
#include "report.h"

int compute_paths_add(struct compute_paths *ps, const struct compute_path *p)
{
    struct compute_path *nv = realloc(ps->v, (ps->n + 1) * sizeof(*nv));
    if (!nv)
        return -1;
    ps->v = nv;
    nv[ps->n++] = *p;
    return 0;
}

struct compute_paths compute_paths_of(const struct report *r)
{
    struct compute_paths ps = {NULL, 0};
    size_t np = 0;
    while (probe_registry[np])
        np++;
    for (size_t i = np; i-- > 0;) {
        const struct report_result_ops *ops = probe_registry[i]->result;
        if (!ops || !ops->paths)
            continue;
        const void *res = report_result(r, ops);
        if (res)
            ops->paths(res, probe_registry[i], &ps);
    }
    return ps;
}

void compute_paths_free(struct compute_paths *ps)
{
    free(ps->v);
    ps->v = NULL;
    ps->n = 0;
}

size_t compute_paths_gpus(const struct compute_paths *ps, enum compute_proof proof, const struct compute_path **first)
{
    size_t n = 0;
    if (first)
        *first = NULL;
    for (size_t i = 0; i < ps->n; i++) {
        const struct compute_path *p = &ps->v[i];
        if (!p->gpu || p->proof != proof)
            continue;
        bool dup = false;
        for (size_t j = 0; p->pci_address && j < i && !dup; j++) {
            const struct compute_path *q = &ps->v[j];
            dup = q->gpu && q->proof == proof && q->pci_address && strcasecmp(q->pci_address, p->pci_address) == 0;
        }
        if (dup)
            continue;
        if (first && !*first)
            *first = p;
        n++;
    }
    return n;
}

bool compute_paths_serve(const struct compute_paths *ps, const char *addr, const char *other_than, const char **label)
{
    for (size_t i = 0; addr && i < ps->n; i++) {
        const struct compute_path *p = &ps->v[i];
        if (p->gpu && p->proof != COMPUTE_FAILED && p->pci_address && strcasecmp(p->pci_address, addr) == 0 &&
            (!other_than || !p->api || strcmp(p->api, other_than) != 0)) {
            if (label)
                *label = p->api_label;
            return true;
        }
    }
    return false;
}

const char *compute_path_label(const struct compute_path *p, char *buf, size_t len)
{
    const char *addr = p ? p->pci_address : NULL, *name = p ? p->name : NULL;
    snprintf(buf, len, "%s%s%s", addr ? addr : "", addr ? " " : "", name ? name : "device");
    return buf;
}
