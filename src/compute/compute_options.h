/* compute_options.h: the compute tests' settings, which every API's smoke test reads (which devices, what size). */
#ifndef GPUCHECKUP_COMPUTE_OPTIONS_H
#define GPUCHECKUP_COMPUTE_OPTIONS_H

/* Which devices get a compute test. */
enum compute_which { COMPUTE_WHICH_ALL = 0, COMPUTE_WHICH_GPU, COMPUTE_WHICH_NONE };

#define COMPUTE_DEFAULT_SIZE 256u
#define COMPUTE_MAX_SIZE 4096u

/* The core keeps the values; the smoke probe owns the options that set them (--smoke, --no-smoke,
 * --smoke-size: their names and --help rows stay with the probe that documents them). */
struct compute_options {
    enum compute_which which; /* COMPUTE_WHICH_NONE also skips every other API's compute test */
    unsigned size;            /* the matrix size, 1..COMPUTE_MAX_SIZE, of every API's compute test */
};

/* The values (the defaults until an option sets them): written only while parsing, read by probes. */
const struct compute_options *compute_options(void);
/* Replace the values (by an option's parser only). */
void compute_options_set(const struct compute_options *o);
/* Back to the defaults (before parsing). */
void compute_options_reset(void);

#endif
