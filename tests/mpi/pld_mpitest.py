"""pld_mpitest.py - helpers shared by the MPI integration runners in tests/mpi/
(run_golden.py, run_negative.py). Pure Python 3, no NumPy.

* a tiny .npy reader/writer (version 1.0, C order, little-endian; the dtypes
  the tier-0 programs use: float16, float32, int32, int64);
* IEEE rounding helpers (FP32 and FP16 round-to-nearest-even, through struct);
* a deterministic input generator;
* the MPI launch environment of shared/docs/platform.md section 2 (taken from
  scripts/mpi_env.sh when the repository has one) and a launcher for
  `mpirun -n P pldrun ...`.
* no silent holes: require_programs (a case whose program is missing is an
  error), FailFast and add_max_failures (a runner stops after --max-failures
  failed cases, default 3, with "stopped after N failures: M cases not run").
* the stderr checks of positive runs: unexpected_lines (one rule for every
  runner: Open MPI's own launcher notices, launcher_notice, are not pldrun
  diagnostics; every other matching line is reported by its text).
"""
import argparse
import ast
import os
import re
import struct
import subprocess
import sys
import time

# ---------------------------------------------------------------- dtypes

# dtype name -> (npy descr, struct code, item size)
DTYPES = {
    'FP16': ('<f2', 'e', 2),
    'FP32': ('<f4', 'f', 4),
    'INT32': ('<i4', 'i', 4),
    'INT64': ('<i8', 'q', 8),
}
DESCR_TO_DTYPE = {v[0]: k for k, v in DTYPES.items()}


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Tensor:
    """A host tensor: dtype, shape, flat row-major values."""

    def __init__(self, dtype, shape, values=None):
        self.dtype = dtype
        self.shape = tuple(shape)
        self.values = list(values) if values is not None else [0] * numel(shape)

    def idx(self, *ix):
        o = 0
        for d, i in zip(self.shape, ix):
            o = o * d + i
        return o

    def get(self, *ix):
        return self.values[self.idx(*ix)]

    def set(self, v, *ix):
        self.values[self.idx(*ix)] = v

    def row(self, *ix):
        """The innermost row at the leading indices ix (a list copy)."""
        n = self.shape[-1]
        o = self.idx(*(tuple(ix) + (0,)))
        return self.values[o:o + n]

    def set_row(self, vals, *ix):
        o = self.idx(*(tuple(ix) + (0,)))
        self.values[o:o + len(vals)] = list(vals)


def f32(x):
    """x rounded to IEEE binary32 (round to nearest even), as a Python float."""
    return struct.unpack('<f', struct.pack('<f', x))[0]


def f16(x):
    """x rounded to IEEE binary16 (round to nearest even), as a Python float.
    Values beyond the binary16 range become +-inf (as a conversion does)."""
    try:
        return struct.unpack('<e', struct.pack('<e', x))[0]
    except OverflowError:
        return float('inf') if x > 0 else float('-inf')


def i32(x):
    """Two's-complement INT32 wrap."""
    x &= 0xffffffff
    return x - (1 << 32) if x >= 1 << 31 else x


# The rank counts of the conformance table (tests/conformance/run_conformance.py):
# run_golden.py and run_coll.py leave the positive runs at these P to it
# (`--list --outside-conformance`).
CONFORMANCE_RANKS = (2, 3, 4)


# ---------------------------------------------------------------- .npy

MAGIC = b'\x93NUMPY'


def write_npy(path, dtype, shape, values, bits=False):
    """Writes a flat list of values as a C-order .npy (version 1.0); bits:
    the values are the raw bit patterns of FP16 / FP32 elements (NaN
    payloads survive)."""
    descr, code, _ = DTYPES[dtype]
    if bits:
        code = {'FP16': 'H', 'FP32': 'I'}[dtype]
    if len(values) != numel(shape):
        raise ValueError('%s: %d values for shape %r' % (path, len(values), shape))
    dims = '%d,' % shape[0] if len(shape) == 1 else ', '.join('%d' % d for d in shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + ' ' * (pad % 64) + '\n'
    with open(path, 'wb') as f:
        f.write(MAGIC + bytes([1, 0]) + struct.pack('<H', len(header)) + header.encode('latin1'))
        f.write(struct.pack('<%d%s' % (len(values), code), *values))


def read_npy(path):
    """Returns (dtype name, shape tuple, flat list of values)."""
    with open(path, 'rb') as f:
        raw = f.read()
    if raw[:6] != MAGIC:
        raise ValueError('%s: not a .npy file' % path)
    major = raw[6]
    if major == 1:
        (hlen,), off = struct.unpack('<H', raw[8:10]), 10
    else:
        (hlen,), off = struct.unpack('<I', raw[8:12]), 12
    hdr = ast.literal_eval(raw[off:off + hlen].decode('latin1'))
    if hdr['fortran_order']:
        raise ValueError('%s: Fortran order' % path)
    dtype = DESCR_TO_DTYPE.get(hdr['descr'])
    if dtype is None:
        raise ValueError('%s: unsupported descr %r' % (path, hdr['descr']))
    shape = tuple(hdr['shape'])
    _, code, size = DTYPES[dtype]
    data = raw[off + hlen:]
    n = numel(shape)
    if len(data) != n * size:
        raise ValueError('%s: %d data bytes for shape %r' % (path, len(data), shape))
    return dtype, shape, list(struct.unpack('<%d%s' % (n, code), data))


# ---------------------------------------------------------------- inputs

class Rng:
    """Deterministic generator (64-bit LCG, Knuth's MMIX constants); the
    values depend only on the seed."""

    def __init__(self, seed):
        self.s = (seed * 0x9E3779B97F4A7C15 + 1) & 0xffffffffffffffff

    def next(self):
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
        return self.s >> 11  # 53 bits

    def uniform(self, lo, hi):
        return lo + (hi - lo) * (self.next() / float(1 << 53))

    def randint(self, lo, hi):
        """Integer in [lo, hi]."""
        return lo + self.next() % (hi - lo + 1)


# ---------------------------------------------------------------- MPI

# shared/docs/platform.md section 2: the verified CI environment.
PLATFORM_ENV = {
    'OMPI_ALLOW_RUN_AS_ROOT': '1',
    'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1',
    'OMPI_MCA_rmaps_base_oversubscribe': '1',
    'OMPI_MCA_hwloc_base_binding_policy': 'none',
    'OMPI_MCA_mpi_yield_when_idle': '1',
    'OMPI_MCA_btl': 'self,vader',
    'OMPI_MCA_pml': 'ob1',
    'OMPI_MCA_osc': 'sm,rdma',
    'OMPI_MCA_oob_tcp_if_include': 'lo',
}


def mpi_env(repo_root):
    """The environment for mpirun: the current one plus scripts/mpi_env.sh
    (when the repository has it) or the platform.md defaults. Leak checking
    stays on: pldrun checks for its own leaks before MPI_Finalize and ignores
    Open MPI's (tools/pldrun/main.c, PLD_LEAK_CHECK)."""
    env = dict(os.environ)
    script = os.path.join(repo_root, 'scripts', 'mpi_env.sh')
    loaded = False
    if os.path.isfile(script):
        try:
            out = subprocess.run(['bash', '-c', 'set -a; . "$1" >/dev/null; env -0', 'mpi_env', script],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20, check=True).stdout
            for item in out.split(b'\0'):
                if b'=' in item:
                    k, v = item.split(b'=', 1)
                    env[k.decode()] = v.decode()
            loaded = True
        except (OSError, subprocess.SubprocessError):
            loaded = False
    if not loaded:
        for k, v in PLATFORM_ENV.items():
            env.setdefault(k, v)
    return env


def mpi_arg_parser(doc):
    """An argument parser with the launch options every MPI runner takes:
    --pldrun PATH (required), --mpiexec (mpirun), --numproc-flag (-n)."""
    ap = argparse.ArgumentParser(description=doc.split('\n')[0])
    ap.add_argument('--pldrun', required=True)
    ap.add_argument('--mpiexec', default='mpirun')
    ap.add_argument('--numproc-flag', default='-n')
    return ap


def lsan_tracer_crash(err):
    """True when a run failed only because LeakSanitizer's stop-the-world
    tracer crashed at exit ("Tracer caught signal 11 ... LeakSanitizer has
    encountered a fatal error"): a known intermittent failure of the sanitizer
    itself (google/sanitizers#1353), not a leak and not pldrun's. A leak report
    ("detected memory leaks") is never this."""
    return 'Tracer caught signal' in err and 'LeakSanitizer has encountered a fatal error' in err \
        and 'detected memory leaks' not in err


def run_pldrun(mpiexec, numproc_flag, nranks, pldrun, program, args, env, cwd, timeout=50):
    """Runs `MPIEXEC -n P PLDRUN PROGRAM ARGS...`; returns (rc, stdout, stderr).
    A run that failed only by LeakSanitizer's tracer crash (lsan_tracer_crash)
    runs again, at most twice, half a second apart, saying so on the runner's stderr
    (seen in the ASan tree's dump_* tests about once in four CI runs). When all three
    crashed (in one fresh-clone CI run dump_dump_seq and dump_seq_errors crashed five
    times in a row, and passed alone), the leak check cannot run here: the run is made
    once more without it (ASAN_OPTIONS detect_leaks=0), so pldrun's exit status and
    output are still judged, and the runner says on its stderr that this run had no
    leak check."""
    cmd = [mpiexec, numproc_flag, str(nranks), pldrun, program] + list(args)
    for attempt in range(4):
        if attempt:
            time.sleep(0.5)
        run_env = env
        if attempt == 3:
            run_env = dict(env if env is not None else os.environ)
            run_env['ASAN_OPTIONS'] = ':'.join(x for x in (run_env.get('ASAN_OPTIONS', ''), 'detect_leaks=0') if x)
            sys.stderr.write('(LeakSanitizer\'s tracer crashed in 3 runs of %s: run once more WITHOUT the leak '
                             'check, judged by its exit status and output only)\n' % os.path.basename(program))
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                               env=run_env, cwd=cwd, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return 124, (e.stdout or b'').decode(errors='replace'), \
                (e.stderr or b'').decode(errors='replace') + '\n(timed out after %d s)' % timeout
        out, err = p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')
        if p.returncode == 0 or not lsan_tracer_crash(err) or attempt == 3:
            return p.returncode, out, err
        sys.stderr.write('(run %d of %s ended by LeakSanitizer\'s tracer crash, not by pldrun: run again)\n'
                         % (attempt + 1, os.path.basename(program)))


def mpirun_launch(args):
    """The launch the runners' run_case use unless told otherwise: `MPIEXEC
    -n P PLDRUN PROGRAM CLI...` on this host (args.mpiexec, args.numproc_flag,
    args.pldrun). A launch is called as launch(P, program, cli, env, cwd,
    timeout) and returns (rc, stdout, stderr); tests/mpi/run_multinode.py
    passes one that runs the same command across emulated hosts,
    tests/mpi/pld_batch.py one that gathers runs into pldrun batches."""
    def launch(P, prog, cli, env, cwd, timeout):
        return run_pldrun(args.mpiexec, args.numproc_flag, P, args.pldrun, prog, cli, env, cwd, timeout=timeout)
    return launch


def print_failure(title, problems, command, err):
    """Prints a failed run: `FAIL: title`, its problems, the command and the
    first 40 lines of its stderr."""
    print('FAIL: ' + title)
    for p in problems:
        print('    ' + p)
    print('    command: ' + command)
    if err.strip():
        print('    stderr:\n' + '\n'.join('      ' + l for l in err.strip().splitlines()[:40]))


# ---------------------------------------------------------------- no silent holes

def require_programs(runner, programs):
    """A missing program is an error, never a case skipped in silence: programs
    is an iterable of (case, path). When any path is not a file, prints one
    line per such case to stderr ("RUNNER: case CASE: program PATH does not
    exist") and exits with status 2 -- at `--list` time (configure fails:
    tests/runner_list.cmake) and at run time alike."""
    missing = [(case, path) for case, path in programs if not os.path.isfile(path)]
    for case, path in missing:
        print('%s: case %s: program %s does not exist' % (runner, case, path), file=sys.stderr)
    if missing:
        sys.exit(2)


# ---------------------------------------------------------------- fail fast

MAX_FAILURES = 3  # the default of --max-failures


def add_max_failures(ap):
    """Adds --max-failures N to an argument parser: stop after N failed cases
    (default MAX_FAILURES; 0: no limit)."""
    ap.add_argument('--max-failures', type=int, default=MAX_FAILURES, metavar='N',
                    help='stop after N failed cases (default %(default)s; 0: run every case)')
    return ap


class StopRun(Exception):
    """Raised by FailFast.fail(..., raise_at_limit=True) when the limit is reached."""


class FailFast:
    """The failure limit of a runner that runs many cases in one CTest test
    (--max-failures): a tree that fails everywhere stops after a few failures
    instead of running every case into its timeout.

        ff = FailFast(args.max_failures)
        for case in ff.each(cases):       # stops once ff.failed reaches the limit
            ...
            if problems:
                ff.fail()

    When it stops, each() prints "stopped after N failures: M cases not run"
    (what: the words after M) and sets ff.stopped; the runner exits 1 as it
    does on any failure. fail() with raise_at_limit=True raises StopRun at the
    limit instead (for runners whose failures are counted deep inside a case);
    the runner catches it and calls stop(M). limit 0: no limit."""

    def __init__(self, limit=MAX_FAILURES, what='cases not run'):
        self.limit, self.what = limit, what
        self.failed = 0
        self.stopped = False

    def exhausted(self):
        return self.limit > 0 and self.failed >= self.limit

    def fail(self, n=1, raise_at_limit=False):
        self.failed += n
        if raise_at_limit and self.exhausted():
            raise StopRun()

    def stop(self, not_run, what=None):
        """Prints the stop line (M = not_run; None: a runner that cannot count what is left says so in what)
        and marks the run stopped."""
        self.stopped = True
        if not_run is None:
            print('stopped after %d failures: %s' % (self.failed, what or self.what))
        else:
            print('stopped after %d failures: %d %s' % (self.failed, not_run, what or self.what))
        sys.stdout.flush()

    def each(self, items, what=None):
        """Yields the items in order until the limit is reached."""
        items = list(items)
        for i, item in enumerate(items):
            if self.exhausted():
                self.stop(len(items) - i, what)
                return
            yield item


def locate(path, marker, nth=1):
    """1-based (line, col) of the nth occurrence of marker in the file (no
    tabs expected)."""
    with open(path) as f:
        text = f.read()
    at = -1
    for _ in range(nth):
        at = text.find(marker, at + 1)
        if at < 0:
            raise ValueError('%s: marker %r not found' % (path, marker))
    line = text.count('\n', 0, at) + 1
    col = at - (text.rfind('\n', 0, at) + 1) + 1
    return line, col


# ---------------------------------------------------------------- stderr of positive runs

# Open MPI's own launcher notices that a run's stderr may carry besides pldrun's
# output: (name, regex of the whole line after an optional "[host:pid] " prefix,
# which opal_output puts before them). Each is harmless for the run and cannot be
# configured away; each pattern is a whole Open MPI message, so that no line of
# pldrun ("[rank r/P] ...", "pldrun: ...", "FILE:LINE:COL: warning: ...") can
# match one. Checked against Open MPI 4.1.4 (mca_plm_rsh.so's format strings).
LAUNCHER_NOTICES = (
    # mpirun's rsh launcher (orte/mca/plm/rsh; plm:ssh in Open MPI 5) puts the
    # agent child of each remote daemon in its own process group from both sides:
    # the child calls setpgid(0, 0), then the parent setpgid(pid, pid). When the
    # child has exec'd its agent first (a loaded machine: scripts/mpx-ci.sh's ssh
    # stand-in), the parent's call fails with EACCES and Open MPI prints this and
    # carries on ("the child is off and running"); no MCA parameter avoids it. The
    # child's own failure ("Error: setpgid(0,0) failed in child") is not excused.
    ('rsh launcher setpgid race',
     re.compile(r'plm:(?:rsh|ssh): Warning: setpgid\(\d+,\d+\) failed in parent with errno=[A-Za-z ]+\(\d+\)')),
    # the rsh launcher did not recognise the login shell of the user and builds
    # the remote command in bash syntax, which is what the ssh stand-in runs (sh)
    ('rsh launcher shell probe', re.compile(r'WARNING: local probe returned unhandled shell:\S+ assuming bash')),
)
_OMPI_PREFIX = re.compile(r'\[[A-Za-z0-9._-]+:\d+\] ')
_PLDRUN_LINE = re.compile(r'^\[rank \d+/\d+\]|pldrun|:\d+:\d+: ')


def launcher_notice(line):
    """The name of the Open MPI launcher notice (LAUNCHER_NOTICES) that line
    is, or None. A line that looks like pldrun's (a "[rank r/P]" prefix, the
    word pldrun, a FILE:LINE:COL: location) is never one."""
    line = line.rstrip('\r\n')
    if _PLDRUN_LINE.search(line):
        return None
    m = _OMPI_PREFIX.match(line)
    body = line[m.end():] if m else line
    for name, pattern in LAUNCHER_NOTICES:
        if pattern.fullmatch(body):
            return name
    return None


def unexpected_lines(err, pattern, allowed=None):
    """The lines of a positive run's stderr that fail its check: those that
    match pattern (a regular expression searched in each line; each runner
    keeps its own, e.g. 'error|warning'), except Open MPI launcher notices
    (launcher_notice) and lines that contain allowed (a case's expected
    warning, when given). Runners report the first one by its text."""
    rx = re.compile(pattern)
    return [line for line in err.splitlines()
            if rx.search(line) and not launcher_notice(line) and not (allowed and allowed in line)]
