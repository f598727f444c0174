/* write_github.c: the GitHub Actions writer (--format=github): one workflow command per finding. */
#include "writer.h"

#include <stdlib.h>
#include <string.h>

/* Workflow commands (https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions):
 * "::error title=TITLE::MESSAGE" on standard output becomes an annotation on the run and the pull
 * request; ::warning and ::notice likewise. The runner reads one command per line, so in the
 * message % CR LF are written %25 %0D %0A, and in a property (title=) also : and , as %3A and %2C
 * (the escaping of the actions/toolkit "core" library, which the runner reverses). Errors map to
 * ::error, warnings to ::warning, info findings to ::notice; nothing else is printed, so a step can
 * run `gpucheckup --format=github` as is and keep gpucheckup's exit status. */

static void github_escape(FILE *f, const char *s, bool property)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '%':
            fputs("%25", f);
            break;
        case '\r':
            fputs("%0D", f);
            break;
        case '\n':
            fputs("%0A", f);
            break;
        case ':':
            fputs(property ? "%3A" : ":", f);
            break;
        case ',':
            fputs(property ? "%2C" : ",", f);
            break;
        default:
            fputc(*p, f);
        }
    }
}

static const char *github_command(enum report_severity s)
{
    return s == REPORT_SEV_ERROR ? "error" : s == REPORT_SEV_WARNING ? "warning" : "notice";
}

int write_github(FILE *f, const struct report *r, const struct cli_options *o, const struct writer_run *run)
{
    (void)o;
    (void)run;
    size_t n = 0;
    const struct report_finding **fs = report_sorted_findings(r, &n);
    if (n && !fs)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct report_finding *fi = fs[i];
        fprintf(f, "::%s title=", github_command(fi->severity));
        github_escape(f, "gpucheckup ", true);
        github_escape(f, fi->id, true);
        if (fi->subject) {
            github_escape(f, " (", true);
            github_escape(f, fi->subject, true);
            github_escape(f, ")", true);
        }
        fputs("::", f);
        github_escape(f, fi->message, false);
        if (fi->caused_by_id) {
            github_escape(f, "\ncaused by: ", false);
            github_escape(f, fi->caused_by_id, false);
            if (fi->caused_by_subject) {
                github_escape(f, " (", false);
                github_escape(f, fi->caused_by_subject, false);
                github_escape(f, ")", false);
            }
        }
        if (report_finding_shown_hint(fi)) {
            github_escape(f, "\nfix: ", false);
            github_escape(f, report_finding_shown_hint(fi), false);
        }
        for (size_t e = 0; e < fi->n_evidence; e++) {
            github_escape(f, "\nevidence: ", false);
            github_escape(f, fi->evidence[e].source, false);
            github_escape(f, ": ", false);
            github_escape(f, fi->evidence[e].value, false);
        }
        fputc('\n', f);
    }
    free((void *)fs);
    return ferror(f) ? -1 : 0;
}
