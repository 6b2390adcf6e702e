#!/usr/bin/env python3
"""run_sweep.py - `pldrun --schedule-seeds A-B`, the schedule sweep (CTest
label `schedule`; `mpi` for P > 1; tests/schedule.cmake; docs/debugging.md,
"Schedule sweeps").

Cases:

  diverge (P = 1)  tests/schedule/block_order.pld (a block reads `mid` with
      no synchronisation with the block that stores it: ys = xs or ys = 0 by
      the schedule). `--schedule-seeds 0-15` must stop at a seed with exit 1,
      name the differing output ("N elements differ, the first at flat index
      I: NOW (was THEN)") and print a replay command. The --out file is seed
      0's (equal, bit for bit, to a plain --schedule-seed 0 run). The replay
      command, run as printed (its launcher swapped for this host's), must
      reproduce the differing output: N elements differ from the sweep's
      --out file, the first at I, with the values NOW and THEN.
  hang (P = 2)  tests/schedule/flag_put.pld (a put announced by an atomic add
      instead of a notify): `--schedule-seeds 0-7` stops at the first seed that
      deadlocks, with the hang report as usual, "seed S hangs (exit status
      70)", exit 70 and the replay command; the replay hangs the same way.
  equal (P = 3)  tests/schedule/spmd_ring.pld (a correct program: every
      schedule gives the same result): `--schedule-seeds 0-5` runs every seed,
      prints "6 seeds run, every output equal to seed 0's", exits 0, and the
      --out file holds the golden result.
  race (P = 2)  tests/races/racy/put_vs_store.pld with --check-races: the
      sweep stops at seed 0 ("reports a data race"), exit 1, with the replay
      command; tests/races/clean/put_vs_store.pld (the fixed program) runs
      every seed: "..., no data race", exit 0.
  usage (P = 1)  bad ranges (5-3, 7, 1-, -2, a-b, 1-2-3, none) and a sweep
      with --schedule-seed or --schedule random: exit 64 and the message.

The goldens come from the inputs (arange), never from pldrun's output.

usage:
  run_sweep.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
               [--case NAME] [--workdir DIR] [--list]
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

CASES = {'diverge': ('block_order', 1), 'hang': ('flag_put', 2), 'equal': ('spmd_ring', 3),
         'race': ('../races/racy/put_vs_store', 2), 'usage': ('block_order', 1)}
ROWS, COLS = 2, 16


class Runner:
    def __init__(self, args):
        self.args = args
        self.env = T.mpi_env(REPO)
        self.problems = []
        self.last = ''

    def cmd(self, cmd, timeout=90):
        self.last = ' '.join(shlex.quote(c) for c in cmd)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               env=self.env, cwd=self.args.workdir, timeout=timeout)
            return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')
        except subprocess.TimeoutExpired:
            return 124, '', '(timed out after %d s)' % timeout

    def pld(self, prog, P, extra, timeout=90):
        args = [os.path.join(HERE, prog + '.pld')] + extra
        if P == 1:
            return self.cmd([self.args.pldrun] + args, timeout)
        return self.cmd([self.args.mpiexec, self.args.numproc_flag, str(P), self.args.pldrun] + args, timeout)

    def replay(self, line, timeout=90):
        """Runs a printed replay command: `mpirun -n P ...` with this host's launcher."""
        argv = shlex.split(line)
        if argv[:2] != ['mpirun', '-n'] or not argv[2].isdigit():
            return None
        return self.cmd([self.args.mpiexec, self.args.numproc_flag] + argv[2:], timeout)

    def fail(self, msg, err=''):
        self.problems.append(msg)
        print('FAIL: ' + msg)
        print('    command: ' + self.last)
        if err.strip():
            print('    output:\n' + '\n'.join('      ' + l for l in err.strip().splitlines()[:30]))


def replay_line(se):
    m = re.findall(r'^pldrun: replay: (.*)$', se, re.M)
    return m[-1] if len(m) == 1 else None


def values(path):
    return T.read_npy(path)[2]


def case_diverge(R):
    out = os.path.join(R.args.workdir, 'ys.npy')
    rc, so, se = R.pld('block_order', 1, ['--in', 'xs=arange', '--out', 'ys=' + out, '--schedule-seeds', '0-15'])
    m = re.search(r"^pldrun: --schedule-seeds 0-15: seed (\d+) gives other outputs than seed 0: output 'ys': "
                  r"(\d+) elements? differs?, the first at flat index (\d+): (\S+) \(was (\S+)\)$", se, re.M)
    line = replay_line(se)
    if rc != 1 or not m or not line:
        R.fail('diverge: exit %d (expected 1), divergence line %s, replay line %s' %
               (rc, 'found' if m else 'missing', 'found' if line else 'missing'), so + se)
        return
    seed, ndiff, first, now, then = int(m.group(1)), int(m.group(2)), int(m.group(3)), float(m.group(4)), \
        float(m.group(5))
    if not line.endswith(' --schedule-seed %d' % seed) or '--schedule-seeds' in line:
        R.fail('diverge: the replay command must end in --schedule-seed %d: %s' % (seed, line))
    first_run = values(out)
    with open(out, 'rb') as f:
        first_bytes = f.read()
    # the --out file is seed 0's run
    ref = os.path.join(R.args.workdir, 'seed0.npy')
    rc0, so0, se0 = R.pld('block_order', 1, ['--in', 'xs=arange', '--out', 'ys=' + ref, '--schedule-seed', '0'])
    with open(ref, 'rb') as f:
        if rc0 != 0 or f.read() != first_bytes:
            R.fail('diverge: the --out file of the sweep is not seed 0\'s output', se0)
    # the replay, as printed: it writes the same --out path
    shutil.copy(out, out + '.sweep')
    r = R.replay(line)
    if r is None:
        R.fail('diverge: the replay command does not start with "mpirun -n P": %s' % line)
        return
    rc2, so2, se2 = r
    if rc2 != 0:
        R.fail('diverge: the replay exits %d' % rc2, se2)
        return
    got = values(out)
    diff = [i for i in range(len(got)) if got[i] != first_run[i]]
    if len(diff) != ndiff or not diff or diff[0] != first or got[first] != now or first_run[first] != then:
        R.fail('diverge: the replay of seed %d does not reproduce the reported difference: %d elements differ '
               '(reported %d), first at %s (reported %d)' % (seed, len(diff), ndiff, diff[:1], first), se2)
    right = [float(i) for i in range(ROWS * COLS)]
    if sorted([got, first_run]) != sorted([right, [0.0] * (ROWS * COLS)]):
        R.fail('diverge: the two outputs must be xs and 0: %r / %r' % (first_run[:4], got[:4]))
    print('diverge: seed %d, %d elements differ; the replay reproduces them' % (seed, ndiff))


def case_hang(R):
    out = os.path.join(R.args.workdir, 'ys.npy')
    extra = ['--in', 'xs=arange', '--out', 'ys=' + out, '--timeout', '20']
    rc, so, se = R.pld('flag_put', 2, extra + ['--schedule-seeds', '0-7'])
    m = re.search(r'^pldrun: --schedule-seeds 0-7: seed (\d+) hangs \(exit status 70\)$', se, re.M)
    line = replay_line(se)
    if rc != 70 or not m or not line or 'deadlock' not in se:
        R.fail('hang: exit %d (expected 70), hang line %s, replay line %s' %
               (rc, 'found' if m else 'missing', 'found' if line else 'missing'), so + se)
        return
    seed = int(m.group(1))
    if not re.search(r'^pldrun: this run used schedule seed %d: replay it with --schedule-seed %d$' % (seed, seed),
                     se, re.M):
        R.fail('hang: the run of seed %d must name its seed as usual' % seed, se)
    r = R.replay(line)
    if r is None or r[0] != 70 or 'deadlock' not in r[2]:
        R.fail('hang: the replay of seed %d must hang the same way (exit %s)' % (seed, r and r[0]), r and r[2] or '')
    print('hang: seed %d' % seed)


def case_equal(R):
    P, blocks = 3, 4
    out = os.path.join(R.args.workdir, 'ys.npy')
    rc, so, se = R.pld('spmd_ring', P, ['--in', 'xs=arange', '--out', 'ys=' + out, '--timeout', '20',
                                        '--schedule-seeds', '0-5'])
    if rc != 0 or not re.search(r"^pldrun: --schedule-seeds 0-5: 6 seeds run, every output equal to seed 0's$", so,
                                re.M):
        R.fail('equal: exit %d, summary line %s' % (rc, 'missing'), so + se)
        return
    if 'replay' in se:
        R.fail('equal: a sweep with no divergence prints no replay command', se)
    want = []
    for r in range(P):
        q = (r - 1) % P
        want += [float(q * blocks * COLS + i) for i in range(blocks * COLS)]
    if values(out) != want:
        R.fail('equal: ys differs from the golden', se)
    if len(re.findall(r'^pldrun: \d+ ranks?, ', so, re.M)) != 1:
        R.fail('equal: only the first run prints its statistics', so)


def case_race(R):
    rc, so, se = R.pld('../races/racy/put_vs_store', 2, ['--in', 'xs=arange', '--check-races', '--schedule-seeds', '0-3'])
    line = replay_line(se)
    if rc != 1 or not re.search(r'^pldrun: --schedule-seeds 0-3: seed 0 reports a data race \(--check-races\)$', se,
                                re.M) or not line or not line.endswith('--check-races --schedule-seed 0'):
        R.fail('race: exit %d (expected 1), the race line or the replay command missing' % rc, so + se)
    rc, so, se = R.pld('../races/clean/put_vs_store', 2, ['--in', 'xs=arange', '--check-races', '--schedule-seeds', '0-3'])
    if rc != 0 or not re.search(r"^pldrun: --schedule-seeds 0-3: 4 seeds run, every output equal to seed 0's, no data "
                                r"race$", so, re.M):
        R.fail('race: the clean program: exit %d (expected 0 and the summary)' % rc, so + se)


def case_usage(R):
    base = ['--in', 'xs=arange']
    for bad in ['5-3', '7', '1-', '-2', 'a-b', '1-2-3', '18446744073709551616-1', None]:
        rc, so, se = R.pld('block_order', 1, base + ['--schedule-seeds'] + ([bad] if bad is not None else []))
        if rc != 64 or 'pldrun: --schedule-seeds needs a range A-B of seeds with A <= B' not in se:
            R.fail('usage: --schedule-seeds %s: exit %d (expected 64 and the message)' % (bad, rc), se)
    for other in (['--schedule-seed', '3'], ['--schedule', 'random']):
        rc, so, se = R.pld('block_order', 1, base + ['--schedule-seeds', '0-3'] + other)
        if rc != 64 or 'takes no --schedule-seed or --schedule random' not in se:
            R.fail('usage: --schedule-seeds with %s: exit %d (expected 64)' % (other[0], rc), se)


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true')
    args = ap.parse_args()
    progs = [(c, os.path.join(HERE, p + '.pld')) for c, (p, _) in CASES.items()]
    T.require_programs('run_sweep.py', progs)
    if args.list:
        print('\n'.join('%s %d' % (c, p) for c, (_, p) in CASES.items()))
        return 0
    for c in args.case or []:
        if c not in CASES:
            print('run_sweep.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    args.pldrun = os.path.abspath(args.pldrun)
    root = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'sweep_runs'))
    R = Runner(args)
    for c in args.case or list(CASES):
        wd = os.path.join(root, c)
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        args.workdir = wd
        before = len(R.problems)
        t0 = time.time()
        globals()['case_' + c](R)
        print('%s: %s (%.1f s)' % (c, 'ok' if len(R.problems) == before else 'FAILED', time.time() - t0))
    return 0 if not R.problems else 1


if __name__ == '__main__':
    sys.exit(main())
