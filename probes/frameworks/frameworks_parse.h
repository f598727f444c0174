/* frameworks_parse.h: parsers of the files frameworks install (Python assignments, build_info, METADATA, pyvenv.cfg); no I/O. */
#ifndef GPUCHECKUP_FRAMEWORKS_PARSE_H
#define GPUCHECKUP_FRAMEWORKS_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* What a Python value read from a file is. */
enum fw_py {
    FW_PY_MISSING = 0, /* the name is not assigned (or the text is not Python we read) */
    FW_PY_STR,         /* a string literal: its text is in OUT */
    FW_PY_NONE,
    FW_PY_TRUE,
    FW_PY_FALSE,
    FW_PY_OTHER,       /* something else (a list, a call, a name): OUT holds nothing */
};

/* The value of the top-level assignment NAME in the Python source TEXT (LEN bytes, not trusted, need not
 * be NUL-terminated): a line `NAME = VALUE` or `NAME: TYPE = VALUE` starting in column 0, the last such
 * line winning as in Python. A string value ('...' or "...", no escapes read) is copied into OUT (OUTLEN
 * bytes, at least 1; cut to fit, non-printable bytes made '?'); OUT is "" otherwise. Never reads outside
 * TEXT. */
enum fw_py fw_py_assign(const char *text, size_t len, const char *name, char *out, size_t outlen);

/* The value of key KEY in a dict literal or an OrderedDict([...]) of pairs in TEXT after the first
 * occurrence of ANCHOR (TensorFlow's `build_info = {'cuda_version': '12.5.1', ...}` or
 * `build_info = collections.OrderedDict([('cuda_version', '12.5.1'), ...])`): the first quoted KEY followed
 * by ':' or ',' and a value. OUT as for fw_py_assign. */
enum fw_py fw_py_dict_get(const char *text, size_t len, const char *anchor, const char *key, char *out, size_t outlen);

/* Called for each `Requires-Dist:` header of a METADATA file whose project name starts with one of the
 * prefixes fw_meta_pins looks for: NAME the project ("nvidia-cudnn-cu13"), SPEC the rest (version
 * specifier and marker, "==9.26.0.51; platform_system == \"Linux\""), both sanitised. */
typedef void (*fw_pin_fn)(const char *name, const char *spec, void *arg);
/* Walk METADATA text (RFC 822 style headers, up to the first empty line) for requirements on NVIDIA's
 * wheels (nvidia-*, cuda-toolkit, cuda-bindings), at most MAX of them. Returns how many were given to FN. */
size_t fw_meta_pins(const char *text, size_t len, size_t max, fw_pin_fn fn, void *arg);

/* The value of KEY in a venv's pyvenv.cfg TEXT (LEN bytes, not trusted, need not be NUL-terminated; PEP 405:
 * `key = value` lines, the first such line winning as in CPython's site.py, spaces around both trimmed) into
 * OUT (OUTLEN bytes, at least 1, sanitised). Returns false (OUT "") when KEY is absent, or its value does not
 * fit: a path cut short would name another file. */
bool fw_cfg_get(const char *text, size_t len, const char *key, char *out, size_t outlen);

/* "13.2" -> 13 (the major of a version string), or -1 when it does not start with a number below 1000. */
int fw_version_major(const char *v);

#endif
