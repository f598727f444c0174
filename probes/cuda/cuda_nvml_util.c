/* cuda_nvml_util.c: small readers of the NVML child's per-GPU records that every NVML part shares (a file
 * of their own, so that the parts do not call each other round a cycle). */
#include <stdint.h>

#include "cuda_nvml.h"
#include "jsonget.h"
#include "strutil.h"

int64_t nvml_num(json_object *o, const char *key)
{
    json_object *v = jsonget(o, key);
    if (!v || !json_object_is_type(v, json_type_int))
        return -1;
    int64_t n = json_object_get_int64(v);
    return n < 0 ? -1 : n;
}

char *nvml_subject(json_object *d)
{
    const char *bus = jsonget_str(d, "pci_bus_id");
    const char *uuid = jsonget_str(d, "uuid");
    if (bus)
        return str_dup(bus);
    if (uuid)
        return str_dup(uuid);
    return str_printf("NVML GPU %lld", (long long)nvml_num(d, "index"));
}
