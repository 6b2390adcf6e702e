#!/usr/bin/env python3
"""run_ragged.py - a pl.tensor.slice window that overhangs its tensor, with a valid_shape naming the
rows that exist (issue 41; docs/interpreter.md, "A window past the end"): one program run at several
dynamic batch sizes, as PyPTO's @pl.jit runs one artifact for any batch (test_jit.py's
test_one_artifact_serves_multiple_batches), through pldrun at one rank without mpirun (CTest
`ops_ragged`, and `ops_native_ragged` on --backend native, which reads PLDRUN_BACKEND).

  dyn_batch_copy   tests/ops/ragged/dyn_batch_copy.pld at BATCH = 48, 40, 36 and 32: out equals a, and no
                   warning about loops over pld.world_size() (a CHIP entry's batch is not a rank dimension)
                   (16-row windows at 0, 16, 32; the last overhangs with 16, 8, 4 or 0 valid rows)
  past_the_end     the same at BATCH = 20: the window at 32 starts past the end of the tensor (offset 32
                   + valid extent 0 > 20), which PyPTO's contract forbids too: exit 70 with the extents
  overhang_read    tests/ops/ragged/overhang_read.pld at BATCH = 20: a window whose valid_shape reads
                   past the end is still an error (exit 70, the location and the extents)
  valid_only       tests/ops/ragged/valid_only.pld: pl.tensor.assemble of a window with 4 valid rows of
                   16 writes those 4 rows only (out starts at 7: rows 4..15 keep it)

numpy is required (python3-numpy).

usage: run_ragged.py --pldrun PATH [--workdir DIR]
"""
import os
import subprocess
import sys

import numpy_runner  # noqa: E402  (tests/ops: the script's directory)

np = numpy_runner.numpy_or_exit('run_ragged.py')

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, 'ragged')
CHECKS = numpy_runner.Checks()
need = CHECKS.need


def run(a, prog, batch, start=0.0):
    x = np.random.default_rng(batch).standard_normal((batch, 64)).astype(np.float32)
    xin = os.path.join(a.workdir, 'a_%d.npy' % batch)
    zin = os.path.join(a.workdir, 'z_%d.npy' % batch)
    out = os.path.join(a.workdir, 'out_%d.npy' % batch)
    np.save(xin, x, allow_pickle=False)
    np.save(zin, np.full_like(x, start), allow_pickle=False)
    if os.path.exists(out):
        os.remove(out)
    cmd = [a.pldrun, os.path.join(PROGS, prog), '--in', 'a=' + xin, '--in', 'out=' + zin, '--out', 'out=' + out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stderr.decode(errors='replace'), x, out


def main():
    a = numpy_runner.args('ragged_runs')
    for batch in (48, 40, 36, 32):
        rc, err, x, out = run(a, 'dyn_batch_copy.pld', batch)
        if need(rc == 0, 'dyn_batch_copy BATCH=%d: exit status %d, want 0: %s' % (batch, rc, err.strip()[:600])):
            got = np.load(out)
            # a CHIP entry's dynamic batch is not a rank dimension: no warning about pld.world_size() loops
            need('world_size' not in err, 'dyn_batch_copy BATCH=%d: a rank-count warning on a CHIP entry: %s'
                 % (batch, err.strip()[:300]))
            if need(got.shape == x.shape and np.array_equal(got, x), 'dyn_batch_copy BATCH=%d: out != a' % batch):
                print('dyn_batch_copy BATCH=%d: out == a' % batch)
    rc, err, _, _ = run(a, 'dyn_batch_copy.pld', 20)
    need(rc == 70, 'past_the_end: exit status %d, want 70' % rc)
    text = ('dyn_batch_copy.pld:18:137: error: pl.tensor.slice: window offset 32 + valid extent 0 is outside '
            'dimension 0 of [20, 64]')
    need(text in err, 'past_the_end: %r not in %r' % (text, err[:900]))
    rc, err, _, _ = run(a, 'overhang_read.pld', 20)
    need(rc == 70, 'overhang_read: exit status %d, want 70' % rc)
    text = ('overhang_read.pld:14:55: error: pl.tensor.slice: window offset 16 + extent 16 is outside dimension 0 '
            'of [20, 64]')
    need(text in err, 'overhang_read: %r not in %r' % (text, err[:900]))
    rc, err, x, out = run(a, 'valid_only.pld', 16, start=7.0)
    if need(rc == 0, 'valid_only: exit status %d, want 0: %s' % (rc, err.strip()[:600])):
        got, want = np.load(out), np.full_like(x, 7.0)
        want[:4] = x[:4]
        if need(np.array_equal(got, want), 'valid_only: rows written %r, want rows 0..3' % (
                [i for i in range(16) if not np.all(got[i] == 7.0)],)):
            print('valid_only: rows 0..3 written, 4..15 kept')
    return CHECKS.result('run_ragged.py')


if __name__ == '__main__':
    sys.exit(main())
