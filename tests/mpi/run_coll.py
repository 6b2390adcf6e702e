#!/usr/bin/env python3
"""run_coll.py - collectives under mpirun (CTest label `mpi`, tests/coll.cmake).

Positive cases: every collective on every rail (InCore composite, HOST
builtin, CHIP builtin), from tests/mpi/programs/coll_*.pld and from the
example corpus programs/host, programs/incore and programs/chip. Each case
runs at every P of its `# ranks:` directive (P = 2, 3, 4; 1 where the program
allows it) and with `--window-transport rma` and `shm`:

  1. inputs come from pldrun's own generators (`--in NAME=GEN` from the
     program's `# inputs:` directive: arange, zeros, ones, random:SEED); this
     script regenerates the same values (pld_npy_generate: splitmix64).
     For the FP reductions of the coll_* programs (WIDE) the runner writes
     .npy inputs of widely different magnitudes instead, so that any other
     fold order gives different bits;
  2. `mpirun -n P pldrun PROGRAM --in ... --out NAME=FILE.npy ...`;
  3. the goldens are computed here from the documented semantics
     (docs/pld_semantics.md §2.14-§2.20) with the documented fold orders:
     mesh allreduce / reduce_scatter on rank r = own value, then the other
     ranks ascending; ring allreduce segment s = x[s+1] (+) x[s+2] (+) ...
     (+) x[s+P], indices mod P, with the InCore FP32 / FP16 segment bounds and
     the HOST ring chunks; FP32 / FP16 rounding after every step;
  4. outputs are compared exactly (bit-exact FP32 and FP16 given the fold
     order, exact integers); every signal the programs dump must be all zero.

A program with a module constant `P = <m>` lists only m in `# ranks:`; the
ones in REWRITE_RANKS also run at P = 2, 3, 4 from a copy whose `P = ` line is
rewritten. Cases `tutorial_*` run programs/tutorial (tiers 0-2 of
shared/docs/conformance_catalog.md §5, the multi-group and deferred-completion
rows) the same way; their goldens are exact (FP32, FP16 and BF16 rounded as
pldrun rounds them). Cases with EXTRA_ARGS run with more pldrun options
(`*_fresh3`, `*_reset3`, `*_keep3`: three dispatches over fresh, reset or kept
persistent windows).

Cases `*_lowered` run the text `pldrun --print-lowered` prints for the case's
program (the HOST and CHIP collectives as builtin dispatches and kernels,
docs/lowering.md), over shm only, against the same goldens: the printed
lowered program is itself a runnable program with the source's results.

Negative cases (`neg_*`): ranks calling different collectives, differently
shaped calls, a rank-divergent wait and a missing CHIP call must stop within a
few seconds with `--timeout 5`, exit 70 and name the blocked wait; runtime
checks (root outside a subset domain, InCore ring NR != P, HOST
all_to_all_v target rows not a multiple of P) exit 70 with a located error.

run_case and run_neg take the launch as a parameter (default mpirun_launch:
`MPIEXEC -n P pldrun ...` on this host): tests/mpi/run_multinode.py runs the
collective and two negative cases with the same goldens and checks across
emulated hosts (label `multinode`); tests/conformance/run_conformance.py runs
the positive cases per backend.

With --schedule-seed N (repeatable) the positive cases run under pldrun's
seeded schedules (docs/debugging.md, "Schedules"), once per seed, or with
--rotate-seeds once each under the seeds in turn: a correct program keeps its
golden results under every schedule (tests/schedule.cmake).

usage:
  run_coll.py --pldrun PATH [--mpiexec mpirun] [--numproc-flag -n]
              [--case NAME] [--ranks P] [--transport rma|shm] [--workdir DIR]
              [--poison] [--schedule-seed N [--rotate-seeds]] [--max-failures N] [--list]

The positive runs of one invocation go as pldrun batches (--batch, the
default; --no-batch: off): tests/mpi/pld_batch.py starts them as one
`mpirun -n P pldrun --batch LIST` job per P and environment, each run with a
fresh interpreter and fresh windows; a run that does not pass in its batch is
started again alone, and that run's result is the one judged. The negative
cases (exit codes, hang reports) always start alone.

--list prints one line per CTest test: "CASE P TRANSPORT"; it fails (exit 2,
and so does the configuration) when a case's program file is missing, as a
run of that case does. Prints one line per run and "N passed, M failed"; exit
status 0 when nothing failed. After --max-failures failed runs (default 3, 0:
no limit) the runner stops: "stopped after N failures: M cases not run".
"""
import argparse
import itertools
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pld_batch as B  # noqa: E402
import pld_mpitest as T  # noqa: E402
from pld_mpitest import f16, f32  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
TPROG = os.path.join(HERE, 'programs')
CORPUS = os.path.join(REPO, 'programs')
TUTORIAL = os.path.join(CORPUS, 'tutorial')
TRANSPORTS = ('rma', 'shm')

T.DTYPES.setdefault('INT8', ('|i1', 'b', 1))
T.DESCR_TO_DTYPE.setdefault('|i1', 'INT8')
# BF16 .npy files are 2-byte void records of the raw bits (docs/npy.md); the
# runner keeps BF16 values as those bits (unsigned 16-bit ints) and compares them.
T.DTYPES.setdefault('BF16', ('|V2', 'H', 2))
T.DESCR_TO_DTYPE.setdefault('|V2', 'BF16')

M64 = (1 << 64) - 1


def bf16_bits(x):
    """The bfloat16 bits of x: x rounded to FP32, then to bfloat16 by round to
    nearest, ties to even (the top 16 bits of the FP32 pattern; NaN kept quiet)."""
    b = struct.unpack('<I', struct.pack('<f', x))[0]
    if (b & 0x7f800000) == 0x7f800000 and b & 0x7fffff:
        return (b >> 16) | 0x40
    return ((b + 0x7fff + ((b >> 16) & 1)) >> 16) & 0xffff


def bf16_value(bits):
    """The float value of bfloat16 bits."""
    return struct.unpack('<f', struct.pack('<I', bits << 16))[0]


# ---------------------------------------------------------------- inputs

def wrap(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


INT_BITS = {'INT8': 8, 'INT16': 16, 'INT32': 32, 'INT64': 64}


def generate(spec, dtype, count):
    """The values pldrun's `--in NAME=SPEC` generator produces (pld_npy.c,
    pld_npy_generate) for a host tensor of `count` elements."""
    if spec == 'zeros':
        return [0] * count
    if spec == 'ones':
        return [1.0 if dtype.startswith('FP') else 0x3f80 if dtype == 'BF16' else 1] * count
    if spec == 'arange' and dtype == 'BF16':  # raw bits (see T.DTYPES above)
        return [bf16_bits(float(i)) for i in range(count)]
    if spec == 'arange':
        if dtype == 'FP32':
            return [f32(float(i)) for i in range(count)]
        if dtype == 'FP16':
            return [f16(f32(float(i))) for i in range(count)]
        return [wrap(i, INT_BITS[dtype]) for i in range(count)]
    if not spec.startswith('random:'):
        raise ValueError('unknown generator %r' % spec)
    state = int(spec[7:])
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        if dtype in ('FP32', 'FP16', 'BF16'):
            v = ((z >> 40) - (1 << 23)) * 2.0 ** -23  # exact in FP32
            out.append(f16(v) if dtype == 'FP16' else bf16_bits(v) if dtype == 'BF16' else v)
        else:
            out.append(wrap((((z >> 32) * 17) >> 32) - 8, INT_BITS[dtype]))
    return out


def wide(seed, dtype, count):
    """Values of widely different magnitudes (FP32: 2^-12..2^12, FP16:
    2^-3..2^3) so that every change of fold order changes FP sums in the
    last bits. The runner writes them as .npy files (see WIDE)."""
    rng = T.Rng(seed)
    lo, hi = (-3, 3) if dtype == 'FP16' else (-12, 12)
    out = []
    for _ in range(count):
        v = rng.uniform(-1.0, 1.0) * 2.0 ** rng.randint(lo, hi)
        out.append(f16(v) if dtype == 'FP16' else f32(v))
    return out


def specials(seed, dtype, shape):
    """Bit patterns of wide() values with IEEE specials in them (cases of
    SPECIALS): where i % 4000 < 19 or i is odd, in each rank's row, ranks 0
    and 1 hold quiet NaNs with different payloads (and signs), so that
    x0 (+) x1 and x1 (+) x0 give different bits and ranks 0 and 1 different
    results there. Densely: every position in a vector block and at the end
    of every part a path folds sees such a pair (the kernels once gave the
    second operand's payload in a loop's body and the first one's in its
    last element, so that paths cutting the range differently disagreed:
    COMM_NAN, src/sim_npu/pld_kern_int.h); where i % 3000 == 11, +0 and -0
    in turn (the order of Max and Min over zeros); where i % 5000 == 7, a
    NaN in rank 2's row alone."""
    n = T.numel(shape)
    row = n // shape[0]
    code, ucode = ('e', 'H') if dtype == 'FP16' else ('f', 'I')
    bits = [struct.unpack('<' + ucode, struct.pack('<' + code, v))[0] for v in wide(seed, dtype, n)]
    qnan, sign = (0x7e00, 0x8000) if dtype == 'FP16' else (0x7fc00000, 0x80000000)
    for r in range(shape[0]):
        for i in range(row):
            k = r * row + i
            if (i % 4000 < 19 or i % 2 == 1) and r < 2:
                bits[k] = qnan | (0x15 + 7 * (i % 4000) + 0x40 * r) | (sign if r == 1 else 0)
            elif i % 3000 == 11:
                bits[k] = 0 if (r + i) % 2 == 0 else sign
            elif i % 5000 == 7 and r == 2:
                bits[k] = qnan | 0x33
    return bits


def bits_value(dtype, b):
    """The Python float of an FP16 / FP32 bit pattern (NaN payloads are not kept)."""
    code, ucode = ('e', 'H') if dtype == 'FP16' else ('f', 'I')
    return struct.unpack('<' + code, struct.pack('<' + ucode, b))[0]


Tensor = T.Tensor  # shared with the other runners (pld_mpitest.py)


# ---------------------------------------------------------------- programs

def read_directives(path):
    ranks, inputs = [], {}
    with open(path) as f:
        for line in f:
            if not line.startswith('#'):
                break
            if line.startswith('# ranks:'):
                ranks = [int(x) for x in line.split(':', 1)[1].split()]
            elif line.startswith('# inputs:'):
                for item in line.split(':', 1)[1].split():
                    k, v = item.split('=', 1)
                    inputs[k] = v
    return ranks, inputs


def host_params(text, P):
    """[(name, dir, dtype, shape)] of the HOST orchestrator's tensor
    parameters, with module constants evaluated (dynamic dims = P)."""
    env = {}
    for line in text.splitlines():
        m = re.match(r'^([A-Z_][A-Z0-9_]*) = (.+)$', line)
        if not m:
            continue
        rhs = m.group(2).strip()
        if 'pl.dynamic' in rhs:
            env[m.group(1)] = P
            continue
        try:
            env[m.group(1)] = eval(rhs, {'__builtins__': {}}, dict(env))  # noqa: S307 (constants of our own files)
        except Exception:  # noqa: BLE001 - not an int constant (dtype alias, ...)
            pass
    m = re.search(r'def host_orch\((.*?)\)\s*(->[^:]*)?:', text, re.S)
    if not m:
        raise ValueError('no host_orch')
    params = []
    for pm in re.finditer(r'(\w+): (pl\.Out\[|pl\.InOut\[)?(?:pl\.Tensor|pld\.DistributedTensor)\[\[([^\]]*)\], pl\.(\w+)\]',
                             m.group(1)):
        name, wrapper, dims, dt = pm.groups()
        shape = tuple(int(eval(d, {'__builtins__': {}}, dict(env))) for d in dims.split(','))  # noqa: S307
        direction = 'in' if not wrapper else 'out' if 'Out' in wrapper else 'inout'
        params.append((name, direction, dt, shape))
    return params


# ---------------------------------------------------------------- fold helpers

def rounder(dtype):
    return f16 if dtype == 'FP16' else f32 if dtype == 'FP32' else (lambda v: v)


def ieee_max(a, b):
    """pldrun's Max (and IEEE 754-2019 maximum): a NaN operand wins (a's
    first), +0 is above -0."""
    if a != a or a > b:
        return a
    return a if a == b and math.copysign(1.0, a) > 0 else b


def ieee_min(a, b):
    """pldrun's Min: a NaN operand wins (a's first), -0 is below +0."""
    if a != a or a < b:
        return a
    return a if a == b and math.copysign(1.0, a) < 0 else b


OPS = {
    'sum': lambda a, b: a + b,
    'max': ieee_max,
    'min': ieee_min,
    'prod': lambda a, b: a * b,
}


def mesh_fold(rows, r, op, dtype):
    """Rank r's mesh result: own value first, then the other ranks ascending,
    rounded to dtype after every step (rows: one list per rank)."""
    rnd, fn = rounder(dtype), OPS[op]
    acc = list(rows[r])
    for p in range(len(rows)):
        if p == r:
            continue
        acc = [rnd(fn(a, b)) for a, b in zip(acc, rows[p])]
    return acc


def ring_fold(rows, op, dtype, bounds):
    """Ring allreduce result (identical on every rank): element e of segment
    s (bounds[s] <= e < bounds[s+1]) folds x[s+1], x[s+2], ..., x[s+P]."""
    rnd, fn = rounder(dtype), OPS[op]
    P = len(rows)
    out = list(rows[0])
    for s in range(P):
        for e in range(bounds[s], bounds[s + 1]):
            acc = rows[(s + 1) % P][e]
            for j in range(2, P + 1):
                acc = rnd(fn(acc, rows[(s + j) % P][e]))
            out[e] = acc
    return out


def incore_ring_bounds(size, nr, dtype):
    if dtype == 'FP16':
        return [min(-(-(i * size) // (16 * nr)) * 16, size) for i in range(nr + 1)]
    return [i * size // nr for i in range(nr + 1)]


def host_ring_bounds(size, p):
    return [i * (size // p) for i in range(p + 1)]


def zeros(dtype, shape):
    return Tensor(dtype, shape)


# ---------------------------------------------------------------- goldens
# golden(ins, P, outs) -> {name: Tensor}; ins: {name: Tensor} (the In
# parameters), outs: {name: (dtype, shape)} (the Out parameters).

def g_allreduce_rows(op_by_row, src='xs', dst='outs'):
    """outs[r] row k = mesh allreduce op_by_row[k] of xs[p] (row 0 of xs[p])."""
    def g(ins, P, outs):
        xs = ins[src]
        dt, shape = outs[dst]
        o = zeros(dt, shape)
        rows = [xs.row(p, 0) for p in range(P)]
        for r in range(P):
            for k, op in enumerate(op_by_row):
                o.set_row(mesh_fold(rows, r, op, dt), r, k)
        return {dst: o}
    return g


def g_neighbour(ins, P, outs):
    xs = ins['xs']
    o = zeros(*outs['outs'])
    for r in range(P):
        o.set_row(xs.row((r + 1) % P, 0), r, 0)
    return {'outs': o}


def g_broadcast(scale):
    def g(ins, P, outs):
        xs = ins['xs']
        o = zeros(*outs['outs'])
        for r in range(P):
            o.set_row([f32(v * scale) for v in xs.row(1, 0)], r, 0)
        return {'outs': o}
    return g


def g_allgather(ins, P, outs):
    xs = ins['xs']
    o = zeros(*outs['outs'])
    for r in range(P):
        for j in range(P):
            o.set_row(xs.row(j, 0), r, j)
    return {'outs': o}


def g_all_to_all(ins, P, outs):
    parts = ins['parts']
    o = zeros(*outs['outs'])
    for r in range(P):
        for s in range(P):
            o.set_row(parts.row(s, r), r, s)
    return {'outs': o}


def g_reduce_scatter(ins, P, outs):
    ch = ins['chunks']
    o = zeros(*outs['outs'])
    for r in range(P):
        rows = [ch.row(p, r) for p in range(P)]
        o.set_row(mesh_fold(rows, r, 'sum', 'FP32'), r, 0)
    return {'outs': o}


def a2av_expect(xs, P, mr, count, out_spec, got_spec, sentinel=0, out='outs', got='gots'):
    """outs[r] rows s*mr + k = xs[s] row r*mr + k for k < rows(s, r); the
    other rows keep `sentinel`; gots[r][s, 0] = rows(s, r)."""
    o = Tensor(out_spec[0], out_spec[1], [sentinel] * T.numel(out_spec[1]))
    gt = zeros(*got_spec)
    for r in range(P):
        for s in range(P):
            rows = max(0, min(count(s, r), mr))
            gt.set(rows, r, s, 0)
            for k in range(rows):
                o.set_row(xs.row(s, r * mr + k), r, s * mr + k)
    return {out: o, got: gt}


def g_corpus_a2av(mr, count, sent=None):
    def g(ins, P, outs):
        res = a2av_expect(ins['xs'], P, mr, count, outs['outs'], outs['gots'])
        if sent:
            st = zeros(*outs[sent])
            for r in range(P):
                for d in range(P):
                    st.set(count(r, d), r, d, 0)
            res[sent] = st
        return res
    return g


def g_multicore(ins, P, outs):
    res = g_allreduce_rows(['sum'])(ins, P, outs)
    res['lanes'] = zeros(*outs['lanes'])
    return res


def g_host_ring_corpus(ins, P, outs):
    xs = ins['xs']
    dt, shape = outs['outs']
    o = zeros(dt, shape)
    rows = [xs.row(p, 0) for p in range(P)]
    res = ring_fold(rows, 'sum', 'FP32', host_ring_bounds(len(rows[0]), P))
    for r in range(P):
        o.set_row(res, r, 0)
    return {'outs': o}


def g_incore_ring_corpus(ins, P, outs):
    xs = ins['xs']
    o = zeros(*outs['outs'])
    rows = [xs.row(p, 0) for p in range(P)]
    n = len(rows[0])
    b = incore_ring_bounds(n, P, 'FP32')
    s, m = ring_fold(rows, 'sum', 'FP32', b), ring_fold(rows, 'min', 'FP32', b)
    for r in range(P):
        o.set_row(s, r, 0)
        o.set_row(m, r, 1)
    return {'outs': o}


# ---- new test programs

def g_coll_incore_allreduce(ins, P, outs):
    xs, hs = ins['xs'], ins['hs']
    s = zeros(*outs['sums'])
    h = zeros(*outs['hsums'])
    xr = [xs.row(p, 0) for p in range(P)]
    hr = [hs.row(p, 0) for p in range(P)]
    for r in range(P):
        for k, op in enumerate(('sum', 'max', 'min', 'prod')):
            s.set_row(mesh_fold(xr, r, op, 'FP32'), r, k)
        for k, op in enumerate(('sum', 'max')):
            h.set_row(mesh_fold(hr, r, op, 'FP16'), r, k)
    ys = ins['ys']
    pv = zeros(*outs['pouts'])
    for r in range(P):
        for i in range(2):
            row = ys.row(r, i)
            row[:40] = mesh_fold([ys.row(p, i)[:40] for p in range(P)], r, 'sum', 'FP32')
            pv.set_row(row, r, i)
    return {'sums': s, 'hsums': h, 'pouts': pv, 'sigs': zeros(*outs['sigs'])}


def g_coll_incore_ring(ins, P, outs):
    xs, hs = ins['xs'], ins['hs']
    o = zeros(*outs['outs'])
    h = zeros(*outs['houts'])
    xr = [xs.row(p, 0) for p in range(P)]
    hr = [hs.row(p, 0) for p in range(P)]
    bx = incore_ring_bounds(len(xr[0]), P, 'FP32')
    bh = incore_ring_bounds(len(hr[0]), P, 'FP16')
    res = [ring_fold(xr, 'sum', 'FP32', bx), ring_fold(xr, 'min', 'FP32', bx)]
    hres = [ring_fold(hr, 'sum', 'FP16', bh), ring_fold(hr, 'prod', 'FP16', bh)]
    for r in range(P):
        for k in range(2):
            o.set_row(res[k], r, k)
            h.set_row(hres[k], r, k)
    ys = ins['ys']
    yr = [ys.row(p, 0)[:40] for p in range(P)]
    pre = ring_fold(yr, 'sum', 'FP32', incore_ring_bounds(40, P, 'FP32'))
    pv = zeros(*outs['pouts'])
    for r in range(P):
        pv.set_row(pre + ys.row(r, 0)[40:], r, 0)
    return {'outs': o, 'houts': h, 'pouts': pv, 'sigs': zeros(*outs['sigs'])}


def misc_expect(P, outs, bsrc, chunks, gsrc, asrc, names):
    """broadcast (root 1), reduce_scatter, allgather, all_to_all goldens."""
    bname, rname, gname, aname = names
    b = zeros(*outs[bname])
    rs = zeros(*outs[rname])
    g = zeros(*outs[gname])
    a = zeros(*outs[aname])
    for r in range(P):
        for k in range(outs[bname][1][1]):
            b.set_row(bsrc.row(1, k), r, k)
        for j in range(P):
            rs.set_row(chunks.row(r, j), r, j)
        rs.set_row(mesh_fold([chunks.row(p, r) for p in range(P)], r, 'sum', 'FP32'), r, r)
        for s in range(P):
            g.set_row(gsrc.row(s, 0), r, s)
            a.set_row(asrc.row(s, r), r, s)
    return {bname: b, rname: rs, gname: g, aname: a}


def g_coll_incore_misc(ins, P, outs):
    res = misc_expect(P, outs, ins['xs'], ins['chunks'], ins['hs'], ins['ks'], ('bouts', 'routs', 'gouts', 'kouts'))
    res['sigs'] = zeros(*outs['sigs'])
    return res


def g_coll_host_misc(ins, P, outs):
    res = misc_expect(P, outs, ins['xs'], ins['chunks'], ins['ys'], ins['parts'], ('bouts', 'routs', 'gouts', 'aouts'))
    res['sigs'] = zeros(*outs['sigs'])
    return res


def g_coll_incore_a2av(ins, P, outs):
    count = lambda s, d: (2 * s + 3 * d) % 7 - 2  # noqa: E731
    res = a2av_expect(ins['xs'], P, 3, count, outs['outs'], outs['gots'], sentinel=-1.5)
    sent = zeros(*outs['sent'])
    for r in range(P):
        for d in range(P):
            sent.set(count(r, d), r, d, 0)
    res['sent'] = sent
    res['sigs'] = zeros(*outs['sigs'])
    return res


def g_coll_host_allreduce(ins, P, outs):
    res = {}
    for src, dst, op in (('xs', 'o1', 'sum'), ('hs', 'o2', 'max'), ('ps', 'o3', 'prod'), ('ms', 'o4', 'min')):
        res.update(g_allreduce_rows([op], src, dst)(ins, P, outs))
    for s in ('s1', 's2', 's3'):
        res[s] = zeros(*outs[s])
    return res


def g_coll_host_ring(ins, P, outs):
    xs = ins['xs']
    rows = [xs.row(p, 0) for p in range(P)]
    b = host_ring_bounds(len(rows[0]), P)
    once = ring_fold(rows, 'sum', 'FP32', b)
    twice = ring_fold([once] * P, 'sum', 'FP32', b)
    o1, o2 = zeros(*outs['once']), zeros(*outs['twice'])
    for r in range(P):
        o1.set_row(once, r, 0)
        o2.set_row(twice, r, 0)
    return {'once': o1, 'twice': o2, 'sigs': zeros(*outs['sigs'])}


def g_coll_host_a2av(ins, P, outs):
    count = lambda s, d: (2 * s + 3 * d + 1) % 5 - 1  # noqa: E731
    res = a2av_expect(ins['xs'], P, 2, count, outs['outs'], outs['gots'], sentinel=-1.5)
    res.update(a2av_expect(ins['bs'], P, 2, count, outs['bouts'], outs['bgots'], sentinel=-100, out='bouts',
                           got='bgots'))
    res['sigs'] = zeros(*outs['sigs'])
    return res


def g_coll_chip_a2av(ins, P, outs):
    count = lambda s, d: (3 * s + d + 2) % 6 - 1  # noqa: E731
    res = a2av_expect(ins['xs'], P, 3, count, outs['outs'], outs['gots'], sentinel=-1.5)
    res['sigs'] = zeros(*outs['sigs'])
    return res


def g_coll_host_guard(ins, P, outs):
    xs = ins['xs']
    o, b = zeros(*outs['outs']), zeros(*outs['bouts'])
    for r in range(P):
        o.set_row(xs.row(r, 0), r, 0)
        b.set_row(xs.row(r, 0), r, 0)
    return {'outs': o, 'bouts': b, 'gouts': zeros(*outs['gouts']), 'sigs': zeros(*outs['sigs'])}


# ---- programs/tutorial (tiers 0-2 and the multi-group row of the catalog)

def g_hello_rank(ins, P, outs):
    xs = ins['xs']
    ys, ids = zeros(*outs['ys']), zeros(*outs['ids'])
    for r in range(P):
        for i in range(xs.shape[1]):
            ys.set_row([f32(v + float(r)) for v in xs.row(r, i)], r, i)
        ids.set(r, r, 0, 0)
    return {'ys': ys, 'ids': ids}


def g_window_buffer(ins, P, outs):
    xs = ins['xs']
    ys, zs = zeros(*outs['ys']), zeros(*outs['zs'])
    for r in range(P):
        ys.set_row([f32(v + v) for v in xs.row(r, 0)], r, 0)
        zs.set_row(xs.row(r, 0), r, 0)
    return {'ys': ys, 'zs': zs}


def g_barrier_handrolled(ins, P, outs):
    t = zeros(*outs['tallies'])
    for r in range(P):
        for i in range(P):
            t.set(0 if i == r else 1, r, i, 0)
    return {'tallies': t}


def g_deferred_completion(epoch):
    """outs[r][w] = inp[(r - 1) % P] for every slot; epochs[r] = the epoch of
    the last dispatch (programs/tutorial/deferred_completion.pld)."""
    def g(ins, P, outs):
        inp = ins['inp']
        o, e = zeros(*outs['outs']), zeros(*outs['epochs'])
        for r in range(P):
            for w in range(o.shape[1]):
                o.set_row(inp.row((r - 1) % P, 0), r, w)
            e.set(epoch, r, 0, 0)
        return {'outs': o, 'epochs': e}
    return g


def g_remote_load_store(ins, P, outs):
    xs = ins['xs']
    pulled, pushed = zeros(*outs['pulled']), zeros(*outs['pushed'])
    for r in range(P):
        pulled.set_row(xs.row((r + 1) % P, 0), r, 0)
        pushed.set_row(xs.row((r - 1) % P, 0), r, 0)
    return {'pulled': pulled, 'pushed': pushed}


def g_put_get(ins, P, outs):
    # firsts[r] = xs[r+1]; seconds[r] rows 0..1 = atomic sum over every rank of
    # xs[p] rows 0..1 (integer-valued: any order), rows 2..3 = xs[r-1] rows
    # 2..3, rows 4..7 = xs[r-1]
    xs = ins['xs']
    firsts, seconds = zeros(*outs['firsts']), zeros(*outs['seconds'])
    rows = xs.shape[1]
    for r in range(P):
        nxt, prv = (r + 1) % P, (r - 1) % P
        for i in range(rows):
            firsts.set_row(xs.row(nxt, i), r, i)
            seconds.set_row(xs.row(prv, i), r, rows + i)
            if i < rows // 2:
                acc = [0.0] * xs.shape[2]
                for p in range(P):
                    acc = [f32(a + b) for a, b in zip(acc, xs.row(p, i))]
                seconds.set_row(acc, r, i)
            else:
                seconds.set_row(xs.row(prv, i), r, i)
    return {'firsts': firsts, 'seconds': seconds}


def g_dynamic_rank_count(ins, P, outs):
    xs = ins['xs']
    boards, counts = zeros(*outs['boards']), zeros(*outs['counts'])
    for r in range(P):
        for j in range(P):
            boards.set_row(xs.row(j, 0), r, j)
        counts.set(P, r, 0, 0)
    return {'boards': boards, 'counts': counts}


def g_mesh_handrolled(ins, P, outs):
    return g_allreduce_rows(['sum'])(ins, P, outs)


# the hand-rolled ring folds like the HOST ring: chunk c = columns
# c*SIZE/P .. (c+1)*SIZE/P - 1 folds x[c+1], x[c+2], ..., x[c+P]
g_ring_handrolled = g_host_ring_corpus


def g_collectives_handrolled(ins, P, outs):
    xs, chunks, parts = ins['xs'], ins['chunks'], ins['parts']
    size = xs.shape[2]
    b, g, rs, a = (zeros(*outs[k]) for k in ('bouts', 'gouts', 'routs', 'aouts'))
    for r in range(P):
        b.set_row(xs.row(1, 0), r, 0)
        g.set_row(sum((xs.row(j, 0) for j in range(P)), []), r, 0)
        rs.set_row(mesh_fold([chunks.row(p, 0)[r * size:(r + 1) * size] for p in range(P)], r, 'sum', 'FP32'), r, 0)
        for s in range(P):
            a.set_row(parts.row(s, r), r, s)
    return {'bouts': b, 'gouts': g, 'routs': rs, 'aouts': a, 'credits': zeros(*outs['credits'])}


def g_push_variants(ins, P, outs):
    xs, ks = ins['xs'], ins['ks']
    h, d, sm = (zeros(*outs[k]) for k in ('halves', 'doubled', 'sums'))
    for r in range(P):
        h.set_row(xs.row((r - 1) % P, 0), r, 0)
        d.set_row([f32(v + v) for v in xs.row((r - 1) % P, 0)], r, 0)
    acc = [0.0] * ks.shape[2]
    for p in range(P):  # integer-valued: exact in any order
        acc = [f32(a + b) for a, b in zip(acc, ks.row(p, 0))]
    sm.set_row(acc, 0, 0)
    return {'halves': h, 'doubled': d, 'sums': sm}


def g_multi_group(ins, P, outs):
    xs = ins['xs']
    oa, ob, ia, ib = (zeros(*outs[k]) for k in ('outs_a', 'outs_b', 'ids_a', 'ids_b'))
    for r in (0, 1):
        oa.set_row(xs.row(1 - r, 0), r, 0)
        ia.set_row([r, 2], r, 0)
    m = P - 1  # group B = devices 1 .. P-1, shifted left
    for d in range(1, P):
        ob.set_row(xs.row(1 + d % m, 0), d, 0)
        ib.set_row([d - 1, m], d, 0)
    return {'outs_a': oa, 'outs_b': ob, 'ids_a': ia, 'ids_b': ib}


def g_window_slices(ins, P, outs):
    # no cross-rank traffic: tails[r] = xs[r] rows 8..15, copies[r] = xs[r],
    # sums[r] = xs[r] + fp32(hs[r]) rounded to FP32 (hs: FP16 values)
    xs, hs = ins['xs'], ins['hs']
    tails, copies, sums = (zeros(*outs[k]) for k in ('tails', 'copies', 'sums'))
    half = tails.shape[1]
    for r in range(P):
        for i in range(xs.shape[1]):
            copies.set_row(xs.row(r, i), r, i)
            sums.set_row([f32(a + b) for a, b in zip(xs.row(r, i), hs.row(r, i))], r, i)
            if i >= half:
                tails.set_row(xs.row(r, i), r, i - half)
    return {'tails': tails, 'copies': copies, 'sums': sums}


def g_remote_store_raw_bf16(ins, P, outs):
    # rank q-1 pushes its row q-1 into row q-1 of rank q's window; the second
    # kernel of rank q copies the whole window out (BF16 bits, other rows 0)
    srcs = ins['srcs']
    o = zeros(*outs['outs'])
    for q in range(P):
        s = (q - 1) % P
        o.set_row(srcs.row(s, s), q, s)
    return {'outs': o}


WARN_COUNTS = 'send_counts'  # the clamp warning names the counts

# Inputs the runner replaces by wide-range values (.npy files) instead of the
# program's pldrun generator, so that the FP fold orders are observable.
WIDE = {
    'incore_allreduce': ('xs', 'hs', 'ys'),
    'incore_ring': ('xs', 'hs', 'ys'),
    'incore_misc': ('chunks',),
    'host_allreduce': ('xs', 'hs', 'ps', 'ms'),
    'host_ring': ('xs',),
    'host_misc': ('chunks',),
}

# Cases whose inputs carry IEEE specials (specials(): NaN payloads that make
# ranks 0 and 1 differ, signed zeros) besides wide values. NaN payloads are
# not part of the goldens (a NaN matches any NaN), so each run is also
# compared bit for bit with the same inputs over REFERENCE (the per-chunk
# steps of the semantics document, over shm, against the merged, spread and
# hub steps every transport takes by default, docs/transport.md), and the
# reference must show ranks 0 and 1 differing (else the inputs prove nothing
# here).
SPECIALS = {  # case -> (its inputs with specials, the output whose ranks 0 and 1 must differ)
    'incore_allreduce_specials': (('xs', 'hs'), 'sums'),
    'host_allreduce_specials': (('xs', 'hs', 'ps', 'ms'), 'o1'),
}
REFERENCE = ('shm', ['--collective-steps', 'chunk'], 'shm with a barrier per chunk')

# case -> (path, golden, expected warning substring or None)
CASES = {
    # new test programs: every collective on every rail
    'incore_allreduce': (os.path.join(TPROG, 'coll_incore_allreduce.pld'), g_coll_incore_allreduce, None),
    'incore_ring': (os.path.join(TPROG, 'coll_incore_ring.pld'), g_coll_incore_ring, None),
    'incore_misc': (os.path.join(TPROG, 'coll_incore_misc.pld'), g_coll_incore_misc, None),
    'incore_a2av': (os.path.join(TPROG, 'coll_incore_a2av.pld'), g_coll_incore_a2av, WARN_COUNTS),
    'host_allreduce': (os.path.join(TPROG, 'coll_host_allreduce.pld'), g_coll_host_allreduce, None),
    'incore_allreduce_specials': (os.path.join(TPROG, 'coll_incore_allreduce.pld'), g_coll_incore_allreduce, None),
    'host_allreduce_specials': (os.path.join(TPROG, 'coll_host_allreduce.pld'), g_coll_host_allreduce, None),
    'host_ring': (os.path.join(TPROG, 'coll_host_ring.pld'), g_coll_host_ring, None),
    'host_misc': (os.path.join(TPROG, 'coll_host_misc.pld'), g_coll_host_misc, None),
    'host_a2av': (os.path.join(TPROG, 'coll_host_a2av.pld'), g_coll_host_a2av, WARN_COUNTS),
    'chip_a2av': (os.path.join(TPROG, 'coll_chip_a2av.pld'), g_coll_chip_a2av, WARN_COUNTS),
    'host_guard': (os.path.join(TPROG, 'coll_host_guard.pld'), g_coll_host_guard,
                   'does nothing: the builtin kernel returns early when more than 16 ranks take part (17 here)'),
    # the example corpus (programs/)
    'corpus_host_all_to_all': (os.path.join(CORPUS, 'host', 'all_to_all.pld'), g_all_to_all, None),
    'corpus_host_all_to_all_v': (os.path.join(CORPUS, 'host', 'all_to_all_v.pld'),
                                 g_corpus_a2av(2, lambda s, d: (s + d) % 3), None),
    'corpus_host_allgather': (os.path.join(CORPUS, 'host', 'allgather.pld'), g_allgather, None),
    'corpus_host_allreduce_mesh': (os.path.join(CORPUS, 'host', 'allreduce_mesh.pld'), g_allreduce_rows(['sum']),
                                   None),
    'corpus_host_allreduce_mesh_printed': (os.path.join(CORPUS, 'host', 'allreduce_mesh.printed.pld'),
                                           g_allreduce_rows(['sum']), None),
    'corpus_host_allreduce_multicore': (os.path.join(CORPUS, 'host', 'allreduce_multicore.pld'), g_multicore, None),
    'corpus_host_allreduce_ring': (os.path.join(CORPUS, 'host', 'allreduce_ring.pld'), g_host_ring_corpus, None),
    'corpus_host_allreduce_synth': (os.path.join(CORPUS, 'host', 'allreduce_synth.pld'), g_allreduce_rows(['max']),
                                    None),
    'corpus_host_barrier': (os.path.join(CORPUS, 'host', 'barrier.pld'), g_neighbour, None),
    'corpus_host_barrier_printed': (os.path.join(CORPUS, 'host', 'barrier.printed.pld'), g_neighbour, None),
    'corpus_host_broadcast': (os.path.join(CORPUS, 'host', 'broadcast.pld'), g_broadcast(1.0), None),
    'corpus_host_reduce_scatter': (os.path.join(CORPUS, 'host', 'reduce_scatter.pld'), g_reduce_scatter, None),
    'corpus_incore_all_to_all': (os.path.join(CORPUS, 'incore', 'all_to_all.pld'), g_all_to_all, None),
    'corpus_incore_all_to_all_v': (os.path.join(CORPUS, 'incore', 'all_to_all_v.pld'),
                                   g_corpus_a2av(3, lambda s, d: (s + 2 * d) % 4, sent='sent'), None),
    'corpus_incore_allgather': (os.path.join(CORPUS, 'incore', 'allgather.pld'), g_allgather, None),
    'corpus_incore_allgather_printed': (os.path.join(CORPUS, 'incore', 'allgather.printed.pld'), g_allgather, None),
    'corpus_incore_allreduce_mesh': (os.path.join(CORPUS, 'incore', 'allreduce_mesh.pld'),
                                     g_allreduce_rows(['sum', 'max']), None),
    'corpus_incore_allreduce_mesh_printed': (os.path.join(CORPUS, 'incore', 'allreduce_mesh.printed.pld'),
                                             g_allreduce_rows(['sum', 'max']), None),
    'corpus_incore_allreduce_ring': (os.path.join(CORPUS, 'incore', 'allreduce_ring.pld'), g_incore_ring_corpus,
                                     None),
    # 9.4: window buffer sizes held in HOST locals computed before the allocation
    'host_local_sizes': (os.path.join(TPROG, 'host_local_sizes.pld'), g_neighbour, None),
    'corpus_incore_barrier': (os.path.join(CORPUS, 'incore', 'barrier.pld'), g_neighbour, None),
    'corpus_incore_broadcast': (os.path.join(CORPUS, 'incore', 'broadcast.pld'), g_broadcast(2.0), None),
    'corpus_incore_reduce_scatter': (os.path.join(CORPUS, 'incore', 'reduce_scatter.pld'), g_reduce_scatter, None),
    'corpus_chip_all_to_all_v_fp32': (os.path.join(CORPUS, 'chip', 'all_to_all_v_fp32.pld'),
                                      g_corpus_a2av(2, lambda s, d: (s + d) % 3), None),
    'corpus_chip_all_to_all_v_int8': (os.path.join(CORPUS, 'chip', 'all_to_all_v_int8.pld'),
                                      g_corpus_a2av(2, lambda s, d: (s + d) % 3), None),
    # programs/tutorial: tier-0 to tier-2 programs and the multi-group row
    'tutorial_hello_rank': (os.path.join(TUTORIAL, 'hello_rank.pld'), g_hello_rank, None),
    'tutorial_hello_rank_printed': (os.path.join(TUTORIAL, 'hello_rank.printed.pld'), g_hello_rank, None),
    'tutorial_window_buffer': (os.path.join(TUTORIAL, 'window_buffer.pld'), g_window_buffer, None),
    'tutorial_window_buffer_printed': (os.path.join(TUTORIAL, 'window_buffer.printed.pld'), g_window_buffer, None),
    'tutorial_barrier_handrolled': (os.path.join(TUTORIAL, 'barrier_handrolled.pld'), g_barrier_handrolled, None),
    'tutorial_barrier_handrolled_printed': (os.path.join(TUTORIAL, 'barrier_handrolled.printed.pld'),
                                            g_barrier_handrolled, None),
    'tutorial_remote_load_store': (os.path.join(TUTORIAL, 'remote_load_store.pld'), g_remote_load_store, None),
    'tutorial_remote_load_store_printed': (os.path.join(TUTORIAL, 'remote_load_store.printed.pld'),
                                           g_remote_load_store, None),
    'tutorial_put_get': (os.path.join(TUTORIAL, 'put_get.pld'), g_put_get, None),
    'tutorial_put_get_printed': (os.path.join(TUTORIAL, 'put_get.printed.pld'), g_put_get, None),
    # the tile-staged forms pld.tile.put / pld.tile.get (stage tiles, ping-pong, the printed region shift)
    'tile_put_get': (os.path.join(TPROG, 'tile_put_get.pld'), g_put_get, None),
    'tutorial_dynamic_rank_count': (os.path.join(TUTORIAL, 'dynamic_rank_count.pld'), g_dynamic_rank_count, None),
    'tutorial_allreduce_mesh_handrolled': (os.path.join(TUTORIAL, 'allreduce_mesh_handrolled.pld'),
                                           g_mesh_handrolled, None),
    'tutorial_allreduce_mesh_handrolled_printed': (os.path.join(TUTORIAL, 'allreduce_mesh_handrolled.printed.pld'),
                                                   g_mesh_handrolled, None),
    'tutorial_allreduce_ring_handrolled': (os.path.join(TUTORIAL, 'allreduce_ring_handrolled.pld'),
                                           g_ring_handrolled, None),
    'tutorial_collectives_handrolled': (os.path.join(TUTORIAL, 'collectives_handrolled.pld'),
                                        g_collectives_handrolled, None),
    'tutorial_push_variants': (os.path.join(TUTORIAL, 'push_variants.pld'), g_push_variants, None),
    'tutorial_multi_group': (os.path.join(TUTORIAL, 'multi_group.pld'), g_multi_group, None),
    # window slices (P-WSS, P-WST, P-WSC) and read-after-write through a window in BF16 (P-RAW)
    'tutorial_window_slices': (os.path.join(TUTORIAL, 'window_slices.pld'), g_window_slices, None),
    'tutorial_remote_store_raw_bf16': (os.path.join(TUTORIAL, 'remote_store_raw_bf16.pld'),
                                       g_remote_store_raw_bf16, None),
    # deferred completion (T5-DEF), and repeated dispatches over persistent windows (§1.5)
    'tutorial_deferred_completion': (os.path.join(TUTORIAL, 'deferred_completion.pld'),
                                     g_deferred_completion(1), None),
    'tutorial_deferred_completion_fresh3': (os.path.join(TUTORIAL, 'deferred_completion.pld'),
                                            g_deferred_completion(1), None),
    'tutorial_deferred_completion_reset3': (os.path.join(TUTORIAL, 'deferred_completion.pld'),
                                            g_deferred_completion(1), None),
    'tutorial_deferred_completion_keep3': (os.path.join(TUTORIAL, 'deferred_completion.pld'),
                                           g_deferred_completion(3), None),
    # consumers submitted as kernels with deps= after the publisher: they wait in place
    'deferred_submit': (os.path.join(TPROG, 'deferred_submit.pld'), g_deferred_completion(1), None),
    # the same behind a pl.system.task_dummy barrier over a TaskId array: the barrier completes with the waiter
    'deferred_dummy': (os.path.join(TPROG, 'deferred_dummy.pld'), g_deferred_completion(1), None),
}

# Extra pldrun arguments of a case (several dispatches, persistent windows).
EXTRA_ARGS = {
    'neg_dispatch_barrier': ['--dispatches', '2'],
    'tutorial_deferred_completion_fresh3': ['--dispatches', '3'],
    'tutorial_deferred_completion_reset3': ['--dispatches', '3', '--persistent-windows'],
    'tutorial_deferred_completion_keep3': ['--dispatches', '3', '--persistent-windows',
                                           '--reset-persistent-windows', 'no'],
}

# Negative cases: (program, P values, expected rc, stderr regexes that must
# match, regexes that must not match, max seconds)
HANG = r'deadlock'
NEG = {
    'neg_mismatch': (os.path.join(TPROG, 'coll_neg_mismatch.pld'), (2, 3), 70,
                     # across hosts a HUB step's member off the hub host
                     # waits for its parts' messages (docs/transport.md)
                     [HANG, r'\[rank 1/\d\] .*coll_neg_mismatch\.pld:\d+:\d+: error: allreduce \(mesh\): wait '
                            r'(on sig\[0, 0\] >= 2|for the parts to and from ranks 0, 2 \(messages across hosts\))'],
                     [r'\[rank 0/\d\] .*: error: '], 20),
    'neg_shape': (os.path.join(TPROG, 'coll_neg_shape.pld'), (2, 3), 70,
                  [HANG, r'\[rank 0/\d\] .*coll_neg_shape\.pld:\d+:\d+: error: allreduce \(mesh\): wait on '
                         r'sig\[1, 0\] >= 3'],
                  [r'\[rank 1/\d\] .*: error: '], 20),
    # at P = 4 across 2 + 2 hosts (ranks 0, 1 together) the mesh allreduce
    # takes HUB steps (docs/transport.md): rank 0 waits for the ranks of the
    # other host first, and every rank waits for rank 0's credit, so all
    # four are reported; on one host, rank 0 alone, on sig[1, 0]
    'neg_shape_p4': (os.path.join(TPROG, 'coll_neg_shape.pld'), (4,), 70,
                     [HANG, r'\[rank 0/4\] .*coll_neg_shape\.pld:\d+:\d+: error: allreduce \(mesh\): wait on '
                            r'sig\[\d, 0\] >= 3'],
                     [], 20),
    'neg_divergent_wait': (os.path.join(TPROG, 'coll_neg_divergent_wait.pld'), (2, 3), 70,
                           [HANG, r'\[rank 1/\d\] .*coll_neg_divergent_wait\.pld:\d+:\d+: error: wait on '
                                  r'sig\[0, 0\] \(Ge 1\)'],
                           [r'\[rank 0/\d\] .*: error: '], 20),
    'neg_chip_missing': (os.path.join(TPROG, 'coll_neg_chip_missing.pld'), (2,), 70,
                         [HANG, r'\[rank 0/2\] .*coll_neg_chip_missing\.pld:\d+:\d+: error: all_to_all_v: wait on '
                                r'sig\[1, 0\] >= 1'],
                         [r'\[rank 1/2\] .*: error: '], 20),
    # across hosts the others wait for rank 0's rows (pld_win_xset) or for
    # its credit; on one host for its credit
    'neg_a2av_skip': (os.path.join(TPROG, 'coll_neg_a2av_skip.pld'), (2, 4), 70,
                      [HANG, r'\[rank 1/\d\] .*coll_neg_a2av_skip\.pld:\d+:\d+: error: all_to_all_v: wait '
                             r'(for the rows to and from ranks? 0|on sig\[0, 0\] >= 1)'],
                      [r'\[rank 0/\d\] .*: error: '], 20),
    'neg_root': (os.path.join(TPROG, 'coll_neg_root.pld'), (4,), 70,
                 [r'\[rank 0/4\] .*coll_neg_root\.pld:\d+:\d+: error: pld\.tensor\.broadcast: root 3 is outside the '
                  r'comm domain \[0, 2\)', r'\[rank 1/4\] .*root 3 is outside'],
                 [r'\[rank [23]/4\] .*: error: '], 20),
    'neg_ring_nr': (os.path.join(TPROG, 'coll_neg_ring_nr.pld'), (2,), 70,
                    [r'coll_neg_ring_nr\.pld:\d+:\d+: error: pld\.tensor\.allreduce: mode="ring" signal shape\[1\] '
                     r'\(3\) .* must equal the rank count of the comm domain \(2\)'],
                    [], 20),
    'neg_a2av_rows': (os.path.join(TPROG, 'coll_neg_a2av_rows.pld'), (4,), 70,
                      [r'\[rank 2/4\] .*coll_neg_a2av_rows\.pld:\d+:\d+: error: pld\.tensor\.all_to_all_v: target '
                       r'dim 0 \(8\) must be a multiple of the rank count \(3\)'],
                      [r'\[rank 3/4\] .*: error: '], 20),
    # a rank stuck in dispatch 1 while the other waits at the barrier between dispatches
    'neg_dispatch_barrier': (os.path.join(TPROG, 'coll_neg_divergent_wait.pld'), (2,), 70,
                             [HANG, r'\[rank 1/2\] .*coll_neg_divergent_wait\.pld:\d+:\d+: error: wait on '
                                    r'sig\[0, 0\] \(Ge 1\)',
                              r'\[rank 0/2\] .*: error: end of dispatch 1: ranks that got there: found 1, '
                              r'expected >= 2'],
                             [], 20),
    'neg_put_oob': (os.path.join(TPROG, 'neg_put_oob.pld'), (2,), 70,
                    [r'\[rank 1/2\] .*neg_put_oob\.pld:24:9: error: pld\.tensor\.put out of bounds: offset 1 \+ '
                     r'extent 2 > size 2 in dimension 0 of the window view'],
                    [r'\[rank 0/2\] .*: error: '], 20),
    # 9.1: sizes that overflow only at run time (a dim from an input) are located errors, not crashes
    'neg_window_view_overflow': (os.path.join(TPROG, 'neg_window_view_overflow.pld'), (2,), 70,
                                 [r'\[rank 0/2\] .*neg_window_view_overflow\.pld:38:19: error: the size of window view '
                                  r'\[2, 72057594037927936, 16\] of FP32 overflows',
                                  r'\[rank 1/2\] .*neg_window_view_overflow\.pld:38:19: error: '],
                                 [r'Segmentation|signal'], 20),
    'neg_window_buf_overflow': (os.path.join(TPROG, 'neg_window_buf_overflow.pld'), (2,), 70,
                                [r'\[rank 0/2\] .*neg_window_buf_overflow\.pld:36:15: error: the size of window buffer '
                                 r"'buf' \(shape \[2, 72057594037927936, 16\], 4-byte elements\) overflows"],
                                [r'Segmentation|signal'], 20),
    # 9.2: a collective on a target that is not window-bound is an error at any rank count (no local fallback)
    'neg_coll_not_window': (os.path.join(TPROG, 'neg_coll_not_window.pld'), (1, 2), 70,
                            [r'\[rank 0/\d\] .*neg_coll_not_window\.pld:20:30: error: pld\.tensor\.allreduce: '
                             r"'target' is not window-bound"],
                            [], 20),
    # 9.3: the §1.9 post-condition (signal cells back to 0, or 1 from a faster peer) after every collective
    'neg_signal_not_zero': (os.path.join(TPROG, 'neg_signal_not_zero.pld'), (2,), 70,
                            [r'\[rank 0/2\] .*neg_signal_not_zero\.pld:29:15: error: pld\.tensor\.barrier: signal '
                             r'sig\[1, 0\] holds [23] after the collective returned',
                             r'\[rank 1/2\] .*neg_signal_not_zero\.pld:29:15: error: .*sig\[0, 0\] holds [23]'],
                            [], 20),
    # 9.3: pairwise-distinct windows on the InCore rail, a run-time check (--check accepts the program)
    'neg_coll_aliased_windows': (os.path.join(TPROG, 'neg_coll_aliased_windows.pld'), (2,), 70,
                                 [r'\[rank [01]/2\] .*neg_coll_aliased_windows\.pld:26:45: error: pld\.tensor\.allreduce '
                                  r'\(InCore composite\): the signal and the target are views of the same window buffer '
                                  r"'total_buf'"],
                                 [], 20),
    # 9.3: CHIP-rail contiguity at run time (a column slice of a wider window as the input)
    'neg_chip_a2av_strided': (os.path.join(TPROG, 'neg_chip_a2av_strided.pld'), (2,), 70,
                              [r'\[rank 0/2\] .*neg_chip_a2av_strided\.pld:74:40: error: pld\.tensor\.all_to_all_v '
                               r"\(CHIP builtin\): 'input' must be a contiguous row-major view",
                               r'\[rank 1/2\] .*neg_chip_a2av_strided\.pld:74:40: error: '],
                              [], 20),
    'neg_bad_peer': (os.path.join(TPROG, 'neg_bad_peer.pld'), (2,), 70,
                     [r'\[rank 1/2\] .*neg_bad_peer\.pld:24:31: error: pld\.tensor\.put: peer 2 is outside the '
                      r'comm domain \[0, 2\)'],
                     [r'\[rank 0/2\] .*: error: '], 20),
    'neg_defer_no_publisher': (os.path.join(TPROG, 'coll_neg_defer_no_publisher.pld'), (2, 3), 70,
                               [HANG, r'\[rank 0/\d\] .*coll_neg_defer_no_publisher\.pld:\d+:\d+: error: deferred '
                                      r'completion of task \d+ \(deferred_wait\): signal\[0, 0\] \(Ge 1, '
                                      r'unsigned\).*: found 0, expected >= \(unsigned\) 1',
                                r'\[rank 1/\d\] .*: error: deferred completion'],
                               [], 20),
}
NEG_INPUT_ROWS = {'neg_ring_nr': 3}  # xs gets this many rows (NR != P)


# ---------------------------------------------------------------- running

def same(g, w):
    if isinstance(g, float) and isinstance(w, float) and math.isnan(g) and math.isnan(w):
        return True
    return g == w


def compare(name, got, want, limit=5):
    if got[0] != want.dtype or tuple(got[1]) != want.shape:
        return ['%s: got %s %r, expected %s %r' % (name, got[0], got[1], want.dtype, want.shape)]
    problems, bad = [], 0
    for k, (g, w) in enumerate(zip(got[2], want.values)):
        if want.dtype == 'FP16':
            w = f16(w)
        elif want.dtype == 'FP32':
            w = f32(w)
        if not same(g, w):
            bad += 1
            if len(problems) < limit:
                ix, rem = [], k
                for d in reversed(want.shape):
                    ix.append(rem % d)
                    rem //= d
                problems.append('%s[%s] = %r, expected %r' % (name, ', '.join(map(str, reversed(ix))), g, w))
    if bad > limit:
        problems.append('%s: %d mismatches in all (of %d elements)' % (name, bad, len(want.values)))
    return problems


def program_for(path, P, wd):
    """The program to run at P: a copy with `P = <n>` when the file fixes
    its rank count with a module constant `P = <m>`, m != n."""
    with open(path) as f:
        text = f.read()
    m = re.search(r'^P = (\d+)$', text, re.M)
    if m and int(m.group(1)) != P:
        text = re.sub(r'^P = \d+$', 'P = %d' % P, text, count=1, flags=re.M)
        path = os.path.join(wd, os.path.basename(path))
        with open(path, 'w') as f:
            f.write(text)
    return path, text


def lowered_copy(prog, args, wd):
    """The text `pldrun --print-lowered prog` prints, written to wd."""
    r = subprocess.run([args.pldrun, '--print-lowered', prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError('pldrun --print-lowered %s failed (%d): %s' % (prog, r.returncode, r.stderr))
    out = os.path.join(wd, os.path.basename(prog).replace('.pld', '.lowered.pld'))
    with open(out, 'w') as f:
        f.write(r.stdout)
    return out, r.stdout


def split_hosts_arg(v):
    """--split-hosts: K (round robin) or Kb (blocked), K >= 1."""
    if not re.fullmatch(r'[1-9][0-9]*b?', v):
        raise argparse.ArgumentTypeError('expected K or Kb with K >= 1, got %r' % v)
    return v


mpirun_launch = T.mpirun_launch  # the default launch of run_case and run_neg


def run_case(case, P, tr, args, env, extra=(), launch=None, ref_launch=None):
    """Runs positive case `case` at P over transport tr (extra: more pldrun
    arguments, e.g. --backend NAME; launch: how to start the ranks, default
    mpirun_launch(args); ref_launch: how to start a SPECIALS case's reference
    run, default mpirun_launch(args)); returns (problems, program, cli,
    stderr, rc)."""
    path, golden, warn = CASES[case]
    wd = os.path.join(args.workdir, '%s.p%d.%s' % (case, P, tr))
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    prog, text = program_for(path, P, wd)
    if case.endswith('_lowered'):
        prog, text = lowered_copy(prog, args, wd)
        if 'builtin' not in text:
            return ['the lowered program has no builtin kernel or dispatch'], prog, [], '', 1
    _, gens = read_directives(path)
    params = host_params(text, P)
    ins, outs, cli = {}, {}, []
    for name, direction, dt, shape in params:
        if direction == 'in' and name in SPECIALS.get(case, ((),))[0]:
            seed = sum(ord(c) for c in case + name) * 10 + P
            bits = specials(seed, dt, shape)
            ins[name] = Tensor(dt, shape, [bits_value(dt, b) for b in bits])
            f = os.path.join(wd, 'in_%s.npy' % name)
            T.write_npy(f, dt, shape, bits, bits=True)
            cli += ['--in', '%s=%s' % (name, f)]
        elif direction == 'in' and name in WIDE.get(case[:-len('_lowered')] if case.endswith('_lowered') else case, ()):
            seed = sum(ord(c) for c in case + name) * 10 + P
            ins[name] = Tensor(dt, shape, wide(seed, dt, T.numel(shape)))
            f = os.path.join(wd, 'in_%s.npy' % name)
            T.write_npy(f, dt, shape, ins[name].values)
            cli += ['--in', '%s=%s' % (name, f)]
        elif direction == 'in':
            spec = gens[name]
            ins[name] = Tensor(dt, shape, generate(spec, dt, T.numel(shape)))
            cli += ['--in', '%s=%s' % (name, spec)]
        else:
            outs[name] = (dt, shape)
    want = golden(ins, P, outs)
    for name in sorted(want):
        cli += ['--out', '%s=%s' % (name, os.path.join(wd, 'out_%s.npy' % name))]
    cli += ['--window-transport', tr, '--timeout', '30'] + EXTRA_ARGS.get(case, []) + list(extra)
    rc, out, err = (launch or mpirun_launch(args))(P, prog, cli, env, wd, 100)
    problems = []
    if rc != 0:
        problems.append('exit status %d, expected 0' % rc)
    # Open MPI's launcher notices are not pldrun's (T.unexpected_lines); a problem names the first line
    stray = T.unexpected_lines(err, r': error:')
    if stray:
        problems.append('errors on stderr, first: %s' % stray[0].strip())
    stray = T.unexpected_lines(err, r'warning') if warn is None else []
    if stray:
        problems.append('unexpected warnings on stderr, first: %s' % stray[0].strip())
    if warn is not None and (': warning: ' not in err or warn not in err):
        problems.append('the expected warning (%r) is missing' % warn)
    if rc == 0:
        for name in sorted(want):
            try:
                got = T.read_npy(os.path.join(wd, 'out_%s.npy' % name))
            except (OSError, ValueError) as e:
                problems.append('cannot read output %s: %s' % (name, e))
                continue
            problems += compare(name, got, want[name])
    if rc == 0 and case in SPECIALS:
        problems += same_bits(case, P, args, env, prog, cli, sorted(want), wd,
                              ref_launch or mpirun_launch(args))
    return problems, prog, cli, err, rc


def same_bits(case, P, args, env, prog, cli, names, wd, launch):
    """SPECIALS: the outputs of the run (cli), bit for bit against a run
    with the same inputs as REFERENCE says, on this host (started by launch);
    and the first output's rows of ranks 0 and 1 differ somewhere in the
    reference."""
    ref_tr, ref_args, ref_name = REFERENCE
    rcli, k = list(ref_args), 0
    while k < len(cli):
        a = cli[k]
        if a == '--window-transport':
            rcli += [a, ref_tr]
            k += 2
            continue
        if a in ('--check-races', '--poison'):  # the checking modes (--check-races refuses rma)
            k += 1
            continue
        if a in ('--schedule-seed', '--backend'):
            k += 2
            continue
        if a == '--out':
            name = cli[k + 1].split('=', 1)[0]
            rcli += [a, '%s=%s' % (name, os.path.join(wd, 'ref_%s.npy' % name))]
            k += 2
            continue
        rcli.append(a)
        k += 1
    renv = dict(env)
    renv.pop('PLD_TEST_SPLIT_HOSTS', None)
    rc, _, err = launch(P, prog, rcli, renv, wd, 100)
    if rc != 0:
        return ['the reference run over %s failed (exit status %d): %s' % (ref_name, rc, err.strip()[-300:])]
    problems = []
    for name in names:
        with open(os.path.join(wd, 'out_%s.npy' % name), 'rb') as f:
            got = f.read()
        with open(os.path.join(wd, 'ref_%s.npy' % name), 'rb') as f:
            ref = f.read()
        if got != ref:
            at = next(i for i in range(min(len(got), len(ref))) if got[i] != ref[i]) if len(got) == len(ref) else 0
            problems.append('%s: not bit-identical to the run over %s (first differing byte %d of %d)' %
                            (name, ref_name, at, len(got)))
    differ = SPECIALS[case][1]
    first = T.read_npy(os.path.join(wd, 'ref_%s.npy' % differ))
    with open(os.path.join(wd, 'ref_%s.npy' % differ), 'rb') as f:
        raw = f.read()
    row = len(first[2]) // first[1][0] * T.DTYPES[first[0]][2]
    data = raw[len(raw) - len(first[2]) * T.DTYPES[first[0]][2]:]
    if P >= 2 and data[:row] == data[row:2 * row]:
        problems.append('%s: the reference gives ranks 0 and 1 the same bits: the inputs do not exercise the '
                        'NaN payload order' % differ)
    return problems


# Over hybrid across (split) hosts a HUB step moves its parts by message
# (docs/transport.md, "Hub steps by messages"), each received only by a
# receive of its exact size: there a call of another size leaves the ranks
# waiting for parts that never come, a deadlock (small messages, sent at
# once) or the watchdog's timeout (rank 0's large ones stay in flight).
# case -> (patterns, forbidden): the outcome a hybrid run may have instead
# of NEG's.
NEG_ACROSS = {
    'neg_shape': ([HANG, r'\[rank 0/3\] .*coll_neg_shape\.pld:\d+:\d+: error: allreduce \(mesh\): wait for the parts '
                         r'to and from rank 1 \(messages across hosts\)'], []),
    'neg_shape_p4': ([r'timeout expired',
                      r'\[rank 0/4\] .*coll_neg_shape\.pld:\d+:\d+: error: allreduce \(mesh\): wait for the parts '
                      r'to and from ranks 2, 3 \(messages across hosts\)'], []),
}


def run_neg(case, P, tr, args, env, extra=(), launch=None, limit=None):
    """Runs negative case `case` at P over transport tr (extra, launch: as for
    run_case; limit: seconds the run may take, default NEG's); returns
    (problems, program, cli, stderr, rc)."""
    path, _, rc_want, patterns, forbidden, neg_limit = NEG[case]
    limit = neg_limit if limit is None else limit
    wd = os.path.join(args.workdir, '%s.p%d.%s' % (case, P, tr))
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    with open(path) as f:
        text = f.read()
    _, gens = read_directives(path)
    cli = []
    for name, direction, dt, shape in host_params(text, P):
        if direction != 'in' and name not in gens:  # an InOut the program gives a generator for
            continue
        rows = NEG_INPUT_ROWS.get(case)
        if rows:
            shape = (rows,) + shape[1:]
            f = os.path.join(wd, 'in_%s.npy' % name)
            T.write_npy(f, dt, shape, generate(gens[name], dt, T.numel(shape)))
            cli += ['--in', '%s=%s' % (name, f)]
        else:
            cli += ['--in', '%s=%s' % (name, gens[name])]
    cli += ['--window-transport', tr, '--timeout', '5'] + EXTRA_ARGS.get(case, []) + list(extra)
    t0 = time.time()
    rc, out, err = (launch or mpirun_launch(args))(P, path, cli, env, wd, 60)
    dt = time.time() - t0
    problems = []
    if rc != rc_want:
        problems.append('exit status %d, expected %d' % (rc, rc_want))
    if dt > limit:
        problems.append('took %.1f s, expected at most %d s' % (dt, limit))
    def mismatches(patterns, forbidden):
        return (['stderr does not match %r' % pat for pat in patterns if not re.search(pat, err)] +
                ['stderr matches %r' % pat for pat in forbidden if re.search(pat, err)])
    found = mismatches(patterns, forbidden)
    if found and tr == 'hybrid' and case in NEG_ACROSS and not mismatches(*NEG_ACROSS[case]):
        found = []
    return problems + found, path, cli, err, rc


# Programs whose rank count is a module constant `P = <m>` list only m in
# `# ranks:` (programs/README.md; tests/run_programs.sh checks them at that
# P). Their shapes follow P, so they also run at these P from a copy with the
# `P = ` line rewritten (program_for).
REWRITE_RANKS = {
    'corpus_chip_all_to_all_v_fp32': (2, 3, 4),
    'corpus_chip_all_to_all_v_int8': (2, 3, 4),
    'corpus_host_all_to_all_v': (2, 3, 4),
    'corpus_host_allreduce_ring': (2, 3, 4),
    'corpus_incore_all_to_all_v': (2, 3, 4),
    'corpus_incore_allreduce_ring': (2, 3, 4),
}

# The persistent variants of P-NW and P-SN (catalog tier R): the hand-rolled
# barrier over windows re-zeroed before each reuse gives the result of one
# dispatch; the credit protocol of collectives_handrolled resets its own
# credits (a negative self-notify), so kept windows give it too.
for _c, _mode in (('tutorial_barrier_handrolled', 'reset3'), ('tutorial_collectives_handrolled', 'keep3')):
    CASES[_c + '_' + _mode] = CASES[_c]
    EXTRA_ARGS[_c + '_' + _mode] = ['--dispatches', '3', '--persistent-windows'] + (
        ['--reset-persistent-windows', 'no'] if _mode == 'keep3' else [])

# Collectives leave their signals all-zero (the self-clearing contract), so
# three dispatches over persistent windows kept without a reset give the
# results of one: `<case>_keep3` runs these cases that way.
for _c in ('corpus_incore_allreduce_mesh', 'corpus_host_allreduce_ring', 'corpus_host_all_to_all_v',
           'corpus_chip_all_to_all_v_fp32'):
    CASES[_c + '_keep3'] = CASES[_c]
    EXTRA_ARGS[_c + '_keep3'] = ['--dispatches', '3', '--persistent-windows', '--reset-persistent-windows', 'no']
    if _c in REWRITE_RANKS:
        REWRITE_RANKS[_c + '_keep3'] = REWRITE_RANKS[_c]


# The printed lowered program of these cases runs too (`<case>_lowered`, shm;
# not a row of the conformance table, which runs the source programs).
for _c in ('chip_a2av', 'host_allreduce', 'host_ring', 'host_misc', 'host_a2av', 'corpus_chip_all_to_all_v_fp32',
           'corpus_chip_all_to_all_v_int8', 'corpus_host_allreduce_synth', 'corpus_host_barrier'):
    CASES[_c + '_lowered'] = CASES[_c]
    if _c in REWRITE_RANKS:
        REWRITE_RANKS[_c + '_lowered'] = REWRITE_RANKS[_c]


def case_ranks(case):
    """The P values a positive case runs at: its program's `# ranks:` and
    REWRITE_RANKS (sorted)."""
    ranks, _ = read_directives(CASES[case][0])
    return sorted(set(ranks) | set(REWRITE_RANKS.get(case, ())))


def programs(cases=None):
    """(case, program path) of every positive and negative case (of cases, when given)."""
    return [(c, (CASES[c] if c in CASES else NEG[c])[0]) for c in list(CASES) + list(NEG)
            if cases is None or c in cases]


def all_tests(outside_conformance=False):
    """(case, P, transport) of every test; with outside_conformance, without
    the positive runs that tests/conformance/run_conformance.py makes (P in
    T.CONFORMANCE_RANKS; the `_lowered` cases and SPECIALS, a check of the
    transports' schedules rather than of a backend, are not in its table)."""
    tests = []
    for case in CASES:
        for P in case_ranks(case):
            if case in SPECIALS and P < 3:
                continue  # the merged steps' plans (spread, hub) need 3 ranks or more
            lowered = case.endswith('_lowered')
            if outside_conformance and P in T.CONFORMANCE_RANKS and not lowered and case not in SPECIALS:
                continue
            for tr in (('shm',) if lowered else TRANSPORTS):
                tests.append((case, P, tr))
    for case, (path, ranks, _, _, _, _) in NEG.items():
        for P in ranks:
            for tr in TRANSPORTS:
                tests.append((case, P, tr))
    return tests


def main():
    ap = T.mpi_arg_parser(__doc__)
    ap.add_argument('--case', action='append', help='case name (repeatable); default: all')
    ap.add_argument('--ranks', type=int, action='append', help='P (repeatable); default: the case\'s ranks')
    ap.add_argument('--transport', action='append', choices=TRANSPORTS + ('hybrid',),
                    help='default: rma and shm (hybrid: only with --split-hosts or across hosts)')
    ap.add_argument('--split-hosts', type=split_hosts_arg, default=None, metavar='K[b]',
                    help='run pldrun_testing with PLD_TEST_SPLIT_HOSTS=K: the window layer treats rank r as running '
                         'on host r %% K (Kb: on host r / ceil(P / K), the hosts filled in order as mpirun fills '
                         'them), so one node exercises the transport between hosts')
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--list', action='store_true', help='print "CASE P TRANSPORT" per test and exit')
    ap.add_argument('--backend', default=None,
                    help='run on this kernel backend (`--backend` of pldrun); a run whose kernels the backend '
                         'cannot compile fails (never a skip: tests/native.cmake, native_negative)')
    ap.add_argument('--outside-conformance', action='store_true',
                    help='with --list: leave out the positive runs the conformance runner makes')
    ap.add_argument('--schedule-seed', type=int, action='append', metavar='N',
                    help='run the positive cases under pldrun --schedule-seed N (repeatable: once per seed); a '
                         'correct program keeps its golden results under every schedule')
    ap.add_argument('--rotate-seeds', action='store_true',
                    help='with --schedule-seed: each case runs once, under the next seed of the list in turn')
    ap.add_argument('--poison', action='store_true',
                    help='run the positive cases with pldrun --poison (a poison warning fails the case, as '
                         'any unexpected warning does; the golden results must not change)')
    ap.add_argument('--check-races', action='store_true',
                    help='run the positive cases with pldrun --check-races (a race report fails the case, as any '
                         'unexpected warning does; the golden results must not change)')
    ap.add_argument('--batch', dest='batch', action='store_true', default=True,
                    help='run the positive runs as pldrun batches (one MPI job per P, pldrun --batch; a run that does '
                         'not pass in its batch is started again alone and judged by that run): the default')
    ap.add_argument('--no-batch', dest='batch', action='store_false', help='start every run alone')
    T.add_max_failures(ap)
    args = ap.parse_args()
    if args.list:  # every program must exist: a missing one fails the configuration (tests/coll.cmake)
        T.require_programs('run_coll.py', programs())
        tests = all_tests(args.outside_conformance)
        print('\n'.join('%s %d %s' % t for t in tests))
        return 0
    for c in args.case or []:
        if c not in CASES and c not in NEG:
            print('run_coll.py: unknown case %r (see --list)' % c, file=sys.stderr)
            return 2
    T.require_programs('run_coll.py', programs(args.case))
    tests = all_tests()
    sel = [t for t in tests if (not args.case or t[0] in args.case) and (not args.ranks or t[1] in args.ranks) and
           (not args.transport or t[2] in args.transport)]
    args.pldrun = os.path.abspath(args.pldrun)
    args.workdir = os.path.abspath(args.workdir or os.path.join(os.getcwd(), 'coll_runs'))
    env = T.mpi_env(REPO)
    if args.split_hosts:  # mpirun passes the environment on to the ranks of this node
        env['PLD_TEST_SPLIT_HOSTS'] = str(args.split_hosts)
    if 'hybrid' in (args.transport or ()):
        # the cases of the selection over hybrid (one run per case and P; no
        # printed lowered programs: they are a front-end check, run over shm)
        sel += [(c, P, 'hybrid') for (c, P, tr) in tests
                if tr == 'shm' and not c.endswith('_lowered') and (not args.case or c in args.case) and
                (not args.ranks or P in args.ranks)]
    passed = failed = 0
    ff = T.FailFast(args.max_failures)
    t0 = time.time()
    extra = ['--backend', args.backend] if args.backend else []
    if args.poison:
        extra.append('--poison')
    if args.check_races:
        extra.append('--check-races')
    if args.poison or args.check_races:
        sel = [t for t in sel if t[0] not in NEG]
    if args.poison or args.check_races or args.schedule_seed:
        sel = [t for t in sel if t[0] not in SPECIALS]  # a check of the transports' plans, not of these modes
    seeds = [None]
    if args.schedule_seed:
        seeds = args.schedule_seed
        sel = [t for t in sel if t[0] not in NEG]
    if args.rotate_seeds:
        runs = [(case, P, tr, seeds[i % len(seeds)]) for i, (case, P, tr) in enumerate(sel)]
    else:
        runs = [(case, P, tr, seed) for case, P, tr in sel for seed in seeds]
    # a requested case that these options leave without a run would pass unseen: an error
    idle = [c for c in args.case or [] if not any(r[0] == c for r in runs)]
    if idle:
        print('run_coll.py: nothing to run for case(s) %s with these options (--ranks, --transport; --poison, '
              '--check-races and --schedule-seed leave out the negative and *_specials cases)' % ', '.join(idle),
              file=sys.stderr)
        return 2
    # the positive runs as pldrun batches (tests/mpi/pld_batch.py), made
    # before the others and reported in their order; the negative ones (exit
    # codes, hang reports, signals) each start alone
    done = {}
    positive = [r for r in runs if r[0] not in NEG]
    if args.batch and len(positive) > 1:
        batcher = B.Batcher(args.mpiexec, args.numproc_flag, args.pldrun, args.workdir, len(positive),
                            max_alone_failures=args.max_failures)

        def call(run, launch):
            case, P, tr, seed = run
            more = list(extra) + (['--schedule-seed', str(seed)] if seed is not None else [])
            t1 = time.time()
            res = run_case(case, P, tr, args, env, more, launch=launch, ref_launch=launch)
            return res, time.time() - t1

        for run, res in zip(positive, B.run_all(positive, call, batcher)):
            done[run] = res
        print(batcher.summary())
    # the batched runs are reported whole (they have run); the failure limit
    # stops the runs still to start (runs started alone from a batch that
    # StopRun kept from starting are counted as not run)
    stopped_alone = sum(1 for r in done.values() if r is B.STOPPED)
    ran = [r for r in runs if r in done and done[r] is not B.STOPPED]
    for run in itertools.chain(ran, ff.each([r for r in runs if r not in done])):
        case, P, tr, seed = run
        t1 = time.time()
        if run in done:
            (problems, prog, cli, err, _), dt = done[run]
        else:
            fn = run_neg if case in NEG else run_case
            more = list(extra) + (['--schedule-seed', str(seed)] if seed is not None else [])
            problems, prog, cli, err, _ = fn(case, P, tr, args, env, more)
            dt = time.time() - t1
        if seed is not None:
            tr = '%s seed %d' % (tr, seed)
        if problems and args.backend and 'cannot be compiled' in err:
            why = [l for l in err.splitlines() if 'cannot be compiled' in l][0]
            problems.append('backend %s refused to compile a kernel: %s' % (args.backend, why.strip()[:300]))
        if problems:
            failed += 1
            ff.fail()
            T.print_failure('%s P=%d %s (%.2f s)' % (case, P, tr, dt), problems,
                            '%s %s %d %s %s %s' % (args.mpiexec, args.numproc_flag, P, args.pldrun, prog, ' '.join(cli)),
                            err)
        else:
            passed += 1
            print('ok:   %s P=%d %s (%.2f s)' % (case, P, tr, dt))
        sys.stdout.flush()
    if stopped_alone:
        print('stopped after %d failures: %d cases not run' % (ff.failed, stopped_alone))
    print('total time %.1f s' % (time.time() - t0))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == '__main__':
    sys.exit(main())
