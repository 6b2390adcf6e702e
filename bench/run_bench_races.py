#!/usr/bin/env python3
"""run_bench_races.py - what --check-races costs on the corpus, short and long runs (issue 43;
docs/races.md, "Cost"). A benchmark, not a test.

    bench/run_bench_races.py [--pldrun build/pldrun] [--runs 3] [--long 20]
                             [--set programs,races] [--only SUBSTR] [--stat min|median]
                             [--long-races]
                             [--baseline OLD/pldrun]

Programs:
  programs   every DSL program of programs/ (not the .printed twins) at the
             largest rank count its header lists, with its header's inputs
  races      every program of tests/races/racy and tests/races/clean at its
             `# ranks:`, with its `# args:` (`--out NAME` to /dev/null)

Each program runs in four ways: plain and with --check-races, once as its
header says (the short run: mostly start-up, window creation and the
first dispatch) and with --dispatches L (the long run, default 20; a
program whose args already name --dispatches keeps them and is not run
long; the programs of tests/races only with --long-races). The time is the one pldrun prints on its summary line (rank 0, from
reading the program to the end of the run: mpirun's start-up is not in it);
each of the runs --runs times (the commands of a program alternate) and the best (--stat min, the default:
the least disturbed by other load on a shared machine) or the median counts. The tables give
each program's plain times and the ratios check-races / plain; the last
rows give the geometric mean and the maximum of each ratio per set. With
--baseline, an older pldrun runs with --check-races too, and its ratio to
this pldrun's plain time is given beside (the same plain reference).

MPI environment: scripts/mpi_env.sh (as the tests: oversubscribed, yielding).
The numbers move with the machine's load: run it on an idle machine, or
compare ratios measured in the same session only.
"""
import argparse
import math
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

SUMMARY = re.compile(r'^pldrun: .*, ([0-9.]+) s$', re.M)


def header(path, key):
    with open(path) as f:
        for line in f:
            if not line.startswith('#'):
                break
            if line.startswith('# %s:' % key):
                return line.split(':', 1)[1].split()
    return []


def programs(sets, only):
    """(set, name, P, args) of every program to run."""
    out = []
    if 'programs' in sets:
        for d in sorted(os.listdir(os.path.join(ROOT, 'programs'))):
            full = os.path.join(ROOT, 'programs', d)
            if not os.path.isdir(full):
                continue
            for f in sorted(os.listdir(full)):
                if not f.endswith('.pld') or f.endswith('.printed.pld') or only not in f:
                    continue
                path = os.path.join(full, f)
                ranks = [int(x) for x in header(path, 'ranks') if x.isdigit()]
                args = []
                for spec in header(path, 'inputs'):
                    args += ['--in', spec]
                out.append(('programs', '%s/%s' % (d, f[:-4]), max(ranks) if ranks else 2, path, args))
    if 'races' in sets:
        for kind in ('racy', 'clean'):
            d = os.path.join(ROOT, 'tests', 'races', kind)
            for f in sorted(os.listdir(d)):
                if not f.endswith('.pld') or only not in f:
                    continue
                path = os.path.join(d, f)
                ranks = [int(x) for x in header(path, 'ranks') if x.isdigit()]
                args, it = [], iter(header(path, 'args'))
                for a in it:
                    if a == '--out':
                        v = next(it)
                        args += ['--out', v if '=' in v else v + '=/dev/null']
                    else:
                        args.append(a)
                out.append(('races', '%s/%s' % (kind, f[:-4]), ranks[0] if ranks else 2, path, args))
    return out


def run_once(pldrun, P, prog, args, env):
    cmd = ['mpirun', '-n', str(P), pldrun, prog] + args
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        return None
    m = SUMMARY.search(p.stdout.decode(errors='replace'))
    return float(m.group(1)) if p.returncode == 0 and m else None


STAT = min


def measure(cmds, P, prog, env, runs):
    """The statistic of each (pldrun, args) of cmds over runs rounds; the
    commands alternate within a round, so that a change of the machine's
    load falls on all of them alike."""
    ts = [[] for _ in cmds]
    for _ in range(runs):
        for i, (pldrun, args) in enumerate(cmds):
            t = run_once(pldrun, P, prog, args, env)
            if t is not None:
                ts[i].append(t)
    return [STAT(x) if x else None for x in ts]


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pldrun', default=os.path.join(ROOT, 'build', 'pldrun'))
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--long', type=int, default=20, help='--dispatches of the long run (0: no long run)')
    ap.add_argument('--set', default='programs,races')
    ap.add_argument('--long-races', action='store_true', help='the long run for tests/races too')
    ap.add_argument('--only', default='')
    ap.add_argument('--baseline', default='', help='an older pldrun: its --check-races runs too')
    ap.add_argument('--stat', choices=('min', 'median'), default='min')
    a = ap.parse_args()
    global STAT
    STAT = min if a.stat == 'min' else statistics.median
    env = T.mpi_env(ROOT)
    rows = []
    for st, name, P, path, args in programs(a.set.split(','), a.only):
        res = {}
        shapes = [('short', args)]
        if a.long and '--dispatches' not in args and (st == 'programs' or a.long_races):
            shapes.append(('long', args + ['--dispatches', str(a.long)]))
        for shape, sargs in shapes:
            cmds = [(a.pldrun, sargs), (a.pldrun, sargs + ['--check-races'])]
            if a.baseline:
                cmds.append((a.baseline, sargs + ['--check-races']))
            got = measure(cmds, P, path, env, a.runs) + [None]
            res[shape] = tuple(got[:3])
        rows.append((st, name, P, res))
        cells = []
        for shape in ('short', 'long'):
            if shape in res:
                p, r, b = res[shape]
                cells.append('%s %s / %s = %s' % (shape, '%.3f' % p if p else 'failed', '%.3f' % r if r else 'failed',
                                                  '%.2fx' % (r / p) if p and r else '-'))
                if a.baseline:
                    cells.append('(baseline %s)' % ('%.2fx' % (b / p) if p and b else '-'))
        print('%-8s %-40s P=%d  %s' % (st, name, P, '  '.join(cells)), flush=True)
    for st in a.set.split(','):
        sel = [r for r in rows if r[0] == st]
        if not sel:
            continue
        print()
        shapes = ('short', 'long') if any('long' in r[3] for r in sel) else ('short',)
        bcol = ' baseline ratio |' if a.baseline else ''
        head = '| %s | P | plain s | races s | ratio |%s' % (st, bcol)
        if len(shapes) == 2:
            head += ' plain s (%d dispatches) | races s | ratio |%s' % (a.long, bcol)
        print(head)
        print('|---|---|' + ('---|---|---|' + ('---|' if a.baseline else '')) * len(shapes))
        ratios = {'short': [], 'long': [], 'bshort': [], 'blong': []}
        for _, name, P, res in sel:
            cells = []
            for shape in shapes:
                p, r, b = res.get(shape, (None, None, None))
                if p and r:
                    ratios[shape].append(r / p)
                if p and b:
                    ratios['b' + shape].append(b / p)
                cells += ['%.3f' % p if p else '-', '%.3f' % r if r else '-', '%.2f' % (r / p) if p and r else '-']
                if a.baseline:
                    cells.append('%.2f' % (b / p) if p and b else '-')
            print('| %s | %d | %s |' % (name, P, ' | '.join(cells)))
        for label, f in (('geometric mean', gm), ('maximum', lambda xs: max(xs) if xs else None)):
            cells = []
            for shape in shapes:
                v = f(ratios[shape])
                cells += ['', '', '%.2f' % v if v else '-']
                if a.baseline:
                    v = f(ratios['b' + shape])
                    cells.append('%.2f' % v if v else '-')
            print('| %s | | %s |' % (label, ' | '.join(cells)))


if __name__ == '__main__':
    main()
