/* test_smoke_shared.c: unit tests of the smoke part of the shared cl-once child (probes/smoke/smoke_shared.c), on PoCL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "isolate.h"
#include "jsonget.h"
#include "jsonnum.h"
#include "opencl_internal.h"
#include "clonce.h"
#include "smoke_shared.h"

/* What one child gets: the plan, and the page it marks (MAP_SHARED: read here after it ends). */
struct shared_case {
    struct smoke_shared_plan plan;
    struct smoke_shared_page *page;
};

/* In the child, as the cl-once child does it: enumerate, then the smoke part. */
static json_object *child_enumerate_and_test(void *arg)
{
    struct shared_case *c = arg;
    json_object *cl = ocl_enumerate(NULL);
    json_object *out = smoke_clonce_part.smoke_child(&c->plan, c->page, cl);
    return out ? out : json_object_new_string("null");
}

static struct smoke_shared_page *page_new(void)
{
    void *p = mmap(NULL, sizeof(struct smoke_shared_page), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 0, sizeof(struct smoke_shared_page));
    return p;
}

/* Run the smoke part for PLAN on two PoCL devices; *PAGE is the page it filled (munmap it). */
static json_object *run_case(struct smoke_shared_plan plan, struct smoke_shared_page **page)
{
    struct shared_case c = {.plan = plan, .page = page_new()};
    struct isolate_result res;
    isolate_run(child_enumerate_and_test, &c, 120000, &res);
    assert_int_equal(res.status, ISOLATE_OK);
    json_object *v = json_object_get(res.value);
    isolate_result_clear(&res);
    *page = c.page;
    return v;
}

static struct smoke_shared_plan plan_all(void)
{
    return (struct smoke_shared_plan){.on = true, .n = 16, .cpu_n = 16, .dev_platform = -1, .dev_index = -1,
                                      .deadline_ms = jsonnum_now_ms() + 120000};
}

/* Every device tested side by side, each marked in the page with the stage it ended in. */
static void test_both_devices_pass_and_are_marked(void **state)
{
    (void)state;
    struct smoke_shared_page *pg;
    json_object *v = run_case(plan_all(), &pg);
    json_object *devs = jsonget(v, "devices");
    assert_non_null(devs);
    assert_int_equal(json_object_array_length(devs), 2);
    for (int i = 0; i < 2; i++) {
        json_object *d = json_object_array_get_idx(devs, (size_t)i);
        assert_int_equal(jsonget_int(d, "platform", -1), 0);
        assert_int_equal(jsonget_int(d, "device", -1), i);
        assert_string_equal(jsonget_str(jsonget(d, "result"), "status"), "pass");
        assert_int_equal(jsonget_int(jsonget(d, "result"), "n", -1), 16);
    }
    assert_true(jsonget(v, "elapsed_ms") != NULL);
    json_object *slots = smoke_clonce_part.smoke_page_json(pg);
    assert_non_null(slots);
    assert_int_equal(json_object_array_length(slots), 2);
    for (int i = 0; i < 2; i++) {
        json_object *s = json_object_array_get_idx(slots, (size_t)i);
        assert_int_equal(jsonget_int(s, "device", -1), i);
        assert_string_equal(jsonget_str(s, "stage"), "done");
    }
    json_object_put(slots);
    json_object_put(v);
    munmap(pg, sizeof(*pg));
}

/* PoCL's devices are CPU devices: they take the plan's CPU size (64 without --smoke-size), not its N. */
static void test_cpu_devices_take_the_cpu_size(void **state)
{
    (void)state;
    struct smoke_shared_page *pg;
    struct smoke_shared_plan p = plan_all();
    p.n = 24;
    p.cpu_n = 8;
    json_object *v = run_case(p, &pg);
    json_object *devs = jsonget(v, "devices");
    assert_int_equal(json_object_array_length(devs), 2);
    for (int i = 0; i < 2; i++) {
        json_object *r = jsonget(json_object_array_get_idx(devs, (size_t)i), "result");
        assert_string_equal(jsonget_str(r, "status"), "pass");
        assert_int_equal(jsonget_int(r, "n", -1), 8);
    }
    json_object_put(v);
    munmap(pg, sizeof(*pg));
}

/* The smoke probe's selection: --device P:D keeps one device; --smoke=gpu none of PoCL's CPUs; a
 * --device naming no platform nothing (the smoke probe reports it). */
static void test_selection_as_the_smoke_probe(void **state)
{
    (void)state;
    struct smoke_shared_page *pg;
    struct smoke_shared_plan p = plan_all();
    p.dev_platform = 0;
    p.dev_index = 1;
    json_object *v = run_case(p, &pg);
    json_object *devs = jsonget(v, "devices");
    assert_int_equal(json_object_array_length(devs), 1);
    assert_int_equal(jsonget_int(json_object_array_get_idx(devs, 0), "device", -1), 1);
    assert_int_equal(pg->n, 1);
    json_object_put(v);
    munmap(pg, sizeof(*pg));

    p = plan_all();
    p.gpu_only = true;
    v = run_case(p, &pg);
    assert_int_equal(json_object_array_length(jsonget(v, "devices")), 0);
    assert_int_equal(pg->n, 0);
    json_object_put(v);
    munmap(pg, sizeof(*pg));

    p = plan_all();
    p.dev_platform = 7;
    v = run_case(p, &pg);
    assert_true(json_object_is_type(v, json_type_string)); /* the smoke part gave NULL */
    assert_null(smoke_clonce_part.smoke_page_json(pg));                /* and never started */
    json_object_put(v);
    munmap(pg, sizeof(*pg));
}

/* At its deadline the smoke part answers for what finished: here nothing, each device null. */
static void test_deadline_passed_answers_null(void **state)
{
    (void)state;
    struct smoke_shared_page *pg;
    struct smoke_shared_plan p = plan_all();
    p.deadline_ms = jsonnum_now_ms(); /* spent before the child starts */
    json_object *v = run_case(p, &pg);
    json_object *devs = jsonget(v, "devices");
    assert_int_equal(json_object_array_length(devs), 2);
    for (int i = 0; i < 2; i++)
        assert_null(jsonget(json_object_array_get_idx(devs, (size_t)i), "result"));
    json_object_put(v);
    munmap(pg, sizeof(*pg));
}

/* The page is the child's: read back within its bounds whatever it holds. */
static void test_page_json_bounds(void **state)
{
    (void)state;
    struct smoke_shared_page *pg = calloc(1, sizeof(*pg));
    assert_non_null(pg);
    assert_null(smoke_clonce_part.smoke_page_json(pg)); /* never started */
    pg->started = 1;
    pg->n = 1000;
    memset(pg->slots[0].stage, 'A', sizeof(pg->slots[0].stage)); /* no NUL */
    strcpy(pg->slots[1].stage, "bad\x01\x1b[31mstage");
    json_object *a = smoke_clonce_part.smoke_page_json(pg);
    assert_int_equal(json_object_array_length(a), SMOKE_SHARED_MAX);
    const char *s0 = jsonget_str(json_object_array_get_idx(a, 0), "stage");
    assert_int_equal(strlen(s0), SMOKE_STAGE_MAX - 1);
    const char *s1 = jsonget_str(json_object_array_get_idx(a, 1), "stage");
    for (const char *c = s1; *c; c++)
        assert_true((unsigned char)*c >= 0x20);
    assert_null(jsonget(json_object_array_get_idx(a, 2), "stage")); /* empty: null */
    json_object_put(a);
    pg->n = -3;
    a = smoke_clonce_part.smoke_page_json(pg);
    assert_int_equal(json_object_array_length(a), 0);
    json_object_put(a);
    free(pg);
}

/* The shared child finds each part in its probe's registry row, with the callbacks of its kind. */
static void test_parts_found_in_the_registry(void **state)
{
    (void)state;
    const struct clonce_part *icd = clonce_part_find("icd"), *cl = clonce_part_find("opencl"),
                             *sm = clonce_part_find("smoke");
    assert_ptr_equal(cl, &opencl_clonce_part);
    assert_ptr_equal(sm, &smoke_clonce_part);
    assert_non_null(icd);
    assert_string_equal(icd->name, "icd");
    assert_non_null(icd->icd_combined);
    assert_non_null(icd->icd_loaded);
    assert_null(icd->enumerate);
    assert_ptr_equal(cl->enumerate, ocl_enumerate);
    assert_null(cl->smoke_child);
    assert_non_null(sm->smoke_plan);
    assert_non_null(sm->smoke_child);
    assert_non_null(sm->smoke_page_json);
    assert_null(sm->icd_combined);
    assert_null(clonce_part_find("pci")); /* a probe with no part */
    assert_null(clonce_part_find("no-such-probe"));
}

int main(void)
{
    /* PoCL alone, two CPU devices: the other drivers installed do not change the result. */
    setenv("OCL_ICD_VENDORS", "/etc/OpenCL/vendors/pocl.icd", 1);
    setenv("POCL_DEVICES", "pthread pthread", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_json_bounds),
        cmocka_unit_test(test_both_devices_pass_and_are_marked),
        cmocka_unit_test(test_cpu_devices_take_the_cpu_size),
        cmocka_unit_test(test_selection_as_the_smoke_probe),
        cmocka_unit_test(test_deadline_passed_answers_null),
        cmocka_unit_test(test_parts_found_in_the_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
