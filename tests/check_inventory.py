#!/usr/bin/env python3
"""check_inventory.py - tests cannot vanish: counts the CTest tests registered in a
build tree per label and compares them with the committed table of that kind of
tree, tests/inventory/<asan|release>.txt (CTest test `test_inventory`, label
`check`, tests/inventory.cmake).

A test counts once under each of its labels ("(none)" when it has none), and
once in `total`. The table's first data line names the configuration it was
made for:

    config tree=release root=yes backends=sim,native,ascend cann=no
    check 14
    mpi 210
    ...
    total 333

What is registered depends on that configuration (tests/inventory.cmake writes
this tree's into <build>/tests/inventory_config.txt): the tree kind
(PLD_SANITIZE), whether configure ran as root (multinode), the conformance
backends (PLD_CONFORMANCE_BACKENDS) and whether CANN was found (ASCEND_HOME_PATH
or PLD_ASCEND_LIBDIR set). The tables are made for CI's configuration (root,
the default backends, no CANN). In a tree configured otherwise the check
refuses -- it fails and says why -- rather than compare counts that cannot
agree. Tests in OPTIONAL are left out of the counts (registered only where an
optional neighbour exists).

usage:
  check_inventory.py --build DIR             compare (exit 0 when every count matches)
  check_inventory.py --build DIR --update    rewrite the table from DIR's counts (after adding or
                                             removing tests on purpose); refuses when DIR's
                                             configuration is not the table's, unless --new-config
  check_inventory.py --build DIR --labels    print DIR's counts and exit

On a difference it prints each differing label with the expected and actual
count and the command that updates the table; `ctest -N -L LABEL` in the tree
lists the tests of a label.
"""
import argparse
import json
import os
import subprocess
import sys

# test -> why it is not counted
OPTIONAL = {
    'examples_in_sync': 'registered only when shared/examples is beside the repository (tests/CMakeLists.txt)',
}
NONE = '(none)'


def read_config(build):
    """The key=value lines tests/inventory.cmake wrote into BUILD/tests/inventory_config.txt."""
    path = os.path.join(build, 'tests', 'inventory_config.txt')
    try:
        with open(path) as f:
            lines = [l.rstrip('\n') for l in f if '=' in l]
    except OSError as e:
        sys.exit('check_inventory.py: %s: %s (configure the tree first: tests/inventory.cmake writes it)' % (path, e))
    return dict(l.split('=', 1) for l in lines)


def count(ctest, build):
    """{label: number of tests} of the tree, 'total' included."""
    p = subprocess.run([ctest, '-N', '--show-only=json-v1'], cwd=build, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit('check_inventory.py: `ctest -N --show-only=json-v1` in %s failed (exit %d):\n%s' %
                 (build, p.returncode, p.stderr.decode(errors='replace')))
    tests = json.loads(p.stdout.decode())['tests']
    counts = {'total': 0}
    for t in tests:
        if t['name'] in OPTIONAL:
            continue
        labels = []
        for prop in t.get('properties', []):
            if prop.get('name') == 'LABELS':
                labels = prop.get('value') or []
        counts['total'] += 1
        for lab in set(labels) or {NONE}:
            counts[lab] = counts.get(lab, 0) + 1
    return counts


def read_table(path):
    """(config string, {label: count}) of a table."""
    config, counts = None, {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            key, _, val = line.partition(' ')
            if key == 'config':
                config = val.strip()
                continue
            try:
                counts[key] = int(val)
            except ValueError:
                sys.exit('check_inventory.py: %s:%d: want "LABEL COUNT", got %r' % (path, n, line))
    if config is None:
        sys.exit('check_inventory.py: %s: no "config ..." line' % path)
    return config, counts


# the tree scripts/test.sh builds of each kind (the update command in a table's header)
TREE_DIR = {'release': 'build', 'asan': 'build-asan'}


def write_table(path, kind, config, counts):
    labels = sorted(k for k in counts if k != 'total')
    with open(path, 'w') as f:
        d = TREE_DIR.get(kind, 'DIR')
        f.write('# tests/inventory/%s.txt - the CTest tests registered per label in the %s tree (%s/; test_inventory,\n'
                '# tests/check_inventory.py): a test counts once under each of its labels, and once in total.\n'
                '# Made for the configuration on the config line (CI\'s). After adding or removing tests on\n'
                '# purpose, configure the tree (scripts/test.sh does) and run:\n'
                '#   python3 tests/check_inventory.py --build %s --update\n' % (kind, kind, d, d))
        f.write('config %s\n' % config)
        width = max(len(k) for k in labels + ['total'])
        for k in labels:
            f.write('%-*s %d\n' % (width, k, counts[k]))
        f.write('%-*s %d\n' % (width, 'total', counts['total']))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', required=True, help='the build tree (where ctest runs)')
    ap.add_argument('--update', action='store_true', help='rewrite the table from this tree\'s counts')
    ap.add_argument('--new-config', action='store_true',
                    help='with --update: the table is made for this tree\'s configuration from now on')
    ap.add_argument('--labels', action='store_true', help='print the counts and exit')
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    cfg = read_config(build)
    table, config, kind = cfg['table'], cfg['config'], cfg['kind']
    counts = count(cfg.get('ctest', 'ctest'), build)
    if a.labels:
        for k in sorted(counts):
            print('%s %d' % (k, counts[k]))
        return 0
    old_config, want = read_table(table) if os.path.exists(table) else (None, {})
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    update = 'cd %s && python3 tests/check_inventory.py --build %s --update' % (src, build)
    if a.update:
        if old_config is not None and old_config != config and not a.new_config:
            print('check_inventory.py: %s was made for\n    %s\nand this tree is\n    %s\nnot updated: make the '
                  'table in a tree configured as CI is, or pass --new-config to change the configuration it is '
                  'made for' % (table, old_config, config))
            return 1
        write_table(table, kind, config, counts)
        changed = sorted(k for k in set(counts) | set(want) if counts.get(k) != want.get(k))
        print('check_inventory.py: wrote %s (%d tests%s)' % (table, counts['total'], '; changed: ' + ', '.join(
            '%s %s -> %s' % (k, want.get(k, 0), counts.get(k, 0)) for k in changed) if changed else '; no change'))
        return 0
    if old_config is None:
        print('test_inventory: FAIL: there is no table %s for this kind of tree (%s); make it with\n    %s' %
              (table, kind, update))
        return 1
    if old_config != config:
        print('test_inventory: FAIL: refused: %s was made for the configuration\n    %s\nbut this tree was '
              'configured with\n    %s\nWhat is registered depends on it, so the counts cannot be compared. Run '
              'the check in a tree configured as CI is (as root, the default PLD_CONFORMANCE_BACKENDS, no CANN: '
              'ASCEND_HOME_PATH and PLD_ASCEND_LIBDIR unset), or, when CI\'s configuration itself changed, '
              'regenerate the table there: %s --new-config' % (table, old_config, config, update))
        return 1
    diff = sorted(k for k in set(counts) | set(want) if counts.get(k, 0) != want.get(k, 0))
    if not diff:
        print('test_inventory: ok: %d tests, %d labels, as %s says' % (counts['total'], len(counts) - 1, table))
        return 0
    print('test_inventory: FAIL: the tests registered in this tree differ from %s:' % table)
    width = max(len(k) for k in diff + ['label'])
    print('    %-*s %8s %8s' % (width, 'label', 'expected', 'actual'))
    for k in diff:
        got, exp = counts.get(k, 0), want.get(k, 0)
        print('    %-*s %8d %8d   (%+d)' % (width, k, exp, got, got - exp))
    print('A test vanished (a runner lists fewer cases, a registration was dropped) or appeared. `ctest -N -L LABEL` '
          'in %s lists a label\'s tests. If the change is intended, update the table and commit it:\n    %s' %
          (build, update))
    return 1


if __name__ == '__main__':
    sys.exit(main())
