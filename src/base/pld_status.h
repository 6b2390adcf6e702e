/* pld_status.h - status codes shared by every pldrun module. */
#ifndef PLD_STATUS_H
#define PLD_STATUS_H

typedef enum pld_status {
    PLD_OK = 0,
    PLD_E_SYNTAX,  /* lexing / parsing failed */
    PLD_E_TYPE,    /* static check failed */
    PLD_E_RUNTIME, /* error while running a program */
    PLD_E_MPI,     /* an MPI call failed */
    PLD_E_HW,      /* a kernel backend failed or is unavailable */
    PLD_E_NOMEM,   /* allocation failed */
    PLD_E_IO,      /* file could not be read or written */
    PLD_E_USAGE,   /* bad command line / API misuse */
    PLD_E_PEER     /* another rank failed: this one stopped without an error of its own */
} pld_status_t;

/* Returns a static lower-case name for a status ("ok", "syntax error", ...). */
const char *pld_status_name(pld_status_t st);

#endif
