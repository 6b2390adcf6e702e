/* signature.c - `pldrun --signature` (signature.h). */
#include "signature.h"
#include "pld_interp.h"

#include <sysexits.h>

/* a JSON string (names and dim texts are identifiers and operators: escape the two that matter) */
static void json_str(pld_buf_t *out, const char *s)
{
    pld_buf_printf(out, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            pld_buf_printf(out, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            pld_buf_printf(out, "%c", *s);
    }
    pld_buf_printf(out, "\"");
}

static const char *kind_name(const pld_type_t *t)
{
    switch (t ? t->kind : PLD_TY_UNKNOWN) {
    case PLD_TY_SCALAR: return "scalar";
    case PLD_TY_TENSOR: return "tensor";
    case PLD_TY_DTENSOR: return "dtensor";
    case PLD_TY_TILE: return "tile";
    case PLD_TY_ARRAY: return "array";
    case PLD_TY_COMMCTX: return "commctx";
    default: return "other";
    }
}

int signature_write(pld_program_t *p, const char *entry, pld_buf_t *out, pld_buf_t *msg)
{
    pld_interp_opts_t io = {0};
    io.entry = entry;
    pld_interp_t *it = NULL;
    char err[512] = "";
    pld_status_t st = pld_interp_create(p, &io, NULL, &it, err, sizeof err);
    if (st != PLD_OK) {
        pld_buf_printf(msg, "pldrun: %s\n", err[0] ? err : pld_status_name(st));
        return st == PLD_E_NOMEM ? EX_SOFTWARE : EX_USAGE;
    }
    const pld_func_t *fn = pld_interp_entry_func(it);
    pld_buf_printf(out, "{\"entry\": ");
    json_str(out, fn->name);
    pld_buf_printf(out, ", \"params\": [");
    for (int i = 0; i < pld_interp_nparams(it); i++) {
        const pld_param_t *pp = pld_interp_param(it, i);
        const pld_type_t *t = pp->type;
        pld_buf_printf(out, "%s{\"name\": ", i ? ", " : "");
        json_str(out, pp->name);
        pld_buf_printf(out, ", \"kind\": \"%s\", \"dtype\": \"%s\", \"shape\": [", kind_name(t),
                       t ? pld_dtype_name(t->dtype) : "?");
        for (int d = 0; t && t->kind != PLD_TY_SCALAR && d < t->rank; d++) {
            pld_buf_printf(out, "%s", d ? ", " : "");
            if (t->shape[d].kind == PLD_DIM_CONST) {
                pld_buf_printf(out, "%lld", (long long)t->shape[d].v);
            } else {
                pld_buf_t dim;
                pld_buf_init(&dim);
                pld_dim_print(&t->shape[d], &dim);
                json_str(out, pld_buf_str(&dim));
                pld_buf_fini(&dim);
            }
        }
        const pld_dir_t dir = t ? t->dir : PLD_DIR_IN;
        pld_buf_printf(out, "], \"dir\": \"%s\"}", dir == PLD_DIR_OUT ? "out" : dir == PLD_DIR_INOUT ? "inout" : "in");
    }
    pld_buf_printf(out, "]}\n");
    pld_interp_destroy(it);
    return EX_OK;
}
