/* pld_npu_profile.c - the platform profile table. */
#include "pld_npu_profile.h"

#include <string.h>

/* Memory sizes: PyPTO's SoC descriptions (src/backend/common/soc.cpp at
 * e2d0f78ae6d7: Create910BSoC, Create950SoC). */
static const pld_npu_profile_t profiles[] = {
    /* Ascend 910B (A2/A3): 48 AIV and 24 AIC cores; UB 192 KiB, L1 512, L0A/B 64, L0C 128, bias 1 */
    {"a2a3", 48, 24, 192L * 1024, 512L * 1024, 64L * 1024, 64L * 1024, 128L * 1024, 1L * 1024, 0, 1, 0},
    /* Ascend 950 (A5): 36 AIV cores in 18 clusters (1 AIC + 2 AIV each); UB 248 KiB, L1 512, L0A/B 64, L0C 256, bias 4, scales 4;
     * no BF16 atomic add; a BF16 Mat bias moves into an FP32 Bias table (Backend950Handler::SupportsMatToBiasMove) */
    {"a5", 36, 18, 248L * 1024, 512L * 1024, 64L * 1024, 64L * 1024, 256L * 1024, 4L * 1024, 4L * 1024, 0, 1},
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

const char *pld_npu_space_name(pld_npu_space_t s)
{
    static const char *const names[PLD_NPU_SPACES] = {
        "Vec (UB)", "Mat (L1)", "Left (L0A)", "Right (L0B)", "Acc (L0C)", "Bias", "LeftScale", "RightScale",
    };
    return s >= 0 && s < PLD_NPU_SPACES ? names[s] : "?";
}

long pld_npu_space_bytes(const pld_npu_profile_t *p, pld_npu_space_t s)
{
    p = pld_npu_profile_or_default(p);
    switch (s) {
    case PLD_NPU_SPACE_VEC: return p->ub_bytes;
    case PLD_NPU_SPACE_MAT: return p->mat_bytes;
    case PLD_NPU_SPACE_LEFT: return p->left_bytes;
    case PLD_NPU_SPACE_RIGHT: return p->right_bytes;
    case PLD_NPU_SPACE_ACC: return p->acc_bytes;
    case PLD_NPU_SPACE_BIAS: return p->bias_bytes;
    case PLD_NPU_SPACE_LEFTSCALE:
    case PLD_NPU_SPACE_RIGHTSCALE: return p->scale_bytes;
    default: return 0;
    }
}
