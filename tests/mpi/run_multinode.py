#!/usr/bin/env python3
"""run_multinode.py - pldrun across emulated hosts (CTest label `multinode`,
tests/multinode.cmake).

Every run starts its ranks on 2 emulated hosts with 2 slots each through
scripts/mpx-ci.sh (network namespaces on a private bridge, one UTS and mount
namespace per host; shared/docs/multinode.md):

  mpx-ci.sh -n 2 -s 2 -t 60 -- -np P --map-by node --display-map \
      [-x ASAN_OPTIONS] pldrun PROGRAM --window-transport T ...

--map-by node deals the ranks out round robin: rank r runs on host r mod 2,
so P = 2 is 1 + 1 ranks, P = 3 is 2 + 1 and P = 4 is 2 + 2 (one and two ranks
per host), and every pair of neighbours (r, r + 1) crosses hosts. The job map
mpirun prints is checked for exactly that split. Window traffic between hosts
then goes through osc pt2pt over btl tcp, where a wait loop that does not
enter MPI deadlocks.

Three kinds of cases:

  tutorial  the tier-1/2 programs of programs/tutorial at P = 4 (PROGS below),
            --window-transport rma and auto. Inputs are .npy files from a
            deterministic generator (pld_mpitest.Rng), values k/8 in
            [-64, 64): every sum the programs form is exact in FP32, so the
            goldens (computed here from each program's `# expect:` line) do
            not depend on the order of atomic adds. One negative case,
            `barrier_handrolled shm`, checks that pldrun itself sees two
            nodes: it must stop with exit 70 and "needs every domain member on
            one node".
  coll      every collective program of run_coll.py (tests/mpi/run_coll.py)
            that this runner selects (coll_cases: the corpus_* cases of
            programs/{host,incore,chip} with their `_keep3` variants, three
            dispatches over kept windows, and the coll_* / deferred_* programs
            of tests/mpi/programs) at P = 2, 3 and 4 (the case's ranks,
            run_coll.REWRITE_RANKS applied), --window-transport auto by
            default. run_coll.run_case itself runs them, with the launch
            replaced by mpx-ci.sh: same inputs, same bit-exact goldens, same
            signal-zero and diagnostic checks as on one host.
  neg       run_coll.py's neg_mismatch, neg_divergent_wait and neg_a2av_skip
            (ranks calling different collectives, a rank-divergent wait, a
            rank skipping an all_to_all_v whose rows cross hosts as
            messages) through
            run_coll.run_neg: the hang must be stopped and reported (exit 70,
            the blocked wait named) within NEG's time limit, across hosts too.

Checks of every positive run: pldrun exits 0, nothing on stderr matches
"error" or "warning" (case-insensitive; only a case's expected warning, e.g.
the clamped send counts of the a2av programs, and Open MPI's own launcher
notices, pld_mpitest.launcher_notice, such as the rsh launcher's "plm:rsh:
Warning: setpgid(...) failed in parent" on a loaded machine; a failure names
the first offending line), the outputs equal the goldens
exactly, and pldrun's summary line says "windows over X" where X is the
transport given, or for `auto` WINDOWS_OVER (option --windows-over): auto
resolves to hybrid as soon as a domain spans hosts (shm for a domain within
one host may appear beside it). X is never shm alone, which cannot span
hosts (had auto chosen it, MPI_Win_allocate_shared would fail).

Skips (exit 77, the CTest SKIP_RETURN_CODE, with the reason): not root, no
`ip netns`, no veth/bridge/namespaces (mpx-ci.sh --check), or already inside
mpx-ci.sh. In CI (environment CI=true) each of these is a failure instead
(exit 1, "FAIL: ... (CI=true: ...)"): CI must run the multinode tests.

usage:
  run_multinode.py --pldrun PATH [--mpx scripts/mpx-ci.sh] [--mpiexec mpirun]
                   [--case NAME] [--ranks P] [--transport T]
                   [--windows-over X] [--workdir DIR] [--list]

--case takes a tutorial program name (put_get), a run_coll.py case name
(corpus_host_barrier) or a negative case (neg_mismatch); --ranks (2, 3, 4)
narrows the P of coll and neg cases. --transport filters the tutorial tests
and replaces auto for the coll and neg cases (shm left out there: it cannot
span hosts), e.g. `--transport auto --transport NEW`. --list prints one line
per CTest test: "KIND CASE TRANSPORT RUNS" (RUNS: the mpx-ci.sh runs the test
makes). Prints one line per run and "N passed, M failed"; exit status 0 when
nothing failed, 77 when the emulation cannot run here (1 in CI). Every run leaves its
command's stdout and stderr in WORKDIR/<case>.../{stdout,stderr}.txt.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pld_mpitest as T  # noqa: E402
from pld_mpitest import f32  # noqa: E402
import run_coll  # noqa: E402  (goldens shared with the one-node runner)
from run_golden import Tensor, compare, rand_tensor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
TUTORIAL = os.path.join(REPO, 'programs', 'tutorial')
SKIP = 77
HOSTS, SLOTS = 2, 2
P = HOSTS * SLOTS    # the tutorial cases' rank count (2 + 2)
# Nested limits of one run, so that a hang is stopped and the namespaces are
# torn down before CTest's TIMEOUT (120 s per run of the test) kills anything:
# lock wait + job + KILL grace + teardown = 30 + 60 + 10 + 4 < RUN_TIMEOUT.
LOCK_WAIT = 30       # MPX_LOCK_WAIT: another mpx-ci.sh run with the same prefix
MPX_TIMEOUT = 60     # mpx-ci.sh -t: SIGTERM to mpirun, SIGKILL 10 s later
PLD_TIMEOUT = 20     # pldrun's hang watchdog (tutorial cases; run_coll.py
                     # gives its positive runs 30 s and its negative ones 5 s)
RUN_TIMEOUT = 108    # this script's own limit: then SIGTERM to mpx-ci.sh

# What `--window-transport auto` must resolve to when the domains span hosts
# (pldrun's summary: "windows over X"); --windows-over overrides it. auto
# uses hybrid for a domain as soon as one member is on another host
# (docs/transport.md), shm for the domains within one host.
WINDOWS_OVER = 'hybrid'

# The collective cases (kind `coll`): run_coll.py's cases of these programs,
# at the P of COLL_RANKS that the case runs at (run_coll.case_ranks). The
# `_lowered` variants are left out: run_coll.py runs them over shm only.
# The _specials cases (IEEE specials in the inputs: NaN payloads that make
# ranks 0 and 1 differ) also compare every output bit for bit with a run of
# the same inputs over shm on this one host (run_coll.same_bits, LocalLaunch).
COLL_PROGRAMS = ('chip_a2av', 'host_a2av', 'host_allreduce', 'host_misc', 'host_ring',
                 'incore_a2av', 'incore_allreduce', 'incore_misc', 'incore_ring',
                 'incore_allreduce_specials', 'host_allreduce_specials')
COLL_PREFIXES = ('corpus_', 'deferred_')
COLL_RANKS = (2, 3, 4)          # 1 + 1, 2 + 1 and 2 + 2 ranks on the 2 hosts
COLL_TRANSPORTS = ('auto',)
# The negative cases (kind `neg`), at the P of run_coll.NEG in COLL_RANKS,
# with run_coll.NEG's patterns and time limits. NEG_LIMIT would hold a longer
# limit for a case that needs one across hosts (with the reason). None does:
# across hosts the runs took 3.6-5.3 s (mpx-ci.sh setup and teardown and
# mpirun ending the failed job included) against NEG's 20 s.
NEG_CASES = ('neg_mismatch', 'neg_divergent_wait', 'neg_a2av_skip')
NEG_LIMIT = {}


def rand_rows(rng, shape):
    """FP32 values k/8 in [-64, 64): sums of up to 2^10 of them are exact."""
    return rand_tensor(rng, 'FP32', shape, -64.0, 64.0, step=0.125)


# ---------------------------------------------------------------- programs
# name -> (inputs(rng) -> {name: Tensor}, golden(inputs) -> {name: Tensor})

def barrier_inputs(rng):
    return {}


def barrier_golden(inp):
    # tallies[r][i, 0] = 1 for i != r, 0 for i == r
    t = Tensor('INT32', (P, P, 1))
    for r in range(P):
        for i in range(P):
            t.set(0 if i == r else 1, r, i, 0)
    return {'tallies': t}


def rls_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 64))}


def rls_golden(inp):
    # pulled[r] = xs[(r + 1) % P]; pushed[r] = xs[(r - 1) % P]
    xs = inp['xs']
    pulled, pushed = Tensor('FP32', (P, 1, 64)), Tensor('FP32', (P, 1, 64))
    for r in range(P):
        for j in range(64):
            pulled.set(xs.get((r + 1) % P, 0, j), r, 0, j)
            pushed.set(xs.get((r - 1) % P, 0, j), r, 0, j)
    return {'pulled': pulled, 'pushed': pushed}


def put_get_inputs(rng):
    return {'xs': rand_rows(rng, (P, 4, 32))}


def put_get_golden(inp):
    # firsts[r] = xs[(r + 1) % P]; seconds[r] rows 0..1 = sum over p of xs[p]
    # rows 0..1, rows 2..3 = xs[(r - 1) % P] rows 2..3, rows 4..7 = xs[(r - 1) % P]
    xs = inp['xs']
    firsts, seconds = Tensor('FP32', (P, 4, 32)), Tensor('FP32', (P, 8, 32))
    for r in range(P):
        nxt, prv = (r + 1) % P, (r - 1) % P
        for i in range(4):
            for j in range(32):
                firsts.set(xs.get(nxt, i, j), r, i, j)
                seconds.set(xs.get(prv, i, j), r, 4 + i, j)
                if i < 2:
                    s = 0.0
                    for p in range(P):
                        s = f32(s + xs.get(p, i, j))
                    seconds.set(s, r, i, j)
                else:
                    seconds.set(xs.get(prv, i, j), r, i, j)
    return {'firsts': firsts, 'seconds': seconds}


def allreduce_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 128))}


def ring_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 96))}  # SIZE = BLOCK * NBLK = 8 * 12


def allreduce_golden(inp):
    # outs[r] = sum over p of xs[p] (exact: any fold order gives these values)
    xs = inp['xs']
    cols = xs.shape[2]
    outs = Tensor('FP32', (P, 1, cols))
    for j in range(cols):
        s = 0.0
        for p in range(P):
            s = f32(s + xs.get(p, 0, j))
        for r in range(P):
            outs.set(s, r, 0, j)
    return {'outs': outs}


def drc_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 32))}


def drc_golden(inp):
    # boards[r][j] = xs[j] for j in 0..P-1 on every rank; counts[r][0, 0] = P
    xs = inp['xs']
    boards, counts = Tensor('FP32', (P, P, 32)), Tensor('INT32', (P, 1, 1))
    for r in range(P):
        for j in range(P):
            for c in range(32):
                boards.set(xs.get(j, 0, c), r, j, c)
        counts.set(P, r, 0, 0)
    return {'boards': boards, 'counts': counts}


def wb_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 128))}


def wb_golden(inp):
    # ys[r] = 2 * xs[r] (back + t, FP32); zs[r] = xs[r]
    xs = inp['xs']
    ys, zs = Tensor('FP32', (P, 1, 128)), Tensor('FP32', (P, 1, 128))
    for r in range(P):
        for j in range(128):
            x = xs.get(r, 0, j)
            ys.set(f32(x + x), r, 0, j)
            zs.set(x, r, 0, j)
    return {'ys': ys, 'zs': zs}


def coll_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 32)), 'chunks': rand_rows(rng, (P, 1, P * 32)),
            'parts': rand_rows(rng, (P, P, 32))}


def coll_golden(inp):
    # bouts[r] = xs[1]; gouts[r] = xs[0] | xs[1] | ... ; routs[r] = sum over p
    # of chunks[p] columns 32r .. 32r+31 (exact: any order); aouts[r][s] =
    # parts[s][r]; credits[r] = 0
    xs, chunks, parts = inp['xs'], inp['chunks'], inp['parts']
    b, g = Tensor('FP32', (P, 1, 32)), Tensor('FP32', (P, 1, P * 32))
    rs, a = Tensor('FP32', (P, 1, 32)), Tensor('FP32', (P, P, 32))
    for r in range(P):
        b.set_row(xs.row(1, 0), r, 0)
        g.set_row(sum((xs.row(j, 0) for j in range(P)), []), r, 0)
        acc = [0.0] * 32
        for p in range(P):
            acc = [f32(u + v) for u, v in zip(acc, chunks.row(p, 0)[32 * r:32 * r + 32])]
        rs.set_row(acc, r, 0)
        for q in range(P):
            a.set_row(parts.row(q, r), r, q)
    return {'bouts': b, 'gouts': g, 'routs': rs, 'aouts': a, 'credits': Tensor('INT32', (P, 1, 1))}


def mg_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 64))}


def from_coll(golden, outs):
    """A golden of run_coll.py (golden(ins, P, outs)) for this runner's P."""
    return lambda inp: golden(inp, P, outs)


def push_inputs(rng):
    return {'xs': rand_rows(rng, (P, 1, 64)), 'ks': rand_rows(rng, (P, 1, 64))}


def push_golden(inp):
    # halves[r] = xs[r-1]; doubled[r] = 2 * xs[r-1]; sums[0] = sum over p of
    # ks[p] (exact), sums[r > 0] = 0
    xs, ks = inp['xs'], inp['ks']
    h, d, sm = Tensor('FP32', (P, 1, 64)), Tensor('FP32', (P, 1, 64)), Tensor('FP32', (P, 1, 64))
    for r in range(P):
        h.set_row(xs.row((r - 1) % P, 0), r, 0)
        d.set_row([f32(v + v) for v in xs.row((r - 1) % P, 0)], r, 0)
    acc = [0.0] * 64
    for p in range(P):
        acc = [f32(a + b) for a, b in zip(acc, ks.row(p, 0))]
    sm.set_row(acc, 0, 0)
    return {'halves': h, 'doubled': d, 'sums': sm}


def dc_inputs(rng):
    return {'inp': Tensor('INT32', (P, 1, 8), [rng.randint(-1000, 1000) for _ in range(P * 8)])}


def raw_bf16_inputs(rng):
    # random BF16 values, kept as raw bits like run_coll.py does
    return {'srcs': Tensor('BF16', (P, P, 64), run_coll.generate('random:%d' % rng.randint(1, 1 << 30), 'BF16',
                                                                 P * P * 64))}


PROGS = {
    'barrier_handrolled': (barrier_inputs, barrier_golden),
    'remote_load_store': (rls_inputs, rls_golden),
    'put_get': (put_get_inputs, put_get_golden),
    'allreduce_mesh_handrolled': (allreduce_inputs, allreduce_golden),
    'allreduce_ring_handrolled': (ring_inputs, allreduce_golden),
    'collectives_handrolled': (coll_inputs, coll_golden),
    'multi_group': (mg_inputs, from_coll(run_coll.g_multi_group,
                                         {k: (dt, (P, 1, n)) for k, dt, n in
                                          (('outs_a', 'FP32', 64), ('outs_b', 'FP32', 64),
                                           ('ids_a', 'INT32', 2), ('ids_b', 'INT32', 2))})),
    'push_variants': (push_inputs, push_golden),
    'dynamic_rank_count': (drc_inputs, drc_golden),
    'window_buffer': (wb_inputs, wb_golden),
    'remote_store_raw_bf16': (raw_bf16_inputs, from_coll(run_coll.g_remote_store_raw_bf16,
                                                          {'outs': ('BF16', (P, P, 64))})),
    'deferred_completion': (dc_inputs, from_coll(run_coll.g_deferred_completion(1),
                                                 {'outs': ('INT32', (P, 16, 8)), 'epochs': ('INT32', (P, 1, 1))})),
}
TRANSPORTS = ('rma', 'auto')
NEGATIVE = [('barrier_handrolled', 'shm')]  # shm across hosts must be refused


def coll_cases():
    """run_coll.py's positive cases that run across hosts (kind `coll`)."""
    out = []
    for case, (path, _, _) in run_coll.CASES.items():
        if case.endswith('_lowered'):
            continue
        if case in COLL_PROGRAMS or case.startswith(COLL_PREFIXES):
            out.append(case)
    return out


def coll_ranks(case):
    """The P a coll or neg case runs at here."""
    ranks = run_coll.NEG[case][1] if case in run_coll.NEG else run_coll.case_ranks(case)
    return [n for n in ranks if n in COLL_RANKS]


def kind_of(case):
    if case in PROGS:
        return 'tutorial'
    if case in run_coll.NEG:
        return 'neg'
    if case in run_coll.CASES:
        return 'coll'
    return None


def tests():
    """(kind, case, transport) of every CTest test."""
    # a missing program is an error (exit 2: configure fails), never a test left out
    T.require_programs('run_multinode.py', [(c, os.path.join(TUTORIAL, c + '.pld')) for c in PROGS] +
                       [(c, run_coll.CASES[c][0]) for c in run_coll.CASES if not c.endswith('_lowered')])
    out = [('tutorial', c, t) for c in PROGS for t in TRANSPORTS]
    out += [('tutorial', c, t) for c, t in NEGATIVE]
    out += [('coll', c, t) for c in coll_cases() for t in COLL_TRANSPORTS if coll_ranks(c)]
    out += [('neg', c, t) for c in NEG_CASES for t in COLL_TRANSPORTS if coll_ranks(c)]
    return out


# the kinds' case names must not collide (--case takes all of them)
assert not set(PROGS) & (set(run_coll.CASES) | set(run_coll.NEG))


# ---------------------------------------------------------------- running

def in_ci():
    """CI=true (also 1 or yes; GitHub Actions and GitLab CI set it, .ci/run
    sets it when unset): a multinode test that cannot run there fails."""
    return os.environ.get('CI', '').strip().lower() in ('true', '1', 'yes')


def skip(why):
    """Exits 77 (CTest: skipped) with the reason; in CI (in_ci) exits 1 with
    the reason instead: there a skipped multinode test would leave the
    cross-host path untested behind a green run."""
    if in_ci():
        print('FAIL: multinode tests need the emulated cluster of scripts/mpx-ci.sh: %s '
              '(CI=true: a multinode test that cannot create its hosts fails instead of skipping)' % why)
        sys.stdout.flush()
        sys.exit(1)
    print('SKIP: multinode tests need the emulated cluster of scripts/mpx-ci.sh: %s' % why)
    sys.stdout.flush()
    sys.exit(SKIP)


def preflight(mpx, env):
    """Exits 77 (skip; in CI exit 1) with the reason when the emulation
    cannot run here."""
    if env.get('MPX_CI_ACTIVE'):
        skip('already inside mpx-ci.sh (MPX_CI_ACTIVE is set): the emulation does not nest')
    if not hasattr(os, 'geteuid') or os.geteuid() != 0:
        skip('not root (uid %s): network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN'
             % (os.geteuid() if hasattr(os, 'geteuid') else '?'))
    if not shutil.which('ip'):
        skip("'ip' (iproute2) is not installed, so `ip netns` is unavailable")
    try:
        p = subprocess.run(['ip', 'netns', 'list'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.SubprocessError) as e:
        skip('`ip netns list` failed: %s' % e)
    if p.returncode != 0:
        skip('`ip netns` is unavailable: %s' % p.stderr.decode(errors='replace').strip())
    try:
        p = subprocess.run(['bash', mpx, '--check'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, env=env, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        skip('mpx-ci.sh --check could not run: %s' % e)
    if p.returncode == SKIP:
        skip(p.stdout.decode(errors='replace').strip())
    if p.returncode != 0:
        print('mpx-ci.sh --check failed (exit %d):\n%s' % (p.returncode, p.stdout.decode(errors='replace')))
        sys.exit(1)


def run_mpx(cmd, env, cwd):
    """Runs mpx-ci.sh; on this script's own time limit, SIGTERM (mpx-ci.sh
    then tears the namespaces down), SIGKILL 15 s later."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         env=env, cwd=cwd)
    try:
        out, err = p.communicate(timeout=RUN_TIMEOUT)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        rc = 124
        err = (err or b'') + b'\n(run_multinode.py: timed out after %d s)' % RUN_TIMEOUT
    return rc, out.decode(errors='replace'), err.decode(errors='replace')


class MpxLaunch:
    """A launch for run_coll.run_case / run_neg (run_coll.mpirun_launch's
    signature): the same pldrun command on HOSTS emulated hosts with SLOTS
    slots each, `--map-by node`. Returns pldrun's stderr without mpx-ci.sh's
    own lines; keeps the whole run in .last for this runner's checks. The
    time limits are this runner's nested ones (LOCK_WAIT, MPX_TIMEOUT,
    RUN_TIMEOUT), not the caller's one-host timeout."""

    def __init__(self, args):
        self.args = args
        self.last = None

    def __call__(self, nranks, prog, cli, env, cwd, timeout=None):
        mpirun = ['-np', str(nranks), '--map-by', 'node', '--display-map']
        if env.get('ASAN_OPTIONS'):  # ranks on other hosts get only what -x forwards
            mpirun += ['-x', 'ASAN_OPTIONS']
        cmd = ['bash', self.args.mpx, '-n', str(HOSTS), '-s', str(SLOTS), '-t', str(MPX_TIMEOUT), '--'] + \
            mpirun + [self.args.pldrun, prog] + list(cli)
        env = dict(env, MPX_LOCK_WAIT=str(LOCK_WAIT))
        if self.args.mpiexec:
            env['MPX_MPIRUN'] = self.args.mpiexec
        rc, out, err = run_mpx(cmd, env, cwd)
        for name, text in (('stdout.txt', out), ('stderr.txt', err)):
            with open(os.path.join(cwd, name), 'w') as f:
                f.write(text)
        pld_err = '\n'.join(l for l in err.splitlines() if not l.startswith('mpx-ci: '))
        timing = [l[len('mpx-ci: '):] for l in err.splitlines() if l.startswith('mpx-ci: ')]
        self.last = {'cmd': cmd, 'rc': rc, 'out': out, 'err': err, 'pld_err': pld_err, 'timing': timing,
                     'nranks': nranks}
        return rc, out, pld_err


class LocalLaunch:
    """run_coll.mpirun_launch on this host, outside the emulation: the
    reference run of a _specials case over shm. Its environment is
    scripts/mpi_env.sh's (the one-host settings; the emulated runs get
    theirs from mpx-ci.sh) plus the caller's PLD_* and ASAN_OPTIONS."""

    def __init__(self, args):
        self.args = args

    def __call__(self, nranks, prog, cli, env, cwd, timeout=100):
        lenv = T.mpi_env(REPO)
        lenv.update({k: v for k, v in env.items() if k.startswith('PLD_') or k == 'ASAN_OPTIONS'})
        return T.run_pldrun(self.args.mpiexec or 'mpirun', '-n', nranks, self.args.pldrun, prog, cli, lenv, cwd,
                            timeout=timeout)


def job_map(out):
    """{rank: host} from mpirun's --display-map output."""
    ranks, node = {}, None
    for line in out.splitlines():
        m = re.search(r'Data for node: (\S+)', line)
        if m:
            node = m.group(1)
            continue
        m = re.search(r'Process rank: (\d+)', line)
        if m and node:
            ranks[int(m.group(1))] = node
    return ranks


def check_map(out, nranks):
    """Problems with the job map of a run of nranks ranks: every rank on
    one of HOSTS hosts, all hosts used, rank r on the host of rank r mod
    HOSTS (--map-by node: round robin), so that neighbours cross hosts and
    the split is 1+1, 2+1, 2+2 for P = 2, 3, 4. Returns (problems, split)."""
    ranks = job_map(out)
    if sorted(ranks) != list(range(nranks)):
        return ['job map: ranks %r, expected 0..%d (no --display-map output?)' % (sorted(ranks), nranks - 1)], '?'
    hosts = sorted(set(ranks.values()))
    if len(hosts) != min(HOSTS, nranks):
        return ['job map: ranks on %d hosts %r, expected %d' % (len(hosts), hosts, min(HOSTS, nranks))], '?'
    problems = []
    for r in range(nranks):
        if ranks[r] != ranks[r % HOSTS]:
            problems.append('job map: rank %d is on %s, expected %s with rank %d (--map-by node)'
                            % (r, ranks[r], ranks[r % HOSTS], r % HOSTS))
    order = sorted(hosts, key=lambda h: min(r for r in ranks if ranks[r] == h))
    split = '+'.join(str(sum(1 for r in ranks if ranks[r] == h)) for h in order)
    return problems, split


def check_windows_over(out, want):
    """pldrun's summary names the transports of the run's domains: exactly
    `want`; for hybrid, hybrid and possibly shm (a domain whose members share
    a host is plain shm), never shm alone."""
    m = re.search(r'windows over ([a-z+]+)', out)
    got = set(m.group(1).split('+')) if m else set()
    ok = 'hybrid' in got and got <= {'hybrid', 'shm'} if want == 'hybrid' else got == {want}
    if not ok:
        return ['summary line does not say "windows over %s" (found %r)' % (want, m.group(0) if m else None)]
    return []


def stray_diagnostics(err, allowed=None):
    """Lines of pldrun's stderr that mention an error or a warning (any case),
    besides the expected warning (a substring of its line) and Open MPI's own
    launcher notices (pld_mpitest.launcher_notice: e.g. the rsh launcher's
    "plm:rsh: Warning: setpgid(...) failed in parent", which a loaded machine
    produces). An expected warning never excuses an error line."""
    bad = set(T.unexpected_lines(err, r'(?i)error')) | set(T.unexpected_lines(err, r'(?i)warning', allowed))
    return [line for line in err.splitlines() if line in bad]


def expected_over(tr, args):
    return args.windows_over if tr == 'auto' else tr


def run_tutorial(case, tr, args, env):
    """One tutorial program at P = 4; returns (problems, launch)."""
    make_inputs, golden = PROGS[case]
    path = os.path.join(TUTORIAL, case + '.pld')
    wd = os.path.join(args.workdir, '%s.%s' % (case, tr))
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    seed = sum(ord(c) for c in case) * 10 + P
    inputs = make_inputs(T.Rng(seed))
    cli = ['--window-transport', tr, '--timeout', str(PLD_TIMEOUT)]
    for name, t in sorted(inputs.items()):
        f = os.path.join(wd, 'in_%s.npy' % name)
        T.write_npy(f, t.dtype, t.shape, t.values)
        cli += ['--in', '%s=%s' % (name, f)]
    want = golden(inputs)
    for name in sorted(want):
        cli += ['--out', '%s=%s' % (name, os.path.join(wd, 'out_%s.npy' % name))]
    launch = MpxLaunch(args)
    rc, out, err = launch(P, path, cli, env, wd)
    problems = []
    if tr == 'shm':  # refused: the ranks are on two nodes
        if rc != 70:
            problems.append('exit status %d, expected 70 (shm refused across nodes)' % rc)
        if 'needs every domain member on one node' not in err:
            problems.append('no "needs every domain member on one node" diagnostic')
    else:
        if rc != 0:
            problems.append('exit status %d, expected 0' % rc)
        stray = stray_diagnostics(err)
        if stray:
            problems.append('diagnostics on stderr (%d line%s), first: %s'
                            % (len(stray), '' if len(stray) == 1 else 's', stray[0].strip()))
        if rc == 0:
            problems += check_windows_over(out, expected_over(tr, args))
            for name in sorted(want):
                try:
                    got = T.read_npy(os.path.join(wd, 'out_%s.npy' % name))
                except (OSError, ValueError) as e:
                    problems.append('cannot read output %s: %s' % (name, e))
                    continue
                problems += compare(name, got, want[name])
    return problems, launch


def run_collective(case, nranks, tr, args, env):
    """One run_coll.py case (positive or negative) at nranks across hosts;
    returns (problems, launch)."""
    launch = MpxLaunch(args)
    if case in run_coll.NEG:
        problems, _, _, _, _ = run_coll.run_neg(case, nranks, tr, args, env, launch=launch,
                                                limit=NEG_LIMIT.get(case))
        return problems, launch
    problems, _, _, err, rc = run_coll.run_case(case, nranks, tr, args, env, launch=launch,
                                                ref_launch=LocalLaunch(args))
    warn = run_coll.CASES[case][2]
    stray = stray_diagnostics(err, warn)
    if stray:
        problems.append('diagnostics on stderr besides %s: %s'
                        % ('the expected warning' if warn else 'none expected', stray[0].strip()))
    if rc == 0:
        problems += check_windows_over(launch.last['out'], expected_over(tr, args))
    return problems, launch


def runs_of(kind, case, tr, ranks=None):
    """[(kind, case, transport, P)] of one test."""
    if kind == 'tutorial':
        return [(kind, case, tr, P)]
    return [(kind, case, tr, n) for n in coll_ranks(case) if not ranks or n in ranks]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--mpx', default=os.path.join(REPO, 'scripts', 'mpx-ci.sh'))
    ap.add_argument('--mpiexec', default=None, help='mpirun to use (MPX_MPIRUN); default: mpirun on PATH')
    ap.add_argument('--case', action='append',
                    help='tutorial program, run_coll.py case or negative case (repeatable); default: all')
    ap.add_argument('--ranks', type=int, action='append', choices=COLL_RANKS,
                    help='P of the coll and neg cases (repeatable); default: the case\'s ranks in 2, 3, 4')
    ap.add_argument('--transport', action='append',
                    help='--window-transport of the runs (repeatable); default: rma and auto for the tutorial '
                         'cases (and the shm refusal), auto for the collective ones (without --case: filters '
                         'the tutorial tests, replaces auto for the collective ones, shm left out)')
    ap.add_argument('--windows-over', default=WINDOWS_OVER,
                    help='what the summary must say for auto ("windows over X"; default %s)' % WINDOWS_OVER)
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print "KIND CASE TRANSPORT RUNS" per test and exit')
    args = ap.parse_args()
    if args.list:
        print('\n'.join('%s %s %s %d' % (k, c, t, len(runs_of(k, c, t))) for k, c, t in tests()))
        return 0
    for c in args.case or []:
        if not kind_of(c):
            print('run_multinode.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    for t in args.transport or []:
        if not re.match(r'^[a-z][a-z0-9_-]*$', t):
            print('run_multinode.py: bad transport name %r' % t, file=sys.stderr)
            return 2
    if args.windows_over == 'shm':
        print('run_multinode.py: --windows-over shm: shm cannot span hosts', file=sys.stderr)
        return 2
    # --transport filters the tutorial tests (rma, auto, the shm refusal) and
    # replaces auto for the collective ones (shm cannot span hosts: left out)
    todo = []
    for k, c, t in tests():
        if args.case and c not in args.case:
            continue
        if not args.transport:
            todo.append((k, c, t))
        elif k == 'tutorial' and t in args.transport:
            todo.append((k, c, t))
        elif k != 'tutorial' and t == COLL_TRANSPORTS[0]:
            todo += [(k, c, tr) for tr in args.transport if tr != 'shm']
    if args.case and args.transport:  # explicit request, e.g. a case over another transport
        todo = [(kind_of(c), c, t) for c in args.case for t in args.transport]
    runs = [r for k, c, t in todo for r in runs_of(k, c, t, args.ranks)]
    if not runs:
        print('run_multinode.py: nothing to run (a case runs only at its own P; see --list)', file=sys.stderr)
        return 2
    args.pldrun = os.path.abspath(args.pldrun)
    args.mpx = os.path.abspath(args.mpx)
    if not args.workdir:
        args.workdir = os.path.join(os.getcwd(), 'multinode_runs')
    args.workdir = os.path.abspath(args.workdir)
    env = dict(os.environ)
    asan = env.get('ASAN_OPTIONS', '')
    if 'detect_leaks' not in asan:  # Open MPI leaks under ASan; ours are caught elsewhere
        env['ASAN_OPTIONS'] = (asan + ':' if asan else '') + 'detect_leaks=0'
    preflight(args.mpx, env)
    passed = failed = 0
    t0 = time.time()
    for kind, case, tr, nranks in runs:
        t1 = time.time()
        if kind == 'tutorial':
            problems, launch = run_tutorial(case, tr, args, env)
        else:
            problems, launch = run_collective(case, nranks, tr, args, env)
        last = launch.last
        if last is None:  # run_coll.py stopped before the launch (e.g. no lowered text)
            problems = problems or ['nothing was launched']
            last = {'out': '', 'err': '', 'timing': [], 'cmd': []}
        mp, split = check_map(last['out'], nranks)
        problems = mp + problems
        dt = time.time() - t1
        title = '%s %s P=%d %s' % (kind, case, nranks, tr)
        if problems:
            failed += 1
            print('FAIL: %s (%.2f s)' % (title, dt))
            for p in problems:
                print('    ' + p)
            print('    command: %s' % ' '.join(last['cmd']))
            if last['err'].strip():
                print('    stderr:\n' + '\n'.join('      ' + l for l in last['err'].strip().splitlines()[:60]))
        else:
            passed += 1
            print('ok:   %s on %d hosts (%s) (%.2f s; %s)' % (title, HOSTS, split, dt, '; '.join(last['timing'])))
        sys.stdout.flush()
    print('total time %.1f s' % (time.time() - t0))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
