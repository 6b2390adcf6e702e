/* pld_cgen_int.h - internals shared by the code generator's files. Not a
 * public header (pld_cgen.h is).
 *
 *   pld_cgen.c          the driver: the op table, the emitter core (errors,
 *                       output, sites), the scan that gives every local its
 *                       C kind, runtime calls (rt->op), one compiled unit
 *                       (a kernel, a pl.at scope, a pl.spmd grid) and the
 *                       entry points
 *   pld_cgen_stmt.c     statements and control flow: assignments, moves
 *                       between locals, pl.yield_, for / while / if, return
 *   pld_cgen_scalar.c   scalar expressions: literals, names, module
 *                       constants, operators, pl.const / cast / min / max,
 *                       index lists
 *   pld_cgen_mem.c      memory and layout: the tile and tensor value of an
 *                       expression (dispatch), tile descriptors and storage,
 *                       element read / write, load, store, create / full,
 *                       move
 *   pld_cgen_compute.c  the compute ops: element-wise (inline loops for
 *                       FP32 / FP16 / BF16 / INT32, the kernel library
 *                       otherwise), row / column reductions, matmul, cast
 *   pld_cgen_sys.c      the system family: arrays, TaskIds, scopes inside a
 *                       kernel, the cores of a cluster, no-effect ops, tokens
 *   pld_cgen_rtop.c     the runtime boundary: pld.* ops handed to the
 *                       runtime with operands evaluated in C (pc_rt.op)
 *   pld_cgen_layout.c   layout, valid shapes, gathers / scatters, sorts
 *                       and the GM gather family (the kernel library's
 *                       pld_kern_layout.c / pld_kern_gather.c)
 *   pld_cgen_ext.c      the element-wise extension ops (sin .. random,
 *                       cmp / sel, partial ops), expands, row / column
 *                       expands, broadcasting and non-inline element-wise
 *                       ops, reductions: the kernel library through rt->k
 *   pld_cgen_mm.c       the matmul family, cast, MX-layout loads
 *   pld_cgen_tensor.c   pl.tensor.* ops (storage from per-op pools)
 *   pld_cgen_fuse.c     chains of element-wise statements fused into one
 *                       loop, intermediates without storage (issue 44)
 *   pld_cgen_dist.c     distributed: ops the runtime runs for a tile
 *                       result, pld.tile.remote_load / remote_store read and
 *                       written directly in a peer's mapped window
 *
 * The int functions return 0 (or a temp number >= 0) on success and -1 once
 * g->failed is set (pld_cg_fail). */
#ifndef PLD_CGEN_INT_H
#define PLD_CGEN_INT_H

#include "pld_cgen.h"
#include "pld_buf.h"
#include "pld_check.h"
#include "pld_dtype.h"

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- state */

enum { SK_NONE = 0, SK_INT, SK_FLT, SK_TENSOR, SK_TILE, SK_CTX, SK_ARRAY, SK_TOKEN };

typedef struct cslot {
    int kind;          /* SK_* */
    pld_dtype_t dt;    /* scalars, tiles */
    size_t bytes;      /* tiles: storage */
    pld_mem_t mem;     /* tiles: the memory space of the first tile it holds */
    unsigned mems;     /* tiles: bit m: a tile of memory space m is bound to it (the capacity check) */
    const pld_type_t *fixed; /* tensors: a parameter of static shape the unit never assigns (its shape,
                                checked once at entry, is constant in the element accesses), else NULL */
    int nodata;        /* tiles: only fused chains define and read it: no storage (pld_cgen_fuse.c) */
    int accwin;        /* tiles: assigned a pl.tile.slice of an Acc tile (a window sharing its storage in
                          PyPTO; sim writes an accumulating matmul into it through, native refuses that) */
} cslot_t;

typedef struct cg {
    const pld_program_t *p;
    const pld_func_t *fn;
    cslot_t *slots;
    pld_buf_t out;     /* the function body */
    int ind;
    int ntmp;
    const pld_expr_t **sites;
    int nsites, capsites;
    pld_buf_t tmpdecl; /* storage of temporary tiles (declared at the top) */
    int failed;
    char *err;
    size_t errn;
    /* loops with carried values (innermost last): the carried names */
    const pld_expr_t *carried[32];
    /* each loop's continue label (C label cN, before its tick and increment)
     * and whether a `continue` jumped to it */
    int cont[32];
    unsigned char cont_used[32];
    int depth;
    int32_t cur_seq;   /* pld_stmt_t.seq of the statement being generated */
    const pld_expr_t *target; /* the name being assigned (where the interpreter reports a tile check) */
    int defer_targets; /* the final yield of the innermost loop sets the carried names only (gen_for) */
    int callees[32];   /* kernel functions this unit calls (pld_cgen_sys.c): compiled into its source */
    int ncallees;
    pld_buf_t fns;     /* static functions of the unit (pl.split_aiv lanes), after it; protos: before */
    pld_buf_t protos;
    const int32_t *uparams; /* the unit's parameters (slots; a scope's captures), in args[] order */
    int unp;
    int *fuse_total;   /* per slot: occurrences of its name in the function (pld_cg_fuse_plan) */
    int64_t ub_live;   /* the most tile bytes a capacity check can count (pld_cg_ub_site), -1: unbounded */
} cg_t;

/* ---------------------------------------------------------------- small helpers */

/* a fresh temp number (C local tN) */
static inline int tmp(cg_t *g)
{
    return g->ntmp++;
}

static inline int is_float_dt(pld_dtype_t d)
{
    return pld_dtype_is_float(d);
}

/* bytes of a tile type with constant dims, -1 otherwise */
static inline int64_t tile_bytes(const pld_type_t *t)
{
    if (!t || t->kind != PLD_TY_TILE || t->rank < 1 || t->rank > 5)
        return -1;
    int64_t n = pld_type_static_numel(t);
    if (n < 0)
        return -1;
    return n * pld_dtype_storage_bytes(t->dtype);
}

static inline int esize(pld_dtype_t dt)
{
    return pld_dtype_storage_bytes(dt);
}

static inline const pld_expr_t *pld_op_bound(const pld_expr_t *e, int i)
{
    return e->bound ? e->bound[i] : NULL;
}

static inline int is_yield(const pld_expr_t *v)
{
    return v && v->kind == PLD_EX_CALL && v->op == PLD_OPID_PL_YIELD_;
}

static inline const char *opname(const pld_expr_t *e)
{
    return e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name : "call";
}

/* ---------------------------------------------------------------- pld_cgen.c */

/* Records the first error ("file:line:col: message" into g->err); returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int pld_cg_fail(cg_t *g, pld_span_t sp, const char *fmt, ...);
/* One line of the function body at the current indentation. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pld_cg_emit(cg_t *g, const char *fmt, ...);
/* The site number of expression e (pld_cgen_t.sites: errors and runtime ops). */
int pld_cg_site(cg_t *g, const pld_expr_t *e);
/* Runs expression e in the runtime; the result as kind `want` (SK_NONE:
 * ignored; SK_TILE / SK_TENSOR: in pc_out tN). Returns the temp. */
int pld_cg_exec(cg_t *g, const pld_expr_t *e, int want);
/* pc_out tO of a runtime op as kind `want` (a scalar in a fresh C local, else o) */
int pld_cg_out_as(cg_t *g, int o, int want);
/* The static type statement s gives local `slot` where it defines it, NULL when it does not. */
const pld_type_t *pld_cg_def_type_stmt(const pld_stmt_t *s, int slot);

/* ---------------------------------------------------------------- pld_cgen_stmt.c */

/* The statements of block b; carried: the names the enclosing loop carries
 * (the final pl.yield_ sets them). */
int pld_cg_block(cg_t *g, const pld_block_t *b, const pld_expr_t *carried);

/* ---------------------------------------------------------------- pld_cgen_scalar.c */

/* A scalar expression's value in a fresh C local; *fl: 1 for a double. */
int pld_cg_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt);
/* integer t<t> wrapped to dt in a fresh C local (an annotated store): its number */
int pld_cg_wrap_int(cg_t *g, int t, pld_dtype_t dt);
/* one (possibly list) index/offset argument as a C array; *n entries; -1 absent */
int pld_cg_ilist(cg_t *g, const pld_expr_t *e, int *n);

/* ---------------------------------------------------------------- pld_cgen_mem.c */

/* tensor.read / tile.read (write = 0), tensor.write / tile.write (1):
 * bounds-checked element access. */
int pld_cg_elem_access(cg_t *g, const pld_expr_t *e, int write, int *fl, pld_dtype_t *dt);
/* tensor.write / tile.write: the element store (0, or -1) */
int pld_cg_elem_write(cg_t *g, const pld_expr_t *e);
/* the capacity check after a tile is bound to local `slot` (pc_rt.tile_bound) */
void pld_cg_bound_tile(cg_t *g, int slot, pld_mem_t mem, const pld_expr_t *at);
/* a capacity check of local `slot` at the current statement: g->ub_live
 * raised to the bytes it can count (every tile live there, with its storage) */
void pld_cg_ub_site(cg_t *g, int slot);
/* a tile operand: a local tile (its C name in nm), or a nested tile
 * expression evaluated into a temporary first */
int pld_cg_tile_operand(cg_t *g, const pld_expr_t *a, const pld_expr_t *e, char *nm);
/* sets the descriptor `d` (a C lvalue) to the static type t (shape = valid) */
int pld_cg_set_desc(cg_t *g, const char *d, const pld_type_t *t, const pld_expr_t *e);
/* copies the descriptor fields of tile `src` into `dst` (not the data pointer) */
void pld_cg_copy_desc(cg_t *g, const char *dst, const char *src);
/* copies a whole tile (descriptor and physical data) */
void pld_cg_copy_tile(cg_t *g, const char *dst, const char *src, pld_dtype_t dt);
/* storage for a temporary tile of `bytes` (allocated once per block at entry) */
int pld_cg_temp_tile(cg_t *g, size_t bytes);
/* writes the tile value of expression e into descriptor `dst` (its storage:
 * `room` bytes). Operands may be dst itself only for element-wise ops. */
int pld_cg_tile_into(cg_t *g, const pld_expr_t *e, const char *dst, size_t room);
/* the tensor value of e into descriptor `dst` */
int pld_cg_tensor_into(cg_t *g, const pld_expr_t *e, const char *dst);

/* ---------------------------------------------------------------- pld_cgen_compute.c */

/* element-wise binary op codes (PC_*; *scalar: the tile-scalar form), -1 when op is none */
int pld_cg_ew_binary(int op, int *scalar);
/* element-wise unary op codes (PC_*), -1 when op is none */
int pld_cg_ew_unary(int op);
/* an element-wise op (pld_cg_ew_binary / pld_cg_ew_unary) into dst */
int pld_cg_ew(cg_t *g, const pld_expr_t *e, const char *dst);
/* How an inline element-wise loop holds a dtype: storage type, compute type,
 * the load and store conversions (printf formats of one %s; FP16 / BF16
 * computed in float and rounded on every store, as the kernel library does);
 * NULL st: no inline loop for the dtype */
typedef struct pld_cg_ewty {
    const char *st, *ct, *ld, *sto;
    int fl;
} pld_cg_ewty_t;
pld_cg_ewty_t pld_cg_ew_type(pld_dtype_t dt);
/* 1 when element-wise op e is emitted as an inline loop (static shapes, a
 * dtype of pld_cg_ew_type, one dtype and shape for two tile operands) */
int pld_cg_ew_inline(const pld_expr_t *e);
/* the C form of op over x (and y) in the compute type (fl: float), NULL when none */
const char *pld_cg_ew_cbody(int op, int fl);
/* `const CT name = ...;`: scalar t<v> (a double when fl) rounded to dtype dt
 * first, as the library does, then in the compute type */
void pld_cg_ew_scalar_y(cg_t *g, pld_dtype_t dt, int v, int fl, const char *name);

/* ---------------------------------------------------------------- pld_cgen_fuse.c */

/* Before generating a unit's body: finds its chains of element-wise
 * statements and marks the slots they alone define and read (cslot_t.nodata). */
int pld_cg_fuse_plan(cg_t *g, const pld_block_t *body);
/* statement i of block b begins a chain of at least two fusable statements:
 * emits it as one loop and returns the number of statements done; 0 when
 * none begins there; -1 after an error */
int pld_cg_fuse(cg_t *g, const pld_block_t *b, int i);
/* The ops below take s, the site of e. */
/* pl.tile.matmul / matmul_acc into dst (room: its storage) */
int pld_cg_matmul(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s);
/* pl.tile.cast into dst */
int pld_cg_cast(cg_t *g, const pld_expr_t *e, const char *dst, int s);
/* a row / column reduction into dst */
int pld_cg_reduce(cg_t *g, const pld_expr_t *e, const char *dst, int s);

/* ---------------------------------------------------------------- pld_cgen_mm.c */

/* the matmul family (pl.tile.matmul, matmul_acc, matmul_bias, gemv*,
 * batch_matmul*, matmul_mx*) into dst (room: its storage); -2 when e is not one */
int pld_cg_mm(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s);
/* pl.tile.cast into dst (its rounding mode) */
int pld_cg_mm_cast(cg_t *g, const pld_expr_t *e, const char *dst, int s);
/* a cast's rounding mode argument m (NULL: absent) as pld_round_k_t */
int pld_cg_round_mode(const pld_expr_t *m);
/* pl.tile.load of an MX-layout tensor (local src, offsets in C array t<off>),
 * after rt->load made the region checks: the logical scales into dst */
int pld_cg_mm_load_mx(cg_t *g, const pld_expr_t *e, const char *dst, int src, int off, int s);

/* ---------------------------------------------------------------- pld_cgen_tensor.c */

/* a pl.tensor.* op compiled into descriptor dst (its storage from the op's
 * pool); -2 when e is not one this file compiles (or its shapes are not
 * static): the caller leaves it to the runtime */
int pld_cg_tensor_op(cg_t *g, const pld_expr_t *e, const char *dst, int s);
/* for pld_cgen_tlay.c: the static shape of tensor type t (its rank, or -1);
 * a tensor operand's C name in nm (a nested expression evaluated first); the
 * result descriptor rN over a buffer of the op's pool (ops: the operands'
 * C names), returns N */
int pld_cg_tshape(const pld_type_t *t, int64_t *s);
int pld_cg_toperand(cg_t *g, const pld_expr_t *a, const pld_expr_t *e, char *nm);
int pld_cg_tresult(cg_t *g, int site, pld_dtype_t dt, int r, const int64_t *s, const char *const *ops, int nops);
/* pld_cg_tresult of a shape known at run time only: the C array `shv` (r
 * int64_t entries) the generated code holds */
int pld_cg_tresult_rt(cg_t *g, int site, pld_dtype_t dt, int r, const char *shv, const char *const *ops, int nops);
/* the rank of tensor type t (static dims or not), or -1 */
int pld_cg_trank(const pld_type_t *t);

/* ---------------------------------------------------------------- pld_cgen_tlay.c */

/* a pl.tensor.* layout / gather / scatter / sort / fillpad op into descriptor
 * dst; -2 when not compiled here (or shapes not static) */
int pld_cg_tlay_op(cg_t *g, const pld_expr_t *e, const char *dst, int s);
/* `d, c = pl.tensor.gather(..., kvalue=...)`: the compare form (targets: two tensor names) */
int pld_cg_tensor_gather_compare(cg_t *g, const pld_expr_t *targets, const pld_expr_t *e);

/* ---------------------------------------------------------------- pld_cgen_dist.c */

/* a tile op the runtime runs: its result copied into dst (need bytes) */
int pld_cg_tile_exec(cg_t *g, const pld_expr_t *e, const char *dst, int64_t need);
/* pld.tile.remote_load into dst (need bytes) */
int pld_cg_remote_load(cg_t *g, const pld_expr_t *e, const char *dst, int64_t need);
/* pld.tile.remote_store (a statement) */
int pld_cg_remote_store(cg_t *g, const pld_expr_t *e);

/* ---------------------------------------------------------------- pld_cgen_sys.c
 * Each returns -2 when e (s) is not of the system family. */

/* a scalar op of the family (array element, TaskId, core facts, buffer bases, prefetch wait) */
int pld_cg_sys_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt);
/* an expression statement of the family */
int pld_cg_sys_stmt(cg_t *g, const pld_expr_t *e);
/* pl.dump_tag(t) / pl.tensor.dump_tag(t): when the run has --dump
 * (pc_rt.sys_info PC_INFO_DUMP), t's descriptor goes to pc_rt.dump (the
 * interpreter's binding hands it to the tool's writer); else nothing. The
 * caller takes the operand as the value of an expression form. */
int pld_cg_dump_tag(cg_t *g, const pld_expr_t *e);
/* the value of e into an array or token local `slot` */
int pld_cg_sys_assign(cg_t *g, int slot, const pld_expr_t *e);
/* array local `from` copied into `to` */
int pld_cg_sys_move(cg_t *g, int to, int from);
/* `a[i] = v` of an array a (statement s) */
int pld_cg_sys_store(cg_t *g, const pld_stmt_t *s);
/* a tile op of the family (tpop) into dst */
int pld_cg_sys_tile(cg_t *g, const pld_expr_t *e, const char *dst, size_t room);
/* a with-statement inside a kernel (pl.scope, pl.manual_scope, pl.cluster, pl.at) */
int pld_cg_sys_with(cg_t *g, const pld_stmt_t *s);
/* the scan of such a statement: the kind of its `as` name */
void pld_cg_sys_scan_with(cg_t *g, const pld_stmt_t *s);
/* a call statement `[x =] self.k(...)` of a kernel function (target: the
 * name assigned, or NULL) */
int pld_cg_sys_call(cg_t *g, const pld_expr_t *e, const pld_expr_t *target);
/* in a Group function's body: the member calls from statement i of b run
 * as one cluster; the number of statements done (0: none) */
int pld_cg_sys_group(cg_t *g, const pld_block_t *b, int i);
/* a `for lane in pl.split_aiv(n, mode=...)` region (statement s) */
int pld_cg_sys_lanes(cg_t *g, const pld_stmt_t *s);
/* the declaration of an array or token local (others: nothing) */
void pld_cg_sys_decl(const cg_t *g, int slot, pld_buf_t *src);
/* ---------------------------------------------------------------- pld_cgen_rtop.c */

/* 1 when op is a pld.* op the runtime runs on operands the kernel evaluated */
int pld_cg_is_rtop(int op);
/* pld.* op call e through pc_rt.op, its operands evaluated in C; the result
 * as pld_cg_exec gives it (kind `want`) */
int pld_cg_rtop(cg_t *g, const pld_expr_t *e, int want);
/* a return statement: its values evaluated in C (pc_rt.ret_val) */
int pld_cg_return(cg_t *g, const pld_stmt_t *s);
/* tensor[i, a:b, ...] (a slice at least) as a view into descriptor dst;
 * -2 when e is not one */
int pld_cg_subscript(cg_t *g, const pld_expr_t *e, const char *dst);
/* tensor[a:b, ...] = tensor value: the copy in C; -2 when not one */
int pld_cg_slice_assign(cg_t *g, const pld_expr_t *t, const pld_expr_t *v);
/* tensor[i, ...] = scalar: the element write in C; -2 when not one */
int pld_cg_elem_assign(cg_t *g, const pld_expr_t *t, const pld_expr_t *v);
/* x[i, j, ...] read as a scalar (tensors and tiles) and tile[i, j, ...] =
 * scalar (pld_cgen_mem.c); -2 when not such a read / write */
int pld_cg_elem_read(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt);
int pld_cg_tile_elem_assign(cg_t *g, const pld_expr_t *t, const pld_expr_t *v);
/* their shared parts: integer indices into C locals; an element dtype that
 * cannot be a number (the failure emitted, 1); an element store as sim's */
int pld_cg_int_indices(cg_t *g, pld_expr_t *const *items, int n, int *idx);
int pld_cg_elem_dtype_refused(cg_t *g, int site, pld_dtype_t edt);
void pld_cg_elem_store(cg_t *g, const char *data, pld_dtype_t edt, int off, int val, int fv);
/* module constant or dynamic dimension `e` (a name) that is not a literal:
 * a computed constant's expression compiled, a dynamic dimension read from
 * a kernel's tensor argument (args[]); -2 when neither applies */
int pld_cg_const_dyn(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt);
/* ---------------------------------------------------------------- pld_cgen_layout.c */

/* 1 when op is a layout / valid-shape / gather-scatter tile op of pld_cgen_layout.c */
int pld_cg_is_layout(int op);
/* such an op into dst (room: its storage; s: the site of e) */
int pld_cg_layout(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s);
/* the emitters on descriptors (C lvalues of pc_tile; op: the op's name for
 * messages; ax0 / ax1: C locals tN holding the axes) */
int pld_cg_lay_transpose(cg_t *g, int s, const char *op, const char *dst, const char *src, int ax0, int ax1);
int pld_cg_lay_concat(cg_t *g, int s, const char *dst, const char *a, const char *b, pld_dtype_t dt);
/* pl.tile.slice e into dst without the copy (a fused chain reads the window
 * in place: pld_cgen_fuse.c): the checks and the descriptor; *off: the C
 * array t<off> of the offsets */
int pld_cg_lay_slice_view(cg_t *g, const pld_expr_t *e, const char *dst, int *off);
int pld_cg_lay_gather(cg_t *g, int s, const char *dst, const char *a, const char *x, pld_dtype_t dt, int dim);
int pld_cg_lay_scatter(cg_t *g, int s, const char *op, const char *dst, const char *src, const char *x);
/* pl.tile.mscatter (a tensor result: the output tensor, updated in place) into pc_tensor dst */
int pld_cg_mscatter(cg_t *g, const pld_expr_t *e, const char *dst);
/* `d, c = pl.tile.gather_compare(...)` (targets: the tuple of two tile names) */
int pld_cg_gather_compare(cg_t *g, const pld_expr_t *targets, const pld_expr_t *e);
/* the two result names of `d, c = op(...)`: a tuple of two locals of kind `kind` (word names it) */
int pld_cg_two_targets(cg_t *g, const pld_expr_t *targets, const pld_expr_t *e, int kind, const char *word);
/* matmul's broadcast batch dims into os; 1 after emitting sim's failure (pld_cgen_mm.c) */
int pld_cg_batch_dims(cg_t *g, int s, const pld_expr_t *e, const int64_t *xs, int na, const int64_t *ys, int nb,
                      int64_t *os);
/* ---------------------------------------------------------------- pld_cgen_ext.c */

/* 1 when op is one pld_cg_ext compiles (extension ops, cmp / sel, partial
 * ops, generators, expands, row / column expands, reductions) */
int pld_cg_ext_op(int op);
/* such an op into dst (s: the site of e) */
int pld_cg_ext(cg_t *g, const pld_expr_t *e, const char *dst, int s);
/* an element-wise op of pld_cg_ew_binary / pld_cg_ew_unary (or an expand)
 * into dst through the kernel library: any dtype, broadcasting operands */
int pld_cg_ext_elementwise(cg_t *g, const pld_expr_t *e, const char *dst);
/* a reduction's library op (pld_redop_k_t; *row: 1 for a row reduction), -1 when op is none */
int pld_cg_ext_reduce_op(int op, int *row);
/* a row / column reduction into dst */
int pld_cg_ext_reduce(cg_t *g, const pld_expr_t *e, const char *dst, int s);

#endif
