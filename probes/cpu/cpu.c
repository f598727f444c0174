/* cpu.c: the cpu probe: CPU identification, usable SIMD flags (CPUID + XCR0 + /proc/cpuinfo), x86-64 level. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <libcpuid/libcpuid.h>

#include "cpu_cpuinfo.h"
#include "cpu_dump.h"
#include "cpu_x86.h"
#include "isolate.h"
#include "probe.h"
#include "strutil.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CPU_LIVE_CPUID 1
#else
#define CPU_LIVE_CPUID 0
#endif

/* /proc/cpuinfo grows with the CPU count (~1.5 KiB per logical CPU on x86). */
#define CPU_CPUINFO_MAX (32u * 1024u * 1024u)

static const struct check cpu_checks[] = {
    {"cpu.no-avx", REPORT_SEV_WARNING,
     "AVX is not usable: prebuilt TensorFlow (since 1.6) and other AVX builds die with \"Illegal instruction\"",
     "Run on a CPU with AVX (any x86-64 CPU since 2011 has it), or use builds made without AVX "
     "(e.g. build TensorFlow from source)."},
    {"cpu.avx-hidden-by-hypervisor", REPORT_SEV_WARNING,
     "The CPU inside this virtual machine reports no AVX: the virtual CPU model probably hides it",
     "Give the VM the host's CPU model: QEMU/libvirt -cpu host or <cpu mode='host-passthrough'/>, "
     "Proxmox CPU type 'host' (or x86-64-v3), VirtualBox/VMware: no restrictive CPUID mask or EVC baseline."},
    {"cpu.avx-disabled-by-os", REPORT_SEV_WARNING,
     "The CPU reports AVX but the OS has not enabled its register state (OSXSAVE/XCR0), so AVX code faults",
     "Look for noxsave or clearcpuid= on the kernel command line (cat /proc/cmdline), remove it and reboot."},
    {"cpu.avx512-disabled-by-os", REPORT_SEV_INFO,
     "The CPU reports AVX-512 but the OS has not enabled its register state (XCR0 bits 5-7)",
     "Look for noxsave or clearcpuid= on the kernel command line (cat /proc/cmdline); libraries fall back to AVX2."},
    {"cpu.amx-disabled-by-os", REPORT_SEV_INFO,
     "The CPU reports AMX but the OS has not enabled its tile state (XCR0 bits 17-18)",
     "AMX needs Linux 5.16 or later; upgrade the kernel to use AMX (PyTorch/oneDNN bf16 and int8 paths)."},
    {"cpu.below-x86-64-v2", REPORT_SEV_WARNING,
     "The CPU is below x86-64-v2: NumPy 2.4+ wheels (built for x86-64-v2) and other v2 builds refuse to run",
     "Use a CPU (or virtual CPU model) with SSE4.2, POPCNT, CMPXCHG16B and LAHF/SAHF, or pin numpy<2.4."},
    {"cpu.flags-disagree", REPORT_SEV_WARNING,
     "CPUID and the kernel's /proc/cpuinfo disagree about a CPU feature",
     "Check the kernel command line (clearcpuid=, noxsave) and the kernel version: programs that read "
     "/proc/cpuinfo and programs that run CPUID will decide differently."},
};

enum cpu_source { CPU_SRC_CPUID, CPU_SRC_DUMP, CPU_SRC_CPUINFO };
static const char *const cpu_source_names[] = {"cpuid", "dump", "cpuinfo"};

/* Everything one run of the probe gathers. */
struct cpu_run {
    struct probe_ctx *ctx;
    struct report_section *sec;
    json_object *d;
    enum cpu_source source;
    struct cpu_raw_data_t live_raw;
    struct cpu_dump dump;
    const struct cpu_raw_data_t *raw; /* the logical CPU decoded (live_raw or dump.raw[0]) */
    struct cpu_leaves leaves;
    struct cpu_x86_view view;
    bool x86;
    char *arch;
    struct cpu_cpuinfo ci;
    bool have_ci;
    bool cross_check;       /* CPUID and cpuinfo describe the same machine */
    char *cmdline_tokens;   /* noxsave / clearcpuid= tokens of /proc/cmdline, or NULL */
    json_object *lib;       /* libcpuid's identification from the isolated child, or NULL */
    char *avx_cause;        /* why AVX is not usable, for the summary line, or NULL */
};

/* ---- live CPUID ---------------------------------------------------------------------------- */

/* Read this CPU's raw CPUID (libcpuid) plus what libcpuid 0.6 does not record: leaf 7 subleaf 1, the
 * hypervisor leaf, XCR0. Returns 0, or -1 with a note added. */
static int cpu_read_live(struct cpu_run *c)
{
#if CPU_LIVE_CPUID
    if (!cpuid_present()) {
        report_section_add_note(c->sec, "this CPU has no CPUID instruction");
        return -1;
    }
    memset(&c->live_raw, 0, sizeof(c->live_raw));
    if (cpuid_get_raw_data(&c->live_raw) < 0) {
        report_section_add_note(c->sec, "libcpuid could not read CPUID: %s", cpuid_error());
        return -1;
    }
    c->raw = &c->live_raw;
    cpu_leaves_from_raw(c->raw, &c->leaves);
    struct cpu_leaves *l = &c->leaves;
    if (l->basic[0][CPU_EAX] >= 7) {
        __cpuid_count(7, 1, l->leaf7_1[0], l->leaf7_1[1], l->leaf7_1[2], l->leaf7_1[3]);
        l->have_7_1 = true;
    }
    if (l->basic[0][CPU_EAX] >= 1 && (l->basic[1][CPU_ECX] >> 31) & 1) {
        __cpuid_count(0x40000000u, 0, l->hv[0], l->hv[1], l->hv[2], l->hv[3]);
        l->have_hv = true;
        /* KVM with Hyper-V enlightenments answers "Microsoft Hv" there and its own name at 0x40000100. */
        if (l->hv[CPU_EBX] == 0x7263694d && l->hv[CPU_ECX] == 0x666f736f && l->hv[CPU_EDX] == 0x76482074) {
            __cpuid_count(0x40000100u, 0, l->hv2[0], l->hv2[1], l->hv2[2], l->hv2[3]);
            l->have_hv2 = true;
        }
    }
    /* XGETBV faults unless the OS set CR4.OSXSAVE, which CPUID.1:ECX[27] mirrors. */
    if (l->basic[0][CPU_EAX] >= 1 && (l->basic[1][CPU_ECX] >> 27) & 1) {
        uint32_t lo, hi;
        __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        l->xcr0 = ((uint64_t)hi << 32) | lo;
        l->have_xcr0 = true;
    }
    return 0;
#else
    report_section_add_note(c->sec, "not an x86 build: no CPUID instruction to read");
    return -1;
#endif
}

/* ---- libcpuid, isolated ------------------------------------------------------------------- */

struct cpu_lib_arg {
    const struct cpu_raw_data_t *raw;
    size_t n_raw;
    bool multi;     /* a multi-CPU dump: identify every logical CPU (hybrid core types) */
    bool live_all;  /* live hybrid CPU: read every logical CPU (changes the child's affinity) */
};

static void cpu_lib_quiet(const char *msg)
{
    (void)msg;
}

static json_object *cpu_lib_str(const char *s)
{
    char *c = str_dup(s);
    if (!c)
        return NULL;
    json_object *o = json_object_new_string(str_sanitize(c));
    free(c);
    return o;
}

/* Runs in an isolated child for dumps and hybrid CPUs: libcpuid decodes untrusted dump data, and
 * reading every logical CPU pins the calling thread to each CPU in turn; neither should touch
 * gpucheckup itself. Returns a new JSON object (libcpuid's identification, or {"error": ...}). */
static json_object *cpu_lib_child(void *arg)
{
    const struct cpu_lib_arg *a = arg;
    cpuid_set_warn_function(cpu_lib_quiet);
    struct cpu_raw_data_t raw = a->raw[0];
    struct cpu_id_t id;
    memset(&id, 0, sizeof(id));
    json_object *o = json_object_new_object();
    if (cpu_identify(&raw, &id) < 0) {
        json_object_object_add(o, "error", cpu_lib_str(cpuid_error()));
        return o;
    }
    json_object_object_add(o, "vendor", cpu_lib_str(id.vendor_str));
    json_object_object_add(o, "brand", cpu_lib_str(id.brand_str));
    json_object_object_add(o, "codename", cpu_lib_str(id.cpu_codename));
    json_object_object_add(o, "family", json_object_new_int(id.ext_family));
    json_object_object_add(o, "model", json_object_new_int(id.ext_model));
    json_object_object_add(o, "stepping", json_object_new_int(id.stepping));
    json_object_object_add(o, "cores", json_object_new_int(id.num_cores));
    json_object_object_add(o, "logical_cpus", json_object_new_int(id.num_logical_cpus));
    json_object *flags = json_object_new_object();
    for (size_t i = 0; i < cpu_flag_count; i++)
        if (cpu_flag_table[i].libcpuid >= 0)
            json_object_object_add(flags, cpu_flag_table[i].name,
                                   json_object_new_boolean(id.flags[cpu_flag_table[i].libcpuid] != 0));
    json_object_object_add(o, "flags", flags);

    if (a->live_all || (a->multi && a->n_raw > 1)) {
        struct cpu_raw_data_array_t arr;
        memset(&arr, 0, sizeof(arr));
        bool own = false;
        int rc = 0;
        if (a->live_all) {
            rc = cpuid_get_all_raw_data(&arr);
            own = true;
        } else {
            arr.with_affinity = true;
            arr.num_raw = (logical_cpu_t)a->n_raw;
            arr.raw = (struct cpu_raw_data_t *)a->raw;
        }
        struct system_id_t sys;
        memset(&sys, 0, sizeof(sys));
        if (rc >= 0 && arr.num_raw > 0 && cpu_identify_all(&arr, &sys) >= 0) {
            json_object *types = json_object_new_array();
            for (uint8_t i = 0; i < sys.num_cpu_types; i++) {
                const struct cpu_id_t *t = &sys.cpu_types[i];
                json_object *e = json_object_new_object();
                json_object_object_add(e, "purpose", cpu_lib_str(cpu_purpose_str(t->purpose)));
                json_object_object_add(e, "cores", json_object_new_int(t->num_cores));
                json_object_object_add(e, "logical_cpus", json_object_new_int(t->num_logical_cpus));
                json_object_object_add(e, "codename", cpu_lib_str(t->cpu_codename));
                json_object_array_add(types, e);
            }
            json_object_object_add(o, "core_types", types);
            cpuid_free_system_id(&sys);
        } else {
            json_object_object_add(o, "core_types_error", cpu_lib_str(cpuid_error()));
        }
        if (own)
            cpuid_free_raw_data_array(&arr);
    }
    return o;
}

static void cpu_run_libcpuid(struct cpu_run *c)
{
    struct cpu_lib_arg a = {
        .raw = c->source == CPU_SRC_DUMP ? c->dump.raw : c->raw,
        .n_raw = c->source == CPU_SRC_DUMP ? c->dump.n_raw : 1,
        .multi = c->source == CPU_SRC_DUMP && c->dump.multi,
        .live_all = c->source == CPU_SRC_CPUID && c->view.hybrid,
    };
    if (c->source == CPU_SRC_CPUID && !a.live_all) {
        /* This CPU's own leaves, one logical CPU: nothing untrusted, no affinity change, and no fork
         * (the isolation helper can add up to 20 ms waiting for the child to be reaped). */
        c->lib = cpu_lib_child(&a);
        return;
    }
    struct isolate_result res;
    isolate_run(cpu_lib_child, &a, c->ctx->timeout_ms, &res);
    if (res.status == ISOLATE_OK && json_object_is_type(res.value, json_type_object)) {
        c->lib = json_object_get(res.value);
    } else {
        report_section_add_note(c->sec, "libcpuid's identification failed in its isolated child (%s): "
                                        "codename and libcpuid cross-check unavailable",
                                res.detail ? res.detail : isolate_status_name(res.status));
    }
    isolate_result_clear(&res);
}

/* A string member of the libcpuid result, or NULL. */
static const char *cpu_lib_get_str(const struct cpu_run *c, const char *key)
{
    json_object *v;
    if (!c->lib || !json_object_object_get_ex(c->lib, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    const char *s = json_object_get_string(v);
    return s && *s ? s : NULL;
}

static int cpu_lib_get_int(const struct cpu_run *c, const char *key)
{
    json_object *v;
    if (!c->lib || !json_object_object_get_ex(c->lib, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    return json_object_get_int(v);
}

/* ---- helpers -------------------------------------------------------------------------------- */

static json_object *cpu_json_str(const char *s)
{
    if (!s || !*s)
        return NULL;
    char *c = str_dup(s);
    if (!c)
        return NULL;
    json_object *o = json_object_new_string(str_sanitize(c));
    free(c);
    return o;
}

static json_object *cpu_json_int(int v)
{
    return v >= 0 ? json_object_new_int(v) : NULL;
}

static json_object *cpu_json_tri(signed char v)
{
    return v == CPU_UNKNOWN ? NULL : json_object_new_boolean(v == CPU_YES);
}

static bool cpu_is_x86_arch(const char *a)
{
    return a && (strcmp(a, "x86_64") == 0 || strcmp(a, "x86") == 0 || strcmp(a, "amd64") == 0 ||
                 (a[0] == 'i' && strlen(a) == 4 && strcmp(a + 2, "86") == 0));
}

/* Tokens of /proc/cmdline that take CPU features away from programs. */
static void cpu_read_cmdline(struct cpu_run *c)
{
    char *text = NULL;
    if (hostfs_read_file(c->ctx->fs, "/proc/cmdline", 65536, &text, NULL) < 0)
        return;
    char *found = NULL, *save = NULL;
    for (char *tok = strtok_r(text, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
        if (strcmp(tok, "noxsave") != 0 && !str_starts_with(tok, "clearcpuid="))
            continue;
        char *n = found ? str_printf("%s %s", found, tok) : str_dup(tok);
        free(found);
        found = n;
    }
    free(text);
    c->cmdline_tokens = found ? str_sanitize(found) : NULL;
}

static void cpu_read_cpuinfo(struct cpu_run *c)
{
    char *text = NULL;
    int rc = hostfs_read_file(c->ctx->fs, "/proc/cpuinfo", CPU_CPUINFO_MAX, &text, NULL);
    if (rc < 0) {
        report_section_add_note(c->sec, "cannot read /proc/cpuinfo: %s", strerror(-rc));
        return;
    }
    if (cpu_cpuinfo_parse(text, &c->ci) == 0) {
        c->have_ci = true;
        if (c->ci.processors == 0)
            report_section_add_note(c->sec, "/proc/cpuinfo lists no processor");
        if (c->ci.flags_differ)
            report_section_add_note(c->sec, "processors in /proc/cpuinfo list different flags: "
                                            "only flags every processor lists are counted");
    }
    free(text);
}

/* ---- facts ---------------------------------------------------------------------------------- */

/* Flags as the kernel lists them, for the table rows. */
static json_object *cpu_cpuinfo_flags_json(const struct cpu_run *c)
{
    if (!c->have_ci || !c->ci.has_flags_line)
        return NULL;
    json_object *o = json_object_new_object();
    for (size_t i = 0; i < cpu_flag_count; i++)
        json_object_object_add(o, cpu_flag_table[i].name,
                               json_object_new_boolean(cpu_cpuinfo_has(&c->ci, cpu_flag_table[i].kernel)));
    return o;
}

static const char *cpu_os_source_name(const struct cpu_run *c)
{
    switch (c->view.xcr0_source) {
    case CPU_XCR0_READ: return c->source == CPU_SRC_DUMP ? "dump" : "xgetbv";
    case CPU_XCR0_NONE: return "osxsave";
    case CPU_XCR0_ASSUMED: return "assumed";
    }
    return "assumed";
}

static void cpu_fill_x86(struct cpu_run *c)
{
    json_object *d = c->d;
    const struct cpu_x86_view *v = &c->view;
    bool cpuid = c->source != CPU_SRC_CPUINFO;
    signed char usable[CPU_FLAG_MAX];

    if (cpuid) {
        memcpy(usable, v->usable, sizeof(usable));
    } else {
        for (size_t i = 0; i < cpu_flag_count && i < CPU_FLAG_MAX; i++)
            usable[i] = (signed char)(c->have_ci && c->ci.has_flags_line
                                          ? (cpu_cpuinfo_has(&c->ci, cpu_flag_table[i].kernel) ? CPU_YES : CPU_NO)
                                          : CPU_UNKNOWN);
    }
    bool have_flags = cpuid || (c->have_ci && c->ci.has_flags_line);
    if (!have_flags)
        report_section_add_note(c->sec, "/proc/cpuinfo has no flags line: the flag table is unknown");

    json_object *flags = NULL, *cflags = NULL;
    if (have_flags) {
        flags = json_object_new_object();
        for (size_t i = 0; i < cpu_flag_count; i++)
            json_object_object_add(flags, cpu_flag_table[i].name, cpu_json_tri(usable[i]));
    }
    if (cpuid) {
        cflags = json_object_new_object();
        for (size_t i = 0; i < cpu_flag_count; i++)
            json_object_object_add(cflags, cpu_flag_table[i].name, cpu_json_tri(v->reported[i]));
    }
    json_object_object_add(d, "flags", flags);
    json_object_object_add(d, "cpuid_flags", cflags);
    json_object_object_add(d, "cpuinfo_flags", c->source == CPU_SRC_CPUINFO || c->cross_check ? cpu_cpuinfo_flags_json(c) : NULL);

    if (cpuid) {
        json_object *os = json_object_new_object();
        json_object_object_add(os, "source", json_object_new_string(cpu_os_source_name(c)));
        json_object_object_add(os, "osxsave", json_object_new_boolean(v->osxsave));
        json_object_object_add(os, "xcr0", v->xcr0_source == CPU_XCR0_READ ? json_object_new_int64((int64_t)v->xcr0) : NULL);
        json_object_object_add(os, "avx", json_object_new_boolean(v->state_avx));
        json_object_object_add(os, "avx512", json_object_new_boolean(v->state_avx512));
        json_object_object_add(os, "amx", json_object_new_boolean(v->state_amx));
        json_object_object_add(d, "os_enabled", os);
        if (v->xcr0_source == CPU_XCR0_ASSUMED)
            report_section_add_note(c->sec, "the dump does not record XCR0: assumed the OS enabled every register "
                                            "state the CPU supports (CPUID leaf 0xD: 0x%" PRIx64 "), as Linux does; "
                                            "\"usable\" then means reported by CPUID with OSXSAVE set",
                                    v->xcr0);
    } else {
        json_object_object_add(d, "os_enabled", NULL);
    }

    int level = have_flags ? cpu_x86_level(usable) : -1;
    json_object_object_add(d, "x86_64_level", level >= 0 ? json_object_new_int(level) : NULL);
    json_object *missing = NULL;
    if (level >= 0 && level < 4) {
        missing = json_object_new_object();
        for (int want = level + 1; want <= 4; want++) {
            const char *names[CPU_FLAG_MAX];
            size_t n = cpu_x86_level_missing(usable, want, names, CPU_FLAG_MAX);
            json_object *arr = json_object_new_array();
            for (size_t i = 0; i < n; i++)
                json_object_array_add(arr, json_object_new_string(names[i]));
            char key[16];
            snprintf(key, sizeof(key), "v%d", want);
            json_object_object_add(missing, key, arr);
        }
    }
    json_object_object_add(d, "x86_64_missing", missing);

    /* hypervisor */
    json_object *hv = NULL;
    if (cpuid ? v->hypervisor : (c->have_ci && cpu_cpuinfo_has(&c->ci, "hypervisor"))) {
        hv = json_object_new_object();
        json_object_object_add(hv, "present", json_object_new_boolean(true));
        json_object_object_add(hv, "vendor", cpu_json_str(cpuid ? v->hv_vendor : NULL));
        json_object_object_add(hv, "signature", cpu_json_str(cpuid ? v->hv_signature : NULL));
        if (cpuid && v->hv_signature[0] && !v->hv_vendor)
            report_section_add_note(c->sec, "unknown hypervisor signature \"%s\"", v->hv_signature);
    }
    json_object_object_add(d, "hypervisor", hv);
}

static void cpu_fill_ident(struct cpu_run *c)
{
    json_object *d = c->d;
    const struct cpu_x86_view *v = &c->view;
    const char *vendor = NULL, *brand = NULL;
    int family = -1, model = -1, stepping = -1;
    if (c->x86 && c->source != CPU_SRC_CPUINFO) {
        vendor = v->vendor;
        brand = v->brand;
        family = v->family;
        model = v->model;
        stepping = v->stepping;
    } else if (c->have_ci) {
        vendor = c->ci.vendor;
        brand = c->ci.model_name;
        family = c->ci.family;
        model = c->ci.model;
        stepping = c->ci.stepping;
    }
    json_object_object_add(d, "vendor", cpu_json_str(vendor));
    json_object_object_add(d, "brand", cpu_json_str(brand));
    json_object_object_add(d, "family", cpu_json_int(family));
    json_object_object_add(d, "model", cpu_json_int(model));
    json_object_object_add(d, "stepping", cpu_json_int(stepping));
    json_object_object_add(d, "microarchitecture",
                           cpu_json_str(c->x86 ? cpu_x86_microarchitecture(vendor, family, model) : NULL));
    const char *codename = cpu_lib_get_str(c, "codename");
    if (codename && (strcmp(codename, "Unknown") == 0 || strcmp(codename, "UNKNOWN") == 0))
        codename = NULL;
    json_object_object_add(d, "codename", cpu_json_str(codename));

    /* Counts: the kernel's, when its cpuinfo describes the same machine; else libcpuid's (per package). */
    int cores = -1, logical = -1, packages = -1;
    bool same_machine_ci = c->have_ci && (c->source == CPU_SRC_CPUINFO || c->cross_check || c->source == CPU_SRC_CPUID);
    if (same_machine_ci && c->ci.processors > 0) {
        logical = c->ci.processors;
        cores = c->ci.cores;
        packages = c->ci.packages;
    } else if (c->lib) {
        cores = cpu_lib_get_int(c, "cores");
        logical = cpu_lib_get_int(c, "logical_cpus");
        if (c->source == CPU_SRC_DUMP)
            report_section_add_note(c->sec, "core counts are per package, as libcpuid decodes them from the dump");
    }
    json_object_object_add(d, "cores", cores > 0 ? json_object_new_int(cores) : NULL);
    json_object_object_add(d, "logical_cpus", logical > 0 ? json_object_new_int(logical) : NULL);
    json_object_object_add(d, "packages", packages > 0 ? json_object_new_int(packages) : NULL);

    json_object *types = NULL;
    if (c->lib && json_object_object_get_ex(c->lib, "core_types", &types) &&
        json_object_is_type(types, json_type_array)) {
        json_object *copy = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(types); i++) {
            json_object *t = json_object_array_get_idx(types, i), *x;
            if (!json_object_is_type(t, json_type_object))
                continue;
            json_object *e = json_object_new_object();
            json_object_object_add(e, "purpose",
                                   cpu_json_str(json_object_object_get_ex(t, "purpose", &x) ? json_object_get_string(x) : NULL));
            int n = json_object_object_get_ex(t, "cores", &x) ? json_object_get_int(x) : -1;
            json_object_object_add(e, "cores", n > 0 ? json_object_new_int(n) : NULL);
            n = json_object_object_get_ex(t, "logical_cpus", &x) ? json_object_get_int(x) : -1;
            json_object_object_add(e, "logical_cpus", n > 0 ? json_object_new_int(n) : NULL);
            json_object_object_add(e, "codename",
                                   cpu_json_str(json_object_object_get_ex(t, "codename", &x) ? json_object_get_string(x) : NULL));
            json_object_array_add(copy, e);
        }
        json_object_object_add(d, "core_types", copy);
    } else {
        json_object_object_add(d, "core_types", NULL);
        const char *err = cpu_lib_get_str(c, "core_types_error");
        if (err)
            report_section_add_note(c->sec, "libcpuid could not tell the core types apart: %s", err);
    }
}

/* libcpuid's decoded flags against ours: both read the same raw leaves. */
static void cpu_fill_libcpuid(struct cpu_run *c)
{
    if (c->source == CPU_SRC_CPUINFO || !c->x86) {
        json_object_object_add(c->d, "libcpuid", NULL);
        return;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "version", cpu_json_str(cpuid_lib_version()));
    const char *err = c->lib ? cpu_lib_get_str(c, "error") : "the isolated child failed";
    json_object_object_add(o, "error", cpu_json_str(err));
    json_object *dis = NULL;
    json_object *lf;
    if (c->lib && !err && json_object_object_get_ex(c->lib, "flags", &lf) && json_object_is_type(lf, json_type_object)) {
        dis = json_object_new_array();
        char misses[512] = "", extra[512] = "";
        for (size_t i = 0; i < cpu_flag_count; i++) {
            json_object *b;
            if (!json_object_object_get_ex(lf, cpu_flag_table[i].name, &b) || c->view.reported[i] == CPU_UNKNOWN)
                continue;
            bool lib = json_object_get_boolean(b), ours = c->view.reported[i] == CPU_YES;
            if (lib == ours)
                continue;
            json_object_array_add(dis, json_object_new_string(cpu_flag_table[i].name));
            char *list = ours ? misses : extra;
            snprintf(list + strlen(list), sizeof(misses) - strlen(list), " %s", cpu_flag_table[i].name);
        }
        /* Not a finding: nothing on the machine to fix. libcpuid 0.6 decodes fewer leaf 7 bits for AMD
         * (no AVX-512 on Zen 4, for one); gpucheckup's own decoding of the raw leaves is what counts. */
        if (misses[0] || extra[0])
            report_section_add_note(c->sec, "libcpuid %s decodes the same leaves differently%s%s%s%s (gpucheckup's "
                                            "own decoding is used)", cpuid_lib_version(),
                                    misses[0] ? "; it misses:" : "", misses, extra[0] ? "; it adds:" : "", extra);
    }
    json_object_object_add(o, "disagrees", dis);
    json_object_object_add(c->d, "libcpuid", o);
}

/* ---- findings ------------------------------------------------------------------------------- */

static const char *cpu_hv_name(const struct cpu_run *c)
{
    if (c->source != CPU_SRC_CPUINFO && c->view.hv_vendor)
        return c->view.hv_vendor;
    return NULL;
}

/* AVX not usable: cpu.no-avx, caused by the OS or the hypervisor when they explain it. Sets
 * c->avx_cause to a few words for the summary line. */
static void cpu_find_avx(struct cpu_run *c, const signed char *usable, const signed char *reported)
{
    int avx = cpu_flag_index("avx");
    if (usable[avx] != CPU_NO)
        return;
    struct report *r = c->ctx->report;
    const struct cpu_x86_view *v = &c->view;
    bool cpuid = c->source != CPU_SRC_CPUINFO;
    bool hv = cpuid ? v->hypervisor : cpu_cpuinfo_has(&c->ci, "hypervisor");
    const char *cause = NULL;
    struct report_finding *f = NULL;

    if (cpuid && reported[avx] == CPU_YES) {
        cause = "cpu.avx-disabled-by-os";
        if (!v->osxsave)
            f = report_add_finding(r, cause, NULL, "The CPU reports AVX, but the OS did not enable XSAVE (OSXSAVE is 0), "
                                                    "so AVX instructions fault");
        else
            f = report_add_finding(r, cause, NULL, "The CPU reports AVX, but XCR0 (0x%" PRIx64 ") does not enable the "
                                                    "AVX register state (bits 1-2), so AVX instructions fault",
                                   v->xcr0);
        report_finding_add_evidence(f, "CPUID.1:ECX[28] (AVX)", "1");
        report_finding_add_evidence(f, "CPUID.1:ECX[27] (OSXSAVE)", "%d", v->osxsave ? 1 : 0);
        if (v->osxsave)
            report_finding_add_evidence(f, c->source == CPU_SRC_DUMP ? "XCR0 (recorded in the dump)" : "XCR0 (xgetbv)",
                                        "0x%" PRIx64, v->xcr0);
        if (c->cmdline_tokens)
            report_finding_add_evidence(f, "/proc/cmdline", "%s", c->cmdline_tokens);
        c->avx_cause = str_dup("disabled by the OS");
    } else if (!cpuid && c->cmdline_tokens) {
        cause = "cpu.avx-disabled-by-os";
        f = report_add_finding(r, cause, NULL, "The kernel lists no AVX and its command line has \"%s\": the OS "
                                               "probably turned AVX off", c->cmdline_tokens);
        report_finding_add_evidence(f, "/proc/cmdline", "%s", c->cmdline_tokens);
        report_finding_add_evidence(f, "/proc/cpuinfo flags", "no avx");
        c->avx_cause = str_dup("probably disabled by the OS");
    } else if (hv) {
        cause = "cpu.avx-hidden-by-hypervisor";
        const char *name = cpu_hv_name(c);
        c->avx_cause = name ? str_printf("hidden by the %s hypervisor", name) : str_dup("hidden by the hypervisor");
        f = report_add_finding(r, cause, NULL, "This is a %s%svirtual machine and its CPU reports no AVX: the virtual "
                                               "CPU model probably hides it", name ? name : "", name ? " " : "");
        if (cpuid) {
            report_finding_add_evidence(f, "CPUID.1:ECX[31] (hypervisor)", "1");
            if (v->hv_signature[0])
                report_finding_add_evidence(f, "CPUID 0x40000000 (hypervisor vendor)", "%s", v->hv_signature);
            report_finding_add_evidence(f, "CPUID.1:ECX[28] (AVX)", "0");
        } else {
            report_finding_add_evidence(f, "/proc/cpuinfo flags", "hypervisor, no avx");
        }
        if (name && strcmp(name, "KVM") == 0)
            report_finding_set_hint(f, "Give the VM the host's CPU model: QEMU -cpu host, libvirt <cpu "
                                       "mode='host-passthrough'/> (or a named model with AVX such as x86-64-v3), "
                                       "Proxmox CPU type 'host'; then restart the VM.");
        else if (name && strcmp(name, "Hyper-V") == 0)
            report_finding_set_hint(f, "Turn off processor compatibility mode for the VM "
                                       "(Set-VMProcessor -CompatibilityForMigrationEnabled $false), then restart it.");
        else if (name && strcmp(name, "VMware") == 0)
            report_finding_set_hint(f, "Raise or disable the cluster's EVC baseline (or the VM's CPUID mask) so the "
                                       "VM sees AVX; then power-cycle the VM.");
    } else {
        c->avx_cause = str_dup("not in this CPU");
    }

    struct report_finding *n = report_add_finding(r, "cpu.no-avx", NULL,
                                                  "AVX is not usable (%s): prebuilt TensorFlow (1.6 and later) and "
                                                  "other AVX builds will die with \"Illegal instruction\"",
                                                  c->avx_cause ? c->avx_cause : "?");
    if (cpuid)
        report_finding_add_evidence(n, "CPUID.1:ECX[28] (AVX)", "%d", reported[avx] == CPU_YES ? 1 : 0);
    else
        report_finding_add_evidence(n, "/proc/cpuinfo flags", "no avx");
    if (cause)
        report_finding_set_cause(n, cause, NULL);
}

static void cpu_find_x86(struct cpu_run *c, signed char *usable_out)
{
    struct report *r = c->ctx->report;
    const struct cpu_x86_view *v = &c->view;
    bool cpuid = c->source != CPU_SRC_CPUINFO;
    signed char usable[CPU_FLAG_MAX], reported[CPU_FLAG_MAX];
    bool have_flags = cpuid || (c->have_ci && c->ci.has_flags_line);
    for (size_t i = 0; i < cpu_flag_count; i++) {
        if (cpuid) {
            usable[i] = v->usable[i];
            reported[i] = v->reported[i];
        } else {
            usable[i] = (signed char)(have_flags ? (cpu_cpuinfo_has(&c->ci, cpu_flag_table[i].kernel) ? CPU_YES : CPU_NO)
                                                 : CPU_UNKNOWN);
            reported[i] = CPU_UNKNOWN;
        }
    }
    memcpy(usable_out, usable, sizeof(usable));
    if (!have_flags)
        return;

    cpu_find_avx(c, usable, reported);

    if (cpuid) {
        int f512 = cpu_flag_index("avx512f"), tile = cpu_flag_index("amx_tile");
        if (reported[f512] == CPU_YES && !v->state_avx512 && v->state_avx) {
            struct report_finding *f = report_add_finding(
                r, "cpu.avx512-disabled-by-os", NULL,
                "The CPU reports AVX-512, but XCR0 (0x%" PRIx64 ") does not enable its state (bits 5-7)", v->xcr0);
            report_finding_add_evidence(f, "CPUID.7.0:EBX[16] (AVX512F)", "1");
            report_finding_add_evidence(f, "XCR0", "0x%" PRIx64, v->xcr0);
        }
        if (reported[tile] == CPU_YES && !v->state_amx) {
            struct report_finding *f = report_add_finding(
                r, "cpu.amx-disabled-by-os", NULL,
                "The CPU reports AMX, but XCR0 (0x%" PRIx64 ") does not enable the tile state (bits 17-18)", v->xcr0);
            report_finding_add_evidence(f, "CPUID.7.0:EDX[24] (AMX-TILE)", "1");
            report_finding_add_evidence(f, "XCR0", "0x%" PRIx64, v->xcr0);
        }
    }

    int level = cpu_x86_level(usable);
    if (level < 2) {
        const char *names[CPU_FLAG_MAX];
        size_t n = cpu_x86_level_missing(usable, 2, names, CPU_FLAG_MAX);
        char *list = NULL;
        for (size_t i = 0; i < n; i++) {
            char *x = str_printf("%s%s%s", list ? list : "", list ? " " : "", names[i]);
            free(list);
            list = x;
        }
        struct report_finding *f = report_add_finding(
            r, "cpu.below-x86-64-v2", NULL,
            "The CPU is at x86-64 level %d, below x86-64-v2 (missing: %s): NumPy 2.4 and later x86-64 wheels and "
            "other v2 builds refuse to start", level, list ? list : "?");
        report_finding_add_evidence(f, cpuid ? "CPUID" : "/proc/cpuinfo flags", "missing for x86-64-v2: %s",
                                    list ? list : "?");
        bool hv = cpuid ? v->hypervisor : cpu_cpuinfo_has(&c->ci, "hypervisor");
        if (hv)
            report_finding_set_hint(f, "This is a virtual machine: its CPU model (QEMU's default qemu64, for one) "
                                       "lacks these; give it the host CPU model (-cpu host, host-passthrough) or at "
                                       "least x86-64-v2. Otherwise pin numpy<2.4.");
        free(list);
    }

    /* CPUID (usable) against the kernel's list, when both describe the same machine. */
    if (c->cross_check && c->ci.has_flags_line) {
        for (size_t i = 0; i < cpu_flag_count; i++) {
            if (usable[i] == CPU_UNKNOWN)
                continue;
            bool kern = cpu_cpuinfo_has(&c->ci, cpu_flag_table[i].kernel);
            if (kern == (usable[i] == CPU_YES))
                continue;
            const char *what = usable[i] == CPU_YES ? "usable"
                               : reported[i] == CPU_YES ? "reported but not enabled by the OS"
                                                        : "not reported";
            struct report_finding *f = report_add_finding(
                r, "cpu.flags-disagree", cpu_flag_table[i].name,
                "%s: CPUID says %s, but /proc/cpuinfo %s \"%s\"", cpu_flag_table[i].name, what,
                kern ? "lists" : "does not list", cpu_flag_table[i].kernel);
            report_finding_add_evidence(f, c->source == CPU_SRC_DUMP ? "CPUID (dump)" : "CPUID", "%s %s",
                                        cpu_flag_table[i].name, what);
            report_finding_add_evidence(f, "/proc/cpuinfo flags", "%s %s", cpu_flag_table[i].kernel,
                                        kern ? "listed" : "not listed");
            if (c->cmdline_tokens)
                report_finding_add_evidence(f, "/proc/cmdline", "%s", c->cmdline_tokens);
        }
    }
}

/* ---- summary -------------------------------------------------------------------------------- */

static char *cpu_name(struct cpu_run *c)
{
    json_object *x;
    const char *brand = json_object_object_get_ex(c->d, "brand", &x) && x ? json_object_get_string(x) : NULL;
    const char *vendor = json_object_object_get_ex(c->d, "vendor", &x) && x ? json_object_get_string(x) : NULL;
    const char *ua = json_object_object_get_ex(c->d, "microarchitecture", &x) && x ? json_object_get_string(x) : NULL;
    if (!ua)
        ua = json_object_object_get_ex(c->d, "codename", &x) && x ? json_object_get_string(x) : NULL;
    const char *base = brand ? brand : vendor ? vendor : "unknown CPU";
    if (ua && !strstr(base, ua))
        return str_printf("%s (%s)", base, ua);
    return str_dup(base);
}

static char *cpu_counts_text(struct cpu_run *c)
{
    json_object *x;
    int cores = json_object_object_get_ex(c->d, "cores", &x) && x ? json_object_get_int(x) : 0;
    int logical = json_object_object_get_ex(c->d, "logical_cpus", &x) && x ? json_object_get_int(x) : 0;
    if (cores > 0)
        return str_printf(", %d core%s", cores, cores == 1 ? "" : "s");
    if (logical > 0)
        return str_printf(", %d CPU%s", logical, logical == 1 ? "" : "s");
    return str_dup("");
}

static void cpu_summary_x86(struct cpu_run *c, const signed char *usable)
{
    static const struct {
        const char *flag, *label;
    } shown[] = {{"sse4_2", "SSE4.2"}, {"avx", "AVX"}, {"avx2", "AVX2"}, {"fma", "FMA"},
                 {"avx512f", "AVX-512"}, {"amx_tile", "AMX"}};
    char *name = cpu_name(c), *counts = cpu_counts_text(c);
    json_object *x;
    int level = json_object_object_get_ex(c->d, "x86_64_level", &x) && x ? json_object_get_int(x) : -1;
    char list[128] = "";
    for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
        int k = cpu_flag_index(shown[i].flag);
        if (usable[k] == CPU_YES)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? " " : "", shown[i].label);
    }
    int avx = cpu_flag_index("avx");
    char avxnote[96] = "";
    if (usable[avx] == CPU_NO)
        snprintf(avxnote, sizeof(avxnote), "; no AVX (%s)", c->avx_cause ? c->avx_cause : "?");
    char lvl[32];
    if (level >= 1)
        snprintf(lvl, sizeof(lvl), ", x86-64-v%d", level);
    else if (level == 0)
        snprintf(lvl, sizeof(lvl), ", not x86-64");
    else
        snprintf(lvl, sizeof(lvl), ", flags unknown");
    bool warn = usable[avx] == CPU_NO || (level >= 0 && level < 2);
    report_section_add_line(c->sec, warn ? REPORT_MARK_WARN : REPORT_MARK_OK, "CPU", "%s%s%s%s%s%s%s", name, counts, lvl,
                            list[0] ? ": " : "", list, avxnote, c->source == CPU_SRC_DUMP ? " [from a CPUID dump]" : "");
    free(name);
    free(counts);
}

static void cpu_summary_other(struct cpu_run *c)
{
    static const char *const interesting[] = {"asimd", "asimddp", "sve", "sve2", "sme", "bf16", "i8mm",
                                              "altivec", "vsx", "vx", "vxe", "v"};
    char *name = cpu_name(c), *counts = cpu_counts_text(c);
    char list[128] = "";
    if (c->have_ci)
        for (size_t i = 0; i < sizeof(interesting) / sizeof(interesting[0]); i++)
            if (cpu_cpuinfo_has(&c->ci, interesting[i]))
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", list[0] ? " " : "", interesting[i]);
    for (char *p = list; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    json_object *x;
    const char *vendor = json_object_object_get_ex(c->d, "vendor", &x) && x ? json_object_get_string(x) : NULL;
    bool with_vendor = vendor && !strstr(name, vendor);
    report_section_add_line(c->sec, REPORT_MARK_OK, "CPU", "%s %s%s%s%s%s%s", c->arch ? c->arch : "unknown architecture",
                            with_vendor ? vendor : "", with_vendor ? " " : "", name, counts, list[0] ? ": " : "", list);
    free(name);
    free(counts);
}

/* ---- the probe ------------------------------------------------------------------------------ */

static void cpu_run_free(struct cpu_run *c)
{
    cpu_dump_free(&c->dump);
    if (c->have_ci)
        cpu_cpuinfo_free(&c->ci);
    free(c->arch);
    free(c->cmdline_tokens);
    free(c->avx_cause);
    json_object_put(c->lib);
}

static int cpu_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct cpu_run c;
    memset(&c, 0, sizeof(c));
    c.ctx = ctx;
    c.sec = sec;
    c.d = sec->data;
    const struct cli_options *o = ctx->opts;
    bool live = ctx->fs->live || o->live;
    int rc = PROBE_DONE;

    /* 1. Where the CPU view comes from. */
    if (o->cpuid_dump) {
        char *err = NULL;
        if (cpu_dump_load(o->cpuid_dump, &c.dump, &err) < 0) {
            ctx->error = str_printf("--cpuid-dump %s: %s", o->cpuid_dump, err ? err : "cannot be read");
            free(err);
            cpu_run_free(&c);
            return PROBE_INPUT_ERROR;
        }
        c.source = CPU_SRC_DUMP;
        c.raw = &c.dump.raw[0];
        cpu_leaves_from_raw(c.raw, &c.leaves);
        c.leaves.have_7_1 = c.dump.extras.have_7_1;
        memcpy(c.leaves.leaf7_1, c.dump.extras.leaf7_1, sizeof(c.leaves.leaf7_1));
        c.leaves.have_hv = c.dump.extras.have_hv;
        memcpy(c.leaves.hv, c.dump.extras.hv, sizeof(c.leaves.hv));
        c.leaves.have_hv2 = c.dump.extras.have_hv2;
        memcpy(c.leaves.hv2, c.dump.extras.hv2, sizeof(c.leaves.hv2));
        c.leaves.have_xcr0 = c.dump.extras.have_xcr0;
        c.leaves.xcr0 = c.dump.extras.xcr0;
        if (c.dump.ignored > 0)
            report_section_add_note(sec, "%zu line%s of the dump hold leaves gpucheckup does not use (a newer libcpuid?)",
                                    c.dump.ignored, c.dump.ignored == 1 ? "" : "s");
        if (c.dump.multi && c.dump.n_raw > 1)
            report_section_add_note(sec, "the dump holds %zu logical CPUs: flags are decoded from CPU #0", c.dump.n_raw);
    } else if (live && cpu_read_live(&c) == 0) {
        c.source = CPU_SRC_CPUID;
    } else {
        c.source = CPU_SRC_CPUINFO;
    }
    c.x86 = c.source != CPU_SRC_CPUINFO;

    /* 2. --save-cpuid: before the analysis, so a bad path stops the run early. */
    if (o->save_cpuid) {
        char *err = NULL;
        if (!c.raw) {
            ctx->error = str_printf("--save-cpuid %s: no CPUID data to save (%s)", o->save_cpuid,
                                    !live ? "--root reads a captured tree; add --live to dump this machine's CPU"
                                          : "this machine's CPU could not be read with CPUID");
            cpu_run_free(&c);
            return PROBE_INPUT_ERROR;
        }
        if (cpu_dump_save(o->save_cpuid, c.raw, &c.leaves, &err) < 0) {
            ctx->error = str_printf("--save-cpuid %s: %s", o->save_cpuid, err ? err : "cannot be written");
            free(err);
            cpu_run_free(&c);
            return PROBE_INPUT_ERROR;
        }
        json_object_object_add(c.d, "saved_dump", json_object_new_string(o->save_cpuid));
    }

    /* 3. The kernel's view, when it describes the machine the CPUID came from. */
    bool read_ci = c.source != CPU_SRC_DUMP || !ctx->fs->live;
    if (read_ci) {
        cpu_read_cpuinfo(&c);
        cpu_read_cmdline(&c);
    } else {
        report_section_add_note(sec, "the dump is not compared with this machine's /proc/cpuinfo (it may come from "
                                     "another machine; give the same machine's tree with --root to compare)");
    }
    c.cross_check = c.have_ci && c.source != CPU_SRC_CPUINFO;

    /* 4. Architecture. */
    struct utsname u;
    if (c.source == CPU_SRC_DUMP) {
        c.arch = str_dup(c.dump.raw[0].ext_cpuid[0][CPU_EAX] >= 0x80000001u &&
                                 (c.dump.raw[0].ext_cpuid[1][CPU_EDX] >> 29) & 1
                             ? "x86_64"
                             : "x86");
    } else if ((ctx->fs->live || c.source == CPU_SRC_CPUID) && uname(&u) == 0) {
        c.arch = str_sanitize(str_dup(u.machine));
    } else if (c.have_ci && c.ci.arch) {
        c.arch = str_dup(c.ci.arch);
    }
    if (!c.x86)
        c.x86 = cpu_is_x86_arch(c.arch);

    if (c.source == CPU_SRC_CPUINFO && !c.have_ci) {
        report_section_set_status(sec, REPORT_STATUS_SKIPPED, "no CPU information: %s",
                                  live ? "CPUID unavailable and /proc/cpuinfo unreadable"
                                       : "the tree's /proc/cpuinfo cannot be read (add --live to use this machine's CPUID)");
        cpu_run_free(&c);
        return rc;
    }

    json_object_object_add(c.d, "source", json_object_new_string(cpu_source_names[c.source]));
    json_object_object_add(c.d, "architecture", cpu_json_str(c.arch));
    if (c.source == CPU_SRC_DUMP) {
        json_object *dj = json_object_new_object();
        json_object_object_add(dj, "path", cpu_json_str(o->cpuid_dump));
        json_object_object_add(dj, "format", json_object_new_string(cpu_dump_format_name(c.dump.format)));
        json_object_object_add(dj, "libcpuid_version", cpu_json_str(c.dump.version));
        json_object_object_add(dj, "logical_cpus", json_object_new_int((int)c.dump.n_raw));
        json_object_object_add(dj, "has_xcr0", json_object_new_boolean(c.dump.extras.have_xcr0));
        json_object_object_add(c.d, "dump", dj);
    } else {
        json_object_object_add(c.d, "dump", NULL);
    }

    /* 5. Decode. */
    if (c.source != CPU_SRC_CPUINFO) {
        cpu_x86_decode(&c.leaves, &c.view);
        cpu_run_libcpuid(&c);
    }
    cpu_fill_ident(&c);

    signed char usable[CPU_FLAG_MAX];
    if (c.x86) {
        cpu_fill_x86(&c);
        json_object_object_add(c.d, "features", NULL);
        cpu_fill_libcpuid(&c);
        cpu_find_x86(&c, usable);
        cpu_summary_x86(&c, usable);
    } else {
        json_object_object_add(c.d, "flags", NULL);
        json_object_object_add(c.d, "cpuid_flags", NULL);
        json_object_object_add(c.d, "cpuinfo_flags", NULL);
        json_object_object_add(c.d, "os_enabled", NULL);
        json_object_object_add(c.d, "x86_64_level", NULL);
        json_object_object_add(c.d, "x86_64_missing", NULL);
        json_object_object_add(c.d, "hypervisor", NULL);
        json_object_object_add(c.d, "libcpuid", NULL);
        json_object *feats = NULL;
        if (c.have_ci && c.ci.has_flags_line) {
            feats = json_object_new_array();
            for (size_t i = 0; i < c.ci.n_flags; i++)
                json_object_array_add(feats, json_object_new_string(c.ci.flags[i]));
        }
        json_object_object_add(c.d, "features", feats);
        cpu_summary_other(&c);
    }
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    cpu_run_free(&c);
    return rc;
}

/* ---- text ----------------------------------------------------------------------------------- */

/* "key  a b c ..." wrapped under the value column. */
static void cpu_text_list(struct text_out *t, const char *key, const char *const *names, size_t n)
{
    if (n == 0) {
        text_kv(t, key, "(none)");
        return;
    }
    char line[96] = "";
    bool first = true;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || strlen(line) + strlen(names[i]) + 1 > 70) {
            if (first)
                text_kv(t, key, "%s", line);
            else
                fprintf(t->f, "  %-22s %s\n", "", line);
            first = false;
            line[0] = '\0';
            if (i == n)
                break;
        }
        snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s", line[0] ? " " : "", names[i]);
    }
}

/* "key  text", word-wrapped under the value column. */
static void cpu_text_wrap(struct text_out *t, const char *key, const char *text)
{
    const size_t width = 72;
    bool first = true;
    const char *p = text;
    while (*p) {
        size_t len = strlen(p);
        if (len > width) {
            len = width;
            while (len > 0 && p[len] != ' ')
                len--;
            if (len == 0)
                len = width;
        }
        fprintf(t->f, "  %-22s %.*s\n", first ? key : "", (int)len, p);
        first = false;
        p += len;
        while (*p == ' ')
            p++;
    }
}

static const char *cpu_get_str(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static int cpu_get_int(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    return json_object_get_int(v);
}

static void cpu_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *d = sec->data, *x;
    text_heading(t, "CPU");
    const char *src = cpu_get_str(d, "source");
    json_object *os = NULL;
    json_object_object_get_ex(d, "os_enabled", &os);
    if (src && strcmp(src, "cpuid") == 0)
        text_kv(t, "source", "CPUID of this machine");
    else if (src && strcmp(src, "dump") == 0) {
        json_object *dj = NULL;
        json_object_object_get_ex(d, "dump", &dj);
        const char *ver = cpu_get_str(dj, "libcpuid_version");
        const char *fmt = cpu_get_str(dj, "format");
        text_kv(t, "source", "CPUID dump %s (%s%s%s)", cpu_get_str(dj, "path") ? cpu_get_str(dj, "path") : "",
                !fmt || strcmp(fmt, "libcpuid") == 0 ? "libcpuid" : strcmp(fmt, "aida64") == 0 ? "AIDA64/InstLatx64"
                : strcmp(fmt, "cpuid-r") == 0                     ? "cpuid -r"
                                                                  : "/dev/cpu/N/cpuid",
                ver ? " " : "", ver ? ver : "");
    } else
        text_kv(t, "source", "/proc/cpuinfo (the kernel's flags; no CPUID)");
    const char *s;
    if ((s = cpu_get_str(d, "architecture")))
        text_kv(t, "architecture", "%s", s);
    if ((s = cpu_get_str(d, "vendor")))
        text_kv(t, "vendor", "%s", s);
    if ((s = cpu_get_str(d, "brand")))
        text_kv(t, "brand", "%s", s);
    int fam = cpu_get_int(d, "family"), mod = cpu_get_int(d, "model"), step = cpu_get_int(d, "stepping");
    if (fam >= 0)
        text_kv(t, "family/model/stepping", "%d/%d/%d (0x%x/0x%x/0x%x)", fam, mod, step, (unsigned)fam,
                (unsigned)(mod < 0 ? 0 : mod), (unsigned)(step < 0 ? 0 : step));
    const char *ua = cpu_get_str(d, "microarchitecture"), *cn = cpu_get_str(d, "codename");
    const char *vend = cpu_get_str(d, "vendor");
    /* For Intel our model table is newer than libcpuid 0.6's, whose guess for a model it does not know
     * is another CPU's name: once ours is known, libcpuid's stays in the JSON only. */
    if (ua && vend && strcmp(vend, "GenuineIntel") == 0)
        cn = NULL;
    if (ua || cn)
        text_kv(t, "microarchitecture", "%s%s%s%s", ua ? ua : "", ua && cn ? " (libcpuid: " : cn ? "libcpuid: " : "",
                cn ? cn : "", ua && cn ? ")" : "");
    int cores = cpu_get_int(d, "cores"), logical = cpu_get_int(d, "logical_cpus"), pk = cpu_get_int(d, "packages");
    if (cores > 0 || logical > 0) {
        char buf[96] = "";
        if (cores > 0)
            snprintf(buf, sizeof(buf), "%d core%s", cores, cores == 1 ? "" : "s");
        if (logical > 0)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%d logical CPU%s", buf[0] ? ", " : "", logical,
                     logical == 1 ? "" : "s");
        if (pk > 0)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ", %d package%s", pk, pk == 1 ? "" : "s");
        text_kv(t, "cores", "%s", buf);
    }
    json_object *types = NULL;
    if (json_object_object_get_ex(d, "core_types", &types) && json_object_is_type(types, json_type_array) &&
        json_object_array_length(types) > 1) {
        for (size_t i = 0; i < json_object_array_length(types); i++) {
            json_object *e = json_object_array_get_idx(types, i);
            text_kv(t, i == 0 ? "core types" : "", "%s: %d cores, %d logical CPUs%s%s",
                    cpu_get_str(e, "purpose") ? cpu_get_str(e, "purpose") : "?", cpu_get_int(e, "cores"),
                    cpu_get_int(e, "logical_cpus"), cpu_get_str(e, "codename") ? ", " : "",
                    cpu_get_str(e, "codename") ? cpu_get_str(e, "codename") : "");
        }
    }
    json_object *hv = NULL;
    json_object_object_get_ex(d, "hypervisor", &hv);
    if (hv) {
        const char *hvn = cpu_get_str(hv, "vendor"), *sig = cpu_get_str(hv, "signature");
        text_kv(t, "hypervisor", "%s%s%s%s", hvn ? hvn : "present (vendor not known)", sig ? " (\"" : "", sig ? sig : "",
                sig ? "\")" : "");
    } else if (src && strcmp(src, "cpuinfo") != 0) {
        text_kv(t, "hypervisor", "none (bare metal)");
    }
    if (os) {
        char xcr0[48] = "XCR0 unknown";
        json_object *xv;
        if (json_object_object_get_ex(os, "xcr0", &xv) && xv)
            snprintf(xcr0, sizeof(xcr0), "XCR0=0x%" PRIx64, (uint64_t)json_object_get_int64(xv));
        const char *osrc = cpu_get_str(os, "source");
        json_object *a, *b, *m;
        json_object_object_get_ex(os, "avx", &a);
        json_object_object_get_ex(os, "avx512", &b);
        json_object_object_get_ex(os, "amx", &m);
        text_kv(t, "OS-enabled state", "AVX %s, AVX-512 %s, AMX %s (%s%s)", json_object_get_boolean(a) ? "yes" : "no",
                json_object_get_boolean(b) ? "yes" : "no", json_object_get_boolean(m) ? "yes" : "no",
                osrc && strcmp(osrc, "osxsave") == 0 ? "OSXSAVE is 0" : xcr0,
                osrc && strcmp(osrc, "assumed") == 0 ? ": the dump has none, assumed as Linux sets it" : "");
    }
    json_object *lvl = NULL, *missing = NULL;
    json_object_object_get_ex(d, "x86_64_level", &lvl);
    json_object_object_get_ex(d, "x86_64_missing", &missing);
    if (lvl) {
        int level = json_object_get_int(lvl);
        char next[16];
        snprintf(next, sizeof(next), "v%d", level + 1);
        json_object *nm = NULL;
        char buf[160] = "";
        if (missing && json_object_object_get_ex(missing, next, &nm))
            for (size_t i = 0; i < json_object_array_length(nm) && strlen(buf) < 120; i++)
                snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " %s",
                         json_object_get_string(json_object_array_get_idx(nm, i)));
        if (level >= 1)
            text_kv(t, "x86-64 level", "v%d%s%s%s%s%s", level, buf[0] ? " (" : "", buf[0] ? next : "",
                    buf[0] ? " lacks:" : "", buf[0] ? buf : "", buf[0] ? ")" : "");
        else
            text_kv(t, "x86-64 level", "none: not an x86-64 CPU (lacks:%s)", buf);
    }
    json_object *flags = NULL, *cflags = NULL;
    json_object_object_get_ex(d, "flags", &flags);
    json_object_object_get_ex(d, "cpuid_flags", &cflags);
    if (flags) {
        const char *use[CPU_FLAG_MAX], *nrep[CPU_FLAG_MAX], *dis[CPU_FLAG_MAX], *unk[CPU_FLAG_MAX];
        size_t nu = 0, nn = 0, nd = 0, nk = 0;
        for (size_t i = 0; i < cpu_flag_count; i++) {
            const char *name = cpu_flag_table[i].name;
            json_object *u = NULL, *cr = NULL;
            json_object_object_get_ex(flags, name, &u);
            if (cflags)
                json_object_object_get_ex(cflags, name, &cr);
            if (!u)
                unk[nk++] = name;
            else if (json_object_get_boolean(u))
                use[nu++] = name;
            else if (cr && json_object_get_boolean(cr))
                dis[nd++] = name;
            else
                nrep[nn++] = name;
        }
        cpu_text_list(t, "usable", use, nu);
        cpu_text_list(t, cflags ? "not reported" : "not listed by kernel", nrep, nn);
        if (cflags)
            cpu_text_list(t, "disabled by OS", dis, nd);
        if (nk)
            cpu_text_list(t, "unknown", unk, nk);
    }
    json_object *feats = NULL;
    if (json_object_object_get_ex(d, "features", &feats) && json_object_is_type(feats, json_type_array)) {
        size_t n = json_object_array_length(feats);
        const char **names = calloc(n ? n : 1, sizeof(char *));
        if (names) {
            for (size_t i = 0; i < n; i++)
                names[i] = json_object_get_string(json_object_array_get_idx(feats, i));
            cpu_text_list(t, "kernel features", names, n);
            free(names);
        }
    }
    json_object *notes = NULL;
    if (json_object_object_get_ex(d, "notes", &notes) && json_object_is_type(notes, json_type_array))
        for (size_t i = 0; i < json_object_array_length(notes); i++)
            cpu_text_wrap(t, i == 0 ? "notes" : "", json_object_get_string(json_object_array_get_idx(notes, i)));
    if (json_object_object_get_ex(d, "saved_dump", &x) && x)
        text_kv(t, "saved dump", "%s", json_object_get_string(x));
}

const struct probe probe_cpu = {
    .name = "cpu",
    .title = "CPU identification, usable SIMD flags, x86-64 level",
    .needs_live = false,
    .checks = cpu_checks,
    .n_checks = sizeof(cpu_checks) / sizeof(cpu_checks[0]),
    .run = cpu_run,
    .print_text = cpu_print_text,
};
