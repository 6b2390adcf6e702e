#!/usr/bin/env python3
"""run_ops_gather.py - golden tests of the GM gather/scatter family (issue 11)
through pldrun at one rank, without mpirun (CTest `ops_gather`):
pl.tile.mgather / pl.mgather (Vec row mode with [1, R] and [R, 1] indices,
Vec elem mode, Mat row and elem modes with valid_shape and the elem mode's
scratch, every gather_oob mode with negative and past-the-end indices, 2-D and
3-D mem, partial index valid shapes), pl.tile.mscatter (permutations,
duplicates, partial valid src), pl.tile.gatherb (output_dtype, partial valid
offsets), pl.tile/tensor.scatter_update and pl.scatter_update (2-D and 4-D,
the three call forms, duplicates), pl.tensor.paged_gather / pl.paged_gather
(is_trans, col_off, fewer indices than max_indices), pl.tensor.create_l1 with
gather_row, pl.tensor.no_dep / pl.no_dep, pl.tensor.dump_tag, pl.tile.max /
pl.tile.min, in FP32/FP16/BF16/INT32/INT16/INT8 where PyPTO allows them; and
the runtime errors: an index PyPTO leaves undefined (past mem, outside the
destination, a gatherb offset off a 32-byte block or past src, a paged lookup
outside the block table or src) must stop pldrun with exit 70 and a located
error.

The programs, runner and bit-exact comparison are run_ops_mem.py's (imported);
only the cases differ. Goldens are computed here in pure Python from the
semantics of docs/ops-numerics.md. Out tensors start zeroed.

usage: run_ops_gather.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--max-failures N]
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ops  # noqa: E402
import run_ops_layout as lay  # noqa: E402
import run_ops_mem as m  # noqa: E402
from run_ops_mem import Case  # noqa: E402

# the integer dtypes these ops take, added to the shared harness tables
run_ops.NPY.update({'INT16': ('<i2', 'h', 2), 'INT8': ('|i1', 'b', 1), 'UINT32': ('<u4', 'I', 4)})
run_ops.PL.update({'INT16': 'pl.INT16', 'INT8': 'pl.INT8', 'UINT32': 'pl.UINT32'})
run_ops.RND.update({'INT16': int, 'INT8': int, 'UINT32': int})
WIDTH = {'FP32': 4, 'FP16': 2, 'BF16': 2, 'INT32': 4, 'INT16': 2, 'INT8': 1, 'UINT32': 4}
PACK = {'FP32': '<f', 'FP16': '<e', 'INT32': '<i', 'INT16': '<h', 'INT8': '<b', 'UINT32': '<I'}
_gen = m.gen


def gen(rng, dt, n, kind):
    """'idx:N': indices in [0, N); 'oob:N': indices in [-2, N + 3) (out of range for oob modes); 'blk:N': byte
    offsets of 32-byte blocks 0..N-1; INT16/INT8: small integers; otherwise run_ops.gen."""
    if kind.startswith('idx:'):
        return [rng.next() % int(kind[4:]) for _ in range(n)]
    if kind.startswith('oob:'):
        return [rng.next() % (int(kind[4:]) + 5) - 2 for _ in range(n)]
    if kind.startswith('blk:'):
        return [rng.next() % int(kind[4:]) * 32 for _ in range(n)]
    if dt in ('INT16', 'INT8'):
        return [rng.next() % 200 - 100 for _ in range(n)]
    return _gen(rng, dt, n, kind)


def raw(dt, vals):
    """The little-endian bytes of vals in dt."""
    if dt == 'BF16':
        return b''.join(struct.pack('<H', run_ops.bf16_bits(v)) for v in vals)
    return b''.join(struct.pack(PACK[dt], v) for v in vals)


def unraw(dt, b):
    if dt == 'BF16':
        return [run_ops.bf16_from_bits(h) for h in struct.unpack('<%dH' % (len(b) // 2), b)]
    w = WIDTH[dt]
    return list(struct.unpack('<%d%s' % (len(b) // w, PACK[dt][1]), b))


def resolve(k, n, oob):
    """mgather's index k (read as UINT32) against n entries: the entry, None for a zero (oob 'zero')."""
    k &= 0xffffffff
    if k < n:
        return k
    return {'clamp': n - 1, 'wrap': k % n, 'zero': None}[oob]


def mgather_ref(mem, idx, shape, valid, row, oob, last, rowvec=True):
    """[R, C] result of mgather: row mode rows of mem ([numel / last, last]), elem mode mem.flat; 0 outside valid."""
    R, C = shape
    n = len(mem) // last if row else len(mem)
    out = [0] * (R * C)
    for i in range(valid[0]):
        for j in range(valid[1]):
            k = resolve(idx[i] if row else idx[i * C + j], n, oob)
            if k is not None:
                out[i * C + j] = mem[k * last + j] if row else mem[k]
    return out


def mgather_cases():
    cases = []
    oarg = lambda o: '' if o == 'undefined' else ', gather_oob="%s"' % o
    for dt in ('FP32', 'FP16', 'BF16', 'INT32', 'INT16', 'INT8'):
        for oob in ('undefined', 'clamp', 'wrap', 'zero'):
            kind = 'idx:16' if oob == 'undefined' else 'oob:16'
            # Vec row mode, [1, 8] index valid [1, 6] -> [8, 12] valid [6, 12]
            cases.append(Case('tile.mgather.row.%s.%s' % (oob, dt), [('x0', dt, (16, 12), 'sym'),
                                                                      ('x1', 'INT32', (1, 8), kind)], (dt, (8, 12)),
                              ['i = pl.load(x1, [0, 0], [1, 8], valid_shape=[1, 6])',
                               'r = pl.tile.mgather(x0, i, coalesce="row"%s)' % oarg(oob), 'o = pl.store(r, [0, 0], o)'],
                              lambda v, oob=oob: mgather_ref(v[0], v[1], (8, 12), (6, 12), True, oob, 12)))
            # Vec elem mode, [4, 8] index valid [3, 5] into a [6, 10] mem (60 entries)
            kind = 'idx:60' if oob == 'undefined' else 'oob:60'
            cases.append(Case('mgather.elem.%s.%s' % (oob, dt), [('x0', dt, (6, 10), 'sym'),
                                                                  ('x1', 'INT32', (4, 8), kind)], (dt, (4, 8)),
                              ['i = pl.load(x1, [0, 0], [4, 8], valid_shape=[3, 5])',
                               'r = pl.mgather(x0, i, "elem"%s)' % oarg(oob), 'o = pl.store(r, [0, 0], o)'],
                              lambda v, oob=oob: mgather_ref(v[0], v[1], (4, 8), (3, 5), False, oob, 10)))
    for dt in ('FP32', 'FP16', 'INT32'):
        # [R, 1] index; a 3-D mem is [2 * 5, 8] rows
        cases.append(Case('tile.mgather.rowcol.3d.%s' % dt, [('x0', dt, (2, 5, 8), 'sym'), ('x1', 'INT32', (6, 1), 'idx:10')],
                          (dt, (6, 8)), ['i = pl.load(x1, [0, 0], [6, 1])',
                                         'r = pl.tile.mgather(x0, i, 0, target_memory=pl.MemorySpace.Vec)',
                                         'o = pl.store(r, [0, 0], o)'],
                          lambda v: mgather_ref(v[0], v[1], (6, 8), (6, 8), True, 'undefined', 8)))
    # Mat forms (FP16 / FP32 / INT8): rows multiple of 16, columns of 32 bytes
    for dt, C in (('FP16', 16), ('FP32', 8), ('BF16', 16), ('INT8', 32)):
        for oob in ('undefined', 'wrap', 'zero', 'clamp'):
            kind = 'idx:40' if oob == 'undefined' else 'oob:40'
            cases.append(Case('tile.mgather.mat.row.%s.%s' % (oob, dt), [('x0', dt, (40, C), 'sym'),
                                                                          ('x1', 'INT32', (1, 16), kind)], (dt, (16, C)),
                              ['r = pl.tile.mgather(x0, x1, coalesce="row"%s, target_memory=pl.MemorySpace.Mat, '
                               'valid_shape=[12, %d])' % (oarg(oob), C - 3), 'o = pl.store(r, [0, 0], o)'],
                              lambda v, oob=oob, C=C: mgather_ref(v[0], v[1], (16, C), (12, C - 3), True, oob, C)))
            kind = 'idx:300' if oob == 'undefined' else 'oob:300'
            cases.append(Case('tile.mgather.mat.elem.%s.%s' % (oob, dt), [('x0', dt, (300,), 'sym'),
                                                                           ('x1', 'INT32', (16, C), kind),
                                                                           ('x2', dt, (16 * C + 5,), 'sym')], (dt, (16, C)),
                              ['r = pl.tile.mgather(x0, x1, coalesce="elem"%s, target_memory=pl.MemorySpace.Mat, '
                               'scratch=x2)' % oarg(oob), 'o = pl.store(r, [0, 0], o)'],
                              lambda v, oob=oob, C=C: mgather_ref(v[0], v[1], (16, C), (16, C), False, oob, 1)))
        # the elem mode's scratch holds the gathered valid box (row length C) afterwards: scratch = the Out tensor
        cases.append(Case('tile.mgather.mat.scratch.%s' % dt, [('x0', dt, (300,), 'sym'), ('x1', 'INT32', (16, C), 'oob:300')],
                          (dt, (16 * C,)),
                          ['r = pl.tile.mgather(x0, x1, coalesce=1, gather_oob=3, target_memory=pl.MemorySpace.Mat, '
                           'scratch=o, valid_shape=[9, %d])' % (C // 2)],
                          lambda v, C=C: mgather_ref(v[0], v[1], (16, C), (9, C // 2), False, 'zero', 1)))
    return cases


def mscatter_cases():
    """output.flat[idx[p]] = src[p] over src's valid box, row-major; duplicates: the last write wins."""
    cases = []

    def ref(src, idx, C, vr, vc, n):
        out = [0] * n
        for i in range(vr):
            for j in range(vc):
                out[idx[i * C + j]] = src[i * C + j]
        return out
    for dt in ('FP32', 'FP16', 'INT32', 'INT16'):
        for kind, name in (('idx:96', ''), ('idx:7', '.dups')):
            cases.append(Case('tile.mscatter%s.%s' % (name, dt), [('x0', dt, (4, 8), 'sym'), ('x1', 'INT32', (4, 8), kind)],
                              (dt, (96,)),
                              ['s = pl.load(x0, [0, 0], [4, 8], valid_shape=[3, 7])', 'i = pl.load(x1, [0, 0], [4, 8])',
                               'o = pl.tile.mscatter(s, i, o)'],
                              lambda v: ref(v[0], v[1], 8, 3, 7, 96)))
        cases.append(Case('tile.mscatter.2d.%s' % dt, [('x0', dt, (4, 8), 'sym'), ('x1', 'INT32', (4, 8), 'idx:60')],
                          (dt, (6, 10)),
                          ['s = pl.load(x0, [0, 0], [4, 8])', 'i = pl.load(x1, [0, 0], [4, 8])',
                           'o = pl.tile.mscatter(s, i, o)'],
                          lambda v: ref(v[0], v[1], 8, 4, 8, 60)))
    return cases


def gatherb_cases():
    """Block j of out row i = the 32 bytes of src from byte offset[i, j] (multiples of 32), as output_dtype."""
    cases = []

    def ref(sdt, odt, src, off, R, B, vr, vb):
        sb = raw(sdt, src)
        w = WIDTH[odt]
        out = []
        for i in range(R):
            row = b''.join(sb[off[i * B + j]:off[i * B + j] + 32] if i < vr and j < vb else b'\0' * 32
                           for j in range(B))
            out += unraw(odt, row)
        return out
    for sdt, odt in (('FP32', 'FP32'), ('FP16', 'FP16'), ('BF16', 'BF16'), ('INT32', 'INT32'), ('INT16', 'INT16'),
                     ('INT8', 'INT8'), ('FP32', 'INT32'), ('FP16', 'INT8'), ('INT32', 'FP16')):
        sc = 256 // WIDTH[sdt]  # [2, sc]: 512 bytes = 16 blocks
        oc = 8 * 32 // WIDTH[odt]
        out = 'pl.tile.gatherb(s, b)' if odt == sdt else 'pl.tile.gatherb(s, b, output_dtype=pl.%s)' % odt
        cases.append(Case('tile.gatherb.%s.%s' % (sdt, odt), [('x0', sdt, (2, sc), 'sym'), ('x1', 'UINT32', (3, 8), 'blk:16')],
                          (odt, (3, oc)),
                          ['s = pl.load(x0, [0, 0], [2, %d])' % sc, 'b = pl.load(x1, [0, 0], [3, 8], valid_shape=[2, 5])',
                           'r = ' + out, 'o = pl.store(r, [0, 0], o)'],
                          lambda v, sdt=sdt, odt=odt: ref(sdt, odt, v[0], v[1], 3, 8, 2, 5)))
    return cases


def scatter_update_cases():
    """input's row index.flat[k] = src's row k (2-D input [rows, d] / src [b * s, d]; 4-D [blocks, bs, 1, d] /
    [b, s, 1, d]); the three call forms; duplicates (the last wins)."""
    cases = []

    def ref(inp, idx, src, d, nk):
        out = list(inp)
        for k in range(nk):
            out[idx[k] * d:(idx[k] + 1) * d] = src[k * d:(k + 1) * d]
        return out
    for dt in ('FP32', 'FP16', 'BF16', 'INT32', 'INT16'):
        ins2 = [('x0', dt, (16, 8), 'sym'), ('x1', 'INT32', (2, 3), 'idx:16'), ('x2', dt, (6, 8), 'sym')]
        ins4 = [('x0', dt, (4, 4, 1, 8), 'sym'), ('x1', 'INT32', (2, 3), 'idx:16'), ('x2', dt, (2, 3, 1, 8), 'sym')]
        tl2 = ['t = pl.load(x0, [0, 0], [16, 8])', 'i = pl.load(x1, [0, 0], [2, 3])', 's = pl.load(x2, [0, 0], [6, 8])']
        tl4 = ['t = pl.load(x0, [0, 0, 0, 0], [4, 4, 1, 8])', 'i = pl.load(x1, [0, 0], [2, 3])',
               's = pl.load(x2, [0, 0, 0, 0], [2, 3, 1, 8])']
        for form in ('(t, -2, i, s)', '(t, i, s, dim=-2)', '(t, -2, index=i, src=s)'):
            for fn in ('pl.tile.scatter_update', 'pl.scatter_update'):
                cases.append(Case('%s%s.%s' % (fn[3:], form.replace(' ', ''), dt), ins2, (dt, (16, 8)),
                                  tl2 + ['r = %s%s' % (fn, form), 'o = pl.store(r, [0, 0], o)'],
                                  lambda v: ref(v[0], v[1], v[2], 8, 6)))
            tform = form.replace('(t,', '(x0,').replace(' i,', ' x1,').replace('=i,', '=x1,').replace(' s,', ' x2,')
            tform = tform.replace('=s)', '=x2)').replace(' s)', ' x2)')
            cases.append(Case('tensor.scatter_update%s.%s' % (form.replace(' ', ''), dt), ins2, (dt, (16, 8)),
                              ['r = pl.tensor.scatter_update%s' % tform, 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v: ref(v[0], v[1], v[2], 8, 6)))
        cases.append(Case('tile.scatter_update.4d.%s' % dt, ins4, (dt, (4, 4, 1, 8)),
                          tl4 + ['r = pl.tile.scatter_update(t, -2, i, s)', 'o = pl.store(r, [0, 0, 0, 0], o)'],
                          lambda v: ref(v[0], v[1], v[2], 8, 6)))
        cases.append(Case('scatter_update.tensor.4d.%s' % dt, ins4, (dt, (4, 4, 1, 8)),
                          ['r = pl.scatter_update(x0, -2, x1, x2)', 'o = pl.assemble(o, r, [0, 0, 0, 0])'],
                          lambda v: ref(v[0], v[1], v[2], 8, 6)))
    # duplicates, and an index tile with a partial valid box [1, 3]: only the first 3 updates apply
    cases.append(Case('tile.scatter_update.dups.valid', [('x0', 'FP32', (16, 8), 'sym'), ('x1', 'INT32', (2, 3), 'idx:3'),
                                                         ('x2', 'FP32', (6, 8), 'sym')], ('FP32', (16, 8)),
                      ['t = pl.load(x0, [0, 0], [16, 8])', 'i = pl.load(x1, [0, 0], [2, 3], valid_shape=[1, 3])',
                       's = pl.load(x2, [0, 0], [6, 8])', 'r = pl.tile.scatter_update(t, -2, i, s)',
                       'o = pl.store(r, [0, 0], o)'],
                      lambda v: ref(v[0], v[1], v[2], 8, 3)))
    return cases


def paged_ref(src, idx, bt, bs, size, mx, col, C, tr):
    out = [0] * (mx * size)
    for i, li in enumerate(idx):
        phys = bt[li // bs] * bs + li % bs
        for c in range(size):
            out[(c * mx + i) if tr else (i * size + c)] = src[phys * C + col + c]
    return out


def misc_cases():
    """paged_gather, create_l1 + gather_row, no_dep, tile.max / tile.min."""
    cases = []
    for dt in ('FP16', 'FP32', 'BF16', 'INT8'):
        # pool [32, 12] in 8 blocks of 4 rows; block table a permutation of 8; 5 indices of max 6
        ins = [('x0', dt, (32, 12), 'sym'), ('x1', 'INT32', (5,), 'idx:32'), ('x2', 'INT32', (1, 8), 'perm8')]
        cases.append(Case('tensor.paged_gather.%s' % dt, ins, (dt, (6, 8)),
                          ['r = pl.tensor.paged_gather(x0, x1, x2, 4, 8, 6, col_off=3)', 'o = pl.assemble(o, r, [0, 0])'],
                          lambda v: paged_ref(v[0], v[1], v[2], 4, 8, 6, 3, 12, False)))
        cases.append(Case('paged_gather.trans.%s' % dt, ins, (dt, (8, 6)),
                          ['r = pl.paged_gather(x0, x1, x2, block_size=4, size=8, max_indices=6, space=pl.MemorySpace.Mat, '
                           'is_trans=True, is_b_matrix=True)', 'o = pl.assemble(o, r, [0, 0])'],
                          lambda v: paged_ref(v[0], v[1], v[2], 4, 8, 6, 0, 12, True)))
    cases.append(Case('tensor.create_l1.gather_row', [('x0', 'FP32', (8, 16), 'sym')], ('FP32', (4, 16)),
                      ['kv = pl.tensor.create_l1([4, 16], pl.FP32)', 'kv = pl.gather_row(kv, x0, [1, 0], [6, 0], [1, 16])',
                       'kv = pl.tensor.gather_row(kv, x0, [3, 0], [2, 0], [1, 16])', 'o = pl.assemble(o, kv, [0, 0])'],
                      lambda v: [0] * 16 + v[0][96:112] + [0] * 16 + v[0][32:48]))
    for fn in ('pl.tensor.no_dep', 'pl.no_dep'):
        cases.append(Case('%s' % fn[3:], [('x0', 'FP16', (4, 8), 'sym')], ('FP16', (4, 8)),
                          ['r = %s(x0)' % fn, 'o = pl.assemble(o, r, [0, 0])'], lambda v: list(v[0])))
    for dt in ('FP32', 'INT32'):
        cases.append(Case('tile.max_min.%s' % dt, [('x0', dt, (1, 4), 'sym')], (dt, (1, 4)),
                          ['a = pl.tensor.read(x0, [0, 0])', 'b = pl.tensor.read(x0, [0, 1])',
                           'o = pl.tensor.write(o, [0, 0], pl.tile.max(a, b))',
                           'o = pl.tensor.write(o, [0, 1], pl.tile.min(a, b))',
                           'o = pl.tensor.write(o, [0, 2], pl.max(a, b))'],
                          lambda v: [max(v[0][0], v[0][1]), min(v[0][0], v[0][1]), max(v[0][0], v[0][1]), 0]))
    return cases


_gen2 = gen


def gen_all(rng, dt, n, kind):
    if kind.startswith('cmp:'):  # per row of 16: exactly K 7s, the rest in 0..3
        k, out = int(kind[4:]), []
        for _ in range(n // 16):
            row = [rng.next() % 4 for _ in range(16)]
            for j in sorted(range(16), key=lambda _: rng.next())[:k]:
                row[j] = 7
            out += [float(x) if dt in run_ops.FLOAT else x for x in row]
        return out
    if kind == 'perm8':  # a permutation of 0..7 (a block table)
        v = list(range(8))
        for i in range(7, 0, -1):
            j = rng.next() % (i + 1)
            v[i], v[j] = v[j], v[i]
        return v
    return _gen2(rng, dt, n, kind)


def gather_compare_cases():
    """(dst, cdst): the ascending columns of each row where src cmp kvalue holds, and their count; the inputs
    ('cmp:K') hold exactly K 7s per row among values 0..3, so every row has out_cols matches."""
    cases = []
    for dt, mode, kv, hit in (('INT32', 'eq', '7', True), ('FP16', 'gt', '5.0', True), ('FP32', 'ge', '7.0', True),
                              ('INT16', 'ne', '7', False), ('FP32', 'lt', '4.0', False), ('FP16', 'le', '3.0', False),
                              ('INT32', 4, '6', True)):
        oc = 5 if hit else 16 - 5
        for cd in ('INT32', 'UINT32'):
            cm = '"%s"' % mode if isinstance(mode, str) else str(mode)
            ca = '' if cd == 'INT32' else ', count_dtype=pl.UINT32'

            def want(v, hit=hit, oc=oc):
                out = []
                for i in range(4):
                    js = [j for j in range(16) if (v[0][i * 16 + j] == 7) == hit and (i < 3)]
                    out += (js + [0] * oc)[:oc]
                return out
            cases.append(Case('tile.gather_compare.%s.%s.%s' % (cm.strip('"'), dt, cd), [('x0', dt, (4, 16), 'cmp:5')],
                              ('INT32', (4, oc)),
                              ['s = pl.load(x0, [0, 0], [4, 16], valid_shape=[3, 16])',
                               'w = pl.tile.create([1, 64], dtype=pl.UINT8)', 'kv = pl.const(%s, pl.%s)' % (kv, dt),
                               'd, c = pl.tile.gather_compare(s, kv, w, cmp_mode=%s, out_cols=%d%s)' % (cm, oc, ca),
                               'o = pl.store(d, [0, 0], o)'], want))
            if cd == 'INT32':
                cases.append(Case('tile.gather_compare.count.%s.%s' % (cm.strip('"'), dt), [('x0', dt, (4, 16), 'cmp:5')],
                                  ('INT32', (1, 4)),
                                  ['s = pl.load(x0, [0, 0], [4, 16], valid_shape=[3, 16])',
                                   'w = pl.tile.create([1, 64], dtype=pl.UINT8)', 'kv = pl.const(%s, pl.%s)' % (kv, dt),
                                   'd, c = pl.tile.gather_compare(s, kv, w, cmp_mode=%s, out_cols=%d)' % (cm, oc),
                                   'o = pl.store(c, [0, 0], o)'], lambda v, oc=oc: [oc, oc, oc, 0]))
    return cases


def tensor_form_cases():
    """pl.tensor.gather's mask and compare forms and pl.tensor.scatter's mask form (and pl.gather / pl.scatter)."""
    cases = []
    for dt in ('FP32', 'FP16', 'INT32', 'INT16'):
        for m, name in enumerate(lay.MASKS, 1):
            stride = lay.mask_cols(m)[0]
            arg = 'pl.tile.MaskPattern.%s' % name if m % 2 else str(m)
            fn = 'pl.tensor.gather' if m % 3 else 'pl.gather'
            cases.append(Case('%s.mask.%s.%s' % (fn[3:], name, dt), [('x0', dt, (4, 16), 'sym')], (dt, (4, 16 // stride)),
                              ['r = %s(x0, mask_pattern=%s)' % (fn, arg), 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v, m=m: lay.gather_mask_ref(v[0], m)))
            fn = 'pl.tensor.scatter' if m % 3 else 'pl.scatter'
            cases.append(Case('%s.mask.%s.%s' % (fn[3:], name, dt), [('x0', dt, (4, 16 // stride), 'sym'),
                                                                     ('x1', dt, (4, 16), 'sym')], (dt, (4, 16)),
                              ['r = %s(x0, mask_pattern=%s, dst=x1)' % (fn, arg), 'o = pl.assemble(o, r, [0, 0])'],
                              lambda v, m=m: lay.scatter_mask_ref(v[1], v[0], m)))
    for dt in ('FP16', 'INT16'):  # PyPTO: an INT16 index with a 16-bit input (tensor_ops.py gather)
        cases.append(Case('tensor.gather.index16.%s' % dt, [('x0', dt, (4, 16), 'sym'), ('x1', 'INT16', (4, 6), 'idx:16')],
                          (dt, (4, 6)), ['r = pl.tensor.gather(x0, -1, x1)', 'o = pl.assemble(o, r, [0, 0])'],
                          lambda v: [v[0][b * 16 + v[1][b * 6 + k]] for b in range(4) for k in range(6)]))
    cases.append(Case('tensor.gather.mask.output_dtype', [('x0', 'FP32', (4, 16), 'sym')], ('INT32', (4, 8)),
                      ['r = pl.tensor.gather(x0, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)',
                       'o = pl.assemble(o, r, [0, 0])'],
                      lambda v: [struct.unpack('<i', struct.pack('<f', v[0][i * 16 + 1 + 2 * k]))[0] for i in range(4)
                                 for k in range(8)]))
    for dt, mode, kv in (('INT32', 'eq', '7'), ('FP16', 'gt', '5.0'), ('FP32', 'ge', '7.0')):
        for fn, part in (('pl.tensor.gather', 0), ('pl.gather', 1)):
            cases.append(Case('%s.compare.%s.%s.%d' % (fn[3:], mode, dt, part), [('x0', dt, (4, 16), 'cmp:5')],
                              ('INT32', (4, 5) if part == 0 else (1, 4)),
                              ['d, c = %s(x0, kvalue=pl.const(%s, pl.%s), cmp_mode="%s", out_cols=5)' % (fn, kv, dt, mode),
                               'o = pl.assemble(o, %s, [0, 0])' % ('d' if part == 0 else 'c')],
                              lambda v, part=part: [j for i in range(4) for j in range(16) if v[0][i * 16 + j] == 7]
                              if part == 0 else [5, 5, 5, 5]))
    return cases


def build_cases():
    return (mgather_cases() + mscatter_cases() + gatherb_cases() + scatter_update_cases() + misc_cases() +
            gather_compare_cases() + tensor_form_cases())


PROG = '''import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], ix: pl.Tensor[[2, 16], pl.INT32], ux: pl.Tensor[[2, 16], pl.UINT32],
          o: pl.Out[pl.Tensor[[2, 16], pl.FP32]]) -> pl.Tensor[[2, 16], pl.FP32]:
        %s
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], ix: pl.Tensor[[2, 16], pl.INT32], ux: pl.Tensor[[2, 16], pl.UINT32],
             o: pl.Out[pl.Tensor[[2, 16], pl.FP32]]):
        pl.tensor.dump_tag(x)
        o = self.k(pl.no_dep(x), ix, ux, o)
'''

# name -> (kernel body, bad index value placed at ix[1, 5] / ux[1, 5], expected message fragment)
BAD = {
    'mgather_elem': ('i = pl.load(ix, [0, 0], [2, 16])\n        r = pl.tile.mgather(x, i, "elem")\n'
                     '        o = pl.store(r, [0, 0], o)', -1, 'index 4294967295 at [1, 5] is outside [0, 128)'),
    'mgather_row': ('i = pl.load(ix, [0, 0], [1, 16])\n        r = pl.tile.mgather(x, i)\n'
                    '        o = pl.store(pl.tile.slice(r, [2, 16], [0, 0]), [0, 0], o)', 8, None),
    'mgather_mat': ('r = pl.tile.mgather(x, pl.tensor.slice(ix, [1, 16], [1, 0]), target_memory=pl.MemorySpace.Mat)',
                    8, 'index 8 at [0, 5] is outside [0, 8)'),
    'mscatter': ('s = pl.load(x, [0, 0], [2, 16])\n        i = pl.load(ix, [0, 0], [2, 16])\n'
                 '        o = pl.tile.mscatter(s, i, o)', 32, 'index 32 at [1, 5] is outside [0, 32)'),
    'gatherb_align': ('s = pl.load(x, [0, 0], [8, 16])\n        b = pl.load(ux, [0, 0], [2, 8])\n'
                      '        r = pl.tile.gatherb(s, b)\n        o = pl.store(pl.tile.slice(r, [2, 16], [0, 0]), [0, 0], o)',
                      36, 'byte offset 36 at [1, 5] is not a multiple of 32'),
    'gatherb_end': ('s = pl.load(x, [0, 0], [8, 16])\n        b = pl.load(ux, [0, 0], [2, 8])\n'
                    '        r = pl.tile.gatherb(s, b)\n        o = pl.store(pl.tile.slice(r, [2, 16], [0, 0]), [0, 0], o)',
                    512, 'byte offset 512 at [1, 5] is outside src'),
    'scatter_update': ('t = pl.load(x, [0, 0], [8, 16])\n        i = pl.load(ix, [0, 0], [2, 16])\n'
                       '        s = pl.tile.full([32, 16], dtype=pl.FP32, value=1.0)\n'
                       '        r = pl.tile.scatter_update(t, -2, i, s)\n'
                       '        o = pl.store(pl.tile.slice(r, [2, 16], [0, 0]), [0, 0], o)', 8,
                       'index 8 at [1, 5] is outside [0, 8)'),
    'gather_compare': ('s = pl.load(x, [0, 0], [2, 16])\n        w = pl.tile.create([1, 64], dtype=pl.UINT8)\n'
                       '        d, c = pl.tile.gather_compare(s, pl.const(0.0, pl.FP32), w, cmp_mode="eq", out_cols=15)\n'
                       '        o = pl.store(pl.tile.cast(d, pl.FP32), [0, 0], o)', 0, 'row 0 has 16 matches, out_cols is 15'),
    'paged_table': ('r = pl.tensor.paged_gather(x, pl.tensor.slice(ix, [1, 16], [1, 0]), pl.tensor.slice(ix, [1, 8], '
                    '[0, 0]), 4, 16, 32)\n        o = pl.assemble(o, pl.tensor.slice(r, [2, 16], [0, 0]), [0, 0])', 40,
                    'index 40 (entry 5) is outside the block table'),
}


def runtime_errors(pldrun, work):
    """Each bad program: exit 70, the file:line of the op, the message fragment."""
    bad = 0
    for name, (body, val, frag) in m.each(BAD.items()):
        prog = os.path.join(work, 'bad_%s.pld' % name)
        with open(prog, 'w') as f:
            f.write(PROG % body)
        ixs = [0] * 32
        ixs[21] = val
        if name == 'mgather_row':
            ixs[5] = val
            frag = 'index 8 at [0, 5] is outside [0, 8)'
        run_ops.write_npy(os.path.join(work, 'ix.npy'), 'INT32', (2, 16), ixs)
        run_ops.write_npy(os.path.join(work, 'ux.npy'), 'UINT32', (2, 16), [v & 0xffffffff for v in ixs])
        run_ops.write_npy(os.path.join(work, 'x.npy'), 'FP32', (8, 16), [0.0] * 128)
        ios = ['--in', 'x=' + os.path.join(work, 'x.npy'), '--in', 'ix=' + os.path.join(work, 'ix.npy'), '--in',
               'ux=' + os.path.join(work, 'ux.npy'), '--out', 'o=' + os.path.join(work, 'oo.npy')]
        bad += m.expect_error(pldrun, prog, ios, [frag, 'bad_%s.pld:' % name], 'runtime error ' + name)
    return bad


def main():
    return m.main_with(gen_all, build_cases, runtime_errors)

if __name__ == '__main__':
    sys.exit(main())
