#!/usr/bin/env python3
"""run_elem.py - table-driven golden tests of the element-wise ops of issue 11
through pldrun at one rank, without mpirun (CTest `ops_elem`); the sibling of
run_ops.py (reductions and broadcasts), whose numbers and .npy helpers it uses.

For every case (an op, a form: pl.tile.X / pl.tensor.X / unified pl.X, a
dtype, a geometry with a full or partial valid shape) this script writes one
InCore kernel into generated programs of CHUNK cases each, runs pldrun on
them, and compares every output bit for bit with a golden computed here, in
pure Python, from the rules of docs/ops-numerics.md (restated below):

  * float ops round once to the dtype; the multi-step ones (addc, subc,
    addsc, subsc, lrelu, prelu, part_add, part_mul) take FP32 steps first;
    fmod / rem / sin / cos are computed in double and rounded once;
  * fmod truncates (the dividend's sign, torch.fmod); rem floors (the
    divisor's sign, Python's %);
  * integers wrap; shifts by at least the width give 0 (shr of a negative
    signed value: -1);
  * tile compares give PyPTO's packed UINT8 mask (bit j % 8 of byte j / 8;
    last dim roundup(ceil(N / 8), 32)), checked raw and through sel; tensor
    compares give 1 / 0 in the operand's dtype;
  * part_* combine where both sources are valid and copy src0 elsewhere;
  * tiles store their valid region (the rest of an Out stays 0), and so do
    tensor results that keep their operands' valid shape (PyPTO's rule:
    not cmp, xor / xors, part_*, nor two valid shapes).

usage: run_elem.py --pldrun PATH [--workdir DIR] [--keep] [--filter SUBSTR] [--max-failures N]
"""
import argparse
import math
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_ops as R  # noqa: E402  (numbers, .npy, Rng)
T = R.T  # pld_mpitest (FailFast, --max-failures)

f32, RNDF = R.f32, dict(R.RND)
FLOAT = ('FP32', 'FP16', 'BF16')
INTS = {'INT8': (8, 1), 'INT16': (16, 1), 'INT32': (32, 1), 'UINT8': (8, 0), 'UINT16': (16, 0)}
R.NPY.update({'INT8': ('|i1', 'b', 1), 'INT16': ('<i2', 'h', 2), 'UINT8': ('|u1', 'B', 1), 'UINT16': ('<u2', 'H', 2)})
PL = {d: 'pl.' + d for d in list(FLOAT) + list(INTS)}


def wrap(dt, v):
    w, sgn = INTS[dt]
    v &= (1 << w) - 1
    return v - (1 << w) if sgn and v >= 1 << (w - 1) else v


def rnd(dt, v):
    return RNDF[dt](v) if dt in FLOAT else wrap(dt, int(v))


def bits(dt, v):
    if dt in FLOAT:
        return R.bits(dt, v)
    return v & ((1 << INTS[dt][0]) - 1)


# ---------------------------------------------------------------- goldens (a, b, c already in the dtype)

def g_fmod(dt, a, b, c):
    if dt in FLOAT:
        return rnd(dt, math.fmod(a, b))
    r = abs(a) % abs(b)
    return wrap(dt, -r if a < 0 else r)


def g_rem(dt, a, b, c):
    return rnd(dt, a % b)


def g_shl(dt, a, b, c):
    w = INTS[dt][0]
    return 0 if b >= w else wrap(dt, a << b)


def g_shr(dt, a, b, c):
    w, sgn = INTS[dt]
    if b >= w:
        return -1 if sgn and a < 0 else 0
    return a >> b


def g_lrelu(dt, a, s, c):  # pto-isa's TLRELU: x > 0 ? x : x * slope (so a slope above 1 leaves x > 0 alone)
    if dt not in FLOAT:
        return a if a > 0 else wrap(dt, a * s)
    return a if a > 0 else rnd(dt, f32(a * s))


def g_prelu(dt, a, b, c):
    return a if a > 0 else rnd(dt, f32(a * b))


def g_addc(dt, a, b, c, sign=1):
    if dt not in FLOAT:
        return wrap(dt, a + sign * b + sign * c)
    return rnd(dt, f32(f32(a + sign * b) + sign * c))


CMP = [lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b,
       lambda a, b: a > b, lambda a, b: a >= b]


def g_part(op):
    def g(dt, a, b, c):
        if op == 'max':
            return max(a, b)
        if op == 'min':
            return min(a, b)
        v = a + b if op == 'add' else a * b
        return rnd(dt, f32(v)) if dt in FLOAT else wrap(dt, v)
    return g


GOLD = {
    'fmod': g_fmod, 'rem': g_rem,
    'and': lambda dt, a, b, c: wrap(dt, a & b), 'or': lambda dt, a, b, c: wrap(dt, a | b),
    'xor': lambda dt, a, b, c: wrap(dt, a ^ b), 'not': lambda dt, a, b, c: wrap(dt, ~a),
    'shl': g_shl, 'shr': g_shr,
    'sin': lambda dt, a, b, c: rnd(dt, math.sin(a)), 'cos': lambda dt, a, b, c: rnd(dt, math.cos(a)),
    'lrelu': g_lrelu, 'prelu': g_prelu,
    'addc': g_addc, 'subc': lambda dt, a, b, c: g_addc(dt, a, b, c, -1),
    'max': lambda dt, a, b, c: max(a, b), 'min': lambda dt, a, b, c: min(a, b),
    'recip': lambda dt, a, b, c: rnd(dt, 1.0 / a),
    'rsqrt': lambda dt, a, b, c: rnd(dt, f32(1.0 / f32(math.sqrt(a)))),
    'div': lambda dt, a, b, c: rnd(dt, a / b), 'log': lambda dt, a, b, c: rnd(dt, f32(math.log(a))),
    'sel': lambda dt, a, b, c: a if a > b else b,
    'adds': lambda dt, a, b, c: rnd(dt, f32(a + b)) if dt in FLOAT else wrap(dt, a + b),
    'sub': lambda dt, a, b, c: rnd(dt, f32(a - b)) if dt in FLOAT else wrap(dt, a - b),
    'exp': lambda dt, a, b, c: rnd(dt, f32(math.exp(a))),
    'sqrt': lambda dt, a, b, c: rnd(dt, f32(math.sqrt(a))),
    'abs': lambda dt, a, b, c: abs(a) if dt in FLOAT else wrap(dt, abs(a)),
    'neg': lambda dt, a, b, c: -a if dt in FLOAT else wrap(dt, -a),
    'muls': lambda dt, a, b, c: rnd(dt, f32(a * b)) if dt in FLOAT else wrap(dt, a * b),
}
for _k in ('add', 'mul', 'max', 'min'):
    GOLD['part_' + _k] = g_part(_k)
for _i in range(6):
    GOLD['cmp%d' % _i] = (lambda i: lambda dt, a, b, c: (1 if CMP[i](a, b) else 0))(_i)

# ---------------------------------------------------------------- cases

GEOMS = {'full': (8, 16, 8, 16), 'part': (16, 24, 13, 19)}


class Case:
    def __init__(self, name, form, op, dt, geom, call, nin, kinds=('sym',), scalar=None, odt=None, oshape=None,
                 uvalid=None, special=None, tol=0):
        self.name, self.form, self.op, self.dt, self.geom, self.call = name, form, op, dt, geom, call
        self.nin, self.kinds, self.scalar = nin, kinds, scalar
        self.odt = odt or dt
        self.oshape = oshape
        self.uvalid = uvalid
        self.special = special
        self.tol = tol


def gen(rng, dt, n, kind):
    if dt in FLOAT:
        r = RNDF[dt]
        if kind == 'nz':   # divisors: |x| in [0.5, 2.5], random sign
            return [r(rng.uniform(0.5, 2.5) * (1 if rng.next() & 1 else -1)) for _ in range(n)]
        if kind == 'pos':
            return [r(rng.uniform(0.25, 4.0)) for _ in range(n)]
        if kind == 'ang':
            return [r(rng.uniform(-7.0, 7.0)) for _ in range(n)]
        if kind == 'ties':  # few values: equal pairs for the compares
            return [r((rng.next() % 5) - 2.0) for _ in range(n)]
        return [r(rng.uniform(-8.0, 8.0)) for _ in range(n)]
    w, sgn = INTS[dt]
    lo, span = (-(1 << (w - 1)), 1 << w) if sgn else (0, 1 << w)
    if kind == 'count':  # shift counts 0 .. width + 1
        return [rng.next() % (w + 2) for _ in range(n)]
    if kind == 'nz':
        return [x if x else 3 for x in (lo + rng.next() % span for _ in range(n))]
    if kind == 'small':
        return [wrap(dt, rng.next() % 41 - 20) if sgn else rng.next() % 41 for _ in range(n)]
    if kind == 'ties':
        return [wrap(dt, rng.next() % 5 - 2) if sgn else rng.next() % 5 for _ in range(n)]
    return [lo + rng.next() % span for _ in range(n)]


def build_cases():
    C = []

    def add(*a, **k):
        C.append(Case(*a, **k))

    for g in ('full', 'part'):
        for dt in FLOAT:
            nz = ('sym', 'nz')
            add('tile.fmod.%s.%s' % (dt, g), 'tile', 'fmod', dt, g, 'pl.tile.fmod(t, u)', 2, nz)
            add('tile.fmods.%s.%s' % (dt, g), 'tile', 'fmod', dt, g, 'pl.tile.fmods(t, -1.75)', 1, scalar=-1.75)
            add('tile.rem.%s.%s' % (dt, g), 'tile', 'rem', dt, g, 'pl.tile.rem(t, u, tmp)', 2, nz)
            add('tile.rems.%s.%s' % (dt, g), 'tile', 'rem', dt, g, 'pl.tile.rems(t, 1.5, tmp)', 1, scalar=1.5)
            add('unified.tile.fmod.%s.%s' % (dt, g), 'tile', 'fmod', dt, g, 'pl.fmod(t, u)', 2, nz)
            add('tensor.fmod.%s.%s' % (dt, g), 'tensor', 'fmod', dt, g, 'pl.tensor.fmod(s, v)', 2, nz)
            add('tensor.fmod_scalar.%s.%s' % (dt, g), 'tensor', 'fmod', dt, g, 'pl.tensor.fmod(s, 2.5)', 1, scalar=2.5)
            add('unified.tensor.fmods.%s.%s' % (dt, g), 'tensor', 'fmod', dt, g, 'pl.fmods(s, 2.5)', 1, scalar=2.5)
            add('tile.lrelu.%s.%s' % (dt, g), 'tile', 'lrelu', dt, g, 'pl.tile.lrelu(t, 0.1)', 1, scalar=0.1)
            add('tile.lrelu_steep.%s.%s' % (dt, g), 'tile', 'lrelu', dt, g, 'pl.tile.lrelu(t, 1.5)', 1, scalar=1.5)
            add('tile.addc.%s.%s' % (dt, g), 'tile', 'addc', dt, g, 'pl.tile.addc(t, u, w)', 3, ('sym', 'sym', 'sym'))
            add('tile.subc.%s.%s' % (dt, g), 'tile', 'subc', dt, g, 'pl.tile.subc(t, u, w)', 3, ('sym', 'sym', 'sym'))
            add('tile.addsc.%s.%s' % (dt, g), 'tile', 'addc', dt, g, 'pl.tile.addsc(t, 0.3, u)', 2, scalar=0.3,
                special='sc')
            add('tile.subsc.%s.%s' % (dt, g), 'tile', 'subc', dt, g, 'pl.tile.subsc(t, 0.3, u)', 2, scalar=0.3,
                special='sc')
            for op in ('add', 'mul', 'max', 'min'):
                add('tile.part_%s.%s.%s' % (op, dt, g), 'tile', 'part_' + op, dt, g, 'pl.tile.part_%s(t, u)' % op, 2,
                    uvalid=(5, 7))
                add('tensor.part_%s.%s.%s' % (op, dt, g), 'tensor', 'part_' + op, dt, g,
                    'pl.tensor.part_%s(s, v)' % op, 2, uvalid=(6, 9))
            add('unified.tile.part_add.%s.%s' % (dt, g), 'tile', 'part_add', dt, g, 'pl.part_add(t, u)', 2, uvalid=(3, 4))
            for m in range(6):
                add('tile.cmp%d.sel.%s.%s' % (m, dt, g), 'tile', 'cmp%d' % m, dt, g, None, 2, ('ties', 'ties'),
                    special='cmpsel')
                add('tensor.cmp%d.%s.%s' % (m, dt, g), 'tensor', 'cmp%d' % m, dt, g,
                    'pl.tensor.cmp(s, v, cmp_type=%d)' % m, 2, ('ties', 'ties'))
            add('tile.cmp_mask.%s.%s' % (dt, g), 'tile', 'cmp4', dt, g, 'pl.tile.cmp(t, u, cmp_type=4)', 2,
                ('ties', 'ties'), odt='UINT8', special='mask')
            add('tile.cmps_mask.%s.%s' % (dt, g), 'tile', 'cmp3', dt, g, 'pl.tile.cmps(t, 0.0, cmp_type=3)', 1,
                ('ties',), scalar=0.0, odt='UINT8', special='mask')
            add('unified.tensor.cmp_scalar.%s.%s' % (dt, g), 'tensor', 'cmp5', dt, g, 'pl.cmp(s, 1.0, cmp_type=5)', 1,
                ('ties',), scalar=1.0)
            add('tile.sel.%s.%s' % (dt, g), 'tile', 'sel', dt, g, None, 2, ('ties', 'ties'), special='sel')
            if dt != 'BF16':
                add('tile.sels.%s.%s' % (dt, g), 'tile', 'sel', dt, g, None, 1, ('ties',), scalar=-3.0, special='sels')
                add('tile.prelu.%s.%s' % (dt, g), 'tile', 'prelu', dt, g, 'pl.tile.prelu(t, u, tmp)', 2)
            add('tensor.maximum_scalar.%s.%s' % (dt, g), 'tensor', 'max', dt, g, 'pl.tensor.maximum(s, 0.5)', 1,
                scalar=0.5)
            add('unified.tensor.minimum_scalar.%s.%s' % (dt, g), 'tensor', 'min', dt, g, 'pl.minimum(s, 0.5)', 1,
                scalar=0.5)
            add('tile.maximums.%s.%s' % (dt, g), 'tile', 'max', dt, g, 'pl.tile.maximums(t, 0.5)', 1, scalar=0.5)
            add('tile.minimums.%s.%s' % (dt, g), 'tile', 'min', dt, g, 'pl.tile.minimums(t, 0.5)', 1, scalar=0.5)
            add('tile.maxs_alias.%s.%s' % (dt, g), 'tile', 'max', dt, g, 'pl.tile.maxs(t, -0.5)', 1, scalar=-0.5)
            add('tile.add_scalar.%s.%s' % (dt, g), 'tile', 'adds', dt, g, 'pl.tile.add(t, 0.75)', 1, scalar=0.75)
            add('tensor.mul_scalar.%s.%s' % (dt, g), 'tensor', 'muls', dt, g, 'pl.tensor.mul(s, -1.25)', 1,
                scalar=-1.25)
            add('tensor.recip.%s.%s' % (dt, g), 'tensor', 'recip', dt, g, 'pl.tensor.recip(s)', 1, ('nz',))
            add('tensor.rsqrt.%s.%s' % (dt, g), 'tensor', 'rsqrt', dt, g, 'pl.tensor.rsqrt(s)', 1, ('pos',))
            add('unified.tensor.recip.%s.%s' % (dt, g), 'tensor', 'recip', dt, g, 'pl.recip(s)', 1, ('nz',))
            if dt != 'BF16':
                add('tile.recip_hp.%s.%s' % (dt, g), 'tile', 'recip', dt, g, 'pl.tile.recip(t, high_precision=True)', 1,
                    ('nz',))
                add('tensor.rsqrt_hp.%s.%s' % (dt, g), 'tensor', 'rsqrt', dt, g,
                    'pl.tensor.rsqrt(s, high_precision=True)', 1, ('pos',))
            if dt != 'BF16':  # PyPTO's TDIV: INT16, INT32, FP16, FP32
                add('tile.div_hp.%s.%s' % (dt, g), 'tile', 'div', dt, g, 'pl.tile.div(t, u, high_precision=True)', 2,
                    ('sym', 'nz'))
            add('tile.rsqrt_tmp.%s.%s' % (dt, g), 'tile', 'rsqrt', dt, g, 'pl.tile.rsqrt(t, tmp)', 1, ('pos',))
            # the unary math ops and the binary ops of the first sessions, in every form
            for op, kind in (('exp', 'sym'), ('log', 'pos'), ('sqrt', 'pos'), ('abs', 'sym'), ('neg', 'sym')):
                if op == 'log' and dt == 'BF16':
                    continue  # PyPTO's log: FP16 or FP32
                add('tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%s(t)' % op, 1, (kind,))
                add('tensor.%s.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.tensor.%s(s)' % op, 1, (kind,))
                add('unified.tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.%s(t)' % op, 1, (kind,))
                add('unified.tensor.%s.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.%s(s)' % op, 1, (kind,))
            add('tile.maximum.%s.%s' % (dt, g), 'tile', 'max', dt, g, 'pl.tile.maximum(t, u)', 2)
            add('tile.minimum.%s.%s' % (dt, g), 'tile', 'min', dt, g, 'pl.tile.minimum(t, u)', 2)
            add('tensor.sub.%s.%s' % (dt, g), 'tensor', 'sub', dt, g, 'pl.tensor.sub(s, v)', 2)
            add('tensor.subs.%s.%s' % (dt, g), 'tensor', 'sub', dt, g, 'pl.tensor.subs(s, 0.625)', 1, scalar=0.625)
            add('tensor.div.%s.%s' % (dt, g), 'tensor', 'div', dt, g, 'pl.tensor.div(s, v)', 2, ('sym', 'nz'))
            add('tensor.divs.%s.%s' % (dt, g), 'tensor', 'div', dt, g, 'pl.tensor.divs(s, -1.5)', 1, scalar=-1.5)
        dt = 'FP32'
        for op in ('sin', 'cos'):
            add('tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%s(t)' % op, 1, ('ang',))
            add('tensor.%s.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.tensor.%s(s)' % op, 1, ('ang',))
            add('unified.tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.%s(t)' % op, 1, ('ang',))
        for dt in INTS:
            nz = ('sym', 'nz')
            add('tile.fmod.%s.%s' % (dt, g), 'tile', 'fmod', dt, g, 'pl.tile.fmod(t, u)', 2, nz)
            add('tile.rem.%s.%s' % (dt, g), 'tile', 'rem', dt, g, 'pl.tile.rem(t, u, tmp)', 2, nz)
            add('tile.rems.%s.%s' % (dt, g), 'tile', 'rem', dt, g, 'pl.tile.rems(t, -7, tmp)', 1, scalar=-7)
            for op, nm in (('and', 'and_'), ('or', 'or_'), ('xor', 'xor')):
                extra = ', tmp' if op == 'xor' else ''
                add('tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%s(t, u%s)' % (nm, extra), 2, ('sym', 'sym'))
                add('tile.%ss.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%ss(t, 37%s)' % (op, extra), 1, scalar=37)
                add('tensor.%s.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.tensor.%s(s, v)' % nm, 2, ('sym', 'sym'))
                add('tensor.%s_scalar.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.tensor.%s(s, -6)' % nm, 1, scalar=-6)
                add('tensor.%ss.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.tensor.%ss(s, 11)' % op, 1, scalar=11)
                add('unified.tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.%s(t, u%s)' % (nm, extra), 2,
                    ('sym', 'sym'))
            for op in ('shl', 'shr'):
                add('tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%s(t, u)' % op, 2, ('sym', 'count'))
                add('tile.%ss.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%ss(t, 3)' % op, 1, scalar=3)
                add('tile.%ss_wide.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%ss(t, 40)' % op, 1, scalar=40)
                add('tensor.%s.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.tensor.%s(s, v)' % op, 2, ('sym', 'count'))
                add('unified.tensor.%ss.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.%ss(s, 2)' % op, 1, scalar=2)
            if INTS[dt][1]:  # signed: abs and neg wrap (PyPTO's integer abs/neg)
                for op in ('abs', 'neg'):
                    add('tile.%s.%s.%s' % (op, dt, g), 'tile', op, dt, g, 'pl.tile.%s(t)' % op, 1)
                    add('tensor.%s.%s.%s' % (op, dt, g), 'tensor', op, dt, g, 'pl.tensor.%s(s)' % op, 1)
            add('tile.addc.%s.%s' % (dt, g), 'tile', 'addc', dt, g, 'pl.tile.addc(t, u, w)', 3, ('sym', 'sym', 'sym'))
            add('tensor.add_scalar.%s.%s' % (dt, g), 'tensor', 'adds', dt, g, 'pl.tensor.add(s, 100)', 1, scalar=100)
            add('tile.subsc.%s.%s' % (dt, g), 'tile', 'subc', dt, g, 'pl.tile.subsc(t, 5, u)', 2, scalar=5, special='sc')
            add('tile.part_max.%s.%s' % (dt, g), 'tile', 'part_max', dt, g, 'pl.tile.part_max(t, u)', 2, uvalid=(5, 7))
            add('tensor.part_add.%s.%s' % (dt, g), 'tensor', 'part_add', dt, g, 'pl.tensor.part_add(s, v)', 2,
                uvalid=(6, 9))
            add('tile.cmp2.sel.%s.%s' % (dt, g), 'tile', 'cmp2', dt, g, None, 2, ('ties', 'ties'), special='cmpsel')
            add('tensor.cmp1.%s.%s' % (dt, g), 'tensor', 'cmp1', dt, g, 'pl.tensor.cmp(s, v, cmp_type=1)', 2,
                ('ties', 'ties'))
            add('tile.sel.%s.%s' % (dt, g), 'tile', 'sel', dt, g, None, 2, ('ties', 'ties'), special='sel')
            add('tile.sels.%s.%s' % (dt, g), 'tile', 'sel', dt, g, None, 1, ('ties',), scalar=-3, special='sels')
            if dt in ('INT16', 'UINT16'):
                add('tile.not.%s.%s' % (dt, g), 'tile', 'not', dt, g, 'pl.tile.not_(t)', 1)
                add('tensor.not.%s.%s' % (dt, g), 'tensor', 'not', dt, g, 'pl.tensor.not_(s)', 1)
                add('unified.tile.not.%s.%s' % (dt, g), 'tile', 'not', dt, g, 'pl.not_(t)', 1)
    # generators
    for dt in ('INT32', 'INT16', 'UINT16'):
        for start, desc in ((5, False), (3, True), (-2, False)):
            if dt == 'UINT16' and start < 0:
                continue
            add('tile.ci.%s.%d%s' % (dt, start, '.desc' if desc else ''), 'gen', 'ci', dt, 'full',
                'pl.tile.ci(%d, [1, 16], dtype=%s, descending=%s)' % (start, PL[dt], desc), 0, scalar=(start, desc),
                oshape=(1, 16))
    add('tensor.ci.INT32', 'gen', 'ci', 'INT32', 'full', 'pl.tensor.ci(7, [1, 24])', 0, scalar=(7, False),
        oshape=(1, 24))
    add('tile.arange.INT32', 'gen', 'ci', 'INT32', 'full', 'pl.tile.arange(0, [1, 16])', 0, scalar=(0, False),
        oshape=(1, 16))
    for dt in ('FP32', 'INT32', 'FP16', 'BF16', 'UINT8'):
        for diag, upper, vs in ((0, False, None), (2, True, None), (-1, False, (5, 6)), (1, True, (7, 3))):
            vtxt = '' if vs is None else ', valid_shape=[%d, %d]' % vs
            add('tile.tri.%s.%d%s%s' % (dt, diag, '.upper' if upper else '', '.part' if vs else ''), 'gen', 'tri', dt,
                'full', 'pl.tile.tri(%d, [8, 12]%s, dtype=%s, upper=%s)' % (diag, vtxt, PL[dt], upper), 0,
                scalar=(diag, upper, vs), oshape=(8, 12))
    return C


# ---------------------------------------------------------------- programs


def shp(s):
    return '[%s]' % ', '.join(str(d) for d in s)


def out_shape(c):
    Rr, Cc, _, _ = GEOMS[c.geom]
    if c.oshape:
        return c.oshape
    if c.special == 'mask':
        return (Rr, ((Cc + 7) // 8 + 31) // 32 * 32)
    return (Rr, Cc)


def uvalid(c):
    _, _, vr, vc = GEOMS[c.geom]
    return c.uvalid or (vr, vc)


def kernel(i, c):
    Rr, Cc, vr, vc = GEOMS[c.geom]
    dt = PL[c.dt]
    names = ['x', 'y', 'z'][:c.nin]
    params = ''.join('%s: pl.Tensor[[%d, %d], %s], ' % (n, Rr, Cc, dt) for n in names)
    os_ = out_shape(c)
    params += 'o: pl.Out[pl.Tensor[%s, %s]]' % (shp(os_), PL[c.odt])
    L = ['    @pl.function(type=pl.FunctionType.InCore)',
         '    def k%d(self, %s) -> pl.Tensor[%s, %s]:' % (i, params, shp(os_), PL[c.odt]),
         '        # %s' % c.name]
    if c.form == 'tile':
        for n, tn in zip(names, ['t', 'u', 'w']):
            v = (vr, vc) if n != 'y' else uvalid(c)
            L.append('        %s = pl.load(%s, [0, 0], [%d, %d], valid_shape=[%d, %d])' % (tn, n, Rr, Cc, v[0], v[1]))
        L.append('        tmp = pl.tile.create([%d, %d], dtype=%s, target_memory=pl.Mem.Vec)' % (Rr, Cc, dt))
        if c.special == 'cmpsel':
            L += ['        one = pl.tile.full([%d, %d], dtype=%s, value=1)' % (Rr, Cc, dt),
                  '        zero = pl.tile.full([%d, %d], dtype=%s, value=0)' % (Rr, Cc, dt),
                  '        m = pl.tile.cmp(t, u, cmp_type=%s)' % c.op[3:],
                  '        r = pl.tile.set_validshape(pl.tile.sel(m, one, zero, tmp), %d, %d)' % (vr, vc)]
        elif c.special == 'sel':
            L += ['        m = pl.tile.cmp(t, u, cmp_type=4)', '        r = pl.tile.sel(m, t, u, tmp)']
        elif c.special == 'sels':
            L += ['        m = pl.tile.cmps(t, 0, cmp_type=4)', '        r = pl.tile.sels(m, t, tmp, %r)' % c.scalar]
        else:
            L.append('        r = %s' % c.call)
        L.append('        o = pl.store(r, [0, 0], o)')
    elif c.form == 'tensor':
        for n, tn in zip(names, ['s', 'v', 'q']):
            v = (vr, vc) if n != 'y' else uvalid(c)
            L.append('        %s = pl.tensor.slice(%s, [%d, %d], [0, 0], valid_shape=[%d, %d])' % (tn, n, Rr, Cc, v[0], v[1]))
        L.append('        r = %s' % c.call)
        L.append('        o = pl.assemble(o, r, [0, 0])')
    else:
        L.append('        r = %s' % c.call)
        L.append('        o = pl.%s(%s)' % (('assemble', 'o, r, [0, 0]') if c.call.startswith('pl.tensor.')
                                           else ('store', 'r, [0, 0], o')))
    L.append('        return o')
    return '\n'.join(L) + '\n'


def program(cases, base):
    out = ['import pypto.language as pl', '', '', '@pl.program', 'class OpsElem:']
    params, calls = [], []
    for i, c in enumerate(cases, base):
        out.append(kernel(i, c))
        Rr, Cc, _, _ = GEOMS[c.geom]
        args = []
        for n in ['x', 'y', 'z'][:c.nin]:
            params.append('%s%d: pl.Tensor[[%d, %d], %s]' % (n, i, Rr, Cc, PL[c.dt]))
            args.append('%s%d' % (n, i))
        params.append('o%d: pl.Out[pl.Tensor[%s, %s]]' % (i, shp(out_shape(c)), PL[c.odt]))
        args.append('o%d' % i)
        calls.append('        o%d = self.k%d(%s)' % (i, i, ', '.join(args)))
    out.append('    @pl.function(type=pl.FunctionType.Orchestration)')
    out.append('    def main(self, %s):' % ', '.join(params))
    out += calls
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------- expected


def expected(c, ins):
    Rr, Cc, vr, vc = GEOMS[c.geom]
    os_ = out_shape(c)
    out = [0] * (os_[0] * os_[1])
    dt = c.dt
    if c.op == 'ci':
        start, desc = c.scalar
        return [wrap(dt, start - k if desc else start + k) for k in range(os_[1])]
    if c.op == 'tri':
        diag, upper, vs = c.scalar
        er, ec = vs or os_
        for i in range(er):
            for j in range(ec):
                out[i * os_[1] + j] = 1 if (j >= i + diag if upper else j <= i + diag) else 0
        return out
    X = ins[0]
    Y = ins[1] if c.nin > 1 else None
    Z = ins[2] if c.nin > 2 else None
    s = rnd(dt, c.scalar) if c.scalar is not None and c.special != 'sels' else None
    uvr, uvc = uvalid(c)
    if c.special == 'mask':
        er, ec = vr, vc
        for i in range(er):
            for j in range(ec):
                a = X[i * Cc + j]
                b = Y[i * Cc + j] if Y else s
                if GOLD[c.op](dt, a, b, None):
                    out[i * os_[1] + j // 8] |= 1 << (j % 8)
        # the stored region is the mask's valid [vr, ceil(vc / 8)]: its last byte also holds the bits of
        # columns vc .. 8 * ceil(vc / 8) - 1, outside the loaded valid region, where the tiles hold 0
        for i in range(er):
            for j in range(ec, min(Cc, ((ec + 7) // 8) * 8)):
                if GOLD[c.op](dt, 0, 0 if Y else s, None):
                    out[i * os_[1] + j // 8] |= 1 << (j % 8)
        return out
    # tiles store their valid region; a tensor result keeps its operands' valid shape (PyPTO's type deduction:
    # a unary or scalar op, or two tensors of one valid shape) except cmp, xor / xors and part_*, and
    # pl.assemble writes that region only
    keeps = not (c.op.startswith('cmp') or c.op == 'xor' or c.op.startswith('part_')) and \
        (c.nin < 2 or uvalid(c) == (vr, vc))
    er, ec = (vr, vc) if c.form == 'tile' or keeps else (Rr, Cc)
    for i in range(er):
        for j in range(ec):
            k = i * Cc + j
            a = X[k]
            if c.special == 'sels':
                y = a if a > 0 else rnd(dt, c.scalar)
            elif c.special == 'sc':
                y = GOLD[c.op](dt, a, s, Y[k])
            elif c.op.startswith('part_'):
                inside = i < uvr and j < uvc
                y = GOLD[c.op](dt, a, Y[k], None) if inside else a
            elif c.op.startswith('cmp'):
                y = GOLD[c.op](dt, a, Y[k] if Y else s, None)
                y = rnd(dt, y)
            else:
                y = GOLD[c.op](dt, a, Y[k] if Y else s, Z[k] if Z else None)
            out[i * os_[1] + j] = y
    return out


def kinds_of(c, n):
    k = list(c.kinds) + ['sym'] * 3
    if c.op in ('recip', 'rsqrt', 'sin', 'cos', 'log', 'exp', 'sqrt', 'abs', 'neg'):
        return k[:n]
    if c.op in ('fmod', 'rem', 'div') and n > 1:
        k[1] = 'nz'
    if c.op == 'prelu':
        k = ['sym', 'sym', 'sym']
    if c.op in ('shl', 'shr') and c.dt in INTS and n > 1:
        k[1] = 'count'
    if c.dt in INTS and c.op in ('addc', 'subc', 'part_add', 'part_mul') and 'ties' not in k[:1]:
        k = ['sym'] * 3
    return k[:n]


CHUNK = 20


def run_chunk(pldrun, work, cases, lo, hi, inputs):
    prog = os.path.join(work, 'ops_elem_%d.pld' % (lo // CHUNK))
    with open(prog, 'w') as f:
        f.write(program(cases[lo:hi], lo))
    cmd = [pldrun, prog]
    for i in range(lo, hi):
        c = cases[i]
        rng = R.Rng(i * 7919 + 101)
        Rr, Cc, _, _ = GEOMS[c.geom]
        ins = []
        for n, kind in zip(['x', 'y', 'z'][:c.nin], kinds_of(c, c.nin)):
            v = gen(rng, c.dt, Rr * Cc, kind)
            p = os.path.join(work, '%s%d.npy' % (n, i))
            R.write_npy(p, c.dt, (Rr, Cc), v)
            cmd += ['--in', '%s%d=%s' % (n, i, p)]
            ins.append(v)
        cmd += ['--out', 'o%d=%s' % (i, os.path.join(work, 'o%d.npy' % i))]
        inputs[i] = ins
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
    if p.returncode != 0:
        sys.stdout.write(p.stdout.decode(errors='replace') + p.stderr.decode(errors='replace'))
        print('pldrun failed (exit %d) on %s' % (p.returncode, prog))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--keep', action='store_true')
    ap.add_argument('--filter', default=None)
    ap.add_argument('--sample', type=int, default=1, help='run a subset: every op once and every N-th case')
    T.add_max_failures(ap)
    args = ap.parse_args()
    work = args.workdir or os.path.join(os.getcwd(), 'ops_elem_work')
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = R.sample(build_cases(), args.sample)
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]
    inputs = [None] * len(cases)
    rc = 0
    ff = T.FailFast(args.max_failures, 'programs not run')
    for lo in ff.each(range(0, len(cases), CHUNK)):
        if run_chunk(args.pldrun, work, cases, lo, min(lo + CHUNK, len(cases)), inputs):
            rc = 1
            ff.fail()
    if ff.stopped:
        return 1
    passed = failed = 0
    ff = T.FailFast(args.max_failures, 'cases not checked')
    for i, c in ff.each(enumerate(cases)):
        if inputs[i] is None or not os.path.exists(os.path.join(work, 'o%d.npy' % i)):
            failed += 1
            ff.fail()
            print('FAIL %-44s k%d: no output' % (c.name, i))
            continue
        shape, got = R.read_npy(os.path.join(work, 'o%d.npy' % i), c.odt)
        want = expected(c, inputs[i])
        bad = [k for k in range(len(want)) if bits(c.odt, got[k]) != bits(c.odt, want[k])]
        if tuple(shape) != tuple(out_shape(c)) or bad:
            failed += 1
            ff.fail()
            k = bad[0] if bad else 0
            print('FAIL %-44s k%d: %d of %d elements differ; first [%d]: got %r, want %r' %
                  (c.name, i, len(bad), len(want), k, got[k], want[k]))
        else:
            passed += 1
    print('%d passed, %d failed (%d cases in %s)' % (passed, failed, len(cases), work))
    if not args.keep and not failed and not rc:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed or rc else 0


if __name__ == '__main__':
    sys.exit(main())
