/* clonce_internal.h: the memory the shared cl-once child writes and its parent reads (probes/clonce*.c only). */
#ifndef GPUCHECKUP_CLONCE_INTERNAL_H
#define GPUCHECKUP_CLONCE_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

#include "clonce.h"

/* Bytes of the icd part's output kept (as isolate.c keeps of a child's). */
#define CLONCE_TAIL 4096
/* The page shared with the child: the icd part's answer must fit in it, or it is not kept apart. */
#define CLONCE_PAGE (1u << 20)

/* Written by the child, read by the parent once the child is gone (never trusted: bounds checked). */
struct clonce_page {
    volatile int stage;    /* the icd part's stage (icd_child_arg.stage) */
    volatile int icd_done; /* the icd part returned: a failure after this is the opencl part's */
    volatile int ready;    /* json holds the icd part's answer */
    double done_ms;        /* jsonnum_now_ms when the icd part returned */
    size_t out_len;
    char out[CLONCE_TAIL]; /* the last bytes the icd part wrote on stdout/stderr */
    size_t len;
    char json[];           /* the icd part's answer, plain JSON */
};
#define CLONCE_JSON_MAX (CLONCE_PAGE - offsetof(struct clonce_page, json))

/* The vendor libraries' answers (clonce_answer), written by the child after the icd part; never
 * trusted. A page of its own, so that the icd part's page keeps its shape. */
struct clonce_answers {
    volatile int phase; /* CLONCE_ANSWERS_* */
    size_t len;
    char json[];        /* the icd part's icd_loaded array, plain JSON */
};
enum { CLONCE_ANSWERS_NONE = 0, CLONCE_ANSWERS_RUNNING, CLONCE_ANSWERS_DONE };
#define CLONCE_ANSWERS_MAX (CLONCE_PAGE - offsetof(struct clonce_answers, json))
/* The memory shared with a child that runs the smoke part: reserved, not committed (the pages the
 * child writes are all it costs); the enumeration must fit in it, or the smoke part does not run. */
#define CLONCE_SMOKE_MAP (16u << 20)

/* Written by the child, read by the parent once the child is gone (never trusted: bounds checked). */
struct clonce_smoke_page {
    volatile int enum_ready;  /* enum_json holds the enumeration: the smoke part may begin */
    double enum_done_ms;      /* jsonnum_now_ms when the enumeration returned */
    size_t enum_len;
    volatile int enum_out_done; /* the enumeration's output, kept apart, is on the result pipe now and
                                   its tail in enum_out: the opencl probe may take the enumeration
                                   before the child ends (set only when the output was kept apart) */
    size_t enum_out_len;
    char enum_out[CLONCE_TAIL]; /* the last bytes the icd part and the enumeration wrote, as on the pipe */
    struct smoke_shared_page smoke; /* the smoke part's devices and stages */
    char enum_json[];         /* the enumeration's answer, plain JSON */
};
#define CLONCE_ENUM_MAX (CLONCE_SMOKE_MAP - offsetof(struct clonce_smoke_page, enum_json))

/* In the child (and the parent, on the child's file once it is gone): the last CLONCE_TAIL bytes of
 * the first END bytes of FD into BUF; returns how many. */
size_t clonce_read_tail(int fd, off_t end, char *buf);

#endif
