/* pld_check_int.h - internals shared by the checker's files. Not a public header.
 *
 *   pld_check.c       diagnostics, module constants and imports, annotations,
 *                     function headers, calls of the program's own functions,
 *                     the driver (pld_check_program)
 *   pld_check_stmt.c  name slots, statements, function bodies
 *   pld_check_expr.c  expressions, constants, op binding
 *   pld_check_infer.c type inference of the bound op calls
 *   pld_check_pld.c   the pld.* rules (windows, remote load / store, put /
 *                     get, notify / wait), HOST window provenance
 *   pld_check_coll.c  the collectives' rules (per rail)
 *   pld_check_live.c  statement numbers and slot liveness (the interpreter's
 *                     on-chip memory check) */
#ifndef PLD_CHECK_INT_H
#define PLD_CHECK_INT_H

#include "pld_check.h"
#include "pld_ast.h"
#include "pld_size.h"

/* A module-level constant. */
typedef enum ck_const_kind {
    CK_C_INT, CK_C_FLOAT, CK_C_BOOL, CK_C_STR, CK_C_DYN, CK_C_DTYPE, CK_C_EXPR, CK_C_ENUM, CK_C_BAD
} ck_const_kind_t;

typedef struct ck_const {
    const char *name;
    ck_const_kind_t kind;
    int64_t i;
    double f;
    pld_dtype_t dt;
    const char *enum_name;    /* ENUM: "ReduceOp", ... (i holds the member's value) */
    const pld_expr_t *expr;   /* the value expression (lists, tuples, ...; a conditional's chosen branch) */
    pld_span_t span;
} ck_const_t;

/* A window buffer allocated in a HOST orchestrator. */
typedef struct ck_winbuf {
    const char *name;         /* LHS name = buffer name */
    pld_span_t span;
    int64_t bytes;            /* -1 when not static */
    int in_loop;              /* allocated inside a loop */
    int dispatched;           /* a view of it is an argument of some dispatch (comm-domain coverage) */
    int cover_unknown;        /* some dispatch reaches devices the checker cannot list */
    uint64_t cover;           /* devices (< 64) the dispatches reach, when !cover_unknown */
} ck_winbuf_t;

/* A HOST collective (or barrier), checked at the end of its function, when
 * every dispatch is known: a barrier's signal buffer must reach a dispatch
 * (§2.15, "no inferred comm-domain coverage"), and the window buffers of one
 * collective must reach the same devices ("window buffers must resolve to the
 * same comm-domain scope"). */
#define PLD_CK_MAX_BARRIERS 32
typedef struct ck_barrier {
    int is_barrier;
    int n;                    /* window operands (roles[i], winbuf[i]) */
    int winbuf[4];
    const char *roles[4];
    const char *op;
    pld_span_t span;
    pld_expr_t *call;         /* the collective; its aux receives the devices of its comm domain */
} ck_barrier_t;

/* One local slot. */
typedef struct ck_slot {
    const char *name;
    const pld_type_t *type;   /* type of the first definition */
    int defined;              /* assigned on some path before the current point */
    int winbuf;               /* HOST: index of the window buffer a Ptr / window view refers to, else -1 */
    int slice_of;             /* HOST: a slice of a view of this window buffer (§2.3), else -1 */
    int is_param;
    int is_loopvar_world;     /* loop variable of `for r in pl.range(pld.world_size())` */
    int has_range;            /* loop variable over [lo, hi) with step 1, constant bounds, inside its loop */
    int64_t lo, hi;
    int64_t cval;             /* constant value when known (has_cval) */
    int has_cval;
    int mm_result;            /* the value last assigned is a matmul's result (pl.tensor.matmul*,
                                 pl.tile.matmul*): an FP32 accumulator FIXPIPE may store narrowed */
} ck_slot_t;

typedef struct pld_ck {
    pld_program_t *p;
    pld_check_opts_t opts;
    int dom_ranks;            /* size of every comm domain when known: opts.ranks, or 0 when the
                                 HOST orchestrator dispatches to device subsets */
    ck_const_t *consts;
    int nconsts;
    const char *alias_pl;     /* module alias of pypto.language ("pl") */
    const char *alias_pld;    /* module alias of pypto.language.distributed ("pld") */
    ck_winbuf_t *winbufs;
    int nwinbufs, capwinbufs;
    /* current function */
    pld_func_t *fn;
    int ctx;                  /* PLD_CTX_HOST / PLD_CTX_CHIP / PLD_CTX_KERNEL of the current code */
    int fn_ctx;               /* context of the function itself */
    int loop_depth;           /* for/while nesting in the current function */
    int if_depth;             /* if nesting in the current function */
    int spmd_depth;           /* inside pl.spmd */
    int split_mode;           /* inside pl.split_aiv(mode=...): 0 NONE (or outside), 1 UP_DOWN, 2 LEFT_RIGHT */
    const pld_expr_t *at_scope; /* the pl.at(CORE_GROUP) item around the current code, or NULL */
    const pld_expr_t *deferred; /* the first defer_wait of that scope (registration began) */
    const pld_expr_t *direct; /* the value of the statement being checked (assignment, expression
                                 statement, return value): calls that must not be nested compare to it */
    ck_barrier_t barriers[PLD_CK_MAX_BARRIERS];
    int nbarriers;            /* HOST barriers of the current function */
    ck_slot_t *slots;
    int nslots, capslots;
    int oom;
    int fold_overflow;        /* set when pld_ck_const_int declined a result outside int64 */
    char tyring[4][256];      /* pld_ck_tystr's rotating message buffers */
    unsigned tyring_next;
} pld_ck_t;

/* A call bound to an op's parameters. */
typedef struct ck_call {
    const pld_expr_t *call;
    const pld_op_info_t *info;
    pld_expr_t *args[PLD_OP_MAX_PARAMS];          /* NULL when absent (default applies) */
    const pld_type_t *types[PLD_OP_MAX_PARAMS];   /* checked type of each present arg */
} ck_call_t;

/* What the checker knows of one function of the program. */
typedef struct ck_fn_info {
    pld_func_t *f;
    int bad_header;            /* the decorator was wrong: the body is not checked */
    const pld_type_t **ptypes;
    const pld_type_t *ret;     /* tuple for several returns, none when absent */
    int ctx;                   /* PLD_CTX_* of its body; 0 for raw SubWorkers */
    int order_checked;         /* HOST-dispatch parameter order checked (dispatch_param_order) */
} ck_fn_info_t;

/* The checker's results kept in p->sema: one ck_fn_info_t per p->funcs[i]. */
typedef struct ck_prog {
    ck_fn_info_t *fns;
    int nfns;
} ck_prog_t;

static inline ck_prog_t *ck_prog_of(pld_ck_t *ck)
{
    return (ck_prog_t *)ck->p->sema;
}

/* ---- diagnostics (pld_check.c) ---- */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
pld_diag_t *pld_ck_error(pld_ck_t *ck, pld_span_t sp, const char *fmt, ...);
/* Adds "note: in function 'f'" to d. */
void pld_ck_note_fn(pld_ck_t *ck, pld_diag_t *d);
/* Formats a type for a message into one of ck's four rotating buffers: the
 * result stays valid until the fourth next call on the same checker. */
const char *pld_ck_tystr(pld_ck_t *ck, const pld_type_t *t);

/* ---- names (pld_check.c) ---- */
const ck_const_t *pld_ck_find_const(pld_ck_t *ck, const char *name);
int pld_ck_find_slot(pld_ck_t *ck, const char *name);     /* -1 if none */
/* 1 when e is a call of a matmul op (pl.tensor.matmul / _acc, pl.tile.matmul / _acc / _bias,
 * batch and MX forms): its result is a cube accumulator (pld_check_infer.c). */
int pld_ck_is_matmul(const pld_expr_t *e);

/* ---- expressions (pld_check_expr.c) ---- */
/* Checks e and returns its type (never NULL; &pld_type_unknown when not inferable). */
const pld_type_t *pld_ck_expr(pld_ck_t *ck, pld_expr_t *e);
/* Compile-time integer value of e (literals, module constants, pl.const,
 * get_byte, arithmetic over them, constant locals). Returns 1 when known. */
int pld_ck_const_int(pld_ck_t *ck, const pld_expr_t *e, int64_t *out);
/* Integer value of an enum argument: an int, or a chain like pld.ReduceOp.Max /
 * pl.AtomicType.None_ ; `enum_name` selects the table ("ReduceOp", "NotifyOp",
 * "WaitCmp", "AtomicType"). Returns 1 when known. */
int pld_ck_enum_int(pld_ck_t *ck, const pld_expr_t *e, const char *enum_name, int64_t *out);
/* The enum member an attribute chain names (pld.ReduceOp.Prod): its enum's
 * name (static storage) and value (-1 for an unknown member of a known enum);
 * NULL when e is not such a chain. */
const char *pld_ck_enum_member(const pld_expr_t *e, int64_t *out);
/* Static string value of e ('mesh'); NULL when not a string literal. */
const char *pld_ck_const_str(const pld_expr_t *e);
/* Reads a shape-like list (list/tuple literal, list constant) into dims;
 * returns rank or -1 when e is not a list. dims must hold PLD_CK_MAX_RANK. */
#define PLD_CK_MAX_RANK 8
/* 1 when the region [off, off + ext) ends past dim (an offset + extent past
 * int64 does too; pld_size.h). */
static inline int pld_ck_past_end(int64_t off, int64_t ext, int64_t dim)
{
    int64_t end;
    return pld_size_add(off, ext, &end) != PLD_SIZE_OK || end > dim;
}
int pld_ck_dims_of_list(pld_ck_t *ck, const pld_expr_t *e, pld_dim_t *dims);
/* Static size of a shape (issue 9.1): the constant dims of dims[rank] times
 * the element size of dt (PLD_DT_NONE: an element count), through the checked
 * helper of pld_size.h. A negative dim or a size past int64 is an error at sp
 * naming `what` (then returns 0); otherwise returns 1 and, when bytes is not
 * NULL, sets *bytes to the size (-1 when a dim is not constant). */
int pld_ck_shape_size(pld_ck_t *ck, pld_span_t sp, const char *what, const pld_dim_t *dims, int rank, pld_dtype_t dt,
                      int64_t *bytes);
/* Number of items of a list-like argument (list/tuple literal or list
 * constant); -1 when not a list. */
int pld_ck_list_len(pld_ck_t *ck, const pld_expr_t *e);
/* Item i of a list-like argument, or NULL. */
const pld_expr_t *pld_ck_list_item(pld_ck_t *ck, const pld_expr_t *e, int i);

/* ---- annotations and function headers (pld_check.c) ---- */
/* The dotted name of e with the module aliases spelled "pl" / "pld", in buf;
 * NULL when e is not a dotted name. */
const char *pld_ck_ann_head(pld_ck_t *ck, const pld_expr_t *e, char *buf, size_t n);
/* The dtype an annotation or dtype argument names (pl.FP32, FP32, a dtype
 * constant); PLD_DT_NONE when none. */
pld_dtype_t pld_ck_ann_dtype(pld_ck_t *ck, const pld_expr_t *e);
/* The type a type annotation denotes (reports what is wrong with it; never
 * NULL). *dir (when dir is not NULL) receives the parameter direction of
 * pl.InOut/pl.Out; `top` is 1 for a parameter's outermost annotation. */
const pld_type_t *pld_ck_ann_type(pld_ck_t *ck, const pld_expr_t *a, pld_dir_t *dir, int top);
/* The member name of an enum value ...<enum_name>.<member> (interned), or NULL. */
const char *pld_ck_enum_tail(pld_ck_t *ck, const pld_expr_t *e, const char *enum_name, pld_diag_t **d);
/* Checks deps=[t0, t1, ...] of a task launch: TaskIds, in context ctx. */
void pld_ck_deps(pld_ck_t *ck, pld_expr_t *d, int ctx);

/* Checks predicate=<pred> of task launch `what` (pl.submit, pl.spmd_submit, pl.spmd) issued in context ctx:
 * PyPTO's dispatch predicate, one comparison (==, !=, <, <=, >, >=) of one element of a signed 8/16/32/64-bit
 * integer tensor (pl.tensor.read, through pl.cast) with an integer literal, in an orchestration function. */
void pld_ck_predicate(pld_ck_t *ck, pld_expr_t *pred, const char *what, int ctx);

/* ---- element-wise ops (pld_check_elem.c) ---- */
/* PyPTO's dtype, shape and attribute rules of the element-wise ops of issue 11
 * (and high_precision / tmp of div, log, recip, rsqrt): the result type, or
 * NULL when the op is not one of them (or only had its extra rules checked
 * and infers as before). */
/* pad_value argument i must be one of the three padding modes (pld_check_mem.c). */
void pld_ck_check_pad(pld_ck_t *ck, ck_call_t *c, int i);
const pld_type_t *pld_ck_elem_call(pld_ck_t *ck, ck_call_t *c);
/* The type of a same-dtype, broadcasting binary element-wise op (add, sub, ...,
 * fmod, and_, ...): reports dtype and shape mismatches. */
const pld_type_t *pld_ck_infer_binary(pld_ck_t *ck, ck_call_t *c);
/* Helpers of pld_check_expr.c for it and for pld_check_infer.c: a shaped type
 * (arena-allocated); the dtype an expression names (PLD_DT_NONE if none); the
 * dotted name of e with the module aliases normalised to "pl" / "pld", in buf
 * (NULL when e is not a dotted name). */
const pld_type_t *pld_ck_shaped(pld_ck_t *ck, pld_type_kind_t k, pld_dtype_t dt, const pld_dim_t *dims, int rank,
                                const pld_dim_t *valid, pld_mem_t mem);
pld_dtype_t pld_ck_dtype_arg(pld_ck_t *ck, const pld_expr_t *e);
const char *pld_ck_dotted(pld_ck_t *ck, const pld_expr_t *e, char *buf, size_t n);

/* ---- type inference (pld_check_infer.c) ---- */
/* The result type of the bound op call c (pld_check_expr.c binds it): shapes,
 * dtypes and memory spaces, with the rules of the op families (the files
 * above and below) applied on the way; reports what is wrong. Never NULL
 * (&pld_type_unknown when not inferable). */
const pld_type_t *pld_ck_infer_op(pld_ck_t *ck, ck_call_t *c);

/* ---- calls of the program's own functions (pld_check.c) ---- */
/* self.f(args..., [device=r], [attrs={...}]): callee lookup, level rules of the
 * call graph, argument count and types. Returns the callee's return type. */
const pld_type_t *pld_ck_dispatch_call(pld_ck_t *ck, pld_expr_t *e, const pld_type_t **argt);
/* pl.submit(self.k, args..., deps=..., ...) / pl.spmd_submit(..., core_num=...):
 * returns pl.Tuple[results..., TASK_ID]. */
const pld_type_t *pld_ck_submit_call(pld_ck_t *ck, pld_expr_t *e, const pld_type_t **argt);

/* ---- statements and function bodies (pld_check_stmt.c) ---- */
/* Checks the body of fi (its locals, statements and returns) and records the
 * function's slot names; does nothing for raw SubWorkers and bad headers. */
void pld_ck_function(pld_ck_t *ck, ck_fn_info_t *fi);
/* 1 when a HOST body dispatches with a device= that is not the loop variable
 * of `for r in pl.range(pld.world_size())` (comm domains may then be subsets
 * of the world). `world_vars` holds the names of the enclosing world loops. */
int pld_ck_subset_dispatch(const pld_block_t *b, const char **world_vars, int nw);

/* ---- pld.* rules (pld_check_pld.c) ---- */
/* Checks a bound call of a PLD_OPID_PLD_* op (every rule of
 * docs/pld_semantics.md §2/§3 that is static, the rank count P being
 * ck->opts.ranks when > 0) and returns its result type. */
const pld_type_t *pld_ck_pld_call(pld_ck_t *ck, ck_call_t *c);

/* ---- shared by the pld.* rules (pld_check_pld.c) and the collectives' rules
 * (pld_check_coll.c) ---- */
#define PLD_CK_I32_MAX INT64_C(2147483647)

/* One pld.* call being checked. */
typedef struct ck_pc {
    pld_ck_t *ck;
    ck_call_t *c;
    const char *op;    /* canonical op name, e.g. "pld.tensor.allreduce" */
    int nerr;          /* errors reported for this call */
    int builtin;       /* a builtin.tensor.* dispatch of the lowered program (pld_lower.c) */
} ck_pc_t;

/* A role-named operand of a collective. */
typedef struct ck_operand {
    int idx;
    const char *role;
} ck_operand_t;

/* The type and the expression of argument i of the call (NULL when absent). */
static inline const pld_type_t *ck_ty(const ck_pc_t *x, int i)
{
    return x->c->types[i];
}

static inline const pld_expr_t *ck_arg(const ck_pc_t *x, int i)
{
    return x->c->args[i];
}

static inline int ck_known(const pld_type_t *t)
{
    return t && t->kind != PLD_TY_UNKNOWN;
}

/* Static value of dimension i of t; 1 when constant. */
static inline int ck_dimc(const pld_type_t *t, int i, int64_t *v)
{
    if (!t || i < 0 || i >= t->rank || !t->shape || t->shape[i].kind != PLD_DIM_CONST)
        return 0;
    *v = t->shape[i].v;
    return 1;
}

static inline int ck_aiv_cores(const pld_ck_t *ck)
{
    return pld_npu_profile_or_default(ck->opts.platform)->aiv_cores;
}

/* An error at the call, its message the op's name, a space and the format. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pld_ck_perr(ck_pc_t *x, const char *fmt, ...);
/* The text of dim d (in b, which it resets). */
const char *pld_ck_dim_text(const pld_dim_t *d, pld_buf_t *b);
/* 1 when both dims are structurally equal, 0 when provably or structurally
 * different (two constants, or two different named dims), -1 unknown. */
int pld_ck_dim_same(const pld_dim_t *a, const pld_dim_t *b);
/* 1 when two argument expressions are written identically. */
int pld_ck_same_expr(const pld_expr_t *a, const pld_expr_t *b);
/* The member of enum `enum_name` ("ReduceOp", "NotifyOp", "WaitCmp",
 * "AtomicType") with value v, "?" when none. */
const char *pld_ck_enum_value_name(const char *enum_name, int64_t v);
/* Operand kinds: each returns 1 when operand i has the wanted kind, 0 when it
 * is absent or its type is unknown (skip dependent checks), -1 when an error
 * was reported. A DistributedTensor; a Tensor or DistributedTensor; a signal
 * window (a DistributedTensor of INT32). */
int pld_ck_want_dt(ck_pc_t *x, int i, const char *role);
int pld_ck_want_tensorlike(ck_pc_t *x, int i, const char *role);
int pld_ck_want_signal(ck_pc_t *x, int i, const char *role);
/* Enum argument i; returns 1 and *v when known. Reports values outside
 * [0, n). `required` reports a missing argument. */
int pld_ck_enum_arg(ck_pc_t *x, int i, const char *enum_name, int n, const char *allowed, int required, int64_t *v);
/* A compile-time int argument (core_num, chunk sizes, root): 1 and *v when
 * constant, 0 when absent, -1 when not a compile-time int (not reported). */
int pld_ck_int_arg(ck_pc_t *x, int i, int64_t *v);

/* ---- collectives (pld_check_coll.c) ---- */
/* The rules of collective `id` (pld.tensor.* or, x->builtin, the lowered
 * builtin.tensor.* form) on its rail; returns the result type. */
const pld_type_t *pld_ck_coll_call(ck_pc_t *x, pld_op_id_t id);
/* ---- pld_check_mem.c: fillpad family, set_validshape, matmul_acc/matmul_bias ---- */
/* The result type of c when it is one of these ops; NULL otherwise. */
const pld_type_t *pld_ck_mem_call(pld_ck_t *ck, ck_call_t *c);
/* pl.tensor.matmul with an operand of rank > 2: PyPTO's batched form
 * (broadcast batch dims, a_trans / b_trans swap the two last dims), result
 * dtype od (pld_check_mem.c). */
const pld_type_t *pld_ck_tensor_matmul_nd(pld_ck_t *ck, ck_call_t *c, int ta, int tb, pld_dtype_t od);
/* ---- pld_check_mx.c: the MX block-scaled matmul and its scale tiles ---- */
/* The result type of c when it is a matmul_mx op; NULL otherwise. */
const pld_type_t *pld_ck_mx_call(pld_ck_t *ck, ck_call_t *c);
/* The MX rules of pl.tile.load (of a pl.MX_A_ZZ / MX_B_NN tensor: the result
 * keeps the layout), pl.tile.move (into LeftScale / RightScale) and
 * pl.tile.create (not there): res, the type inferred so far, or its
 * replacement. */
const pld_type_t *pld_ck_mx_memory(pld_ck_t *ck, ck_call_t *c, const pld_type_t *res);
/* ---- pld_check_sys.c: pl.system.* between the cores of a cluster (pipes, events, barriers) ---- */
/* The result type of c when it is one of these ops; NULL otherwise. */
const pld_type_t *pld_ck_sys_call(pld_ck_t *ck, ck_call_t *c);
/* ---- pld_check_layout.c: transpose, extract, concat, gather ---- */
/* The result type of c when it is one of these ops; NULL otherwise. */
const pld_type_t *pld_ck_layout_call(pld_ck_t *ck, ck_call_t *c);
/* ---- pld_check_gather.c: mgather, mscatter, gatherb, scatter_update, paged_gather, no_dep ---- */
/* The result type of c when it is one of these ops; NULL otherwise. */
const pld_type_t *pld_ck_gather_call(pld_ck_t *ck, ck_call_t *c);
/* The compare form of gather (pl.tile.gather_compare, pl.tensor.gather(kvalue=, ...)): the parameter positions
 * at[] of src, kvalue, cmp_mode, offset, out_cols, count_dtype; returns pl.Tuple[dst, cdst] of src's kind. */
const pld_type_t *pld_ck_gather_compare(pld_ck_t *ck, ck_call_t *c, const int *at);
/* A shaped type in the program arena (kind, dtype, dims, valid or NULL, memory space). */
const pld_type_t *pld_ck_shaped(pld_ck_t *ck, pld_type_kind_t k, pld_dtype_t dt, const pld_dim_t *dims, int rank,
                                const pld_dim_t *valid, pld_mem_t mem);
/* HOST provenance: index into ck->winbufs of the allocation a HOST operand
 * (a pld.window view, a Ptr, or a collective's result) refers to; -1 if unknown. */
int pld_ck_window_of(pld_ck_t *ck, const pld_expr_t *e);
/* HOST: the window buffer whose view e slices (x[0:1], pl.tensor.slice of a
 * view, or a local holding such a slice; §2.3), else -1. */
int pld_ck_window_slice_of(pld_ck_t *ck, const pld_expr_t *e);

/* ---- pld_check_live.c ---- */
/* Numbers f's statements and fills f->last_use (after name resolution). */
void pld_ck_liveness(pld_ck_t *ck, pld_func_t *f);

#endif
