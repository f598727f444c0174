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

/* Whether an installed version satisfies a METADATA requirement's SPEC (what fw_meta_pins gives after the
 * name: optional "[extras]", comma-separated clauses `==V`, `==V.*`, `!=V`, `>=V`, `<=V`, `>V`, `<V`, `~=V`,
 * `===V`, then an optional "; marker"). PEP 440 in part: release numbers compared numerically, a local
 * part ("+cu132") ignored, a pre-release ("rc1") below its release. */
enum fw_pin_state {
    FW_PIN_OK = 0,   /* INSTALLED satisfies every clause */
    FW_PIN_OTHER,    /* INSTALLED fails a clause */
    FW_PIN_OPTIONAL, /* the marker names an extra: only `pip install NAME[extra]` asks for it */
    FW_PIN_UNKNOWN,  /* a clause or version gpucheckup does not read */
};
enum fw_pin_state fw_pin_eval(const char *spec, const char *installed);
/* Whether SPEC's marker (after ';') leaves the requirement in force for Python PYTHON ("3.11"): false only when
 * a `python_version OP "X.Y"` clause of an all-`and` marker fails for it (a marker with `or`, or none, is in
 * force). */
bool fw_marker_python(const char *spec, const char *python);

/* SPEC without its marker, spaces removed ("[cublas,cudart]==13.2.2"), into OUT (OUTLEN >= 1): with the
 * project's name, what `pip install` takes. */
void fw_pin_req(const char *spec, char *out, size_t outlen);

/* Called with each item a list reader finds (sanitised, not empty). */
typedef void (*fw_item_fn)(const char *item, void *arg);
/* conda's ~/.conda/environments.txt: one environment prefix a line (trimmed; only absolute paths are
 * given to FN), at most MAX. Returns how many were given. */
size_t fw_conda_envs_txt(const char *text, size_t len, size_t max, fw_item_fn fn, void *arg);
/* The list under top-level KEY in a .condarc (YAML): a block list (`KEY:` then `  - item` lines) or a flow
 * list (`KEY: [a, b]`), quotes around an item dropped; at most MAX items. Returns how many were given. */
size_t fw_condarc_list(const char *text, size_t len, const char *key, size_t max, fw_item_fn fn, void *arg);

/* "13.2" -> 13 (the major of a version string), or -1 when it does not start with a number below 1000. */
int fw_version_major(const char *v);

#endif
