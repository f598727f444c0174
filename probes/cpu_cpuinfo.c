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

/* True when the blank-separated list LIST contains TOKEN. */
static bool cpu_cpuinfo_list_has(const char *list, const char *token)
{
    size_t tl = strlen(token);
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *s = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if ((size_t)(p - s) == tl && strncmp(s, token, tl) == 0)
            return true;
    }
    return false;
}

/* The first flags line: split into tokens. Returns 0 or -1 (memory). */
static int cpu_cpuinfo_set_flags(struct cpu_cpuinfo *ci, const char *list)
{
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        const char *s = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (p == s)
            continue;
        char **nf = realloc(ci->flags, (ci->n_flags + 1) * sizeof(char *));
        if (!nf)
            return -1;
        ci->flags = nf;
        char *tok = strndup(s, (size_t)(p - s));
        if (!tok)
            return -1;
        ci->flags[ci->n_flags++] = str_sanitize(tok);
    }
    return 0;
}

/* Keep only the tokens LIST also has. */
static void cpu_cpuinfo_intersect(struct cpu_cpuinfo *ci, const char *list)
{
    size_t o = 0;
    for (size_t i = 0; i < ci->n_flags; i++) {
        if (cpu_cpuinfo_list_has(list, ci->flags[i]))
            ci->flags[o++] = ci->flags[i];
        else
            free(ci->flags[i]);
    }
    ci->n_flags = o;
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

int cpu_cpuinfo_parse(const char *text, struct cpu_cpuinfo *ci)
{
    memset(ci, 0, sizeof(*ci));
    ci->family = ci->model = ci->stepping = -1;
    ci->packages = ci->cores = -1;
    char *first_flags = NULL, *isa = NULL;
    unsigned implementer = 0, part = 0;
    bool have_implementer = false, have_part = false, s390 = false, ppc = false;
    int cpu_arch = -1;
    struct cpu_cpuinfo_pair *pairs = NULL;
    size_t n_pairs = 0;
    long pid = -1, cid = -1;
    int rc = 0;

    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t ll = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, ll);
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

        if (strcmp(key, "processor") == 0 && cpu_cpuinfo_int(val) >= 0) {
            ci->processors++;
            pid = cid = -1;
        } else if (strcmp(key, "physical id") == 0 || strcmp(key, "core id") == 0) {
            long n = cpu_cpuinfo_int(val);
            if (key[0] == 'p')
                pid = n;
            else
                cid = n;
            if (pid >= 0 && cid >= 0) {
                bool dup = false;
                for (size_t i = 0; i < n_pairs; i++)
                    if (pairs[i].pid == pid && pairs[i].cid == cid)
                        dup = true;
                if (!dup) {
                    struct cpu_cpuinfo_pair *np = realloc(pairs, (n_pairs + 1) * sizeof(*np));
                    if (!np) {
                        free(line);
                        rc = -1;
                        break;
                    }
                    pairs = np;
                    pairs[n_pairs].pid = pid;
                    pairs[n_pairs].cid = cid;
                    n_pairs++;
                }
                pid = cid = -1;
            }
        } else if (strcmp(key, "flags") == 0 || strcmp(key, "Features") == 0 || strcmp(key, "features") == 0) {
            ci->has_flags_line = true;
            if (!first_flags) {
                first_flags = str_dup(val);
                if (!first_flags || cpu_cpuinfo_set_flags(ci, val) < 0)
                    rc = -1;
            } else if (strcmp(first_flags, val) != 0) {
                ci->flags_differ = true;
                cpu_cpuinfo_intersect(ci, val);
            }
        } else if (strcmp(key, "vendor_id") == 0) {
            cpu_cpuinfo_set_str(&ci->vendor, val);
            if (strcmp(val, "IBM/S390") == 0)
                s390 = true;
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
            if (n >= 0 && !have_implementer) {
                implementer = (unsigned)n;
                have_implementer = true;
            }
        } else if (strcmp(key, "CPU part") == 0) {
            int n = cpu_cpuinfo_int(val);
            if (n >= 0 && !have_part) {
                part = (unsigned)n;
                have_part = true;
            }
        } else if (strcmp(key, "CPU architecture") == 0) {
            if (cpu_arch < 0)
                cpu_arch = strcmp(val, "AArch64") == 0 ? 8 : cpu_cpuinfo_int(val);
        } else if (strcmp(key, "isa") == 0) {
            if (!isa)
                isa = str_dup(val);
        } else if (strcmp(key, "uarch") == 0) {
            cpu_cpuinfo_set_str(&ci->model_name, val);
        } else if (strcmp(key, "cpu") == 0) {
            cpu_cpuinfo_set_str(&ci->model_name, val);
        } else if (strcmp(key, "timebase") == 0 || strcmp(key, "platform") == 0) {
            ppc = true;
        }
        free(line);
        if (rc < 0)
            break;
    }

    if (rc == 0 && n_pairs > 0) {
        ci->cores = (int)n_pairs;
        int pk = 0;
        for (size_t i = 0; i < n_pairs; i++) {
            bool seen = false;
            for (size_t j = 0; j < i; j++)
                if (pairs[j].pid == pairs[i].pid)
                    seen = true;
            if (!seen)
                pk++;
        }
        ci->packages = pk;
    }
    if (rc == 0 && isa && ci->n_flags == 0) {
        /* RISC-V: the ISA string is the feature list. */
        ci->has_flags_line = true;
        if (cpu_cpuinfo_set_flags(ci, isa) < 0)
            rc = -1;
    }

    const char *arch = NULL;
    if (s390)
        arch = "s390x";
    else if (have_implementer)
        arch = cpu_arch >= 8 ? "aarch64" : "arm";
    else if (isa)
        arch = str_starts_with(isa, "rv32") ? "riscv32" : "riscv64";
    else if (ci->vendor && first_flags)
        arch = cpu_cpuinfo_list_has(first_flags, "lm") ? "x86_64" : "x86";
    else if (ppc)
        arch = "ppc64";
    if (arch && rc == 0) {
        ci->arch = str_dup(arch);
        if (!ci->arch)
            rc = -1;
    }

    if (rc == 0 && have_implementer && !ci->vendor) {
        const char *name = NULL;
        for (size_t i = 0; i < sizeof(cpu_cpuinfo_implementers) / sizeof(cpu_cpuinfo_implementers[0]); i++)
            if (cpu_cpuinfo_implementers[i].code == implementer)
                name = cpu_cpuinfo_implementers[i].name;
        ci->vendor = name ? str_dup(name) : str_printf("implementer 0x%02x", implementer);
    }
    if (rc == 0 && have_implementer && have_part && !ci->model_name) {
        const char *name = NULL;
        if (implementer == 0x41)
            for (size_t i = 0; i < sizeof(cpu_cpuinfo_arm_parts) / sizeof(cpu_cpuinfo_arm_parts[0]); i++)
                if (cpu_cpuinfo_arm_parts[i].part == part)
                    name = cpu_cpuinfo_arm_parts[i].name;
        ci->model_name = name ? str_dup(name) : str_printf("part 0x%03x", part);
    }

    free(pairs);
    free(first_flags);
    free(isa);
    if (rc < 0)
        cpu_cpuinfo_free(ci);
    return rc;
}
