#!/usr/bin/env python3
"""npy_check.py - cross-checks pldrun's .npy I/O against an independent,
pure-Python (no NumPy) implementation of the format.

    python3 npy_check.py TEST_NPY_EXE WORKDIR
    python3 npy_check.py --seeds DIR     (only writes the Python-made files of
                                          step 2: the fuzz seeds in
                                          tests/fuzz/npy_seeds/ come from it)

1. Runs `TEST_NPY_EXE --write-samples WORKDIR/c`: pldrun writes arange and
   random:7 arrays for every dtype it supports. Each file is parsed here with a
   strict reader (magic, version 1.0, header length, 64-byte alignment, the
   header dict via ast.literal_eval as NumPy does, exact data length) and its
   values are compared with Python's own arange / random:7 (gen_random_golden).
2. Writes files with struct into WORKDIR/py (versions 1.0, 2.0, 3.0, shuffled
   keys, 16-byte alignment, '<V2' bfloat16, ...) with a NAME.npy.expect file
   each, then runs `TEST_NPY_EXE --check-samples WORKDIR/py`, where pldrun
   reads them and compares with its own generators (or the expected error).

Exit status 0 when everything agrees.
"""
import ast
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_random_golden as golden  # noqa: E402

MAGIC = b'\x93NUMPY'

# dtype name -> (descr pldrun writes, struct code of one element's storage)
DESCR = {
    'BOOL': ('|b1', 'B'), 'INT8': ('|i1', 'b'), 'INT16': ('<i2', 'h'), 'INT32': ('<i4', 'i'),
    'INT64': ('<i8', 'q'), 'INDEX': ('<i8', 'q'), 'UINT8': ('|u1', 'B'), 'UINT16': ('<u2', 'H'),
    'UINT32': ('<u4', 'I'), 'UINT64': ('<u8', 'Q'), 'FP16': ('<f2', 'H'), 'BF16': ('|V2', 'H'),
    'FP32': ('<f4', 'I'), 'FP64': ('<f8', 'Q'),
}
FLOAT_BITS = {'FP16': golden.f16_bits, 'BF16': golden.bf16_bits, 'FP32': golden.f32_bits}

failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg)


def parse_npy(path):
    """Strict .npy parser; returns (descr, fortran_order, shape, data bytes)."""
    with open(path, 'rb') as f:
        raw = f.read()
    if raw[:6] != MAGIC:
        raise ValueError('bad magic')
    major, minor = raw[6], raw[7]
    if (major, minor) == (1, 0):
        (hlen,), off = struct.unpack('<H', raw[8:10]), 10
    elif (major, minor) in ((2, 0), (3, 0)):
        (hlen,), off = struct.unpack('<I', raw[8:12]), 12
    else:
        raise ValueError('version %d.%d' % (major, minor))
    header = raw[off:off + hlen]
    if len(header) != hlen:
        raise ValueError('truncated header')
    if (off + hlen) % 64 != 0:
        raise ValueError('data offset %d is not a multiple of 64' % (off + hlen))
    if not header.endswith(b'\n'):
        raise ValueError('header does not end with a newline')
    d = ast.literal_eval(header.decode('latin1' if major < 3 else 'utf8'))
    if not isinstance(d, dict) or sorted(d) != ['descr', 'fortran_order', 'shape']:
        raise ValueError('header keys: %r' % (d,))
    if not isinstance(d['shape'], tuple) or not all(isinstance(x, int) and x >= 0 for x in d['shape']):
        raise ValueError('shape: %r' % (d['shape'],))
    return d['descr'], d['fortran_order'], d['shape'], raw[off + hlen:]


def numel(shape):
    n = 1
    for x in shape:
        n *= x
    return n


def arange_value(dt, i):
    if dt in FLOAT_BITS:
        return FLOAT_BITS[dt](float(struct.unpack('<f', struct.pack('<f', float(i)))[0]))
    if dt == 'FP64':
        return golden.f64_bits(float(i))
    if dt == 'BOOL':
        return i & 1
    bits = golden.INT_BITS.get(dt) or golden.UINT_BITS[dt]
    v = i & ((1 << bits) - 1)
    if dt in golden.INT_BITS and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def expected_values(dt, gen, n):
    if gen == 'arange':
        return [arange_value(dt, i) for i in range(n)]
    if gen.startswith('random:'):
        return golden.random_values(dt, int(gen[7:]), n)
    raise ValueError(gen)


def pack_values(dt, vals):
    return struct.pack('<%d%s' % (len(vals), DESCR[dt][1]), *vals)


def check_c_files(exe, cdir):
    os.makedirs(cdir, exist_ok=True)
    r = subprocess.run([exe, '--write-samples', cdir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode != 0:
        fail('%s --write-samples failed (%d):\n%s' % (exe, r.returncode, r.stdout))
        return
    count = 0
    for name in sorted(os.listdir(cdir)):
        if not name.endswith('.npy'):
            continue
        # NAME = GEN_DTYPE.npy with GEN 'arange' or 'random7'
        gen_tag, dt = name[:-4].split('_', 1)
        gen = 'arange' if gen_tag == 'arange' else 'random:7'
        path = os.path.join(cdir, name)
        try:
            descr, fortran, shape, data = parse_npy(path)
        except (ValueError, SyntaxError, struct.error) as e:
            fail('%s: %s' % (name, e))
            continue
        if descr != DESCR[dt][0] or fortran is not False:
            fail('%s: descr %r fortran_order %r, expected %r False' % (name, descr, fortran, DESCR[dt][0]))
            continue
        n = numel(shape)
        want = pack_values(dt, expected_values(dt, gen, n))
        if data != want:
            bad = next(i for i in range(min(len(data), len(want))) if data[i] != want[i]) \
                if len(data) == len(want) else -1
            fail('%s: data differs from Python %s (len %d vs %d, first differing byte %d)'
                 % (name, gen, len(data), len(want), bad))
            continue
        count += 1
    print('checked %d files written by pldrun' % count)
    if count < 2 * len(DESCR):
        fail('expected at least %d sample files, found %d' % (2 * len(DESCR), count))


def npy_image(descr, shape, data, version=(1, 0), order=('descr', 'fortran_order', 'shape'),
              align=64, fortran='False', quote="'", trailing_comma=True, newline=True):
    """A .npy image built by hand, independently of pldrun's writer."""
    if len(shape) == 1:
        st = '(%d,)' % shape[0]
    else:
        st = '(' + ', '.join(str(x) for x in shape) + ')'
    vals = {'descr': quote + descr + quote, 'fortran_order': fortran, 'shape': st}
    text = '{' + ', '.join('%s%s%s: %s' % (quote, k, quote, vals[k]) for k in order)
    text += (', }' if trailing_comma else '}')
    pre = 10 if version == (1, 0) else 12
    total = pre + len(text) + (1 if newline else 0)
    pad = (-total) % align
    text += ' ' * pad + ('\n' if newline else '')
    hb = text.encode('latin1' if version[0] < 3 else 'utf8')
    lenf = struct.pack('<H', len(hb)) if version == (1, 0) else struct.pack('<I', len(hb))
    return MAGIC + bytes(version) + lenf + hb + data


def write_py_files(pydir, with_expect=True):
    os.makedirs(pydir, exist_ok=True)
    cases = []  # (file name, bytes, expect line)
    shapes = [(), (6,), (2, 3), (2, 1, 3), (1, 2, 2, 2)]
    for k, dt in enumerate(sorted(DESCR)):
        if dt == 'INDEX':
            continue
        shape = shapes[k % len(shapes)]
        data = pack_values(dt, expected_values(dt, 'arange', numel(shape)))
        expect = '%s arange %d %s' % (dt, len(shape), ' '.join(str(x) for x in shape))
        version = [(1, 0), (2, 0), (3, 0)][k % 3]
        order = [('descr', 'fortran_order', 'shape'), ('shape', 'descr', 'fortran_order'),
                 ('fortran_order', 'shape', 'descr')][k % 3]
        cases.append(('v%d_%s.npy' % (version[0], dt),
                      npy_image(DESCR[dt][0], shape, data, version, order, align=[64, 16, 1][k % 3],
                                quote="'\""[k % 2], trailing_comma=k % 2 == 0, newline=k % 4 != 3), expect))
    n = 7
    bf = pack_values('BF16', expected_values('BF16', 'random:7', n))
    cases.append(('mldtypes_bf16.npy', npy_image('<V2', (n,), bf), 'BF16 random:7 1 %d' % n))
    f32 = pack_values('FP32', expected_values('FP32', 'random:7', 12))
    cases.append(('random_fp32.npy', npy_image('<f4', (3, 4), f32, (3, 0)), 'FP32 random:7 2 3 4'))
    cases.append(('err_bigendian.npy', npy_image('>f4', (3, 4), f32), 'error big-endian dtype'))
    cases.append(('err_fortran.npy', npy_image('<f4', (3, 4), f32, fortran='True'),
                  'error Fortran-order arrays are not supported; save with np.ascontiguousarray'))
    cases.append(('err_truncated.npy', npy_image('<f4', (3, 4), f32[:-1]), 'error truncated data'))
    cases.append(('err_trailing.npy', npy_image('<f4', (3, 4), f32 + b'\0'), 'error trailing bytes'))
    cases.append(('err_complex.npy', npy_image('<c8', (3, 2), f32), "error unsupported dtype '<c8' (complex)"))
    for name, img, line in cases:
        with open(os.path.join(pydir, name), 'wb') as f:
            f.write(img)
        if with_expect:
            with open(os.path.join(pydir, name + '.expect'), 'w') as f:
                f.write(line + '\n')
    return len(cases)


def check_py_files(exe, pydir):
    n = write_py_files(pydir)
    r = subprocess.run([exe, '--check-samples', pydir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        fail('%s --check-samples rejected Python-written files (%d)' % (exe, r.returncode))
    elif 'checked %d files' % n not in r.stdout:
        fail('%s --check-samples did not check all %d files' % (exe, n))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 64
    if sys.argv[1] == '--seeds':
        print('wrote %d files' % write_py_files(sys.argv[2], with_expect=False))
        return 0
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    check_c_files(exe, os.path.join(work, 'c'))
    check_py_files(exe, os.path.join(work, 'py'))
    if failures:
        print('%d failure(s)' % len(failures))
        return 1
    print('npy_check: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
