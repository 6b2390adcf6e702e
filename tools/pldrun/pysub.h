/* pysub.h - SubWorkers (Python HOST functions) for the tool: the options
 * --subworkers FILE.py and --subworker-tensors numpy|torch, whether this
 * pldrun runs SubWorkers (built with the Python bridge, PLDRUN_NO_PYTHON not
 * set), and the bridge wired into the interpreter (pld_interp_opts_t.
 * subworkers), started at a rank's first SubWorker call; Python then
 * stays until the process exits. docs/python.md, "SubWorkers". */
#ifndef PLDRUN_PYSUB_H
#define PLDRUN_PYSUB_H

#include "pld_interp.h"

typedef struct pysub {
    const char *module;       /* --subworkers FILE.py */
    int torch;                /* --subworker-tensors torch */
    int configured;           /* the process's bridge has these options */
    pld_subworkers_t hooks;
} pysub_t;

/* Parses argv[*i] when it is one of the options (its value at *i + 1; *i is
 * advanced). Returns 0 when it is not, 1 when taken, -1 after a usage message. */
int pysub_option(int argc, char **argv, int *i, pysub_t *o);
/* The options' lines of the usage text. */
const char *pysub_usage(void);
/* 1 when this pldrun runs SubWorkers (the checker's pld_check_opts_t.subworkers). */
int pysub_enabled(void);
/* The hooks for pld_interp_opts_t.subworkers (NULL when not enabled). */
const pld_subworkers_t *pysub_hooks(pysub_t *o);

#endif
