/* pld_check.h - the static checker: names, ops, types and every static rule
 * of the pld.* ops and collectives, run before anything executes.
 *
 * Resolves every name (parameters, locals, module constants, dynamic dims,
 * self.f functions), binds every call to an op of the op table (pld_ast.h)
 * with arity/keyword checks and "did you mean" notes, infers shapes and dtypes
 * where operands are static, checks function levels (HOST / CHIP / kernel)
 * and the rail rules of docs/pld_semantics.md. Results are written into the
 * AST's sema fields; diagnostics go to p->diags. */
#ifndef PLD_CHECK_H
#define PLD_CHECK_H

#include "pld_ast.h"
#include "pld_npu_profile.h"

typedef struct pld_check_opts {
    int ranks;            /* rank count P when known (--ranks, or the real P at run time); 0 = unknown */
    const pld_npu_profile_t *platform; /* platform profile (borrowed); NULL = a2a3 */
    int subworkers;       /* 1: the HOST orchestrator may call SubWorkers (the tool has the Python bridge,
                             docs/python.md); 0: such a call is an error saying there is no bridge */
} pld_check_opts_t;

/* Checks a parsed program. Returns PLD_OK, PLD_E_TYPE when an error was
 * reported, PLD_E_SYNTAX when the program did not parse, PLD_E_NOMEM on OOM.
 * May be called again with other opts (e.g. the real rank count): earlier
 * sema results are replaced. Not collective. */
pld_status_t pld_check_program(pld_program_t *p, const pld_check_opts_t *opts);

/* The context a checked function's body runs in: PLD_CTX_HOST (HOST
 * orchestrator), PLD_CTX_CHIP (CHIP orchestration), PLD_CTX_KERNEL (InCore/AIV/
 * AIC kernel), or 0 for a SubWorker (host Python: run by the Python bridge). */
int pld_check_func_ctx(const pld_func_t *f);

/* The builtin template package prefix of a synthesized builtin kernel's
 * builtin_template_dir attribute (LowerL2TensorCollectives, pld_lower.c). */
#define PLD_BUILTIN_TEMPLATE_PKG ":pypto.runtime.builtins.collectives."

/* The collective (PLD_OPID_PLD_ALL_TO_ALL_V) a FunctionType.AIV function
 * stands for when its decorator's attrs name the builtin template package of
 * that collective (a kernel synthesized by LowerL2TensorCollectives, or read
 * back from --print-lowered); -1 for any other function. Its body is never
 * run: a call launches the builtin kernel. */
int pld_check_builtin_kernel(const pld_func_t *f);

/* ---------------------------------------------------------------- lowering
 * (pld_lower.c) IR -> IR passes run between the checker and the run, on a
 * program that checked without errors; they know no MPI:
 *   LowerL2TensorCollectives: a CHIP-rail pld.tensor.all_to_all_v becomes a
 *     call of a synthesized AIV builtin kernel __builtin_all_to_all_v__<dt>
 *     (one per dtype variant, added to the program) with its launch spec;
 *     its postcondition rejects any collective left in a CHIP body;
 *   LowerHostTensorCollectives: a HOST-rail collective becomes one
 *     builtin.tensor.* dispatch per participating device.
 * InCore bodies pass through. Rejections are diagnostics in p->diags
 * (PLD_E_TYPE). The rewritten program is checked again here (same opts), so
 * its sema fields are those of the lowered program. docs/lowering.md. */
typedef struct pld_lower_stats {
    int chip_calls;       /* CHIP-rail collectives rewritten */
    int host_calls;       /* HOST-rail collectives rewritten */
    int kernels;          /* builtin kernels synthesized */
} pld_lower_stats_t;
pld_status_t pld_lower_program(pld_program_t *p, const pld_check_opts_t *opts, pld_lower_stats_t *stats);
/* The admitted block count B of an all_to_all_v requesting L blocks over P
 * ranks (RFC #2521's CalAllToAllVBlocks): L while L < P, else the largest
 * multiple of P not above L. */
int64_t pld_lower_a2av_blocks(int64_t p, int64_t l);

/* The padding mode a fillpad `pad_value` argument names: 0 zero (also the
 * default, e == NULL, and the literals 0 / 0.0), 1 max (PadValue.max,
 * math.inf), 2 min (PadValue.min, -math.inf); -1 for anything else. */
int pld_check_pad_mode(const pld_expr_t *e);

/* The MaskPattern (1..7) a gather_mask `mask_pattern` argument names: an
 * integer literal or pl.tile.MaskPattern.P0101 .. P1111; -1 for anything else. */
int pld_check_mask_pattern(const pld_expr_t *e);

/* A mode argument spelled as one of names[n] (a string literal) or its index
 * (an integer literal): the index; dflt when e is NULL (absent); -1 for
 * anything else. pl.tile.mgather's coalesce ("row", "elem") and gather_oob
 * ("undefined", "clamp", "wrap", "zero") tables: */
int pld_check_mode_arg(const pld_expr_t *e, const char *const *names, int n, int dflt);
extern const char *const pld_mgather_coalesce[2];
extern const char *const pld_mgather_oob[4];
/* pl.tile.gather_compare's cmp_mode names ("eq", "ne", "lt", "le", "gt", "ge"). */
extern const char *const pld_gather_cmp_modes[6];

/* The parameter positions of scatter_update's dim, index and src in its bound
 * arguments a[7] (input, arg1..arg3, dim=, index=, src=) for the three call
 * forms (input, dim, index, src), (input, index, src, dim=) and (input, dim,
 * index=, src=), or all by keyword; 0 when the call fits none. */
int pld_check_scatter_update_args(const pld_expr_t *const *a, int pos[3]);

/* Parses and checks `src` in one go; returns the program (owned, never NULL
 * unless out of memory). *st receives the status. */
pld_program_t *pld_check_text(const char *file, const char *src, size_t len, const pld_check_opts_t *opts,
                              pld_status_t *st);

#endif
