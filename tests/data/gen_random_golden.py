#!/usr/bin/env python3
"""gen_random_golden.py - reference implementation of pldrun's random:SEED
input generator (docs/npy.md), in pure Python (no NumPy).

Run it to print the first values of random:7 for each dtype as C literals;
test_npy.c pins those literals (test_npy_generate_random_golden). npy_check.py
imports it to cross-check whole files written by pldrun.

    python3 tests/data/gen_random_golden.py [SEED] [COUNT]
"""
import struct
import sys

MASK64 = (1 << 64) - 1


def splitmix64(seed):
    """Yields the splitmix64 stream for a 64-bit seed."""
    state = seed & MASK64
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def f32_bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def f16_bits(x):
    """float -> IEEE half bits; struct's 'e' rounds to nearest, ties to even."""
    try:
        return struct.unpack('<H', struct.pack('<e', x))[0]
    except OverflowError:
        return 0x7C00 if x > 0 else 0xFC00


def bf16_bits(x):
    """float32 value -> bfloat16 bits, round to nearest, ties to even."""
    b = f32_bits(x)
    upper, lower = b >> 16, b & 0xFFFF
    if lower > 0x8000 or (lower == 0x8000 and (upper & 1)):
        upper += 1
    return upper & 0xFFFF


def f64_bits(x):
    return struct.unpack('<Q', struct.pack('<d', x))[0]


INT_BITS = {'INT8': 8, 'INT16': 16, 'INT32': 32, 'INT64': 64, 'INDEX': 64}
UINT_BITS = {'UINT8': 8, 'UINT16': 16, 'UINT32': 32, 'UINT64': 64}


def random_value(dtype, z):
    """One element of random:SEED from one splitmix64 output z. Floats are
    returned as their storage bit pattern, integers as Python ints."""
    if dtype in ('FP32', 'FP16', 'BF16'):
        k = (z >> 40) - (1 << 23)          # top 24 bits, centred
        v = k / float(1 << 23)             # exact: k * 2^-23 in [-1, 1)
        return {'FP32': f32_bits, 'FP16': f16_bits, 'BF16': bf16_bits}[dtype](v)
    if dtype == 'FP64':
        k = (z >> 11) - (1 << 52)          # top 53 bits, centred
        return f64_bits(k / float(1 << 52))
    if dtype == 'BOOL':
        return z >> 63
    if dtype in UINT_BITS:
        return z >> 60
    if dtype in INT_BITS:
        return (((z >> 32) * 17) >> 32) - 8
    raise ValueError(dtype)


def random_values(dtype, seed, count):
    g = splitmix64(seed)
    return [random_value(dtype, next(g)) for _ in range(count)]


DTYPES = ['BOOL', 'INT8', 'INT16', 'INT32', 'INT64', 'INDEX', 'UINT8', 'UINT16', 'UINT32', 'UINT64',
          'FP16', 'BF16', 'FP32', 'FP64']


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    g = splitmix64(seed)
    raw = [next(g) for _ in range(count)]
    print('/* splitmix64(%d) */' % seed)
    print('static const uint64_t golden_raw[%d] = {%s};' % (count, ', '.join('0x%016XULL' % v for v in raw)))
    for dt in DTYPES:
        vals = random_values(dt, seed, count)
        if dt in ('FP16', 'BF16'):
            body = ', '.join('0x%04X' % v for v in vals)
            ctype = 'uint16_t'
        elif dt == 'FP32':
            body = ', '.join('0x%08XU' % v for v in vals)
            ctype = 'uint32_t'
        elif dt == 'FP64':
            body = ', '.join('0x%016XULL' % v for v in vals)
            ctype = 'uint64_t'
        else:
            body = ', '.join(str(v) for v in vals)
            ctype = 'int64_t'
        print('static const %s golden_%s[%d] = {%s};' % (ctype, dt.lower(), count, body))
    # Human-readable floats, for docs/npy.md.
    print('/* FP32 values: %s */' % ', '.join(
        repr(struct.unpack('<f', struct.pack('<I', b))[0]) for b in random_values('FP32', seed, count)))


if __name__ == '__main__':
    main()
