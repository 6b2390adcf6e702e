/* pld_npu_profile.c - the platform profile table. */
#include "pld_npu_profile.h"

#include <string.h>

static const pld_npu_profile_t profiles[] = {
    /* Ascend 910B (A2/A3): 48 AIV cores, 192 KiB UB per AIV core */
    {"a2a3", 48, 192L * 1024, 1},
    /* Ascend 950 (A5): 36 AIV cores; UB taken as 256 KiB; no BF16 atomic add */
    {"a5", 36, 256L * 1024, 0},
};

const pld_npu_profile_t *pld_npu_profile_default(void)
{
    return &profiles[0];
}

const pld_npu_profile_t *pld_npu_profile_or_default(const pld_npu_profile_t *p)
{
    return p ? p : &profiles[0];
}

const char *pld_npu_profile_names(void)
{
    return "a2a3|a5";
}

const pld_npu_profile_t *pld_npu_profile(const char *name)
{
    for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
        if (strcmp(profiles[i].name, name) == 0)
            return &profiles[i];
    return NULL;
}
