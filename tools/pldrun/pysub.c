/* pysub.c - SubWorkers for the tool (pysub.h). Without the bridge in the
 * build (PLD_HAVE_PYBRIDGE unset: CMake's PLDRUN_PYTHON found no libpython),
 * the options are still accepted and the checker refuses a SubWorker call
 * with the reason. */
#include "pysub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pysub_option(int argc, char **argv, int *i, pysub_t *o)
{
    const char *a = argv[*i];
    const int mod = strcmp(a, "--subworkers") == 0, ten = strcmp(a, "--subworker-tensors") == 0;
    if (!mod && !ten)
        return 0;
    const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (mod && (!val || !val[0])) {
        fprintf(stderr, "pldrun: --subworkers needs a Python file (FILE.py)\n");
        return -1;
    }
    if (ten && (!val || (strcmp(val, "numpy") != 0 && strcmp(val, "torch") != 0))) {
        fprintf(stderr, "pldrun: --subworker-tensors must be numpy or torch\n");
        return -1;
    }
    if (mod)
        o->module = val;
    else
        o->torch = strcmp(val, "torch") == 0;
    (*i)++;
    return 1;
}

const char *pysub_usage(void)
{
    return "  --subworkers FILE.py\n"
           "                      SubWorkers (Python HOST functions) run FILE's functions of their names\n"
           "                      instead of the program's bodies (docs/python.md, \"SubWorkers\")\n"
           "  --subworker-tensors numpy|torch\n"
           "                      what a SubWorker gets for a host tensor (default numpy; PyPTO's bodies\n"
           "                      use torch)\n";
}

#ifdef PLD_HAVE_PYBRIDGE
#include "pld_pybridge.h"

int pysub_enabled(void)
{
    const char *no = getenv("PLDRUN_NO_PYTHON");
    return !(no && no[0] && strcmp(no, "0") != 0);
}

/* The process's one bridge: Python cannot be started twice in a process
 * (numpy), so a --batch or a sweep runs every job in it, each with its own
 * options (a job's first call configures it). */
static pld_py_t *bridge;

static pld_status_t call(void *ctx, const pld_py_fn_t *fn, const pld_py_arg_t *args, int nargs, pld_buf_t *err)
{
    pysub_t *o = ctx;
    if (!bridge) {
        /* one BLAS thread per rank: the ranks already share the cores */
        setenv("OPENBLAS_NUM_THREADS", "1", 0);
        setenv("OMP_NUM_THREADS", "1", 0);
        if (pld_py_create(&bridge) != PLD_OK) {
            pld_buf_puts(err, "out of memory");
            return PLD_E_RUNTIME;
        }
    }
    if (!o->configured) {
        pld_py_opts_t po = {o->module, o->torch};
        pld_py_configure(bridge, &po);
        o->configured = 1;
    }
    return pld_py_call(bridge, fn, args, nargs, err);
}

const pld_subworkers_t *pysub_hooks(pysub_t *o)
{
    if (!pysub_enabled())
        return NULL;
    o->hooks.ctx = o;
    o->hooks.call = call;
    return &o->hooks;
}
#else
int pysub_enabled(void)
{
    return 0;
}

const pld_subworkers_t *pysub_hooks(pysub_t *o)
{
    (void)o;
    return NULL;
}

#endif
