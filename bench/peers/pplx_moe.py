# pplx-kernels' intranode all-to-all (`AllToAll.intranode`: dispatch / combine into preallocated
# tensors), a peer of issue 10, on the decode shapes of `symmem-bench moe`: the dispatch + combine
# pair captured in CUDA graphs of REPS pairs, median of REPLAYS replays, maximum over ranks (eager
# events where a capture fails); each half by events around it in eager pairs queued behind a GPU
# spin (pplx cannot run dispatches alone in a row). Uniform routing (random top-k without repeats), fp8 dispatch with per-128 fp32
# scales where the shape says so, bf16 combine.
#   tools/peers.sh prepare                    # here: pplx-kernels 12cecfd into .deps/pplx (with DeepEP)
#   tools/peers.sh run                        # on the GPU machine: builds it (CMake, PyTorch's NVSHMEM), runs this
# Written in session 8 against pplx-kernels 12cecfd (the last commit before its NVSHMEM4Py
# integration, which needs Python packages the GPU machines lack). Session 11: built in ~30 s; the
# first form timed REPS dispatches in a row and faulted (illegal memory access).
import os

import torch
import torch.distributed as dist

from peer_common import run_shapes, setup, timed_parts_us, timed_us, write

REPS, REPLAYS = 20, 15

# (name, tokens per rank, hidden, top-k, experts, fp8 dispatch): bench/moe.cu's decode shapes.
SHAPES = [
    ("decode", 128, 7168, 8, 256, True),
    ("pplx_64e_1t", 1, 2048, 6, 64, False),
    ("pplx_64e_128t", 128, 2048, 6, 64, False),
    ("pplx_256e_1t", 1, 7168, 8, 256, True),
]


def graph_us(fn):
    """us per fn(): REPS calls in one graph, median of REPLAYS replays, max over ranks; eager events
    (median of REPLAYS single calls) where the capture fails."""
    s = torch.cuda.Stream()
    method = "graph"
    try:
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()  # warm-up outside the capture
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            for _ in range(REPS):
                fn()
        run, per = g.replay, REPS
    except Exception:  # noqa: BLE001 - a peer that does not capture is timed eagerly
        torch.cuda.synchronize()
        method, run, per = "eager", fn, 1
    return timed_us(run, per, REPLAYS, spin=True), method


def one_shape(rank, world, T, H, K, E, fp8):
    from pplx_kernels.all_to_all import AllToAll

    in_dtype = torch.float8_e4m3fn if fp8 else torch.bfloat16
    groups = (H + 127) // 128
    scale_bytes = groups * 4 if fp8 else 0
    ata = AllToAll.intranode(max_num_tokens=T, num_experts=E, experts_per_token=K, rank=rank, world_size=world, dp_size=1,
                             hidden_dim=H, hidden_dim_bytes=H * in_dtype.itemsize, hidden_dim_scale_bytes=scale_bytes)
    el = E // world
    dev = torch.device("cuda")
    idx = torch.stack([torch.randperm(E, device=dev)[:K] for _ in range(T)]).to(torch.uint32)
    w = torch.rand(T, K, device=dev, dtype=torch.float32)
    x = (torch.randn(T, H, device=dev) * 4).to(in_dtype)
    x_scale = torch.rand(T, groups, device=dev, dtype=torch.float32) if fp8 else None
    bound_m = torch.tensor([T], dtype=torch.uint32, device=dev)
    num_tok = torch.empty(el, dtype=torch.int32, device=dev)
    ex = torch.empty(el, T * world, H, dtype=in_dtype, device=dev)
    ex_scale = torch.empty(el, T * world, groups, dtype=torch.float32, device=dev) if fp8 else None
    ey = torch.randn(el, T * world, H, device=dev).to(torch.bfloat16)
    y = torch.empty(T, H, dtype=torch.bfloat16, device=dev)

    def dispatch():
        ata.dispatch(out_expert_num_tokens=num_tok, out_expert_x=ex, out_expert_x_scale=ex_scale, dp_x=x, dp_x_scale=x_scale,
                     indices=idx, bound_m=bound_m)

    def combine():
        ata.combine(out_tokens=y, indices=idx, weights=w, expert_y=ey, bound_m=bound_m)

    def pair():
        dispatch()
        combine()

    # A dispatch must be followed by its combine before the next dispatch (pplx's combine zeroes
    # the receive counter that every dispatch adds to; dispatches alone in a row ran past its
    # buffers: session 11's "illegal memory access"). So the graph holds pairs, and the halves are
    # timed apart by events between them in eager pairs queued behind a GPU spin.
    both, method = graph_us(pair)
    disp, comb = timed_parts_us([dispatch, combine], REPLAYS, spin=True)
    ata.destroy()
    return {"dispatch_us": disp, "combine_us": comb, "pair_us": both, "method": f"pair: {method}; halves: eager events"}


def main():
    args, world, rank = setup("pplx_moe.json", SHAPES, backend="cpu:gloo,cuda:nccl")
    # pplx-kernels finds its process group by name ("default" unless told otherwise).
    torch._C._distributed_c10d._register_process_group("default", dist.group.WORLD)
    from pplx_kernels.nvshmem import nvshmem_alloc_empty_unique_id, nvshmem_finalize, nvshmem_get_unique_id, nvshmem_init

    uid = nvshmem_get_unique_id() if rank == 0 else nvshmem_alloc_empty_unique_id()
    dist.broadcast(uid, src=0)  # a CPU tensor: over gloo
    nvshmem_init(uid, rank, world)
    rows = run_shapes(SHAPES, args.shapes, world, rank, 2000, lambda T, H, K, E, fp8: one_shape(rank, world, T, H, K, E, fp8))
    write(args.out, rank, world, rows, suite="peer_pplx_moe", peer="pplx-kernels " + os.environ.get("PPLX_VERSION", "12cecfd"),
          timing=f"pair: CUDA graph of {REPS} dispatch+combine pairs (eager where capture fails), median of {REPLAYS} replays, "
                 f"max over ranks; halves: events around each in eager pairs queued behind a GPU spin, median of {REPLAYS}")
    dist.barrier()
    nvshmem_finalize()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
