# DeepEP (a peer of issue 10) on the shapes of `symmem-bench moe`, timed the way symmem-bench times
# symmem: CUDA-graph replays timed with events, median of REPEATS, maximum over ranks (low-latency
# kernels, which capture); eager calls timed with events for the intranode kernels (their host
# reads the receive counts, so they do not capture). Dispatch alone and dispatch + combine are
# timed; combine = pair - dispatch, as symmem-bench reports it. Uniform routing (random scores,
# top-k), bf16 activations; fp8 dispatch where the shape says so.
#   tools/peers.sh prepare                    # here: DeepEP v1.2.1 into .deps/deepep
#   tools/peers.sh run                        # on the GPU machine: builds it, runs its own tests
#   PYTHONPATH=.deps/deepep torchrun --nproc-per-node=4 bench/peers/deepep_moe.py --out $OUT/deepep_moe.json
# Not yet run on a GPU (written in session 7 against DeepEP v1.2.1's Buffer API).
import argparse
import json
import os
import time

import torch
import torch.distributed as dist

REPEATS = 15

# (name, tokens per rank, hidden, top-k, experts, fp8 dispatch): the shapes of bench/moe.cu.
SHAPES = [("decode", 128, 7168, 8, 256, True), ("pplx_64e_1t", 1, 2048, 6, 64, False), ("pplx_64e_128t", 128, 2048, 6, 64, False),
          ("pplx_256e_1t", 1, 7168, 8, 256, True), ("prefill", 4096, 7168, 8, 256, True)]


def routing(tokens, experts, topk):
    scores = torch.rand(tokens, experts, device="cuda")
    idx = scores.topk(topk, dim=1).indices.to(torch.int64)
    w = torch.softmax(torch.randn(tokens, topk, device="cuda"), 1).float()
    return idx, w


def max_over_ranks(v):
    t = torch.tensor([v], dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def time_graph(fn):
    """us per replay of a graph of fn(): median of REPEATS, each replay lined up across ranks."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return time_replays(g.replay)


def time_replays(run, spin=True):
    """us per run(): median of REPEATS, max over ranks. spin: the GPU first waits ~50 us so that the
    host's submission is not timed (only where run() does not wait on the GPU itself)."""
    times = []
    for _ in range(REPEATS):
        dist.barrier()
        torch.cuda.synchronize()
        if spin:
            torch.cuda._sleep(50_000)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    times.sort()
    return max_over_ranks(times[len(times) // 2])


def low_latency(deep_ep, group, world, name, tokens, hidden, topk, experts, fp8):
    buf = deep_ep.Buffer(group, 0, deep_ep.Buffer.get_low_latency_rdma_size_hint(tokens, hidden, world, experts),
                         low_latency_mode=True, num_qps_per_rank=experts // world, explicitly_destroy=True)
    x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
    idx, w = routing(tokens, experts, topk)
    e_local = experts // world
    expert_out = torch.randn(e_local, tokens * world, hidden, device="cuda", dtype=torch.bfloat16)
    state = {}

    def dispatch():
        recv, counts, handle, _, _ = buf.low_latency_dispatch(x, idx, tokens, experts, use_fp8=fp8)
        state["handle"] = handle

    def pair():
        dispatch()
        buf.low_latency_combine(expert_out, idx, w, state["handle"])

    d = time_graph(dispatch)
    p = time_graph(pair)
    buf.destroy()
    return {"mode": "low_latency", "dispatch_us": d, "combine_us": p - d, "pair_us": p}


def intranode(deep_ep, group, world, name, tokens, hidden, topk, experts, fp8):
    buf = deep_ep.Buffer(group, int(2e9), 0, explicitly_destroy=True)
    x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
    idx, w = routing(tokens, experts, topk)
    if fp8:
        g = hidden // 128
        xp = x.float().view(tokens, g, 128)
        scale = xp.abs().amax(-1).clamp(min=1e-4) / 448.0
        xin = ((xp / scale.unsqueeze(-1)).to(torch.float8_e4m3fn).view(tokens, hidden), scale)
    else:
        xin = x
    state = {}

    def dispatch():
        per_rank, _, per_expert, in_rank, _ = buf.get_dispatch_layout(idx, experts)
        recv_x, _, recv_w, _, handle, _ = buf.dispatch(xin, num_tokens_per_rank=per_rank, is_token_in_rank=in_rank,
                                                        num_tokens_per_expert=per_expert, topk_idx=idx, topk_weights=w)
        state["handle"], state["recv_x"] = handle, recv_x

    def combine():
        y = state["recv_x"]
        if isinstance(y, tuple):  # fp8 in, bf16 expert outputs back (what an engine's experts produce)
            y = torch.randn(y[0].shape[0], hidden, device="cuda", dtype=torch.bfloat16)
        buf.combine(y, state["handle"])

    for _ in range(3):
        dispatch()
        combine()
    d = time_replays(dispatch, spin=False)  # its host waits for the receive counts
    dispatch()
    c = time_replays(combine, spin=False)
    buf.destroy()
    return {"mode": "intranode", "dispatch_us": d, "combine_us": c}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="deepep_moe.json")
    ap.add_argument("--shapes", default=",".join(s[0] for s in SHAPES))
    args = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    world, rank = dist.get_world_size(), dist.get_rank()
    group = dist.new_group(list(range(world)))
    import deep_ep
    rows = []
    for name, tokens, hidden, topk, experts, fp8 in SHAPES:
        if name not in args.shapes.split(",") or experts % world:
            continue
        torch.manual_seed(1000 + rank)
        try:
            run = intranode if tokens > 256 else low_latency
            r = run(deep_ep, group, world, name, tokens, hidden, topk, experts, fp8)
        except Exception as e:  # a shape DeepEP does not take (its hidden sizes are compile-time cases)
            r = {"error": f"{type(e).__name__}: {e}"}
        r.update({"shape": name, "tokens": tokens, "hidden": hidden, "topk": topk, "experts": experts, "fp8": fp8})
        rows.append(r)
        if rank == 0:
            print(json.dumps(r), flush=True)
    if rank == 0:
        meta = {"suite": "peer_deepep_moe", "peer": "DeepEP " + getattr(deep_ep, "__version__", "?"), "world": world,
                "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "timing": "low latency: CUDA-graph replays of one call, events, median of 15, max over ranks; "
                          "intranode: eager calls (layout + dispatch; combine), events, median of 15, max over ranks",
                "rows": rows}
        with open(args.out, "w") as f:
            json.dump(meta, f, indent=1)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
