/* compute_options.h: the compute tests' settings, which every API's smoke test reads (which devices, what size). */
#ifndef GPUCHECKUP_COMPUTE_OPTIONS_H
#define GPUCHECKUP_COMPUTE_OPTIONS_H

#include <stdbool.h>

/* Which devices get a compute test. */
enum compute_which { COMPUTE_WHICH_ALL = 0, COMPUTE_WHICH_GPU, COMPUTE_WHICH_NONE };

#define COMPUTE_DEFAULT_SIZE 256u
#define COMPUTE_MAX_SIZE 4096u
/* A CPU device's default (lavapipe, PoCL): not the GPU the question is about, and a size that still fails a
 * device that computes nothing or wrong (both passes run), at 1/64 of the default's work. */
#define COMPUTE_CPU_SIZE 64u

/* The core keeps the values; the smoke probe owns the options that set them (--smoke, --no-smoke,
 * --smoke-size: their names and --help rows stay with the probe that documents them). */
struct compute_options {
    enum compute_which which; /* COMPUTE_WHICH_NONE also skips every other API's compute test */
    unsigned size;            /* the matrix size, 1..COMPUTE_MAX_SIZE, of every API's compute test */
    bool size_set;            /* --smoke-size was given: SIZE for every device, CPU ones too */
};

/* The values (the defaults until an option sets them): written only while parsing, read by probes. */
const struct compute_options *compute_options(void);
/* Replace the values (by an option's parser only). */
void compute_options_set(const struct compute_options *o);
/* The matrix size for a device (CPU: a CPU device): the options' size, or for a CPU device without
 * --smoke-size the smaller of it and COMPUTE_CPU_SIZE. */
unsigned compute_options_size_for(bool cpu);
/* Back to the defaults (before parsing). */
void compute_options_reset(void);

#endif
