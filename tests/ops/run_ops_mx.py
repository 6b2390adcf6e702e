#!/usr/bin/env python3
"""run_ops_mx.py - golden tests of PyPTO's MX block-scaled matmul
(pl.tile.matmul_mx, matmul_mx_acc, matmul_mx_bias and the unified
pl.matmul_mx*) through pldrun at one rank (CTest `ops_mx`).

Inputs follow PyPTO's system test (tests/st/runtime/ops/test_matmul_mx.py at
e2d0f78ae6d7): FP8E4M3FN data tensors, FP8E8M0 (or UINT8) scale tensors in the
packed pl.MX_A_ZZ / pl.MX_B_NN GM layouts, each loaded into Mat and moved into
Left / LeftScale / Right / RightScale. The .npy files hold raw bytes ('|u1').

The goldens here are independent of pldrun: an FP8E4M3FN / FP8E8M0 decoder
from the bit layouts (OCP 8-bit floating point and MX v1.0), the scale
packing written as PyPTO's reshape/permute (logical scales are generated,
packed for the file and used unpacked by the golden), and the product of
docs/ops-numerics.md: a[i,k] 2^(sa-127) * b[k,j] 2^(sb-127) exact, rounded
once to FP32, summed in FP32 with k from 0 up (matmul_mx_acc from acc; the
bias added after the sum). Compared bit for bit (NaN matches any NaN). The
canonical case also checks PyPTO's own golden (a float64 matmul rounded to
FP32), which agrees wherever its sums are exact, as in its test data.

The programs, runner and comparison are run_ops_mem.py's (imported).

usage: run_ops_mx.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--max-failures N]
"""
import math
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ops  # noqa: E402
import run_ops_mem as m  # noqa: E402
from run_ops_mem import Case  # noqa: E402

# raw-byte inputs: data, packed scales (FP8E8M0 or UINT8) of either layout
for _k, _pl in (('E4M3', 'pl.FP8E4M3FN'), ('SA', 'pl.FP8E8M0, pl.MX_A_ZZ'), ('SB', 'pl.FP8E8M0, pl.MX_B_NN'),
                ('UA', 'pl.UINT8, pl.MX_A_ZZ'), ('UB', 'pl.UINT8, pl.MX_B_NN')):
    run_ops.NPY[_k] = ('|u1', 'B', 1)
    run_ops.PL[_k] = _pl
INF, NAN = float('inf'), float('nan')


def f32(x):
    """x rounded to FP32 (RNE; overflow -> inf)."""
    try:
        return struct.unpack('<f', struct.pack('<f', x))[0]
    except OverflowError:
        return math.copysign(INF, x)


def e4m3(code):
    """FP8E4M3FN: sign, 4 exponent bits (bias 7), 3 fraction bits; no inf; S.1111.111 NaN."""
    s = -1.0 if code & 0x80 else 1.0
    e, f = (code >> 3) & 15, code & 7
    if e == 15 and f == 7:
        return NAN
    return s * (f / 8.0 * 2.0 ** -6 if e == 0 else (1 + f / 8.0) * 2.0 ** (e - 7))


def e8m0(code):
    return NAN if code == 255 else 2.0 ** (code - 127)


def pack_a(L, M, G):
    """MX_A_ZZ: L (logical [M, G]) .reshape(M/16, 16, G/2, 2).permute(0, 2, 1, 3), flattened."""
    return [L[(b0 * 16 + b1) * G + c0 * 2 + c1] for b0 in range(M // 16) for c0 in range(G // 2)
            for b1 in range(16) for c1 in range(2)]


def pack_b(L, G, N):
    """MX_B_NN: L (logical [G, N]) .reshape(G/2, 2, N/16, 16).permute(2, 0, 3, 1), flattened."""
    return [L[(g0 * 2 + g1) * N + n0 * 16 + n1] for n0 in range(N // 16) for g0 in range(G // 2)
            for n1 in range(16) for g1 in range(2)]


def mx_ref(A, SA, B, SB, K, N, G, rows, cols, vk, acc=None, bias=None):
    """[rows, cols] flat (row stride N): FP32 k-ordered sums of the scaled products over k < vk."""
    out = []
    for i in range(rows):
        for j in range(cols):
            s = acc[i * N + j] if acc else 0.0
            for k in range(vk):
                p = e4m3(A[i * K + k]) * e8m0(SA[i * G + k // 32]) * (e4m3(B[k * N + j]) * e8m0(SB[(k // 32) * N + j]))
                s = f32(s + f32(p))
            out.append(f32(s + bias[j]) if bias else s)
    return out


def torch_like_golden(A, SA, B, SB, M, K, N, G):
    """PyPTO's golden: the scaled operands in float64, a float64 matmul, then FP32."""
    out = []
    for i in range(M):
        for j in range(N):
            s = math.fsum(e4m3(A[i * K + k]) * e8m0(SA[i * G + k // 32]) * e4m3(B[k * N + j]) *
                          e8m0(SB[(k // 32) * N + j]) for k in range(K))
            out.append(f32(s))
    return out


class Inputs:
    """Deterministic raw bytes for one case; logical scales kept for the golden."""

    def __init__(self, seed):
        self.rng = run_ops.Rng(seed)

    def pick(self, lo, hi):
        return lo + self.rng.next() % (hi - lo + 1)

    def data(self, n, kind):
        if kind == 'small':  # PyPTO's test data: the integers -2..2
            return [[0xc0, 0xb8, 0x00, 0x38, 0x40][self.pick(0, 4)] for _ in range(n)]
        out = []
        while len(out) < n:
            c = self.pick(0, 255)
            if c not in (0x7f, 0xff):
                out.append(c)
        if kind == 'nan':  # two NaN codes
            out[5], out[n - 100] = 0x7f, 0xff
        return out

    def scales(self, n, lo, hi):
        return [self.pick(lo, hi) for _ in range(n)]


def mx_case(name, M, K, N, op='pl.tile.matmul_mx', kind='rand', slo=(120, 134), sb_lo=None, uint8=False,
            valid=None, win=None, canon=False):
    """One kernel: a [R, C] windows etc.; win = (rows, cols, cols of b) tensor sizes with the window at their
    bottom-right; valid = (vm, vk, vn) of the loads."""
    G = K // 32
    TM, TK, TN = win or (M, K, N)
    TG = TK // 32
    om, ok, on = TM - M, TK - K, TN - N  # window offsets
    vm, vk, vn = valid or (M, K, N)
    vg = (vk + 31) // 32
    seed = sum(map(ord, name)) * 7919 + 17
    gen = Inputs(seed)
    A, B = gen.data(TM * TK, kind), gen.data(TK * TN, kind)
    SA = gen.scales(TM * TG, *slo)
    SB = gen.scales(TG * TN, *(sb_lo or slo))
    files = [('x0', 'E4M3', (TM, TK), A), ('x1', 'UA' if uint8 else 'SA', (TM, TG), pack_a(SA, TM, TG)),
             ('x2', 'E4M3', (TK, TN), B), ('x3', 'UB' if uint8 else 'SB', (TG, TN), pack_b(SB, TG, TN))]
    extra, body = [], []

    def ld(x, off, shp, v, mem):
        vs = '' if v == shp else ', valid_shape=[%d, %d]' % v
        return ('pl.move(pl.load(%s, [%d, %d], [%d, %d]%s, target_memory=pl.Mem.Mat), target_memory=pl.Mem.%s)' %
                (x, off[0], off[1], shp[0], shp[1], vs, mem))
    body += ['lhs = ' + ld('x0', (om, ok), (M, K), (vm, vk), 'Left'),
             'lhs_scale = ' + ld('x1', (om, ok // 32), (M, G), (vm, vg), 'LeftScale'),
             'rhs = ' + ld('x2', (ok, on), (K, N), (vk, vn), 'Right'),
             'rhs_scale = ' + ld('x3', (ok // 32, on), (G, N), (vg, vn), 'RightScale')]
    # logical windows for the golden ([M, K] etc., row strides K / G / N)
    Aw = [A[(om + i) * TK + ok + k] for i in range(M) for k in range(K)]
    SAw = [SA[(om + i) * TG + ok // 32 + g] for i in range(M) for g in range(G)]
    Bw = [B[(ok + k) * TN + on + j] for k in range(K) for j in range(N)]
    SBw = [SB[(ok // 32 + g) * TN + on + j] for g in range(G) for j in range(N)]
    acc = bias = None
    if op.endswith('_acc'):
        body.append('base = pl.tile.matmul_mx(lhs, lhs_scale, rhs, rhs_scale)')
        body.append('r = %s(base, lhs, lhs_scale, rhs, rhs_scale)' % op)
        acc = [0.0] * (M * N)
        base = mx_ref(Aw, SAw, Bw, SBw, K, N, G, vm, vn, vk)
        for i in range(vm):
            for j in range(vn):
                acc[i * N + j] = base[i * vn + j]
    elif op.endswith('_bias'):
        files.append(('x4', 'FP32', (1, N), None))
        body.append('bias = pl.load(x4, [0, 0], [1, %d]%s)' %
                    (N, '' if vn == N else ', valid_shape=[1, %d]' % vn))
        body.append('r = %s(lhs, lhs_scale, rhs, rhs_scale, bias)' % op)
    else:
        body.append('r = %s(lhs, lhs_scale, rhs, rhs_scale)' % op)
    body.append('o = pl.store(r, [0, 0], o)')
    fixed = {n: v for n, _, _, v in files if v is not None}
    ins = [(n, dt, s, 'mx' if v is not None else 'sym') for n, dt, s, v in files]

    def want(vals):
        bias = vals[4] if len(vals) > 4 else None
        got = mx_ref(Aw, SAw, Bw, SBw, K, N, G, vm, vn, vk, acc, bias)
        out = [0.0] * (M * N)
        for i in range(vm):
            for j in range(vn):
                out[i * N + j] = got[i * vn + j]
        if canon:  # PyPTO's float64 golden agrees on its exact data
            assert out == torch_like_golden(Aw, SAw, Bw, SBw, M, K, N, G), 'golden disagreement'
        return out
    c = Case('%s.%s' % (op[3:], name), ins, ('FP32', (M, N)), body, want)
    c.fixed = fixed
    return c


def build_cases():
    return [
        mx_case('basic', 16, 64, 32),
        mx_case('canonical', 64, 128, 128, kind='small', slo=(126, 129), canon=True),
        mx_case('groups4', 32, 128, 64),
        mx_case('unified', 16, 64, 32, op='pl.matmul_mx'),
        mx_case('uint8_scales', 16, 64, 32, uint8=True),
        mx_case('window', 16, 64, 32, win=(48, 192, 96)),
        mx_case('partial', 32, 64, 64, valid=(5, 40, 20)),
        mx_case('tiny', 16, 64, 32, slo=(0, 12), sb_lo=(100, 127)),
        mx_case('special', 16, 64, 32, kind='nan', slo=(150, 200), sb_lo=(100, 172)),
        mx_case('nan_scale', 16, 64, 32, slo=(100, 110), sb_lo=(250, 255)),
        mx_case('acc', 16, 64, 32, op='pl.tile.matmul_mx_acc'),
        mx_case('canonical', 64, 128, 128, op='pl.tile.matmul_mx_acc', kind='small', slo=(126, 129)),
        mx_case('partial', 32, 128, 32, op='pl.matmul_mx_acc', valid=(17, 100, 9)),
        mx_case('bias', 16, 64, 32, op='pl.tile.matmul_mx_bias'),
        mx_case('partial', 16, 64, 64, op='pl.matmul_mx_bias', valid=(16, 33, 50)),
    ]


def gen(rng, dt, n, kind, _orig=m.gen):
    """Inputs: the case's fixed bytes (looked up by the runner's call order), FP32 bias values otherwise."""
    if kind == 'mx':
        return gen.pending.pop(0)
    return _orig(rng, dt, n, kind)


def bits(dt, v, _orig=m.bits):
    return 'nan' if isinstance(v, float) and v != v else _orig(dt, v)


BAD = '''import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, s: pl.Tensor[[8, 2], pl.FP8E8M0, pl.MX_A_ZZ], o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        t = pl.move(pl.load(s, [0, 0], [8, 2], target_memory=pl.Mem.Mat), target_memory=pl.Mem.LeftScale)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Tensor[[8, 2], pl.FP8E8M0, pl.MX_A_ZZ], o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        o = self.k(s, o)
        return o
'''


def runtime_error(pldrun):
    """An MX_A_ZZ tensor that is not a whole number of [16, 2] blocks: a located runtime error (exit 70)."""
    with tempfile.TemporaryDirectory() as d:
        prog, npy = os.path.join(d, 'bad.pld'), os.path.join(d, 's.npy')
        open(prog, 'w').write(BAD)
        run_ops.write_npy(npy, 'SA', (8, 2), [127] * 16)
        p = subprocess.run([pldrun, prog, '--in', 's=' + npy], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=60)
        msg = p.stderr.decode(errors='replace')
        if p.returncode != 70 or 'bad.pld:8:' not in msg or 'MX_A_ZZ packing is made of [16, 2] blocks' not in msg:
            print('FAIL runtime error for a partial MX_A_ZZ block: exit %d\n%s' % (p.returncode, msg))
            return 1
    print('runtime error case passed')
    return 0


def main():
    cases = build_cases()
    flt = sys.argv[sys.argv.index('--filter') + 1] if '--filter' in sys.argv else None
    # the runner generates inputs case by case, input by input: queue each case's bytes in that order
    gen.pending = [c.fixed[n] for c in cases if not flt or flt in c.name for n, _, _, k in c.ins if k == 'mx']
    m.build_cases = lambda: cases
    m.gen = gen
    m.bits = bits
    bad = m.main()
    pldrun = sys.argv[sys.argv.index('--pldrun') + 1]
    return 1 if bad or runtime_error(pldrun) else 0


if __name__ == '__main__':
    sys.exit(main())
