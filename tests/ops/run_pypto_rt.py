#!/usr/bin/env python3
"""run_pypto_rt.py - wrong results and a refusal that PyPTO's tests/st/runtime found in pldrun (issue 41),
each in the printed form the test ran, through pldrun at one rank without mpirun (CTest `ops_pypto_rt`, and
`ops_native_pypto_rt` on --backend native, which reads PLDRUN_BACKEND). Goldens are numpy models of PyPTO's
semantics (docs/ops-numerics.md, docs/interpreter.md):

  expand_clone_d*   tests/ops/pypto_rt/expand_clone.pld at x [8, 8, 1] (as printed), [8, 8, 8], [1, 8, 8],
                    [8, 1, 8]: pl.tensor.expand_clone(x, y) writes x broadcast into y, the kernel's Out
                    parameter (pldrun left y unwritten: all zeros)
  valid_adds        tests/ops/pypto_rt/valid_adds.pld: tensor.adds of a [16, 8] tensor of valid shape [16, 4]
                    keeps that valid shape, so assembling it into a [16, 4] tensor fits and writes src + 1
                    (pldrun refused: "writes past the end of dimension 1")
  valid_add         tests/ops/pypto_rt/valid_add.pld: the same for tensor.add of two such tensors
  lrelu_s*          tests/ops/pypto_rt/lrelu.pld at the slopes 2.0 (as printed), 0.1, -0.5: x > 0 ? x :
                    x * slope (pto-isa's TLRELU; pldrun computed max(x, slope * x), which differs for a
                    slope above 1), bit-exact: the FP32 product rounded once
  matmul_acc_window tests/ops/pypto_rt/matmul_acc_window.pld: pl.tile.matmul_acc into pl.tile.slice column
                    windows of one Acc tile writes the tile (a window shares its storage in PyPTO); pldrun's
                    slice was a copy and the tile stayed unwritten. Bit-exact against k-ordered FP32 sums;
                    on native the program is refused at load (exit 69) with the reason

numpy is required (python3-numpy).

usage: run_pypto_rt.py --pldrun PATH [--workdir DIR]
"""
import os
import sys

import numpy_runner  # noqa: E402  (tests/ops: the script's directory)

np = numpy_runner.numpy_or_exit('run_pypto_rt.py')
pldrun = numpy_runner.pldrun

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, 'pypto_rt')
CHECKS = numpy_runner.Checks()
need = CHECKS.need


def variant(a, name, old, new, tag):
    """The program file with `old` replaced by `new` (a copy in the work dir), or itself when old == new."""
    src = os.path.join(PROGS, name)
    if old == new:
        return src
    with open(src) as f:
        text = f.read()
    need(old in text, '%s: no %r to replace' % (name, old))
    path = os.path.join(a.workdir, name.replace('.pld', '_%s.pld' % tag))
    with open(path, 'w') as f:
        f.write(text.replace(old, new))
    return path


def save(a, name, v):
    path = os.path.join(a.workdir, name + '.npy')
    np.save(path, np.ascontiguousarray(v), allow_pickle=False)
    return path


def same(what, got, want):
    if not need(got.shape == want.shape, '%s: shape %r, want %r' % (what, got.shape, want.shape)):
        return
    diff = got.view(np.uint32) != want.view(np.uint32)
    if need(not diff.any(), '%s: %d of %d elements differ (first at %r: got %r, want %r)' % (
            what, int(diff.sum()), diff.size, tuple(np.argwhere(diff)[0]) if diff.any() else (),
            float(got[diff][0]) if diff.any() else 0.0, float(want[diff][0]) if diff.any() else 0.0)):
        print('%s: bit-exact (%d elements)' % (what, got.size))


def run_one(a, what, prog, ins, out_name, out_init, want):
    out = save(a, what + '_out', out_init)
    rc, err = pldrun(a, prog, ins + [(out_name, out)], [(out_name, out)])
    if need(rc == 0, '%s: exit status %d, want 0: %s' % (what, rc, err.strip()[:600])):
        same(what, np.load(out), want)


def expand_clone(a):
    rng = np.random.default_rng(1)
    for tag, shape in (('d2', (8, 8, 1)), ('dnone', (8, 8, 8)), ('d0', (1, 8, 8)), ('d1', (8, 1, 8))):
        x = rng.standard_normal(shape).astype(np.float32)
        prog = variant(a, 'expand_clone.pld', 'pl.Tensor[[8, 8, 1], pl.FP32]',
                       'pl.Tensor[[%d, %d, %d], pl.FP32]' % shape, tag)
        run_one(a, 'expand_clone_' + tag, prog, [('x', save(a, 'x_' + tag, x))], 'y',
                np.zeros((8, 8, 8), np.float32), np.broadcast_to(x, (8, 8, 8)).astype(np.float32))


def valid_shape(a):
    rng = np.random.default_rng(2)
    src = rng.standard_normal((16, 8)).astype(np.float32)
    rhs = rng.standard_normal((16, 8)).astype(np.float32)
    src[:, 4:] = rhs[:, 4:] = np.float32(-1000.0)  # padding: never written
    init = np.full((16, 4), np.float32(7.0))
    run_one(a, 'valid_adds', os.path.join(PROGS, 'valid_adds.pld'), [('src', save(a, 'vsrc', src))], 'output',
            init, (src[:, :4] + np.float32(1.0)).astype(np.float32))
    run_one(a, 'valid_add', os.path.join(PROGS, 'valid_add.pld'),
            [('lhs', save(a, 'vlhs', src)), ('rhs', save(a, 'vrhs', rhs))], 'output', init,
            (src[:, :4] + rhs[:, :4]).astype(np.float32))


def lrelu(a):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    x[0, :4] = [0.0, -0.0, 1.0, -1.0]
    for slope in ('2.0', '0.1', '-0.5'):
        prog = variant(a, 'lrelu.pld', 'pl.tile.lrelu(a_tile, 2.0)', 'pl.tile.lrelu(a_tile, %s)' % slope,
                       's' + slope)
        want = np.where(x > 0, x, (x * np.float32(slope)).astype(np.float32)).astype(np.float32)
        run_one(a, 'lrelu_s' + slope, prog, [('a', save(a, 'la', x))], 'out', np.zeros((16, 16), np.float32), want)


def mm_f32(a, b):
    """pld_k_matmul's order: k from 0 up, the product and the sum each rounded to FP32."""
    s = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        s = (s + (a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)).astype(np.float32)
    return s


def matmul_acc_window(a):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((16, 128)).astype(np.float32)
    y = rng.standard_normal((128, 128)).astype(np.float32)
    prog = os.path.join(PROGS, 'matmul_acc_window.pld')
    ins = [('a', save(a, 'mwa', x)), ('b', save(a, 'mwb', y))]
    init = np.full((16, 128), np.float32(7.0))
    if os.environ.get('PLDRUN_BACKEND') == 'native':  # refused at load, with the reason (never a wrong result)
        out = save(a, 'matmul_acc_window_out', init)
        rc, err = pldrun(a, prog, ins + [('out_c', out)], [('out_c', out)])
        text = 'pl.tile.matmul_acc into a pl.tile.slice window of an Acc tile is not compiled by the native backend'
        if need(rc == 69 and text in err, 'matmul_acc_window (native): exit status %d, want 69 with %r: %s'
                % (rc, text, err.strip()[:600])):
            print('matmul_acc_window (native): refused, exit 69')
        return
    run_one(a, 'matmul_acc_window', prog, ins, 'out_c', init, mm_f32(x, y))


def main():
    a = numpy_runner.args('pypto_rt_runs')
    expand_clone(a)
    valid_shape(a)
    lrelu(a)
    matmul_acc_window(a)
    return CHECKS.result('run_pypto_rt.py')


if __name__ == '__main__':
    sys.exit(main())
