/* pld_debug.c - the handle of the debugging machinery (pld_debug.h): one
 * pointer for the three tools, created when one of them is on. */
#include "pld_debug_int.h"
#include "pld_mem.h"

#include <stdio.h>

pld_status_t pld_debug_create(const pld_debug_opts_t *o, pld_debug_t **out, char *err, size_t errn)
{
    *out = NULL;
    if (!o->tools)
        return PLD_OK;
    pld_debug_t *d = pld_mem_calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    d->o = *o;
    pld_status_t st = PLD_OK;
    if (o->tools & PLD_DEBUG_POISON)
        st = pld_debug_poison_open(d, err, errn);
    if (st == PLD_OK && (o->tools & PLD_DEBUG_RACES))
        st = pld_debug_race_open(d, err, errn);
    if (st == PLD_OK && (o->tools & PLD_DEBUG_SCHEDULE))
        st = pld_debug_sched_open(d);
    if (st != PLD_OK) {
        pld_debug_destroy(d);
        return st;
    }
    *out = d;
    return PLD_OK;
}

void pld_debug_destroy(pld_debug_t *d)
{
    if (!d)
        return;
    pld_debug_poison_close(d);
    pld_debug_race_close(d);
    pld_debug_sched_close(d);
    pld_mem_free(d);
}

int pld_debug_on(const pld_debug_t *d, int tool)
{
    if (!d)
        return 0;
    switch (tool) {
    case PLD_DEBUG_POISON: return d->poison != NULL;
    case PLD_DEBUG_RACES: return d->race != NULL;
    case PLD_DEBUG_SCHEDULE: return d->sched != NULL;
    default: return 0;
    }
}
