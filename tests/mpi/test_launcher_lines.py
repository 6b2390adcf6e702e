#!/usr/bin/env python3
"""test_launcher_lines.py - the stderr check of the MPI runners' positive runs
(CTest test runner_stderr_filter, tests/multinode.cmake; no MPI, no pldrun).

pld_mpitest.unexpected_lines is the one check run_golden.py, run_coll.py and
run_multinode.py (stray_diagnostics) apply to a positive run's stderr: Open
MPI's own launcher notices (pld_mpitest.launcher_notice) are not pldrun
diagnostics, every other matching line is reported by its text. This feeds it
fake stderr texts:

  - the rsh launcher's setpgid warning, as Open MPI 4.1.4 printed it in a run
    across emulated hosts (with its "[host:pid] " prefix) and without the
    prefix, and its shell-probe warning: excused by every runner's rule;
  - a pldrun error and a pldrun warning: reported, by their text;
  - lines that carry a launcher notice's words but are pldrun's or are not
    the whole notice (a "[rank r/P]" prefix, "pldrun:", trailing text, the
    launcher's fatal "Error: setpgid(0,0) failed in child"): reported.

Prints one line per check and exits 1 when any check fails.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pld_mpitest as T  # noqa: E402
import run_multinode  # noqa: E402

SETPGID = 'plm:rsh: Warning: setpgid(16911,16911) failed in parent with errno=Permission denied(13)'
NOTICES = [
    '[mpxh31:16856] ' + SETPGID,  # verbatim from a run (scripts/mpx-ci.sh, Open MPI 4.1.4)
    SETPGID,
    '[ci-runner.example:00079] WARNING: local probe returned unhandled shell:unknown assuming bash',
]
PLD_ERROR = '[rank 1/4] /w/put_get.pld:41:9: error: pld.tensor.put: rank 7 is not in the domain (P = 4)'
PLD_WARNING = '[rank 0/4] /w/coll.pld:144:18: warning: pld.tensor.all_to_all_v: send_counts[1] = 3 is outside [0, 2]'
NOT_NOTICES = [
    '[rank 0/4] ' + SETPGID,                     # pldrun's rank prefix: never a launcher line
    'pldrun: ' + SETPGID,
    '[mpxh31:16856] ' + SETPGID + ' (and then pldrun: error: windows failed)',
    '[mpxh31:16856] plm:rsh: Error: setpgid(0,0) failed in child with errno=Permission denied(13)',
    'plm:rsh: Warning: setpgid(16911,16911) failed in parent with errno=Permission denied(13): error',
]
# each runner's rule: (name, pattern, allowed)
RULES = [
    ('run_golden.py', r'error|warning', None),
    ('run_coll.py errors', r': error:', None),
    ('run_coll.py warnings', r'warning', None),
    ('run_multinode.py (any case)', r'(?i)error|warning', None),
]

failures = 0


def check(ok, what):
    global failures
    print('%s %s' % ('ok:  ' if ok else 'FAIL:', what))
    if not ok:
        failures += 1


def main():
    mpx = 'mpx-ci: setup of 2 hosts (2 slots each, 10.250.0.0/24) 0.083 s\n'
    for line in NOTICES:
        check(T.launcher_notice(line) is not None, 'a launcher notice: %r -> %s' % (line, T.launcher_notice(line)))
        err = line + '\n'
        for name, pattern, allowed in RULES:
            got = T.unexpected_lines(err, pattern, allowed)
            check(got == [], '%s passes stderr = the notice (got %r)' % (name, got))
        got = run_multinode.stray_diagnostics(mpx + err)
        check(got == [], 'run_multinode.stray_diagnostics passes it (got %r)' % got)
    for line in NOT_NOTICES:
        check(T.launcher_notice(line) is None, 'not a launcher notice: %r -> %s' % (line, T.launcher_notice(line)))
        got = run_multinode.stray_diagnostics(NOTICES[0] + '\n' + line + '\n')
        check(got == [line], 'run_multinode.stray_diagnostics names it (got %r)' % got)
    # a pldrun error among launcher notices: every runner reports it, by its text
    err = '\n'.join([NOTICES[0], PLD_ERROR, NOTICES[2]]) + '\n'
    for name, pattern, allowed in RULES:
        if name == 'run_coll.py warnings':
            continue
        got = T.unexpected_lines(err, pattern, allowed)
        check(got == [PLD_ERROR], '%s reports the pldrun error (got %r)' % (name, got))
    got = run_multinode.stray_diagnostics(err, allowed='rank 7')  # an expected warning's text never excuses an error
    check(got == [PLD_ERROR], 'run_multinode.stray_diagnostics reports the error despite allowed (got %r)' % got)
    # a pldrun warning: reported unless it is the case's expected one
    err = NOTICES[0] + '\n' + PLD_WARNING + '\n'
    got = T.unexpected_lines(err, r'warning')
    check(got == [PLD_WARNING], 'run_coll.py reports an unexpected warning (got %r)' % got)
    got = run_multinode.stray_diagnostics(err, allowed='send_counts')
    check(got == [], 'the expected warning (send_counts) passes (got %r)' % got)
    got = run_multinode.stray_diagnostics(err)
    check(got == [PLD_WARNING], 'without it the warning is reported (got %r)' % got)
    print('%d checks failed' % failures if failures else 'all checks passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
