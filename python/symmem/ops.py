"""Collectives on torch tensors, on the current stream, capturable in CUDA graphs, and registered
as torch.library operators (namespace `symmem`) with fake implementations, so torch.compile
traces them without graph breaks.

Buffers: any contiguous CUDA tensors work; symmetric ones (symmem.empty) take the zero-copy
paths. Types: all_reduce, reduce_scatter and reduce take float32, float16, bfloat16, float64, the
float8 types, int8, uint8, int32, uint32, int64, uint64 and bool (sum: or, prod: and); all_gather,
broadcast, all_to_all, gather and scatter move any dtype, all_to_all_v any of 1, 2, 4 or 8 bytes
an element. all_to_all_v needs a symmetric input (peers read it directly). Arrays of other libraries
(CuPy, JAX, ...) are taken where that is free: anything with __dlpack__ (through torch.from_dlpack,
which orders the producer's stream before torch's) or __cuda_array_interface__ is viewed as a
tensor without a copy; in-place operations and `out` write into its memory, and the function
returns the object it was given.

Eager calls skip torch's dispatcher where it would change nothing (plain tensors, no autograd
history to guard, not under torch.compile, a dispatch or function mode, a functorch transform or
the profiler): the operator's own implementation runs and the mutated tensors' version counters
are bumped as the dispatcher would: 17.5 us a call against 43.8 through the operator and 44.1 for
NCCL's dist.all_reduce in one run (2 x H100, tools/py_host_cost.py). Everywhere else the
registered operator runs."""
from . import _current_stream, _group, _torch, world, InvalidArgument, Unsupported
from .tensors import _address

try:  # at import, so that torch.compile traces these wrappers without meeting an import
    import torch as _torch_module
except ImportError:
    _torch_module = None

_DTYPES = None  # torch dtype -> symmem DataType code (every type the collectives reduce)
_OPS = {"sum", "max", "min", "prod", "avg"}
_BOOL_OPS = {"sum": "max", "prod": "min", "max": "max", "min": "min"}  # (PyTorch's meaning of a bool reduction: or, and)
_BY_SIZE = {1: 6, 2: 1, 4: 5, 8: 9}  # element size -> a type of that size, for data movement of any dtype


def _dtype_code(torch, dt):
    global _DTYPES
    if _DTYPES is None:
        _DTYPES = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2, torch.int32: 5, torch.uint8: 6, torch.int64: 9,
                   torch.float64: 11}
        for name, code in (("float8_e4m3fn", 3), ("float8_e5m2", 4), ("int8", 7), ("uint32", 8), ("uint64", 10), ("bool", 6)):
            if hasattr(torch, name):
                _DTYPES[getattr(torch, name)] = code
    if dt not in _DTYPES:
        raise InvalidArgument(f"dtype {dt} has no reductions in symmem: use float32, float16, bfloat16, float64, float8_e4m3fn, "
                              "float8_e5m2, int8, uint8, int32, uint32, int64, uint64 or bool (data movement takes any dtype)")
    return _DTYPES[dt]


def _move_args(torch, t, count):
    """(count, code) for moving `count` elements of t's dtype: its own code where symmem has one, else
    the same bytes as uint8 (all_gather, broadcast, all_to_all: bitwise copies of any dtype)."""
    try:
        return count, _dtype_code(torch, t.dtype)
    except InvalidArgument:
        return count * t.element_size(), 6


def _elem_code(torch, t, what):
    """A code of t's element size (all_to_all_v, whose counts are elements): any dtype of 1, 2, 4 or 8 bytes."""
    try:
        return _dtype_code(torch, t.dtype)
    except InvalidArgument:
        if t.element_size() not in _BY_SIZE:
            raise InvalidArgument(f"{what}: dtype {t.dtype} has {t.element_size()}-byte elements; all_to_all_v moves "
                                  "elements of 1, 2, 4 or 8 bytes (view the tensor as one of those)") from None
        return _BY_SIZE[t.element_size()]


def _as_tensor(t, what):
    """t itself if it is a torch tensor, else a zero-copy tensor view of another library's CUDA array."""
    torch = _torch_module or _torch()
    if isinstance(t, torch.Tensor):
        return t
    if hasattr(t, "__dlpack__"):
        try:
            return torch.from_dlpack(t)
        except Exception as e:  # noqa: BLE001 - reported as the argument's fault
            raise InvalidArgument(f"{what}: a {type(t).__name__} could not be viewed as a tensor through DLPack ({e})") from e
    if hasattr(t, "__cuda_array_interface__"):
        try:
            return torch.as_tensor(t, device="cuda")
        except Exception as e:  # noqa: BLE001
            raise InvalidArgument(f"{what}: a {type(t).__name__} could not be viewed through __cuda_array_interface__ ({e})") from e
    return t  # _check names what it is


def _on_rank_gpu(t, what):
    """Raises unless CUDA tensor t is on this rank's GPU (kernels on it would reach another GPU's memory)."""
    dev = world()._ctx.device
    if t.get_device() != dev:
        raise InvalidArgument(f"{what}: the tensor is on {t.device} but this rank's GPU is cuda:{dev}; make it there "
                              f"(torch.cuda.set_device({dev}) before symmem.init() makes that the default)")


def _placed(t, what):
    """Raises unless t is a contiguous CUDA tensor on this rank's GPU (kernels read and write its
    memory in order)."""
    torch = _torch_module or _torch()
    if not isinstance(t, torch.Tensor):
        raise InvalidArgument(f"{what}: expected a torch.Tensor or a CUDA array with __dlpack__ or __cuda_array_interface__, "
                              f"got {type(t).__name__}")
    if not t.is_cuda:
        raise InvalidArgument(f"{what}: the tensor is on {t.device}; symmem works on CUDA tensors")
    _on_rank_gpu(t, what)
    if not t.is_contiguous():
        raise InvalidArgument(f"{what}: the tensor must be contiguous")


def _check(t, what):
    """_placed, and t's dtype code (a type symmem's collectives reduce)."""
    _placed(t, what)
    return _dtype_code(_torch_module or _torch(), t.dtype)


def _comm(name):
    return _group(name)._comm


# ---- the operators ---------------------------------------------------------------------------
_registered = False
_EAGER = {}  # operator name -> (its implementation, the positions of the arguments it mutates)


def _direct_ok(torch, args):
    """True where calling the implementation directly is what the dispatcher would do: plain tensors
    (no subclass such as FakeTensor or DTensor) with no autograd history to guard, and nothing that
    intercepts operators (torch.compile's tracing, dispatch and function modes, functorch transforms,
    the profiler, which records the operator by name)."""
    C = torch._C
    try:  # (the dispatch stack's length counts the infrastructure modes too: fake, proxy, functional)
        if (torch.compiler.is_compiling() or C._len_torch_dispatch_stack() or C._is_torch_function_mode_enabled()
                or C._are_functorch_transforms_active() or torch.autograd.profiler._is_profiler_enabled):
            return False
    except AttributeError:  # a PyTorch without one of these: always through the dispatcher
        return False
    grad = torch.is_grad_enabled()
    for a in args:
        if isinstance(a, torch.Tensor) and (type(a) is not torch.Tensor or (grad and a.requires_grad)):
            return False
    return True


def _run(name, *args):
    """Runs operator `name` on args: directly where _direct_ok, else through torch.ops.symmem."""
    torch = _torch_module
    ops = _ops()
    if not _direct_ok(torch, args):
        return getattr(ops, name)(*args)
    fn, mutated = _EAGER[name]
    out = fn(*args)
    if mutated:
        torch.autograd.graph.increment_version([args[i] for i in mutated])
    return out


def _register():
    """Defines the torch.library operators once (import symmem works without torch)."""
    global _registered
    if _registered:
        return
    torch = _torch()
    if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
        raise Unsupported(f"symmem's operators need torch.library.custom_op (PyTorch 2.4 or newer; this is {torch.__version__})")
    Tensor = torch.Tensor
    import inspect

    class _Lib:  # torch.library, where custom_op also records the implementation for _run
        @staticmethod
        def custom_op(qualname, mutates_args):
            def wrap(fn):
                params = list(inspect.signature(fn).parameters)
                _EAGER[qualname.split("::")[1]] = (fn, tuple(params.index(m) for m in mutates_args))
                return torch.library.custom_op(qualname, mutates_args=mutates_args)(fn)
            return wrap
    lib = _Lib

    @lib.custom_op("symmem::all_reduce_", mutates_args=("x",))
    def all_reduce_(x: Tensor, op: str, group: str, algo: str) -> None:
        _comm(group).all_reduce(x.data_ptr(), x.data_ptr(), x.numel(), _dtype_code(torch, x.dtype), op, _current_stream(), algo)

    @all_reduce_.register_fake
    def _(x, op, group, algo):
        return None

    @lib.custom_op("symmem::all_reduce_out", mutates_args=("out",))
    def all_reduce_out(x: Tensor, out: Tensor, op: str, group: str, algo: str) -> None:
        _comm(group).all_reduce(x.data_ptr(), out.data_ptr(), x.numel(), _dtype_code(torch, x.dtype), op, _current_stream(), algo)

    @all_reduce_out.register_fake
    def _(x, out, op, group, algo):
        return None

    @lib.custom_op("symmem::all_reduce", mutates_args=())
    def all_reduce(x: Tensor, op: str, group: str, algo: str) -> Tensor:
        out = torch.empty_like(x)
        _comm(group).all_reduce(x.data_ptr(), out.data_ptr(), x.numel(), _dtype_code(torch, x.dtype), op, _current_stream(), algo)
        return out

    @all_reduce.register_fake
    def _(x, op, group, algo):
        return torch.empty_like(x)

    @lib.custom_op("symmem::reduce_scatter_out", mutates_args=("out",))
    def reduce_scatter_out(x: Tensor, out: Tensor, op: str, group: str, algo: str) -> None:
        _comm(group).reduce_scatter(x.data_ptr(), out.data_ptr(), out.numel(), _dtype_code(torch, x.dtype), op, _current_stream(), algo)

    @reduce_scatter_out.register_fake
    def _(x, out, op, group, algo):
        return None

    @lib.custom_op("symmem::all_gather_out", mutates_args=("out",))
    def all_gather_out(x: Tensor, out: Tensor, group: str, algo: str) -> None:
        _comm(group).all_gather(x.data_ptr(), out.data_ptr(), *_move_args(torch, x, x.numel()), _current_stream(), algo)

    @all_gather_out.register_fake
    def _(x, out, group, algo):
        return None

    @lib.custom_op("symmem::broadcast_", mutates_args=("x",))
    def broadcast_(x: Tensor, root: int, group: str, algo: str) -> None:
        _comm(group).broadcast(x.data_ptr(), x.data_ptr(), *_move_args(torch, x, x.numel()), root, _current_stream(), algo)

    @broadcast_.register_fake
    def _(x, root, group, algo):
        return None

    @lib.custom_op("symmem::all_to_all_out", mutates_args=("out",))
    def all_to_all_out(x: Tensor, out: Tensor, group: str, algo: str) -> None:
        n = _group(group).size
        _comm(group).all_to_all(x.data_ptr(), out.data_ptr(), *_move_args(torch, x, x.numel() // n), _current_stream(), algo)

    @all_to_all_out.register_fake
    def _(x, out, group, algo):
        return None

    @lib.custom_op("symmem::all_to_all_v_out", mutates_args=("out", "recv_counts"))
    def all_to_all_v_out(x: Tensor, send_counts: Tensor, out: Tensor, recv_counts: Tensor, group: str, algo: str) -> None:
        # (Empty x or out: where they lie, not torch's data_ptr() of 0; an empty out may be null.)
        _comm(group).all_to_all_v(_address(x), _address(out), out.numel(), send_counts.data_ptr(), recv_counts.data_ptr(),
                                  _elem_code(torch, x, "all_to_all_v"), _current_stream(), algo)

    @all_to_all_v_out.register_fake
    def _(x, send_counts, out, recv_counts, group, algo):
        return None

    # The rooted operations. A rank that passes no buffer where it may (gather's output and scatter's
    # input off the root) passes another tensor of the call in its place and has_* False: the
    # kernel gets a null pointer there. (A dummy, not an Optional[Tensor], keeps the schemas plain.)
    @lib.custom_op("symmem::reduce_", mutates_args=("x",))
    def reduce_(x: Tensor, op: str, root: int, group: str, algo: str) -> None:
        _comm(group).reduce(x.data_ptr(), x.data_ptr(), x.numel(), _dtype_code(torch, x.dtype), op, root, _current_stream(), algo)

    @reduce_.register_fake
    def _(x, op, root, group, algo):
        return None

    @lib.custom_op("symmem::gather_out", mutates_args=("out",))
    def gather_out(x: Tensor, out: Tensor, has_out: bool, root: int, group: str, algo: str) -> None:
        _comm(group).gather(x.data_ptr(), out.data_ptr() if has_out else 0, *_move_args(torch, x, x.numel()), root,
                            _current_stream(), algo)

    @gather_out.register_fake
    def _(x, out, has_out, root, group, algo):
        return None

    @lib.custom_op("symmem::scatter_out", mutates_args=("out",))
    def scatter_out(x: Tensor, has_in: bool, out: Tensor, root: int, group: str, algo: str) -> None:
        _comm(group).scatter(x.data_ptr() if has_in else 0, out.data_ptr(), *_move_args(torch, out, out.numel()), root,
                             _current_stream(), algo)

    @scatter_out.register_fake
    def _(x, has_in, out, root, group, algo):
        return None

    _registered = True


def _ops():
    if not _registered:
        _register()
    return _torch_module.ops.symmem


def _name(group):
    return _group(group).name


def _redop(op, dtype=None):
    """op, checked; for bool tensors the op on their bytes that means what PyTorch means (sum: or, prod: and)."""
    if op not in _OPS:
        raise InvalidArgument(f"op={op!r}: use one of {sorted(_OPS)}")
    if dtype is not None and dtype is getattr(_torch_module or _torch(), "bool", None):
        if op not in _BOOL_OPS:
            raise InvalidArgument(f"op={op!r} has no meaning for bool tensors: use sum (or), prod (and), max or min")
        return _BOOL_OPS[op]
    return op


def all_reduce(tensor, op="sum", group=None, *, out=None, algo="auto"):
    """Reduces `tensor` over the group: in place (returns tensor), or into `out`."""
    t = _as_tensor(tensor, "all_reduce")
    _check(t, "all_reduce")
    if out is None:
        _run("all_reduce_", t, _redop(op, t.dtype), _name(group), algo)
        return tensor
    o = _as_tensor(out, "all_reduce out")
    _check(o, "all_reduce out")
    if o.shape != t.shape or o.dtype != t.dtype:
        raise InvalidArgument(f"all_reduce: out is {tuple(o.shape)} {o.dtype}, input {tuple(t.shape)} {t.dtype}")
    _run("all_reduce_out", t, o, _redop(op, t.dtype), _name(group), algo)
    return out


def reduce_scatter(output, input, op="sum", group=None, *, algo="auto"):
    """output (numel m) = op over ranks of this rank's m-element share of input (numel m * size)."""
    i, o = _as_tensor(input, "reduce_scatter input"), _as_tensor(output, "reduce_scatter output")
    _check(i, "reduce_scatter input")
    _check(o, "reduce_scatter output")
    n = _group(group).size
    if i.numel() != o.numel() * n or i.dtype != o.dtype:
        raise InvalidArgument(f"reduce_scatter: input has {i.numel()} {i.dtype}, output {o.numel()} {o.dtype}; "
                              f"input must hold output.numel() x {n} of the same dtype")
    _run("reduce_scatter_out", i, o, _redop(op, i.dtype), _name(group), algo)
    return output


def all_gather(output, input, group=None, *, algo="auto"):
    """output (numel m * size) = every rank's input (numel m), in rank order."""
    i, o = _as_tensor(input, "all_gather input"), _as_tensor(output, "all_gather output")
    _placed(i, "all_gather input")
    _placed(o, "all_gather output")
    n = _group(group).size
    if o.numel() != i.numel() * n or i.dtype != o.dtype:
        raise InvalidArgument(f"all_gather: input has {i.numel()} {i.dtype}, output {o.numel()} {o.dtype}; "
                              f"output must hold input.numel() x {n} of the same dtype")
    _run("all_gather_out", i, o, _name(group), algo)
    return output


def broadcast(tensor, src=0, group=None, *, algo="auto"):
    """tensor = rank `src`'s tensor (src is a rank of the group), in place."""
    t = _as_tensor(tensor, "broadcast")
    _placed(t, "broadcast")
    g = _group(group)
    if not 0 <= src < g.size:
        raise InvalidArgument(f"broadcast: src={src} is not a rank of the group (size {g.size})")
    _run("broadcast_", t, int(src), g.name, algo)
    return tensor


def _root(g, root, what, name):
    if not isinstance(root, int) or not 0 <= root < g.size:
        raise InvalidArgument(f"{what}: {name}={root!r} is not a rank of the group (size {g.size})")
    return root


def reduce(tensor, dst=0, op="sum", group=None, *, algo="auto"):
    """Reduces `tensor` over the group into rank `dst`'s tensor, in place; the other ranks' tensors
    are left as they were (as torch.distributed.reduce)."""
    t = _as_tensor(tensor, "reduce")
    _check(t, "reduce")
    g = _group(group)
    _run("reduce_", t, _redop(op, t.dtype), _root(g, dst, "reduce", "dst"), g.name, algo)
    return tensor


def _rooted_buffer(t, g, root, everywhere, what, who):
    """t placed, or None where this rank may pass none: off the root, unless `everywhere` (an
    algorithm that finds the root's buffer through every rank's symmetric counterpart)."""
    if t is None:
        if g.rank == root or everywhere:
            raise InvalidArgument(f"{what} is None" + (f" on rank {who}" if g.rank == root else
                                                      f" (this algorithm reaches rank {who}'s through every rank's counterpart)"))
        return None
    t = _as_tensor(t, what)
    _placed(t, what)
    return t


def _chunks(chunk, whole, g, what):
    """Raises unless `whole` holds g.size of `chunk`'s numel, in its dtype."""
    if whole.numel() != chunk.numel() * g.size or whole.dtype != chunk.dtype:
        raise InvalidArgument(f"{what}: one rank's chunk has {chunk.numel()} {chunk.dtype}, the whole {whole.numel()} {whole.dtype}; "
                              f"the whole must hold {g.size} chunks of the same dtype")


def _rooted_move(chunk, whole, root, group, what, chunk_name, whole_name, who, everywhere):
    """gather's and scatter's checks: `chunk` (this rank's, every rank passes it) placed; `whole`
    (g.size chunks) by _rooted_buffer. Returns (chunk, whole or None, group, root)."""
    c = _as_tensor(chunk, f"{what} {chunk_name}")
    _placed(c, f"{what} {chunk_name}")
    g = _group(group)
    r = _root(g, root, what, who)
    w = _rooted_buffer(whole, g, r, everywhere, f"{what}: {whole_name}", who)
    if w is not None:
        _chunks(c, w, g, what)
    return c, w, g, r


def gather(output, input, dst=0, group=None, *, algo="auto"):
    """On rank dst, output (numel m * size) = every rank's input (numel m), in rank order. Other
    ranks pass output=None, but for algo="push", where every rank passes its symmetric output (the
    same place of the same symmem.empty allocation as dst's), into which nothing is written."""
    i, o, g, root = _rooted_move(input, output, dst, group, "gather", "input", "output", "dst", algo == "push")
    _run("gather_out", i, i if o is None else o, o is not None, root, g.name, algo)
    return output


def scatter(output, input, src=0, group=None, *, algo="auto"):
    """output (numel m) = block `rank` of rank src's input (numel m * size). Other ranks pass
    input=None, but for algo="direct", where every rank passes its symmetric input (the same place
    of the same symmem.empty allocation as src's), which nothing reads."""
    o, i, g, root = _rooted_move(output, input, src, group, "scatter", "output", "input", "src", algo == "direct")
    _run("scatter_out", o if i is None else i, i is not None, o, root, g.name, algo)
    return output


def all_to_all(output, input, group=None, *, algo="auto"):
    """Equal splits: output's block r = rank r's input block for this rank."""
    i, o = _as_tensor(input, "all_to_all input"), _as_tensor(output, "all_to_all output")
    _placed(i, "all_to_all input")
    _placed(o, "all_to_all output")
    n = _group(group).size
    if i.numel() != o.numel() or i.numel() % n or i.dtype != o.dtype:
        raise InvalidArgument(f"all_to_all: input and output must have the same dtype and numel, a multiple of {n} "
                              f"(got {i.numel()} {i.dtype} and {o.numel()} {o.dtype})")
    _run("all_to_all_out", i, o, _name(group), algo)
    return output


def all_to_all_v(output, input, send_counts, recv_counts=None, group=None, *, algo="auto"):
    """Variable splits with counts on the GPU (no host synchronisation).

    input: symmetric (symmem.empty, at the same place on every rank), this rank's rows for every
    peer packed in rank order; send_counts: int64 [size] on this GPU (elements for each peer),
    symmetric for algo="direct"; output: any tensor (empty where nothing may arrive), filled in
    rank order; recv_counts (optional int64 [size]) receives what came from each peer. Bad counts
    move nothing and raise InvalidArgument on every rank at the next synchronising call."""
    torch = _torch_module or _torch()
    _placed(input, "all_to_all_v input")
    _placed(output, "all_to_all_v output")
    g = _group(group)

    def counts(t, what):  # read or written by the kernels: device memory of this rank's GPU
        if not isinstance(t, torch.Tensor) or t.dtype != torch.int64 or t.numel() != g.size:
            raise InvalidArgument(f"all_to_all_v: {what} must be an int64 CUDA tensor of {g.size} elements (one a rank)")
        _placed(t, f"all_to_all_v {what}")

    counts(send_counts, "send_counts")
    if recv_counts is None:
        recv_counts = torch.empty(g.size, dtype=torch.int64, device=output.device)
    else:
        counts(recv_counts, "recv_counts")
    if input.dtype != output.dtype:
        raise InvalidArgument(f"all_to_all_v: input is {input.dtype}, output {output.dtype}")
    _elem_code(torch, input, "all_to_all_v")
    _run("all_to_all_v_out", input, send_counts, output, recv_counts, g.name, algo)
    return output, recv_counts
