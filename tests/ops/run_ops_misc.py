#!/usr/bin/env python3
"""run_ops_misc.py - golden tests of the counter-based random generators
(pl.tile.random, pl.tensor.random, unified pl.random), of the asynchronous
L2 prefetch ops (pl.prefetch.*) and of the allocation tokens (pl.tile.alloc,
pl.tensor.alloc) through pldrun at one rank (CTest `ops_misc`).

The random goldens are an independent pure-Python Philox4x32 (Salmon et al.,
SC11; checked below against Random123's known-answer vectors) with pto-isa
TRANDOM's element mapping (docs/ops-numerics.md): row i, chunk j of 256
columns and lane l (0..63) encrypt the 128-bit counter
c + (i * ceil(vc / 256) + j) * floor(C / 4) + l, whose word w goes to column
256 j + 64 w + l; only the valid [vr, vc] box is written (0 elsewhere).

The programs, runner and bit-exact comparison are run_ops_mem.py's (imported).

usage: run_ops_misc.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--max-failures N]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ops  # noqa: E402
import run_ops_mem as m  # noqa: E402
from run_ops_mem import Case  # noqa: E402

# UINT32 outputs (the random ops' default dtype): npy '<u4', compared as bits
run_ops.NPY['UINT32'] = ('<u4', 'I', 4)
run_ops.PL['UINT32'] = 'pl.UINT32'

M32, M128 = 0xffffffff, (1 << 128) - 1


def philox4x32(ctr, key, rounds):
    """Philox4x32-`rounds` of a 128-bit integer counter under a 64-bit integer key; 4 words (word 0 = low)."""
    x = [(ctr >> (32 * i)) & M32 for i in range(4)]
    k0, k1 = key & M32, key >> 32
    for _ in range(rounds):
        p0, p1 = 0xD2511F53 * x[0], 0xCD9E8D57 * x[2]
        x = [(p1 >> 32) ^ x[1] ^ k0, p1 & M32, (p0 >> 32) ^ x[3] ^ k1, p0 & M32]
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return x


def words(ws):
    return sum((w & M32) << (32 * i) for i, w in enumerate(ws))


# Random123 kat_vectors, philox4x32 10 rounds: (counter words, key words, result words)
KAT = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
       ((M32,) * 4, (M32, M32), (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
       ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
        (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]


def trandom(seeds, rounds, R, C, vr, vc, dt):
    """[R, C] flat: TRANDOM's element mapping of Philox words (seeds: key0, key1, counter0..3)."""
    key, base = words(seeds[:2]), words(seeds[2:])
    out = [0] * (R * C)
    chunks = -(-vc // 256)
    for i in range(vr):
        for j in range(chunks):
            for lane in range(64):
                x = philox4x32((base + lane) & M128, key, rounds)
                for w in range(4):
                    col = 256 * j + 64 * w + lane
                    if col < vc:
                        out[i * C + col] = run_ops.i32(x[w]) if dt == 'INT32' else x[w]
            base = (base + C // 4) & M128
    return out


def random_case(name, fn, seeds, R, C, dt='UINT32', kw='', vr=None, vc=None, rounds=10, tensor=False):
    vr, vc = (R, C) if vr is None else (vr, vc)
    call = '%s(%s, [%d, %d]%s)' % (fn, ', '.join(str(s) for s in seeds), R, C, kw)
    store = 'o = pl.assemble(o, r, [0, 0])' if tensor else 'o = pl.store(r, [0, 0], o)'
    lit = [s if isinstance(s, int) else 0 for s in seeds]
    return Case('%s.%s' % (name, dt), [('x0', 'INT32', (1, 8), 'sym')], (dt, (R, C)), ['r = ' + call, store],
                lambda v: trandom(lit, rounds, R, C, vr, vc, dt))


def random_cases():
    big = (0xFFFFFFFF, -1, 0xFFFFFFF0, M32, M32, 7)  # lanes and steps carry across all four counter words
    cases = [
        random_case('tile.random', 'pl.tile.random', (0x1234, 0x5678, 1, 2, 3, 4), 4, 256),
        random_case('tile.random', 'pl.tile.random', (0x0ABC, 0x0DEF, 7, 0, 0, 0), 8, 128, 'INT32', ', dtype=pl.INT32'),
        random_case('tile.random.rounds7', 'pl.tile.random', (0x1111, 0x2222, 5, 6, 7, 8), 16, 64, kw=', rounds=7',
                    rounds=7),
        random_case('tile.random.wide', 'pl.tile.random', (0x9, 0xA, 3, 0, 0, 0), 4, 512),
        random_case('tile.random.valid', 'pl.tile.random', (0x55, 0x66, 1, 0, 0, 0), 16, 128,
                    kw=', valid_shape=[10, 80]', vr=10, vc=80),
        random_case('tile.random.valid_pos', 'pl.tile.random', (0x55, 0x66, 1, 0, 0, 0), 8, 320, 'INT32',
                    ', [3, 300], pl.INT32, 7', vr=3, vc=300, rounds=7),
        random_case('tile.random.carry', 'pl.tile.random', big, 3, 300, kw=', dtype=pl.UINT32'),
        random_case('tile.random.narrow', 'pl.tile.random', (1, 2, 3, 4, 5, 6), 5, 20, 'INT32', ', dtype=pl.INT32'),
        random_case('tensor.random', 'pl.tensor.random', (0x1234, 0x5678, 1, 2, 3, 4), 4, 256, tensor=True),
        random_case('tensor.random.carry', 'pl.tensor.random', big, 2, 72, 'INT32', ', dtype=pl.INT32, rounds=7',
                    rounds=7, tensor=True),
        random_case('random', 'pl.random', (0x77, 0x88, 9, 9, 9, 9), 6, 40, tensor=True),
    ]
    # seeds read at run time: INT32 scalars from x0
    rd = ['s%d = pl.tensor.read(x0, [0, %d])' % (i, i) for i in range(6)]
    for fn, tensor in (('pl.tile.random', False), ('pl.tensor.random', True)):
        store = 'o = pl.assemble(o, r, [0, 0])' if tensor else 'o = pl.store(r, [0, 0], o)'
        cases.append(Case('%s.scalar_seeds.UINT32' % fn[3:], [('x0', 'INT32', (1, 8), 'sym')], ('UINT32', (4, 96)),
                          rd + ['r = %s(s0, s1, s2, s3, s4, s5, [4, 96])' % fn, store],
                          lambda v: trandom(v[0][:6], 10, 4, 96, 4, 96, 'UINT32')))
    return cases


def prefetch_cases():
    """The prefetch ops move no data: the prefetched tensor still loads and adds as before. Both the DSL form
    and the printed IR's (annotated handles, a BOOL done flag)."""
    dsl = ['ctx = pl.prefetch.make_context()', 'evt = pl.prefetch.async_prefetch(x0, ctx)',
           'session = pl.prefetch.session(ctx)', 'pl.prefetch.wait(evt, session)']
    printed = ['ctx: pl.PrefetchAsyncContext = pl.prefetch.make_context()',
               'evt: pl.AsyncEvent = pl.prefetch.async_prefetch(x0, ctx)',
               'session: pl.AsyncSession = pl.prefetch.session(ctx)',
               'done: pl.Scalar[pl.BOOL] = pl.prefetch.wait(evt, session)',
               'k: pl.Scalar[pl.FP32] = pl.cast(done, pl.FP32)']
    use = ['t = pl.load(x0, [0, 0], [1, 128])', 'r = pl.tile.add(t, t)']
    out = ['o = pl.store(r, [0, 0], o)']
    return [Case('prefetch.dsl.FP32', [('x0', 'FP32', (1, 128), 'sym')], ('FP32', (1, 128)), dsl + use + out,
                 lambda v: [run_ops.f32(a + a) for a in v[0]]),
            Case('prefetch.printed.FP32', [('x0', 'FP32', (1, 128), 'sym')], ('FP32', (1, 128)),
                 printed + use + ['r = pl.tile.adds(r, k)'] + out,  # done is True: + 1.0
                 lambda v: [run_ops.f32(run_ops.f32(a + a) + 1.0) for a in v[0]])]


def alloc_cases():
    """pl.tile.alloc / pl.tensor.alloc: allocation tokens of the printed IR (tiles name them in MemRefs); values
    are unaffected."""
    body = ['mem_vec_2: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 512)',
            'mem_vec_3: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 512, pinned=True)',
            'mem_ddr_4: pl.Ptr = pl.tensor.alloc(pl.Mem.DDR, 512)',
            't: pl.Tile[[1, 128], pl.FP32, pl.MemRef(mem_vec_2, 0, 512), pl.Mem.Vec] = pl.load(x0, [0, 0], [1, 128])',
            'r: pl.Tile[[1, 128], pl.FP32, pl.MemRef(mem_vec_3, 512, 512), pl.Mem.Vec] = pl.tile.add(t, t)',
            'o = pl.store(r, [0, 0], o)']
    return [Case('alloc.FP32', [('x0', 'FP32', (1, 128), 'sym')], ('FP32', (1, 128)), body,
                 lambda v: [run_ops.f32(a + a) for a in v[0]])]


def build_cases():
    return random_cases() + prefetch_cases() + alloc_cases()


def kat():
    """The golden's Philox against Random123's vectors (a wrong golden must not pass)."""
    bad = 0
    for c, k, want in KAT:
        got = tuple(philox4x32(words(c), words(k), 10))
        if got != want:
            print('FAIL golden philox4x32-10 %s %s: %s, want %s' % (c, k, [hex(g) for g in got], [hex(w) for w in want]))
            bad += 1
    return bad


def main():
    m.build_cases = build_cases
    return 1 if kat() or m.main() else 0


if __name__ == '__main__':
    sys.exit(main())
