/* health_util.c: small helpers every part of the health probe shares (a file of their own, so that the parts
 * do not call each other round a cycle). */
#include <stdio.h>

#include "health_internal.h"
#include "jsonget.h"

void health_thousands(char *buf, size_t size, size_t n)
{
    char digits[32];
    int len = snprintf(digits, sizeof(digits), "%zu", n);
    size_t at = 0;
    for (int i = 0; i < len && at + 2 < size; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = '\0';
}

json_object *health_array_member(json_object *o, const char *key)
{
    json_object *a = jsonget(o, key);
    if (!a || !json_object_is_type(a, json_type_array)) {
        a = json_object_new_array();
        json_object_object_add(o, key, a);
    }
    return a;
}
