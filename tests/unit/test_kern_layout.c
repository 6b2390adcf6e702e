/* test_kern_layout.c - the layout, valid-shape and gather / scatter kernels
 * (src/sim_npu/pld_kern_layout.c, pld_kern_gather.c): valid regions of
 * reshape and assemble, fillpad, index gathers and scatters, sort32 and
 * mrgsort, the GM family. Expectations are written out by hand. */
#include "test_kern_util.h"

#include <math.h>

void test_kern_layout_valid(void)
{
    char err[ERRN];
    const int64_t in[2] = {4, 8}, out[2] = {8, 4};
    int64_t v[2] = {2, 8}, ov[2] = {-1, -1};
    /* 16 valid elements: a row-major prefix, 4 rows of the new shape */
    CU_ASSERT_EQUAL(pld_k_reshape_valid(2, in, v, 2, out, ov, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ov[0], 4);
    CU_ASSERT_EQUAL(ov[1], 4);
    /* full stays full, whatever the shapes */
    v[0] = 4;
    CU_ASSERT_EQUAL(pld_k_reshape_valid(2, in, v, 2, out, ov, err, sizeof err), PLD_OK);
    CU_ASSERT(ov[0] == 8 && ov[1] == 4);
    /* a partial row is no prefix */
    v[0] = 2, v[1] = 5;
    CU_ASSERT_EQUAL(pld_k_reshape_valid(2, in, v, 2, out, ov, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "dimension 1 valid for 5 of 8"));
    /* 12 elements fill no box of [3, 8]... of [2, 16]: not a whole number of rows */
    const int64_t in2[2] = {4, 4}, out2[2] = {2, 8};
    int64_t v2[2] = {3, 4};
    CU_ASSERT_EQUAL(pld_k_reshape_valid(2, in2, v2, 2, out2, ov, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "12 valid elements fill no box"));

    const int64_t dshape[2] = {8, 16};
    int64_t dvalid[2] = {2, 16}, svalid[2] = {3, 16}, off[2] = {2, 0};
    CU_ASSERT_EQUAL(pld_k_assemble_valid(2, dshape, dvalid, svalid, off, err, sizeof err), PLD_OK);
    CU_ASSERT(dvalid[0] == 5 && dvalid[1] == 16);
    /* growing both dims: an L-shape */
    int64_t dv2[2] = {2, 8}, sv2[2] = {2, 8}, off2[2] = {2, 8};
    CU_ASSERT_EQUAL(pld_k_assemble_valid(2, dshape, dv2, sv2, off2, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "grows the valid region along 2 dimensions"));
    /* a gap */
    int64_t dv3[2] = {2, 16}, off3[2] = {3, 0};
    CU_ASSERT_EQUAL(pld_k_assemble_valid(2, dshape, dv3, svalid, off3, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "leaves a gap in dimension 0: the write starts at 3, past the target's valid "
                                       "extent 2"));
}

void test_kern_layout_fillpad(void)
{
    char err[ERRN];
    const int64_t sh[2] = {2, 3}, big[2] = {3, 4};
    int32_t a[6] = {1, 2, 3, 4, 5, 6}, o[12];
    const int64_t valid[2] = {1, 2};
    pld_view_t va = vw(a, PLD_DT_INT32, 2, sh), vo = vw(o, PLD_DT_INT32, 2, big);
    /* expand with max: INT32's largest value around the [1, 2] box */
    CU_ASSERT_EQUAL(pld_k_fillpad(&vo, &va, valid, 1, err, sizeof err), PLD_OK);
    CU_ASSERT(o[0] == 1 && o[1] == 2 && o[2] == INT32_MAX && o[4] == INT32_MAX && o[11] == INT32_MAX);
    /* in place with min: only the complement */
    CU_ASSERT_EQUAL(pld_k_fillpad(&va, &va, valid, 2, err, sizeof err), PLD_OK);
    CU_ASSERT(a[0] == 1 && a[1] == 2 && a[2] == INT32_MIN && a[3] == INT32_MIN && a[5] == INT32_MIN);
    float f[4] = {1, 2, 3, 4};
    const int64_t fs[2] = {2, 2}, fv[2] = {1, 1};
    pld_view_t vf = vw(f, PLD_DT_FP32, 2, fs);
    CU_ASSERT_EQUAL(pld_k_fillpad(&vf, &vf, fv, 2, err, sizeof err), PLD_OK);
    CU_ASSERT(f[0] == 1.0f && isinf(f[1]) && f[1] < 0 && isinf(f[3]));
}

void test_kern_layout_gather_scatter(void)
{
    char err[ERRN];
    const int64_t s23[2] = {2, 3}, s22[2] = {2, 2};
    float src[6] = {10, 11, 12, 13, 14, 15}, out[4] = {0};
    int32_t idx[4] = {5, 0, 3, 1};
    pld_view_t vs = vw(src, PLD_DT_FP32, 2, s23), vo = vw(out, PLD_DT_FP32, 2, s22), vx = vw(idx, PLD_DT_INT32, 2, s22);
    const int64_t box[2] = {2, 2}, box1[2] = {1, 2};
    CU_ASSERT_EQUAL(pld_k_gather(&vo, &vs, &vx, box, -1, err, sizeof err), PLD_OK);
    CU_ASSERT(out[0] == 15 && out[1] == 10 && out[2] == 13 && out[3] == 11);
    /* along dim 1: out[i, j] = src[i, idx[i, j]] over the first row only */
    int32_t idx2[4] = {2, 1, 9, 9};
    pld_view_t vx2 = vw(idx2, PLD_DT_INT32, 2, s22);
    memset(out, 0, sizeof out);
    CU_ASSERT_EQUAL(pld_k_gather(&vo, &vs, &vx2, box1, 1, err, sizeof err), PLD_OK);
    CU_ASSERT(out[0] == 12 && out[1] == 11 && out[2] == 0);
    CU_ASSERT_EQUAL(pld_k_gather(&vo, &vs, &vx2, box, 1, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(err, "index 9 at [1, 0] is outside [0, 3)");
    /* scatter: the last write wins */
    float dst[6] = {0}, s4[4] = {1, 2, 3, 4};
    int32_t si[4] = {4, 4, 0, 5};
    pld_view_t vd = vw(dst, PLD_DT_FP32, 2, s23), vs4 = vw(s4, PLD_DT_FP32, 2, s22), vsi = vw(si, PLD_DT_INT32, 2, s22);
    CU_ASSERT_EQUAL(pld_k_scatter(&vd, &vs4, &vsi, box, 0, err, sizeof err), PLD_OK);
    CU_ASSERT(dst[4] == 2 && dst[0] == 3 && dst[5] == 4 && dst[1] == 0);
    /* row form: [i, idx[i, j]]; 5 is past a row of 3 */
    CU_ASSERT_EQUAL(pld_k_scatter(&vd, &vs4, &vsi, box, 1, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(err, "index 4 at [0, 0] is outside [0, 3)");
}

void test_kern_layout_sorts(void)
{
    char err[ERRN];
    float v[32], o[64];
    uint32_t ix[32];
    for (int k = 0; k < 32; k++)
        v[k] = (float)(k % 4), ix[k] = (uint32_t)k;
    v[7] = NAN;
    const int64_t s32[2] = {1, 32}, s64[2] = {1, 64};
    pld_view_t vv = vw(v, PLD_DT_FP32, 2, s32), vi = vw(ix, PLD_DT_UINT32, 2, s32), vo = vw(o, PLD_DT_FP32, 2, s64);
    CU_ASSERT_EQUAL(pld_k_sort32(&vo, &vv, &vi, err, sizeof err), PLD_OK);
    uint32_t i0, i1, i2;
    memcpy(&i0, &o[1], 4);
    memcpy(&i1, &o[3], 4);
    memcpy(&i2, &o[5], 4);
    /* NaN first, then the 3s in their input order (stable) */
    CU_ASSERT(isnan(o[0]) && i0 == 7);
    CU_ASSERT(o[2] == 3.0f && i1 == 3 && o[4] == 3.0f && i2 == 11);
    CU_ASSERT(o[62] == 0.0f);
    /* format 2: two sorted runs of pairs merged (ties: the earlier run first) */
    float r0[4] = {5, 0, 1, 0}, r1[4] = {5, 0, 3, 0}, m[8];
    const int64_t s4[2] = {1, 4}, s8[2] = {1, 8};
    memcpy(&r0[1], &(uint32_t){100}, 4);
    memcpy(&r1[1], &(uint32_t){200}, 4);
    pld_view_t a = vw(r0, PLD_DT_FP32, 2, s4), b = vw(r1, PLD_DT_FP32, 2, s4), vm = vw(m, PLD_DT_FP32, 2, s8);
    const pld_view_t *runs[2] = {&a, &b};
    CU_ASSERT_EQUAL(pld_k_mrgsort(&vm, runs, 2, 0, err, sizeof err), PLD_OK);
    memcpy(&i0, &m[1], 4);
    memcpy(&i1, &m[3], 4);
    CU_ASSERT(m[0] == 5 && i0 == 100 && m[2] == 5 && i1 == 200 && m[4] == 3 && m[6] == 1);
}

void test_kern_layout_gm_family(void)
{
    char err[ERRN];
    /* mgather, row mode: rows idx[0, i] of a [3, 2] mem; 7 clamps to row 2 (oob 1) */
    float mem[6] = {1, 2, 3, 4, 5, 6}, out[4] = {0};
    int32_t idx[2] = {1, 7};
    const int64_t m32[2] = {3, 2}, i12[2] = {1, 2}, o22[2] = {2, 2}, box[2] = {2, 2};
    pld_view_t vm = vw(mem, PLD_DT_FP32, 2, m32), vx = vw(idx, PLD_DT_INT32, 2, i12), vo = vw(out, PLD_DT_FP32, 2, o22);
    CU_ASSERT_EQUAL(pld_k_mgather(&vo, &vm, &vx, box, 1, 1, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(out[0] == 3 && out[1] == 4 && out[2] == 5 && out[3] == 6);
    CU_ASSERT_EQUAL(pld_k_mgather(&vo, &vm, &vx, box, 1, 0, NULL, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "index 7 at [0, 1] is outside [0, 3)"));
    /* mscatter into a flat [6] */
    float t[6] = {0}, s[2] = {8, 9};
    int32_t si[2] = {5, 0};
    const int64_t n6[1] = {6}, n2[1] = {2}, sv[1] = {2};
    pld_view_t vt = vw(t, PLD_DT_FP32, 1, n6), vs = vw(s, PLD_DT_FP32, 1, n2), vsi = vw(si, PLD_DT_INT32, 1, n2);
    CU_ASSERT_EQUAL(pld_k_mscatter(&vt, &vs, &vsi, sv, err, sizeof err), PLD_OK);
    CU_ASSERT(t[5] == 8 && t[0] == 9);
    /* scatter_update: row idx[0, j] of out = src row j */
    float in[6] = {0}, rows[4] = {1, 2, 3, 4};
    int32_t ri[2] = {2, 0};
    const int64_t r22[2] = {2, 2}, box12[2] = {1, 2};
    pld_view_t vin = vw(in, PLD_DT_FP32, 2, m32), vri = vw(ri, PLD_DT_INT32, 2, i12), vr = vw(rows, PLD_DT_FP32, 2, r22);
    CU_ASSERT_EQUAL(pld_k_scatter_update(&vin, &vri, &vr, box12, err, sizeof err), PLD_OK);
    CU_ASSERT(in[4] == 1 && in[5] == 2 && in[0] == 3 && in[1] == 4 && in[2] == 0);
    /* gather_compare: the columns < 2.5 of each row and their count */
    float g[6] = {1, 3, 2, 0, 9, 9};
    int32_t d[4] = {0}, c[2] = {0};
    const int64_t g23[2] = {2, 3}, c12[2] = {1, 2}, gb[2] = {1, 3};
    pld_view_t vg = vw(g, PLD_DT_FP32, 2, g23), vd = vw(d, PLD_DT_INT32, 2, r22), vc = vw(c, PLD_DT_INT32, 2, c12);
    CU_ASSERT_EQUAL(pld_k_gather_compare(&vd, &vc, &vg, gb, 2, 2.5, 2, err, sizeof err), PLD_OK);
    CU_ASSERT(d[0] == 0 && d[1] == 2 && c[0] == 2);
    CU_ASSERT_EQUAL(pld_k_gather_compare(&vd, &vc, &vg, g23, 2, 2.5, 2, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "row 1 has 1 matches, out_cols is 2"));
    CU_ASSERT_EQUAL(c[1], 1);
}
