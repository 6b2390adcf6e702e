/* signature.h - `pldrun --signature`: the entry function's parameters as one
 * line of JSON on stdout (no MPI, no run), for tools that drive pldrun (the
 * Python API, python/pldrun):
 *
 *   {"entry": "main", "params": [{"name": "x", "kind": "tensor", "dtype": "FP32",
 *    "shape": [4, 64], "dir": "in"}, {"name": "n", "kind": "scalar", "dtype": "INT64",
 *    "shape": [], "dir": "in"}]}
 *
 * A dynamic dimension is its name as a string ("M"); a computed one is its
 * text ("M * 2"). dir: "in", "out" or "inout" (pl.Out / pl.InOut). */
#ifndef PLDRUN_SIGNATURE_H
#define PLDRUN_SIGNATURE_H

#include "pld_ast.h"
#include "pld_buf.h"

/* Writes the signature of the entry (`entry`, NULL: the one pldrun would
 * run) of checked program p into out; on an error (no or an ambiguous
 * entry) the message goes to msg. Returns an exit status (0, EX_USAGE). */
int signature_write(pld_program_t *p, const char *entry, pld_buf_t *out, pld_buf_t *msg);

#endif
