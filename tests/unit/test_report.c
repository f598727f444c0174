/* test_report.c: unit tests of the report model and both writers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "strutil.h"
#include "results/result_cpu.h"
#include "results/result_cuda.h"
#include "results/result_icd.h"
#include "results/result_opencl.h"
#include "results/result_pci.h"
#include "results/result_smoke.h"
#include "typed.h"
#include "writer.h"

static struct cli_options test_opts(const char *command)
{
    struct cli_options o;
    memset(&o, 0, sizeof(o));
    o.command = command;
    return o;
}

static void test_findings_take_catalogue_severity(void **state)
{
    (void)state;
    struct report *r = report_new();
    assert_non_null(r);
    struct report_finding *f = report_add_finding(r, "core.probe-failed", "cpu", "probe %s failed", "cpu");
    assert_non_null(f);
    assert_int_equal(f->severity, REPORT_SEV_WARNING);
    assert_string_equal(f->message, "probe cpu failed");
    assert_non_null(f->hint); /* default hint from the catalogue */
    f = report_add_finding(r, "require.unmet", "avx", "needs avx");
    assert_int_equal(f->severity, REPORT_SEV_ERROR);
    assert_false(report_is_ready(r));
    assert_int_equal(report_count_severity(r, REPORT_SEV_ERROR), 1);
    assert_int_equal(report_count_severity(r, REPORT_SEV_WARNING), 1);
    assert_non_null(report_find_finding(r, "require.unmet", "avx"));
    assert_null(report_find_finding(r, "require.unmet", "avx2"));
    report_free(r);
}

static void test_sorted_errors_first_causes_before_consequences(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_finding(r, "core.probe-failed", "a", "warning one");
    struct report_finding *c = report_add_finding(r, "require.unmet", "consequence", "caused");
    report_finding_set_cause(c, "require.unmet", "root");
    report_add_finding(r, "require.unmet", "root", "root cause");
    size_t n = 0;
    const struct report_finding **s = report_sorted_findings(r, &n);
    assert_int_equal(n, 3);
    assert_string_equal(s[0]->subject, "root");
    assert_string_equal(s[1]->subject, "consequence");
    assert_string_equal(s[2]->subject, "a");
    free(s);
    report_free(r);
}

static void test_untrusted_text_is_sanitised(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_finding *f = report_add_finding(r, "core.probe-failed", "bad\x01subject\xff", "esc\x1b[31m");
    report_finding_add_evidence(f, "/sys/x", "v\n2");
    assert_string_equal(f->subject, "bad?subject?");
    assert_string_equal(f->message, "esc?[31m");
    assert_string_equal(f->evidence[0].value, "v?2");
    report_free(r);
}

static void test_requirements_decide_readiness(void **state)
{
    (void)state;
    struct report *r = report_new();
    report_add_requirement(r, "avx", true, "present");
    assert_true(report_is_ready(r));
    report_add_requirement(r, "gpu", false, "no GPU");
    assert_false(report_is_ready(r));
    report_free(r);
}

static void test_sections_and_notes(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    report_section_set_status(s, REPORT_STATUS_SKIPPED, "because %d", 42);
    report_section_add_note(s, "cannot read %s", "/proc/x");
    report_section_add_line(s, REPORT_MARK_OK, "CPU", "fine");
    assert_string_equal(s->reason, "because 42");
    json_object *notes = json_object_object_get(s->data, "notes");
    assert_int_equal(json_object_array_length(notes), 1);
    assert_ptr_equal(report_find_section(r, "cpu"), s);
    assert_null(report_find_section(r, "pci"));
    report_free(r);
}

static void test_json_document_shape(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    json_object_object_add(s->data, "vendor", json_object_new_string("Test"));
    /* A probe key that collides with a common key must not replace it. */
    json_object_object_add(s->data, "status", json_object_new_string("bogus"));
    struct report_finding *f = report_add_finding(r, "require.unmet", "x", "m");
    report_finding_add_evidence(f, "file", "value");
    struct cli_options o = test_opts("cpu");
    json_object *doc = write_json_document(r, &o, 1);
    assert_int_equal(json_object_get_int(json_object_object_get(doc, "schema_version")), 1);
    json_object *cpu = json_object_object_get(doc, "cpu");
    assert_string_equal(json_object_get_string(json_object_object_get(cpu, "status")), "ok");
    assert_string_equal(json_object_get_string(json_object_object_get(cpu, "vendor")), "Test");
    json_object *fa = json_object_object_get(doc, "findings");
    assert_int_equal(json_object_array_length(fa), 1);
    json_object *f0 = json_object_array_get_idx(fa, 0);
    assert_string_equal(json_object_get_string(json_object_object_get(f0, "severity")), "error");
    json_object *v = json_object_object_get(doc, "verdict");
    assert_false(json_object_get_boolean(json_object_object_get(v, "ready")));
    assert_int_equal(json_object_get_int(json_object_object_get(v, "exit_code")), 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(write_json_to(m, doc, true), 0);
    fclose(m);
    assert_non_null(strstr(buf, "\"id\":\"require.unmet\""));
    assert_int_equal(buf[len - 1], '\n');
    assert_ptr_equal(strchr(buf, '\n'), buf + len - 1); /* compact: one line */
    free(buf);
    json_object_put(doc);
    report_free(r);
}

static char *test_render_text(const struct report *r, const char *command, bool quiet, bool color)
{
    struct cli_options o = test_opts(command);
    o.quiet = quiet;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    write_text(m, r, &o, report_is_ready(r) ? 0 : 1, color);
    fclose(m);
    return buf;
}

static void test_text_summary_findings_verdict(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    report_section_add_line(s, REPORT_MARK_OK, "CPU", "Test CPU, 2 cores");
    struct report_finding *f = report_add_finding(r, "require.unmet", "gpu", "no GPU passed");
    report_finding_set_hint(f, "install a driver");
    r->verdict_text = strdup("Verdict: not ready");
    char *t = test_render_text(r, "check", false, false);
    char *sum = strstr(t, "Test CPU, 2 cores");
    char *find = strstr(t, "require.unmet");
    char *verdict = strstr(t, "Verdict: not ready");
    assert_non_null(sum);
    assert_non_null(find);
    assert_non_null(verdict);
    assert_true(sum < find && find < verdict); /* summary, findings, verdict: in that order */
    assert_non_null(strstr(t, "fix: install a driver"));
    assert_null(strchr(t, '\033'));
    free(t);
    t = test_render_text(r, "check", false, true);
    assert_non_null(strchr(t, '\033'));
    free(t);
    /* quiet: no summary */
    t = test_render_text(r, "check", true, false);
    assert_null(strstr(t, "Test CPU"));
    assert_non_null(strstr(t, "require.unmet"));
    free(t);
    report_free(r);
}

static void test_quiet_all_clear_is_one_line(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    report_section_add_line(s, REPORT_MARK_OK, "CPU", "fine");
    r->verdict_text = strdup("Verdict: ready");
    char *t = test_render_text(r, "check", true, false);
    assert_string_equal(t, "Verdict: ready\n");
    free(t);
    report_free(r);
}

static void test_error_document(void **state)
{
    (void)state;
    json_object *doc = write_json_error("usage", "--bogus: unknown\x02", 2);
    json_object *e = json_object_object_get(doc, "error");
    assert_string_equal(json_object_get_string(json_object_object_get(e, "message")), "--bogus: unknown?");
    assert_int_equal(json_object_get_int(json_object_object_get(e, "exit_code")), 2);
    json_object_put(doc);
}

/* ---- typed results (issue 13 item 5) ---- */

static void test_typed_names_and_tri(void **state)
{
    (void)state;
    assert_string_equal(gc_name(&result_smoke_status_names, RESULT_SMOKE_TIMEOUT), "timeout");
    assert_null(gc_name(&result_smoke_status_names, -1));
    assert_null(gc_name(&result_smoke_status_names, 99));
    assert_int_equal(gc_name_parse(&result_smoke_prec_status_names, "not-run"), RESULT_SMOKE_PREC_NOT_RUN);
    assert_int_equal(gc_name_parse(&result_smoke_prec_status_names, "Pass"), -1);
    assert_int_equal(gc_name_parse(&result_smoke_prec_status_names, NULL), -1);
    assert_null(gc_tri_json(GC_TRI_UNKNOWN));
    json_object *t = gc_tri_json(GC_TRI_NO);
    assert_true(json_object_is_type(t, json_type_boolean));
    assert_false(json_object_get_boolean(t));
    json_object_put(t);
    assert_string_equal(gc_tri_name(GC_TRI_YES), "yes");
}

/* A smoke section as the probe prints it (every member, in its order), with a note after. */
static const char *SMOKE_DOC =
    "{\"source\":\"opencl\",\"n\":256,\"selection\":\"all\",\"devices\":[{\"platform_index\":0,\"device_index\":1,"
    "\"name\":\"NVIDIA H100\",\"type\":[\"GPU\"],\"pci_address\":\"0000:01:00.0\",\"status\":\"pass\",\"n\":256,"
    "\"build_ms\":1.5,\"kernel_ms\":0.25,\"host_ms\":0.5,\"timer\":\"profiling\",\"timer_reason\":\"ok\","
    "\"gflops\":134.2,\"gflops_reason\":null,\"peak_gflops\":60000,\"max_error\":1.2e-05,\"wrong_elements\":0,"
    "\"first_mismatches\":[],\"precisions\":{\"fp32\":\"pass\",\"fp64\":\"pass\",\"fp16\":\"unsupported\"},"
    "\"passes\":[],\"round_trip\":{\"status\":\"pass\"},\"build_log\":null,\"error\":null,\"detail\":\"exact\","
    "\"stage\":null,\"elapsed_ms\":12.5},{\"platform_index\":1,\"device_index\":0,\"name\":null,\"type\":null,"
    "\"pci_address\":null,\"status\":\"skipped\",\"precisions\":{\"fp32\":\"not-run\"},\"detail\":\"not selected\","
    "\"stage\":null}],\"notes\":[\"a note\"]}";

/* Read TEXT back into the smoke result; its JSON must print exactly as TEXT. */
static struct report_section *smoke_round_trip(struct report *r, const char *text)
{
    struct report_section *s = report_add_section(r, "smoke");
    json_object_put(s->data);
    s->data = json_tokener_parse(text);
    assert_non_null(s->data);
    assert_int_equal(report_section_adopt(s, &result_smoke_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), text);
    json_object_put(back);
    return s;
}

static void test_smoke_result_round_trip(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = smoke_round_trip(r, SMOKE_DOC);
    const struct result_smoke *res = result_smoke_get(r);
    assert_non_null(res);
    assert_int_equal(res->n, 256);
    assert_int_equal(res->selection, RESULT_SMOKE_SEL_ALL);
    assert_int_equal(res->n_devs, 2);
    assert_int_equal(res->devs[0].status, RESULT_SMOKE_PASS);
    assert_int_equal(res->devs[0].gpu, GC_TRI_YES);
    assert_int_equal(res->devs[0].prec[COMPUTE_FP64], RESULT_SMOKE_PREC_PASS);
    assert_int_equal(res->devs[0].prec[COMPUTE_FP16], RESULT_SMOKE_PREC_UNSUPPORTED);
    assert_string_equal(res->devs[0].pci_address, "0000:01:00.0");
    assert_int_equal(res->devs[1].status, RESULT_SMOKE_SKIPPED);
    assert_int_equal(res->devs[1].gpu, GC_TRI_UNKNOWN); /* type null: not "not a GPU" */
    assert_int_equal(res->devs[1].prec[COMPUTE_FP64], -1);
    /* The typed members left the data; what is not typed stays. */
    assert_false(json_object_object_get_ex(s->data, "devices", NULL));
    assert_true(json_object_object_get_ex(s->data, "notes", NULL));
    /* Not ok: no typed result for the doctor. */
    s->status = REPORT_STATUS_SKIPPED;
    assert_null(result_smoke_get(r));
    report_free(r);
}

/* Members of shapes this version does not type stay JSON, in place, and print back unchanged. */
static void test_smoke_result_odd_shapes(void **state)
{
    (void)state;
    struct report *r = report_new();
    smoke_round_trip(r, "{\"source\":\"opencl\",\"devices\":[{\"platform_index\":\"0\",\"type\":\"CPU, GPU\","
                        "\"status\":5,\"precisions\":{\"fp32\":\"pass\",\"fp128\":\"pass\"},\"detail\":7,"
                        "\"future\":[1]}]}");
    const struct result_smoke *res = result_smoke_get(r);
    assert_non_null(res);
    assert_int_equal(res->n_devs, 1);
    const struct result_smoke_dev *d = &res->devs[0];
    assert_false(d->have & RESULT_SMOKE_HAVE_STATUS);
    assert_false(d->have & RESULT_SMOKE_HAVE_PLATFORM);
    assert_false(d->have & RESULT_SMOKE_HAVE_PRECISIONS);
    assert_false(d->have & RESULT_SMOKE_HAVE_DETAIL);
    assert_int_equal(d->gpu, GC_TRI_YES); /* one type string, as older documents had */
    report_free(r);

    /* Precisions out of the printed order, and devices that are not all objects: not typed. */
    r = report_new();
    smoke_round_trip(r, "{\"devices\":[{\"precisions\":{\"fp64\":\"pass\",\"fp32\":\"pass\"}}]}");
    assert_int_equal(result_smoke_get(r)->devs[0].prec[COMPUTE_FP64], -1);
    report_free(r);
    r = report_new();
    struct report_section *s = smoke_round_trip(r, "{\"n\":8,\"devices\":[{\"status\":\"pass\"},3]}");
    assert_int_equal(result_smoke_get(r)->n_devs, 0);
    assert_true(json_object_object_get_ex(s->data, "devices", NULL));
    report_free(r);

    /* A member of another shape prints in its place, before typed ones that follow it. */
    r = report_new();
    smoke_round_trip(r, "{\"n\":\"8\",\"selection\":1,\"devices\":[],\"notes\":[]}");
    report_free(r);
    /* json-c reads "5e+" as a double printed 5: the next reading types it. Both print alike. */
    r = report_new();
    s = report_add_section(r, "smoke");
    json_object_put(s->data);
    s->data = json_tokener_parse("{\"devices\":[],\"n\":5e+}");
    assert_non_null(s->data);
    assert_int_equal(report_section_adopt(s, &result_smoke_ops), 0);
    assert_false(result_smoke_get(r)->have & RESULT_SMOKE_HAVE_N);
    json_object *j = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN), "{\"n\":5,\"devices\":[]}");
    json_object_put(j);
    report_free(r);
    r = report_new();
    smoke_round_trip(r, "{\"n\":5,\"devices\":[]}");
    assert_true(result_smoke_get(r)->have & RESULT_SMOKE_HAVE_N);
    report_free(r);
}

/* The cuda facts are read beside the section's JSON, which stays as it is. */
static void test_cuda_facts_beside_json(void **state)
{
    (void)state;
    static const char *doc =
        "{\"environment\":{},\"driver\":{\"status\":\"ok\",\"driver_version\":12040},\"devices\":[{\"ordinal\":0,"
        "\"name\":\"A\",\"pci_address\":\"0000:01:00.0\",\"cc_major\":8,\"cc_minor\":6},{\"ordinal\":1,\"cc_major\":8,"
        "\"cc_minor\":12},7],\"nvml\":null,\"smoke\":[{\"ordinal\":0,\"status\":\"pass\"},{\"ordinal\":1,\"status\":"
        "\"melted\"},{\"status\":\"pass\"}]}";
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cuda");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    assert_int_equal(report_section_adopt(s, &result_cuda_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), doc);
    json_object_put(back);
    const struct result_cuda *c = result_cuda_get(r);
    assert_non_null(c);
    assert_int_equal(c->driver_status, RESULT_CUDA_DRV_OK);
    assert_int_equal(c->driver_version, 12040);
    assert_int_equal(c->n_devs, 3); /* the one that is not an object counts, unknown */
    assert_int_equal(c->devs[0].cc, 86);
    assert_string_equal(c->devs[0].pci_address, "0000:01:00.0");
    assert_int_equal(c->devs[1].cc, -1); /* minor 12: not a compute capability */
    assert_int_equal(c->devs[2].ordinal, -1);
    assert_int_equal(result_cuda_smoke_of(c, 0), RESULT_CUDA_SMOKE_PASS);
    assert_int_equal(result_cuda_smoke_of(c, 1), -2); /* a status this version does not know */
    assert_int_equal(result_cuda_smoke_of(c, 2), -1); /* not tested */
    assert_null(c->smoke_not_run);
    assert_null(c->library_version); /* no driver.library */
    report_free(r);
    r = report_new();
    s = report_add_section(r, "cuda");
    json_object_put(s->data);
    s->data = json_tokener_parse("{\"driver\":{\"status\":\"init-failed\",\"library\":{\"path\":\"/l/libcuda.so.1\","
                                 "\"version\":\"580.1\"},\"kernel_module_version\":\"580.2\"}}");
    assert_int_equal(report_section_adopt(s, &result_cuda_ops), 0);
    c = result_cuda_get(r);
    assert_string_equal(c->library_path, "/l/libcuda.so.1");
    assert_string_equal(c->library_version, "580.1");
    assert_string_equal(c->kernel_module_version, "580.2");
    assert_int_equal(c->driver_status, RESULT_CUDA_DRV_INIT_FAILED);
    report_free(r);
}


/* The pci facts are read beside the section's JSON, which stays as it is, odd shapes included. */
static void test_pci_facts_beside_json(void **state)
{
    (void)state;
    static const char *doc =
        "{\"bus_visible\":true,\"devices\":[{\"address\":\"0000:01:00.0\",\"class\":\"0302\",\"device_id\":\"2330\","
        "\"driver\":\"nvidia\",\"kind\":\"compute-gpu\",\"link\":{\"max_width\":16},\"vendor_id\":\"10de\"},"
        "{\"address\":\"0000:02:00.0\",\"kind\":\"melted\",\"vendor_id\":\"ffff\"},7],\"modules\":{\"nvidia\":"
        "{\"loaded\":true},\"nvidia_uvm\":{\"loaded\":null}},\"nodes\":[{\"path\":\"/dev/nvidia0\",\"present\":true,"
        "\"compute\":true,\"mode\":\"0666\",\"uid\":0,\"gid\":44,\"group\":\"video\"},{\"path\":\"/dev/x\",\"mode\":"
        "\"rw\"}],\"nvidia\":{\"kernel_module\":{\"files\":[]},\"kernel_module_version\":\"580.1\"},\"platform\":"
        "{\"container\":\"docker\",\"kind\":\"wsl2\",\"nvidia_container_toolkit\":{\"driver_capabilities\":\"compute\"},"
        "\"wsl\":{\"gpu_vendors\":[\"nvidia\",3]}},\"source\":\"sysfs\"}";
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "pci");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    assert_int_equal(report_section_adopt(s, &result_pci_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), doc);
    json_object_put(back);
    const struct result_pci *p = result_pci_get(r);
    assert_non_null(p);
    assert_true(p->have_devices);
    assert_int_equal(p->n_devs, 3); /* the one that is not an object counts, unknown */
    assert_int_equal(p->devs[0].vendor, 0x10de);
    assert_int_equal(p->devs[0].kind, RESULT_PCI_KIND_COMPUTE);
    assert_true(result_pci_dev_computes(&p->devs[0]));
    assert_non_null(p->devs[0].link);
    assert_int_equal(p->devs[1].vendor, -1); /* all ones: unreadable */
    assert_int_equal(p->devs[1].kind, -1);   /* a kind this version does not know */
    assert_null(p->devs[2].address);
    assert_ptr_equal(result_pci_dev_at(p, "0000:02:00.0"), &p->devs[1]);
    assert_null(result_pci_dev_at(p, "0000:03:00.0"));
    assert_int_equal(p->n_nodes, 2);
    assert_true(p->nodes[0].have_mode);
    assert_int_equal(p->nodes[0].mode, 0666);
    assert_int_equal(p->nodes[0].gid, 44);
    assert_false(p->nodes[1].have_mode); /* not octal */
    assert_int_equal(p->nodes[1].present, GC_TRI_UNKNOWN);
    assert_ptr_equal(result_pci_node_at(p, "/dev/x"), &p->nodes[1]);
    assert_int_equal(result_pci_module_loaded(p, "nvidia"), GC_TRI_YES);
    assert_int_equal(result_pci_module_loaded(p, "nvidia_uvm"), GC_TRI_UNKNOWN);
    assert_int_equal(result_pci_module_loaded(p, "amdgpu"), GC_TRI_UNKNOWN);
    assert_true(p->nvidia_kmod_unloadable); /* no module file installed */
    assert_string_equal(p->nvidia_kmod_version, "580.1");
    assert_int_equal(p->platform, RESULT_PCI_PLATFORM_WSL2);
    assert_string_equal(p->container, "docker");
    assert_string_equal(p->toolkit_caps, "compute");
    assert_int_equal(p->n_wsl_vendors, 1); /* the entry that is not a string is left out */
    assert_int_equal(p->bus_visible, GC_TRI_YES);
    assert_string_equal(p->source, "sysfs");
    report_section_set_status(s, REPORT_STATUS_FAILED, "x");
    assert_null(result_pci_get(r)); /* only a section that ran ok gives facts */
    report_free(r);
}

/* The cpu facts likewise: the JSON prints back as it was; a flag that is not a boolean is unknown (and the flags
 * stay in the data then). */
static void test_cpu_facts_beside_json(void **state)
{
    (void)state;
    static const char *doc = "{\"architecture\":\"x86_64\",\"flags\":{\"avx\":false,\"avx2\":null,\"sse2\":true,"
                             "\"fma\":1},\"x86_64_level\":3}";
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    assert_int_equal(report_section_adopt(s, &result_cpu_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), doc);
    json_object_put(back);
    const struct result_cpu *c = result_cpu_get(r);
    assert_non_null(c);
    assert_string_equal(c->architecture, "x86_64");
    assert_int_equal(c->x86_64_level, 3);
    assert_int_equal(result_cpu_flag(c, "avx"), GC_TRI_NO);
    assert_int_equal(result_cpu_flag(c, "sse2"), GC_TRI_YES);
    assert_int_equal(result_cpu_flag(c, "avx2"), GC_TRI_UNKNOWN);
    assert_int_equal(result_cpu_flag(c, "fma"), GC_TRI_UNKNOWN); /* not a boolean */
    assert_int_equal(result_cpu_flag(c, "avx512f"), GC_TRI_UNKNOWN);
    assert_int_equal(result_cpu_flag(NULL, "avx"), GC_TRI_UNKNOWN);
    assert_int_equal(c->have, RESULT_CPU_HAVE_ARCHITECTURE | RESULT_CPU_HAVE_X86_64_LEVEL); /* flags: "fma":1 stays */
    report_free(r);
}

/* cpu's to_json prints its members where the data had them, whichever order a path (or a capture) wrote:
 * a note before the flags, the not-x86 path's nulls; the typed values come from the result. */
static void test_cpu_members_keep_their_places(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"source\":\"cpuid\",\"notes\":[\"n\"],\"architecture\":\"x86_64\",\"flags\":{\"avx\":true,\"sse2\":null},"
        "\"libcpuid\":null,\"x86_64_level\":1}",
        "{\"flags\":null,\"x86_64_level\":null,\"libcpuid\":null,\"features\":[\"fp\"],\"architecture\":null}",
        "{\"x86_64_level\":200,\"architecture\":7,\"flags\":{}}",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        struct report *r = report_new();
        struct report_section *s = report_add_section(r, "cpu");
        json_object_put(s->data);
        s->data = json_tokener_parse(docs[i]);
        assert_int_equal(report_section_adopt(s, &result_cpu_ops), 0);
        json_object *back = report_section_json(s);
        assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), docs[i]);
        json_object_put(back);
        const struct result_cpu *c = result_cpu_get(r);
        if (i == 0) { /* the values print from the result: a change to it shows in the JSON */
            assert_int_equal(result_cpu_flag(c, "avx"), GC_TRI_YES);
            ((struct result_cpu *)c)->x86_64_level = 2;
            back = report_section_json(s);
            assert_non_null(strstr(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), "\"libcpuid\":null,\"x86_64_level\":2}"));
            json_object_put(back);
        } else if (i == 1) {
            assert_false(c->flags_known);
            assert_null(c->architecture);
            assert_int_equal(c->x86_64_level, -1);
        } else { /* a level out of range, an architecture not a string: left in the data; the empty table typed */
            assert_int_equal(c->have, RESULT_CPU_HAVE_FLAGS);
            assert_true(c->flags_known);
            assert_int_equal(c->x86_64_level, -1);
        }
        report_free(r);
    }
}

/* The opencl facts likewise: platforms and their devices' types, the JSON left as it is. */
static void test_opencl_facts_beside_json(void **state)
{
    (void)state;
    static const char *doc = "{\"platforms\":[{\"name\":\"Intel(R) OpenCL Graphics\",\"devices\":[{\"name\":\"Arc\","
                             "\"type\":[\"GPU\"],\"opencl_version\":\"3.0\"},{\"type\":[7,\"CPU\"]},3]},5]}";
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "opencl");
    json_object_put(s->data);
    s->data = json_tokener_parse(doc);
    assert_int_equal(report_section_adopt(s, &result_opencl_ops), 0);
    json_object *back = report_section_json(s);
    assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), doc);
    json_object_put(back);
    const struct result_opencl *o = result_opencl_get(r);
    assert_non_null(o);
    assert_int_equal(o->n_platforms, 2); /* the one that is not an object counts, unknown */
    assert_string_equal(o->platforms[0].name, "Intel(R) OpenCL Graphics");
    assert_null(o->platforms[1].name);
    assert_int_equal(o->platforms[0].n_devs, 3);
    assert_true(o->platforms[0].devs[0].gpu);
    assert_string_equal(o->platforms[0].devs[0].version, "3.0");
    assert_false(o->platforms[0].devs[1].gpu);
    assert_true(o->platforms[0].devs[1].cpu);
    assert_false(o->platforms[0].devs[2].cpu);
    assert_int_equal(json_object_array_length(o->platforms_json), 2); /* the list itself, for cldevices */
    free(o->platforms[0].devs[0].name); /* the typed members print from the result, in their places */
    ((struct result_opencl *)o)->platforms[0].devs[0].name = strdup("B580");
    back = report_section_json(s);
    assert_non_null(strstr(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), "[{\"name\":\"B580\",\"type\""));
    json_object_put(back);
    report_free(r);
}

/* Every fixture's pci, cpu, icd and opencl section (tests/fixtures/NAME/EXPECTED-*.json, LIVE-*.json) reads into
 * the typed result and prints back byte for byte (cpu's through its to_json, its members in their places): the
 * probe's own section and a snapshot's are read by the same parser. */
static void test_pci_fixtures_round_trip(void **state)
{
    (void)state;
    const char *src = getenv("GPUCHECKUP_SOURCE_ROOT");
    assert_non_null(src);
    char *dir = str_printf("%s/tests/fixtures", src);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0, n_cpu = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *sub = str_printf("%s/%s", dir, e->d_name);
        DIR *f = e->d_name[0] != '.' ? opendir(sub) : NULL;
        struct dirent *g;
        while (f && (g = readdir(f))) {
            size_t len = strlen(g->d_name);
            if (len < 5 || strcmp(g->d_name + len - 5, ".json") != 0)
                continue;
            char *path = str_printf("%s/%s", sub, g->d_name);
            json_object *docj = json_object_from_file(path), *sec = NULL;
            free(path);
            assert_non_null(docj);
            static const struct report_result_ops *const kinds[] = {&result_pci_ops, &result_cpu_ops, &result_icd_ops,
                                                                    &result_opencl_ops};
            for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                if (!json_object_object_get_ex(docj, kinds[k]->section, &sec) || !json_object_is_type(sec, json_type_object))
                    continue;
                struct report *r = report_new();
                struct report_section *s = report_add_section(r, kinds[k]->section);
                json_object_put(s->data);
                s->data = json_object_get(sec);
                char *before = strdup(json_object_to_json_string_ext(sec, JSON_C_TO_STRING_PLAIN));
                assert_int_equal(report_section_adopt(s, kinds[k]), 0);
                json_object *back = report_section_json(s);
                assert_string_equal(json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN), before);
                json_object_put(back);
                assert_non_null(report_result(r, kinds[k]));
                if (kinds[k] == &result_pci_ops) {
                    assert_true(result_pci_get(r)->have_devices);
                    n++;
                }
                if (kinds[k] == &result_cpu_ops) { /* the live probe's members: all typed, none left in the data */
                    assert_int_equal(result_cpu_get(r)->have, RESULT_CPU_HAVE_ARCHITECTURE | RESULT_CPU_HAVE_X86_64_LEVEL |
                                                                  RESULT_CPU_HAVE_FLAGS);
                    assert_null(json_object_object_get(s->data, "flags"));
                    n_cpu++;
                }
                free(before);
                report_free(r);
            }
            json_object_put(docj);
        }
        if (f)
            closedir(f);
        free(sub);
    }
    closedir(d);
    free(dir);
    assert_true(n >= 3); /* two EXPECTED-pci.json, one LIVE-check.json at least */
    assert_true(n_cpu >= 1); /* LIVE-check.json */
}

/* No summary line says more than the findings it summarises (issue 35: "[FAIL] ROCm" above "ready"). */
static void test_marks_agree_with_findings(void **state)
{
    (void)state;
    struct report *r = report_new();
    struct report_section *s = report_add_section(r, "cpu");
    report_section_add_line(s, REPORT_MARK_ERROR, "CPU", "error, no finding");
    report_section_add_line(s, REPORT_MARK_WARN, "CPU", "warning, no finding");
    report_section_add_line(s, REPORT_MARK_OK, "CPU", "ok");
    report_section_add_line(s, REPORT_MARK_SKIP, "CPU", "skipped");
    report_add_finding(r, "require.unmet", "gpu", "not a finding the cpu section summarises");
    report_marks_agree(r);
    s = report_find_section(r, "cpu");
    assert_int_equal(s->lines[0].mark, REPORT_MARK_INFO);
    assert_int_equal(s->lines[1].mark, REPORT_MARK_INFO);
    assert_int_equal(s->lines[2].mark, REPORT_MARK_OK);
    assert_int_equal(s->lines[3].mark, REPORT_MARK_SKIP);
    /* a core.* warning (the probe failed) leaves every line in doubt, up to a warning */
    report_section_add_line(s, REPORT_MARK_ERROR, "CPU", "error");
    report_section_add_line(s, REPORT_MARK_WARN, "CPU", "warning");
    report_add_finding(r, "core.probe-failed", "cpu", "the cpu probe failed");
    report_marks_agree(r);
    assert_int_equal(s->lines[4].mark, REPORT_MARK_WARN);
    assert_int_equal(s->lines[5].mark, REPORT_MARK_WARN);
    report_free(r);
}

/* A probe's finished section takes its place in the report with the placeholder's name untouched (other
 * threads read names while it is published: the watchdog's run, TSan's finding); the source is emptied. */
/* A finding's address holds while more are added: a probe keeps a pointer, adds the finding's cause or
 * more findings, then sets the first one's hint or evidence (under ASan a moved finding is a
 * use-after-free; without it the checks below read freed memory's contents). */
static void test_finding_pointer_survives_adds(void **state)
{
    (void)state;
    struct report *r = report_new();
    assert_non_null(r);
    struct report_finding *first = report_add_finding(r, "core.probe-failed", "first", "the first");
    assert_non_null(first);
    for (int i = 0; i < 1000; i++) {
        char subj[32];
        snprintf(subj, sizeof(subj), "s%d", i);
        assert_non_null(report_add_finding(r, "require.unmet", subj, "finding %d", i));
    }
    assert_int_equal(r->n_findings, 1001);
    assert_ptr_equal(r->findings[0], first);
    assert_ptr_equal(report_find_finding(r, "core.probe-failed", "first"), first);
    assert_string_equal(first->message, "the first");
    assert_string_equal(first->subject, "first");
    report_finding_set_hint(first, "hint %d", 1);
    report_finding_add_evidence(first, "test", "after %d adds", 1000);
    report_finding_set_cause(first, "require.unmet", "s999");
    assert_string_equal(r->findings[0]->hint, "hint 1");
    assert_string_equal(r->findings[0]->caused_by_subject, "s999");
    assert_string_equal(r->findings[1000]->message, "finding 999");
    report_free(r);
}

static void test_section_publish_keeps_the_name(void **state)
{
    (void)state;
    struct report *r = report_new();
    assert_non_null(r);
    struct report_section *dst = report_add_section(r, "pci");
    assert_non_null(dst);
    const char *name = dst->name;
    struct report_section src;
    memset(&src, 0, sizeof(src));
    assert_int_equal(report_section_init(&src, "pci"), 0);
    report_section_set_status(&src, REPORT_STATUS_SKIPPED, "a reason");
    report_section_add_line(&src, REPORT_MARK_INFO, "GPU", "%s", "no GPU");
    json_object_object_add(src.data, "k", json_object_new_int(7));
    report_section_publish(dst, &src);
    assert_ptr_equal(dst->name, name);
    assert_string_equal(dst->name, "pci");
    assert_int_equal(dst->status, REPORT_STATUS_SKIPPED);
    assert_string_equal(dst->reason, "a reason");
    assert_int_equal(dst->n_lines, 1);
    assert_int_equal(json_object_get_int(json_object_object_get(dst->data, "k")), 7);
    assert_null(src.name);
    assert_null(src.data);
    assert_int_equal(src.n_lines, 0);
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_findings_take_catalogue_severity),
        cmocka_unit_test(test_sorted_errors_first_causes_before_consequences),
        cmocka_unit_test(test_untrusted_text_is_sanitised),
        cmocka_unit_test(test_requirements_decide_readiness),
        cmocka_unit_test(test_sections_and_notes),
        cmocka_unit_test(test_json_document_shape),
        cmocka_unit_test(test_text_summary_findings_verdict),
        cmocka_unit_test(test_quiet_all_clear_is_one_line),
        cmocka_unit_test(test_error_document),
        cmocka_unit_test(test_typed_names_and_tri),
        cmocka_unit_test(test_smoke_result_round_trip),
        cmocka_unit_test(test_smoke_result_odd_shapes),
        cmocka_unit_test(test_cuda_facts_beside_json),
        cmocka_unit_test(test_pci_facts_beside_json),
        cmocka_unit_test(test_pci_fixtures_round_trip),
        cmocka_unit_test(test_cpu_facts_beside_json),
        cmocka_unit_test(test_cpu_members_keep_their_places),
        cmocka_unit_test(test_opencl_facts_beside_json),
        cmocka_unit_test(test_marks_agree_with_findings),
        cmocka_unit_test(test_section_publish_keeps_the_name),
        cmocka_unit_test(test_finding_pointer_survives_adds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
