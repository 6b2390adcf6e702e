/* placeholder */
#include "pld_test.h"
static void test_limits_placeholder(void) { CU_PASS("placeholder"); }
static CU_TestInfo tests[] = {{"test_limits_placeholder", test_limits_placeholder}, CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"limits", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
int main(void) { return pld_test_main(suites); }
