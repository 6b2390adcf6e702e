/* pld_cluster.h - the cores of a cluster: one AIC (cube) core and one or two
 * AIV (vector) lanes running at the same time as blocks of the rank's
 * scheduler (pld_npu.h), the cross-core pipe between them (tpush / tpop /
 * tfree), events (sync_set / sync_wait) and the barriers of syncall. The
 * model: docs/cluster.md.
 *
 * The device side only: tiles in the pipe are the cluster's own slot buffers
 * (dtype, shape, valid shape, packed data); the caller (the interpreter's
 * pld_xcore.c) binds the ops' arguments, turns its tiles into
 * pld_cluster_tile_t and back, and reports the errors at their source
 * locations. Messages written into `err` are final text (no location).
 *
 * Errors of the blocking ops: PLD_E_RUNTIME with a message in err (a broken
 * rule, a cross-core deadlock), PLD_E_RUNTIME with err empty (the grid was
 * cancelled: another core failed and reported), PLD_E_NOMEM. */
#ifndef PLD_CLUSTER_H
#define PLD_CLUSTER_H

#include "pld_dtype.h"
#include "pld_kern.h"
#include "pld_npu.h"
#include "pld_status.h"

#include <stddef.h>
#include <stdint.h>

#define PLD_CLUSTER_IDS 16  /* pipe ids and event ids: 0-15 */
#define PLD_CLUSTER_CORES 8 /* cores of one group launch */
#define PLD_CLUSTER_LANES 2 /* AIV lanes of a cluster */

/* A pipe's direction. */
typedef enum pld_cluster_dir { PLD_CLUSTER_C2V = 0, PLD_CLUSTER_V2C = 1 } pld_cluster_dir_t;

/* ---- tiles ----
 * A tile: dtype, physical shape, valid extent, data packed row-major over
 * shape. Passed in, it is borrowed (the caller's data); returned, data is
 * owned (allocated with pld_mem_*: pld_cluster_tile_fini, or hand it to
 * whatever frees with pld_mem_free). */
typedef struct pld_cluster_tile {
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_MAX_RANK];
    int64_t valid[PLD_MAX_RANK];
    void *data;
} pld_cluster_tile_t;

/* *out = a copy of t: all of it (ext < 0), or the box [off, off + ext) along
 * `axis` in a tile `phys` long on that axis (an odd split gives both lanes
 * the larger half's shape; the part's valid extent is its own). Errors:
 * PLD_E_NOMEM. */
pld_status_t pld_cluster_tile_part(const pld_cluster_tile_t *t, int axis, int64_t off, int64_t ext, int64_t phys,
                                   pld_cluster_tile_t *out);
/* *out = the lanes' halves a and b joined along axis (valid extents added
 * when a's half is whole). odd: the split of an odd extent, where b's half is
 * one shorter than its tile. Errors: PLD_E_NOMEM, also when a and b differ
 * in dtype or rank. */
pld_status_t pld_cluster_tile_join(const pld_cluster_tile_t *a, const pld_cluster_tile_t *b, int axis, int odd,
                                   pld_cluster_tile_t *out);
/* Frees t's data (owned). Accepts a tile without data. */
void pld_cluster_tile_fini(pld_cluster_tile_t *t);
/* The axis of a pipe split code (1/3 rows, 2/4 columns) of a rank-r tile (a
 * rank-1 tile splits along its only axis). */
int pld_cluster_split_axis(int split, int rank);

/* ---- the site of an op ----
 * What a core's op tells the cluster about itself: its name and line (for
 * messages and the deadlock report) and two optional hooks. yield(arg, 1) is
 * called before the core yields while it waits, yield(arg, 0) when it runs
 * again; sync(arg, how) marks the ordering the op makes among the cores and
 * blocks of the rank (for the race detector): a release (the pusher, the
 * setter, before a barrier), an acquire of the cores of the launch (a pop,
 * an event wait), or of every block and core of the rank (a barrier passed). */
typedef enum pld_cluster_sync {
    PLD_CLUSTER_RELEASE = 0,
    PLD_CLUSTER_ACQUIRE = 1,
    PLD_CLUSTER_ACQUIRE_ALL = 2
} pld_cluster_sync_t;

typedef struct pld_cluster_site {
    const char *op;
    int line;
    void (*yield)(void *arg, int waiting);
    void (*sync)(void *arg, pld_cluster_sync_t how);
    void *arg;
} pld_cluster_site_t;

/* ---- a cluster (one group launch) ---- */
typedef struct pld_cluster pld_cluster_t;

/* Creates the state of one group launch on scheduler s (borrowed): nlanes AIV
 * lanes (1 or 2), no cores yet, every pipe empty with the default ring
 * depth. name (borrowed) names the group in the deadlock report. *out is
 * owned (pld_cluster_destroy). Errors: PLD_E_NOMEM. */
pld_status_t pld_cluster_create(pld_npu_sched_t *s, const char *name, int nlanes, pld_cluster_t **out);
/* Frees the cluster and the tiles left in its pipes. Accepts NULL. */
void pld_cluster_destroy(pld_cluster_t *c);
/* Adds a core: the AIC (aic = 1) or an AIV lane `lane`, running `kernel`
 * (borrowed, for the deadlock report). Returns its index (the block it runs
 * as), or -1 when the cluster already has PLD_CLUSTER_CORES cores. */
int pld_cluster_add_core(pld_cluster_t *c, int aic, const char *kernel, int lane);
/* The cores added so far (the blocks of the group's launch). */
int pld_cluster_ncores(const pld_cluster_t *c);
/* The AIV lanes (1 or 2), as created. */
int pld_cluster_nlanes(const pld_cluster_t *c);
/* The AIV lane of core b (0 for the AIC). */
int pld_cluster_core_lane(const pld_cluster_t *c, int b);
/* Core b returned: it waits for nothing any more. */
void pld_cluster_core_done(pld_cluster_t *c, int b);

/* ---- the pipe ----
 * A pipe is one direction and one id, with one FIFO per AIV lane. A FIFO
 * holds at most its ring depth of tiles pushed and not yet freed: a push
 * waits for a free slot, a pop for a tile, and a free returns the oldest
 * popped slot. In every op, `core` is the calling core (pld_cluster_add_core's
 * index) and `lane` the AIV lane it runs on (0 on the AIC); id is in
 * [0, PLD_CLUSTER_IDS) and split in 0-4 (the caller checks its arguments). */

/* aic/aiv_initialize_pipe: sets the ring depth of pipe id in the directions
 * of dir_mask (1 C2V, 2 V2C, 3 both): slots, else 8 (4 when bidirectional). */
void pld_cluster_init_pipe(pld_cluster_t *c, int dir_mask, int64_t slots, int id);
/* tpush: C2V (from the AIC) sends t whole to the one lane, a copy to each of
 * two lanes (split 0), or half to each lane (1/3 rows, 2/4 columns; 3/4: odd
 * extents, lane 0 takes the larger half); V2C enqueues t on the caller's
 * lane. Checks the split's extent, waits for a free slot in every FIFO it
 * fills, then copies t (borrowed) into them. A split with one lane is the
 * caller's error to report. Errors: see the top. */
pld_status_t pld_cluster_push(pld_cluster_t *c, int core, int lane, pld_cluster_dir_t dir, int id, int split,
                              const pld_cluster_tile_t *t, const pld_cluster_site_t *at, char *err, size_t errn);
/* tpop: C2V takes the next tile of the caller's lane's FIFO; V2C takes one
 * from every lane: lane 0's (split 0) or the halves joined (split 1-4).
 * Waits for the tiles; *out is owned. Errors: see the top. */
pld_status_t pld_cluster_pop(pld_cluster_t *c, int core, int lane, pld_cluster_dir_t dir, int id, int split,
                             const pld_cluster_site_t *at, pld_cluster_tile_t *out, char *err, size_t errn);
/* tfree: returns the oldest popped slot of pipe (dir, id) of the consumer's
 * FIFOs (C2V: the caller's lane; V2C: every lane). PLD_E_RUNTIME (message in
 * err) when no popped tile waits to be freed. */
pld_status_t pld_cluster_free_slot(pld_cluster_t *c, int lane, pld_cluster_dir_t dir, int id,
                                   const pld_cluster_site_t *at, char *err, size_t errn);

/* ---- events ----
 * Events count per id and direction. on_aic: the op runs on the AIC side. A
 * set on the AIC raises ev for every AIV lane; on an AIV lane it raises it
 * for the AIC, and with ffts_mode 2 it is a reduction: the AIC's wait needs
 * one set from every lane. A wait waits for its sets and consumes them. */
void pld_cluster_event_set(pld_cluster_t *c, int on_aic, int ev, int mode, const pld_cluster_site_t *at);
/* The wait's count is the one needed when it starts (every lane's when the
 * last set on the AIV side had mode 2); once satisfied it consumes the count
 * needed then. */
pld_status_t pld_cluster_event_wait(pld_cluster_t *c, int core, int lane, int on_aic, int ev,
                                    const pld_cluster_site_t *at, char *err, size_t errn);

/* ---- syncall ----
 * Admission of a syncall of core_type (mix, aiv_only, aic_only) in a launch of
 * block_num blocks, run in cluster c or outside a group (c NULL): the hard
 * form needs every physical core of its type on profile pf, the soft one
 * used_cores (used, 0 = any) equal to the participants (one per block, or
 * with mix each core of the block's cluster: 3 outside a group). PLD_OK or
 * PLD_E_RUNTIME with a message in err. */
pld_status_t pld_cluster_syncall_check(const pld_npu_profile_t *pf, const pld_cluster_t *c, const char *core_type,
                                       int soft, int64_t used, int64_t block_num, char *err, size_t errn);
/* The barrier of syncall on scheduler s: outside a group (c NULL) one of the
 * grid's blocks; in a group the cores of the cluster meet first, core 0 meets
 * the other clusters (block_num > 1), then all go on. Errors: see the top
 * (a barrier that can never complete because the others returned). */
pld_status_t pld_cluster_syncall(pld_npu_sched_t *s, pld_cluster_t *c, int core, int64_t block_num,
                                 const pld_cluster_site_t *at, char *err, size_t errn);

#endif
