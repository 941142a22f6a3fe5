"""The package's argument checks on a stand-in torch (stand_in_torch.py), with no GPU and no
PyTorch: each call below must be accepted (and reach the library with what it passes) or refused
with InvalidArgument naming the problem. A world of 2 ranks on GPU 0 is faked; the library's calls
are recorded, not made. Run by test_host.py in a fresh interpreter (it replaces `torch`); prints
one line a failed case and exits 1 if any failed."""
import contextlib
import io
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stand_in_torch as torch  # noqa: E402

sys.modules["torch"] = torch
import symmem  # noqa: E402
from symmem import ops, overlap, tensors  # noqa: E402

T = torch.Tensor
calls = []  # (name, args) the library was asked for


class Recorder:
    """Stands for the extension and its objects: every method call is recorded."""

    def __init__(self, prefix=""):
        self.prefix = prefix

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)

        def call(*args, **kwargs):
            calls.append((self.prefix + name, args))
            return Recorder(name + ".")
        return call


symmem._world = types.SimpleNamespace(_ctx=types.SimpleNamespace(device=0), _comm=Recorder("comm."), size=2, rank=0,
                                      name="symmem_world", global_ranks=[0, 1])
ops._run = lambda name, *args: calls.append((name, args))
tensors._lib = overlap._lib = lambda: Recorder()


class Buf:  # a symmetric buffer of 64 bytes
    ptr, nbytes, device = 1 << 40, 64, 0

    def free(self, stream=0):
        pass


owner = tensors._Owner(Buf(), symmem._world)
sym = T((16,), torch.float32, address=Buf.ptr)  # a symmetric float32 [16]
x = T((16,))
failures = []


def case(what, fn, refused=None, reaches=None):
    """refused: a text the InvalidArgument must hold (else the call must pass); reaches: the name
    of the library call the accepted call must make."""
    del calls[:]
    try:
        fn()
    except symmem.InvalidArgument as e:
        if refused is None:
            failures.append(f"{what}: refused ({e})")
        elif refused not in str(e):
            failures.append(f"{what}: refused without '{refused}': {e}")
        return
    except Exception as e:  # noqa: BLE001
        failures.append(f"{what}: {type(e).__name__}: {e}")
        return
    if refused is not None:
        failures.append(f"{what}: accepted (expected a refusal with '{refused}')")
    elif reaches is not None and reaches not in [c[0] for c in calls]:
        failures.append(f"{what}: accepted but never called {reaches} ({[c[0] for c in calls]})")


# The collectives
case("all_reduce", lambda: symmem.all_reduce(x), reaches="all_reduce_")
case("all_reduce float64", lambda: symmem.all_reduce(T((4,), torch.float64)), reaches="all_reduce_")
case("all_reduce int64 max", lambda: symmem.all_reduce(T((4,), torch.int64), "max"), reaches="all_reduce_")
case("all_reduce int8 out", lambda: symmem.all_reduce(T((4,), torch.int8), out=T((4,), torch.int8)), reaches="all_reduce_out")
case("all_reduce complex64", lambda: symmem.all_reduce(T((4,), torch.complex64)), refused="complex64 has no reductions")
case("all_reduce bool avg", lambda: symmem.all_reduce(T((4,), torch.bool), "avg"), refused="bool")
case("reduce_scatter int64", lambda: symmem.reduce_scatter(T((8,), torch.int64), T((16,), torch.int64)), reaches="reduce_scatter_out")
case("all_gather complex64 (as bytes)", lambda: symmem.all_gather(T((32,), torch.complex64), T((16,), torch.complex64)),
     reaches="all_gather_out")
case("broadcast bool", lambda: symmem.broadcast(T((4,), torch.bool)), reaches="broadcast_")
case("all_to_all complex128 (as bytes)", lambda: symmem.all_to_all(T((16,), torch.complex128), T((16,), torch.complex128)),
     reaches="all_to_all_out")
case("all_reduce op", lambda: symmem.all_reduce(x, "median"), refused="median")
case("all_reduce transposed", lambda: symmem.all_reduce(T((8, 2)).t()), refused="contiguous")
case("all_reduce on the host", lambda: symmem.all_reduce(T((4,), device_="cpu")), refused="CUDA")
case("all_reduce on another GPU", lambda: symmem.all_reduce(T((4,), device_="cuda:1")), refused="this rank's GPU")
case("all_reduce out", lambda: symmem.all_reduce(x, out=T((16,))), reaches="all_reduce_out")
case("all_reduce out of another size", lambda: symmem.all_reduce(x, out=T((8,))), refused="out is")
case("reduce_scatter", lambda: symmem.reduce_scatter(T((8,)), x), reaches="reduce_scatter_out")
case("reduce_scatter sizes", lambda: symmem.reduce_scatter(T((8,)), T((15,))), refused="x 2")
case("all_gather", lambda: symmem.all_gather(x, T((8,))), reaches="all_gather_out")
case("all_gather sizes", lambda: symmem.all_gather(T((15,)), T((8,))), refused="x 2")
case("broadcast src", lambda: symmem.broadcast(x, src=2), refused="src=2")
case("all_to_all", lambda: symmem.all_to_all(T((16,)), x), reaches="all_to_all_out")
case("all_to_all sizes", lambda: symmem.all_to_all(T((15,)), T((15,))), refused="multiple of 2")
# The rooted operations (this rank is 0 of 2)
case("reduce", lambda: symmem.reduce(x), reaches="reduce_")
case("reduce bool max to rank 1", lambda: symmem.reduce(T((4,), torch.bool), dst=1, op="max"), reaches="reduce_")
case("reduce dst", lambda: symmem.reduce(x, dst=2), refused="dst=2")
case("reduce complex64", lambda: symmem.reduce(T((4,), torch.complex64)), refused="complex64 has no reductions")
case("reduce bool avg", lambda: symmem.reduce(T((4,), torch.bool), op="avg"), refused="bool")
case("gather", lambda: symmem.gather(T((32,)), x), reaches="gather_out")
case("gather complex64 (as bytes)", lambda: symmem.gather(T((8,), torch.complex64), T((4,), torch.complex64)), reaches="gather_out")
case("gather to rank 1, no output", lambda: symmem.gather(None, x, dst=1), reaches="gather_out")
case("gather no output on dst", lambda: symmem.gather(None, x), refused="on rank dst")
case("gather push, no output", lambda: symmem.gather(None, x, dst=1, algo="push"), refused="counterpart")
case("gather sizes", lambda: symmem.gather(T((31,)), x), refused="2 chunks")
case("gather dst", lambda: symmem.gather(T((32,)), x, dst=-1), refused="dst=-1")
case("scatter", lambda: symmem.scatter(x, T((32,))), reaches="scatter_out")
case("scatter from rank 1, no input", lambda: symmem.scatter(x, None, src=1), reaches="scatter_out")
case("scatter no input on src", lambda: symmem.scatter(x, None), refused="on rank src")
case("scatter direct, no input", lambda: symmem.scatter(x, None, src=1, algo="direct"), refused="counterpart")
case("scatter sizes", lambda: symmem.scatter(x, T((33,))), refused="2 chunks")
case("scatter dtypes", lambda: symmem.scatter(x, T((32,), torch.float16)), refused="same dtype")
case("scatter output transposed", lambda: symmem.scatter(T((8, 2)).t(), T((32,))), refused="contiguous")
counts = T((2,), torch.int64)
case("all_to_all_v", lambda: symmem.all_to_all_v(T((16,)), sym, counts, T((2,), torch.int64)), reaches="all_to_all_v_out")
case("all_to_all_v, recv_counts made", lambda: symmem.all_to_all_v(T((16,)), sym, counts), reaches="all_to_all_v_out")
case("all_to_all_v complex128", lambda: symmem.all_to_all_v(T((16,), torch.complex128), T((2,), torch.complex128, address=Buf.ptr), counts),
     refused="1, 2, 4 or 8 bytes")
case("all_to_all_v recv_counts on the host",
     lambda: symmem.all_to_all_v(T((16,)), sym, counts, T((2,), torch.int64, "cpu")), refused="CUDA")
case("all_to_all_v send_counts float", lambda: symmem.all_to_all_v(T((16,)), sym, T((2,))), refused="int64")
case("all_to_all_v send_counts of 3", lambda: symmem.all_to_all_v(T((16,)), sym, T((3,), torch.int64)), refused="2 elements")
case("all_to_all_v send_counts on another GPU",
     lambda: symmem.all_to_all_v(T((16,)), sym, T((2,), torch.int64, "cuda:1")), refused="this rank's GPU")

# One-sided transfers
case("put", lambda: symmem.put(sym, 1, T((16,))), reaches="put")
case("put of another byte size", lambda: symmem.put(sym, 1, T((17,))), refused="byte size")
case("put of bytes alike, dtypes not", lambda: symmem.put(sym, 1, T((32,), torch.bfloat16)), reaches="put")
case("put transposed", lambda: symmem.put(sym, 1, T((8, 2)).t()), refused="contiguous")
case("put into plain memory", lambda: symmem.put(T((16,)), 1, T((16,))), refused="not symmetric")
case("get into host memory", lambda: symmem.get(T((16,), device_="cpu"), sym, 1), refused="CUDA")
case("get", lambda: symmem.get(T((16,)), sym, 1), reaches="get")
case("put_signal past a slice", lambda: symmem.put_signal(sym[:8], 1, T((16,)), slot=0), refused="byte size")
case("put_signal", lambda: symmem.put_signal(sym[8:], 1, T((8,)), slot=0), reaches="put_signal")
# An empty view (torch gives its data_ptr() as 0) still names its buffer and place: a zero-byte
# put_signal signals, a zero-byte get or put is accepted.
case("put_signal of an empty view", lambda: symmem.put_signal(sym[8:8], 1, T((0,)), slot=0), reaches="put_signal")
if not any(c[0] == "put_signal" and c[1][2] == 32 and c[1][4] == 0 for c in calls):
    failures.append(f"put_signal of an empty view: not at byte offset 32 with 0 bytes ({calls})")
case("get of an empty view", lambda: symmem.get(T((0,)), sym[16:], 1), reaches="get")
case("put into an empty view", lambda: symmem.put(sym[3:3], 0, T((0,), torch.uint8)), reaches="put")

# The overlapped GEMMs, and their buffers under CUDA graph capture
bf = torch.bfloat16
case("all_gather_matmul", lambda: symmem.all_gather_matmul(T((64, 128), bf), T((128, 256), bf)), reaches="TensorParallel")
case("all_gather_matmul dtypes", lambda: symmem.all_gather_matmul(T((64, 128), torch.float16), T((128, 256), bf)),
     refused="alike")
case("all_gather_matmul float32", lambda: symmem.all_gather_matmul(T((64, 128)), T((128, 256))), refused="bfloat16")
case("all_gather_matmul K", lambda: symmem.all_gather_matmul(T((64, 128), bf), T((64, 256), bf)), refused="b is")
case("matmul_reduce_scatter M", lambda: symmem.matmul_reduce_scatter(T((63, 128), bf), T((128, 256), bf)),
     refused="multiple")
case("all_gather_matmul of no rows", lambda: symmem.all_gather_matmul(T((0, 128), bf), T((128, 256), bf), return_a=True))
if calls:
    failures.append(f"all_gather_matmul of no rows: called the library ({calls}); it returns empty results")
case("matmul_reduce_scatter of no rows", lambda: symmem.matmul_reduce_scatter(T((0, 128), bf), T((128, 256), bf)))
if calls:
    failures.append(f"matmul_reduce_scatter of no rows: called the library ({calls}); it returns an empty result")
case("matmul_reduce_scatter K = 0", lambda: symmem.matmul_reduce_scatter(T((64, 0), bf), T((0, 256), bf)), refused="K and Nc must be positive")
case("all_gather_matmul Nc = 0", lambda: symmem.all_gather_matmul(T((64, 128), bf), T((128, 0), bf)), refused="K and Nc must be positive")
torch.cuda.capturing = True
case("capture at the sizes made", lambda: symmem.all_gather_matmul(T((64, 128), bf), T((128, 256), bf)),
     reaches="TensorParallel.all_gather_matmul")
case("capture at larger sizes", lambda: symmem.all_gather_matmul(T((128, 128), bf), T((128, 256), bf)),
     refused="before capturing")
torch.cuda.capturing = False
case("a remake after a capture", lambda: symmem.all_gather_matmul(T((128, 128), bf), T((128, 256), bf)),
     reaches="TensorParallel")
if len(getattr(overlap, "_retired", ())) != 1:
    failures.append("the captured TensorParallel was not kept")

# Sub-groups: the ranks are checked, then agreed across the world, then the world is split
case("new_group", lambda: symmem.new_group([0, 1]), reaches="comm.require_same")
if not any(c[0] == "comm.require_same" and c[1][0] == "ranks=0,1" for c in calls):
    failures.append(f"new_group: the ranks were not agreed as 'ranks=0,1' ({calls})")
case("new_group repeated ranks", lambda: symmem.new_group([0, 0]), refused="distinct")
case("new_group rank past the world", lambda: symmem.new_group([0, 2]), refused="distinct")
case("new_group of nothing", lambda: symmem.new_group(), refused="needs ranks")
case("new_group of ranks and a torch group", lambda: symmem.new_group([0, 1], torch_group=None),
     refused="ranks and torch_group were both passed")
case("new_group of a mesh and ranks", lambda: symmem.new_group([0], mesh=object(), mesh_dim=0),
     refused="ranks and mesh were both passed")
case("new_group of a mesh_dim alone", lambda: symmem.new_group(mesh_dim="tp"), refused="needs mesh")
# From torch groups (a stand-in torch.distributed): the team in torch's order, the members agreed
# within it; a rank in no group (None, as new_subgroups_by_enumeration gives it) splits off alone.
dist = types.ModuleType("torch.distributed")
dist.GroupMember = types.SimpleNamespace(NON_GROUP_MEMBER=object())
dist.get_process_group_ranks = lambda g: list(g.ranks)
torch.distributed = sys.modules["torch.distributed"] = dist
case("new_group of a torch group", lambda: symmem.new_group(torch_group=types.SimpleNamespace(ranks=[1, 0])), reaches="comm.split")
if not any(c[0] == "comm.split" and c[1] == (0, 1) for c in calls) or not any(
        c[0] == "split.require_same" and c[1][0] == "members=1,0" for c in calls):
    failures.append(f"new_group of torch group [1, 0]: not split as color 0, key 1 and agreed as 'members=1,0' ({calls})")
class FakeMesh:
    def __init__(self, ndim):
        self.ndim, self.asked = ndim, []

    def get_group(self, dim):
        self.asked.append(dim)
        return types.SimpleNamespace(ranks=[0, 1])


mesh1, mesh2 = FakeMesh(1), FakeMesh(2)
case("new_group of a 1-D mesh", lambda: symmem.new_group(mesh=mesh1), reaches="comm.split")
if mesh1.asked != [0]:
    failures.append(f"new_group of a 1-D mesh: asked the mesh for dimensions {mesh1.asked}, not [0]")
case("new_group of a 2-D mesh without mesh_dim", lambda: symmem.new_group(mesh=mesh2), refused="of 2 dimensions needs mesh_dim")
case("new_group of a 2-D mesh's dimension", lambda: symmem.new_group(mesh=mesh2, mesh_dim="tp"), reaches="comm.split")
if mesh2.asked != ["tp"]:
    failures.append(f"new_group of a 2-D mesh's dimension: asked the mesh for {mesh2.asked}, not ['tp']")
for none in (None, dist.GroupMember.NON_GROUP_MEMBER):
    case(f"new_group of torch_group={none}", lambda: symmem.new_group(torch_group=none), reaches="comm.split")
    if [c for c in calls if c[0] in ("comm.split", "split.require_same")] != [("comm.split", (-1, 0))]:
        failures.append(f"new_group of torch_group={none}: not split off alone ({calls})")

# MoE dispatch and combine (an ExpertParallel of 4 local experts of capacity 64 a rank, faked)
class FakeExpertParallel(Recorder):
    local_experts, capacity, bytes_per_rank = 4, 64, 1 << 20
    one_kernel_per_round = dispatch_one_kernel_per_round = dispatch_streamed = combine_streamed = dispatch_lines = False

    def __init__(self, *args):
        Recorder.__init__(self, "ep.")


symmem.moe._lib = lambda: types.SimpleNamespace(ExpertParallel=FakeExpertParallel)
ep = symmem.moe.ExpertParallel(256, 4, 8, 32)
i32 = torch.int32
case("moe dispatch", lambda: ep.dispatch(T((16, 256), bf), T((16, 4), i32)), reaches="ep.dispatch")
case("moe dispatch, weights", lambda: ep.dispatch(T((16, 256), bf), T((16, 4), torch.int64), T((16, 4))), reaches="ep.dispatch")
case("moe dispatch H", lambda: ep.dispatch(T((16, 128), bf), T((16, 4), i32)), refused="[T, 256]")
case("moe dispatch x fp16", lambda: ep.dispatch(T((16, 256), torch.float16), T((16, 4), i32)), refused="made for")
case("moe dispatch topk_idx float", lambda: ep.dispatch(T((16, 256), bf), T((16, 4))), refused="int32/int64")
case("moe dispatch topk_idx K", lambda: ep.dispatch(T((16, 256), bf), T((16, 3), i32)), refused="[16, 4]")
case("moe dispatch topk_idx a strided slice", lambda: ep.dispatch(T((16, 256), bf), T((16, 4), torch.int64, contiguous=False)),
     refused="contiguous int32/int64")
case("moe dispatch weights bf16", lambda: ep.dispatch(T((16, 256), bf), T((16, 4), i32), T((16, 4), bf)), refused="fp32")
case("moe dispatch x on another GPU", lambda: ep.dispatch(T((16, 256), bf, "cuda:1"), T((16, 4), i32)), refused="this rank's GPU")
case("moe combine", lambda: ep.combine(T((4, 64, 256), bf)), reaches="ep.combine")
case("moe combine shape", lambda: ep.combine(T((4, 32, 256), bf)), refused="[4, 64, 256]")
case("moe combine on the host", lambda: ep.combine(T((4, 64, 256), bf, "cpu")), refused="this rank's GPU")
case("moe dispatch_send", lambda: ep.dispatch_send(T((16, 256), bf), T((16, 4), i32)), reaches="ep.dispatch_send")
case("moe dispatch_send H", lambda: ep.dispatch_send(T((16, 128), bf), T((16, 4), i32)), refused="moe dispatch_send: x must")
case("moe dispatch_recv", lambda: ep.dispatch_recv(), reaches="ep.dispatch_recv")
case("moe combine_send", lambda: ep.combine_send(T((4, 64, 256), bf)), reaches="ep.combine_send")
case("moe combine_send shape", lambda: ep.combine_send(T((4, 64, 128), bf)), refused="moe combine_send: expert_out must")
case("moe combine_recv", lambda: ep.combine_recv(), reaches="ep.combine_recv")

# python -m symmem.bench's command line: checked before anything starts, a bad value or no launcher
# refused at once with argparse's exit code 2, naming it.
from symmem import bench  # noqa: E402

launched = {"RANK": "0", "WORLD_SIZE": "2"}


def bench_args(what, argv, refused=None, environ=launched):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            bench.parse_args(argv, environ)
    except SystemExit as e:
        if refused is None or e.code != 2 or refused not in err.getvalue():
            failures.append(f"symmem.bench {what}: exit code {e.code}, '{err.getvalue().strip()}' (expected "
                            f"{'no exit' if refused is None else refused})")
        return
    if refused is not None:
        failures.append(f"symmem.bench {what}: accepted (expected a refusal with '{refused}')")


bench_args("defaults", [])
bench_args("the overlap suite", ["--suite", "overlap", "--overlap-models", "70B", "--overlap-ms", "4096,8192"])
bench_args("--min-bytes 0", ["--min-bytes", "0"], "--min-bytes=0: at least 2")
bench_args("--max-bytes below --min-bytes", ["--min-bytes", "4096", "--max-bytes", "1024"], "--max-bytes=1024 is below")
bench_args("--replays 0", ["--replays", "0"], "--replays=0: at least 1")
bench_args("--overlap-models 13B", ["--overlap-models", "8B,13B"], "'13B' is not one of 8B, 70B")
bench_args("--overlap-ms 8k", ["--overlap-ms", "8k"], "'8k' is not a positive whole number")
bench_args("--suite bogus", ["--suite", "bogus"], "invalid choice: 'bogus'")
bench_args("no launcher", [], "RANK and WORLD_SIZE are not set", environ={})
bench_args("--out in a missing directory", ["--out", "/nonexistent-dir/b.json"], "its directory '/nonexistent-dir' is missing")

# The machine kind the JSON names without --kind, as symmem-bench's (bench/device_kind.hpp).
for name, gpus, want in (("NVIDIA H200", 4, "nvidia-h200-x4"), ("NVIDIA A100-SXM4-80GB", 2, "nvidia-a100-x2"),
                         ("NVIDIA H100 80GB HBM3", 8, "nvidia-h100-x8"), ("", 1, "nvidia-unknown-x1")):
    if bench.device_kind(name, gpus) != want:
        failures.append(f"symmem.bench device_kind({name!r}, {gpus}) = {bench.device_kind(name, gpus)!r}, not {want!r}")

for f in failures:
    print("FAILED:", f)
print(f"{len(failures)} of the cases failed")
sys.exit(1 if failures else 0)
