/* main.c: gpucheckup's entry point: parse options, run the diagnosis, write the report, exit. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"
#include "cli.h"
#include "hostfs.h"
#include "isolate.h"
#include "lazyarchive.h"
#include "lazyxml.h"
#include "probe.h"
#include "run.h"
#include "snapshot.h"
#include "strutil.h"
#include "writer.h"

/* Emit DOC or TEXT to the output (file or stdout). Returns 0 or GC_EXIT_INTERNAL. */
static int main_emit(const char *path, const char *buf, size_t len)
{
    char *err = NULL;
    if (output_emit(path, buf, len, &err) < 0) {
        fprintf(stderr, "gpucheckup: %s\n", err ? err : "cannot write the output");
        free(err);
        return GC_EXIT_INTERNAL;
    }
    return 0;
}

static int main_emit_json(const char *path, json_object *doc, bool compact)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        json_object_put(doc);
        return GC_EXIT_INTERNAL;
    }
    int rc = write_json_to(m, doc, compact);
    fclose(m);
    json_object_put(doc);
    if (rc == 0)
        rc = main_emit(path, buf, len);
    else
        rc = GC_EXIT_INTERNAL;
    free(buf);
    return rc;
}

/* --health's own rules: the line owns stdout, so -o - (the report there too) and `snapshot` (whose
 * report goes to stdout) are usage errors. 0, or -1 with the message in ERR. */
static int main_check_health(const struct cli_options *o, char *err, size_t errlen)
{
    if (!o->health)
        return 0;
    if (o->output && strcmp(o->output, "-") == 0) {
        snprintf(err, errlen, "--health: its line is standard output; -o - would put the report there too");
        return -1;
    }
    if (strcmp(o->command, "snapshot") == 0) {
        snprintf(err, errlen, "--health: not with snapshot (its report goes to standard output)");
        return -1;
    }
    return 0;
}

/* --health (writer.h, write_health.c): the one line for stdout, made where the run ends. */
static struct {
    bool on;
    bool set;
    int exit_code;
    char line[WRITER_HEALTH_MAX + 1];
} main_health;

/* The health line of a run that ended without a report: KIND ("usage", "input", "internal"), MSG. */
static void main_health_fail(const char *kind, const char *msg)
{
    if (!main_health.on || main_health.set)
        return;
    main_health.set = true;
    main_health.exit_code = WRITER_HEALTH_UNKNOWN;
    writer_health_line(main_health.line, sizeof(main_health.line), NULL, WRITER_HEALTH_UNKNOWN, kind, msg);
}

/* The end of every run once options are parsed: under --health, print the line and turn RC into the
 * contract's 0/1/2; otherwise RC as it is. */
static int main_health_finish(int rc)
{
    if (!main_health.on)
        return rc;
    if (!main_health.set)
        main_health_fail(rc == GC_EXIT_USAGE ? "usage" : "internal", "failed");
    printf("%s\n", main_health.line);
    if (fflush(stdout) != 0)
        return WRITER_HEALTH_UNKNOWN;
    return main_health.exit_code;
}

/* Report a run that produced no report: message on stderr, and a JSON error document when JSON was
 * asked for. Returns EXIT_CODE. */
static int main_fail(bool json, const char *path, bool compact, const char *kind, const char *msg, int exit_code)
{
    /* The message may quote what the user or a file gave (a path, an option value): no raw
     * control bytes or broken UTF-8 on the terminal, as in the JSON. */
    char *clean = str_sanitize(str_dup(msg));
    fprintf(stderr, "gpucheckup: %s\n", clean ? clean : msg);
    free(clean);
    main_health_fail(exit_code == GC_EXIT_INTERNAL ? "internal" : kind, msg);
    /* under --health, standard output is the line alone: the error document goes to -o FILE only */
    if (json && !(main_health.on && (!path || strcmp(path, "-") == 0)))
        main_emit_json(path, write_json_error(kind, msg, exit_code), compact);
    return exit_code;
}

static void main_list_check_json(const struct check *c, const char *owner, void *arg)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(c->id));
    json_object_object_add(o, "severity", json_object_new_string(report_severity_name(c->severity)));
    json_object_object_add(o, "probe", json_object_new_string(owner));
    json_object_object_add(o, "description", json_object_new_string(c->title));
    json_object_object_add(o, "hint", c->hint ? json_object_new_string(c->hint) : NULL);
    /* what the doctor may conclude from it (checks.h): its layer, whether it is about the whole machine or
     * one vendor's GPUs, and whether it is a packaging fact (caused only by another) or a state */
    enum check_layer l = (enum check_layer)(c->layer & CHECK_LAYER_MASK);
    json_object_object_add(o, "layer", json_object_new_string(checks_layer_name(l)));
    json_object_object_add(o, "scope", json_object_new_string(c->layer & CHECK_F_PLATFORM ? "platform" : "vendor"));
    json_object_object_add(o, "kind", json_object_new_string(c->layer & CHECK_F_KIND_FILE ? "file" : "state"));
    json_object_array_add((json_object *)arg, o);
}

static void main_list_check_text(const struct check *c, const char *owner, void *arg)
{
    (void)owner;
    fprintf((FILE *)arg, "%-32s %-8s %s\n", c->id, report_severity_name(c->severity), c->title);
}

static int main_list_checks(const struct cli_options *o)
{
    if (o->format != CLI_FORMAT_TEXT && o->format != CLI_FORMAT_JSON) {
        char err[128];
        snprintf(err, sizeof(err), "--list-checks: prints text or json, not %s", cli_format_names[o->format]);
        return main_fail(false, NULL, false, "usage", err, GC_EXIT_USAGE);
    }
    if (o->format == CLI_FORMAT_JSON) {
        json_object *doc = json_object_new_object();
        json_object *arr = json_object_new_array();
        checks_foreach(probe_catalogue(), main_list_check_json, arr);
        json_object_object_add(doc, "schema_version", json_object_new_int(GC_SCHEMA_VERSION));
        json_object_object_add(doc, "checks", arr);
        return main_emit_json(o->output, doc, o->compact);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return GC_EXIT_INTERNAL;
    checks_foreach(probe_catalogue(), main_list_check_text, m);
    fclose(m);
    int rc = main_emit(o->output, buf, len);
    free(buf);
    return rc;
}

/* A path in a message: at most PATH_MAX bytes of it (longer ones cannot name a file anyway), so the
 * explanation after it fits the message buffer. Use with "%.*s%s". */
#define MAIN_PATH(s) (int)(strlen(s) > PATH_MAX ? PATH_MAX : strlen(s)), (s), strlen(s) > PATH_MAX ? "..." : ""

/* Check early that --output can be created, so a bad path is a usage error before any work. */
static int main_check_output(const char *path, char *err, size_t errlen)
{
    if (!path || strcmp(path, "-") == 0)
        return 0;
    char *copy = NULL;
    int kind = output_target(path, &copy);
    if (kind < 0) {
        snprintf(err, errlen, "--output %.*s%s: %s", MAIN_PATH(path),
                 errno == ENOENT ? "a symbolic link to nothing (No such file or directory)" : strerror(errno));
        return -1;
    }
    if (kind == 0) {
        /* a device or FIFO (/dev/stdout, /dev/null): written in place, so it must be writable */
        if (access(path, W_OK) < 0) {
            snprintf(err, errlen, "--output %.*s%s: cannot write to it: %s", MAIN_PATH(path), strerror(errno));
            return -1;
        }
        return 0;
    }
    const char *slash = strrchr(copy, '/');
    const char *dir = ".";
    if (slash == copy)
        dir = "/";
    else if (slash) {
        copy[slash - copy] = '\0';
        dir = copy;
    }
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) < 0) {
        snprintf(err, errlen, "--output %.*s%s: directory %.*s%s: %s", MAIN_PATH(path), MAIN_PATH(dir),
                 strerror(errno));
        rc = -1;
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--output %.*s%s: %.*s%s is not a directory", MAIN_PATH(path), MAIN_PATH(dir));
        rc = -1;
    } else if (access(dir, W_OK) < 0) {
        snprintf(err, errlen, "--output %.*s%s: directory %.*s%s is not writable: %s", MAIN_PATH(path),
                 MAIN_PATH(dir), strerror(errno));
        rc = -1;
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--output %.*s%s: is a directory", MAIN_PATH(path));
        rc = -1;
    } else {
        /* the name itself: caught now, not after the whole run when the rename fails */
        const char *base = slash ? slash + 1 : copy;
        long name_max = pathconf(dir, _PC_NAME_MAX);
        if (name_max > 0 && strlen(base) > (size_t)name_max) {
            snprintf(err, errlen, "--output %.*s%s: file name longer than %ld bytes", MAIN_PATH(path),
                     name_max);
            rc = -1;
        }
    }
    free(copy);
    return rc;
}

/* The report in the chosen non-JSON format. Returns 0 or -1 (out of memory). */
static int main_write(FILE *m, const struct report *r, const struct cli_options *o, const struct writer_run *run,
                      bool color)
{
    switch (o->format) {
    case CLI_FORMAT_JUNIT:
        return write_junit(m, r, o, run);
    case CLI_FORMAT_PROMETHEUS:
        return write_prometheus(m, r, o, run);
    case CLI_FORMAT_NFD:
        return write_nfd(m, r, o, run);
    case CLI_FORMAT_GITHUB:
        return write_github(m, r, o, run);
    case CLI_FORMAT_TEXT:
    case CLI_FORMAT_JSON:
    default:
        write_text(m, r, o, run->exit_code, color);
        return 0;
    }
}

static bool main_use_color(const struct cli_options *o)
{
    if (o->color == CLI_COLOR_ALWAYS)
        return true;
    if (o->color == CLI_COLOR_NEVER || (o->output && strcmp(o->output, "-") != 0))
        return false;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return false;
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(STDOUT_FILENO);
}

/* `snapshot`: the run is `check`, tracing every host path and saving the CPUID leaves. */
struct main_snap {
    char *tmpdir;  /* for the CPUID dump */
    char *dump;    /* the dump file, or NULL */
    bool own_dump; /* ours to remove */
    char *trace;
    size_t trace_len;
    FILE *m;
};

static int main_snapshot_begin(const struct cli_options *o, struct cli_options *run, struct hostfs *fs,
                               enum probe_mode mode, struct main_snap *ms, char *err, size_t errlen)
{
    memset(ms, 0, sizeof(*ms));
    if (!o->output || strcmp(o->output, "-") == 0) {
        snprintf(err, errlen, "snapshot: -o FILE.tar.gz is required (the report itself goes to standard output)");
        return -1;
    }
    if (mode == PROBE_MODE_SNAPSHOT || mode == PROBE_MODE_SNAPSHOT_LIVE) {
        snprintf(err, errlen, "snapshot: --root must be a directory, not another snapshot");
        return -1;
    }
    *run = *o;
    run->command = "check";
    run->output = NULL;
    if (o->save_cpuid) {
        ms->dump = str_dup(o->save_cpuid);
    } else if (probe_mode_live(mode) || o->cpuid_dump) {
#if defined(__x86_64__) || defined(__i386__)
        const char *tmp = getenv("TMPDIR");
        ms->tmpdir = str_printf("%s/gpucheckup-cpuid-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
        if (ms->tmpdir && mkdtemp(ms->tmpdir)) {
            ms->dump = str_printf("%s/cpuid.dump", ms->tmpdir);
            ms->own_dump = true;
            run->save_cpuid = ms->dump;
        } else {
            free(ms->tmpdir);
            ms->tmpdir = NULL;
        }
#endif
    }
    ms->m = open_memstream(&ms->trace, &ms->trace_len);
    if (!ms->m) {
        snprintf(err, errlen, "snapshot: out of memory");
        return -1;
    }
    fs->trace = ms->m;
    return 0;
}

/* Write the snapshot of report R (exit code RC). 0, or GC_EXIT_INTERNAL with a message on stderr. */
static int main_snapshot_end(const struct cli_options *o, const struct cli_options *run, struct hostfs *fs,
                             struct main_snap *ms, const struct report *r, int rc)
{
    int out = 0;
    if (ms->m) {
        fclose(ms->m);
        fs->trace = NULL;
    }
    if (r) {
        json_object *doc = write_json_document(r, run, rc);
        struct snapshot_input in = {.fs = fs, .trace = ms->trace ? ms->trace : "", .trace_len = ms->trace_len,
                                    .cpuid_dump = ms->dump, .report = doc, .redact = !o->no_redact};
        char *err = NULL;
        if (snapshot_write(o->output, &in, &err) < 0) {
            fprintf(stderr, "gpucheckup: snapshot %s: %s\n", o->output, err ? err : "cannot be written");
            out = GC_EXIT_INTERNAL;
        }
        free(err);
        json_object_put(doc);
    }
    if (ms->own_dump)
        unlink(ms->dump);
    if (ms->tmpdir)
        rmdir(ms->tmpdir);
    free(ms->tmpdir);
    free(ms->dump);
    free(ms->trace);
    return out;
}

/* --root: a directory, or a snapshot (unpacked into S); *MODE the run's mode, computed here once (every
 * probe reads it from its context). 0, or GC_EXIT_USAGE (GC_EXIT_INTERNAL: libarchive could not be loaded)
 * with the message in ERR. */
static int main_open_root(struct cli_options *o, struct hostfs *fs, struct snapshot *s, enum probe_mode *mode,
                          char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    if (o->root) {
        char *serr = NULL;
        int k = snapshot_open(o->root, s, &serr);
        if (k < 0) {
            snprintf(err, errlen, "%s", serr ? serr : "--root: cannot open the snapshot");
            free(serr);
            return k == -2 ? GC_EXIT_INTERNAL : GC_EXIT_USAGE;
        }
        if (k == 1) { /* what it captured reaches the probes through their context (probe_captured) */
            o->root = s->tree;
            o->snapshot = s;
        }
    }
    int frc = hostfs_open(fs, o->root);
    if (frc < 0) {
        const char *root = o->root ? o->root : "/";
        snprintf(err, errlen, "--root %.*s%s: %s", MAIN_PATH(root), strerror(-frc));
        snapshot_close(s);
        return GC_EXIT_USAGE;
    }
    *mode = probe_mode_of(o, fs);
    return 0;
}

/* The libraries the output needs, loaded before the run so that a missing one ends it at once, not
 * after every probe ran: libxml2 for --format=junit, libarchive for `snapshot`. (--root FILE.tar.gz
 * loads libarchive when it meets a file; bench --plot loads cairo in the probe.) 0, or GC_EXIT_INTERNAL
 * with the message in ERR. */
static int main_needs_libs(const struct cli_options *o, bool snapshot_cmd, char *err, size_t errlen)
{
    const char *lerr = NULL;
    if (o->format == CLI_FORMAT_JUNIT && lazyxml_load(&lerr) < 0)
        snprintf(err, errlen, "%s", lerr);
    else if (snapshot_cmd && lazyarchive_load(&lerr) < 0)
        snprintf(err, errlen, "snapshot: %s", lerr);
    return lerr ? GC_EXIT_INTERNAL : 0;
}

/* The GPUCHECKUP_FS_TRACE file (every path the run reads, a line each), or NULL when not asked for. */
static FILE *main_trace_open(void)
{
    const char *trace = getenv("GPUCHECKUP_FS_TRACE");
    FILE *f = trace && *trace ? fopen(trace, "we") : NULL;
    /* A line at a time: children (driver probes) add the paths they read too, and none inherits an
     * unwritten buffer of ours to write a second time. */
    if (f)
        setvbuf(f, NULL, _IOLBF, 0);
    return f;
}

/* Write report R of a run that returned RC (or the failure ERROR when it produced none) to OUT in the
 * format asked for; under --health, only when -o names a file, and the health line is made here.
 * Returns the exit code. */
static int main_output(const struct cli_options *o, const struct cli_options *run, const char *out,
                       const struct report *r, int rc, const char *error, const struct writer_run *wrun_in)
{
    bool json = o->format == CLI_FORMAT_JSON;
    if (rc == GC_EXIT_USAGE || rc == GC_EXIT_INTERNAL)
        return main_fail(json, out, o->compact, rc == GC_EXIT_USAGE ? "input" : "internal",
                         error ? error : "failed", rc);
    if (main_health.on && !out) {
        /* no -o: the line is the whole output */
    } else if (json) {
        int wrc = main_emit_json(out, write_json_document(r, run, rc), o->compact);
        if (wrc)
            rc = wrc;
    } else {
        struct writer_run wrun = *wrun_in;
        wrun.exit_code = rc;
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m) {
            int w = main_write(m, r, run, &wrun, main_use_color(run));
            if (fclose(m) != 0 || w < 0) {
                fprintf(stderr, "gpucheckup: cannot build the %s output (out of memory)\n",
                        cli_format_names[o->format]);
                free(buf);
                buf = NULL;
                rc = GC_EXIT_INTERNAL;
            }
        }
        if (buf) {
            int wrc = main_emit(out, buf, len);
            if (wrc)
                rc = wrc;
            free(buf);
        } else {
            rc = GC_EXIT_INTERNAL;
        }
    }
    if (main_health.on && !main_health.set) {
        main_health.set = true;
        main_health.exit_code = writer_health_exit(r, rc);
        /* a report that could not be written: the run's own failure */
        writer_health_line(main_health.line, sizeof(main_health.line),
                           rc == GC_EXIT_INTERNAL ? NULL : r, main_health.exit_code, "internal",
                           "cannot write the report");
    }
    return rc;
}

int main(int argc, char **argv)
{
    isolate_gate_enter(); /* held whenever this thread is not waiting (isolate.h) */
    bool json = cli_wants_json(argc, argv);
    struct cli_options o;
    char err[PATH_MAX * 2 + 512]; /* messages quote at most two paths of PATH_MAX bytes */
    main_health.on = cli_wants_health(argc, argv);
    if (cli_parse(argc, argv, &o, err, sizeof(err)) < 0) {
        cli_options_free(&o);
        return main_health_finish(main_fail(json, NULL, false, "usage", err, GC_EXIT_USAGE));
    }
    json = o.format == CLI_FORMAT_JSON;
    if (o.help) {
        cli_print_help(stdout);
        cli_options_free(&o);
        return 0;
    }
    if (o.completion) {
        int rc = cli_print_completion(stdout, o.completion) < 0 || fflush(stdout) != 0 ? GC_EXIT_INTERNAL : 0;
        cli_options_free(&o);
        return rc;
    }
    if (o.version) {
        printf("gpucheckup %s\n", GPUCHECKUP_VERSION);
        cli_options_free(&o);
        return 0;
    }
    if (main_check_output(o.output, err, sizeof(err)) < 0 || main_check_health(&o, err, sizeof(err)) < 0) {
        cli_options_free(&o);
        return main_health_finish(main_fail(json, NULL, false, "usage", err, GC_EXIT_USAGE));
    }
    main_health.on = o.health && !o.list_checks;
    if (o.list_checks) {
        int rc = main_list_checks(&o);
        cli_options_free(&o);
        return rc;
    }

    struct hostfs fs;
    struct snapshot snap;
    enum probe_mode mode = PROBE_MODE_LIVE;
    bool snapshot_cmd = strcmp(o.command, "snapshot") == 0;
    /* the report of `snapshot` goes to stdout: -o names the tarball */
    const char *out = snapshot_cmd ? NULL : o.output;
    int orc = main_needs_libs(&o, snapshot_cmd, err, sizeof(err));
    if (orc || (orc = main_open_root(&o, &fs, &snap, &mode, err, sizeof(err))) != 0) {
        int rc = main_fail(json, out, o.compact, orc == GC_EXIT_USAGE ? "usage" : "internal", err, orc);
        cli_options_free(&o);
        return main_health_finish(rc);
    }
    struct cli_options run = o;
    struct main_snap ms = {0};
    if (snapshot_cmd && main_snapshot_begin(&o, &run, &fs, mode, &ms, err, sizeof(err)) < 0) {
        int rc = main_fail(json, NULL, o.compact, "usage", err, GC_EXIT_USAGE);
        main_snapshot_end(&o, &run, &fs, &ms, NULL, 0);
        hostfs_close(&fs);
        snapshot_close(&snap);
        cli_options_free(&o);
        return rc;
    }
    if (!snapshot_cmd)
        fs.trace = main_trace_open();

    struct report *r = NULL;
    char *error = NULL;
    struct timespec t0, m0, m1;
    clock_gettime(CLOCK_REALTIME, &t0);
    clock_gettime(CLOCK_MONOTONIC, &m0);
    int rc = run_diagnosis(&run, &fs, mode, &r, &error);
    clock_gettime(CLOCK_MONOTONIC, &m1);
    if (snapshot_cmd) {
        int src = main_snapshot_end(&o, &run, &fs, &ms, r, rc);
        if (src && r) {
            report_free(r);
            r = NULL;
            free(error);
            error = str_printf("snapshot %s: cannot be written", o.output);
            rc = GC_EXIT_INTERNAL;
        }
    }
    struct writer_run wrun = {
        .started_s = (double)t0.tv_sec + t0.tv_nsec / 1e9,
        .duration_s = (double)(m1.tv_sec - m0.tv_sec) + (m1.tv_nsec - m0.tv_nsec) / 1e9,
    };
    rc = main_output(&o, &run, out, r, rc, error, &wrun);
    free(error);
    if (run_left_threads()) {
        /* The watchdog left a probe's thread blocked in a read (the report names it): it may still read
         * the report, the root and the options, so they stay; the process ends now. */
        snapshot_close(&snap); /* its unpacked tree is removed: no temporary directory is left behind */
        int hrc = main_health_finish(rc);
        /* _exit, not a return: no exit handler (a sanitizer's leak check, a library's destructor) may run
         * while that thread lives; every stream is flushed first. */
        fflush(NULL);
        _exit(hrc);
    }
    report_free(r);
    if (fs.trace)
        fclose(fs.trace);
    hostfs_close(&fs);
    snapshot_close(&snap);
    cli_options_free(&o);
    return main_health_finish(rc);
}
