"""pldrun.pypto - a pytest plugin that runs PyPTO's own tests on pldrun, unchanged.

    PYTHONPATH=/path/to/pldrun/python python3 -m pytest -p pldrun.pypto \\
        tests/st/distributed --device 0-3 --platform a2a3sim

It patches PyPTO at run time (PyPTO is imported when pytest configures, never
at import of this module) at the points its own tests/st/distributed/conftest.py
replaces for --codegen-only:

- `pypto.ir.compile`: captures the front-end program's `as_python()` and lets
  PyPTO's pass pipeline run, but code generation (`generate` in
  pypto/ir/compile.py) always runs with skip_ptoas=True: PyPTO's codegen without
  ptoas (tests read next_levels/ and kernel_config.py). Where that codegen
  fails for the program's reason (PyPTO's PartialCodegenError or its error
  report), the error goes through as on a machine with ptoas; where it fails
  for this machine's (a module or tool it needs is not installed), nothing is
  generated and the call still runs. The text is kept on the returned object
  and written to `<output_dir>/pldrun_program.pld`.
- `pypto.runtime.distributed_runner.execute_distributed` (one-shot calls of a
  DistributedCompiledProgram): runs the captured program on
  len(DistributedConfig.device_ids) ranks through `pldrun.run`.
- `pypto.runtime.runner.execute_compiled` (single-device calls): one rank; a
  multi-orchestration program's `next_levels/<name>` runs entry `<name>`.
- `DistributedCompiledProgram.prepare()` returns a stand-in worker whose
  dispatches run the same way; `DistributedWorker(...)` built by hand returns
  the same worker. Its device-resident tensors (alloc_tensor,
  alloc_stacked_tensor, malloc, copy_to, ...) live in this process
  (pldrun.pypto_device) and go to each run as host tensors.

Each call's arguments map by position onto the entry's parameters as
`pldrun --signature` lists them (PyPTO passes them in that order): every tensor
(Out ones too: PyPTO copies them to the device) and scalar goes in, Out and InOut
tensors are filled IN PLACE, so the
test's own torch.allclose decides. PyPTO's own __call__ keeps doing the rest
(argument checks, return-style allocation, tuple returns from the Out
parameters). pldrun's failures raise PldrunFailure (a pldrun.RunError) whose
message carries pldrun's diagnostics (the located error, the hang report).

SubWorkers (Python HOST functions, `level=HOST, role=SubWorker`) run in each
rank's embedded Python (pldrun's Python bridge, docs/python.md "SubWorkers"):
the printed program carries their bodies, as PyPTO's own codegen takes them,
and they get torch tensors sharing the host tensors' memory (numpy arrays when
torch is not importable), as PyPTO passes them.

Callbacks bound by prepare(callbacks=...) (closures PyPTO runs in the test's
own process) run in this process: while a run is in flight the ranks' stubs
call them over a Unix socket (pldrun.pypto_callbacks).

What pldrun cannot run fails with the reason (or is marked xfail with
--pldrun-unsupported=xfail): SubWorkers (and callbacks) on a pldrun built
without the Python bridge. A worker prepared with persistent=True,
reset_persistent_windows=False keeps its windows (signal cells included) from
one dispatch to the next: each dispatch is a pldrun run that loads the state
the previous one saved (--load-windows / --save-windows) in a directory of the
worker's own, one per prepared program, removed by close(). docs/pypto.md is
the manual.
"""
import abc
import ctypes
import os
import re
import shutil
import sys
import tempfile
import warnings

import numpy as np
import pytest

import pldrun
from pldrun import pypto_callbacks, pypto_device

__all__ = ['PldrunFailure', 'PldrunUnsupported', 'sub_workers', 'run_call', 'install', 'uninstall', 'state']

PROGRAM_FILE = 'pldrun_program.pld'
SUBWORKER_MESSAGE = 'SubWorkers (Python HOST functions) are not supported by pldrun'
NO_BRIDGE = 'without the Python bridge'     # pldrun's reason when it cannot run SubWorkers


class PldrunFailure(pldrun.RunError):
    """pldrun ran the test's program and failed: the message has pldrun's whole diagnostics."""


class PldrunUnsupported(Exception):
    """The test needs something pldrun does not provide (the message says what)."""


class _State:
    """The session's settings and what the last call did (tests and users may look)."""

    def __init__(self):
        self.backend = 'sim'
        self.timeout = None
        self.run_timeout = 600.0
        self.options = []
        self.unsupported = 'fail'
        self.exe = None
        self.last_result = None
        self.last_ranks = None
        self.calls = 0
        self.patches = []
        self.signatures = {}
        self.subworker_tensors = None


state = _State()


# ---------------------------------------------------------------- the program text

_DECO = re.compile(r'@pl\.function\(([^()]*)\)\s*\n\s*def\s+(\w+)')


_HOST_LEVELS = r'(HOST|NODE|CLUSTER_[012]|POD|CLOS[12]|GLOBAL)'   # Linqu level 3 and above


def sub_workers(text):
    """Names of the functions `text` declares as SubWorkers at HOST level or above (`level=pl.Level.HOST,
    role=pl.Role.SubWorker`: Python functions). InCore kernels print role=pl.Role.SubWorker too, at CHIP_DIE
    level: those are not SubWorkers here."""
    return [m.group(2) for m in _DECO.finditer(text)
            if re.search(r'\blevel\s*=\s*pl\.Level\.' + _HOST_LEVELS + r'\b', m.group(1))
            and re.search(r'\brole\s*=\s*pl\.Role\.SubWorker\b', m.group(1))]


def _unsupported(reason):
    if state.unsupported == 'xfail':
        pytest.xfail('pldrun.pypto: ' + reason)
    raise PldrunUnsupported(reason)


def _text_of(compiled):
    """(text, path) of the front-end program captured when `compiled` was compiled: the text kept on the
    object (else its output dir's pldrun_program.pld, for a program reloaded from its build directory);
    path is that file when it holds this text (pldrun's diagnostics then point into a file that stays)."""
    out = getattr(compiled, 'output_dir', None) or os.fspath(compiled)
    path = os.path.join(os.fspath(out), PROGRAM_FILE)
    on_disk = None
    if os.path.isfile(path):
        with open(path) as f:
            on_disk = f.read()
    text = getattr(compiled, '_pldrun_program', None) or on_disk
    if text:
        return text, (path if on_disk == text else None)
    raise PldrunUnsupported('no program was captured for %s: pldrun.pypto runs programs compiled by ir.compile '
                            'in this session (it writes %s there)' % (out, PROGRAM_FILE))


def _platform(name):
    """PyPTO's platform ('a2a3sim', 'a5', ...) as pldrun's hardware profile."""
    return 'a5' if name and str(name).startswith('a5') else 'a2a3'


def _signature(text, entry, subs=(), where='the program'):
    key = (text, entry)
    if key not in state.signatures:
        try:
            state.signatures[key] = pldrun.signature(text, entry=entry, pldrun=state.exe)
        except pldrun.RunError as e:
            if subs and e.returncode == 65 and NO_BRIDGE in e.diagnostics:
                _unsupported('%s: %s declares %s, and this pldrun was built without the Python bridge (CMake '
                             'PLDRUN_PYTHON, libpython3-dev; docs/python.md, "SubWorkers")'
                             % (SUBWORKER_MESSAGE, where, ', '.join(subs)))
            raise
    return state.signatures[key]


def _tensor_kind():
    """What a SubWorker gets for a host tensor: torch tensors as PyPTO passes them when the real torch is
    importable (the ranks' Python is this one's: Debian's), else numpy arrays."""
    if state.subworker_tensors is None:
        try:
            import torch  # noqa: PLC0415
            real = hasattr(torch, '__version__') and hasattr(torch, 'from_numpy')
            state.subworker_tensors = 'torch' if real else 'numpy'
        except ImportError:
            state.subworker_tensors = 'numpy'
    return state.subworker_tensors


def _value(arg, param, where):
    """A call argument as pldrun.run takes it: ctypes scalars unwrapped; a device-resident tensor outside the
    worker that holds it refused (its worker's dispatch passes its bytes, Worker.run)."""
    if isinstance(arg, ctypes._SimpleCData):
        return arg.value
    if pypto_device.is_device_tensor(arg) or pypto_device.is_stacked(arg):
        raise TypeError('parameter %r of %s is a %s: a one-shot call cannot take a device-resident tensor; '
                        'dispatch it through the worker that allocated it (rt(...), rt.run(compiled, ...))'
                        % (param['name'], where, type(arg).__name__))
    return arg


_UNSIGNED = {'UINT16': 'uint16', 'UINT32': 'uint32', 'UINT64': 'uint64'}


def _same_bits(value, param):
    """A UINT16/32/64 tensor given as torch's signed dtype of that width (torch has no such unsigned dtype, and
    PyPTO's harness makes them so: the same bits) goes to pldrun as a numpy view of the parameter's unsigned
    dtype on the same memory (so a tensor filled in place fills the caller's tensor)."""
    u = _UNSIGNED.get(param.get('dtype'))
    if u is None or not hasattr(value, 'numpy'):
        return value
    arr = (value.detach() if hasattr(value, 'detach') else value).numpy()
    if arr.dtype.kind == 'i' and arr.dtype.itemsize == np.dtype(u).itemsize:
        return arr.view(u)
    return value


def _changed(sent, got, dtype):
    """True when pldrun's final contents `got` of an input differ from the bits `sent` to it."""
    if dtype == 'BF16' and got.dtype != np.uint16:
        got = pldrun.f32_to_bf16(got)
    a, b = np.ascontiguousarray(sent), np.ascontiguousarray(got)
    return a.nbytes != b.nbytes or not np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def refuse_external_kernels(text, where):
    """A program that calls a hand-written C++ kernel (external_source=, printed with an empty body) is not run:
    pldrun refuses the call too (exit 65, at the call)."""
    from .pypto_harness import external_kernels  # noqa: PLC0415 (the two modules import each other)
    ext = external_kernels(text)
    if ext:
        _unsupported('%s calls %s, a hand-written C++ kernel (external_source=...): pldrun runs the printed '
                     'program, where its body is empty' % (where, ', '.join(ext)))


def run_call(text, args, ranks, *, path=None, entry=None, platform=None, where='the program', options=(),
             subworkers=None):
    """Runs `text` (from the file `path` when given) on `ranks` ranks with the positional call arguments
    `args` (one per entry parameter, in `pldrun --signature` order); fills the tensors of `args` in place
    with their final contents, as PyPTO's device run copies every host tensor back: the Out/InOut ones, and
    a plain pl.Tensor (In) one the program wrote (pl.tensor.assemble into it); `options`: more pldrun
    arguments for this call; `subworkers`: a --subworkers file (the callbacks' stubs). Returns the pldrun
    Result; raises PldrunFailure when pldrun fails."""
    refuse_external_kernels(text, where)
    subs = sub_workers(text)
    sig = _signature(text, entry, subs, where)
    params = sig['params']
    if len(args) != len(params):
        raise TypeError('pldrun.pypto: %s got %d arguments, but its entry %s has %d parameters (%s)'
                        % (where, len(args), sig['entry'], len(params), ', '.join(p['name'] for p in params)))
    inputs, targets, read_back = {}, {}, {}
    for p, a in zip(params, args):
        v = _same_bits(_value(a, p, where), p)
        if p['dir'] in ('in', 'inout') or hasattr(v, 'shape'):
            inputs[p['name']] = v     # an Out tensor too: PyPTO copies it to the device, so a kernel starts from it
        if p['dir'] in ('out', 'inout'):
            if not hasattr(v, 'shape'):
                raise TypeError('pldrun.pypto: parameter %r of %s is an output; got %s, not a tensor'
                                % (p['name'], where, type(v).__name__))
            targets[p['name']] = v
        elif p['kind'] != 'scalar' and hasattr(v, 'shape'):
            targets[p['name']] = None   # read back (--out of a pl.Tensor); filled below only where written
            read_back[p['name']] = (v, pldrun._to_numpy(p['name'], v, p), p['dtype'])
    state.calls += 1
    state.last_ranks = ranks
    try:
        res = pldrun.run(path or text, inputs, outputs=targets, ranks=ranks, backend=state.backend,
                         options=list(state.options) + list(options), entry=entry, timeout=state.timeout,
                         run_timeout=state.run_timeout, platform=platform, pldrun=state.exe,
                         subworker_tensors=_tensor_kind() if subs else None, subworkers=subworkers)
    except pldrun.RunError as e:
        msg = '%s on %d rank%s: %s' % (where, ranks, '' if ranks == 1 else 's', e)
        if e.diagnostics.strip():
            msg += '\npldrun said:\n' + e.diagnostics.rstrip()
        if e.command:
            msg += '\ncommand: ' + ' '.join(str(c) for c in e.command)
        raise PldrunFailure(msg, e.returncode, e.diagnostics, e.stdout, e.command) from None
    for name, (v, sent, dtype) in read_back.items():
        if _changed(sent, res[name], dtype):
            pldrun._copy_into(v, res[name], dtype)
            res[name] = v
    state.last_result = res
    print('pldrun.pypto: %s: %s' % (where, res.summary))
    for f in res.findings:
        warnings.warn('pldrun finding in %s:\n%s' % (where, f))
    return res


# ---------------------------------------------------------------- the replacements


def _ranks_of(compiled):
    dc = getattr(compiled, '_distributed_config', None)
    ids = getattr(dc, 'device_ids', None) or [0]
    return len(ids)


def _run_distributed(compiled, args, options=(), subworkers=None):
    text, path = _text_of(compiled)
    return run_call(text, list(args), _ranks_of(compiled), path=path,
                    platform=_platform(getattr(compiled, 'platform', None)), where=_name_of(text), options=options,
                    subworkers=subworkers)


def _name_of(text):
    m = re.search(r'^class\s+(\w+)', text, re.M)
    return m.group(1) if m else 'the program'


def _make_compile(real_compile):
    def compile(program, *args, **kwargs):  # noqa: A001 (PyPTO's name)
        text = program.as_python()
        result = real_compile(program, *args, **kwargs)
        try:
            result._pldrun_program = text
        except AttributeError:
            pass
        out = getattr(result, 'output_dir', None) or os.fspath(result)
        with open(os.path.join(os.fspath(out), PROGRAM_FILE), 'w') as f:
            f.write(text)
        return result
    compile.__doc__ = 'pldrun.pypto: ir.compile without ptoas and device codegen; keeps as_python() for pldrun.'
    compile.__wrapped__ = real_compile
    return compile


# What says that PyPTO's codegen failed for this machine's reason, not the program's: a module or a tool
# it needs is not installed here (skip_ptoas=True runs no ptoas, but keep the wording of a missing one).
_ENV_FAILURE = re.compile(r"No module named|No such file or directory|ptoas\b[^\n]*\bnot (found|installed)"
                          r"|command not found", re.I)


def environment_failure(exc):
    """True when PyPTO's code generation raised `exc` for this machine's reason (an ImportError, a missing
    file or tool), so the plugin generates nothing and runs the program anyway; False for the program's own
    reason (PyPTO's PartialCodegenError / error report naming a function it cannot compile), which a test
    may expect and which a device run would raise too."""
    if isinstance(exc, (ImportError, FileNotFoundError)):
        return True
    return bool(_ENV_FAILURE.search(str(exc)))


def _make_generate(real_generate):
    def generate(*args, **kwargs):
        if kwargs.get('skip_ptoas'):
            return real_generate(*args, **kwargs)   # the caller asked for codegen without ptoas
        # PyPTO's own codegen without ptoas (no kernel is compiled): tests that read what it writes
        # (next_levels/, kernel_config.py, the orchestration source) find it. Its errors are the program's
        # and go through (ptoas is not run, so it adds none); one of this machine's (a module it imports is
        # missing) generates nothing: pldrun interprets the captured program either way.
        try:
            return real_generate(*args, **dict(kwargs, skip_ptoas=True))
        except Exception as e:  # noqa: BLE001 (sorted below)
            if environment_failure(e):
                return {}
            raise
    generate.__wrapped__ = real_generate
    return generate


def _execute_distributed(compiled, coerced_args, config=None):
    del config
    _run_distributed(compiled, coerced_args)


def _execute_compiled(work_dir, args, *, platform=None, device_id=0, **kwargs):
    del device_id, kwargs
    work_dir = os.path.abspath(os.fspath(work_dir))
    entry, root = None, work_dir
    if not os.path.isfile(os.path.join(work_dir, PROGRAM_FILE)) and \
            os.path.basename(os.path.dirname(work_dir)) == 'next_levels':
        entry, root = os.path.basename(work_dir), os.path.dirname(os.path.dirname(work_dir))
    path = os.path.join(root, PROGRAM_FILE)
    if not os.path.isfile(path):
        raise PldrunUnsupported('no program was captured for %s: pldrun.pypto runs programs compiled by ir.compile '
                                'in this session (it writes %s there)' % (work_dir, PROGRAM_FILE))
    with open(path) as f:
        text = f.read()
    run_call(text, list(args), 1, path=path, entry=entry, platform=_platform(platform),
             where=entry or _name_of(text))


class _Handle:
    """A finished dispatch (pldrun runs each dispatch to completion)."""

    def __init__(self, error=None):
        self._error = error

    def done(self):
        return True

    def result(self, timeout=None):
        del timeout
        if self._error is not None:
            raise self._error

    def wait(self, timeout=None):
        self.result(timeout)


class _Registration:
    """What Worker.register(compiled) returns: PyPTO's RegistrationHandle surface (compiled, closed, cid 0,
    calling it dispatches; unregister(); closed by the worker's close())."""

    def __init__(self, worker, compiled):
        self._worker, self._compiled, self._closed = worker, compiled, False

    cid = property(lambda self: 0)
    compiled = property(lambda self: self._compiled)
    closed = property(lambda self: self._closed)

    def __call__(self, *args, config=None):
        if self._closed:
            raise RuntimeError('RegistrationHandle has been unregistered (or its parent Worker was closed). '
                               'Re-register via worker.register(compiled) to get a fresh handle.')
        return self._worker.run(self._compiled, *args, config=config)

    def unregister(self):
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unregister()


class Worker(pypto_device.DeviceMemory):
    """What prepare() (and DistributedWorker(...) built by hand) returns under pldrun.pypto: every dispatch is
    one pldrun run of the captured program on host tensors (Out/InOut filled in place). Windows are zero at
    every dispatch (PyPTO's default, and its reset of persistent windows), unless `keep_windows`
    (persistent=True, reset_persistent_windows=False): then each prepared program's windows, signal cells
    included, go from one dispatch to the next through a state directory of the worker's own (pldrun
    --save-windows / --load-windows; `state_dir`), which close() removes. Device-resident tensors
    (alloc_tensor, alloc_stacked_tensor, malloc, copy_to, ...) are kept in this process
    (pldrun.pypto_device) and passed to each run as host tensors."""

    def __init__(self, programs, callbacks=None, keep_windows=False):
        self._programs = list(programs)
        self._callbacks = dict(callbacks or {})     # SubWorker name -> fn(args), run in this process
        self.callback_calls = []                    # (name, rank) of each callback run, in order
        self._open = True
        self._handles = []
        self._world = _ranks_of(self._programs[0])
        self._init_device_memory()
        self.state_dir = tempfile.mkdtemp(prefix='pldrun-windows-') if keep_windows else None
        self._saved = set()     # indices of the programs whose windows a dispatch saved

    def _window_options(self, compiled):
        """pldrun's arguments keeping program `compiled`'s windows from the last dispatch to this one."""
        if self.state_dir is None:
            return []
        i = next(k for k, p in enumerate(self._programs) if p is compiled)
        d = os.path.join(self.state_dir, 'p%d' % i)     # PyPTO keeps the windows per prepared program too
        opts = ['--persistent-windows', '--reset-persistent-windows', 'no', '--save-windows', d]
        return opts + (['--load-windows', d] if i in self._saved else [])

    def _require_open(self, op):
        if not self._open:
            raise RuntimeError('DistributedWorker.%s() called after close()' % op)   # PyPTO's words (tests match them)

    def __call__(self, *args, config=None):
        del config
        if len(self._programs) > 1:
            raise TypeError('rt(*args) is ambiguous on a multi-program worker; dispatch with rt.run(compiled, ...)')
        return self.run(self._programs[0], *args)

    def run(self, compiled, *args, config=None):
        del config
        self._require_open('run')
        if not any(compiled is p for p in self._programs):
            raise ValueError('DistributedWorker.run(compiled): the program was not prepared on this worker')
        args, write_back = self._resident_args(args, _params(compiled))
        options = self._window_options(compiled)
        bound = {n: f for n, f in self._callbacks.items() if n in sub_workers(_text_of(compiled)[0])}
        if bound:
            with pypto_callbacks.CallbackServer(bound) as srv:
                try:
                    _run_distributed(compiled, args, options, subworkers=srv.module)
                finally:
                    self.callback_calls += srv.calls
        else:
            _run_distributed(compiled, args, options)
        if self.state_dir is not None:
            self._saved.add(next(k for k, p in enumerate(self._programs) if p is compiled))
        write_back()

    def submit(self, compiled, *args, config=None):
        try:
            self.run(compiled, *args, config=config)
        except Exception as e:  # noqa: BLE001 (kept for result(), as PyPTO's handle does)
            return _Handle(e)
        return _Handle()

    def register(self, compiled):
        self._require_open('register')
        if not any(compiled is p for p in self._programs):
            raise ValueError('DistributedWorker.register(compiled): the program was not prepared on this worker')
        h = _Registration(self, compiled)
        self._handles.append(h)
        return h

    def close(self):
        if self._open:
            self._close_owned_tensors()
            self._device_buffers.clear()
        self._open = False
        if self.state_dir is not None:
            shutil.rmtree(self.state_dir, ignore_errors=True)
        for h in self._handles:
            h.unregister()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _params(compiled):
    """The entry's parameters (`pldrun --signature`): device tensors are checked against them, PyPTO's dispatch
    errors name them."""
    try:
        text = _text_of(compiled)[0]
        return _signature(text, None, sub_workers(text), _name_of(text))['params']
    except Exception:  # noqa: BLE001 (only for checks and labels; the run reports a real problem itself)
        return []


def _prepare(self, config=None, *, extra_compiled=(), persistent=False, reset_persistent_windows=None,
             callbacks=None, sub_worker_overrides=None, startup_timeout_s=None):
    del config, startup_timeout_s
    if sub_worker_overrides is not None:
        warnings.warn('sub_worker_overrides is deprecated; use callbacks= instead.', DeprecationWarning, stacklevel=2)
    bound = dict(sub_worker_overrides or {}, **(callbacks or {}))    # callbacks win, as in PyPTO
    if bound:
        declared = [n for c in (self, *extra_compiled) for n in sub_workers(_text_of(c)[0])]
        unknown = sorted(set(bound) - set(declared))
        if unknown:
            raise ValueError('callbacks names %s are not sub-workers of this program (it declares %s)'
                             % (unknown, declared))
        for name, fn in bound.items():
            pypto_callbacks.check_callback(name, fn)
    if reset_persistent_windows and not persistent:
        raise ValueError('DistributedWorker reset_persistent_windows=True requires persistent=True')  # as PyPTO
    return Worker([self, *extra_compiled], callbacks=bound,
                  keep_windows=bool(persistent) and reset_persistent_windows is False)


def _worker_new(cls, compiled, config=None, *, inherited_host_tensors=None, **kwargs):
    """DistributedWorker(compiled or [compiled, ...], config, persistent=, callbacks=, ...) built by hand: the
    worker prepare() gives (PyPTO's prepare() builds the same). inherited_host_tensors only keep tensors alive
    in PyPTO (the fork's mappings); nothing forks here."""
    del cls, inherited_host_tensors
    programs = list(compiled) if isinstance(compiled, (list, tuple)) else [compiled]
    if not programs:
        raise ValueError('DistributedWorker requires at least one compiled program')
    for p in programs[1:]:
        if list(_device_ids(p)) != list(_device_ids(programs[0])):
            raise ValueError('DistributedWorker multi-program mode requires the same device_ids: %s != %s'
                             % (list(_device_ids(programs[0])), list(_device_ids(p))))
    return _prepare(programs[0], config, extra_compiled=programs[1:], **kwargs)


def _device_ids(compiled):
    return getattr(getattr(compiled, '_distributed_config', None), 'device_ids', None) or [0]


# ---------------------------------------------------------------- installing


def _set(obj, name, value):
    """setattr, remembered for uninstall (an attribute a class only inherits is deleted again, not copied)."""
    own = name in vars(obj)
    state.patches.append((obj, name, own, vars(obj).get(name)))
    setattr(obj, name, value)


# The points patched, as PyPTO e2d0f78 has them: (module, attribute path).
HOOKS = (('pypto.ir.compile', 'compile'), ('pypto.ir.compile', 'generate'), ('pypto.ir', 'compile'),
         ('pypto.runtime.runner', 'execute_compiled'),
         ('pypto.runtime.distributed_runner', 'execute_distributed'),
         ('pypto.runtime.distributed_runner', 'DistributedWorker.__init__'),
         ('pypto.ir.distributed_compiled_program', 'DistributedCompiledProgram.prepare'))


class SurfaceError(ImportError):
    """The importable PyPTO lacks a point the plugin patches (another PyPTO version)."""


def install():
    """Patches the importable PyPTO. Raises ImportError when PyPTO (or a module named in HOOKS) cannot be
    imported, SurfaceError (an ImportError) when one of the HOOKS is missing; nothing is patched then."""
    import importlib  # noqa: PLC0415
    mods = {'pypto': importlib.import_module('pypto')}
    for mod, attr in HOOKS:
        mods[mod] = importlib.import_module(mod)
        obj = sys.modules[mod] if mod == 'pypto.ir.compile' else mods[mod]   # pypto.ir.compile is also a function
        for part in attr.split('.'):
            if part not in dir(obj):
                raise SurfaceError('%s has no %s: pldrun.pypto patches the points of PyPTO e2d0f78 (docs/pypto.md)'
                                   % (mod, attr))
            obj = getattr(obj, part)
    mods['pypto.runtime'] = importlib.import_module('pypto.runtime')
    comp_mod = sys.modules['pypto.ir.compile']
    real_compile = comp_mod.compile
    _set(comp_mod, 'generate', _make_generate(comp_mod.generate))
    ours = _make_compile(real_compile)
    _set(comp_mod, 'compile', ours)
    _set(mods['pypto.ir'], 'compile', ours)
    _set(mods['pypto.runtime.runner'], 'execute_compiled', _execute_compiled)
    if hasattr(mods['pypto.runtime'], 'execute_compiled'):
        _set(mods['pypto.runtime'], 'execute_compiled', _execute_compiled)
    dr = mods['pypto.runtime.distributed_runner']
    _set(dr, 'execute_distributed', _execute_distributed)
    _set(dr.DistributedWorker, '__new__', staticmethod(_worker_new))
    if isinstance(dr.DistributedWorker, abc.ABCMeta):   # isinstance(worker, DistributedWorker) holds (not undone)
        abc.ABCMeta.register(dr.DistributedWorker, Worker)
    _set(mods['pypto.ir.distributed_compiled_program'].DistributedCompiledProgram, 'prepare', _prepare)


def uninstall():
    while state.patches:
        obj, name, own, old = state.patches.pop()
        if own:
            setattr(obj, name, old)
        else:
            delattr(obj, name)


# ---------------------------------------------------------------- pytest hooks


def pytest_addoption(parser):
    g = parser.getgroup('pldrun', 'run PyPTO programs on pldrun (pldrun.pypto, docs/pypto.md)')
    g.addoption('--pldrun-backend', default=os.environ.get('PLDRUN_BACKEND', 'sim'),
                help="pldrun's kernel backend: sim (default; $PLDRUN_BACKEND), native, ascend or a plugin path")
    g.addoption('--pldrun-timeout', type=int, default=None,
                help="pldrun's hang watchdog in seconds (--timeout; default pldrun's 30)")
    g.addoption('--pldrun-run-timeout', type=float, default=600.0,
                help='kill a pldrun run after this many seconds (default 600)')
    g.addoption('--pldrun-option', action='append', default=[], metavar='ARG',
                help='one more pldrun argument, as --pldrun-option=--check-races (repeatable)')
    g.addoption('--pldrun-unsupported', choices=('fail', 'xfail'), default='fail',
                help='what a test needing what pldrun lacks (prepare() callbacks, device tensors, SubWorkers '
                     'without the Python bridge) does: fail (default) or xfail, with the reason either way')
    g.addoption('--pldrun-exe', default=None, help='the pldrun binary (default: $PLDRUN, the checkout, PATH)')


def pytest_configure(config):
    state.backend = config.getoption('--pldrun-backend')
    state.timeout = config.getoption('--pldrun-timeout')
    state.run_timeout = config.getoption('--pldrun-run-timeout')
    state.options = list(config.getoption('--pldrun-option'))
    state.unsupported = config.getoption('--pldrun-unsupported')
    try:
        state.exe = pldrun.find_pldrun(config.getoption('--pldrun-exe'))
    except pldrun.RunError as e:
        raise pytest.UsageError('pldrun.pypto: %s' % e) from None
    try:
        install()
    except SurfaceError as e:
        uninstall()
        raise pytest.UsageError('pldrun.pypto: this PyPTO does not have what the plugin replaces: %s' % e) from None
    except ImportError as e:
        uninstall()
        raise pytest.UsageError('pldrun.pypto: PyPTO is not importable in %s (%s: %s): install PyPTO as its own '
                                'documentation says, in this Python, then run pytest again'
                                % (sys.executable, type(e).__name__, e)) from None


def pytest_unconfigure(config):
    del config
    uninstall()


def pytest_report_header(config):
    del config
    return 'pldrun.pypto: PyPTO runs on %s (backend %s)' % (state.exe, state.backend)


# PyPTO's PTOTestCase harness (tests/st/runtime): its TestRunner.run is replaced when the tests start.
from .pypto_harness import pytest_collection_finish, pytest_runtestloop  # noqa: E402, F401
