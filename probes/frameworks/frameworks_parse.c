/* frameworks_parse.c: reads Python assignments, TensorFlow's build_info and METADATA pins as text, never running Python. */
#include "frameworks_parse.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

static bool fw_is_space(char c)
{
    return c == ' ' || c == '\t';
}

static bool fw_is_ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Copy N bytes at S into OUT (OUTLEN > 0), cut to fit, non-printable bytes as '?'. */
static void fw_copy(char *out, size_t outlen, const char *s, size_t n)
{
    if (n >= outlen)
        n = outlen - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
    out[n] = '\0';
}

/* Read the value starting at P (before END): a quoted string, None, True, False or anything else. */
static enum fw_py fw_value(const char *p, const char *end, char *out, size_t outlen)
{
    while (p < end && fw_is_space(*p))
        p++;
    if (p >= end)
        return FW_PY_MISSING;
    if (*p == '\'' || *p == '"') {
        const char *q = p + 1;
        while (q < end && *q != *p && *q != '\n')
            q++;
        if (q >= end || *q != *p)
            return FW_PY_OTHER; /* unterminated: not a value we trust */
        fw_copy(out, outlen, p + 1, (size_t)(q - p - 1));
        return FW_PY_STR;
    }
    static const struct {
        const char *word;
        enum fw_py v;
    } words[] = {{"None", FW_PY_NONE}, {"True", FW_PY_TRUE}, {"False", FW_PY_FALSE}};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t n = strlen(words[i].word);
        if ((size_t)(end - p) >= n && memcmp(p, words[i].word, n) == 0 && (p + n == end || !fw_is_ident(p[n])))
            return words[i].v;
    }
    return FW_PY_OTHER;
}

enum fw_py fw_py_assign(const char *text, size_t len, const char *name, char *out, size_t outlen)
{
    enum fw_py found = FW_PY_MISSING;
    size_t nl = strlen(name);
    const char *end = text + len;
    out[0] = '\0';
    for (const char *line = text; line && line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        const char *le = eol ? eol : end;
        if ((size_t)(le - line) > nl && memcmp(line, name, nl) == 0 && !fw_is_ident(line[nl])) {
            const char *p = line + nl;
            while (p < le && fw_is_space(*p))
                p++;
            if (p < le && *p == ':') /* an annotation: `cuda: Optional[str] = '13.2'` */
                while (p < le && *p != '=')
                    p++;
            if (p < le && *p == '=' && (p + 1 >= le || p[1] != '=')) {
                char tmp[256];
                size_t cap = outlen < sizeof(tmp) ? outlen : sizeof(tmp);
                enum fw_py v = fw_value(p + 1, le, tmp, cap);
                if (v != FW_PY_MISSING) {
                    found = v;
                    if (v == FW_PY_STR)
                        memcpy(out, tmp, strlen(tmp) + 1);
                    else
                        out[0] = '\0';
                }
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    return found;
}

enum fw_py fw_py_dict_get(const char *text, size_t len, const char *anchor, const char *key, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t al = strlen(anchor), kl = strlen(key);
    const char *end = text + len, *p = text;
    while (p + al <= end && memcmp(p, anchor, al) != 0)
        p++;
    if (p + al > end)
        return FW_PY_MISSING;
    for (p += al; p + kl + 2 <= end; p++) {
        if ((*p != '\'' && *p != '"') || memcmp(p + 1, key, kl) != 0 || p[kl + 1] != *p)
            continue;
        const char *q = p + kl + 2;
        while (q < end && (fw_is_space(*q) || *q == '\n'))
            q++;
        if (q < end && (*q == ':' || *q == ','))
            return fw_value(q + 1, end, out, outlen);
    }
    return FW_PY_MISSING;
}

size_t fw_meta_pins(const char *text, size_t len, size_t max, fw_pin_fn fn, void *arg)
{
    static const char *const prefixes[] = {"nvidia-", "nvidia_", "cuda-toolkit", "cuda-bindings", NULL};
    static const char hdr[] = "Requires-Dist:";
    const size_t hl = sizeof(hdr) - 1;
    const char *end = text + len;
    size_t n = 0;
    for (const char *line = text; line && line < end && n < max;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        const char *le = eol ? eol : end;
        if (le > line && le[-1] == '\r')
            le--;
        if (le == line)
            break; /* the headers end at the first empty line: the rest is the description */
        if ((size_t)(le - line) > hl && strncasecmp(line, hdr, hl) == 0) {
            const char *p = line + hl;
            while (p < le && fw_is_space(*p))
                p++;
            const char *ne = p;
            while (ne < le && (fw_is_ident(*ne) || *ne == '-' || *ne == '.'))
                ne++;
            bool want = false;
            for (size_t i = 0; prefixes[i] && !want; i++) {
                size_t pl = strlen(prefixes[i]);
                want = (size_t)(ne - p) >= pl && strncasecmp(p, prefixes[i], pl) == 0;
            }
            if (want && ne > p) {
                char name[96], spec[160];
                fw_copy(name, sizeof(name), p, (size_t)(ne - p));
                while (ne < le && fw_is_space(*ne))
                    ne++;
                fw_copy(spec, sizeof(spec), ne, (size_t)(le - ne));
                fn(name, spec, arg);
                n++;
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    return n;
}

int fw_version_major(const char *v)
{
    int m = 0, digits = 0;
    while (v && *v >= '0' && *v <= '9' && digits < 4) {
        m = m * 10 + (*v++ - '0');
        digits++;
    }
    return digits > 0 && digits < 4 ? m : -1;
}

bool fw_cfg_get(const char *text, size_t len, const char *key, char *out, size_t outlen)
{
    size_t kl = strlen(key);
    out[0] = '\0';
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, i = pos;
        pos = end + 1;
        while (i < end && (text[i] == ' ' || text[i] == '\t'))
            i++;
        if (end - i < kl || memcmp(text + i, key, kl) != 0)
            continue;
        i += kl;
        while (i < end && (text[i] == ' ' || text[i] == '\t'))
            i++;
        if (i >= end || text[i] != '=')
            continue;
        i++;
        while (i < end && (text[i] == ' ' || text[i] == '\t'))
            i++;
        size_t e = end;
        while (e > i && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r'))
            e--;
        if (e - i >= outlen)
            return false;
        fw_copy(out, outlen, text + i, e - i);
        return true;
    }
    return false;
}
