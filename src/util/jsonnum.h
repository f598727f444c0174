/* jsonnum.h: numbers for the report: a monotonic clock in milliseconds and finite doubles as JSON. */
#ifndef GPUCHECKUP_JSONNUM_H
#define GPUCHECKUP_JSONNUM_H

#include <json-c/json.h>

/* CLOCK_MONOTONIC in milliseconds (for durations only). */
double jsonnum_now_ms(void);

/* V as a JSON double printed with DIGITS significant digits, or NULL (JSON null) when V is not finite. */
json_object *jsonnum_sig(double v, int digits);

/* A duration in milliseconds printed to the microsecond, or NULL when V is negative or not finite. */
json_object *jsonnum_ms(double v);

#endif
