/* pld_debug_int.h - internals shared by the files of pld_debug: the handle
 * and the state of each tool. */
#ifndef PLD_DEBUG_INT_H
#define PLD_DEBUG_INT_H

#include "pld_debug.h"

#define PLD_RACE_SLOTS 64      /* per rank: orchestration + 63 kernel-thread slots (docs/races.md, "Threads") */
#define PLD_RACE_KEYS 256      /* kernel threads mapped to slots at once (beyond: they share slots) */
#define SCHED_MAX_PENDING 64   /* puts held at once; the oldest goes first beyond */

/* ---- --poison (pld_debug_poison.c) */
typedef struct dbg_poison {
    uint8_t *ones;             /* `nones` bytes of 1: what a put writes into a shadow */
    size_t nones;
    uint8_t *scratch;          /* a get's shadow bytes */
    size_t nscratch;
    const void **sites;        /* sites already reported */
    int nsites, capsites;
} dbg_poison_t;

/* ---- --check-races (pld_debug_race.c) */
typedef struct rdom {
    pld_win_dom_t *w;          /* the segments (NULL: not a member) */
    pld_hb_geom_t g;
    void **seg;                /* by domain rank: that member's segment as mapped here */
    int *members;              /* world rank of each domain rank */
    int n, me;
    int64_t cells_hint;        /* 1 + the INT32 cells the caller says the window holds (0: unknown) */
} rdom_t;

/* The clock a task completed with (edge 7; detached tasks, edge 2), and
 * the clock a queued task was issued with (NULL unless queued). */
typedef struct tclock {
    int64_t tid;
    uint32_t *clk;
    uint32_t *start;
} tclock_t;

/* A kernel thread (block, lane) of a running launch and its clock slot. */
typedef struct tkey {
    int64_t block, lane;
    uint8_t slot, parent;      /* its slot; the slot that forked it */
    uint8_t owned;             /* the slot was taken for it (freed at the launcher's join) */
} tkey_t;

typedef struct pair {
    pld_hb_site_t a, b;
} pair_t;

typedef struct dbg_race {
    uint32_t P, V, me;
    uint32_t *clk;             /* PLD_RACE_SLOTS x V: the clock of each local slot */
    uint64_t children[PLD_RACE_SLOTS]; /* slots forked by each slot's running launch */
    uint8_t parent[PLD_RACE_SLOTS];    /* the launcher of each forked slot */
    rdom_t *dom;
    int ndom;
    pair_t *pairs;             /* pairs of sites already reported */
    int npairs, cappairs;
    uint64_t evicted;
    int full_reported;
    tclock_t *tasks;           /* completion clocks of deferred tasks */
    int ntasks, captasks;
    int64_t redirect;          /* > 0: waits acquire into this task's clock (its deferred completion) */
    /* kernel threads -> slots (pld_debug_race.c, "threads") */
    tkey_t keys[PLD_RACE_KEYS];
    int nkeys;
    uint64_t busy;             /* slots of live kernel threads */
    uint32_t last[PLD_RACE_SLOTS]; /* the epoch a slot's last thread ended at (0: never used) */
    uint64_t folded;           /* threads that had to share a slot (a race between them may be missed) */
    /* a detached launch (a queued task, a task of a manual scope): its
     * blocks start from det_base and end in task det_tid's clock */
    int det_on;
    int64_t det_tid;
    uint32_t *det_base;        /* V */
    struct plain *plain;       /* the plain tensors kernels wrote in the running launch (pld_debug_race_plain) */
    int nplain, capplain;
} dbg_race_t;

/* ---- --schedule-seed (pld_debug_sched.c) */
/* Where a remote op was issued (--trace, -v: the event of a held put when it lands). */
typedef struct site {
    int32_t track, line, col;
    const char *func;
} site_t;

typedef struct pend {
    int dom;              /* the target: domain rank `peer` of comm domain dom (window win) */
    pld_win_dom_t *win;
    int peer;
    int done;             /* applied (removed at the next compaction) */
    size_t disp, bytes;
    unsigned char *data;  /* the bytes, copied at issue (a buffer of cap bytes) */
    size_t cap;
    site_t at;            /* the put's site (when tracing) */
    int64_t t_issue;      /* when it was issued (when tracing) */
} pend_t;

typedef struct dbg_sched {
    uint64_t rng;         /* splitmix64 state */
    int delay;            /* puts may be held back (the sim backend) */
    pend_t *q;            /* pending puts, oldest first */
    int n;
    size_t held;          /* bytes in q */
    uint64_t budget;      /* the op budget's step limit (*step_limit when no put is pending) */
    site_t site;          /* the remote op being issued (pld_debug_sched_site; when tracing) */
    /* buffers of applied puts, reused by later ones (no allocation, no page
     * faults per put in a loop of large puts) */
    unsigned char *pool[SCHED_MAX_PENDING];
    size_t pool_cap[SCHED_MAX_PENDING];
    int npool;
} dbg_sched_t;

struct pld_debug {
    pld_debug_opts_t o;   /* as created (borrowed pointers) */
    dbg_poison_t *poison; /* NULL when the tool is off */
    dbg_race_t *race;
    dbg_sched_t *sched;
};

/* Per tool: open (after the common checks) and close. */
pld_status_t pld_debug_poison_open(pld_debug_t *d, char *err, size_t errn);
void pld_debug_poison_close(pld_debug_t *d);
pld_status_t pld_debug_race_open(pld_debug_t *d, char *err, size_t errn);
void pld_debug_race_close(pld_debug_t *d);
pld_status_t pld_debug_sched_open(pld_debug_t *d);
void pld_debug_sched_close(pld_debug_t *d);

#endif
