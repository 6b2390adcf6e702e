/* pld_ast.h - the public header of the pld_ast library: the abstract syntax
 * tree of a pldrun program and its printer, the IR's enums and static types
 * (pld_types.c), and the op table (pld_ops.def, pld_ops.c).
 *
 * The parser builds a Python-subset tree (expressions, statements, functions)
 * that knows nothing about PyPTO yet: annotations stay expressions, calls stay
 * calls. The checker (pld_check.h) resolves names, ops and types and writes
 * its results into the `sema` fields below; the interpreter reads them.
 *
 * Ownership: one pld_program_t owns its source text, file name, one arena
 * holding every node and interned name, and the diagnostics. Everything is
 * freed by pld_program_destroy(). Runtime state only borrows AST pointers. */
#ifndef PLD_AST_H
#define PLD_AST_H

#include "pld_arena.h"
#include "pld_buf.h"
#include "pld_diag.h"
#include "pld_dtype.h"

#include <stddef.h>
#include <stdint.h>

struct pld_type;      /* the static types, below ("types") */

/* ---------------------------------------------------------------- expressions */

typedef enum pld_expr_kind {
    PLD_EX_NAME,
    PLD_EX_INT,
    PLD_EX_FLOAT,
    PLD_EX_STR,
    PLD_EX_BOOL,
    PLD_EX_NONE,
    PLD_EX_ELLIPSIS,
    PLD_EX_UNARY,
    PLD_EX_BINARY,
    PLD_EX_CALL,
    PLD_EX_ATTR,
    PLD_EX_SUBSCRIPT,
    PLD_EX_SLICE,
    PLD_EX_LIST,
    PLD_EX_TUPLE,
    PLD_EX_DICT,
    PLD_EX_COND      /* `a if cond else b`: module constants only (the parser rejects it in functions) */
} pld_expr_kind_t;

/* Binary operators, including comparisons and boolean and/or. ORDER PLD_BINOP */
typedef enum pld_binop {
    PLD_OP_ADD, PLD_OP_SUB, PLD_OP_MUL, PLD_OP_DIV, PLD_OP_FLOORDIV, PLD_OP_MOD, PLD_OP_POW,
    PLD_OP_LSHIFT, PLD_OP_RSHIFT, PLD_OP_BITAND, PLD_OP_BITOR, PLD_OP_BITXOR,
    PLD_OP_EQ, PLD_OP_NE, PLD_OP_LT, PLD_OP_LE, PLD_OP_GT, PLD_OP_GE,
    PLD_OP_AND, PLD_OP_OR, PLD_OP_XOR /* printer-only pseudo operator `xor` */
} pld_binop_t;

typedef enum pld_unop {
    PLD_UOP_NEG, PLD_UOP_POS, PLD_UOP_INVERT, PLD_UOP_NOT
} pld_unop_t;

typedef struct pld_expr pld_expr_t;

/* One call argument; `kw` is NULL for a positional argument. */
typedef struct pld_arg {
    const char *kw;     /* interned keyword name or NULL */
    pld_span_t kw_span;
    pld_expr_t *value;
} pld_arg_t;

struct pld_expr {
    pld_expr_kind_t kind;
    pld_span_t span;
    int32_t height;              /* levels of the subtree (1 for a leaf); bounded by the parser */
    union {
        const char *name;                       /* NAME: interned */
        int64_t ival;                           /* INT */
        double fval;                            /* FLOAT */
        struct { const char *s; size_t len; const char *raw; size_t raw_len; } str; /* STR: decoded + source */
        int bval;                               /* BOOL */
        struct { pld_unop_t op; pld_expr_t *a; } un;
        struct { pld_binop_t op; pld_expr_t *a, *b; } bin;
        struct { pld_expr_t *fn; pld_arg_t *args; int nargs; } call;
        struct { pld_expr_t *obj; const char *attr; pld_span_t attr_span; } attr;
        struct { pld_expr_t *obj; pld_expr_t **items; int n; } sub;  /* obj[items] */
        struct { pld_expr_t *lo, *hi, *step; } slice;                /* any may be NULL */
        struct { pld_expr_t **items; int n; int trailing_comma; } seq; /* LIST / TUPLE */
        struct { pld_expr_t **keys; pld_expr_t **vals; int n; } dict;
        struct { pld_expr_t *a, *cond, *b; pld_span_t if_span; } cond; /* COND: a if cond else b */
    } u;
    /* --- filled by the checker --- */
    const struct pld_type *type; /* static type (NULL before checking) */
    int32_t op;                  /* CALL: resolved op id (pld_op_id_t), -1 if none */
    int32_t slot;                /* NAME: local slot, -1 if not a local */
    int32_t aux;                 /* CALL of self.f / pl.submit: index of the callee in p->funcs */
    struct pld_expr **bound;     /* CALL of an op: arguments bound to the op's parameters in
                                    signature order (NULL entry = default applies) */
};

/* ----------------------------------------------------------------- statements */

typedef enum pld_stmt_kind {
    PLD_ST_EXPR,
    PLD_ST_ASSIGN,
    PLD_ST_RETURN,
    PLD_ST_PASS,
    PLD_ST_BREAK,
    PLD_ST_CONTINUE,
    PLD_ST_IF,
    PLD_ST_WHILE,
    PLD_ST_FOR,
    PLD_ST_WITH
} pld_stmt_kind_t;

typedef struct pld_stmt pld_stmt_t;

typedef struct pld_block {
    pld_stmt_t **stmts;
    int n;
} pld_block_t;

/* A whole-line comment, attached to the statement that follows it. */
typedef struct pld_comment {
    const char *text;            /* without the leading '#' and one space */
    struct pld_comment *next;
} pld_comment_t;

struct pld_stmt {
    pld_stmt_kind_t kind;
    pld_span_t span;
    pld_comment_t *comments;     /* leading comments (may be NULL) */
    /* --- filled by the checker (pld_check_live.c) --- */
    int32_t seq;                 /* pre-order number in its function */
    int32_t seq_end;             /* WHILE / FOR: number of the last statement of the body */
    /* a kernel scope (WITH, or FOR over pl.spmd / pl.split_aiv): the slots
     * its body reads that hold a value from before it (parameters and
     * earlier locals), in order of first read: the arguments of its launch */
    int32_t *captures;
    int32_t ncaptures;
    union {
        pld_expr_t *expr;                                               /* EXPR */
        struct { pld_expr_t *target, *ann, *value; } assign;           /* target: NAME/TUPLE/SUBSCRIPT */
        struct { pld_expr_t **vals; int n; } ret;                        /* RETURN */
        struct { pld_expr_t *cond; pld_block_t then, els; int els_is_elif; } if_;
        struct { pld_expr_t *cond; pld_block_t body; } while_;
        struct { pld_expr_t *target; pld_expr_t *iter; pld_block_t body; } for_;
        struct { pld_expr_t *item; const char *as_name; pld_span_t as_span; pld_block_t body; } with;
    } u;
};

/* ------------------------------------------------------------------ functions */

typedef struct pld_param {
    const char *name;   /* interned */
    pld_span_t span;
    pld_expr_t *ann;    /* annotation expression (NULL only for `self`) */
    /* --- filled by the checker --- */
    const struct pld_type *type;
    int32_t slot;
} pld_param_t;

typedef struct pld_func {
    const char *name;          /* interned */
    pld_span_t name_span;
    pld_span_t deco_span;      /* the decorator expression */
    pld_expr_t *deco;          /* decorator expression (`pl.function` or a call of it) */
    int has_self;
    pld_param_t *params;       /* without `self` */
    int nparams;
    pld_expr_t *ret_ann;       /* NULL when absent */
    pld_block_t body;
    int is_raw;                /* SubWorker: body captured as text, not parsed */
    const char *raw_body;      /* dedented raw text (is_raw) */
    uint32_t raw_line;         /* line of the raw text's first line (is_raw) */
    int is_inline;             /* decorated with @pl.inline */
    pld_comment_t *comments;   /* comments before the decorator */
    /* --- filled by the checker --- */
    int32_t level;             /* pld_level_t */
    int32_t role;              /* pld_role_t */
    int32_t ftype;             /* pld_ftype_t */
    int32_t nslots;            /* locals after name resolution */
    const char **slot_names;   /* nslots names (arena), for diagnostics */
    int32_t *last_use;         /* nslots: number (pld_stmt_t.seq) of the last statement that needs
                                  the slot's value, -1 = none (arena; NULL = unknown) */
    int32_t *first_def;        /* nslots: number of the first statement that assigns the slot,
                                  -1 for a parameter (arena; NULL = unknown) */
    const struct pld_autol0 *autol0; /* nslots: what PyPTO's AutoTileMatmulL0 does to the matmul
                                  assigned to each slot (pld_check_live.c; arena; NULL = unknown) */
    void *sema;                /* checker-private data */
} pld_func_t;

/* PyPTO's AutoTileMatmulL0 pass and an oversized plain or biased matmul
 * (docs/interpreter.md, "On-chip memory"): the matmul (pl.tile.matmul or
 * pl.tile.matmul_bias) of a slot's only definition, when its Acc
 * result does not fit L0C, is computed one [m, n] sub-tile at a time
 * (STORE: the result's only use is one store; SCRATCH: its only use is one
 * cast to BF16/FP16 with mode 'rint' whose result only feeds matmuls, kept
 * in a Mat scratch of `scratch` bytes), or left whole (KEPT, why: a
 * PLD_AUTOL0_WHY_* reason). SCRATCH_TILE: the slot holds the cast result of
 * a SCRATCH matmul, which is the Mat scratch. NONE: none of these. */
enum { PLD_AUTOL0_NONE = 0, PLD_AUTOL0_STORE, PLD_AUTOL0_SCRATCH, PLD_AUTOL0_KEPT, PLD_AUTOL0_SCRATCH_TILE };
enum {
    PLD_AUTOL0_WHY_USE = 1, /* read by something other than one store or matmuls through one rint cast */
    PLD_AUTOL0_WHY_CAST,    /* the cast is not FP32 -> BF16/FP16 with mode 'rint' */
    PLD_AUTOL0_WHY_MEM,     /* an operand is not in Mat (L1) */
    PLD_AUTOL0_WHY_K,       /* K is not a multiple of 16 */
    PLD_AUTOL0_WHY_SHAPE,   /* not static 2-D */
    PLD_AUTOL0_WHY_BIAS,    /* matmul_bias: the bias is not a static [1, N] tile in Mat or Bias */
    PLD_AUTOL0_WHY_BOX      /* matmul_bias: M, N or K is not a multiple of the operands' box alignment */
};
/* pld_autol0_t.bias of a matmul_bias: where its bias row is. MAT_LOAD: a Mat
 * tile whose only definition is a pl.tile.load and whose only use is the
 * matmul_bias (PyPTO reloads an N window of it per sub-tile); MAT: another
 * Mat tile, BIAS: a Bias-resident tile (the
 * sub-tiles keep the whole N: the Bias table has no sub-window). */
enum { PLD_AUTOL0_BIAS_NONE = 0, PLD_AUTOL0_BIAS_MAT_LOAD, PLD_AUTOL0_BIAS_MAT, PLD_AUTOL0_BIAS_BIAS };
typedef struct pld_autol0 {
    uint8_t kind, why;
    int64_t m, n;              /* the result's shape */
    int32_t cbytes;            /* bytes of an accumulator element */
    int32_t align_m;           /* the physical row alignment of L0C (16; 32 for INT32) */
    int64_t scratch;           /* SCRATCH: bytes of the Mat scratch */
    uint8_t bias;              /* matmul_bias: PLD_AUTOL0_BIAS_*; 0 for matmul */
    uint8_t bias_dt;           /* matmul_bias: the bias row's pld_dtype_t */
    uint8_t acc_dt;            /* the result's pld_dtype_t */
} pld_autol0_t;

/* -------------------------------------------------------------------- modules */

typedef struct pld_import {
    const char *module;   /* dotted module name, interned */
    const char *alias;    /* `as` name or NULL; for `from M import N as A`: A */
    const char *from_name;/* N for `from M import N`, else NULL */
    pld_span_t span;
    pld_comment_t *comments;  /* before the import statement (first import of it) */
} pld_import_t;

/* A module-level `NAME = expr` (constants and `NAME = pl.dynamic("NAME")`). */
typedef struct pld_const_decl {
    const char *name;
    pld_span_t span;
    pld_expr_t *value;
    pld_comment_t *comments;
    /* filled by the checker: what the value folds to when the interpreter
     * cannot evaluate `value` as written (an INT/BOOL literal for an integer,
     * enum member, min/max or conditional; the chosen branch of a conditional
     * otherwise); NULL when `value` is evaluated as written. Read through
     * pld_const_value(). */
    pld_expr_t *folded;
} pld_const_decl_t;

/* The expression a module constant evaluates: the checker's folded value when
 * it made one, else the value as written. */
static inline const pld_expr_t *pld_const_value(const pld_const_decl_t *cd)
{
    return cd->folded ? cd->folded : cd->value;
}

typedef struct pld_intern pld_intern_t;

typedef struct pld_program {
    char *file;                 /* owned copy of the file name */
    char *src;                  /* owned copy of the text, NUL-terminated */
    size_t src_len;
    pld_arena_t arena;          /* every node, name and type */
    pld_diag_list_t diags;      /* parse + check diagnostics */
    pld_intern_t *names;        /* interning table */

    const char *class_name;     /* NULL when the unit is top-level functions */
    pld_span_t class_span;
    pld_expr_t *class_deco;     /* `pl.program` or a call of it */
    pld_comment_t *class_comments; /* comments before the class decorator */
    pld_comment_t *tail_comments;  /* comments after the last item of the file */
    pld_import_t *imports;
    int nimports;
    pld_const_decl_t *consts;
    int nconsts;
    pld_func_t **funcs;         /* in source order */
    int nfuncs;
    int parsed_ok;              /* 1 when parsing produced no error */
    void *sema;                 /* checker-private data (freed by destroy) */
    void (*sema_free)(void *);  /* destructor for sema */
} pld_program_t;

/* Creates a program from text. Copies `file` and `src`. Never NULL unless out
 * of memory. The caller then runs pld_parse_program(). Returns owned. */
pld_program_t *pld_program_create(const char *file, const char *src, size_t len);
/* Frees the program and everything it owns. Accepts NULL. */
void pld_program_destroy(pld_program_t *p);

/* Interns s[0..n) in p's table; returns the unique pointer or NULL on OOM. */
const char *pld_ast_intern(pld_program_t *p, const char *s, size_t n);
/* Interns a NUL-terminated string. */
const char *pld_ast_intern_cstr(pld_program_t *p, const char *s);

/* Node constructors (arena). Return NULL on OOM. */
pld_expr_t *pld_ast_expr(pld_program_t *p, pld_expr_kind_t k, pld_span_t sp);
pld_stmt_t *pld_ast_stmt(pld_program_t *p, pld_stmt_kind_t k, pld_span_t sp);

/* Prints the program back as text (Python syntax, 4-space indentation, one
 * blank line between functions). print -> parse -> print is a fixed point. */
void pld_ast_print(const pld_program_t *p, pld_buf_t *out);
/* Prints one expression. */
void pld_ast_print_expr(const pld_expr_t *e, pld_buf_t *out);

/* Dotted name of an attribute chain (`pl.tile.load` -> "pl.tile.load") into
 * buf (size n); returns 0 when e is not a pure NAME/ATTR chain. */
int pld_ast_dotted(const pld_expr_t *e, char *buf, size_t n);
/* 1 when kernel k runs on both AIV lanes of a cluster: its decorator's
 * attrs={"dual_aiv_dispatch": True} or a split mode other than none (the
 * interpreter's Groups and the compiled Group bodies) */
int pld_func_dual_aiv(const pld_func_t *k);

/* Span covering a..b (both inclusive, same file). */
pld_span_t pld_span_join(pld_span_t a, pld_span_t b);

/* ---------------------------------------------------------------------- types */
/* Enums of the IR (levels, roles, function types, memory spaces, layouts;
 * dtypes are in src/base/pld_dtype.h) and the static type representation the
 * checker attaches to AST nodes. Types live in the program's arena. */

/* ORDER PLD_LEVELS */
typedef enum pld_level {
    PLD_LV_NONE = 0, PLD_LV_AIV, PLD_LV_AIC, PLD_LV_CORE_GROUP, PLD_LV_CHIP_DIE, PLD_LV_CHIP,
    PLD_LV_HOST, PLD_LV_CLUSTER_0, PLD_LV_CLUSTER_1, PLD_LV_CLUSTER_2, PLD_LV_GLOBAL
} pld_level_t;
const char *pld_level_name(pld_level_t l);
pld_level_t pld_level_from_name(const char *name); /* accepts aliases (L2CACHE, NODE, POD, ...) */

typedef enum pld_role { PLD_ROLE_NONE = 0, PLD_ROLE_ORCHESTRATOR, PLD_ROLE_SUBWORKER } pld_role_t;

/* ORDER PLD_FTYPES */
typedef enum pld_ftype {
    PLD_FT_OPAQUE = 0, PLD_FT_ORCHESTRATION, PLD_FT_INCORE, PLD_FT_AIC, PLD_FT_AIV, PLD_FT_GROUP,
    PLD_FT_SPMD, PLD_FT_INLINE, PLD_FT_GRAPH
} pld_ftype_t;
const char *pld_ftype_name(pld_ftype_t f);
int pld_ftype_from_name(const char *name); /* -1 if unknown */

typedef enum pld_mem {
    PLD_MEM_NONE = 0, PLD_MEM_DDR, PLD_MEM_VEC, PLD_MEM_MAT, PLD_MEM_LEFT, PLD_MEM_RIGHT, PLD_MEM_ACC,
    PLD_MEM_BIAS, PLD_MEM_LEFTSCALE, PLD_MEM_RIGHTSCALE
} pld_mem_t;
const char *pld_mem_name(pld_mem_t m);
int pld_mem_from_name(const char *name); /* -1 if unknown */

/* pld_type.layout codes of PyPTO's MX scale layouts (a tensor's GM packing,
 * and the Mat tile an MX load makes from it). */
enum { PLD_LAYOUT_MX_A = 3, PLD_LAYOUT_MX_B = 4 };

typedef enum pld_dir { PLD_DIR_IN = 0, PLD_DIR_OUT, PLD_DIR_INOUT } pld_dir_t;

/* Function context classes used by the level rules. */
typedef enum pld_ctx_level {
    PLD_CTX_HOST = 1,    /* HOST orchestrator */
    PLD_CTX_CHIP = 2,    /* CHIP Orchestration function */
    PLD_CTX_KERNEL = 4   /* InCore / AIV / AIC kernel, or a pl.at(CORE_GROUP) scope */
} pld_ctx_level_t;

/* A dimension: a constant, a named dynamic dim (NR), or an expression that is
 * only known at run time (pld.world_size() * 2). */
typedef enum pld_dim_kind { PLD_DIM_CONST, PLD_DIM_SYM, PLD_DIM_EXPR } pld_dim_kind_t;
typedef struct pld_dim {
    pld_dim_kind_t kind;
    int64_t v;                 /* CONST */
    const char *sym;           /* SYM: interned name */
    const pld_expr_t *expr;    /* EXPR (and the source of SYM when useful) */
} pld_dim_t;

typedef enum pld_type_kind {
    PLD_TY_UNKNOWN = 0, /* not inferable statically (accept) */
    PLD_TY_NONE,        /* no value (side-effect op) */
    PLD_TY_SCALAR,
    PLD_TY_TENSOR,
    PLD_TY_DTENSOR,     /* window-bound DistributedTensor */
    PLD_TY_TILE,
    PLD_TY_TUPLE,
    PLD_TY_ARRAY,
    PLD_TY_PTR,         /* window buffer handle */
    PLD_TY_COMMCTX,
    PLD_TY_PREFETCH_CTX, /* pl.PrefetchAsyncContext (pl.prefetch.make_context) */
    PLD_TY_ASYNC_EVENT,  /* pl.AsyncEvent (pl.prefetch.async_prefetch) */
    PLD_TY_ASYNC_SESSION, /* pl.AsyncSession (pl.prefetch.session) */
    PLD_TY_MARKER       /* MemRef / other markers */
} pld_type_kind_t;

typedef struct pld_type pld_type_t;
struct pld_type {
    pld_type_kind_t kind;
    pld_dtype_t dtype;
    int rank;
    const pld_dim_t *shape;          /* rank dims */
    const pld_dim_t *valid;          /* rank dims or NULL (= shape) */
    pld_mem_t mem;                   /* tiles */
    int layout;                      /* 0 ND, 1 DN, 2 NZ, PLD_LAYOUT_MX_A (MX_A_ZZ), PLD_LAYOUT_MX_B (MX_B_NN) */
    int has_stride;                  /* explicit TensorView stride */
    int nelems;                      /* TUPLE */
    const pld_type_t *const *elems;
    int64_t array_len;               /* ARRAY */
    pld_dir_t dir;                   /* parameter direction */
};

/* Shared singletons (static storage). */
extern const pld_type_t pld_type_unknown;
extern const pld_type_t pld_type_none;
extern const pld_type_t pld_type_ptr;
extern const pld_type_t pld_type_commctx;
extern const pld_type_t pld_type_prefetch_ctx, pld_type_async_event, pld_type_async_session;

/* Constructors in the program arena (NULL on OOM). */
pld_type_t *pld_type_new(pld_program_t *p, pld_type_kind_t k);
const pld_type_t *pld_type_scalar(pld_program_t *p, pld_dtype_t d);
pld_dim_t *pld_dims_new(pld_program_t *p, int rank);

/* "pl.Tensor[[4, 64], pl.FP32]" style text of t. */
void pld_type_print(const pld_type_t *t, pld_buf_t *out);
void pld_dim_print(const pld_dim_t *d, pld_buf_t *out);
/* 1 when both dims are provably equal; 0 when provably different; -1 unknown. */
int pld_dim_eq(const pld_dim_t *a, const pld_dim_t *b);
int pld_type_is_tensorlike(const pld_type_t *t); /* TENSOR or DTENSOR */
/* The first call in block b (source order, nested blocks and expressions
 * included) whose resolved op id (pld_expr_t.op, set by the checker)
 * satisfies pred, or NULL. */
const pld_expr_t *pld_ast_find_call(const pld_block_t *b, int (*pred)(int op, void *ctx), void *ctx);
/* Number of elements when every dim is constant (checked, pld_size.h): -1
 * when a dim is not constant, -2 when a dim is negative or the count
 * overflows int64. */
int64_t pld_type_static_numel(const pld_type_t *t);

/* ------------------------------------------------------------------- op table */
/* The op table (pld_ops.def): ids, signatures, aliases and the unified DSL
 * names (pl.add, pl.load, ...) that dispatch on operand kinds. The table is
 * const: its signatures are parsed at build time (tools/gen_ops_table.c). */

typedef enum pld_op_id {
#define PLD_OP(id, name, lv, sig, doc) PLD_OPID_##id,
#include "pld_ops.def"
#undef PLD_OP
    PLD_OPID__COUNT
} pld_op_id_t;

/* Level bits of an op (where it may be called). */
enum { PLD_OPL_H = 1, PLD_OPL_C = 2, PLD_OPL_K = 4, PLD_OPL_S = 8 };

#define PLD_OP_MAX_PARAMS 12

typedef struct pld_op_param {
    const char *name;
    const char *kind;     /* any tensor dtensor tile scalar value list idx dtype mem int bool num str enum ctx ptr func */
    const char *deflt;    /* default text or NULL when required */
    int kwonly;
} pld_op_param_t;

typedef struct pld_op_info {
    pld_op_id_t id;
    const char *name;     /* canonical printed name, e.g. "pl.tile.load" */
    int levels;           /* PLD_OPL_* bits */
    int variadic;
    int nparams;
    pld_op_param_t params[PLD_OP_MAX_PARAMS];
    const char *doc;
    const char *sig;      /* raw signature text */
} pld_op_info_t;

/* Operand-kind dispatch of a unified DSL name. -1 = not available. */
typedef struct pld_unified {
    const char *name;     /* "pl.add" */
    int tile_tile, tile_scalar, tensor_tensor, tensor_scalar, scalar;
} pld_unified_t;

/* Returns the info of an op id (never NULL for a valid id). */
const pld_op_info_t *pld_op_info(pld_op_id_t id);
/* Looks up a canonical name or a plain alias ("pld.window"); -1 if none. */
int pld_op_lookup(const char *name);
/* The collectives and their HOST builtin dispatches (builtin.tensor.*, made
 * by the lowering, src/parser/pld_lower.c, with the source op's parameters
 * plus device=). pld_op_coll_kind: the pld.tensor.* collective an op id runs
 * (itself for a collective, the source collective for a builtin; allreduce
 * for builtin.tensor.allreduce_ring), -1 for any other op (indexed_all_to_all_v
 * included). pld_op_is_builtin_coll: 1 for a builtin.tensor.* op.
 * pld_op_builtin_of: the builtin of collective `kind` (ring: a ring
 * allreduce), -1 when it has none. */
int pld_op_coll_kind(int id);
int pld_op_is_builtin_coll(int id);
int pld_op_builtin_of(int kind, int ring);
/* Looks up a unified name ("pl.add"); NULL if none. */
const pld_unified_t *pld_op_unified(const char *name);
/* The position of kw among PyPTO's keyword names of u's leading parameters
 * where they differ from the resolved op's ("input" of pl.row_sum: 0); -1 if
 * kw is none of them. */
int pld_op_unified_kw(const pld_unified_t *u, const char *kw);
/* The broadcast family of an op, from its canonical name: 'r' for the
 * row_expand* ops (a [M, 1] vector repeated along the rows), 'c' for the
 * col_expand* ops ([1, N]), 0 for any other op. */
int pld_op_expand_axis(int id);
/* A printed form of PyPTO (its IR op name and argument order, pld_ops.c):
 * pld_op_printed(name, 0): the form spelled `name`, or NULL; pld_op_printed(NULL,
 * i): the i-th form (NULL past the last), for docs/ops.md. pld_op_lookup finds
 * the names too. */
typedef struct pld_printed {
    const char *name;          /* "pl.tensor.gather_mask" */
    pld_op_id_t id;            /* the op it is a form of */
    const char *kw;            /* applies only with this keyword given; NULL: always */
    const char *pos;           /* the parameters of the positionals ("input dst"); NULL: the op's */
} pld_printed_t;
const pld_printed_t *pld_op_printed(const char *name, int i);
/* Closest known op name (canonical, alias or unified) within a small edit
 * distance of `name`, or NULL. */
const char *pld_op_suggest(const char *name);
/* Closest parameter name of op `info` to `kw`, or NULL. */
const char *pld_op_suggest_param(const pld_op_info_t *info, const char *kw);
/* Index of the parameter named `kw`, or -1. */
int pld_op_param_index(const pld_op_info_t *info, const char *kw);
/* Levenshtein distance (capped) used by the suggestions. */
int pld_edit_distance(const char *a, const char *b);

#endif
