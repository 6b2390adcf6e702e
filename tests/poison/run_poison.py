#!/usr/bin/env python3
"""run_poison.py - `pldrun --poison` (CTest label `poison`; `mpi` for P > 1).

Every case runs one program (tests/poison/*.pld, or a copy of a programs/
file with a line rewritten) under `MPIEXEC -n P PLDRUN --poison` and checks:

  1. the exit status is 0 (poison warnings never change it);
  2. the poison warnings on stderr are exactly the expected ones: per rank,
     `[rank r/P] FILE:LINE:COL: warning: <message>` with LINE:COL found from a
     marker in the program text (pld_mpitest.locate) and the message (op,
     byte count, window or tile, owning rank, byte range) written here from
     the program's layout, and no other `never-written` line;
  3. the outputs, read bit by bit from the --out file: never-written values
     are the documented pattern (FP32 0x7FA5A5A5, BF16 0x7FA5), the others the
     golden values computed here from the inputs (arange: 0, 1, 2, ...).

The `_fixed` variants rewrite the buggy line and must give no warning at all
and the golden outputs. The goldens never come from pldrun's own output.

usage:
  run_poison.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
                [--case NAME] [--ranks P] [--direct] [--workdir DIR] [--max-failures N] [--list]

--list prints one line per CTest test: "CASE P"; it fails (exit 2), as a run
does, when a case's program is missing or lacks the text a rewrite replaces.
--direct runs the P = 1 cases as plain `pldrun` (no mpirun: the fast tests).
The runner stops after --max-failures failed runs (default 3, 0: no limit).
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'tests', 'mpi'))
import pld_mpitest as T  # noqa: E402

NAN32 = 0x7FA5A5A5
NANBF16 = 0x7FA5
F32 = lambda i: struct.unpack('<I', struct.pack('<f', float(i)))[0]  # noqa: E731


def raw_words(path, width):
    """The data of a .npy file as little-endian unsigned words of `width` bytes."""
    with open(path, 'rb') as f:
        raw = f.read()
    if raw[6] == 1:
        (hlen,), off = struct.unpack('<H', raw[8:10]), 10
    else:
        (hlen,), off = struct.unpack('<I', raw[8:12]), 12
    data = raw[off + hlen:]
    fmt = {2: 'H', 4: 'I'}[width]
    return list(struct.unpack('<%d%s' % (len(data) // width, fmt), data))


# --------------------------------------------------------------- the cases
#
# Each case: program, ranks, extra pldrun args, rewrites [(old, new)], the
# expected warnings as a function of (r, P) -> list of (marker, message), and
# the expected output words as a function of P -> {name: (width, [words])}.

ROWS, COLS = 4, 16


def rows_of(P, rows, cols, f):
    """Words of an [P, rows, cols] FP32 output: f(r, i, j) -> word."""
    return [f(r, i, j) for r in range(P) for i in range(rows) for j in range(cols)]


def arange_word(P, rows, cols):
    return lambda r, i, j: F32((r * rows + i) * cols + j)


def top_half(P, tail):
    """[P, 4, 16] FP32: rows 0..1 of every rank from xs = arange, rows 2..3 the word `tail`."""
    x = arange_word(P, ROWS, COLS)
    return rows_of(P, ROWS, COLS, lambda r, i, j: x(r, i, j) if i < 2 else tail)


GET_MSG = ("pld.tensor.get reads 192 never-written bytes of window 'recv_buf' on rank %d (bytes 64..255 of 256): "
           "they read as NaN under --poison")
LOAD_MSG = ("pl.tile.load reads 128 never-written bytes of window 'keep_buf' on rank %d (bytes 128..255 of 256): "
            "they read as NaN under --poison")
TILE_MSG = ("pl.tile.store reads 128 never-written bytes of tile 'acc' (created by pl.tile.create at %d:%d) on rank "
            "%d (bytes 128..255 of 256): they read as NaN under --poison")
FIRST_MSG = ("pl.tile.load reads 128 never-written bytes of window 'keep_buf' on rank %d (bytes 0..127 of 128): they "
             "read as NaN under --poison")
A2AV_MSG = ("pl.tile.load reads 64 never-written bytes of window 'data_buf' on rank %d (bytes %d..%d of 256): they "
            "read as NaN under --poison")
PUSH_MSG = ("builtin.tensor.all_to_all_v reads %d never-written bytes of window 'stage_buf' on rank %d (bytes "
            "128..%d of 256): they read as NaN under --poison")
BF16_MSG = ("pl.tile.load reads 128 never-written bytes of window 'win_buf' on rank %d (bytes %d..%d of 256): they "
            "read as NaN under --poison")

GET_BUG = 'pld.tensor.get(y, nxt, recv)  # BUG: rows 1..3 of the peer\'s window were never written'
LOAD_BUG = 'pl.load(keep, [0, 0], [ROWS, COLS])  # BUG: rows 2..3 were never written'
TILE_BUG = 'acc = pl.tile.assemble(acc, top, [0, 0])  # BUG: the bottom half is never assembled'
A2AV_LOOP = 'for k in pl.range(pl.cast(c, pl.INDEX)):'
A2AV_LOAD = 'pl.load(data, [s * MAX_RECV + k, 0], [1, COLS])'
A2AV_STAGE = 'blk = pl.load(x, [0, 0], [ROWS, COLS])'
A2AV_CALL = 'pld.tensor.all_to_all_v(stage, data, sig, counts, recv)'


def tile_born(path):
    return T.locate(path, 'pl.tile.create(')


def a2av_outs(P, nan_tail, staged=None):
    """outs[r] row s*2 + k = xs[s] row r*2 + k for k < c(s, r) = (s + r) % 3, else NaN (reading the whole
    capacity block) or 0 (the fixed program copies only the received rows). staged: how many rows of
    its stage every rank wrote (None: all); the rows sent from beyond them arrive as NaN."""
    MR, rows = 2, 2 * P

    def w(r, i, j):
        s, k = divmod(i, MR)
        if k < (s + r) % 3:
            if staged is not None and r * MR + k >= staged:
                return NAN32
            return F32((s * rows + r * MR + k) * COLS + j)
        return NAN32 if nan_tail else 0
    return rows_of(P, rows, COLS, w)


CASES = {
    'get_unwritten': dict(
        prog='get_unwritten.pld', ranks=[2, 4], inputs=['xs=arange'],
        warn=lambda r, P, path: [(GET_BUG, GET_MSG % ((r + 1) % P))],
        outs=lambda P: {'ys': (4, rows_of(P, ROWS, COLS, lambda r, i, j: arange_word(P, ROWS, COLS)(
            (r + 1) % P, i, j) if i == 0 else NAN32))}),
    'get_unwritten_fixed': dict(
        prog='get_unwritten.pld', ranks=[2], inputs=['xs=arange'],
        rewrite=[(GET_BUG, 'pld.tensor.get(y, nxt, recv, [0, 0], [0, 0], [1, COLS])')],
        warn=lambda r, P, path: [],
        outs=lambda P: {'ys': (4, rows_of(P, ROWS, COLS, lambda r, i, j: arange_word(P, ROWS, COLS)(
            (r + 1) % P, i, j) if i == 0 else 0))}),
    'get_unwritten_rma': dict(
        prog='get_unwritten.pld', ranks=[2], inputs=['xs=arange'], extra=['--window-transport', 'rma'],
        warn=lambda r, P, path: [(GET_BUG, GET_MSG % ((r + 1) % P))],
        outs=lambda P: {'ys': (4, rows_of(P, ROWS, COLS, lambda r, i, j: arange_word(P, ROWS, COLS)(
            (r + 1) % P, i, j) if i == 0 else NAN32))}),
    'load_tail': dict(
        prog='load_tail.pld', ranks=[1, 2], inputs=['xs=arange'],
        warn=lambda r, P, path: [(LOAD_BUG, LOAD_MSG % r)],
        outs=lambda P: {'ys': (4, top_half(P, NAN32))}),
    'load_tail_fixed': dict(
        prog='load_tail.pld', ranks=[1], inputs=['xs=arange'],
        rewrite=[(LOAD_BUG, 'pl.load(keep, [0, 0], [HALF, COLS])')],
        warn=lambda r, P, path: [],
        outs=lambda P: {'ys': (4, top_half(P, 0))}),
    'tile_partial': dict(
        prog='tile_partial.pld', ranks=[1], inputs=['xs=arange'],
        warn=lambda r, P, path: [('pl.store(acc, [0, 0], y)', TILE_MSG % (tile_born(path) + (r,)))],
        outs=lambda P: {'ys': (4, top_half(P, NAN32))}),
    'tile_partial_fixed': dict(
        prog='tile_partial.pld', ranks=[1], inputs=['xs=arange'],
        rewrite=[(TILE_BUG, 'acc = pl.tile.assemble(acc, bottom, [HALF, 0])')],
        warn=lambda r, P, path: [],
        outs=lambda P: {'ys': (4, rows_of(P, ROWS, COLS, arange_word(P, ROWS, COLS)))}),
    # fresh windows every dispatch: the second one reads the pattern again
    'read_first_fresh': dict(
        prog='read_first.pld', ranks=[1, 2], inputs=['xs=arange'], extra=['--dispatches', '2'],
        warn=lambda r, P, path: [('pl.load(keep', FIRST_MSG % r)],
        outs=lambda P: {'ys': (4, [NAN32] * (P * 2 * COLS))}),
    # persistent windows, reset between dispatches: poisoned again
    'read_first_reset': dict(
        prog='read_first.pld', ranks=[2], inputs=['xs=arange'],
        extra=['--dispatches', '2', '--persistent-windows', '--reset-persistent-windows', 'yes'],
        warn=lambda r, P, path: [('pl.load(keep', FIRST_MSG % r)],
        outs=lambda P: {'ys': (4, [NAN32] * (P * 2 * COLS))}),
    # kept windows: what dispatch 1 wrote counts as written in dispatch 2
    'read_first_keep': dict(
        prog='read_first.pld', ranks=[2], inputs=['xs=arange'],
        extra=['--dispatches', '2', '--persistent-windows', '--reset-persistent-windows', 'no'],
        warn=lambda r, P, path: [('pl.load(keep', FIRST_MSG % r)],
        outs=lambda P: {'ys': (4, rows_of(P, 2, COLS, arange_word(P, 2, COLS)))}),
    # the capacity tail of all_to_all_v (pld_semantics.md §2.20): the receiver copies the whole
    # MAX_RECV block of every source instead of the recv_counts rows
    'a2av_tail': dict(
        prog=os.path.join(REPO, 'programs', 'host', 'all_to_all_v.pld'), ranks=[2], inputs=['xs=arange'],
        rewrite=[('P = 4\n', 'P = 2\n'), (A2AV_LOOP, 'for k in pl.range(MAX_RECV):')],
        # rank 0 gets 0 rows from rank 0 (block 0, row 0 first), rank 1 gets 1 row from rank 0 (row 1 first)
        warn=lambda r, P, path: [(A2AV_LOAD, A2AV_MSG % ((r, 0, 63) if r == 0 else (r, 64, 127)))],
        outs=lambda P: {'outs': (4, a2av_outs(P, True))}),
    'a2av_tail_fixed': dict(
        prog=os.path.join(REPO, 'programs', 'host', 'all_to_all_v.pld'), ranks=[2], inputs=['xs=arange'],
        rewrite=[('P = 4\n', 'P = 2\n')],
        warn=lambda r, P, path: [],
        outs=lambda P: {'outs': (4, a2av_outs(P, False))}),
    # all_to_all_v pushes rows its sender never staged (only the first MAX_RECV rows are): the
    # collective's read of its input is checked, also when it puts the rows from the input in place
    # (src/sim_window/pld_coll.c push_src). c(s, 1) = 1 + s rows go to rank 1 from stage rows 2.. (never written)
    'a2av_stage_partial': dict(
        prog=os.path.join(REPO, 'programs', 'host', 'all_to_all_v.pld'), ranks=[2], inputs=['xs=arange'],
        rewrite=[('P = 4\n', 'P = 2\n'), (A2AV_STAGE, 'blk = pl.load(x, [0, 0], [MAX_RECV, COLS])')],
        warn=lambda r, P, path: [(A2AV_CALL, PUSH_MSG % ((64, r, 191) if r == 0 else (128, r, 255)))],
        outs=lambda P: {'outs': (4, a2av_outs(P, False, staged=2))}),
    'a2av_stage_partial_rma': dict(
        prog=os.path.join(REPO, 'programs', 'host', 'all_to_all_v.pld'), ranks=[2], inputs=['xs=arange'],
        extra=['--window-transport', 'rma'],
        rewrite=[('P = 4\n', 'P = 2\n'), (A2AV_STAGE, 'blk = pl.load(x, [0, 0], [MAX_RECV, COLS])')],
        warn=lambda r, P, path: [(A2AV_CALL, PUSH_MSG % ((64, r, 191) if r == 0 else (128, r, 255)))],
        outs=lambda P: {'outs': (4, a2av_outs(P, False, staged=2))}),
    # a real finding in the corpus: read_rows copies every row of the window, but only row (q - 1) % P
    # was pushed (the others are read as zero: fresh windows are zero-filled, §1.5)
    'corpus_remote_store_raw_bf16': dict(
        prog=os.path.join(REPO, 'programs', 'tutorial', 'remote_store_raw_bf16.pld'), ranks=[2],
        inputs=['srcs=arange'],
        warn=lambda r, P, path: [('pl.load(win, [j, 0], [1, COLS])',
                            BF16_MSG % ((r, 0, 127) if r == 0 else (r, 128, 255)))],
        outs=None),
}


def case_tests():
    return [(c, P) for c in CASES for P in CASES[c]['ranks']]


def source_of(case):
    """The program file a case starts from."""
    prog = CASES[case]['prog']
    return prog if os.path.isabs(prog) else os.path.join(HERE, prog)


def check_sources(cases):
    """Every case's program exists and holds the text each of its rewrites replaces; else exit 2 (at --list
    time too, so that configure fails: no case vanishes or fails later for a reason that is not pldrun's)."""
    T.require_programs('run_poison.py', [(c, source_of(c)) for c in cases])
    bad = []
    for c in cases:
        with open(source_of(c)) as f:
            text = f.read()
        bad += ['run_poison.py: case %s: %r not found in %s' % (c, old, source_of(c))
                for old, _ in CASES[c].get('rewrite', []) if old not in text]
    if bad:
        print('\n'.join(bad), file=sys.stderr)
        sys.exit(2)


def program_for(case, wd):
    spec = CASES[case]
    path = source_of(case)
    with open(path) as f:
        text = f.read()
    for old, new in spec.get('rewrite', []):
        if old not in text:
            raise ValueError('%s: %r not found' % (path, old))
        text = text.replace(old, new, 1)
    out = os.path.join(wd, os.path.basename(path))
    with open(out, 'w') as f:
        f.write(text)
    return out


def run_direct(pldrun, prog, cli, env, cwd):
    """P = 1 without mpirun (pldrun initialises MPI as a singleton)."""
    try:
        p = subprocess.run([pldrun, prog] + cli, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, env=env, cwd=cwd, timeout=100)
    except subprocess.TimeoutExpired:
        return 124, '', '(timed out after 100 s)'
    return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')


def run_case(case, P, args, env):
    spec = CASES[case]
    wd = os.path.join(args.workdir, '%s.p%d' % (case, P))
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    prog = program_for(case, wd)
    cli = []
    for i in spec['inputs']:
        cli += ['--in', i]
    outs = spec['outs'](P) if spec.get('outs') else {}
    for name in outs:
        cli += ['--out', '%s=%s' % (name, os.path.join(wd, 'out_%s.npy' % name))]
    cli += ['--timeout', '30', '--poison'] + spec.get('extra', [])
    if P == 1 and args.direct:
        rc, _, err = run_direct(args.pldrun, prog, cli, env, wd)
    else:
        rc, _, err = T.run_pldrun(args.mpiexec, args.numproc_flag, P, args.pldrun, prog, cli, env, wd, timeout=100)
    problems = []
    if rc != 0:
        problems.append('exit status %d, expected 0' % rc)
    if ': error:' in err:
        problems.append('errors on stderr')
    want = []
    for r in range(P):
        for marker, msg in spec['warn'](r, P, prog):
            line, col = T.locate(prog, marker)
            want.append('[rank %d/%d] %s:%d:%d: warning: %s' % (r, P, prog, line, col, msg))
    got = [l for l in err.splitlines() if 'never-written' in l]
    for w in want:
        if w not in got:
            problems.append('missing warning: %s' % w)
    for g in got:
        if g not in want:
            problems.append('unexpected warning: %s' % g)
    if not want and re.search(r': warning: ', err):
        problems.append('warnings on stderr, expected none')
    for name, (width, words) in outs.items():
        if rc != 0:
            break
        try:
            have = raw_words(os.path.join(wd, 'out_%s.npy' % name), width)
        except (OSError, ValueError, KeyError) as e:
            problems.append('cannot read output %s: %s' % (name, e))
            continue
        if len(have) != len(words):
            problems.append('%s: %d elements, expected %d' % (name, len(have), len(words)))
            continue
        bad = [i for i in range(len(words)) if have[i] != words[i]]
        for i in bad[:5]:
            problems.append('%s[%d] = 0x%08x, expected 0x%08x' % (name, i, have[i], words[i]))
        if bad:
            problems.append('%s: %d mismatches (of %d)' % (name, len(bad), len(words)))
    return problems, prog, cli, err


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--ranks', type=int, action='append', help='P (repeatable); default: the case\'s ranks')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print "CASE P" per test and exit')
    ap.add_argument('--direct', action='store_true', help='run the P = 1 cases without mpirun')
    T.add_max_failures(ap)
    args = ap.parse_args()
    if args.list:
        check_sources(list(CASES))
        print('\n'.join('%s %d' % t for t in case_tests()))
        return 0
    for c in args.case or []:
        if c not in CASES:
            print('run_poison.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    check_sources(args.case or list(CASES))
    sel = [t for t in case_tests() if (not args.case or t[0] in args.case) and (not args.ranks or t[1] in args.ranks)]
    args.pldrun = os.path.abspath(args.pldrun)
    args.workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'poison_runs'))
    env = T.mpi_env(REPO)
    passed = failed = 0
    ff = T.FailFast(args.max_failures)
    for case, P in ff.each(sel):
        t1 = time.time()
        problems, prog, cli, err = run_case(case, P, args, env)
        dt = time.time() - t1
        if problems:
            failed += 1
            ff.fail()
            T.print_failure('%s P=%d (%.2f s)' % (case, P, dt), problems,
                            '%s %s %d %s %s %s' % (args.mpiexec, args.numproc_flag, P, args.pldrun, prog, ' '.join(cli)),
                            err)
        else:
            passed += 1
            print('ok:   %s P=%d (%.2f s)' % (case, P, dt))
        sys.stdout.flush()
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
