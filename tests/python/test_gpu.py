"""GPU suite of the Python package under torchrun (tests/python/launch.py): one rank per GPU, or
several (SYMMEM_TEST_RANKS_PER_GPU, launch.py --ranks-per-gpu).

Every collective is compared with torch.distributed on random tensors of every dtype, odd sizes,
symmetric and plain, in place and out, inside a CUDA graph and under torch.compile(fullgraph=True):
over NCCL with a GPU a rank; where ranks share a GPU (no NCCL between them) over gloo, through the
host, against every rank's bytes gathered there. Ranks agree on pass/fail before any of them
asserts."""
import gc
import os
import random
import zlib

import torch
import torch.distributed as dist

import symmem

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
PER_GPU = int(os.environ.get("SYMMEM_TEST_RANKS_PER_GPU", "1"))
SHARED = PER_GPU > 1  # ranks share a GPU: symmem has no NCCL there, and torch's references go over gloo
DEBUG_CHECKS = os.environ.get("SYMMEM_DEBUG_CHECKS", "0").strip() == "1"  # (agreed across ranks when symmem starts)
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) // PER_GPU)
if not dist.is_initialized():
    if SHARED:
        dist.init_process_group("gloo")
    else:
        dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
G = symmem.init()
DEV = torch.device("cuda", torch.cuda.current_device())

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
FP8 = [d for d in (getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e5m2", None)) if d is not None]
SIZES = [1, 7, 1000, 4099, 65537, (1 << 20) + 3]
# Relative rounding of one step, by dtype; NCCL rounds at every ring step, symmem once.
EPS = {torch.float64: 2.0 ** -45, torch.float32: 2.0 ** -20, torch.float16: 2.0 ** -10, torch.bfloat16: 2.0 ** -7}
for d in FP8:
    EPS[d] = 2.0 ** -2 if d == torch.float8_e5m2 else 2.0 ** -3


def seed_of(*key):
    """The same on every rank (Python's own hash of a str is not)."""
    return zlib.crc32(repr(key).encode()) % (1 << 30)


def agreed_step(step):
    """Runs step on every rank, then the ranks agree: "" where every rank passed, else each failing
    rank's reason (ranks with the same reason on one line; a report every rank already agreed on,
    from an inner step, comes back as it is). A test that runs steps in a row (rounds, replays)
    stops after a step that failed anywhere: a rank that stopped alone would leave the others in
    the next step's barrier or collective."""
    try:
        msg = step() or ""
    except Exception as e:  # noqa: BLE001 - reported on every rank below
        import traceback
        msg = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    torch.cuda.synchronize()
    all_msgs = [None] * WORLD
    dist.all_gather_object(all_msgs, msg)
    if msg.startswith("rank") and all(m == msg for m in all_msgs):
        return msg
    lines = []
    for r, m in enumerate(all_msgs):
        if m and m not in all_msgs[:r]:
            who = [q for q, x in enumerate(all_msgs) if x == m]
            lines.append(f"rank{'s' if len(who) > 1 else ''} {', '.join(map(str, who))}: {m}")
    return "\n".join(lines)


def agreed(body):
    """Runs body on every rank; every rank fails if any rank failed (with each rank's reason)."""
    report = agreed_step(body)
    assert not report, report


def captured(fn):
    """fn run once on a side stream (as torch asks before a capture), then captured: (graph, what
    the captured call returned)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = fn()
    return graph, got


def rand(n, dtype, seed):
    g = torch.Generator(device=DEV)
    g.manual_seed(seed)
    if dtype == torch.int32:
        return torch.randint(-1000, 1000, (n,), generator=g, device=DEV, dtype=torch.int32)
    return torch.randn(n, generator=g, device=DEV, dtype=torch.float32).to(dtype)


def gathered(x):
    """Every rank's x (exact: NCCL or gloo moves bytes), as [WORLD, n] in x's dtype."""
    raw = x.contiguous().view(-1).view(torch.uint8)
    if SHARED:
        parts = [torch.empty(raw.numel(), dtype=torch.uint8) for _ in range(WORLD)]
        dist.all_gather(parts, raw.cpu())
        return torch.stack(parts).to(DEV).view(x.dtype).view(WORLD, -1)
    out = torch.empty(WORLD * raw.numel(), dtype=torch.uint8, device=DEV)
    dist.all_gather_into_tensor(out, raw)
    return out.view(x.dtype).view(WORLD, -1)


def all_gathered(t):
    """torch.distributed's all-gather of t along dim 0."""
    return gathered(t).view(WORLD * t.shape[0], *t.shape[1:])


def all_reduce_ref_(t):
    """torch.distributed's sum of t over the ranks, in place: NCCL's; where ranks share a GPU, every
    rank's t summed in fp64 (gathered over gloo)."""
    if SHARED:
        t.copy_(reduce_ref(gathered(t), "sum").view(t.shape))
    else:
        dist.all_reduce(t)


def all_to_all_ref(x):
    """The bytes an all-to-all of x (WORLD equal chunks) leaves on this rank: NCCL's; where ranks
    share a GPU, the chunks for this rank cut from every rank's x (gathered over gloo)."""
    if SHARED:
        return gathered(x).view(torch.uint8).view(WORLD, WORLD, -1)[:, RANK].reshape(-1)
    ref = torch.empty(x.numel() * x.element_size(), dtype=torch.uint8, device=DEV)
    dist.all_to_all_single(ref, x.view(torch.uint8))
    return ref


def refused_for_sharing(e, plain):
    """Whether e is the refusal of a call with a plain buffer (plain: one of its buffers is) past the
    sizes symmem moves itself, which go to NCCL, where ranks share a GPU (and so have no NCCL)."""
    return SHARED and plain and "ranks share a GPU" in str(e)


def ran(call, plain):
    """call(); False where refused_for_sharing (the same on every rank: sizes and kinds of buffer)."""
    try:
        call()
        return True
    except symmem.InvalidArgument as e:
        if refused_for_sharing(e, plain):
            return False
        raise


def refusal_error(name, call, *words):
    """"" where call() raises InvalidArgument naming each of `words`; else what went wrong."""
    try:
        call()
    except symmem.InvalidArgument as e:
        missing = [w for w in words if w not in str(e)]
        return f"{name}: '{e}' does not name {missing}" if missing else ""
    return f"{name}: accepted"


def reduce_ref(stack, op):
    """op over dim 0 of stack (one row a rank), in fp64 (exact for integers below 2^53)."""
    s = stack.double()
    if op == "sum":
        return s.sum(0)
    if op == "avg":
        return s.sum(0) / stack.shape[0]
    if op == "max":
        return s.max(0).values
    if op == "min":
        return s.min(0).values
    raise ValueError(op)


def reduce_terms(stack):
    """The sum of the magnitudes of the terms of a sum over ranks (close's terms)."""
    return stack.double().abs().sum(0)


def close(got, ref, dtype, steps, terms=None):
    """'' or what differs: float types within steps roundings of the dtype, integers exact. A sum's
    roundings are relative to its partial sums, not to its result: where the terms are large
    against their sum (cancellation), pass terms, the sum of their magnitudes (reduce_terms)."""
    g, r = got.reshape(-1).double(), ref.reshape(-1).double()
    if not dtype.is_floating_point:
        bad = (g != r)
    else:
        tol = EPS[dtype] * steps * ((r.abs() if terms is None else terms.reshape(-1).double()) + 1.0)
        bad = ~((g - r).abs() <= tol)
    if bool(bad.any()):
        i = int(bad.nonzero()[0])
        return f"{int(bad.sum())} of {got.numel()} elements differ; first at {i}: got {g[i].item()}, want {r[i].item()}"
    return ""


def poison(t):
    t.view(torch.uint8).fill_(0xCD)
    return t


def make(n, dtype, symmetric):
    return symmem.empty(n, dtype=dtype) if symmetric else torch.empty(n, dtype=dtype, device=DEV)


# ---- tests -------------------------------------------------------------------------------------
def test_symmetric_tensors_and_peers():
    def body():
        x = symmem.empty(4099, dtype=torch.bfloat16)
        x.copy_(rand(4099, torch.bfloat16, 100 + RANK))
        torch.cuda.synchronize()
        dist.barrier()
        errs = []  # (every rank reaches the second barrier, whatever it found)
        for p in range(WORLD):
            want = rand(4099, torch.bfloat16, 100 + p)
            if not torch.equal(symmem.peer_tensor(x, p), want):
                errs.append(f"peer {p}'s tensor is not its data")
            if int(symmem.signal_pad(x, p)[:1024].abs().sum()) != 0:
                errs.append(f"peer {p}'s signal pad is not zero")
        peers, pads = symmem.pointer_tables(x)
        if peers[RANK].item() != x.data_ptr():
            errs.append("the pointer table's own entry is not the tensor's address")
        dist.barrier()
        return "; ".join(errs)
    agreed(body)


def test_all_reduce_matches_nccl():
    def body():
        errs = []
        for dtype in FLOATS + FP8 + [torch.int32]:
            ops = ["sum", "avg", "max", "min"] if dtype != torch.int32 else ["sum", "max", "min"]
            for n in SIZES:
                for op in ops:
                    for symmetric in (True, False):
                        for inplace in (True, False):
                            seed = seed_of(str(dtype), n, op, symmetric, inplace)
                            x = make(n, dtype, symmetric)
                            x.copy_(rand(n, dtype, seed + RANK))
                            ref = reduce_ref(gathered(x), op)
                            steps = 2 if op in ("max", "min") else WORLD  # NCCL's ring rounds n-1 times
                            try:
                                if inplace:
                                    symmem.all_reduce(x, op)
                                    got = x
                                else:
                                    got = poison(torch.empty_like(x))
                                    symmem.all_reduce(x, op, out=got)
                            except symmem.InvalidArgument as e:
                                if refused_for_sharing(e, not symmetric or not inplace):  # (out of place: out is plain)
                                    continue
                                raise
                            e = close(got, ref, dtype, steps)
                            if not e and not SHARED and dtype in FLOATS + [torch.int32] and op in ("sum", "max", "min"):
                                # beside torch.distributed's own all-reduce over NCCL
                                y = rand(n, dtype, seed + RANK)
                                dist.all_reduce(y, {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[op])
                                e = close(got, y, dtype, 2 * WORLD)
                                e = e and "against dist.all_reduce: " + e
                            if e:
                                errs.append(f"{dtype} n={n} {op} symmetric={symmetric} inplace={inplace}: {e}")
        return "\n".join(errs[:10])
    agreed(body)


def test_integer_double_bool_reductions_and_any_dtype_moved():
    """int8, uint8, int64 (every bit pattern: sums and products wrap) and float64 reduce exactly as
    the library defines (integers in their own width, wrapping; float64 in fp64,
    rank order); bool sum / prod are or / and; a dtype symmem has no code for (complex64) moves as
    bytes. References from every rank's bytes gathered by torch.distributed."""
    def body():
        errs = []
        n = 4099
        for dtype in (torch.int8, torch.uint8, torch.int64, torch.float64, torch.bool):
            ops = {torch.bool: ["sum", "prod", "max", "min"], torch.float64: ["sum", "max", "min", "prod", "avg"]}.get(
                dtype, ["sum", "max", "min", "prod"])
            for op in ops:
                for symmetric in (True, False):
                    g = torch.Generator(device=DEV)
                    g.manual_seed(seed_of("wide", str(dtype), op, symmetric) + RANK)
                    if dtype == torch.float64:
                        v = torch.randn(n, generator=g, device=DEV, dtype=torch.float64)
                    elif dtype == torch.bool:
                        v = torch.randint(0, 2, (n,), generator=g, device=DEV, dtype=torch.uint8).bool()
                    else:  # every bit pattern
                        v = torch.randint(0, 256, (n * dtype.itemsize,), generator=g, device=DEV, dtype=torch.uint8).view(dtype)
                    x = make(n, dtype, symmetric)
                    x.copy_(v)
                    stack = gathered(x)
                    got = poison(torch.empty_like(x))
                    if not ran(lambda: symmem.all_reduce(x, op, out=got), True):  # (out is plain)
                        continue
                    if dtype == torch.bool:
                        ref = stack.any(0) if op in ("sum", "max") else stack.all(0)
                    elif dtype == torch.float64:
                        ref = stack[0].clone()
                        for r in range(1, WORLD):  # rank order, as symmem folds
                            ref = {"sum": ref + stack[r], "avg": ref + stack[r], "prod": ref * stack[r],
                                   "max": torch.maximum(ref, stack[r]), "min": torch.minimum(ref, stack[r])}[op]
                        if op == "avg":  # (a true quotient: torch divides by a scalar as a product with 1 / WORLD,
                            ref = ref / torch.full_like(ref, WORLD)  # one ulp off where WORLD is not a power of 2)
                    else:
                        wide = stack.to(torch.int64)  # (8-bit values fit; int64 wraps as the library's does)
                        ref = wide[0].clone()
                        for r in range(1, WORLD):
                            ref = {"sum": ref + wide[r], "prod": ref * wide[r], "max": torch.maximum(ref, wide[r]),
                                   "min": torch.minimum(ref, wide[r])}[op]
                        ref = ref.to(dtype) if dtype == torch.int64 else (ref & 0xFF).to(torch.uint8).view(dtype)
                    if not torch.equal(got, ref):
                        bad = (got != ref).nonzero()
                        i = int(bad[0]) if bad.numel() else -1
                        errs.append(f"all_reduce {dtype} {op} symmetric={symmetric}: {bad.numel()} differ; first at {i}: "
                                    f"got {got[i].item()}, want {ref[i].item()}")
        # complex64: no symmem code; all_gather, broadcast and all_to_all move its bytes.
        x = symmem.empty(2 * WORLD, dtype=torch.complex64)
        x.copy_(torch.complex(torch.full((2 * WORLD,), float(RANK), device=DEV), torch.arange(2 * WORLD, device=DEV, dtype=torch.float32)))
        out = poison(symmem.empty(2 * WORLD * WORLD, dtype=torch.complex64))
        symmem.all_gather(out, x)
        if not torch.equal(out.view(WORLD, -1), gathered(x)):
            errs.append("all_gather complex64 differs from every rank's bytes")
        a2a = poison(symmem.empty(2 * WORLD, dtype=torch.complex64))
        symmem.all_to_all(a2a, x)
        if not torch.equal(a2a.view(torch.uint8), all_to_all_ref(x)):
            errs.append("all_to_all complex64 differs from torch.distributed's")
        y = poison(symmem.empty(2 * WORLD, dtype=torch.complex64))  # (every rank allocates: collective)
        if RANK == 0:
            y.copy_(x)
        symmem.broadcast(y, src=0)
        if not torch.equal(y, gathered(y)[0]):
            errs.append("broadcast complex64: not rank 0's bytes")
        return "\n".join(errs[:10])
    agreed(body)


class _DLPackOnly:
    """Another library's CUDA array as symmem sees it: only __dlpack__ (CuPy, JAX)."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, *args, **kwargs):
        return self._t.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


class _CudaArrayInterfaceOnly:
    """Only __cuda_array_interface__ (CuPy, Numba)."""

    def __init__(self, t):
        self._t = t

    @property
    def __cuda_array_interface__(self):
        return self._t.__cuda_array_interface__


def test_arrays_of_other_libraries_through_dlpack_and_cuda_array_interface():
    def body():
        errs = []
        for wrap in (_DLPackOnly, _CudaArrayInterfaceOnly):
            n = 4099
            seed = seed_of(wrap.__name__)
            x = torch.empty(n, dtype=torch.float32, device=DEV)
            x.copy_(rand(n, torch.float32, seed + RANK))
            ref = reduce_ref(gathered(x), "sum")
            out = poison(torch.empty_like(x))
            if symmem.all_reduce(wrap(x), "sum", out=wrap(out)) is None:
                errs.append(f"{wrap.__name__}: all_reduce returned None")
            e = close(out, ref, torch.float32, WORLD)
            if e:
                errs.append(f"{wrap.__name__} all_reduce out: {e}")
            symmem.all_reduce(wrap(x), "sum")  # in place, into the array's memory
            e = close(x, ref, torch.float32, WORLD)
            if e:
                errs.append(f"{wrap.__name__} all_reduce in place: {e}")
            g = poison(torch.empty(n * WORLD, dtype=torch.float32, device=DEV))
            symmem.all_gather(wrap(g), wrap(x))
            e = close(g.view(WORLD, n), gathered(x).float(), torch.float32, 1)
            if e:
                errs.append(f"{wrap.__name__} all_gather: {e}")
        try:
            symmem.all_reduce(object())
            errs.append("all_reduce(object()) raised nothing")
        except symmem.InvalidArgument:
            pass
        return "\n".join(errs)
    agreed(body)


def test_reduce_scatter_all_gather_broadcast_all_to_all_match_nccl():
    def body():
        errs = []
        for dtype in FLOATS + FP8 + [torch.int32]:
            for m in (1, 7, 1000, 65537):
                for symmetric in (True, False):
                    seed = seed_of(str(dtype), m, symmetric)
                    # reduce_scatter
                    x = make(m * WORLD, dtype, symmetric)
                    x.copy_(rand(m * WORLD, dtype, seed + RANK))
                    ref = reduce_ref(gathered(x), "sum").view(WORLD, m)[RANK]
                    out = poison(make(m, dtype, symmetric))
                    e = close(out, ref, dtype, WORLD) if ran(lambda: symmem.reduce_scatter(out, x), not symmetric) else ""
                    if e:
                        errs.append(f"reduce_scatter {dtype} m={m} symmetric={symmetric}: {e}")
                    # all_gather, against dist.all_gather_into_tensor
                    x = make(m, dtype, symmetric)
                    x.copy_(rand(m, dtype, seed + 7 + RANK))
                    out = poison(make(m * WORLD, dtype, symmetric))
                    if ran(lambda: symmem.all_gather(out, x), not symmetric) and \
                            not torch.equal(out.view(torch.uint8), gathered(x).view(-1).view(torch.uint8)):
                        errs.append(f"all_gather {dtype} m={m} symmetric={symmetric}: differs from NCCL's")
                    # broadcast from the last rank
                    x = make(m, dtype, symmetric)
                    x.copy_(rand(m, dtype, seed + 11 + RANK))
                    want = rand(m, dtype, seed + 11 + WORLD - 1)
                    if ran(lambda: symmem.broadcast(x, src=WORLD - 1), not symmetric) and \
                            not torch.equal(x.view(torch.uint8), want.view(torch.uint8)):
                        errs.append(f"broadcast {dtype} m={m} symmetric={symmetric}: differs from the root's")
                    # all_to_all, against dist.all_to_all_single on the bytes
                    x = make(m * WORLD, dtype, symmetric)
                    x.copy_(rand(m * WORLD, dtype, seed + 13 + RANK))
                    out = poison(make(m * WORLD, dtype, symmetric))
                    if ran(lambda: symmem.all_to_all(out, x), not symmetric) and not torch.equal(out.view(torch.uint8), all_to_all_ref(x)):
                        errs.append(f"all_to_all {dtype} m={m} symmetric={symmetric}: differs from NCCL's")
        return "\n".join(errs[:10])
    agreed(body)


def test_reduce_gather_scatter_against_every_ranks_data():
    """reduce (in place on dst; the others' tensors left alone), gather (output on dst only, None
    elsewhere; push with every rank's symmetric counterpart) and scatter (input on src only; direct
    with every rank's counterpart), every root, symmetric and plain tensors, against every rank's
    bytes gathered by torch.distributed."""
    def body():
        errs = []
        for dtype in (torch.float32, torch.bfloat16, torch.int64):
            for m in (1, 1000, 65537):
                for root in range(WORLD):
                    for symmetric in (True, False):
                        seed = seed_of("rooted", str(dtype), m, root, symmetric)
                        what = f"{dtype} m={m} root={root} symmetric={symmetric}"
                        # reduce (sum), in place on the root
                        x = make(m, dtype, symmetric)
                        x.copy_(rand(m, torch.float32, seed + RANK).mul(100).to(dtype))
                        mine = x.clone()
                        stack = gathered(x)
                        if ran(lambda: symmem.reduce(x, dst=root), not symmetric):
                            if RANK == root:
                                e = (close(x, reduce_ref(stack, "sum"), dtype, WORLD, reduce_terms(stack)) if dtype != torch.int64
                                     else ("" if torch.equal(x, stack.sum(0)) else "int64 sum differs"))
                                if e:
                                    errs.append(f"reduce {what}: {e}")
                            elif not torch.equal(x, mine):
                                errs.append(f"reduce {what}: a non-root's tensor changed")
                        # gather
                        x = make(m, dtype, symmetric)
                        x.copy_(rand(m, torch.float32, seed + 7 + RANK).mul(100).to(dtype))
                        want = gathered(x).view(-1).view(torch.uint8)
                        out = poison(make(m * WORLD, dtype, symmetric))
                        for algo in ("auto", "push") if symmetric else ("auto",):
                            poison(out)
                            if ran(lambda: symmem.gather(out if RANK == root or algo == "push" else None, x, dst=root, algo=algo),
                                   not symmetric) and RANK == root and not torch.equal(out.view(torch.uint8), want):
                                errs.append(f"gather {what} algo={algo}: differs from every rank's input")
                        # scatter from the root
                        x = make(m * WORLD, dtype, symmetric)
                        x.copy_(rand(m * WORLD, torch.float32, seed + 11 + RANK).mul(100).to(dtype))
                        want = gathered(x)[root].view(WORLD, m)[RANK]
                        out = poison(make(m, dtype, symmetric))
                        for algo in ("auto", "direct") if symmetric else ("auto",):
                            poison(out)
                            if ran(lambda: symmem.scatter(out, x if RANK == root or algo == "direct" else None, src=root, algo=algo),
                                   not symmetric) and not torch.equal(out.view(torch.uint8), want.view(torch.uint8)):
                                errs.append(f"scatter {what} algo={algo}: differs from the root's block")
        return "\n".join(errs[:10])
    agreed(body)


def test_views_at_an_offset_into_symmetric_tensors():
    """Every collective on views that start a few elements into a symmetric tensor (x[3:], a
    tensor's slice): the kernels' unaligned paths, which a start on a 16-byte boundary never
    takes, and the forms that reach the root's view at its offset (gather's push, scatter's
    direct); outputs poisoned, against every rank's bytes gathered by torch.distributed."""
    def body():
        errs = []
        for dtype in (torch.bfloat16, torch.float32, torch.int32):
            for m in (5, 4099, 65537):
                for off_in, off_out in ((1, 3), (3, 0), (0, 1)):
                    seed = seed_of("views", str(dtype), m, off_in, off_out)
                    what = f"{dtype} m={m} offsets {off_in}/{off_out}"
                    a = symmem.empty(m * WORLD + 8, dtype=dtype)
                    b = symmem.empty(m * WORLD + 8, dtype=dtype)
                    # all_reduce out of place, then in place
                    x, out = a[off_in:off_in + m], poison(b)[off_out:off_out + m]
                    x.copy_(rand(m, dtype, seed + RANK))
                    stack = gathered(x)
                    ref, terms = reduce_ref(stack, "sum"), reduce_terms(stack)
                    symmem.all_reduce(x, out=out)
                    e = close(out, ref, dtype, WORLD, terms)
                    symmem.all_reduce(x)
                    e = e or close(x, ref, dtype, WORLD, terms)
                    if e:
                        errs.append(f"all_reduce {what}: {e}")
                    # reduce_scatter
                    x, out = a[off_in:off_in + m * WORLD], poison(b)[off_out:off_out + m]
                    x.copy_(rand(m * WORLD, dtype, seed + 5 + RANK))
                    stack = gathered(x)
                    ref, terms = reduce_ref(stack, "sum").view(WORLD, m)[RANK], reduce_terms(stack).view(WORLD, m)[RANK]
                    symmem.reduce_scatter(out, x)
                    e = close(out, ref, dtype, WORLD, terms)
                    if e:
                        errs.append(f"reduce_scatter {what}: {e}")
                    # all_gather, all_to_all, broadcast: bytes
                    x, out = a[off_in:off_in + m], poison(b)[off_out:off_out + m * WORLD]
                    x.copy_(rand(m, dtype, seed + 7 + RANK))
                    symmem.all_gather(out, x)
                    if not torch.equal(out.view(torch.uint8), gathered(x).view(-1).view(torch.uint8)):
                        errs.append(f"all_gather {what}: differs from every rank's input")
                    x, out = a[off_in:off_in + m * WORLD], poison(b)[off_out:off_out + m * WORLD]
                    x.copy_(rand(m * WORLD, dtype, seed + 11 + RANK))
                    symmem.all_to_all(out, x)
                    if not torch.equal(out.view(torch.uint8), all_to_all_ref(x)):
                        errs.append(f"all_to_all {what}: differs from every rank's chunks")
                    x = a[off_in:off_in + m]
                    x.copy_(rand(m, dtype, seed + 13 + RANK))
                    symmem.broadcast(x, src=WORLD - 1)
                    if not torch.equal(x.view(torch.uint8), rand(m, dtype, seed + 13 + WORLD - 1).view(torch.uint8)):
                        errs.append(f"broadcast {what}: differs from the root's")
                    # the rooted ones: reduce in place on the root; gather's push (every rank writes
                    # into the root's view) and scatter's direct (every rank reads the root's view)
                    root = m % WORLD
                    x = a[off_in:off_in + m]
                    x.copy_(rand(m, dtype, seed + 17 + RANK))
                    stack, mine = gathered(x), x.clone()
                    symmem.reduce(x, dst=root)
                    e = close(x, reduce_ref(stack, "sum"), dtype, WORLD, reduce_terms(stack)) if RANK == root else (
                        "" if torch.equal(x, mine) else "a non-root's tensor changed")
                    if e:
                        errs.append(f"reduce {what}: {e}")
                    x, out = a[off_in:off_in + m], poison(b)[off_out:off_out + m * WORLD]
                    x.copy_(rand(m, dtype, seed + 19 + RANK))
                    want = gathered(x).view(-1).view(torch.uint8)
                    symmem.gather(out, x, dst=root, algo="push")
                    if RANK == root and not torch.equal(out.view(torch.uint8), want):
                        errs.append(f"gather {what}: differs from every rank's input")
                    x, out = a[off_in:off_in + m * WORLD], poison(b)[off_out:off_out + m]
                    x.copy_(rand(m * WORLD, dtype, seed + 23 + RANK))
                    want = gathered(x)[root].view(WORLD, m)[RANK]
                    symmem.scatter(out, x, src=root, algo="direct")
                    if not torch.equal(out.view(torch.uint8), want.view(torch.uint8)):
                        errs.append(f"scatter {what}: differs from the root's block")
        return "\n".join(errs[:10])
    agreed(body)


RANDOM_OPS = ("all_reduce", "all_reduce_out", "reduce_scatter", "all_gather", "broadcast", "all_to_all", "reduce", "gather", "scatter")
REDUCED = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64)
MOVED = REDUCED + (torch.int16, torch.uint8, torch.bool)


def random_values(n, dtype, seed):
    """n random elements of dtype (integers small enough that no sum of 8 wraps)."""
    g = torch.Generator(device=DEV)
    g.manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,), generator=g, device=DEV).bool()
    if dtype == torch.uint8:
        return torch.randint(0, 256, (n,), generator=g, device=DEV, dtype=torch.uint8)
    if not dtype.is_floating_point:
        return torch.randint(-1000, 1000, (n,), generator=g, device=DEV, dtype=dtype)
    return torch.randn(n, generator=g, device=DEV, dtype=torch.float32 if dtype != torch.float64 else torch.float64).to(dtype)


def members_of(q, split):
    """The global ranks of rank q's team: the world, or (split) the ranks of q's parity."""
    return list(range(q % 2, WORLD, 2)) if split else list(range(WORLD))


def team_inputs(x, split, numel_of):
    """Every member's x of this rank's team, in team order (flattened), gathered over the world:
    each rank's x padded to the largest (teams of different sizes hold different numels)."""
    es = x.element_size()
    raw = x.contiguous().view(-1).view(torch.uint8)
    most = max(numel_of(len(members_of(q, split))) for q in range(WORLD)) * es
    padded = torch.zeros(max(most, 1), dtype=torch.uint8, device=DEV)
    padded[:raw.numel()].copy_(raw)
    rows = gathered(padded)
    return [rows[q][:numel_of(len(members_of(q, split))) * es].view(x.dtype) for q in members_of(RANK, split)]


def parity_team():
    """This rank's team of every other rank (the ranks of its parity), made on every rank (collective)."""
    teams = [symmem.new_group(list(range(p, WORLD, 2))) for p in (0, 1) if p < WORLD]
    return next(t for t in teams if t is not None)


def drawn_team(key, i, parity):
    """The world or, in half the cases (drawn alike on every rank from key and i), this rank's
    parity team: (split, its members' global ranks, their number, this rank's place, the group)."""
    split = random.Random(seed_of(key, i)).random() < 0.5
    members = members_of(RANK, split)
    return split, members, len(members), members.index(RANK), parity if split else None


def run_random_cases(cases, case, summary):
    """case(i) for each i below cases, the ranks agreeing after each (a failure anywhere fails every
    rank and stops them all); then rank 0 prints summary()."""
    for i in range(cases):
        report = agreed_step(lambda: case(i))
        assert not report, report
    if RANK == 0:
        print(summary())


def row_fingerprints(rows, probe, scales=None):
    """The rows [R, H] (2-byte or 1-byte elements) as a sorted int64 vector that is equal for equal
    multisets of rows: each row's bits weighed by probe[:H] and summed (exact integer arithmetic,
    order-free), plus its scales' int32 words weighed by the probe's next entries."""
    bits = rows.contiguous().view(torch.uint8 if rows.element_size() == 1 else torch.int16).long()
    h = bits.shape[1]
    f = (bits * probe[:h]).sum(1)
    if scales is not None:
        words = scales.contiguous().view(torch.int32).long()
        f = f + (words * probe[h:h + words.shape[1]]).sum(1)
    return f.sort().values


def test_random_calls_on_views_teams_and_graphs():
    """Random calls of the nine collectives, drawn alike on every rank from one seed: a dtype of
    each kind (integers and bool moved or reduced as the op allows), sum, avg, max or min, 1 - 2^21
    / world elements a rank (past the sizes symmem moves itself, so plain tensors also meet the
    refusal where ranks share a GPU and NCCL where they do not), 1-D or 2-D views that start 0-7 elements into a larger symmetric or
    plain tensor, every root, gather's push and scatter's direct, on the world or on the team of
    every other rank (teams of two sizes at once where the world is odd), eagerly or captured in a
    CUDA graph and replayed with new data; outputs poisoned, against every member's input gathered
    by torch.distributed. A tenth of the calls pass a strided view, which every rank must refuse."""
    my_split = parity_team()
    cases = 48 if WORLD > 4 else 96
    counts = {"graphs": 0, "refused": 0, "views": 0, "split": 0, "symmetric": 0, "shared_refusals": 0, "large": 0}
    ran_ops = {}

    def case(i):
        rng = random.Random(seed_of("random python calls", i))
        op = rng.choice(RANDOM_OPS)
        reduces = op in ("all_reduce", "all_reduce_out", "reduce_scatter", "reduce")
        dtype = rng.choice(REDUCED if reduces else MOVED)
        rop = rng.choice(("sum", "avg", "max", "min") if dtype.is_floating_point else ("sum", "max", "min"))
        split = rng.random() < 0.5
        team = my_split if split else None
        members = members_of(RANK, split)
        n, me = len(members), members.index(RANK)
        m = max(1, min((1 << 21) // WORLD, int(2 ** rng.uniform(0, 20.5))))
        sym = rng.random() < 0.6
        off_in, off_out = rng.randrange(8), rng.randrange(8)
        two_d = rng.random() < 0.3
        graph = rng.random() < 0.25
        strided = rng.random() < 0.1
        root = rng.randrange(64) % n
        algo = "auto"
        if sym and op == "gather" and rng.random() < 0.5:
            algo = "push"
        if sym and op == "scatter" and rng.random() < 0.5:
            algo = "direct"
        in_numel = {"reduce_scatter": m * n, "all_to_all": m * n, "scatter": m * n}.get(op, m)
        out_numel = {"all_gather": m * n, "all_to_all": m * n, "gather": m * n}.get(op, m)
        what = (f"case {i}: {op} {dtype} {rop if reduces else ''} m={m} on {'the split team' if split else 'the world'} of {n}, "
                f"{'symmetric' if sym else 'plain'}, offsets {off_in}/{off_out}{', 2-D' if two_d else ''}{', graph' if graph else ''}"
                f"{', strided' if strided else ''}, root {root}, algo {algo}")

        def tensor(numel, off):
            base = symmem.empty(2 * numel + 16, dtype=dtype, group=team) if sym else torch.empty(2 * numel + 16, dtype=dtype, device=DEV)
            if strided:
                return base[off:off + 2 * numel:2]
            t = base[off:off + numel]
            return t.view(2, numel // 2) if two_d and numel % 2 == 0 else t
        x = tensor(in_numel, off_in)
        out = tensor(out_numel, off_out) if op in ("all_reduce_out", "reduce_scatter", "all_gather", "all_to_all", "gather", "scatter") else None
        takes_out = op != "gather" or RANK == members[root] or algo == "push"
        takes_in = op != "scatter" or RANK == members[root] or algo == "direct"

        def call():
            kw = {"group": team}
            if op == "all_reduce":
                symmem.all_reduce(x, rop, **kw)
            elif op == "all_reduce_out":
                symmem.all_reduce(x, rop, out=out, **kw)
            elif op == "reduce_scatter":
                symmem.reduce_scatter(out, x, rop, **kw)
            elif op == "all_gather":
                symmem.all_gather(out, x, **kw)
            elif op == "broadcast":
                symmem.broadcast(x, src=root, **kw)
            elif op == "all_to_all":
                symmem.all_to_all(out, x, **kw)
            elif op == "reduce":
                symmem.reduce(x, dst=root, op=rop, **kw)
            elif op == "gather":
                symmem.gather(out if takes_out else None, x, dst=root, algo=algo, **kw)
            else:
                symmem.scatter(out, x if takes_in else None, src=root, algo=algo, **kw)

        if strided:
            try:
                call()
            except symmem.InvalidArgument as e:
                counts["refused"] += 1
                return "" if "contiguous" in str(e) else f"{what}: refused, but not for its strided view: {e}"
            return f"{what}: a strided view accepted"
        graph_obj = None
        for it in range(3 if graph else 1):
            x.view(-1).copy_(random_values(in_numel, dtype, seed_of("random python data", i, it, RANK)))
            if out is not None:
                out.view(-1).view(torch.uint8).fill_(0xCD)
            ins = team_inputs(x, split, lambda k: {"reduce_scatter": m * k, "all_to_all": m * k, "scatter": m * k}.get(op, m))
            mine = x.clone()
            try:
                if not graph:
                    call()
                elif graph_obj is None:
                    graph_obj, _ = captured(call)
                    x.view(-1).copy_(mine.view(-1))  # (the warm-up call before the capture ran on this data)
                    if out is not None:
                        out.view(-1).view(torch.uint8).fill_(0xCD)
                    graph_obj.replay()
                else:
                    graph_obj.replay()
            except symmem.InvalidArgument as e:
                if refused_for_sharing(e, not sym):
                    counts["shared_refusals"] += 1
                    return ""
                raise
            torch.cuda.synchronize()
            stack = torch.stack(ins)
            at = f"{what}, run {it}: "
            if op in ("all_reduce", "all_reduce_out"):
                e = close(x if op == "all_reduce" else out, reduce_ref(stack, rop), dtype, n, reduce_terms(stack))
            elif op == "reduce_scatter":
                e = close(out, reduce_ref(stack, rop).view(n, m)[me], dtype, n, reduce_terms(stack).view(n, m)[me])
            elif op == "reduce":
                e = close(x, reduce_ref(stack, rop), dtype, n, reduce_terms(stack)) if RANK == members[root] else (
                    "" if torch.equal(x.view(-1), mine.view(-1)) else "a non-root's tensor changed")
            elif op in ("all_gather", "gather"):
                e = "" if (op == "gather" and RANK != members[root]) or torch.equal(out.reshape(-1), stack.reshape(-1)) else "differs from every member's input"
                if op == "gather" and RANK != members[root] and algo == "push" and not bool((out.view(-1).view(torch.uint8) == 0xCD).all()):
                    e = "push wrote into a non-root's output"
            elif op == "broadcast":
                e = "" if torch.equal(x.reshape(-1), ins[root]) else "differs from the root's"
            elif op == "all_to_all":
                e = "" if torch.equal(out.reshape(-1), stack.view(n, n, m)[:, me].reshape(-1)) else "differs from every member's block"
            else:
                e = "" if torch.equal(out.reshape(-1), ins[root].view(n, m)[me]) else "differs from the root's block"
            if e:
                return at + e
        counts["graphs"] += graph
        counts["views"] += off_in != 0 or off_out != 0 or two_d
        counts["split"] += split
        counts["symmetric"] += sym
        counts["large"] += m > 65536
        ran_ops[op] = ran_ops.get(op, 0) + 1
        return ""

    run_random_cases(cases, case, lambda: (
        f"random python calls: {cases} cases ran and checked ({counts['graphs']} graphs, {counts['views']} at offsets or 2-D, "
        f"{counts['split']} on the split teams, {counts['symmetric']} symmetric, {counts['large']} of over 65536 elements, "
        f"{counts['refused']} strided views refused, {counts['shared_refusals']} plain calls refused where ranks share a GPU); "
        f"ops {sorted(ran_ops.items())}"))


def test_all_to_all_v_with_counts_on_the_gpu():
    def body():
        errs = []
        for trial, big in enumerate((False, True)):
            g = torch.Generator().manual_seed(7 + trial)
            scale = 300000 if big else 500
            counts = torch.randint(0, scale, (WORLD, WORLD), generator=g)  # counts[s][d]: s sends d
            send = counts[RANK]
            total_in, total_out = int(send.sum()), int(counts[:, RANK].sum())
            cap = max(1, int(counts.sum(1).max()))  # symmetric: the same size on every rank
            x = symmem.empty(cap, dtype=torch.bfloat16)
            x.copy_(rand(cap, torch.bfloat16, 50 + RANK))
            sc = symmem.empty(WORLD, dtype=torch.int64)
            sc.copy_(send)
            out = poison(torch.empty(total_out + 5, dtype=torch.bfloat16, device=DEV))
            rc = torch.full((WORLD,), -1, dtype=torch.int64, device=DEV)
            symmem.all_to_all_v(out, x, sc, rc)
            if SHARED:  # every source's chunk for this rank, cut from its x gathered over gloo
                allx = gathered(x).view(torch.uint8)
                ref = torch.cat([allx[s_, int(counts[s_, :RANK].sum()) * 2:][: int(counts[s_, RANK]) * 2] for s_ in range(WORLD)])
            else:
                ref = torch.empty(total_out * 2, dtype=torch.uint8, device=DEV)
                dist.all_to_all_single(ref, x.view(torch.uint8)[: total_in * 2], output_split_sizes=(counts[:, RANK] * 2).tolist(),
                                       input_split_sizes=(send * 2).tolist())
            if not torch.equal(out.view(torch.uint8)[: total_out * 2], ref):
                errs.append(f"trial {trial}: data differs from NCCL's")
            if rc.cpu().tolist() != counts[:, RANK].tolist():
                errs.append(f"trial {trial}: recv_counts {rc.cpu().tolist()} != {counts[:, RANK].tolist()}")
        # A count past the receiver's capacity: InvalidArgument on every rank, nothing written.
        x = symmem.empty(64, dtype=torch.bfloat16)
        sc = symmem.empty(WORLD, dtype=torch.int64)
        sc.fill_(4)
        if RANK == 0:
            sc[WORLD - 1] = 60
        out = poison(torch.empty(4 * WORLD, dtype=torch.bfloat16, device=DEV))
        def overflow():
            symmem.all_to_all_v(out, x, sc)
            G._ctx.synchronize(torch.cuda.current_stream().cuda_stream, "all_to_all_v")
        errs.append(refusal_error("a receiver's overflow", overflow, "rank"))
        return "\n".join(e for e in errs if e)
    agreed(body)


A2AV_TYPES = (torch.uint8, torch.bool, torch.int16, torch.float16, torch.bfloat16, torch.int32, torch.float32,
              torch.int64, torch.float64) + tuple(FP8)


def a2av_counts(rng, n, shape, es):
    """A team of n's counts [n][n] (counts[s][d]: elements member s sends member d) of one shape."""
    most = max(1, min(1 << rng.choice((3, 7, 11, 15)), (1 << 21) // (n * n)))
    if shape == "none":
        return [[0] * n for _ in range(n)]
    if shape == "self":
        return [[rng.randrange(1, most + 1) if s == d else 0 for d in range(n)] for s in range(n)]
    if shape == "one peer":
        to = [rng.randrange(n) for _ in range(n)]
        return [[rng.randrange(1, most + 1) if d == to[s] else 0 for d in range(n)] for s in range(n)]
    if shape == "sparse":
        return [[rng.randrange(1, most + 1) if rng.random() < 0.3 else 0 for d in range(n)] for s in range(n)]
    c = [[rng.randrange(0, most + 1) for d in range(n)] for s in range(n)]
    if shape == "large":  # one split past the 256 KiB an LL split carries: every rank takes the direct branch
        c[rng.randrange(n)][rng.randrange(n)] = (1 << 18) // es + rng.randrange(1, 4096)
    return c


def a2av_arrived(ins, c, me):
    """What member me's all_to_all_v output holds for counts c ([s][d]) and the members' inputs
    ins: each sender's split for me, in member order."""
    return torch.cat([ins[s][sum(c[s][:me]):sum(c[s][:me + 1])] for s in range(len(c))])


def test_random_all_to_all_v_counts_teams_and_graphs():
    """Random all_to_all_v calls from Python, drawn alike on every member of a team from one seed:
    a dtype of 1, 2, 4 or 8 bytes; counts on the GPU of every shape (none, to itself alone, to one
    peer, sparse, uniform, one split past the 256 KiB an LL split carries, so that every rank takes
    the direct branch); algo auto, ll or direct; send_counts symmetric or (auto, ll) plain; the
    input 0-7 elements into a symmetric tensor (the same place on every rank); the output plain or
    symmetric, at the same place on every rank (the direct branch writes) or not (it pulls), exact
    or with room to spare; recv_counts a view passed in or returned; on the world or the team of
    every other rank; 1-2 eager calls on the same buffers, or a CUDA graph replayed with new counts
    and data written in place. Checked against every member's input (each rank's data is drawn
    from a seed of its rank, so every rank makes its peers' inputs itself): what arrived, the
    counts, the room past what arrived and the margins still poisoned, the input unchanged. A
    tenth of the cases carry one bad count (negative, a row past its sender's input, a column past
    its receiver's out_count), eagerly or in a replay, which every rank must refuse naming the team
    rank and the fault, with nothing written anywhere; the next call on the team must work."""
    my_split = parity_team()
    cases = 24 if WORLD > 4 else 48
    counts = {"graphs": 0, "replays": 0, "calls": 0, "split": 0, "direct branch": 0, "plain counts": 0,
              "out at one place": 0, "out elsewhere": 0, "plain out": 0, "recv_counts passed": 0, "bad refused": 0}
    seen = {}

    def case(i):
        split, members, n, me, team = drawn_team("a2av team", i, my_split)
        rng = random.Random(seed_of("a2av case", i, split, n))
        mine = random.Random(seed_of("a2av case", i, RANK))  # what ranks may draw apart
        dtype = rng.choice(A2AV_TYPES)
        es = torch.empty((), dtype=dtype).element_size()
        algo = rng.choice(("auto", "auto", "auto", "ll", "direct"))
        shape = rng.choice(("none", "self", "one peer", "sparse", "uniform", "uniform", "large"))
        graph = rng.random() < 0.25
        runs = 3 if graph else rng.choice((1, 2))
        bad, bad_run = None, None
        if rng.random() < 0.1:  # a good call follows the bad one on the same team (but after a column, in the next case)
            bad = rng.choice(("negative", "row", "column"))
            if graph:
                bad, bad_run = ("negative", "row")[bad == "row"], 1
            else:
                runs, bad_run = (1, 0) if bad == "column" else (2, 0)
        plan = [a2av_counts(rng, n, shape, es) for _ in range(runs)]
        culprit = rng.randrange(n)
        sym_counts = algo == "direct" or rng.random() < 0.7
        in_off = rng.randrange(8)
        out_kind = rng.choice(("plain", "one place", "elsewhere"))
        exact = rng.random() < 0.4
        recv_passed = rng.random() < 0.5
        col = lambda c, d: sum(c[s][d] for s in range(n))  # noqa: E731 - what member d receives
        in_cap = max(1, max(sum(c[s]) for c in plan for s in range(n)) + rng.randrange(0, 64) * (not exact))
        room = [max(col(c, d) for c in plan) for d in range(n)]
        if bad == "column":  # the culprit's out_count one short of what its senders hold for it
            culprit = max(range(n), key=lambda d: room[d])
            if room[culprit] == 0:
                plan[0][culprit][culprit] = 1
                room[culprit] = 1
            in_cap = max(in_cap, max(sum(c[s]) for c in plan for s in range(n)))
        spare = [0 if exact else random.Random(seed_of("a2av room", i, members[d])).randrange(0, 100) for d in range(n)]
        cap = [room[d] - 1 if bad == "column" and d == culprit else room[d] + spare[d] for d in range(n)]
        if bad == "negative":
            plan[bad_run][culprit][rng.randrange(n)] = -rng.randrange(1, 1000)
        elif bad == "row":  # its count to itself: its own receive total is past its out_count too, but the row is named first
            c = plan[bad_run][culprit]
            c[culprit] = in_cap - (sum(c) - c[culprit]) + 1 + rng.randrange(8)
        what = (f"case {i}: {dtype} {shape} counts on {'the split team' if split else 'the world'} of {n}, algo {algo}, "
                f"{'graph' if graph else 'eager'} x{runs}, counts {'symmetric' if sym_counts else 'plain'}, in at +{in_off}, "
                f"out {out_kind}{', exact' if exact else ''}, recv_counts {'passed' if recv_passed else 'returned'}"
                + (f", run {bad_run} bad ({bad}, team rank {culprit})" if bad else ""))

        x_base = symmem.empty(in_off + in_cap, dtype=dtype, group=team)
        x = x_base[in_off:]
        # The output's place: one for every member, or a place of its own (apart for up to 8 members).
        out_off = {"plain": mine.randrange(8), "one place": rng.randrange(8), "elsewhere": (rng.randrange(8) + me) % 8}[out_kind]
        if out_kind == "plain":
            out_base = torch.empty(out_off + cap[me] + 8, dtype=dtype, device=DEV)
        else:  # every member asks for the same size (the largest)
            out_base = symmem.empty(max(cap) + 16, dtype=dtype, group=team)
        out = out_base[out_off:out_off + cap[me]]
        sc = symmem.empty(n, dtype=torch.int64, group=team) if sym_counts else torch.empty(n, dtype=torch.int64, device=DEV)
        rc_base = torch.empty(n + 5, dtype=torch.int64, device=DEV)
        rc_given = rc_base[2:2 + n] if recv_passed else None

        def inputs(run, q):  # member q's input in `run` (every rank draws it alike)
            return random_values(in_cap, dtype, seed_of("a2av data", i, run, members[q]))

        def prepare(run):
            sc.copy_(torch.tensor(plan[run][me], dtype=torch.int64))
            x.copy_(inputs(run, me))
            out_base.view(torch.uint8).fill_(0xCD)
            rc_base.fill_(-7)

        def call():
            return symmem.all_to_all_v(out, x, sc, rc_given, group=team, algo=algo)[1]

        graph_obj = got_rc = None
        for run in range(runs):
            prepare(run)
            at = f"{what}, run {run}: "
            try:
                if not graph:
                    got_rc = call()
                elif graph_obj is None:
                    graph_obj, got_rc = captured(call)
                    prepare(run)  # (the warm-up call before the capture ran on this data)
                    graph_obj.replay()
                else:
                    graph_obj.replay()
                symmem.synchronize()
                if run == bad_run:
                    return at + "bad counts accepted"
            except symmem.InvalidArgument as e:
                if run != bad_run:
                    raise
                words = {"negative": "counts must be >= 0", "row": "add up to", "column": "would receive"}[bad]
                if f"team rank {culprit}" not in str(e) or words not in str(e):
                    return at + f"refused, but '{e}' does not name team rank {culprit} and '{words}'"
                torch.cuda.synchronize()
                if not bool((out_base.view(torch.uint8) == 0xCD).all()):
                    return at + "refused, but the output was written"
                if not bool((rc_base == -7).all()):
                    return at + "refused, but recv_counts was written"
                counts["bad refused"] += 1
                continue
            c = plan[run]
            ins = [inputs(run, q) for q in range(n)]
            want = a2av_arrived(ins, c, me)
            got_n = col(c, me)
            if not torch.equal(out[:got_n].view(torch.uint8), want.view(torch.uint8)):
                return at + f"the {got_n} elements that arrived differ from the senders' splits"
            left = out_base.view(torch.uint8).clone()
            left[out_off * es:(out_off + got_n) * es] = 0xCD
            if not bool((left == 0xCD).all()):
                return at + "written past what arrived (the room or the margins)"
            if got_rc.tolist() != [c[s][me] for s in range(n)]:
                return at + f"recv_counts {got_rc.tolist()}, want {[c[s][me] for s in range(n)]}"
            if recv_passed and (rc_base[:2].tolist() != [-7, -7] or rc_base[2 + n:].tolist() != [-7] * 3):
                return at + "written around the recv_counts view"
            if not torch.equal(x.view(torch.uint8), ins[me].view(torch.uint8)) or sc.tolist() != c[me]:
                return at + "the input or send_counts changed"
            big = max(v for row in c for v in row) * es > (1 << 18)
            counts["direct branch"] += big or algo == "direct"
            seen[shape] = seen.get(shape, 0) + 1
        counts["graphs"] += graph
        counts["replays"] += runs if graph else 0
        counts["calls"] += 0 if graph else runs
        counts["split"] += split
        counts["plain counts"] += not sym_counts
        counts[{"plain": "plain out", "one place": "out at one place", "elsewhere": "out elsewhere"}[out_kind]] += 1
        counts["recv_counts passed"] += recv_passed
        return ""

    run_random_cases(cases, case, lambda: (
        f"random python all_to_all_v: {cases} cases ran and checked ({', '.join(f'{v} {k}' for k, v in counts.items())}); "
        f"runs by shape {sorted(seen.items())}"))


def test_cuda_graph_replays_with_new_data():
    def body():
        n = 65537
        x = symmem.empty(n, dtype=torch.bfloat16)
        y = torch.empty(n, dtype=torch.bfloat16, device=DEV)

        def both():
            symmem.all_reduce(x, out=y)
            symmem.all_reduce(x)  # in place after
        graph, _ = captured(both)
        errs = []
        for it in range(3):
            x.copy_(rand(n, torch.bfloat16, 900 + 10 * it + RANK))
            ref = reduce_ref(gathered(x), "sum")
            graph.replay()
            torch.cuda.synchronize()
            e = close(y, ref, torch.bfloat16, WORLD) or close(x, ref, torch.bfloat16, WORLD)
            if e:
                errs.append(f"replay {it}: {e}")
        return "\n".join(errs)
    agreed(body)


def test_nccl_fallback_captures_in_global_mode():
    # torch.cuda.graph captures in global mode; symmem's NCCL watchdog thread must not break the
    # capture with its event queries (it did at 4 GPUs, where 16 MiB all-reduces go to NCCL).
    def body():
        if not symmem.world().has_nccl:
            return ""
        import time
        n = 1 << 16
        x = torch.empty(n, dtype=torch.float32, device=DEV)
        y = torch.empty(n, dtype=torch.float32, device=DEV)
        x.copy_(rand(n, torch.float32, 950 + RANK))
        ref = reduce_ref(gathered(x), "sum")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            symmem.all_reduce(x, out=y, algo="nccl")  # eager: the watchdog has an event to check
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            symmem.all_reduce(x, out=y, algo="nccl")
            time.sleep(0.15)  # the watchdog wakes while the capture is open
        poison(y)
        graph.replay()
        torch.cuda.synchronize()
        return close(y, ref, torch.float32, WORLD)
    agreed(body)


def test_torch_compile_fullgraph():
    def body():
        def step(a, w):
            h = a @ w
            h = symmem.all_reduce(h)
            return torch.relu(h) + 1

        compiled = torch.compile(step, fullgraph=True)
        a = rand(64 * 32, torch.float32, 5 + RANK).view(64, 32)
        w = rand(32 * 48, torch.float32, 6).view(32, 48)
        got = compiled(a.clone(), w)
        h = a @ w
        all_reduce_ref_(h)
        want = torch.relu(h) + 1
        e = close(got, want, torch.float32, 64)
        # a rooted operation in place on an intermediate (reduce_, as all_reduce_)
        def rooted(a):
            h = a * 2
            symmem.reduce(h, dst=WORLD - 1)
            return h + 1

        got = torch.compile(rooted, fullgraph=True)(a.clone())
        stack = gathered(a * 2)  # (collective: every rank, before the branch)
        want = (reduce_ref(stack, "sum").float().view(a.shape) if RANK == WORLD - 1 else a * 2) + 1
        return e or close(got, want, torch.float32, WORLD)
    agreed(body)


def test_eager_calls_keep_the_dispatchers_semantics():
    """Eager calls skip torch's dispatcher (ops.py): versions still bump, so autograd still sees an
    in-place change of a tensor it saved; a dispatch mode still sees the operator."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    def body():
        n = 4099
        x = symmem.empty(n, dtype=torch.float32)
        x.copy_(rand(n, torch.float32, seed_of("eager", RANK)))
        want = reduce_ref(gathered(x), "sum")
        v = x._version
        symmem.all_reduce(x)
        if x._version <= v:
            return f"the version did not move ({v} -> {x._version})"
        if msg := close(x, want, torch.float32, WORLD):
            return "direct: " + msg
        y = symmem.empty(n, dtype=torch.float32)
        y.copy_(rand(n, torch.float32, seed_of("eager mode", RANK)))
        want = reduce_ref(gathered(y), "sum")
        with Seen() as mode:
            symmem.all_reduce(y)
        if not any("symmem.all_reduce_" in o for o in mode.ops):
            return f"the dispatch mode did not see the operator: {mode.ops}"
        if msg := close(y, want, torch.float32, WORLD):
            return "under a mode: " + msg
        w = torch.ones(n, device=DEV, requires_grad=True)
        a = symmem.empty(n, dtype=torch.float32)
        a.copy_(rand(n, torch.float32, seed_of("eager grad", RANK)))
        loss = (w * a).sum()  # saves a for w's gradient
        symmem.all_reduce(a)
        try:
            loss.backward()
        except RuntimeError as e:
            if "inplace" not in str(e):
                return f"backward raised, but not for the in-place change: {e}"
            return ""
        return "backward ran over a tensor changed in place after autograd saved it"
    agreed(body)


def test_sub_groups_run_at_once():
    def body():
        if WORLD < 2:
            return ""
        pairs = [list(range(i, min(i + 2, WORLD))) for i in range(0, WORLD, 2)]
        mine = next(p for p in pairs if RANK in p)
        groups = [symmem.new_group(p) for p in pairs]  # every rank calls each new_group
        g = next(x for x in groups if x is not None)
        if g.size != len(mine) or g.global_ranks != mine:
            return f"group {g.global_ranks} is not {mine}"
        x = symmem.empty(1000, dtype=torch.float32, group=g)
        x.copy_(rand(1000, torch.float32, 70 + RANK))
        symmem.all_reduce(x, group=g)
        ref = sum(rand(1000, torch.float32, 70 + r).double() for r in mine)
        return close(x, ref, torch.float32, 4)
    agreed(body)


def test_sub_groups_from_a_device_mesh():
    # new_group(mesh=, mesh_dim=): the teams of a DeviceMesh dimension, the same members as torch's.
    def body():
        if WORLD < 2 or WORLD % 2:
            return ""
        from torch.distributed.device_mesh import init_device_mesh
        mesh = init_device_mesh("cuda", (WORLD // 2, 2), mesh_dim_names=("dp", "tp"))
        g = symmem.new_group(mesh=mesh, mesh_dim="tp")
        members = dist.get_process_group_ranks(mesh.get_group("tp"))
        if g is None or g.global_ranks != members:
            return f"group {None if g is None else g.global_ranks} is not torch's {members}"
        x = symmem.empty(1000, dtype=torch.float32, group=g)
        x.copy_(rand(1000, torch.float32, 80 + RANK))
        symmem.all_reduce(x, group=g)
        ref = sum(rand(1000, torch.float32, 80 + r).double() for r in members)
        return close(x, ref, torch.float32, len(members))
    agreed(body)


def used_team_report(g, members, key):
    """Team g (members: its global ranks in team order) at work: an all_gather, an all_reduce, a
    broadcast from a drawn root and an all_to_all_v with drawn counts, each against the members'
    data (drawn from seeds of their global ranks, so every member makes them itself); "" or what
    differs."""
    n, me = len(members), members.index(RANK)
    rng = random.Random(seed_of(key, members))
    m = rng.randrange(1, 6000)
    data = [random_values(m, torch.int32, seed_of(key, "data", q)) for q in members]
    x = symmem.empty(m, dtype=torch.int32, group=g)
    x.copy_(data[me])
    out = poison(symmem.empty(m * n, dtype=torch.int32, group=g))
    symmem.all_gather(out, x, group=g)
    if not torch.equal(out, torch.cat(data)):
        return "all_gather: not every member's data in team order"
    symmem.all_reduce(x, group=g)
    if not torch.equal(x, torch.stack(data).sum(0, dtype=torch.int32)):
        return "all_reduce: not the members' sum"
    root = rng.randrange(n)
    x.copy_(data[me])
    symmem.broadcast(x, src=root, group=g)
    if not torch.equal(x, data[root]):
        return f"broadcast from team rank {root}: not its data"
    c = a2av_counts(rng, n, rng.choice(("uniform", "sparse", "one peer")), 4)
    cap = max(1, max(sum(row) for row in c))
    ins = [random_values(cap, torch.int32, seed_of(key, "a2av", q)) for q in members]
    xa = symmem.empty(cap, dtype=torch.int32, group=g)
    xa.copy_(ins[me])
    sc = symmem.empty(n, dtype=torch.int64, group=g)
    sc.copy_(torch.tensor(c[me], dtype=torch.int64))
    got = poison(torch.empty(sum(c[s][me] for s in range(n)), dtype=torch.int32, device=DEV))
    _, rc = symmem.all_to_all_v(got, xa, sc, group=g)
    symmem.synchronize()
    if not torch.equal(got, a2av_arrived(ins, c, me)) or rc.tolist() != [c[s][me] for s in range(n)]:
        return "all_to_all_v: not the members' splits"
    return ""


def mesh_shapes(world):
    """Every way to write world as a product of 1-3 factors, in order."""
    shapes = [(world,)]
    for a in range(1, world + 1):
        if world % a == 0:
            shapes.append((a, world // a))
            for b in range(1, world // a + 1):
                if (world // a) % b == 0:
                    shapes.append((a, b, world // a // b))
    return shapes


def test_random_groups_from_ranks_torch_groups_and_meshes():
    """Random teams from symmem.new_group, drawn alike on every rank from one seed: from lists of
    ranks (the world, or some of its ranks, cut into 1-4 groups, each in a drawn order, so that a
    team's order need not be the global one; every rank calls new_group for each list), from
    torch.distributed groups (new_subgroups_by_enumeration of such a cut: a rank outside every
    group passes None), or from a dimension of a DeviceMesh of a drawn shape of 1-3 dimensions
    (named, by index, or, of a 1-D mesh, left out). Each rank checks its team (None outside; else
    its size, rank and global ranks, in the order the list or torch gives) and puts it to work
    (all_gather, all_reduce, broadcast, all_to_all_v, each checked against its members' data);
    then a team of an earlier case (up to three kept), drawn alike, works again after the teams
    made since."""
    cases = 8 if WORLD > 4 else 12
    kept = []  # [(members, this rank's Group or None)] of earlier cases
    counts = {"ranks": 0, "torch": 0, "mesh": 0, "teams": 0, "out of order": 0, "outside": 0, "kept again": 0}

    def cut(rng):
        order = list(range(WORLD))
        rng.shuffle(order)
        if rng.random() < 0.3:
            order = order[:rng.randrange(1, WORLD + 1)]  # the others in no team
        k = rng.randrange(1, min(4, len(order)) + 1)
        cuts = sorted(rng.sample(range(1, len(order)), k - 1))
        return [order[a:b] for a, b in zip([0] + cuts, cuts + [len(order)])]

    def case(i):
        rng = random.Random(seed_of("random groups", i))
        kind = rng.choice(("ranks", "torch", "mesh"))
        if kind == "ranks":
            parts = cut(rng)
            made = [symmem.new_group(p) for p in parts]  # every rank calls each
            mine = next((p for p in parts if RANK in p), None)
            g = next((t for t in made if t is not None), None)
            how = f"new_group of each of {parts}"
        elif kind == "torch":
            parts = [sorted(p) for p in cut(rng)]
            cur, _ = dist.new_subgroups_by_enumeration(parts)
            mine = dist.get_process_group_ranks(cur) if cur is not None else None
            g = symmem.new_group(torch_group=cur)
            how = f"new_group(torch_group=) of new_subgroups_by_enumeration({parts})"
        else:
            from torch.distributed.device_mesh import init_device_mesh
            shape = rng.choice(mesh_shapes(WORLD))
            names = ("a", "b", "c")[:len(shape)]
            dim = rng.randrange(len(shape))
            mesh = init_device_mesh("cuda", shape, mesh_dim_names=names)
            which = names[dim] if rng.random() < 0.5 else dim
            mine = dist.get_process_group_ranks(mesh.get_group(which))
            if len(shape) == 1 and rng.random() < 0.5:
                which = None  # (a 1-D mesh's one dimension, left out)
            g = symmem.new_group(mesh=mesh, mesh_dim=which)
            how = f"new_group(mesh=, mesh_dim={which!r}) of a mesh of shape {shape}"
        at = f"case {i}: {how}: "
        if mine is None:
            if g is not None:
                return at + f"rank {RANK} is in no group but got {g}"
            counts["outside"] += 1
        elif g is None or g.global_ranks != mine or g.rank != mine.index(RANK) or g.size != len(mine):
            return at + f"got {g} of {None if g is None else g.global_ranks}, want rank {mine.index(RANK)} of {mine}"
        else:
            report = used_team_report(g, mine, ("random groups", i))
            if report:
                return at + report
            counts["teams"] += 1
            counts["out of order"] += mine != sorted(mine)
        counts[kind] += 1
        if kept:  # an earlier team, drawn alike, works again
            members, old = kept[rng.randrange(len(kept))]
            if old is not None:
                report = used_team_report(old, members, ("random groups again", i))
                if report:
                    return at + f"the earlier team {members} afterwards: {report}"
                counts["kept again"] += 1
        kept.append((mine, g))
        del kept[:-3]
        return ""

    run_random_cases(cases, case, lambda: (
        f"random python groups: {cases} cases ran and checked ({', '.join(f'{v} {k}' for k, v in counts.items())})"))


def test_one_sided_put_signal_wait_get():
    def body():
        if WORLD < 2:
            return ""
        nxt, prv = (RANK + 1) % WORLD, (RANK - 1) % WORLD
        box = symmem.empty(1000, dtype=torch.float32)
        box.zero_()
        torch.cuda.synchronize()
        dist.barrier()
        src = rand(1000, torch.float32, 300 + RANK)
        symmem.put_signal(box, nxt, src, slot=3, value=1)
        symmem.wait(box, slot=3, value=1)
        got = box.clone()
        back = torch.empty(1000, dtype=torch.float32, device=DEV)
        symmem.barrier(box)
        symmem.get(back, box, nxt)
        torch.cuda.synchronize()
        errs = []
        if not torch.equal(got, rand(1000, torch.float32, 300 + prv)):
            errs.append("put_signal's data did not arrive before the signal")
        if not torch.equal(back, src):
            errs.append("get from the next rank did not read what this rank put there")
        symmem.barrier(box)
        torch.cuda.synchronize()
        return "\n".join(errs)
    agreed(body)


ONE_SIDED_DTYPES = (torch.uint8, torch.int16, torch.bfloat16, torch.float32, torch.int64, torch.float64)
ONE_SIDED_FORMS = ("put_signal", "put+signal", "put+barrier", "get", "peer_tensor")
SLOT_RESET_HIGH = 1 << 62  # where a wait compares by le or lt, its slot starts here and a set brings it below


def draw_one_sided_round(rng, n, es, slots):
    """A round of one-sided messages for a team of n (drawn alike on its members): each a shift d
    (member me sends to, or gets from, me + d), its region of the box (elements [at, at + count)),
    form, engine and the kinds of its source and destination; and for each signal slot the
    messages that signal it, how it is reset and waited for, and its final value."""
    msgs, at = [], rng.randrange(8)
    for _ in range(rng.randint(1, 6)):
        nbytes = 0 if rng.random() < 0.05 else int(2 ** rng.uniform(0, 22))
        count = 0 if nbytes == 0 else max(1, nbytes // es)
        m = {"d": rng.randrange(n), "count": count, "at": at, "form": rng.choice(ONE_SIDED_FORMS),
             "engine": rng.choice(("sm", "ce")), "src": rng.choice(("plain", "symmetric", "bytes")),
             "dst": rng.choice(("plain", "bytes")), "two_d": count > 0 and count % 2 == 0 and rng.random() < 0.25,
             "lead": rng.randrange(4)}  # elements before a plain source or destination in its allocation
        if m["form"] in ("put_signal", "put+signal"):
            m["slot"] = rng.choice(slots[:3])  # messages share slots: then they add, and the wait is for the sum
        msgs.append(m)
        at += count + rng.randrange(8)
    waits = {}
    for slot in sorted({m["slot"] for m in msgs if "slot" in m}):
        js = [j for j, m in enumerate(msgs) if m.get("slot") == slot]
        if len(js) > 1 or rng.random() < 0.5:
            for j in js:
                msgs[j]["op"], msgs[j]["value"] = "add", rng.randint(1, 1000)
            final, reset = sum(msgs[j]["value"] for j in js), 0
            cmp = rng.choice(("eq", "ge", "gt"))
            value = final - 1 if cmp == "gt" else final
        else:
            v = rng.randint(1, 1 << 40)
            msgs[js[0]]["op"], msgs[js[0]]["value"] = "set", v
            cmp = rng.choice(("eq", "ne", "ge", "gt", "le", "lt"))
            final, reset = v, (SLOT_RESET_HIGH if cmp in ("le", "lt") else 0)
            value = {"eq": v, "ne": reset, "ge": v, "gt": v - 1, "le": v, "lt": v + 1}[cmp]
        waits[slot] = {"js": js, "cmp": cmp, "value": value, "final": final, "reset": reset,
                       "by": rng.choice(("signal", "signal_pad"))}
    return msgs, waits, at + 8


def one_sided_refusal(rng, box, team_size):
    """One bad one-sided call on box (the same on every rank): (what, the call, words its error must name)."""
    plain = torch.empty(box.numel(), dtype=box.dtype, device=DEV)
    half = box[: box.numel() // 2]
    return rng.choice((
        ("sizes that differ", lambda: symmem.put(half, 0, plain), "one byte size"),
        ("a plain destination", lambda: symmem.put(plain, 0, box), "not symmetric"),
        ("a slot past the user's", lambda: symmem.put_signal(box, 0, plain, slot=1024), "slot=1024"),
        ("a negative slot", lambda: symmem.wait(box, slot=-1), "slot=-1"),
        ("a peer past the team", lambda: symmem.signal(box, team_size, 3), f"peer={team_size}"),
        ("a negative peer", lambda: symmem.get(plain, box, -1), "peer=-1"),
        ("an unknown cmp", lambda: symmem.wait(box, 3, cmp="approx"), "cmp="),
        ("an unknown engine", lambda: symmem.put(box, 0, plain, engine="dma"), "engine="),
        ("an unknown signal op", lambda: symmem.signal(box, 0, 3, op="mul"), "op="),
        ("a strided source view", lambda: symmem.get(plain[::2], box[: box.numel() // 2 * 2][::2], 0), "contiguous"),
        ("a strided destination", lambda: symmem.put(box[::2], 0, plain[::2].contiguous()), "contiguous")))


def test_random_one_sided_calls_on_views_teams_streams_and_graphs():
    """Random rounds of the one-sided calls (put, get, put_signal, signal, wait, barrier,
    peer_tensor, signal_pad), drawn alike on every member of a team from one seed: 1-6 messages a
    round, each a shift d (member me sends to member me + d, itself included), its own region of
    one symmetric tensor (a dtype of 1-8 bytes, 0 - 4 MiB, 1-D or 2-D, starting 0-7 elements
    after the previous region), its source plain, symmetric or a byte view, its destination plain
    or a byte view, at 0-3 elements into their allocations, its engine (sm or ce), and its form:
    put_signal, put then signal, put before a barrier, get after a barrier, or a load through
    peer_tensor. Messages that share a slot add to it, a slot of one message is set or added to;
    its wait compares by eq, ne, ge, gt, le or lt (le and lt from a slot reset high), the slot
    reset by a self-signal or a store through signal_pad. On the current stream, a side stream
    made current, or a side stream passed as stream= (the torch.cuda.Stream or its handle); on the
    world or the team of every other rank; eagerly or captured in a CUDA graph and replayed with
    new data. A region that a signal announces is copied out right after its wait, before any
    barrier, so data that lands after its signal shows. Every region is checked bit for bit
    against the seeded data of the member that wrote it, the box's gaps and the destinations'
    margins against their poison (nothing written past a message), and each slot's final value.
    A tenth of the rounds make one bad call instead, which every rank refuses naming the argument."""
    import contextlib
    my_split = parity_team()
    cases = 40 if WORLD > 4 else 80
    counts = {"graphs": 0, "refused": 0, "split": 0, "messages": 0, "empty": 0, "bytes": 0, "side streams": 0, "shared slots": 0}
    forms, cmps = {}, {}

    def case(i):
        split, members, n, me, team = drawn_team("one-sided team", i, my_split)
        rng = random.Random(seed_of("one-sided round", i, split, n))
        dtype = rng.choice(ONE_SIDED_DTYPES)
        es = torch.empty(0, dtype=dtype).element_size()
        if rng.random() < 0.1:
            box = symmem.empty(64, dtype=dtype, group=team)
            what, call, word = one_sided_refusal(rng, box, n)
            counts["refused"] += 1
            return refusal_error(f"case {i} ({what})", call, word)
        slots = rng.sample(range(symmem._lib().Buffer.user_signal_slots), 3)
        msgs, waits, total = draw_one_sided_round(rng, n, es, slots)
        stream_mode = rng.choice(("current", "side made current", "side passed", "side passed as a handle"))
        graph = rng.random() < 0.25
        what = (f"case {i}: {dtype} on {'the split team' if split else 'the world'} of {n}, {stream_mode}"
                f"{', graph' if graph else ''}: " + "; ".join(
                    f"{m['form']} d={m['d']} {m['count']} at {m['at']} {m['engine']}"
                    + (f" slot {m['slot']} {m['op']} {m['value']}" if "slot" in m else "") for m in msgs)
                + "; waits " + ", ".join(f"{s}: {w['cmp']} {w['value']} (reset {w['reset']} by {w['by']})" for s, w in waits.items()))
        box = symmem.empty(total, dtype=dtype, group=team)
        stage = symmem.empty(total, dtype=dtype, group=team)  # the symmetric sources (regions as in box)
        box.view(torch.uint8).fill_(0xCD)
        region = lambda t, m: (t[m["at"]:m["at"] + m["count"]].view(2, -1) if m["two_d"] else t[m["at"]:m["at"] + m["count"]])
        # Each message's source (this rank as the sender, or as the owner of a region others get)
        # and destination (this rank as the receiver), with their allocations' margins.
        srcs, dsts, allocs = [], [], []
        for m in msgs:
            c, lead = m["count"], m["lead"]
            if m["src"] == "symmetric" and m["form"] not in ("get", "peer_tensor"):
                srcs.append(region(stage, m))
            else:
                whole = torch.empty(c + 8, dtype=dtype, device=DEV)
                srcs.append(whole[lead:lead + c].view(torch.uint8) if m["src"] == "bytes" else whole[lead:lead + c])
            whole = torch.empty(c + 8, dtype=dtype, device=DEV)
            allocs.append((whole, lead))
            dsts.append(whole[lead:lead + c].view(torch.uint8) if m["dst"] == "bytes" else whole[lead:lead + c])
        finals = torch.empty(len(waits), dtype=torch.int64, device=DEV)
        S = None if stream_mode == "current" else torch.cuda.Stream()
        kw = {"side passed": {"stream": S}, "side passed as a handle": {"stream": S.cuda_stream if S else None}}.get(stream_mode, {})
        local = (lambda: torch.cuda.stream(S)) if stream_mode.startswith("side passed") else contextlib.nullcontext
        puts = [j for j, m in enumerate(msgs) if m["form"].startswith("put")]
        loads = [j for j, m in enumerate(msgs) if m["form"] in ("get", "peer_tensor")]

        def body():
            with local():
                for j in loads:  # the data of the regions the others read (this rank's own, in its box)
                    region(box, msgs[j]).view(-1).copy_(srcs[j].view(dtype).view(-1))
            pad = symmem.signal_pad(box)
            for s, w in waits.items():
                if w["by"] == "signal":
                    symmem.signal(box, me, s, w["reset"], op="set", **kw)
                else:
                    with local():
                        pad[s].fill_(w["reset"])
            symmem.barrier(box, **kw)  # the resets and the loaded regions before any peer's signal or load
            for j in puts:
                m = msgs[j]
                peer = (me + m["d"]) % n
                if m["form"] == "put_signal":
                    symmem.put_signal(region(box, m), peer, srcs[j], m["slot"], m["value"], op=m["op"], engine=m["engine"], **kw)
                else:
                    symmem.put(region(box, m), peer, srcs[j], engine=m["engine"], **kw)
                    if m["form"] == "put+signal":
                        symmem.signal(box, peer, m["slot"], m["value"], op=m["op"], **kw)
            for s, w in waits.items():
                symmem.wait(box, s, w["value"], cmp=w["cmp"], **kw)
                with local():
                    for j in w["js"]:  # right after the wait: before any barrier could order the data
                        dsts[j].view(-1).copy_(region(box, msgs[j]).view(-1).view(dsts[j].dtype))
            symmem.barrier(box, **kw)
            for j, m in enumerate(msgs):
                owner = (me + m["d"]) % n
                if m["form"] == "put+barrier":
                    with local():
                        dsts[j].view(-1).copy_(region(box, m).view(-1).view(dsts[j].dtype))
                elif m["form"] == "peer_tensor":
                    with local():
                        dsts[j].view(-1).copy_(symmem.peer_tensor(region(box, m), owner).view(-1).view(dsts[j].dtype))
                elif m["form"] == "get":
                    symmem.get(dsts[j], region(box, m), owner, engine=m["engine"], **kw)
            with local():
                for k, s in enumerate(waits):
                    finals[k:k + 1].copy_(pad[s:s + 1])
            symmem.barrier(box, **kw)  # every load of this round done before a replay's writes

        def run():
            if S is None:
                return body()
            S.wait_stream(torch.cuda.current_stream())
            if stream_mode == "side made current":
                with torch.cuda.stream(S):
                    body()
            else:
                body()
            torch.cuda.current_stream().wait_stream(S)

        graph_obj = None
        for it in range(3 if graph else 1):
            for j, m in enumerate(msgs):
                srcs[j].view(-1).copy_(random_values(m["count"], dtype, seed_of("one-sided data", i, it, j, RANK)).view(srcs[j].dtype))
            for whole, _ in allocs:
                whole.view(torch.uint8).fill_(0xCD)
            finals.fill_(-1)
            torch.cuda.synchronize()
            if graph and graph_obj is None:
                graph_obj, _ = captured(run)  # (its warm-up run is a round like the others: every member makes it)
                for whole, _ in allocs:
                    whole.view(torch.uint8).fill_(0xCD)
                finals.fill_(-1)
            if graph:
                graph_obj.replay()
            else:
                run()
            symmem.synchronize()
            at = f"{what}, run {it}: "
            for j, m in enumerate(msgs):
                whole, lead = allocs[j]
                writer = members[(me - m["d"]) % n] if m["form"].startswith("put") else members[(me + m["d"]) % n]
                want = random_values(m["count"], dtype, seed_of("one-sided data", i, it, j, writer))
                if not torch.equal(whole[lead:lead + m["count"]].view(torch.uint8), want.view(torch.uint8)):
                    return at + f"message {j} ({m['form']}) differs from member {(me - m['d']) % n if m['form'].startswith('put') else (me + m['d']) % n}'s data"
                poisoned = torch.cat((whole[:lead].view(torch.uint8), whole[lead + m["count"]:].view(torch.uint8)))
                if not bool((poisoned == 0xCD).all()):
                    return at + f"message {j} ({m['form']}): its destination's margin was written"
            mask = torch.ones(total, dtype=torch.bool, device=DEV)
            for m in msgs:
                mask[m["at"]:m["at"] + m["count"]] = False
            if not bool((box[mask].view(torch.uint8) == 0xCD).all()):
                return at + "a gap between the box's regions was written (a put ran past its region)"
            want_finals = [w["final"] for w in waits.values()]
            if finals.tolist() != want_finals:
                return at + f"the slots ended at {finals.tolist()}, want {want_finals}"
        counts["graphs"] += graph
        counts["split"] += split
        counts["side streams"] += S is not None
        counts["messages"] += len(msgs)
        counts["empty"] += sum(m["count"] == 0 for m in msgs)
        counts["bytes"] += sum(m["count"] for m in msgs) * es
        counts["shared slots"] += sum(len(w["js"]) > 1 for w in waits.values())
        for m in msgs:
            forms[m["form"], m["engine"]] = forms.get((m["form"], m["engine"]), 0) + 1
        for w in waits.values():
            cmps[w["cmp"]] = cmps.get(w["cmp"], 0) + 1
        return ""

    run_random_cases(cases, case, lambda: (
        f"random one-sided calls: {cases} rounds ran and checked ({counts['messages']} messages ({counts['empty']} of no bytes), "
        f"{counts['bytes']} bytes, {counts['graphs']} graphs, {counts['split']} on the split teams, {counts['side streams']} on "
        f"side streams, {counts['shared slots']} shared slots, {counts['refused']} bad calls refused); forms {sorted(forms.items())}; "
        f"waits {sorted(cmps.items())}"))


def test_frees_in_any_order_keep_tensors_symmetric_and_allocation_fast():
    def body():
        import time
        before = G.mapped_bytes()
        rng = random.Random(RANK)  # a different order on every rank
        def one_round(round_):  # (every rank reaches both barriers; the ranks agree after it)
            ts = [symmem.empty(1000 << (i % 10), dtype=torch.uint8) for i in range(10)]
            for i, t in enumerate(ts):
                t.fill_((RANK * 16 + i) % 251)
            torch.cuda.synchronize()
            dist.barrier()
            bad = ""
            for i, t in enumerate(ts):
                for p in range(WORLD):
                    v = int(symmem.peer_tensor(t, p)[0])
                    if v != (p * 16 + i) % 251 and not bad:
                        bad = f"round {round_} tensor {i}: peer {p} holds {v}"
            dist.barrier()
            rng.shuffle(ts)
            while ts:
                ts.pop()
                if rng.random() < 0.5:
                    gc.collect()
            return bad
        for round_ in range(5):
            report = agreed_step(lambda: one_round(round_))
            if report:
                return report
        grown = G.mapped_bytes() - before
        if grown > (256 << 20):
            return f"the heap grew by {grown} bytes: freed memory is not reused"
        # Speed once grown (a loose bound here; the measurement is symmem.bench's).
        times = []
        for _ in range(23):
            t0 = time.perf_counter()
            t = symmem.empty(1 << 20, dtype=torch.uint8)
            del t
            times.append(time.perf_counter() - t0)
        per = sorted(times[3:])[10]
        return "" if per < 0.005 else f"empty + free of 1 MiB took {per * 1e3:.1f} ms (median)"
    agreed(body)


def test_host_exchanges_leave_no_used_keys_in_torchs_store():
    """symmem joined through torch's store here (init_process_group came first). A team's host
    exchange deletes this rank's key of the team's exchange before it once it completes, so 40 host
    barriers of the world leave at most the last two exchanges' keys, not 40 a rank (as they did
    before session 100: a job under SYMMEM_DEBUG_CHECKS=1, an exchange every call, grew the store
    without bound)."""
    store = dist.distributed_c10d._get_default_store()

    def count():
        try:
            return store.num_keys()
        except Exception:  # noqa: BLE001 - a store that cannot count its keys
            return None

    def body():
        before = count()
        if before is None:
            print("  (this torch's store cannot count its keys: nothing to check)")
            return ""
        for i in range(40):
            G._comm.barrier_host(f"store keys {i}")
        grown = count() - before
        # Other ranks may not yet have deleted their keys of the last two barriers: 3 a rank at most.
        return "" if grown <= 3 * WORLD else (f"40 host barriers of {WORLD} ranks left {grown} more keys in torch's store "
                                              f"(at most {3 * WORLD} expected)")
    agreed(body)


def test_bad_arguments_raise_on_every_rank():
    def body():
        errs = []
        x = symmem.empty(16, dtype=torch.float32)
        i64 = torch.int64
        for name, call in (("complex64", lambda: symmem.all_reduce(torch.zeros(4, dtype=torch.complex64, device=DEV))),
                           ("op median", lambda: symmem.all_reduce(x, "median")),
                           ("transposed", lambda: symmem.all_reduce(torch.zeros(8, 2, device=DEV).t())),
                           ("all_gather sizes", lambda: symmem.all_gather(torch.empty(3, device=DEV), x)),
                           ("broadcast src", lambda: symmem.broadcast(x, src=WORLD)),
                           ("peer_tensor of plain memory", lambda: symmem.peer_tensor(torch.zeros(4, device=DEV), 0)),
                           # counts the kernels would read or write in host memory, or of another type
                           ("recv_counts on the host", lambda: symmem.all_to_all_v(
                               torch.empty(16, device=DEV), x, torch.zeros(WORLD, dtype=i64, device=DEV), torch.zeros(WORLD, dtype=i64))),
                           ("send_counts on the host", lambda: symmem.all_to_all_v(torch.empty(16, device=DEV), x, torch.zeros(WORLD, dtype=i64))),
                           ("send_counts float", lambda: symmem.all_to_all_v(torch.empty(16, device=DEV), x, torch.zeros(WORLD, device=DEV))),
                           # one-sided transfers: bytes of another size, out of memory order, or in host memory
                           ("put of 17 into 16", lambda: symmem.put(x, 0, torch.zeros(17, device=DEV))),
                           ("put transposed", lambda: symmem.put(x, 0, torch.zeros(8, 2, device=DEV).t())),
                           ("get into the host", lambda: symmem.get(torch.zeros(16), x, 0)),
                           ("put_signal past a slice", lambda: symmem.put_signal(x[:8], 0, torch.zeros(16, device=DEV), slot=0))):
            errs.append(refusal_error(name, call))
        if WORLD >= 2:  # new_group with ranks that differ across ranks: refused on every rank, naming both
            errs.append(refusal_error("new_group", lambda: symmem.new_group([0, 1] if RANK == 0 else [0]),
                                      "differ across ranks", "ranks=0,1"))
        if torch.cuda.device_count() > 1:  # a tensor on another rank's GPU (its kernels would reach across)
            other = torch.device("cuda", (DEV.index + 1) % torch.cuda.device_count())
            for name, call in (("all_reduce", lambda: symmem.all_reduce(torch.zeros(4, device=other))),
                               ("all_gather_matmul", lambda: symmem.all_gather_matmul(
                                   torch.zeros(8, 8, dtype=torch.bfloat16, device=other), torch.zeros(8, 8, dtype=torch.bfloat16, device=DEV)))):
                errs.append(refusal_error(f"{name} of a tensor on {other}", call, "this rank's GPU"))
        return "\n".join(e for e in errs if e)
    agreed(body)


def test_a_call_the_last_rank_skips_raises_timeout_naming_it():
    # Any team size: the last rank skips an all-reduce of a group that the others call. Each of
    # them gets symmem.Timeout from symmem.synchronize() within the bound, naming itself and the
    # last rank; the group refuses its next call; abort returns at once on every rank; after
    # clear_error the world group, not involved, reduces right. (Under a capture synchronize is
    # refused before it waits, and the capture ends cleanly.)
    import time

    def body():
        if WORLD < 2:
            return ""
        g = symmem.new_group(list(range(WORLD)))
        x = symmem.empty(1024, dtype=torch.float32, group=g)
        x.copy_(rand(1024, torch.float32, 95 + RANK))
        symmem.synchronize()  # nothing reported: returns
        graph, scratch = torch.cuda.CUDAGraph(), torch.ones(1, device=DEV)
        try:
            with torch.cuda.graph(graph):
                scratch.add_(1)  # (a graph with work in it)
                symmem.synchronize()
            errs_capture = "symmem.synchronize() under a capture raised nothing"
        except symmem.InvalidArgument as e:
            errs_capture = "" if "CUDA graph is being captured" in str(e) else f"under a capture: '{e}'"
        symmem.check()  # (the capture ended cleanly: nothing reported)
        bound, skipper, errs = g.timeout_ms, WORLD - 1, [errs_capture]
        g.set_timeout_ms(1500)
        if DEBUG_CHECKS:
            # Under SYMMEM_DEBUG_CHECKS=1 every call is agreed on the host before it launches: the
            # skipped call never reaches the GPU. The skipper's next exchange of the team (a host
            # barrier here; without one the others' agreement waits for it until the host bound)
            # meets the others' agreement, which names it and its barrier on their ranks.
            if RANK != skipper:
                want = f"rank {skipper} is not making this call: it made the barrier 'the skipper's barrier'"
                try:
                    symmem.all_reduce(x, group=g)
                    errs.append("the call the last rank skipped was accepted under the debug checks")
                except symmem.InvalidArgument as e:
                    if want not in str(e):
                        errs.append(f"the call the last rank skipped raised '{e}', not '{want}'")
            else:
                g._comm.barrier_host("the skipper's barrier")
        elif RANK != skipper:
            t0 = time.perf_counter()
            symmem.all_reduce(x, group=g)
            try:
                symmem.synchronize()
                errs.append("symmem.synchronize() raised nothing")
            except symmem.Timeout as e:
                for want in ("symmem.synchronize", f"rank {RANK} (team rank {RANK},", f"from team rank {skipper}"):
                    if want not in str(e):
                        errs.append(f"the Timeout does not name {want!r}: {e}")
            if time.perf_counter() - t0 > 8.0:
                errs.append(f"the Timeout came after {time.perf_counter() - t0:.1f} s (bound 1.5 s)")
            try:
                symmem.all_reduce(x, group=g)
                errs.append("the group's next call was accepted after the Timeout")
            except symmem.Error as e:
                if "failed" not in str(e):
                    errs.append(f"the group's next call raised '{e}', which does not say the group failed")
            if f"from team rank {skipper}" not in g.failure:
                errs.append(f"the group's failure reads '{g.failure}'")
        elif g.failure:
            errs.append(f"the group failed on the rank that skipped the call: '{g.failure}'")
        t0 = time.perf_counter()
        g.abort()
        if time.perf_counter() - t0 > 5.0:
            errs.append(f"abort took {time.perf_counter() - t0:.1f} s: it must not wait for peers")
        if not g.failure:
            errs.append("the group's failure is empty after abort()")
        del x  # (its memory went with the group's)
        symmem.clear_error()
        g.set_timeout_ms(bound)
        symmem.check()
        return "\n".join(e for e in errs if e)
    agreed(body)

    def after():
        y = symmem.empty(1000, dtype=torch.float32)
        y.copy_(rand(1000, torch.float32, 96 + RANK))
        symmem.all_reduce(y)
        symmem.synchronize()
        return close(y, sum(rand(1000, torch.float32, 96 + r).double() for r in range(WORLD)), torch.float32, WORLD)
    agreed(after)


def test_moe_dispatch_and_combine_against_a_reference():
    moe_against_a_reference(one_kernel=False)


def test_moe_one_kernel_per_round_against_a_reference():
    moe_against_a_reference(one_kernel=True)  # one rank per GPU, where the path is allowed (else refused)


def test_moe_in_rounds_against_a_reference():
    # Rounds of 8 of 32 tokens: streamed (dispatch and combine each one persistent kernel) where
    # every rank has its own GPU (torchrun here), the rounds otherwise.
    moe_against_a_reference(one_kernel=None, round_tokens=8)


def test_moe_int64_indices_without_weights():
    # topk_idx as torch.topk gives it (int64), dispatch without weights (each entry weighs 1): in
    # one round and in rounds of 8.
    for rounds in (0, 8):
        moe_against_a_reference(one_kernel=None, round_tokens=rounds, idx_dtype=torch.int64, weights=False)


def test_moe_int64_indices_and_an_unweighted_combine():
    # A combine that ignores the weights dispatch was given (a plain sum): in one round and in rounds of 8.
    for rounds in (0, 8):
        moe_against_a_reference(one_kernel=None, round_tokens=rounds, idx_dtype=torch.int64, weighted=False)


def moe_against_a_reference(one_kernel, round_tokens=0, idx_dtype=torch.int32, weights=True, weighted=True):
    def body():
        H, K, E, T = 256, 4, 4 * WORLD, 32
        try:
            ep = symmem.moe.ExpertParallel(H, K, E, T, one_kernel=one_kernel, round_tokens=round_tokens)
        except symmem.InvalidArgument as e:
            if SHARED and WORLD >= 2 and one_kernel and "needs one rank per GPU" in str(e):
                return ""  # refused where ranks share a GPU, with the reason
            raise
        if SHARED and WORLD >= 2 and one_kernel:
            return "one kernel a round was accepted where ranks share a GPU"
        if round_tokens and WORLD >= 2 and not SHARED and not ep.streamed:
            return "several rounds with a GPU a rank: the streamed dispatch and combine were not taken"
        tokens = 0 if WORLD >= 2 and RANK == 1 else T - RANK % 3  # a rank with no tokens

        def inputs(r):
            g = torch.Generator(device=DEV).manual_seed(500 + r)
            n = 0 if WORLD >= 2 and r == 1 else T - r % 3
            x = torch.randn(n, H, generator=g, device=DEV).to(torch.bfloat16)
            # Distinct experts. (contiguous(): for int64, .to() returns the strided slice itself, which
            # dispatch refuses; on a rank with tokens only, so the others would wait for it.)
            idx = torch.rand(n, E, generator=g, device=DEV).argsort(dim=1)[:, :K].to(idx_dtype).contiguous()
            idx[torch.rand(n, K, generator=g, device=DEV) < 0.125] = -1
            idx[:, 0] = torch.where(torch.rand(n, generator=g, device=DEV) < 0.3, torch.ones_like(idx[:, 0]), idx[:, 0])  # hot expert 1
            bad = (idx[:, 1:] == 1).any(dim=1) & (idx[:, 0] == 1)
            idx[bad, 0] = -1  # keep a token's experts distinct
            w = torch.rand(n, K, generator=g, device=DEV)
            return x, idx, w

        x, idx, w = inputs(RANK)
        recv_x, _, counts = ep.dispatch(x, idx, w if weights else None)
        torch.cuda.synchronize()
        El, C = ep.local_experts, ep.capacity
        # Rows compared as multisets through row_fingerprints (exact integer arithmetic on their bits).
        probe = torch.randint(1, 1 << 20, (H,), generator=torch.Generator(device=DEV).manual_seed(1), device=DEV)
        scale = lambda e: 1.0 + 0.0625 * (e % 7)
        errs = []
        y = torch.zeros(El, C, H, dtype=torch.bfloat16, device=DEV)
        for le in range(El):
            ge = RANK * El + le
            want = []
            for r in range(WORLD):
                xr, ir, _ = inputs(r)
                rows = (ir == ge).any(dim=1)
                want.append(xr[rows])
            want = torch.cat(want)
            c = int(counts[le])
            if c != want.shape[0]:
                errs.append(f"expert {ge}: {c} rows, want {want.shape[0]}")
                continue
            if not torch.equal(row_fingerprints(recv_x[le, :c], probe), row_fingerprints(want, probe)):
                errs.append(f"expert {ge}: a different set of rows")
            y[le, :c] = (recv_x[le, :c].float() * scale(ge)).to(torch.bfloat16)
        out = ep.combine(y, weighted=weighted)
        torch.cuda.synchronize()
        if not (weights and weighted):
            w = torch.ones_like(w)  # (each entry weighs 1)
        if tokens:
            ref = torch.zeros(tokens, H, dtype=torch.float32, device=DEV)
            mag = torch.zeros_like(ref)
            for k in range(K):
                e = idx[:, k].long()
                valid = (e >= 0).float().unsqueeze(1)
                sc = (1.0 + 0.0625 * (e.clamp(min=0) % 7)).float().unsqueeze(1)
                term = w[:, k:k + 1] * (x.float() * sc).to(torch.bfloat16).float() * valid
                ref += term
                mag += term.abs()
            bad = ((out.float() - ref).abs() > 0.02 * mag + 1e-3)
            if bool(bad.any()):
                errs.append(f"combine: {int(bad.sum())} of {bad.numel()} values off")
        return "\n".join(errs[:5])
    agreed(body)


def test_moe_halves_with_work_between_match_the_whole():
    # dispatch_send / dispatch_recv and combine_send / combine_recv with a GEMM on the stream between
    # each pair, eagerly and replayed in a CUDA graph: the same rows per expert (as sets), counts and
    # combined output as dispatch and combine (checked against a reference in the tests above).
    def body():
        H, K, E, T = 256, 4, 4 * WORLD, 32
        ep = symmem.moe.ExpertParallel(H, K, E, T)
        g = torch.Generator(device=DEV).manual_seed(seed_of("moe halves", RANK))
        tokens = T - RANK % 3
        x = torch.randn(tokens, H, generator=g, device=DEV).to(torch.bfloat16)
        idx = torch.rand(tokens, E, generator=g, device=DEV).argsort(dim=1)[:, :K].int()
        idx[torch.rand(tokens, K, generator=g, device=DEV) < 0.125] = -1
        w = torch.rand(tokens, K, generator=g, device=DEV)
        a = torch.randn(512, 512, generator=g, device=DEV)
        probe = torch.randint(1, 1 << 20, (H,), generator=g, device=DEV)
        scale = (1.0 + 0.0625 * torch.arange(ep.local_experts, device=DEV)).view(-1, 1, 1)

        def expert_rows():  # each local expert's rows as a sorted fingerprint (order-free)
            c = ep.expert_counts.tolist()
            return c, [row_fingerprints(ep.recv_x[e, :c[e]], probe) for e in range(len(c))]

        def experts(recv_x):
            return (recv_x.float() * scale).to(torch.bfloat16)

        recv_x, _, _ = ep.dispatch(x, idx, w)
        want_rows = expert_rows()
        want = ep.combine(experts(recv_x)).clone()
        sink = torch.empty(512, 512, device=DEV)

        def halves():
            ep.dispatch_send(x, idx, w)
            torch.matmul(a, a, out=sink)
            rx, _, _ = ep.dispatch_recv()
            ep.combine_send(experts(rx))
            torch.matmul(a, a, out=sink)
            return ep.combine_recv()

        errs = []
        for how in ("eager", "graph"):
            ep.out.fill_(float("nan"))
            ep.recv_x.fill_(float("nan"))
            if how == "eager":
                out = halves()
                got_rows = expert_rows()  # (combine_recv changes neither recv_x nor the counts)
            else:
                graph, out = captured(halves)
                ep.out.fill_(float("nan"))
                ep.recv_x.fill_(float("nan"))
                graph.replay()
                torch.cuda.synchronize()
                got_rows = expert_rows()
            if got_rows[0] != want_rows[0]:
                errs.append(f"{how}: expert counts {got_rows[0]}, dispatch gave {want_rows[0]}")
            elif not all(torch.equal(p, q) for p, q in zip(got_rows[1], want_rows[1])):
                errs.append(f"{how}: an expert received other rows than dispatch gave it")
            if not torch.allclose(out.float(), want.float(), rtol=2.0 ** -7, atol=1e-3):
                errs.append(f"{how}: combine_recv's output differs from combine's by {(out.float() - want.float()).abs().max().item():.3e}")
        return "\n".join(errs)
    agreed(body)


def moe_routing(key, q, T, H, K, E, fp8, ue8m0, duplicates):
    """Member q's dispatch inputs for one call (seeded by key and q: every rank makes any member's):
    x [T, H], scales (fp8: fp32 one per 128 channels, or int32 words of packed UE8M0 exponents),
    topk_idx [T, K] int32 (distinct experts, or any where duplicates; an eighth -1), weights [T, K]."""
    g = torch.Generator(device=DEV).manual_seed(seed_of("moe routing", key, q))
    x = torch.randn(T, H, generator=g, device=DEV)
    x = x.to(torch.float8_e4m3fn) if fp8 else x.to(torch.bfloat16)
    groups = (H + 127) // 128
    scales = None
    if fp8 and ue8m0:
        scales = torch.randint(-(1 << 31), 1 << 31, (T, (groups + 3) // 4), generator=g, device=DEV, dtype=torch.int64).int()
    elif fp8:
        scales = torch.rand(T, groups, generator=g, device=DEV) + 0.5
    if duplicates or K > E:
        idx = torch.randint(0, E, (T, K), generator=g, device=DEV, dtype=torch.int32)
    else:
        idx = torch.rand(T, E, generator=g, device=DEV).argsort(dim=1)[:, :K].int()
    idx[torch.rand(T, K, generator=g, device=DEV) < 0.125] = -1
    w = torch.rand(T, K, generator=g, device=DEV)
    return x, scales, idx.contiguous(), w


def test_random_moe_objects_shapes_and_call_forms():
    """Random ExpertParallel objects and calls from Python, drawn alike on every member of a team
    from one seed: on the world or the team of every other rank; bf16, fp8 with fp32 scales or
    with packed UE8M0 exponents; H from 8 (bf16) or 16 (fp8) channels to 2048 (a partial last group
    of 128 included); top-1 to top-16 (tokens that name one expert twice in a quarter of the cases,
    and wherever K is above the experts); 1-24 experts a member; 1-160 tokens a member at most,
    the count of each member and call drawn apart (a sixth of them 0); in one round or in rounds;
    one_kernel None, False or True (refused where ranks share a GPU); capacity 0 or exactly the
    most rows an expert receives plus 0-2; topk_idx int32 or int64; weights or none; combine
    weighted or not; 1-3 calls on one object, whole, as halves with a GEMM between them, or
    captured in a CUDA graph and replayed with new data. The expert function runs on the GPU
    (each expert scales its rows), recv_x is poisoned with NaN first so that a row past a count
    that combine read would show. Each expert's rows (with their scales) are checked as a multiset
    against the rows every member's routing sends it, the counts exactly, and combine against
    sum_k w_k f_e(x_k)."""
    my_split = parity_team()
    cases = 16 if WORLD > 4 else 28
    counts = {"fp8": 0, "ue8m0": 0, "rounds": 0, "graphs": 0, "halves": 0, "split": 0, "tight": 0, "dups": 0, "int64": 0,
              "calls": 0, "one kernel refused": 0, "lines": 0, "streamed": 0}

    def case(i):
        split, members, n, me, team = drawn_team("moe team", i, my_split)
        rng = random.Random(seed_of("moe case", i, split, n))
        fp8 = rng.random() < 0.4
        ue8m0 = fp8 and rng.random() < 0.5
        unit = 16 if fp8 else 8
        H = unit * (1 + rng.randrange(1 << rng.randrange(8)))
        kind = rng.randrange(3)
        max_tokens = 1 + rng.randrange(8) if kind == 0 else 9 + rng.randrange(24) if kind == 1 else 33 + rng.randrange(128)
        K = 1 + rng.randrange(16)
        E = n * (1 + rng.randrange(24 if rng.random() < 0.25 else 6))
        round_tokens = max(1, max_tokens // (2 + rng.randrange(6))) if max_tokens > 1 and rng.random() < 0.3 else 0
        one_round = round_tokens == 0 or round_tokens >= max_tokens
        one_kernel = rng.choice((None, None, False, True))
        duplicates = rng.random() < 0.25
        int64 = rng.random() < 0.5
        weights = rng.random() < 0.75
        weighted = rng.random() < 0.67
        form = rng.choice(("whole", "halves", "graph") if one_round else ("whole", "graph"))
        calls = 1 if form == "graph" else 1 + rng.randrange(3)
        replays = 2 if form == "graph" else 0
        # Token counts: [call][team member]; a graph replays its first call's counts.
        tokens = [[0 if rng.random() < 1 / 6 else rng.randint(1, max_tokens) for _ in range(n)] for _ in range(calls)]
        runs = [(c, 0) for c in range(calls)] if form != "graph" else [(0, r) for r in range(replays + 1)]
        keys = {run: (i, run) for run in runs}
        routed = {run: [moe_routing(keys[run], members[q], tokens[run[0]][q], H, K, E, fp8, ue8m0, duplicates) for q in range(n)]
                  for run in runs}
        most = 1
        for run in runs:
            per_expert = torch.zeros(E, dtype=torch.int64, device=DEV)
            for _, _, idx, _ in routed[run]:
                v = idx.view(-1).long()
                per_expert += torch.bincount(v[v >= 0], minlength=E)
            most = max(most, int(per_expert.max()))
        slack = rng.randrange(3)
        capacity = 0 if rng.random() < 0.5 and most <= n * max_tokens else most + slack
        what = (f"case {i}: on {'the split team' if split else 'the world'} of {n}, H {H} {'fp8 ue8m0' if ue8m0 else 'fp8' if fp8 else 'bf16'}, "
                f"top-{K}, {E} experts, {max_tokens} tokens in rounds of {round_tokens}, capacity {capacity} (need {most}), "
                f"one_kernel {one_kernel}, {form}, {calls} call(s), tokens {tokens}, idx {'int64' if int64 else 'int32'}"
                f"{'' if weights else ', no weights'}{'' if weighted else ', unweighted'}{', duplicates' if duplicates else ''}")
        try:
            ep = symmem.moe.ExpertParallel(H, K, E, max_tokens, capacity=capacity, fp8=fp8, ue8m0=ue8m0, round_tokens=round_tokens,
                                           one_kernel=one_kernel, group=team)
        except symmem.InvalidArgument as e:
            if one_kernel and SHARED and "needs one rank per GPU" in str(e):
                counts["one kernel refused"] += 1
                return ""
            return f"{what}: {e}"
        El = ep.local_experts
        scale_of = 1.0 + 0.0625 * ((me * El + torch.arange(El, device=DEV)) % 7).float()
        a = torch.randn(256, 256, device=DEV)
        sink = torch.empty(256, 256, device=DEV)
        T = tokens[0][me]
        x, sc, idx, w = (t.clone() if t is not None else None for t in routed[runs[0]][me])
        idx = idx.long().contiguous() if int64 else idx

        def expert(recv_x):  # on the GPU: expert e scales its rows (rows past its count are NaN)
            return (recv_x.float() * scale_of.view(El, 1, 1)).to(torch.bfloat16)

        def call():
            wt = w if weights else None
            if form == "halves":
                ep.dispatch_send(x, idx, wt, scales=sc)
                torch.matmul(a, a, out=sink)
                rx, _, _ = ep.dispatch_recv()
                ep.combine_send(expert(rx), weighted=weighted)
                torch.matmul(a, a, out=sink)
                return ep.combine_recv()
            rx, _, _ = ep.dispatch(x, idx, wt, scales=sc)
            return ep.combine(expert(rx), weighted=weighted)

        probe = torch.randint(1, 1 << 20, (H + 64,), generator=torch.Generator(device=DEV).manual_seed(7), device=DEV)

        graph_obj = None
        for run in runs:
            c_i, r_i = run
            if run != runs[0]:
                T = tokens[c_i][me]
                nx, nsc, nidx, nw = routed[run][me]
                if form == "graph":  # same shapes: new data in place
                    x.copy_(nx)
                    if sc is not None:
                        sc.copy_(nsc)
                    idx.copy_(nidx)
                    w.copy_(nw)
                else:
                    x, sc, idx, w = nx, nsc, (nidx.long().contiguous() if int64 else nidx), nw
            ep.recv_x.view(torch.uint8).fill_(0xFF)  # NaN in bf16 and in fp8 e4m3
            ep.out.view(torch.uint8).fill_(0xCD)
            torch.cuda.synchronize()
            if form == "graph":
                if graph_obj is None:
                    graph_obj, _ = captured(call)
                    ep.recv_x.view(torch.uint8).fill_(0xFF)
                    ep.out.view(torch.uint8).fill_(0xCD)
                graph_obj.replay()
                out = ep.out[:T]
            else:
                out = call()
            symmem.synchronize()
            at = f"{what}, call {c_i} run {r_i}: "
            if out.shape != (T, H):
                return at + f"combine returned {tuple(out.shape)}, want ({T}, {H})"
            # Dispatch: each local expert's rows as a multiset, and its count.
            got_counts = ep.expert_counts.tolist()
            for le in range(El):
                ge = me * El + le
                want_rows, want_sc = [], []
                for xq, sq, iq, _ in routed[run]:
                    hits = (iq == ge).sum(1)  # a row for each entry naming the expert
                    rows = torch.repeat_interleave(torch.arange(iq.shape[0], device=DEV), hits)
                    want_rows.append(xq[rows])
                    if sq is not None:
                        want_sc.append(sq[rows])
                want_rows = torch.cat(want_rows)
                c = got_counts[le]
                if c != want_rows.shape[0]:
                    return at + f"expert {ge}: {c} rows, want {want_rows.shape[0]}"
                if not torch.equal(row_fingerprints(ep.recv_x[le, :c], probe, ep.recv_scales[le, :c] if fp8 else None),
                                   row_fingerprints(want_rows, probe, torch.cat(want_sc) if fp8 else None)):
                    return at + f"expert {ge}: a different multiset of rows{' or scales' if fp8 else ''}"
            # Combine: sum over this rank's entries of w_k * f_e(x), f_e as expert() computes it.
            if T:
                _, _, my_idx, my_w = routed[run][me]
                wk = my_w if (weights and weighted) else torch.ones_like(my_w)
                e = my_idx.long()
                valid = (e >= 0).float()
                sc_e = (1.0 + 0.0625 * (e.clamp(min=0) % 7)).float()
                xf = x.float()
                terms = (xf.unsqueeze(1) * sc_e.unsqueeze(2)).to(torch.bfloat16).float() * (wk * valid).unsqueeze(2)
                ref, mag = terms.sum(1), terms.abs().sum(1)
                bad = (out.float() - ref).abs() > 0.02 * mag + 1e-3
                if bool(bad.any()) or bool(out.float().isnan().any()):
                    return at + f"combine: {int(bad.sum())} of {bad.numel()} values off (max {(out.float() - ref).abs().max().item():.3e})"
        counts["fp8"] += fp8
        counts["ue8m0"] += ue8m0
        counts["rounds"] += not one_round
        counts["graphs"] += form == "graph"
        counts["halves"] += form == "halves"
        counts["split"] += split
        counts["tight"] += capacity != 0 and slack == 0
        counts["dups"] += duplicates or K > E
        counts["int64"] += int64
        counts["calls"] += len(runs)
        counts["lines"] += bool(ep.lines)
        counts["streamed"] += bool(ep.streamed)
        return ""

    run_random_cases(cases, case, lambda: (
        f"random python moe: {cases} cases ran and checked ({', '.join(f'{v} {k}' for k, v in counts.items())})"))


def test_moe_bad_inputs_are_refused():
    # Each raises InvalidArgument naming the input, before anything is launched, on every rank.
    def body():
        H, K, E, T = 256, 4, 4 * WORLD, 16
        ep = symmem.moe.ExpertParallel(H, K, E, T, fp8=True)
        x = torch.randn(T, H, device=DEV).to(torch.float8_e4m3fn)
        idx = torch.zeros(T, K, dtype=torch.int32, device=DEV)
        w = torch.rand(T, K, device=DEV)
        sc = torch.ones(T, 2, device=DEV)
        errs = []
        for name, call, want in (
                ("x on the CPU", lambda: ep.dispatch(x.cpu(), idx, w, scales=sc), "x on cpu"),
                ("x in bf16", lambda: ep.dispatch(x.to(torch.bfloat16), idx, w, scales=sc), "x is torch.bfloat16"),
                ("strided weights", lambda: ep.dispatch(x, idx, torch.rand(K, T, device=DEV).t(), scales=sc), "topk_weights"),
                ("scales one column short", lambda: ep.dispatch(x, idx, w, scales=sc[:, :1].contiguous()), "scales"),
                ("idx as float", lambda: ep.dispatch(x, idx.float(), w, scales=sc), "topk_idx"),
                ("expert_out wrong shape", lambda: ep.combine(torch.zeros(1, 1, H, dtype=torch.bfloat16, device=DEV)), "expert_out")):
            errs.append(refusal_error(name, call, want))
        return "\n".join(e for e in errs if e)
    agreed(body)


def test_overlapped_gemms_against_torch():
    def body():
        errs = []
        for dt, band in ((torch.bfloat16, 64), (torch.float16, 512)):
            for mode in ("overlap", "sequential"):
                rows, K, N = 128, 256, 384
                M = rows * WORLD
                what = f"{dt} {mode}"
                g = torch.Generator(device=DEV).manual_seed(700 + RANK)
                a_shard = torch.randn(rows, K, generator=g, device=DEV).to(dt)
                b = torch.randn(K, N, generator=g, device=DEV).to(dt)
                c, a = symmem.all_gather_matmul(a_shard, b, return_a=True, mode=mode)
                a_ref = all_gathered(a_shard)
                ref = a_ref.float() @ b.float()
                mag = a_ref.float().abs() @ b.float().abs()
                if c.dtype != dt or not torch.equal(a, a_ref):
                    errs.append(f"{what}: the gathered A differs (or c is {c.dtype})")
                if bool(((c.float() - ref).abs() > mag / band + 1e-2).any()):
                    errs.append(f"{what}: all_gather_matmul off by up to {(c.float() - ref).abs().max().item()}")
                a_full = torch.randn(M, K, generator=g, device=DEV).to(dt)
                cs = symmem.matmul_reduce_scatter(a_full, b, mode=mode)
                full = a_full.float() @ b.float()
                fmag = a_full.float().abs() @ b.float().abs()
                all_reduce_ref_(full)
                all_reduce_ref_(fmag)
                mine, mmag = full[RANK * rows:(RANK + 1) * rows], fmag[RANK * rows:(RANK + 1) * rows]
                if cs.dtype != dt or bool(((cs.float() - mine).abs() > mmag / band + 1e-2).any()):
                    errs.append(f"{what}: matmul_reduce_scatter ({cs.dtype}) off by up to {(cs.float() - mine).abs().max().item()}")
        errs.append(refusal_error("operands of two dtypes", lambda: symmem.matmul_reduce_scatter(
            torch.zeros(WORLD * 8, 16, dtype=torch.float16, device=DEV), torch.zeros(16, 8, dtype=torch.bfloat16, device=DEV)),
            "pass both alike"))
        return "\n".join(e for e in errs if e)
    agreed(body)


def test_random_overlapped_gemms_on_teams_remakes_and_graphs():
    """Random calls of all_gather_matmul and matmul_reduce_scatter from Python, drawn alike on
    every member of a team from one seed: on the world or the team of every other rank (each
    group keeps its own TensorParallel, remade when a call needs larger buffers); bf16 or fp16;
    1-320 rows a member (or whole 256-row units, or none: empty results), K and Nc multiples of 8
    to 1024; mode auto, overlap or sequential; sum or avg; the gathered A asked for or not;
    operands that are views at a 16-byte offset into larger tensors; eager, or captured in a CUDA
    graph after an eager call at its sizes (a capture that would need larger buffers must be
    refused on every member, naming what to do). Every captured graph is kept with its operands and replayed with new data
    in later cases, after the remakes that followed it, on its team's members in case order.
    Each result is checked against fp32 references of every member's seeded operands."""
    my_split = parity_team()
    cases = 24 if WORLD > 4 else 40
    counts = {"graphs": 0, "graph replays later": 0, "refused captures": 0, "remakes": 0, "split": 0, "fp16": 0, "avg": 0,
              "a_out": 0, "units": 0, "empty": 0}
    modes = {}
    kept = []  # (case, check): graphs captured so far on this rank's teams, replayed later with new data
    BAND = {torch.bfloat16: 64, torch.float16: 512}

    def operand(rows, cols, dt, seed):
        g = torch.Generator(device=DEV).manual_seed(seed)
        return torch.randn(rows, cols, generator=g, device=DEV).to(dt)

    def placed(t, lead):
        """t's values in a view that starts `lead` rows-of-8-elements (16 bytes each) into a larger tensor."""
        whole = torch.empty(t.numel() + 8 * lead + 8, dtype=t.dtype, device=DEV)
        v = whole[8 * lead:8 * lead + t.numel()].view(t.shape)
        v.copy_(t)
        return v

    def make_call(i, members, me, team, rng):
        n = len(members)
        op = rng.choice(("all_gather_matmul", "matmul_reduce_scatter"))
        dt = rng.choice((torch.bfloat16, torch.float16))
        rows = 256 * rng.randint(1, 2) if rng.random() < 0.25 else 0 if rng.random() < 0.05 else rng.randint(1, 320)
        K, N = 8 * rng.randint(1, 128), 8 * rng.randint(1, 128)
        mode = rng.choice(("auto", "overlap", "sequential"))
        rop = rng.choice(("sum", "avg"))
        return_a = rng.random() < 0.5
        leads = [rng.randrange(4) for _ in range(2)]
        what = (f"case {i}: {op} {dt} rows {rows} K {K} Nc {N} mode {mode}{' ' + rop if op != 'all_gather_matmul' else ''}"
                f"{' return_a' if return_a and op == 'all_gather_matmul' else ''} on {'the split team' if team else 'the world'} of {n}")
        ag = op == "all_gather_matmul"
        M = rows * n
        a = placed(torch.zeros(rows if ag else M, K, dtype=dt, device=DEV), leads[0])
        b = placed(torch.zeros(K, N, dtype=dt, device=DEV), leads[1])

        def data(it):  # this member's operands for run `it`, in place
            a.copy_(operand(rows if ag else M, K, dt, seed_of("ovl a", i, it, members[me])))
            b.copy_(operand(K, N, dt, seed_of("ovl b", i, it, members[me] if not ag else 0)))

        def call():
            if ag:
                return symmem.all_gather_matmul(a, b, group=team, return_a=return_a, mode=mode)
            return symmem.matmul_reduce_scatter(a, b, rop, group=team, mode=mode)

        def check(got, it):
            if ag:
                c, a_got = got if return_a else (got, None)
                a_full = torch.cat([operand(rows, K, dt, seed_of("ovl a", i, it, q)) for q in members])
                bf = operand(K, N, dt, seed_of("ovl b", i, it, 0)).float()
                ref, mag = a_full.float() @ bf, a_full.float().abs() @ bf.abs()
                if return_a and not torch.equal(a_got, a_full):
                    return "the gathered A differs from every member's shard"
            else:
                c = got
                ref = torch.zeros(rows, N, device=DEV)
                mag = torch.zeros(rows, N, device=DEV)
                for q in members:
                    aq = operand(M, K, dt, seed_of("ovl a", i, it, q))[me * rows:(me + 1) * rows].float()
                    bq = operand(K, N, dt, seed_of("ovl b", i, it, q)).float()
                    ref += aq @ bq
                    mag += aq.abs() @ bq.abs()
                if rop == "avg":
                    ref, mag = ref / n, mag / n
            want_shape = (M if ag else rows, N)
            if tuple(c.shape) != want_shape or c.dtype != dt:
                return f"c is {tuple(c.shape)} {c.dtype}, want {want_shape} {dt}"
            err = (c.float() - ref).abs()
            if bool((err > mag / BAND[dt] + 1e-2).any()) or bool(c.isnan().any()):
                return f"off by up to {err.max().item():.3e}"
            return ""
        return {"what": what, "data": data, "call": call, "check": check, "M": M, "K": K, "N": N, "ag": ag, "op": op, "dt": dt,
                "mode": mode, "rop": rop, "return_a": return_a and ag, "units": rows % 256 == 0}

    def case(i):
        split, members, n, me, team = drawn_team("ovl team", i, my_split)
        g = symmem._group(team)
        rng = random.Random(seed_of("ovl case", i, split, len(members)))
        graph = rng.random() < 0.3
        k = make_call(i, members, me, team, rng)
        what, data, call, check, M, K, N = k["what"], k["data"], k["call"], k["check"], k["M"], k["K"], k["N"]
        graph = graph and M > 0  # (a call of no rows launches nothing: empty results)
        have = symmem.overlap._tp.get(g.name)
        fits = have is not None and M <= have.m and K <= have.k and N <= have.n
        errs = []
        if graph and not fits and rng.random() < 0.5:  # a capture that needs new buffers: refused everywhere
            def capture():
                with torch.cuda.graph(torch.cuda.CUDAGraph()):
                    call()
            errs.append(refusal_error(what + ": a capture that needs larger buffers", capture, "before capturing"))
            counts["refused captures"] += 1
        before = have.tp if have is not None else None
        data(0)
        got = call()  # eager (before a capture, this makes the buffers)
        e = check(got, 0)
        if e:
            return f"{what}, eager: {e}"
        after = symmem.overlap._tp.get(g.name)
        counts["remakes"] += before is not None and after.tp is not before
        modes[k["op"], k["mode"]] = modes.get((k["op"], k["mode"]), 0) + 1
        if graph:
            graph_obj, got = captured(call)

            def replay(it, when, graph_obj=graph_obj, got=got, data=data, check=check, what=what):
                """The graph replayed with run it's data: '' or what differs."""
                data(it)
                for t in (got if isinstance(got, tuple) else (got,)):
                    poison(t)
                graph_obj.replay()
                symmem.synchronize()
                e = check(got, it)
                return f"{what}, {when}: {e}" if e else ""
            for it in (1, 2):
                e = replay(it, f"replay {it}")
                if e:
                    return e
            kept.append((i, lambda it, replay=replay: replay(it, "replayed in a later case")))
            counts["graphs"] += 1
        # The graphs kept from earlier cases, replayed with new data (every member of their team,
        # in case order) after whatever remakes came since.
        if random.Random(seed_of("ovl replays", i)).random() < 0.25:  # (drawn alike on every rank: world graphs are kept everywhere)
            for _, later in kept:
                e = later(3 + i)
                counts["graph replays later"] += 1
                if e:
                    return e
        counts["split"] += split
        counts["fp16"] += k["dt"] == torch.float16
        counts["avg"] += not k["ag"] and k["rop"] == "avg"
        counts["a_out"] += k["return_a"]
        counts["units"] += k["units"] and M > 0
        counts["empty"] += M == 0
        return "\n".join(x for x in errs if x)

    run_random_cases(cases, case, lambda: (
        f"random python overlap: {cases} cases ran and checked ({', '.join(f'{v} {k}' for k, v in counts.items())}); "
        f"modes {sorted(modes.items())}"))


def test_overlapped_gemm_graph_outlives_a_remake():
    # The group's TensorParallel is made at the first call and remade when a call needs larger
    # buffers. Inside a capture that would be collective work: refused, on every rank alike. A
    # graph captured on it must keep working after a later eager call has remade it.
    def body():
        errs = []
        symmem.overlap._tp.pop(symmem.world().name, None)  # no buffers yet
        rows, K, N = 64, 128, 256
        g = torch.Generator(device=DEV).manual_seed(720 + RANK)
        a_shard = torch.randn(rows, K, generator=g, device=DEV).to(torch.bfloat16)
        b = torch.randn(K, N, generator=g, device=DEV).to(torch.bfloat16)

        def check(c, what):
            a_ref = all_gathered(a_shard)
            ref, mag = a_ref.float() @ b.float(), a_ref.float().abs() @ b.float().abs()
            if bool(((c.float() - ref).abs() > mag / 64 + 1e-2).any()):
                errs.append(f"{what}: off by up to {(c.float() - ref).abs().max().item()}")

        def capture_unmade():
            with torch.cuda.graph(torch.cuda.CUDAGraph()):
                symmem.all_gather_matmul(a_shard, b)
        errs.append(refusal_error("a capture that needed new buffers", capture_unmade, "before capturing"))
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            symmem.all_gather_matmul(a_shard, b)  # eager: makes the buffers
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            c_graph = symmem.all_gather_matmul(a_shard, b)
        graph.replay()
        torch.cuda.synchronize()
        check(c_graph, "replay")
        big = torch.randn(2 * rows, K, generator=g, device=DEV).to(torch.bfloat16)
        symmem.all_gather_matmul(big, b)  # larger: the TensorParallel is remade
        if not symmem.overlap._retired:
            errs.append("the captured TensorParallel was not kept after the remake")
        a_shard.copy_(torch.randn(rows, K, generator=g, device=DEV).to(torch.bfloat16))
        poison(c_graph)
        graph.replay()
        torch.cuda.synchronize()
        check(c_graph, "replay after the remake")
        return "\n".join(e for e in errs if e)
    agreed(body)
