/* test_interp_util.h - the helpers of the interpreter suite (test_interp*.c,
 * one executable, CTest `interp`): programs opened from strings, inputs bound,
 * results and located runtime errors checked (test_interp_util.c), the
 * reference semantics restated independently of the interpreter, a fake
 * multi-rank control plane, and the test functions of every file of the suite
 * (registered in test_interp.c's tables, in their order). */
#ifndef TEST_INTERP_UTIL_H
#define TEST_INTERP_UTIL_H

#include "pld_check.h"
#include "pld_hw.h"
#include "pld_interp.h"
#include "pld_test.h"
#include "pld_ast.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>

/* Every program starts with these 5 lines; the class body follows. */
#define HDR "import pypto.language as pl\n\n\n@pl.program\nclass T:\n"
#define ORCH "    @pl.function(type=pl.FunctionType.Orchestration)\n"
#define INCORE "    @pl.function(type=pl.FunctionType.InCore)\n"
#define HOST "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"

typedef struct tprog {
    pld_program_t *p;
    pld_interp_t *it;
    const char *src;
    char err[1024];
} tprog_t;

void dump_diags(const pld_program_t *p);
int tp_open_opts(tprog_t *t, const char *src, const pld_comm_t *comm, const pld_interp_opts_t *io);
int tp_open(tprog_t *t, const char *src, const pld_comm_t *comm);
void tp_close(tprog_t *t);
int tp_param(tprog_t *t, const char *name);
pld_status_t tp_bind(tprog_t *t, const char *name, pld_dtype_t dt, int rank, const int64_t *shape, const void *data);
pld_status_t tp_gen(tprog_t *t, const char *name, const char *spec);
void tp_zero_outs(tprog_t *t);
pld_status_t tp_run(tprog_t *t, pld_status_t want);
const void *tp_result(tprog_t *t, const char *name, pld_dtype_t want_dt, int64_t *numel);
const int32_t *res_i32(tprog_t *t, const char *name, int64_t *n);
const float *res_f32(tprog_t *t, const char *name, int64_t *n);

/* Asserts n INT32 results equal want[]. */
#define EXPECT_I32(t, name, want)                                                                                  \
    do {                                                                                                           \
        int64_t n_;                                                                                                \
        const int32_t *got_ = res_i32((t), (name), &n_);                                                           \
        CU_ASSERT_EQUAL(n_, (int64_t)(sizeof(want) / sizeof((want)[0])));                                         \
        for (int64_t k_ = 0; k_ < n_ && k_ < (int64_t)(sizeof(want) / sizeof((want)[0])); k_++) {                  \
            if (got_[k_] != (want)[k_])                                                                            \
                fprintf(stderr, "\n%s[%lld] = %lld, expected %lld\n", (name), (long long)k_, (long long)got_[k_], \
                        (long long)(want)[k_]);                                                                    \
            CU_ASSERT_EQUAL(got_[k_], (want)[k_]);                                                                 \
        }                                                                                                          \
    } while (0)

/* Asserts FP32 results equal want[] bit for bit (NaN never expected). */
#define EXPECT_F32(t, name, want)                                                                                  \
    do {                                                                                                           \
        int64_t n_;                                                                                                \
        const float *got_ = res_f32((t), (name), &n_);                                                             \
        CU_ASSERT_EQUAL(n_, (int64_t)(sizeof(want) / sizeof((want)[0])));                                         \
        for (int64_t k_ = 0; k_ < n_ && k_ < (int64_t)(sizeof(want) / sizeof((want)[0])); k_++) {                  \
            if (got_[k_] != (want)[k_])                                                                            \
                fprintf(stderr, "\n%s[%lld] = %.9g, expected %.9g\n", (name), (long long)k_, (double)got_[k_],    \
                        (double)(want)[k_]);                                                                       \
            CU_ASSERT_EQUAL(got_[k_], (want)[k_]);                                                                 \
        }                                                                                                          \
    } while (0)

const pld_diag_t *first_error(const pld_program_t *p);
void locate(const char *src, const char *marker, unsigned *line, unsigned *col);
void expect_error_at(tprog_t *t, const char *marker, ...);
int error_has_note(tprog_t *t, const char *frag);

/* ---- reference semantics (restated here, independently of the interpreter) ---- */
int64_t py_floordiv(int64_t a, int64_t b);
int64_t py_mod(int64_t a, int64_t b);
int32_t wrap32(int64_t v);
float round_f16(float x);

/* ---- a fake multi-rank control plane ---- */
typedef struct fake_comm {
    pld_comm_t comm;
    int gathers;
    int maxes;
} fake_comm_t;

void fake_init(fake_comm_t *fc, int rank, int nranks);

/* ---- programs run by tests of two files (the runtime-error and robustness
 * tests of test_interp_errors.c reuse them) ---- */
extern const char *SRC_WHILE;       /* test_interp.c */
extern const char *SRC_TUPLE;       /* test_interp.c */
extern const char *SRC_DISPATCH_WS; /* test_interp_ops.c */

/* ---- the test functions, per file ---- */
/* test_interp.c: scalars, control flow, module constants */
void test_interp_scalar_floor_div_mod(void);
void test_interp_scalar_int32_wrap(void);
void test_interp_scalar_annotation_wrap(void);
void test_interp_unannotated_return(void);
void test_interp_scalar_index_int32_promotion(void);
void test_interp_scalar_float_division(void);
void test_interp_range_steps(void);
void test_interp_zero_trip_loop_yields_init(void);
void test_interp_zero_trip_tile_loop(void);
void test_interp_if_else_yield(void);
void test_interp_while_break_continue(void);
void test_interp_while_cond(void);
void test_interp_early_return(void);
void test_interp_tuple_return_unpack(void);
void test_interp_unroll(void);
void test_interp_module_consts_folded(void);
/* test_interp_ops.c: tile ops, tensor ops, dispatch */
void test_interp_tile_load_valid_shape_clamp_store(void);
void test_interp_tile_elementwise(void);
void test_interp_tile_cast_fp16_rounding(void);
void test_interp_tile_row_sum_ragged(void);
void test_interp_tile_matmul_small(void);
void test_interp_tensor_slice_assemble_read_write(void);
void test_interp_dispatch_device_selects_rank(void);
void test_interp_dispatch_world_size(void);
/* test_interp_errors.c: runtime errors, robustness, regressions */
void test_interp_error_load_out_of_bounds(void);
void test_interp_error_device_out_of_range(void);
void test_interp_error_domain_inference(void);
void test_interp_error_unsupported_dtype_read(void);
void test_interp_error_int_division_by_zero(void);
void test_interp_error_ub_overflow(void);
void test_interp_block_stack_exhausted(void);
void test_interp_ub_option(void);
void test_interp_ub_liveness(void);
void test_interp_scalar_first(void);
void test_interp_tensor_matmul_trans(void);
void test_interp_error_op_budget(void);
void test_interp_error_missing_input(void);
void test_interp_bind_shape_mismatch(void);
void test_interp_error_in_carried_loop(void);
void test_interp_oom_loop(void);
void test_interp_regress_host_tuple_unpack_other_rank(void);
void test_interp_regress_huge_tensor_size_overflow(void);
void test_interp_regress_ub_message_names_every_tile(void);
void test_interp_regress_range_counter_overflow(void);
/* test_interp_hw.c: the kernel ABI through a spy backend */
void test_interp_hw_comm_ctx(void);
void test_interp_builtin_launch(void);

#endif
