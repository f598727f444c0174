/* cuda_driver.h: the cuda probe's driver-API part: the child, its parsers, its findings, the wheel table. */
#ifndef GPUCHECKUP_CUDA_DRIVER_H
#define GPUCHECKUP_CUDA_DRIVER_H

#include <stddef.h>
#include <json-c/json.h>

#include "cuda_internal.h"

/* Isolate work (ARG unused): dlopen("libcuda.so.1"), cuInit(0), describe every device. Returns the
 * object that cuda.c turns into data["driver"] and data["devices"] (sanitised there). */
json_object *cuda_driver_child(void *arg);

/* "580.159.04" for "libcuda.so.580.159.04" (heap, caller frees); NULL for any other name. */
char *cuda_driver_file_version(const char *base);

/* Normalise a CUDA PCI bus id ("00000000:00:06.0") to "0000:00:06.0" in OUT (LEN >= 24). 0, or -1
 * when TEXT is not a bus id. */
int cuda_driver_normalize_busid(const char *text, char *out, size_t len);

/* The CUDA text printer (cuda_text.c). */
void cuda_print_text(const struct report_section *sec, const struct report *r, struct text_out *t);

#endif
