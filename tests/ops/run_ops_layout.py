#!/usr/bin/env python3
"""run_ops_layout.py - golden tests of the layout, gather/scatter, sort and
gemv/batch_matmul ops (issue 11) through pldrun at one rank, without mpirun
(CTest `ops_layout`): transpose (tile 2-D, tensor 2-D/3-D, negative axes,
partial valid), extract (constant and runtime offsets), concat (valid columns
packed), pl.tile.gather (flat) and pl.tensor.gather / pl.gather (dim -1, 0),
transpose_view, reinterpret_view (auto and explicit shape, write-through of
a tensor view), pl.tensor.view, pl.tile.scatter / pl.tensor.scatter
(duplicates), gemv / gemv_acc / gemv_bias, batch_matmul(_acc) with a
broadcast batch, sort32 and mrgsort (formats 1 and 2, ties), gather_row, in
the pl.tile / pl.tensor / unified forms, FP32/FP16/BF16/INT32 where PyPTO
allows them; and out-of-range gather/scatter indices, which must stop pldrun
with a located runtime error (exit 70).

The programs, runner and bit-exact comparison are run_ops_mem.py's (imported);
only the cases differ. Semantics: docs/ops-numerics.md.

usage: run_ops_layout.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--max-failures N]
"""
import itertools
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ops_mem as m  # noqa: E402
from run_ops_mem import Case  # noqa: E402
from run_ops import bits  # noqa: E402

DTS = ('FP32', 'FP16', 'BF16', 'INT32')
_gen = m.gen


def gen(rng, dt, n, kind):
    """'idx:N': INT32 indices in [0, N); otherwise run_ops.gen."""
    if kind.startswith('idx:'):
        return [rng.next() % int(kind[4:]) for _ in range(n)]
    return _gen(rng, dt, n, kind)


def box(R, C, vr, vc, f):
    """[R, C] with f(i, j) inside [vr, vc], 0 elsewhere (unwritten by the store)."""
    return [f(i, j) if i < vr and j < vc else 0 for i in range(R) for j in range(C)]


WIDTH = {'FP32': 4, 'FP16': 2, 'BF16': 2, 'INT32': 4}


def as_int32(dt, vals):
    """The bytes of vals (dtype dt) read as little-endian INT32 values."""
    w = WIDTH[dt]
    raw = b''.join(struct.pack('<I' if w == 4 else '<H', bits(dt, v)) for v in vals)
    return list(struct.unpack('<%di' % (len(raw) // 4), raw))


def int32_as_fp16(vals):
    raw = struct.pack('<%di' % len(vals), *vals)
    return list(struct.unpack('<%de' % (len(raw) // 2), raw))


def view_cases():
    """transpose_view, reinterpret_view (tile, tensor, unified; write-through), tensor.view."""
    cases = []
    R, C, vr, vc = 16, 24, 13, 19
    for dt in DTS:
        cases.append(Case('tile.transpose_view.%s' % dt, [('x0', dt, (R, C), 'sym')], (dt, (C, R)),
                          ['t = pl.load(x0, [0, 0], [%d, %d], valid_shape=[%d, %d])' % (R, C, vr, vc),
                           'r = pl.tile.transpose_view(t)', 'o = pl.store(r, [0, 0], o)'],
                          lambda v: box(C, R, vc, vr, lambda i, j, v=v: v[0][j * C + i])))
        cases.append(Case('tensor.view.%s' % dt, [('x0', dt, (4, 6, 8), 'sym')], (dt, (24, 8)),
                          ['r = pl.tensor.view(x0, [24, 8])', 'o = pl.assemble(o, r, [0, 0])'],
                          lambda v: list(v[0])))
        cases.append(Case('tensor.view.valid.%s' % dt, [('x0', dt, (4, 4, 16), 'sym')], (dt, (16, 16)),
                          ['r = pl.tensor.view(x0, [16, 16], [13, 16])', 'p = pl.tensor.fillpad(r)',
                           'o = pl.assemble(o, p, [0, 0])'],
                          lambda v: box(16, 16, 13, 16, lambda i, j, v=v: v[0][i * 16 + j])))
        if dt == 'INT32':
            continue
        # the bytes as INT32: FP32 [8, 16] -> [8, 16]; FP16/BF16 [8, 16] -> [8, 8]; valid [5, 10] -> [5, 10 * w / 4]
        w = WIDTH[dt]
        oc = 16 * w // 4
        for fn in ('pl.tile.reinterpret_view', 'pl.reinterpret_view'):
            cases.append(Case('%s.%s' % (fn[3:], dt), [('x0', dt, (8, 16), 'sym')], ('INT32', (8, oc)),
                              ['t = pl.load(x0, [0, 0], [8, 16], valid_shape=[5, 10])',
                               'r = %s(t, pl.INT32)' % fn, 'o = pl.store(r, [0, 0], o)'],
                              lambda v, oc=oc, w=w, dt=dt: box(8, oc, 5, 10 * w // 4,
                                                               lambda i, j, g=as_int32(dt, v[0]): g[i * oc + j])))
        cases.append(Case('tile.reinterpret_view.shape.%s' % dt, [('x0', dt, (8, 16), 'sym')], ('INT32', (4, 2 * oc)),
                          ['t = pl.load(x0, [0, 0], [8, 16])', 'r = pl.tile.reinterpret_view(t, pl.INT32, shape=[4, %d])'
                           % (2 * oc), 'o = pl.store(r, [0, 0], o)'],
                          lambda v, dt=dt: as_int32(dt, v[0])))
        for fn in ('pl.tensor.reinterpret_view', 'pl.reinterpret_view'):
            cases.append(Case('%s.tensor.%s' % (fn[3:], dt), [('x0', dt, (8, 16), 'sym')], ('INT32', (8, oc)),
                              ['r = %s(x0, pl.INT32)' % fn, 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v, dt=dt: as_int32(dt, v[0])))
    # writes through a tensor view of another width reach the source: INT32 [8, 8] into an FP16 [8, 16] Out
    cases.append(Case('tensor.reinterpret_view.write_through', [('x0', 'INT32', (8, 8), 'idx:1000')], ('FP16', (8, 16)),
                      ['v = pl.tensor.reinterpret_view(o, pl.INT32)', 'v = pl.assemble(v, x0, [0, 0])'],
                      lambda v: int32_as_fp16(v[0])))
    return cases


def scatter_ref(d, src, idx, SC, vr, vc):
    out = list(d)
    for i in range(vr):
        for j in range(vc):
            out[idx[i * SC + j]] = src[i * SC + j]
    return out


def scatter_cases():
    """pl.tile.scatter (flat, INT32 / INT16 indexes by dst width; duplicates: the last wins) and
    pl.tensor.scatter / pl.scatter (index form, dim = -1)."""
    cases = []
    for dt in DTS:
        ix = 'i' if WIDTH[dt] == 4 else 'pl.tile.cast(i, pl.INT16)'
        for kind, name in (('idx:128', ''), ('idx:4', '.dups')):
            cases.append(Case('tile.scatter%s.%s' % (name, dt), [('x0', dt, (8, 16), 'sym'), ('x1', dt, (4, 8), 'sym'),
                                                                 ('x2', 'INT32', (4, 8), kind)], (dt, (8, 16)),
                              ['d = pl.load(x0, [0, 0], [8, 16])', 's = pl.load(x1, [0, 0], [4, 8], valid_shape=[3, 8])',
                               'i = pl.load(x2, [0, 0], [4, 8])', 'r = pl.tile.scatter(d, s, %s)' % ix,
                               'o = pl.store(r, [0, 0], o)'],
                              lambda v: scatter_ref(v[0], v[1], v[2], 8, 3, 8)))
        tix = 'x2' if WIDTH[dt] == 4 else 'pl.tensor.cast(x2, pl.INT16)'
        for call in ('pl.tensor.scatter(x0, -1, %s, x1)', 'pl.scatter(x0, dim=-1, index=%s, src=x1)'):
            call = call % tix
            cases.append(Case('%s.%s' % (call[3:call.index('(')], dt), [('x0', dt, (8, 16), 'sym'), ('x1', dt, (8, 6), 'sym'),
                                                                        ('x2', 'INT32', (8, 6), 'idx:16')], (dt, (8, 16)),
                              ['r = ' + call, 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v: scatter_ref(v[0], v[1], [b * 16 + v[2][b * 6 + k] for b in range(8)
                                                                 for k in range(6)], 6, 8, 6)))
    return cases


def bmm_shape(sa, sb, at, bt):
    """numpy's matmul shape of op(a) @ op(b) (op: the two last dims swapped where at / bt)."""
    n = max(len(sa), len(sb)) - 2
    pa, pb = (1,) * (n + 2 - len(sa)) + tuple(sa[:-2]), (1,) * (n + 2 - len(sb)) + tuple(sb[:-2])
    return tuple(max(x, y) for x, y in zip(pa, pb)) + (sa[-1] if at else sa[-2], sb[-2] if bt else sb[-1])


def bmm(a, sa, b, sb, at, bt):
    """Batched op(a) @ op(b), each batch index one k-ordered FP32 (matmul_ref) product; flat, row-major."""
    so = bmm_shape(sa, sb, at, bt)
    n, M, N = len(so) - 2, so[-2], so[-1]
    K = sa[-2] if at else sa[-1]

    def mat(x, s, idx, t):
        pad = (1,) * (n + 2 - len(s)) + tuple(s[:-2])
        off = 0
        for d in range(n):
            off = off * pad[d] + (idx[d] if pad[d] > 1 else 0)
        R, C = s[-2], s[-1]
        blk = x[off * R * C:(off + 1) * R * C]
        return [blk[j * C + i] for i in range(C) for j in range(R)] if t else blk

    out = []
    for idx in itertools.product(*[range(d) for d in so[:-2]]):
        out += m.matmul_ref(mat(a, sa, idx, at), mat(b, sb, idx, bt), M, K, N)
    return out


def matmul_cases():
    """gemv / gemv_acc / gemv_bias (tile and pl.X), batch_matmul / batch_matmul_acc with batch broadcast, and
    pl.tensor.matmul_acc / pl.matmul_acc (a_trans, b_trans, init_cond)."""
    cases = []
    mm, f32 = m.matmul_ref, m.f32
    K, N = 16, 12
    for dt in ('FP32', 'FP16', 'BF16'):
        ab = [('x0', dt, (1, K), 'sym'), ('x1', dt, (K, N), 'sym'), ('x2', dt, (1, K), 'sym'), ('x3', dt, (K, N), 'sym')]
        loads = ['a = pl.load(x0, [0, 0], [1, %d])' % K, 'b = pl.load(x1, [0, 0], [%d, %d])' % (K, N),
                 'a2 = pl.load(x2, [0, 0], [1, %d])' % K, 'b2 = pl.load(x3, [0, 0], [%d, %d])' % (K, N)]
        for fn, ph in (('pl.tile.gemv', ''), ('pl.gemv', ', acc_phase="final"')):
            cases.append(Case('%s%s.%s' % (fn[3:], ph and '.final', dt), ab[:2], ('FP32', (1, N)),
                              loads[:2] + ['r = %s(a, b%s)' % (fn, ph), 'o = pl.store(r, [0, 0], o)'],
                              lambda v: mm(v[0], v[1], 1, K, N)))
        for fn, ph in (('pl.tile.gemv_acc', ''), ('pl.gemv_acc', ', "partial"')):
            cases.append(Case('%s.%s' % (fn[3:], dt), ab, ('FP32', (1, N)),
                              loads + ['c = pl.tile.gemv(a, b)', 'r = %s(c, a2, b2%s)' % (fn, ph),
                                       'o = pl.store(r, [0, 0], o)'],
                              lambda v: mm(v[2], v[3], 1, K, N, mm(v[0], v[1], 1, K, N))))
        for fn in ('pl.tile.gemv_bias', 'pl.gemv_bias'):
            cases.append(Case('%s.%s' % (fn[3:], dt), ab[:2] + [('x2', 'FP32', (1, N), 'sym')], ('FP32', (1, N)),
                              loads[:2] + ['bias = pl.load(x2, [0, 0], [1, %d])' % N, 'r = %s(a, b, bias)' % fn,
                                           'o = pl.store(r, [0, 0], o)'],
                              lambda v: [f32(x + y) for x, y in zip(mm(v[0], v[1], 1, K, N), v[2])]))
        # batch: [2, 4, 8] @ [1, 8, 6] -> [2, 4, 6] (rhs broadcast); acc form adds [2, 4, 8] @ [2, 8, 6]
        def bref(a, b, Ba, Bb, acc=None):
            out = []
            for z in range(2):
                x = a[(z if Ba > 1 else 0) * 32:][:32]
                y = b[(z if Bb > 1 else 0) * 48:][:48]
                out += mm(x, y, 4, 8, 6, acc[z * 24:(z + 1) * 24] if acc else None)
            return out
        bm = [('x0', dt, (2, 4, 8), 'sym'), ('x1', dt, (1, 8, 6), 'sym'), ('x2', dt, (2, 4, 8), 'sym'),
              ('x3', dt, (2, 8, 6), 'sym')]
        bl = ['a = pl.load(x0, [0, 0, 0], [2, 4, 8])', 'b = pl.load(x1, [0, 0, 0], [1, 8, 6])',
              'a2 = pl.load(x2, [0, 0, 0], [2, 4, 8])', 'b2 = pl.load(x3, [0, 0, 0], [2, 8, 6])']
        for fn in ('pl.tile.batch_matmul', 'pl.batch_matmul'):
            cases.append(Case('%s.%s' % (fn[3:], dt), bm[:2], ('FP32', (2, 4, 6)),
                              bl[:2] + ['r = %s(a, b)' % fn, 'o = pl.store(r, [0, 0, 0], o)'],
                              lambda v, bref=bref: bref(v[0], v[1], 2, 1)))
        # tensor matmul_acc: acc [8, 12] + op(lhs) @ op(rhs), transposes and init_cond
        def tr(x, R, C):
            return [x[i * C + j] for j in range(C) for i in range(R)]
        for fn, at, bt, ic in (('pl.tensor.matmul_acc', False, False, ''), ('pl.matmul_acc', True, False, ''),
                               ('pl.tensor.matmul_acc', False, True, ', init_cond=True'),
                               ('pl.tensor.matmul_acc', True, True, ', init_cond=False')):
            sa, sb = ((16, 8) if at else (8, 16)), ((12, 16) if bt else (16, 12))

            def want(v, at=at, bt=bt, ic=ic):
                a = tr(v[1], 16, 8) if at else v[1]
                b = tr(v[2], 12, 16) if bt else v[2]
                return mm(a, b, 8, 16, 12, None if ic == ', init_cond=True' else v[0])
            cases.append(Case('%s.%s%s%s.%s' % (fn[3:], 'T' if at else 'N', 'T' if bt else 'N', ic.replace(' ', ''), dt),
                              [('x0', 'FP32', (8, 12), 'sym'), ('x1', dt, sa, 'sym'), ('x2', dt, sb, 'sym')], ('FP32', (8, 12)),
                              ['r = %s(x0, x1, x2, %s, %s%s)' % (fn, at, bt, ic), 'o = pl.assemble(o, r, [0, 0])'], want))
        # tensor matmul of rank > 2 (PyPTO's batch_matmul): batch dims broadcast, a_trans / b_trans swap the two
        # last dims, the result in out_dtype or (default) the operands' dtype, rounded once from the FP32 sums
        for fn, sa, sb, at, bt, od in (('pl.tensor.matmul', (4, 8), (8, 6), False, False, ''),
                                       ('pl.tensor.matmul', (2, 4, 8), (8, 6), False, False, ''),
                                       ('pl.matmul', (2, 1, 4, 8), (3, 8, 6), False, False, ''),
                                       ('pl.tensor.matmul', (1, 8, 4), (3, 6, 8), True, True, ', out_dtype=pl.FP32'),
                                       ('pl.matmul', (3, 4, 8), (1, 6, 8), False, True, ', out_dtype=pl.FP32')):
            so = bmm_shape(sa, sb, at, bt)
            cases.append(Case('%s.nd.%s%s%s.%s' % (fn[3:], 'x'.join(map(str, sa)), 'T' if at else 'N', 'T' if bt else 'N', dt),
                              [('x0', dt, sa, 'sym'), ('x1', dt, sb, 'sym')], ('FP32' if od else dt, so),
                              ['r = %s(x0, x1, a_trans=%s, b_trans=%s%s)' % (fn, at, bt, od),
                               'o = pl.assemble(o, r, %s)' % m.shp([0] * len(so))],
                              lambda v, sa=sa, sb=sb, at=at, bt=bt: bmm(v[0], sa, v[1], sb, at, bt)))
        cases.append(Case('tile.batch_matmul_acc.%s' % dt, bm, ('FP32', (2, 4, 6)),
                          bl + ['c = pl.tile.batch_matmul(a, b)', 'r = pl.tile.batch_matmul_acc(c, a2, b2)',
                                'o = pl.store(r, [0, 0, 0], o)'],
                          lambda v, bref=bref: bref(v[2], v[3], 2, 2, bref(v[0], v[1], 2, 1))))
    return cases


def i2f(i):
    """INT32 index bits as the FP32 value stored in a sort32 pair's index slot."""
    return struct.unpack('<f', struct.pack('<i', i))[0]


def sort_blocks(vals, idx, n, run):
    """Pairs (value, index) of n elements, each run-long block stably sorted descending."""
    out = []
    for b in range(0, n, run):
        ks = sorted(range(b, min(b + run, n)), key=lambda k: -vals[k])
        out += [(vals[k], idx[k]) for k in ks]
    return out


def flat(pairs):
    return [x for v, i in pairs for x in (v, i2f(i))]


def stable_desc(pairs):
    return sorted(pairs, key=lambda p: -p[0])


def sort_cases():
    """sort32 (ties: stable), mrgsort format1 (block_len 64 and 256) and format2 (2- and 3-way), tile / tensor / pl.X."""
    cases = []
    for kind in ('perm', 'ties'):
        ins = [('x0', 'FP32', (2, 128), kind), ('x1', 'INT32', (2, 128), 'idx:1000')]
        s32 = lambda v: [x for r in range(2) for x in flat(sort_blocks(v[0][r * 128:][:128], v[1][r * 128:][:128], 128, 32))]
        full = lambda v: [x for r in range(2) for x in flat(stable_desc(sort_blocks(v[0][r * 128:][:128],
                                                                                     v[1][r * 128:][:128], 128, 32)))]
        tl = ['t = pl.load(x0, [0, 0], [2, 128])', 'i = pl.load(x1, [0, 0], [2, 128])']
        for fn in ('pl.tile.sort32', 'pl.sort32'):
            cases.append(Case('%s.%s' % (fn[3:], kind), ins, ('FP32', (2, 256)),
                              tl + ['r = %s(t, i)' % fn, 'o = pl.store(r, [0, 0], o)'], s32))
        for fn in ('pl.tensor.sort32', 'pl.sort32'):
            cases.append(Case('%s.tensor.%s' % (fn[3:], kind), ins, ('FP32', (2, 256)),
                              ['r = %s(x0, x1)' % fn, 'o = pl.assemble(o, r, [0, 0])'], s32))
        for fn in ('pl.tile.mrgsort', 'pl.mrgsort'):
            cases.append(Case('%s.fmt1.%s' % (fn[3:], kind), ins, ('FP32', (2, 256)),
                              tl + ['s = pl.tile.sort32(t, i)', 'r = %s(s, block_len=64)' % fn,
                                    'o = pl.store(r, [0, 0], o)'], full))
        cases.append(Case('tensor.mrgsort.fmt1.%s' % kind, ins, ('FP32', (2, 256)),
                          ['s = pl.tensor.sort32(x0, x1)', 'r = pl.tensor.mrgsort(s, block_len=64)',
                           'o = pl.assemble(o, r, [0, 0])'], full))
        # [1, 512]: 16 sorted runs of 64 columns -> block_len 64 -> 4 runs of 256 -> block_len 256 -> one run
        big = [('x0', 'FP32', (1, 512), kind), ('x1', 'INT32', (1, 512), 'idx:1000')]
        cases.append(Case('tile.mrgsort.fmt1.twice.%s' % kind, big, ('FP32', (1, 1024)),
                          ['t = pl.load(x0, [0, 0], [1, 512])', 'i = pl.load(x1, [0, 0], [1, 512])',
                           's = pl.tile.sort32(t, i)', 'm = pl.tile.mrgsort(s, block_len=64)',
                           'r = pl.tile.mrgsort(m, block_len=256)', 'o = pl.store(r, [0, 0], o)'],
                          lambda v: flat(stable_desc(sort_blocks(v[0], v[1], 512, 32)))))
        # format2: a = fully sorted 64 elements, b = 32 sorted, c = 32 sorted -> merged (ties: a, then b, then c)
        f2 = [('x0', 'FP32', (1, 64), kind), ('x1', 'INT32', (1, 64), 'idx:1000'), ('x2', 'FP32', (1, 32), kind),
              ('x3', 'INT32', (1, 32), 'idx:1000'), ('x4', 'FP32', (1, 32), kind), ('x5', 'INT32', (1, 32), 'idx:1000')]

        def merged(v, three):
            a = stable_desc(sort_blocks(v[0], v[1], 64, 32))
            b = sort_blocks(v[2], v[3], 32, 32)
            c = sort_blocks(v[4], v[5], 32, 32) if three else []
            return flat(stable_desc(a + b + c))
        tl2 = ['a = pl.tile.mrgsort(pl.tile.sort32(pl.load(x0, [0, 0], [1, 64]), pl.load(x1, [0, 0], [1, 64])), block_len=64)',
               'b = pl.tile.sort32(pl.load(x2, [0, 0], [1, 32]), pl.load(x3, [0, 0], [1, 32]))',
               'c = pl.tile.sort32(pl.load(x4, [0, 0], [1, 32]), pl.load(x5, [0, 0], [1, 32]))']
        for fn, args, three, n in (('pl.tile.mrgsort', 'a, b, tmp=w', False, 192), ('pl.mrgsort', 'a, b, c, tmp=w', True, 256),
                                   ('pl.tile.mrgsort', 'a, b, c, tmp=w, exhausted=False', True, 256)):
            cases.append(Case('%s.fmt2.%d.%s' % (fn[3:], n, kind), f2, ('FP32', (1, n)),
                              tl2 + ['w = pl.tile.full([1, %d], dtype=pl.FP32, value=0.0)' % n, 'r = %s(%s)' % (fn, args),
                                     'o = pl.store(r, [0, 0], o)'],
                              lambda v, three=three: merged(v, three)))
        tt2 = ['a = pl.tensor.mrgsort(pl.tensor.sort32(x0, x1), block_len=64)', 'b = pl.tensor.sort32(x2, x3)',
               'c = pl.tensor.sort32(x4, x5)']
        for fn, args, three, n in (('pl.tensor.mrgsort', 'a, b', False, 192), ('pl.mrgsort', 'a, b, c', True, 256)):
            cases.append(Case('%s.tensor.fmt2.%d.%s' % (fn[3:], n, kind), f2, ('FP32', (1, n)),
                              tt2 + ['r = %s(%s)' % (fn, args), 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v, three=three: merged(v, three)))
    return cases


def gather_row_cases():
    """gather_row: a [1, 16] window (valid [1, 9]; transposed as a column) into dst at an offset; tile, tensor, pl.X."""
    cases = []
    for dt in DTS:
        ins = [('x0', dt, (8, 32), 'sym'), ('x1', dt, (16, 64), 'sym')]

        def put(v, rows, cols, tr=False, zero=False):
            d = [0] * 256 if zero else list(v[0])
            for j in range(cols):
                if tr:
                    d[(1 + j) * 32 + 3] = v[1][5 * 64 + 10 + j]
                else:
                    d[2 * 32 + 4 + j] = v[1][5 * 64 + 10 + j]
            return d
        ld = 'd = pl.load(x0, [0, 0], [8, 32])'
        for fn, extra, cols, tr in (('pl.tile.gather_row', '', 16, False), ('pl.gather_row', ', valid_shape=[1, 9]', 9, False),
                                    ('pl.tile.gather_row', ', True', 6, True)):
            off = '[1, 3]' if tr else '[2, 4]'
            win = '[1, 6]' if tr else '[1, 16]'
            cases.append(Case('%s%s.%s' % (fn[3:], '.T' if tr else '.v%d' % cols, dt), ins, (dt, (8, 32)),
                              [ld, 'r = %s(d, x1, %s, [5, 10], %s%s)' % (fn, off, win, extra), 'o = pl.store(r, [0, 0], o)'],
                              lambda v, cols=cols, tr=tr, put=put: put(v, 1, cols, tr)))
        for fn in ('pl.tensor.gather_row', 'pl.gather_row'):
            cases.append(Case('%s.tensor.%s' % (fn[3:], dt), ins, (dt, (8, 32)),
                              ['o = %s(o, x1, [2, 4], [5, 10], [1, 16])' % fn],
                              lambda v, put=put: put(v, 1, 16, False, True)))
    return cases


MASKS = ['P0101', 'P1010', 'P0001', 'P0010', 'P0100', 'P1000', 'P1111']


def mask_cols(m):
    """(stride, first column) of MaskPattern m (1..7)."""
    return (2, 0) if m == 1 else (2, 1) if m == 2 else (1, 0) if m == 7 else (4, m - 3)


def gather_mask_ref(src, m, R=4, C=16):
    stride, first = mask_cols(m)
    return [src[i * C + first + k * stride] for i in range(R) for k in range(C // stride)]


def scatter_mask_ref(dst, src, m, R=4, C=16):
    """dst [R, C] with src [R, C / stride]'s rows in the columns MaskPattern m selects."""
    stride, first = mask_cols(m)
    d = list(dst)
    for i in range(R):
        for k in range(C // stride):
            d[i * C + first + k * stride] = src[i * (C // stride) + k]
    return d


def gather_mask_cases():
    """gather_mask / scatter_mask: every pattern (literal and pl.tile.MaskPattern), output_dtype bits, and the
    sort32 pipeline."""
    cases = []
    for dt in ('FP32', 'FP16', 'INT32'):
        for m, name in enumerate(MASKS, 1):
            stride = mask_cols(m)[0]
            arg = 'pl.tile.MaskPattern.%s' % name if m % 2 else str(m)
            cases.append(Case('tile.gather_mask.%s.%s' % (name, dt), [('x0', dt, (4, 16), 'sym')], (dt, (4, 16 // stride)),
                              ['t = pl.load(x0, [0, 0], [4, 16])', 'r = pl.tile.gather_mask(t, %s)' % arg,
                               'o = pl.store(r, [0, 0], o)'],
                              lambda v, m=m: gather_mask_ref(v[0], m)))
    cases.append(Case('tile.gather_mask.output_dtype', [('x0', 'FP32', (4, 16), 'sym')], ('INT32', (4, 8)),
                      ['t = pl.load(x0, [0, 0], [4, 16])',
                       'r = pl.tile.gather_mask(t, pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)',
                       'o = pl.store(r, [0, 0], o)'],
                      lambda v: [as_int32('FP32', [v[0][i * 16 + 1 + 2 * k]])[0] for i in range(4) for k in range(8)]))
    for dt in ('FP32', 'FP16', 'BF16', 'INT32'):
        for m, name in enumerate(MASKS, 1):
            stride = mask_cols(m)[0]
            arg = 'pl.tile.MaskPattern.%s' % name if m % 2 == 0 else str(m)
            want = (lambda v, m=m: scatter_mask_ref(v[0], v[1], m))
            cases.append(Case('tile.scatter_mask.%s.%s' % (name, dt), [('x0', dt, (4, 16), 'sym'),
                                                                        ('x1', dt, (4, 16 // stride), 'sym')], (dt, (4, 16)),
                              ['d = pl.load(x0, [0, 0], [4, 16])', 's = pl.load(x1, [0, 0], [4, %d])' % (16 // stride),
                               'r = pl.tile.scatter_mask(d, s, %s)' % arg, 'o = pl.store(r, [0, 0], o)'], want))
    # the PyPTO pipeline: sort32 -> mrgsort -> values (P0101) and index bits (P1010 as INT32)
    ins = [('x0', 'FP32', (1, 128), 'perm'), ('x1', 'INT32', (1, 128), 'idx:1000')]
    pre = ['t = pl.load(x0, [0, 0], [1, 128])', 'i = pl.load(x1, [0, 0], [1, 128])',
           'm = pl.tile.mrgsort(pl.tile.sort32(t, i), block_len=64)']
    cases.append(Case('tile.gather_mask.sorted_values', ins, ('FP32', (1, 128)),
                      pre + ['r = pl.tile.gather_mask(m, pl.tile.MaskPattern.P0101)', 'o = pl.store(r, [0, 0], o)'],
                      lambda v: [p[0] for p in stable_desc(sort_blocks(v[0], v[1], 128, 32))]))
    cases.append(Case('tile.gather_mask.sorted_indices', ins, ('INT32', (1, 128)),
                      pre + ['r = pl.tile.gather_mask(m, pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)',
                             'o = pl.store(r, [0, 0], o)'],
                      lambda v: [p[1] for p in stable_desc(sort_blocks(v[0], v[1], 128, 32))]))
    return cases


def build_cases():
    cases = (view_cases() + scatter_cases() + matmul_cases() + sort_cases() + gather_row_cases() +
             gather_mask_cases())
    R, C, vr, vc = 16, 24, 13, 19
    for dt in DTS:
        load = 't = pl.load(x0, [0, 0], [%d, %d], valid_shape=[%d, %d])' % (R, C, vr, vc)
        x = [('x0', dt, (R, C), 'sym')]
        for call in ('pl.tile.transpose(t, 0, 1)', 'pl.transpose(t, 1, 0)', 'pl.tile.transpose(t, -1, -2)'):
            cases.append(Case('%s.%s' % (call[3:call.index('(')], dt), x, (dt, (C, R)),
                              [load, 'r = ' + call, 'o = pl.store(r, [0, 0], o)'],
                              lambda v: box(C, R, vc, vr, lambda i, j, v=v: v[0][j * C + i])))
        for call in ('pl.tensor.transpose(x0, 0, 1)', 'pl.transpose(x0, -2, -1)'):
            cases.append(Case('%s.%s' % (call[3:call.index('(')], dt), x, (dt, (C, R)),
                              ['r = ' + call, 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v: box(C, R, C, R, lambda i, j, v=v: v[0][j * C + i])))
        # 3-D tensor, axes 0 and 2: [4, 6, 8] -> [8, 6, 4]
        cases.append(Case('tensor.transpose3d.%s' % dt, [('x0', dt, (4, 6, 8), 'sym')], (dt, (8, 6, 4)),
                          ['r = pl.tensor.transpose(x0, 0, 2)', 'o = pl.assemble(o, r, [0, 0, 0])'],
                          lambda v: [v[0][c * 48 + b * 8 + a] for a in range(8) for b in range(6) for c in range(4)]))
        # extract: window [4, 8] + [8, 16] of a [13, 19]-valid source: valid [8, 11]
        for off, name in (('4, 8', 'const'), ('pl.tile.get_block_idx() + 4, 8', 'runtime')):
            cases.append(Case('tile.extract.%s.%s' % (name, dt), x, (dt, (8, 16)),
                              [load, 'r = pl.tile.extract(t, %s, [8, 16], target_memory=pl.MemorySpace.Vec)' % off,
                               'o = pl.store(r, [0, 0], o)'],
                              lambda v: box(8, 16, 8, 11, lambda i, j, v=v: v[0][(i + 4) * C + j + 8])))
        cases.append(Case('tile.extract.full.%s' % dt, x, (dt, (4, 8)),
                          ['t = pl.load(x0, [0, 0], [%d, %d])' % (R, C), 'r = pl.tile.extract(t, 12, 16, [4, 8])',
                           'o = pl.store(r, [0, 0], o)'],
                          lambda v: box(4, 8, 4, 8, lambda i, j, v=v: v[0][(i + 12) * C + j + 16])))
        # concat: [8, 12] valid [8, 7] ++ [8, 10] valid [6, 10] -> [8, 22] valid [6, 17]
        ab = [('x0', dt, (8, 12), 'sym'), ('x1', dt, (8, 10), 'sym')]
        for fn in ('pl.tile.concat', 'pl.concat'):
            cases.append(Case('%s.%s' % (fn[3:], dt), ab, (dt, (8, 22)),
                              ['a = pl.load(x0, [0, 0], [8, 12], valid_shape=[8, 7])',
                               'b = pl.load(x1, [0, 0], [8, 10], valid_shape=[6, 10])',
                               'r = %s(a, b)' % fn, 'o = pl.store(r, [0, 0], o)'],
                              lambda v: box(8, 22, 6, 17, lambda i, j, v=v: v[0][i * 12 + j] if j < 7
                                            else v[1][i * 10 + j - 7])))
        for fn in ('pl.tensor.concat', 'pl.concat'):
            cases.append(Case('%s.tensor.%s' % (fn[3:], dt), ab, (dt, (8, 22)),
                              ['r = %s(x0, x1)' % fn, 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v: box(8, 22, 8, 22, lambda i, j, v=v: v[0][i * 12 + j] if j < 12
                                            else v[1][i * 10 + j - 12])))
        # tensor gather, torch style
        for fn in ('pl.tensor.gather', 'pl.gather'):
            cases.append(Case('%s.dim-1.%s' % (fn[3:], dt), [('x0', dt, (8, 16), 'sym'), ('x1', 'INT32', (4, 10), 'idx:16')],
                              (dt, (4, 10)), ['r = %s(x0, dim=-1, index=x1)' % fn, 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v: [v[0][b * 16 + v[1][b * 10 + k]] for b in range(4) for k in range(10)]))
        cases.append(Case('tensor.gather.dim0.%s' % dt, [('x0', dt, (8, 16), 'sym'), ('x1', 'INT32', (5, 16), 'idx:8')],
                          (dt, (5, 16)), ['r = pl.tensor.gather(x0, 0, x1)', 'o = pl.assemble(o, r, [0, 0])'],
                          lambda v: [v[0][v[1][i * 16 + j] * 16 + j] for i in range(5) for j in range(16)]))
        # tile gather, flat index over src's [8, 16]; indices valid [3, 16] -> result valid [3, 16]
        if dt != 'BF16':
            cases.append(Case('tile.gather.%s' % dt, [('x0', dt, (8, 16), 'sym'), ('x1', 'INT32', (4, 16), 'idx:128')],
                              (dt, (4, 16)),
                              ['s = pl.load(x0, [0, 0], [8, 16])', 'i = pl.load(x1, [0, 0], [4, 16], valid_shape=[3, 16])',
                               'w = pl.tile.full([4, 16], dtype=pl.INT32, value=0)',
                               'r = pl.tile.gather(s, i, w)', 'o = pl.store(r, [0, 0], o)'],
                              lambda v: box(4, 16, 3, 16, lambda a, b, v=v: v[0][v[1][a * 16 + b]])))
    return cases


OOR = '''import pypto.language as pl


@pl.program
class Oor:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], ix: pl.Tensor[[2, 16], pl.INT32], o: pl.Out[pl.Tensor[[2, 16], pl.FP32]]) -> pl.Tensor[[2, 16], pl.FP32]:
        %s
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], ix: pl.Tensor[[2, 16], pl.INT32], o: pl.Out[pl.Tensor[[2, 16], pl.FP32]]):
        o = self.k(x, ix, o)
'''


def out_of_range(pldrun, work):
    """An index outside the source (destination): exit 70 and a located 'is outside' runtime error, for
    both gathers and both scatters."""
    bad = 0
    bodies = {'tile': 's = pl.load(x, [0, 0], [8, 16])\n        i = pl.load(ix, [0, 0], [2, 16])\n'
                      '        r = pl.tile.gather(s, i, i)\n        o = pl.store(r, [0, 0], o)',
              'tensor': 'r = pl.tensor.gather(x, -1, ix)\n        o = pl.assemble(o, r, [0, 0])',
              'tile_scatter': 'd = pl.load(x, [0, 0], [8, 16])\n        i = pl.load(ix, [0, 0], [2, 16])\n'
                              '        s = pl.load(x, [0, 0], [2, 16])\n        r = pl.tile.scatter(d, s, i)\n'
                              '        t = pl.load(x, [0, 0], [2, 16])\n        o = pl.store(t, [0, 0], o)',
              'tensor_scatter': 's = pl.tensor.slice(x, [2, 16], [0, 0])\n        r = pl.tensor.scatter(x, -1, ix, s)\n'
                                '        o = pl.assemble(o, s, [0, 0])'}
    lims = {'tile': 128, 'tensor': 16, 'tile_scatter': 128, 'tensor_scatter': 16}
    for name, body in m.each(bodies.items()):
        prog = os.path.join(work, 'oor_%s.pld' % name)
        with open(prog, 'w') as f:
            f.write(OOR % body)
        ixs = [0] * 32
        ixs[21] = lims[name]
        m.write_npy(os.path.join(work, 'ix.npy'), 'INT32', (2, 16), ixs)
        m.write_npy(os.path.join(work, 'x.npy'), 'FP32', (8, 16), [0.0] * 128)
        bad += m.expect_error(pldrun, prog, ['--in', 'x=' + os.path.join(work, 'x.npy'), '--in',
                                             'ix=' + os.path.join(work, 'ix.npy'), '--out', 'o=' + os.path.join(work, 'oo.npy')],
                              ['is outside', 'oor_%s.pld:' % name, '[1, 5]'], 'out-of-range ' + name)
    return bad


def main():
    return m.main_with(gen, build_cases, out_of_range)

if __name__ == '__main__':
    sys.exit(main())
