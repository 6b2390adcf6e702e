/* pld_hw.c - backend registry and the thin dispatch layer around a backend. */
#include "pld_hw.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define MAX_BACKENDS 8

static const pld_hw_ops_t *registry[MAX_BACKENDS];
static int nregistry;

struct pld_hw {
    const pld_hw_ops_t *ops;
    void *state;
    uint64_t launches;
};

int pld_hw_register(const pld_hw_ops_t *ops)
{
    if (!ops || ops->abi_version != PLD_HW_ABI || ops->struct_size < sizeof(pld_hw_ops_t) || !ops->name ||
        !ops->open || !ops->launch || !ops->close || nregistry >= MAX_BACKENDS)
        return 0;
    for (int i = 0; i < nregistry; i++)
        if (strcmp(registry[i]->name, ops->name) == 0)
            return registry[i] == ops;
    registry[nregistry++] = ops;
    return 1;
}

int pld_hw_count(void)
{
    return nregistry;
}

const pld_hw_ops_t *pld_hw_get(int i)
{
    return i >= 0 && i < nregistry ? registry[i] : NULL;
}

pld_status_t pld_hw_open(const char *name, const char *options, int rank, int nranks, pld_hw_t **out, char *err,
                         size_t errn)
{
    *out = NULL;
    const pld_hw_ops_t *ops = NULL;
    for (int i = 0; i < nregistry; i++)
        if (strcmp(registry[i]->name, name) == 0)
            ops = registry[i];
    if (!ops) {
        char list[256] = "";
        for (int i = 0; i < nregistry; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, registry[i]->name, sizeof list - strlen(list) - 1);
        }
        snprintf(err, errn, "unknown kernel backend '%s' (available: %s)", name, nregistry ? list : "none");
        return PLD_E_HW;
    }
    pld_hw_t *hw = pld_mem_calloc(1, sizeof *hw);
    if (!hw) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    hw->ops = ops;
    pld_status_t st = ops->open(options, rank, nranks, &hw->state, err, errn);
    if (st != PLD_OK) {
        pld_mem_free(hw);
        return st;
    }
    *out = hw;
    return PLD_OK;
}

pld_status_t pld_hw_load(pld_hw_t *hw, const void *program, char *err, size_t errn)
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
    return hw->ops->name;
}

uint64_t pld_hw_launches(const pld_hw_t *hw)
{
    return hw->launches;
}
