"""Tensor-parallel GEMMs with their communication hidden (symmem/overlap.hpp says how).

    c, a = symmem.all_gather_matmul(a_shard, b, return_a=True)   # c = all_gather(a_shard) @ b
    c_shard = symmem.matmul_reduce_scatter(a, b)                  # this rank's rows of sum_r(a_r @ b_r)

bf16 or fp16 (both operands alike), row-major, fp32 accumulation; on the current stream, capturable in CUDA graphs. M (the full
row count) must be a multiple of the group size; with none (every rank passes no rows) the results
are empty and nothing is launched; K and Nc must be positive. Each group keeps one TensorParallel, remade
(collectively: every rank makes the same calls) when a call needs larger buffers. A remake cannot
happen while a CUDA graph is captured (it is refused with InvalidArgument): call each operation
once, eagerly, at the largest sizes before capturing. A TensorParallel that a captured graph uses
is kept until symmem.finalize(), so the graph stays valid after a remake."""
from . import _current_stream, _group, _lib, _torch, InvalidArgument
from .ops import _on_rank_gpu


class _Entry:
    __slots__ = ("tp", "m", "k", "n", "captured")

    def __init__(self, tp, m, k, n):
        self.tp, self.m, self.k, self.n, self.captured = tp, m, k, n, False


_tp = {}       # group name -> _Entry
_retired = []  # TensorParallels replaced after a graph captured them: their buffers stay mapped


def _get(op, g, m, k, n):
    torch = _torch()
    capturing = torch.cuda.is_current_stream_capturing()
    have = _tp.get(g.name)
    if have is None or m > have.m or k > have.k or n > have.n:
        if capturing:
            raise InvalidArgument(f"{op}: M={m}, K={k}, Nc={n} need larger buffers than this group holds, and making them is "
                                  "collective work that cannot run inside a CUDA graph capture: call it once eagerly at these "
                                  "(or the largest) sizes before capturing")
        mm, kk, nn = (m, k, n) if have is None else (max(m, have.m), max(k, have.k), max(n, have.n))
        if have is not None and have.captured:
            _retired.append(have.tp)  # a captured graph still points into its buffers
        _tp.pop(g.name, None)
        have = _tp[g.name] = _Entry(_lib().TensorParallel(g._comm, mm, kk, nn), mm, kk, nn)
    if capturing:
        have.captured = True
    return have.tp


_CODES = {"bfloat16": 2, "float16": 1}  # symmem DataType codes


def _operands(op, a, b, a_name):
    """(rows of a, K, Nc, dtype code) after checking both operands of a @ b."""
    torch = _torch()
    for t, name in ((a, a_name), (b, "b")):
        if not isinstance(t, torch.Tensor) or not t.is_cuda or t.dtype not in (torch.bfloat16, torch.float16) or t.dim() != 2 \
                or not t.is_contiguous():
            raise InvalidArgument(f"{op}: {name} must be a contiguous 2-D bfloat16 or float16 CUDA tensor")
        _on_rank_gpu(t, f"{op}: {name}")
    if a.dtype != b.dtype:
        raise InvalidArgument(f"{op}: {a_name} is {a.dtype} but b is {b.dtype}; pass both alike")
    rows, k = a.shape
    if b.shape[0] != k:
        raise InvalidArgument(f"{op}: {a_name} is [{rows}, {k}] but b is {tuple(b.shape)}")
    if not k or not b.shape[1]:
        raise InvalidArgument(f"{op}: {a_name} is [{rows}, {k}] and b {tuple(b.shape)}: K and Nc must be positive")
    return rows, k, b.shape[1], _CODES[str(a.dtype).split(".")[-1]]


def all_gather_matmul(a_shard, b, group=None, *, return_a=False, mode="auto"):
    """a_shard: [M/N, K] (this rank's rows), b: [K, Nc]. Returns c [M, Nc] (and the gathered a [M, K])."""
    torch = _torch()
    g = _group(group)
    rows, k, n, code = _operands("all_gather_matmul", a_shard, b, "a_shard")
    m = rows * g.size
    c = torch.empty(m, n, dtype=a_shard.dtype, device=a_shard.device)
    a = torch.empty(m, k, dtype=a_shard.dtype, device=a_shard.device) if return_a else None
    if not m:  # no rows on any rank (every rank passes the same shard shape): nothing to gather or multiply
        return (c, a) if return_a else c
    tp = _get("all_gather_matmul", g, m, k, n)
    tp.all_gather_matmul(a_shard.data_ptr(), m, k, b.data_ptr(), n, c.data_ptr(), a.data_ptr() if a is not None else 0,
                         _current_stream(), mode, code)
    return (c, a) if return_a else c


def matmul_reduce_scatter(a, b, op="sum", group=None, *, mode="auto"):
    """a: [M, K], b: [K, Nc]. Returns this rank's rows [M/N, Nc] of the sum (or avg) over ranks of a @ b."""
    torch = _torch()
    g = _group(group)
    m, k, n, code = _operands("matmul_reduce_scatter", a, b, "a")
    if m % g.size:
        raise InvalidArgument(f"matmul_reduce_scatter: M={m} is not a multiple of the group's {g.size} ranks")
    c = torch.empty(m // g.size, n, dtype=a.dtype, device=a.device)
    if not m:  # no rows (the same on every rank): nothing to multiply or reduce
        return c
    tp = _get("matmul_reduce_scatter", g, m, k, n)
    tp.matmul_reduce_scatter(a.data_ptr(), m, k, b.data_ptr(), n, c.data_ptr(), op, _current_stream(), mode, code)
    return c
