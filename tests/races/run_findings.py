#!/usr/bin/env python3
"""run_findings.py - findings that fail a run (issue 42): `--check-races=error`, `--poison=error` and
`--findings FILE.json` (CTest `findings_gate`, labels `races`, `poison`, `mpi`).

Each step runs pldrun under mpirun at P = 2 and reads the SARIF 2.1.0 log it writes:

  racy      tests/races/racy/blocks_store_load.pld with --check-races=error --schedule-seed 7:
            exit status 1, and one data-race result per rank k (sorted: rank 0's first) whose two
            sides are block 0's pl.tile.store (line 27, a write) and block 1's pl.tile.load (line
            30, a read) of window 'stage_buf' on rank k, bytes [0, 64): locations[0] and
            relatedLocations[0] name the two lines
  replay    the same run again: the log is identical byte for byte (sorted, no time, no address)
  warn      the same with plain --check-races: exit status 0 (warnings leave the status alone),
            the same results, level "warning"
  clean     tests/races/clean/blocks_store_load.pld with --check-races=error: exit 0, no result
  poison    tests/poison/load_tail.pld with --poison=error: exit 1, one poison-read result per
            rank (window 'keep_buf', bytes [128, 256) of each rank, never_written 128, line 25)
  poison_ok the same program with the load of rows 0..1 only (its fixed form): exit 0, no result

usage: run_findings.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n] [--workdir DIR]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
FAILS = []


def need(cond, what):
    if not cond:
        FAILS.append(what)
        print('FAIL: ' + what, file=sys.stderr)
    return cond


def run(a, prog, extra, log):
    if os.path.exists(log):
        os.remove(log)
    cmd = [a.mpiexec, a.numproc_flag, '2', a.pldrun, prog, '--out', 'ys=' + os.path.join(a.workdir, 'ys.npy'),
           '--in', 'xs=arange', '--findings', log] + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode(errors='replace')
    sarif = None
    if need(os.path.exists(log), '%s %s: no findings file' % (os.path.basename(prog), ' '.join(extra))):
        with open(log) as f:
            sarif = json.load(f)
        need(sarif.get('version') == '2.1.0' and len(sarif.get('runs', [])) == 1, 'not a SARIF 2.1.0 log with one run')
    return p.returncode, sarif, err


def results(sarif):
    return sarif['runs'][0]['results'] if sarif else []


def line_of(loc):
    return loc['physicalLocation']['region']['startLine']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--mpiexec', default='mpirun')
    ap.add_argument('--numproc-flag', default='-n')
    ap.add_argument('--workdir', default='findings_runs')
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    racy = os.path.join(REPO, 'tests', 'races', 'racy', 'blocks_store_load.pld')
    clean = os.path.join(REPO, 'tests', 'races', 'clean', 'blocks_store_load.pld')
    log1, log2 = os.path.join(a.workdir, 'racy1.json'), os.path.join(a.workdir, 'racy2.json')

    # racy: exit 1 and the two sides
    rc, s, err = run(a, racy, ['--check-races=error', '--schedule-seed', '7'], log1)
    need(rc == 1, 'racy: exit status %d, want 1 (stderr: %s)' % (rc, err[-400:]))
    res = [r for r in results(s) if r.get('ruleId') == 'data-race']
    need([r['properties']['owner'] for r in res] == [0, 1], 'racy: owners %r, want [0, 1] (sorted, one per rank)'
         % [r['properties']['owner'] for r in res])
    for k, r in enumerate(res):
        need(r['level'] == 'error', 'racy: level %r' % r['level'])
        need(line_of(r['locations'][0]) == 27 and line_of(r['relatedLocations'][0]) == 30,
             'racy: locations %r' % [line_of(r['locations'][0]), line_of(r['relatedLocations'][0])])
        pr = r['properties']
        need(pr['kind'] == 'race' and pr['window'] == 'stage_buf' and pr['owner'] == k and pr['bytes'] == [0, 64],
             'racy: properties %r' % {k: pr[k] for k in ('kind', 'window', 'owner', 'bytes')})
        want = [dict(rank=k, block=0, op='pl.tile.store', access='write', line=27, col=25),
                dict(rank=k, block=1, op='pl.tile.load', access='read', line=30, col=23)]
        got = [{k: sd[k] for k in ('rank', 'block', 'op', 'access', 'line', 'col')} for sd in pr['sides']]
        need(got == want, 'racy: sides %r, want %r' % (got, want))
        need(all(sd['file'] == racy for sd in pr['sides']), 'racy: files of the sides')

    # replay: the same bytes
    rc2, _, _ = run(a, racy, ['--check-races=error', '--schedule-seed', '7'], log2)
    need(rc2 == 1, 'replay: exit status %d' % rc2)
    if os.path.exists(log1) and os.path.exists(log2):
        with open(log1, 'rb') as f1, open(log2, 'rb') as f2:
            need(f1.read() == f2.read(), 'replay: the two logs differ')

    # warn: plain --check-races keeps the exit status
    rc, s, err = run(a, racy, ['--check-races', '--schedule-seed', '7'], os.path.join(a.workdir, 'warn.json'))
    need(rc == 0, 'warn: exit status %d, want 0' % rc)
    res = results(s)
    need(len(res) == 2 and all(r['level'] == 'warning' for r in res), 'warn: %r' % [(r['ruleId'], r['level']) for r in res])

    # clean: exit 0, empty list
    rc, s, err = run(a, clean, ['--check-races=error', '--schedule-seed', '7'], os.path.join(a.workdir, 'clean.json'))
    need(rc == 0, 'clean: exit status %d, want 0 (stderr: %s)' % (rc, err[-400:]))
    need(s is not None and results(s) == [], 'clean: results %r' % results(s))

    # poison: load_tail reads rows 2..3 it never wrote, on each rank
    prog = os.path.join(REPO, 'tests', 'poison', 'load_tail.pld')
    rc, s, err = run(a, prog, ['--poison=error'], os.path.join(a.workdir, 'poison.json'))
    need(rc == 1, 'poison: exit status %d, want 1 (stderr: %s)' % (rc, err[-400:]))
    res = results(s)
    got = sorted((r['properties']['sides'][0]['rank'], r['properties']['window'], r['properties']['owner'],
                  r['properties']['bytes'], r['properties']['never_written'], line_of(r['locations'][0]),
                  r['ruleId'], r['properties']['sides'][0]['op']) for r in res)
    want = [(k, 'keep_buf', k, [128, 256], 128, 25, 'poison-read', 'pl.tile.load') for k in (0, 1)]
    need(got == want, 'poison: %r, want %r' % (got, want))

    # poison_ok: the fixed load
    with open(prog) as f:
        text = f.read()
    bug = 'pl.load(keep, [0, 0], [ROWS, COLS])'
    need(bug in text, 'poison_ok: %s not in %s' % (bug, prog))
    fixed = os.path.join(a.workdir, 'load_tail_fixed.pld')
    with open(fixed, 'w') as f:
        f.write(text.replace(bug, 'pl.load(keep, [0, 0], [HALF, COLS])', 1))
    rc, s, err = run(a, fixed, ['--poison=error'], os.path.join(a.workdir, 'poison_ok.json'))
    need(rc == 0, 'poison_ok: exit status %d, want 0 (stderr: %s)' % (rc, err[-400:]))
    need(s is not None and results(s) == [], 'poison_ok: results %r' % results(s))

    print('run_findings.py: %s' % ('%d failure(s)' % len(FAILS) if FAILS else 'all steps passed'))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
