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

/* ---- requirement specifiers (PEP 440, PEP 508), in the part a pin check needs ---- */

/* A version's release numbers (at most FW_VNUMS; more are cut), the rest after them in *TAIL. */
#define FW_VNUMS 8
static size_t fw_release(const char *s, const char *e, unsigned long *nums, const char **tail)
{
    size_t n = 0;
    const char *p = s;
    while (p < e && *p >= '0' && *p <= '9') {
        unsigned long v = 0;
        for (int k = 0; p < e && *p >= '0' && *p <= '9'; p++, k++)
            v = k < 9 ? v * 10 + (unsigned long)(*p - '0') : v;
        if (n < FW_VNUMS)
            nums[n++] = v;
        if (p + 1 < e && *p == '.' && p[1] >= '0' && p[1] <= '9')
            p++;
        else
            break;
    }
    *tail = p;
    return n;
}

/* Compare versions A and B (up to their ends AE, BE): release numbers numerically (missing ones are 0), then
 * a pre-release tail below none; a local part ("+...") is ignored. *PREFIX (when not NULL) is set when B's
 * release numbers are the first of A's (for `==V.*`). -2 when either is no version. */
static int fw_vcmp(const char *a, const char *ae, const char *b, const char *be, bool *prefix)
{
    unsigned long na[FW_VNUMS], nb[FW_VNUMS];
    const char *ta, *tb;
    size_t ca = fw_release(a, ae, na, &ta), cb = fw_release(b, be, nb, &tb);
    if (ca == 0 || cb == 0)
        return -2;
    int res = 0;
    for (size_t i = 0; i < (ca > cb ? ca : cb) && res == 0; i++) {
        unsigned long x = i < ca ? na[i] : 0, y = i < cb ? nb[i] : 0;
        res = x < y ? -1 : x > y ? 1 : 0;
    }
    if (prefix) {
        *prefix = cb <= ca;
        for (size_t i = 0; i < cb && *prefix; i++)
            *prefix = i < ca && na[i] == nb[i];
    }
    /* the tails: "" (a release) is above "rc1", "a2", "b1", ".dev0"; a local part counts as nothing */
    size_t la = 0, lb = 0;
    while (ta + la < ae && ta[la] != '+')
        la++;
    while (tb + lb < be && tb[lb] != '+')
        lb++;
    if (res == 0 && (la == 0) != (lb == 0))
        res = la ? -1 : 1;
    if (res == 0 && la && lb) {
        int c = strncmp(ta, tb, la < lb ? la : lb);
        res = c < 0 ? -1 : c > 0 ? 1 : la < lb ? -1 : la > lb ? 1 : 0;
    }
    return res;
}

static bool fw_is_vchar(char c)
{
    return fw_is_ident(c) || c == '.' || c == '+' || c == '*' || c == '!' || c == '-';
}

enum fw_pin_state fw_pin_eval(const char *spec, const char *installed)
{
    const char *semi = strchr(spec, ';');
    if (semi) {
        /* `extra == "x"`: asked for only by `pip install NAME[x]` */
        for (const char *m = semi; (m = strstr(m, "extra")); m += 5)
            if ((m == semi || !fw_is_ident(m[-1])) && !fw_is_ident(m[5]))
                return FW_PIN_OPTIONAL;
    }
    const char *end = semi ? semi : spec + strlen(spec), *p = spec;
    const char *ie = installed + strlen(installed);
    while (p < end && fw_is_space(*p))
        p++;
    if (p < end && *p == '(') /* the old `name (>=1.0)` form */
        p++;
    if (p < end && *p == '[') {
        const char *q = memchr(p, ']', (size_t)(end - p));
        if (!q)
            return FW_PIN_UNKNOWN;
        p = q + 1;
    }
    enum fw_pin_state st = FW_PIN_OK;
    while (p < end) {
        while (p < end && (fw_is_space(*p) || *p == ',' || *p == ')'))
            p++;
        if (p >= end)
            break;
        char op[4] = "";
        size_t ol = 0;
        while (p < end && ol < 3 && strchr("=!<>~", *p))
            op[ol++] = *p++;
        op[ol] = '\0';
        while (p < end && fw_is_space(*p))
            p++;
        const char *v = p;
        while (p < end && fw_is_vchar(*p))
            p++;
        const char *ve = p;
        bool star = ve - v >= 2 && ve[-1] == '*' && ve[-2] == '.';
        if (star)
            ve -= 2;
        bool prefix = false;
        int c = fw_vcmp(installed, ie, v, ve, star ? &prefix : NULL);
        if (c == -2 || ol == 0)
            return FW_PIN_UNKNOWN;
        bool ok;
        if (strcmp(op, "==") == 0)
            ok = star ? prefix : c == 0;
        else if (strcmp(op, "!=") == 0)
            ok = star ? !prefix : c != 0;
        else if (strcmp(op, "===") == 0)
            ok = (size_t)(ie - installed) == (size_t)(ve - v) && strncmp(installed, v, (size_t)(ve - v)) == 0;
        else if (strcmp(op, ">=") == 0)
            ok = c >= 0;
        else if (strcmp(op, "<=") == 0)
            ok = c <= 0;
        else if (strcmp(op, ">") == 0)
            ok = c > 0;
        else if (strcmp(op, "<") == 0)
            ok = c < 0;
        else if (strcmp(op, "~=") == 0) {
            /* ~=X.Y.Z: >= X.Y.Z and == X.Y.*: the prefix is V without its last number */
            const char *last = ve;
            while (last > v && last[-1] != '.')
                last--;
            bool pre = false;
            if (last <= v + 1)
                return FW_PIN_UNKNOWN;
            fw_vcmp(installed, ie, v, last - 1, &pre);
            ok = c >= 0 && pre;
        } else
            return FW_PIN_UNKNOWN;
        if (!ok)
            st = FW_PIN_OTHER;
    }
    return st;
}

bool fw_marker_python(const char *spec, const char *python)
{
    const char *m = strchr(spec, ';');
    if (!m || !python || !*python || strstr(m, " or "))
        return true;
    const char *pe = python + strlen(python);
    for (const char *p = m; (p = strstr(p, "python_version"));) {
        p += strlen("python_version");
        while (fw_is_space(*p))
            p++;
        char op[3] = "";
        size_t ol = 0;
        while (ol < 2 && *p && strchr("=!<>", *p))
            op[ol++] = *p++;
        op[ol] = '\0';
        while (fw_is_space(*p))
            p++;
        if (*p != '"' && *p != '\'')
            continue;
        const char *v = p + 1, *ve = strchr(v, *p);
        if (!ve)
            return true;
        int c = fw_vcmp(python, pe, v, ve, NULL);
        bool ok = c == -2 || (strcmp(op, "==") == 0 ? c == 0 : strcmp(op, "!=") == 0 ? c != 0
                              : strcmp(op, "<") == 0 ? c < 0 : strcmp(op, "<=") == 0 ? c <= 0
                              : strcmp(op, ">") == 0 ? c > 0 : strcmp(op, ">=") == 0 ? c >= 0 : true);
        if (!ok)
            return false;
        p = ve;
    }
    return true;
}

void fw_pin_req(const char *spec, char *out, size_t outlen)
{
    size_t k = 0;
    for (const char *p = spec; *p && *p != ';' && k + 1 < outlen; p++)
        if (!fw_is_space(*p) && *p != '(' && *p != ')')
            out[k++] = (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f ? *p : '?';
    out[k] = '\0';
}

/* ---- conda's environment lists ---- */

/* Give FN the text from S to E, trimmed of blanks and one pair of quotes, sanitised, when not empty. */
static bool fw_item(const char *s, const char *e, fw_item_fn fn, void *arg)
{
    while (s < e && (fw_is_space(*s) || *s == '\r'))
        s++;
    while (e > s && (fw_is_space(e[-1]) || e[-1] == '\r'))
        e--;
    if (e - s >= 2 && (*s == '"' || *s == '\'') && e[-1] == *s) {
        s++;
        e--;
    }
    if (e <= s)
        return false;
    char buf[1024];
    if ((size_t)(e - s) >= sizeof(buf))
        return false; /* a path cut short would name another folder */
    fw_copy(buf, sizeof(buf), s, (size_t)(e - s));
    fn(buf, arg);
    return true;
}

size_t fw_conda_envs_txt(const char *text, size_t len, size_t max, fw_item_fn fn, void *arg)
{
    size_t n = 0;
    for (size_t pos = 0; pos < len && n < max;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, i = pos;
        pos = end + 1;
        while (i < end && fw_is_space(text[i]))
            i++;
        if (i < end && text[i] == '/' && fw_item(text + i, text + end, fn, arg))
            n++;
    }
    return n;
}

size_t fw_condarc_list(const char *text, size_t len, const char *key, size_t max, fw_item_fn fn, void *arg)
{
    size_t kl = strlen(key), n = 0;
    bool in = false;
    for (size_t pos = 0; pos < len && n < max;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        const char *line = text + pos, *end = nl ? nl : text + len;
        pos = (size_t)(end - text) + 1;
        const char *p = line;
        while (p < end && fw_is_space(*p))
            p++;
        if (p >= end || *p == '#' || *p == '\r')
            continue;
        if (p == line) { /* a top-level key: ours, or the end of ours */
            in = false;
            if ((size_t)(end - p) > kl && memcmp(p, key, kl) == 0 && p[kl] == ':') {
                const char *v = p + kl + 1;
                while (v < end && fw_is_space(*v))
                    v++;
                if (v < end && *v == '[') { /* the flow form: [a, b] */
                    const char *close = memchr(v, ']', (size_t)(end - v));
                    for (const char *it = v + 1; close && it < close && n < max;) {
                        const char *comma = memchr(it, ',', (size_t)(close - it));
                        const char *ie = comma ? comma : close;
                        n += fw_item(it, ie, fn, arg);
                        it = ie + 1;
                    }
                } else {
                    in = v >= end || *v == '#' || *v == '\r';
                }
            }
            continue;
        }
        if (in && *p == '-' && p + 1 < end && fw_is_space(p[1])) {
            const char *hash = p + 2;
            while (hash < end && *hash != '#')
                hash++;
            n += fw_item(p + 2, hash, fn, arg);
        }
    }
    return n;
}
