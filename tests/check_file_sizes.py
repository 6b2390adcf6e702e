#!/usr/bin/env python3
"""check_file_sizes.py - no source file of the project is over the size limit
(the CTest `file_sizes`, label check; issue 38: "no file over 1,500 lines").

Counts the lines of every C source or header (.c, .h, .inc, .def), Python file
(.py) and CMake file (.cmake, CMakeLists.txt) under src/, tools/ and tests/ of
the source tree. Build trees are skipped (a directory whose name starts with
`build`, or that holds a CMakeCache.txt), and so are hidden directories and
__pycache__; generated files live in the build tree, not beside the sources.
There is no allow-list: a file over the limit is split (by subject), not
excused.

usage: check_file_sizes.py [--root DIR] [--limit N]
       DIR: the source tree (default: the parent of tests/), N: 1500
Prints every file over the limit as `PATH: LINES lines (limit N)`, largest
first, then a summary line; exits 1 if there is one, 0 otherwise.
"""
import argparse
import os
import sys

DIRS = ('src', 'tools', 'tests')
EXTENSIONS = ('.c', '.h', '.inc', '.def', '.py', '.cmake')
NAMES = ('CMakeLists.txt',)
LIMIT = 1500


def is_build_dir(path, name):
    return name.startswith('build') or os.path.exists(os.path.join(path, 'CMakeCache.txt'))


def checked_files(root):
    """The files the limit applies to, as paths relative to root, sorted."""
    out = []
    for top in DIRS:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames
                                 if not d.startswith('.') and d != '__pycache__'
                                 and not is_build_dir(os.path.join(dirpath, d), d))
            for f in filenames:
                if f.endswith(EXTENSIONS) or f in NAMES:
                    out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(out)


def count_lines(path):
    with open(path, 'rb') as f:
        data = f.read()
    n = data.count(b'\n')
    if data and not data.endswith(b'\n'):
        n += 1  # a last line without its newline is a line (as an editor shows it)
    return n


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description='no file in src/, tools/, tests/ over the line limit')
    ap.add_argument('--root', default=os.path.join(here, '..'), help='the source tree (default: %(default)s)')
    ap.add_argument('--limit', type=int, default=LIMIT, help='the most lines a file may have (default: %(default)s)')
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    missing = [d for d in DIRS if not os.path.isdir(os.path.join(root, d))]
    if missing:
        print('check_file_sizes.py: %s is not the source tree (no %s/)' % (root, ', '.join(missing)))
        return 2
    files = checked_files(root)
    over = [(count_lines(os.path.join(root, f)), f) for f in files]
    over = sorted(((n, f) for n, f in over if n > args.limit), key=lambda x: (-x[0], x[1]))
    for n, f in over:
        print('%s: %d lines (limit %d)' % (f, n, args.limit))
    print('%d files in %s checked (%s), %d over %d lines' % (len(files), root, ', '.join(d + '/' for d in DIRS),
                                                             len(over), args.limit))
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
