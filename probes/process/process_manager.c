/* process_manager.c: a unit as systemd's manager sees it (its merged settings, MainPID), over D-Bus with libsystemd's sd-bus. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "isolate.h"
#include "lazysystemd.h"
#include "process_internal.h"
#include "strutil.h"

/* Issue 39: the unit files say what was written; the manager says what it applies (drop-ins merged,
 * specifiers expanded, generators' units included) and whether the service runs. sd-bus (libsystemd,
 * dlopen()ed, lazysystemd.h) speaks the protocol; we only call LoadUnit and read properties, on the
 * probe's own thread, each call bounded by the run's deadline. */

#define PM_DEST "org.freedesktop.systemd1"
#define PM_UNIT "org.freedesktop.systemd1.Unit"
#define PM_SVC "org.freedesktop.systemd1.Service"

/* A string property, NULL when empty or unreadable (heap). */
static char *pm_string(sd_bus *bus, const char *path, const char *iface, const char *prop)
{
    sd_bus_error e = SD_BUS_ERROR_NULL;
    char *v = NULL;
    int rc = lazysystemd.sd_bus_get_property_string(bus, PM_DEST, path, iface, prop, &e, &v);
    lazysystemd.sd_bus_error_free(&e);
    if (rc < 0 || !v || !*v) {
        free(v);
        return NULL;
    }
    return v;
}

static void pm_strv(sd_bus *bus, const char *path, const char *iface, const char *prop, struct proc_list *l)
{
    sd_bus_error e = SD_BUS_ERROR_NULL;
    char **v = NULL;
    int rc = lazysystemd.sd_bus_get_property_strv(bus, PM_DEST, path, iface, prop, &e, &v);
    lazysystemd.sd_bus_error_free(&e);
    for (size_t i = 0; rc >= 0 && v && v[i]; i++) {
        proc_list_add(l, v[i]);
        free(v[i]);
    }
    free(v);
}

/* A boolean property: 0, 1, or -1 when unreadable. */
static int pm_bool(sd_bus *bus, const char *path, const char *prop)
{
    sd_bus_error e = SD_BUS_ERROR_NULL;
    int b = 0;
    int rc = lazysystemd.sd_bus_get_property_trivial(bus, PM_DEST, path, PM_SVC, prop, &e, 'b', &b);
    lazysystemd.sd_bus_error_free(&e);
    return rc < 0 ? -1 : b != 0;
}

/* An array-of-structs property (TYPE "(sb)", "(ss)" or "(sasbttttuii)"), entered: its reply, or NULL. */
static sd_bus_message *pm_array(sd_bus *bus, const char *path, const char *prop, const char *type)
{
    sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_message *m = NULL;
    char sig[32];
    snprintf(sig, sizeof(sig), "a%s", type);
    int rc = lazysystemd.sd_bus_get_property(bus, PM_DEST, path, PM_SVC, prop, &e, &m, sig);
    lazysystemd.sd_bus_error_free(&e);
    if (rc < 0 || lazysystemd.sd_bus_message_enter_container(m, 'a', type) < 0) {
        if (m)
            lazysystemd.sd_bus_message_unref(m);
        return NULL;
    }
    return m;
}

/* EnvironmentFiles a(sb) ("-" before a file whose absence is ignored), DeviceAllow a(ss), the last
 * ExecStart a(sasbttttuii)'s argv. */
static void pm_arrays(sd_bus *bus, const char *path, struct proc_unit *u)
{
    const char *s, *t;
    int b;
    sd_bus_message *m = pm_array(bus, path, "EnvironmentFiles", "(sb)");
    while (m && lazysystemd.sd_bus_message_read(m, "(sb)", &s, &b) > 0) {
        char *v = str_printf("%s%s", b ? "-" : "", s);
        if (v)
            proc_list_add(&u->env_files, v);
        free(v);
    }
    if (m)
        lazysystemd.sd_bus_message_unref(m);
    m = pm_array(bus, path, "DeviceAllow", "(ss)");
    while (m && lazysystemd.sd_bus_message_read(m, "(ss)", &s, &t) > 0) {
        char *v = str_printf("%s %s", s, t);
        if (v)
            proc_list_add(&u->device_allow, v);
        free(v);
    }
    if (m)
        lazysystemd.sd_bus_message_unref(m);
    m = pm_array(bus, path, "ExecStart", "(sasbttttuii)");
    while (m && lazysystemd.sd_bus_message_enter_container(m, 'r', "sasbttttuii") > 0) {
        char **argv = NULL;
        if (lazysystemd.sd_bus_message_read(m, "s", &s) < 0 || lazysystemd.sd_bus_message_read_strv(m, &argv) < 0 ||
            lazysystemd.sd_bus_message_skip(m, "bttttuii") < 0 || lazysystemd.sd_bus_message_exit_container(m) < 0)
            break;
        free(u->exec_start);
        u->exec_start = NULL;
        for (size_t i = 0; argv && argv[i]; i++) {
            char *next = str_printf("%s%s%s", u->exec_start ? u->exec_start : "", u->exec_start ? " " : "", argv[i]);
            free(u->exec_start);
            u->exec_start = next;
            free(argv[i]);
        }
        free(argv);
    }
    if (m)
        lazysystemd.sd_bus_message_unref(m);
}

bool proc_manager_wanted(struct probe_ctx *ctx)
{
    struct stat st;
    if (!probe_live(ctx))
        return false;
    /* systemd runs (sd_booted(3)'s test), or a system bus was named explicitly */
    const char *addr = isolate_target_own_getenv("DBUS_SYSTEM_BUS_ADDRESS"); /* gpucheckup's own, not --pid's */
    return hostfs_stat(ctx->fs, "/run/systemd/system", &st, false) == 0 || (addr && *addr);
}

int proc_manager_load(struct probe_ctx *ctx, const char *name, struct proc_unit *u, struct proc_manager *pm)
{
    memset(pm, 0, sizeof(*pm));
    const char *err = NULL;
    if (lazysystemd_load(&err) < 0) {
        pm->why = str_dup(err ? err : "libsystemd could not be loaded");
        return -1;
    }
    int ms = probe_budget_ms(ctx);
    if (ms <= 0) {
        pm->why = str_dup("the run's time budget is spent");
        return -1;
    }
    sd_bus *bus = NULL;
    int rc = lazysystemd.sd_bus_open_system(&bus);
    if (rc < 0) {
        pm->why = str_printf("the system bus: %s", strerror(-rc));
        return -1;
    }
    lazysystemd.sd_bus_set_method_call_timeout(bus, (uint64_t)(ms < 5000 ? ms : 5000) * 1000u);
    sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    const char *path = NULL;
    rc = lazysystemd.sd_bus_call_method(bus, PM_DEST, "/org/freedesktop/systemd1", PM_DEST ".Manager", "LoadUnit", &e,
                                        &reply, "s", name);
    if (rc >= 0)
        rc = lazysystemd.sd_bus_message_read(reply, "o", &path);
    if (rc < 0) {
        pm->why = str_printf("the manager's LoadUnit(%s): %s", name, e.message ? e.message : strerror(-rc));
        lazysystemd.sd_bus_error_free(&e);
        if (reply)
            lazysystemd.sd_bus_message_unref(reply);
        lazysystemd.sd_bus_flush_close_unref(bus);
        return -1;
    }
    char *obj = str_dup(path);
    lazysystemd.sd_bus_message_unref(reply);
    char *load = obj ? pm_string(bus, obj, PM_UNIT, "LoadState") : NULL;
    if (!obj || (load && strcmp(load, "loaded") != 0 && strcmp(load, "masked") != 0)) {
        pm->why = str_printf("the manager has not loaded %s (%s)", name, load ? load : "no LoadState");
        free(load);
        free(obj);
        lazysystemd.sd_bus_flush_close_unref(bus);
        return -1;
    }
    memset(u, 0, sizeof(*u));
    u->dynamic_user = u->private_devices = -1;
    u->name = str_dup(name);
    u->masked = load && strcmp(load, "masked") == 0;
    free(load);
    u->fragment = pm_string(bus, obj, PM_UNIT, "FragmentPath");
    pm_strv(bus, obj, PM_UNIT, "DropInPaths", &u->dropins);
    pm->active_state = pm_string(bus, obj, PM_UNIT, "ActiveState");
    pm_strv(bus, obj, PM_SVC, "Environment", &u->env);
    u->user = pm_string(bus, obj, PM_SVC, "User");
    u->group = pm_string(bus, obj, PM_SVC, "Group");
    pm_strv(bus, obj, PM_SVC, "SupplementaryGroups", &u->supp);
    u->dynamic_user = pm_bool(bus, obj, "DynamicUser");
    u->private_devices = pm_bool(bus, obj, "PrivateDevices");
    u->device_policy = pm_string(bus, obj, PM_SVC, "DevicePolicy");
    pm_arrays(bus, obj, u);
    uint32_t pid = 0;
    pm->main_pid = lazysystemd.sd_bus_get_property_trivial(bus, PM_DEST, obj, PM_SVC, "MainPID", &e, 'u', &pid) >= 0
                       ? (long)pid : -1;
    lazysystemd.sd_bus_error_free(&e);
    free(obj);
    lazysystemd.sd_bus_flush_close_unref(bus);
    return 0;
}
