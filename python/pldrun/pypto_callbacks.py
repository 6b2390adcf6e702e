"""pldrun.pypto_callbacks - SubWorker callbacks (prepare(callbacks=...)) for the pytest plugin pldrun.pypto.

PyPTO runs a callback bound by `prepare(callbacks={name: fn})` (or the deprecated `sub_worker_overrides`) in
the test's own process, as `fn(args)`: `args` holds one mapped argument per SubWorker parameter (simpler's
MappedArg: `dtype`, `shapes`, `strides`, `buffer`; PyPTO's `_tensor_from_continuous` turns one into a torch
tensor sharing its memory), and the callback often is a closure over the test's objects. pldrun runs
SubWorkers in each rank's embedded Python, another process, so while a run is in flight this module serves
the callbacks over a Unix socket: the run's `--subworkers` file (written here) defines each bound name as a
stub that sends the rank's arguments (the tensors' bytes, dtypes and shapes; scalars as they are) to the
test process, where the callback runs on copies of them; the stub then writes the tensors' bytes as the
callback left them back into the rank's tensors (so an Out tensor it filled is the rank's result, as for a
SubWorker body). Each rank calls the stub (a SubWorker runs on every rank, as the HOST orchestrator that
calls it: docs/python.md), so at P ranks the callback runs P times, once with each rank's values; PyPTO's
callback tests run at P = 1. A callback's exception fails the run with its traceback (pldrun's located
SubWorker error). One callback runs at a time.
"""
import inspect
import os
import pickle
import shutil
import socketserver
import struct
import tempfile
import threading
import traceback

import numpy as np

__all__ = ['CallbackServer', 'check_callback', 'MappedArg']

# numpy dtype names -> PyPTO's DataType names (its _tensor_from_continuous keys); BF16 travels as its bits.
_DT = {'float32': 'FLOAT32', 'float16': 'FLOAT16', 'float64': 'FLOAT64', 'int8': 'INT8', 'int16': 'INT16',
       'int32': 'INT32', 'int64': 'INT64', 'uint8': 'UINT8', 'uint16': 'UINT16', 'uint32': 'UINT32',
       'uint64': 'UINT64', 'bool': 'BOOL'}
_NP = {v: k for k, v in _DT.items()}
_NP['BFLOAT16'] = 'uint16'


def check_callback(name, fn):
    """A callback must be callable as fn(args) (PyPTO checks the same at prepare())."""
    if not callable(fn):
        raise TypeError("callback for SubWorker '%s' is not callable: %r" % (name, fn))
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(object())
    except TypeError:
        raise TypeError("callback for SubWorker '%s' must accept a single positional argument fn(args: "
                        "MappedArgs); got signature %s." % (name, sig)) from None


class _DType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return 'DataType.' + self.name

    __repr__ = __str__


class MappedArg:
    """One tensor argument of a callback (simpler's MappedArg surface that PyPTO uses): `buffer` (the bytes,
    writable), `dtype` (str() is 'DataType.FLOAT32', ...), `shapes`, `strides` (in elements), `data` (the
    address). `array` is the numpy array itself."""

    def __init__(self, array, dtype_name):
        self.array = array
        self.buffer = array
        self.dtype = _DType(dtype_name)
        self.shapes = tuple(int(d) for d in array.shape)
        self.strides = tuple(int(s) // array.itemsize for s in array.strides)
        self.data = array.ctypes.data
        self.nbytes = array.nbytes

    def __repr__(self):
        return 'MappedArg(dtype=%s, shapes=%s)' % (self.dtype, list(self.shapes))


# The --subworkers file the ranks load: one stub per bound name. It needs numpy only (torch when the ranks pass
# torch tensors, which it already imported).
_STUB = r'''
import os as _os
import pickle as _pickle
import socket as _socket
import struct as _struct

import numpy as _np

_PATH = %(path)r
_RANK = int(_os.environ.get('OMPI_COMM_WORLD_RANK') or _os.environ.get('PMIX_RANK') or 0)


def _array(a):
    """(numpy view of the rank's tensor, DataType name) for a tensor argument; None for a scalar."""
    if isinstance(a, _np.ndarray):
        return a, None
    if hasattr(a, 'numpy') and hasattr(a, 'dtype'):
        import torch
        if a.dtype == torch.bfloat16:
            return a.view(torch.int16).numpy(), 'BFLOAT16'
        return a.numpy(), None
    return None, None


def _recv(s, n):
    b = bytearray()
    while len(b) < n:
        chunk = s.recv(n - len(b))
        if not chunk:
            raise RuntimeError('pldrun.pypto: the test process closed the callback connection')
        b += chunk
    return bytes(b)


def _forward(name, args):
    items, views = [], []
    for a in args:
        v, dt = _array(a)
        views.append(v)
        if v is None:
            items.append(('s', a))
        else:
            items.append(('t', dt or v.dtype.name, v.shape, _np.ascontiguousarray(v).tobytes()))
    req = _pickle.dumps((name, _RANK, items), protocol=4)
    with _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM) as s:
        s.connect(_PATH)
        s.sendall(_struct.pack('<Q', len(req)) + req)
        (n,) = _struct.unpack('<Q', _recv(s, 8))
        err, back = _pickle.loads(_recv(s, n))
    if err is not None:
        raise RuntimeError('the callback bound to %%s raised in the test process (rank %%d):\n%%s'
                           %% (name, _RANK, err))
    for v, b in zip(views, back):
        if v is not None and b is not None:
            v[...] = _np.frombuffer(b, dtype=v.dtype).reshape(v.shape)
'''

_STUB_FN = '''

def %(name)s(*args):
    _forward(%(name)r, args)
'''


class CallbackServer:
    """`with CallbackServer({name: fn}) as srv:` serves the callbacks while a run is in flight; srv.module is
    the --subworkers file defining their stubs."""

    def __init__(self, callbacks):
        self.callbacks = dict(callbacks)
        self.calls = []         # (name, rank) of every callback run, in order
        self._lock = threading.Lock()
        self._dir = self._server = self._thread = None
        self.module = None

    def __enter__(self):
        self._dir = tempfile.mkdtemp(prefix='pldrun-cb-')
        path = os.path.join(self._dir, 'callbacks.sock')
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                owner._serve(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(path, Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name='pldrun-callbacks', daemon=True)
        self._thread.start()
        self.module = os.path.join(self._dir, 'callbacks.py')
        with open(self.module, 'w') as f:
            f.write(_STUB % {'path': path})
            for name in sorted(self.callbacks):
                if not name.isidentifier():
                    raise ValueError('callback name %r is not a Python identifier' % name)
                f.write(_STUB_FN % {'name': name})
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        shutil.rmtree(self._dir, ignore_errors=True)

    def _serve(self, sock):
        (n,) = struct.unpack('<Q', _recv_all(sock, 8))
        name, rank, items = pickle.loads(_recv_all(sock, n))
        args, arrays = [], []
        for it in items:
            if it[0] == 's':
                args.append(it[1])
                arrays.append(None)
                continue
            _, dt, shape, raw = it
            key = _DT.get(dt, dt)
            a = np.frombuffer(bytearray(raw), dtype=np.dtype(_NP.get(key, dt))).reshape(shape)
            args.append(MappedArg(a, key))
            arrays.append(a)
        err = None
        with self._lock:
            self.calls.append((name, rank))
            try:
                self.callbacks[name](args)
            except BaseException:  # noqa: BLE001 (reported to the rank, which fails the run with it)
                err = traceback.format_exc().rstrip()
        back = pickle.dumps((err, [None if a is None else a.tobytes() for a in arrays]), protocol=4)
        sock.sendall(struct.pack('<Q', len(back)) + back)


def _recv_all(sock, n):
    b = bytearray()
    while len(b) < n:
        chunk = sock.recv(n - len(b))
        if not chunk:
            raise ConnectionError('a rank closed the callback connection')
        b += chunk
    return bytes(b)
