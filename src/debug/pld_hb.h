/* pld_hb.h - happens-before bookkeeping of the race detector (--check-races,
 * docs/races.md): vector clocks, and the segment one rank keeps beside each
 * of its windows.
 *
 * A segment is flat and holds no pointers, so it can live in memory that
 * every member of a comm domain maps (the issuer of a put updates the
 * owner's segment itself). It holds, for the owner's window:
 *   - the records of the accesses to each 64-byte granule: up to
 *     PLD_HB_SLOTS records (thread, epoch, kind, byte mask, site); a new
 *     access is checked against every record it overlaps, then supersedes
 *     the records it orders after (FastTrack's rules, per byte);
 *   - the release set of each signal cell: the contributions (value,
 *     clock) that make up the cell's current value (docs/races.md, edge 3);
 *   - two published clocks for the barrier between dispatches.
 * Every function that touches a segment must be called with its lock held
 * (pld_hb_lock). Knows nothing of MPI or the interpreter.
 *
 * Threads are numbered 0..nthreads-1 across the job; a clock is nthreads
 * uint32 counters. An access by thread T with clock C is ordered after a
 * record (U, e) iff U == T or e <= C[U]. */
#ifndef PLD_HB_H
#define PLD_HB_H

#include <stddef.h>
#include <stdint.h>

#define PLD_HB_GRANULE 64    /* bytes of window per granule (one 64-bit byte mask) */
#define PLD_HB_SLOTS 12      /* records per granule */
#define PLD_HB_ENTRIES 8     /* contributions per signal cell (older ones merge) */
#define PLD_HB_MAX_THREADS 16384 /* clock width limit (a record keeps the thread in 14 bits) */

/* PLD_HB_SIGNAL: a notify's update of a signal cell (docs/races.md, "Signals
 * as accesses"): it conflicts with a plain write only. */
enum { PLD_HB_SIGNAL = 0, PLD_HB_READ = 1, PLD_HB_WRITE = 2, PLD_HB_ATOMIC = 3 };

/* Where an access was made: the source span (byte offset and length; the
 * length is kept up to 65535), op id, block (0xFFFF: the orchestration).
 * Compared as a whole to tell sites apart. */
typedef struct pld_hb_site {
    uint32_t off, len;
    uint16_t op;
    uint16_t block;
} pld_hb_site_t;

/* The size of a segment. */
typedef struct pld_hb_geom {
    uint32_t nthreads;   /* clock width */
    uint32_t ncells;     /* signal cells the release-set table holds */
    size_t bytes;        /* window bytes covered (the extent) */
} pld_hb_geom_t;

/* Bytes of a segment of geometry g. A zero-filled segment is empty and valid. */
size_t pld_hb_seg_bytes(const pld_hb_geom_t *g);

/* The segment's spin lock (a word in the segment; processes that map the
 * segment share it). Spins with sched_yield. */
void pld_hb_lock(void *seg);
void pld_hb_unlock(void *seg);

/* One conflict found by pld_hb_access: the earlier access (its thread, kind
 * and site) and the window bytes [lo, hi) the two share (merged over the
 * granules of one call). */
typedef struct pld_hb_race {
    uint32_t tid;
    int kind;
    pld_hb_site_t site;
    size_t lo, hi;
} pld_hb_race_t;
typedef void (*pld_hb_race_fn)(void *ctx, const pld_hb_race_t *r);

/* Checks the access of window bytes [off, off + len) by thread tid with
 * clock clk (kind PLD_HB_READ / WRITE / ATOMIC) against the records there,
 * calls fn for each conflicting earlier access (at least one a write, not
 * both atomic, not ordered before this one; merged per earlier site), and
 * records the access. Returns how many records had to be evicted because a
 * granule was full (such a record is forgotten: a race with it may be
 * missed, never invented). Bytes beyond g->bytes are ignored. */
uint64_t pld_hb_access(void *seg, const pld_hb_geom_t *g, uint32_t tid, const uint32_t *clk, int kind,
                       pld_hb_site_t site, size_t off, size_t len, pld_hb_race_fn fn, void *ctx);

/* A notify of the cell at byte `cell` by a thread with clock clk: set
 * replaces the release set by (v, clk); an add v >= 0 appends (v, clk); an
 * add v < 0 (the self-clearing epilogue) removes contributions, oldest
 * first, until their values sum to -v, and releases nothing. Returns 0; 1
 * when the table has no room for the cell: the notify went into the
 * overflow set that every cell beyond the table shares (a wait on any of
 * them acquires all of it: it may order more, never less); -1 without a
 * table (ncells 0). */
int pld_hb_release(void *seg, const pld_hb_geom_t *g, size_t cell, int32_t v, int set, const uint32_t *clk);
/* A satisfied wait on the cell (cmp: 0 Eq, 1 Ge, 2 Ge unsigned; expected
 * its value) joins into clk the clocks of the contributions it observed:
 * the oldest ones, up to the first whose running sum satisfies the
 * condition (the moment the condition first held); all of them when no
 * prefix does (the cell also holds what no notify released, e.g. a value
 * kept from an earlier dispatch). So a wait satisfied by an old credit that
 * was never cleared acquires that credit's notify only, however many newer
 * ones have arrived since. */
void pld_hb_acquire(void *seg, const pld_hb_geom_t *g, size_t cell, int cmp, int32_t expected, uint32_t *clk);
/* Forgets every record and release set (the window was zeroed). */
void pld_hb_clear(void *seg, const pld_hb_geom_t *g);

/* The barrier between dispatches: publish a clock in slot (0 or 1), and
 * join a segment's published clock of that slot into clk. */
void pld_hb_publish(void *seg, const pld_hb_geom_t *g, int slot, const uint32_t *clk);
void pld_hb_join_published(const void *seg, const pld_hb_geom_t *g, int slot, uint32_t *clk);

/* Vector clocks. */
static inline void pld_hb_join(uint32_t *dst, const uint32_t *src, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (src[i] > dst[i])
            dst[i] = src[i];
}

#endif
