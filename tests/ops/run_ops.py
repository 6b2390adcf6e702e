#!/usr/bin/env python3
"""run_ops.py - table-driven golden tests of the reduction and broadcast ops
(issue 11) through pldrun at one rank, without mpirun (CTest `ops_reduce`).

For every case of CASES (an op, a form: pl.tile.X / pl.tensor.X / unified
pl.X, a dtype, a tile geometry with a full or partial valid shape) this script

  1. writes one InCore kernel per case into generated programs of CHUNK cases
     each (WORKDIR/ops_reduce_K.pld; the orchestrator calls every kernel;
     pldrun takes at most 64 --in), with the case's inputs as .npy files from
     a deterministic generator;
  2. runs `PLDRUN WORKDIR/ops_reduce_K.pld --in ... --out ...` per program
     (P = 1, no mpirun: Open MPI's singleton mode);
  3. computes every expected output here, in pure Python, from the op's
     documented semantics and the rounding of docs/ops-numerics.md (restated
     below, never by pldrun): rows accumulate in FP32 and round once; columns
     of FP16/BF16 round to the dtype after every row, sequentially or in
     PyPTO's binary tree (col_sum with tmp_tile); element-wise broadcasts round
     once per op (expdif: the difference rounded, then exp rounded);
  4. compares bit for bit (exp-diff: within 1 ulp, math.exp against expf;
     the softmax and RMS-norm compositions: within 4 ulps);
     the elements outside the result's valid region must stay 0 (Out tensors
     start zeroed and a store writes the valid region only).

usage: run_ops.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--sample N] [--max-failures N]
(--sample N: every op once and every N-th case, see sample(); the ASan tree
runs that subset.)
Prints one line per failing case and a closing "N passed, M failed"; a failing
program stops the run, and --max-failures N failed comparisons (default 3, 0:
no limit) stop the checking ("stopped after N failures: M cases not checked").
The other ops runners (run_elem.py, run_ops_mem.py and those built on it) do
the same; their error-case loops count towards the same limit.
"""
import argparse
import ast
import math
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'mpi'))
import pld_mpitest as T  # noqa: E402  (FailFast, --max-failures)

# ---------------------------------------------------------------- numbers


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def f16(x):
    try:
        return struct.unpack('<e', struct.pack('<e', x))[0]
    except OverflowError:
        return math.copysign(float('inf'), x)


def bf16_bits(x):
    """RNE of a double to bfloat16 bits (through binary32, exact for the
    values used here: every value is an FP32 value first)."""
    b = struct.unpack('<I', struct.pack('<f', f32(x)))[0]
    if (b & 0x7f800000) == 0x7f800000 and (b & 0x7fffff):
        return (b >> 16) | 0x40
    return ((b + 0x7fff + ((b >> 16) & 1)) >> 16) & 0xffff


def bf16_from_bits(h):
    return struct.unpack('<f', struct.pack('<I', h << 16))[0]


def bf16(x):
    return bf16_from_bits(bf16_bits(x))


def i32(x):
    x &= 0xffffffff
    return x - (1 << 32) if x >= 1 << 31 else x


RND = {'FP32': f32, 'FP16': f16, 'BF16': bf16, 'INT32': i32}
FLOAT = ('FP32', 'FP16', 'BF16')
PL = {'FP32': 'pl.FP32', 'FP16': 'pl.FP16', 'BF16': 'pl.BF16', 'INT32': 'pl.INT32'}


def bits(dt, v):
    if dt == 'FP32':
        return struct.unpack('<I', struct.pack('<f', v))[0]
    if dt == 'FP16':
        return struct.unpack('<H', struct.pack('<e', v))[0]
    if dt == 'BF16':
        return bf16_bits(v)
    return v & 0xffffffff


def ulps(dt, a, b):
    """Distance in units in the last place of two finite values of dt (same sign)."""
    if dt not in FLOAT:
        return abs(a - b)
    if a == b:
        return 0
    if (a < 0) != (b < 0):
        return 1 << 30
    return abs(bits(dt, a) - bits(dt, b))


# ---------------------------------------------------------------- .npy

NPY = {'FP32': ('<f4', 'f', 4), 'FP16': ('<f2', 'e', 2), 'BF16': ('|V2', 'H', 2), 'INT32': ('<i4', 'i', 4)}


def write_npy(path, dt, shape, vals):
    descr, code, _ = NPY[dt]
    if dt == 'BF16':
        vals = [bf16_bits(v) for v in vals]
    dims = ', '.join('%d' % d for d in shape) + (',' if len(shape) == 1 else '')
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(vals), code), *vals))


def read_npy(path, dt):
    raw = open(path, 'rb').read()
    if raw[:6] != b'\x93NUMPY':
        raise ValueError('%s: not a .npy file' % path)
    if raw[6] == 1:
        hlen, off = struct.unpack('<H', raw[8:10])[0], 10
    else:
        hlen, off = struct.unpack('<I', raw[8:12])[0], 12
    hdr = ast.literal_eval(raw[off:off + hlen].decode('latin1'))
    descr, code, size = NPY[dt]
    if hdr['descr'] != descr:
        raise ValueError('%s: descr %r, expected %r' % (path, hdr['descr'], descr))
    data = raw[off + hlen:]
    vals = list(struct.unpack('<%d%s' % (len(data) // size, code), data))
    if dt == 'BF16':
        vals = [bf16_from_bits(v) for v in vals]
    return tuple(hdr['shape']), vals


# ---------------------------------------------------------------- inputs


class Rng:
    """64-bit LCG (Knuth's MMIX constants), deterministic per case."""

    def __init__(self, seed):
        self.s = (seed * 6364136223846793005 + 1442695040888963407) & (2 ** 64 - 1)

    def next(self):
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) & (2 ** 64 - 1)
        return self.s >> 11

    def uniform(self, lo, hi):
        return lo + (hi - lo) * (self.next() / float(1 << 53))


def gen(rng, dt, n, kind):
    """n input values of dtype dt (rounded to it) for a data kind."""
    r = RND[dt]
    if kind == 'perm':  # distinct, exact in every dtype: a shuffle of -n/2 .. n/2 - 1
        v = list(range(-(n // 2), n - n // 2))
        for i in range(n - 1, 0, -1):
            j = rng.next() % (i + 1)
            v[i], v[j] = v[j], v[i]
        return [r(x) for x in v]
    if kind == 'ties':  # few distinct values: many ties
        return [r(rng.next() % 4) for _ in range(n)]
    if dt == 'INT32':
        return [rng.next() % 200 - 100 for _ in range(n)]
    lo, hi = {'sym': (-2.0, 2.0), 'prod': (0.8, 1.25), 'pos': (0.5, 2.0), 'unit': (-1.0, 1.0)}[kind]
    return [r(rng.uniform(lo, hi)) for _ in range(n)]


# ---------------------------------------------------------------- goldens

def grid(vals, C):
    return [vals[i * C:(i + 1) * C] for i in range(len(vals) // C)]


def red_row(dt, op, X, vr, vc):
    """[vr] results over the valid columns of each valid row."""
    out = []
    for i in range(vr):
        row = X[i][:vc]
        if op in ('max', 'min'):
            out.append((max if op == 'max' else min)(row))
        elif op in ('argmax', 'argmin'):
            best = 0
            for k in range(1, vc):
                if (row[k] > row[best]) if op == 'argmax' else (row[k] < row[best]):
                    best = k
            out.append(best)
        elif dt in FLOAT:  # FP32 accumulator, rounded once to the dtype
            acc = row[0]
            for x in row[1:]:
                acc = f32(acc + x) if op == 'sum' else f32(acc * x)
            out.append(RND[dt](acc))
        else:
            acc = row[0]
            for x in row[1:]:
                acc = i32(acc + x) if op == 'sum' else i32(acc * x)
            out.append(acc)
    return out


def tree_sum(r, col):
    """PyPTO's binary-tree column sum (tests/st/runtime/ops/test_col_reduction.py,
    ColSum32x64FP16.compute_expected): pairs (2i, 2i+1), the odd last row
    folded into node 0, every step rounded."""
    buf, cnt = list(col), len(col)
    while cnt > 1:
        half = cnt // 2
        buf[:half] = [r(buf[2 * i] + buf[2 * i + 1]) for i in range(half)]
        if cnt % 2:
            buf[0] = r(buf[0] + buf[cnt - 1])
        cnt = half
    return buf[0]


def red_col(dt, op, X, vr, vc, tree=False):
    out = []
    r = RND[dt]
    for j in range(vc):
        col = [X[i][j] for i in range(vr)]
        if op in ('max', 'min'):
            out.append((max if op == 'max' else min)(col))
        elif op in ('argmax', 'argmin'):
            best = 0
            for k in range(1, vr):
                if (col[k] > col[best]) if op == 'argmax' else (col[k] < col[best]):
                    best = k
            out.append(best)
        elif tree and dt in FLOAT:
            out.append(tree_sum(r, col))
        else:  # sequential, every step rounded to the dtype (FP32: float ops)
            acc = col[0]
            for x in col[1:]:
                acc = r(acc + x) if op == 'sum' else r(acc * x)
            out.append(acc)
    return out


BIN = {
    'add': lambda a, b: a + b, 'sub': lambda a, b: a - b, 'mul': lambda a, b: a * b,
    'div': lambda a, b: a / b, 'max': max, 'min': min, 'expand': lambda a, b: b,
}


def elem(dt, op, a, b):
    r = RND[dt]
    if op == 'expdif':
        return r(math.exp(r(a - b)))
    if op == 'div' and dt == 'INT32':
        return int(a / b)
    return r(BIN[op](a, b))


# ---------------------------------------------------------------- cases

R_OPS = ['sum', 'max', 'min', 'prod', 'argmax', 'argmin']
X_OPS = ['expand', 'add', 'sub', 'mul', 'div', 'max', 'min', 'expdif']
EPS = 1e-5
GEOMS = {'full': (8, 16, 8, 16), 'part': (16, 24, 13, 19),  # R, C, valid rows, valid cols
         'b3': (8, 16, 5, 11), 'v1': (1, 24, 1, 19)}
# geometries of other ranks: (batch count, rank); 'b3' is [3, R, C] (each batch
# index reduced on its own: PyPTO keeps the leading dims), 'v1' a rank-1 [C]
BATCH = {'b3': (3, 3), 'v1': (1, 1)}


def batch(c):
    return BATCH.get(c.geom, (1, 2))


def data_kind(op):
    return {'prod': 'prod', 'argmax': 'perm', 'argmin': 'perm', 'expdif': 'unit', 'div': 'sym'}.get(op, 'sym')


class Case:
    def __init__(self, name, form, fam, op, dt, geom, call, tree=False, kind=None, scalar=None, vshape=None):
        self.name, self.form, self.fam, self.op, self.dt, self.geom = name, form, fam, op, dt, geom
        self.call, self.tree, self.scalar = call, tree, scalar
        self.kind = kind or data_kind(op)
        self.vshape = vshape


def build_cases():
    cases = []
    for dt in ('FP32', 'FP16', 'BF16', 'INT32'):
        for g in ('full', 'part'):
            for op in R_OPS:
                if dt == 'INT32' and op == 'prod':
                    continue
                for rc in ('row', 'col'):
                    if dt == 'BF16' and rc == 'row' and op == 'min':
                        continue  # PyPTO: row_min takes INT16, INT32, FP16, FP32
                    tmp = ', tmp' if rc == 'row' or op.startswith('arg') else ''
                    cases.append(Case('tile.%s_%s.%s.%s' % (rc, op, dt, g), 'tile', rc, op, dt, g,
                                      'pl.tile.%s_%s(t%s)' % (rc, op, tmp)))
                    if op == 'sum' and rc == 'col':
                        cases.append(Case('tile.col_sum_tree.%s.%s' % (dt, g), 'tile', rc, op, dt, g,
                                          'pl.tile.col_sum(t, tmp)', tree=True))
                    # unified pl.X on tiles and pl.tensor.X / pl.X on tensors
                    if g == 'part' or dt != 'INT32':
                        cases.append(Case('unified.tile.%s_%s.%s.%s' % (rc, op, dt, g), 'tile', rc, op, dt, g,
                                          'pl.%s_%s(t%s)' % (rc, op, tmp)))
                    cases.append(Case('tensor.%s_%s.%s.%s' % (rc, op, dt, g), 'tensor', rc, op, dt, g,
                                      'pl.tensor.%s_%s(s)' % (rc, op)))
                    if g == 'part':
                        cases.append(Case('unified.tensor.%s_%s.%s.%s' % (rc, op, dt, g), 'tensor', rc, op, dt, g,
                                          'pl.%s_%s(s)' % (rc, op)))
            for op in X_OPS:
                if dt == 'INT32' and op in ('expdif', 'div'):
                    continue
                for rc in ('row', 'col'):
                    if dt == 'BF16' and rc == 'row' and op == 'add':
                        continue  # PyPTO: row_expand_add takes INT8, INT16, INT32, FP16, FP32
                    nm = '%s_expand' % rc + ('' if op == 'expand' else '_' + op)
                    fam = 'x' + rc
                    cases.append(Case('tile.%s.%s.%s' % (nm, dt, g), 'tile', fam, op, dt, g, 'pl.tile.%s(t, w)' % nm))
                    if g == 'part':
                        cases.append(Case('unified.tile.%s.%s.%s' % (nm, dt, g), 'tile', fam, op, dt, g, 'pl.%s(t, w)' % nm))
                    else:
                        cases.append(Case('tensor.%s.%s.%s' % (nm, dt, g), 'tensor', fam, op, dt, g,
                                          'pl.tensor.%s(s, v)' % nm))
                        cases.append(Case('unified.tensor.%s.%s.%s' % (nm, dt, g), 'tensor', fam, op, dt, g,
                                          'pl.%s(s, v)' % nm))
            sc = '7' if dt == 'INT32' else '2.75'
            cases.append(Case('tile.expands.%s.%s' % (dt, g), 'tile', 'fill', 'fill', dt, g,
                              'pl.tile.expands(t, %s)' % sc, scalar=(int(sc) if dt == 'INT32' else float(sc))))
            cases.append(Case('unified.tile.expands.%s.%s' % (dt, g), 'tile', 'fill', 'fill', dt, g,
                              'pl.expands(t, %s)' % sc, scalar=(int(sc) if dt == 'INT32' else float(sc))))
            if g == 'full':
                cases.append(Case('tensor.expands.%s' % dt, 'tensor', 'fill', 'fill', dt, g,
                                  'pl.tensor.expands(s, %s)' % sc, scalar=(int(sc) if dt == 'INT32' else float(sc))))
        # the compositions PyPTO's softmax and RMS-norm kernels use
        if dt != 'INT32':
            for g in ('full', 'part'):
                cases.append(Case('tile.softmax.%s.%s' % (dt, g), 'tile', 'comp', 'softmax', dt, g, None, kind='sym'))
                cases.append(Case('tile.rmsnorm.%s.%s' % (dt, g), 'tile', 'comp', 'rmsnorm', dt, g, None, kind='sym'))
        # PyPTO's unified keyword names: input= (reductions), lhs= / rhs= (broadcasts)
        for op in R_OPS:
            if dt != 'FP32' and op not in ('sum', 'argmax'):
                continue
            for rc in ('row', 'col'):
                tmp = ', tmp_tile=tmp' if rc == 'row' or op.startswith('arg') else ''
                cases.append(Case('unified.kw.tile.%s_%s.%s' % (rc, op, dt), 'tile', rc, op, dt, 'part',
                                  'pl.%s_%s(input=t%s)' % (rc, op, tmp)))
                cases.append(Case('unified.kw.tensor.%s_%s.%s' % (rc, op, dt), 'tensor', rc, op, dt, 'part',
                                  'pl.%s_%s(input=s)' % (rc, op)))
        for rc in ('row', 'col'):
            nm = '%s_expand_mul' % rc
            cases.append(Case('unified.kw.tile.%s.%s' % (nm, dt), 'tile', 'x' + rc, 'mul', dt, 'part',
                              'pl.%s(rhs=w, lhs=t)' % nm))
        # rank 3: tile and tensor row reductions, tensor column reductions (axis -2);
        # rank 1: tensor row reductions ([C] -> [1])
        for op in R_OPS:
            if (dt == 'INT32' and op == 'prod') or (dt == 'BF16' and op == 'min'):
                continue
            tmp = ', tmp'
            cases.append(Case('tile.row_%s.%s.b3' % (op, dt), 'tile', 'row', op, dt, 'b3', 'pl.tile.row_%s(t%s)' % (op, tmp)))
            cases.append(Case('unified.tile.row_%s.%s.b3' % (op, dt), 'tile', 'row', op, dt, 'b3', 'pl.row_%s(t%s)' % (op, tmp)))
            for rc in ('row', 'col'):
                cases.append(Case('tensor.%s_%s.%s.b3' % (rc, op, dt), 'tensor', rc, op, dt, 'b3',
                                  'pl.tensor.%s_%s(s)' % (rc, op)))
            cases.append(Case('tensor.row_%s.%s.v1' % (op, dt), 'tensor', 'row', op, dt, 'v1', 'pl.row_%s(s)' % op))
        # ties: the first index wins
        for op in ('argmax', 'argmin'):
            for rc in ('row', 'col'):
                cases.append(Case('tile.%s_%s.%s.ties' % (rc, op, dt), 'tile', rc, op, dt, 'part',
                                  'pl.tile.%s_%s(t, tmp)' % (rc, op), kind='ties'))
        # expand_clone: [1, 8, 16] -> [3, 8, 16], [2, 1, 16] -> [2, 8, 16], [2, 8, 1] -> [2, 8, 16]
        for src, tgt in (((1, 8, 16), (3, 8, 16)), ((2, 1, 16), (2, 8, 16)), ((2, 8, 1), (2, 8, 16))):
            cases.append(Case('tensor.expand_clone.%s.%s' % (dt, 'x'.join(map(str, src))), 'clone', 'clone', 'clone', dt,
                              'full', 'pl.tensor.expand_clone(x, v)', vshape=(src, tgt)))
    return cases


# ---------------------------------------------------------------- program

def shp(s):
    return '[%s]' % ', '.join(str(d) for d in s)


def case_io(c):
    """(x shape, v shape or None, out shape, out dtype)."""
    R, C, vr, vc = GEOMS[c.geom]
    odt = 'INT32' if c.op in ('argmax', 'argmin') else c.dt
    if c.fam == 'clone':
        src, tgt = c.vshape
        return src, tgt, tgt, c.dt
    nb, rank = batch(c)
    if rank == 1:
        return (C,), None, (1,), odt
    if rank == 3:
        return (nb, R, C), None, ((nb, R, 1) if c.fam == 'row' else (nb, 1, C)), odt
    if c.fam == 'row':
        return (R, C), None, (R, 1), odt
    if c.fam == 'col':
        return (R, C), None, (1, C), odt
    if c.fam == 'xrow':
        return (R, C), (R, 1), (R, C), odt
    if c.fam == 'xcol':
        return (R, C), (1, C), (R, C), odt
    return (R, C), None, (R, C), odt


def kernel(i, c):
    R, C, vr, vc = GEOMS[c.geom]
    xs, vs, os_, odt = case_io(c)
    dt = PL[c.dt]
    params = 'x: pl.Tensor[%s, %s]' % (shp(xs), dt)
    if vs:
        params += ', v: pl.Tensor[%s, %s]' % (shp(vs), dt)
    params += ', o: pl.Out[pl.Tensor[%s, %s]]' % (shp(os_), PL[odt])
    L = ['    @pl.function(type=pl.FunctionType.InCore)',
         '    def k%d(self, %s) -> pl.Tensor[%s, %s]:' % (i, params, shp(os_), PL[odt]),
         '        # %s' % c.name]
    nb, rank = batch(c)
    zeros = shp([0] * len(xs))
    valid = shp({1: [vc], 2: [vr, vc], 3: [nb, vr, vc]}[rank])
    if c.form == 'tile':
        L.append('        t = pl.load(x, %s, %s, valid_shape=%s)' % (zeros, shp(xs), valid))
        L.append('        tmp = pl.tile.create(%s, dtype=%s, target_memory=pl.Mem.Vec)' % (shp(xs), dt))
        if vs:
            vv = (vr, 1) if c.fam == 'xrow' else (1, vc)
            L.append('        w = pl.load(v, [0, 0], %s, valid_shape=%s)' % (shp(vs), shp(vv)))
        if c.op == 'softmax':
            L += ['        m = pl.row_max(t, tmp)', '        e = pl.row_expand_expdif(t, m)',
                  '        s = pl.row_sum(e, tmp)', '        r = pl.row_expand_div(e, s)']
        elif c.op == 'rmsnorm':
            L += ['        ss = pl.row_sum(pl.mul(t, t), tmp)', '        ms = pl.mul(ss, %r)' % (1.0 / vc),
                  '        rs = pl.rsqrt(pl.add(ms, %r))' % EPS, '        r = pl.row_expand_mul(t, rs)']
        else:
            L.append('        r = %s' % c.call)
        L.append('        o = pl.store(r, %s, o)' % shp([0] * len(os_)))
    else:
        if c.form == 'tensor':
            L.append('        s = pl.tensor.slice(x, %s, %s, valid_shape=%s)' % (shp(xs), zeros, valid))
        L.append('        r = %s' % c.call)
        L.append('        o = pl.assemble(o, r, %s)' % shp([0] * len(os_)))
    L.append('        return o')
    return '\n'.join(L) + '\n'


def program(cases, base):
    out = ['import pypto.language as pl', '', '', '@pl.program', 'class OpsReduce:']
    for i, c in enumerate(cases, base):
        out.append(kernel(i, c))
    params = []
    calls = []
    for i, c in enumerate(cases, base):
        xs, vs, os_, odt = case_io(c)
        ps = ['x%d: pl.Tensor[%s, %s]' % (i, shp(xs), PL[c.dt])]
        args = ['x%d' % i]
        if vs:
            ps.append('v%d: pl.Tensor[%s, %s]' % (i, shp(vs), PL[c.dt]))
            args.append('v%d' % i)
        ps.append('o%d: pl.Out[pl.Tensor[%s, %s]]' % (i, shp(os_), PL[odt]))
        args.append('o%d' % i)
        params += ps
        calls.append('        o%d = self.k%d(%s)' % (i, i, ', '.join(args)))
    out.append('    @pl.function(type=pl.FunctionType.Orchestration)')
    out.append('    def main(self, %s):' % ', '.join(params))
    out += calls
    return '\n'.join(out) + '\n'


def expected(c, x, v):
    """Flat expected output of case c from its inputs."""
    R, C, vr, vc = GEOMS[c.geom]
    xs, vs, os_, odt = case_io(c)
    n = 1
    for d in os_:
        n *= d
    out = [0] * n
    if c.fam == 'clone':
        src, tgt = c.vshape
        for a in range(tgt[0]):
            for b in range(tgt[1]):
                for d in range(tgt[2]):
                    ia, ib, idd = [k if src[j] != 1 else 0 for j, k in enumerate((a, b, d))]
                    out[(a * tgt[1] + b) * tgt[2] + d] = x[(ia * src[1] + ib) * src[2] + idd]
        return out
    X = grid(x, C)
    nb, rank = batch(c)
    if c.fam in ('row', 'col') and rank != 2:  # one [R, C] slice per batch index
        for b in range(nb):
            Xb = X[b * R:(b + 1) * R]
            ys = red_row(c.dt, c.op, Xb, vr, vc) if c.fam == 'row' else red_col(c.dt, c.op, Xb, vr, vc, c.tree)
            step = R if c.fam == 'row' else C
            out[b * step:b * step + len(ys)] = ys
    elif c.fam == 'row':
        for i, y in enumerate(red_row(c.dt, c.op, X, vr, vc)):
            out[i] = y
    elif c.fam == 'col':
        for j, y in enumerate(red_col(c.dt, c.op, X, vr, vc, c.tree)):
            out[j] = y
    elif c.fam == 'comp':
        r = RND[c.dt]
        for i in range(vr):
            row = X[i][:vc]
            if c.op == 'softmax':
                m = max(row)
                e = [r(math.exp(r(a - m))) for a in row]
                acc = e[0]
                for y in e[1:]:
                    acc = f32(acc + y)
                tot = r(acc)
                ys = [r(y / tot) for y in e]
            else:
                sq = [r(a * a) for a in row]
                acc = sq[0]
                for y in sq[1:]:
                    acc = f32(acc + y)
                ms = r(r(acc) * r(1.0 / vc))
                rs = r(1.0 / math.sqrt(r(ms + r(EPS))))
                ys = [r(a * rs) for a in row]
            for j, y in enumerate(ys):
                out[i * C + j] = y
    else:
        # tiles: the result's valid region is the operand's; tensors: all of it
        er, ec = (vr, vc) if c.form == 'tile' else (R, C)
        for i in range(er):
            for j in range(ec):
                if c.fam == 'fill':
                    y = RND[c.dt](c.scalar)
                else:
                    b = v[i] if c.fam == 'xrow' else v[j]
                    y = elem(c.dt, c.op, X[i][j], b)
                out[i * C + j] = y
    return out


CHUNK = 30

FORMS = ('tile', 'tensor', 'unified', 'kw')


def sample(cases, n):
    """The cases `--sample N` keeps (the ASan tree's subset, tests/ops.cmake):
    the first case of every op (a case's name less its form prefixes tile.,
    tensor., unified., kw.: the op and its variant) and every N-th case, in
    order; every case when N <= 1. Deterministic: the same list every run."""
    if n <= 1:
        return list(cases)
    seen, out = set(), []
    for i, c in enumerate(cases):
        parts = c.name.split('.')
        while len(parts) > 1 and parts[0] in FORMS:
            parts = parts[1:]
        if parts[0] not in seen or i % n == 0:
            out.append(c)
        seen.add(parts[0])
    return out


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def run_chunk(pldrun, work, cases, lo, hi, inputs):
    """Writes the program of cases[lo:hi] and its inputs, runs it; 0 when pldrun succeeded."""
    prog = os.path.join(work, 'ops_reduce_%d.pld' % (lo // CHUNK))
    with open(prog, 'w') as f:
        f.write(program(cases[lo:hi], lo))
    cmd = [pldrun, prog]
    for i in range(lo, hi):
        c = cases[i]
        rng = Rng(i * 7919 + 17)
        xs, vs, os_, odt = case_io(c)
        x = gen(rng, c.dt, numel(xs), c.kind)
        v = None
        if c.fam == 'clone':
            v = [0] * (vs[0] * vs[1] * vs[2])
        elif vs:
            v = gen(rng, c.dt, vs[0] * vs[1], 'pos' if c.op == 'div' and c.dt != 'INT32' else c.kind)
            if c.op == 'div' and c.dt == 'INT32':
                v = [b if b else 1 for b in v]
        px = os.path.join(work, 'x%d.npy' % i)
        write_npy(px, c.dt, xs, x)
        cmd += ['--in', 'x%d=%s' % (i, px)]
        if vs:
            pv = os.path.join(work, 'v%d.npy' % i)
            write_npy(pv, c.dt, vs, v)
            cmd += ['--in', 'v%d=%s' % (i, pv)]
        cmd += ['--out', 'o%d=%s' % (i, os.path.join(work, 'o%d.npy' % i))]
        inputs[i] = (x, v)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
    if p.returncode != 0:
        sys.stdout.write(p.stdout.decode(errors='replace') + p.stderr.decode(errors='replace'))
        print('pldrun failed (exit %d) on %s' % (p.returncode, prog))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--filter', default=None)
    ap.add_argument('--sample', type=int, default=1, help='run a subset: every op once and every N-th case')
    T.add_max_failures(ap)
    args = ap.parse_args()
    work = args.workdir or os.path.join(os.getcwd(), 'ops_reduce_work')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = sample(build_cases(), args.sample)
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]
    inputs = [None] * len(cases)
    # pldrun takes at most 64 --in and 64 --out: one program per CHUNK cases
    for lo in range(0, len(cases), CHUNK):
        rc = run_chunk(args.pldrun, work, cases, lo, min(lo + CHUNK, len(cases)), inputs)
        if rc:
            return rc
    passed = failed = 0
    ff = T.FailFast(args.max_failures, 'cases not checked')
    for i, c in ff.each(enumerate(cases)):
        xs, vs, os_, odt = case_io(c)
        shape, got = read_npy(os.path.join(work, 'o%d.npy' % i), odt)
        want = expected(c, *inputs[i])
        tol = {'expdif': 1, 'softmax': 4, 'rmsnorm': 4}.get(c.op, 0)
        bad = [k for k in range(len(want))
               if not (bits(odt, got[k]) == bits(odt, want[k]) or (tol and ulps(odt, got[k], want[k]) <= tol))]
        if tuple(shape) != tuple(os_) or bad:
            failed += 1
            ff.fail()
            k = bad[0] if bad else 0
            print('FAIL %-44s k%d: %d of %d elements differ; first [%d]: got %r, want %r' %
                  (c.name, i, len(bad), len(want), k, got[k], want[k]))
        else:
            passed += 1
    print('%d passed, %d failed (%d cases, %d programs in %s)' % (passed, failed, len(cases), (len(cases) + CHUNK - 1) // CHUNK, work))
    if not args.keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
