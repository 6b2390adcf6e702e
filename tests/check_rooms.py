#!/usr/bin/env python3
"""check_rooms.py - the rooms of src/ depend on each other only downwards.

The directories of src/ are the rooms of the design card (src/README.md):

  base        diagnostics, arena, allocation, dtypes, .npy I/O, trace
  sim_npu     the simulated device: tile kernels, cores, cluster, scheduler,
              platform profiles (knows dtypes and views, not syntax, not MPI)
  sim_window  everything between ranks: windows, domains, transports, signals,
              waits, the watchdog, the collective protocols (no interpreter
              values, no syntax)
  debug       the debugging machinery (races, poison, seeded schedules, the
              happens-before records): windows, ranks, bytes and dtypes, no
              interpreter values, no syntax, no MPI (the window layer's)
  parser      lexer, parser, checker, lowering (knows no MPI)
  hw_backend  the backend boundary, plugins, native, ascend, code generation
  pybridge    the Python bridge of SubWorkers (embedded libpython): neutral
              views and scalars, no interpreter values, no syntax, no MPI
  interp      the walker: may use every room

Two checks, both failing the test with one line per offence:

1. Includes: every `#include "x.h"` of a file in room R names a header whose
   home room is R or one R may use (ALLOWED below); a few system headers
   are forbidden outright (MPI in sim_npu and parser).
2. Symbols (with the archives of the project's static libraries as
   arguments, tests/structure.cmake passes them): every object file is mapped to its source's room; each
   symbol it leaves undefined (nm -u) and that another project object
   defines must be defined in a room it may use. This catches a
   declaration written by hand instead of an include.

usage: check_rooms.py [--src SRC] [--nm nm] [libpld_X.a ...]
"""
import argparse
import collections
import os
import re
import subprocess
import sys

# room -> the rooms it may use (itself always); '*' = every room
ALLOWED = {
    'base': set(),
    'sim_npu': {'base'},
    'sim_window': {'base', 'sim_npu'},
    'debug': {'base', 'sim_npu', 'sim_window'},
    'parser': {'base', 'sim_npu'},
    'hw_backend': {'base', 'parser', 'sim_npu'},
    'pybridge': {'base'},
    'interp': {'*'},
}
# parser may use only the platform profiles of sim_npu (the on-chip memory
# check), not the device itself
ONLY = {('parser', 'sim_npu'): {'pld_npu_profile.h'}}
ONLY_SYMS = {('parser', 'sim_npu'): {'pld_npu_profile'}}
FORBIDDEN_SYSTEM = {
    'sim_npu': {'mpi.h'},
    'debug': {'mpi.h'},  # the window layer hides MPI
    'parser': {'mpi.h'},
    'base': {'mpi.h'},
    'pybridge': {'mpi.h'},
}
INC = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


def rooms_of(src):
    return sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))


def may_use(user, room):
    a = ALLOWED.get(user)
    if a is None:
        return False
    return room == user or '*' in a or room in a


def check_includes(src, problems):
    home, files = {}, []
    for room in rooms_of(src):
        if room not in ALLOWED:
            problems.append('src/%s/: a room check_rooms.py does not know: add it to ALLOWED (and to '
                            'src/README.md)' % room)
            continue
        for f in sorted(os.listdir(os.path.join(src, room))):
            if f.endswith(('.h', '.inc', '.def')):
                if f in home:
                    problems.append('src/%s/%s: the header name is also src/%s/%s' % (room, f, home[f], f))
                home[f] = room
            if f.endswith(('.c', '.h', '.inc', '.def')):
                files.append((room, f))
    for room, f in files:
        text = open(os.path.join(src, room, f), encoding='utf-8', errors='replace').read()
        for m in INC.finditer(text):
            kind, name = m.group(1), os.path.basename(m.group(2))
            line = text.count('\n', 0, m.start()) + 1
            where = 'src/%s/%s:%d' % (room, f, line)
            if kind == '<':
                if name in FORBIDDEN_SYSTEM.get(room, ()):
                    problems.append('%s: includes <%s>: %s must not know it' % (where, m.group(2), room))
                continue
            other = home.get(name)
            if other is None or other == room:
                continue
            if not may_use(room, other):
                problems.append('%s: includes "%s" from src/%s/: %s may use only %s' %
                                (where, name, other, room, ', '.join(sorted(ALLOWED[room])) or 'itself'))
            elif (room, other) in ONLY and name not in ONLY[(room, other)]:
                problems.append('%s: includes "%s" from src/%s/: %s may include only %s from there' %
                                (where, name, other, room, ', '.join(sorted(ONLY[(room, other)]))))


def nm_lines(nm, path, *flags):
    out = subprocess.run([nm, *flags, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return out.stdout.decode(errors='replace').splitlines()


def check_symbols(src, archives, nm, problems):
    room_of_source = {}
    for room in rooms_of(src):
        for f in os.listdir(os.path.join(src, room)):
            if f.endswith('.c'):
                room_of_source[f] = room
    archives = [a for a in archives if not a.endswith('_testing.a')]  # the mirrors compile the same sources
    defined = {}        # symbol -> (room, object)
    undefined = []      # (room, object, archive, symbol)
    for ar in archives:
        member, room = None, None
        for l in nm_lines(nm, ar, '-A'):
            # "ARCHIVE:MEMBER: ADDR T NAME" or "ARCHIVE:MEMBER:  U NAME"
            m = re.match(r'^[^:]*:([^:]+):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$', l)
            if not m:
                continue
            member, kind, sym = m.groups()
            stem = re.sub(r'\.(c\.)?o(bj)?$', '', member)
            room = room_of_source.get(stem + '.c')
            if room is None:
                continue  # generated sources (the crt text): no room
            if kind == 'U':
                undefined.append((room, stem, os.path.basename(ar), sym))
            elif kind.isupper():
                defined.setdefault(sym, (room, stem))
    for room, stem, ar, sym in undefined:
        if re.match(r'^(P?MPI_|ompi_)', sym) and room in FORBIDDEN_SYSTEM and 'mpi.h' in FORBIDDEN_SYSTEM[room]:
            problems.append('%s(%s.o): uses %s: %s must not know MPI' % (ar, stem, sym, room))
            continue
        d = defined.get(sym)
        if d is None or d[0] == room:
            continue
        if not may_use(room, d[0]):
            problems.append('%s(%s.o): uses %s, defined in src/%s/%s.c: %s may use only %s' %
                            (ar, stem, sym, d[0], d[1], room, ', '.join(sorted(ALLOWED[room])) or 'itself'))
        elif (room, d[0]) in ONLY_SYMS and d[1] not in ONLY_SYMS[(room, d[0])]:
            problems.append('%s(%s.o): uses %s, defined in src/%s/%s.c: %s may use only %s.c from there' %
                            (ar, stem, sym, d[0], d[1], room, ', '.join(sorted(ONLY_SYMS[(room, d[0])]))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument('--src', default=os.path.join(here, '..', 'src'))
    ap.add_argument('archives', nargs='*', help="the project's static libraries: also check their symbols")
    ap.add_argument('--nm', default='nm')
    args = ap.parse_args()
    problems = []
    check_includes(args.src, problems)
    if args.archives:
        check_symbols(args.src, args.archives, args.nm, problems)
    for p in problems:
        print(p)
    print('check_rooms: %d problem%s' % (len(problems), '' if len(problems) == 1 else 's'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
