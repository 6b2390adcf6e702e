#!/usr/bin/env python3
"""run_dispatch.py - what PyPTO's tests/st/runtime found pldrun running wrongly around a dispatch (issue 41;
docs/interpreter.md, "Dispatch predicates, read-back inputs and external kernels"), in the printed forms
those tests ran, through pldrun at one rank without mpirun (one case at two ranks too) (CTest
`ops_dispatch`, and `ops_native_dispatch` on --backend native, which reads PLDRUN_BACKEND).

  predicated_submit  tests/ops/dispatch/predicated_submit.pld (test_predicated_dispatch.py's pl.spmd_submit
                     form in a manual scope): x_producer writes 42, clobber writes 999 under
                     predicate=(gate[0, 0] > 0) and deps=[xp_tid], consumer copies x to out with deps on the
                     clobber's TaskId. gate 0 and -5: out is 42 (the clobber is skipped, its TaskId settles);
                     gate 1: 999
  predicated_pl_submit  the same as pl.submit (no core_num)
  predicated_spmd    tests/ops/dispatch/predicated_spmd.pld (the `with pl.spmd(1, deps=, predicate=) as tid`
                     form), and its `for b in pl.spmd(1, predicate=...)` variant
  predicate_unsigned the gate declared UINT32: a check error (exit 65), as PyPTO's parser rejects it
  assemble_into_input  tests/ops/dispatch/assemble_into_input.pld (test_cross_core.py's C2V no-split form:
                     the entry's plain pl.Tensor c assembled into): --out c writes c + a @ b (exit 0), at one
                     rank and (through mpirun, when found) at two: the ranks' writes assembled
  external_kernel    tests/ops/dispatch/external_kernel.pld (test_external_kernel.py: a function with
                     external_source=, printed with an empty body): the call is refused (exit 65, located)

numpy is required (python3-numpy).

usage: run_dispatch.py --pldrun PATH [--workdir DIR]
"""
import os
import shutil
import subprocess
import sys

import numpy_runner  # noqa: E402  (tests/ops: the script's directory)

np = numpy_runner.numpy_or_exit('run_dispatch.py')

HERE = os.path.dirname(os.path.abspath(__file__))
PROGS = os.path.join(HERE, 'dispatch')
CHECKS = numpy_runner.Checks()
need = CHECKS.need
PRED = '(pl.cast(pl.tensor.read(gate, [0, 0]), pl.INDEX) > 0)'


def text_of(name):
    with open(os.path.join(PROGS, name)) as f:
        return f.read()


def pldrun(a, text, tag, inputs, outs, ranks=1):
    """Runs program `text` (written as WORKDIR/TAG.pld) with --in NAME=array and --out of `outs` (on `ranks`
    ranks through mpirun when more than one); returns (exit status, stderr, {name: array or None})."""
    prog = os.path.join(a.workdir, tag + '.pld')
    with open(prog, 'w') as f:
        f.write(text)
    cmd = ([shutil.which('mpirun'), '-n', str(ranks)] if ranks > 1 else []) + [a.pldrun, prog]
    for n, v in inputs.items():
        path = os.path.join(a.workdir, '%s_%s.npy' % (tag, n))
        np.save(path, v, allow_pickle=False)
        cmd += ['--in', '%s=%s' % (n, path)]
    paths = {n: os.path.join(a.workdir, '%s_out_%s.npy' % (tag, n)) for n in outs}
    for n, path in paths.items():
        if os.path.exists(path):
            os.remove(path)
        cmd += ['--out', '%s=%s' % (n, path)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    got = {n: np.load(path) if os.path.exists(path) else None for n, path in paths.items()}
    return p.returncode, p.stderr.decode(errors='replace'), got


def predicated(a, tag, text):
    for gate in (0, -5, 1):
        x = np.full((128, 128), -1.0, np.float32)
        ins = {'x': x, 'gate': np.full((128, 128), gate, np.int32), 'out': x}
        rc, err, got = pldrun(a, text, '%s_gate%d' % (tag, gate), ins, ['out'])
        want = 999.0 if gate > 0 else 42.0
        if need(rc == 0 and got['out'] is not None, '%s gate=%d: exit status %d, want 0: %s'
                % (tag, gate, rc, err.strip()[:600])):
            vals = np.unique(got['out'])
            if need(vals.tolist() == [want], '%s gate=%d: out holds %s, want %s (the clobber %s)'
                    % (tag, gate, vals[:4].tolist(), want, 'runs' if gate > 0 else 'is skipped')):
                print('%s gate=%d: out == %g' % (tag, gate, want))


def main():
    a = numpy_runner.args('dispatch_runs')
    sub, spmd = text_of('predicated_submit.pld'), text_of('predicated_spmd.pld')
    predicated(a, 'predicated_submit', sub)
    plain = sub.replace('pl.spmd_submit(', 'pl.submit(').replace(', core_num=1', '')
    need('pl.submit(self.clobber, x, deps=[xp_tid], predicate=' in plain, 'predicated_pl_submit: the pl.submit form')
    predicated(a, 'predicated_pl_submit', plain)
    predicated(a, 'predicated_spmd', spmd)
    with_form = 'with pl.spmd(1, deps=[xp_tid], predicate=%s) as clobber_tid:' % PRED
    for_form = 'for b in pl.spmd(1, predicate=%s):' % PRED
    need(with_form in spmd, 'predicated_spmd_for: the with form to rewrite')
    predicated(a, 'predicated_spmd_for', spmd.replace(with_form, for_form).replace('deps=[clobber_tid]', 'deps=[xp_tid]'))

    bad = sub.replace('gate: pl.Tensor[[128, 128], pl.INT32]', 'gate: pl.Tensor[[128, 128], pl.UINT32]')
    x = np.full((128, 128), -1.0, np.float32)
    rc, err, _ = pldrun(a, bad, 'predicate_unsigned', {'x': x, 'gate': np.zeros((128, 128), np.uint32), 'out': x},
                        ['out'])
    text = ('predicate_unsigned.pld:26:187: error: pl.spmd_submit predicate operand must be a signed 8/16/32/64-bit '
            'integer tensor, found pl.Tensor[[128, 128], pl.UINT32]')
    if need(rc == 65 and text in err, 'predicate_unsigned: exit status %d (want 65), %r not in %r'
            % (rc, text, err[:900])):
        print('predicate_unsigned: refused at check')

    rng = np.random.default_rng(7)
    am, bm, cm = (rng.standard_normal(s).astype(np.float32) for s in ((32, 64), (64, 512), (32, 512)))
    # at 2 ranks too (through mpirun, when there is one): every rank runs the entry; the writes are assembled
    for ranks in (1, 2) if shutil.which('mpirun') else (1,):
        tag = 'assemble_into_input_P%d' % ranks
        rc, err, got = pldrun(a, text_of('assemble_into_input.pld'), tag, {'a': am, 'b': bm, 'c': cm}, ['c'], ranks)
        if need(rc == 0, '%s: exit status %d, want 0: %s' % (tag, rc, err.strip()[:600])) and \
                need(got['c'] is not None, '%s: exit 0 but --out c wrote nothing' % tag):
            want = cm + am.astype(np.float64) @ bm.astype(np.float64)
            if need(np.allclose(got['c'], want, rtol=1e-4, atol=1e-4), '%s: c != c + a @ b (max error %g)'
                    % (tag, np.abs(got['c'] - want).max())):
                print('%s: --out c == c + a @ b' % tag)

    rc, err, got = pldrun(a, text_of('external_kernel.pld'), 'external_kernel', {}, ['out'])
    text = ("external_kernel.pld:12:45: error: pldrun cannot run 'SPMD_WRITE_AIV': it is a hand-written C++ kernel "
            '(external_source="kernels/aiv/spmd_write.cpp")')
    if need(rc == 65 and text in err and got['out'] is None, 'external_kernel: exit status %d (want 65), %r not in %r'
            % (rc, text, err[:900])):
        print('external_kernel: the call refused at check')
    return CHECKS.result('run_dispatch.py')


if __name__ == '__main__':
    sys.exit(main())
