"""Symmetric tensors: torch tensors on symmem's heap, their peers' memory, their signal pads, and
one-sided operations on a stream."""
import bisect
import weakref

from . import _current_stream, _group, _lib, _torch, InvalidArgument


class _Owner:
    """Owns one symmetric buffer; every tensor over it keeps it alive. When the last goes, the
    memory is released on the stream current at that moment (local: no peer is waited for, so a
    garbage collector may run this at any time on any rank)."""

    def __init__(self, buf, group):
        self.buf = buf
        self.group = group
        self.base = buf.ptr
        self.nbytes = buf.nbytes
        _register(self)

    def __del__(self):
        try:
            _unregister(self)
            stream = 0
            try:
                import torch
                stream = torch.cuda.current_stream(self.buf.device).cuda_stream
            except Exception:
                pass
            self.buf.free(stream)
        except Exception:
            pass  # interpreter shutdown: the heap goes with the process


# Live owners by base address, so that a tensor (or a view of one) finds its buffer.
_bases = []
_owners = {}


def _register(o):
    bisect.insort(_bases, o.base)
    _owners[o.base] = weakref.ref(o)


def _unregister(o):
    i = bisect.bisect_left(_bases, o.base)
    if i < len(_bases) and _bases[i] == o.base:
        del _bases[i]
    _owners.pop(o.base, None)


def _address(t):
    """Where tensor t starts: its data pointer, or for an empty tensor (whose data_ptr() torch gives
    as 0) its storage's pointer plus its offset, so that an empty view of a symmetric tensor still
    names its buffer and place (a zero-byte put_signal still signals)."""
    if t.numel():
        return t.data_ptr()
    return t.untyped_storage().data_ptr() + t.storage_offset() * t.element_size()


def _owner_of(t, what="tensor"):
    """The owner of the symmetric buffer that holds all of tensor t, or None."""
    p = _address(t)
    i = bisect.bisect_right(_bases, p) - 1
    if i < 0:
        return None
    o = _owners[_bases[i]]()
    if o is None or p + t.numel() * t.element_size() > o.base + o.nbytes:
        return None
    return o


def _require_owner(t, what):
    o = _owner_of(t)
    if o is None:
        raise InvalidArgument(f"{what}: the tensor is not symmetric memory (make it with symmem.empty)")
    return o


def _from_pointer(torch, ptr, nbytes, device, owner, dtype, shape):
    cap = _lib().dlpack(ptr, nbytes, device, owner)
    t = torch.utils.dlpack.from_dlpack(cap)
    return t.view(dtype).view(shape)


def empty(*shape, dtype=None, group=None):
    """An uninitialised tensor on the symmetric heap of `group` (collective: every member asks for
    the same shape and dtype). Fast once the heap has grown: it maps memory in large arenas and
    hands out blocks of them; freeing happens when the last tensor over the memory goes."""
    torch = _torch()
    g = _group(group)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    dtype = dtype or torch.float32
    if any(s < 0 for s in shape):
        raise InvalidArgument(f"symmem.empty: negative dimension in shape {shape}")
    numel = 1
    for s in shape:
        numel *= s
    itemsize = torch.empty((), dtype=dtype).element_size()
    nbytes = max(numel * itemsize, 1)
    buf = g._comm.alloc(nbytes)
    owner = _Owner(buf, g)
    flat = _from_pointer(torch, buf.ptr, nbytes, buf.device, owner, torch.uint8, (nbytes,))
    return flat[: numel * itemsize].view(dtype).view(shape)


def free(t):
    """Nothing to do: memory returns to the heap when the last tensor over it is gone (this only
    checks that t is symmetric)."""
    _require_owner(t, "symmem.free")


def peer_tensor(t, peer):
    """Member `peer`'s memory of symmetric tensor t, as a tensor of this device (same shape and
    dtype; loads and stores go over NVLink). Keeps the buffer alive."""
    torch = _torch()
    o = _require_owner(t, "symmem.peer_tensor")
    if not t.is_contiguous():
        raise InvalidArgument("symmem.peer_tensor: the tensor must be contiguous")
    off = _address(t) - o.base
    nbytes = t.numel() * t.element_size()
    base = o.buf.peer_ptr(peer)
    return _from_pointer(torch, base + off, max(nbytes, 1), o.buf.device, o, torch.uint8, (max(nbytes, 1),))[:nbytes].view(t.dtype).view(t.shape)


def signal_pad(t, peer=None):
    """The signal pad of t's buffer on `peer` (default: this rank), as an int64 tensor. Slots
    [0, user_signal_slots) are the user's; the rest belong to symmem's operations."""
    torch = _torch()
    o = _require_owner(t, "symmem.signal_pad")
    p = o.group.rank if peer is None else peer
    nbytes = o.buf.signal_pad_bytes
    return _from_pointer(torch, o.buf.signal_pad_ptr(p), nbytes, o.buf.device, o, torch.int64, (nbytes // 8,))


def pointer_tables(t):
    """(peer_ptrs, signal_pad_ptrs): two device int64 tensors [group size] of every member's buffer
    and signal pad addresses, for Triton or CUDA kernels of your own (see examples/python). In
    Triton, tl.atomic_add(ptr, v, sem="relaxed", scope="sys") on a peer's address is the remote
    atomic that symmem's device API calls device::atomic_add (the other forms alike)."""
    torch = _torch()
    o = _require_owner(t, "symmem.pointer_tables")
    n = o.group.size
    peers = _from_pointer(torch, o.buf.peer_ptrs_dev, 8 * n, o.buf.device, o, torch.int64, (n,))
    pads = _from_pointer(torch, o.buf.signal_pad_ptrs_dev, 8 * n, o.buf.device, o, torch.int64, (n,))
    return peers, pads


def _stream(stream):
    if stream is None:
        return _current_stream()
    return getattr(stream, "cuda_stream", stream)


def _offset(o, t):
    return _address(t) - o.base


def _pair(op, sym, sym_name, plain, plain_name):
    """The owner of symmetric tensor `sym` and the byte count of a transfer between it and `plain`
    (any CUDA tensor of this rank's GPU): both contiguous (bytes move in memory order) and of one
    byte size."""
    from .ops import _placed
    _placed(plain, f"symmem.{op}: {plain_name}")
    o = _require_owner(sym, f"symmem.{op}: {sym_name}")
    if not sym.is_contiguous():
        raise InvalidArgument(f"symmem.{op}: {sym_name} must be contiguous (bytes move in memory order)")
    nbytes = sym.numel() * sym.element_size()
    if plain.numel() * plain.element_size() != nbytes:
        raise InvalidArgument(f"symmem.{op}: {plain_name} holds {plain.numel() * plain.element_size()} bytes but {sym_name} "
                              f"{nbytes}; pass tensors of one byte size")
    return o, nbytes


def put(dst, peer, src, *, stream=None, engine="sm"):
    """Writes src (any CUDA tensor) into `peer`'s copy of symmetric tensor dst (same byte size)."""
    o, nbytes = _pair("put", dst, "dst", src, "src")
    _lib().put(o.buf, peer, _offset(o, dst), src.data_ptr(), nbytes, _stream(stream), engine)


def get(dst, src, peer, *, stream=None, engine="sm"):
    """Reads `peer`'s copy of symmetric tensor src into dst (any CUDA tensor, same byte size)."""
    o, nbytes = _pair("get", src, "src", dst, "dst")
    _lib().get(dst.data_ptr(), o.buf, peer, _offset(o, src), nbytes, _stream(stream), engine)


def put_signal(dst, peer, src, slot, value=1, *, op="set", stream=None, engine="sm"):
    """put, then sets (or adds to) signal `slot` of `peer` once the data is visible there."""
    o, nbytes = _pair("put_signal", dst, "dst", src, "src")
    _lib().put_signal(o.buf, peer, _offset(o, dst), src.data_ptr(), nbytes, slot, value, op, _stream(stream), engine)


def signal(t, peer, slot, value=1, *, op="set", stream=None):
    """Sets (or adds to) signal `slot` of t's buffer on `peer`, after the stream's earlier work."""
    o = _require_owner(t, "symmem.signal")
    _lib().signal(o.buf, peer, slot, value, op, _stream(stream))


def wait(t, slot, value=1, *, cmp="ge", stream=None):
    """Holds the stream until this rank's signal `slot` of t's buffer satisfies `cmp value`
    (bounded: an expired wait raises symmem.Timeout at the next synchronising call)."""
    o = _require_owner(t, "symmem.wait")
    _lib().wait(o.buf, slot, cmp, value, _stream(stream))


def barrier(t, *, stream=None):
    """Holds the stream until every member of t's group has reached this barrier on t's buffer."""
    o = _require_owner(t, "symmem.barrier")
    _lib().barrier(o.buf, _stream(stream))
