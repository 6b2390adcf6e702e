/* pld_ops.h - the op table (pld_ops.def): ids, signatures, aliases and the
 * unified DSL names (pl.add, pl.load, ...) that dispatch on operand kinds. */
#ifndef PLD_OPS_H
#define PLD_OPS_H

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
    const char *kind;     /* any tensor dtensor tile scalar value list dtype mem int bool num str enum ctx ptr func */
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
/* Looks up a unified name ("pl.add"); NULL if none. */
const pld_unified_t *pld_op_unified(const char *name);
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
