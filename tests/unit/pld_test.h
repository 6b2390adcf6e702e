/* pld_test.h - helpers shared by the CUnit suites in tests/unit/.
 * Header-only (static functions); each test_<module>.c is one executable. */
#ifndef PLD_TEST_H
#define PLD_TEST_H

#include "pld_ast.h"
#include "pld_mem.h"
#include "pld_parse.h"

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs every suite of the NULL-terminated table; returns the process exit
 * code (0 when no assertion failed and every suite initialised). */
static int pld_test_main(CU_SuiteInfo *suites)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "CUnit: cannot initialise the registry: %s\n", CU_get_error_msg());
        return 2;
    }
    if (CU_register_suites(suites) != CUE_SUCCESS) {
        fprintf(stderr, "CUnit: cannot register suites: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failures = CU_get_number_of_failures();
    unsigned bad_suites = CU_get_number_of_suites_failed();
    CU_cleanup_registry();
    return failures != 0 || bad_suites != 0;
}

#endif
