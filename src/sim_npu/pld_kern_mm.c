/* pld_kern_mm.c - the matmul family's data movement that is not a plain copy:
 * unpacking PyPTO's MX-layout scale tensors (pld_k_mx_unpack). Shared loops
 * and helpers: pld_kern_int.h. */
#include "pld_kern_int.h"

#include <stdio.h>

pld_status_t pld_k_mx_unpack(const pld_view_t *out, const void *src, int64_t rows, int64_t cols, const int64_t *off,
                             int a_layout, char *err, size_t errn)
{
    const int a = a_layout != 0;
    if (a ? rows % 16 || cols % 2 : rows % 2 || cols % 16) {
        if (err && errn)
            snprintf(err, errn, "the %s packing is made of [%d, %d] blocks; tensor [%lld, %lld] is not a whole number "
                     "of them", a ? "MX_A_ZZ" : "MX_B_NN", a ? 16 : 2, a ? 2 : 16, (long long)rows, (long long)cols);
        return PLD_E_RUNTIME;
    }
    const uint8_t *s = src;
    for (int64_t i = 0; i < out->shape[0]; i++) {
        uint8_t *row = (uint8_t *)out->data + i * out->strides[0];
        const int64_t r = off[0] + i;
        for (int64_t j = 0; j < out->shape[1]; j++) {
            const int64_t c = off[1] + j;
            row[j * out->strides[1]] = s[a ? ((r / 16) * (cols / 2) + c / 2) * 32 + (r % 16) * 2 + c % 2
                                           : ((c / 16) * (rows / 2) + r / 2) * 32 + (c % 16) * 2 + r % 2];
        }
    }
    return PLD_OK;
}
