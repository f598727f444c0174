/* snapshot_redact.c: redaction of a snapshot: hostnames, user names, serials, MACs become placeholders. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "probe.h"
#include "strutil.h"

enum redact_kind { REDACT_HOST = 0, REDACT_USER, REDACT_SERIAL, REDACT_MAC, REDACT_NKINDS };

static const char *const redact_kind_names[REDACT_NKINDS] = {"host", "user", "serial", "mac"};

struct redact_secret {
    enum redact_kind kind;
    char *value;       /* as found (MACs: lower case, colon separated) */
    size_t len;
    char *placeholder;
};

struct redactor {
    struct redact_secret *s;
    size_t n;
    size_t counts[REDACT_NKINDS];
    bool sorted;
    unsigned char first[256]; /* first bytes of the secrets: a fast "no secret starts here" */
};

struct redactor *redact_new(void)
{
    return calloc(1, sizeof(struct redactor));
}

void redact_free(struct redactor *rd)
{
    if (!rd)
        return;
    for (size_t i = 0; i < rd->n; i++) {
        free(rd->s[i].value);
        free(rd->s[i].placeholder);
    }
    free(rd->s);
    free(rd);
}

/* Values that identify nobody, or would corrupt what the replay reads if replaced everywhere: a
 * host called "debian" or a group member called "nvidia" must not rename /proc/driver/nvidia. */
static bool redact_ignored(enum redact_kind k, const char *v, size_t len)
{
    static const char *const common[] = {
        "root", "nobody", "localhost", "localhost.localdomain", "(none)", "none", "unknown", "null",
        /* system words: drivers, distributions, directories */
        "nvidia", "amdgpu", "radeon", "nouveau", "i915", "xe", "intel", "amd", "mesa", "pocl",
        "video", "render", "gpu", "kvm", "debian", "ubuntu", "fedora", "centos", "rhel", "linux", "kernel", "sys",
        "proc", "dev", "etc", "usr", "lib", "bin", "home", "driver", "drivers", "devices", NULL};
    if (len < (k == REDACT_SERIAL ? 4u : 2u) || len > 256)
        return true;
    /* and the probes' names, which stand in paths and messages (cuda, opencl, pci) */
    for (size_t i = 0; probe_registry[i]; i++)
        if (strlen(probe_registry[i]->name) == len && strncasecmp(probe_registry[i]->name, v, len) == 0)
            return true;
    for (size_t i = 0; common[i]; i++)
        if (strlen(common[i]) == len && strncasecmp(v, common[i], len) == 0)
            return true;
    if (k == REDACT_SERIAL) {
        /* placeholders firmware writes ("0", "To Be Filled By O.E.M.", all zeros) are no serial */
        bool any = false;
        for (size_t i = 0; i < len; i++)
            any |= v[i] != '0' && v[i] != '-' && v[i] != ' ';
        if (!any || strncasecmp(v, "To Be Filled", 12) == 0 || strncasecmp(v, "Not ", 4) == 0 ||
            strncasecmp(v, "Default", 7) == 0)
            return true;
    }
    return false;
}

static const char *redact_add(struct redactor *rd, enum redact_kind k, const char *v, size_t len)
{
    for (size_t i = 0; i < rd->n; i++)
        if (rd->s[i].kind == k && rd->s[i].len == len && memcmp(rd->s[i].value, v, len) == 0)
            return rd->s[i].placeholder;
    if (rd->n >= 4096)
        return NULL;
    struct redact_secret *ns = realloc(rd->s, (rd->n + 1) * sizeof(*ns));
    if (!ns)
        return NULL;
    rd->s = ns;
    size_t idx = ++rd->counts[k];
    char *ph;
    switch (k) {
    case REDACT_HOST:
        ph = str_printf("redacted-host-%zu", idx);
        break;
    case REDACT_USER:
        ph = str_printf("redacted-user-%zu", idx);
        break;
    case REDACT_SERIAL:
        ph = str_printf("REDACTED-SERIAL-%zu", idx);
        break;
    default: /* a locally administered unicast address, never a real vendor's */
        ph = str_printf("02:00:00:00:%02zx:%02zx", (idx >> 8) & 0xff, idx & 0xff);
        break;
    }
    char *val = strndup(v, len);
    if (!ph || !val) {
        free(ph);
        free(val);
        rd->counts[k]--;
        return NULL;
    }
    rd->s[rd->n++] = (struct redact_secret){.kind = k, .value = val, .len = len, .placeholder = ph};
    rd->sorted = false;
    return ph;
}

static bool redact_kind_of(const char *name, enum redact_kind *k)
{
    for (int i = 0; i < REDACT_NKINDS; i++)
        if (strcmp(name, redact_kind_names[i]) == 0) {
            *k = (enum redact_kind)i;
            return true;
        }
    return false;
}

void redact_learn(struct redactor *rd, const char *kind, const char *value)
{
    enum redact_kind k;
    if (!value || !redact_kind_of(kind, &k))
        return;
    char *v = str_trim(str_dup(value));
    if (v && !redact_ignored(k, v, strlen(v))) {
        redact_add(rd, k, v, strlen(v));
        /* a fully qualified hostname's first label is as telling */
        const char *dot = k == REDACT_HOST ? strchr(v, '.') : NULL;
        if (dot && !redact_ignored(k, v, (size_t)(dot - v)))
            redact_add(rd, k, v, (size_t)(dot - v));
    }
    free(v);
}

static bool redact_name_char(int c)
{
    return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '$';
}

/* Learn every NAME of "/home/NAME" in TEXT. */
static void redact_learn_homes(struct redactor *rd, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end && (p = memmem(p, (size_t)(end - p), "/home/", 6)) != NULL) {
        p += 6;
        const char *q = p;
        while (q < end && redact_name_char((unsigned char)*q))
            q++;
        if (q > p && !redact_ignored(REDACT_USER, p, (size_t)(q - p)))
            redact_add(rd, REDACT_USER, p, (size_t)(q - p));
        p = q;
    }
}

/* The members of each /etc/group line ("name:x:gid:alice,bob"). */
static void redact_learn_group(struct redactor *rd, const char *text, size_t len)
{
    const char *line = text, *end = text + len;
    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *le = nl ? nl : end;
        const char *c = line;
        for (int colons = 0; c < le && colons < 3; c++)
            if (*c == ':')
                colons++;
        while (c < le) {
            const char *comma = memchr(c, ',', (size_t)(le - c));
            const char *me = comma ? comma : le;
            char *m = strndup(c, (size_t)(me - c));
            if (m) {
                str_trim(m);
                if (!redact_ignored(REDACT_USER, m, strlen(m)))
                    redact_add(rd, REDACT_USER, m, strlen(m));
            }
            free(m);
            c = me + 1;
        }
        line = le + 1;
    }
}

void redact_learn_file(struct redactor *rd, const char *path, const char *text, size_t len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *first = strndup(text, len);
    if (first) {
        char *nl = strchr(first, '\n');
        if (nl)
            *nl = '\0';
    }
    if (strcmp(path, "/etc/hostname") == 0 || strcmp(path, "/proc/sys/kernel/hostname") == 0)
        redact_learn(rd, "host", first);
    else if (strcmp(path, "/etc/group") == 0)
        redact_learn_group(rd, text, len);
    else if (strstr(path, "/dmi/id/") && (strstr(base, "serial") || strcmp(base, "product_uuid") == 0))
        redact_learn(rd, "serial", first);
    free(first);
    redact_learn_homes(rd, text, len);
}

static bool redact_key_is_serial(const char *key)
{
    return strcasestr(key, "serial") || strcasestr(key, "uuid");
}

static void redact_walk(struct redactor *rd, json_object *v, int depth)
{
    if (depth > 64)
        return;
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, val)
        {
            if (redact_key_is_serial(key) && json_object_is_type(val, json_type_string))
                redact_learn(rd, "serial", json_object_get_string(val));
            else
                redact_walk(rd, val, depth + 1);
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            redact_walk(rd, json_object_array_get_idx(v, i), depth + 1);
    } else if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        /* NVIDIA GPU UUIDs ("GPU-8f3c...") wherever they are quoted */
        for (const char *g = strstr(s, "GPU-"); g; g = strstr(g + 4, "GPU-")) {
            size_t n = 4;
            while (isxdigit((unsigned char)g[n]) || g[n] == '-')
                n++;
            if (n >= 4 + 32) {
                char *u = strndup(g, n);
                redact_learn(rd, "serial", u);
                free(u);
            }
        }
        redact_learn_homes(rd, s, strlen(s));
    }
}

void redact_learn_report(struct redactor *rd, json_object *doc)
{
    json_object *host = json_object_object_get(doc, "host");
    redact_learn(rd, "host", json_object_get_string(json_object_object_get(host, "hostname")));
    json_object *user = json_object_object_get(host, "user");
    redact_learn(rd, "user", json_object_get_string(json_object_object_get(user, "name")));
    redact_walk(rd, doc, 0);
}

static int redact_cmp_len(const void *a, const void *b)
{
    const struct redact_secret *x = a, *y = b;
    return x->len < y->len ? 1 : x->len > y->len ? -1 : 0;
}

static void redact_prepare(struct redactor *rd)
{
    if (rd->sorted)
        return;
    /* longest first, so "host.example.org" wins over "host" */
    if (rd->n > 1)
        qsort(rd->s, rd->n, sizeof(*rd->s), redact_cmp_len);
    memset(rd->first, 0, sizeof(rd->first));
    for (size_t i = 0; i < rd->n; i++) {
        unsigned char c = (unsigned char)rd->s[i].value[0];
        rd->first[c] = 1;
    }
    rd->sorted = true;
}

/* A MAC address ("00:1a:2b:3c:4d:5e" or with dashes) at P (END bounds it): its normalised form in OUT. */
static bool redact_mac_at(const char *text, const char *p, const char *end, char out[18])
{
    if (end - p < 17 || (p > text && (isxdigit((unsigned char)p[-1]) || p[-1] == ':')))
        return false;
    char sep = p[2];
    if (sep != ':' && sep != '-')
        return false;
    for (int i = 0; i < 17; i++) {
        bool want_sep = i % 3 == 2;
        if (want_sep ? p[i] != sep : !isxdigit((unsigned char)p[i]))
            return false;
        out[i] = want_sep ? ':' : (char)tolower((unsigned char)p[i]);
    }
    out[17] = '\0';
    if (p + 17 < end && (isxdigit((unsigned char)p[17]) || p[17] == sep))
        return false;
    /* all zeros and broadcast identify nothing */
    return strcmp(out, "00:00:00:00:00:00") != 0 && strcmp(out, "ff:ff:ff:ff:ff:ff") != 0;
}

/* Hostnames and user names match whole words only; serials anywhere. */
static bool redact_word_ok(const struct redact_secret *s, const char *text, const char *p, const char *end)
{
    if (s->kind == REDACT_SERIAL)
        return true;
    bool before = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-');
    const char *q = p + s->len;
    bool after = q >= end || !(isalnum((unsigned char)*q) || *q == '_' || *q == '-');
    return before && after;
}

/* The secret at P, if any: its placeholder and length. */
static const char *redact_match(struct redactor *rd, const char *text, const char *p, const char *end, size_t *skip)
{
    char mac[18];
    if (isxdigit((unsigned char)*p) && redact_mac_at(text, p, end, mac)) {
        *skip = 17;
        const char *ph = redact_add(rd, REDACT_MAC, mac, 17);
        return ph ? ph : "02:00:00:00:ff:ff"; /* table full: redacted all the same */
    }
    if (!rd->first[(unsigned char)*p])
        return NULL;
    for (size_t i = 0; i < rd->n; i++) {
        const struct redact_secret *s = &rd->s[i];
        if (s->kind == REDACT_MAC || (size_t)(end - p) < s->len)
            continue;
        if (memcmp(p, s->value, s->len) == 0 && redact_word_ok(s, text, p, end)) {
            *skip = s->len;
            return s->placeholder;
        }
    }
    return NULL;
}

void redact_binary(struct redactor *rd, char *buf, size_t len)
{
    redact_prepare(rd);
    char *p = buf, *end = buf + len;
    while (p < end) {
        size_t skip = 0;
        const char *ph = redact_match(rd, buf, p, end, &skip);
        if (!ph || skip == 0) {
            p++;
            continue;
        }
        size_t pl = strlen(ph);
        memcpy(p, ph, pl < skip ? pl : skip);
        if (pl < skip)
            memset(p + pl, 'x', skip - pl);
        p += skip;
        redact_prepare(rd);
    }
}

char *redact_text(struct redactor *rd, const char *text, size_t len, size_t *out_len)
{
    redact_prepare(rd);
    char *buf = NULL;
    size_t blen = 0;
    FILE *m = open_memstream(&buf, &blen);
    if (!m)
        return NULL;
    const char *p = text, *end = text + len, *run = text;
    while (p < end) {
        size_t skip = 0;
        const char *ph = redact_match(rd, text, p, end, &skip);
        if (ph) {
            fwrite(run, 1, (size_t)(p - run), m);
            fputs(ph, m);
            p += skip;
            run = p;
            /* redact_add may have reordered nothing (MACs are appended) but keep the table sorted */
            redact_prepare(rd);
        } else {
            p++;
        }
    }
    fwrite(run, 1, (size_t)(end - run), m);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    if (out_len)
        *out_len = blen;
    return buf;
}

void redact_pci_config(unsigned char *cfg, size_t len)
{
    /* PCIe extended capabilities start at 0x100: 16-bit ID, 4-bit version, 12-bit next pointer; the
     * Device Serial Number capability (ID 0x0003) holds the 64-bit serial at +4 (PCIe Base Spec
     * 7.9.3 "Device Serial Number Extended Capability"). */
    size_t off = 0x100;
    for (int guard = 0; guard < 64 && off >= 0x100 && off + 12 <= len; guard++) {
        uint32_t hdr = (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
                       (uint32_t)cfg[off + 3] << 24;
        if (hdr == 0 || hdr == 0xffffffffu)
            return;
        if ((hdr & 0xffff) == 0x0003)
            memset(cfg + off + 4, 0, 8);
        size_t next = (hdr >> 20) & 0xffc;
        if (next <= off)
            return;
        off = next;
    }
}

json_object *redact_summary(const struct redactor *rd)
{
    json_object *o = json_object_new_object();
    for (int i = 0; i < REDACT_NKINDS; i++)
        json_object_object_add(o, redact_kind_names[i], json_object_new_int64((int64_t)rd->counts[i]));
    return o;
}
