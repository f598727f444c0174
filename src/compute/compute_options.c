/* compute_options.c: the compute tests' settings: their storage and defaults. */
#include "compute_options.h"

static struct compute_options compute_opts = {COMPUTE_WHICH_ALL, COMPUTE_DEFAULT_SIZE, false};

const struct compute_options *compute_options(void)
{
    return &compute_opts;
}

void compute_options_set(const struct compute_options *o)
{
    compute_opts = *o;
}

unsigned compute_options_size_for(bool cpu)
{
    if (!cpu || compute_opts.size_set || compute_opts.size < COMPUTE_CPU_SIZE)
        return compute_opts.size;
    return COMPUTE_CPU_SIZE;
}

void compute_options_reset(void)
{
    compute_opts = (struct compute_options){COMPUTE_WHICH_ALL, COMPUTE_DEFAULT_SIZE, false};
}
