#!/usr/bin/env python3
"""run_hang.py - the hang watchdog tells a slow producer from a stuck run
(CTest label `mpi`; docs/debugging.md, "Hangs and slow producers").

Cases (each on `sim` and, with a `_native` suffix, on `--backend native`,
whose compiled kernels publish their progress at every loop back edge):
  slow            slow_producer.pld: rank 1 computes (a loop of tile loads,
                  about 3.5 s, its trips calibrated by a first run, at least
                  twice the timeout) before it notifies
                  rank 0, which waits all along; with `--timeout 1` the run
                  ends with exit 0: rank 1 progresses, so the long wait is not
                  a hang (it was one with the per-wait watchdog).
  wait_timeout    the same run with `--wait-timeout 1` (the per-wait limit,
                  the old behaviour) and the default --timeout: exit 70, rank
                  0's wait reported with the per-wait limit and the budget,
                  rank 1's last progress in rank 0's summary.
  true_hang       true_hang.pld: rank 0 waits for a signal nobody sends, rank
                  1 finishes; with `--timeout 2` the run stops within the
                  timeout (plus start-up) with exit 70 and a summary giving
                  each rank's last progress (how long before the stop, where)
                  and the budget.
  true_hang_timeout
                  (sim; pldrun_testing, --pldrun-testing) a hang the deadlock
                  detector cannot prove: tests/mpi/programs/coll_neg_shape.pld
                  at P = 4 over `hybrid` with ranks 0, 1 and 2, 3 on two
                  emulated hosts (PLD_TEST_SPLIT_HOSTS=2b): rank 0's large
                  parts stay in flight, nobody progresses, and `--timeout 3`
                  stops the run after 3 s without progress: exit 70, "no rank
                  made progress for 3 s" and every rank's last progress about
                  3 s before the stop.
"""
import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

SLOW = os.path.join(HERE, 'slow_producer.pld')
TRUE_HANG = os.path.join(HERE, 'true_hang.pld')
# slow_producer.pld's rank 1 computes for about TARGET_S seconds: its loop
# trips are calibrated per backend by a first run of CALIB_TRIPS (the machine's
# speed varies several-fold with its load)
CALIB_TRIPS = {'sim': 1000000, 'native': 2000000}
TARGET_S = 3.5
NEG_SHAPE = os.path.join(REPO, 'tests', 'mpi', 'programs', 'coll_neg_shape.pld')
CASES = ['slow', 'wait_timeout', 'true_hang', 'true_hang_timeout', 'slow_native', 'wait_timeout_native',
         'true_hang_native']


def run(args, env, wd, prog, cli, backend, limit=60):
    t0 = time.time()
    rc, out, err = T.run_pldrun(args.mpiexec, args.numproc_flag, 2, args.pldrun, prog,
                                list(cli) + ['--backend', backend], env, wd, timeout=limit)
    return rc, out, err, time.time() - t0


def run_seconds(out):
    """The run time pldrun prints (rank 0, the program's start to its end)."""
    m = re.search(r'pldrun: .*, ([0-9.]+) s$', out, re.M)
    return float(m.group(1)) if m else None


def trips_file(args, env, wd, backend):
    """A trips.npy with which rank 1 computes for about TARGET_S seconds now."""
    f = os.path.join(wd, 'trips_%s.npy' % backend)
    n = CALIB_TRIPS[backend]
    T.write_npy(f, 'INT64', (1, 1), [n])
    rc, out, err, _ = run(args, env, wd, SLOW, ['--in', 'xs=random:1', '--in', 'trips=' + f], backend)
    t = run_seconds(out)
    if rc != 0 or not t:
        raise RuntimeError('the calibration run failed (exit %d):\n%s' % (rc, err))
    T.write_npy(f, 'INT64', (1, 1), [int(n * TARGET_S / max(t, 0.05))])
    return f


def need(problems, cond, what):
    if not cond:
        problems.append(what)


def case_slow(args, env, wd, backend):
    outs = os.path.join(wd, 'outs.npy')
    tf = trips_file(args, env, wd, backend)
    cli = ['--in', 'xs=random:1', '--in', 'trips=' + tf, '--out', 'outs=' + outs, '--timeout', '1']
    for _ in range(3):
        rc, out, err, dt = run(args, env, wd, SLOW, cli, backend)
        t = run_seconds(out)
        if rc != 0 or (t or 0) >= 2.0:
            break
        # faster than calibrated (the calibration run also compiled the kernels, or the load fell): longer, again
        n = T.read_npy(tf)[2][0]
        T.write_npy(tf, 'INT64', (1, 1), [int(n * TARGET_S / max(t or 0.05, 0.05))])
    p = []
    need(p, rc == 0, 'exit status %d, expected 0 (a slow producer is not a hang)' % rc)
    need(p, 'error' not in err, 'an error was reported')
    need(p, os.path.exists(outs), 'no outputs written')
    # the wait must have lasted well past the timeout, or the case proves nothing
    t = run_seconds(out)
    need(p, rc != 0 or (t or 0) >= 2.0, 'the run took %s s: rank 1 must compute for at least twice --timeout 1 '
         '(the machine got faster after the calibration?)' % t)
    return p, cli, err


def case_wait_timeout(args, env, wd, backend):
    cli = ['--in', 'xs=random:1', '--in', 'trips=' + trips_file(args, env, wd, backend), '--wait-timeout', '1']
    rc, out, err, dt = run(args, env, wd, SLOW, cli, backend)
    p = []
    need(p, rc == 70, 'exit status %d, expected 70 (the per-wait limit)' % rc)
    pats = [r"\[rank 0/2\] .*slow_producer\.pld:34:13: error: wait on sig\[1, 0\] \(Ge 1\) in step: found 0, "
            r"expected >= 1 \(the hang watchdog's per-wait limit of 1 s expired\)",
            r"note: the run stopped \(hang watchdog: a wait passed the per-wait limit; budget: no progress for 30 s, "
            r"or one wait of 1 s\); state of every rank:",
            r"note: rank 0: stopped at .*slow_producer\.pld:34:13: wait on sig\[1, 0\] .*; last progress "
            r"\d+\.\d\d s before the stop, at .*slow_producer\.pld:\d+:\d+ in step",
            # rank 1 still computed when the wait stopped the run (its state when the summary is
            # printed: finished or killed on sim, stopped by the same limit in its kernel on native)
            r"note: rank 1: [^\n]*; last progress 0\.\d\d s before the stop, at .*slow_producer\.pld:3[01]:\d+ "
            r"in step"]
    for pat in pats:
        need(p, re.search(pat, err), 'stderr does not match %r' % pat)
    return p, cli, err


def case_true_hang(args, env, wd, backend):
    cli = ['--in', 'xs=random:1', '--timeout', '2']
    rc, out, err, dt = run(args, env, wd, TRUE_HANG, cli, backend)
    p = []
    need(p, rc == 70, 'exit status %d, expected 70' % rc)
    need(p, dt < 12, 'the hang was reported after %.1f s (timeout 2 s)' % dt)
    pats = [r"\[rank 0/2\] .*true_hang\.pld:27:13: error: wait on sig\[1, 0\] \(Ge 1\) in step: found 0, "
            r"expected >= 1 \((deadlock|the hang watchdog's timeout expired)",
            r"note: the run stopped \((deadlock|hang watchdog timeout: no rank made progress); budget: no progress "
            r"for 2 s\); state of every rank:",
            r"note: rank 0: stopped at .*true_hang\.pld:27:13: wait on sig\[1, 0\] \(Ge 1\) in step \(found 0, "
            r"expected >= 1\); last progress \d+\.\d\d s before the stop, at .*true_hang\.pld:27:\d+ in step",
            r"note: rank 1: finished; last progress \d+\.\d\d s before the stop"]
    for pat in pats:
        need(p, re.search(pat, err), 'stderr does not match %r' % pat)
    return p, cli, err


def case_true_hang_timeout(args, env, wd, backend):
    if not args.pldrun_testing:
        return ['needs --pldrun-testing (pldrun_testing: PLD_TEST_SPLIT_HOSTS)'], [], ''
    cli = ['--in', 'xs=random:1', '--window-transport', 'hybrid', '--timeout', '3', '--backend', backend]
    t0 = time.time()
    rc, out, err = T.run_pldrun(args.mpiexec, args.numproc_flag, 4, args.pldrun_testing, NEG_SHAPE, cli,
                                dict(env, PLD_TEST_SPLIT_HOSTS='2b'), wd, timeout=60)
    dt = time.time() - t0
    p = []
    need(p, rc == 70, 'exit status %d, expected 70' % rc)
    need(p, dt < 20, 'the hang was reported after %.1f s (timeout 3 s)' % dt)
    pats = [r"\[rank 0/4\] .*coll_neg_shape\.pld:\d+:\d+: error: allreduce \(mesh\): .*\(the hang watchdog's "
            r"timeout expired: no rank made progress for 3 s\)",
            r"note: the run stopped \(hang watchdog timeout: no rank made progress; budget: no progress for 3 s\); "
            r"state of every rank:"]
    pats += [r"note: rank %d: stopped at .*coll_neg_shape\.pld:\d+:\d+: .*; last progress (2\.9\d|[3-9]\.\d\d) s "
             r"before the stop, at .*coll_neg_shape\.pld:\d+:\d+ in step" % r for r in range(4)]
    for pat in pats:
        need(p, re.search(pat, err), 'stderr does not match %r' % pat)
    return p, cli, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--pldrun-testing', default='', help='pldrun_testing (for true_hang_timeout)')
    ap.add_argument('--mpiexec', default='mpirun')
    ap.add_argument('--numproc-flag', default='-n')
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print the case names and exit')
    args = ap.parse_args()
    if args.list:
        print('\n'.join(CASES))
        return 0
    cases = args.case or CASES
    for c in cases:
        if c not in CASES:
            print('run_hang.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    args.pldrun = os.path.abspath(args.pldrun)
    if args.pldrun_testing:
        args.pldrun_testing = os.path.abspath(args.pldrun_testing)
    env = T.mpi_env(REPO)
    failed = 0
    for c in cases:
        base, backend = (c[:-len('_native')], 'native') if c.endswith('_native') else (c, 'sim')
        wd = os.path.abspath(os.path.join(args.workdir or os.path.join(os.getcwd(), 'hang'), c))
        os.makedirs(wd, exist_ok=True)
        problems, cli, err = globals()['case_' + base](args, env, wd, backend)
        if problems:
            failed += 1
            T.print_failure(c, problems, ' '.join(cli), err)
        else:
            print('ok: %s' % c)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
