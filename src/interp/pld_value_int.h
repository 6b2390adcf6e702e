/* pld_value_int.h - runtime values of the interpreter (internal: the values
 * layer of pld_interp_int.h): scalars, tensors (views of
 * refcounted buffers, with a written-element bitmap for output assembly),
 * tiles (static physical shape + runtime valid shape), tuples and arrays.
 *
 * Ownership: a pld_value_t holding an object owns one reference; copy it with
 * pld_value_retain and drop it with pld_value_release. Buffers are shared by
 * every view of them. All memory goes through pld_mem_*. */
#ifndef PLD_VALUE_INT_H
#define PLD_VALUE_INT_H

#include "pld_kern.h"
#include "pld_ast.h"
#include "pld_size.h"

#include <stddef.h>
#include <stdint.h>

typedef enum pld_vkind {
    PLD_V_NONE = 0,   /* no value (side-effect op result, unset slot) */
    PLD_V_INT,        /* integer scalar (dt: INT*, UINT*, INDEX, BOOL, TASK_ID) */
    PLD_V_FLOAT,      /* float scalar (dt: FP16, BF16, FP32, FP64) held as double */
    PLD_V_TENSOR,
    PLD_V_TILE,
    PLD_V_TUPLE,
    PLD_V_ARRAY,
    PLD_V_PTR,        /* window buffer handle: i = buffer index */
    PLD_V_CTX,        /* comm context handle: i = domain index */
    PLD_V_HANDLE,     /* prefetch handle: i = PLD_HANDLE_* */
    PLD_V_UNAVAIL     /* produced by a dispatch that ran on another rank */
} pld_vkind_t;

/* The kinds of PLD_V_HANDLE (pl.prefetch.*: no state on a CPU). */
enum { PLD_HANDLE_PREFETCH_CTX = 1, PLD_HANDLE_ASYNC_EVENT, PLD_HANDLE_ASYNC_SESSION };

typedef struct pld_obj pld_obj_t;

typedef struct pld_value {
    pld_vkind_t kind;
    pld_dtype_t dt;
    union {
        int64_t i;
        double f;
        pld_obj_t *obj;
    } u;
} pld_value_t;

/* Buffer: the bytes behind tensors. */
typedef struct pld_buffer {
    int refs;
    size_t bytes;
    void *data;
    int external;         /* memory not owned (window memory) */
    uint8_t *written;     /* bitmap over elements of `track_dt`, or NULL */
    pld_dtype_t track_dt;
    int64_t track_n;
    uint8_t *shadow;      /* --poison: one byte per data byte, nonzero = written (borrowed), or NULL */
} pld_buffer_t;

typedef enum pld_okind { PLD_O_TENSOR, PLD_O_TILE, PLD_O_TUPLE, PLD_O_ARRAY } pld_okind_t;

struct pld_obj {
    int refs;
    pld_okind_t kind;
};

typedef struct pld_tensor {
    pld_obj_t hdr;
    pld_buffer_t *buf;
    pld_dtype_t dt;
    int rank;
    int64_t offset;                 /* elements from buf->data */
    int64_t shape[PLD_MAX_RANK];
    int64_t strides[PLD_MAX_RANK];  /* elements */
    int64_t valid[PLD_MAX_RANK];    /* valid extent per dim (== shape when full) */
    int is_dist;                    /* a window-bound DistributedTensor */
    int winbuf;                     /* window buffer index, -1 for plain tensors */
} pld_tensor_t;

typedef struct pld_tile {
    pld_obj_t hdr;
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_MAX_RANK];    /* physical (static) */
    int64_t valid[PLD_MAX_RANK];    /* runtime valid extent */
    pld_mem_t mem;
    void *data;                     /* packed row-major over shape */
    uint8_t *unw;                   /* --poison: one byte per element, nonzero = never written (a
                                       pl.tile.create without a value); NULL = every element written */
    pld_span_t born;                /* --poison: where it was created (with unw) */
    struct pld_tile *win_of;        /* pl.tile.slice of an Acc tile: that tile (a reference), whose storage
                                       the window shares in PyPTO (pto.subview): an accumulating matmul into
                                       the window writes it there too (pld_exec_matmul); NULL otherwise */
    int64_t win_off[PLD_MAX_RANK];  /* the window's offset in win_of */
} pld_tile_t;

typedef struct pld_tuple {
    pld_obj_t hdr;
    int n;
    pld_value_t items[];
} pld_tuple_t;

typedef struct pld_array {
    pld_obj_t hdr;
    pld_dtype_t dt;
    int64_t n;
    void *data;
} pld_array_t;

/* ---- scalars ---- */
pld_value_t pld_v_int(pld_dtype_t dt, int64_t v);   /* wraps v to the dtype's width */
pld_value_t pld_v_float(pld_dtype_t dt, double v);  /* rounds v to the dtype (FP16/BF16/FP32) */
pld_value_t pld_v_none(void);
int pld_v_is_scalar(const pld_value_t *v);
double pld_v_as_f(const pld_value_t *v);
int64_t pld_v_as_i(const pld_value_t *v);           /* float: truncated toward zero */
/* Converts a scalar to dtype dt (wrap for ints, RNE rounding for floats). */
pld_value_t pld_v_convert(const pld_value_t *v, pld_dtype_t dt);

/* ---- references ---- */
void pld_value_retain(const pld_value_t *v);
void pld_value_release(pld_value_t *v);   /* sets *v to NONE */
/* Replaces *dst with src (retaining src first). */
void pld_value_set(pld_value_t *dst, const pld_value_t *src);

/* Largest tensor/tile/array the interpreter allocates (1 TiB): bigger shapes
 * (or shapes whose size overflows) are refused like an allocation failure. */
#define PLD_MAX_BYTES ((int64_t)1 << 40)
/* Bytes of a packed array of `shape`, or -1 when above PLD_MAX_BYTES. */
int64_t pld_value_bytes(pld_dtype_t dt, int rank, const int64_t *shape);

/* ---- objects (return NULL on OOM or above PLD_MAX_BYTES) ---- */
pld_buffer_t *pld_buffer_new(size_t bytes, int zero);
pld_buffer_t *pld_buffer_wrap(void *data, size_t bytes);  /* external memory */
void pld_buffer_release(pld_buffer_t *b);
/* Starts tracking written elements of b (dtype dt, n elements). */
int pld_buffer_track(pld_buffer_t *b, pld_dtype_t dt, int64_t n);

/* A packed tensor over a new buffer (zeroed when zero != 0). */
pld_tensor_t *pld_tensor_new(pld_dtype_t dt, int rank, const int64_t *shape, int zero);
/* A view of buf: packed strides for shape, starting at element offset. Takes a
 * reference to buf. */
pld_tensor_t *pld_tensor_view(pld_buffer_t *buf, pld_dtype_t dt, int rank, const int64_t *shape, int64_t offset);
pld_tensor_t *pld_tensor_copy_desc(const pld_tensor_t *t); /* same buffer, new descriptor */
pld_tile_t *pld_tile_new(pld_dtype_t dt, int rank, const int64_t *shape, pld_mem_t mem);
/* A tile over data (packed row-major over shape, allocated with pld_mem_*:
 * a tile of the cluster's pipe, pld_cluster.h), valid extent `valid`.
 * Takes data (freed on failure too). */
pld_tile_t *pld_tile_adopt(pld_dtype_t dt, int rank, const int64_t *shape, const int64_t *valid, pld_mem_t mem,
                           void *data);
pld_tuple_t *pld_tuple_new(int n);
pld_array_t *pld_array_new(pld_dtype_t dt, int64_t n);

pld_value_t pld_v_obj(pld_obj_t *o, pld_dtype_t dt); /* takes the object's reference */

static inline pld_tensor_t *pld_v_tensor(const pld_value_t *v) { return (pld_tensor_t *)v->u.obj; }
static inline pld_tile_t *pld_v_tile(const pld_value_t *v) { return (pld_tile_t *)v->u.obj; }
static inline pld_tuple_t *pld_v_tuple(const pld_value_t *v) { return (pld_tuple_t *)v->u.obj; }
static inline pld_array_t *pld_v_array(const pld_value_t *v) { return (pld_array_t *)v->u.obj; }

static inline pld_value_t pld_tile_value(pld_tile_t *t) { return pld_v_obj(&t->hdr, t->dt); }
/* A writable tile: v's own when v holds the only reference, else a copy that
 * replaces v's. NULL on OOM (v unchanged). */
pld_tile_t *pld_tile_cow(pld_value_t *v);
/* --poison: elements [flat box of the tile's packed layout] written. pld_tile_written_all forgets
 * the record (an op that wrote the tile in ways not tracked element by element: never a false
 * report). */
void pld_tile_written_box(pld_tile_t *t, const int64_t *off, const int64_t *ext);
void pld_tile_written_all(pld_tile_t *t);
/* Text "[a, b, c]" of a shape into buf (size n). */
void pld_shape_str(char *buf, size_t n, int rank, const int64_t *s);

/* Kernel views of a tensor (full shape) and of a tile's physical / valid region. */
void pld_tensor_kview(const pld_tensor_t *t, pld_view_t *v);
void pld_tile_kview(const pld_tile_t *t, pld_view_t *v, int valid_only);
/* Element pointer of a tensor at a multi-index (no bounds check). */
void *pld_tensor_at(const pld_tensor_t *t, const int64_t *idx);
/* Marks the elements of the sub-box [off, off+ext) of t as written (no-op when
 * the buffer is not tracked). */
void pld_tensor_mark_written(const pld_tensor_t *t, const int64_t *off, const int64_t *ext);
/* Calls fn(ctx, byte offset from buf->data, bytes) for each contiguous run of
 * the box [off, off+ext) of t (one element for a rank-0 tensor). */
void pld_tensor_box_runs(const pld_tensor_t *t, const int64_t *off, const int64_t *ext,
                         void (*fn)(void *ctx, int64_t at, int64_t bytes), void *ctx);
/* Marks the box's bytes written in the buffer's --poison shadow (no-op without one). */
void pld_tensor_shadow_mark(const pld_tensor_t *t, const int64_t *off, const int64_t *ext);

/* Human-readable kind, e.g. "tile", "tensor". */
const char *pld_vkind_name(pld_vkind_t k);

#endif
