"""test_pypto.py - the pytest plugin pldrun.pypto (python/pldrun/pypto.py) on a stand-in PyPTO (CTest python_pypto).

CI has no PyPTO, so this test writes a stand-in `pypto` package into a temp dir with the surface the plugin
patches, as PyPTO e2d0f78 has it (names and call paths only, none of its code): `pypto.ir.compile` (whose
`generate` fails like a machine without ptoas unless skip_ptoas=True), `DistributedCompiledProgram.__call__`
calling `pypto.runtime.distributed_runner.execute_distributed(self, coerced, config)` and `prepare()`,
`CompiledProgram.__call__` calling `pypto.runtime.runner.execute_compiled(work_dir, coerced, platform=,
device_id=)`, return-style calls that allocate the Out parameters and return one tensor or a tuple, scalars
passed as ctypes values; the stand-in runtimes fail when called (no simpler here). A conftest like PyPTO's
turns `--device 0-3` into the `device_ids` fixture. Then it runs PyPTO-style test files under
`python3 -m pytest -p pldrun.pypto` in a subprocess and checks each test's outcome and message (JUnit XML):
capture and no ptoas (codegen run with skip_ptoas=True; its error raised where it is the program's, PyPTO's
PartialCodegenError, nothing generated where it is this machine's), Out tensors starting from
the caller's contents, a closed worker's error in PyPTO's words, argument mapping (in place at P = 2 and 4, PyPTO's printed form of
tests/examples/01_scale_bias against pldrun.run, return style, tuple returns, scalars, next_levels/<name>
entries), prepare()'s worker, pldrun's failures with their diagnostics (a deadlock),
SubWorkers run from the printed bodies (tests/python/subworker/host_sub.pld at P = 2, torch tensors when torch is
real), and refused with the reason on a pldrun without the Python bridge (PLDRUN_NO_PYTHON=1); prepare()
persistent windows kept without reset across dispatches (prepare(persistent=True,
reset_persistent_windows=False) at P = 2 and 4: the epoch cell of programs/tutorial/deferred_completion.pld
counts the dispatches; zero again with PyPTO's default reset); prepare() callbacks and device tensors refused
with the reason (fail, or xfail on request), PyPTO absent or
without a point the plugin patches; and
which printed functions count as SubWorkers (not PyPTO's InCore kernels, printed role=SubWorker).
torch: the real one when importable (Debian python3-torch), else a stand-in module written next to the
stand-in PyPTO (the test prints which).
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))

STANDIN = {
    'pypto/__init__.py': 'from . import ir, runtime\n',
    'pypto/ir/__init__.py': 'from .compile import compile\nfrom .compiled_program import CompiledProgram\n',
    'pypto/ir/program.py': '''
class Program:
    """Stand-in for a parsed @pl.program: its printed text and what PyPTO's IR knows of the entry."""
    def __init__(self, name, text, params, returns=0, distributed=True):
        self.name, self._text, self.params, self.returns, self.distributed = name, text, params, returns, distributed
    def as_python(self, prefix="pl", concise=False, format=True):
        return self._text
''',
    'pypto/backend/__init__.py': '',
    'pypto/backend/pto_backend.py': '''
class PartialCodegenError(RuntimeError):
    """Codegen failed after producing some output files (PyPTO's name and fields)."""
    def __init__(self, message, files):
        super().__init__(message)
        self.files = files
''',
    'pypto/ir/compile.py': '''
import os
from pypto.backend.pto_backend import PartialCodegenError
from .compiled_program import CompiledProgram
from .distributed_compiled_program import DistributedCompiledProgram, DistributedConfig

REPORT = "1 function(s) failed to compile:\\n  kernel | stand-in: two slots of one buffer are live at once"

def generate(program, output_dir, skip_ptoas=False, **kwargs):
    if getattr(program, "codegen_fails", False):   # this machine's reason
        raise ModuleNotFoundError("No module named 'stand_in_codegen_helper'")
    if getattr(program, "codegen_error", None) == "partial":   # the program's: PyPTO's report, some files
        raise PartialCodegenError(REPORT, {"kernels/other.pto": "// stand-in kernel that compiled\\n"})
    if getattr(program, "codegen_error", None) == "report":   # the program's, nothing generated
        raise RuntimeError(REPORT)
    if not skip_ptoas:
        raise RuntimeError("stand-in codegen: the ptoas binary is not installed")
    return {"orchestration/host_orch.py": "# stand-in codegen of %s\\n" % program.name}

def _write_files(files, output_dir):
    for rel, text in files.items():
        path = os.path.join(output_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

def compile(program, output_dir=None, strategy=None, dump_passes=True, backend_type=None, skip_ptoas=False,
            platform=None, distributed_config=None, **kwargs):
    if output_dir is None:
        output_dir = os.path.join(os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output", program.name)
    os.makedirs(output_dir, exist_ok=True)
    try:
        files = generate(program, output_dir, skip_ptoas=skip_ptoas)
    except PartialCodegenError as exc:   # as PyPTO: what was generated is written, the error raised
        _write_files(exc.files, output_dir)
        raise
    _write_files(files, output_dir)
    if program.distributed:
        return DistributedCompiledProgram(program, output_dir, platform=platform,
                                          distributed_config=distributed_config or DistributedConfig())
    return CompiledProgram(program, output_dir, platform=platform)
''',
    'pypto/ir/compiled_program.py': '''
import ctypes
import os
import torch

def coerce(program, args):
    """PyPTO's calling convention: one argument per parameter (in place), or the inputs only when the entry
    returns something (the Out tensors are allocated and returned); scalars as ctypes values."""
    params = program.params
    outs = [i for i, p in enumerate(params) if p[1] == "out"]
    n_in = len(params) - len(outs)
    return_style = program.returns > 0 and len(args) == n_in and len(args) != len(params)
    if len(args) == len(params):
        full = list(args)
    elif return_style:
        it = iter(args)
        full = [torch.zeros(p[2], dtype=getattr(torch, p[3])) if i in outs else next(it) for i, p in enumerate(params)]
    else:
        raise TypeError("expects %d arguments, got %d" % (len(params), len(args)))
    coerced = []
    for p, a in zip(params, full):
        if p[1] == "scalar":
            coerced.append(getattr(ctypes, "c_" + p[3])(a))
        elif not isinstance(a, torch.Tensor):
            raise TypeError("parameter %r: expected a torch.Tensor, got %s" % (p[0], type(a).__name__))
        else:
            coerced.append(a)
    return coerced, return_style, outs

def returned(coerced, return_style, outs):
    if not return_style:
        return None
    got = [coerced[i] for i in outs]
    return got[0] if len(got) == 1 else tuple(got)

class CompiledProgram:
    def __init__(self, program, output_dir, platform=None):
        self._program, self._output_dir, self._platform = program, os.path.abspath(output_dir), platform or "a2a3sim"
    output_dir = property(lambda self: self._output_dir)
    platform = property(lambda self: self._platform)
    def __fspath__(self):
        return self._output_dir
    def __call__(self, *args, config=None):
        from pypto.runtime.runner import execute_compiled
        coerced, rs, outs = coerce(self._program, args)
        execute_compiled(self._output_dir, coerced, platform=self._platform, device_id=0)
        return returned(coerced, rs, outs)
''',
    'pypto/ir/distributed_compiled_program.py': '''
import os
from dataclasses import dataclass, field
from .compiled_program import coerce, returned

@dataclass
class DistributedConfig:
    device_ids: list = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0

class DistributedCompiledProgram:
    def __init__(self, program, output_dir, platform=None, distributed_config=None):
        self._program, self._output_dir = program, os.path.abspath(output_dir)
        self._platform = platform or "a2a3sim"
        self._distributed_config = distributed_config or DistributedConfig()
    output_dir = property(lambda self: self._output_dir)
    platform = property(lambda self: self._platform)
    program = property(lambda self: self._program)
    def __fspath__(self):
        return self._output_dir
    def __call__(self, *args, config=None):
        from pypto.runtime.distributed_runner import execute_distributed
        coerced, rs, outs = coerce(self._program, args)
        execute_distributed(self, coerced, config)
        return returned(coerced, rs, outs)
    def prepare(self, config=None, *, extra_compiled=(), persistent=False, reset_persistent_windows=None,
                callbacks=None, sub_worker_overrides=None, startup_timeout_s=None):
        from pypto.runtime.distributed_runner import DistributedWorker
        return DistributedWorker([self, *extra_compiled], config, persistent=persistent, callbacks=callbacks)
''',
    'pypto/runtime/__init__.py': 'from .runner import RunConfig, execute_compiled\n'
                                 'from .distributed_runner import DistributedWorker\n'
                                 'from .device_tensor import DeviceTensor, StackedDeviceTensor\n',
    'pypto/runtime/device_tensor.py': '''
import torch

class DeviceTensor:
    def __init__(self, data_ptr, shape, dtype, *, buffer=None):
        if not isinstance(data_ptr, int) or data_ptr <= 0:
            raise ValueError("DeviceTensor.data_ptr must be a positive int, got %r" % (data_ptr,))
        if buffer is not None and (int(buffer.base) != data_ptr or not callable(buffer.tensor)):
            raise ValueError("DeviceTensor.buffer does not match data_ptr")
        self.data_ptr, self.shape, self.dtype, self.buffer = data_ptr, tuple(shape), dtype, buffer
    @property
    def nbytes(self):
        n = torch.zeros((1,), dtype=self.dtype).numpy().itemsize
        for d in self.shape:
            n *= d
        return n

class StackedDeviceTensor:
    def __init__(self, shards, full_shape, worker_ids):
        self.shards, self.full_shape, self.worker_ids = tuple(shards), tuple(full_shape), tuple(worker_ids)
    shape = property(lambda self: self.full_shape)
    dtype = property(lambda self: self.shards[0].dtype)
''',
    'pypto/runtime/runner.py': '''
class RunConfig:
    def __init__(self, platform="a2a3sim", device_id=0):
        self.platform, self.device_id = platform, device_id

def execute_compiled(work_dir, args, *, platform, device_id, **kwargs):
    raise RuntimeError("stand-in runtime: simpler is not installed")
''',
    'pypto/runtime/distributed_runner.py': '''
import abc

def execute_distributed(compiled, coerced_args, config=None):
    raise RuntimeError("stand-in runtime: simpler is not installed")

class DistributedWorker(abc.ABC):
    def __init__(self, compiled, config=None, **kwargs):
        raise RuntimeError("stand-in runtime: simpler is not installed")
''',
}

# A conftest like PyPTO's tests/st/conftest.py for what these tests use (written here): --device and the
# device_ids fixture ("0-3" -> [0, 1, 2, 3]).
CONFTEST = '''
import pytest

def pytest_addoption(parser):
    parser.addoption("--device", default="0")

@pytest.fixture(scope="session")
def device_ids(request):
    ids = []
    for tok in request.config.getoption("--device").split(","):
        lo, _, hi = tok.partition("-")
        ids += list(range(int(lo), int(hi or lo) + 1))
    return ids
'''

# A stand-in torch (when torch is not importable): what pldrun's API and the tests below touch.
FAKE_TORCH = '''
import numpy as np
float32, int32, int16, bfloat16 = np.float32, np.int32, np.int16, "bfloat16"

class Tensor:
    def __init__(self, a):
        self.a = a
    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype.type)
    def detach(self):
        return self
    cpu = contiguous = detach
    def numpy(self):
        return self.a
    def reshape(self, shape):
        return Tensor(self.a.reshape(shape))
    def copy_(self, src):
        self.a[...] = src.a
        return self
    def __getitem__(self, i):
        return Tensor(self.a[i])
    def __add__(self, x):
        return Tensor(self.a + (x.a if isinstance(x, Tensor) else x))
    def __mul__(self, x):
        return Tensor(self.a * x)
    def data_ptr(self):
        return self.a.ctypes.data
    def tolist(self):
        return self.a.tolist()
    def zero_(self):
        self.a[...] = 0
        return self

class no_grad:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False

def from_numpy(a):
    return Tensor(a)

def zeros(shape, dtype=np.float32):
    return Tensor(np.zeros(shape, dtype=dtype))

def full(shape, value, dtype=np.float32):
    return Tensor(np.full(shape, value, dtype=dtype))

def allclose(x, y, rtol=1e-5, atol=1e-8):
    return bool(np.allclose(x.a, y.a, rtol=rtol, atol=atol))
'''


def program(rel, fixed_nr=None, tuple_return=False, drop_host=False, subworker=False, accumulate=False):
    with open(os.path.join(REPO, rel)) as f:
        text = f.read()
    if fixed_nr is not None:
        text = text.replace('NR = pl.dynamic("NR")', 'NR = %d' % fixed_nr)
    if tuple_return:
        text = text.replace(') -> pl.Tensor[[NR, ROWS, COLS], pl.FP32]:\n        # the rank',
                            ') -> tuple[pl.Tensor[[NR, ROWS, COLS], pl.FP32], pl.Tensor[[NR, 1, 1], pl.INT32]]:\n'
                            '        # the rank').replace('        return ys\n', '        return ys, ids\n')
    if accumulate:   # the kernel adds into its Out tensor (as an atomic-add store does): it reads y first
        text = text.replace('t = pl.load(x, [0, 0], [ROWS, COLS])',
                            't = pl.add(pl.load(x, [0, 0], [ROWS, COLS]), pl.load(y, [0, 0], [ROWS, COLS]))')
    if drop_host:
        text = text[:text.index('    @pl.function(level=pl.Level.HOST')]
    if subworker:
        text = text.replace('    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)',
                            '    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n'
                            '    def verify(self, ys: pl.Tensor[[NR, ROWS, COLS], pl.FP32]):\n'
                            '        assert ys is not None\n\n'
                            '    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)')
    return text


# PyPTO-style tests (torch tensors, ir.compile, DistributedConfig(device_ids=device_ids[:n]), torch.allclose).
TESTS = '''
import ctypes
import os

import numpy as np
import pytest
import torch
from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.ir.program import Program
from pypto.runtime.runner import execute_compiled

import pldrun
import pldrun.pypto as plugin

TEXTS = %(texts)r
HELLO_PARAMS = [("xs", "in", None, "float32"), ("ys", "out", [2, 4, 16], "float32"),
                ("ids", "out", [2, 1, 1], "int32")]
XS_OUTS = [("xs", "in", None, "float32"), ("outs", "out", None, "float32")]
SINGLE_PARAMS = [("x", "in", [4, 16], "float32"), ("y", "out", [4, 16], "float32"),
                 ("ids", "out", [1, 1], "int32"), ("rank", "scalar", None, "int32")]
DEFER_PARAMS = [("inp", "in", None, "int32"), ("outs", "out", None, "int32"), ("epochs", "out", None, "int32")]
SUB_PARAMS = [("xs", "in", None, "float32"), ("k", "scalar", None, "float"), ("ys", "out", [2, 1, 64], "float32"),
              ("sums", "out", [2, 1], "float32")]


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


@pytest.mark.parametrize("n_ranks", [2, 4])
def test_inplace(n_ranks, device_ids):
    prog = Program("HostAllGather", TEXTS["allgather"], XS_OUTS)
    dc = DistributedConfig(device_ids=device_ids[:n_ranks])
    compiled = ir.compile(prog, platform="a2a3sim", distributed_config=dc)
    xs_np = np.arange(n_ranks * 64, dtype=np.float32).reshape(n_ranks, 1, 64) * 0.5 - 3
    xs, outs = t(xs_np.copy()), torch.zeros((n_ranks, n_ranks, 64), dtype=torch.float32)
    assert compiled(xs, outs) is None
    want = t(np.broadcast_to(xs_np[:, 0, :], (n_ranks, n_ranks, 64)).copy())
    assert torch.allclose(outs, want)
    assert plugin.state.last_ranks == n_ranks
    assert plugin.state.last_result.summary.startswith("pldrun: %%d ranks" %% n_ranks)
    with open(os.path.join(compiled.output_dir, "pldrun_program.pld")) as f:
        assert f.read() == TEXTS["allgather"]



def test_printed_form_matches_api(device_ids):
    """PyPTO's own printed form (as_python() at e2d0f78): FP32 and FP16 inputs, two Out tensors."""
    params = [("xs", "in", None, "float32"), ("ws", "in", None, "float16"), ("ys", "out", None, "float32"),
              ("hs", "out", None, "float32")]
    prog = Program("ScaleBias", TEXTS["scale_bias"], params)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    rng = np.random.default_rng(5)
    xs_np = rng.standard_normal((2, 8, 64)).astype(np.float32)
    ws_np = rng.standard_normal((2, 8, 64)).astype(np.float16)
    ys, hs = torch.zeros((2, 8, 64), dtype=torch.float32), torch.zeros((2, 8, 64), dtype=torch.float32)
    compiled(t(xs_np), t(ws_np), ys, hs)
    ref = pldrun.run(TEXTS["scale_bias"], {"xs": xs_np, "ws": ws_np}, ranks=2)
    assert np.array_equal(ys.numpy(), ref["ys"]) and np.array_equal(hs.numpy(), ref["hs"])
    assert np.any(ref["ys"]) and np.any(ref["hs"])

def test_tuple_return(device_ids):
    prog = Program("HelloRank", TEXTS["hello_tuple"], HELLO_PARAMS, returns=2)
    compiled = ir.compile(prog, platform="a2a3sim", distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    xs_np = np.arange(2 * 4 * 16, dtype=np.float32).reshape(2, 4, 16)
    ys, ids = compiled(t(xs_np))
    assert torch.allclose(ys, t(xs_np + np.arange(2, dtype=np.float32).reshape(2, 1, 1)))
    assert ids.numpy().reshape(-1).tolist() == [0, 1]


def test_single_device_scalar(tmp_path):
    prog = Program("HelloRank", TEXTS["single"], SINGLE_PARAMS, distributed=False)
    compiled = ir.compile(prog, output_dir=str(tmp_path), platform="a2a3sim")
    x = t(np.arange(64, dtype=np.float32).reshape(4, 16))
    y, ids = torch.zeros((4, 16), dtype=torch.float32), torch.zeros((1, 1), dtype=torch.int32)
    compiled(x, y, ids, 3)
    assert torch.allclose(y, x + 3.0)
    assert ids.numpy().tolist() == [[3]]
    assert plugin.state.last_ranks == 1


def test_next_levels_entry(tmp_path):
    prog = Program("HelloRank", TEXTS["single"], SINGLE_PARAMS, distributed=False)
    ir.compile(prog, output_dir=str(tmp_path), platform="a2a3sim")
    x = t(np.ones((4, 16), dtype=np.float32))
    y, ids = torch.zeros((4, 16), dtype=torch.float32), torch.zeros((1, 1), dtype=torch.int32)
    execute_compiled(str(tmp_path / "next_levels" / "per_rank"), [x, y, ids, ctypes.c_int32(5)], platform="a2a3sim",
                     device_id=0)
    assert torch.allclose(y, x + 5.0)
    assert ids.numpy().tolist() == [[5]]


def test_direct_uint_plain_output(tmp_path):
    """The direct call (execute_compiled) as PyPTO's device run: a UINT32 tensor given as torch.int32 (high bit
    set) goes as the same bits, and a plain pl.Tensor the program writes (`out`) is filled in place."""
    prog = Program("CopyU32Plain", TEXTS["u32_plain"], [("a", "in", [16, 16], "int32"), ("out", "in", [16, 16], "int32")],
                   distributed=False)
    ir.compile(prog, output_dir=str(tmp_path), platform="a2a3sim")
    a_np = (np.arange(256, dtype=np.int64).reshape(16, 16) * 16777259 - 2 ** 31).astype(np.int32)
    a, out = t(a_np.copy()), torch.zeros((16, 16), dtype=torch.int32)
    execute_compiled(str(tmp_path), [a, out], platform="a2a3sim", device_id=0)
    assert np.array_equal(out.numpy(), a_np), out.numpy().ravel()[:4]
    assert np.array_equal(a.numpy(), a_np)


def test_expect_fail_direct_external(tmp_path):
    """A hand-written C++ kernel (external_source=, printed with an empty body) called directly: refused."""
    text = TEXTS["u32_plain"].replace("role=pl.Role.SubWorker)", 'role=pl.Role.SubWorker, external_source="k/copy.cpp")', 1)
    ir.compile(Program("CopyU32Plain", text, [], distributed=False), output_dir=str(tmp_path), platform="a2a3sim")
    a, out = t(np.zeros((16, 16), np.int32)), torch.zeros((16, 16), dtype=torch.int32)
    execute_compiled(str(tmp_path), [a, out], platform="a2a3sim", device_id=0)


def test_skip_ptoas_keeps_codegen(tmp_path):
    prog = Program("HostAllGather", TEXTS["allgather"], [])
    ir.compile(prog, output_dir=str(tmp_path), skip_ptoas=True)
    assert (tmp_path / "orchestration" / "host_orch.py").is_file()
    assert (tmp_path / "pldrun_program.pld").read_text() == TEXTS["allgather"]


def test_codegen_artifacts(tmp_path, device_ids):
    """Without skip_ptoas the plugin still runs PyPTO's codegen without ptoas, as PyPTO's host-tensor tests read
    next_levels/ and the orchestration source before calling; the call runs on pldrun."""
    prog = Program("HostAllGather", TEXTS["allgather"], XS_OUTS)
    compiled = ir.compile(prog, output_dir=str(tmp_path), distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    assert (tmp_path / "orchestration" / "host_orch.py").read_text() == "# stand-in codegen of HostAllGather\\n"
    xs, outs = t(np.arange(2 * 64, dtype=np.float32).reshape(2, 1, 64)), torch.zeros((2, 2, 64), dtype=torch.float32)
    compiled(xs, outs)
    assert torch.allclose(outs[1], xs[:, 0, :])


def test_codegen_error_raises(tmp_path):
    """PyPTO's codegen failing for the program's reason (its PartialCodegenError, or its error report with nothing
    generated) raises from ir.compile as on a machine with ptoas (PyPTO's test_memory_planner_ptoas expects it),
    after the files it did generate are written."""
    from pypto.backend.pto_backend import PartialCodegenError
    prog = Program("HostAllGather", TEXTS["allgather"], XS_OUTS)
    prog.codegen_error = "partial"
    with pytest.raises(PartialCodegenError, match="two slots of one buffer are live at once"):
        ir.compile(prog, output_dir=str(tmp_path / "partial"))
    assert (tmp_path / "partial" / "kernels" / "other.pto").is_file()
    prog.codegen_error = "report"
    with pytest.raises(RuntimeError, match="1 function.s. failed to compile"):
        ir.compile(prog, output_dir=str(tmp_path / "report"))


def test_codegen_failing_still_runs(tmp_path, device_ids):
    """Where PyPTO's codegen fails for this machine's reason (a module it imports is missing here), nothing is
    generated and the program still runs."""
    prog = Program("HostAllGather", TEXTS["allgather"], XS_OUTS)
    prog.codegen_fails = True
    compiled = ir.compile(prog, output_dir=str(tmp_path), distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    assert not (tmp_path / "orchestration").exists()
    xs, outs = t(np.arange(2 * 64, dtype=np.float32).reshape(2, 1, 64)), torch.zeros((2, 2, 64), dtype=torch.float32)
    compiled(xs, outs)
    assert torch.allclose(outs[0], xs[:, 0, :])


def test_out_keeps_contents(device_ids):
    """An Out tensor starts from what the caller passed (PyPTO copies it to the device): a kernel adding into it
    (PyPTO's atomic-add store tests) sees it."""
    prog = Program("HelloRank", TEXTS["hello_acc"], HELLO_PARAMS)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    xs = t(np.full((2, 4, 16), 3.0, dtype=np.float32))
    ys, ids = torch.full((2, 4, 16), 100.0, dtype=torch.float32), torch.zeros((2, 1, 1), dtype=torch.int32)
    compiled(xs, ys, ids)
    assert ys[:, 0, 0].tolist() == [103.0, 104.0], ys[:, 0, 0]


def test_prepare_worker(device_ids):
    prog = Program("HelloRank", TEXTS["hello"], HELLO_PARAMS, returns=1)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    ys, ids = torch.zeros((2, 4, 16), dtype=torch.float32), torch.zeros((2, 1, 1), dtype=torch.int32)
    with compiled.prepare(persistent=True) as rt:
        for k in range(2):
            xs = t(np.full((2, 4, 16), 10.0 * k, dtype=np.float32))
            rt(xs, ys, ids)
            assert torch.allclose(ys, xs + t(np.arange(2, dtype=np.float32).reshape(2, 1, 1)))
        xs = t(np.full((2, 4, 16), 7.0, dtype=np.float32))
        rt.submit(compiled, xs, ys, ids).result()
        assert torch.allclose(ys[1], xs[1] + 1.0)
    for use in (lambda: rt.register(compiled), lambda: rt.run(compiled, xs, ys, ids)):
        with pytest.raises(RuntimeError, match="called after close"):   # PyPTO's words, matched by its tests
            use()


def test_prepare_unknown_callback(device_ids):
    prog = Program("HelloRank", TEXTS["subworker"], HELLO_PARAMS, returns=1)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:1]))
    with pytest.raises(ValueError, match="not sub-workers"):
        compiled.prepare(callbacks={"nope": print})


def rank_added(a, times=1):
    return t(a + times * np.arange(2, dtype=np.float32).reshape(2, 1, 1))


def test_device_tensor(device_ids):
    """Resident tensors of prepare()'s worker: an uploaded input, an output read back with copy_from and fed to the
    next dispatch, copy_to over a resident tensor; PyPTO's errors (use after free_tensor, a copy larger than
    the allocation, a pointer not from malloc, after close)."""
    prog = Program("HelloRank", TEXTS["hello"], HELLO_PARAMS, returns=1)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    xs_np = np.arange(2 * 4 * 16, dtype=np.float32).reshape(2, 4, 16)
    ids = torch.zeros((2, 1, 1), dtype=torch.int32)
    with compiled.prepare() as rt:
        xs = rt.alloc_tensor((2, 4, 16), torch.float32, init=t(xs_np))
        ys = rt.alloc_tensor((2, 4, 16), torch.float32)
        zs = rt.alloc_tensor((2, 4, 16), torch.float32)
        assert type(xs).__name__ == "DeviceTensor" and len(rt._owned_tensors) == 3
        rt(xs, ys, ids)
        rt(ys, zs, ids)                      # the resident output of the first dispatch is the second's input
        back = torch.zeros((2, 4, 16), dtype=torch.float32)
        rt.copy_from(back.data_ptr(), zs.data_ptr, zs.nbytes)
        assert torch.allclose(back, rank_added(xs_np, 2))
        new = t(np.full((2, 4, 16), 5.0, dtype=np.float32))
        rt.copy_to(xs.data_ptr, new.data_ptr(), xs.nbytes)
        rt.run(compiled, xs, ys, ids)
        rt.copy_from(back.data_ptr(), ys.data_ptr, ys.nbytes)
        assert torch.allclose(back, rank_added(new.numpy()))
        with pytest.raises(ValueError, match="init must have shape"):
            rt.alloc_tensor((2, 4, 8), torch.float32, init=new)
        narrow = rt.alloc_tensor((2, 4, 8), torch.float32)
        with pytest.raises(TypeError, match=r"Parameter 'ys' expects shape \\(2, 4, 16\\); got DeviceTensor shape"):
            rt(xs, narrow, ids)
        rt.free_tensor(narrow)
        with pytest.raises(ValueError, match="4096 bytes exceeds the 512-byte backing"):
            rt.copy_to(xs.data_ptr, new.data_ptr(), 4096)
        rt.free_tensor(xs)
        rt.free_tensor(xs)                   # a second free_tensor does nothing (PyPTO's)
        with pytest.raises(ValueError, match="Parameter 'xs': DeviceTensor is not a live allocation owned by this"):
            rt(xs, ys, ids)
        ptr = rt.malloc(64)
        with pytest.raises(ValueError, match="requires the allocation base"):
            rt.free(ptr + 16)
        rt.free(ptr)
        assert len(rt._owned_tensors) == 2
    assert len(rt._owned_tensors) == 0       # close() frees what is left
    with pytest.raises(RuntimeError, match="called after close"):
        rt.alloc_tensor((4,), torch.float32)


def test_stacked_device_tensor(device_ids):
    """alloc_stacked_tensor: shard i resident on worker_ids[i] (permuted here), the host source zeroed after the
    upload; a stacked output written back to its shards (copy_stacked_from); reused across dispatches."""
    prog = Program("HelloRank", TEXTS["hello"], HELLO_PARAMS, returns=1)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    xs_np = np.arange(2 * 4 * 16, dtype=np.float32).reshape(2, 4, 16) - 7
    host = t(xs_np.copy())
    ids = torch.zeros((2, 1, 1), dtype=torch.int32)
    with compiled.prepare() as rt:
        xs = rt.alloc_stacked_tensor(host, worker_ids=[1, 0])
        ys = rt.alloc_stacked_tensor(torch.zeros((2, 4, 16), dtype=torch.float32))
        host.zero_()
        assert type(xs).__name__ == "StackedDeviceTensor" and xs.worker_ids == (1, 0)
        for _ in range(2):
            rt(xs, ys, ids)
            back = torch.zeros((2, 4, 16), dtype=torch.float32)
            rt.copy_stacked_from(ys, back)
            assert torch.allclose(back, rank_added(xs_np))
        rt.copy_stacked_from(xs, back)
        assert torch.allclose(back, t(xs_np))
        rt.free_stacked_tensor(xs)
        with pytest.raises(ValueError, match="Parameter 'xs' shard 0: DeviceTensor is not a live allocation"):
            rt(xs, ys, ids)


def test_hand_built_worker(device_ids):
    """DistributedWorker([a, b]) built by hand: two programs sharing one resident tensor, rt(...) ambiguous,
    register() handles closed by close()."""
    from pypto.runtime.distributed_runner import DistributedWorker
    dc = DistributedConfig(device_ids=device_ids[:2])
    first = ir.compile(Program("HelloRank", TEXTS["hello"], HELLO_PARAMS, returns=1), distributed_config=dc)
    acc = ir.compile(Program("HelloRank", TEXTS["hello_acc"], HELLO_PARAMS, returns=1), distributed_config=dc)
    xs_np = np.full((2, 4, 16), 3.0, dtype=np.float32)
    ids = torch.zeros((2, 1, 1), dtype=torch.int32)
    rt = DistributedWorker([first, acc])
    assert isinstance(rt, DistributedWorker)
    with pytest.raises(TypeError, match="ambiguous"):
        rt(t(xs_np), ids)
    kv = rt.alloc_tensor((2, 4, 16), torch.float32)
    rt.run(first, t(xs_np), kv, ids)               # kv = xs + rank
    handle = rt.register(acc)
    assert handle.compiled is acc
    handle(t(xs_np), kv, ids)                      # kv = xs + kv + rank
    back = torch.zeros((2, 4, 16), dtype=torch.float32)
    rt.copy_from(back.data_ptr(), kv.data_ptr, kv.nbytes)
    assert torch.allclose(back, rank_added(2 * xs_np, 2))
    rt.close()
    assert handle.closed and len(rt._owned_tensors) == 0
    with pytest.raises(RuntimeError, match="called after close"):
        rt.register(first)


@pytest.mark.parametrize("n_ranks", [2, 4])
def test_persistent_windows_kept(n_ranks, device_ids):
    """prepare(persistent=True, reset_persistent_windows=False): the windows (the epoch cell, the signal) go on
    from one dispatch to the next, each a pldrun run, through the worker's state directory (removed by
    close()); with PyPTO's default reset they start at zero every time."""
    prog = Program("DeferredCompletion", TEXTS["deferred"], DEFER_PARAMS)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:n_ranks]))
    inp_np = np.arange(n_ranks * 8, dtype=np.int32).reshape(n_ranks, 1, 8) + 5
    inp = t(inp_np)
    outs, epochs = torch.zeros((n_ranks, 16, 8), dtype=torch.int32), torch.zeros((n_ranks, 1, 1), dtype=torch.int32)
    want = np.broadcast_to(np.roll(inp_np, 1, axis=0), (n_ranks, 16, 8))
    with compiled.prepare(persistent=True, reset_persistent_windows=False) as rt:
        state_dir = rt.state_dir
        for k in (1, 2, 3):
            rt(inp, outs, epochs)
            assert epochs.numpy().flatten().tolist() == [k] * n_ranks, (k, epochs.numpy())
            assert np.array_equal(outs.numpy(), want)
        assert os.path.isfile(os.path.join(state_dir, "p0", "windows.txt"))
        assert "--load-windows" in plugin.state.last_result.command
    assert not os.path.exists(state_dir)
    with compiled.prepare(persistent=True) as rt:   # reset before each reuse (PyPTO's default)
        for k in (1, 2):
            rt(inp, outs, epochs)
            assert epochs.numpy().flatten().tolist() == [1] * n_ranks, (k, epochs.numpy())
        assert rt.state_dir is None and "--load-windows" not in plugin.state.last_result.command
    with pytest.raises(ValueError, match="requires persistent=True"):
        compiled.prepare(reset_persistent_windows=True)

def test_subworker(device_ids):
    """SubWorkers run in the ranks' embedded Python from the printed bodies, on torch tensors when torch is real."""
    prog = Program("HostSubWorkers", TEXTS["subworker"], SUB_PARAMS, returns=1)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    xs_np = np.arange(2 * 64, dtype=np.float32).reshape(2, 1, 64) - 40
    ys, sums = torch.zeros((2, 1, 64), dtype=torch.float32), torch.zeros((2, 1), dtype=torch.float32)
    compiled(t(xs_np), 3.0, ys, sums)
    assert torch.allclose(ys, t(xs_np * 3 + 1 + xs_np))
    assert torch.allclose(sums, t(xs_np.sum(axis=2)))
    assert plugin.state.subworker_tensors == ("torch" if hasattr(torch, "__version__") else "numpy")
    assert "--subworker-tensors" in plugin.state.last_result.command


def test_subworker_callbacks(device_ids):
    """prepare(callbacks=...): closures run in this process on PyPTO's MappedArg surface (dtype, shapes, strides,
    buffer; scalars as they are), once per rank; what a callback writes into an Out tensor is the result."""
    prog = Program("HostSubWorkers", TEXTS["subworker"], SUB_PARAMS, returns=1)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    seen = []

    def stats(args):
        xs, sums = args
        assert str(xs.dtype) == "DataType.FLOAT32" and xs.shapes == (2, 1, 64) and xs.strides == (64, 64, 1)
        x = np.ndarray(xs.shapes, dtype=np.float32, buffer=xs.buffer)
        np.ndarray(sums.shapes, dtype=np.float32, buffer=sums.buffer)[:] = x.max(axis=2) * 10
        seen.append("stats")

    def check(args):
        assert len(args) == 3 and args[2] == 3.0, args
        seen.append("check")

    xs_np = np.arange(2 * 64, dtype=np.float32).reshape(2, 1, 64) - 40
    ys, sums = torch.zeros((2, 1, 64), dtype=torch.float32), torch.zeros((2, 1), dtype=torch.float32)
    with compiled.prepare(callbacks={"stats": stats, "check": check}) as rt:
        rt(t(xs_np), 3.0, ys, sums)
    assert torch.allclose(ys, t(xs_np * 3 + 1 + xs_np))          # prep (the program's body) and the chips ran
    assert torch.allclose(sums, t(xs_np.max(axis=2) * 10))         # the callback's result, not the body's sum
    assert sorted(seen) == ["check", "check", "stats", "stats"]    # once per rank
    assert sorted(rt.callback_calls) == [("check", 0), ("check", 1), ("stats", 0), ("stats", 1)]
    with pytest.raises(TypeError, match="must accept a single positional argument"):
        compiled.prepare(callbacks={"stats": lambda: None})


def test_subworker_callback_error(device_ids):
    """A callback's exception fails the run with its traceback, located at the SubWorker's call."""
    prog = Program("HostSubWorkers", TEXTS["subworker"], SUB_PARAMS, returns=1)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:1]))

    def check(args):
        raise ValueError("refused by the test's closure")

    xs = t(np.ones((2, 1, 64), dtype=np.float32))
    with compiled.prepare(sub_worker_overrides={"check": check}) as rt:
        rt(xs, 3.0, torch.zeros((2, 1, 64), dtype=torch.float32), torch.zeros((2, 1), dtype=torch.float32))


def test_expect_fail_deadlock(device_ids):
    prog = Program("DivergentWait", TEXTS["deadlock"], XS_OUTS)
    compiled = ir.compile(prog, distributed_config=DistributedConfig(device_ids=device_ids[:2]))
    compiled(t(np.ones((2, 1, 64), dtype=np.float32)), torch.zeros((2, 1, 64), dtype=torch.float32))
'''


def write_standin(root, fake_torch):
    for rel, src in STANDIN.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(src.lstrip('\n'))
    if fake_torch:
        with open(os.path.join(root, 'torch.py'), 'w') as f:
            f.write(FAKE_TORCH)


def torch_missing():
    try:
        import torch  # noqa: F401, PLC0415
        print('with torch', torch.__version__)
        return False
    except ImportError:
        print('with the stand-in torch module (torch is not importable)')
        return True


def run_pytest(tmp_path, args, with_pypto=True, renamed_generate=False, extra_env=None):
    """Runs the PyPTO-style tests under -p pldrun.pypto; returns (exit status, output, {name: (outcome, message)})."""
    lib, work = tmp_path / 'lib', tmp_path / 'work'
    lib.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    if with_pypto:
        write_standin(str(lib), torch_missing())
    if renamed_generate:   # another PyPTO whose codegen entry has another name
        path = lib / 'pypto' / 'ir' / 'compile.py'
        path.write_text(path.read_text().replace('generate(', 'generate_all('))
    texts = {'allgather': program('programs/host/allgather.pld'),
             'hello': program('programs/tutorial/hello_rank.pld', fixed_nr=2),
             'hello_acc': program('programs/tutorial/hello_rank.pld', fixed_nr=2, accumulate=True),
             'hello_tuple': program('programs/tutorial/hello_rank.pld', fixed_nr=2, tuple_return=True),
             'single': program('programs/tutorial/hello_rank.pld', drop_host=True),
             'subworker': program('tests/python/subworker/host_sub.pld'),
             'deadlock': program('tests/mpi/programs/coll_neg_divergent_wait.pld'),
             'deferred': program('programs/tutorial/deferred_completion.pld'),
             'scale_bias': program('tests/examples/01_scale_bias.printed_fmt.pld'),
             'u32_plain': HARNESS_U32.replace('HarnessCopyU32', 'CopyU32Plain').replace(
                 'orchestrator(self, a: pl.Tensor[[16, 16], pl.UINT32], out: pl.Out[pl.Tensor[[16, 16], pl.UINT32]])',
                 'orchestrator(self, a: pl.Tensor[[16, 16], pl.UINT32], out: pl.Tensor[[16, 16], pl.UINT32])')}
    assert 'out: pl.Tensor[[16, 16], pl.UINT32]) ->' in texts['u32_plain']
    assert texts['hello_acc'] != texts['hello']
    assert texts['hello_tuple'] != texts['hello'] and 'return ys, ids' in texts['hello_tuple']
    (work / 'conftest.py').write_text(CONFTEST)
    (work / 'test_pypto_like.py').write_text(TESTS % {'texts': texts})
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join([str(lib), os.path.join(REPO, 'python')])
    env.update(extra_env or {})
    xml = tmp_path / ('junit%d.xml' % len(list(tmp_path.glob('junit*.xml'))))
    cmd = [sys.executable, '-m', 'pytest', '-p', 'pldrun.pypto', '-p', 'no:cacheprovider', '-q', '-rA',
           '--junitxml', str(xml), '--device', '0-3', '--pldrun-timeout', '5', '--pldrun-run-timeout', '120'] + args
    p = subprocess.run(cmd, cwd=str(work), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=300)
    outcomes = {}
    if xml.exists():
        for case in ET.parse(str(xml)).getroot().iter('testcase'):
            outcome, msg = 'passed', ''
            for child in case:
                if child.tag in ('failure', 'error', 'skipped'):
                    outcome = {'failure': 'failed', 'error': 'error'}.get(child.tag, child.get('type', 'skipped'))
                    msg = (child.get('message') or '') + '\n' + (child.text or '')
            outcomes[case.get('name')] = (outcome, msg)
    return p.returncode, p.stdout, outcomes


def pldrun_has_bridge():
    """Whether the pldrun under test runs SubWorkers (a build without libpython3-dev refuses them)."""
    sys.path.insert(0, os.path.join(REPO, 'python'))
    import pldrun  # noqa: PLC0415
    p = subprocess.run([pldrun.find_pldrun(None), '--check', os.path.join(HERE, 'subworker', 'host_sub.pld')],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    assert p.returncode == 0 or 'without the Python bridge' in p.stderr, p.stderr
    return p.returncode == 0


def test_plugin_on_standin_pypto(tmp_path):
    rc, out, res = run_pytest(tmp_path, [])
    print(out[-6000:])
    bridge = pldrun_has_bridge()
    print('pldrun with the Python bridge' if bridge else 'pldrun without the Python bridge: SubWorkers refused')
    for name in ('test_inplace[2]', 'test_inplace[4]', 'test_printed_form_matches_api', 'test_tuple_return',
                 'test_single_device_scalar', 'test_direct_uint_plain_output',
                 'test_next_levels_entry', 'test_skip_ptoas_keeps_codegen', 'test_codegen_artifacts',
                 'test_codegen_error_raises', 'test_codegen_failing_still_runs', 'test_out_keeps_contents',
                 'test_prepare_worker',
                 'test_prepare_unknown_callback', 'test_persistent_windows_kept[2]', 'test_persistent_windows_kept[4]',
                 'test_device_tensor', 'test_stacked_device_tensor',
                 'test_hand_built_worker') + (('test_subworker',) if bridge else ()):
        assert res.get(name, ('missing',))[0] == 'passed', (name, res.get(name))
    if not bridge:
        outcome, msg = res['test_subworker']
        assert outcome == 'failed' and 'built without the Python bridge' in msg, (outcome, msg)
    if bridge:
        assert res['test_subworker_callbacks'][0] == 'passed', res['test_subworker_callbacks']
    outcome, msg = res['test_subworker_callback_error']
    assert outcome == 'failed'
    if bridge:
        assert "PldrunFailure: HostSubWorkers on 1 rank: pldrun exited with status 70" in msg
        assert "error: the SubWorker 'check' failed: ValueError: refused by the test's closure" in out
        assert 'RuntimeError: the callback bound to check raised in the test process (rank 0):' in out
    outcome, msg = res['test_expect_fail_deadlock']
    assert outcome == 'failed'
    assert 'PldrunFailure: CollNegDivergentWait on 2 ranks: pldrun exited with status 70' in msg
    assert 'pldrun said:' in msg and 'state of every rank' in msg
    assert 'error: wait on sig[0, 0] (Ge 1)' in msg
    outcome, msg = res['test_expect_fail_direct_external']
    assert outcome == 'failed' and ('PldrunUnsupported: CopyU32Plain calls kernel, a hand-written C++ kernel '
                                    '(external_source=...): pldrun runs the printed program') in msg, msg
    assert rc == 1
    assert len(res) == 24


def test_unsupported_as_xfail(tmp_path):
    """--pldrun-unsupported=xfail, on a pldrun without the Python bridge (PLDRUN_NO_PYTHON=1 stands for one)."""
    rc, out, res = run_pytest(tmp_path, ['--pldrun-unsupported=xfail', '-k', 'subworker'],
                              extra_env={'PLDRUN_NO_PYTHON': '1'})
    print(out[-3000:])
    assert res['test_subworker'][0] == 'pytest.xfail'
    assert ('SubWorkers (Python HOST functions) are not supported by pldrun: HostSubWorkers declares prep, check, '
            'stats, and this pldrun was built without the Python bridge') in res['test_subworker'][1]
    assert res['test_subworker_callbacks'][0] == 'pytest.xfail'
    assert 'built without the Python bridge' in res['test_subworker_callbacks'][1]
    assert rc == 0


def test_without_pypto(tmp_path):
    rc, out, _ = run_pytest(tmp_path, [], with_pypto=False)
    print(out[-2000:])
    assert rc == 4
    assert 'pldrun.pypto: PyPTO is not importable in' in out
    assert "No module named 'pypto'" in out


def test_other_pypto_surface(tmp_path):
    rc, out, _ = run_pytest(tmp_path, [], renamed_generate=True)
    print(out[-2000:])
    assert rc == 4
    assert ('pldrun.pypto: this PyPTO does not have what the plugin replaces: pypto.ir.compile has no generate: '
            'pldrun.pypto patches the points of PyPTO e2d0f78') in out


def test_sub_workers_of_printed_forms():
    """PyPTO prints every InCore kernel with role=pl.Role.SubWorker at CHIP_DIE level: not a SubWorker here;
    a HOST-level SubWorker is."""
    sys.path.insert(0, os.path.join(REPO, 'python'))
    from pldrun.pypto import sub_workers  # noqa: PLC0415
    for name in sorted(os.listdir(os.path.join(REPO, 'tests', 'examples'))):
        if name.endswith('.pld'):
            text = program(os.path.join('tests', 'examples', name))
            assert 'role=pl.Role.SubWorker' in text, name
            assert sub_workers(text) == [], name
    assert sub_workers(program('programs/tutorial/hello_rank.pld', subworker=True)) == ['verify']
    assert sub_workers(program('tests/python/subworker/host_sub.pld')) == ['prep', 'check', 'stats']


# ---------------------------------------------------------------- PyPTO's PTOTestCase harness (pypto_harness.py)
# A stand-in of PyPTO's tests/st/harness (names and call paths of e2d0f78 only, none of its code):
# TestRunner.run takes a pre-compiled build from _compile_futures or compiles inline (_run_inline:
# compile_program, then "No kernels generated" without kernels/*.cpp, as under the plugin's codegen), the
# golden (_write_golden_for_test_case: data/in, data/out, golden.py with generate_inputs and the tolerances),
# and the validation of data/actual against data/out at the test's rtol/atol (_validate_after_device_run).
HARNESS = {
    'harness/__init__.py': '',
    'harness/core/__init__.py': '',
    'harness/core/test_runner.py': '''
import ctypes
import os
import shutil
import tempfile
import traceback
from dataclasses import dataclass

import numpy as np

_compile_futures = {}
_pipeline_ctx = {}
_last_device = {"value": None}

@dataclass
class RunConfig:
    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    memory_planner: object = None
    dump_passes: bool = False
    analyze_auto_scopes_for_deps: bool = False
    codegen_only: bool = False

@dataclass
class RunResult:
    passed: bool
    test_name: str
    error: str = None
    execution_time: float = 0.0

@dataclass
class CompileArtifact:
    work_dir: str
    resolved_platform: str
    error: str = None

class PTOTestCase:
    """get_name(), get_program() (a pypto.ir.program.Program), tensor_specs [(name, array or None, is_output)],
    scalar_specs [(name, value)], compute_expected(tensors), config."""
    def __init__(self, config=None):
        self.config = config or RunConfig()
    scalar_specs = ()
    def get_platform(self):
        return None
    def get_backend_type(self):
        return "Ascend910B"
    def get_strategy(self):
        return "Default"
    def get_enable_pypto_l0c_double_buffer(self):
        return None

def set_backend_type(backend_type):
    pass

def _resolve_platform(config_platform, test_case=None):
    return (test_case.get_platform() if test_case is not None else None) or config_platform

def _resolve_case_memory_planner(test_case, session_memory_planner):
    return session_memory_planner

def _cache_key(tc, resolved_platform=None, session_memory_planner=None):
    return "%s@%s@default" % (tc.get_name(), resolved_platform)

def _inline_work_dir(config, test_name, resolved_platform):
    return tempfile.mkdtemp(prefix="pypto_test_%s_" % test_name), True

def compile_program(program, work_dir, *, strategy, backend_type, **kwargs):
    from pypto import ir
    ir.compile(program, output_dir=str(work_dir), strategy=strategy, backend_type=backend_type)

def _save_data_files(data_files, data_dir):
    os.makedirs(data_dir, exist_ok=True)
    for name, t in data_files.items():
        np.save(os.path.join(data_dir, name + ".npy"), np.asarray(t.numpy()))

def _write_golden_for_test_case(test_case, output_path):
    import torch
    data = os.path.join(os.path.dirname(str(output_path)), "data")
    tensors = {n: torch.from_numpy(np.ascontiguousarray(a)) for n, a, _ in test_case.tensor_specs}
    _save_data_files(tensors, os.path.join(data, "in"))
    test_case.compute_expected(tensors)
    _save_data_files({n: tensors[n] for n, _, o in test_case.tensor_specs if o}, os.path.join(data, "out"))
    lines = ["import ctypes, os", "import numpy as np", "import torch",
             "_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'in')",
             "__outputs__ = %r" % [n for n, _, o in test_case.tensor_specs if o],
             "RTOL = %r" % test_case.config.rtol, "ATOL = %r" % test_case.config.atol,
             "def generate_inputs(params):",
             "    pairs = [(n, torch.from_numpy(np.load(os.path.join(_DATA, n + '.npy')))) for n in %r]"
             % [n for n, _, _ in test_case.tensor_specs],
             "    return pairs + [(n, ctypes.c_float(v)) for n, v in %r]" % (list(test_case.scalar_specs),)]
    with open(str(output_path), "w") as f:
        f.write("\\n".join(lines) + "\\n")

def _validate_after_device_run(tc, work_dir, execution_time):
    data = os.path.join(str(work_dir), "data")
    for n, _, o in tc.tensor_specs:
        if o:
            got, want = (np.load(os.path.join(data, d, n + ".npy")) for d in ("actual", "out"))
            if not np.allclose(got, want, rtol=tc.config.rtol, atol=tc.config.atol):
                return RunResult(False, tc.get_name(), "golden validation failed (rtol=%s, atol=%s):\\nOutput %r "
                                 "does not match golden: %s vs %s" % (tc.config.rtol, tc.config.atol, n,
                                                                     got.ravel()[:3], want.ravel()[:3]), execution_time)
    return RunResult(True, tc.get_name(), None, execution_time)

class TestRunner:
    __test__ = False
    def __init__(self, config=None):
        self.config = config or RunConfig()
    def run(self, test_case):
        platform = _resolve_platform(self.config.platform, test_case)
        cfut = _compile_futures.get(_cache_key(test_case, platform, self.config.memory_planner))
        if cfut is not None:
            artifact = cfut.result()
            if artifact.error is not None:
                return RunResult(False, test_case.get_name(), "Pre-compilation failed: %s" % artifact.error)
            raise RuntimeError("stand-in harness: simpler is not installed")
        return self._run_inline(test_case, platform)
    def _run_inline(self, test_case, resolved_platform):
        work_dir, _ = _inline_work_dir(self.config, test_case.get_name(), resolved_platform)
        try:
            compile_program(test_case.get_program(), work_dir, strategy=test_case.get_strategy(),
                            backend_type=test_case.get_backend_type())
            kernels = os.path.join(work_dir, "kernels")
            if not os.path.isdir(kernels) or not any(f.endswith(".cpp") for f in os.listdir(kernels)):
                raise ValueError("No kernels generated for %s" % test_case.get_name())
            raise RuntimeError("stand-in harness: simpler is not installed")
        except Exception as e:
            return RunResult(False, test_case.get_name(), "%s: %s\\n%s" % (type(e).__name__, e, traceback.format_exc()))
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
''',
}

HARNESS_CONFTEST = '''
import pytest
from harness.core.test_runner import RunConfig, TestRunner

@pytest.fixture(scope="session")
def test_runner():
    return TestRunner(RunConfig(platform="a2a3sim"))
'''

# One printed program in PyPTO's form (as as_python() prints a @pl.program with an InCore kernel and an
# Orchestration entry): out = (a + b) * k, with the scalar k between the tensors.
HARNESS_PROGRAM = '''# pypto.program: HarnessAxpy
import pypto.language as pl

@pl.program
class HarnessAxpy:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def kernel(a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], k: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [ROW, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        tb: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        s: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(ta, tb)
        m: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(s, k)
        out: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(m, [0, 0], out)
        return out
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def orchestrator(self, a: pl.Tensor[[16, 16], pl.FP32], k: pl.Scalar[pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out: pl.Tensor[[16, 16], pl.FP32] = self.kernel(a, b, out, k)
        return out
'''

# A UINT32 copy in the same form: PyPTO's harness gives UINT32 tensors as torch.int32 (the same bits).
HARNESS_U32 = '''# pypto.program: HarnessCopyU32
import pypto.language as pl

@pl.program
class HarnessCopyU32:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def kernel(a: pl.Tensor[[16, 16], pl.UINT32], out: pl.Out[pl.Tensor[[16, 16], pl.UINT32]]) -> pl.Tensor[[16, 16], pl.UINT32]:
        t: pl.Tile[[16, 16], pl.UINT32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        out: pl.Tensor[[16, 16], pl.UINT32] = pl.tile.store(t, [0, 0], out)
        return out
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def orchestrator(self, a: pl.Tensor[[16, 16], pl.UINT32], out: pl.Out[pl.Tensor[[16, 16], pl.UINT32]]) -> pl.Tensor[[16, 16], pl.UINT32]:
        out: pl.Tensor[[16, 16], pl.UINT32] = self.kernel(a, out)
        return out
'''

HARNESS_TESTS = '''
import os
from concurrent.futures import Future

import numpy as np
import pytest
from harness.core import test_runner as h
from pypto.ir.program import Program

TEXT = %(text)r
U32 = %(u32)r
A = np.arange(256, dtype=np.float32).reshape(16, 16) / 64 - 1
B = np.linspace(-2, 2, 256, dtype=np.float32).reshape(16, 16)
PARAMS = [("a", "in", [16, 16], "float32"), ("k", "scalar", None, "float"), ("b", "in", [16, 16], "float32"),
          ("out", "out", [16, 16], "float32")]


class Axpy(h.PTOTestCase):
    def __init__(self, config=None, row=0, off=0.0, name="axpy"):
        super().__init__(config)
        self.row, self.off, self.name = row, off, name
        self.tensor_specs = [("a", A, False), ("b", B, False), ("out", np.zeros((16, 16), np.float32), True)]
        self.scalar_specs = [("k", 1.5)]
    def get_name(self):
        return self.name
    def get_program(self):
        return Program("HarnessAxpy", TEXT.replace("ROW", str(self.row)), PARAMS, returns=1, distributed=False)
    def compute_expected(self, tensors, params=None):
        out = tensors["out"].numpy()   # numpy ops: the same with the stand-in torch
        out[...] = (tensors["a"].numpy() + tensors["b"].numpy()) * np.float32(1.5) + np.float32(self.off)


def test_harness_pass(test_runner):
    result = test_runner.run(Axpy())
    assert result.passed, result.error


def test_harness_tolerance(test_runner):
    """The golden is off by 1e-3: within this test's atol=1e-2, the harness passes it."""
    result = test_runner.run(Axpy(h.RunConfig(rtol=0.0, atol=1e-2), off=1e-3, name="axpy_tol"))
    assert result.passed, result.error


def test_expect_fail_harness_golden(test_runner):
    result = test_runner.run(Axpy(off=1e-3, name="axpy_off"))
    assert result.passed, "Test failed: %%s" %% result.error


def test_expect_fail_harness_pldrun(test_runner):
    result = test_runner.run(Axpy(row=8, name="axpy_oob"))   # rows 8..23 of a [16, 16] tensor
    assert result.passed, "Test failed: %%s" %% result.error


class CopyU32(h.PTOTestCase):
    """UINT32 tensors given as int32 (negative values: the high bit set), as PyPTO's harness gives them."""
    def __init__(self):
        super().__init__()
        a = (np.arange(256, dtype=np.int64).reshape(16, 16) * 16777259 - 2 ** 31).astype(np.int32)
        self.tensor_specs = [("a", a, False), ("out", np.zeros((16, 16), np.int32), True)]
    def get_name(self):
        return "copy_u32"
    def get_program(self):
        return Program("HarnessCopyU32", U32, [("a", "in", [16, 16], "int32"), ("out", "out", [16, 16], "int32")],
                       returns=1, distributed=False)
    def compute_expected(self, tensors, params=None):
        tensors["out"].numpy()[...] = tensors["a"].numpy()


def test_harness_uint32(test_runner):
    result = test_runner.run(CopyU32())
    assert result.passed, result.error


class PlainOut(Axpy):
    """The entry declares `out` pl.Tensor (an input), the kernel writes it and the test validates it: PyPTO's
    device run copies every argument buffer back, and so does pldrun (--out of a pl.Tensor parameter)."""
    def get_program(self):
        head, sep, tail = TEXT.rpartition("out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]")
        return Program("HarnessAxpy", (head + "out: pl.Tensor[[16, 16], pl.FP32]" + tail).replace("ROW", "0"),
                       PARAMS, returns=1, distributed=False)


def test_harness_plain_output(test_runner):
    result = test_runner.run(PlainOut(name="axpy_plain"))
    assert result.passed, result.error


class External(Axpy):
    """The kernel is a hand-written C++ one (external_source=...): printed with an empty body."""
    def get_program(self):
        text = TEXT.replace("role=pl.Role.SubWorker)", 'role=pl.Role.SubWorker, external_source="k/axpy.cpp")', 1)
        return Program("HarnessAxpy", text.replace("ROW", "0"), PARAMS, returns=1, distributed=False)


def test_expect_fail_harness_external(test_runner):
    result = test_runner.run(External(name="axpy_ext"))
    assert result.passed, "Test failed: %%s" %% result.error


class NoProgram(Axpy):
    def get_program(self):
        return None


def test_expect_fail_harness_no_program(test_runner):
    """An inline compile that fails: the harness's message, and its temporary work directory removed."""
    import glob, tempfile
    result = test_runner.run(NoProgram(name="axpy_none"))
    assert not glob.glob(os.path.join(tempfile.gettempdir(), "pypto_test_axpy_none_*"))
    assert result.passed, "Test failed: %%s" %% result.error


def test_harness_precompiled(test_runner, tmp_path):
    """The --precompile-workers pipeline's build (its compile failed at the kernel files, after ir.compile):
    run from its work_dir."""
    tc = Axpy(name="axpy_pre")
    h.compile_program(tc.get_program(), str(tmp_path), strategy=None, backend_type=None)
    fut = Future()
    fut.set_result(h.CompileArtifact(str(tmp_path), "a2a3sim", "ValueError: No kernels generated for axpy_pre"))
    h._compile_futures[h._cache_key(tc, "a2a3sim")] = fut
    result = test_runner.run(tc)
    assert result.passed, result.error
    assert os.path.isfile(os.path.join(str(tmp_path), "data", "actual", "out.npy"))


def test_expect_fail_harness_precompile_error(test_runner, tmp_path):
    tc = Axpy(name="axpy_bad")
    fut = Future()
    fut.set_result(h.CompileArtifact(str(tmp_path), "a2a3sim", "ValueError: the pass pipeline rejected it"))
    h._compile_futures[h._cache_key(tc, "a2a3sim")] = fut
    result = test_runner.run(tc)
    assert result.passed, "Test failed: %%s" %% result.error
'''


def test_harness_on_standin(tmp_path):
    """PyPTO's PTOTestCase harness (test_runner.run) runs on pldrun: inline and pre-compiled builds, the
    harness's golden and the test's tolerance, pldrun's error in the failure, a pipeline compile error."""
    lib, work = tmp_path / 'lib', tmp_path / 'work'
    lib.mkdir()
    work.mkdir()
    write_standin(str(lib), torch_missing())
    for rel, src in HARNESS.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(src.lstrip('\n'))
    (work / 'conftest.py').write_text(HARNESS_CONFTEST)
    (work / 'test_harness_like.py').write_text(HARNESS_TESTS % {'text': HARNESS_PROGRAM, 'u32': HARNESS_U32})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(work), str(lib), os.path.join(REPO, 'python')]))
    xml = tmp_path / 'junit.xml'
    cmd = [sys.executable, '-m', 'pytest', '-p', 'pldrun.pypto', '-p', 'no:cacheprovider', '-q', '-rA',
           '--junitxml', str(xml), '--pldrun-timeout', '5', '--pldrun-run-timeout', '120']
    p = subprocess.run(cmd, cwd=str(work), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=300)
    print(p.stdout[-6000:])
    res = {}
    for case in ET.parse(str(xml)).getroot().iter('testcase'):
        res[case.get('name')] = ('passed', '')
        for child in case:
            if child.tag in ('failure', 'error', 'skipped'):
                res[case.get('name')] = (child.tag, (child.get('message') or '') + '\n' + (child.text or ''))
    for name in ('test_harness_pass', 'test_harness_tolerance', 'test_harness_precompiled', 'test_harness_uint32',
                 'test_harness_plain_output'):
        assert res[name][0] == 'passed', (name, res[name])
    outcome, msg = res['test_expect_fail_harness_golden']
    assert outcome == 'failure' and 'Test failed: golden validation failed (rtol=1e-05, atol=1e-05)' in msg, msg
    outcome, msg = res['test_expect_fail_harness_pldrun']
    assert outcome == 'failure' and 'Test failed: RunError: pldrun rejected the program (exit 65)' in msg, msg
    assert 'error: pl.tile.load reads past the end of dimension 0: offset 8 + extent 16 > size 16' in msg, msg
    outcome, msg = res['test_expect_fail_harness_precompile_error']
    assert outcome == 'failure' and 'Pre-compilation failed: ValueError: the pass pipeline rejected it' in msg, msg
    outcome, msg = res['test_expect_fail_harness_no_program']
    assert outcome == 'failure' and 'Test failed: ValueError: Test case axpy_none must implement get_program()' in msg, msg
    outcome, msg = res['test_expect_fail_harness_external']
    assert outcome == 'failure' and ('Test failed: pldrun.pypto: test case axpy_ext calls kernel, a hand-written C++ '
                                     'kernel (external_source=...)') in msg, msg
    assert len(res) == 10 and p.returncode == 1
