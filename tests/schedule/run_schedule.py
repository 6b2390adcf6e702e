#!/usr/bin/env python3
"""run_schedule.py - `pldrun --schedule-seed N` / `--schedule random` (CTest
label `schedule`; `mpi` for P > 1; tests/schedule.cmake).

Cases:

  block_order (P = 1)  tests/schedule/block_order.pld: block 1 of a 2-block
      pl.spmd grid reads `mid`, which block 0 stores after a put, with no
      synchronisation. The default schedule runs block 0 first: ys = xs on
      every run. Among seeds 0..15 at least one runs block 1 first (or
      preempts block 0 at its put): ys = 0; every seeded run gives one of the
      two results exactly. Replay: a second run with the same seed gives a
      bit-identical output, for a wrong and a right seed; `--schedule random`
      prints its seed, and --schedule-seed with that seed gives the same bits.
  flag_put (P = 2)  tests/schedule/flag_put.pld: rank 0 puts data to rank 1,
      then announces it with an atomic add (not a notify): rank 1 spins on the
      flag, reads the data and releases rank 0's last wait only when the data
      was there. The default schedule: exit 0 and ys[1] = xs[0]. Among seeds
      0..7 at least one holds the put back past the add: rank 1 reads stale
      data, rank 0 waits for ever, and the run stops with exit 70, the
      deadlock report at the wait (line:col), and rank 0's line naming the
      seed and the replay option; the replay of that seed fails the same way.
      Seeds that pass give the right ys[1].
  spmd_ring (P = 3)  tests/schedule/spmd_ring.pld: a correct program whose
      4-block grid puts, notifies and waits in every block: the default
      schedule and seeds 0..3 all give ys[r] = xs[(r - 1) % P], and every
      seeded run holds puts back and preempts blocks (the summary's counts).
  put_then_error (P = 2)  tests/schedule/put_then_error.pld: rank 0 puts to
      rank 1, then fails (a put to a peer outside the domain). Under a seed
      the first put is still held when the error happens: the run exits 70
      with the error at its line:col, and rank 0's log (-v) shows the held
      put landing after the error (nothing held is lost on an error path).
  stale_put (P = 2)  tests/schedule/stale_put.pld: rank 0 puts and then only
      spins on plain reads; rank 1 spins on plain reads of the data. A held
      put must still land (the schedule's 2^26-operation deadline): exit 0,
      ys[1] = xs[0], and the summary counts the put held back.

The goldens come from the inputs (arange: 0, 1, 2, ...), never from pldrun's
output.

usage:
  run_schedule.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                  [--case NAME] [--workdir DIR] [--max-failures N] [--list]

--list prints one line per CTest test: "CASE P"; a case whose program
(tests/schedule/CASE.pld) is missing fails it (exit 2), as it fails a run.
After --max-failures failed checks (default 3, 0: no limit) the runner stops:
"stopped after N failures: M cases (and the rest of CASE) not run".
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

ROWS, COLS = 2, 16  # block_order, flag_put, stale_put; spmd_ring: 4 x 16
CASES = {'block_order': 1, 'flag_put': 2, 'spmd_ring': 3, 'put_then_error': 2, 'stale_put': 2}


def out_bytes(path):
    with open(path, 'rb') as f:
        return f.read()


def out_values(path):
    return T.read_npy(path)[2]


class Runner:
    def __init__(self, args):
        self.args = args
        self.env = T.mpi_env(REPO)
        self.problems = []
        self.n = 0
        self.ff = T.FailFast(args.max_failures)

    def run(self, prog, P, extra, tag, timeout=60):
        """Runs prog at P ranks (P = 1: plain pldrun) with --in xs=arange and
        --out ys=FILE; returns (rc, stdout, stderr, output path)."""
        self.n += 1
        out = os.path.join(self.args.workdir, '%s_%d.npy' % (tag, self.n))
        args = [os.path.join(HERE, prog), '--in', 'xs=arange', '--out', 'ys=' + out] + extra
        if P == 1:
            cmd = [self.args.pldrun] + args
        else:
            cmd = [self.args.mpiexec, self.args.numproc_flag, str(P), self.args.pldrun] + args
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               env=self.env, cwd=self.args.workdir, timeout=timeout)
            rc, so, se = p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')
        except subprocess.TimeoutExpired:
            rc, so, se = 124, '', '(timed out after %d s)' % timeout
        self.last = ' '.join(cmd)
        return rc, so, se, out

    def fail(self, msg, err=''):
        """Records a failed check; at the --max-failures-th raises T.StopRun (main stops the run)."""
        self.problems.append(msg)
        print('FAIL: ' + msg)
        print('    command: ' + self.last)
        if err.strip():
            print('    stderr:\n' + '\n'.join('      ' + l for l in err.strip().splitlines()[:30]))
        self.ff.fail(raise_at_limit=True)


def arange_rank(r):
    return [float(r * ROWS * COLS + i) for i in range(ROWS * COLS)]


# ---------------------------------------------------------------- cases

def case_block_order(R):
    right = arange_rank(0)
    wrong = [0.0] * (ROWS * COLS)
    for k in range(2):
        rc, so, se, out = R.run('block_order.pld', 1, [], 'default')
        if rc != 0:
            R.fail('block_order: default schedule: exit %d' % rc, se)
            return
        if out_values(out) != right:
            R.fail('block_order: the default schedule must give ys = xs (run %d)' % (k + 1), se)
        if 'schedule seed' in so + se:
            R.fail('block_order: the default run mentions a schedule seed', so + se)
    results = {}
    for seed in range(16):
        rc, so, se, out = R.run('block_order.pld', 1, ['--schedule-seed', str(seed)], 'seed%d' % seed)
        if rc != 0:
            R.fail('block_order seed %d: exit %d' % (seed, rc), se)
            continue
        if not re.search(r'^pldrun: schedule seed %d: \d+ puts? held back, \d+ preemptions?$' % seed, so, re.M):
            R.fail('block_order seed %d: no schedule line in the summary' % seed, so)
        got = out_values(out)
        if got not in (right, wrong):
            R.fail('block_order seed %d: ys is neither xs nor 0: %r' % (seed, got[:8]), se)
            continue
        results[seed] = (got == right, out)
    bad = [s for s in results if not results[s][0]]
    good = [s for s in results if results[s][0]]
    print('block_order: seeds with the wrong result: %s; right: %s' % (bad, good))
    if not bad:
        R.fail('block_order: no seed in 0..15 exposes the ordering bug')
    # replay: same seed, same bits
    for seed in bad[:1] + good[:1]:
        rc, so, se, out = R.run('block_order.pld', 1, ['--schedule-seed', str(seed)], 'replay%d' % seed)
        if rc != 0 or out_bytes(out) != out_bytes(results[seed][1]):
            R.fail('block_order: the replay of seed %d differs from its first run' % seed, se)
    # --schedule random prints its seed; that seed replays it
    rc, so, se, out = R.run('block_order.pld', 1, ['--schedule', 'random'], 'random')
    m = re.search(r'^pldrun: schedule seed (\d+) \(replay with --schedule-seed (\d+)\)$', se, re.M)
    if rc != 0 or not m or m.group(1) != m.group(2):
        R.fail('block_order: --schedule random: exit %d, printed seed %s' % (rc, m.group(0) if m else None), se)
        return
    rc2, so2, se2, out2 = R.run('block_order.pld', 1, ['--schedule-seed', m.group(1)], 'random_replay')
    if rc2 != 0 or out_bytes(out2) != out_bytes(out):
        R.fail('block_order: --schedule-seed %s does not replay --schedule random' % m.group(1), se2)


def flag_put_failure(R, seed, rc, se):
    """The expected report of a seed that exposes the bug; returns the problems."""
    line, col = T.locate(os.path.join(HERE, 'flag_put.pld'), 'pld.system.wait(sig, [1, 0]')
    want = [
        (r'\[rank 0/2\] \S*flag_put\.pld:%d:%d: error: wait on sig\[1, 0\] \(Ge 1\) in step: found 0, expected >= 1 '
         r'\(deadlock: every rank is waiting and nothing is in flight\)' % (line, col), 'the deadlock error at the wait'),
        (r'note: rank 0: stopped at \S*flag_put\.pld:%d:%d: wait on sig\[1, 0\]' % (line, col), 'the hang summary'),
        (r'note: rank 1: finished', 'rank 1 finished'),
        (r'^pldrun: this run used schedule seed %d: replay it with --schedule-seed %d$' % (seed, seed),
         'the seed and the replay option'),
    ]
    problems = [] if rc == 70 else ['exit %d, expected 70' % rc]
    problems += ['missing: ' + what for pat, what in want if not re.search(pat, se, re.M)]
    return problems


def case_flag_put(R):
    right = arange_rank(0)
    rc, so, se, out = R.run('flag_put.pld', 2, ['--timeout', '20'], 'default')
    if rc != 0:
        R.fail('flag_put: default schedule: exit %d' % rc, se)
    elif out_values(out)[ROWS * COLS:] != right:
        R.fail('flag_put: the default schedule must give ys[1] = xs[0]', se)
    failing = []
    for seed in range(8):
        rc, so, se, out = R.run('flag_put.pld', 2, ['--timeout', '20', '--schedule-seed', str(seed)], 'seed%d' % seed)
        if rc == 0:
            if out_values(out)[ROWS * COLS:] != right:
                R.fail('flag_put seed %d: exit 0 but ys[1] != xs[0]' % seed, se)
            continue
        problems = flag_put_failure(R, seed, rc, se)
        if problems:
            R.fail('flag_put seed %d: %s' % (seed, '; '.join(problems)), se)
        else:
            failing.append(seed)
    print('flag_put: seeds that expose the bug: %s' % failing)
    if not failing:
        R.fail('flag_put: no seed in 0..7 exposes the missing release')
        return
    seed = failing[0]
    rc, so, se, out = R.run('flag_put.pld', 2, ['--timeout', '20', '--schedule-seed', str(seed)], 'replay')
    problems = flag_put_failure(R, seed, rc, se)
    if problems:
        R.fail('flag_put: the replay of seed %d: %s' % (seed, '; '.join(problems)), se)


def case_spmd_ring(R):
    P, blocks = 3, 4
    want = []
    for r in range(P):
        q = (r - 1) % P
        want += [float(q * blocks * COLS + i) for i in range(blocks * COLS)]
    for seed in [None, 0, 1, 2, 3]:
        extra = ['--timeout', '20'] + (['--schedule-seed', str(seed)] if seed is not None else [])
        rc, so, se, out = R.run('spmd_ring.pld', P, extra, 'seed%s' % seed)
        if rc != 0:
            R.fail('spmd_ring seed %s: exit %d' % (seed, rc), se)
            continue
        if out_values(out) != want:
            R.fail('spmd_ring seed %s: ys differs from the golden' % seed, se)
        if seed is not None:
            m = re.search(r'^pldrun: schedule seed %d: (\d+) puts? held back, (\d+) preemptions?$' % seed, so, re.M)
            if not m or int(m.group(1)) == 0 or int(m.group(2)) == 0:
                R.fail('spmd_ring seed %d: the schedule must hold puts back and preempt blocks: %s' %
                       (seed, m.group(0) if m else 'no summary line'), so)


def case_put_then_error(R):
    prog = os.path.join(HERE, 'put_then_error.pld')
    line, col = T.locate(prog, 'pld.tensor.put(inbox, 2, x)')
    col += len('pld.tensor.put(inbox, ')  # the error points at the peer argument
    put_line, put_col = T.locate(prog, 'pld.tensor.put(inbox, 1, x)')
    for seed in (0, 1):
        cmd = [R.args.mpiexec, R.args.numproc_flag, '2', R.args.pldrun, prog, '--in', 'xs=arange', '-v',
               '--schedule-seed', str(seed)]
        R.last = ' '.join(cmd)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=R.env,
                           cwd=R.args.workdir, timeout=60)
        se = p.stderr.decode(errors='replace')
        mine = [l for l in se.splitlines() if l.startswith('[rank 0/2] host: ')]
        err = [i for i, l in enumerate(mine) if re.search(
            r'error: pld\.tensor\.put: peer 2 is outside the comm domain \[0, 2\) at \S*put_then_error\.pld:%d:%d '
            % (line, col), l)]
        landed = [i for i, l in enumerate(mine) if re.search(
            r'put landed \(held back \d+ us\) to rank 1 \(world 1\): inbox_buf, 128 bytes at window offset 0 at '
            r'\S*put_then_error\.pld:%d:%d ' % (put_line, put_col), l)]
        if p.returncode != 70 or not err:
            R.fail('put_then_error seed %d: exit %d, error at %d:%d %s' % (seed, p.returncode, line, col,
                                                                           'found' if err else 'missing'), se)
        elif len(landed) != 1 or landed[0] < err[0]:
            R.fail('put_then_error seed %d: the held put must land once, after the error (landed at %s, error at %d)'
                   % (seed, landed, err[0]), se)


def case_stale_put(R):
    t0 = time.time()
    rc, so, se, out = R.run('stale_put.pld', 2, ['--timeout', '20', '--schedule-seed', '1'], 'seed1', timeout=40)
    if rc != 0:
        R.fail('stale_put: exit %d (a held put that is never applied leaves both ranks spinning)' % rc, se)
        return
    if out_values(out)[ROWS * COLS:] != arange_rank(0):
        R.fail('stale_put: ys[1] != xs[0]', se)
    if not re.search(r'^pldrun: schedule seed 1: 1 put held back, 0 preemptions$', so, re.M):
        R.fail('stale_put: the summary must count the one put held back', so)
    print('stale_put: %.1f s' % (time.time() - t0))


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true')
    T.add_max_failures(ap)
    args = ap.parse_args()
    if args.list:
        T.require_programs('run_schedule.py', [(c, os.path.join(HERE, c + '.pld')) for c in CASES])
        print('\n'.join('%s %d' % (c, p) for c, p in CASES.items()))
        return 0
    for c in args.case or []:
        if c not in CASES:
            print('run_schedule.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    T.require_programs('run_schedule.py', [(c, os.path.join(HERE, c + '.pld')) for c in args.case or CASES])
    args.pldrun = os.path.abspath(args.pldrun)
    args.workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'schedule_runs'))
    R = Runner(args)
    sel = args.case or list(CASES)
    for i, c in enumerate(sel):
        wd = os.path.join(args.workdir, c)
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        R.args.workdir = wd
        before = len(R.problems)
        t0 = time.time()
        try:
            globals()['case_' + c](R)
        except T.StopRun:
            print('%s: FAILED (%.1f s)' % (c, time.time() - t0))
            R.ff.stop(len(sel) - i - 1, 'cases (and the rest of %s) not run' % c)
            return 1
        R.args.workdir = os.path.dirname(wd)
        print('%s: %s (%.1f s)' % (c, 'ok' if len(R.problems) == before else 'FAILED', time.time() - t0))
    return 0 if not R.problems else 1


if __name__ == '__main__':
    sys.exit(main())
