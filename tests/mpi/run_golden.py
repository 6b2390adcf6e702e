#!/usr/bin/env python3
"""run_golden.py - tier-0 golden runs of pldrun under mpirun (CTest label `mpi`).

For every tier-0 program (programs/tutorial/hello_rank and
loop_carried_if_yield, shared/examples 01_scale_bias, 02_row_scan and
03_gemm_rowsum; DSL and printed forms; plus hello_rank with pldrun's own
`--in xs=arange` generator) and every P of the program's `# ranks:`
directive (1 2 3 4; the shared examples, which have none, at 1 2 4):

  1. writes the program's inputs as .npy files, from a deterministic generator
     (Rng, seeded by the program and P);
  2. runs `MPIEXEC -n P PLDRUN PROGRAM --in NAME=FILE.npy ... --out NAME=FILE.npy ...`
     in the environment of shared/docs/platform.md section 2;
  3. computes the expected outputs here, from the program's documented
     semantics (its `# expect:` line, or the example's source), restated in
     Python per program (golden_* below), with FP32 rounding after every
     operation (f32) where the program computes in FP32;
  4. compares: exact for integers; FP32 within 1e-5 relative (|got - want| <=
     1e-5 * |want|, so an expected 0 must be exactly 0); FP16 exactly after
     rounding the expected value to binary16.

usage:
  run_golden.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                [--case NAME] [--ranks P] [--workdir DIR] [--max-failures N] [--list]

--list prints one line per CTest test: "CASE P"; a case whose program file is
missing fails it (exit 2) as it fails a run.

Without --case / --ranks every case and P runs. Prints one line per run and a
closing line "N passed, M failed". Exit status 0 when nothing failed. After
--max-failures failed runs (default 3, 0: no limit) it stops: "stopped after N
failures: M cases not run".
"""
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pld_mpitest as T  # noqa: E402
from pld_mpitest import f32, f16  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
PROGRAMS = os.path.join(REPO, 'programs')
EXAMPLES = os.environ.get('PLD_EXAMPLES_DIR', os.path.join(REPO, 'tests', 'examples'))
RANKS = (1, 2, 4)


Tensor = T.Tensor  # shared with the other runners (pld_mpitest.py)


def rand_tensor(rng, dtype, shape, lo, hi, step=None):
    """Uniform values in [lo, hi), rounded to the dtype; with step, multiples
    of step (exact in FP16/FP32 for the small ranges used)."""
    vals = []
    for _ in range(T.numel(shape)):
        if step:
            v = rng.randint(int(lo / step), int(hi / step) - 1) * step
        else:
            v = rng.uniform(lo, hi)
        vals.append(f16(v) if dtype == 'FP16' else f32(v) if dtype == 'FP32' else int(v))
    return Tensor(dtype, shape, vals)


# ---------------------------------------------------------------- goldens
#
# Each program: inputs(rng, P) -> {name: Tensor}; golden(inputs, P) ->
# {name: Tensor} (every Out parameter; untouched elements stay 0 because pldrun
# zero-initialises Out parameters).

def hello_rank_inputs(rng, P):
    return {'xs': rand_tensor(rng, 'FP32', (P, 4, 16), -8.0, 8.0)}


def hello_rank_golden(inp, P):
    # ys[r] = xs[r] + r elementwise; ids[r][0, 0] = r
    xs = inp['xs']
    ys = Tensor('FP32', (P, 4, 16))
    ids = Tensor('INT32', (P, 1, 1))
    for r in range(P):
        for i in range(4):
            for j in range(16):
                ys.set(f32(xs.get(r, i, j) + float(r)), r, i, j)
        ids.set(r, r, 0, 0)
    return {'ys': ys, 'ids': ids}


def loop_carried_inputs(rng, P):
    return {'xs': rand_tensor(rng, 'FP32', (P, 8, 16), -4.0, 4.0)}


def loop_carried_golden(inp, P):
    # with B_b = xs[r] rows 2b..2b+1 (b = 0..3) and cut = r + 1:
    # totals[r] = B_0 + sum of B_b for 1 <= b < cut + 0.5 * sum of B_b for cut <= b <= 3
    # (accumulated in loop order, FP32 after each op);
    # tallies[r][0] = [h, h + 1, h + 2, h + 3] with h = min(r, 3)
    xs = inp['xs']
    totals = Tensor('FP32', (P, 2, 16))
    tallies = Tensor('INT32', (P, 1, 4))
    for r in range(P):
        cut = r + 1
        for i in range(2):
            for j in range(16):
                acc = xs.get(r, i, j)
                for b in range(1, 4):
                    v = xs.get(r, 2 * b + i, j)
                    acc = f32(acc + v) if b < cut else f32(acc + f32(v * 0.5))
                totals.set(acc, r, i, j)
        h = min(r, 3)
        for k in range(4):
            tallies.set(h + k, r, 0, k)
    return {'totals': totals, 'tallies': tallies}


def scale_bias_inputs(rng, P):
    # s1 = x + w stays in [1.5, 5): the final division is well conditioned
    return {'xs': rand_tensor(rng, 'FP32', (P, 8, 64), 1.0, 3.0),
            'ws': rand_tensor(rng, 'FP16', (P, 8, 64), 0.5, 2.0)}


def scale_bias_golden(inp, P):
    # affine: s1 = a + w32; s2 = s1 - r; s3 = s2 * w32; s4 = s3 / 4; s5 = s4 + 0.5;
    #         s6 = s5 * r; y = s6 / s1
    # head_rows: rows 0..4 (valid_shape [5, 64]) of ((-x + 1e-6) * 0.1) * 3; rows 5..7 untouched
    xs, ws = inp['xs'], inp['ws']
    ys = Tensor('FP32', (P, 8, 64))
    hs = Tensor('FP32', (P, 8, 64))
    for r in range(P):
        bias = float(r)
        for i in range(8):
            for j in range(64):
                a, w = xs.get(r, i, j), ws.get(r, i, j)  # FP16 -> FP32 is exact
                s1 = f32(a + w)
                s2 = f32(s1 - bias)
                s3 = f32(s2 * w)
                s4 = f32(s3 / 4.0)
                s5 = f32(s4 + 0.5)
                s6 = f32(s5 * bias)
                ys.set(f32(s6 / s1), r, i, j)
                if i < 5:
                    neg = f32(-a)
                    nudged = f32(neg + f32(1e-6))
                    tenth = f32(nudged * f32(0.1))
                    hs.set(f32(tenth * 3.0), r, i, j)
    return {'ys': ys, 'hs': hs}


def row_scan_inputs(rng, P):
    return {'xs': rand_tensor(rng, 'FP32', (P, 12, 32), -6.0, 6.0)}


def row_scan_golden(inp, P):
    # blocks B_b = rows 4b..4b+3: loop b = 1, 2: odd b adds, even b subtracts,
    # odd-block count = 1; marks[0, 0] = odd_out if odd_out > limit (1) else limit;
    # marks[k, 1] = INT32(x[4k, 0]) truncated toward zero; marks[1..2, 0] untouched;
    # then pl.range(2): j == 0 halves, j == 1 keeps: total = 0.5 * ((B0 + B1) - B2)
    xs = inp['xs']
    totals = Tensor('FP32', (P, 4, 32))
    marks = Tensor('INT32', (P, 3, 2))
    for r in range(P):
        odd = 0
        for i in range(4):
            for j in range(32):
                acc = xs.get(r, i, j)
                for b in range(1, 3):
                    v = xs.get(r, 4 * b + i, j)
                    acc = f32(acc + v) if b % 2 == 1 else f32(acc - v)
                totals.set(f32(acc * 0.5), r, i, j)
        odd = sum(1 for b in range(1, 3) if b % 2 == 1)
        limit = 1
        marks.set(odd if odd > limit else limit, r, 0, 0)
        for k in range(3):
            marks.set(int(xs.get(r, 4 * k, 0)), r, k, 1)  # int() truncates toward zero
    return {'totals': totals, 'marks': marks}


def gemm_rowsum_inputs(rng, P):
    # multiples of 1/8 in [-2, 2): products and every partial sum are exact in FP32
    return {'a_all': rand_tensor(rng, 'FP16', (P, 16, 32), -2.0, 2.0, step=0.125),
            'b': rand_tensor(rng, 'FP16', (32, 16), -2.0, 2.0, step=0.125)}


def gemm_rowsum_golden(inp, P):
    # c = a_all[r] @ b (FP32 accumulation); sums[r] = row sums of c; tops[r] = 2 * c[0:8, :]
    a, b = inp['a_all'], inp['b']
    sums = Tensor('FP32', (P, 16, 1))
    tops = Tensor('FP32', (P, 8, 16))
    for r in range(P):
        c = [[0.0] * 16 for _ in range(16)]
        for i in range(16):
            for j in range(16):
                s = 0.0
                for k in range(32):
                    s = f32(s + f32(a.get(r, i, k) * b.get(k, j)))
                c[i][j] = s
        for i in range(16):
            s = 0.0
            for j in range(16):
                s = f32(s + c[i][j])
            sums.set(s, r, i, 0)
        for i in range(8):
            for j in range(16):
                tops.set(f32(c[i][j] * 2.0), r, i, j)
    return {'sums': sums, 'tops': tops}


PROGS = {
    'hello_rank': (hello_rank_inputs, hello_rank_golden),
    'loop_carried_if_yield': (loop_carried_inputs, loop_carried_golden),
    '01_scale_bias': (scale_bias_inputs, scale_bias_golden),
    '02_row_scan': (row_scan_inputs, row_scan_golden),
    '03_gemm_rowsum': (gemm_rowsum_inputs, gemm_rowsum_golden),
}

# case name -> (program key, path)
CASES = {
    'hello_rank': ('hello_rank', os.path.join(PROGRAMS, 'tutorial', 'hello_rank.pld')),
    'hello_rank.printed': ('hello_rank', os.path.join(PROGRAMS, 'tutorial', 'hello_rank.printed.pld')),
    'loop_carried_if_yield': ('loop_carried_if_yield',
                              os.path.join(PROGRAMS, 'tutorial', 'loop_carried_if_yield.pld')),
    'loop_carried_if_yield.printed': ('loop_carried_if_yield',
                                      os.path.join(PROGRAMS, 'tutorial', 'loop_carried_if_yield.printed.pld')),
}
# hello_rank with its `# inputs: xs=arange` directive: pldrun generates xs
# itself (--in xs=arange); the golden uses element i of the flattened tensor = i.
CASES['hello_rank.arange'] = ('hello_rank', os.path.join(PROGRAMS, 'tutorial', 'hello_rank.pld'))
GENERATED = {'hello_rank.arange': {'xs': 'arange'}}

for _ex in ('01_scale_bias', '02_row_scan', '03_gemm_rowsum'):
    CASES[_ex + '.dsl'] = (_ex, os.path.join(EXAMPLES, _ex + '.dsl.py'))
    CASES[_ex + '.printed'] = (_ex, os.path.join(EXAMPLES, _ex + '.printed.pld'))


def case_ranks(case):
    """The P values of a case: the program's `# ranks:` directive (programs/),
    else RANKS (the shared examples have none)."""
    with open(CASES[case][1]) as f:
        for line in f:
            if not line.startswith('#'):
                break
            if line.startswith('# ranks:'):
                return [int(x) for x in line.split(':', 1)[1].split()]
    return list(RANKS)


# ---------------------------------------------------------------- comparison

def compare(name, got, want, limit=5):
    """Returns a list of mismatch descriptions (at most `limit`, then a count)."""
    problems = []
    if got[0] != want.dtype or tuple(got[1]) != want.shape:
        return ['%s: got %s %r, expected %s %r' % (name, got[0], got[1], want.dtype, want.shape)]
    bad = 0
    for k, (g, w) in enumerate(zip(got[2], want.values)):
        if want.dtype in ('INT32', 'INT64'):
            ok = g == w
        elif want.dtype == 'FP16':
            ok = g == f16(w)
        else:
            ok = g == w or abs(g - w) <= 1e-5 * abs(w)
        if not ok:
            bad += 1
            if len(problems) < limit:
                ix, rem = [], k
                for d in reversed(want.shape):
                    ix.append(rem % d)
                    rem //= d
                problems.append('%s[%s] = %r, expected %r' % (name, ', '.join(map(str, reversed(ix))), g, w))
    if bad > limit:
        problems.append('%s: %d mismatches in all (of %d elements)' % (name, bad, len(want.values)))
    return problems


def run_case(case, P, args, env, extra=(), launch=None):
    """Runs one case at P (extra: more pldrun arguments, e.g. --backend NAME;
    launch: how to start the ranks, launch(P, program, cli, env, cwd, timeout)
    -> (rc, stdout, stderr), default mpirun on this host); returns (problems,
    rc, stderr)."""
    key, path = CASES[case]
    make_inputs, golden = PROGS[key]
    wd = os.path.join(args.workdir, '%s.p%d' % (case, P))
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    seed = sum(ord(c) for c in key) * 10 + P  # both forms of a program get the same inputs
    inputs = make_inputs(T.Rng(seed), P)
    cli = []
    for name, t in sorted(inputs.items()):
        gen = GENERATED.get(case, {}).get(name)
        if gen == 'arange':
            t.values = [f32(float(i)) if t.dtype == 'FP32' else f16(float(i)) if t.dtype == 'FP16' else i
                        for i in range(len(t.values))]
            cli += ['--in', '%s=arange' % name]
            continue
        f = os.path.join(wd, 'in_%s.npy' % name)
        T.write_npy(f, t.dtype, t.shape, t.values)
        cli += ['--in', '%s=%s' % (name, f)]
    want = golden(inputs, P)
    for name in sorted(want):
        cli += ['--out', '%s=%s' % (name, os.path.join(wd, 'out_%s.npy' % name))]
    cli += list(extra)
    rc, out, err = (launch or T.mpirun_launch(args))(P, path, cli, env, wd, 50)
    problems = []
    if rc != 0:
        problems.append('exit status %d, expected 0' % rc)
    # Open MPI's launcher notices are not pldrun's (T.unexpected_lines); the problem names the first line
    stray = T.unexpected_lines(err, r'error|warning')
    if stray:
        problems.append('diagnostics on stderr, first: %s' % stray[0].strip())
    if rc == 0:
        for name in sorted(want):
            try:
                got = T.read_npy(os.path.join(wd, 'out_%s.npy' % name))
            except (OSError, ValueError) as e:
                problems.append('cannot read output %s: %s' % (name, e))
                continue
            problems += compare(name, got, want[name])
    if problems:
        with open(os.path.join(wd, 'stderr.txt'), 'w') as f:
            f.write(err)
        problems.append('command: %s %s %d %s %s %s' % (args.mpiexec, args.numproc_flag, P, args.pldrun, path,
                                                         ' '.join(cli)))
        if err.strip():
            problems.append('stderr:\n' + '\n'.join('    ' + l for l in err.strip().splitlines()[:40]))
    return problems, rc, err


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--ranks', type=int, action='append', help='P (repeatable); default: the case\'s ranks')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print the case names and exit')
    ap.add_argument('--outside-conformance', action='store_true',
                    help='with --list: leave out the P the conformance runner covers (2, 3, 4)')
    T.add_max_failures(ap)
    args = ap.parse_args()
    if args.list:  # "CASE P" per test; a missing program fails the listing (and the configuration)
        T.require_programs('run_golden.py', [(c, CASES[c][1]) for c in CASES])
        skip = T.CONFORMANCE_RANKS if args.outside_conformance else ()
        print('\n'.join('%s %d' % (c, P) for c in CASES for P in case_ranks(c) if P not in skip))
        return 0
    cases = args.case or list(CASES)
    for c in cases:
        if c not in CASES:
            print('run_golden.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    T.require_programs('run_golden.py', [(c, CASES[c][1]) for c in cases])
    args.pldrun = os.path.abspath(args.pldrun)
    if not args.workdir:
        args.workdir = os.path.join(os.getcwd(), 'mpi_golden')
    args.workdir = os.path.abspath(args.workdir)
    env = T.mpi_env(REPO)
    passed = failed = 0
    ff = T.FailFast(args.max_failures)
    t0 = time.time()
    for case, P in ff.each((c, P) for c in cases for P in args.ranks or case_ranks(c)):
        t1 = time.time()
        problems, _, _ = run_case(case, P, args, env)
        dt = time.time() - t1
        if problems:
            failed += 1
            ff.fail()
            print('FAIL: %s P=%d (%.2f s)' % (case, P, dt))
            for p in problems:
                print('    ' + p)
        else:
            passed += 1
            print('ok:   %s P=%d (%.2f s)' % (case, P, dt))
        sys.stdout.flush()
    print('total time %.1f s' % (time.time() - t0))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
