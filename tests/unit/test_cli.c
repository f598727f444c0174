/* test_cli.c: unit tests of option parsing: defaults, every value check, commands anywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli.h"
#include "compute_options.h"
#include "doctor.h"
#include "probe.h"

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
    assert_int_equal(compute_options()->size, COMPUTE_DEFAULT_SIZE);
    assert_int_equal(compute_options()->which, COMPUTE_WHICH_ALL);
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
    assert_int_equal(compute_options()->which, COMPUTE_WHICH_NONE);
    assert_int_equal(compute_options()->size, 64);
    assert_true(o.timeout_s == 2.5);
    cli_options_free(&o);
    /* the probe's storage gets its defaults again on every parse */
    assert_int_equal(PARSE(&o, err, "--smoke=gpu"), 0);
    assert_int_equal(compute_options()->which, COMPUTE_WHICH_GPU);
    assert_int_equal(compute_options()->size, COMPUTE_DEFAULT_SIZE);
    cli_options_free(&o);
    /* a probe's complaint is prefixed with the option's name */
    assert_int_equal(PARSE(&o, err, "--smoke-size=0"), -1);
    assert_string_equal(err, "--smoke-size: '0' is not a whole number from 1 to 4096");
    cli_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--smoke-size"), -1);
    assert_string_equal(err, "--smoke-size: missing value");
    cli_options_free(&o);
    assert_int_equal(PARSE(&o, err, "--no-smoke=x"), -1);
    assert_non_null(strstr(err, "unknown option '--no-smoke=x'"));
    cli_options_free(&o);
}

/* --help as printed (heap; the caller frees). */
static char *help_text(void)
{
    char *help = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&help, &len);
    assert_non_null(m);
    cli_print_help(m);
    fclose(m);
    return help;
}

/* The commands and the probes' options come from the registry: each probe is a command, named in
 * --help and in the unknown-command message, and each of its options is parsed and documented. */
static void test_registry_commands_and_options(void **state)
{
    (void)state;
    struct cli_options o;
    char err[512];
    char *help = help_text();
    char *bad[] = {"gpucheckup", "frobnicate", NULL};
    assert_int_equal(cli_parse(2, bad, &o, err, sizeof(err)), -1);
    cli_options_free(&o);
    assert_non_null(strstr(err, "(commands: check, "));
    assert_non_null(strstr(err, ", list, snapshot)"));
    size_t nopts = 0;
    for (size_t i = 0; probe_registry[i]; i++) {
        const struct probe *p = probe_registry[i];
        char word[64];
        snprintf(word, sizeof(word), "\n  %s ", p->name);
        assert_non_null(strstr(help, word));
        snprintf(word, sizeof(word), " %s,", p->name);
        assert_non_null(strstr(err, word));
        char *argv[] = {"gpucheckup", (char *)p->name, NULL};
        assert_int_equal(cli_parse(2, argv, &o, err, sizeof(err)), 0);
        assert_string_equal(o.command, p->name);
        cli_options_free(&o);
        assert_int_equal(cli_parse(2, bad, &o, err, sizeof(err)), -1); /* the message again, for the next probe */
        cli_options_free(&o);
        for (const struct probe_option *po = p->options; po && po->name; po++, nopts++) {
            snprintf(word, sizeof(word), "\n      --%s%s%s ", po->name, po->arg ? "=" : "", po->arg ? po->arg : "");
            assert_non_null(strstr(help, word));
            assert_non_null(po->help);
            assert_non_null(po->parse);
        }
    }
    assert_true(nopts >= 6); /* smoke's three, bench's three */
    free(help);
}

/* --help's words with every run of white space made one space (its lines are wrapped). */
static char *help_flat(void)
{
    char *help = help_text();
    char *w = help;
    for (const char *r = help; *r; r++)
        if (*r != ' ' && *r != '\n')
            *w++ = *r;
        else if (w > help && w[-1] != ' ')
            *w++ = ' ';
    *w = '\0';
    return help;
}

/* FORM as the parser takes it: "gpus>=N" -> "gpus>=2", "cuda>=X.Y" -> "cuda>=1.0". */
static void require_example(const char *form, size_t n, char *out, size_t outlen)
{
    snprintf(out, outlen, "%.*s", (int)n, form);
    char *ph = strstr(out, ">=");
    if (ph && strcmp(ph + 2, "N") == 0)
        strcpy(ph + 2, "2");
    else if (ph && strcmp(ph + 2, "X.Y") == 0)
        strcpy(ph + 2, "1.0");
    else if (ph && strcmp(ph + 2, "NGiB") == 0)
        strcpy(ph + 2, "2GiB");
}

/* --help names every --require form of every registered probe (its rows, not a list kept by hand), and
 * each form it names is one the parser accepts; an open family (the CPU flags) by its short form, whose
 * first example is accepted too. */
static void test_help_names_every_require_form(void **state)
{
    (void)state;
    char *help = help_flat();
    char *err = NULL;
    size_t nforms = 0;
    const char *core[] = {"gpu", "gpus>=N", "p2p"};
    for (size_t i = 0; i < 3; i++)
        assert_non_null(strstr(help, core[i]));
    for (size_t i = 0; probe_registry[i]; i++)
        for (const struct probe_require *q = probe_registry[i]->requires; q && q->parse; q++) {
            assert_non_null(q->form); /* every row has a form --help can print */
            assert_non_null(strstr(help, q->form));
            if (q->forms) { /* a family: "a CPU flag (avx, ...": its first example parses */
                const char *open = strchr(q->form, '(');
                assert_non_null(open);
                char name[64];
                require_example(open + 1, strcspn(open + 1, ",. )"), name, sizeof(name));
                char *names[] = {name};
                assert_int_equal(doctor_validate_requires(names, 1, &err), 0);
                nforms++;
                continue;
            }
            for (const char *f = q->form; *f; nforms++) {
                size_t n = strcspn(f, ",");
                char name[64];
                require_example(f, n, name, sizeof(name));
                char *names[] = {name};
                if (doctor_validate_requires(names, 1, &err) != 0)
                    fail_msg("--help names '%s', which --require refuses: %s", name, err);
                f += n;
                while (*f == ',' || *f == ' ')
                    f++;
            }
        }
    assert_true(nforms >= 20);
    /* what the issue found missing */
    const char *late[] = {"torch-gpu", "tensorflow-gpu", "jax-gpu", "cupy-gpu", "onnxruntime-gpu", "paddle-gpu",
                          "vulkan", "rocm", "levelzero"};
    for (size_t i = 0; i < sizeof(late) / sizeof(late[0]); i++)
        assert_non_null(strstr(help, late[i]));
    free(help);
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
        cmocka_unit_test(test_registry_commands_and_options),
        cmocka_unit_test(test_help_names_every_require_form),
        cmocka_unit_test(test_wants_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
