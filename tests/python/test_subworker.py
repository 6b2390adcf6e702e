"""test_subworker.py - SubWorkers (Python HOST functions) through pldrun's Python bridge (CTest python_subworker;
docs/python.md, "SubWorkers").

tests/python/subworker/host_sub.pld is a HOST orchestrator in PyPTO's printed form calling three SubWorkers
around a device=r dispatch; it runs at P = 2 through pldrun.run against a numpy golden:
- the program's own bodies (numpy views of the host tensors; an Out tensor written in place; a scalar);
- the bodies replaced by a file (--subworkers) and by {name: function} (the API writes their sources);
- torch tensors (--subworker-tensors torch) when torch is importable;
- a Python exception in a SubWorker, from the program's body and from a --subworkers file: exit 70, the error
  located at the call in the .pld with the Python traceback (pointing into the .pld / the file);
- PLDRUN_NO_PYTHON=1 (a pldrun without the bridge): exit 65, the reason at every SubWorker call;
- an abstract SubWorker (body `...`): an error without a function handed over, the golden with one;
- a closure handed as a SubWorker is refused before anything runs.
Skipped as a whole when this pldrun was built without the bridge (PLDRUN_PYTHON=OFF, no libpython3-dev): then
only the refusal is checked.
"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(REPO, 'python'))
import pldrun  # noqa: E402

PROG = os.path.join(HERE, 'subworker', 'host_sub.pld')
FUNCS = os.path.join(HERE, 'subworker', 'host_sub_funcs.py')
P = 2
NO_BRIDGE = 'without the Python bridge'


def _inputs(k=3.0, seed=7):
    rng = np.random.default_rng(seed)
    xs = rng.integers(-50, 50, size=(P, 1, 64)).astype(np.float32)
    return {'xs': xs, 'k': np.float32(k)}


def _run(inputs, **kw):
    return pldrun.run(PROG, inputs, ranks=P, timeout=30, run_timeout=120, **kw)


def _has_bridge():
    try:
        _run(_inputs())
    except pldrun.RunError as e:
        if e.returncode == 65 and NO_BRIDGE in e.diagnostics:
            return False
        raise
    return True


BRIDGE = _has_bridge()
needs_bridge = pytest.mark.skipif(not BRIDGE, reason='this pldrun has no Python bridge (PLDRUN_PYTHON)')


@needs_bridge
def test_program_bodies_golden():
    ins = _inputs()
    res = _run(ins)
    xs, k = ins['xs'], ins['k']
    np.testing.assert_array_equal(res['ys'], xs * k + 1 + xs)
    np.testing.assert_array_equal(res['sums'], xs.sum(axis=2, dtype=np.float32))
    assert 'warning' not in res.stderr, res.stderr   # no output element written differently by the two ranks


def prep_plus_five(xs, k, tmp):
    tmp[:] = xs * k + 5


def check_nothing(xs, tmp, k):
    del xs, tmp, k


@needs_bridge
def test_functions_from_the_api():
    ins = _inputs(k=2.0)
    res = _run(ins, subworkers={'prep': prep_plus_five, 'check': check_nothing})
    xs = ins['xs']
    np.testing.assert_array_equal(res['ys'], xs * 2 + 5 + xs)
    np.testing.assert_array_equal(res['sums'], xs.sum(axis=2, dtype=np.float32))


def stats_torch(xs, sums):
    assert isinstance(xs, torch.Tensor) and isinstance(sums, torch.Tensor), (type(xs), type(sums))
    sums.copy_(torch.sum(xs, dim=2))


@needs_bridge
def test_torch_tensors():
    global torch
    torch = pytest.importorskip('torch')
    ins = _inputs()
    res = _run(ins, subworkers={'stats': stats_torch}, subworker_tensors='torch')
    xs, k = ins['xs'], ins['k']
    np.testing.assert_array_equal(res['ys'], xs * k + 1 + xs)
    np.testing.assert_array_equal(res['sums'], xs.sum(axis=2, dtype=np.float32))


@needs_bridge
def test_exception_in_the_programs_body():
    with pytest.raises(pldrun.RunError) as ei:
        _run(_inputs(k=-1.0))
    e = ei.value
    assert e.returncode == 70, e.diagnostics
    assert "host_sub.pld:74:9: error: the SubWorker 'check' failed: ValueError: k must not be negative, got -1.0" \
        in e.diagnostics, e.diagnostics
    assert 'host_sub.pld", line 55, in check' in e.diagnostics, e.diagnostics   # the traceback in the .pld
    assert 'Traceback (most recent call last)' in e.diagnostics
    assert '<pldrun>' not in e.diagnostics                                     # none of the bridge's frames


@needs_bridge
def test_exception_in_a_subworkers_file():
    with pytest.raises(pldrun.RunError) as ei:
        _run(_inputs(), subworkers=FUNCS)
    e = ei.value
    assert e.returncode == 70, e.diagnostics
    assert "host_sub.pld:74:9: error: the SubWorker 'check' failed: ValueError: tmp(0, 0, 0) is" in e.diagnostics
    assert 'host_sub_funcs.py", line ' in e.diagnostics and ', in check' in e.diagnostics, e.diagnostics


def test_without_the_bridge():
    with pytest.raises(pldrun.RunError) as ei:
        _run(_inputs(), env={'PLDRUN_NO_PYTHON': '1'})
    e = ei.value
    assert e.returncode == 65, e.diagnostics
    for line, name in ((73, 'prep'), (74, 'check'), (77, 'stats')):
        assert "host_sub.pld:%d:" % line in e.diagnostics and "'%s' is a SubWorker" % name in e.diagnostics
    assert NO_BRIDGE in e.diagnostics


def test_closure_refused():
    scale = 3.0

    def prep(xs, k, tmp):
        tmp[:] = xs * scale

    with pytest.raises(pldrun.RunError) as ei:
        _run(_inputs(), subworkers={'prep': prep})
    assert ei.value.returncode == 64 and 'scale' in str(ei.value)


def stats_by_hand(xs, sums):
    sums[:] = xs.sum(2) * 2


@needs_bridge
def test_abstract_subworker(tmp_path):
    """A body of `...` (a callback PyPTO binds at run time) runs only with a function handed over."""
    with open(PROG) as f:
        text = f.read()
    assert text.count('        sums[:] = xs.sum(2)\n') == 1
    path = tmp_path / 'abstract.pld'
    path.write_text(text.replace('        sums[:] = xs.sum(2)\n', '        ...\n'))
    ins = _inputs()
    with pytest.raises(pldrun.RunError) as ei:
        pldrun.run(str(path), ins, ranks=P, timeout=30, run_timeout=120)
    assert ei.value.returncode == 70
    assert "abstract.pld:77:9: error: the SubWorker 'stats' failed: no body in the program" in ei.value.diagnostics
    res = pldrun.run(str(path), ins, ranks=P, timeout=30, run_timeout=120, subworkers={'stats': stats_by_hand})
    np.testing.assert_array_equal(res['sums'], ins['xs'].sum(axis=2, dtype=np.float32) * 2)
