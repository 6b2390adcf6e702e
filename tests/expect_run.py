#!/usr/bin/env python3
"""expect_run.py - runs one command and judges it by its exit status AND its output
(the CTest tests that once passed on a PASS_REGULAR_EXPRESSION alone, which
ignores the exit status: a crash after the expected line passed).

    expect_run.py --exit N [--match REGEX]... [--no-match REGEX]... -- COMMAND [ARG]...

Runs COMMAND with its stderr merged into its stdout, echoes that output, and
passes (exit 0) only when COMMAND exited with status N, every --match regex
(Python syntax, re.MULTILINE: ^ and $ match at line ends) is found in the
output and no --no-match regex is. Otherwise it prints one line per problem,
"expect_run.py: FAIL: exit status 139, expected 0" or "expect_run.py: FAIL: no
match for /REGEX/", and exits 1. A command that cannot be started is a failure
too (exit 1).
"""
import argparse
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--exit', type=int, required=True, dest='want', help='the expected exit status')
    ap.add_argument('--match', action='append', default=[], metavar='REGEX', help='must occur in the output')
    ap.add_argument('--no-match', action='append', default=[], metavar='REGEX', help='must not occur in the output')
    ap.add_argument('command', nargs=argparse.REMAINDER, help='-- COMMAND [ARG]...')
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ['--'] else a.command
    if not cmd:
        ap.error('no command (after --)')
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    except OSError as e:
        print('expect_run.py: FAIL: cannot run %s: %s' % (cmd[0], e))
        return 1
    out = p.stdout.decode(errors='replace')
    sys.stdout.write(out if out.endswith('\n') or not out else out + '\n')
    problems = []
    if p.returncode != a.want:
        problems.append('exit status %d, expected %d' % (p.returncode, a.want))
    problems += ['no match for /%s/' % r for r in a.match if not re.search(r, out, re.M)]
    problems += ['unexpected match for /%s/' % r for r in a.no_match if re.search(r, out, re.M)]
    for q in problems:
        print('expect_run.py: FAIL: ' + q)
    if not problems:
        print('expect_run.py: ok: exit status %d%s' % (p.returncode, ', every pattern found' if a.match else ''))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
