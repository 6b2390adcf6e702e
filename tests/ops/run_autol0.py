#!/usr/bin/env python3
"""run_autol0.py - an oversized matmul (plain or biased) that PyPTO's AutoTileMatmulL0 pass computes one L0 sub-tile at a
time (issue 42; docs/interpreter.md, "On-chip memory"), through pldrun at one rank without mpirun
(CTest `ops_autol0`).

  chained         tests/ops/autol0/chained_matmul.pld, the form of PyPTO's
                  test_chained_matmul_mat_scratch: out = bf16(a @ b, rint) @ e, 256x256x256 BF16 (the
                  intermediate is 256 KiB of FP32 Acc on a2a3's 128 KiB): runs, and matches the numpy
                  golden within PyPTO's tolerance (rtol = atol = 2e-2; the data scaled as PyPTO's test
                  scales it)
  store           tests/ops/autol0/store_matmul.pld: a [256, 256] FP32 result stored once: runs, and
                  matches a @ b (FP32 accumulation: rtol 1e-5, atol 1e-4)
  scratch_too_big tests/ops/autol0/scratch_too_big.pld: the intermediate's BF16 Mat scratch (1 MiB) does
                  not fit Mat (L1): exit 70, the Acc message and the reason the matmul stays whole
  round_cast      chained_matmul.pld with mode="round": the cast cannot fold into the sub-tiles'
                  writeback, so the matmul stays whole: exit 70 and that reason
  bias_store      tests/ops/autol0/bias_store.pld, the printed form of PyPTO's biased cases
                  (test_auto_tile_matmul.py): INT8 [128, 256] @ [256, 512] + an INT32 bias loaded into
                  Mat (256 KiB of INT32 Acc) stored once: runs, and equals a @ b + bias exactly
  bias_resident   tests/ops/autol0/bias_resident.pld: BF16 [576, 64] @ [64, 64] + an FP32 bias moved
                  into the Bias table (144 KiB of Acc; the pass tiles M only): runs, matches numpy
  bias_scratch    tests/ops/autol0/bias_scratch.pld: bf16(a @ b + bias, rint) @ e with a [256, 192]
                  FP32 intermediate (192 KiB of Acc) kept in a BF16 Mat scratch: runs, matches numpy
  bias_unaligned  tests/ops/autol0/bias_unaligned.pld: N = 528 is not a multiple of the INT8 box's 32
                  columns, so the pass leaves the matmul_bias whole: exit 70, the Acc message and why

numpy is required (python3-numpy); without it the runner fails and says so.

usage: run_autol0.py --pldrun PATH [--workdir DIR]
"""
import os
import subprocess
import sys

import numpy_runner  # noqa: E402  (tests/ops: the script's directory)

np = numpy_runner.numpy_or_exit('run_autol0.py')

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, 'autol0')
CHECKS = numpy_runner.Checks()
need = CHECKS.need
bf16_bits, bf16_value = numpy_runner.bf16_bits, numpy_runner.bf16_value



def save_bf16(path, bits):
    np.save(path, bits.view('V2'), allow_pickle=False)


def pldrun(a, prog, binds, out):
    cmd = [a.pldrun, prog]
    for name, path in binds:
        cmd += ['--in', '%s=%s' % (name, path)]
    cmd += ['--out', 'out=%s' % out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stderr.decode(errors='replace')


def inputs(a, shapes):
    """BF16 inputs: a natural, the others scaled by 1/sqrt(fan-in) (as PyPTO's test does); returns the
    bindings and the float64 values."""
    binds, vals = [], {}
    for k, (name, shape, scale) in enumerate(shapes):
        rng = np.random.default_rng(1 + k)
        bits = bf16_bits(rng.standard_normal(shape).astype(np.float32) * np.float32(scale))
        path = os.path.join(a.workdir, '%s.npy' % name)
        save_bf16(path, bits)
        binds.append((name, path))
        vals[name] = bf16_value(bits).astype(np.float64)
    return binds, vals


def save(a, name, arr):
    path = os.path.join(a.workdir, '%s.npy' % name)
    np.save(path, arr, allow_pickle=False)
    return (name, path)


def run_ok(a, what, prog, binds, out):
    """Runs prog; returns the output as float64, or None (a failure recorded)."""
    if os.path.exists(out):
        os.remove(out)
    rc, err = pldrun(a, os.path.join(PROGS, prog), binds, out)
    if not need(rc == 0, '%s: exit status %d, want 0: %s' % (what, rc, err.strip()[:600])):
        return None
    return np.load(out)


def bias_cases(a, out):
    """pl.tile.matmul_bias results above Acc (L0C) that PyPTO's AutoTileMatmulL0 sub-tiles."""
    rng = np.random.default_rng(7)
    # bias_store: INT8 x INT8 + INT32, exact
    x = rng.integers(-3, 4, (128, 256)).astype(np.int8)
    y = rng.integers(-3, 4, (256, 512)).astype(np.int8)
    bias = rng.integers(-20, 21, (1, 512)).astype(np.int32)
    got = run_ok(a, 'bias_store', 'bias_store.pld',
                 [save(a, 'a', x), save(a, 'b', y), save(a, 'bias', bias)], out)
    if got is not None:
        want = x.astype(np.int32) @ y.astype(np.int32) + bias
        need(got.dtype == np.int32 and got.shape == (128, 512) and np.array_equal(got, want),
             'bias_store: out != a @ b + bias (dtype %s, shape %r)' % (got.dtype, got.shape))
        print('bias_store: equal to a @ b + bias')
    # bias_resident: BF16 operands, FP32 bias in the Bias table (M tiling only)
    binds, v = inputs(a, [('a', (576, 64), 1.0), ('b', (64, 64), 64 ** -0.5)])
    bias = rng.standard_normal((1, 64)).astype(np.float32)
    got = run_ok(a, 'bias_resident', 'bias_resident.pld', binds + [save(a, 'bias', bias)], out)
    if got is not None:
        want = v['a'] @ v['b'] + bias.astype(np.float64)
        worst = float(np.max(np.abs(got.astype(np.float64) - want)))
        need(got.shape == (576, 64) and np.allclose(got, want, rtol=1e-5, atol=1e-4),
             'bias_resident: max |out - golden| %.3g' % worst)
        print('bias_resident: max |out - golden| = %.3g' % worst)
    # bias_scratch: bf16(a @ b + bias, rint) @ e
    binds, v = inputs(a, [('a', (256, 64), 1.0), ('b', (64, 192), 64 ** -0.5), ('e', (192, 32), 192 ** -0.5)])
    bias = rng.standard_normal((1, 192)).astype(np.float32)
    got = run_ok(a, 'bias_scratch', 'bias_scratch.pld', binds + [save(a, 'bias', bias)], out)
    if got is not None:
        mid = (v['a'] @ v['b'] + bias.astype(np.float64)).astype(np.float32)
        want = bf16_value(bf16_bits(mid)).astype(np.float64) @ v['e']
        worst = float(np.max(np.abs(got.astype(np.float64) - want)))
        need(got.shape == (256, 32) and np.allclose(got, want, rtol=2e-2, atol=2e-2),
             'bias_scratch: max |out - golden| %.3g' % worst)
        print('bias_scratch: max |out - golden| = %.3g' % worst)
    # bias_unaligned: still rejected, with the reason
    x = rng.integers(-3, 4, (128, 256)).astype(np.int8)
    y = rng.integers(-3, 4, (256, 528)).astype(np.int8)
    bias = rng.integers(-20, 21, (1, 528)).astype(np.int32)
    rc, err = pldrun(a, os.path.join(PROGS, 'bias_unaligned.pld'),
                     [save(a, 'a', x), save(a, 'b', y), save(a, 'bias', bias)], out)
    need(rc == 70, 'bias_unaligned: exit status %d, want 70' % rc)
    for text in ('kernel bias_unaligned needs 270336 bytes of Acc (L0C) tiles at once',
                 "largest: 'c' (270336 bytes); PyPTO's AutoTileMatmulL0 does not sub-tile this matmul_bias: "
                 'M is not a multiple of 16, or N or K not of 32 bytes of the operand and 16'):
        need(text in err, 'bias_unaligned: %r not in %r' % (text, err[:800]))


def main():
    a = numpy_runner.args('autol0_runs')
    out = os.path.join(a.workdir, 'out.npy')

    # chained: (a @ b) @ e, 256 x 256 x 256 x 64
    prog = os.path.join(PROGS, 'chained_matmul.pld')
    binds, v = inputs(a, [('a', (256, 256), 1.0), ('b', (256, 256), 256 ** -0.5), ('e', (256, 64), 256 ** -0.5)])
    if os.path.exists(out):
        os.remove(out)
    rc, err = pldrun(a, prog, binds, out)
    if need(rc == 0, 'chained: exit status %d, want 0: %s' % (rc, err.strip()[:600])):
        got = np.load(out).astype(np.float64)
        mid = (v['a'] @ v['b']).astype(np.float32)
        want = bf16_value(bf16_bits(mid)).astype(np.float64) @ v['e']
        need(got.shape == (256, 64), 'chained: shape %r' % (got.shape,))
        worst = float(np.max(np.abs(got - want)))
        need(np.allclose(got, want, rtol=2e-2, atol=2e-2), 'chained: max |out - golden| %.3g' % worst)
        print('chained: max |out - golden| = %.3g (|golden| max %.3g)' % (worst, float(np.max(np.abs(want)))))

    # store: a [256, 128] @ b [128, 256] stored once
    prog = os.path.join(PROGS, 'store_matmul.pld')
    binds, v = inputs(a, [('a', (256, 128), 1.0), ('b', (128, 256), 128 ** -0.5)])
    if os.path.exists(out):
        os.remove(out)
    rc, err = pldrun(a, prog, binds, out)
    if need(rc == 0, 'store: exit status %d, want 0: %s' % (rc, err.strip()[:600])):
        got = np.load(out).astype(np.float64)
        want = v['a'] @ v['b']
        worst = float(np.max(np.abs(got - want)))
        need(got.shape == (256, 256) and np.allclose(got, want, rtol=1e-5, atol=1e-4),
             'store: max |out - golden| %.3g' % worst)
        print('store: max |out - golden| = %.3g' % worst)

    # still rejected: the scratch does not fit Mat (L1); a cast that cannot fold
    prog = os.path.join(PROGS, 'scratch_too_big.pld')
    binds, _ = inputs(a, [('a', (512, 16), 1.0), ('b', (16, 1024), 0.25), ('e', (1024, 16), 1 / 32)])
    rc, err = pldrun(a, prog, binds, out)
    need(rc == 70, 'scratch_too_big: exit status %d, want 70' % rc)
    for text in ('scratch_too_big.pld:24:9: error: kernel chain needs 2097152 bytes of Acc (L0C) tiles at once',
                 "largest: 'mid' (2097152 bytes); PyPTO's AutoTileMatmulL0 does not sub-tile this matmul: its "
                 'BF16/FP16 scratch does not fit Mat (L1)'):
        need(text in err, 'scratch_too_big: %r not in %r' % (text, err[:800]))
    with open(os.path.join(PROGS, 'chained_matmul.pld')) as f:
        src = f.read()
    need('mode="rint"' in src, 'round_cast: mode="rint" not in chained_matmul.pld')
    prog = os.path.join(a.workdir, 'round_cast.pld')
    with open(prog, 'w') as f:
        f.write(src.replace('mode="rint"', 'mode="round"', 1))
    binds, _ = inputs(a, [('a', (256, 256), 1.0), ('b', (256, 256), 256 ** -0.5), ('e', (256, 64), 256 ** -0.5)])
    rc, err = pldrun(a, prog, binds, out)
    need(rc == 70, 'round_cast: exit status %d, want 70' % rc)
    text = ("largest: 'mid' (262144 bytes); PyPTO's AutoTileMatmulL0 does not sub-tile this matmul: its cast is "
            "not FP32 to BF16/FP16 with mode='rint'")
    need(text in err, 'round_cast: %r not in %r' % (text, err[:800]))

    bias_cases(a, out)
    return CHECKS.result('run_autol0.py')


if __name__ == '__main__':
    sys.exit(main())
