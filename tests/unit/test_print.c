/* placeholder */
#include "pld_test.h"
static void test_print_placeholder(void) { CU_PASS("placeholder"); }
static CU_TestInfo tests[] = {{"test_print_placeholder", test_print_placeholder}, CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"print", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
int main(void) { return pld_test_main(suites); }
