/* write_health.c: the node health contract (--health): one short status line and the exit code health checkers read. */
#include "writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Health checkers keep only the first part of what a check prints: node-problem-detector's custom
 * plugin monitor cuts a plugin's output at max_output_length, 80 bytes by default
 * (node-problem-detector, docs/custom_plugin_monitor.md, "max_output_length"); Slurm and NHC log a line.
 * So the line is plain printable ASCII, at most WRITER_HEALTH_MAX bytes, no newline inside: the status
 * word, the root cause's finding ID, its subject (cut with "..." when the whole would not fit). */

/* The run's own findings that make its verdict unknown: the time ran out before every probe had run
 * all of its children, so a "ready" may hide an unchecked device and a "not ready" may be the
 * timeout's doing. */
static const char *const health_unknown_ids[] = {"core.timeout-spent", "core.probe-timed-out", NULL};

static const struct report_finding *health_unknown_finding(const struct report *r)
{
    for (size_t i = 0; r && i < r->n_findings; i++)
        for (size_t k = 0; health_unknown_ids[k]; k++)
            if (strcmp(r->findings[i]->id, health_unknown_ids[k]) == 0)
                return r->findings[i];
    return NULL;
}

int writer_health_exit(const struct report *r, int exit_code)
{
    if (exit_code != 0 && exit_code != 1)
        return WRITER_HEALTH_UNKNOWN; /* usage, bad input, gpucheckup's own failure */
    if (!r || health_unknown_finding(r))
        return WRITER_HEALTH_UNKNOWN;
    return exit_code == 0 ? WRITER_HEALTH_READY : WRITER_HEALTH_NOT_READY;
}

/* Append S to BUF (holding *AT bytes of at most MAX), printable ASCII only (anything else becomes '?',
 * so no control byte, newline or cut UTF-8 sequence reaches the caller's log). Cut with "..." when S
 * does not fit. */
static void health_append(char *buf, size_t *at, size_t max, const char *s)
{
    size_t n = strlen(s);
    size_t room = max - *at;
    bool cut = n > room;
    size_t take = cut ? (room >= 3 ? room - 3 : 0) : n;
    for (size_t i = 0; i < take; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[(*at)++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (cut)
        while (*at < max)
            buf[(*at)++] = '.';
    buf[*at] = '\0';
}

/* The root cause the line names when R is not ready, as *ID and *SUBJECT: the most severe error not
 * caused by another; else the first error's cause (an unmet requirement explained by an info finding
 * such as "no GPU"); else the first error itself. *ID stays NULL when R holds no error (a requirement
 * unmet without a finding). */
static void health_root(const struct report *r, const char **id, const char **subject)
{
    size_t n = 0;
    const struct report_finding **sorted = report_sorted_findings(r, &n);
    const struct report_finding *first = NULL;
    for (size_t i = 0; i < n; i++) {
        if (sorted[i]->severity != REPORT_SEV_ERROR)
            continue;
        if (!sorted[i]->caused_by_id) {
            *id = sorted[i]->id;
            *subject = sorted[i]->subject;
            free(sorted);
            return;
        }
        if (!first)
            first = sorted[i];
    }
    free(sorted);
    if (first) {
        *id = first->caused_by_id;
        *subject = first->caused_by_subject;
    }
}

/* "require gpu,cuda>=12.0; N warnings": what a ready run was asked and what it saw, into BUF. */
static void health_ready_detail(char *buf, size_t len, const struct report *r)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_requirements && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s", i ? "," : "require ", r->requirements[i].name);
        at += w > 0 ? (size_t)w : 0;
    }
    if (at < len)
        (void)!snprintf(buf + at, len - at, "%s%zu warnings", at ? "; " : "", report_count_severity(r, REPORT_SEV_WARNING));
}

void writer_health_line(char *buf, size_t len, const struct report *r, int health, const char *kind,
                        const char *message)
{
    size_t max = len - 1 < WRITER_HEALTH_MAX ? len - 1 : WRITER_HEALTH_MAX, at = 0;
    buf[0] = '\0';
    static const char *const words[] = {"READY", "NOT-READY", "UNKNOWN"};
    health_append(buf, &at, max, words[health >= 0 && health <= 2 ? health : 2]);
    const char *id = NULL, *subject = NULL;
    char ready[WRITER_HEALTH_MAX + 1];
    if (!r) {
        id = kind ? kind : "internal";
        subject = message;
    } else if (health == WRITER_HEALTH_UNKNOWN) {
        /* what the run saw before its time ran out (often the driver that hung), else the timeout */
        health_root(r, &id, &subject);
        const struct report_finding *f = id ? NULL : health_unknown_finding(r);
        if (f) {
            id = f->id;
            subject = f->subject;
        }
    } else if (health == WRITER_HEALTH_NOT_READY) {
        health_root(r, &id, &subject);
        if (!id)
            id = "require.unmet";
    } else {
        health_ready_detail(ready, sizeof(ready), r);
        subject = ready;
    }
    if (id) {
        health_append(buf, &at, max, " ");
        health_append(buf, &at, max, id);
    }
    if (subject && *subject) {
        health_append(buf, &at, max, " ");
        health_append(buf, &at, max, subject);
    }
}
