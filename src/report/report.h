/* report.h: the report model: per-probe sections of facts, findings, verdict. Writers only walk it. */
#ifndef GPUCHECKUP_REPORT_H
#define GPUCHECKUP_REPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

enum report_severity {
    REPORT_SEV_INFO = 0,
    REPORT_SEV_WARNING = 1,
    REPORT_SEV_ERROR = 2,
};

enum report_status {
    REPORT_STATUS_OK = 0,
    REPORT_STATUS_SKIPPED,
    REPORT_STATUS_NOT_APPLICABLE,
    REPORT_STATUS_FAILED,
};

/* Mark shown in front of a summary line. */
enum report_mark {
    REPORT_MARK_OK = 0,
    REPORT_MARK_INFO,
    REPORT_MARK_WARN,
    REPORT_MARK_ERROR,
    REPORT_MARK_SKIP,
};

struct report_evidence {
    char *source; /* a file path, a command, a property name */
    char *value;
};

struct report_finding {
    char *id;        /* "area.name", from the check catalogue */
    enum report_severity severity;
    char *subject;   /* what it is about: a PCI address, an .icd path, a device; may be NULL */
    char *message;
    char *hint;      /* how to fix; may be NULL */
    struct report_evidence *evidence;
    size_t n_evidence;
    char *caused_by_id;      /* root cause finding, or NULL */
    char *caused_by_subject; /* its subject, may be NULL */
    bool captured;           /* replayed from a snapshot, not found on this run */
};

struct report_line {
    enum report_mark mark;
    char *label; /* short area name: "CPU", "GPU 0000:01:00.0" */
    char *text;
    /* One of several alike that the text folds into one line unless -v (drivers for absent hardware):
     * the folded line's label, what they are ("drivers for absent hardware") and this one's short name;
     * all NULL for a line shown as it is. Not in the JSON. */
    char *fold_label, *fold_what, *fold_name;
};

/* A probe's typed result: the facts the doctor, --require and the text writer read as fields and
 * enums, and the source of the section's JSON, which is made only at the edge (report_section_json).
 * One const table per kind of result, next to its struct (probes/NAME/result_NAME.c). */
struct probe;
struct compute_paths;
struct peer_check;

struct report_result_ops {
    const char *section; /* the section it belongs to: "smoke" */
    /* The result's JSON members as a new object, in the order the section prints them; NULL on
     * allocation failure. NULL for a result still being converted: typed facts beside the section's
     * JSON data, which is then printed as it is (and FROM_JSON takes nothing out of it). */
    json_object *(*to_json)(const void *res);
    /* A result read back from captured JSON DATA (a snapshot's section, a test's fixture): it takes
     * the members it types out of DATA and leaves the others there (printed after its own). Lenient:
     * a member of an unexpected shape stays in DATA. NULL on allocation failure. */
    void *(*from_json)(json_object *data);
    void (*free)(void *res);
    /* The section's members in the order they print, NULL-terminated (NULL: the result's, then the
     * data's). Each prints in its place whether the result types it or it stayed in the data (a
     * captured member of a shape the result does not read): so a document reads back and prints
     * the same, the second time as the first. */
    const char *const *members;
    /* FROM_JSON leaves each member it types in DATA as a null that keeps its place (MEMBERS unused): the
     * section prints DATA's members in their order, a typed one's value from TO_JSON, then TO_JSON's
     * others. For a section whose paths write its members in more than one order (cpu: notes). */
    bool keeps_places;
    /* The compute paths the result proves or disproves (compute_path.h): one per device reached through
     * the probe's compute API, appended to OUT; OWNER is the publishing probe (its compute_api). NULL
     * for a result that proves no device. */
    void (*paths)(const void *res, const struct probe *owner, struct compute_paths *out);
    /* The result's peer check (peer_check.h): the GPUs its compute API sees, the ordered pairs it checked
     * and how they went, written into OUT (zeroed by the caller). NULL for a result with no peer check. */
    void (*peers)(const void *res, struct peer_check *out);
};

struct report_section {
    char *name;                /* probe name: "cpu", "pci"... */
    enum report_status status;
    char *reason;              /* why skipped/failed/not applicable; NULL when ok */
    json_object *data;         /* the probe's facts (an object), owned by the section; with a typed
                                * result, only the members that are not typed yet (notes...) */
    const struct report_result_ops *result_ops; /* the typed result's kind, or NULL */
    void *result;              /* the typed result, owned (result_ops->free); NULL when none */
    struct report_line *lines; /* summary lines, in order */
    size_t n_lines;
    double duration_ms;
    bool captured;             /* replayed from a snapshot: the live probe did not run here */
};

struct report_requirement {
    char *name;   /* as given: "avx", "gpus>=2" */
    bool met;
    char *detail; /* why (un)met */
};

struct checks_catalogue;

struct report {
    json_object *host;                /* host identification, owned */
    struct report_section *sections;
    size_t n_sections;
    struct report_finding **findings; /* each allocated on its own: a finding's address never changes */
    size_t n_findings;
    struct report_requirement *requirements;
    size_t n_requirements;
    json_object *targets;             /* verdict targets (object name -> {ready, reasons}); owned, may be NULL */
    json_object *target_apis;         /* target name -> the compute API of the probe that set it ("cuda"), for
                                         writers that group targets by API; the core's gpu target and targets
                                         of probes without an API are absent. Owned, may be NULL; not printed */
    char *verdict_text;               /* one-line verdict for people; may be NULL (derived) */
    const struct checks_catalogue *catalogue; /* the finding IDs it may hold (checks.h); not owned */
};

/* Allocate an empty report over catalogue CAT (kept, not copied; NULL: the core's rows only).
 * Returns NULL on allocation failure. Free with report_free(). */
struct report *report_new_with(const struct checks_catalogue *cat);
/* report_new_with(probe_catalogue()): every registered probe's rows (defined in registry.c, so the
 * report model itself never reaches into the registry). */
struct report *report_new(void);
void report_free(struct report *r);

/* Add a section for probe NAME (data starts as an empty object). Returned pointer stays valid
 * until the next report_add_section() call; owned by the report. NULL on allocation failure. */
struct report_section *report_add_section(struct report *r, const char *name);
/* The section named NAME, or NULL. */
struct report_section *report_find_section(const struct report *r, const char *name);
/* A section of its own (not in a report) named NAME, status ok, empty: where a probe thread writes until
 * the run publishes it whole (src/app/run.c). 0, or -1 out of memory (S then holds nothing). */
int report_section_init(struct report_section *s, const char *name);
/* Free what S holds and zero it. */
void report_section_clear(struct report_section *s);
/* SRC (a probe's own section, complete) becomes DST (its place in the report) but for DST's name, which
 * stays as it is, never written: other threads read it meanwhile. SRC is left empty. */
void report_section_publish(struct report_section *dst, struct report_section *src);

/* Give S the typed result RES of kind OPS (owned from now on; a previous one is freed). */
void report_section_set_result(struct report_section *s, const struct report_result_ops *ops, void *res);
/* The typed result of kind OPS of section OPS->section when it ran ok, else NULL. */
const void *report_result(const struct report *r, const struct report_result_ops *ops);
/* Turn S's captured JSON data into the typed result of kind OPS (a snapshot replay, a test's JSON
 * fixture). 0, or -1 on allocation failure (S keeps its data then). */
int report_section_adopt(struct report_section *s, const struct report_result_ops *ops);
/* The section's facts as one JSON object (a new reference): its typed result's members, then those
 * of its data that the result does not print. NULL on allocation failure. */
json_object *report_section_json(const struct report_section *s);

/* Set status and (printf-style, may be NULL) reason of a section. */
void report_section_set_status(struct report_section *s, enum report_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Append a summary line. */
void report_section_add_line(struct report_section *s, enum report_mark mark, const char *label,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A summary label an older gpucheckup wrote and today's (a probe's table, for its label_today). */
struct report_label_rename {
    const char *old, *today;
};
/* Today's label for LABEL from TABLE (N rows): heap, or NULL when LABEL is not an old one. */
char *report_label_renamed(const struct report_label_rename *table, size_t n, const char *label);
/* Mark the last summary line as one of several alike (report_line.fold_*): the text shows them as
 * "LABEL  N WHAT: NAME, NAME..." unless -v. */
void report_section_fold_line(struct report_section *s, const char *label, const char *what, const char *name);
/* Append a note (something that could not be read, an assumption) to data["notes"]. */
void report_section_add_note(struct report_section *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Add a finding with ID from the check catalogue; its severity and default hint come from there.
 * SUBJECT may be NULL. Returns the finding (valid until report_free: adding more never moves it) or
 * NULL on allocation failure. An ID missing from the catalogue is a programming error: it is still recorded,
 * with severity error, and a message saying so on stderr. */
struct report_finding *report_add_finding(struct report *r, const char *id, const char *subject,
                                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Replace the hint of F (printf-style). */
void report_finding_set_hint(struct report_finding *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append evidence to F: SOURCE (file, property) and a printf-style value. */
void report_finding_add_evidence(struct report_finding *f, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Mark F as a consequence of the finding (CAUSE_ID, CAUSE_SUBJECT). */
void report_finding_set_cause(struct report_finding *f, const char *cause_id, const char *cause_subject);
/* The hint the writers for people (text, JUnit, GitHub) print for F: its own, or NULL for a consequence
 * (caused_by set), whose cause's hint is the fix. JSON keeps every finding's hint (a consequence's may say
 * more about itself, as icd.absent-hardware's). Borrowed. */
const char *report_finding_shown_hint(const struct report_finding *f);
/* Lower every summary line of R marked worse than the worst finding it summarises to that finding's mark
 * (info where there is none): a section's lines summarise the findings its probe owns and the run's core.*
 * findings. Called once the doctor has set the findings' final severities, so that no "[FAIL]" line stands
 * above a verdict of "ready" (a stack's words may say "not installed", its findings alone judge it). */
void report_marks_agree(struct report *r);
/* First finding with ID (and SUBJECT, unless NULL), or NULL. */
struct report_finding *report_find_finding(const struct report *r, const char *id, const char *subject);
/* Count of findings at severity SEV (consequences included). */
size_t report_count_severity(const struct report *r, enum report_severity sev);

/* Record a --require outcome. */
void report_add_requirement(struct report *r, const char *name, bool met, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Record a verdict target (e.g. "opencl", "gpu", "cpu_avx"): READY and the finding IDs behind it
 * (REASONS: NULL-terminated, may be NULL). */
void report_set_target(struct report *r, const char *name, bool ready, const char *detail,
                       const char *const *reasons);

/* True when no error finding exists and every requirement is met. */
bool report_is_ready(const struct report *r);

/* Findings sorted by severity (errors first), stable otherwise. Returns a malloc'ed array of
 * pointers into R (caller frees the array only), with *N set; NULL when there are none. */
const struct report_finding **report_sorted_findings(const struct report *r, size_t *n);

const char *report_severity_name(enum report_severity s);
const char *report_status_name(enum report_status s);

#endif
