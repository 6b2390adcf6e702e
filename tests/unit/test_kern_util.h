/* test_kern_util.h - the helpers of the numeric-kernel suite (test_kern*.c, one
 * executable, CTest `kern`): views, bit casts, independent FP16 / BF16
 * decoders, deterministic random inputs, the table oracle
 * (test_kern_util.c), and the test functions of every file of the suite
 * (registered in test_kern.c's table, in its order). */
#ifndef TEST_KERN_UTIL_H
#define TEST_KERN_UTIL_H

#include "pld_kern.h"
#include "pld_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

#define ERRN 256
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- helpers ---- */
pld_view_t vw(void *data, pld_dtype_t dt, int rank, const int64_t *shape);
pld_view_t v1(void *data, pld_dtype_t dt, int64_t n);
pld_view_t v2(void *data, pld_dtype_t dt, int64_t r, int64_t c);
pld_view_t vs2(void *data, pld_dtype_t dt, int64_t r, int64_t c, int64_t sr, int64_t sc);
uint32_t f2u(float f);
float u2f(uint32_t u);
uint64_t d2u(double d);
double dec16(uint16_t h);
double decbf(uint16_t b);
int is_nan16(uint16_t h);
int is_nanbf(uint16_t b);
uint64_t rng(void);
double rnd_double(int elo, int ehi);

/* ---- the table oracle ---- */
void tables_init(void);
uint16_t oracle16(double v, pld_round_k_t mode);
uint16_t oraclebf(double v, pld_round_k_t mode);
uint32_t oracle32(double v, pld_round_k_t mode);

extern const pld_round_k_t all_modes[7];
extern const char *const mode_names[7];

/* ---- the test functions, per file ---- */
/* test_kern.c: views, FP16 / BF16 conversions, element access, matmul, copy / fill / alignment / errors */
void test_kern_views(void);
void test_kern_f16_spec_patterns(void);
void test_kern_bf16_spec_patterns(void);
void test_kern_f16_roundtrip_exhaustive(void);
void test_kern_bf16_roundtrip_exhaustive(void);
void test_kern_f16_bf16_all_ties(void);
void test_kern_f16_bf16_random_vs_oracle(void);
void test_kern_elem_access(void);
void test_kern_matmul(void);
void test_kern_copy_fill(void);
void test_kern_unaligned(void);
void test_kern_ext_ops(void);
void test_kern_dtype_errors(void);
/* test_kern_mm.c: the blocked matmul and the row / column reductions against reference loops */
void test_kern_matmul_blocked(void);
void test_kern_reduce_vec(void);
void test_kern_reduce_vec16(void);
void test_kern_reduce_vec_int(void);
/* test_kern_layout.c: layout, valid shapes, gathers / scatters, sorts, the GM family */
void test_kern_layout_valid(void);
void test_kern_layout_fillpad(void);
void test_kern_layout_gather_scatter(void);
void test_kern_layout_sorts(void);
void test_kern_layout_gm_family(void);
/* test_kern_binary.c: binary ops, broadcasting, the SIMD sets, folds, integer wrap */
void test_kern_binary_fp32_ops(void);
void test_kern_binary_fp32_packed_inplace(void);
void test_kern_binary_broadcast(void);
void test_kern_binary_strided_ragged(void);
void test_kern_binary_fp16_bf16_rounding(void);
void test_kern_binary_fp16_bf16_random(void);
void test_kern_binary_nan_inf(void);
void test_kern_binary_fp32_simd_sets(void);
void test_kern_fold_orders(void);
void test_kern_int_wrap(void);
void test_kern_int_div_by_zero(void);
void test_kern_binary_scalar(void);
/* test_kern_reduce.c: unary ops and reductions */
void test_kern_unary(void);
void test_kern_reduce_rows(void);
void test_kern_reduce_cols(void);
void test_kern_reduce_fp16_accum(void);
void test_kern_reduce_prod_arg(void);
void test_kern_reduce_errors(void);
/* test_kern_cast.c: casts */
void test_kern_cast_int_modes(void);
void test_kern_cast_saturation(void);
void test_kern_cast_int_to_float(void);
void test_kern_cast_int_to_int_and_bool(void);
void test_kern_cast_float_special(void);
void test_kern_cast_modes_vs_oracle(void);
void test_kern_cast_strided(void);

#endif
