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
                   (device5 and stack_block also check that the ranks'
                   diagnostics come whole, in rank order: rank 0 prints them)
  warning_once     tests/mpi/programs/warn_dynamic_name.pld: a static warning
                   (NR bound to the dynamic dim "world_size") on a run that
                   succeeds: exit 0, the warning printed exactly once, by rank 0
                   without a rank prefix

One rank fails, is killed or crashes (the others must neither hang nor stay
silent; each case must end well inside its time limit):
  rank1_missing_input   MPMD: rank 1's --in file does not exist: exit 74, one
                        "[rank 1/2]" line naming the file, nothing from rank 0
  rank1_missing_program MPMD: rank 1's program file does not exist: exit 74
  rank1_bad_program     MPMD: rank 1's program has a syntax error: exit 65, the
                        located error with rank 1's prefix
  rank1_oom             pldrun_testing with PLD_TEST_FAIL_ALLOC=N on rank 1 only,
                        N swept from 0 until a run succeeds: every run ends, and a
                        failed one exits non-zero with a "[rank 1/2]" line
  killed_running        tests/mpi/programs/long_run.pld; rank 0 is killed (SIGKILL):
                        rank 1 says "[rank 1/2] terminated while running step at
                        FILE:L:C" (the statement it runs), exit non-zero
  killed_waiting        the same, rank 1 killed: "[rank 0/2] terminated while
                        waiting on sig[1, 0] (Ge 1) in step at FILE:L:C; found 0"
  crash_report          SIGSEGV sent to rank 1: "[rank 1/2] crashed (SIGSEGV) while
                        running step at FILE:L:C", exit non-zero
  state_usr1            SIGUSR1 to mpirun: each rank says its state ("state:") and
                        the run goes on (then SIGTERM ends it)
  stuck_peer            tests/mpi/programs/stuck_peer.pld: rank 0 fails while
                        rank 1 loops without ever waiting: rank 0's located
                        error, "a rank did not stop ...; killing the job", rank 1
                        says where it runs, exit 70 in well under 30 s

usage:
  run_negative.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                  [--case NAME] [--workdir DIR] [--max-failures N] [--list]

Prints one line per case and a closing line "N passed, M failed"; stops after
--max-failures failed cases (default 3, 0: no limit).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pld_mpitest as T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
HELLO = os.path.join(REPO, 'programs', 'tutorial', 'hello_rank.pld')
OOB = os.path.join(HERE, 'programs', 'oob_on_rank1.pld')
LONG = os.path.join(HERE, 'programs', 'long_run.pld')
STUCK = os.path.join(HERE, 'programs', 'stuck_peer.pld')
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


def rank_blocks_in_order(err):
    """The ranks' runtime diagnostics reach stderr whole and in rank order
    (rank 0 prints them all): the '[rank r/n]' lines form one block per rank,
    ranks ascending, and no line has a second prefix glued into it."""
    order = []
    for l in err.splitlines():
        m = re.match(r'\[rank (\d+)/\d+\] ', l)
        if not m:
            continue
        if '[rank ' in l[m.end():]:
            return False
        r = int(m.group(1))
        if not order or order[-1] != r:
            order.append(r)
    return order == sorted(set(order))


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
    check(pr, rank_blocks_in_order(err), "the ranks' diagnostics are not whole blocks in rank order")
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
    check(pr, rank_blocks_in_order(err), "the ranks' diagnostics are not whole blocks in rank order")
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



# ---- one rank fails, is killed or crashes ----

def mpmd(ctx, per_rank, timeout=60):
    """mpirun -n 1 A0 : -n 1 A1 ...: per_rank is a list of argv lists (one per
    rank, the tool included). Returns (rc, out, err, seconds)."""
    cmd = [ctx.args.mpiexec]
    for i, argv in enumerate(per_rank):
        if i:
            cmd.append(':')
        cmd += [ctx.args.numproc_flag, '1'] + argv
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           env=ctx.env, cwd=ctx.wd, timeout=timeout)
        rc, out, err = p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')
    except subprocess.TimeoutExpired as e:
        rc, out, err = 124, (e.stdout or b'').decode(errors='replace'), \
            (e.stderr or b'').decode(errors='replace') + '\n(timed out after %d s: a rank was left hanging)' % timeout
    return rc, out, err, time.time() - t0


def own_errors(err, rank):
    return [l for l in err.splitlines() if l.startswith('[rank %d/%d]' % (rank, P)) and 'error' in l]


def case_rank1_missing_input(ctx):
    good = os.path.join(ctx.wd, 'xs.npy')
    T.write_npy(good, 'FP32', (P, 4, 16), arange(P * 64))
    missing = os.path.join(ctx.wd, 'only_on_rank0.npy')
    rc, out, err, dt = mpmd(ctx, [[ctx.args.pldrun, HELLO, '--in', 'xs=' + good],
                                  [ctx.args.pldrun, HELLO, '--in', 'xs=' + missing]])
    pr = []
    check(pr, rc == 74, 'exit status %d, expected 74' % rc)
    lines = [l for l in err.splitlines() if l.startswith('[rank 1/%d] pldrun: --in xs:' % P) and missing in l]
    check(pr, len(lines) == 1, 'expected one "[rank 1/2] pldrun: --in xs: %s ..." line' % missing)
    check(pr, '[rank 0/%d] pldrun' % P not in err, 'rank 0 reported something of its own')
    return pr, err


def case_rank1_missing_program(ctx):
    missing = os.path.join(ctx.wd, 'nope.pld')
    rc, out, err, dt = mpmd(ctx, [[ctx.args.pldrun, HELLO, '--in', 'xs=arange'],
                                  [ctx.args.pldrun, missing, '--in', 'xs=arange']])
    pr = []
    check(pr, rc == 74, 'exit status %d, expected 74' % rc)
    check(pr, ("[rank 1/%d] pldrun: cannot read '%s'" % (P, missing)) in err,
          'no "[rank 1/2] pldrun: cannot read" line naming the file')
    return pr, err


def case_rank1_bad_program(ctx):
    bad = os.path.join(ctx.wd, 'bad.pld')
    with open(HELLO) as f:
        text = f.read()
    marker = '@pl.program'
    text = text.replace(marker, marker + '\nclass (', 1)
    with open(bad, 'w') as f:
        f.write(text)
    rc, out, err, dt = mpmd(ctx, [[ctx.args.pldrun, HELLO, '--in', 'xs=arange'],
                                  [ctx.args.pldrun, bad, '--in', 'xs=arange']])
    pr = []
    check(pr, rc == 65, 'exit status %d, expected 65' % rc)
    check(pr, any(l.startswith('[rank 1/%d] %s:' % (P, bad)) and ': error: ' in l for l in err.splitlines()),
          'no located "[rank 1/2] FILE:LINE:COL: error:" line from rank 1')
    check(pr, not own_errors(err, 0), 'rank 0 reported an error of its own')
    return pr, err


def case_rank1_oom(ctx):
    """N = 0..3, then every 7th (PLD_OOM_SWEEP_ALL=1: every N; PLD_OOM_RANK=0:
    the failing rank is rank 0)."""
    tool = ctx.args.pldrun_testing
    victim = int(os.environ.get('PLD_OOM_RANK', '1'))
    pr = []
    if not tool or not os.path.exists(tool):
        return ['pldrun_testing not given (--pldrun-testing)'], ''
    outs = os.path.join(ctx.wd, 'ys.npy')
    n, runs, log = 0, 0, []
    while True:
        argv = [tool, HELLO, '--in', 'xs=arange', '--out', 'ys=' + outs, '--timeout', '20']
        hooked = ['env', 'PLD_TEST_FAIL_ALLOC=%d' % n] + argv
        rc, out, err, dt = mpmd(ctx, [hooked, argv] if victim == 0 else [argv, hooked], timeout=60)
        runs += 1
        log.append('N=%d: exit %d in %.1f s' % (n, rc, dt))
        if rc == 0:
            break
        if rc == 124:
            pr.append('N=%d: the job hung' % n)
        elif not any(l.startswith('[rank %d/%d]' % (victim, P)) for l in err.splitlines()):
            pr.append('N=%d: exit %d but no "[rank %d/%d]" line' % (n, rc, victim, P))
        elif 'memory' not in err:
            pr.append('N=%d: exit %d but the message does not say "memory"' % (n, rc))
        if pr or n > 200000:
            log.append(err)
            break
        n = n + 1 if n < 4 or os.environ.get('PLD_OOM_SWEEP_ALL') else n + 7
    check(pr, rc == 0, 'the sweep did not reach a successful run')
    return pr, '\n'.join(log[-3:]) + '\n(%d runs, last N = %d)' % (runs, n)


class Job:
    """mpirun -n P pldrun ... in the background, its stderr read by a thread."""

    def __init__(self, ctx, program, cli):
        cmd = [ctx.args.mpiexec, ctx.args.numproc_flag, str(P), ctx.args.pldrun, program] + cli
        self.p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                  env=ctx.env, cwd=ctx.wd)
        self.lines = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for raw in self.p.stderr:
            self.lines.append(raw.decode(errors='replace').rstrip('\n'))

    def err(self):
        return '\n'.join(self.lines)

    def rank_pid(self, rank):
        """PID of this job's rank `rank` (a descendant of our mpirun)."""
        for d in os.listdir('/proc'):
            if not d.isdigit():
                continue
            try:
                with open('/proc/%s/environ' % d, 'rb') as f:
                    env = f.read().split(b'\0')
                if ('OMPI_COMM_WORLD_RANK=%d' % rank).encode() not in env:
                    continue
                pid = int(d)
                q = pid
                while q > 1:
                    with open('/proc/%d/stat' % q) as f:
                        q = int(f.read().rsplit(')', 1)[1].split()[1])
                    if q == self.p.pid:
                        return pid
            except (OSError, ValueError, IndexError):
                continue
        return None

    def catches(self, rank, sig):
        pid = self.rank_pid(rank)
        try:
            with open('/proc/%d/status' % pid) as f:
                for l in f:
                    if l.startswith('SigCgt:'):
                        return (int(l.split()[1], 16) >> (int(sig) - 1)) & 1 == 1
        except (OSError, TypeError, ValueError):
            pass
        return False

    def wait_state(self, want, limit=90):
        """Sends SIGUSR1 to mpirun (it forwards it to every rank) until every
        string of `want` is in a "state:" line; returns True when seen."""
        t0 = time.time()
        # mpirun and the ranks end on a SIGUSR1 they do not catch yet: first
        # wait until both ranks have their handlers (SigCgt in /proc)
        while time.time() - t0 < limit and self.p.poll() is None:
            if all(self.catches(r, signal.SIGUSR1) for r in range(P)):
                break
            time.sleep(0.2)
        while time.time() - t0 < limit and self.p.poll() is None:
            self.p.send_signal(signal.SIGUSR1)
            time.sleep(1.0)
            states = [l for l in self.lines if '] state: ' in l]
            if all(any(w in l for l in states) for w in want):
                return True
        return False

    def finish(self, timeout=60):
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = 124
        self.t.join(5)
        return rc


def long_run_job(ctx):
    job = Job(ctx, LONG, ['--in', 'xs=random:1', '--timeout', '300'])
    loop = T.locate(LONG, 'u = pl.load')
    wait = T.locate(LONG, 'pld.system.wait')
    ok = job.wait_state(['[rank 1/%d] state: running step at %s:%d:%d' % (P, LONG, loop[0], loop[1]),
                         '[rank 0/%d] state: waiting on sig[1, 0] (Ge 1) in step at %s:%d:%d' %
                         (P, LONG, wait[0], wait[1])])
    return job, ok, loop, wait


def kill_case(ctx, victim, sig, expect):
    job, ok, loop, wait = long_run_job(ctx)
    pr = []
    check(pr, ok, 'the ranks never reported their state on SIGUSR1 (the loop and the wait)')
    if ok:
        pid = job.rank_pid(victim)
        check(pr, pid is not None, 'rank %d not found' % victim)
        if pid:
            os.kill(pid, sig)
    else:
        job.p.terminate()
    rc = job.finish()
    err = job.err()
    check(pr, rc not in (0, 124), 'exit status %d, expected a failure' % rc)
    want = expect(loop, wait)
    check(pr, any(l.startswith(want) for l in job.lines), 'no line starting %r' % want)
    return pr, err


def case_killed_running(ctx):
    return kill_case(ctx, 0, signal.SIGKILL,
                     lambda loop, wait: '[rank 1/%d] terminated while running step at %s:%d:%d' %
                     (P, LONG, loop[0], loop[1]))


def case_killed_waiting(ctx):
    return kill_case(ctx, 1, signal.SIGKILL,
                     lambda loop, wait: '[rank 0/%d] terminated while waiting on sig[1, 0] (Ge 1) in step at %s:%d:%d; '
                     'found 0' % (P, LONG, wait[0], wait[1]))


def case_crash_report(ctx):
    return kill_case(ctx, 1, signal.SIGSEGV,
                     lambda loop, wait: '[rank 1/%d] crashed (SIGSEGV) while running step at %s:%d:%d' %
                     (P, LONG, loop[0], loop[1]))


def case_stuck_peer(ctx):
    bad_line, bad_col = T.locate(STUCK, 'pl.load(x, [me + 1')
    loop_line, loop_col = T.locate(STUCK, 'u = pl.load(x')
    t0 = time.time()
    rc, out, err = ctx.run(STUCK, ['--in', 'xs=random:1'])
    took = time.time() - t0
    pr = []
    check(pr, rc == 70, 'exit status %d, expected 70' % rc)
    check(pr, took < 30, 'the job took %.0f s to end: a rank waited for the stuck one' % took)
    want = '[rank 0/%d] %s:%d:%d: error: pl.tile.load reads past the end of dimension 0' % (P, STUCK, bad_line, bad_col)
    check(pr, any(l.startswith(want) for l in err.splitlines()), 'no stderr line starts with %r' % want)
    check(pr, 'pldrun: a rank did not stop after the run was aborted; killing the job' in err,
          'pldrun does not say that a rank did not stop')
    where = '[rank 1/%d] terminated while running step at %s:%d:%d' % (P, STUCK, loop_line, loop_col)
    check(pr, where in err, 'rank 1 does not say where it was (%r)' % where)
    return pr, err


def case_state_usr1(ctx):
    job, ok, loop, wait = long_run_job(ctx)
    pr = []
    check(pr, ok, 'the ranks never reported their state on SIGUSR1')
    check(pr, job.p.poll() is None, 'the run did not go on after SIGUSR1')
    job.p.terminate()
    rc = job.finish()
    check(pr, rc not in (0, 124), 'exit status %d after SIGTERM, expected a failure' % rc)
    return pr, job.err()


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
    'rank1_missing_input': case_rank1_missing_input,
    'rank1_missing_program': case_rank1_missing_program,
    'rank1_bad_program': case_rank1_bad_program,
    'rank1_oom': case_rank1_oom,
    'killed_running': case_killed_running,
    'killed_waiting': case_killed_waiting,
    'crash_report': case_crash_report,
    'state_usr1': case_state_usr1,
    'stuck_peer': case_stuck_peer,
    'stack_block': case_stack_block,
}

# the program each case runs (a missing one is an error at --list time too)
PROGRAM_OF = dict([(c, HELLO) for c in ('bad_shape', 'out_unwritable', 'unknown_backend', 'bad_dtype', 'missing_input',
                                        'unknown_param', 'unreadable_file', 'rank1_missing_input',
                                        'rank1_missing_program', 'rank1_bad_program', 'rank1_oom')] +
                  [('rank1_oob', OOB), ('device5', DEV), ('warning_once', WARN), ('stack_block', STACK)] +
                  [('stuck_peer', STUCK)] +
                  [(c, LONG) for c in ('killed_running', 'killed_waiting', 'crash_report', 'state_usr1')])
assert set(PROGRAM_OF) == set(CASES)


class Ctx:
    def __init__(self, args, env, wd):
        self.args, self.env, self.wd = args, env, wd

    def run(self, program, cli):
        return T.run_pldrun(self.args.mpiexec, self.args.numproc_flag, P, self.args.pldrun, program, cli, self.env,
                            self.wd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--pldrun-testing', default='', help='pldrun_testing (for rank1_oom)')
    ap.add_argument('--mpiexec', default='mpirun')
    ap.add_argument('--numproc-flag', default='-n')
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print the case names and exit (tests/mpi.cmake checks '
                                                        'that it registers exactly these)')
    T.add_max_failures(ap)
    args = ap.parse_args()
    if args.list:
        T.require_programs('run_negative.py', sorted(PROGRAM_OF.items()))
        print('\n'.join(CASES))
        return 0
    cases = args.case or list(CASES)
    for c in cases:
        if c not in CASES:
            print('run_negative.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    T.require_programs('run_negative.py', [(c, PROGRAM_OF[c]) for c in cases])
    args.pldrun = os.path.abspath(args.pldrun)
    if args.pldrun_testing:
        args.pldrun_testing = os.path.abspath(args.pldrun_testing)
    workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'mpi_negative'))
    env = T.mpi_env(REPO)
    passed = failed = 0
    ff = T.FailFast(args.max_failures)
    t0 = time.time()
    for c in ff.each(cases):
        wd = os.path.join(workdir, c)
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        t1 = time.time()
        problems, err = CASES[c](Ctx(args, env, wd))
        dt = time.time() - t1
        if problems:
            failed += 1
            ff.fail()
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
