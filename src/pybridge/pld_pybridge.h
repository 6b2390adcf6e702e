/* pld_pybridge.h - the Python bridge: a rank runs the SubWorkers its HOST
 * orchestrator calls (functions written in Python, `@pl.function(level=
 * pl.Level.HOST, role=pl.Role.SubWorker)`) in an embedded Python (libpython,
 * optional at build time: CMake's PLDRUN_PYTHON), on numpy views (or torch
 * tensors sharing the memory) of the host tensors: what the function writes
 * lands in the tensors in place. docs/python.md, "SubWorkers".
 *
 * Neutral arguments only: dtypes, shapes, byte strides, pointers and scalars;
 * no interpreter values, no syntax. The interpreter reaches it through
 * pld_interp_opts_t.subworkers (the tool wires one to the other). The
 * interpreter is started on the first call (Python's signal handlers are not
 * installed: the tool keeps its own) and is never finalised. A Python
 * exception is a PLD_E_RUNTIME with the traceback in the caller's buffer,
 * never a crash of the rank. */
#ifndef PLD_PYBRIDGE_H
#define PLD_PYBRIDGE_H

#include "pld_buf.h"
#include "pld_dtype.h"
#include "pld_status.h"

#include <stdint.h>

#define PLD_PY_MAX_RANK 8

typedef enum pld_py_kind {
    PLD_PY_NONE = 0,
    PLD_PY_TENSOR,   /* dt, rank, shape, strides (bytes, >= 0), data (the first element) */
    PLD_PY_INT,      /* i */
    PLD_PY_FLOAT,    /* f */
    PLD_PY_BOOL      /* i (0 / 1) */
} pld_py_kind_t;

typedef struct pld_py_arg {
    pld_py_kind_t kind;
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_PY_MAX_RANK];
    int64_t strides[PLD_PY_MAX_RANK];
    void *data;
    int64_t i;
    double f;
} pld_py_arg_t;

/* One SubWorker: its name, parameter names, and the body the program gives
 * (dedented text, NULL for none), compiled as `def name(params):` with the
 * body's lines at body_line.. of file, so a traceback points into the
 * program. A body of `...` (an abstract SubWorker) needs the function from
 * the module (pld_py_opts_t.module). */
typedef struct pld_py_fn {
    const char *name;
    const char *const *params;
    int nparams;
    const char *body;
    const char *file;
    int body_line;
} pld_py_fn_t;

typedef struct pld_py_opts {
    const char *module;  /* a Python file whose functions, by name, replace the program's bodies; NULL = none */
    int torch;           /* 1: tensors are passed as torch tensors (torch.from_numpy), and `torch` is a global
                            of the bodies; 0: numpy arrays (BF16 as uint16 bits) */
} pld_py_opts_t;

typedef struct pld_py pld_py_t;

/* 1 when this build has the bridge (libpython linked). */
int pld_py_available(void);

/* Creates the bridge (Python starts at the first call and stays until the
 * process exits: numpy cannot be loaded again in a process, so the bridge is
 * made once per process). Returns PLD_E_NOMEM. */
pld_status_t pld_py_create(pld_py_t **out);
/* The options of the calls from now on (a new run: the module is loaded again
 * and the functions are built again at their next call). */
void pld_py_configure(pld_py_t *py, const pld_py_opts_t *opts);

/* Calls fn with args (nargs == fn->nparams). On PLD_E_RUNTIME (an exception,
 * a missing function, a dtype Python cannot view) the reason, with the Python
 * traceback, is appended to err. Not reentrant; one thread. */
pld_status_t pld_py_call(pld_py_t *py, const pld_py_fn_t *fn, const pld_py_arg_t *args, int nargs, pld_buf_t *err);

#endif
