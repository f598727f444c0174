/* icd.c: the icd probe: which OpenCL ICD loader, which vendor drivers, and what is wrong with each. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "icd_impl.h"
#include "isolate.h"
#include "jsonget.h"
#include "probe.h"
#include "results/result_icd.h"
#include "strutil.h"
#include "vendor.h"

static const struct check icd_checks[] = {
    {"icd.no-loader", REPORT_SEV_ERROR, "No OpenCL ICD loader (libOpenCL.so.1) can be loaded",
     "Install an ICD loader: sudo apt-get install ocl-icd-libopencl1",
     CHECK_LAYER_LOADER | CHECK_F_CAUSES_ALL | CHECK_F_PATH_RELIEF | CHECK_F_RELIEF_INFO},
    /* Why icd.no-loader, where the only libOpenCL.so.1 is another machine's (icd_arch.c). */
    {"icd.loader-wrong-arch", REPORT_SEV_ERROR,
     "The OpenCL ICD loader (libOpenCL.so.1) on the library path is built for another machine or ELF class",
     "Install the ICD loader built for this machine: sudo apt-get install "
     "ocl-icd-libopencl1:$(dpkg --print-architecture)",
     CHECK_LAYER_LOADER | CHECK_F_CAUSES_ALL | CHECK_F_PATH_RELIEF},
    /* Information only: the CUDA toolkit puts its own (Khronos-based) libOpenCL.so.1 on the path beside
     * the distribution's ocl-icd on most NVIDIA machines, and programs then all get the first one. The
     * harm is a loader that ignores the environment the machine was set up with:
     * icd.loader-ignores-env. */
    {"icd.multiple-loaders", REPORT_SEV_INFO,
     "Different OpenCL loaders (libOpenCL.so*) can shadow each other on the library path",
     "Nothing to fix while every program gets the same loader; to keep one, remove the others from "
     "LD_LIBRARY_PATH or /etc/ld.so.conf.d (then run ldconfig).",
     CHECK_LAYER_DRIVER | CHECK_F_NEVER_CAUSE | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.loader-ignores-env", REPORT_SEV_WARNING,
     "A variable that registers OpenCL drivers is set, but the loader programs get ignores it: the drivers "
     "it names are invisible",
     "OCL_ICD_FILENAMES is read only by the Khronos loader and OPENCL_VENDOR_PATH only by ocl-icd: put the "
     "drivers in .icd files in the vendors directory (/etc/OpenCL/vendors or OCL_ICD_VENDORS), which both "
     "loaders read, or make the matching loader the first libOpenCL.so.1 on the library path.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.no-icds", REPORT_SEV_ERROR, "No OpenCL vendor driver is registered: OpenCL has no platform",
     "Install the ICD package of your GPU's driver (nvidia-opencl-icd, mesa-opencl-icd, intel-opencl-icd, "
     "rocm-opencl-runtime) or pocl-opencl-icd for the CPU.", CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR | CHECK_F_RELIEF_INFO},
    {"icd.unreadable", REPORT_SEV_ERROR, "An .icd file cannot be read, so the loader skips it",
     "Make the file readable by everyone (chmod 644) or remove it.", CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.malformed", REPORT_SEV_ERROR,
     "An .icd file the loader cannot use (CRLF, blanks, extra lines, empty, binary, overlong)",
     "Rewrite the file as one line: the library name and a newline.", CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.missing-library", REPORT_SEV_ERROR, "The library an .icd file names cannot be found",
     "Reinstall the driver, or write the library's absolute path into the .icd file.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    /* As icd.missing-library: both loaders drop such a driver without a word (icd_arch.c). */
    {"icd.wrong-arch", REPORT_SEV_ERROR,
     "The library an .icd file names is built for another machine or ELF class, so the loader drops the driver",
     "Install the driver's build for this machine's architecture (Debian: the package with the host's "
     "architecture, `dpkg --print-architecture`), or remove the .icd file.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.load-failed", REPORT_SEV_ERROR,
     "The library an .icd file names exists but cannot be loaded (missing dependency, wrong architecture)",
     "Run ldd on the library to see what is missing.", CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.self-reference", REPORT_SEV_ERROR,
     "An .icd file names an OpenCL loader instead of a vendor driver (the Khronos loader hangs on it)",
     "Remove the .icd file.", CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.duplicate", REPORT_SEV_WARNING, "Two .icd files reach the same library",
     "Remove one of the two .icd files.", CHECK_LAYER_DRIVER | CHECK_F_NEVER_CAUSE | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.insecure", REPORT_SEV_WARNING,
     "Running as root, an .icd file, its directory or its library is writable by other users",
     "Make them owned by root and writable only by root (chown root:root, chmod go-w).",
     CHECK_LAYER_DRIVER | CHECK_F_NEVER_CAUSE | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.no-entry-point", REPORT_SEV_ERROR,
     "A vendor library lacks clIcdGetPlatformIDsKHR (through clGetExtensionFunctionAddress): not an ICD",
     "Point the .icd file at the vendor's ICD library, not at another OpenCL library.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.no-platforms", REPORT_SEV_WARNING,
     "A vendor driver loads but reports no platform (-1001 or zero): it found no device it drives",
     "Check that the driver's kernel module is loaded and its GPU visible (gpucheckup pci).",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.rejected", REPORT_SEV_ERROR,
     "The loader skips a vendor's platform (no cl_khr_icd, no ICD suffix, no clGetPlatformInfo)",
     "Update the vendor driver; the platform does not follow the ICD rules this loader checks.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.error", REPORT_SEV_ERROR, "A vendor driver's clIcdGetPlatformIDsKHR fails with an error code",
     "Update or reinstall the vendor driver; the error name says what it ran out of.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.crash", REPORT_SEV_ERROR,
     "A vendor driver crashes when asked for its platforms: every OpenCL program crashes the same way",
     "Update or reinstall the driver; until then move its .icd file out of the vendors directory.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.hang", REPORT_SEV_ERROR,
     "A vendor driver does not answer within the timeout: every OpenCL program hangs the same way",
     "Update or reinstall the driver; until then move its .icd file out of the vendors directory.",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.loader-hang", REPORT_SEV_ERROR,
     "An OpenCL loader itself, with no driver loaded yet, does not answer within the timeout: every OpenCL "
     "program that loads it hangs the same way",
     "See which libOpenCL.so.1 programs load (`ldconfig -p | grep libOpenCL`, LD_LIBRARY_PATH); reinstall the "
     "loader package (Debian: ocl-icd-libopencl1) or remove the stray copy.",
     CHECK_LAYER_LOADER | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.absent-hardware", REPORT_SEV_INFO,
     "A GPU driver is installed but this machine has none of the hardware it drives: its error or empty "
     "platform is expected, not a fault",
     "Nothing to fix on a machine without that GPU. If it should have one, `gpucheckup pci` shows what the bus "
     "lists; if the driver is not wanted, remove its package.",
     CHECK_LAYER_DRIVER | CHECK_F_NEVER_ROOT | CHECK_F_PATH_RELIEF_VENDOR},
    {"icd.conflict", REPORT_SEV_ERROR,
     "Each vendor driver works alone, but loaded together (as every application does) they crash or hang",
     "Keep only one of the drivers named in the message (move the other .icd file away).",
     CHECK_LAYER_DRIVER | CHECK_F_PATH_RELIEF_VENDOR},
    /* ocl-icd's ETC_OPENCL_VENDORS (configure's --enable-custom-vendordir) and the Khronos loader's
     * OCL_ICD_VENDORDIR are compiled in; a loader built in another prefix reads PREFIX/etc/OpenCL/vendors. */
    {"icd.loader-vendors-dir", REPORT_SEV_WARNING,
     "The OpenCL loader programs get reads another vendors directory (compiled into it) than /etc/OpenCL/vendors, "
     "where drivers are registered",
     "Link the .icd files into the directory the loader reads (conda: `conda install ocl-icd-system`), or set "
     "OCL_ICD_VENDORS=/etc/OpenCL/vendors, or use the system's loader.", CHECK_LAYER_LOADER},
};

/* ---- the probe ---- */

static void icd_state_free(struct icd_state *st)
{
    for (size_t i = 0; i < st->n; i++)
        icd_entry_clear(&st->e[i]);
    free(st->e);
    for (size_t i = 0; st->loader_info && i < st->n_loaders; i++)
        json_object_put(st->loader_info[i]);
    free(st->loader_info);
    icd_loaders_free(st->loaders, st->n_loaders);
    icd_search_free(&st->search);
    json_object_put(st->loader);
    json_object_put(st->combined);
    free(st->loader_error);
    free(st->vendors_dir);
    for (size_t i = 0; i < st->n_ignored; i++)
        free(st->ignored[i]);
    free(st->ignored);
    if (st->have_own_libfs)
        hostfs_close(&st->own_libfs);
}

/* A variable set for the other kind of loader than the one programs get: its drivers are invisible.
 * ocl-icd 2.3 reads OCL_ICD_VENDORS and OPENCL_VENDOR_PATH, never OCL_ICD_FILENAMES (ocl_icd_loader.c);
 * the Khronos loader reads OCL_ICD_FILENAMES and OCL_ICD_VENDORS, never OPENCL_VENDOR_PATH
 * (loader/linux/icd_linux.c). Seen on a real NVIDIA container image: OCL_ICD_FILENAMES named
 * libnvidia-opencl.so.1 (no nvidia.icd in the vendors dir), so under ocl-icd the GPU had no OpenCL. */
static void icd_check_ignored_env(struct icd_state *st)
{
    if (st->kind == ICD_KIND_NONE || !st->loader)
        return;
    const char *loaded = icd_jstr(st->loader, "path");
    if (icd_is_ocl_semantics(st->kind)) {
        const char *fn = icd_env("OCL_ICD_FILENAMES");
        if (!fn || !*fn)
            return;
        /* Only libraries no .icd file reaches are lost. */
        char *copy = strdup(fn), *lost = NULL, *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save)) {
            const char *via = NULL;
            char *found = icd_search_find(&st->search, tok, &via);
            char *res = found ? icd_fs_realpath(st->libfs, found) : NULL;
            bool covered = false;
            for (size_t i = 0; i < st->n && !covered; i++)
                covered = (res && st->e[i].resolved && strcmp(st->e[i].resolved, res) == 0) ||
                          (st->e[i].library && strcmp(st->e[i].library, tok) == 0);
            free(found);
            free(res);
            if (covered)
                continue;
            char *clean = icd_sanitized(tok);
            char *more = str_printf("%s%s%s", lost ? lost : "", lost ? ", " : "", clean ? clean : "?");
            free(clean);
            free(lost);
            lost = more;
        }
        free(copy);
        if (lost) {
            struct report_finding *f = report_add_finding(
                st->ctx->report, "icd.loader-ignores-env", "OCL_ICD_FILENAMES",
                "OCL_ICD_FILENAMES names %s, but programs load %s (ocl-icd), which ignores that variable: "
                "no .icd file registers %s, so OpenCL programs do not see %s",
                lost, loaded ? loaded : "libOpenCL.so.1", strchr(lost, ',') ? "them" : "it",
                strchr(lost, ',') ? "those drivers" : "that driver");
            if (f)
                report_finding_add_evidence(f, "OCL_ICD_FILENAMES", "%s", lost);
            free(lost);
        }
        return;
    }
    const char *vp = icd_env("OPENCL_VENDOR_PATH");
    const char *ov = icd_env("OCL_ICD_VENDORS");
    if (vp && *vp && !(ov && *ov) && strcmp(vp, ICD_VENDORS_DIR) != 0) {
        char *clean = icd_sanitized(vp);
        report_add_finding(st->ctx->report, "icd.loader-ignores-env", "OPENCL_VENDOR_PATH",
                           "OPENCL_VENDOR_PATH is %s, but programs load %s (%s), which ignores that variable and "
                           "reads %s instead",
                           clean ? clean : "?", loaded ? loaded : "libOpenCL.so.1", icd_kind_name(st->kind),
                           ICD_VENDORS_DIR);
        free(clean);
    }
}

static int icd_run(struct probe_ctx *ctx, struct report_section *sec)
{
    json_object *own_env = NULL;
    struct icd_state st;
    memset(&st, 0, sizeof(st));
    st.ctx = ctx;
    st.sec = sec;
    st.root = geteuid() == 0;
    st.pci = result_pci_get(ctx->report);
    /* Libraries are loaded on this machine, so they are looked up on this machine's files, even
     * when --root --live reads the .icd files from a captured tree. */
    st.libfs = ctx->fs;
    if (probe_snapshot(ctx)) {
        json_object *env = json_object_object_get(probe_captured(ctx, "icd"), "env");
        if (!json_object_is_type(env, json_type_object)) /* none captured: nothing was set */
            env = own_env = json_object_new_object();
        icd_env_replay(env);
    }
    /* --root DIR --live: this machine's libraries (a snapshot's tree holds the libraries' names) */
    if (ctx->mode == PROBE_MODE_TREE || ctx->mode == PROBE_MODE_TREE_LIVE) {
        if (hostfs_open(&st.own_libfs, "/") == 0) {
            st.have_own_libfs = true;
            st.libfs = &st.own_libfs;
        }
    }
    if (icd_search_init(&st.search, st.libfs, icd_env("LD_LIBRARY_PATH")) != 0 ||
        icd_loaders_scan(&st.search, &st.loaders, &st.n_loaders) != 0) {
        icd_state_free(&st);
        icd_env_replay(NULL);
        json_object_put(own_env);
        ctx->error = str_printf("icd: out of memory");
        return PROBE_INTERNAL_ERROR;
    }
    if (st.search.cache_err && st.search.cache_err != -ENOENT)
        report_section_add_note(sec, "/etc/ld.so.cache: %s", strerror(-st.search.cache_err));
    else if (st.search.cache && icd_ldcache_walk(st.search.cache, st.search.cache_len, NULL, NULL) < 0)
        report_section_add_note(sec, "/etc/ld.so.cache: not a cache file this build understands");

    if (probe_snapshot(ctx)) {
        icd_identify_captured(&st);
    } else {
        icd_identify(&st);
        icd_crosscheck_winner(&st);
    }
    icd_check_loaders(&st);
    icd_collect(&st);
    icd_precheck(&st);
    if (!probe_snapshot(ctx)) { /* loading drivers and this process's environment: the live machine's */
        icd_check_ignored_env(&st);
        icd_probe_all(&st);
        icd_check_conflict(&st);
    }
    icd_no_icds(&st);
    icd_fill_data(&st);
    icd_summary(&st);
    if (probe_snapshot(ctx)) {
        icd_replay_captured(&st);
        icd_env_replay(NULL);
        json_object_put(own_env);
    }
    report_section_set_status(sec, REPORT_STATUS_OK, NULL);
    struct result_icd *res = result_icd_ops.from_json(sec->data); /* it prints its members in their places */
    if (res)
        report_section_set_result(sec, &result_icd_ops, res);
    icd_state_free(&st);
    return PROBE_DONE;
}

/* The PCI facts say whether a driver's hardware is here (icd.absent-hardware). */
static const char *const icd_deps[] = {"pci", NULL};

/* An .icd file of the section: the vendor it recognised, or its library's path for the doctor's words. */
static const char *icd_subject_vendor(const struct report_section *sec, const char *subject, const char **text)
{
    const struct result_icd *res = sec->result_ops == &result_icd_ops ? sec->result : NULL;
    for (size_t i = 0; res && i < res->n_icds; i++) {
        const struct result_icd_file *f = &res->icds[i];
        if (f->file && strcmp(f->file, subject) == 0) {
            const struct vendor *v = vendor_by_name(f->vendor);
            if (v)
                return v->name;
            *text = f->library;
            return NULL;
        }
    }
    return NULL;
}

const struct probe probe_icd = {
    .name = "icd",
    .clonce_part = &icd_clonce_part,
    .stack = PROBE_STACK_OPENCL,
    .label_today = icd_label_today,
    .compute_api = "opencl",
    .compute_api_label = "OpenCL",
    .title = "the OpenCL ICD loader and each vendor driver (.icd file)",
    .needs_live = true,
    .snapshot_rerun = true,
    .deps = icd_deps,
    .checks = icd_checks,
    .n_checks = sizeof(icd_checks) / sizeof(icd_checks[0]),
    .run = icd_run,
    .result = &result_icd_ops,
    .subject_vendor = icd_subject_vendor,
    .print_text = icd_print_text,
};
