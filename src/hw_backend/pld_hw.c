/* pld_hw.c - backend registry and the thin dispatch layer around a backend. */
#include "pld_hw.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

struct pld_hw {
    const pld_hw_ops_t *ops;
    void *state;
    const char *name;                 /* the backend's own name (a plugin's, not "plugin") */
    uint64_t launches;
};

void pld_hw_registry_init(pld_hw_registry_t *r)
{
    memset(r, 0, sizeof *r);
}

int pld_hw_register(pld_hw_registry_t *r, const pld_hw_ops_t *ops)
{
    if (!ops || ops->abi_version != PLD_HW_ABI || ops->struct_size < sizeof(pld_hw_ops_t) || !ops->name ||
        !ops->open || !ops->launch || !ops->close)
        return 0;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->ops[i]->name, ops->name) == 0)
            return r->ops[i] == ops;
    if (r->n >= PLD_HW_MAX_BACKENDS)
        return 0;
    r->ops[r->n++] = ops;
    return 1;
}

int pld_hw_count(const pld_hw_registry_t *r)
{
    return r->n;
}

const pld_hw_ops_t *pld_hw_get(const pld_hw_registry_t *r, int i)
{
    return i >= 0 && i < r->n ? r->ops[i] : NULL;
}

pld_status_t pld_hw_open(const pld_hw_registry_t *r, const char *name, const char *options, int rank, int nranks,
                         pld_hw_t **out, char *err, size_t errn)
{
    *out = NULL;
    const pld_hw_ops_t *ops = NULL;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->ops[i]->name, name) == 0)
            ops = r->ops[i];
    if (!ops) {
        char list[256] = "";
        for (int i = 0; i < r->n; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, r->ops[i]->name, sizeof list - strlen(list) - 1);
        }
        snprintf(err, errn, "unknown kernel backend '%s' (available: %s)", name, r->n ? list : "none");
        return PLD_E_HW;
    }
    void *state = NULL;
    pld_status_t st = ops->open(options, rank, nranks, &state, err, errn);
    if (st != PLD_OK)
        return st;
    st = pld_hw_wrap(ops, state, ops->name, out, err, errn);
    if (st != PLD_OK)
        ops->close(state);
    return st;
}

pld_status_t pld_hw_wrap(const pld_hw_ops_t *ops, void *state, const char *name, pld_hw_t **out, char *err,
                         size_t errn)
{
    pld_hw_t *hw = pld_mem_calloc(1, sizeof *hw);
    if (!hw) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    hw->ops = ops;
    hw->state = state;
    hw->name = name;
    *out = hw;
    return PLD_OK;
}

pld_status_t pld_hw_load(pld_hw_t *hw, const pld_hw_program_t *program, char *err, size_t errn)
{
    return hw->ops->load ? hw->ops->load(hw->state, program, err, errn) : PLD_OK;
}

pld_status_t pld_hw_launch(pld_hw_t *hw, pld_hw_launch_t *l)
{
    hw->launches++;
    return hw->ops->launch(hw->state, l);
}

pld_status_t pld_hw_sync(pld_hw_t *hw, char *err, size_t errn)
{
    return hw->ops->sync ? hw->ops->sync(hw->state, err, errn) : PLD_OK;
}

void pld_hw_close(pld_hw_t *hw)
{
    if (!hw)
        return;
    hw->ops->close(hw->state);
    pld_mem_free(hw);
}

const char *pld_hw_name(const pld_hw_t *hw)
{
    return hw->name;
}

uint64_t pld_hw_caps(const pld_hw_t *hw)
{
    return hw && hw->ops->caps ? hw->ops->caps(hw->state) : 0;
}

uint64_t pld_hw_launches(const pld_hw_t *hw)
{
    return hw->launches;
}

pld_status_t pld_hw_window_alloc(pld_hw_t *hw, const pld_hw_window_req_t *req, char *err, size_t errn)
{
    if (!hw->ops->window_alloc) {
        snprintf(err, errn, "backend '%s' does not place windows", hw->name);
        return PLD_E_USAGE;
    }
    return hw->ops->window_alloc(hw->state, req, err, errn);
}

pld_status_t pld_hw_window_free(pld_hw_t *hw, const void *host_ctx, const pld_be_coll_t *group, char *err,
                                size_t errn)
{
    return hw->ops->window_free ? hw->ops->window_free(hw->state, host_ctx, group, err, errn) : PLD_OK;
}

pld_status_t pld_hw_window_clear(pld_hw_t *hw, const void *host_ctx, char *err, size_t errn)
{
    return hw->ops->window_clear ? hw->ops->window_clear(hw->state, host_ctx, err, errn) : PLD_OK;
}

pld_status_t pld_hw_window_fetch(pld_hw_t *hw, const void *host_ctx, char *err, size_t errn)
{
    return hw->ops->window_fetch ? hw->ops->window_fetch(hw->state, host_ctx, err, errn) : PLD_OK;
}
