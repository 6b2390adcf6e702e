#!/usr/bin/env python3
"""run_winstate.py - persistent windows across runs (CTest label `mpi`):
pldrun --save-windows DIR keeps every rank's window memory, signal cells
included, at the end of a run; --load-windows DIR starts the next run with it
(PyPTO's prepare(persistent=True, reset_persistent_windows=False) when every
dispatch is a run of its own: docs/pypto.md, "Persistent windows").

Program tests/mpi/programs/window_state.pld: in run k each rank outputs the
payload its window kept from run k - 1 and its signal cell before and after
this run's notify; a ready cell counts the runs, so a run that does not see
the previous runs' cells hangs.

cases:
  keep_p2, keep_p4    three runs (the first saves only, the next two load and
                      save the same DIR), sim backend: prev[r] = the payload
                      of the previous run (zeros in run 1), seen[r] = [k - 1, k]
  keep_native_p2      the same on the native backend
  errors              at P = 2 after a saved run: a program whose payload
                      buffer is larger (exit 64, a located error at that
                      buffer's pld.alloc_window_buffer), the state loaded at
                      P = 1 (exit 64, both rank counts), a DIR with no state
                      (exit 74), --load-windows without --persistent-windows
                      --reset-persistent-windows no or with --poison (exit
                      64, before the run); the saved state is unchanged by the
                      failed runs (a last run still sees run 1)
"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pld_mpitest as T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROGRAM = os.path.join(HERE, 'programs', 'window_state.pld')
LANES = 8
KEEP = ['--persistent-windows', '--reset-persistent-windows', 'no']
CASES = {'keep_p2': (2, 'sim'), 'keep_p4': (4, 'sim'), 'keep_native_p2': (2, 'native'), 'errors': (2, 'sim')}


def inputs(wd, P, k, lanes=LANES):
    path = os.path.join(wd, 'inp%d_p%d.npy' % (k, P))
    vals = []
    for r in range(P):
        vals += [k] + [k * 100 + r * 10 + j for j in range(1, lanes)]
    T.write_npy(path, 'INT32', (P, 1, lanes), vals)
    return path, vals


def run(ctx, P, k, extra, program=PROGRAM, lanes=LANES, tag=''):
    """Run k; returns (rc, err, prev values, seen values)."""
    inp, _ = inputs(ctx.wd, P, k, lanes)
    prev = os.path.join(ctx.wd, 'prev%d%s.npy' % (k, tag))
    seen = os.path.join(ctx.wd, 'seen%d%s.npy' % (k, tag))
    for f in (prev, seen):
        if os.path.exists(f):
            os.remove(f)
    cli = ['--backend', ctx.backend, '--timeout', '10', '--in', 'inp=' + inp, '--out', 'prev=' + prev,
           '--out', 'seen=' + seen] + extra
    rc, _out, err = T.run_pldrun(ctx.args.mpiexec, ctx.args.numproc_flag, P, ctx.args.pldrun, program, cli,
                                 ctx.env, ctx.wd, timeout=60)
    if rc != 0:
        return rc, err, None, None
    return rc, err, T.read_npy(prev)[2], T.read_npy(seen)[2]


def check_run(problems, P, k, rc, err, prev, seen):
    if rc != 0:
        problems.append('run %d: exit %d\n%s' % (k, rc, err))
        return
    want_prev = []
    for r in range(P):
        src = (r - 1) % P
        want_prev += [0] * LANES if k == 1 else [k - 1] + [(k - 1) * 100 + src * 10 + j for j in range(1, LANES)]
    want_seen = [k - 1, k] * P
    if prev != want_prev:
        problems.append('run %d: prev = %s, want %s (the payload the previous run left)' % (k, prev, want_prev))
    if seen != want_seen:
        problems.append('run %d: seen = %s, want %s (the signal cell before / after)' % (k, seen, want_seen))


def case_keep(ctx, P):
    problems = []
    state = os.path.join(ctx.wd, 'state')
    for k in (1, 2, 3):
        extra = KEEP + ['--save-windows', state] + (['--load-windows', state] if k > 1 else [])
        rc, err, prev, seen = run(ctx, P, k, extra)
        check_run(problems, P, k, rc, err, prev, seen)
        if problems:
            break
    return problems


def expect(problems, what, rc, err, want_rc, patterns):
    if rc != want_rc:
        problems.append('%s: exit %d, want %d\n%s' % (what, rc, want_rc, err))
        return
    for p in patterns:
        if not re.search(p, err, re.M):
            problems.append('%s: no stderr line matches %r\n%s' % (what, p, err))


def case_errors(ctx):
    problems = []
    state = os.path.join(ctx.wd, 'state')
    rc, err, prev, seen = run(ctx, 2, 1, KEEP + ['--save-windows', state])
    check_run(problems, 2, 1, rc, err, prev, seen)
    if problems:
        return problems
    # another layout: the payload buffer is 16 lanes
    wider = os.path.join(ctx.wd, 'window_state_wide.pld')
    with open(PROGRAM) as f:
        text = f.read().replace('LANES = 8', 'LANES = 16')
    with open(wider, 'w') as f:
        f.write(text)
    line = next(i for i, s in enumerate(text.split('\n'), 1) if 'payload_buf = ' in s)
    rc, err, _, _ = run(ctx, 2, 2, KEEP + ['--load-windows', state], program=wider, lanes=16, tag='w')
    expect(problems, 'a wider payload buffer', rc, err, 64,
           [r'^\[rank 0/2\] .*window_state_wide\.pld:%d:\d+: error: window buffer \'payload_buf\' \(64 bytes at '
            r'offset 0 of comm domain 0\) is not in the window state saved in .*state' % line])
    rc, err, _, _ = run(ctx, 1, 2, KEEP + ['--load-windows', state], tag='p1')
    expect(problems, 'P = 1', rc, err, 64, [r'error: --load-windows: the window state in .*state was saved by a run '
                                            r'on 2 ranks; this run has 1'])
    rc, err, _, _ = run(ctx, 2, 2, KEEP + ['--load-windows', os.path.join(ctx.wd, 'none')], tag='none')
    expect(problems, 'no saved state', rc, err, 74, [r'error: --load-windows: no window state saved in .*none'])
    rc, err, _, _ = run(ctx, 2, 2, ['--load-windows', state], tag='np')
    expect(problems, 'without --persistent-windows', rc, err, 64,
           [r'^pldrun: --load-windows keeps the windows of another run: it needs --persistent-windows '
            r'--reset-persistent-windows no'])
    rc, err, _, _ = run(ctx, 2, 2, KEEP + ['--load-windows', state, '--poison'], tag='po')
    expect(problems, 'with --poison', rc, err, 64, [r'^pldrun: --load-windows cannot be combined with --poison'])
    # none of the failed runs changed the state: run 2 still follows run 1
    rc, err, prev, seen = run(ctx, 2, 2, KEEP + ['--load-windows', state, '--save-windows', state])
    check_run(problems, 2, 2, rc, err, prev, seen)
    return problems


class Ctx:
    def __init__(self, args, env, wd, backend):
        self.args, self.env, self.wd, self.backend = args, env, wd, backend


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print "CASE P" lines and exit')
    args = ap.parse_args()
    if args.list:
        T.require_programs('run_winstate.py', [('window_state', PROGRAM)])
        print('\n'.join('%s %d' % (c, p) for c, (p, _) in CASES.items()))
        return 0
    cases = args.case or list(CASES)
    for c in cases:
        if c not in CASES:
            print('run_winstate.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    args.pldrun = os.path.abspath(args.pldrun)
    workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'mpi_winstate'))
    env = T.mpi_env(REPO)
    env.setdefault('XDG_CACHE_HOME', os.path.join(workdir, 'kernel_cache'))
    failed = 0
    for c in cases:
        wd = os.path.join(workdir, c)
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        P, backend = CASES[c]
        t1 = time.time()
        ctx = Ctx(args, env, wd, backend)
        problems = case_errors(ctx) if c == 'errors' else case_keep(ctx, P)
        print('%s: %s (%.2f s)' % ('FAIL' if problems else 'ok', c, time.time() - t1))
        for p in problems:
            print('  ' + p.replace('\n', '\n    '))
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
