/* pld_npu_profile.h - platform profiles of the simulated NPU (a2a3, a5).
 *
 * A library of its own with no dependencies (pure data), so the checker, the
 * interpreter, the block scheduler and the tool can all read the one table. */
#ifndef PLD_NPU_PROFILE_H
#define PLD_NPU_PROFILE_H

/* ---- platform profiles ----
 * The one home of every per-platform fact (core counts, on-chip memory sizes,
 * platform-specific rules). The checker, the interpreter and the tool take a
 * `const pld_npu_profile_t *` (NULL = the default, a2a3). */
typedef struct pld_npu_profile {
    const char *name;        /* "a2a3", "a5" */
    int aiv_cores;           /* AIV cores per device (sync-start admission limit) */
    int aic_cores;           /* AIC (cube) cores per device: the clusters of one AIC and two AIV cores */
    /* on-chip memory per core, by memory space (bytes; 0 = the space does not
     * exist). The physical sizes: PyPTO's memory planner keeps 8 KiB of UB
     * back (184 / 240 KiB usable, pto-isa#170); pldrun never rejects a
     * kernel PyPTO accepts, so it checks the physical size. */
    long ub_bytes;           /* Vec: unified buffer of an AIV core */
    long mat_bytes;          /* Mat (L1) of an AIC core */
    long left_bytes;         /* Left (L0A) */
    long right_bytes;        /* Right (L0B) */
    long acc_bytes;          /* Acc (L0C) */
    long bias_bytes;         /* Bias table */
    long scale_bytes;        /* LeftScale / RightScale (MX matmul), each */
    int bf16_atomic_add;     /* 1 when remote_store/put may AtomicType.Add on BF16 */
    int bf16_mat_bias;       /* 1 when a BF16 Mat bias row may move into an FP32 Bias table (a5);
                                FP32 / FP16 into FP32 and INT32 into INT32 move on both */
} pld_npu_profile_t;

/* ---- on-chip memory spaces ----
 * The buffers of a core, in the order of the IR's memory spaces from Vec
 * (pld_ast.h's PLD_MEM_VEC .. PLD_MEM_RIGHTSCALE): the unified buffer of an
 * AIV core; the AIC's L1, L0A, L0B, L0C, bias table and MX scale buffers. */
typedef enum pld_npu_space {
    PLD_NPU_SPACE_VEC, PLD_NPU_SPACE_MAT, PLD_NPU_SPACE_LEFT, PLD_NPU_SPACE_RIGHT, PLD_NPU_SPACE_ACC,
    PLD_NPU_SPACE_BIAS, PLD_NPU_SPACE_LEFTSCALE, PLD_NPU_SPACE_RIGHTSCALE,
    PLD_NPU_SPACES
} pld_npu_space_t;
/* The name of space s in messages: "Vec (UB)", "Mat (L1)", "Left (L0A)", ... */
const char *pld_npu_space_name(pld_npu_space_t s);
/* The capacity of space s per core on profile p (NULL: the default), in
 * bytes; 0 when the platform lacks the space. */
long pld_npu_space_bytes(const pld_npu_profile_t *p, pld_npu_space_t s);

/* Returns the named profile, or NULL when unknown. Static storage. */
const pld_npu_profile_t *pld_npu_profile(const char *name);
/* The default profile (a2a3); never NULL. */
const pld_npu_profile_t *pld_npu_profile_default(void);
/* p, or the default profile when p is NULL. */
const pld_npu_profile_t *pld_npu_profile_or_default(const pld_npu_profile_t *p);
/* Names of the known profiles, "a2a3|a5" style, for usage text. */
const char *pld_npu_profile_names(void);

#endif
