#!/usr/bin/env python3
"""bench/run_bench_native_mem.py [BUILD_DIR] - peak memory of a kernel loop of
pl.tensor.* ops on sim and on native (issue 39; a benchmark, not a test: the
test is tests/native/run_native.py part `memory`). Results and method:
docs/benchmarks-native.md, "Memory of tensor ops in a kernel loop".

bench/native_tensor_loop.pld: an InCore kernel looping n times over eight
pl.tensor.* ops on [64, 128] FP32 tensors (32 KiB each). Each run is pldrun
started without mpirun (a singleton, as bench/run_bench_interp.sh does); its
peak RSS is the ru_maxrss wait4 reports for it. native runs on a cache one
untimed run filled first, so that the compiler's memory is not counted.
n = 2,000 and 20,000; RUNS rounds (default 3) of sim and native one after
the other; the medians are printed. The outputs of sim and native must agree
bit for bit.

Target: native's peak RSS at 20,000 iterations <= 1.2 x sim's.
Exit status: 0 the target is met and the outputs agree; 1 otherwise.
"""
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = os.path.join(ROOT, 'bench', 'native_tensor_loop.pld')


def npy_i64(path, v):
    hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
    hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
    with open(path, 'wb') as f:
        f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<q', v))


def run(pldrun, backend, nfile, out, env):
    """one run: (seconds, peak RSS KiB)"""
    cmd = [pldrun, PROG, '--backend', backend, '--in', 'x=random:3', '--in', 'v=random:4', '--in', 'n=' + nfile,
           '--out', 'out=' + out]
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        dt = time.monotonic() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            log.seek(0)
            sys.stderr.write(log.read().decode(errors='replace'))
            sys.exit('run_bench_native_mem.py: %s on %s failed' % (os.path.basename(PROG), backend))
    return dt, ru.ru_maxrss


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build')
    pldrun = os.path.join(build, 'pldrun')
    runs = int(os.environ.get('RUNS', '3'))
    if not os.access(pldrun, os.X_OK):
        sys.exit('run_bench_native_mem.py: %s missing (build %s first)' % (pldrun, build))
    tmp = tempfile.mkdtemp(prefix='pld_bench_mem_')
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, 'cache'))
    try:
        ns = (2000, 20000)
        for n in (1,) + ns:
            npy_i64(os.path.join(tmp, 'n%d.npy' % n), n)
        run(pldrun, 'native', os.path.join(tmp, 'n1.npy'), os.path.join(tmp, 'warm.npy'), env)  # fills the cache
        res = {}
        for _ in range(runs):
            for n in ns:
                for b in ('sim', 'native'):
                    out = os.path.join(tmp, 'out_%s_%d.npy' % (b, n))
                    res.setdefault((b, n), []).append(run(pldrun, b, os.path.join(tmp, 'n%d.npy' % n), out, env))
        ok = True
        for n in ns:
            a = open(os.path.join(tmp, 'out_sim_%d.npy' % n), 'rb').read()
            if a != open(os.path.join(tmp, 'out_native_%d.npy' % n), 'rb').read():
                print('FAIL: the outputs of sim and native differ at n = %d' % n)
                ok = False
        print('| iterations | sim peak RSS | native peak RSS | native / sim | sim time | native time |')
        print('| ---: | ---: | ---: | ---: | ---: | ---: |')
        for n in ns:
            ms = statistics.median(r[1] for r in res[('sim', n)]) / 1024
            mn = statistics.median(r[1] for r in res[('native', n)]) / 1024
            ts = statistics.median(r[0] for r in res[('sim', n)])
            tn = statistics.median(r[0] for r in res[('native', n)])
            print('| %d | %.1f MiB | %.1f MiB | %.2f | %.2f s | %.2f s |' % (n, ms, mn, mn / ms, ts, tn))
            if n == ns[-1] and mn > 1.2 * ms:
                print('FAIL: native peak RSS %.1f MiB > 1.2 x sim\'s %.1f MiB' % (mn, ms))
                ok = False
        print('target (native <= 1.2 x sim at %d iterations, same bytes): %s' % (ns[-1], 'met' if ok else 'MISSED'))
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
