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

A case whose program file does not exist is an error (exit 2, naming the
file), never a row left out.

Each (program, backend, P) cell runs `MPIEXEC -n P PLDRUN PROGRAM --backend
NAME ...` through the runner's own run_case (the same inputs, goldens and
checks: outputs bit-exact or within the runner's tolerance, no unexpected
diagnostics, the expected warnings, every dumped signal back to zero), the
run_coll.py programs over the window transports (--transports, default rma
and shm) by one of these plans:

  (default)                every cell runs every transport;
  --alternate-transports   one transport per cell: a program's own P list is
                           the sweep (--sweep, default --ranks: every P the
                           tree runs for this backend, while CTest runs one P
                           per test) less the P its `# ranks:` excludes, and
                           its cell at position k of that list runs transport
                           (row index + k) mod 2; a program with one P in the
                           sweep runs both there. So each program meets both
                           transports over its P, and each P both over the
                           programs, whichever P a tree runs;
  --other-transports       the complement of --alternate-transports (the
                           other transport of each cell; a program with one P
                           in the sweep, and the tier0 group, which has no
                           transport, are not in such a test): the two
                           together are the full matrix;
  --one-cell-per-program   one run per program over the whole sweep: P is the
                           program's own P list at (row index mod its length),
                           the transport (row index div that length, mod 2:
                           every (P, transport) pair occurs); a program whose P
                           is not one of --ranks is not in this run (not a
                           skip).

--list-plan prints the runs of the plan (`case backend P transport`, `-` for
the tier0 programs, which take no transport) and runs nothing; --check-plan
FILE checks the plans of every test a tree registers (tests/conformance.cmake
writes FILE): see check_plan.

Backends (--backends, comma-separated): built-in names (`sim`) or a plugin
path (`/path/plugin.so`, passed to `--backend` as an absolute path). `sim`,
the reference, is never probed and never skipped: an exit 69 (unavailable:
pldrun also gives it when MPI_Init or the window layer fails) on sim fails
its cell. Every other backend is probed once, before the table: its plugin
file must exist (`ascend`: $PLD_ASCEND_PLUGIN or pld_backend_ascend.so beside
pldrun) and programs/tutorial/hello_rank must run on it at P = 2. Exit 69 from
the probe (not MPI_Init's or the window layer's) makes the backend
unavailable: its cells are skipped with the probe's reason; any other failure
of the probe fails its cells. After a probe found the backend available, an
exit 69 fails the cell, and so does a kernel the backend refuses to compile
("cannot be compiled"). The probe's outcome is printed as a `probe:` line.

A cell is

  pass      every run matched its goldens;
  fail      some run did not (the runs' problems are printed);
  skipped   the program does not run at this P (its `# ranks:` directive, or
            run_coll.py's REWRITE_RANKS, excludes it), or the probe found the
            backend unavailable (the reason is pldrun's message);
  not run   the runner stopped first (--max-failures).

--batch (the default; --no-batch: off) runs the runs of a P as pldrun batches
(tests/mpi/pld_batch.py: one `mpirun -n P pldrun --batch LIST` job for all
of them, each run with a fresh interpreter and fresh windows); a run that
does not pass in its batch is started again alone, and that run's result is
the one judged, so a failure is always named by a run of its own. Only the
built-in CPU backends (sim, native) run in batches; a plugin's runs start
alone.

--max-failures N (default 3, 0: no limit): after N failed runs no further run
starts; the output says "stopped after N failures: M runs not run".

usage:
  run_conformance.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                     [--backends sim,...] [--ranks 2,3,4] [--sweep 2,3,4] [--groups tier0,coll,corpus,tutorial]
                     [--transports rma,shm] [--alternate-transports | --other-transports | --one-cell-per-program]
                     [--case NAME]... [--workdir DIR] [--max-failures N] [--list-plan]
                     [--table-md FILE] [--results-json FILE] [-j N]
  run_conformance.py --pldrun X --merge JSON... [--table-md FILE]
  run_conformance.py --pldrun X --check-plan FILE

--results-json writes the outcome as JSON; --merge runs nothing and makes one
table of several such files (the CTest tests write theirs to
BUILD/tests/conformance_runs/<backend>_<group>_p<P>[_other|_matrix].json:
docs/conformance.md is their merge, see tests/README.md; a cell in several
files fails when one of them does).

Prints one line per run, the table (program x backend x P) and a closing line
"N passed, M failed, K skipped" (cells). Exit status: 1 when a cell failed,
the runner stopped early, a probe failed, or a backend that is available (sim
always) ran no cell; 77 when every backend was found unavailable (CTest's
SKIP_RETURN_CODE; never for sim); 2 for a usage error or a missing program
file; else 0.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import shlex
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
import pld_batch as B  # noqa: E402

GROUPS = ('tier0', 'coll', 'corpus', 'tutorial')
BATCHED = ('sim', 'native')  # the backends whose runs go as pldrun batches (--batch)
EX_UNAVAILABLE = 69
PROBE_PROGRAM = os.path.join(REPO, 'programs', 'tutorial', 'hello_rank.pld')
PROBE_ARGS = ['--in', 'xs=arange']
PROBE_RANKS = 2
# pldrun's exit 69 for these is not about the backend (tools/pldrun/main.c)
NOT_BACKEND_69 = ('MPI_Init failed', 'MPI does not answer', 'window layer:')
MODES = ('both', 'alternate', 'other', 'one-cell')


class MissingProgram(Exception):
    """Cases whose program file does not exist."""


class Entry:
    """One row of the table: a runner's case."""

    def __init__(self, index, group, source, case, path, ranks):
        self.index = index  # in the full list (the transport and P plans)
        self.group, self.source, self.case, self.path = group, source, case, path
        self.ranks = ranks  # the P it allows; None: any


def directive_ranks(path):
    ranks, _ = C.read_directives(path)
    return ranks or None


_ENTRIES = []


def entries():
    """Every row, in the runners' order (cached). A case whose program file
    is missing raises MissingProgram: a row never vanishes silently."""
    if _ENTRIES:
        return _ENTRIES
    out, missing = [], []
    for case, (_, path) in G.CASES.items():
        if not os.path.isfile(path):
            missing.append('%s (case %s, tests/mpi/run_golden.py)' % (path, case))
            continue
        out.append(Entry(len(out), 'tier0', 'golden', case, path, directive_ranks(path)))
    for case, (path, _, _) in C.CASES.items():
        if case.endswith('_lowered') or case in C.SPECIALS:
            # a `_lowered` case runs the printed lowered text, a SPECIALS case
            # a coll_* program again with other inputs: coll_* tests
            continue
        if not os.path.isfile(path):
            missing.append('%s (case %s, tests/mpi/run_coll.py)' % (path, case))
            continue
        rel = os.path.relpath(path, REPO)
        group = 'coll' if rel.startswith('tests') else 'tutorial' if rel.startswith('programs/tutorial') else 'corpus'
        out.append(Entry(len(out), group, 'coll', case, path, C.case_ranks(case)))
    if missing:
        raise MissingProgram('missing program file(s): ' + '; '.join(missing))
    _ENTRIES.extend(out)
    return _ENTRIES


class Backend:
    def __init__(self, spec):
        self.plugin = '/' in spec or spec.endswith('.so')
        self.arg = os.path.abspath(spec) if self.plugin else spec
        self.name = os.path.basename(spec)[:-3] if self.plugin and spec.endswith('.so') else os.path.basename(spec)
        self.reference = self.arg == 'sim'
        self.available = self.reference  # decided by probe() for the others
        self.probe_error = None  # the probe failed for another reason than an unavailable backend
        self.reason = ''  # the probe's outcome in words


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
    lines = [l.strip() for l in err.splitlines() if 'error' in l or 'backend' in l or 'pldrun:' in l]
    lines.sort(key=lambda l: 0 if l.startswith('[rank 0/') or not l.startswith('[rank') else 1)
    for line in lines:
        if line.startswith('[rank') and '] ' in line:
            line = line.split('] ', 1)[1]
        return line
    return 'pldrun exit %d (unavailable), no message' % EX_UNAVAILABLE


def plugin_file(backend, args):
    """The plugin file pldrun would open for this backend, or None (built in)."""
    if backend.plugin:
        return backend.arg
    if backend.arg == 'ascend':
        return os.environ.get('PLD_ASCEND_PLUGIN') or os.path.join(os.path.dirname(args.pldrun),
                                                                      'pld_backend_ascend.so')
    return None


def probe(backend, args, env):
    """Decides once whether a non-reference backend is available: its plugin
    file exists and PROBE_PROGRAM runs on it at P = PROBE_RANKS. Sets
    backend.available / .probe_error / .reason."""
    if backend.reference:
        backend.reason = 'the reference backend: not probed, never skipped (an exit 69 fails its cell)'
        return
    path = plugin_file(backend, args)
    if path is not None and not os.path.isfile(path):
        backend.reason = 'the plugin file %s does not exist' % path
        return
    wd = os.path.join(args.workdir, backend.name, 'probe')
    os.makedirs(wd, exist_ok=True)
    cmd = '%s %s %d %s %s %s --backend %s' % (args.mpiexec, args.numproc_flag, PROBE_RANKS, args.pldrun,
                                              PROBE_PROGRAM, ' '.join(PROBE_ARGS), backend.arg)
    t0 = time.time()
    rc, _, err = T.run_pldrun(args.mpiexec, args.numproc_flag, PROBE_RANKS, args.pldrun, PROBE_PROGRAM,
                              PROBE_ARGS + ['--backend', backend.arg], env, wd, timeout=120)
    dt = time.time() - t0
    if rc == 0:
        backend.available = True
        backend.reason = 'available (%s ran at P = %d in %.1f s)' % (os.path.relpath(PROBE_PROGRAM, REPO),
                                                                   PROBE_RANKS, dt)
    elif rc == EX_UNAVAILABLE and not any(s in err for s in NOT_BACKEND_69) and 'cannot be compiled' not in err:
        backend.reason = unavailable_reason(err)
    else:
        tail = '\n'.join('    ' + l for l in err.strip().splitlines()[:20])
        backend.probe_error = 'the probe failed: exit %d (command: %s)%s' % (rc, cmd, '\n' + tail if tail else '')
        backend.reason = 'probe failed: exit %d: %s' % (rc, unavailable_reason(err) if err.strip() else 'no message')


class Cell:
    def __init__(self):
        self.status = None  # 'pass' | 'fail' | 'skipped' | 'notrun'
        self.reason = ''
        self.runs = []  # (transport or '', problems)


def run_one(entry, backend, P, tr, args, env, launch=None):
    """One run (launch: how to start it, default mpirun alone); returns
    (problems, rc, stderr)."""
    wa = argparse.Namespace(mpiexec=args.mpiexec, numproc_flag=args.numproc_flag, pldrun=args.pldrun,
                            workdir=os.path.join(args.workdir, backend.name))
    extra = ['--backend', backend.arg]
    if entry.source == 'golden':
        return G.run_case(entry.case, P, wa, env, extra, launch=launch)
    problems, prog, cli, err, rc = C.run_case(entry.case, P, tr, wa, env, extra, launch=launch, ref_launch=launch)
    if problems:
        problems = problems + ['command: %s %s %d %s %s %s' % (args.mpiexec, args.numproc_flag, P, args.pldrun,
                                                               prog, ' '.join(cli))]
        if err.strip():
            problems.append('stderr:\n' + '\n'.join('    ' + l for l in err.strip().splitlines()[:40]))
    return problems, rc, err


def own_ranks(e, sweep):
    """The program's own P list: the sweep less the P its `# ranks:` excludes."""
    return [P for P in sweep if e.ranks is None or P in e.ranks]


def cell_transports(e, P, args):
    """The transports entry e runs at P in this run ('' for a tier0 program,
    which takes none); [] when the cell is not in this run."""
    trs = list(args.transports) if e.source == 'coll' else ['']
    own = own_ranks(e, args.sweep)
    if args.mode == 'one-cell':
        if not own or P != own[e.index % len(own)]:
            return []
        # the transport turns once per round of P, so that P and transport
        # are not tied to each other (index mod 2 for both at a sweep of 2)
        return [trs[(e.index // len(own)) % len(trs)]]
    if args.mode == 'both':
        return trs
    if len(trs) == 1 or len(own) == 1:
        # no choice to spread (a tier0 program, one transport) or one P in
        # the sweep (every transport there): all in the alternating run
        return trs if args.mode == 'alternate' else []
    k = own.index(P)
    chosen = trs[(e.index + k) % len(trs)]
    return [chosen] if args.mode == 'alternate' else [t for t in trs if t != chosen]


def plan(args):
    """(cells, todo, rows): the cells of this run keyed (case, backend, P)
    (the ones skipped by rank count already decided), the runs to make
    [(entry, backend, P, transport)] and the entries that have a cell here.
    In the full and alternating plans a P the program excludes is a skipped
    cell; in the other plans a cell with nothing to run is not in this run."""
    cells, todo, rows = {}, [], []
    for e in args.entries:
        here = False
        for b in args.backend_objs:
            for P in args.ranks:
                excluded = e.ranks is not None and P not in e.ranks
                if excluded and args.mode in ('both', 'alternate'):
                    cell = cells[(e.case, b.name, P)] = Cell()
                    cell.status = 'skipped'
                    cell.reason = 'the program runs at P = %s only (`# ranks:`)' % ', '.join(map(str, e.ranks))
                    here = True
                    continue
                trs = [] if excluded else cell_transports(e, P, args)
                if not trs:
                    continue
                cells[(e.case, b.name, P)] = Cell()
                here = True
                for tr in trs:
                    todo.append((e, b, P, tr))
        if here:
            rows.append(e)
    return cells, todo, rows


def execute(args, cells, todo, env):
    """Makes the runs (args.jobs at a time); after args.max_failures failed
    runs no further run starts. Returns the number of runs not started."""
    lock = threading.Lock()
    state = {'failed': 0, 'notrun': 0}

    def stopped():
        return args.max_failures > 0 and state['failed'] >= args.max_failures

    # --batch: every run at once, their launches gathered into pldrun
    # batches (tests/mpi/pld_batch.py); a run that does not pass in its batch
    # is started again alone, one at a time. Only the built-in CPU backends
    # (BATCHED): a plugin (ascend's CANN runtime among them) would be opened
    # and closed once per entry in one process, which a vendor runtime need
    # not survive
    batcher = None
    if args.batch and len(todo) > 1 and all(b.name in BATCHED for b in args.backend_objs):
        def log(line):
            with lock:
                print(line)
                sys.stdout.flush()
        batcher = B.Batcher(args.mpiexec, args.numproc_flag, args.pldrun, args.workdir, len(todo), log=log,
                            stop=stopped, alone_at_once=max(1, args.jobs), max_alone_failures=args.max_failures)

    def job(item, launch=None):
        e, b, P, tr = item
        cell = cells[(e.case, b.name, P)]
        with lock:
            if stopped():
                state['notrun'] += 1
                return
        t0 = time.time()
        try:
            problems, rc, err = run_one(e, b, P, tr or 'rma', args, env, launch=launch)
        except T.StopRun:
            with lock:
                state['notrun'] += 1
            return
        dt = time.time() - t0
        if problems and 'cannot be compiled' in err:
            # a kernel the backend's compiler refuses fails the cell: the table
            # holds every program on every backend, not the ones it compiles
            problems = ['%s refused to compile a kernel (exit %d): %s' % (b.name, rc, compile_reason(err))] + \
                (problems or ['pldrun said "cannot be compiled"'])
        elif rc == EX_UNAVAILABLE:
            why = ('sim is the reference backend, never unavailable' if b.reference else
                   'the probe found %s available' % b.name)
            problems = ['exit 69 (unavailable: %s) although %s' % (unavailable_reason(err), why)] + \
                (problems or [])
        with lock:
            cell.runs.append((tr, problems))
            if problems:
                state['failed'] += 1
            what = '%s %s P=%d%s' % (e.case, b.name, P, ' ' + tr if tr else '')
            if problems:
                print('FAIL: %s (%.2f s)' % (what, dt))
                for p in problems:
                    print('    ' + p)
            else:
                print('ok:   %s (%.2f s)' % (what, dt))
            sys.stdout.flush()

    if batcher:
        B.run_all(todo, job, batcher)
        print(batcher.summary())
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            list(pool.map(job, todo))
    planned = {}
    for e, b, P, tr in todo:
        planned[(e.case, b.name, P)] = planned.get((e.case, b.name, P), 0) + 1
    for key, cell in cells.items():
        if cell.status is not None:
            continue
        failed = [tr or 'run' for tr, p in cell.runs if p]
        if failed:
            cell.status, cell.reason = 'fail', 'failed: ' + ', '.join(failed)
        elif len(cell.runs) == planned.get(key, 0):
            cell.status = 'pass'
        else:
            cell.status, cell.reason = 'notrun', 'not run: stopped after %d failures' % state['failed']
    if state['notrun']:
        print('stopped after %d failures: %d runs not run' % (state['failed'], state['notrun']))
    return state['notrun']


def result_of(args, cells, rows, elapsed):
    """The outcome as plain data (what --results-json writes, --merge reads)."""
    return {'rows': [[e.case, os.path.relpath(e.path, REPO)] for e in rows],
            'backends': [b.name for b in args.backend_objs], 'ranks': list(args.ranks),
            'groups': list(args.groups), 'transports': list(args.transports), 'mode': args.mode,
            'alternate': args.mode != 'both', 'elapsed': elapsed,
            'probes': {b.name: b.reason for b in args.backend_objs},
            'cells': [[case, b, P, c.status, c.reason] for (case, b, P), c in sorted(cells.items())]}


def merge(results):
    """One result from several (the CTest chunks' --results-json files): rows
    in the runner's order, backends, P and groups united, times added. A cell
    in several files (a default-tier test and its `_other` or `_matrix`
    twin) fails when one of them failed, else passes when one passed."""
    order = {e.case: e.index for e in entries()}
    rows, seen = [], set()
    out = {'backends': [], 'ranks': [], 'groups': [], 'transports': [], 'elapsed': 0.0, 'probes': {}}
    cells, modes = {}, set()
    rank = {'fail': 0, 'notrun': 1, 'pass': 2, 'skipped': 3}
    for r in results:
        for row in r['rows']:
            if row[0] not in seen:
                seen.add(row[0])
                rows.append(row)
        for k in ('backends', 'ranks', 'groups', 'transports'):
            out[k] += [x for x in r[k] if x not in out[k]]
        for case, b, P, status, reason in r['cells']:
            old = cells.get((case, b, P))
            if old is None or rank[status] < rank[old[0]]:
                cells[(case, b, P)] = (status, reason)
            elif status == old[0] == 'fail' and reason != old[1]:
                cells[(case, b, P)] = (status, old[1] + '; ' + reason[len('failed: '):])
        modes.add(r.get('mode', 'alternate' if r.get('alternate') else 'both'))
        out['probes'].update(r.get('probes', {}))
        out['elapsed'] += r['elapsed']
    out['cells'] = [[k[0], k[1], k[2], v[0], v[1]] for k, v in sorted(cells.items())]
    out['alternate'] = not ('both' in modes or {'alternate', 'other'} <= modes)
    out['mode'] = '+'.join(m for m in MODES if m in modes)
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
            return '-'  # not in these runs (a merge of some chunks only, or not in this run's plan)
        status, reason = cells[key]
        if status == 'skipped':
            if reason not in reasons:
                reasons.append(reason)
            return 'skipped [%d]' % (reasons.index(reason) + 1)
        if status == 'fail':
            return ('**FAIL** (%s)' if md else 'FAIL (%s)') % reason[len('failed: '):]
        if status == 'notrun':
            return 'not run'
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
    n = {'pass': 0, 'fail': 0, 'skipped': 0, 'notrun': 0}
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


# ---------------------------------------------------------------- the plan check

def plan_runs(argv):
    """The runs {(case, P, transport)} and the parsed options of one test's
    plan options (argv: --backends, --ranks, --sweep, --groups, a mode)."""
    a = parse_args(['--pldrun', 'pldrun'] + list(argv))
    _, todo, _ = plan(a)
    return {(e.case, P, tr) for e, _, P, tr in todo}, a


def check_plan(path):
    """Checks the plans of every test tests/conformance.cmake registers, per
    tree configuration (the file: `config NAME matrix=both|one` lines, then
    `test NAME TIER TESTNAME OPTION...` lines; TIER `default` or `long`).
    For a configuration, in its default tier and in default + long:

      - every test makes at least one run, and no run is in two tests of
        one tier;
      - every program of the tests' groups whose `# ranks:` allows one of
        the tier's P runs; every (P, transport) pair runs;
      - every program of run_coll.py meets both transports, except in a
        default tier of --one-cell-per-program tests, where every program
        runs exactly once;
      - default + long holds every (program, P) cell its `# ranks:` allows
        for the P of the tests that are not --one-cell-per-program, and with
        matrix=both every transport of every such cell.

    Prints what it checked and every problem; returns the exit status."""
    configs, order = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            w = shlex.split(line.strip())
            if not w or w[0].startswith('#'):
                continue
            if w[0] == 'config' and len(w) == 3 and w[2] in ('matrix=both', 'matrix=one'):
                configs[w[1]] = {'matrix': w[2].split('=')[1], 'tests': []}
                order.append(w[1])
            elif w[0] == 'test' and len(w) >= 4 and w[1] in configs and w[2] in ('default', 'long'):
                configs[w[1]]['tests'].append((w[3], w[2], w[4:]))
            else:
                print('FAIL: %s:%d: not a plan line: %s' % (path, n, line.rstrip()))
                return 1
    problems = []
    for name in order:
        cfg = configs[name]
        runs = {}  # test -> (tier, runs, args)
        for test, tier, argv in cfg['tests']:
            r, a = plan_runs(argv)
            runs[test] = (tier, r, a)
            if not r:
                problems.append('%s: %s makes no run' % (name, test))
        for tiers in (('default',), ('default', 'long')):
            label = '%s, %s' % (name, ' + '.join(tiers))
            tests = [(t, r, a) for t, (tier, r, a) in runs.items() if tier in tiers]
            if not tests:
                continue
            for tier in tiers if len(tiers) == 2 else ():  # each tier once
                seen = {}
                for t, r, a in tests:
                    if runs[t][0] != tier:
                        continue
                    for x in sorted(r):
                        if x in seen:
                            problems.append('%s: %s P=%d %s runs in %s and in %s' % (label, x[0], x[1], x[2] or '-',
                                                                                     seen[x], t))
                        seen.setdefault(x, t)
            allr = set().union(*(r for _, r, _ in tests))
            ps = sorted(set(P for _, _, a in tests for P in a.ranks))
            groups = set(g for _, _, a in tests for g in a.groups)
            trs = sorted(set(tr for _, _, a in tests for tr in a.transports))
            one_cell = tiers == ('default',) and any(a.mode == 'one-cell' for _, _, a in tests)
            # the matrix: the P of the tests that run every program's cells
            # (not the one-cell-per-program ones, which cover each program once)
            mps = sorted(set(P for _, _, a in tests if a.mode != 'one-cell' for P in a.ranks))
            progs = [e for e in entries() if e.group in groups and own_ranks(e, ps)]
            by_case = {}
            for case, P, tr in allr:
                by_case.setdefault(case, []).append((P, tr))
            for e in progs:
                got = by_case.get(e.case, [])
                if not got:
                    problems.append('%s: %s never runs (its P: %s)' % (label, e.case, own_ranks(e, ps)))
                elif one_cell and len(got) != 1:
                    problems.append('%s: %s runs %d times, not once: %s' % (label, e.case, len(got), sorted(got)))
                elif e.source == 'coll' and not one_cell and set(tr for _, tr in got) != set(trs):
                    problems.append('%s: %s meets only %s (runs %s)' % (label, e.case,
                                                                        ', '.join(sorted(set(t for _, t in got))),
                                                                        sorted(got)))
                if tiers == ('default', 'long'):
                    for P in own_ranks(e, mps):
                        want = trs if e.source == 'coll' and cfg['matrix'] == 'both' else None
                        have = [tr for p, tr in got if p == P]
                        if not have:
                            problems.append('%s: %s has no run at P=%d' % (label, e.case, P))
                        elif want and sorted(have) != want:
                            problems.append('%s: %s at P=%d runs %s, not every transport' % (label, e.case, P,
                                                                                            sorted(have)))
            pairs = set((P, tr) for case, P, tr in allr if tr)
            for P in ps:
                for tr in trs:
                    if (P, tr) not in pairs:
                        problems.append('%s: no program runs at P=%d over %s' % (label, P, tr))
            coll = [e for e in progs if e.source == 'coll']
            both = sum(1 for e in coll if set(tr for _, tr in by_case.get(e.case, [])) == set(trs))
            print('plan %s: %d tests, %d runs; %d programs, %d of the %d run_coll.py programs meet both transports; '
                  'P = %s' % (label, len(tests), sum(len(r) for _, r, _ in tests), len(progs), both, len(coll),
                              ', '.join(map(str, ps))))
    for p in problems:
        print('FAIL: plan ' + p)
    print('%d problems' % len(problems))
    return 1 if problems else 0


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--backends', default='sim', help='comma-separated names or plugin paths (default sim)')
    ap.add_argument('--ranks', default=','.join(map(str, T.CONFORMANCE_RANKS)), help='default 2,3,4')
    ap.add_argument('--sweep', default=None, help='every P the tree runs for these backends (the transport and '
                    'one-cell plans are made over it; default: --ranks)')
    ap.add_argument('--groups', default=','.join(GROUPS), help='default: all (%s)' % ','.join(GROUPS))
    ap.add_argument('--transports', default=','.join(C.TRANSPORTS), help='default rma,shm')
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument('--alternate-transports', dest='mode', action='store_const', const='alternate',
                      help='one transport per cell: (row index + position of P in the program\'s sweep) mod 2')
    mode.add_argument('--other-transports', dest='mode', action='store_const', const='other',
                      help='the transports --alternate-transports leaves out (the two make the full matrix)')
    mode.add_argument('--one-cell-per-program', dest='mode', action='store_const', const='one-cell',
                      help='one run per program over the sweep (P and transport rotating over the programs)')
    ap.set_defaults(mode='both')
    ap.add_argument('--case', action='append', help='only this case (repeatable)')
    ap.add_argument('--workdir', default=None)
    T.add_max_failures(ap)
    ap.add_argument('--list-plan', action='store_true', help='print the runs (case backend P transport), run nothing')
    ap.add_argument('--check-plan', metavar='FILE', help='check the plans of the tests listed in FILE, run nothing')
    ap.add_argument('--table-md', default=None, help='also write the table as Markdown to this file')
    ap.add_argument('--results-json', default=None, help='also write the outcome as JSON (for --merge)')
    ap.add_argument('--merge', nargs='+', metavar='JSON', help='run nothing: print (and --table-md) the table of '
                    'these --results-json files')
    ap.add_argument('-j', '--jobs', type=int, default=1, help='runs at a time (default 1)')
    ap.add_argument('--batch', dest='batch', action='store_true', default=True,
                    help='run the runs of one P as pldrun batches (one MPI job, pldrun --batch; a run that does '
                    'not pass in its batch is started again alone): the default')
    ap.add_argument('--no-batch', dest='batch', action='store_false', help='start every run alone')
    args = ap.parse_args(argv)
    try:
        args.ranks = [int(x) for x in args.ranks.split(',') if x]
        args.sweep = [int(x) for x in args.sweep.split(',') if x] if args.sweep else list(args.ranks)
    except ValueError:
        ap.error('--ranks and --sweep take comma-separated numbers')
    for P in args.ranks:
        if P not in args.sweep:
            ap.error('P = %d of --ranks is not in --sweep %s' % (P, ','.join(map(str, args.sweep))))
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
    if len(set(b.name for b in args.backend_objs)) != len(args.backend_objs):
        ap.error('a backend named twice in --backends')
    args.pldrun = os.path.abspath(args.pldrun)
    args.workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'conformance_runs'))
    return args


def run_table(args):
    """Probes, runs the plan; returns (result, exit status)."""
    env = T.mpi_env(REPO)
    t0 = time.time()
    cells, todo, rows = plan(args)
    status = 0
    for b in args.backend_objs:
        probe(b, args, env)
        print('probe: %s: %s%s' % (b.name, '' if b.available or b.probe_error else 'unavailable: ', b.reason))
        if b.probe_error:
            print('FAIL: %s: %s' % (b.name, b.probe_error))
        if b.available:
            continue
        # unavailable (skip) or a failed probe (fail): no run of this backend
        todo = [x for x in todo if x[1] is not b]
        for (case, bn, P), cell in cells.items():
            if bn == b.name and cell.status is None:
                cell.status = 'fail' if b.probe_error else 'skipped'
                cell.reason = ('failed: ' if b.probe_error else 'backend unavailable: ') + b.reason
    sys.stdout.flush()
    notrun = execute(args, cells, todo, env)
    if notrun:
        status = 1
    for b in args.backend_objs:
        ran = [c for (case, bn, P), c in cells.items() if bn == b.name and c.runs]
        if b.available and not ran:
            print('FAIL: no cell ran for backend %s (%s): nothing of groups %s%s runs at P = %s in this plan' % (
                b.name, 'the reference backend never skips' if b.reference else 'the probe found it available',
                ','.join(args.groups), ', cases ' + ','.join(args.case) if args.case else '',
                ','.join(map(str, args.ranks))))
            status = 1
    return result_of(args, cells, rows, time.time() - t0), status


def main(argv=None):
    try:
        args = parse_args(argv)
        if args.check_plan:
            return check_plan(args.check_plan)
        if args.merge:
            res = []
            for path in args.merge:
                with open(path) as f:
                    res.append(json.load(f))
            res, status = merge(res), 0
        elif args.list_plan:
            _, todo, _ = plan(args)
            for e, b, P, tr in todo:
                print('%s %s %d %s' % (e.case, b.name, P, tr or '-'))
            print('# %d runs' % len(todo))
            return 0
        else:
            res, status = run_table(args)
    except MissingProgram as e:
        print('run_conformance.py: error: %s' % e)
        return 2
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
    print('%d passed, %d failed, %d skipped%s' % (n['pass'], n['fail'], n['skipped'],
                                                 ', %d not run' % n['notrun'] if n['notrun'] else ''))
    if n['fail'] or n['notrun'] or status:
        return 1
    return 0 if n['pass'] or args.merge else 77


if __name__ == '__main__':
    sys.exit(main())
