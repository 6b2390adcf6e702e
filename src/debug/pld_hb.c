/* pld_hb.c - happens-before bookkeeping of the race detector (pld_hb.h).
 *
 * Segment layout (every part 64-byte aligned, all zero when empty):
 *   header     lock word, the granules touched [glo, ghi),
 *              how many cells are in use                       64 bytes
 *   published  2 clocks (the barrier between dispatches)       2 x 4V
 *   used       the table index of each cell in use             4 x ncells
 *   cells      ncells x { key (byte + 1, 0 = empty), n, entries[PLD_HB_ENTRIES] }
 *              entry = { value, clock[V] }
 *   overflow   one more cell: the merged release set of every cell the
 *              table had no room for (pld_hb_release)
 *   granules   ceil(bytes / 64) x PLD_HB_SLOTS records of 24 bytes
 *   ext heads  per granule, the first extension block of its records (uint32,
 *              1-based, 0 = none)
 *   ext pool   ext_blocks(g) blocks { next (1-based), PLD_HB_SLOTS records },
 *              taken in order by granules that need more than PLD_HB_SLOTS
 *              live records (many threads reading the same bytes), all given
 *              back at a clear
 * where V = nthreads. */
#include "pld_hb.h"

#include <sched.h>
#include <string.h>

typedef struct rec {
    uint64_t mask;   /* bytes of the granule (bit i = byte i); 0 = free slot */
    uint32_t epoch;
    uint32_t off;    /* the site (pld_hb_site_t) */
    uint16_t len, op, block;
    uint16_t tk;     /* tid << 2 | kind */
} rec_t;

typedef struct seg_hdr {
    uint32_t lock;
    uint32_t nused;  /* cells in use (their indices: the used list) */
    uint64_t glo, ghi; /* granules touched since the last clear, [glo, ghi) (ghi 0: none) */
    uint32_t next_ext; /* extension blocks taken since the last clear */
} seg_hdr_t;

typedef struct cell_hdr {
    uint64_t key;    /* cell byte + 1; 0 = empty */
    uint32_t n;      /* contributions */
    uint32_t pad;
} cell_hdr_t;

static size_t up64(size_t n) { return (n + 63) & ~(size_t)63; }
static size_t clock_bytes(const pld_hb_geom_t *g) { return (size_t)g->nthreads * sizeof(uint32_t); }
static size_t entry_bytes(const pld_hb_geom_t *g) { return 8 + clock_bytes(g); }
static size_t cell_bytes(const pld_hb_geom_t *g) { return up64(sizeof(cell_hdr_t) + PLD_HB_ENTRIES * entry_bytes(g)); }
static size_t published_at(void) { return 64; }
static size_t used_at(const pld_hb_geom_t *g) { return published_at() + up64(2 * clock_bytes(g)); }
static size_t cells_at(const pld_hb_geom_t *g) { return used_at(g) + up64((size_t)g->ncells * 4); }
static size_t granules_at(const pld_hb_geom_t *g) { return cells_at(g) + (size_t)(g->ncells + 1) * cell_bytes(g); }
static size_t ngranules(const pld_hb_geom_t *g) { return (g->bytes + PLD_HB_GRANULE - 1) / PLD_HB_GRANULE; }

/* Extension blocks: one per 8 granules, at least 64, at most 16384. */
typedef struct ext_blk {
    uint32_t next;
    uint32_t pad;
    rec_t r[PLD_HB_SLOTS];
} ext_blk_t;
static size_t ext_blocks(const pld_hb_geom_t *g)
{
    size_t n = ngranules(g) / 8;
    return n < 64 ? 64 : n > 16384 ? 16384 : n;
}
static size_t heads_at(const pld_hb_geom_t *g) { return up64(granules_at(g) + ngranules(g) * PLD_HB_SLOTS * sizeof(rec_t)); }
static size_t pool_at(const pld_hb_geom_t *g) { return up64(heads_at(g) + ngranules(g) * sizeof(uint32_t)); }

size_t pld_hb_seg_bytes(const pld_hb_geom_t *g)
{
    return pool_at(g) + ext_blocks(g) * sizeof(ext_blk_t);
}

static uint32_t *ext_head(void *seg, const pld_hb_geom_t *g, size_t gi)
{
    return (uint32_t *)((char *)seg + heads_at(g)) + gi;
}

static ext_blk_t *ext_blk(void *seg, const pld_hb_geom_t *g, uint32_t i1)
{
    return (ext_blk_t *)((char *)seg + pool_at(g)) + (i1 - 1);
}

void pld_hb_lock(void *seg)
{
    uint32_t *w = seg;
    for (unsigned spins = 0; __atomic_exchange_n(w, 1u, __ATOMIC_ACQUIRE) != 0; spins++)
        while (__atomic_load_n(w, __ATOMIC_RELAXED) != 0)
            if (++spins % 64 == 0)
                sched_yield(); /* the holder may be a process that is off the CPU */
}

void pld_hb_unlock(void *seg)
{
    __atomic_store_n((uint32_t *)seg, 0u, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ accesses */

static int conflicting(int a, int b)
{
    if (a == PLD_HB_SIGNAL || b == PLD_HB_SIGNAL) /* a notify races with a plain write only */
        return (a == PLD_HB_SIGNAL ? b : a) == PLD_HB_WRITE;
    if (a == PLD_HB_READ && b == PLD_HB_READ)
        return 0;
    return !(a == PLD_HB_ATOMIC && b == PLD_HB_ATOMIC);
}

#define PENDING 16

typedef struct pending {
    pld_hb_race_t r[PENDING];
    int n;
    pld_hb_race_fn fn;
    void *ctx;
} pending_t;

static int same_site(const pld_hb_site_t *a, const pld_hb_site_t *b)
{
    return a->off == b->off && a->len == b->len && a->op == b->op && a->block == b->block;
}

static void note_race(pending_t *p, uint32_t tid, int kind, const pld_hb_site_t *site, size_t lo, size_t hi)
{
    for (int i = 0; i < p->n; i++) {
        pld_hb_race_t *r = &p->r[i];
        if (r->tid == tid && r->kind == kind && same_site(&r->site, site)) {
            if (lo < r->lo)
                r->lo = lo;
            if (hi > r->hi)
                r->hi = hi;
            return;
        }
    }
    if (p->n == PENDING) {
        if (p->fn)
            p->fn(p->ctx, &p->r[0]);
        memmove(&p->r[0], &p->r[1], (PENDING - 1) * sizeof p->r[0]);
        p->n--;
    }
    p->r[p->n++] = (pld_hb_race_t){tid, kind, *site, lo, hi};
}

/* The bytes of mask m as [lo, hi) relative to the granule (m != 0). */
static void mask_range(uint64_t m, size_t *lo, size_t *hi)
{
    *lo = (size_t)__builtin_ctzll(m);
    *hi = 64 - (size_t)__builtin_clzll(m);
}

uint64_t pld_hb_access(void *seg, const pld_hb_geom_t *g, uint32_t tid, const uint32_t *clk, int kind,
                       pld_hb_site_t site, size_t off, size_t len, pld_hb_race_fn fn, void *ctx)
{
    if (off >= g->bytes || !len)
        return 0;
    if (len > g->bytes - off)
        len = g->bytes - off;
    rec_t *all = (rec_t *)((char *)seg + granules_at(g));
    pending_t p;
    p.n = 0;
    p.fn = fn;
    p.ctx = ctx;
    uint64_t evicted = 0;
    size_t end = off + len;
    seg_hdr_t *h = seg;
    uint64_t g_first = off / PLD_HB_GRANULE, g_end = (end + PLD_HB_GRANULE - 1) / PLD_HB_GRANULE;
    if (!h->ghi || g_first < h->glo)
        h->glo = g_first;
    if (g_end > h->ghi)
        h->ghi = g_end;
    for (size_t gi = off / PLD_HB_GRANULE; gi * PLD_HB_GRANULE < end; gi++) {
        size_t g0 = gi * PLD_HB_GRANULE;
        size_t a = off > g0 ? off - g0 : 0, b = end - g0 < PLD_HB_GRANULE ? end - g0 : PLD_HB_GRANULE;
        uint64_t m = (b - a == 64 ? ~0ull : ((1ull << (b - a)) - 1)) << a;
        rec_t *rs = &all[gi * PLD_HB_SLOTS];
        rec_t *same = NULL, *free_slot = NULL;
        /* the granule's own records, then its extension blocks */
        uint32_t nxt = *ext_head(seg, g, gi);
        for (rec_t *blk = rs; blk;) {
            for (int i = 0; i < PLD_HB_SLOTS; i++) {
                rec_t *r = &blk[i];
                if (!r->mask) {
                    if (!free_slot)
                        free_slot = r;
                    continue;
                }
                uint32_t u = r->tk >> 2;
                int rk = r->tk & 3;
                if (u == tid && r->epoch == clk[tid] && rk == kind && r->off == site.off && r->len == site.len &&
                    r->op == site.op && r->block == site.block)
                    same = r;
                uint64_t ov = r->mask & m;
                if (!ov)
                    continue;
                int ordered = u == tid || r->epoch <= clk[u];
                if (!ordered && conflicting(kind, rk)) {
                    size_t lo, hi;
                    mask_range(ov, &lo, &hi);
                    pld_hb_site_t rsite = {r->off, r->len, r->op, r->block};
                    note_race(&p, u, rk, &rsite, g0 + lo, g0 + hi);
                }
                /* what this access supersedes, of the records ordered before
                 * it: a write all of them; a read or an atomic add only the
                 * records of its own kind (whatever conflicts with those
                 * conflicts with it too; an atomic add does not conflict with a
                 * later atomic add that an earlier plain access does) */
                if (ordered && r != same && (kind == PLD_HB_WRITE || rk == kind)) {
                    r->mask &= ~m;
                    if (!r->mask && !free_slot)
                        free_slot = r;
                }
            }
            if (nxt) {
                ext_blk_t *e = ext_blk(seg, g, nxt);
                blk = e->r;
                nxt = e->next;
            } else {
                blk = NULL;
            }
        }
        if (same) {
            same->mask |= m;
            continue;
        }
        rec_t *slot = free_slot;
        /* full: forget a notify's record first, if there is one (not counted:
         * signal cells take many notifies, docs/races.md) */
        for (int i = 0; i < PLD_HB_SLOTS && !slot; i++)
            if ((rs[i].tk & 3) == PLD_HB_SIGNAL)
                slot = &rs[i];
        if (!slot && h->next_ext < ext_blocks(g)) {
            /* full: one more block of records for this granule */
            uint32_t nb = ++h->next_ext;
            ext_blk_t *e = ext_blk(seg, g, nb);
            memset(e, 0, sizeof *e);
            e->next = *ext_head(seg, g, gi);
            *ext_head(seg, g, gi) = nb;
            slot = &e->r[0];
        }
        if (!slot) {
            /* full and no block left: forget a read if there is one, else the oldest record */
            for (int i = 0; i < PLD_HB_SLOTS && !slot; i++)
                if ((rs[i].tk & 3) == PLD_HB_READ)
                    slot = &rs[i];
            for (int i = 0; i < PLD_HB_SLOTS && !slot; i++)
                if (!slot || rs[i].epoch < slot->epoch)
                    slot = &rs[i];
            evicted++;
        }
        slot->mask = m;
        slot->epoch = clk[tid];
        slot->off = site.off;
        slot->len = (uint16_t)site.len;
        slot->op = site.op;
        slot->block = site.block;
        slot->tk = (uint16_t)(tid << 2 | (uint32_t)kind);
    }
    for (int i = 0; i < p.n; i++)
        if (fn)
            fn(ctx, &p.r[i]);
    return evicted;
}

/* ------------------------------------------------------------ signal cells */

static cell_hdr_t *cell_at(void *seg, const pld_hb_geom_t *g, uint32_t i)
{
    return (cell_hdr_t *)((char *)seg + cells_at(g) + (size_t)i * cell_bytes(g));
}

static int32_t *entry_value(cell_hdr_t *c, const pld_hb_geom_t *g, uint32_t j)
{
    return (int32_t *)((char *)(c + 1) + (size_t)j * entry_bytes(g));
}

static uint32_t *entry_clock(cell_hdr_t *c, const pld_hb_geom_t *g, uint32_t j)
{
    return (uint32_t *)((char *)entry_value(c, g, j) + 8);
}

/* The table slot of the cell at byte `cell`: found, or (create) a new one;
 * NULL when absent (or no room). */
static cell_hdr_t *find_cell(void *seg, const pld_hb_geom_t *g, size_t cell, int create)
{
    if (!g->ncells)
        return NULL;
    uint64_t key = (uint64_t)cell + 1;
    uint32_t h = (uint32_t)(((uint64_t)(cell / 4) * 2654435761u) % g->ncells);
    for (uint32_t k = 0; k < g->ncells; k++) {
        cell_hdr_t *c = cell_at(seg, g, (h + k) % g->ncells);
        if (c->key == key)
            return c;
        if (!c->key) {
            if (!create)
                return NULL;
            c->key = key;
            c->n = 0;
            seg_hdr_t *sh = seg;
            ((uint32_t *)((char *)seg + used_at(g)))[sh->nused++] = (h + k) % g->ncells;
            return c;
        }
    }
    return NULL;
}

static void drop_first(cell_hdr_t *c, const pld_hb_geom_t *g)
{
    memmove(entry_value(c, g, 0), entry_value(c, g, 1), (size_t)(c->n - 1) * entry_bytes(g));
    c->n--;
}

/* The table is full: the cells it has no room for share the overflow cell,
 * one merged release set (every notify of any of them appends to it, nothing
 * removes from it until the next clear), and a wait on any of them acquires
 * all of it: it orders more than the notifies do, never less. */
static int overflow_release(void *seg, const pld_hb_geom_t *g, int32_t v, int set, const uint32_t *clk)
{
    cell_hdr_t *c = cell_at(seg, g, g->ncells);
    if (!set && v < 0)
        return 1; /* the epilogue: keep the clocks */
    if (c->n == PLD_HB_ENTRIES) {
        pld_hb_join(entry_clock(c, g, 1), entry_clock(c, g, 0), g->nthreads);
        drop_first(c, g);
    }
    *entry_value(c, g, c->n) = v;
    memcpy(entry_clock(c, g, c->n), clk, clock_bytes(g));
    c->n++;
    return 1;
}

int pld_hb_release(void *seg, const pld_hb_geom_t *g, size_t cell, int32_t v, int set, const uint32_t *clk)
{
    cell_hdr_t *c = find_cell(seg, g, cell, 1);
    if (!c)
        return g->ncells ? overflow_release(seg, g, v, set, clk) : -1;
    if (set)
        c->n = 0;
    if (!set && v < 0) {
        /* the epilogue: consume the oldest contributions, release nothing */
        int64_t need = -(int64_t)v;
        while (need > 0 && c->n > 0) {
            int32_t *first = entry_value(c, g, 0);
            if (*first <= need) {
                need -= *first > 0 ? *first : 0;
                drop_first(c, g);
            } else {
                *first -= (int32_t)need;
                need = 0;
            }
        }
        return 0;
    }
    if (c->n == PLD_HB_ENTRIES) {
        /* full: the two oldest become one (their clocks joined) */
        *entry_value(c, g, 1) += *entry_value(c, g, 0);
        pld_hb_join(entry_clock(c, g, 1), entry_clock(c, g, 0), g->nthreads);
        drop_first(c, g);
    }
    *entry_value(c, g, c->n) = v;
    memcpy(entry_clock(c, g, c->n), clk, clock_bytes(g));
    c->n++;
    return 0;
}

static int holds(int cmp, int64_t v, int32_t expected)
{
    return cmp == 0 ? v == expected : cmp == 1 ? v >= expected : (uint32_t)(int32_t)v >= (uint32_t)expected;
}

void pld_hb_acquire(void *seg, const pld_hb_geom_t *g, size_t cell, int cmp, int32_t expected, uint32_t *clk)
{
    cell_hdr_t *c = find_cell(seg, g, cell, 0);
    if (!c && g->ncells && ((seg_hdr_t *)seg)->nused == g->ncells) {
        /* maybe one of the cells beyond the table: all of the overflow set */
        cell_hdr_t *o = cell_at(seg, g, g->ncells);
        for (uint32_t j = 0; j < o->n; j++)
            pld_hb_join(clk, entry_clock(o, g, j), g->nthreads);
        return;
    }
    if (!c)
        return;
    uint32_t upto = c->n;
    int64_t sum = 0;
    for (uint32_t j = 0; j < c->n; j++) {
        sum += *entry_value(c, g, j);
        if (holds(cmp, sum, expected)) {
            upto = j + 1;
            break;
        }
    }
    for (uint32_t j = 0; j < upto; j++)
        pld_hb_join(clk, entry_clock(c, g, j), g->nthreads);
}

void pld_hb_clear(void *seg, const pld_hb_geom_t *g)
{
    /* only what was used: the table and the granules are mostly untouched
     * pages, and this runs between every two dispatches */
    seg_hdr_t *h = seg;
    const uint32_t *used = (const uint32_t *)((char *)seg + used_at(g));
    for (uint32_t i = 0; i < h->nused; i++) {
        cell_hdr_t *c = cell_at(seg, g, used[i]);
        c->key = 0;
        c->n = 0;
    }
    h->nused = 0;
    if (g->ncells)
        cell_at(seg, g, g->ncells)->n = 0; /* the overflow set */
    if (h->ghi > h->glo) {
        memset((char *)seg + granules_at(g) + h->glo * PLD_HB_SLOTS * sizeof(rec_t), 0,
               (size_t)(h->ghi - h->glo) * PLD_HB_SLOTS * sizeof(rec_t));
        if (h->next_ext) /* the blocks are zeroed when taken */
            memset(ext_head(seg, g, h->glo), 0, (size_t)(h->ghi - h->glo) * sizeof(uint32_t));
    }
    h->next_ext = 0;
    h->glo = h->ghi = 0;
}

void pld_hb_publish(void *seg, const pld_hb_geom_t *g, int slot, const uint32_t *clk)
{
    memcpy((char *)seg + published_at() + (size_t)(slot & 1) * clock_bytes(g), clk, clock_bytes(g));
}

void pld_hb_join_published(const void *seg, const pld_hb_geom_t *g, int slot, uint32_t *clk)
{
    pld_hb_join(clk, (const uint32_t *)((const char *)seg + published_at() + (size_t)(slot & 1) * clock_bytes(g)),
                g->nthreads);
}
