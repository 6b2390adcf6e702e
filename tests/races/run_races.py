#!/usr/bin/env python3
"""run_races.py - `pldrun --check-races` on the race corpus (CTest label `races`, and `mpi`).

tests/races/racy/NAME.pld holds a program with a data race on window memory
(or on a plain tensor that two blocks of a launch write: "data race on tensor"),
tests/races/clean/NAME.pld its fixed twin (tests/races/README.md lists them).
Each program starts with directive comments:

    # ranks: P                       the rank count
    # args: --in x=arange --out y    pldrun arguments (`--out NAME` alone: a file in the work dir)
    # race: L1 L2                    racy only, repeatable: source lines of the two
                                     conflicting accesses

A racy case passes when pldrun exits 0 and, for every `# race:` line, one
report names both lines: the warning's own location and its note ("the
other access"), in either order; every report must name a pair listed in the
program (no report of a pair the author did not expect). A clean case passes
when pldrun exits 0 with no data-race report and says "0 data races reported".

usage:
  run_races.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
               [--case racy/NAME | clean/NAME] [--repeat N] [--workdir DIR] [--max-failures N] [--list]

A missing corpus directory or a program without its twin is an error (exit 2),
for --list too. The runner stops after --max-failures failed runs (default 3,
0: no limit): "stopped after N failures: M cases not run".
"""
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

REPORT = re.compile(r'^(?:\[rank \d+/\d+\] )?(\S+?):(\d+):\d+: warning: data race on (?:window|tensor) ')
NOTE = re.compile(r'^(?:\[rank \d+/\d+\] )?(\S+?):(\d+):\d+: note: the other access')


def cases():
    """racy/NAME and clean/NAME of every program of the corpus. A missing or
    empty directory, or a program without its twin, is an error (exit 2, at
    --list time too, so that configure fails): no case vanishes in silence."""
    out, names, problems = [], {}, []
    for kind in ('racy', 'clean'):
        d = os.path.join(HERE, kind)
        if not os.path.isdir(d):
            problems.append('the corpus directory %s does not exist' % d)
            continue
        names[kind] = set(f[:-4] for f in os.listdir(d) if f.endswith('.pld'))
        if not names[kind]:
            problems.append('the corpus directory %s holds no program' % d)
        out += ['%s/%s' % (kind, n) for n in sorted(names[kind])]
    if len(names) == 2:
        for kind, other in (('racy', 'clean'), ('clean', 'racy')):
            for n in sorted(names[kind] - names[other]):
                problems.append('%s/%s.pld has no twin %s/%s.pld' % (kind, n, other, n))
    for p in problems:
        print('run_races.py: ' + p, file=sys.stderr)
    if problems:
        sys.exit(2)
    return out


def directives(path):
    d = {'ranks': 2, 'args': [], 'race': []}
    with open(path) as f:
        for line in f:
            if not line.startswith('#'):
                break
            m = re.match(r'#\s*(\w+):\s*(.*)$', line.rstrip('\n'))
            if not m:
                continue
            key, val = m.group(1), m.group(2).strip()
            if key == 'ranks':
                d['ranks'] = int(val.split()[0])
            elif key == 'args':
                d['args'] = val.split()
            elif key == 'race':
                a, b = val.split()[:2]
                d['race'].append(frozenset((int(a), int(b))))
    return d


def reports(err):
    """The (line of the warning, line of its note) pairs of the data-race reports in err."""
    found, pending = [], None
    for line in err.splitlines():
        m = REPORT.match(line)
        if m:
            pending = int(m.group(2))
            continue
        m = NOTE.match(line)
        if m and pending is not None:
            found.append(frozenset((pending, int(m.group(2)))))
            pending = None
    return found


def run_case(case, args, env):
    kind, name = case.split('/')
    prog = os.path.join(HERE, kind, name + '.pld')
    d = directives(prog)
    work = os.path.join(args.workdir, kind + '_' + name)
    os.makedirs(work, exist_ok=True)
    cli, it = [], iter(d['args'])
    for a in it:
        if a == '--out':
            v = next(it)
            cli += ['--out', v if '=' in v else '%s=%s' % (v, os.path.join(work, v + '.npy'))]
        else:
            cli.append(a)
    cli.append('--check-races')
    rc, out, err = T.run_pldrun(args.mpiexec, args.numproc_flag, d['ranks'], args.pldrun, prog, cli, env, work,
                                timeout=90)
    problems = []
    if rc != 0:
        problems.append('exit status %d, expected 0' % rc)
    got = reports(err)
    if kind == 'racy':
        if not d['race']:
            problems.append('the program has no `# race: L1 L2` directive')
        for want in d['race']:
            if want not in got:
                problems.append('no report pairing lines %s' % ' and '.join(str(x) for x in sorted(want)))
        for g in got:
            if g not in d['race']:
                problems.append('an unexpected report pairing lines %s' % ' and '.join(str(x) for x in sorted(g)))
    else:
        if got or 'data race on window' in err or 'data race on tensor' in err:
            problems.append('%d data-race report(s) on a race-free program' % max(1, len(got)))
        if rc == 0 and '0 data races reported' not in err:
            problems.append('no "0 data races reported" summary')
    cmd = '%s %s %d %s %s %s' % (args.mpiexec, args.numproc_flag, d['ranks'], args.pldrun, prog, ' '.join(cli))
    return problems, cmd, err


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', action='append', help='racy/NAME or clean/NAME (repeatable); default: all')
    ap.add_argument('--repeat', type=int, default=1, help='run each case N times (every run must pass)')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print one case per line and exit')
    T.add_max_failures(ap)
    args = ap.parse_args()
    all_cases = cases()
    if args.list:
        print('\n'.join(all_cases))
        return 0
    for c in args.case or []:
        if c not in all_cases:
            print('run_races.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    sel = args.case or all_cases
    args.pldrun = os.path.abspath(args.pldrun)
    args.workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'race_runs'))
    env = T.mpi_env(REPO)
    passed = failed = 0
    ff = T.FailFast(args.max_failures)
    t0 = time.time()
    for case, k in ff.each((c, k) for c in sel for k in range(args.repeat)):
        t1 = time.time()
        problems, cmd, err = run_case(case, args, env)
        if problems:
            failed += 1
            ff.fail()
            T.print_failure('%s (run %d, %.2f s)' % (case, k + 1, time.time() - t1), problems, cmd, err)
        else:
            passed += 1
            print('ok:   %s (run %d, %.2f s)' % (case, k + 1, time.time() - t1))
        sys.stdout.flush()
    print('total time %.1f s' % (time.time() - t0))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
