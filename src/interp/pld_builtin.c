/* pld_builtin.c - the builtin collective kernels of a lowered program
 * (src/parser/pld_lower.c, docs/lowering.md) as kernel launches through the
 * backend boundary (pld_hw_launch).
 *
 * Two call forms reach here:
 *   builtin.tensor.<op>(..., device=d)    a HOST rail dispatch: launched on
 *                                         the rank whose logical device is d
 *                                         (every other rank skips it)
 *   self.__builtin_all_to_all_v__<dt>(...) a CHIP rail call of a synthesized
 *                                         AIV builtin kernel, with its launch
 *                                         spec core_num=B, sync_start=True
 * The launch carries the kernel-ABI arguments (the tensor operands, then the
 * CommContext of their comm domain as a scalar: args[5..7] for the CHIP
 * all_to_all_v, the seed's three unread duplicates included). The `sim`
 * backend runs the kernel with the interpreter's collective code
 * (pld_exec_coll_run) through host_state; a compiled backend would map the
 * kernel name to its builtin binary. */
#include "pld_interp_int.h"

#include <stdio.h>
#include <string.h>

#define MAX_ARGS 12

typedef struct launch {
    pld_hw_arg_t args[MAX_ARGS];
    pld_be_param_t params[MAX_ARGS]; /* the kernel's parameters as a plugin sees them */
    int n;
    const void *ctx;              /* CommContext of the first window-bound operand */
} launch_t;

/* Adds the ABI description of one operand value (room checked by the caller). */
static void add_value(pld_interp_t *it, launch_t *l, const pld_value_t *v, const char *name)
{
    pld_be_param_t *p = &l->params[l->n];
    memset(p, 0, sizeof *p);
    p->name = name;
    p->dir = PLD_BE_DIR_UNKNOWN;
    pld_call_hw_arg(it, v, &l->args[l->n], p);
    if (!l->ctx && l->args[l->n].is_tensor)
        l->ctx = l->args[l->n].tensor.comm_ctx;
    l->n++;
}

/* Adds `copies` CommCtx scalars (the address of the operands' CommContext). */
static void add_ctx(launch_t *l, int copies)
{
    for (int i = 0; i < copies && l->n < MAX_ARGS; i++, l->n++) {
        memset(&l->args[l->n], 0, sizeof l->args[l->n]);
        l->args[l->n].bits = (uint64_t)(uintptr_t)l->ctx;
        l->args[l->n].dt = PLD_DT_UINT64;
        l->params[l->n] = (pld_be_param_t){"comm_ctx", PLD_BE_P_COMM_CTX, 8, PLD_BE_DIR_IN, 0, 0};
    }
}

/* Evaluates the tensor operands of call e (bound like collective `kind`) into
 * l; skips absent and non-tensor operands (the kernel's scalars come after). */
static pld_status_t add_operands(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int kind, launch_t *l)
{
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)kind);
    for (int i = 0; i < info->nparams; i++) {
        const pld_expr_t *a = pld_op_arg(e, i);
        if (!a || info->params[i].kwonly)
            continue;
        pld_value_t v;
        pld_status_t st = it->walk->eval(it, f, a, &v);
        if (st != PLD_OK)
            return st;
        if (v.kind == PLD_V_TENSOR && l->n + 3 >= MAX_ARGS) { /* room for the CommCtx tail */
            pld_value_release(&v);
            return pld_rt_error(it, f, e->span, "%s: more tensor operands than a builtin launch carries (%d)",
                                info->name, MAX_ARGS - 3);
        }
        if (v.kind == PLD_V_TENSOR)
            add_value(it, l, &v, info->params[i].name);
        pld_value_release(&v);
    }
    return PLD_OK;
}

/* One launch of builtin kernel `name` running collective `kind` of call e. */
static pld_status_t launch(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const char *name, int kind,
                           const launch_t *l, int64_t blocks, int sync_start, pld_value_t *out)
{
    pld_sim_call_t call = {.it = it, .caller = f, .span = e->span, .blocks = (int)blocks, .builtin = e,
                           .builtin_kind = kind};
    /* the kernel as a plugin sees it; `builtin` names the collective it implements */
    const pld_be_kernel_desc_t desc = {.struct_size = sizeof desc, .name = name, .program = it->p->file,
                                       .line = (int)e->span.line, .core_type = PLD_BE_CORE_AIV,
                                       .nparams = (uint32_t)l->n, .params = l->params,
                                       .builtin = pld_op_info((pld_op_id_t)kind)->name};
    pld_hw_launch_t hl;
    memset(&hl, 0, sizeof hl);
    hl.kernel = name;
    hl.func_index = -1;
    hl.nargs = l->n;
    hl.args = l->args;
    hl.desc = &desc;
    hl.block_num = (int)blocks;
    hl.sync_start = sync_start;
    hl.timeout_ms = pld_call_timeout_ms(it);
    hl.host_state = &call;
    hl.err = it->errbuf;
    hl.errn = sizeof it->errbuf;
    it->errbuf[0] = '\0';
    pld_status_t st = pld_hw_launch(it->hw, &hl);
    if (st != PLD_OK) {
        pld_value_release(&call.result);
        if (!it->failed)
            return pld_rt_error(it, f, e->span, "kernel backend '%s' failed to run the builtin kernel %s: %s",
                                pld_hw_name(it->hw), name, it->errbuf[0] ? it->errbuf : pld_status_name(st));
        return st;
    }
    if (!call.ran) {
        /* another backend ran it: the collective's result is its target */
        const pld_op_info_t *info = pld_op_info((pld_op_id_t)kind);
        return it->walk->eval(it, f, pld_op_arg(e, pld_op_param_index(info, "target")), out);
    }
    *out = call.result;
    return PLD_OK;
}

pld_status_t pld_builtin_exec(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)e->op);
    const int kind = pld_op_coll_kind(e->op), di = pld_op_param_index(info, "device");
    int64_t dev, core_num = 1;
    pld_status_t st = it->walk->eval_i64(it, f, pld_op_arg(e, di), &dev);
    if (st != PLD_OK)
        return st;
    if (dev < 0 || dev >= it->comm.nranks)
        return pld_rt_error(it, f, pld_op_arg(e, di)->span, "%s: device=%lld is outside [0, %d): the run has %d rank%s",
                            info->name, (long long)dev, it->comm.nranks, it->comm.nranks,
                            it->comm.nranks == 1 ? "" : "s");
    *out = pld_v_none();
    if (dev != it->comm.rank)
        return PLD_OK; /* another device's dispatch */
    const int ci = pld_op_param_index(info, "core_num");
    if (ci >= 0 && (st = pld_op_iarg(it, f, e, ci, 1, &core_num)) != PLD_OK)
        return st;
    launch_t l;
    memset(&l, 0, sizeof l);
    if ((st = add_operands(it, f, e, kind, &l)) != PLD_OK)
        return st;
    add_ctx(&l, 1); /* device_ctx (the kernel reads the rank count from it) */
    pld_value_t r = pld_v_none();
    st = launch(it, f, e, info->name, kind, &l, core_num < 1 ? 1 : core_num, core_num > 1, &r);
    pld_value_release(&r); /* the statement form: the rebind follows the dispatches */
    return st;
}

pld_status_t pld_builtin_call(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn,
                              pld_value_t *out)
{
    const int kind = pld_check_builtin_kernel(fn);
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)kind);
    int64_t blocks = 1;
    pld_status_t st = pld_op_iarg(it, f, e, pld_op_param_index(info, "core_num"), 1, &blocks);
    if (st != PLD_OK)
        return st;
    const pld_expr_t *ss = pld_walk_kwarg(e, "sync_start");
    launch_t l;
    memset(&l, 0, sizeof l);
    if ((st = add_operands(it, f, e, kind, &l)) != PLD_OK)
        return st;
    add_ctx(&l, 3); /* args[5..7]: one CommCtx per DistributedTensor parameter */
    return launch(it, f, e, fn->name, kind, &l, blocks, ss && ss->kind == PLD_EX_BOOL && ss->u.bval, out);
}

pld_status_t pld_builtin_run_sim(pld_sim_call_t *c)
{
    pld_value_release(&c->result);
    return pld_exec_coll_run(c->it, c->caller, c->builtin, c->builtin_kind, &c->result);
}
