"""numpy_runner.py - what the numpy-checked runners of tests/ops share (run_autol0.py, run_narrow.py,
run_ragged.py, run_dispatch.py): numpy or a clear exit naming the package, the list of failures, the
command line (--pldrun PATH [--workdir DIR]), one pldrun run, and the closing line."""
import argparse
import os
import subprocess
import sys


def numpy_or_exit(runner):
    """numpy, or exit saying what to install (a failure, never a skip)"""
    try:
        import numpy
    except ImportError:
        sys.exit('%s: %s lacks numpy: apt-get install python3-numpy (scripts/install_deps.sh)'
                 % (runner, sys.executable))
    return numpy


class Checks:
    """The failures of one run: need(cond, what) records and prints `what` when cond is false."""

    def __init__(self):
        self.fails = []

    def need(self, cond, what):
        if not cond:
            self.fails.append(what)
            print('FAIL: ' + what, file=sys.stderr)
        return cond

    def result(self, runner):
        """prints the closing line; the exit status (1 when anything failed)"""
        print('%s: %s' % (runner, '%d failure(s)' % len(self.fails) if self.fails else 'all cases passed'))
        return 1 if self.fails else 0


def args(default_workdir):
    """--pldrun PATH [--workdir DIR], the work directory created"""
    ap = argparse.ArgumentParser()
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--workdir', default=default_workdir)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    return a


def pldrun(a, prog, ins, outs):
    """one pldrun run of prog at one rank (no mpirun) with --in / --out (name, path) pairs: (status, stderr)"""
    cmd = [a.pldrun, prog]
    for name, path in ins:
        cmd += ['--in', '%s=%s' % (name, path)]
    for name, path in outs:
        cmd += ['--out', '%s=%s' % (name, path)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stderr.decode(errors='replace')


def bf16_bits(x):
    """float32 array -> bfloat16 bits (uint16), round to nearest even (finite values)"""
    np = numpy_or_exit('numpy_runner.py')
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    """bfloat16 bits (uint16) -> their float32 values"""
    np = numpy_or_exit('numpy_runner.py')
    return (bits.astype(np.uint32) << 16).view(np.float32)
