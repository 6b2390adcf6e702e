"""pldrun from Python: run a PyPTO program on a CPU mesh and get its outputs back.

    import numpy as np, pldrun
    xs = np.arange(4 * 192, dtype=np.float32).reshape(4, 1, 192)
    out = pldrun.run("programs/host/allreduce_ring.pld", {"xs": xs}, ranks=4)
    out["outs"]                      # numpy array, every rank's row = sum of xs

`program` is IR text (PyPTO's printed `as_python()` form or the DSL), a path
to a .pld file, or any object with `as_python()` (a PyPTO Program). `inputs`
maps entry parameter names to numpy arrays, torch tensors (when torch is
importable) or Python/numpy scalars. The run is `mpirun -n RANKS pldrun ...`
in the MPI environment of scripts/mpi_env.sh; a non-zero exit raises RunError
with pldrun's diagnostics (the hang report, the located runtime error) and the
exit status. docs/python.md is the manual. Dependencies: the standard library
and numpy (Debian python3-numpy); torch (python3-torch) only when passed in.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

import numpy as np

__all__ = ['run', 'signature', 'RunError', 'Result', 'find_pldrun', 'mpi_env', 'findings_of', 'bf16_to_f32',
           'f32_to_bf16']

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.normpath(os.path.join(_HERE, '..', '..'))

# pldrun dtype names -> numpy dtypes (.npy descr as docs/npy.md lists them); BF16 travels as '|V2' raw bits
_NP = {
    'BOOL': np.bool_, 'INT8': np.int8, 'INT16': np.int16, 'INT32': np.int32, 'INT64': np.int64, 'INDEX': np.int64,
    'UINT8': np.uint8, 'UINT16': np.uint16, 'UINT32': np.uint32, 'UINT64': np.uint64, 'FP16': np.float16,
    'FP32': np.float32, 'FP64': np.float64,
    # 8-bit floats: their raw bits as uint8 (docs/npy.md)
    'FP8E4M3FN': np.uint8, 'FP8E5M2': np.uint8, 'FP8E8M0': np.uint8, 'HF8': np.uint8,
}


class RunError(Exception):
    """pldrun exited with a non-zero status. `returncode` is its exit status
    (64 usage, 65 program error, 69 unavailable, 70 runtime error or hang,
    74 I/O error; 124 when `run_timeout` killed the job); `diagnostics` is
    what pldrun wrote to stderr (every rank's located errors, the hang
    report), `stdout` the rest; `command` the command line."""

    def __init__(self, message, returncode, diagnostics='', stdout='', command=()):
        super().__init__(message)
        self.returncode = returncode
        self.diagnostics = diagnostics
        self.stdout = stdout
        self.command = list(command)
        self.records = []


class Result(dict):
    """The outputs by parameter name (numpy arrays; BF16 outputs as float32
    unless bf16='bits'), plus what the run said: `findings` (the race and
    poison reports of --check-races / --poison, one string each), `records`
    (the same findings as pldrun's --findings log gives them: its SARIF
    results, dicts whose `properties` hold kind, window or tile, owner, bytes
    and `sides`: rank, block, op, access, file, line, col), `summary`
    (pldrun's closing line), `stdout`, `stderr`, `command`; with dispatch_inputs, `per_dispatch`
    (one {name: array} per dispatch)."""

    findings = ()
    records = ()
    per_dispatch = ()
    summary = ''
    stdout = ''
    stderr = ''
    command = ()


# ---------------------------------------------------------------- where things are


def find_pldrun(path=None):
    """The pldrun binary: `path`, else $PLDRUN, else this checkout's build/pldrun, else pldrun on PATH."""
    for cand in (path, os.environ.get('PLDRUN'), os.path.join(_REPO, 'build', 'pldrun'), shutil.which('pldrun')):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.abspath(cand)
    raise RunError('pldrun not found: build it (README.md), or pass pldrun=PATH or set $PLDRUN', 69)


def mpi_env(path=None):
    """The variables scripts/mpi_env.sh exports (root, oversubscription, shared-memory transports), read
    from that file so that there is one list; {} when it is not found (an installed pldrun without the
    checkout: the caller's environment is used as it is)."""
    path = path or os.path.join(_REPO, 'scripts', 'mpi_env.sh')
    env = {}
    if not os.path.isfile(path):
        return env
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line.startswith('export '):
                for item in line[len('export '):].split():
                    if '=' in item:
                        k, v = item.split('=', 1)
                        env[k] = v
    return env


# ---------------------------------------------------------------- values


def f32_to_bf16(x):
    """float32 array -> bfloat16 bits (uint16), round to nearest even; NaN stays NaN."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r


def bf16_to_f32(bits):
    """bfloat16 bits (uint16 or '|V2' records) -> float32 (exact)."""
    b = np.ascontiguousarray(bits)
    if b.dtype.kind == 'V':
        b = b.view(np.uint16)
    return (b.astype(np.uint32) << 16).view(np.float32)


def _torch():
    try:
        import torch  # noqa: PLC0415 (optional)
        return torch
    except ImportError:
        return None


def _is_torch(x):
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def _to_numpy(name, value, param):
    """The array pldrun reads for parameter `param` (from --signature) from a numpy array, torch
    tensor or scalar; BF16 as '|V2' records."""
    dt = param['dtype']
    if _is_torch(value):
        torch = _torch()
        v = value.detach().cpu().contiguous()
        if v.dtype == torch.bfloat16:
            return v.view(torch.int16).numpy().view(np.uint16).view('V2')
        value = v.numpy()
    if param['kind'] == 'scalar' or np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0
                                                           and param['kind'] == 'scalar'):
        if dt not in _NP:
            raise RunError('input %r: a scalar of dtype %s cannot be passed' % (name, dt), 64)
        return np.array(value, dtype=_NP[dt])
    a = np.asarray(value)
    if dt == 'BF16':
        if a.dtype.kind == 'V' and a.dtype.itemsize == 2:
            return np.ascontiguousarray(a)
        if a.dtype == np.uint16 or a.dtype == np.int16:   # already bits
            return np.ascontiguousarray(a).view(np.uint16).view('V2')
        if a.dtype.name == 'bfloat16':                    # ml_dtypes
            return np.ascontiguousarray(a).view(np.uint16).view('V2')
        return f32_to_bf16(a.astype(np.float32)).view('V2')  # floats: rounded to BF16 here
    return np.ascontiguousarray(a)


def _from_npy(path, dt, bf16):
    a = np.load(path)
    if dt == 'BF16' and bf16 != 'bits':
        return bf16_to_f32(a)
    if dt == 'BF16':
        return a.view(np.uint16)
    return a


def _copy_into(target, arr, dt):
    """Fills a caller's output in place (torch tensor or numpy array)."""
    if _is_torch(target):
        torch = _torch()
        if target.dtype == torch.bfloat16:
            bits = arr if arr.dtype == np.uint16 else f32_to_bf16(arr)
            src = torch.from_numpy(np.ascontiguousarray(bits).view(np.int16)).view(torch.bfloat16)
        else:
            src = torch.from_numpy(np.ascontiguousarray(arr))
        with torch.no_grad():
            target.copy_(src.reshape(target.shape))
    elif isinstance(target, np.ndarray):
        if dt == 'BF16' and target.dtype == np.uint16:
            arr = f32_to_bf16(arr) if arr.dtype != np.uint16 else arr
        target[...] = np.asarray(arr).reshape(target.shape)
    else:
        raise RunError('output target of type %s cannot be filled in place (a numpy array or a torch tensor)'
                       % type(target).__name__, 64)


# ---------------------------------------------------------------- the run


def _program_file(program, workdir):
    if hasattr(program, 'as_python'):
        program = program.as_python()
    if not isinstance(program, (str, os.PathLike)):
        raise RunError('program must be IR text, a path, or an object with as_python(); got %s'
                       % type(program).__name__, 64)
    program = os.fspath(program)
    if '\n' not in program and os.path.isfile(program):
        return os.path.abspath(program)
    if '\n' not in program and program.endswith('.pld'):
        raise RunError('program file %r does not exist' % program, 66)
    path = os.path.join(workdir, 'program.pld')
    with open(path, 'w') as f:
        f.write(program if program.endswith('\n') else program + '\n')
    return path


def _subworker_file(subworkers, workdir):
    """--subworkers' file: a path as it is, or {name: function} written as a module of their sources."""
    if isinstance(subworkers, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(subworkers))
        if not os.path.isfile(path):
            raise RunError('subworkers file %r does not exist' % path, 66)
        return path
    import ast  # noqa: PLC0415
    import inspect  # noqa: PLC0415
    import textwrap  # noqa: PLC0415
    import types  # noqa: PLC0415
    head, parts = ['import numpy as np', 'try:', '    import torch', 'except ImportError:', '    pass'], []
    for name, fn in dict(subworkers).items():
        if not callable(fn) or not hasattr(fn, '__code__'):
            raise RunError('subworkers[%r] is not a Python function (%s)' % (name, type(fn).__name__), 64)
        if fn.__code__.co_freevars:
            raise RunError('subworkers[%r] (%s) uses variables of an enclosing function (%s): the ranks run it in '
                           'their own Python, where they do not exist; make it a module-level function'
                           % (name, fn.__qualname__, ', '.join(fn.__code__.co_freevars)), 64)
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError) as e:
            raise RunError('subworkers[%r]: the source of %s is not available (%s)' % (name, fn.__qualname__, e),
                           64) from None
        node = tree.body[0]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise RunError('subworkers[%r] is not defined by a def (a lambda?): give a def' % name, 64)
        node.decorator_list = []
        node.name = name
        for g in sorted(fn.__code__.co_names):   # the modules it names (np, torch, math, ...)
            v = fn.__globals__.get(g)
            if isinstance(v, types.ModuleType) and g.isidentifier():   # (pytest's rewritten asserts add others)
                head.append('import %s as %s' % (v.__name__, g) if v.__name__ != g else 'import %s' % g)
        parts.append(ast.unparse(node))
    path = os.path.join(workdir, 'subworkers.py')
    with open(path, 'w') as f:
        f.write('\n'.join(head) + '\n\n\n' + '\n\n\n'.join(parts) + '\n')
    return path


def signature(program, entry=None, pldrun=None, workdir=None):
    """The entry's parameters as pldrun sees them: {"entry": NAME, "params": [{"name", "kind", "dtype",
    "shape", "dir"}, ...]} (`pldrun --signature`)."""
    exe = find_pldrun(pldrun)
    own = workdir is None
    wd = workdir or tempfile.mkdtemp(prefix='pldrun-')
    try:
        prog = _program_file(program, wd)
        cmd = [exe, '--signature', prog] + (['--entry', entry] if entry else [])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           stdin=subprocess.DEVNULL, timeout=120)
        if p.returncode != 0:
            raise RunError('pldrun rejected the program (exit %d):\n%s' % (p.returncode, p.stderr.rstrip()),
                           p.returncode, p.stderr, p.stdout, cmd)
        return json.loads(p.stdout)
    finally:
        if own:
            shutil.rmtree(wd, ignore_errors=True)


_WARNING = re.compile(r'^(\[rank \d+/\d+\] )?\S.*?: warning: ')
_DIAG_START = re.compile(r'^(\[rank \d+/\d+\] )?\S.*?: (warning|error): ')


def findings_of(stderr):
    """pldrun's warnings (races, poisoned reads, ...) in stderr: one string per warning, with its notes
    and source lines."""
    out, cur = [], None
    for line in stderr.splitlines():
        if _WARNING.match(line):
            cur = [line]
            out.append(cur)
        elif cur is not None and line.startswith('[rank') and not _DIAG_START.match(line) and ': note: ' in line \
                or cur is not None and re.match(r'^(\[rank \d+/\d+\] )?\s+(\d+ )?\|', line):
            cur.append(line)
        else:
            cur = None
    return ['\n'.join(f) for f in out]


def _records(path):
    """The results of pldrun's --findings log (SARIF 2.1.0), [] when there is none."""
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f)['runs'][0]['results']


def run(program, inputs=None, outputs=None, ranks=4, backend='sim', options=(), *, entry=None, timeout=None,
        wait_timeout=None, transport=None, collective_steps=None, dispatches=None, platform=None, devices=None, backend_options=None,
        trace=None, log_dir=None, verbose=False, check_races=False, poison=False, schedule_seed=None,
        persistent_windows=False, pldrun=None, mpiexec='mpirun', env=None, run_timeout=None, workdir=None,
        keep=False, bf16='float32', dispatch_inputs=None, dump=None, subworkers=None, subworker_tensors=None):
    """Runs `program` on `ranks` MPI ranks and returns a Result (outputs by name).

    inputs: {name: array | torch tensor | scalar} for the entry's parameters (dtype and shape must be the
      program's; a float array for a BF16 parameter is rounded to BF16 here).
    outputs: None = every pl.Out / pl.InOut parameter; a list of names; or {name: target} to fill numpy
      arrays / torch tensors in place (they are returned too).
    The keyword options map to pldrun's flags: timeout (--timeout, the hang watchdog: seconds without progress on
      any rank), wait_timeout (--wait-timeout, the per-wait limit, seconds), transport
      (--window-transport), collective_steps, dispatches, platform, devices, backend_options, trace
      (--trace FILE.json), log_dir, verbose (-v), check_races, poison (True, or 'error': a finding fails
      the run, exit status 1), schedule_seed, persistent_windows;
      `options` are more pldrun arguments as they are. run_timeout: seconds before the whole job is killed
      (RunError, returncode 124). bf16: 'float32' (BF16 outputs as exact float32) or 'bits' (uint16).
    dispatch_inputs: {name: [value for dispatch 0, value for dispatch 1, ...]}: new inputs per dispatch
      (`--in name=f0.npy,f1.npy,...`); the lists' common length is the dispatch count (give `dispatches`
      too and they must agree). The outputs are then read after every dispatch: Result.per_dispatch is a
      list with one {name: array} per dispatch, and the Result's own entries (and the in-place targets)
      are the last dispatch's.
    dump: a directory for `--dump` (pl.dump_tag hits as .npy files with DIR/index.tsv; docs/debugging.md).
    subworkers: the Python functions of the program's SubWorkers (docs/python.md, "SubWorkers"), replacing
      the bodies the program gives: a path to a Python file (--subworkers), or {name: function} (each
      function's source is written to a file for the ranks: module-level functions, no closures).
      subworker_tensors: 'numpy' (default) or 'torch', what a SubWorker gets for a host tensor.
    Raises RunError on a non-zero exit, with pldrun's diagnostics."""
    exe = find_pldrun(pldrun)
    own = workdir is None
    wd = workdir or tempfile.mkdtemp(prefix='pldrun-')
    os.makedirs(wd, exist_ok=True)
    try:
        prog = _program_file(program, wd)
        sw_file = _subworker_file(subworkers, wd) if subworkers is not None else None   # refused before running
        sig = signature(prog, entry=entry, pldrun=exe, workdir=wd)
        params = {p['name']: p for p in sig['params']}
        cmd = [mpiexec, '-n', str(int(ranks)), exe, prog]
        for name, value in (inputs or {}).items():
            if name not in params:
                raise RunError('the entry %s has no parameter %r (parameters: %s)'
                               % (sig['entry'], name, ', '.join(params)), 64)
            if isinstance(value, str) and (value in ('arange', 'zeros', 'ones') or value.startswith('random:')):
                cmd += ['--in', '%s=%s' % (name, value)]      # pldrun's generators
                continue
            f = os.path.join(wd, 'in_%s.npy' % name)
            np.save(f, _to_numpy(name, value, params[name]), allow_pickle=False)
            cmd += ['--in', '%s=%s' % (name, f)]
        for name, values in (dispatch_inputs or {}).items():
            if name not in params:
                raise RunError('the entry %s has no parameter %r (parameters: %s)'
                               % (sig['entry'], name, ', '.join(params)), 64)
            if isinstance(values, (str, bytes)) or not hasattr(values, '__len__') or len(values) == 0:
                raise RunError('dispatch_inputs[%r]: a non-empty list of values, one per dispatch' % name, 64)
            files = []
            for d, value in enumerate(values):
                files.append(os.path.join(wd, 'in_%s.%d.npy' % (name, d)))
                np.save(files[-1], _to_numpy(name, value, params[name]), allow_pickle=False)
            cmd += ['--in', '%s=%s' % (name, ','.join(files))]
        if outputs is None:
            names = [p['name'] for p in sig['params'] if p['dir'] in ('out', 'inout')]
            targets = {}
        elif isinstance(outputs, dict):
            names, targets = list(outputs), dict(outputs)
        else:
            names, targets = list(outputs), {}
        for name in names:
            if name not in params:
                raise RunError('the entry %s has no parameter %r to read back' % (sig['entry'], name), 64)
            if dispatch_inputs:   # each dispatch's outputs: DIR/name.D.npy
                cmd += ['--out', '%s=%s' % (name, os.path.join(wd, 'out_%s' % name, ''))]
            else:
                cmd += ['--out', '%s=%s' % (name, os.path.join(wd, 'out_%s.npy' % name))]
        flags = [('--entry', entry), ('--timeout', timeout), ('--wait-timeout', wait_timeout),
                 ('--window-transport', transport),
                 ('--collective-steps', collective_steps), ('--dispatches', dispatches), ('--platform', platform),
                 ('--devices', devices), ('--backend-options', backend_options), ('--trace', trace),
                 ('--log-dir', log_dir), ('--schedule-seed', schedule_seed), ('--dump', dump)]
        cmd += ['--backend', backend]
        for flag, v in flags:
            if v is not None:
                cmd += [flag, str(v)]
        for flag, on in (('-v', verbose), ('--check-races', check_races), ('--poison', poison),
                         ('--persistent-windows', persistent_windows)):
            if on:
                cmd.append(flag + ('=error' if on == 'error' else ''))
        log = os.path.join(wd, 'findings.json') if check_races or poison else None
        if log:
            cmd += ['--findings', log]
        if sw_file is not None:
            cmd += ['--subworkers', sw_file]
        if subworker_tensors is not None:
            cmd += ['--subworker-tensors', str(subworker_tensors)]
        cmd += [str(o) for o in options]
        run_env = dict(os.environ)
        run_env.update(mpi_env())
        run_env.update(env or {})
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                             stdin=subprocess.DEVNULL, env=run_env, cwd=wd, start_new_session=True)
        try:
            out, err = p.communicate(timeout=run_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            raise RunError('pldrun did not end within %s s (killed):\n%s' % (run_timeout, err.rstrip()), 124, err,
                           out, cmd) from None
        records = _records(log)
        if p.returncode != 0:
            lines = [ln.strip() for ln in err.splitlines() if ln.strip() and not ln.startswith('---')]
            first = next((ln for ln in lines if ': error: ' in ln or 'findings fail the run' in ln),
                         lines[0] if lines else 'no message')
            e = RunError('pldrun exited with status %d: %s' % (p.returncode, first), p.returncode, err, out, cmd)
            e.records = records
            raise e
        res = Result()
        res.per_dispatch = []
        for name in names if dispatch_inputs else ():
            d_out = os.path.join(wd, 'out_%s' % name)
            for d, fn in enumerate(sorted(f for f in os.listdir(d_out) if f.endswith('.npy'))):
                if d == len(res.per_dispatch):
                    res.per_dispatch.append({})
                res.per_dispatch[d][name] = _from_npy(os.path.join(d_out, fn), params[name]['dtype'], bf16)
        for name in names:
            arr = res.per_dispatch[-1][name] if dispatch_inputs else \
                _from_npy(os.path.join(wd, 'out_%s.npy' % name), params[name]['dtype'], bf16)
            if name in targets and targets[name] is not None:
                _copy_into(targets[name], arr, params[name]['dtype'])
                res[name] = targets[name]
            else:
                res[name] = arr
        res.stdout, res.stderr, res.command = out, err, cmd
        res.summary = next((line for line in out.splitlines() if line.startswith('pldrun: ') and 'rank' in line), '')
        res.findings = findings_of(err)
        res.records = records
        return res
    finally:
        if own and not keep:
            shutil.rmtree(wd, ignore_errors=True)
