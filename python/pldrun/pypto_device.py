"""pldrun.pypto_device - device-resident tensors for the workers of the pytest plugin pldrun.pypto.

PyPTO's DistributedWorker keeps tensors resident on its chip workers across dispatches: `malloc`, `free`,
`copy_to`, `copy_from` (raw pointers and byte counts), `alloc_tensor` / `free_tensor` (a `DeviceTensor`
over one allocation), `alloc_stacked_tensor` / `free_stacked_tensor` / `copy_stacked_from` (a
`StackedDeviceTensor`: shard i of a [B, ...] host tensor resident on worker `worker_ids[i]`). Under
pldrun every dispatch is one pldrun run, so the "device" is this process: each allocation is a numpy byte
buffer here, and a dispatch passes a `DeviceTensor` to pldrun as a host tensor viewing its buffer (Out /
InOut ones filled in place) and a `StackedDeviceTensor` as the [B, ...] stack of its shards (written back
to the shards after the run). pldrun's HOST orchestrator sees every host tensor on every rank, so where a
shard lives changes nothing in what the program computes.

Pointers are handles, never host addresses: each allocation gets a new one (never reused, so a stale
handle cannot reach a newer allocation), and only the base of an allocation is accepted, as PyPTO does.
The errors are worded as PyPTO's (and simpler's, for a copy larger than the allocation), as its tests
match them: use after free_tensor, an interior or foreign pointer, init of the wrong shape or dtype.
"""
import ctypes

import numpy as np

__all__ = ['DeviceMemory', 'np_dtype', 'tensor_classes']

_BASE = 0x7d0000000000       # the first handle; handles grow by the allocation's size rounded up to 4 KiB


class _Buffer:
    """One allocation (what simpler's Buffer is to PyPTO: `base` is the handle, `tensor()` views it)."""

    def __init__(self, base, nbytes, worker_id):
        self.base, self.nbytes, self.owner_worker_id = base, nbytes, worker_id
        self.bytes = np.zeros(nbytes, dtype=np.uint8)

    def tensor(self, shape, dtype):
        return self.bytes.view(np_dtype(dtype)).reshape(tuple(shape))


class _DeviceTensor:
    """DeviceTensor's surface when the PyPTO in use has none (tests)."""

    def __init__(self, data_ptr, shape, dtype, *, buffer=None):
        self.data_ptr, self.shape, self.dtype, self.buffer = data_ptr, tuple(shape), dtype, buffer

    @property
    def nbytes(self):
        return int(np.prod(self.shape)) * np_dtype(self.dtype).itemsize


class _StackedDeviceTensor:
    def __init__(self, shards, full_shape, worker_ids):
        self.shards, self.full_shape, self.worker_ids = tuple(shards), tuple(full_shape), tuple(worker_ids)

    shape = property(lambda self: self.full_shape)
    dtype = property(lambda self: self.shards[0].dtype)


def tensor_classes():
    """(DeviceTensor, StackedDeviceTensor): PyPTO's (its tests check isinstance), else the stand-ins above."""
    try:
        from pypto.runtime import device_tensor as m  # noqa: PLC0415
        return m.DeviceTensor, m.StackedDeviceTensor
    except ImportError:
        return _DeviceTensor, _StackedDeviceTensor


def np_dtype(dtype):
    """A numpy dtype for a torch (or numpy) dtype; torch.bfloat16 as its uint16 bits (as pldrun takes them)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        pass
    import torch  # noqa: PLC0415
    if dtype == torch.bfloat16:
        return np.dtype(np.uint16)
    return torch.empty(0, dtype=dtype).numpy().dtype


def _host_array(t):
    """A host tensor (torch or numpy) as a contiguous numpy array (BF16 as uint16 bits)."""
    if isinstance(t, np.ndarray):
        return np.ascontiguousarray(t)
    v = t.detach().cpu().contiguous() if hasattr(t, 'detach') else t
    try:
        import torch  # noqa: PLC0415
        if getattr(torch, 'bfloat16', None) is not None and v.dtype == torch.bfloat16:
            return np.ascontiguousarray(v.view(torch.int16).numpy()).view(np.uint16)
    except ImportError:
        pass
    return np.ascontiguousarray(v.numpy())


def is_device_tensor(arg):
    return type(arg).__name__ == 'DeviceTensor' or isinstance(arg, _DeviceTensor)


def is_stacked(arg):
    return type(arg).__name__ == 'StackedDeviceTensor' or isinstance(arg, _StackedDeviceTensor)


class DeviceMemory:
    """The device-memory surface of PyPTO's DistributedWorker, kept in this process. The worker class using it
    provides `_require_open(op)` and `_world` (the rank count)."""

    def _init_device_memory(self):
        self._device_buffers = {}       # (worker_id, handle) -> _Buffer
        self._owned_tensors = {}        # (worker_id, handle) -> DeviceTensor (PyPTO's name; its tests count it)
        self._next_handle = _BASE

    # ------------------------------------------------------------ raw memory

    def _check_worker_id(self, worker_id, op):
        if isinstance(worker_id, bool) or not isinstance(worker_id, int) or not 0 <= worker_id < self._world:
            raise ValueError('DistributedWorker.%s(): worker id %r out of range [0, %d) (world_size from '
                             'device_ids)' % (op, worker_id, self._world))

    def malloc(self, nbytes, *, worker_id=0):
        self._require_open('malloc')
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError('nbytes must be a positive int, got %r' % (nbytes,))
        self._check_worker_id(worker_id, 'malloc')
        ptr = self._next_handle
        self._next_handle += (nbytes + 4095) // 4096 * 4096
        self._device_buffers[(worker_id, ptr)] = _Buffer(ptr, nbytes, worker_id)
        return ptr

    def _device_buffer(self, ptr, worker_id, op):
        try:
            return self._device_buffers[(worker_id, ptr)]
        except (KeyError, TypeError):
            raise ValueError('DistributedWorker.%s() requires the allocation base returned by this worker\'s '
                             'malloc(..., worker_id=%d); got %s' % (op, worker_id, _hex(ptr))) from None

    def free(self, ptr, *, worker_id=0):
        self._require_open('free')
        self._device_buffer(ptr, worker_id, 'free')
        del self._device_buffers[(worker_id, ptr)]

    def _copy_size(self, buf, nbytes, op):
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError('nbytes must be a positive int, got %r' % (nbytes,))
        if nbytes > buf.nbytes:
            raise ValueError('Worker.%s: %d bytes exceeds the %d-byte backing' % (op, nbytes, buf.nbytes))

    def copy_to(self, dst_dev_ptr, src_host_ptr, nbytes, *, worker_id=0):
        """H2D: nbytes from the host address src_host_ptr (a tensor's data_ptr()) into the allocation."""
        self._require_open('copy_to')
        buf = self._device_buffer(dst_dev_ptr, worker_id, 'copy_to')
        self._copy_size(buf, nbytes, 'copy_to')
        ctypes.memmove(buf.bytes.ctypes.data, int(src_host_ptr), nbytes)

    def copy_from(self, dst_host_ptr, src_dev_ptr, nbytes, *, worker_id=0):
        """D2H: nbytes of the allocation to the host address dst_host_ptr."""
        self._require_open('copy_from')
        buf = self._device_buffer(src_dev_ptr, worker_id, 'copy_from')
        self._copy_size(buf, nbytes, 'copy_from')
        ctypes.memmove(int(dst_host_ptr), buf.bytes.ctypes.data, nbytes)

    def committed_device_memory(self, worker_id=0):
        self._require_open('committed_device_memory')
        return sum(b.nbytes for (w, _), b in self._device_buffers.items() if w == worker_id)

    # ------------------------------------------------------------ DeviceTensor

    def alloc_tensor(self, shape, dtype, *, init=None, worker_id=0):
        self._require_open('alloc_tensor')
        shape_t = tuple(shape)
        if not shape_t:
            raise ValueError('shape must be non-empty')
        if any(isinstance(d, bool) or not isinstance(d, int) for d in shape_t):
            raise TypeError('shape must contain ints, got %r' % (shape_t,))
        if any(d <= 0 for d in shape_t):
            raise ValueError('shape must contain only positive dimensions, got %r' % (shape_t,))
        host = None
        if init is not None:
            if init.dtype != dtype or tuple(init.shape) != shape_t:
                raise ValueError('init must have shape=%r dtype=%s, got shape=%r dtype=%s'
                                 % (shape_t, dtype, tuple(init.shape), init.dtype))
            host = _host_array(init)
        nbytes = int(np.prod(shape_t)) * np_dtype(dtype).itemsize
        ptr = self.malloc(nbytes, worker_id=worker_id)
        buf = self._device_buffers[(worker_id, ptr)]
        if host is not None:
            buf.bytes[:] = host.reshape(-1).view(np.uint8)
        t = tensor_classes()[0](ptr, shape_t, dtype, buffer=buf)
        self._owned_tensors[(worker_id, ptr)] = t
        return t

    def free_tensor(self, t, *, worker_id=0):
        """Frees t's allocation; freeing it again is a no-op (PyPTO's); the wrong worker_id is an error."""
        key = (worker_id, t.data_ptr)
        if key not in self._owned_tensors:
            owners = sorted(w for w, p in self._owned_tensors if p == t.data_ptr)
            if owners:
                raise ValueError('free_tensor(..., worker_id=%d) does not match the owning worker for ptr=%s '
                                 '(allocated on worker(s) %s); pass the same worker_id.'
                                 % (worker_id, _hex(t.data_ptr), owners))
            return
        self.free(t.data_ptr, worker_id=worker_id)
        del self._owned_tensors[key]

    def _close_owned_tensors(self):
        owned, self._owned_tensors = self._owned_tensors, {}
        for worker_id, ptr in owned:
            self._device_buffers.pop((worker_id, ptr), None)

    # ------------------------------------------------------------ StackedDeviceTensor

    def alloc_stacked_tensor(self, host, *, worker_ids=None):
        """Shard i of the [B, ...] host tensor resident on worker worker_ids[i] (default range(B))."""
        self._require_open('alloc_stacked_tensor')
        if len(tuple(host.shape)) < 2:
            raise ValueError('alloc_stacked_tensor needs a [B, *tail] tensor (rank >= 2), got shape %r'
                             % (tuple(host.shape),))
        b = int(host.shape[0])
        ids = list(range(b)) if worker_ids is None else [int(w) for w in worker_ids]
        if len(ids) != b:
            raise ValueError('worker_ids has %d entries; host leading dim is %d' % (len(ids), b))
        if len(set(ids)) != len(ids):
            raise ValueError('worker_ids must be distinct (one shard per worker), got %s' % ids)
        for w in ids:
            if not 0 <= w < self._world:
                raise ValueError('worker id %d out of range [0, %d) (world_size from device_ids)' % (w, self._world))
        shards = [self.alloc_tensor(tuple(host.shape[1:]), host.dtype, init=host[i], worker_id=w)
                  for i, w in enumerate(ids)]
        return tensor_classes()[1](shards, tuple(host.shape), tuple(ids))

    def free_stacked_tensor(self, stacked):
        for shard, w in zip(stacked.shards, stacked.worker_ids):
            self.free_tensor(shard, worker_id=w)

    def copy_stacked_from(self, stacked, host):
        """Every shard of `stacked` into host[i] (a torch tensor or numpy array of the stack's shape and dtype)."""
        self._require_open('copy_stacked_from')
        if not is_stacked(stacked):
            raise TypeError('copy_stacked_from(stacked=...) expects a StackedDeviceTensor, got %s'
                            % type(stacked).__name__)
        if tuple(host.shape) != tuple(stacked.full_shape):
            raise ValueError('host shape %r does not match stacked full_shape %r'
                             % (tuple(host.shape), tuple(stacked.full_shape)))
        if host.dtype != stacked.dtype:
            raise ValueError('host dtype %s does not match stacked dtype %s' % (host.dtype, stacked.dtype))
        for i, (shard, w) in enumerate(zip(stacked.shards, stacked.worker_ids)):
            self._live(shard, 'copy_stacked_from shard %d' % i, w)
            dst = host[i]
            ptr = dst.ctypes.data if isinstance(dst, np.ndarray) else dst.data_ptr()
            self.copy_from(ptr, shard.data_ptr, shard.buffer.nbytes, worker_id=w)

    def release_inherited_host_tensor_refs(self):
        self._require_open('release_inherited_host_tensor_refs')

    # ------------------------------------------------------------ dispatch

    def _live(self, t, label, worker_id=None):
        """t's buffer, if t is a live allocation of this worker (on worker_id when given)."""
        self._require_open('run')
        if worker_id is None:
            live = any(p == t.data_ptr and b is t.buffer for (_, p), b in self._device_buffers.items())
        else:
            live = self._device_buffers.get((worker_id, t.data_ptr)) is t.buffer
        if t.buffer is None or not live:
            where = '' if worker_id is None else ' on worker_id=%d' % worker_id
            raise ValueError('%s: DeviceTensor is not a live allocation owned by this DistributedWorker%s; allocate '
                             'it with this same worker and do not dispatch it after free_tensor().' % (label, where))
        return t.buffer

    def _resident_args(self, args, params):
        """The dispatch's arguments with each DeviceTensor as a numpy view of its buffer and each
        StackedDeviceTensor as the stack of its shards; and a function writing the stacks back to their shards
        after the run (pldrun filled the Out / InOut ones in place). `params`: the entry's parameters as
        `pldrun --signature` gives them (empty when unknown: the run then reports a mismatch itself)."""
        out, stacks = [], []
        for i, a in enumerate(args):
            p = params[i] if i < len(params) else None
            label = 'Parameter %r' % (p['name'] if p else i)
            if p is not None and (is_stacked(a) or is_device_tensor(a)):
                _check_param(a, p, label)
            if is_stacked(a):
                bufs = [self._live(s, '%s shard %d' % (label, k), w)
                        for k, (s, w) in enumerate(zip(a.shards, a.worker_ids))]
                stack = np.stack([b.tensor(s.shape, s.dtype) for b, s in zip(bufs, a.shards)])
                stacks.append((stack, bufs, a.shards))
                out.append(stack)
            elif is_device_tensor(a):
                out.append(self._live(a, label).tensor(a.shape, a.dtype))
            else:
                out.append(a)

        def write_back():
            for stack, bufs, shards in stacks:
                for k, (b, s) in enumerate(zip(bufs, shards)):
                    b.tensor(s.shape, s.dtype)[...] = stack[k]
        return out, write_back


def _check_param(a, p, label):
    """A device tensor against the entry's parameter: rank, static dims and dtype (PyPTO's TypeErrors; a
    dynamic dimension, a name in pldrun's signature, is -1 as PyPTO prints it)."""
    what = 'StackedDeviceTensor full_shape' if is_stacked(a) else 'DeviceTensor shape'
    shape = tuple(a.full_shape if is_stacked(a) else a.shape)
    want = tuple(d if isinstance(d, int) else -1 for d in p.get('shape') or ())
    if len(want) != len(shape):
        raise TypeError('%s expects rank %d (shape %r); got %s %r' % (label, len(want), want, what, shape))
    if any(w >= 0 and w != d for w, d in zip(want, shape)):
        raise TypeError('%s expects shape %r; got %s %r' % (label, want, what, shape))
    from pldrun import _NP  # noqa: PLC0415
    np_want = _NP.get(p.get('dtype'), np.uint16 if p.get('dtype') == 'BF16' else None)
    if np_want is not None and np.dtype(np_want) != np_dtype(a.dtype):
        raise TypeError('%s expects dtype %s; got %s dtype %s' % (label, p['dtype'], what.split()[0], a.dtype))


def _hex(p):
    return '0x%x' % p if isinstance(p, int) else repr(p)
