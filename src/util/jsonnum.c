/* jsonnum.c: numbers for the report: a monotonic clock in milliseconds and finite doubles as JSON. */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "jsonnum.h"

double jsonnum_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

json_object *jsonnum_sig(double v, int digits)
{
    if (!isfinite(v))
        return NULL;
    char buf[40];
    snprintf(buf, sizeof(buf), "%.*g", digits, v);
    return json_object_new_double_s(v, buf);
}

json_object *jsonnum_ms(double v)
{
    if (!isfinite(v) || v < 0)
        return NULL;
    char buf[40];
    snprintf(buf, sizeof(buf), "%.3f", v);
    return json_object_new_double_s(v, buf);
}
