/* cpu_cpuinfo.c: parsing the kernel's /proc/cpuinfo (x86 "flags", ARM "Features", others) into facts. */
#include "cpu_cpuinfo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

/* ARM "CPU implementer" codes (arch/arm64/include/asm/cputype.h). */
static const struct {
    unsigned code;
    const char *name;
} cpu_cpuinfo_implementers[] = {
    {0x41, "ARM"}, {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"}, {0x48, "HiSilicon"},
    {0x4e, "NVIDIA"}, {0x50, "APM"}, {0x51, "Qualcomm"}, {0x61, "Apple"}, {0x6d, "Microsoft"},
    {0xc0, "Ampere"},
};

/* A few common Arm Ltd. core part numbers ("CPU part" with implementer 0x41). */
static const struct {
    unsigned part;
    const char *name;
} cpu_cpuinfo_arm_parts[] = {
    {0xd03, "Cortex-A53"}, {0xd05, "Cortex-A55"}, {0xd07, "Cortex-A57"}, {0xd08, "Cortex-A72"},
    {0xd0b, "Cortex-A76"}, {0xd0c, "Neoverse-N1"}, {0xd40, "Neoverse-V1"}, {0xd49, "Neoverse-N2"},
    {0xd4f, "Neoverse-V2"}, {0xd8e, "Neoverse-N3"}, {0xd84, "Neoverse-V3"},
};

struct cpu_cpuinfo_pair {
    long pid, cid;
};

static int cpu_cpuinfo_pair_cmp(const void *a, const void *b)
{
    const struct cpu_cpuinfo_pair *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->cid > y->cid) - (x->cid < y->cid);
}

void cpu_cpuinfo_free(struct cpu_cpuinfo *ci)
{
    free(ci->arch);
    free(ci->vendor);
    free(ci->model_name);
    for (size_t i = 0; i < ci->n_flags; i++)
        free(ci->flags[i]);
    free(ci->flags);
    memset(ci, 0, sizeof(*ci));
}

bool cpu_cpuinfo_has(const struct cpu_cpuinfo *ci, const char *flag)
{
    for (size_t i = 0; i < ci->n_flags; i++)
        if (strcmp(ci->flags[i], flag) == 0)
            return true;
    return false;
}

/* The next blank-separated token of *P (its length in *LEN, 0 at the end); *P moves past it. */
static const char *cpu_cpuinfo_token(const char **p, size_t *len)
{
    const char *q = *p;
    while (*q == ' ' || *q == '\t')
        q++;
    const char *s = q;
    while (*q && *q != ' ' && *q != '\t')
        q++;
    *len = (size_t)(q - s);
    *p = q;
    return s;
}

/* True when the blank-separated list LIST contains TOKEN. */
static bool cpu_cpuinfo_list_has(const char *list, const char *token)
{
    size_t tl = strlen(token), len;
    for (const char *p = list, *s; (s = cpu_cpuinfo_token(&p, &len)), len > 0;)
        if (len == tl && strncmp(s, token, tl) == 0)
            return true;
    return false;
}

/* The first flags line: split into tokens. Returns 0 or -1 (memory). */
static int cpu_cpuinfo_set_flags(struct cpu_cpuinfo *ci, const char *list)
{
    /* Count first and grow the array once: one realloc per token copies the array each time
     * wherever realloc cannot grow in place (quadratic on a huge garbage line). */
    size_t count = 0, len;
    for (const char *p = list; cpu_cpuinfo_token(&p, &len), len > 0;)
        count++;
    if (count == 0)
        return 0;
    char **nf = realloc(ci->flags, (ci->n_flags + count) * sizeof(char *));
    if (!nf)
        return -1;
    ci->flags = nf;
    const char *p = list, *s;
    while ((s = cpu_cpuinfo_token(&p, &len)), len > 0) {
        char *tok = str_copy_n(s, len);
        if (!tok)
            return -1;
        ci->flags[ci->n_flags++] = str_sanitize(tok);
    }
    return 0;
}

/* One blank-separated token of a flags line. */
struct cpu_cpuinfo_tok {
    const char *s;
    size_t len;
};

static int cpu_cpuinfo_tok_cmp(const void *a, const void *b)
{
    const struct cpu_cpuinfo_tok *x = a, *y = b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Keep only the tokens LIST also has. The tokens are sorted and searched, so a garbage file with
 * huge flags lines costs n log n, not n * m. Returns 0 or -1 (memory). */
static int cpu_cpuinfo_intersect(struct cpu_cpuinfo *ci, const char *list)
{
    size_t n = 0, cap = 0;
    struct cpu_cpuinfo_tok *toks = NULL;
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *s = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (p == s)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            struct cpu_cpuinfo_tok *nt = realloc(toks, nc * sizeof(*nt));
            if (!nt) {
                free(toks);
                return -1;
            }
            toks = nt;
            cap = nc;
        }
        toks[n].s = s;
        toks[n].len = (size_t)(p - s);
        n++;
    }
    if (n > 1)
        qsort(toks, n, sizeof(*toks), cpu_cpuinfo_tok_cmp);
    size_t o = 0;
    for (size_t i = 0; i < ci->n_flags; i++) {
        struct cpu_cpuinfo_tok key = {ci->flags[i], strlen(ci->flags[i])};
        if (n && bsearch(&key, toks, n, sizeof(*toks), cpu_cpuinfo_tok_cmp))
            ci->flags[o++] = ci->flags[i];
        else
            free(ci->flags[i]);
    }
    ci->n_flags = o;
    free(toks);
    return 0;
}

static int cpu_cpuinfo_int(const char *v)
{
    int64_t n;
    if (str_to_i64(v, 0, &n) < 0 || n < 0 || n > 1000000)
        return -1;
    return (int)n;
}

static void cpu_cpuinfo_set_str(char **dst, const char *v)
{
    if (*dst || !*v)
        return;
    *dst = str_dup(v);
    if (*dst)
        str_sanitize(*dst);
}

/* What the parser keeps between lines, beside the result. */
struct cpu_cpuinfo_state {
    char *first_flags, *isa;
    unsigned implementer, part;
    bool have_implementer, have_part, s390, ppc;
    int cpu_arch;
    struct cpu_cpuinfo_pair *pairs;
    size_t n_pairs, cap_pairs;
    long pid, cid;
};

/* A "physical id" or "core id" line: a pair is complete once both are seen. Returns 0, or -1 (out of memory). */
static int cpu_cpuinfo_id(struct cpu_cpuinfo_state *st, const char *key, const char *val)
{
    long n = cpu_cpuinfo_int(val);
    if (key[0] == 'p')
        st->pid = n;
    else
        st->cid = n;
    if (st->pid >= 0 && st->cid >= 0) {
        /* Duplicates are dropped after sorting, at the end: checking each new pair against
         * all before it would be quadratic in a garbage file's size. */
        if (st->n_pairs == st->cap_pairs) {
            size_t nc = st->cap_pairs ? st->cap_pairs * 2 : 64;
            struct cpu_cpuinfo_pair *np = realloc(st->pairs, nc * sizeof(*np));
            if (!np)
                return -1;
            st->pairs = np;
            st->cap_pairs = nc;
        }
        st->pairs[st->n_pairs].pid = st->pid;
        st->pairs[st->n_pairs].cid = st->cid;
        st->n_pairs++;
        st->pid = st->cid = -1;
    }
    return 0;
}

/* One "key : value" line. Returns 0, or -1 (out of memory). */
static int cpu_cpuinfo_line(struct cpu_cpuinfo_state *st, struct cpu_cpuinfo *ci, const char *key, const char *val)
{
    int rc = 0;
    if (strcmp(key, "processor") == 0 && cpu_cpuinfo_int(val) >= 0) {
        ci->processors++;
        st->pid = st->cid = -1;
    } else if (strcmp(key, "physical id") == 0 || strcmp(key, "core id") == 0) {
        return cpu_cpuinfo_id(st, key, val);
    } else if (strcmp(key, "flags") == 0 || strcmp(key, "Features") == 0 || strcmp(key, "features") == 0) {
        ci->has_flags_line = true;
        if (!st->first_flags) {
            st->first_flags = str_dup(val);
            if (!st->first_flags || cpu_cpuinfo_set_flags(ci, val) < 0)
                rc = -1;
        } else if (strcmp(st->first_flags, val) != 0) {
            ci->flags_differ = true;
            if (cpu_cpuinfo_intersect(ci, val) < 0)
                rc = -1;
        }
    } else if (strcmp(key, "vendor_id") == 0) {
        cpu_cpuinfo_set_str(&ci->vendor, val);
        if (strcmp(val, "IBM/S390") == 0)
            st->s390 = true;
    } else if (strcmp(key, "model name") == 0) {
        cpu_cpuinfo_set_str(&ci->model_name, val);
    } else if (strcmp(key, "cpu family") == 0) {
        if (ci->family < 0)
            ci->family = cpu_cpuinfo_int(val);
    } else if (strcmp(key, "model") == 0) {
        if (ci->model < 0)
            ci->model = cpu_cpuinfo_int(val);
    } else if (strcmp(key, "stepping") == 0) {
        if (ci->stepping < 0)
            ci->stepping = cpu_cpuinfo_int(val);
    } else if (strcmp(key, "CPU implementer") == 0) {
        int n = cpu_cpuinfo_int(val);
        if (n >= 0 && !st->have_implementer) {
            st->implementer = (unsigned)n;
            st->have_implementer = true;
        }
    } else if (strcmp(key, "CPU part") == 0) {
        int n = cpu_cpuinfo_int(val);
        if (n >= 0 && !st->have_part) {
            st->part = (unsigned)n;
            st->have_part = true;
        }
    } else if (strcmp(key, "CPU architecture") == 0) {
        if (st->cpu_arch < 0)
            st->cpu_arch = strcmp(val, "AArch64") == 0 ? 8 : cpu_cpuinfo_int(val);
    } else if (strcmp(key, "isa") == 0) {
        if (!st->isa)
            st->isa = str_dup(val);
    } else if (strcmp(key, "uarch") == 0) {
        cpu_cpuinfo_set_str(&ci->model_name, val);
    } else if (strcmp(key, "cpu") == 0) {
        cpu_cpuinfo_set_str(&ci->model_name, val);
    } else if (strcmp(key, "timebase") == 0 || strcmp(key, "platform") == 0) {
        st->ppc = true;
    }
    return rc;
}

/* After the last line: core and package counts, RISC-V's ISA flags, the architecture, ARM's vendor
 * and part names. Returns 0, or -1 (out of memory). */
static int cpu_cpuinfo_finish(struct cpu_cpuinfo_state *st, struct cpu_cpuinfo *ci)
{
    int rc = 0;
    if (st->n_pairs > 0) {
        /* Sorted by (physical id, core id): distinct pairs are cores, distinct ids packages. */
        struct cpu_cpuinfo_pair *pairs = st->pairs;
        qsort(pairs, st->n_pairs, sizeof(*pairs), cpu_cpuinfo_pair_cmp);
        int cores = 0, pk = 0;
        for (size_t i = 0; i < st->n_pairs; i++) {
            if (i == 0 || pairs[i].pid != pairs[i - 1].pid)
                pk++;
            if (i == 0 || pairs[i].pid != pairs[i - 1].pid || pairs[i].cid != pairs[i - 1].cid)
                cores++;
        }
        ci->cores = cores;
        ci->packages = pk;
    }
    if (st->isa && ci->n_flags == 0) {
        /* RISC-V: the ISA string is the feature list. */
        ci->has_flags_line = true;
        if (cpu_cpuinfo_set_flags(ci, st->isa) < 0)
            rc = -1;
    }

    const char *arch = NULL;
    if (st->s390)
        arch = "s390x";
    else if (st->have_implementer)
        arch = st->cpu_arch >= 8 ? "aarch64" : "arm";
    else if (st->isa)
        arch = str_starts_with(st->isa, "rv32") ? "riscv32" : "riscv64";
    else if (ci->vendor && st->first_flags)
        arch = cpu_cpuinfo_list_has(st->first_flags, "lm") ? "x86_64" : "x86";
    else if (st->ppc)
        arch = "ppc64";
    if (arch && rc == 0) {
        ci->arch = str_dup(arch);
        if (!ci->arch)
            rc = -1;
    }

    if (rc == 0 && st->have_implementer && !ci->vendor) {
        const char *name = NULL;
        for (size_t i = 0; i < sizeof(cpu_cpuinfo_implementers) / sizeof(cpu_cpuinfo_implementers[0]); i++)
            if (cpu_cpuinfo_implementers[i].code == st->implementer)
                name = cpu_cpuinfo_implementers[i].name;
        ci->vendor = name ? str_dup(name) : str_printf("implementer 0x%02x", st->implementer);
    }
    if (rc == 0 && st->have_implementer && st->have_part && !ci->model_name) {
        const char *name = NULL;
        if (st->implementer == 0x41)
            for (size_t i = 0; i < sizeof(cpu_cpuinfo_arm_parts) / sizeof(cpu_cpuinfo_arm_parts[0]); i++)
                if (cpu_cpuinfo_arm_parts[i].part == st->part)
                    name = cpu_cpuinfo_arm_parts[i].name;
        ci->model_name = name ? str_dup(name) : str_printf("part 0x%03x", st->part);
    }
    return rc;
}

int cpu_cpuinfo_parse(const char *text, struct cpu_cpuinfo *ci)
{
    memset(ci, 0, sizeof(*ci));
    ci->family = ci->model = ci->stepping = -1;
    ci->packages = ci->cores = -1;
    struct cpu_cpuinfo_state st;
    memset(&st, 0, sizeof(st));
    st.cpu_arch = -1;
    st.pid = st.cid = -1;
    int rc = 0;

    /* memchr within the known end, and cpu_cpuinfo_copy: see there. */
    const char *p = text, *end = text + strlen(text);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = str_copy_n(p, ll);
        p = nl ? nl + 1 : p + ll;
        if (!line) {
            rc = -1;
            break;
        }
        char *colon = strchr(line, ':');
        if (!colon) {
            free(line);
            continue;
        }
        *colon = '\0';
        char *key = str_trim(line), *val = str_trim(colon + 1);
        rc = cpu_cpuinfo_line(&st, ci, key, val);
        free(line);
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = cpu_cpuinfo_finish(&st, ci);

    free(st.pairs);
    free(st.first_flags);
    free(st.isa);
    if (rc < 0)
        cpu_cpuinfo_free(ci);
    return rc;
}
