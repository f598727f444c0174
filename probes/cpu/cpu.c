/* cpu.c: the cpu probe: CPU identification, usable SIMD flags (CPUID + XCR0 + /proc/cpuinfo), x86-64 level. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <libcpuid/libcpuid.h>

#include "cpu_internal.h"
#include "jsonstr.h"
#include "results/result_cpu.h"
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
     "(e.g. build TensorFlow from source).", CHECK_LAYER_NONE},
    {"cpu.avx-hidden-by-hypervisor", REPORT_SEV_WARNING,
     "The CPU inside this virtual machine reports no AVX: the virtual CPU model probably hides it",
     "Give the VM the host's CPU model: QEMU/libvirt -cpu host or <cpu mode='host-passthrough'/>, "
     "Proxmox CPU type 'host' (or x86-64-v3), VirtualBox/VMware: no restrictive CPUID mask or EVC baseline.", CHECK_LAYER_NONE},
    {"cpu.avx-disabled-by-os", REPORT_SEV_WARNING,
     "The CPU reports AVX but the OS has not enabled its register state (OSXSAVE/XCR0), so AVX code faults",
     "Look for noxsave or clearcpuid= on the kernel command line (cat /proc/cmdline), remove it and reboot.", CHECK_LAYER_NONE},
    {"cpu.avx512-disabled-by-os", REPORT_SEV_INFO,
     "The CPU reports AVX-512 but the OS has not enabled its register state (XCR0 bits 5-7)",
     "Look for noxsave or clearcpuid= on the kernel command line (cat /proc/cmdline); libraries fall back to AVX2.", CHECK_LAYER_NONE},
    {"cpu.amx-disabled-by-os", REPORT_SEV_INFO,
     "The CPU reports AMX but the OS has not enabled its tile state (XCR0 bits 17-18)",
     "AMX needs Linux 5.16 or later; upgrade the kernel to use AMX (PyTorch/oneDNN bf16 and int8 paths).", CHECK_LAYER_NONE},
    {"cpu.below-x86-64-v2", REPORT_SEV_WARNING,
     "The CPU is below x86-64-v2: NumPy 2.4+ wheels (built for x86-64-v2) and other v2 builds refuse to run",
     "Use a CPU (or virtual CPU model) with SSE4.2, POPCNT, CMPXCHG16B and LAHF/SAHF, or pin numpy<2.4.", CHECK_LAYER_NONE},
    {"cpu.flags-disagree", REPORT_SEV_WARNING,
     "CPUID and the kernel's /proc/cpuinfo disagree about a CPU feature",
     "Check the kernel command line (clearcpuid=, noxsave) and the kernel version: programs that read "
     "/proc/cpuinfo and programs that run CPUID will decide differently.", CHECK_LAYER_NONE},
};


static const char *const cpu_source_names[] = {"cpuid", "dump", "cpuinfo"};

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
    /* AVX10's leaf, only when CPUID.(7,1):EDX[19] says it is there (cpu_x86_avx10). */
    if (l->basic[0][CPU_EAX] >= 0x24 && l->basic[7][CPU_EAX] >= 1 && ((l->leaf7_1[CPU_EDX] >> 19) & 1)) {
        __cpuid_count(0x24, 0, l->leaf24[0], l->leaf24[1], l->leaf24[2], l->leaf24[3]);
        l->have_24 = true;
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

/* ---- helpers -------------------------------------------------------------------------------- */

static json_object *cpu_json_str(const char *s)
{
    return s && *s ? jsonstr_sanitized(s) : NULL;
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
    for (size_t i = 0; i < cpu_flag_count; i++) {
        int k = cpu_kernel_flag(c, i);
        json_object_object_add(o, cpu_flag_table[i].name, k == CPU_UNKNOWN ? NULL : json_object_new_boolean(k == CPU_YES));
    }
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

/* {"version": N or null, "vector_bits": [128, 256, 512]} when CPUID reports AVX10, else NULL. */
static json_object *cpu_avx10_json(const struct cpu_x86_view *v)
{
    if (v->avx10_version == 0)
        return NULL;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "version", v->avx10_version > 0 ? json_object_new_int(v->avx10_version) : NULL);
    json_object *bits = NULL;
    if (v->avx10_version > 0) {
        bits = json_object_new_array();
        for (int i = 0; i < 3; i++)
            if ((v->avx10_vector_bits >> i) & 1)
                json_object_array_add(bits, json_object_new_int(128 << i));
    }
    json_object_object_add(o, "vector_bits", bits);
    return o;
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
            usable[i] = (signed char)cpu_kernel_flag(c, i);
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
    json_object_object_add(d, "avx10", cpuid ? cpu_avx10_json(v) : NULL);

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

/* --cpuid-dump: load it and take the leaves from its CPU #0. Returns 0, or -1 with ctx->error set. */
static int cpu_use_dump(struct cpu_run *c)
{
    const char *path = probe_cpuid_dump(c->ctx);
    char *err = NULL;
    if (cpu_dump_load(path, &c->dump, &err) < 0) {
        c->ctx->error = str_printf("--cpuid-dump %s: %s", path, err ? err : "cannot be read");
        free(err);
        return -1;
    }
    c->source = CPU_SRC_DUMP;
    c->raw = &c->dump.raw[0];
    cpu_leaves_from_raw(c->raw, &c->leaves);
    c->leaves.have_7_1 = c->dump.extras.have_7_1;
    memcpy(c->leaves.leaf7_1, c->dump.extras.leaf7_1, sizeof(c->leaves.leaf7_1));
    c->leaves.have_24 = c->dump.extras.have_24;
    memcpy(c->leaves.leaf24, c->dump.extras.leaf24, sizeof(c->leaves.leaf24));
    c->leaves.have_hv = c->dump.extras.have_hv;
    memcpy(c->leaves.hv, c->dump.extras.hv, sizeof(c->leaves.hv));
    c->leaves.have_hv2 = c->dump.extras.have_hv2;
    memcpy(c->leaves.hv2, c->dump.extras.hv2, sizeof(c->leaves.hv2));
    c->leaves.have_xcr0 = c->dump.extras.have_xcr0;
    c->leaves.xcr0 = c->dump.extras.xcr0;
    if (c->dump.ignored > 0)
        report_section_add_note(c->sec, "%zu line%s of the dump hold leaves gpucheckup does not use (a newer libcpuid?)",
                                c->dump.ignored, c->dump.ignored == 1 ? "" : "s");
    if (c->dump.multi && c->dump.n_raw > 1)
        report_section_add_note(c->sec, "the dump holds %zu logical CPUs: flags are decoded from CPU #0", c->dump.n_raw);
    return 0;
}

/* --save-cpuid: write the leaves read to the dump file. Returns 0, or -1 with ctx->error set. */
static int cpu_save(struct cpu_run *c, bool live)
{
    const char *path = c->ctx->opts->save_cpuid;
    char *err = NULL;
    if (!c->raw) {
        c->ctx->error = str_printf("--save-cpuid %s: no CPUID data to save (%s)", path,
                                   !live ? "--root reads a captured tree; add --live to dump this machine's CPU"
                                         : "this machine's CPU could not be read with CPUID");
        return -1;
    }
    if (cpu_dump_save(path, c->raw, &c->leaves, &err) < 0) {
        c->ctx->error = str_printf("--save-cpuid %s: %s", path, err ? err : "cannot be written");
        free(err);
        return -1;
    }
    json_object_object_add(c->d, "saved_dump", json_object_new_string(path));
    return 0;
}

/* The architecture: from the dump (long mode), uname, or /proc/cpuinfo. */
static void cpu_fill_arch(struct cpu_run *c)
{
    struct utsname u;
    if (c->source == CPU_SRC_DUMP) {
        c->arch = str_dup(c->dump.raw[0].ext_cpuid[0][CPU_EAX] >= 0x80000001u &&
                                  (c->dump.raw[0].ext_cpuid[1][CPU_EDX] >> 29) & 1
                              ? "x86_64"
                              : "x86");
    } else if ((probe_host_files(c->ctx) || c->source == CPU_SRC_CPUID) && uname(&u) == 0) {
        c->arch = str_sanitize(str_dup(u.machine));
    } else if (c->have_ci && c->ci.arch) {
        c->arch = str_dup(c->ci.arch);
    }
    if (!c->x86)
        c->x86 = cpu_is_x86_arch(c->arch);
}

/* "source", "architecture" and "dump" (the dump's path, format, size). */
static void cpu_fill_source(struct cpu_run *c)
{
    json_object_object_add(c->d, "source", json_object_new_string(cpu_source_names[c->source]));
    json_object_object_add(c->d, "architecture", cpu_json_str(c->arch));
    if (c->source == CPU_SRC_DUMP) {
        json_object *dj = json_object_new_object();
        json_object_object_add(dj, "path", cpu_json_str(probe_cpuid_dump(c->ctx)));
        json_object_object_add(dj, "format", json_object_new_string(cpu_dump_format_name(c->dump.format)));
        json_object_object_add(dj, "libcpuid_version", cpu_json_str(c->dump.version));
        json_object_object_add(dj, "logical_cpus", json_object_new_int((int)c->dump.n_raw));
        json_object_object_add(dj, "has_xcr0", json_object_new_boolean(c->dump.extras.have_xcr0));
        json_object_object_add(c->d, "dump", dj);
    } else {
        json_object_object_add(c->d, "dump", NULL);
    }
}

/* A CPU that is not x86: no CPUID facts, the kernel's feature list. */
static void cpu_fill_other(struct cpu_run *c)
{
    json_object_object_add(c->d, "flags", NULL);
    json_object_object_add(c->d, "cpuid_flags", NULL);
    json_object_object_add(c->d, "cpuinfo_flags", NULL);
    json_object_object_add(c->d, "os_enabled", NULL);
    json_object_object_add(c->d, "x86_64_level", NULL);
    json_object_object_add(c->d, "x86_64_missing", NULL);
    json_object_object_add(c->d, "avx10", NULL);
    json_object_object_add(c->d, "hypervisor", NULL);
    json_object_object_add(c->d, "libcpuid", NULL);
    json_object *feats = NULL;
    if (c->have_ci && c->ci.has_flags_line) {
        feats = json_object_new_array();
        for (size_t i = 0; i < c->ci.n_flags; i++)
            json_object_array_add(feats, json_object_new_string(c->ci.flags[i]));
    }
    json_object_object_add(c->d, "features", feats);
}

static int cpu_run(struct probe_ctx *ctx, struct report_section *sec)
{
    struct cpu_run c;
    memset(&c, 0, sizeof(c));
    c.ctx = ctx;
    c.sec = sec;
    c.d = sec->data;
    const struct cli_options *o = ctx->opts;
    bool live = probe_live(ctx);
    int rc = PROBE_DONE;

    /* 1. Where the CPU view comes from. */
    if (probe_cpuid_dump(ctx)) {
        if (cpu_use_dump(&c) < 0) {
            cpu_run_free(&c);
            return PROBE_INPUT_ERROR;
        }
    } else if (live && cpu_read_live(&c) == 0) {
        c.source = CPU_SRC_CPUID;
    } else {
        c.source = CPU_SRC_CPUINFO;
    }
    c.x86 = c.source != CPU_SRC_CPUINFO;

    /* 2. --save-cpuid: before the analysis, so a bad path stops the run early. */
    if (o->save_cpuid && cpu_save(&c, live) < 0) {
        cpu_run_free(&c);
        return PROBE_INPUT_ERROR;
    }

    /* 3. The kernel's view, when it describes the machine the CPUID came from. */
    bool read_ci = c.source != CPU_SRC_DUMP || !probe_host_files(ctx);
    if (read_ci) {
        cpu_read_cpuinfo(&c);
        cpu_read_cmdline(&c);
    } else {
        report_section_add_note(sec, "the dump is not compared with this machine's /proc/cpuinfo (it may come from "
                                     "another machine; give the same machine's tree with --root to compare)");
    }
    c.cross_check = c.have_ci && c.source != CPU_SRC_CPUINFO;

    /* 4. Architecture. */
    cpu_fill_arch(&c);

    if (c.source == CPU_SRC_CPUINFO && !c.have_ci) {
        report_section_set_status(sec, REPORT_STATUS_SKIPPED, "no CPU information: %s",
                                  live ? "CPUID unavailable and /proc/cpuinfo unreadable"
                                       : "the tree's /proc/cpuinfo cannot be read (add --live to use this machine's CPUID)");
        cpu_run_free(&c);
        return rc;
    }

    cpu_fill_source(&c);

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
        cpu_fill_other(&c);
        cpu_summary_other(&c);
    }
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    /* the typed members leave the data for the result, which prints them in their places */
    struct result_cpu *res = result_cpu_ops.from_json(sec->data);
    if (res)
        report_section_set_result(sec, &result_cpu_ops, res);
    cpu_run_free(&c);
    return rc;
}


const struct probe probe_cpu = {
    .name = "cpu",
    .stack = PROBE_STACK_CPU,
    .title = "CPU identification, usable SIMD flags, x86-64 level",
    .needs_live = false,
    .checks = cpu_checks,
    .n_checks = sizeof(cpu_checks) / sizeof(cpu_checks[0]),
    .requires = cpu_requires,
    .run = cpu_run,
    .result = &result_cpu_ops,
    .verdict = cpu_verdict,
    .print_text = cpu_print_text,
    .node_labels = cpu_node_labels,
};
