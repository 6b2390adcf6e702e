/* pld_sim.c - the built-in `sim` kernel backend: kernels run inside this
 * interpreter. It is registered with the backend registry like any other
 * backend, and every kernel launch of a run goes through pld_hw_launch. */
#include "pld_hw.h"
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

typedef struct sim_state {
    int rank, nranks;
} sim_state_t;

static pld_status_t sim_open(const char *options, int rank, int nranks, void **state, char *err, size_t errn)
{
    if (options && *options) {
        snprintf(err, errn, "the sim backend takes no options (got '%s')", options);
        return PLD_E_HW;
    }
    sim_state_t *s = pld_mem_calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    s->rank = rank;
    s->nranks = nranks;
    *state = s;
    return PLD_OK;
}

static pld_status_t sim_launch(void *state, pld_hw_launch_t *l)
{
    (void)state;
    if (!l->host_state) {
        snprintf(l->err, l->errn, "the sim backend runs kernels of the interpreter only");
        return PLD_E_HW;
    }
    return pld_interp_run_kernel((pld_sim_call_t *)l->host_state);
}

static void sim_close(void *state)
{
    pld_mem_free(state);
}

static const pld_hw_ops_t sim_ops = {
    PLD_HW_ABI, sizeof(pld_hw_ops_t), "sim", "kernels interpreted by pldrun itself",
    sim_open, NULL, sim_launch, NULL, sim_close, NULL, NULL, NULL, NULL, NULL,
};

const pld_hw_ops_t *pld_interp_sim_backend(void)
{
    return &sim_ops;
}
