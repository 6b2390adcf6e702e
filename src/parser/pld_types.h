/* pld_types.h - enums of the IR (levels, roles, function types, memory
 * spaces, layouts; dtypes are in src/base/pld_dtype.h) and the static type representation the checker
 * attaches to AST nodes. Types live in the program's arena. */
#ifndef PLD_TYPES_H
#define PLD_TYPES_H

#include "pld_ast.h"
#include "pld_dtype.h"

#include <stdint.h>

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
    PLD_TY_MARKER       /* MemRef / prefetch handles / other markers */
} pld_type_kind_t;

typedef struct pld_type pld_type_t;
struct pld_type {
    pld_type_kind_t kind;
    pld_dtype_t dtype;
    int rank;
    const pld_dim_t *shape;          /* rank dims */
    const pld_dim_t *valid;          /* rank dims or NULL (= shape) */
    pld_mem_t mem;                   /* tiles */
    int layout;                      /* 0 ND, 1 DN, 2 NZ, ... */
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
/* Number of elements when every dim is constant, else -1. */
int64_t pld_type_static_numel(const pld_type_t *t);

#endif
