/* pld_parse.h - recursive-descent parser: text -> AST (pld_ast.h).
 *
 * Accepts the printed IR (raw and ruff-formatted) and the hand-written DSL of
 * docs/ir_text_grammar.md: module constants, imports, one `@pl.program` class
 * or top-level `@pl.function`s, every statement and expression form. Python
 * constructs PyPTO rejects (try, del, lambda, x += 1, ...) are reported with a
 * clear error. Errors use panic-mode recovery and stop after 20. */
#ifndef PLD_PARSE_H
#define PLD_PARSE_H

#include "pld_ast.h"

/* Limits enforced with a clear error instead of deep recursion. */
#define PLD_PARSE_MAX_DEPTH 100
/* Height of one expression tree (long operator chains, attribute/subscript/
 * call trailers), so that every later recursive pass stays shallow. */
#define PLD_PARSE_MAX_HEIGHT 1000

/* Parses p->src into p. Diagnostics go to p->diags. Returns PLD_OK, or
 * PLD_E_SYNTAX when at least one error was reported, PLD_E_NOMEM on OOM. */
pld_status_t pld_parse_program(pld_program_t *p);

/* Convenience: creates, parses and returns a program (never NULL unless out of
 * memory; check pld_diag_has_errors(&p->diags)). Returns owned. */
pld_program_t *pld_parse_text(const char *file, const char *src, size_t len);

#endif
