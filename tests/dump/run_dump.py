#!/usr/bin/env python3
"""run_dump.py - pldrun --dump and inputs / outputs per dispatch (CTest dump_<case>, label dump).

The values are checked with numpy against goldens computed here from the
inputs (tests/dump/programs/dump_loop.pld: rank r's y after loop step k is
x[r] * (r + k) + 1, k = 0, 1, 2; the run's result ys[r] is x[r] * (r + 2) + 1).

Cases:
  dump        P = 2, --dispatches 2, --dump DIR: DIR/index.tsv has its header
              and one row per hit (2 ranks x 2 dispatches x (1 hit of
              `x = pl.tensor.dump_tag(x)` + 3 hits of `pl.dump_tag(y)` in the
              loop)), each row naming tag, rank, dispatch, hit, function
              per_rank, the marker's line and col, dtype FP32, shape [4, 16]
              and its file; every file's values are the golden of its hit;
              no other file in DIR; without --dump, the same run writes no
              dump (and the same output)
  dump_seq    --dump with per-dispatch inputs (--in xs=a.npy,b.npy): dispatch
              d's hits hold the values computed from the d-th file
  dump_errors --dump onto a regular file: exit 74 and the path named
  kernel      tests/dump/programs/dump_kernel.pld: the markers inside the
              InCore kernel (`x = pl.tensor.dump_tag(x)`, `pl.dump_tag(y)`),
              3 calls per dispatch, --dispatches 2, under --backend sim and
              --backend native (the compiled kernel runs the marker through
              pc_rt.dump, no op evaluated by the tree walker): the same index
              rows (function step) and values, checked against the goldens;
              without --dump the native run evaluates no op in its compiled
              kernels either (the marker costs one runtime query)
  printed     tests/dump/programs/dump_printed.pld: the forms PyPTO's printer
              gives a pl.dump_tag (it is consumed at parse time):
              attrs={"dump_vars": [x, y]} of a kernel call (x, an input, dumped
              before the launch; y, an Out, after it), dumps=[y] of pl.submit
              (after) and of a pl.at(CORE_GROUP) scope (y captured: before and
              after); stage column before_dispatch / after_completion,
              positions of the list items, values against the goldens
  seq_comma   P = 2, --in xs=a.npy,b.npy,c.npy --out ys=o0.npy,o1.npy,o2.npy
              (the count sets --dispatches 3): each o<d> is the golden of
              input d; with an explicit --dispatches 3 too; generators
              (ones, arange) in the list
  seq_dir     --in xs=DIR/ (files sorted by name, not given in order) and
              --out ys=OUT/ (OUT/ys.<d>.npy, OUT created): the same goldens
  seq_errors  a count that does not match --dispatches, an --out list of
              another length than the --in list, an empty list item, an
              input directory with no .npy: exit 64 with the message; an
              input of another shape in the sequence: exit 70 at the
              dispatch that reads it, naming the file
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

try:
    import numpy as np
except ImportError:  # a failure, never a skip
    np = None

CASES = ('dump', 'dump_seq', 'dump_errors', 'kernel', 'printed', 'seq_comma', 'seq_dir', 'seq_errors')
PROGRAM = os.path.join(HERE, 'programs', 'dump_loop.pld')
KERNEL_PROGRAM = os.path.join(HERE, 'programs', 'dump_kernel.pld')
PRINTED_PROGRAM = os.path.join(HERE, 'programs', 'dump_printed.pld')
P = 2
ROWS, COLS = 4, 16


class Fail(Exception):
    pass


def marker_pos(text, needle):
    """(line, col) of the call `needle` in the program (both from 1)."""
    for i, line in enumerate(text.splitlines(), 1):
        c = -1 if line.lstrip().startswith('#') else line.find(needle)
        if c >= 0:
            return i, c + 1
    raise Fail('no %r in the program' % needle)


def golden_step(x, r, k):
    return (x[r] * np.float32(r + k) + np.float32(1)).astype(np.float32)


def golden_out(x):
    return np.stack([golden_step(x, r, 2) for r in range(P)])


class Runner:
    def __init__(self, a):
        self.a = a
        self.env = T.mpi_env(ROOT)
        self.launch = T.mpirun_launch(a)
        shutil.rmtree(a.workdir, ignore_errors=True)
        os.makedirs(a.workdir)
        self.wd = a.workdir
        with open(PROGRAM) as f:
            self.text = f.read()
        self.rng = np.random.default_rng(42)

    def path(self, *p):
        return os.path.join(self.wd, *p)

    def inputs(self, n, names=None, where=None):
        """n random [P, ROWS, COLS] FP32 inputs saved as where/names[d]; returns (paths, arrays)."""
        paths, arrays = [], []
        for d in range(n):
            x = self.rng.uniform(-4, 4, size=(P, ROWS, COLS)).astype(np.float32)
            p = self.path(where or '', names[d] if names else 'in%d.npy' % d)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            np.save(p, x)
            paths.append(p)
            arrays.append(x)
        return paths, arrays

    def run(self, cli, want_rc=0, timeout=60, program=PROGRAM):
        rc, out, err = self.launch(P, program, cli, self.env, self.wd, timeout)
        self.last = (rc, out, err, ' '.join(['mpirun -n %d pldrun' % P, program] + cli))
        if rc != want_rc:
            raise Fail('exit %d, expected %d\n  command: %s\n  stderr: %s' % (rc, want_rc, self.last[3],
                                                                             err.strip()[-1500:]))
        return out, err

    def check_dump(self, ddir, xs_of_dispatch, ndispatch, text=None, func='per_rank', nx=1):
        """The index and every file against the goldens (x hit nx times, y 3 times per dispatch)."""
        text = text or self.text
        idx = os.path.join(ddir, 'index.tsv')
        if not os.path.isfile(idx):
            raise Fail('no %s' % idx)
        with open(idx) as f:
            lines = f.read().splitlines()
        want_head = 'tag\trank\tdispatch\thit\tstage\tfunction\tline\tcol\tblock\tdtype\tshape\tfile'
        if not lines or lines[0] != want_head:
            raise Fail('index header %r, expected %r' % (lines[:1], want_head))
        xl, xc = marker_pos(text, 'pl.tensor.dump_tag(x)')
        yl, yc = marker_pos(text, 'pl.dump_tag(y)')
        seen = {}
        for ln in lines[1:]:
            f = ln.split('\t')
            if len(f) != 12:
                raise Fail('index row %r: %d fields, expected 12' % (ln, len(f)))
            tag, rank, disp, hit, stage, _fn, line, col, block, dt, shape, name = f
            if stage != 'marker':
                raise Fail('index row %r: stage %r, expected marker' % (ln, stage))
            key = (tag, int(rank), int(disp), int(hit))
            if key in seen:
                raise Fail('index row %r twice' % (key,))
            seen[key] = name
            want_pos = (xl, xc) if tag == 'x' else (yl, yc)
            if (_fn, int(line), int(col), block, dt, shape) != (func, want_pos[0], want_pos[1], '-1', 'FP32',
                                                                 '[%d, %d]' % (ROWS, COLS)):
                raise Fail('index row %r: expected function %s at %d:%d, block -1, FP32 [%d, %d]' %
                           (ln, func, want_pos[0], want_pos[1], ROWS, COLS))
            arr = np.load(os.path.join(ddir, name))
            x = xs_of_dispatch[int(disp)]
            r, k = int(rank), int(hit)
            if tag == 'x':
                want = x[r]
            elif tag == 'y':
                want = golden_step(x, r, k)
            else:
                raise Fail('index row %r: unknown tag' % ln)
            if arr.dtype != np.float32 or arr.shape != (ROWS, COLS) or not np.array_equal(arr, want):
                raise Fail('%s (%s rank %d dispatch %d hit %d): %s %s, max |diff| %s' % (
                    name, tag, r, int(disp), k, arr.dtype, arr.shape,
                    np.max(np.abs(arr.astype(np.float64) - want)) if arr.shape == want.shape else '-'))
        want_keys = {(t, r, d, h) for r in range(P) for d in range(ndispatch)
                     for t, nh in (('x', nx), ('y', 3)) for h in range(nh)}
        if set(seen) != want_keys:
            raise Fail('index rows: missing %s, unexpected %s' % (sorted(want_keys - set(seen)),
                                                                 sorted(set(seen) - want_keys)))
        extra = set(os.listdir(ddir)) - set(seen.values()) - {'index.tsv'}
        if extra:
            raise Fail('files not in the index: %s' % sorted(extra))

    # ------------------------------------------------------------ cases

    def dump(self):
        (p,), (x,) = self.inputs(1)
        self.run(['--in', 'xs=' + p, '--dispatches', '2', '--dump', 'D', '--out', 'ys=o.npy'])
        self.check_dump(self.path('D'), [x, x], 2)
        if not np.array_equal(np.load(self.path('o.npy')), golden_out(x)):
            raise Fail('ys with --dump differs from the golden')
        self.run(['--in', 'xs=' + p, '--dispatches', '2', '--out', 'ys=o2.npy'])
        if os.path.exists(self.path('D2')) or not np.array_equal(np.load(self.path('o2.npy')), golden_out(x)):
            raise Fail('without --dump: a different output')
        if sorted(os.listdir(self.wd)) != sorted(['D', 'in0.npy', 'o.npy', 'o2.npy']):
            raise Fail('without --dump, files appeared: %s' % sorted(os.listdir(self.wd)))

    def dump_seq(self):
        ps, xs = self.inputs(2)
        self.run(['--in', 'xs=' + ','.join(ps), '--dump', 'D'])
        self.check_dump(self.path('D'), xs, 2)

    def dump_errors(self):
        (p,), _ = self.inputs(1)
        with open(self.path('afile'), 'w') as f:
            f.write('x')
        _, err = self.run(['--in', 'xs=' + p, '--dump', 'afile'], want_rc=74)
        if 'afile' not in err:
            raise Fail('--dump onto a file: the path is not named: %s' % err.strip())

    def kernel(self):
        (p,), (x,) = self.inputs(1)
        with open(KERNEL_PROGRAM) as f:
            text = f.read()
        for be in ('sim', 'native'):
            out, _ = self.run(['--in', 'xs=' + p, '--dispatches', '2', '--dump', 'K_' + be, '--out',
                               'ys=k_%s.npy' % be, '--backend', be], program=KERNEL_PROGRAM, timeout=120)
            if be == 'native' and '(0 in compiled kernels)' not in out:
                raise Fail('--backend native --dump: the markers went through the tree walker: %s' % out.strip())
            try:
                self.check_dump(self.path('K_' + be), [x, x], 2, text, 'step', 3)
            except Fail as e:
                raise Fail('--backend %s: %s' % (be, e))
            if not np.array_equal(np.load(self.path('k_%s.npy' % be)), golden_out(x)):
                raise Fail('--backend %s: ys differs from the golden' % be)
        out, _ = self.run(['--in', 'xs=' + p, '--dispatches', '2', '--backend', 'native'], program=KERNEL_PROGRAM,
                          timeout=120)
        if '(0 in compiled kernels)' not in out:
            raise Fail('without --dump, the native kernels evaluated ops: %s' % out.strip())

    def printed(self):
        (p,), (x,) = self.inputs(1)
        with open(PRINTED_PROGRAM) as f:
            text = f.read()
        self.run(['--in', 'xs=' + p, '--dispatches', '2', '--dump', 'D', '--out', 'ys=o.npy'], program=PRINTED_PROGRAM)
        want_out = np.stack([golden_step(x, r, 5) + np.float32(1) for r in range(P)])
        if not np.array_equal(np.load(self.path('o.npy')), want_out):
            raise Fail('ys differs from the golden')
        al, ac = marker_pos(text, '[x, y]}')            # attrs={"dump_vars": [x, y]}
        sl, sc = marker_pos(text, 'dumps=[y])')         # pl.submit(..., dumps=[y])  (the first one)
        pl_, pc = marker_pos(text, 'dumps=[y]):')       # with pl.at(..., dumps=[y]):
        # (tag, stage, line, col of the list item) -> (hits per dispatch, golden of rank r, hit h)
        sites = {('x', 'before_dispatch', al, ac + 1): (3, lambda r, h: x[r]),
                 ('y', 'after_completion', al, ac + 4): (3, lambda r, h: golden_step(x, r, h)),
                 ('y', 'after_completion', sl, sc + 7): (1, lambda r, h: golden_step(x, r, 5)),
                 ('y', 'before_dispatch', pl_, pc + 7): (1, lambda r, h: golden_step(x, r, 5)),
                 ('y', 'after_completion', pl_, pc + 7): (1, lambda r, h: golden_step(x, r, 5) + np.float32(1))}
        with open(self.path('D', 'index.tsv')) as f:
            lines = f.read().splitlines()
        seen = set()
        for ln in lines[1:]:
            tag, rank, disp, hit, stage, fn, line, col, block, dt, shape, name = ln.split('\t')
            key = (tag, stage, int(line), int(col))
            if key not in sites or fn != 'per_rank':
                raise Fail('unexpected index row %r (sites: %s)' % (ln, sorted(sites)))
            r, d, h = int(rank), int(disp), int(hit)
            seen.add(key + (r, d, h))
            arr = np.load(self.path('D', name))
            if not np.array_equal(arr, sites[key][1](r, h)):
                raise Fail('%s: differs from the golden of %s' % (name, key))
        want = {k + (r, d, h) for k, (nh, _) in sites.items() for r in range(P) for d in range(2) for h in range(nh)}
        if seen != want:
            raise Fail('index rows: missing %s, unexpected %s' % (sorted(want - seen)[:6], sorted(seen - want)[:6]))

    def check_outs(self, paths, xs):
        for d, (o, x) in enumerate(zip(paths, xs)):
            if not os.path.isfile(o):
                raise Fail('dispatch %d: no %s' % (d, o))
            got = np.load(o)
            if not np.array_equal(got, golden_out(x)):
                raise Fail('dispatch %d: %s differs from the golden of its input (max |diff| %g)' % (
                    d, o, np.max(np.abs(got.astype(np.float64) - golden_out(x)))))

    def seq_comma(self):
        ps, xs = self.inputs(3)
        outs = [self.path('o%d.npy' % d) for d in range(3)]
        out, _ = self.run(['--in', 'xs=' + ','.join(ps), '--out', 'ys=' + ','.join(outs)])
        self.check_outs(outs, xs)
        outs = [self.path('p%d.npy' % d) for d in range(3)]
        self.run(['--in', 'xs=' + ','.join(ps), '--out', 'ys=' + ','.join(outs), '--dispatches', '3'])
        self.check_outs(outs, xs)
        # pldrun's generators take a place in the list too
        outs = [self.path('g%d.npy' % d) for d in range(3)]
        self.run(['--in', 'xs=ones,%s,arange' % ps[1], '--out', 'ys=' + ','.join(outs)])
        n = P * ROWS * COLS
        self.check_outs(outs, [np.ones((P, ROWS, COLS), np.float32), xs[1],
                               np.arange(n, dtype=np.float32).reshape(P, ROWS, COLS)])

    def seq_dir(self):
        # written in another order than their names sort in
        names = ['b_second.npy', 'c_third.npy', 'a_first.npy']
        ps, xs = self.inputs(3, names, 'ins')
        by_name = [x for _, x in sorted(zip(names, xs))]
        self.run(['--in', 'xs=' + self.path('ins') + '/', '--out', 'ys=OUT/'])
        self.check_outs([self.path('OUT', 'ys.%d.npy' % d) for d in range(3)], by_name)
        if sorted(os.listdir(self.path('OUT'))) != ['ys.0.npy', 'ys.1.npy', 'ys.2.npy']:
            raise Fail('OUT holds %s' % sorted(os.listdir(self.path('OUT'))))

    def seq_errors(self):
        ps, xs = self.inputs(2)
        os.makedirs(self.path('empty'))
        for cli, msg in (
                (['--in', 'xs=' + ','.join(ps), '--dispatches', '3'], '--in xs: 2 files for --dispatches 3'),
                (['--in', 'xs=' + ','.join(ps), '--out', 'ys=o0.npy,o1.npy,o2.npy'],
                 '--out ys: 3 files, but --in xs has 2'),
                (['--in', 'xs=' + ps[0] + ',,' + ps[1]], '--in xs: an empty file name in the list'),
                (['--in', 'xs=empty/'], '--in xs=empty/: the directory has no .npy file')):
            _, err = self.run(cli, want_rc=64)
            if msg not in err:
                raise Fail('%s: expected %r in stderr, got: %s' % (' '.join(cli), msg, err.strip()[-800:]))
        bad = self.path('bad.npy')
        np.save(bad, np.zeros((P, ROWS, COLS + 1), np.float32))
        _, err = self.run(['--in', 'xs=%s,%s' % (ps[0], bad)], want_rc=70)
        if 'inputs of dispatch 1' not in err or 'bad.npy' not in err:
            raise Fail('a bad second input: expected "inputs of dispatch 1" and the file named, got: %s' %
                       err.strip()[-800:])


def main():
    if '--list' in sys.argv[1:]:  # the cases, one per line (tests/dump.cmake registers one test per case)
        T.require_programs('run_dump.py', [('dump', PROGRAM), ('kernel', KERNEL_PROGRAM), ('printed', PRINTED_PROGRAM)])
        print('\n'.join(CASES))
        return 0
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', required=True, choices=CASES)
    ap.add_argument('--workdir', required=True)
    a = ap.parse_args()
    if np is None:
        print('FAIL (%s): %s lacks numpy: apt-get install python3-numpy (scripts/install_deps.sh)' %
              (a.case, sys.executable))
        return 1
    r = Runner(a)
    try:
        getattr(r, a.case)()
    except Fail as e:
        print('FAIL (%s): %s' % (a.case, e))
        return 1
    print('ok: %s' % a.case)
    return 0


if __name__ == '__main__':
    sys.exit(main())
