#!/usr/bin/env python3
"""run_ops_basic.py - golden tests of the basic tile/tensor/array/system ops
(issue 11) through pldrun at one rank, without mpirun (CTest `ops_basic`):
pl.tile.read / pl.tile.write and unified pl.read / pl.write on tiles (2-D and
flat indices, the in-place statement form), pl.tile.slice (the source's valid
region under the window, narrowed by valid_shape; drop_dims with the 2-D
floor; pad_value), pl.tile.reshape / pl.tensor.reshape / pl.reshape (the
valid box mapped without widening: unit axes, flat prefixes), pl.tile.assemble
(the whole physical source is copied; the valid union: inside, origin cover,
growth along one axis), pl.tensor.full, pl.array.create / get_element /
update_element (kernel and orchestration, TaskId arrays), pl.tile /
pl.tensor.get_block_num inside a pl.spmd launch of several blocks,
pl.system.task_invalid / task_dummy with pl.submit deps= (None, arrays),
pl.tensor.dump_tag, and pl.system.set_ffts / cacheinvalid (no effect), in
FP32/FP16/BF16/INT32 where PyPTO allows them; and the runtime errors (an
index, offset or window outside the tile, an L-shaped or gapped assemble, a
reshape whose valid data is no box, an array index out of range), each a
located error with exit 70.

The programs, runner and bit-exact comparison are run_ops_mem.py's (imported);
only the cases differ. Goldens are computed here in pure Python. Out tensors
start zeroed, so elements a store does not write read 0.

usage: run_ops_basic.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--max-failures N]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ops  # noqa: E402
import run_ops_layout as lay  # noqa: E402
import run_ops_mem as m  # noqa: E402
from run_ops_mem import Case  # noqa: E402

# the INT64 FFTS workspace, added to the shared harness tables
run_ops.NPY.update({'INT64': ('<i8', 'q', 8)})
run_ops.PL.update({'INT64': 'pl.INT64'})
run_ops.RND.update({'INT64': int})
DTS = ('FP32', 'FP16', 'BF16', 'INT32')
gen, box = lay.gen, lay.box  # 'idx:N' inputs; [R, C] with a valid box, 0 elsewhere


def read_write_cases():
    cases = []
    for dt in DTS:
        # reads: [3, 5], flat 37 (= [2, 5]), pl.read [4, 10], pl.read flat 18 (= [1, 2]); all inside valid [5, 11]
        cases.append(Case('tile.read.%s' % dt, [('x0', dt, (8, 16), 'sym')], (dt, (1, 4)),
                          ['t = pl.load(x0, [0, 0], [8, 16], valid_shape=[5, 11])',
                           'o = pl.tensor.write(o, [0, 0], pl.tile.read(t, [3, 5]))',
                           'o = pl.tensor.write(o, [0, 1], pl.tile.read(t, 37))',
                           'o = pl.tensor.write(o, [0, 2], pl.read(t, [4, 10]))',
                           'o = pl.tensor.write(o, [0, 3], pl.read(t, 18))'],
                          lambda v: [v[0][53], v[0][37], v[0][74], v[0][18]]))

        def want_w(v):
            x = list(v[0])
            x[2 * 16 + 3] = v[0][0]
            x[50] = v[0][127]
            x[6 * 16 + 1] = v[0][0]
            x[100] = v[0][5]
            return x
        # assigned and statement (in-place) forms, 2-D and flat indices
        cases.append(Case('tile.write.%s' % dt, [('x0', dt, (8, 16), 'sym')], (dt, (8, 16)),
                          ['t = pl.load(x0, [0, 0], [8, 16])', 'a = pl.tile.read(t, [0, 0])',
                           't = pl.tile.write(t, [2, 3], a)', 'pl.tile.write(t, 50, pl.tile.read(t, [7, 15]))',
                           'pl.write(t, [6, 1], a)', 't = pl.write(t, 100, pl.read(t, 5))',
                           'o = pl.store(t, [0, 0], o)'], want_w))
    # a constant of another kind is converted to the tile's dtype (round to nearest even)
    cases.append(Case('tile.write.const.FP16', [('x0', 'FP16', (2, 16), 'sym')], ('FP16', (2, 16)),
                      ['t = pl.load(x0, [0, 0], [2, 16])', 'pl.tile.write(t, [1, 1], 0.1)',
                       'o = pl.store(t, [0, 0], o)'],
                      lambda v: v[0][:17] + [0.1] + v[0][18:]))
    return cases


def slice_cases():
    cases = []
    R, C, vr, vc = 16, 24, 13, 19
    load = 't = pl.load(x0, [0, 0], [%d, %d], valid_shape=[%d, %d])' % (R, C, vr, vc)
    for dt in DTS:
        ins = [('x0', dt, (R, C), 'sym')]
        # window [8, 8] at [8, 16]: the source is valid for [13 - 8, 19 - 16] = [5, 3] of it
        for fn, vs, w in (('pl.tile.slice', '', (5, 3)), ('pl.slice', ', valid_shape=[6, 2]', (5, 2)),
                          ('pl.tile.slice', ', [4, 7]', (4, 3)),
                          ('pl.tile.slice', ', [3, 3], pad_value=pl.PadValue.max', (3, 3))):
            cases.append(Case('%s%s.%s' % (fn[3:], vs.replace(' ', ''), dt), ins, (dt, (8, 8)),
                              [load, 's = %s(t, [8, 8], [8, 16]%s)' % (fn, vs), 'o = pl.store(s, [0, 0], o)'],
                              lambda v, w=w: box(8, 8, w[0], w[1], lambda i, j, v=v: v[0][(8 + i) * C + 16 + j])))
        # drop_dims: a row of a 2-D tile stays 2-D ([1, 24]); a plane of a 3-D tile becomes [6, 8]
        cases.append(Case('tile.slice.drop_dims.2d.%s' % dt, ins, (dt, (1, C)),
                          ['t = pl.load(x0, [0, 0], [%d, %d])' % (R, C),
                           's = pl.tile.slice(t, [1, %d], [3, 0], drop_dims=[0])' % C, 'o = pl.store(s, [0, 0], o)'],
                          lambda v: v[0][3 * C:4 * C]))
        cases.append(Case('tile.slice.drop_dims.3d.%s' % dt, [('x0', dt, (4, 6, 8), 'sym')], (dt, (6, 8)),
                          ['t = pl.load(x0, [0, 0, 0], [4, 6, 8])',
                           's = pl.tile.slice(t, [1, 6, 8], [2, 0, 0], None, [0])', 'o = pl.store(s, [0, 0], o)'],
                          lambda v: v[0][96:144]))
    return cases


def reshape_cases():
    cases = []
    for dt in DTS:
        ins = [('x0', dt, (8, 16), 'sym')]
        # full: [8, 16] -> [32, 4]
        for fn in ('pl.tile.reshape', 'pl.reshape'):
            cases.append(Case('%s.full.%s' % (fn[3:], dt), ins, (dt, (32, 4)),
                              ['t = pl.load(x0, [0, 0], [8, 16])', 'r = %s(t, [32, 4])' % fn,
                               'o = pl.store(r, [0, 0], o)'], lambda v: list(v[0])))
        # a flat prefix: valid [3, 16] (48 elements) -> [16, 8] valid [6, 8]
        cases.append(Case('tile.reshape.prefix.%s' % dt, ins, (dt, (16, 8)),
                          ['t = pl.load(x0, [0, 0], [8, 16], valid_shape=[3, 16])', 'r = pl.tile.reshape(t, [16, 8])',
                           'o = pl.store(r, [0, 0], o)'], lambda v: v[0][:48] + [0] * 80))
        # [1, 16] valid [1, 10] -> [16, 1] valid [10, 1]
        cases.append(Case('tile.reshape.vector.%s' % dt, [('x0', dt, (1, 16), 'sym')], (dt, (16, 1)),
                          ['t = pl.load(x0, [0, 0], [1, 16], valid_shape=[1, 10])', 'r = pl.reshape(t, [16, 1])',
                           'o = pl.store(r, [0, 0], o)'], lambda v: v[0][:10] + [0] * 6))
        # unit axes: [4, 16] valid [3, 10] -> [4, 1, 16] valid [3, 1, 10]
        cases.append(Case('tile.reshape.unit.%s' % dt, [('x0', dt, (4, 16), 'sym')], (dt, (4, 1, 16)),
                          ['t = pl.load(x0, [0, 0], [4, 16], valid_shape=[3, 10])', 'r = pl.tile.reshape(t, [4, 1, 16])',
                           'o = pl.store(r, [0, 0, 0], o)'], lambda v: box(4, 16, 3, 10, lambda i, j: v[0][i * 16 + j])))
        # tensors: a view; the valid prefix of a slice maps the same way (fillpad pads the rest)
        for fn in ('pl.tensor.reshape', 'pl.reshape'):
            cases.append(Case('%s.%s' % (fn[3:], dt), ins, (dt, (4, 32)),
                              ['r = %s(x0, [4, 32])' % fn, 'o = pl.assemble(o, r, [0, 0])'], lambda v: list(v[0])))
            cases.append(Case('%s.prefix.%s' % (fn[3:], dt), ins, (dt, (16, 8)),
                              ['s = pl.tensor.slice(x0, [8, 16], [0, 0], valid_shape=[3, 16])',
                               'r = %s(s, [16, 8])' % fn, 'p = pl.tensor.fillpad(r)', 'o = pl.assemble(o, p, [0, 0])'],
                              lambda v: v[0][:48] + [0] * 80))
    return cases


def assemble_cases():
    cases = []

    def put(base, C, src, SC, r0, c0, rows, cols):
        out = list(base)
        for i in range(rows):
            for j in range(cols):
                out[(r0 + i) * C + c0 + j] = src[i * SC + j]
        return out
    for dt in DTS:
        ins = [('x0', dt, (8, 16), 'sym'), ('x1', dt, (4, 8), 'sym')]
        # the whole physical source (valid [2, 5] of [4, 8]) lands at [3, 6] of a fully valid target
        for fn in ('pl.tile.assemble', 'pl.assemble'):
            cases.append(Case('%s.%s' % (fn[3:], dt), ins, (dt, (8, 16)),
                              ['t = pl.load(x0, [0, 0], [8, 16])',
                               's = pl.tile.set_validshape(pl.load(x1, [0, 0], [4, 8]), 2, 5)',
                               'r = %s(t, s, [3, 6])' % fn, 'o = pl.store(r, [0, 0], o)'],
                              lambda v: put(v[0], 16, v[1], 8, 3, 6, 4, 8)))
        # growth along rows: target valid [4, 16], a [4, 16] source at [4, 0] -> valid [8, 16]
        cases.append(Case('tile.assemble.grow.%s' % dt, [('x0', dt, (8, 16), 'sym'), ('x1', dt, (4, 16), 'sym')],
                          (dt, (8, 16)),
                          ['t = pl.load(x0, [0, 0], [8, 16], valid_shape=[4, 16])', 's = pl.load(x1, [0, 0], [4, 16])',
                           'r = pl.tile.assemble(t, s, [4, 0])', 'o = pl.store(r, [0, 0], o)'],
                          lambda v: v[0][:64] + v[1]))
        # an origin-anchored source covering the target's valid [2, 3]: valid [4, 8]
        cases.append(Case('tile.assemble.cover.%s' % dt, ins, (dt, (8, 16)),
                          ['t = pl.load(x0, [0, 0], [8, 16], valid_shape=[2, 3])', 's = pl.load(x1, [0, 0], [4, 8])',
                           'r = pl.tile.assemble(t, s, [0, 0])', 'o = pl.store(r, [0, 0], o)'],
                          lambda v: box(8, 16, 4, 8, lambda i, j: v[1][i * 8 + j])))
        # a source inside the target's valid [6, 12]: the valid region stands
        cases.append(Case('tile.assemble.inside.%s' % dt, ins, (dt, (8, 16)),
                          ['t = pl.load(x0, [0, 0], [8, 16], valid_shape=[6, 12])',
                           's = pl.tile.slice(pl.load(x1, [0, 0], [4, 8]), [2, 4], [1, 2])',
                           'r = pl.tile.assemble(t, s, [1, 1])', 'o = pl.store(r, [0, 0], o)'],
                          lambda v: box(8, 16, 6, 12, lambda i, j: put(v[0], 16, v[1][10:], 8, 1, 1, 2, 4)[i * 16 + j])))
    return cases


def tensor_cases():
    cases = []
    for dt, val, lit in (('FP32', 1.5, '1.5'), ('FP16', 0.1, '0.1'), ('BF16', -3.3, '-3.3'), ('INT32', -7, '-7'),
                         ('FP32', 2.0, '2'), ('INT32', 0, '0')):
        cases.append(Case('tensor.full.%s.%s' % (dt, lit), [('x0', dt, (1, 1), 'sym')], (dt, (8, 16)),
                          ['r = pl.tensor.full([8, 16], dtype=%s, value=%s)' % (run_ops.PL[dt], lit),
                           'o = pl.assemble(o, r, [0, 0])'], lambda v, val=val: [val] * 128))
    # arrays in a kernel: zero-initialized, functional updates (both spellings), reads
    for adt in ('INT32', 'INT64', 'INT16', 'INT8', 'UINT8', 'BOOL', 'INDEX'):
        cases.append(Case('array.%s' % adt, [('x0', 'INT32', (1, 4), 'idx:100')], ('INT32', (1, 4)),
                          ['a = pl.array.create(4, pl.%s)' % adt,
                           'a = pl.array.update_element(a, 1, pl.cast(pl.tensor.read(x0, [0, 1]), pl.%s))' % adt,
                           'a[2] = pl.cast(pl.tensor.read(x0, [0, 2]), pl.%s)' % adt,
                           'b = pl.array.update_element(a, 3, pl.cast(1, pl.%s))' % adt,
                           'o = pl.tensor.write(o, [0, 0], pl.cast(pl.array.get_element(a, 0), pl.INT32))',
                           'o = pl.tensor.write(o, [0, 1], pl.cast(pl.array.get_element(a, 1), pl.INT32))',
                           'o = pl.tensor.write(o, [0, 2], pl.cast(a[2], pl.INT32))',
                           'o = pl.tensor.write(o, [0, 3], pl.cast(b[3] + a[3], pl.INT32))'],
                          lambda v, adt=adt: [0, int(v[0][1] != 0) if adt == 'BOOL' else v[0][1],
                                              int(v[0][2] != 0) if adt == 'BOOL' else v[0][2], 1]))
    # set_ffts and cacheinvalid (both forms) change nothing
    cases.append(Case('system.set_ffts.cacheinvalid', [('x0', 'FP32', (4, 8), 'sym'), ('x1', 'INT64', (256,), 'idx:5')],
                      ('FP32', (4, 8)),
                      ['pl.system.set_ffts(x1)', 'pl.system.cacheinvalid()', 'pl.system.cacheinvalid(x0, [4, 8], [0, 0])',
                       't = pl.load(x0, [0, 0], [4, 8])', 'pl.system.cacheinvalid()', 'o = pl.store(t, [0, 0], o)'],
                      lambda v: list(v[0])))
    return cases


def build_cases():
    return read_write_cases() + slice_cases() + reshape_cases() + assemble_cases() + tensor_cases()


# ---------------------------------------------------------------- whole programs

SPMD = '''import pypto.language as pl


@pl.program
class Blocks:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[pl.Tensor[[8, 2], pl.INT32]]) -> pl.Tensor[[8, 2], pl.INT32]:
        b = pl.tile.get_block_idx()
        o = pl.tensor.write(o, [b, 0], pl.cast(pl.tile.get_block_num(), pl.INT32))
        o = pl.tensor.write(o, [b, 1], pl.cast(pl.tensor.get_block_num() * 10 + b, pl.INT32))
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, o: pl.Out[pl.Tensor[[8, 2], pl.INT32]]) -> pl.Tensor[[8, 2], pl.INT32]:
        with pl.spmd(%d):
            o = self.k(o)
        return o
'''

TASKS = '''import pypto.language as pl


@pl.program
class Tasks:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 8])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[4, 8], pl.FP32], b: pl.Tensor[[4, 8], pl.FP32],
            y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        s = pl.add(pl.load(a, [0, 0], [4, 8]), pl.load(b, [0, 0], [4, 8]))
        y = pl.store(s, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 8], pl.FP32], m1: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             m2: pl.Out[pl.Tensor[[4, 8], pl.FP32]], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]],
             ids: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        x = pl.tensor.dump_tag(x)
        with pl.manual_scope():
            none = pl.system.task_invalid()
            tids = pl.array.create(2, pl.TASK_ID)
            m1, t1 = pl.submit(self.copy, x, m1, deps=[None, none])
            tids[0] = t1
            m2, t2 = pl.submit(self.copy, x, m2, deps=[none])
            tids = pl.array.update_element(tids, 1, t2)
            empty = pl.system.task_dummy(deps=[None, none])
            both = pl.system.task_dummy(deps=[tids])
            one = pl.system.task_dummy(deps=[t1, empty])
            y, t3 = pl.submit(self.add, m1, m2, y, deps=[both, one, empty])
        pl.tensor.write(ids, [0, 0], pl.cast(empty, pl.INT32))
        pl.tensor.write(ids, [0, 1], pl.cast(pl.system.task_invalid(), pl.INT32))
        pl.tensor.write(ids, [0, 2], pl.cast(both != t1, pl.INT32))
        pl.tensor.write(ids, [0, 3], pl.cast(pl.array.get_element(tids, 1) == t2, pl.INT32))
        return y
'''


def run(pldrun, prog, ios):
    return subprocess.run([pldrun, prog] + ios, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, timeout=60)


def check(label, got, want):
    if got != want:
        print('FAIL %s: got %r, want %r' % (label, got, want))
        return 1
    print('ok   %s' % label)
    return 0


def programs(pldrun, work):
    """get_block_num in pl.spmd grids of 1, 3 and 8 blocks; the TaskId ops."""
    bad = 0
    for n in (1, 3, 8):
        prog = os.path.join(work, 'spmd%d.pld' % n)
        with open(prog, 'w') as f:
            f.write(SPMD % n)
        out = os.path.join(work, 'spmd%d.npy' % n)
        p = run(pldrun, prog, ['--out', 'o=' + out])
        if p.returncode != 0:
            print('FAIL get_block_num spmd(%d): %s' % (n, p.stderr.decode(errors='replace')))
            bad += 1
            continue
        want = [v for b in range(8) for v in ((n, n * 10 + b) if b < n else (0, 0))]
        bad += check('get_block_num spmd(%d)' % n, run_ops.read_npy(out, 'INT32')[1], want)
    prog = os.path.join(work, 'tasks.pld')
    with open(prog, 'w') as f:
        f.write(TASKS)
    xs = [float(i) * 0.5 - 3 for i in range(32)]
    run_ops.write_npy(os.path.join(work, 'tx.npy'), 'FP32', (4, 8), xs)
    ios = ['--in', 'x=' + os.path.join(work, 'tx.npy'), '--out', 'y=' + os.path.join(work, 'ty.npy'),
           '--out', 'ids=' + os.path.join(work, 'tids.npy')]
    p = run(pldrun, prog, ios)
    if p.returncode != 0:
        print('FAIL task ops: %s' % p.stderr.decode(errors='replace'))
        return bad + 1
    bad += check('task_dummy / task_invalid / deps result', run_ops.read_npy(os.path.join(work, 'ty.npy'), 'FP32')[1],
                 [x + x for x in xs])
    # task_dummy over invalid deps only is invalid (-1); a real barrier is a new TaskId
    bad += check('task_dummy ids', run_ops.read_npy(os.path.join(work, 'tids.npy'), 'INT32')[1], [-1, -1, 1, 1])
    return bad


# ---------------------------------------------------------------- runtime errors

BAD_PROG = '''import pypto.language as pl


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], ix: pl.Tensor[[1, 4], pl.INT32],
          o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        n = pl.tensor.read(ix, [0, 0])
        t = pl.load(x, [0, 0], [8, 16])
        %s
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], ix: pl.Tensor[[1, 4], pl.INT32],
             o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
        o = self.k(x, ix, o)
'''

# name -> (kernel lines (n is the runtime value given), n, expected message fragment)
BAD = {
    'tile_read_row': ('v = pl.tile.read(t, [n, 0])\n        o = pl.tensor.write(o, [0, 0], v)', 8,
                      'pl.tile.read: index 8 out of range in dimension 0 (shape [8, 16])'),
    'tile_read_neg': ('v = pl.read(t, [0, n])\n        o = pl.tensor.write(o, [0, 0], v)', -1,
                      'pl.tile.read: index -1 out of range in dimension 1'),
    'tile_read_flat': ('v = pl.tile.read(t, n)\n        o = pl.tensor.write(o, [0, 0], v)', 128,
                       'pl.tile.read: flat index 128 out of range [0, 128)'),
    'tile_write_col': ('t = pl.tile.write(t, [0, n], 1.0)\n        o = pl.store(t, [0, 0], o)', 16,
                       'pl.tile.write: index 16 out of range in dimension 1'),
    'tile_write_flat': ('pl.write(t, n, 1.0)\n        o = pl.store(t, [0, 0], o)', -3,
                        'pl.tile.write: flat index -3 out of range [0, 128)'),
    'tile_slice_off': ('s = pl.tile.slice(t, [4, 8], [n, 0])\n        o = pl.store(s, [0, 0], o)', 5,
                       'pl.tile.slice: the window is outside the tile'),
    'tile_slice_neg': ('s = pl.tile.slice(t, [4, 8], [0, n])\n        o = pl.store(s, [0, 0], o)', -1,
                       'pl.tile.slice: the window is outside the tile'),
    'tile_assemble_fit': ('s = pl.tile.slice(t, [4, 8], [0, 0])\n        r = pl.tile.assemble(t, s, [0, n])\n'
                          '        o = pl.store(r, [0, 0], o)', 9,
                          'pl.tile.assemble: a [4, 8] source at offset 9 in dimension 1 does not fit in the [8, 16] target'),
    'tile_assemble_lshape': ('u = pl.tile.set_validshape(t, 4, 8)\n        s = pl.tile.slice(t, [4, 8], [0, 0])\n'
                             '        r = pl.tile.assemble(u, s, [n, 2])\n        o = pl.store(r, [0, 0], o)', 2,
                             'pl.tile.assemble grows the valid region along 2 dimensions at once'),
    'tile_assemble_gap': ('u = pl.tile.set_validshape(t, 2, 16)\n        s = pl.tile.slice(t, [2, 16], [0, 0])\n'
                          '        r = pl.tile.assemble(u, s, [n, 0])\n        o = pl.store(r, [0, 0], o)', 3,
                          'pl.tile.assemble leaves a gap in dimension 0: the write starts at 3'),
    'tile_reshape_scatter': ('u = pl.tile.set_validshape(t, n, 10)\n        r = pl.tile.reshape(u, [16, 8])\n'
                             '        o = pl.store(r, [0, 0], o)', 3,
                             'pl.tile.reshape: the valid data (dimension 1 valid for 10 of 16) is not a contiguous'),
    'tile_reshape_rows': ('u = pl.tile.set_validshape(t, n, 16)\n        r = pl.tile.reshape(u, [4, 32])\n'
                          '        o = pl.store(r, [0, 0], o)', 3,
                          'pl.tile.reshape: 48 valid elements fill no box of the new shape'),
    'tile_slice_drop': ('s = pl.tile.slice(t, [1, 16], [0, 0], valid_shape=[n, 16], drop_dims=[0])\n'
                        '        o = pl.store(s, [0, 0], o)', 0,
                        'pl.tile.slice: dropped dimension 0 has extent 1 (valid 0), not 1'),
    'array_get': ('a = pl.array.create(4, pl.INT32)\n        o = pl.tensor.write(o, [0, 0], '
                  'pl.cast(pl.array.get_element(a, n), pl.FP32))', 4, 'array index 4 out of range [0, 4)'),
    'array_update': ('a = pl.array.create(4, pl.INT32)\n        a = pl.array.update_element(a, n, 1)\n'
                     '        o = pl.tensor.write(o, [0, 0], pl.cast(a[0], pl.FP32))', -1,
                     'array index -1 out of range [0, 4)'),
}


def runtime_errors(pldrun, work):
    """Each bad program: exit 70, the file:line of the op, the message fragment."""
    bad = 0
    run_ops.write_npy(os.path.join(work, 'bx.npy'), 'FP32', (8, 16), [0.0] * 128)
    for name, (body, val, frag) in m.each(BAD.items()):
        prog = os.path.join(work, 'bad_%s.pld' % name)
        with open(prog, 'w') as f:
            f.write(BAD_PROG % body)
        run_ops.write_npy(os.path.join(work, 'bix.npy'), 'INT32', (1, 4), [val, 0, 0, 0])
        ios = ['--in', 'x=' + os.path.join(work, 'bx.npy'), '--in', 'ix=' + os.path.join(work, 'bix.npy'),
               '--out', 'o=' + os.path.join(work, 'bo.npy')]
        bad += m.expect_error(pldrun, prog, ios, [frag, 'bad_%s.pld:' % name], 'runtime error ' + name)
    return bad


def extra(pldrun, work):
    return programs(pldrun, work) + runtime_errors(pldrun, work)


def main():
    return m.main_with(gen, build_cases, extra)


if __name__ == '__main__':
    sys.exit(main())
