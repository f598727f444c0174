/* frameworks_options.c: the frameworks probe's options (--python=PATH, repeatable; --import): rows, parsing, values. */
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "frameworks_internal.h"

/* The values given, copied (the option parser's strings need not outlive parsing). */
#define FW_PYTHON_MAX 1024
static char fw_python_buf[FW_MAX_PYTHONS][FW_PYTHON_MAX];
static const char *fw_pythons[FW_MAX_PYTHONS];
static size_t fw_n_pythons;
static bool fw_import;

void frameworks_options_reset(void)
{
    fw_n_pythons = 0;
    fw_import = false;
}

bool frameworks_import_wanted(void)
{
    return fw_import;
}

static int fw_opt_import(const char *v, char *err, size_t errlen)
{
    (void)v;
    (void)err;
    (void)errlen;
    fw_import = true;
    return 0;
}

size_t frameworks_pythons(const char *const **out)
{
    *out = fw_pythons;
    return fw_n_pythons;
}

static int fw_opt_python(const char *v, char *err, size_t errlen)
{
    if (!v || v[0] != '/') {
        snprintf(err, errlen, "'%.*s%s' is not an absolute path (an interpreter, bin/python3, or an environment's "
                 "folder)", CLI_QUOTE(v ? v : ""));
        return -1;
    }
    if (fw_n_pythons >= FW_MAX_PYTHONS) {
        snprintf(err, errlen, "at most %d may be given", FW_MAX_PYTHONS);
        return -1;
    }
    if (strlen(v) >= FW_PYTHON_MAX) {
        snprintf(err, errlen, "'%.*s%s' is longer than %d bytes", CLI_QUOTE(v), FW_PYTHON_MAX - 1);
        return -1;
    }
    snprintf(fw_python_buf[fw_n_pythons], FW_PYTHON_MAX, "%s", v);
    fw_pythons[fw_n_pythons] = fw_python_buf[fw_n_pythons];
    fw_n_pythons++;
    return 0;
}

const struct probe_option frameworks_option_rows[] = {
    {.name = "python", .arg = "PATH", .parse = fw_opt_python,
     .help = "also look at this Python environment (its interpreter or its folder;\n"
             "repeatable, up to 8): `frameworks` and `check`"},
    {.name = "import", .parse = fw_opt_import,
     .help = "check the prediction: each environment's own Python imports each\n"
             "framework found there in an isolated child (within --timeout) and\n"
             "says what it sees (torch.cuda.is_available(), devices, providers);\n"
             "never under --root: `frameworks` and `check`"},
    {.name = NULL},
};
