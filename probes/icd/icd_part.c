/* icd_part.c: the icd probe's part of the shared cl-once child (clonce_parts.h), listed in probe_icd. */
#include "icd_impl.h"

const struct clonce_part icd_clonce_part = {
    .name = "icd",
    .icd_combined = icd_child_combined,
    .icd_loaded = icd_child_loaded,
    .icd_health_vendors = icd_health_vendors,
    .icd_health_done = icd_health_done,
};
