#!/usr/bin/env python3
"""run_bench_ab.py - two pldrun binaries, A and B, on the same workloads,
interleaved (A B A B ...), to show that a change (a restructuring, issue 38)
costs no speed. A benchmark, not a test.

    bench/run_bench_ab.py --a BASE/pldrun --b NEW/pldrun [--rounds 7] [--only NAME ...]

Workloads (one per room of the simulator a change may slow down):

  scalar_loop     bench/scalar_loop.pld, P=1: the walker (expression dispatch)
  tile_chain      bench/native_chain.pld on sim, P=1: the tile kernel library
  matmul          bench/native_matmul.pld on sim, P=1: the cube kernels
  pingpong        bench/pingpong.pld, P=2: notify -> wait through the window layer
  allreduce_incore bench/hosts/allreduce_incore.pld, P=4: the InCore mesh protocol
  allreduce_host  bench/hosts/allreduce_host.pld, P=4: the HOST builtin protocol
  all_to_all_v    bench/hosts/all_to_all_v.pld, P=4: the CHIP rail
  allgather       bench/hosts/allgather.pld, P=4

Each workload runs with n = N1 and n = N2 operations; the figure is the time
per operation (t(N2) - t(N1)) / (N2 - N1), t being the run time pldrun prints
(rank 0, from before the parse to the end of the run), so start-up cancels.
A round runs A's pair then B's pair (the order flips every round, so a trend
in the machine's load does not favour one side); the report is, per workload,
the median over the rounds of each side, [min..max], and the ratio of the
medians B/A. The outputs of A and B must agree (sums printed by pldrun), else
the workload fails. Exit status 0, or 1 when a run failed or outputs differ.

The MPI environment is scripts/mpi_env.sh's (CI's: yield when idle,
oversubscribe), the one the tests run in.
"""
import argparse
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

# name: (program, ranks, extra args, N1, N2)
WORKLOADS = [
    ('scalar_loop', 'bench/scalar_loop.pld', 1, [], 1000000, 11000000),
    ('tile_chain', 'bench/native_chain.pld', 1, ['--in', 'x=random:4'], 100, 20100),
    ('matmul', 'bench/native_matmul.pld', 1, ['--in', 'x=random:4', '--in', 'w=random:5'], 100, 20100),
    ('pingpong', 'bench/pingpong.pld', 2, [], 10000, 510000),
    ('allreduce_incore', 'bench/hosts/allreduce_incore.pld', 4, ['--in', 'xs=random:7'], 11, 211),
    ('allreduce_host', 'bench/hosts/allreduce_host.pld', 4, ['--in', 'xs=random:7'], 11, 211),
    ('all_to_all_v', 'bench/hosts/all_to_all_v.pld', 4, ['--in', 'xs=random:7'], 11, 4011),
    ('allgather', 'bench/hosts/allgather.pld', 4, ['--in', 'xs=random:7'], 11, 2011),
]


def npy_i64(path, value):
    hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
    hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<q', value))


def mpi_env():
    """scripts/mpi_env.sh's variables, as the tests see them."""
    out = subprocess.run(['bash', '-c', '. "%s/scripts/mpi_env.sh" >/dev/null; env -0' % REPO],
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    return dict(kv.split('=', 1) for kv in out.split('\0') if '=' in kv)


def run(pldrun, prog, ranks, extra, n, wd, env):
    """Returns (seconds, output summary lines) of one run."""
    npy = os.path.join(wd, 'n%d.npy' % n)
    npy_i64(npy, n)
    argv = [pldrun, os.path.join(REPO, prog), '--in', 'n=' + npy] + extra
    if ranks > 1:
        argv = ['mpirun', '-n', str(ranks)] + argv
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=wd, timeout=600)
    out = p.stdout.decode(errors='replace')
    if p.returncode != 0:
        raise RuntimeError('%s exited %d:\n%s' % (' '.join(argv), p.returncode, p.stderr.decode()[-2000:]))
    m = re.search(r'^pldrun: .*, ([0-9.]+) s$', out, re.M)
    if not m:
        raise RuntimeError('%s: no run time in its output:\n%s' % (' '.join(argv), out[-2000:]))
    sums = [l for l in out.splitlines() if not l.startswith('pldrun: ')]
    return float(m.group(1)), sums


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--a', required=True, help='the baseline pldrun')
    ap.add_argument('--b', required=True, help='the pldrun under test')
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('--only', action='append', help='workload name (repeatable)')
    args = ap.parse_args()
    args.a, args.b = os.path.abspath(args.a), os.path.abspath(args.b)
    env = mpi_env()
    names = [w[0] for w in WORKLOADS]
    for o in args.only or []:
        if o not in names:
            ap.error('unknown workload %r (known: %s)' % (o, ', '.join(names)))
    failed = 0
    print('%-17s %24s %24s %8s' % ('workload', 'A per op [min..max]', 'B per op [min..max]', 'B/A'))
    with tempfile.TemporaryDirectory(prefix='pld-ab-') as wd:
        for name, prog, ranks, extra, n1, n2 in WORKLOADS:
            if args.only and name not in args.only:
                continue
            per = {'a': [], 'b': []}
            try:
                for r in range(args.rounds):
                    sums = {}
                    for side in (('a', 'b') if r % 2 == 0 else ('b', 'a')):
                        exe = getattr(args, side)
                        t1, _ = run(exe, prog, ranks, extra, n1, wd, env)
                        t2, s2 = run(exe, prog, ranks, extra, n2, wd, env)
                        per[side].append((t2 - t1) / (n2 - n1))
                        sums[side] = s2
                    if sums['a'] != sums['b']:
                        raise RuntimeError('outputs differ:\nA: %s\nB: %s' % (sums['a'], sums['b']))
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                print('%-17s FAILED: %s' % (name, e))
                failed += 1
                continue
            ma, mb = statistics.median(per['a']), statistics.median(per['b'])

            def fmt(v, xs):
                u, k = (1e6, 'us') if max(xs) < 1e-3 else (1e3, 'ms')
                return '%.3g %s [%.3g..%.3g]' % (v * u, k, min(xs) * u, max(xs) * u)
            print('%-17s %24s %24s %8.3f' % (name, fmt(ma, per['a']), fmt(mb, per['b']), mb / ma if ma > 0 else 0))
            sys.stdout.flush()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
