#!/usr/bin/env python3
"""run_cluster.py - mixed AIC+AIV kernels (issue 11, CTest `cluster`): the
cross-core pipe (tpush / tpop / tfree) between the cube and vector cores of a
cluster, events (sync_set / sync_wait), syncall, get_subblock_idx and the
core counts, run through pldrun at one rank (Open MPI's singleton mode).

Results are compared with goldens computed here in pure Python (float64,
within 1e-4: the matmuls sum in FP32); the failure cases must stop pldrun
with a located runtime error (exit 70) whose message names what went wrong.

usage: run_cluster.py --pldrun PATH [--workdir DIR] [--max-failures N]

It stops after --max-failures failed checks (default 3, 0: no limit).
"""
import argparse
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'mpi'))
import pld_mpitest as T  # noqa: E402  (FailFast, --max-failures)


def wr_npy(path, shape, vals, fmt='f', descr='<f4'):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, ', '.join(map(str, shape)) + (',' if len(shape) == 1 else ''))
    h += ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() +
                struct.pack('<%d%s' % (len(vals), fmt), *vals))


def rd_npy(path, fmt='f'):
    b = open(path, 'rb').read()
    hl = struct.unpack('<H', b[8:10])[0]
    data = b[10 + hl:]
    w = struct.calcsize(fmt)
    return list(struct.unpack('<%d%s' % (len(data) // w, fmt), data))


def matmul(a, b, m, k, n):
    return [sum(a[i * k + t] * b[t * n + j] for t in range(k)) for i in range(m) for j in range(n)]


class Runner:
    def __init__(self, pldrun, workdir, max_failures=T.MAX_FAILURES):
        self.pldrun = pldrun
        self.work = workdir
        self.failures = 0
        self.count = 0
        self.ff = T.FailFast(max_failures)

    def run(self, prog, args):
        return subprocess.run([self.pldrun, prog] + args, cwd=self.work, capture_output=True, text=True, timeout=60)

    def check(self, name, ok, detail=''):
        self.count += 1
        if not ok:
            self.failures += 1
            print('FAIL %s %s' % (name, detail))
            self.ff.fail(raise_at_limit=True)
        else:
            print('ok   %s' % name)

    def rand(self, name, shape, seed):
        rng = random.Random(seed)
        n = 1
        for d in shape:
            n *= d
        vals = [struct.unpack('<f', struct.pack('<f', rng.uniform(-1, 1)))[0] for _ in range(n)]
        wr_npy(os.path.join(self.work, name + '.npy'), shape, vals)
        return vals

    def close(self, name, got, want, tol=1e-4):
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if abs(g - w) > tol * (1 + abs(w))]
        self.check(name, len(got) == len(want) and not bad,
                   'first mismatch at %s: got %s want %s' % (bad[0], got[bad[0]], want[bad[0]]) if bad else
                   'length %d vs %d' % (len(got), len(want)))

    def expect_error(self, name, text, needles, extra=()):
        path = os.path.join(self.work, name + '.pld')
        with open(path, 'w') as f:
            f.write(text)
        r = self.run(path, ['--in', 'x=ones', '--in', 'out=zeros'] + list(extra))
        msg = r.stderr
        missing = [n for n in needles if n not in msg]
        self.check(name, r.returncode == 70 and not missing and (name + '.pld:') in msg,
                   'rc=%d missing %s\n%s' % (r.returncode, missing, msg))


# A group of one AIC kernel `cube` and one AIV kernel `vec` (attrs on the AIV
# kernel); BODY_C / BODY_V are their bodies. x: [16, 16] FP32 input, out: output.
GROUP = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV{vattrs})
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
{body_v}
        return out

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
{body_c}

    @pl.function(type=pl.FunctionType.Group)
    def grp(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        self.cube(x, out)
        out = self.vec(x, out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.grp(x, out)
        return out
'''
LOAD_V = '        t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16])\n'
LOAD_C = '        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [16, 16], target_memory=pl.Mem.Mat)\n'


def group(body_c, body_v, dual=False):
    return GROUP.format(vattrs=', attrs={"dual_aiv_dispatch": True}' if dual else '', body_c=body_c, body_v=body_v)


def write_prog(r, name, body):
    """A program of class body `body` in the work directory; returns its path."""
    path = os.path.join(r.work, name + '.pld')
    with open(path, 'w') as f:
        f.write('import pypto.language as pl\n\n\n@pl.program\nclass P:\n' + body)
    return path


def results(r):
    # multi_pipe: output = (a + b) @ (a - b), two pipe ids, dual lanes, split 0
    a = r.rand('a', [16, 16], 11)
    b = r.rand('b', [16, 16], 12)
    p = r.run(os.path.join(HERE, 'multi_pipe.pld'), ['--in', 'a=a.npy', '--in', 'b=b.npy', '--in', 'output=zeros',
                                                    '--out', 'output=mp.npy'])
    r.check('multi_pipe runs', p.returncode == 0, p.stderr)
    if p.returncode == 0:
        s = [a[i] + b[i] for i in range(256)]
        d = [a[i] - b[i] for i in range(256)]
        r.close('multi_pipe result', rd_npy(os.path.join(r.work, 'mp.npy')), matmul(s, d, 16, 16, 16))
    # split pipes both ways inside pl.spmd(4): out = ((x + 1) @ w) * 2 + bias
    x = r.rand('x', [64, 16], 21)
    w = r.rand('w', [16, 32], 22)
    bias = r.rand('bias', [16, 32], 23)
    p = r.run(os.path.join(HERE, 'split_c2v_v2c.pld'), ['--in', 'x=x.npy', '--in', 'w=w.npy', '--in', 'bias=bias.npy',
                                                       '--in', 'out=zeros', '--out', 'out=sp.npy'])
    r.check('split_c2v_v2c runs', p.returncode == 0, p.stderr)
    if p.returncode == 0:
        x1 = [v + 1 for v in x]
        prod = matmul(x1, w, 64, 16, 32)
        want = [prod[i * 32 + j] * 2 + bias[(i % 16) * 32 + j] for i in range(64) for j in range(32)]
        r.close('split_c2v_v2c result', rd_npy(os.path.join(r.work, 'sp.npy')), want)
    # odd split (3: rows, lane 0 takes the larger half) C2V, a ring of depth 1 with tfree,
    # and lane ids: out = x * (lane + 1) row-wise, rows 0-8 lane 0, rows 9-14 lane 1 (15 rows valid)
    body_c = ('        pl.aic_initialize_pipe(dir_mask=1, slot_size=1024, slot_num=1)\n' +
              '        for i in pl.range(3):\n'
              '            t: pl.Tile[[15, 16], pl.FP32, pl.Mem.Mat] = pl.load(x, [0, 0], [15, 16], target_memory=pl.Mem.Mat)\n'
              '            u = pl.add(t, pl.cast(i, pl.FP32))\n'
              '            pl.tpush_to_aiv(u, split=3)\n')
    body_v = ('        pl.aiv_initialize_pipe(dir_mask=1, slot_size=1024, slot_num=1)\n'
              '        lane = pl.tile.get_subblock_idx()\n'
              '        for i in pl.range(3):\n'
              '            h: pl.Tile[[8, 16], pl.FP32] = pl.tpop_from_aic(split=3)\n'
              '            g = pl.mul(h, pl.cast(lane + 1, pl.FP32))\n'
              '            pl.tfree_to_aic(h)\n'
              '            if i == 2:\n'
              '                out = pl.store(g, [lane * 8, 0], out)\n')
    prog = os.path.join(r.work, 'odd_split.pld')
    with open(prog, 'w') as f:
        f.write(group(body_c, body_v, dual=True))
    xs = r.rand('xo', [16, 16], 31)
    p = r.run(prog, ['--in', 'x=xo.npy', '--in', 'out=zeros', '--out', 'out=os.npy'])
    r.check('odd split runs', p.returncode == 0, p.stderr)
    if p.returncode == 0:
        got = rd_npy(os.path.join(r.work, 'os.npy'))
        want = []
        for i in range(16):
            for j in range(16):
                if i < 8:
                    want.append((xs[i * 16 + j] + 2) * 1)
                elif i < 15:
                    want.append((xs[i * 16 + j] + 2) * 2)
                else:
                    want.append(0.0)  # lane 1's half is 7 rows valid of 8: row 15 is not stored
        r.close('odd split result', got, want)
    # events: each AIV lane stores its half of x, then sync_set(4, ffts_mode=2); the AIC's wait on 4
    # needs both lanes' sets; it triples the whole tensor and sets 5; each lane waits on 5 and adds 1
    # to its half: out = x * 3 + 1 only if every event orders what it should
    body_v = ('        lane = pl.tile.get_subblock_idx()\n'
              '        h: pl.Tile[[8, 16], pl.FP32] = pl.load(x, [lane * 8, 0], [8, 16])\n'
              '        out = pl.store(h, [lane * 8, 0], out)\n'
              '        pl.system.sync_set(4, pipe=pl.PipeType.MTE3, ffts_mode=2)\n'
              '        pl.system.sync_wait(5, pipe=pl.PipeType.MTE2)\n'
              '        r: pl.Tile[[8, 16], pl.FP32] = pl.load(out, [lane * 8, 0], [8, 16])\n'
              '        r2 = pl.add(r, 1.0)\n'
              '        out = pl.store(r2, [lane * 8, 0], out)\n')
    body_c = ('        pl.system.sync_wait(4, pipe=pl.PipeType.MTE2)\n'
              '        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.load(out, [0, 0], [16, 16])\n'
              '        t3 = pl.mul(t, 3.0)\n'
              '        pl.store(t3, [0, 0], out)\n'
              '        pl.system.sync_set(5, pipe=pl.PipeType.MTE3)\n')
    prog = os.path.join(r.work, 'events.pld')
    with open(prog, 'w') as f:
        f.write(group(body_c, body_v, dual=True))
    p = r.run(prog, ['--in', 'x=xo.npy', '--in', 'out=zeros', '--out', 'out=ev.npy'])
    r.check('events run', p.returncode == 0, p.stderr)
    if p.returncode == 0:
        r.close('events result', rd_npy(os.path.join(r.work, 'ev.npy')), [v * 3 + 1 for v in xs])
    # core counts and a soft syncall across a pl.spmd grid (blocks publish, barrier, read a neighbour)
    prog = write_prog(r, 'syncall', '''    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 16], pl.FP32], ws: pl.Tensor[[16], pl.INT32], mid: pl.Out[pl.Tensor[[4, 16], pl.FP32]], out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        b = pl.tile.get_block_idx()
        t: pl.Tile[[1, 16], pl.FP32] = pl.load(x, [b, 0], [1, 16])
        mid = pl.store(t, [b, 0], mid)
        pl.system.syncall(core_type="aiv_only", mode="soft", gm_workspace=ws, used_cores=4)
        n: pl.Tile[[1, 16], pl.FP32] = pl.load(mid, [(b + 1) % 4, 0], [1, 16])
        s = pl.add(n, pl.cast(pl.system.available_aiv_count() + pl.system.available_cluster_count(), pl.FP32))
        out = pl.store(s, [b, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32], ws: pl.Tensor[[16], pl.INT32], mid: pl.Out[pl.Tensor[[4, 16], pl.FP32]], out: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        with pl.spmd(4):
            out = self.k(x, ws, mid, out)
        return out
''')
    xs4 = r.rand('x4', [4, 16], 41)
    for plat, extra in (('a2a3', 48 + 24), ('a5', 36 + 18)):
        p = r.run(prog, ['--platform', plat, '--in', 'x=x4.npy', '--in', 'ws=zeros', '--in', 'mid=zeros',
                         '--in', 'out=zeros', '--out', 'out=sy.npy'])
        r.check('soft syncall runs (%s)' % plat, p.returncode == 0, p.stderr)
        if p.returncode == 0:
            # without the barrier, block b would read row b+1 before block b+1 wrote it
            want = [xs4[((i + 1) % 4) * 16 + j] + extra for i in range(4) for j in range(16)]
            r.close('soft syncall result (%s)' % plat, rd_npy(os.path.join(r.work, 'sy.npy')), want)


def results2(r):
    # pl.split_aiv region crossings: aiv_shard (ceil half per lane, lane 1's valid rest), aic_gather
    # (the halves rejoined); x is [15, 16] in a [16, 16] tile
    x = r.rand('x15', [15, 16], 51)
    prog = write_prog(r, 'shard', '''    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[15, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16], valid_shape=[15, 16])
        for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            h = pl.aiv_shard(t)
            h2 = pl.mul(h, pl.cast(aiv_id + 2, pl.FP32))
            out = pl.store(h2, [aiv_id * 8, 0], out)
            g = pl.aic_gather(h2)
            g2 = pl.add(g, 1.0)
            out2 = pl.store(g2, [0, 0], out2)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[15, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], out2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.k(x, out, out2)
        return out
''')
    p = r.run(prog, ['--in', 'x=x15.npy', '--in', 'out=zeros', '--in', 'out2=zeros', '--out', 'out=sh1.npy',
                     '--out', 'out2=sh2.npy'])
    r.check('split_aiv shard/gather runs', p.returncode == 0, p.stderr)
    if p.returncode == 0:
        want = [x[i * 16 + j] * (2 if i < 8 else 3) if i < 15 else 0.0 for i in range(16) for j in range(16)]
        r.close('aiv_shard result', rd_npy(os.path.join(r.work, 'sh1.npy')), want)
        r.close('aic_gather result', rd_npy(os.path.join(r.work, 'sh2.npy')),
                [v + 1 if i < 15 * 16 else 0.0 for i, v in enumerate(want)])
    # a 'mix' soft syncall in a mixed kernel of 2 blocks: 2 x (1 AIC + 2 AIV) = 6 participants
    # (PyPTO's SPMDSyncAllMixSoftProgram): out = (a + 1) @ b + 1
    prog = write_prog(r, 'mix_syncall', '''    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32], ws: pl.Tensor[[16], pl.INT32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        for ob in pl.spmd(2, name_hint="mix_syncall"):
            m0 = ob * 16
            a_slice = pl.slice(a, [16, 64], [m0, 0])
            a_add = pl.add(a_slice, 1.0)
            pl.system.syncall(mode="soft", core_type="mix", gm_workspace=ws, used_cores=6)
            c_tile = pl.matmul(a_add, b)
            c_vec = pl.add(c_tile, 1.0)
            out = pl.assemble(out, c_vec, [m0, 0])
        return out
''')
    a = r.rand('am', [32, 64], 61)
    b = r.rand('bm', [64, 32], 62)
    p = r.run(prog, ['--in', 'a=am.npy', '--in', 'b=bm.npy', '--in', 'ws=zeros', '--in', 'out=zeros', '--out', 'out=mx.npy'])
    r.check('mix soft syncall (mixed kernel) runs', p.returncode == 0, p.stderr)
    if p.returncode == 0:
        prod = matmul([v + 1 for v in a], b, 32, 64, 32)
        r.close('mix soft syncall (mixed kernel) result', rd_npy(os.path.join(r.work, 'mx.npy')), [v + 1 for v in prod])
    # a 'mix' syncall inside Groups launched by pl.spmd(2): each AIV lane publishes a row, the
    # barrier spans both clusters, then each AIC reads the other cluster's rows
    text = group('        b = pl.tile.get_block_idx()\n'
                 '        pl.system.syncall(mode="soft", core_type="mix", gm_workspace=ws, used_cores={used})\n'
                 '        t: pl.Tile[[2, 16], pl.FP32, pl.Mem.Vec] = pl.load(mid, [((b + 1) % 2) * 2, 0], [2, 16])\n'
                 '        pl.store(t, [b * 2, 0], out)\n',
                 '        b = pl.tile.get_block_idx()\n'
                 '        lane = pl.tile.get_subblock_idx()\n'
                 '        t: pl.Tile[[1, 16], pl.FP32] = pl.load(x, [b * 2 + lane, 0], [1, 16])\n'
                 '        mid = pl.store(t, [b * 2 + lane, 0], mid)\n'
                 '        pl.system.syncall(mode="soft", core_type="mix", gm_workspace=ws, used_cores={used})\n',
                 dual=True)
    text = text.replace('x: pl.Tensor[[16, 16], pl.FP32], out:',
                        'x: pl.Tensor[[16, 16], pl.FP32], mid: pl.Out[pl.Tensor[[16, 16], pl.FP32]], '
                        'ws: pl.Tensor[[16], pl.INT32], out:')
    text = text.replace('self.cube(x, out)', 'self.cube(x, mid, ws, out)').replace('self.vec(x, out)',
                                                                                 'self.vec(x, mid, ws, out)')
    text = text.replace('out = self.grp(x, out)', 'with pl.spmd(2):\n            out = self.grp(x, mid, ws, out)')
    prog = os.path.join(r.work, 'group_syncall.pld')
    with open(prog, 'w') as f:
        f.write(text.replace('{used}', '6'))
    xs = r.rand('xg', [16, 16], 71)
    args = ['--in', 'x=xg.npy', '--in', 'mid=zeros', '--in', 'ws=zeros', '--in', 'out=zeros', '--out', 'out=gs.npy']
    p = r.run(prog, args)
    r.check('mix syncall across groups runs', p.returncode == 0, p.stderr)
    if p.returncode == 0:
        want = [0.0] * 256
        for blk in range(2):
            for i in range(2):
                for j in range(16):
                    want[(blk * 2 + i) * 16 + j] = xs[(((blk + 1) % 2) * 2 + i) * 16 + j]
        r.close('mix syncall across groups result', rd_npy(os.path.join(r.work, 'gs.npy')), want)
    r.expect_error('group_syncall_used_cores', text.replace('{used}', '4'),
                   ["soft syncall(core_type='mix') with used_cores=4, but the launch has 6 participants"],
                   ['--in', 'mid=zeros', '--in', 'ws=zeros'])


def failures(r):
    push_c = '        pl.tpush_to_aiv(t, split=0)\n'
    r.expect_error('pop_wrong_id', group(LOAD_C + '        pl.tpush_to_aiv(t, split=0, id=1)\n',
                                         '        p: pl.Tile[[16, 16], pl.FP32] = pl.tpop_from_aic(id=0)\n'),
                   ['cross-core deadlock', 'AIC cube', 'returned', 'waits for a tile on C2V (AIC -> AIV) pipe id 0', 'tiles left: C2V (AIC -> AIV) id 1: 1 queued'])
    with open(os.path.join(HERE, 'deadlock_no_tfree.pld')) as f:
        text = f.read()
    r.expect_error('deadlock_no_tfree', text, ['cross-core deadlock', 'a tfree missing?', 'ring depth 2'])
    r.expect_error('tfree_without_pop', group(LOAD_C + push_c,
                                              LOAD_V + '        pl.tfree_to_aic(t)\n'),
                   ['pl.system.tfree_to_aic(id=0) frees a slot', 'no tile popped from it'])
    r.expect_error('split_one_lane', group(LOAD_C + '        pl.tpush_to_aiv(t, split=1)\n', '        pass\n'),
                   ['divides the tile between two AIV lanes', 'dual_aiv_dispatch'])
    r.expect_error('split_odd_extent', group(LOAD_C + '        pl.tpush_to_aiv(t, split=3)\n', '        pass\n',
                                             dual=True),
                   ['split=3) needs an odd extent along axis 0, found 16'])
    r.expect_error('pop_declared_shape', group(LOAD_C + push_c,
                                               '        p: pl.Tile[[8, 16], pl.FP32] = pl.tpop_from_aic()\n'),
                   ['received a [16, 16] FP32 tile, but it declares [8, 16] FP32'])
    r.expect_error('sync_wait_never_set', group('        pass\n', '        pl.system.sync_wait(3, pipe=pl.PipeType.MTE2)\n'),
                   ['cross-core deadlock', 'waits for event 3: 0 sets, 1 needed'])
    r.expect_error('push_outside_group', '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
''' + LOAD_V + '''        pl.tpush_to_aic(t, split=0)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.vec(x, out)
        return out
''', ['pl.system.tpush_to_aic needs its peer core', 'pl.FunctionType.Group'])
    spmd = '''import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], ws: pl.Tensor[[16], pl.INT32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], ws: pl.Tensor[[16], pl.INT32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.spmd(4):
            out = self.k(x, ws, out)
        return out
'''
    r.expect_error('syncall_hard_partial', spmd.format(body='        pl.system.syncall(core_type="aiv_only")'),
                   ['hard syncall(core_type=\'aiv_only\') waits for all 48 AIV cores of platform a2a3', 'has 4 blocks'], ['--in', 'ws=zeros'])
    r.expect_error('syncall_block_returns', spmd.format(
        body='        if pl.tile.get_block_idx() < 3:\n'
             '            pl.system.syncall(core_type="aiv_only", mode="soft", gm_workspace=ws, used_cores=4)'),
        ['syncall can never complete: 3 of the 4 blocks arrived'], ['--in', 'ws=zeros'])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--workdir', default='cluster_work')
    T.add_max_failures(ap)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    r = Runner(os.path.abspath(a.pldrun), os.path.abspath(a.workdir), a.max_failures)
    groups = [results, results2, failures]
    for i, g in enumerate(groups):
        try:
            g(r)
        except T.StopRun:
            r.ff.stop(None, 'the rest of %s() and %d more groups of checks not run' % (g.__name__, len(groups) - i - 1))
            return 1
    print('%d of %d checks passed' % (r.count - r.failures, r.count))
    return 1 if r.failures else 0


if __name__ == '__main__':
    sys.exit(main())
