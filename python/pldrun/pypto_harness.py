"""pldrun.pypto_harness - PyPTO's PTOTestCase harness (tests/st/harness) run on pldrun; pldrun.pypto installs it.

Most of PyPTO's tests/st/runtime files run a `PTOTestCase` through the `test_runner` fixture:
`TestRunner.run(test_case)` either takes the case's pre-compiled build (the --precompile-workers pipeline:
`_compile_futures`, then `compile_and_assemble` and simpler's runner) or compiles it inline
(`_run_inline`). Both start at `TestRunner.run`, and both need files pldrun does not need and the plugin's
codegen does not write (kernels/*.cpp, orchestration/*.cpp, the assembled callable). The plugin replaces
`TestRunner.run` of PyPTO's `harness.core.test_runner` module (found when its conftest has imported it) with
`run` below, which keeps the harness's own steps and swaps only the execution:

1. the build: the pre-compiled one when the pipeline made it (its `pldrun_program.pld`, written by the
   plugin's `ir.compile` in this session), else the harness's `compile_program` in the harness's own
   work directory (`_inline_work_dir`), as `_run_inline` calls it. A compile error fails the test as the
   harness reports it; the checks for kernels/*.cpp and orchestration/*.cpp are skipped, as the
   distributed path skips ptoas and device codegen;
2. the harness's `_write_golden_for_test_case`: the test's inputs (data/in), its golden from
   `compute_expected` (data/out) and golden.py with the test's tolerances;
3. golden.py's `generate_inputs` gives the call's arguments, as the device run takes them: tensors in
   the order of the test's tensor specs onto the entry's tensor parameters, scalars (ctypes values) onto its
   scalar parameters; `pldrun.pypto.run_call` runs the captured program on ONE rank with the session's
   backend (--pldrun-backend) and fills the tensors in place (Out/InOut, and a pl.Tensor the program wrote);
4. the outputs go to data/actual and the harness's `_validate_after_device_run` compares them with the
   golden at the test's rtol/atol (PyPTO's `validate_persisted_outputs`): its RunResult is returned.

pldrun's failures come back as a failed RunResult whose error is pldrun's diagnostics (the test asserts
`result.passed`); what pldrun does not do fails with the reason, or xfails with --pldrun-unsupported=xfail.
"""
import ast
import contextlib
import importlib.util
import logging
import os
import re
import shutil
import sys
import time
import traceback
import types

import pytest

__all__ = ['HARNESS_MODULES', 'NEEDED', 'external_kernels', 'patch']

# The module names PyPTO's tests/st/conftest.py imports its harness by (tests/st is put on sys.path).
HARNESS_MODULES = ('harness.core.test_runner',)
# What `run` uses of that module (PyPTO e2d0f78).
NEEDED = ('TestRunner', 'RunResult', 'compile_program', 'set_backend_type', '_resolve_platform', '_cache_key',
          '_resolve_case_memory_planner', '_compile_futures', '_pipeline_ctx', '_inline_work_dir',
          '_write_golden_for_test_case', '_save_data_files', '_validate_after_device_run')

_session = {'start': time.time()}


def _fresh(path):
    """The captured program at `path` exists and was written in this session (not left by an older build)."""
    return os.path.isfile(path) and os.path.getmtime(path) >= _session['start'] - 1


def _load(golden_path):
    spec = importlib.util.spec_from_file_location('_pldrun_golden', str(golden_path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _arguments(pairs, params, name):
    """golden.py's (name, value) pairs as positional arguments in the entry's parameter order: tensors onto
    the tensor parameters in order, scalars onto the scalar ones (the device run packs them in two pools)."""
    tensors = [v for _, v in pairs if hasattr(v, 'shape')]
    scalars = [v for _, v in pairs if not hasattr(v, 'shape')]
    t_params = [p for p in params if p['kind'] != 'scalar']
    s_params = [p for p in params if p['kind'] == 'scalar']
    if len(tensors) != len(t_params) or len(scalars) != len(s_params):
        raise TypeError('pldrun.pypto: test case %s gives %d tensors and %d scalars (%s), but the entry has %d '
                        'tensor and %d scalar parameters (%s)'
                        % (name, len(tensors), len(scalars), ', '.join(n for n, _ in pairs), len(t_params),
                           len(s_params), ', '.join(p['name'] for p in params)))
    it_t, it_s = iter(tensors), iter(scalars)
    return [next(it_s) if p['kind'] == 'scalar' else next(it_t) for p in params]   # run_call: UINT as the same bits


def external_kernels(text):
    """Names of the functions `text` declares with external_source= (hand-written C++ kernels, printed with an
    empty body) and calls (self.NAME): pldrun refuses such a call (exit 65)."""
    return [m.group(2) for m in plugin._DECO.finditer(text) if re.search(r'\bexternal_source\s*=', m.group(1))
            and re.search(r'\bself\.%s\b' % re.escape(m.group(2)), text)]


def _precompiled(h, runner, tc, platform):
    """(work_dir, None) of the case's build by the --precompile-workers pipeline when its program was captured
    in this session; (None, RunResult) when the pipeline failed before; (None, None) without the pipeline."""
    fut = h._compile_futures.get(h._cache_key(tc, platform, runner.config.memory_planner))
    if fut is None:
        return None, None
    try:
        art = fut.result()
    except Exception as exc:  # noqa: BLE001 (reported as the harness reports it)
        return None, h.RunResult(passed=False, test_name=tc.get_name(), execution_time=0.0,
                                 error='compile task crashed: %s\n%s' % (exc, traceback.format_exc()))
    if _fresh(os.path.join(str(art.work_dir), plugin.PROGRAM_FILE)):
        return art.work_dir, None   # its error, if any, came after ir.compile (kernel files, assembly)
    return None, h.RunResult(passed=False, test_name=tc.get_name(), execution_time=0.0,
                             error='Pre-compilation failed: %s' % art.error)


def _compile(h, runner, tc, work_dir):
    """The harness's inline compile (as _run_inline calls compile_program)."""
    backend_type = tc.get_backend_type()
    h.set_backend_type(backend_type)
    program = tc.get_program()
    if program is None:
        raise ValueError('Test case %s must implement get_program() to return a @pl.program class or ir.Program'
                         % tc.get_name())
    h.compile_program(program, work_dir, strategy=tc.get_strategy(), backend_type=backend_type,
                      dump_passes=runner.config.dump_passes,
                      analyze_auto_scopes_for_deps=runner.config.analyze_auto_scopes_for_deps,
                      memory_planner=h._resolve_case_memory_planner(tc, runner.config.memory_planner),
                      enable_pypto_l0c_double_buffer=tc.get_enable_pypto_l0c_double_buffer())


def _run(h, runner, tc):
    start = time.time()
    name = tc.get_name()
    platform = h._resolve_platform(runner.config.platform, tc)
    if hasattr(h, '_last_device'):
        h._last_device['value'] = runner.config.device_id   # the conftest's [DEVICE] line
    work_dir, temp = None, False
    try:
        work_dir, failed = _precompiled(h, runner, tc, platform)
        if failed is not None:
            return failed
        if work_dir is None:
            work_dir, temp = h._inline_work_dir(runner.config, name, platform)
            _compile(h, runner, tc, work_dir)
        h._write_golden_for_test_case(tc, _path(work_dir, 'golden.py'))
        if runner.config.codegen_only or h._pipeline_ctx.get('codegen_only'):
            return h.RunResult(passed=True, test_name=name, execution_time=time.time() - start)
        golden = _load(_path(work_dir, 'golden.py'))
        pairs = list(golden.generate_inputs({'name': 'Default'}))
        prog = os.path.join(str(work_dir), plugin.PROGRAM_FILE)
        with open(prog) as f:
            text = f.read()
        plugin.refuse_external_kernels(text, 'test case %s' % name)
        sig = plugin._signature(text, None, plugin.sub_workers(text), name)
        args = _arguments(pairs, sig['params'], name)
        plugin.run_call(text, args, 1, path=prog, platform=plugin._platform(platform), where=name)
        values = dict(pairs)
        h._save_data_files({n: values[n] for n in getattr(golden, '__outputs__', [])},
                           _path(work_dir, 'data', 'actual'))
        with _validator():
            return h._validate_after_device_run(tc, work_dir, time.time() - start)
    except plugin.PldrunUnsupported as e:
        return h.RunResult(passed=False, test_name=name, execution_time=time.time() - start,
                           error='pldrun.pypto: %s' % e)
    except Exception as e:  # noqa: BLE001 (the harness reports every failure in its RunResult)
        return h.RunResult(passed=False, test_name=name, execution_time=time.time() - start,
                           error='%s: %s\n%s' % (type(e).__name__, e, traceback.format_exc()))
    finally:
        if temp and work_dir is not None and os.path.isdir(str(work_dir)):
            shutil.rmtree(str(work_dir), ignore_errors=True)


DEVICE_RUNNER = 'pypto.runtime.device_runner'


@contextlib.contextmanager
def _validator():
    """PyPTO's validate_persisted_outputs imports validate_golden from pypto.runtime.device_runner, whose module
    imports simpler's compiled `_task_interface`. Where that is not built (simpler not installed), this gives
    the module for the duration of the validation as PyPTO's own validate_golden alone, compiled from
    device_runner.py's source; otherwise it changes nothing."""
    try:
        importlib.import_module(DEVICE_RUNNER)
    except ImportError as e:
        missing = e
    else:
        yield
        return
    spec = importlib.util.find_spec(DEVICE_RUNNER)
    if spec is None or not spec.origin:   # no such module: the harness reports its own error
        yield
        return
    with open(spec.origin) as f:
        tree = ast.parse(f.read(), spec.origin)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'validate_golden']
    if not defs:
        raise ImportError('%s (%s): and it has no validate_golden to validate with' % (missing, spec.origin))
    mod = types.ModuleType(DEVICE_RUNNER)
    mod.__file__ = spec.origin
    import torch  # noqa: PLC0415 (PyPTO needs it; validate_golden uses it)
    mod.__dict__.update(torch=torch, logger=logging.getLogger(DEVICE_RUNNER))
    future = ast.ImportFrom(module='__future__', names=[ast.alias(name='annotations')], level=0)
    exec(compile(ast.fix_missing_locations(ast.Module(body=[future] + defs, type_ignores=[])), spec.origin, 'exec'),
         mod.__dict__)  # noqa: S102 (PyPTO's own function, from its installed source)
    sys.modules[DEVICE_RUNNER] = mod
    try:
        yield
    finally:
        if sys.modules.get(DEVICE_RUNNER) is mod:
            del sys.modules[DEVICE_RUNNER]


def _path(base, *parts):
    """base / parts, a pathlib.Path when base is one (the harness's functions take Paths)."""
    if hasattr(base, 'joinpath'):
        return base.joinpath(*parts)
    return os.path.join(base, *parts)


def patch(h):
    """Replaces TestRunner.run of the harness module `h` (once). Raises pytest.UsageError when `h` lacks a name
    `run` uses (another PyPTO)."""
    runner_cls = h.TestRunner
    if getattr(runner_cls.run, '_pldrun', False):
        return
    missing = [n for n in NEEDED if not hasattr(h, n)]
    if missing:
        raise pytest.UsageError('pldrun.pypto: PyPTO\'s test harness %s lacks %s: the plugin runs the harness of '
                                'PyPTO e2d0f78 (docs/pypto.md)' % (h.__name__, ', '.join(missing)))

    def run(self, test_case):
        return _run(h, self, test_case)
    run._pldrun = True
    run.__doc__ = 'pldrun.pypto: the test case run on pldrun (one rank), checked by the harness against its golden.'
    run.__wrapped__ = runner_cls.run
    plugin._set(runner_cls, 'run', run)


def _no_pto_isa():
    """pldrun needs no pto-isa checkout: the pipeline's start resolves none (its ensure_pto_isa_root clones it)."""
    return ''


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_finish(session):
    """PyPTO's conftest starts the --precompile-workers pipeline here; its start_pipeline first resolves (clones)
    the pinned pto-isa checkout for device builds, which pldrun does not make: not during this hook."""
    del session
    rt = sys.modules.get('pypto.runtime')
    own = rt is not None and 'ensure_pto_isa_root' in vars(rt)
    old = vars(rt).get('ensure_pto_isa_root') if own else None
    if own:
        rt.ensure_pto_isa_root = _no_pto_isa
    try:
        yield
    finally:
        if own and rt.ensure_pto_isa_root is _no_pto_isa:
            rt.ensure_pto_isa_root = old


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """Before the tests run (every conftest and test module imported): patch the harness, if one is loaded."""
    del session
    for name in HARNESS_MODULES:
        h = sys.modules.get(name)
        if h is not None and hasattr(h, 'TestRunner'):
            patch(h)


# Last: pldrun.pypto imports this module's hooks at its end, and this module uses pldrun.pypto (either may be
# imported first).
from . import pypto as plugin  # noqa: E402
