/* topology_nccl.c: NCCL's variables checked against the machine; --require rdma and the node label. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_facts.h"
#include "jsonget.h"
#include "jsonstr.h"
#include "strutil.h"
#include "topology_internal.h"

/* The variables read, in the order of the section. */
static const char *const topo_nccl_names[] = {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_DISABLE",
                                              "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE", NULL};

json_object *topo_nccl_conf_parse(const char *text)
{
    json_object *o = json_object_new_object();
    char *copy = str_dup(text ? text : ""), *save = NULL;
    for (char *line = copy ? strtok_r(copy, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        line = str_trim(line);
        char *eq = strchr(line, '=');
        if (line[0] == '#' || !eq || eq == line)
            continue;
        *eq = '\0';
        char *key = str_trim(line), *val = str_trim(eq + 1);
        for (size_t i = 0; topo_nccl_names[i]; i++)
            if (strcmp(key, topo_nccl_names[i]) == 0)
                json_object_object_add(o, key, jsonstr_sanitized(val));
    }
    free(copy);
    return o;
}

/* Where the run takes the environment's NCCL variables: this process's (live modes), the captured
 * section's (a snapshot replayed without --live: the variables of the node it was taken on), or none. */
enum topo_env { TOPO_ENV_READ, TOPO_ENV_CAPTURED, TOPO_ENV_NOT_READ };
static const char *const topo_env_names[] = {"read", "captured", "not-read"};

static enum topo_env topo_env_of(const struct probe_ctx *ctx)
{
    return probe_live(ctx) ? TOPO_ENV_READ : probe_snapshot(ctx) ? TOPO_ENV_CAPTURED : TOPO_ENV_NOT_READ;
}

/* NCCL takes its variables from the environment, then from /etc/nccl.conf for those the environment
 * does not set (NCCL's user guide, "Environment Variables"). The environment is this process's, so it
 * is read only where the run may use this machine (probe_live: no --root, or --root with --live), as
 * every probe treats the environment, and a snapshot's replay takes what it captured; /etc/nccl.conf is a
 * host file, read under --root too. */
char *topo_nccl_var(struct topo_run *t, const char *name)
{
    enum topo_env src = topo_env_of(t->ctx);
    if (src == TOPO_ENV_READ) {
        const char *v = getenv(name);
        if (v)
            return str_sanitize(str_dup(v));
    } else if (src == TOPO_ENV_CAPTURED) {
        const char *v = jsonget_str(jsonget(jsonget(probe_captured(t->ctx, "topology"), "nccl"), "variables"), name);
        if (v)
            return str_sanitize(str_dup(v));
    }
    const char *c = jsonget_str(t->nccl_conf, name);
    return c ? str_dup(c) : NULL;
}

/* The names in DIR that pass NCCL's filter SPEC (a comma list, heap; NULL when none), and all of them. */
static char *topo_filter_dir(struct topo_run *t, const char *dir, const char *spec, char **all)
{
    DIR *dp = hostfs_opendir(t->ctx->fs, dir);
    char *hit = NULL;
    *all = NULL;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        if (e->d_name[0] == '.')
            continue;
        char *n = *all ? str_printf("%s, %s", *all, e->d_name) : str_dup(e->d_name);
        free(*all);
        *all = n;
        if (!topo_nccl_match(spec, e->d_name))
            continue;
        n = hit ? str_printf("%s, %s", hit, e->d_name) : str_dup(e->d_name);
        free(hit);
        hit = n;
    }
    if (dp)
        closedir(dp);
    if (*all)
        str_sanitize(*all);
    return hit ? str_sanitize(hit) : NULL;
}

static void topo_nccl_filter(struct topo_run *t, const char *id, const char *var, const char *val, const char *dir)
{
    char *all = NULL, *hit = topo_filter_dir(t, dir, val, &all);
    if (!hit) {
        struct report_finding *f = report_add_finding(t->ctx->report, id, var, "%s=%s matches none of %s%s", var, val,
                                                      all ? "" : "the (no) entries of ", all ? all : dir);
        if (f)
            report_finding_add_evidence(f, dir, "%s", all ? all : "(empty or absent)");
    }
    free(hit);
    free(all);
}

void topo_nccl(struct topo_run *t)
{
    json_object *o = json_object_new_object(), *vars = json_object_new_object();
    json_object_object_add(o, "environment", json_object_new_string(topo_env_names[topo_env_of(t->ctx)]));
    json_object_object_add(o, "nccl_conf", t->nccl_conf ? json_object_get(t->nccl_conf) : NULL);
    static const char *const what[] = {
        NULL, NULL, NULL,
        "NCCL_P2P_DISABLE=1 turns off direct GPU-to-GPU transport (data goes through host memory)",
        "NCCL_P2P_LEVEL limits peer-to-peer to GPUs at most that far apart (LOC, NVL, PIX, PXB, PHB, SYS)",
        "NCCL_SHM_DISABLE=1 turns off the shared-memory transport between processes",
    };
    for (size_t i = 0; topo_nccl_names[i]; i++) {
        char *v = topo_nccl_var(t, topo_nccl_names[i]);
        json_object_object_add(vars, topo_nccl_names[i], jsonstr_or_null(v));
        if (!v)
            continue;
        if (i == 0 && v[0])
            topo_nccl_filter(t, "topology.nccl-socket-ifname", topo_nccl_names[i], v, "/sys/class/net");
        else if (i == 1 && v[0])
            topo_nccl_filter(t, "topology.nccl-ib-hca", topo_nccl_names[i], v, "/sys/class/infiniband");
        else if (i == 2 && strcmp(v, "1") == 0 && t->ib_active)
            report_add_finding(t->ctx->report, "topology.nccl-ib-disabled", topo_nccl_names[i],
                               "NCCL_IB_DISABLE=1 while an RDMA port is active");
        else if (i >= 3 && (i == 4 || strcmp(v, "0") != 0))
            report_add_finding(t->ctx->report, "topology.nccl-p2p-setting", topo_nccl_names[i], "%s=%s: %s",
                               topo_nccl_names[i], v, what[i]);
        free(v);
    }
    json_object_object_add(o, "variables", vars);
    topo_nccl_libraries(t, o);
    json_object_object_add(t->d, "nccl", o);
}

/* --require rdma: an RDMA port is ACTIVE. */
static int topo_req_parse(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "rdma") == 0 ? 0 : -1;
}

static bool topo_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    (void)arg;
    json_object *rd = jsonget(doctor_data(r, "topology"), "rdma");
    enum gc_tri act = jsonget_tri(rd, "active");
    size_t n = 0;
    jsonget_array(rd, "devices", &n);
    if (act == GC_TRI_UNKNOWN)
        *detail = str_printf("the RDMA ports are unknown (the topology probe did not report them)");
    else if (act == GC_TRI_YES)
        *detail = str_printf("an RDMA port is active");
    else if (n)
        *detail = str_printf("no RDMA port is active (%zu RDMA device%s)", n, n == 1 ? "" : "s");
    else
        *detail = str_printf("no RDMA device");
    return act == GC_TRI_YES;
}

const struct probe_require topo_requires[] = {
    {"rdma", NULL, topo_req_parse, topo_req_eval, PROBE_CHAIN_OWN},
    {NULL, NULL, NULL, NULL, PROBE_CHAIN_OWN},
};

/* topology.rdma: an RDMA port is active (jobs across nodes schedule on it). */
void topo_node_labels(const struct report_section *sec,
                      void (*emit)(void *arg, const char *group, const char *name, const char *value), void *arg)
{
    enum gc_tri act = jsonget_tri(jsonget(sec->data, "rdma"), "active");
    if (act != GC_TRI_UNKNOWN)
        emit(arg, "topology", "rdma", act == GC_TRI_YES ? "true" : "false");
}
