/* jsonget.h: typed reads of one member of a JSON object, NULL-safe, for code that walks a report section. */
#ifndef GPUCHECKUP_JSONGET_H
#define GPUCHECKUP_JSONGET_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "typed.h"

/* Member KEY of O, or NULL when O is NULL, not an object, has no KEY, or KEY is null. */
json_object *jsonget(json_object *o, const char *key);
/* KEY as a string, or NULL when it is missing or not a string. */
const char *jsonget_str(json_object *o, const char *key);
/* KEY as an integer, or DEF when it is missing or not an integer (a double is not one). */
int64_t jsonget_int(json_object *o, const char *key, int64_t def);
/* KEY as a tri-state: GC_TRI_YES, GC_TRI_NO, or GC_TRI_UNKNOWN when missing, null or not a boolean. */
enum gc_tri jsonget_tri(json_object *o, const char *key);
/* KEY as a number (integer or double) in *OUT; false (OUT untouched) when it is neither. */
bool jsonget_num(json_object *o, const char *key, double *out);
/* KEY as an integer in *OUT; false (OUT untouched) when it is missing or not an integer. */
bool jsonget_int_ex(json_object *o, const char *key, int64_t *out);
/* KEY when it is an object, else NULL. */
json_object *jsonget_object(json_object *o, const char *key);
/* KEY when it is an array, else NULL; its length in *N (0 when NULL). */
json_object *jsonget_array(json_object *o, const char *key, size_t *n);

#endif
