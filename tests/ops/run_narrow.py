#!/usr/bin/env python3
"""run_narrow.py - the cube's FIXPIPE narrowing store (issue 41; docs/ops-numerics.md, "Accumulator
stores into BF16 / FP16"): a matmul's FP32 accumulator stored, plainly or with atomic=Add, into a
BF16 or FP16 tensor, through pldrun at one rank without mpirun (CTest `ops_narrow`, and
`ops_native_narrow` on --backend native, which reads PLDRUN_BACKEND).

  splitk_bf16 / splitk_fp16  tests/ops/narrow/splitk_bf16.pld (and its FP16 copy): the printed form of
                             PyPTO's test_atomic_add.py split-K cases: four FP32 partials atomic-added
                             into c. Bit-exact against a numpy model of the documented numerics: each
                             partial k from 0 up in FP32 (no FMA), rounded to the output dtype
                             (nearest-even), then added in it (the FP32 sum rounded once), splits in order
  acc_store_bf16 / _fp16     tests/ops/narrow/acc_store.pld: an Acc tile stored plainly (out) and
                             atomically onto the caller's contents (acc); bit-exact the same way
  vec_refused                tests/ops/narrow/vec_refused.pld: an FP32 vector-unit result assembled into
                             BF16 is still refused (exit 65) with the reason

numpy is required (python3-numpy).

usage: run_narrow.py --pldrun PATH [--workdir DIR]
"""
import os
import sys

import numpy_runner  # noqa: E402  (tests/ops: the script's directory)

pldrun = numpy_runner.pldrun
np = numpy_runner.numpy_or_exit('run_narrow.py')

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, 'narrow')
CHECKS = numpy_runner.Checks()
need = CHECKS.need
bf16_bits, bf16_value = numpy_runner.bf16_bits, numpy_runner.bf16_value



class Half:
    """One narrow dtype: rounding FP32 to it, its values as FP32, .npy files of it."""

    def __init__(self, name):
        self.name = name

    def round(self, x):  # float32 -> float32 holding the nearest-even narrow value
        x = np.asarray(x, dtype=np.float32)
        if self.name == 'BF16':
            return bf16_value(bf16_bits(x))
        return x.astype(np.float16).astype(np.float32)

    def save(self, path, v):  # float32 values exactly representable in the dtype
        if self.name == 'BF16':
            np.save(path, bf16_bits(v).view('V2'), allow_pickle=False)
        else:
            np.save(path, np.asarray(v, dtype=np.float32).astype(np.float16), allow_pickle=False)

    def load(self, path):
        a = np.load(path)
        if self.name == 'BF16':
            return bf16_value(np.ascontiguousarray(a).view(np.uint16))
        return a.astype(np.float32)


def mm_f32(a, b):
    """pld_k_matmul's order: k from 0 up, the product and the sum each rounded to FP32."""
    s = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        s = (s + (a[:, k:k + 1] * b[k:k + 1, :]).astype(np.float32)).astype(np.float32)
    return s


def program(a, name, dt):
    """The program file, with BF16 replaced by dt (a copy in the work dir) when dt is not BF16."""
    src = os.path.join(PROGS, name)
    if dt.name == 'BF16':
        return src
    with open(src) as f:
        text = f.read()
    need('pl.BF16' in text, '%s: no pl.BF16 to replace' % name)
    path = os.path.join(a.workdir, name.replace('.pld', '_%s.pld' % dt.name.lower()))
    with open(path, 'w') as f:
        f.write(text.replace('pl.BF16', 'pl.' + dt.name))
    return path


def operands(a, dt, shapes, seed):
    rng = np.random.default_rng(seed)
    vals, ins = [], []
    for name, shape in shapes:
        v = dt.round(rng.standard_normal(shape).astype(np.float32) * np.float32(0.25))
        path = os.path.join(a.workdir, '%s_%s.npy' % (name, dt.name))
        dt.save(path, v)
        vals.append(v)
        ins.append((name, path))
    return vals, ins


def same(what, got, want):
    diff = got.view(np.uint32) != want.view(np.uint32)
    if need(not diff.any(), '%s: %d of %d elements differ (first at %r: got %r, want %r)' % (
            what, int(diff.sum()), diff.size, tuple(np.argwhere(diff)[0]) if diff.any() else (),
            float(got[diff][0]) if diff.any() else 0.0, float(want[diff][0]) if diff.any() else 0.0)):
        print('%s: bit-exact (%d elements)' % (what, got.size))


def splitk(a, dt):
    (x, y), ins = operands(a, dt, [('a', (32, 256)), ('b', (256, 48))], 1)
    out = os.path.join(a.workdir, 'c_%s.npy' % dt.name)
    rc, err = pldrun(a, program(a, 'splitk_bf16.pld', dt), ins, [('c', out)])
    if not need(rc == 0, 'splitk_%s: exit status %d, want 0: %s' % (dt.name, rc, err.strip()[:600])):
        return
    c = np.zeros((32, 48), dtype=np.float32)
    for ks in range(4):
        part = mm_f32(x[:, ks * 64:(ks + 1) * 64], y[ks * 64:(ks + 1) * 64, :])
        c = dt.round(c + dt.round(part))
    got = dt.load(out)
    same('splitk_%s' % dt.name.lower(), got, c)
    # how far from the FP32 product (PyPTO's test allows 5e-2 for BF16, 2e-2 for FP16)
    print('splitk_%s: max |c - a @ b| = %.3g' % (dt.name.lower(), float(np.max(np.abs(got - x @ y)))))


def acc_store(a, dt):
    (x, y, base), ins = operands(a, dt, [('a', (32, 64)), ('b', (64, 48)), ('acc', (32, 48))], 2)
    o1, o2 = os.path.join(a.workdir, 'out_%s.npy' % dt.name), os.path.join(a.workdir, 'acc_%s.npy' % dt.name)
    rc, err = pldrun(a, program(a, 'acc_store.pld', dt), ins, [('out', o1), ('acc', o2)])
    if not need(rc == 0, 'acc_store_%s: exit status %d, want 0: %s' % (dt.name, rc, err.strip()[:600])):
        return
    prod = mm_f32(x, y)
    same('acc_store_%s out' % dt.name.lower(), dt.load(o1), dt.round(prod))
    same('acc_store_%s acc' % dt.name.lower(), dt.load(o2), dt.round(base + dt.round(prod)))


def main():
    a = numpy_runner.args('narrow_runs')
    for dt in (Half('BF16'), Half('FP16')):
        splitk(a, dt)
        acc_store(a, dt)
    xin = os.path.join(a.workdir, 'x_f32.npy')
    np.save(xin, np.ones((16, 16), dtype=np.float32), allow_pickle=False)
    rc, err = pldrun(a, os.path.join(PROGS, 'vec_refused.pld'), [('x', xin)], [('c', os.path.join(a.workdir, 'v.npy'))])
    need(rc == 65, 'vec_refused: exit status %d, want 65' % rc)
    text = ('vec_refused.pld:12:47: error: pl.tensor.assemble source dtype FP32 does not match target dtype BF16 '
            "(only a matmul's FP32 accumulator, an Acc tile, is stored narrowed into BF16 / FP16: cast it first")
    need(text in err, 'vec_refused: %r not in %r' % (text, err[:600]))
    return CHECKS.result('run_narrow.py')


if __name__ == '__main__':
    sys.exit(main())
