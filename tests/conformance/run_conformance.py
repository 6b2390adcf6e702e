#!/usr/bin/env python3
"""run_conformance.py - the conformance table: every program with golden
results on every backend at P = 2, 3, 4 (CTest label `backend_<name>`,
tests/conformance.cmake).

The programs and their goldens are those of the MPI runners, imported (one
source of truth, nothing copied):

  group `tier0`     tests/mpi/run_golden.py: programs/tutorial/hello_rank and
                    loop_carried_if_yield, the shared examples 01-03
                    (tests/examples/, DSL and printed forms);
  group `coll`      tests/mpi/run_coll.py, the programs of tests/mpi/programs/;
  group `corpus`    tests/mpi/run_coll.py, programs/{host,incore,chip};
  group `tutorial`  tests/mpi/run_coll.py, programs/tutorial.

Each (program, backend, P) cell runs `MPIEXEC -n P PLDRUN PROGRAM --backend
NAME ...` through the runner's own run_case (the same inputs, goldens and
checks: outputs bit-exact or within the runner's tolerance, no unexpected
diagnostics, the expected warnings, every dumped signal back to zero), the
run_coll.py programs once per window transport (--transports, default rma and
shm; the cell passes when every transport does; --alternate-transports runs
one per cell, the transports taking turns along the row and down the column,
as the ASan tree does). A cell is

  pass      every run matched its goldens;
  fail      some run did not (the runs' problems are printed);
  skipped   the program does not run at this P (its `# ranks:` directive, or
            run_coll.py's REWRITE_RANKS, excludes it), or pldrun reported the
            backend unavailable (exit 69): the reason is pldrun's message, and
            the backend's remaining cells are skipped with it unrun.

Backends (--backends, comma-separated): built-in names (`sim`) or a plugin
path (`/path/plugin.so`, passed to `--backend` as an absolute path).

usage:
  run_conformance.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                     [--backends sim,...] [--ranks 2,3,4] [--groups tier0,coll,corpus,tutorial]
                     [--transports rma,shm] [--alternate-transports] [--case NAME]... [--workdir DIR]
                     [--table-md FILE] [--results-json FILE] [-j N]
  run_conformance.py --pldrun X --merge JSON... [--table-md FILE]

--results-json writes the outcome as JSON; --merge runs nothing and makes one
table of several such files (the CTest tests write theirs to
BUILD/tests/conformance_runs/<backend>_<group>_p<P>.json: docs/conformance.md
is their merge, see tests/README.md).

Prints one line per run, the table (program x backend x P) and a closing line
"N passed, M failed, K skipped" (cells). Exit status: 1 when a cell failed,
77 when no cell ran (every one skipped: CTest's SKIP_RETURN_CODE), else 0.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402
import run_coll as C  # noqa: E402
import run_golden as G  # noqa: E402

GROUPS = ('tier0', 'coll', 'corpus', 'tutorial')
EX_UNAVAILABLE = 69


class Entry:
    """One row of the table: a runner's case."""

    def __init__(self, index, group, source, case, path, ranks):
        self.index = index  # in the full list (--alternate-transports)
        self.group, self.source, self.case, self.path = group, source, case, path
        self.ranks = ranks  # the P it allows; None: any


def directive_ranks(path):
    ranks, _ = C.read_directives(path)
    return ranks or None


def entries():
    out = []
    for case, (_, path) in G.CASES.items():
        if os.path.isfile(path):
            out.append(Entry(len(out), 'tier0', 'golden', case, path, directive_ranks(path)))
    for case, (path, _, _) in C.CASES.items():
        if not os.path.isfile(path) or case.endswith('_lowered') or case in C.SPECIALS:
            # a `_lowered` case runs the printed lowered text, a SPECIALS case
            # a coll_* program again with other inputs: coll_* tests
            continue
        rel = os.path.relpath(path, REPO)
        group = 'coll' if rel.startswith('tests') else 'tutorial' if rel.startswith('programs/tutorial') else 'corpus'
        out.append(Entry(len(out), group, 'coll', case, path, C.case_ranks(case)))
    return out


class Backend:
    def __init__(self, spec):
        self.plugin = '/' in spec or spec.endswith('.so')
        self.arg = os.path.abspath(spec) if self.plugin else spec
        self.name = os.path.basename(spec)[:-3] if self.plugin and spec.endswith('.so') else os.path.basename(spec)
        self.unavailable = None  # pldrun's message once it exited 69
        self.lock = threading.Lock()


def compile_reason(err):
    """The construct a compiling backend refused: pldrun's text after the
    last 'cannot be compiled: ' (the op and its location)."""
    for line in err.splitlines():
        if 'cannot be compiled' in line:
            why = line.split('cannot be compiled', 1)[1].lstrip(': ')
            return why.replace(REPO + '/', '')
    return 'a kernel cannot be compiled'


def unavailable_reason(err):
    """pldrun's message for an unavailable backend: rank 0's first error line
    (else the first rank's), without the rank prefix, so that the reason does
    not depend on which rank wrote first."""
    lines = [l.strip() for l in err.splitlines() if 'error' in l or 'backend' in l]
    lines.sort(key=lambda l: 0 if l.startswith('[rank 0/') or not l.startswith('[rank') else 1)
    for line in lines:
        if line.startswith('[rank') and '] ' in line:
            line = line.split('] ', 1)[1]
        return line
    return 'pldrun exit %d (backend unavailable)' % EX_UNAVAILABLE


class Cell:
    def __init__(self):
        self.status = None  # 'pass' | 'fail' | 'skipped'
        self.reason = ''
        self.runs = []  # (transport or '', problems)


def run_one(entry, backend, P, tr, args, env):
    """One run; returns (problems, rc, stderr)."""
    wa = argparse.Namespace(mpiexec=args.mpiexec, numproc_flag=args.numproc_flag, pldrun=args.pldrun,
                            workdir=os.path.join(args.workdir, backend.name))
    extra = ['--backend', backend.arg]
    if entry.source == 'golden':
        return G.run_case(entry.case, P, wa, env, extra)
    problems, prog, cli, err, rc = C.run_case(entry.case, P, tr, wa, env, extra)
    if problems:
        problems = problems + ['command: %s %s %d %s %s %s' % (args.mpiexec, args.numproc_flag, P, args.pldrun,
                                                               prog, ' '.join(cli))]
        if err.strip():
            problems.append('stderr:\n' + '\n'.join('    ' + l for l in err.strip().splitlines()[:40]))
    return problems, rc, err


def plan(args):
    """[(entry, backend, P, transports)] of the cells to run, and the cells
    skipped by rank count (filled in `cells`)."""
    cells, todo = {}, []
    for e in args.entries:
        for b in args.backend_objs:
            for P in args.ranks:
                cell = cells[(e.case, b.name, P)] = Cell()
                if e.ranks is not None and P not in e.ranks:
                    cell.status = 'skipped'
                    cell.reason = 'the program runs at P = %s only (`# ranks:`)' % ', '.join(map(str, e.ranks))
                    continue
                trs = args.transports if e.source == 'coll' else ['']
                if args.alternate_transports and len(trs) > 1:  # one per cell, alternating
                    trs = [trs[(e.index + P) % len(trs)]]
                for tr in trs:
                    todo.append((e, b, P, tr))
    return cells, todo


def execute(args, cells, todo, env):
    out_lock = threading.Lock()

    def job(item):
        e, b, P, tr = item
        cell = cells[(e.case, b.name, P)]
        with b.lock:
            reason = b.unavailable
        if reason:
            return item, None, 0.0, reason
        t0 = time.time()
        problems, rc, err = run_one(e, b, P, tr or 'rma', args, env)
        dt = time.time() - t0
        if problems and 'cannot be compiled' in err:
            # a kernel the backend's compiler refuses (an op it does not
            # compile yet): this program is not run on this backend
            return item, None, dt, 'not compiled: ' + compile_reason(err)
        if rc == EX_UNAVAILABLE:
            reason = unavailable_reason(err)
            with b.lock:
                b.unavailable = b.unavailable or reason
            return item, None, dt, reason
        with out_lock:
            cell.runs.append((tr, problems))
            what = '%s %s P=%d%s' % (e.case, b.name, P, ' ' + tr if tr else '')
            if problems:
                print('FAIL: %s (%.2f s)' % (what, dt))
                for p in problems:
                    print('    ' + p)
            else:
                print('ok:   %s (%.2f s)' % (what, dt))
            sys.stdout.flush()
        return item, problems, dt, None

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(job, todo))
    for (e, b, P, tr), problems, _, reason in results:
        cell = cells[(e.case, b.name, P)]
        if reason is not None and cell.status != 'fail':
            cell.status = 'skipped'
            cell.reason = reason if reason.startswith('not compiled: ') else 'backend unavailable: ' + reason
    for cell in cells.values():
        if cell.status is None:
            cell.status = 'fail' if any(p for _, p in cell.runs) else 'pass'
            if cell.status == 'fail':
                cell.reason = 'failed: ' + ', '.join(tr or 'run' for tr, p in cell.runs if p)


def result_of(args, cells, elapsed):
    """The outcome as plain data (what --results-json writes, --merge reads)."""
    return {'rows': [[e.case, os.path.relpath(e.path, REPO)] for e in args.entries],
            'backends': [b.name for b in args.backend_objs], 'ranks': list(args.ranks),
            'groups': list(args.groups), 'transports': list(args.transports),
            'alternate': bool(args.alternate_transports), 'elapsed': elapsed,
            'cells': [[case, b, P, c.status, c.reason] for (case, b, P), c in sorted(cells.items())]}


def merge(results):
    """One result from several (the CTest chunks' --results-json files): rows
    in the runner's order, backends, P and groups united, times added."""
    order = {e.case: e.index for e in entries()}
    rows, seen, out = [], set(), {'backends': [], 'ranks': [], 'groups': [], 'transports': [], 'cells': [],
                                  'alternate': False, 'elapsed': 0.0}
    for r in results:
        for row in r['rows']:
            if row[0] not in seen:
                seen.add(row[0])
                rows.append(row)
        for k in ('backends', 'ranks', 'groups', 'transports'):
            out[k] += [x for x in r[k] if x not in out[k]]
        out['cells'] += r['cells']
        out['alternate'] = out['alternate'] or r['alternate']
        out['elapsed'] += r['elapsed']
    out['rows'] = sorted(rows, key=lambda row: order.get(row[0], len(order)))
    out['ranks'].sort()
    out['groups'].sort(key=lambda g: GROUPS.index(g) if g in GROUPS else len(GROUPS))
    return out


def table(res, md):
    """The table as text lines (md: Markdown) and its legend of skip reasons."""
    reasons = []
    cells = {(c[0], c[1], c[2]): (c[3], c[4]) for c in res['cells']}

    def cell_text(key):
        if key not in cells:
            return '-'  # not run (a merge of some chunks only)
        status, reason = cells[key]
        if status == 'skipped':
            if reason not in reasons:
                reasons.append(reason)
            return 'skipped [%d]' % (reasons.index(reason) + 1)
        if status == 'fail':
            return ('**FAIL** (%s)' if md else 'FAIL (%s)') % reason[len('failed: '):]
        return 'pass'

    cols = [(b, P) for b in res['backends'] for P in res['ranks']]
    head = ['program'] + ['%s P=%d' % c for c in cols]
    rows = []
    for case, path in res['rows']:
        name = '`%s` (`%s`)' % (case, path) if md else '%s (%s)' % (case, path)
        rows.append([name] + [cell_text((case, b, P)) for b, P in cols])
    lines = []
    if md:
        lines.append('| ' + ' | '.join(head) + ' |')
        lines.append('| ' + ' | '.join('---' for _ in head) + ' |')
        lines += ['| ' + ' | '.join(r) + ' |' for r in rows]
    else:
        w = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
        lines.append('  '.join(h.ljust(w[i]) for i, h in enumerate(head)))
        lines += ['  '.join(x.ljust(w[i]) for i, x in enumerate(r)) for r in rows]
    legend = ['[%d] %s' % (i + 1, r) for i, r in enumerate(reasons)]
    return lines, legend


def counts(res):
    n = {'pass': 0, 'fail': 0, 'skipped': 0}
    for c in res['cells']:
        n[c[3]] += 1
    return n


def git_commit():
    try:
        return subprocess.run(['git', '-C', REPO, 'rev-parse', '--short', 'HEAD'], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=10).stdout.decode().strip() or '?'
    except (OSError, subprocess.SubprocessError):
        return '?'


def write_md(path, res):
    lines, legend = table(res, True)
    n = counts(res)
    with open(path, 'w') as f:
        f.write('# Conformance table\n\n')
        f.write('Generated by `tests/conformance/run_conformance.py` (do not edit by hand) on %s, commit %s:\n'
                % (datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC'), git_commit()))
        f.write('backends %s, P = %s, groups %s, window transports %s%s; the runs took %.0f s in all.\n\n'
                % (', '.join('`%s`' % b for b in res['backends']), ', '.join(map(str, res['ranks'])),
                   ', '.join(res['groups']), ', '.join(res['transports']),
                   ' (one per cell, alternating)' if res['alternate'] else '', res['elapsed']))
        f.write('A cell is `pass` when every run of the program on that backend at that rank count\n'
                'matched the goldens computed by the test runners in Python (tests/mpi/run_golden.py,\n'
                'tests/mpi/run_coll.py; never pldrun\'s own output): the programs of run_coll.py run\n'
                'once per window transport. `skipped [n]` gives the reason below. tests/README.md\n'
                'says how to regenerate this file.\n\n')
        f.write('%d cells: %d pass, %d fail, %d skipped.\n\n' % (sum(n.values()), n['pass'], n['fail'],
                                                                 n['skipped']))
        f.write('\n'.join(lines) + '\n')
        if legend:
            f.write('\nSkip reasons:\n\n' + '\n'.join('- ' + l for l in legend) + '\n')


def parse_args():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--backends', default='sim', help='comma-separated names or plugin paths (default sim)')
    ap.add_argument('--ranks', default=','.join(map(str, T.CONFORMANCE_RANKS)), help='default 2,3,4')
    ap.add_argument('--groups', default=','.join(GROUPS), help='default: all (%s)' % ','.join(GROUPS))
    ap.add_argument('--transports', default=','.join(C.TRANSPORTS), help='default rma,shm')
    ap.add_argument('--alternate-transports', action='store_true',
                    help='one transport per cell: transport (row index + P) mod count (the ASan tree)')
    ap.add_argument('--case', action='append', help='only this case (repeatable)')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--table-md', default=None, help='also write the table as Markdown to this file')
    ap.add_argument('--results-json', default=None, help='also write the outcome as JSON (for --merge)')
    ap.add_argument('--merge', nargs='+', metavar='JSON', help='run nothing: print (and --table-md) the table of '
                    'these --results-json files')
    ap.add_argument('-j', '--jobs', type=int, default=1, help='runs at a time (default 1)')
    args = ap.parse_args()
    args.ranks = [int(x) for x in args.ranks.split(',') if x]
    args.groups = [g for g in args.groups.split(',') if g]
    args.transports = [t for t in args.transports.split(',') if t]
    for g in args.groups:
        if g not in GROUPS:
            ap.error('unknown group %r (groups: %s)' % (g, ', '.join(GROUPS)))
    for t in args.transports:
        if t not in C.TRANSPORTS:
            ap.error('unknown transport %r' % t)
    args.entries = [e for e in entries() if e.group in args.groups and (not args.case or e.case in args.case)]
    if args.case:
        known = {e.case for e in entries()}
        for c in args.case:
            if c not in known:
                ap.error('unknown case %r' % c)
    args.backend_objs = [Backend(s) for s in args.backends.split(',') if s]
    args.pldrun = os.path.abspath(args.pldrun)
    args.workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'conformance_runs'))
    return args


def main():
    args = parse_args()
    if args.merge:
        res = []
        for path in args.merge:
            with open(path) as f:
                res.append(json.load(f))
        res = merge(res)
    else:
        env = T.mpi_env(REPO)
        t0 = time.time()
        cells, todo = plan(args)
        execute(args, cells, todo, env)
        res = result_of(args, cells, time.time() - t0)
    lines, legend = table(res, False)
    print('\n'.join(lines))
    if legend:
        print('\n'.join(legend))
    if args.table_md:
        write_md(args.table_md, res)
    if args.results_json:
        with open(args.results_json, 'w') as f:
            json.dump(res, f, indent=1)
    n = counts(res)
    print('total time %.1f s' % res['elapsed'])
    print('%d passed, %d failed, %d skipped' % (n['pass'], n['fail'], n['skipped']))
    if n['fail']:
        return 1
    return 0 if n['pass'] else 77


if __name__ == '__main__':
    sys.exit(main())
