#!/usr/bin/env python3
"""run_bench_debug.py - what --trace, -v, --log-dir, --poison, --check-races and --schedule-seed cost
(docs/debugging.md, "Cost"). A benchmark, not a test.

    bench/run_bench_debug.py [--pldrun build/pldrun] [--baseline OLD/pldrun]
                             [--runs 3] [--dispatches 100] [--only SUBSTR]
                             [--modes trace,verbose,logdir,poison,races,schedule,baseline]

Every DSL program of programs/ (the .printed twins are the same programs) runs
at the largest rank count its header lists, with its header's inputs, and
--dispatches D (the entry D times: the run, not the start-up, dominates), in
each mode:

  plain     no option                     (the reference)
  trace     --trace FILE.json
  verbose   -v (stderr to /dev/null: the formatting and the write are paid)
  logdir    --log-dir DIR
  poison    --poison                      (when this pldrun has it)
  races     --check-races                 (when this pldrun has it)
  schedule  --schedule-seed 1             (when this pldrun has it)
  baseline  no option, with --baseline    (pldrun of an older commit: the
                                            cost of the features when off)

The time is the one pldrun prints on its summary line (rank 0, from reading
the program to the end of the run: mpirun's start-up is not in it). Each
(program, mode) runs --runs times; the median counts. The table gives every
program's plain time and each mode's ratio to it; the last rows give the
geometric mean and the maximum of each ratio over the programs.

MPI environment: scripts/mpi_env.sh (as the tests: oversubscribed, yielding).
"""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

SUMMARY = re.compile(r'^pldrun: .*, ([0-9.]+) s$', re.M)


def header(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith('# %s:' % key):
                return line.split(':', 1)[1].split()
    return []


def run_once(pldrun, P, prog, args, env, cwd):
    cmd = ['mpirun', '-n', str(P), pldrun, prog] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd, timeout=600)
    m = SUMMARY.search(p.stdout.decode(errors='replace'))
    if p.returncode != 0 or not m:
        return None
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', default=os.path.join(ROOT, 'build', 'pldrun'))
    ap.add_argument('--baseline', default='')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--dispatches', type=int, default=100)
    ap.add_argument('--only', default='')
    ap.add_argument('--modes', default='', help='comma-separated subset of the modes (plain is always run)')
    a = ap.parse_args()
    env = T.mpi_env(ROOT)
    helptext = subprocess.run([a.pldrun, '--help'], stdout=subprocess.PIPE).stdout.decode()
    modes = ['plain', 'trace', 'verbose', 'logdir']
    if '--poison' in helptext:
        modes.append('poison')
    if '--check-races' in helptext:
        modes.append('races')
    if '--schedule-seed' in helptext:
        modes.append('schedule')
    if a.baseline:
        modes.append('baseline')
    if a.modes:
        keep = set(a.modes.split(',')) | {'plain'}
        modes = [m for m in modes if m in keep]
    work = tempfile.mkdtemp(prefix='pld_bench_debug_')
    progs = []
    for d in sorted(os.listdir(os.path.join(ROOT, 'programs'))):
        full = os.path.join(ROOT, 'programs', d)
        if os.path.isdir(full):
            progs += [os.path.join(full, f) for f in sorted(os.listdir(full))
                      if f.endswith('.pld') and not f.endswith('.printed.pld') and a.only in f]
    rows = []
    for prog in progs:
        ranks = [int(x) for x in header(prog, 'ranks') if x.isdigit()]
        P = max(ranks) if ranks else 2
        base = []
        for spec in header(prog, 'inputs'):
            base += ['--in', spec]
        base += ['--dispatches', str(a.dispatches)]
        name = os.path.relpath(prog, os.path.join(ROOT, 'programs'))[:-4]
        res = {}
        for mode in modes:
            extra, tool = [], a.pldrun
            if mode == 'trace':
                extra = ['--trace', os.path.join(work, 't.json')]
            elif mode == 'verbose':
                extra = ['-v']
            elif mode == 'logdir':
                extra = ['--log-dir', os.path.join(work, 'logs')]
            elif mode == 'poison':
                extra = ['--poison']
            elif mode == 'races':
                extra = ['--check-races']
            elif mode == 'schedule':
                extra = ['--schedule-seed', '1']
            elif mode == 'baseline':
                tool = a.baseline
            ts = [run_once(tool, P, prog, base + extra, env, work) for _ in range(a.runs)]
            ts = [t for t in ts if t is not None]
            res[mode] = statistics.median(ts) if ts else None
        rows.append((name, P, res))
        cells = ['%s' % name, 'P=%d' % P, 'plain %.3f s' % res['plain'] if res['plain'] else 'plain failed']
        for m in modes[1:]:
            cells.append('%s %s' % (m, '%.2fx' % (res[m] / res['plain']) if res[m] and res['plain'] else 'failed'))
        print('  '.join(cells), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    # the table
    print()
    print('| program | P | plain (s, %d dispatches) | %s |' % (a.dispatches, ' | '.join(modes[1:])))
    print('|---|---|---|%s' % ('---|' * (len(modes) - 1)))
    ratios = {m: [] for m in modes[1:]}
    for name, P, res in rows:
        cells = []
        for m in modes[1:]:
            if res[m] and res['plain']:
                r = res[m] / res['plain']
                ratios[m].append(r)
                cells.append('%.2f' % r)
            else:
                cells.append('failed')
        print('| %s | %d | %s | %s |' % (name, P, '%.3f' % res['plain'] if res['plain'] else 'failed', ' | '.join(cells)))
    gm = ['%.2f' % math.exp(sum(math.log(x) for x in ratios[m]) / len(ratios[m])) if ratios[m] else '-'
          for m in modes[1:]]
    mx = ['%.2f' % max(ratios[m]) if ratios[m] else '-' for m in modes[1:]]
    print('| geometric mean | | | %s |' % ' | '.join(gm))
    print('| maximum | | | %s |' % ' | '.join(mx))
    if a.baseline and 'baseline' in modes:
        hot(a, env)


def hot(a, env):
    """The traced sites on hot paths, with every feature off: this pldrun
    against --baseline on the benchmarks of docs/benchmarks-pldrun.md (notify
    -> wait round trips, 1 MiB puts) and an interpreted scalar loop."""
    work = tempfile.mkdtemp(prefix='pld_bench_debug_hot_')
    cases = [('pingpong', 2, 200000, []), ('put_1mib', 2, 2000, ['--in', 'xs=arange']),
             ('scalar_loop', 1, 2000000, [])]
    print()
    print('| features off | %s | this / baseline |' % 'baseline s | this s')
    print('|---|---|---|---|')
    for name, P, n, extra in cases:
        npy = os.path.join(work, 'n.npy')
        T.write_npy(npy, 'INT64', (), [n])
        args = extra + ['--in', 'n=' + npy]
        prog = os.path.join(ROOT, 'bench', name + '.pld')
        res = {}
        for tool in (a.baseline, a.pldrun):
            ts = []
            for _ in range(max(a.runs, 5)):
                ts.append(run_once(tool, P, prog, args, env, work))
            ts = [t for t in ts if t is not None]
            res[tool] = (statistics.median(ts), min(ts), max(ts)) if ts else None
        b, t = res[a.baseline], res[a.pldrun]
        if b and t:
            print('| %s (n = %d) | %.3f [%.3f..%.3f] | %.3f [%.3f..%.3f] | %.3f |' %
                  (name, n, b[0], b[1], b[2], t[0], t[1], t[2], t[0] / b[0]), flush=True)
        else:
            print('| %s | failed | failed | |' % name, flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
