/* pld_size.h - checked size arithmetic: the one helper every product of dims,
 * strides, offsets and element sizes goes through (a shape whose size
 * overflows, or has a negative dim, is an error of the caller's choosing,
 * never undefined behaviour or a wrapped allocation size).
 *
 * All functions return 0 on success and a nonzero PLD_SIZE_* code on failure
 * (then *out is unspecified). Header-only: `static inline` over the GCC/Clang
 * overflow builtins. */
#ifndef PLD_SIZE_H
#define PLD_SIZE_H

#include <stddef.h>
#include <stdint.h>

enum {
    PLD_SIZE_OK = 0,
    PLD_SIZE_NEGATIVE = 1, /* a dim (or an operand that must be >= 0) is negative */
    PLD_SIZE_OVERFLOW = 2  /* the result does not fit (int64 / the given limit) */
};

/* *out = a * b, a + b (int64). */
static inline int pld_size_mul(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? PLD_SIZE_OVERFLOW : PLD_SIZE_OK;
}

static inline int pld_size_add(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out) ? PLD_SIZE_OVERFLOW : PLD_SIZE_OK;
}

/* Product of the non-zero dims of shape[rank] into *nz, and whether a dim
 * is zero. Every dim must be >= 0. */
static inline int pld_size_nonzero_product(int rank, const int64_t *shape, int64_t *nz, int *has_zero)
{
    *nz = 1;
    *has_zero = 0;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return PLD_SIZE_NEGATIVE;
        if (shape[i] == 0)
            *has_zero = 1;
        else if (__builtin_mul_overflow(*nz, shape[i], nz))
            return PLD_SIZE_OVERFLOW;
    }
    return PLD_SIZE_OK;
}

/* Number of elements of shape[rank] (1 for rank 0). Every dim must be >= 0;
 * a zero dim gives 0, but the product of the other dims must still fit. */
static inline int pld_size_numel(int rank, const int64_t *shape, int64_t *out)
{
    int64_t nz;
    int zero;
    const int rc = pld_size_nonzero_product(rank, shape, &nz, &zero);
    if (rc == PLD_SIZE_OK)
        *out = zero ? 0 : nz;
    return rc;
}

/* Bytes of shape[rank] elements of elem_bytes each, at most `limit` bytes
 * (INT64_MAX for no other limit than int64). A zero dim gives 0 bytes, but
 * the other dims' product times elem_bytes must still be within the limit
 * (a shape is sane whatever its extent). */
static inline int pld_size_bytes(int rank, const int64_t *shape, int64_t elem_bytes, int64_t limit, int64_t *out)
{
    int64_t nz, b;
    int zero;
    const int rc = pld_size_nonzero_product(rank, shape, &nz, &zero);
    if (rc)
        return rc;
    if (elem_bytes < 0)
        return PLD_SIZE_NEGATIVE;
    if (__builtin_mul_overflow(nz, elem_bytes, &b) || b > limit)
        return PLD_SIZE_OVERFLOW;
    *out = zero ? 0 : b;
    return PLD_SIZE_OK;
}

/* Flat element offset sum(idx[i] * strides[i]) (idx and strides may be
 * negative only where the caller allows it: the sum is checked, not the sign). */
static inline int pld_size_offset(int rank, const int64_t *idx, const int64_t *strides, int64_t *out)
{
    int64_t off = 0, t;
    for (int i = 0; i < rank; i++)
        if (__builtin_mul_overflow(idx[i], strides[i], &t) || __builtin_add_overflow(off, t, &off))
            return PLD_SIZE_OVERFLOW;
    *out = off;
    return PLD_SIZE_OK;
}

/* Text of a PLD_SIZE_* code for messages: "negative dimension", "overflows". */
static inline const char *pld_size_what(int rc)
{
    return rc == PLD_SIZE_NEGATIVE ? "has a negative dimension" : rc == PLD_SIZE_OVERFLOW ? "overflows" : "ok";
}

#endif
