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

/* Runs the suites of the NULL-terminated table: all of them, or only those
 * named on the command line (`test_parse parse_oom`). `--list` prints the
 * suite names. Returns the process exit code: 0 when no assertion failed and
 * every suite initialised (main returns CU_get_number_of_failures() != 0). */
static inline int pld_test_run(int argc, char **argv, CU_SuiteInfo *suites)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (CU_SuiteInfo *s = suites; s->pName; s++)
            printf("%s\n", s->pName);
        return 0;
    }
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
    unsigned failures = 0, bad_suites = 0;
    if (argc <= 1) {
        CU_basic_run_tests();
        failures = CU_get_number_of_failures();
        bad_suites = CU_get_number_of_suites_failed();
    }
    for (int i = 1; i < argc; i++) {
        CU_pSuite s = CU_get_suite(argv[i]);
        if (!s) {
            fprintf(stderr, "CUnit: no suite named '%s' (see --list)\n", argv[i]);
            bad_suites++;
            continue;
        }
        CU_basic_run_suite(s);
        failures += CU_get_number_of_failures();
        bad_suites += CU_get_number_of_suites_failed();
    }
    CU_cleanup_registry();
    return failures != 0 || bad_suites != 0;
}

/* Runs every suite. */
static inline int pld_test_run_all(CU_SuiteInfo *suites)
{
    char *argv[] = {NULL};
    return pld_test_run(1, argv, suites);
}

/* pld_test_main(suites) or pld_test_main(argc, argv, suites). */
#define PLD_TEST_MAIN_PICK(a1, a2, a3, name, ...) name
#define pld_test_main(...) PLD_TEST_MAIN_PICK(__VA_ARGS__, pld_test_run, _pld_test_bad_args, pld_test_run_all, _)(__VA_ARGS__)

#endif
