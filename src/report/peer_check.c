/* peer_check.c: --require p2p from every compute API's peer check, read through the typed results' peers op. */
#include "peer_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "report.h"
#include "strutil.h"

void peer_check_add_failing(char *buf, size_t size, const char *from, const char *to)
{
    size_t len = strlen(buf);
    char item[96];
    if (size < 4 || strstr(buf, "..."))
        return;
    int w = snprintf(item, sizeof(item), "%s%s->%s", len ? ", " : "", from, to);
    if (w > 0 && (size_t)w < sizeof(item) && len + (size_t)w + 4 <= size)
        memcpy(buf + len, item, (size_t)w + 1);
    else if (len + 4 <= size)
        memcpy(buf + len, "...", 4);
}

int peer_req_parse(const char *name, int *arg)
{
    *arg = 0;
    return strcmp(name, "p2p") == 0 ? 0 : -1;
}

/* Append PART to *TEXT, "; " between; PART is consumed. */
static void peer_req_join(char **text, char *part)
{
    if (!part)
        return;
    if (!*text) {
        *text = part;
        return;
    }
    char *j = str_printf("%s; %s", *text, part);
    free(part);
    if (j) { /* out of memory: *TEXT stays as it was */
        free(*text);
        *text = j;
    }
}

/* Each API with a peer check says why it proves nothing (IDLE), or what its pairs did (MET or UNMET). */
static void peer_req_one(const struct peer_check *pc, const char *api, char **met, char **unmet, char **idle)
{
    long want = (long)pc->gpus * ((long)pc->gpus - 1);
    if (pc->gpus < 2) {
        if (pc->gpus > 0)
            peer_req_join(idle, str_printf("%s sees %zu GPU: peer to peer needs at least two", api, pc->gpus));
    } else if (pc->pairs == 0) {
        peer_req_join(idle, str_printf("the %s peer check did not run: %s", api,
                                       pc->not_run ? pc->not_run : "no pair was checked"));
    } else if (pc->passed < want) {
        bool named = pc->failing && pc->failing[0];
        peer_req_join(unmet, str_printf("%d of the %ld ordered pairs of %zu GPUs passed the %s peer check%s%s%s",
                                        pc->passed, want, pc->gpus, api, named ? " (not passed: " : "",
                                        named ? pc->failing : "", named ? ")" : ""));
    } else {
        peer_req_join(met, str_printf("every ordered pair of %zu GPUs (%ld) copied peer to peer and verified (the %s "
                                      "peer check)",
                                      pc->gpus, want, api));
    }
}

bool peer_req_eval(const struct report *r, const char *name, int arg, char **detail)
{
    (void)name;
    (void)arg;
    char *met = NULL, *unmet = NULL, *idle = NULL;
    size_t np = 0;
    while (probe_registry[np])
        np++;
    for (size_t i = np; i-- > 0;) {
        const struct probe *p = probe_registry[i];
        const struct report_result_ops *ops = p->result;
        const void *res = ops && ops->peers ? report_result(r, ops) : NULL;
        struct peer_check pc = {0};
        if (res)
            ops->peers(res, &pc);
        if (pc.has)
            peer_req_one(&pc, p->compute_api_label ? p->compute_api_label : p->name, &met, &unmet, &idle);
    }
    bool ok = met && !unmet;
    if (unmet)
        *detail = unmet;
    else if (met)
        *detail = met;
    else
        *detail = idle ? idle : str_printf("no peer check ran: no compute API sees a GPU");
    if (*detail != met)
        free(met);
    if (*detail != idle)
        free(idle);
    return ok;
}
