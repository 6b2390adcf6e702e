/* pld_dtype.c - the dtype table: names and widths. */
#include "pld_dtype.h"

static const struct {
    const char *name;
    int bits;
    int is_float;
} dtypes[PLD_DT__COUNT] = {
    [PLD_DT_NONE] = {"NONE", 0, 0},        [PLD_DT_BOOL] = {"BOOL", 8, 0},
    [PLD_DT_INT4] = {"INT4", 4, 0},        [PLD_DT_INT8] = {"INT8", 8, 0},
    [PLD_DT_INT16] = {"INT16", 16, 0},     [PLD_DT_INT32] = {"INT32", 32, 0},
    [PLD_DT_INT64] = {"INT64", 64, 0},     [PLD_DT_UINT4] = {"UINT4", 4, 0},
    [PLD_DT_UINT8] = {"UINT8", 8, 0},      [PLD_DT_UINT16] = {"UINT16", 16, 0},
    [PLD_DT_UINT32] = {"UINT32", 32, 0},   [PLD_DT_UINT64] = {"UINT64", 64, 0},
    [PLD_DT_FP4] = {"FP4", 4, 1},          [PLD_DT_FP8E4M3FN] = {"FP8E4M3FN", 8, 1},
    [PLD_DT_FP8E5M2] = {"FP8E5M2", 8, 1},  [PLD_DT_FP8E8M0] = {"FP8E8M0", 8, 1},
    [PLD_DT_FP16] = {"FP16", 16, 1},       [PLD_DT_FP32] = {"FP32", 32, 1},
    [PLD_DT_BF16] = {"BF16", 16, 1},       [PLD_DT_HF4] = {"HF4", 4, 1},
    [PLD_DT_HF8] = {"HF8", 8, 1},          [PLD_DT_INDEX] = {"INDEX", 64, 0},
    [PLD_DT_TASK_ID] = {"TASK_ID", 64, 0}, [PLD_DT_FP64] = {"FP64", 64, 1},
};

const char *pld_dtype_name(pld_dtype_t d)
{
    return (unsigned)d < PLD_DT__COUNT ? dtypes[d].name : "?";
}

pld_dtype_t pld_dtype_from_name(const char *name)
{
    for (int i = 1; i < PLD_DT__COUNT; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return (pld_dtype_t)i;
    return PLD_DT_NONE;
}

int pld_dtype_bits(pld_dtype_t d)
{
    return (unsigned)d < PLD_DT__COUNT ? dtypes[d].bits : 0;
}

int pld_dtype_bytes(pld_dtype_t d)
{
    int b = pld_dtype_bits(d) / 8;
    return b > 0 ? b : 1;
}

int pld_dtype_storage_bytes(pld_dtype_t d)
{
    const int bits = pld_dtype_bits(d);
    return bits % 8 == 0 ? bits / 8 : 0;
}

int pld_dtype_is_float(pld_dtype_t d)
{
    return (unsigned)d < PLD_DT__COUNT && dtypes[d].is_float;
}

int pld_dtype_is_int(pld_dtype_t d)
{
    return d != PLD_DT_NONE && d != PLD_DT_TASK_ID && (unsigned)d < PLD_DT__COUNT && !dtypes[d].is_float;
}

pld_dtype_t pld_dtype_promote(pld_dtype_t a, pld_dtype_t b)
{
    if (a == b || b == PLD_DT_NONE)
        return a;
    if (a == PLD_DT_NONE)
        return b;
    if (pld_dtype_is_float(a) != pld_dtype_is_float(b))
        return pld_dtype_is_float(a) ? a : b;
    if (a == PLD_DT_INDEX || b == PLD_DT_INDEX)
        return PLD_DT_INDEX;
    return pld_dtype_bits(a) >= pld_dtype_bits(b) ? a : b;
}
