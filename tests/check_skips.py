#!/usr/bin/env python3
"""check_skips.py - a green run means every test ran: compares the tests that
CTest skipped in one tree with the committed list tests/expected_skips.txt
(scripts/test.sh runs it after each tree's ctest).

The list has one line per test allowed to skip on a machine like CI's:

    TREE  TIER  TEST  REASON...

TREE is `asan`, `release` or `*`; TIER is `default`, `full` or `*` (a test of
the `long` label runs in the full tier only); TEST is the exact CTest name;
REASON says why it skips there. `#` starts a comment.

The run fails (exit 1) when a test skipped that is not listed for this tree
and tier, or a listed test ran instead of skipping (the list is stale: a skip
that went away is news too), and prints each such test with CTest's skip
message. A test that did not run at all ("Not Run": its executable missing, the
stop time reached) counts as a failure as well: ctest already failed the run for
it, and this script names it again.

usage: check_skips.py --junit CTEST.xml --tree asan|release --tier default|full --list FILE
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def read_list(path, tree, tier):
    """{test: reason} of the lines that apply to this tree and tier."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 3)
            if len(parts) < 4:
                sys.exit('%s:%d: want "TREE TIER TEST REASON", got %r' % (path, n, line))
            t, ti, name, reason = parts
            if t not in ('asan', 'release', '*') or ti not in ('default', 'full', '*'):
                sys.exit('%s:%d: tree must be asan, release or *, tier default, full or *' % (path, n))
            if t in (tree, '*') and ti in (tier, '*'):
                out[name] = reason
    return out


def read_junit(path):
    """{test: (status, message)}; status is 'run', 'fail', 'skipped' or 'notrun'."""
    root = ET.parse(path).getroot()
    out = {}
    for tc in root.iter('testcase'):
        name = tc.get('name')
        status = tc.get('status') or 'run'
        skipped = tc.find('skipped')
        failure = tc.find('failure')
        msg = ''
        if skipped is not None:
            msg = skipped.get('message') or ''
            # CTest writes status="notrun" both for a test that skipped (by
            # SKIP_RETURN_CODE or SKIP_REGULAR_EXPRESSION: the message names
            # the property) and for one that could not run ("Unable to find
            # executable"); the message tells which
            status = 'skipped' if msg.startswith('SKIP_') else 'notrun'
        elif failure is not None:
            status = 'fail'
            msg = failure.get('message') or ''
        out[name] = (status, msg)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--junit', required=True)
    ap.add_argument('--tree', required=True, choices=('asan', 'release'))
    ap.add_argument('--tier', required=True, choices=('default', 'full'))
    ap.add_argument('--list', required=True)
    args = ap.parse_args()
    allowed = read_list(args.list, args.tree, args.tier)
    results = read_junit(args.junit)
    if not results:
        print('check_skips: %s lists no test' % args.junit)
        return 1
    bad = []
    skipped = sorted(n for n, (s, _) in results.items() if s == 'skipped')
    for name in skipped:
        if name not in allowed:
            bad.append('skipped, not in %s for %s/%s: %s (%s)' % (args.list, args.tree, args.tier, name,
                                                                    results[name][1] or 'no message'))
    for name in sorted(allowed):
        if name in results and results[name][0] != 'skipped':
            bad.append('listed in %s as skipping, but it %s: %s'
                       % (args.list, {'run': 'ran and passed', 'fail': 'ran and failed',
                                      'notrun': 'did not run'}[results[name][0]], name))
    for name, (s, msg) in sorted(results.items()):
        if s == 'notrun':
            bad.append('not run: %s (%s)' % (name, msg or 'no message'))
    for line in bad:
        print('check_skips: ' + line)
    print('check_skips: %s/%s: %d tests, %d skipped (%d expected), %d problems'
          % (args.tree, args.tier, len(results), len(skipped), len(allowed), len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
