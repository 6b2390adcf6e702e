"""test_api.py - the Python API (python/pldrun) against the goldens the C tests use (CTest python_api).

Runs with Debian's python3 and python3-numpy / python3-pytest:
    PLDRUN=build/pldrun /usr/bin/python3 -m pytest tests/python -q

- corpus programs of programs/ (tests/mpi/run_coll.py's CASES: the same program, the same input
  generator, the same golden function and comparison as the mpi_coll_* tests) run through
  pldrun.run with numpy inputs, at P = 2 and 4, the program given as a path, as text and as an
  object with as_python();
- a BF16 program with float32 and raw-bits inputs;
- torch tensors as inputs and as outputs filled in place: with torch when it is importable, else
  with a stand-in module of the same surface (CI has no torch), the test says which;
- dispatch_inputs (new inputs per dispatch, Result.per_dispatch) and dump (--dump);
- a deadlock raises RunError with status 70 and the hang report; a racy program under
  check_races returns its findings (text and --findings records; 'error' fails the run with status
  1); usage errors (unknown parameter, missing program) raise.
"""
import os
import re
import sys
import types

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'python'))
sys.path.insert(0, os.path.join(REPO, 'tests', 'mpi'))
import pldrun  # noqa: E402
import run_coll as C  # noqa: E402  (the collective goldens)

NP_OF = {'FP32': np.float32, 'FP16': np.float16, 'INT8': np.int8, 'INT32': np.int32, 'INT64': np.int64,
         'BF16': np.uint16, 'UINT8': np.uint8, 'INT16': np.int16}


def program_at(path, P):
    """The program text at P (run_coll.program_for's rewrite of a fixed `P = m`)."""
    with open(path) as f:
        text = f.read()
    return re.sub(r'^P = \d+$', 'P = %d' % P, text, count=1, flags=re.M)


def golden_run(case, P, how):
    """Runs run_coll case `case` at P through the API; returns the problems (empty = pass)."""
    path, golden, _ = C.CASES[case]
    text = program_at(path, P)
    _, gens = C.read_directives(path)
    ins, outs, arrays = {}, {}, {}
    for name, direction, dt, shape in C.host_params(text, P):
        if direction == 'in':
            vals = C.generate(gens[name], dt, C.T.numel(shape))
            ins[name] = C.Tensor(dt, shape, vals)
            arrays[name] = np.array(vals, dtype=NP_OF[dt]).reshape(shape)
            if dt == 'BF16':
                arrays[name] = arrays[name].view('V2')   # raw bits, as pldrun reads BF16
        else:
            outs[name] = (dt, shape)
    want = golden(ins, P, outs)
    if how == 'text':
        program = text
    elif how == 'object':
        program = types.SimpleNamespace(as_python=lambda: text)
    else:
        if 'P = ' in text and text != open(path).read():
            pytest.fail('case %s fixes P; use text' % case)
        program = path
    res = pldrun.run(program, arrays, outputs=sorted(want), ranks=P, timeout=30, run_timeout=120, bf16='bits')
    problems = []
    for name in sorted(want):
        got = res[name]
        problems += C.compare(name, (want[name].dtype, got.shape, got.reshape(-1).tolist()), want[name])
    return problems


@pytest.mark.parametrize('P', [2, 4])
@pytest.mark.parametrize('case,how', [('corpus_host_allreduce_ring', 'text'),
                                      ('corpus_host_allgather', 'path'),
                                      ('corpus_incore_allreduce_mesh', 'object'),
                                      ('corpus_chip_all_to_all_v_int8', 'text'),
                                      ('tutorial_remote_store_raw_bf16', 'path')])
def test_corpus_golden(case, how, P):
    assert golden_run(case, P, how) == []


def test_readme_example():
    """The README's example: allreduce_ring at 4 ranks from numpy, checked with numpy."""
    xs = np.arange(4 * 192, dtype=np.float32).reshape(4, 1, 192)
    out = pldrun.run(os.path.join(REPO, 'programs', 'host', 'allreduce_ring.pld'), {'xs': xs}, ranks=4)
    assert np.array_equal(out['outs'], np.broadcast_to(xs.sum(axis=0), (4, 1, 192)))
    assert out.summary.startswith('pldrun: 4 ranks')
    assert out.findings == []


def test_bf16_from_float32():
    """A float32 array for a BF16 parameter is rounded to BF16 (RNE); outputs come back as float32."""
    P = 2
    prog = os.path.join(REPO, 'programs', 'tutorial', 'remote_store_raw_bf16.pld')
    srcs = (np.arange(P * P * 64, dtype=np.float32).reshape(P, P, 64) + 0.3) * 3.7
    res = pldrun.run(prog, {'srcs': srcs}, ranks=P)
    rounded = pldrun.bf16_to_f32(pldrun.f32_to_bf16(srcs))
    assert res['outs'].dtype == np.float32
    for q in range(P):
        s = (q - 1) % P
        assert np.array_equal(res['outs'][q][s], rounded[s][s])
        assert not np.any(np.delete(res['outs'][q], s, axis=0))


def test_f32_to_bf16_rounding():
    x = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf, 3.0e38], dtype=np.float32)
    bits = pldrun.f32_to_bf16(x)
    assert bits.tolist() == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x7F80, 0x7F62]
    assert np.isnan(pldrun.bf16_to_f32(pldrun.f32_to_bf16(np.array([np.nan], dtype=np.float32))))[0]


def fake_torch():
    """A stand-in for the part of torch the API touches (CI has no torch)."""
    t = types.ModuleType('torch')
    t.bfloat16, t.float32 = 'bfloat16', 'float32'

    class Tensor:
        def __init__(self, arr, dtype):
            self.a, self.dtype = arr, dtype

        shape = property(lambda self: self.a.shape)

        def detach(self):
            return self

        cpu = contiguous = detach

        def numpy(self):
            assert self.dtype != t.bfloat16, 'torch has no numpy() of bfloat16'
            return self.a

        def view(self, dt):
            assert dt in ('int16', t.bfloat16)
            return Tensor(self.a.view(np.int16) if dt == 'int16' else self.a, dt)

        def reshape(self, shape):
            return Tensor(self.a.reshape(shape), self.dtype)

        def copy_(self, src):
            assert src.dtype == self.dtype or self.dtype != t.bfloat16
            self.a[...] = src.a
            return self

    class NoGrad:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    t.Tensor, t.int16, t.no_grad = Tensor, 'int16', NoGrad
    t.from_numpy = lambda a: Tensor(a, {np.dtype(np.int16): 'int16'}.get(a.dtype, str(a.dtype)))
    t.make = lambda a, dt: Tensor(np.ascontiguousarray(a), dt)
    return t


def real_or_fake_torch(monkeypatch):
    try:
        import torch  # noqa: PLC0415
        print('with torch', torch.__version__)
        return torch, False
    except ImportError:
        t = fake_torch()
        monkeypatch.setitem(sys.modules, 'torch', t)
        print('with the stand-in torch module (torch is not importable)')
        return t, True


def test_torch_inputs_and_inplace_outputs(monkeypatch):
    torch, fake = real_or_fake_torch(monkeypatch)
    P = 2
    prog = os.path.join(REPO, 'programs', 'tutorial', 'remote_store_raw_bf16.pld')
    bits = pldrun.f32_to_bf16(np.linspace(-50, 50, P * P * 64, dtype=np.float32).reshape(P, P, 64))
    if fake:
        srcs = torch.make(bits.view(np.int16), torch.bfloat16)
        outs = torch.make(np.zeros((P, P, 64), dtype=np.int16), torch.bfloat16)
    else:
        srcs = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
        outs = torch.zeros(P, P, 64, dtype=torch.bfloat16)
    res = pldrun.run(prog, {'srcs': srcs}, outputs={'outs': outs}, ranks=P)
    assert res['outs'] is outs
    got = (outs.a if fake else outs.view(torch.int16).numpy()).view(np.uint16)
    for q in range(P):
        s = (q - 1) % P
        assert np.array_equal(got[q][s], bits[s][s])
    # an FP32 tensor in, an FP32 tensor filled in place
    xs = np.arange(2 * 1 * 192, dtype=np.float32).reshape(2, 1, 192)
    text = program_at(os.path.join(REPO, 'programs', 'host', 'allreduce_ring.pld'), 2)
    if fake:
        tx, to = torch.make(xs, torch.float32), torch.make(np.zeros_like(xs), torch.float32)
    else:
        tx, to = torch.from_numpy(xs.copy()), torch.zeros(2, 1, 192)
    pldrun.run(text, {'xs': tx}, outputs={'outs': to}, ranks=2)
    got = to.a if fake else to.numpy()
    assert np.array_equal(got, np.broadcast_to(xs.sum(axis=0), xs.shape))


def test_deadlock_raises_with_report():
    prog = os.path.join(REPO, 'tests', 'mpi', 'programs', 'coll_neg_divergent_wait.pld')
    with pytest.raises(pldrun.RunError) as ei:
        pldrun.run(prog, {'xs': 'arange'}, ranks=2, timeout=5, run_timeout=120)
    e = ei.value
    assert e.returncode == 70
    assert 'deadlock' in str(e)
    assert re.search(r'^\[rank 1/2\] .*coll_neg_divergent_wait\.pld:\d+:\d+: error: wait on sig\[0, 0\] \(Ge 1\)',
                     e.diagnostics, re.M), e.diagnostics
    assert 'state of every rank' in e.diagnostics


def test_race_findings():
    prog = os.path.join(REPO, 'tests', 'races', 'racy', 'ack_before_read.pld')
    res = pldrun.run(prog, {'xs': 'arange'}, ranks=2, check_races=True)
    assert len(res.findings) == 2
    for f in res.findings:
        assert 'warning: data race on window' in f and 'note: the other access' in f
    assert len(res.records) == len(res.findings)
    for r in res.records:
        assert r['ruleId'] == 'data-race' and len(r['properties']['sides']) == 2
    clean = pldrun.run(os.path.join(REPO, 'programs', 'host', 'allreduce_ring.pld'), {'xs': 'arange'}, ranks=4,
                       check_races=True)
    assert clean.findings == [] and clean.records == []


def test_race_findings_fail_the_run():
    """check_races='error': a race makes pldrun exit 1; the RunError carries the --findings records."""
    prog = os.path.join(REPO, 'tests', 'races', 'racy', 'blocks_store_load.pld')
    with pytest.raises(pldrun.RunError) as ei:
        pldrun.run(prog, {'xs': 'arange'}, ranks=2, check_races='error', schedule_seed=7)
    e = ei.value
    assert e.returncode == 1, e.diagnostics
    assert 'findings fail the run' in str(e)
    sides = [[(sd['rank'], sd['block'], sd['op'], sd['line']) for sd in r['properties']['sides']] for r in e.records]
    assert sides == [[(k, 0, 'pl.tile.store', 27), (k, 1, 'pl.tile.load', 30)] for k in (0, 1)]
    clean = pldrun.run(os.path.join(REPO, 'tests', 'races', 'clean', 'blocks_store_load.pld'), {'xs': 'arange'},
                       ranks=2, check_races='error', schedule_seed=7)
    assert clean.records == []


def test_dispatch_inputs(tmp_path):
    """dispatch_inputs: new inputs per dispatch (allreduce_ring over windows, 3 dispatches at P = 4):
    per_dispatch[d] is the sum of dispatch d's inputs, the Result itself the last; a list of another
    length than dispatches is a usage error (64). dump (P = 2): pl.dump_tag hits land in the directory."""
    P = 4
    prog = os.path.join(REPO, 'programs', 'host', 'allreduce_ring.pld')
    xs = [np.arange(P * 192, dtype=np.float32).reshape(P, 1, 192) * (d + 1) - d for d in range(3)]
    res = pldrun.run(prog, dispatch_inputs={'xs': xs}, ranks=P)
    assert len(res.per_dispatch) == 3
    for d in range(3):
        assert np.array_equal(res.per_dispatch[d]['outs'], np.broadcast_to(xs[d].sum(axis=0), (P, 1, 192)))
    assert np.array_equal(res['outs'], res.per_dispatch[2]['outs'])
    with pytest.raises(pldrun.RunError) as ei:
        pldrun.run(prog, dispatch_inputs={'xs': xs[:2]}, dispatches=3, ranks=P)
    assert ei.value.returncode == 64 and '2 files for --dispatches 3' in ei.value.diagnostics
    P = 2
    d = tmp_path / 'dump'
    x = np.ones((P, 4, 16), dtype=np.float32)
    pldrun.run(os.path.join(REPO, 'tests', 'dump', 'programs', 'dump_loop.pld'), {'xs': x}, ranks=P, dump=str(d))
    rows = (d / 'index.tsv').read_text().splitlines()
    assert len(rows) == 1 + P * 4  # header, then x once and y three times per rank
    y2 = np.load(str(d / [r.split('\t')[-1] for r in rows if r.startswith('y\t1\t0\t2\t')][0]))
    assert np.array_equal(y2, x[1] * 3 + 1)  # rank 1, hit 2: x * (1 + 2) + 1


def test_usage_errors():
    prog = os.path.join(REPO, 'programs', 'host', 'allreduce_ring.pld')
    with pytest.raises(pldrun.RunError, match="no parameter 'nope'") as ei:
        pldrun.run(prog, {'nope': np.zeros(3)}, ranks=1)
    assert ei.value.returncode == 64
    with pytest.raises(pldrun.RunError, match='does not exist'):
        pldrun.run('no/such/file.pld', {}, ranks=1)
    with pytest.raises(pldrun.RunError) as ei:
        pldrun.run(prog, {'xs': np.zeros((2, 2), dtype=np.float32)}, ranks=4)
    assert ei.value.returncode == 64 and 'xs' in ei.value.diagnostics


def test_signature():
    sig = pldrun.signature(os.path.join(REPO, 'programs', 'tutorial', 'remote_store_raw_bf16.pld'))
    assert sig['entry'] == 'host_orch'
    assert sig['params'] == [{'name': 'srcs', 'kind': 'tensor', 'dtype': 'BF16', 'shape': ['NR', 'NR', 64],
                              'dir': 'in'},
                             {'name': 'outs', 'kind': 'tensor', 'dtype': 'BF16', 'shape': ['NR', 'NR', 64],
                              'dir': 'out'}]


@pytest.mark.parametrize('prog,P', [('dim_pl_const.pld', 2), ('dim_expr_solve.pld', 2), ('dim_expr_solve.pld', 4)])
def test_printed_dim_forms(prog, P):
    """Parameter extents as PyPTO prints computed ones (issue 41): `NR * pl.const(32, pl.INDEX)` is evaluated
    when the inputs are bound, and `M * 2` binds M from the input; an extent `M * 2` cannot have is refused."""
    path = os.path.join(REPO, 'tests', 'mpi', 'programs', prog)
    xs = np.arange(P * 64, dtype=np.float32).reshape(P, 1, 64)
    res = pldrun.run(path, {'xs': xs}, ranks=P)
    want = np.broadcast_to(xs[:, 0, :], (P, P, 64))
    assert np.array_equal(res['outs'], want)
    if prog == 'dim_pl_const.pld':
        gen = pldrun.run(path, {'xs': 'arange'}, ranks=P)   # a generated input: NR takes P, the extent 2 * 32
        assert np.array_equal(gen['outs'], want)
    else:
        with pytest.raises(pldrun.RunError) as ei:
            pldrun.run(path, {'xs': np.zeros((P, 1, 65), dtype=np.float32)}, ranks=P)
        assert ei.value.returncode == 64
        assert "input for 'xs' has shape/dtype [%d, 1, 65] FP32, but the parameter is declared [NR, 1, M * 2] FP32" % P \
            in ei.value.diagnostics


@pytest.mark.parametrize('P', [2, 4])
def test_window_size_in_a_host_local(P):
    """A window size held in a HOST local computed with pl.const(...) * pl.const(...) (issue 41): known when the
    HOST orchestrator starts; the outputs equal those of the program that writes the size inline."""
    ins = {'xs': np.arange(P * 256, dtype=np.float32).reshape(P, 1, 256) * 0.5,
           'rows': np.arange(P * P * 256, dtype=np.float32).reshape(P, P, 256)}
    local = pldrun.run(os.path.join(REPO, 'tests', 'mpi', 'programs', 'size_pl_const_local.pld'), ins, ranks=P)
    inline = pldrun.run(os.path.join(REPO, 'tests', 'examples', '08_host_collectives.printed.pld'), ins, ranks=P)
    assert np.array_equal(local['outs'], inline['outs'])
    assert np.any(local['outs'])
