/* test_cli.c: unit tests of option parsing: defaults, every value check, commands anywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli.h"

#define PARSE(o, err, ...)                                                                         \
    ({                                                                                             \
        char *argv_[] = {"gpucheckup", __VA_ARGS__, NULL};                                         \
        cli_parse((int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_, (o), (err), sizeof(err));   \
    })

static void test_defaults(void **state)
{
    (void)state;
    struct cli_options o;
    char err[256];
    char *argv[] = {"gpucheckup", NULL};
    assert_int_equal(cli_parse(1, argv, &o, err, sizeof(err)), 0);
    assert_string_equal(o.command, "check");
    assert_int_equal(o.format, CLI_FORMAT_TEXT);
    assert_true(o.timeout_s == CLI_DEFAULT_TIMEOUT_S);
    assert_int_equal(o.smoke_size, 256);
    assert_int_equal(o.device_platform, -1);
    cli_options_free(&o);
}

/* Every format name parses to its enum value, the last --format wins, and names are exact. */
static void test_formats(void **state)
{
    (void)state;
    struct cli_options o;
    char err[256];
    static const struct {
        const char *arg;
        enum cli_format f;
    } ok[] = {
        {"--format=text", CLI_FORMAT_TEXT},   {"--format=json", CLI_FORMAT_JSON},
        {"--format=junit", CLI_FORMAT_JUNIT}, {"--format=prometheus", CLI_FORMAT_PROMETHEUS},
        {"--format=nfd", CLI_FORMAT_NFD},     {"--format=github", CLI_FORMAT_GITHUB},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(PARSE(&o, err, "--json", (char *)ok[i].arg), 0);
        assert_int_equal(o.format, ok[i].f);
        assert_string_equal(cli_format_names[o.format], ok[i].arg + strlen("--format="));
        cli_options_free(&o);
    }
    assert_int_equal(PARSE(&o, err, "--format=JUnit"), -1);
    assert_non_null(strstr(err, "junit, prometheus, nfd or github"));
    cli_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--format=githubx"), -1);
    cli_options_free(&o);
}

static void test_command_and_options_in_any_order(void **state)
{
    (void)state;
    struct cli_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--json", "cpu", "--compact", "-o", "out.json"), 0);
    assert_string_equal(o.command, "cpu");
    assert_int_equal(o.format, CLI_FORMAT_JSON);
    assert_true(o.compact);
    assert_string_equal(o.output, "out.json");
    cli_options_free(&o);
    assert_int_equal(PARSE(&o, err, "cpu", "pci"), -1);
    assert_non_null(strstr(err, "pci"));
    cli_options_free(&o);
    assert_int_equal(PARSE(&o, err, "frobnicate"), -1);
    assert_non_null(strstr(err, "unknown command 'frobnicate'"));
    cli_options_free(&o);
}

static void test_bad_values_named(void **state)
{
    (void)state;
    struct cli_options o;
    char err[256];
    static const struct {
        const char *opt;
        const char *needle;
    } bad[] = {
        {"--timeout=0", "--timeout"},     {"--timeout=-3", "--timeout"},   {"--timeout=abc", "--timeout"},
        {"--timeout=1e9", "--timeout"},   {"--timeout=", "--timeout"},     {"--format=xml", "--format"},
        {"--color=sometimes", "--color"}, {"--smoke=some", "--smoke"},     {"--smoke-size=0", "--smoke-size"},
        {"--smoke-size=99999", "--smoke-size"}, {"--smoke-size=1.5", "--smoke-size"},
        {"--device=x", "--device"},       {"--device=1:", "--device"},     {"--device=-1", "--device"},
        {"--require=,", "--require"},     {"--root=", "--root"},           {"--output=", "--output"},
        {"--frobnicate", "--frobnicate"}, {"--cpuid-dump=", "--cpuid-dump"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *argv[] = {"gpucheckup", (char *)bad[i].opt, NULL};
        int rc = cli_parse(2, argv, &o, err, sizeof(err));
        if (rc != -1 || !strstr(err, bad[i].needle))
            fail_msg("%s: rc=%d err='%s'", bad[i].opt, rc, err);
        cli_options_free(&o);
    }
    assert_int_equal(PARSE(&o, err, "--timeout"), -1);
    assert_non_null(strstr(err, "missing value"));
    cli_options_free(&o);
}

/* A huge value is quoted in part, so the explanation still fits the caller's buffer. */
static void test_huge_value_keeps_the_explanation(void **state)
{
    (void)state;
    struct cli_options o;
    char err[512];
    static char arg[12 + 5000];
    memcpy(arg, "--timeout=", 10);
    memset(arg + 10, '9', 5000);
    arg[5010] = '\0';
    char *argv[] = {"gpucheckup", arg, NULL};
    assert_int_equal(cli_parse(2, argv, &o, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "...' is not a number of seconds between 0 and 3600"));
    assert_true(strlen(err) < 200);
    cli_options_free(&o);
}

static void test_requires_split_and_repeat(void **state)
{
    (void)state;
    struct cli_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--require", "avx, gpu", "--require=gpus>=2"), 0);
    assert_int_equal(o.n_requires, 3);
    assert_string_equal(o.requires[0], "avx");
    assert_string_equal(o.requires[1], "gpu");
    assert_string_equal(o.requires[2], "gpus>=2");
    cli_options_free(&o);
}

static void test_device_and_smoke(void **state)
{
    (void)state;
    struct cli_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--device=1:2", "--no-smoke", "--smoke-size=64", "--timeout=2.5"), 0);
    assert_int_equal(o.device_platform, 1);
    assert_int_equal(o.device_index, 2);
    assert_int_equal(o.smoke, CLI_SMOKE_NONE);
    assert_int_equal(o.smoke_size, 64);
    assert_true(o.timeout_s == 2.5);
    cli_options_free(&o);
}

static void test_wants_json(void **state)
{
    (void)state;
    char *a[] = {"gpucheckup", "--bogus", "--json", NULL};
    assert_true(cli_wants_json(3, a));
    char *b[] = {"gpucheckup", "--format", "json", NULL};
    assert_true(cli_wants_json(3, b));
    char *c[] = {"gpucheckup", "--format=text", NULL};
    assert_false(cli_wants_json(2, c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_command_and_options_in_any_order),
        cmocka_unit_test(test_bad_values_named),
        cmocka_unit_test(test_huge_value_keeps_the_explanation),
        cmocka_unit_test(test_requires_split_and_repeat),
        cmocka_unit_test(test_device_and_smoke),
        cmocka_unit_test(test_wants_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
