#!/usr/bin/env python3
"""run_multinode.py - tier-1/2 programs across emulated hosts (CTest label
`multinode`, tests/multinode.cmake).

Every case runs one program of programs/tutorial on 2 emulated hosts x 2 ranks
through scripts/mpx-ci.sh (network namespaces on a private bridge, one UTS and
mount namespace per host; shared/docs/multinode.md):

  mpx-ci.sh -n 2 -s 2 -- -np 4 --map-by node --display-map \\
      pldrun PROGRAM --window-transport T --timeout 20 --in ... --out ...

--map-by node puts ranks 0 and 2 on host 1 and ranks 1 and 3 on host 2, so
every pair of neighbours (r, r + 1) crosses hosts; the job map mpirun prints
is checked for exactly that. Window traffic then goes through osc pt2pt over
btl tcp, where a wait loop that does not enter MPI deadlocks.

  1. inputs: .npy files from a deterministic generator (pld_mpitest.Rng),
     values k/8 in [-64, 64): every sum the programs form is exact in FP32,
     so the goldens do not depend on the order of atomic adds;
  2. the goldens are computed here from each program's `# expect:` line;
  3. outputs are compared exactly (run_golden.compare); pldrun must exit 0
     and print nothing with "error" or "warning" on stderr.

Transports: `rma`, and `auto`, which must choose rma for these domains
because their members are on different nodes (had it chosen shm,
MPI_Win_allocate_shared would fail across hosts). One negative case,
`barrier_handrolled shm`, checks that pldrun itself sees two nodes: it must
stop with exit 70 and "needs every domain member on one node".

Skips (exit 77, the CTest SKIP_RETURN_CODE, with the reason): not root, no
`ip netns`, no veth/bridge/namespaces (mpx-ci.sh --check), or already inside
mpx-ci.sh.

usage:
  run_multinode.py --pldrun PATH --mpx scripts/mpx-ci.sh [--mpiexec mpirun]
                   [--case NAME] [--transport rma|auto|shm] [--workdir DIR]
                   [--list]

--list prints one line per CTest test: "CASE TRANSPORT". Prints one line per
run and "N passed, M failed"; exit status 0 when nothing failed, 77 when the
emulation cannot run here.
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
P = HOSTS * SLOTS
# Nested limits, so that a hang is stopped and the namespaces are torn down
# before CTest's TIMEOUT (120 s) kills anything: lock wait + job + KILL grace +
# teardown = 30 + 60 + 10 + 4 < RUN_TIMEOUT.
LOCK_WAIT = 30       # MPX_LOCK_WAIT: another mpx-ci.sh run with the same prefix
MPX_TIMEOUT = 60     # mpx-ci.sh -t: SIGTERM to mpirun, SIGKILL 10 s later
PLD_TIMEOUT = 20     # pldrun's hang watchdog
RUN_TIMEOUT = 108    # this script's own limit: then SIGTERM to mpx-ci.sh


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


def tests():
    out = [(c, t) for c in PROGS for t in TRANSPORTS]
    return out + NEGATIVE


# ---------------------------------------------------------------- running

def skip(why):
    print('SKIP: multinode tests need the emulated cluster of scripts/mpx-ci.sh: %s' % why)
    sys.stdout.flush()
    sys.exit(SKIP)


def preflight(mpx, env):
    """Exits 77 (skip) with the reason when the emulation cannot run here."""
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


def check_map(out):
    problems = []
    ranks = job_map(out)
    if sorted(ranks) != list(range(P)):
        return ['job map: ranks %r, expected 0..%d (no --display-map output?)' % (sorted(ranks), P - 1)]
    hosts = sorted(set(ranks.values()))
    if len(hosts) != HOSTS:
        problems.append('job map: ranks on %d hosts %r, expected %d' % (len(hosts), hosts, HOSTS))
    for r in range(P):
        if ranks[r] == ranks[(r + 1) % P]:
            problems.append('job map: neighbours %d and %d are both on %s' % (r, (r + 1) % P, ranks[r]))
    return problems


def run_case(case, tr, args, env):
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
    mpirun = ['-np', str(P), '--map-by', 'node', '--display-map']
    if env.get('ASAN_OPTIONS'):  # ranks on other hosts get only what -x forwards
        mpirun += ['-x', 'ASAN_OPTIONS']
    cmd = ['bash', args.mpx, '-n', str(HOSTS), '-s', str(SLOTS), '-t', str(MPX_TIMEOUT), '--'] + mpirun + \
          [args.pldrun, path] + cli
    env = dict(env, MPX_LOCK_WAIT=str(LOCK_WAIT))
    if args.mpiexec:
        env['MPX_MPIRUN'] = args.mpiexec
    rc, out, err = run_mpx(cmd, env, wd)
    problems = check_map(out)
    pld_err = '\n'.join(l for l in err.splitlines() if not l.startswith('mpx-ci: '))
    if tr == 'shm':  # refused: the ranks are on two nodes
        if rc != 70:
            problems.append('exit status %d, expected 70 (shm refused across nodes)' % rc)
        if 'needs every domain member on one node' not in err:
            problems.append('no "needs every domain member on one node" diagnostic')
    else:
        if rc != 0:
            problems.append('exit status %d, expected 0' % rc)
        if re.search(r'error|warning', pld_err, re.IGNORECASE):
            problems.append('diagnostics on stderr')
        if rc == 0:
            # pldrun's summary names the transports its windows used: across
            # hosts, auto must have resolved to rma (never shm).
            m = re.search(r'windows over ([a-z+]+)', out)
            if not m or m.group(1) != 'rma':
                problems.append('summary line does not say "windows over rma" (found %r)'
                                % (m.group(0) if m else None))
            for name in sorted(want):
                try:
                    got = T.read_npy(os.path.join(wd, 'out_%s.npy' % name))
                except (OSError, ValueError) as e:
                    problems.append('cannot read output %s: %s' % (name, e))
                    continue
                problems += compare(name, got, want[name])
    timing = [l for l in err.splitlines() if l.startswith('mpx-ci: ')]
    if problems:
        with open(os.path.join(wd, 'stderr.txt'), 'w') as f:
            f.write(err)
        with open(os.path.join(wd, 'stdout.txt'), 'w') as f:
            f.write(out)
        problems.append('command: %s' % ' '.join(cmd))
        if err.strip():
            problems.append('stderr:\n' + '\n'.join('    ' + l for l in err.strip().splitlines()[:60]))
    return problems, timing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--mpx', default=os.path.join(REPO, 'scripts', 'mpx-ci.sh'))
    ap.add_argument('--mpiexec', default=None, help='mpirun to use (MPX_MPIRUN); default: mpirun on PATH')
    ap.add_argument('--case', action='append', help='program name (repeatable); default: all')
    ap.add_argument('--transport', action='append', help='rma, auto or shm (repeatable); default: rma auto')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print "CASE TRANSPORT" per test and exit')
    args = ap.parse_args()
    if args.list:
        print('\n'.join('%s %s' % ct for ct in tests() if os.path.isfile(os.path.join(TUTORIAL, ct[0] + '.pld'))))
        return 0
    for c in args.case or []:
        if c not in PROGS:
            print('run_multinode.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    for t in args.transport or []:
        if t not in ('rma', 'auto', 'shm'):
            print('run_multinode.py: unknown transport %r' % t, file=sys.stderr)
            return 2
    todo = [(c, t) for (c, t) in tests()
            if (not args.case or c in args.case) and (not args.transport or t in args.transport)]
    if args.case and args.transport:  # explicit request, e.g. the negative case
        todo = [(c, t) for c in args.case for t in args.transport]
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
    for case, tr in todo:
        t1 = time.time()
        problems, timing = run_case(case, tr, args, env)
        dt = time.time() - t1
        if problems:
            failed += 1
            print('FAIL: %s %s (%.2f s)' % (case, tr, dt))
            for p in problems:
                print('    ' + p)
        else:
            passed += 1
            print('ok:   %s %s on %d hosts x %d ranks (%.2f s; %s)'
                  % (case, tr, HOSTS, SLOTS, dt, '; '.join(l[len('mpx-ci: '):] for l in timing)))
        sys.stdout.flush()
    print('total time %.1f s' % (time.time() - t0))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
