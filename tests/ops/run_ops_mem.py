#!/usr/bin/env python3
"""run_ops_mem.py - golden tests of the memory/layout/matmul ops (issue 11)
through pldrun at one rank, without mpirun (CTest `ops_mem`): the fillpad
family (pl.tile.fillpad / fillpad_inplace / fillpad_expand, pl.tensor.fillpad /
fillpad_expand, unified pl.fillpad / pl.fillpad_expand) with every padding
mode and literal sugar, set_validshape (tile, tensor, unified), and
matmul_acc (init_cond) and matmul_bias.

Same scheme as run_ops.py (its helpers are imported): one InCore kernel per
case, CHUNK cases per generated program, inputs from a deterministic
generator, expected outputs computed here in pure Python from the semantics of
docs/ops-numerics.md, compared bit for bit. Out tensors start zeroed, so the
elements a store does not write must read 0.

usage: run_ops_mem.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--max-failures N]
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_ops import PL, RND, FLOAT, Rng, bits, f32, gen, read_npy, sample, shp, write_npy  # noqa: E402
from run_ops import T  # noqa: E402  (pld_mpitest: FailFast, --max-failures)

# the failure limit of the run (--max-failures): shared by main()'s comparisons and the error cases of the
# runners built on this one (expect_error, each())
FF = T.FailFast(T.MAX_FAILURES)


def each(items):
    """The items of an error-case loop, until the run's failure limit is reached."""
    return FF.each(items, 'error cases not run')

INF = float('inf')
PAD = {  # spelling -> mode
    'default': 0, 'pl.PadValue.zero': 0, 'pl.PadValue.max': 1, 'pl.PadValue.min': 2,
    '0': 0, 'math.inf': 1, '-math.inf': 2,
}
INT_LIM = {'INT32': (2 ** 31 - 1, -2 ** 31)}


def pad_of(dt, mode):
    """PadValue mode in dt: floats +-inf, integers the dtype's max/min."""
    if mode == 0:
        return 0
    if dt in FLOAT:
        return INF if mode == 1 else -INF
    return INT_LIM[dt][0 if mode == 1 else 1]


class Case:
    """ins: [(name, dt, shape, kind)]; body: kernel lines (params x0.. and o);
    want(vals) -> flat expected output."""

    def __init__(self, name, ins, out, body, want):
        self.name, self.ins, self.out, self.body, self.want = name, ins, out, body, want


def numel(s):
    n = 1
    for d in s:
        n *= d
    return n


def padded(dt, x, C, vr, vc, R2, C2, mode, wr=None, wc=None):
    """[R2, C2]: x's [vr, vc] box at the top-left, pad elsewhere; only [wr, wc] written (rest 0)."""
    wr, wc = (R2, C2) if wr is None else (wr, wc)
    out = [0] * (R2 * C2)
    for i in range(wr):
        for j in range(wc):
            out[i * C2 + j] = x[i * C + j] if i < vr and j < vc else pad_of(dt, mode)
    return out


def pad_arg(sp):
    return '' if sp == 'default' else ', ' + sp


def matmul_ref(a, b, M, K, N, acc=None):
    """FP32 (INT32) accumulation over k in order, from acc (or 0)."""
    out = []
    for i in range(M):
        for j in range(N):
            s = acc[i * N + j] if acc else 0.0
            for k in range(K):
                s = f32(s + f32(a[i * K + k] * b[k * N + j]))
            out.append(s)
    return out


def build_cases():
    cases = []
    R, C, vr, vc = 16, 24, 13, 19
    for dt in ('FP32', 'FP16', 'BF16', 'INT32'):
        d = PL[dt]
        load = 't = pl.load(x0, [0, 0], [%d, %d], valid_shape=[%d, %d])' % (R, C, vr, vc)
        for sp, mode in PAD.items():
            for fn in ('pl.tile.fillpad', 'pl.fillpad', 'pl.tile.fillpad_inplace', 'pl.fillpad_inplace'):
                if fn != 'pl.tile.fillpad' and sp not in ('pl.PadValue.max', '-math.inf'):
                    continue
                cases.append(Case('%s.%s.%s' % (fn[3:], sp, dt), [('x0', dt, (R, C), 'sym')], (dt, (R, C)),
                                  [load, 'r = %s(t%s)' % (fn, pad_arg(sp)), 'o = pl.store(r, [0, 0], o)'],
                                  lambda v, dt=dt, mode=mode: padded(dt, v[0], C, vr, vc, R, C, mode)))
            if sp in ('default', 'pl.PadValue.min', 'math.inf'):
                kw = '' if sp == 'default' else ', pad_value=' + sp
                for fn in ('pl.tensor.fillpad', 'pl.fillpad'):
                    cases.append(Case('%s.%s.%s' % (fn[3:], sp, dt), [('x0', dt, (R, C), 'sym')], (dt, (R, C)),
                                      ['s = pl.tensor.slice(x0, [%d, %d], [0, 0], valid_shape=[%d, %d])' % (R, C, vr, vc),
                                       'r = %s(s%s)' % (fn, kw), 'o = pl.assemble(o, r, [0, 0])'],
                                      lambda v, dt=dt, mode=mode: padded(dt, v[0], C, vr, vc, R, C, mode)))
        # fillpad_expand: [12, 16] valid [9, 11] -> [16, 24]
        for sp in ('default', 'pl.PadValue.max', '-math.inf'):
            mode = PAD[sp]
            for fn in ('pl.tile.fillpad_expand', 'pl.fillpad_expand'):
                cases.append(Case('%s.%s.%s' % (fn[3:], sp, dt), [('x0', dt, (12, 16), 'sym')], (dt, (R, C)),
                                  ['t = pl.load(x0, [0, 0], [12, 16], valid_shape=[9, 11])',
                                   'r = %s(t, [%d, %d]%s)' % (fn, R, C, pad_arg(sp)), 'o = pl.store(r, [0, 0], o)'],
                                  lambda v, dt=dt, mode=mode: padded(dt, v[0], 16, 9, 11, R, C, mode)))
            cases.append(Case('tensor.fillpad_expand.%s.%s' % (sp, dt), [('x0', dt, (12, 16), 'sym')], (dt, (R, C)),
                              ['s = pl.tensor.slice(x0, [12, 16], [0, 0], valid_shape=[9, 11])',
                               'r = pl.tensor.fillpad_expand(s, [%d, %d]%s)' % (R, C, pad_arg(sp)),
                               'o = pl.assemble(o, r, [0, 0])'],
                              lambda v, dt=dt, mode=mode: padded(dt, v[0], 16, 9, 11, R, C, mode)))
        # set_validshape: a store writes the new valid region only; fillpad afterwards pads the rest
        for fn in ('pl.tile.set_validshape', 'pl.set_validshape'):
            cases.append(Case('%s.%s' % (fn[3:], dt), [('x0', dt, (R, C), 'sym')], (dt, (R, C)),
                              ['t = pl.load(x0, [0, 0], [%d, %d])' % (R, C), 'r = %s(t, 5, 7)' % fn,
                               'o = pl.store(r, [0, 0], o)'],
                              lambda v, dt=dt: padded(dt, v[0], C, 5, 7, R, C, 0, 5, 7)))
        cases.append(Case('tile.set_validshape_fillpad.%s' % dt, [('x0', dt, (R, C), 'sym')], (dt, (R, C)),
                          ['t = pl.load(x0, [0, 0], [%d, %d])' % (R, C),
                           'n = pl.tile.set_validshape(t, valid_rows=6, valid_cols=%d)' % C,
                           'r = pl.tile.fillpad(n, pad_value=pl.PadValue.max)', 'o = pl.store(r, [0, 0], o)'],
                          lambda v, dt=dt: padded(dt, v[0], C, 6, C, R, C, 1)))
        cases.append(Case('tensor.set_validshape_fillpad.%s' % dt, [('x0', dt, (R, C), 'sym')], (dt, (R, C)),
                          ['s = pl.tensor.set_validshape(x0, 10, 3)', 'r = pl.tensor.fillpad(s, pl.PadValue.min)',
                           'o = pl.assemble(o, r, [0, 0])'],
                          lambda v, dt=dt: padded(dt, v[0], C, 10, 3, R, C, 2)))
    # matmul_acc (init_cond) and matmul_bias: [8, 16] @ [16, 12], FP32 accumulator
    M, K, N = 8, 16, 12
    for dt in ('FP32', 'FP16', 'BF16'):
        ab = [('x0', dt, (M, K), 'sym'), ('x1', dt, (K, N), 'sym'), ('x2', dt, (M, K), 'sym'), ('x3', dt, (K, N), 'sym')]
        loads = ['a = pl.load(x0, [0, 0], [%d, %d])' % (M, K), 'b = pl.load(x1, [0, 0], [%d, %d])' % (K, N),
                 'a2 = pl.load(x2, [0, 0], [%d, %d])' % (M, K), 'b2 = pl.load(x3, [0, 0], [%d, %d])' % (K, N),
                 'c = pl.tile.matmul(a, b)']
        for ic, over in (('', False), (', init_cond=False', False), (', init_cond=True', True), (', True', True),
                         (', init_cond=(pl.tile.get_block_idx() == 0)', True),
                         (', init_cond=(pl.tile.get_block_idx() == 1)', False)):
            for fn in ('pl.tile.matmul_acc', 'pl.matmul_acc'):
                if fn == 'pl.matmul_acc' and ic not in ('', ', init_cond=True'):
                    continue
                cases.append(Case('%s%s.%s' % (fn[3:], ic.replace(' ', ''), dt), ab, ('FP32', (M, N)),
                                  loads + ['r = %s(c, a2, b2%s)' % (fn, ic), 'o = pl.store(r, [0, 0], o)'],
                                  lambda v, over=over: matmul_ref(v[2], v[3], M, K, N,
                                                                  None if over else matmul_ref(v[0], v[1], M, K, N))))
        for fn in ('pl.tile.matmul_bias', 'pl.matmul_bias'):
            def want_bias(v):
                mm = matmul_ref(v[0], v[1], M, K, N)
                return [f32(mm[i * N + j] + v[2][j]) for i in range(M) for j in range(N)]
            cases.append(Case('%s.%s' % (fn[3:], dt), [('x0', dt, (M, K), 'sym'), ('x1', dt, (K, N), 'sym'),
                                                        ('x2', 'FP32', (1, N), 'sym')], ('FP32', (M, N)),
                              ['a = pl.load(x0, [0, 0], [%d, %d])' % (M, K), 'b = pl.load(x1, [0, 0], [%d, %d])' % (K, N),
                               'bias = pl.load(x2, [0, 0], [1, %d])' % N, 'r = %s(a, b, bias)' % fn,
                               'o = pl.store(r, [0, 0], o)'], want_bias))
        # partial valid M and N: the result's valid shape is [lhs valid rows, rhs valid cols]
        def want_part(v):
            mm = matmul_ref(v[0], v[1], M, K, N)
            return [mm[i * N + j] if i < 5 and j < 7 else 0 for i in range(M) for j in range(N)]
        cases.append(Case('tile.matmul_acc.part.%s' % dt, ab[:2], ('FP32', (M, N)),
                          ['a = pl.load(x0, [0, 0], [%d, %d], valid_shape=[5, %d])' % (M, K, K),
                           'b = pl.load(x1, [0, 0], [%d, %d], valid_shape=[%d, 7])' % (K, N, K),
                           'c = pl.tile.full([%d, %d], dtype=pl.FP32, value=1.5)' % (M, N),
                           'c = pl.tile.set_validshape(c, 5, 7)',
                           'r = pl.tile.matmul_acc(c, a, b, init_cond=True)', 'o = pl.store(r, [0, 0], o)'],
                          want_part))
    return cases


def program(cases, base):
    out = ['import math', 'import pypto.language as pl', '', '', '@pl.program', 'class OpsMem:']
    params, calls = [], []
    for i, c in enumerate(cases, base):
        ps = ['%s: pl.Tensor[%s, %s]' % (n, shp(s), PL[dt]) for n, dt, s, _ in c.ins]
        odt, os_ = c.out
        out.append('    @pl.function(type=pl.FunctionType.InCore)')
        out.append('    def k%d(self, %s, o: pl.Out[pl.Tensor[%s, %s]]) -> pl.Tensor[%s, %s]:' %
                   (i, ', '.join(ps), shp(os_), PL[odt], shp(os_), PL[odt]))
        out.append('        # %s' % c.name)
        out += ['        ' + ln for ln in c.body]
        out.append('        return o')
        out.append('')
        for n, dt, s, _ in c.ins:
            params.append('%s_%d: pl.Tensor[%s, %s]' % (n, i, shp(s), PL[dt]))
        params.append('o%d: pl.Out[pl.Tensor[%s, %s]]' % (i, shp(os_), PL[odt]))
        calls.append('        o%d = self.k%d(%s, o%d)' % (i, i, ', '.join('%s_%d' % (n, i) for n, _, _, _ in c.ins), i))
    out.append('    @pl.function(type=pl.FunctionType.Orchestration)')
    out.append('    def main(self, %s):' % ', '.join(params))
    out += calls
    return '\n'.join(out) + '\n'


CHUNK = 16  # pldrun takes at most 64 --in


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--filter', default=None)
    ap.add_argument('--sample', type=int, default=1, help='run a subset: every op once and every N-th case')
    T.add_max_failures(ap)
    args = ap.parse_args()
    FF.limit = args.max_failures
    work = args.workdir or os.path.join(os.getcwd(), 'ops_mem_work')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = sample(build_cases(), args.sample)
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]
    inputs = [None] * len(cases)
    for lo in range(0, len(cases), CHUNK):
        hi = min(lo + CHUNK, len(cases))
        prog = os.path.join(work, 'ops_mem_%d.pld' % (lo // CHUNK))
        with open(prog, 'w') as f:
            f.write(program(cases[lo:hi], lo))
        cmd = [args.pldrun, prog]
        for i in range(lo, hi):
            rng = Rng(i * 7919 + 29)
            vals = []
            for n, dt, s, kind in cases[i].ins:
                v = gen(rng, dt, numel(s), kind)
                p = os.path.join(work, '%s_%d.npy' % (n, i))
                write_npy(p, dt, s, v)
                cmd += ['--in', '%s_%d=%s' % (n, i, p)]
                vals.append(v)
            inputs[i] = vals
            cmd += ['--out', 'o%d=%s' % (i, os.path.join(work, 'o%d.npy' % i))]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
        if p.returncode != 0:
            sys.stdout.write(p.stdout.decode(errors='replace') + p.stderr.decode(errors='replace'))
            print('pldrun failed (exit %d) on %s' % (p.returncode, prog))
            FF.fail()
            return 1
    passed = failed = 0
    for i, c in FF.each(enumerate(cases), 'cases not checked'):
        odt, os_ = c.out
        shape, got = read_npy(os.path.join(work, 'o%d.npy' % i), odt)
        want = [RND[odt](w) if odt in FLOAT else w for w in c.want(inputs[i])]
        bad = [k for k in range(len(want)) if bits(odt, got[k]) != bits(odt, want[k])]
        if tuple(shape) != tuple(os_) or bad:
            failed += 1
            FF.fail()
            k = bad[0] if bad else 0
            print('FAIL %-48s k%d: %d of %d elements differ; first [%d]: got %r, want %r' %
                  (c.name, i, len(bad), len(want), k, got[k], want[k]))
        else:
            passed += 1
    print('%d passed, %d failed (%d cases in %s)' % (passed, failed, len(cases), work))
    if not args.keep and not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def expect_error(pldrun, prog, ios, frags, label):
    """Runs pldrun on prog with ios (['--in', 'x=...', ...]): 0 when it exits 70 and stderr holds every fragment
    (the caller includes the program's file name: the error is located), else 1 (with a FAIL line)."""
    p = subprocess.run([pldrun, prog] + ios, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                       timeout=60)
    err = p.stderr.decode(errors='replace')
    if p.returncode != 70 or any(fr not in err for fr in frags):
        print('FAIL %s: exit %d, stderr %r' % (label, p.returncode, err))
        FF.fail()
        return 1
    print('ok   %s: %s' % (label, err.strip().splitlines()[0]))
    return 0


def main_with(gen_fn, build_fn, extra):
    """main() with another input generator and case list, then extra(pldrun, workdir) (a count of failures)."""
    global gen, build_cases
    gen, build_cases = gen_fn, build_fn
    rc = main()
    if FF.stopped:
        return 1
    args = sys.argv
    pldrun = args[args.index('--pldrun') + 1]
    work = args[args.index('--workdir') + 1] if '--workdir' in args else os.path.join(os.getcwd(), 'ops_mem_work')
    os.makedirs(work, exist_ok=True)
    return 1 if extra(pldrun, work) or rc else 0


if __name__ == '__main__':
    sys.exit(main())
