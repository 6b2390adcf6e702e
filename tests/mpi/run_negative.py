#!/usr/bin/env python3
"""run_negative.py - negative runs of pldrun under mpirun (CTest label `mpi`):
usage errors before the run (exit 64 / 74) and runtime errors (exit 70) with
their rank-prefixed, located diagnostics.

cases (all at P = 2):
  bad_shape        --in xs=wrong.npy with shape [2, 4, 15]: exit 64, the message
                   names the given and the declared shape
  bad_dtype        --in xs=FILE.npy holding INT32: exit 64, names both dtypes
  missing_input    no --in for xs: exit 64, names the parameter and its shape
  unknown_param    --in nope=...: exit 64, names the parameter
  unreadable_file  --in xs=/nonexistent.npy: exit 74
  rank1_oob        tests/mpi/programs/oob_on_rank1.pld: a load out of bounds on
                   rank 1 only: exit 70, a stderr line starting
                   "[rank 1/2] FILE:LINE:COL: error:" at the pl.load, no error
                   from rank 0
  device5          tests/mpi/programs/device_out_of_range.pld: device=5 with 2
                   ranks: exit 70, every rank reports "device=5" at the device
                   expression
  stack_block      tests/mpi/programs/stack_deep_block.pld: a kernel on a block
                   stack recursing with a 600-deep expression per level: exit
                   70, every rank reports "stack exhausted: ... on block 0's
                   stack" in the body of count (not SIGSEGV, not the call
                   depth limit)
  warning_once     tests/mpi/programs/warn_dynamic_name.pld: a static warning
                   (NR bound to the dynamic dim "world_size") on a run that
                   succeeds: exit 0, the warning printed exactly once, by rank 0
                   without a rank prefix

usage:
  run_negative.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                  [--case NAME] [--workdir DIR] [--list]

Prints one line per case and a closing line "N passed, M failed".
"""
import argparse
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pld_mpitest as T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
HELLO = os.path.join(REPO, 'programs', 'tutorial', 'hello_rank.pld')
OOB = os.path.join(HERE, 'programs', 'oob_on_rank1.pld')
DEV = os.path.join(HERE, 'programs', 'device_out_of_range.pld')
WARN = os.path.join(HERE, 'programs', 'warn_dynamic_name.pld')
STACK = os.path.join(HERE, 'programs', 'stack_deep_block.pld')
P = 2


def arange(n):
    return [float(i) for i in range(n)]


def check(problems, cond, what):
    if not cond:
        problems.append(what)


def error_lines(err):
    return [l for l in err.splitlines() if ': error: ' in l]


def case_bad_shape(ctx):
    f = os.path.join(ctx.wd, 'wrong.npy')
    T.write_npy(f, 'FP32', (P, 4, 15), arange(P * 4 * 15))
    rc, out, err = ctx.run(HELLO, ['--in', 'xs=' + f])
    pr = []
    check(pr, rc == 64, 'exit status %d, expected 64' % rc)
    check(pr, '[%d, 4, 15] FP32' % P in err, 'the message does not name the given shape [%d, 4, 15] FP32' % P)
    check(pr, '4, 16] FP32' in err, 'the message does not name the declared shape [NR, 4, 16] FP32')
    check(pr, "'xs'" in err or 'xs' in err, 'the message does not name the parameter xs')
    return pr, err


def case_bad_dtype(ctx):
    f = os.path.join(ctx.wd, 'ints.npy')
    T.write_npy(f, 'INT32', (P, 4, 16), list(range(P * 64)))
    rc, out, err = ctx.run(HELLO, ['--in', 'xs=' + f])
    pr = []
    check(pr, rc == 64, 'exit status %d, expected 64' % rc)
    check(pr, 'INT32' in err and 'FP32' in err, 'the message does not name both dtypes (INT32, FP32)')
    return pr, err


def case_missing_input(ctx):
    rc, out, err = ctx.run(HELLO, [])
    pr = []
    check(pr, rc == 64, 'exit status %d, expected 64' % rc)
    check(pr, "'xs'" in err, "the message does not name the parameter 'xs'")
    check(pr, '4, 16] FP32' in err, 'the message does not give the expected shape')
    check(pr, not os.path.exists(os.path.join(ctx.wd, 'ys.npy')), 'an output was written')
    return pr, err


def case_unknown_param(ctx):
    rc, out, err = ctx.run(HELLO, ['--in', 'xs=arange', '--in', 'nope=zeros'])
    pr = []
    check(pr, rc == 64, 'exit status %d, expected 64' % rc)
    check(pr, "'nope'" in err, "the message does not name 'nope'")
    return pr, err


def case_unreadable_file(ctx):
    missing = os.path.join(ctx.wd, 'does_not_exist.npy')
    rc, out, err = ctx.run(HELLO, ['--in', 'xs=' + missing])
    pr = []
    check(pr, rc == 74, 'exit status %d, expected 74' % rc)
    check(pr, 'does_not_exist.npy' in err, 'the message does not name the file')
    return pr, err


def case_rank1_oob(ctx):
    line, col = T.locate(OOB, 'pl.load(x, [rank * 2')
    rc, out, err = ctx.run(OOB, ['--in', 'xs=arange', '--out', 'ys=' + os.path.join(ctx.wd, 'ys.npy')])
    pr = []
    check(pr, rc == 70, 'exit status %d, expected 70' % rc)
    want = '[rank 1/%d] %s:%d:%d: error:' % (P, OOB, line, col)
    errs = error_lines(err)
    check(pr, any(l.startswith(want) for l in err.splitlines()), 'no stderr line starts with %r' % want)
    check(pr, any('past the end of dimension 0' in l for l in errs), "no error says 'past the end of dimension 0'")
    check(pr, not any(l.startswith('[rank 0/') for l in errs), 'rank 0 reported an error')
    check(pr, all(l.startswith('[rank ') for l in errs), 'an error line lacks the rank prefix')
    check(pr, any(l.startswith('[rank 1/%d]' % P) and 'note: in grab' in l for l in err.splitlines()),
          "no '[rank 1/2] ... note: in grab' line")
    check(pr, not os.path.exists(os.path.join(ctx.wd, 'ys.npy')), 'an output was written after a runtime error')
    return pr, err


def case_device5(ctx):
    line, col = T.locate(DEV, 'device=dev')
    col += len('device=')
    rc, out, err = ctx.run(DEV, ['--in', 'xs=arange'])
    pr = []
    check(pr, rc == 70, 'exit status %d, expected 70' % rc)
    for r in range(P):
        want = '[rank %d/%d] %s:%d:%d: error:' % (r, P, DEV, line, col)
        lines = [l for l in err.splitlines() if l.startswith(want)]
        check(pr, bool(lines), 'no stderr line starts with %r' % want)
        check(pr, any('device=5' in l and '[0, %d)' % P in l for l in lines),
              'rank %d: the error does not name device=5 and [0, %d)' % (r, P))
    return pr, err


def case_stack_block(ctx):
    first, _ = T.locate(STACK, 'if n > 0:')
    last, _ = T.locate(STACK, 'return r')
    rc, out, err = ctx.run(STACK, ['--in', 'xs=arange'])
    pr = []
    check(pr, rc == 70, 'exit status %d, expected 70 (a crash is not a located error)' % rc)
    check(pr, 'Segmentation fault' not in err and 'signal' not in err.lower(), 'a rank died of a signal')
    for r in range(P):
        # located in count's body (the recursive call or the expression around
        # it: whichever check trips first)
        pat = re.compile(r'^\[rank %d/%d\] %s:(\d+):\d+: error: stack exhausted: ' % (r, P, re.escape(STACK)))
        lines = [l for l in err.splitlines() if pat.match(l)]
        check(pr, len(lines) == 1, 'rank %d: %d stack exhausted errors, expected 1' % (r, len(lines)))
        check(pr, all(first <= int(pat.match(l).group(1)) < last for l in lines),
              'rank %d: the error is not located in the body of count (lines %d-%d)' % (r, first, last))
        check(pr, any("KiB left on block 0's stack" in l and 'at call depth ' in l for l in lines),
              "rank %d: the error does not say how much is left on block 0's stack at which call depth" % r)
    check(pr, 'call depth limit' not in err, 'the call depth limit fired instead of the stack check')
    return pr, err


def case_warning_once(ctx):
    line, col = T.locate(WARN, 'pl.dynamic("world_size")')
    rc, out, err = ctx.run(WARN, ['--in', 'xs=arange'])
    pr = []
    check(pr, rc == 0, 'exit status %d, expected 0' % rc)
    warns = [l for l in err.splitlines() if ': warning: ' in l]
    want = '%s:%d:%d: warning: dynamic dimension' % (WARN, line, col)
    check(pr, len(warns) == 1, '%d warning lines, expected exactly 1 (static diagnostics are printed once)' % len(warns))
    check(pr, all(l.startswith(want) for l in warns), 'the warning line does not start with %r' % want)
    return pr, err


def case_unknown_backend(ctx):
    rc, out, err = ctx.run(HELLO, ['--in', 'xs=arange', '--backend', 'nosuch'])
    pr = []
    check(pr, rc == 69, 'exit status %d, expected 69' % rc)
    check(pr, "unknown kernel backend 'nosuch'" in err, "the message does not name the backend 'nosuch'")
    check(pr, 'available: sim' in err, 'the message does not list the available backends')
    check(pr, err.count('unknown kernel backend') == 1, 'the error is not printed once (rank 0 only)')
    return pr, err


def case_out_unwritable(ctx):
    bad = os.path.join(ctx.wd, 'no_such_dir', 'ys.npy')
    rc, out, err = ctx.run(HELLO, ['--in', 'xs=arange', '--out', 'ys=' + bad])
    pr = []
    check(pr, rc == 74, 'exit status %d, expected 74' % rc)
    check(pr, 'no_such_dir/ys.npy: cannot open for writing' in err, 'the message does not name the output file')
    check(pr, err.count('cannot open for writing') == 1, 'the error is not printed once (rank 0 only)')
    check(pr, 'interpreted ops' not in out, 'the run started although its output cannot be written')
    return pr, err


CASES = {
    'bad_shape': case_bad_shape,
    'out_unwritable': case_out_unwritable,
    'unknown_backend': case_unknown_backend,
    'bad_dtype': case_bad_dtype,
    'missing_input': case_missing_input,
    'unknown_param': case_unknown_param,
    'unreadable_file': case_unreadable_file,
    'rank1_oob': case_rank1_oob,
    'device5': case_device5,
    'warning_once': case_warning_once,
    'stack_block': case_stack_block,
}


class Ctx:
    def __init__(self, args, env, wd):
        self.args, self.env, self.wd = args, env, wd

    def run(self, program, cli):
        return T.run_pldrun(self.args.mpiexec, self.args.numproc_flag, P, self.args.pldrun, program, cli, self.env,
                            self.wd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--mpiexec', default='mpirun')
    ap.add_argument('--numproc-flag', default='-n')
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true')
    args = ap.parse_args()
    if args.list:
        print('\n'.join(CASES))
        return 0
    cases = args.case or list(CASES)
    for c in cases:
        if c not in CASES:
            print('run_negative.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    args.pldrun = os.path.abspath(args.pldrun)
    workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'mpi_negative'))
    env = T.mpi_env(REPO)
    passed = failed = 0
    t0 = time.time()
    for c in cases:
        wd = os.path.join(workdir, c)
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        t1 = time.time()
        problems, err = CASES[c](Ctx(args, env, wd))
        dt = time.time() - t1
        if problems:
            failed += 1
            print('FAIL: %s (%.2f s)' % (c, dt))
            for p in problems:
                print('    ' + p)
            print('    stderr:')
            for l in err.strip().splitlines()[:40]:
                print('      | ' + l)
        else:
            passed += 1
            print('ok:   %s (%.2f s)' % (c, dt))
        sys.stdout.flush()
    print('total time %.1f s' % (time.time() - t0))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
