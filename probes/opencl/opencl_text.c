/* opencl_text.c: text output of the opencl section: clinfo-like details, and `gpucheckup list` lines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "opencl_internal.h"

#define OCL_KEY_WIDTH 50

static void ocl_bytes_suffix(FILE *f, int64_t v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double x = (double)v;
    size_t u = 0;
    while (x >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        x /= 1024.0;
        u++;
    }
    if (u > 0)
        fprintf(f, " (%.3g %s)", x, units[u]);
}

/* One value of a property on the current line (and following lines for long lists). INDENT: the
 * column where values start, for continuation lines. */
static void ocl_print_value(FILE *f, json_object *v, const struct ocl_prop *row, int indent)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        fputs("(none)", f);
        break;
    case json_type_boolean:
        fputs(json_object_get_boolean(v) ? "Yes" : "No", f);
        break;
    case json_type_int: {
        int64_t n = json_object_get_int64(v);
        if (row && row->unit == OCL_U_HEX)
            fprintf(f, "0x%" PRIx64, json_object_get_uint64(v));
        else if (n == INT64_MAX) /* a value above INT64_MAX, stored as uint64 */
            fprintf(f, "%" PRIu64, json_object_get_uint64(v));
        else
            fprintf(f, "%" PRId64, n);
        if (row && row->unit == OCL_U_BYTES)
            ocl_bytes_suffix(f, n);
        else if (row && row->unit == OCL_U_MHZ)
            fputs(" MHz", f);
        else if (row && row->unit == OCL_U_NS)
            fputs(" ns", f);
        else if (row && row->unit == OCL_U_KIB)
            fputs(" KiB", f);
        break;
    }
    case json_type_string: {
        const char *s = json_object_get_string(v);
        fputs(*s ? s : "(empty)", f);
        break;
    }
    case json_type_array: {
        size_t n = json_object_array_length(v);
        if (n == 0) {
            fputs("(none)", f);
            break;
        }
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            if (json_object_is_type(e, json_type_object)) { /* name-version list: one per line */
                if (i > 0)
                    fprintf(f, "\n%*s", indent, "");
                fprintf(f, "%-40s %s", ocl_jstr(e, "name") ? ocl_jstr(e, "name") : "?",
                        ocl_jstr(e, "version") ? ocl_jstr(e, "version") : "?");
            } else {
                if (i > 0)
                    fputs(row && strcmp(row->name, "CL_DEVICE_MAX_WORK_ITEM_SIZES") == 0 ? "x" : ", ", f);
                ocl_print_value(f, e, NULL, indent);
            }
        }
        break;
    }
    case json_type_object: {
        const char *err = ocl_jstr(v, "error");
        if (err) {
            fprintf(f, "error: %s", err);
            break;
        }
        if (row && row->type == OCL_T_PCI_BUS) {
            fprintf(f, "%04llx:%02llx:%02llx.%llx", (long long)ocl_jint(v, "domain", 0), (long long)ocl_jint(v, "bus", 0),
                    (long long)ocl_jint(v, "device", 0), (long long)ocl_jint(v, "function", 0));
            break;
        }
        if (row && row->type == OCL_T_AMD_TOPO && ocl_jstr(v, "type")) {
            fprintf(f, "%s %02llx:%02llx.%llx", ocl_jstr(v, "type"), (long long)ocl_jint(v, "bus", 0),
                    (long long)ocl_jint(v, "device", 0), (long long)ocl_jint(v, "function", 0));
            break;
        }
        fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), f);
        break;
    }
    default:
        fputs(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), f);
        break;
    }
}

static void ocl_print_props(struct text_out *t, json_object *props, int depth)
{
    if (!props)
        return;
    int indent = 2 * depth;
    json_object_object_foreach(props, key, val)
    {
        const struct ocl_prop *row = ocl_prop_find(key);
        const char *label = t->verbose > 0 || !row ? key : row->label;
        int w = OCL_KEY_WIDTH - indent;
        fprintf(t->f, "%*s%-*s ", indent, "", w < 1 ? 1 : w, label);
        ocl_print_value(t->f, val, row, OCL_KEY_WIDTH + 1);
        fputc('\n', t->f);
    }
}

static void ocl_kv(struct text_out *t, int depth, const char *key, const char *value)
{
    int indent = 2 * depth;
    fprintf(t->f, "%*s%-*s %s\n", indent, "", OCL_KEY_WIDTH - indent, key, value ? value : "(none)");
}

static void ocl_types(json_object *d, char *buf, size_t len)
{
    buf[0] = '\0';
    json_object *t = ocl_jarr(d, "type");
    for (size_t k = 0; t && k < json_object_array_length(t); k++) {
        const char *s = json_object_get_string(json_object_array_get_idx(t, k));
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? "+" : "", s ? s : "?");
    }
}

static void ocl_print_list(struct text_out *t, json_object *data, json_object *plats)
{
    text_heading(t, "OpenCL platforms and devices");
    if (!plats || json_object_array_length(plats) == 0) {
        const char *detail = ocl_jstr(ocl_jobj(data, "enumeration"), "detail");
        fprintf(t->f, "No OpenCL platform%s%s\n", detail ? ": " : "", detail ? detail : "");
        return;
    }
    for (size_t i = 0; i < json_object_array_length(plats); i++) {
        json_object *p = json_object_array_get_idx(plats, i);
        fprintf(t->f, "Platform #%lld: %s\n", (long long)ocl_jint(p, "index", (int64_t)i),
                ocl_jstr(p, "name") ? ocl_jstr(p, "name") : "(unnamed)");
        json_object *devs = ocl_jarr(p, "devices");
        size_t nd = devs ? json_object_array_length(devs) : 0;
        if (nd == 0) {
            const char *e = ocl_jstr(ocl_jobj(p, "error"), "name");
            fprintf(t->f, " `-- (no devices%s%s)\n", e ? ": " : "", e ? e : "");
        }
        for (size_t j = 0; j < nd; j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            char types[64];
            ocl_types(d, types, sizeof(types));
            const char *addr = ocl_jstr(d, "pci_address");
            fprintf(t->f, " %s-- Device #%lld: %s [%s]%s%s\n", j + 1 == nd ? "`" : "+",
                    (long long)ocl_jint(d, "index", (int64_t)j), ocl_jstr(d, "name") ? ocl_jstr(d, "name") : "(unnamed)",
                    types, addr ? " " : "", addr ? addr : "");
        }
    }
}

void ocl_print_text(const struct report_section *sec, const struct report *r, struct text_out *t)
{
    (void)r;
    json_object *data = sec->data;
    /* the platforms as captured: the typed result holds them (data.platforms is its placeholder) */
    const struct result_opencl *res = sec->result_ops == &result_opencl_ops ? sec->result : NULL;
    json_object *plats = res ? res->platforms_json : ocl_jarr(data, "platforms");
    if (t->command && strcmp(t->command, "list") == 0) {
        ocl_print_list(t, data, plats);
        return;
    }
    json_object *en = ocl_jobj(data, "enumeration");
    text_heading(t, "OpenCL platforms and devices");
    ocl_kv(t, 0, "Loader", ocl_jstr(data, "loader"));
    ocl_kv(t, 0, "Enumeration", ocl_jstr(en, "status"));
    if (ocl_jstr(en, "detail"))
        ocl_kv(t, 0, "Detail", ocl_jstr(en, "detail"));
    json_object *filter = ocl_jobj(data, "filter");
    if (ocl_jstr(filter, "device"))
        ocl_kv(t, 0, "Showing only --device", ocl_jstr(filter, "device"));
    if (ocl_jstr(filter, "prop"))
        ocl_kv(t, 0, "Showing only --prop", ocl_jstr(filter, "prop"));
    char buf[64];
    snprintf(buf, sizeof(buf), "%lld", (long long)ocl_jint(ocl_jobj(data, "counts"), "platforms", 0));
    ocl_kv(t, 0, "Number of platforms", buf);
    for (size_t i = 0; plats && i < json_object_array_length(plats); i++) {
        json_object *p = json_object_array_get_idx(plats, i);
        long long pi = (long long)ocl_jint(p, "index", (int64_t)i);
        fprintf(t->f, "\nPlatform #%lld: %s\n", pi, ocl_jstr(p, "name") ? ocl_jstr(p, "name") : "(unnamed)");
        ocl_print_props(t, ocl_jobj(p, "properties"), 1);
        json_object *devs = ocl_jarr(p, "devices");
        size_t nd = devs ? json_object_array_length(devs) : 0;
        snprintf(buf, sizeof(buf), "%zu", nd);
        ocl_kv(t, 1, "Number of devices", buf);
        const char *e = ocl_jstr(ocl_jobj(p, "error"), "name");
        if (e)
            ocl_kv(t, 1, "clGetDeviceIDs", e);
        for (size_t j = 0; j < nd; j++) {
            json_object *d = json_object_array_get_idx(devs, j);
            long long di = (long long)ocl_jint(d, "index", (int64_t)j);
            fprintf(t->f, "\n  Device #%lld (--device %lld:%lld): %s\n", di, pi, di,
                    ocl_jstr(d, "name") ? ocl_jstr(d, "name") : "(unnamed)");
            char types[64];
            ocl_types(d, types, sizeof(types));
            ocl_kv(t, 2, "Type", types);
            char addr[96];
            const char *a = ocl_jstr(d, "pci_address");
            if (a)
                snprintf(addr, sizeof(addr), "%s (from %s)", a, ocl_jstr(d, "pci_address_source") ? ocl_jstr(d, "pci_address_source") : "?");
            ocl_kv(t, 2, "PCI address", a ? addr : "(not reported)");
            ocl_kv(t, 2, "UUID", ocl_jstr(d, "uuid") ? ocl_jstr(d, "uuid") : "(not reported)");
            ocl_print_props(t, ocl_jobj(d, "properties"), 2);
        }
    }
}
