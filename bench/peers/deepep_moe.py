# DeepEP's intranode (normal) kernels, a peer of issue 10 for prefill, on the prefill shape of
# `symmem-bench moe`: eager calls (their host reads the receive counts, so they do not capture in a
# graph) timed with events, median of REPEATS, maximum over ranks; dispatch (with its layout step)
# and combine apart. Uniform routing (random scores, top-k), fp8 dispatch with per-128 scales, bf16
# combine. DeepEP's low-latency kernels (decode shapes) are timed inside `python -m symmem.bench
# --suite moe`, by the same graph replays as symmem, when deep_ep imports.
#   tools/peers.sh prepare                    # here: DeepEP v1.2.1 into .deps/deepep
#   tools/peers.sh run                        # on the GPU machine: builds it, runs this
# First run in session 8 (4 x H200, DeepEP v1.2.1).
import os

import torch
import torch.distributed as dist

from peer_common import run_shapes, setup, timed_us, write

REPEATS = 15

# (name, tokens per rank, hidden, top-k, experts, fp8 dispatch): bench/moe.cu's prefill shape.
SHAPES = [("prefill", 4096, 7168, 8, 256, True)]


def routing(tokens, experts, topk):
    scores = torch.rand(tokens, experts, device="cuda")
    idx = scores.topk(topk, dim=1).indices.to(torch.int64)
    w = torch.softmax(torch.randn(tokens, topk, device="cuda"), 1).float()
    return idx, w


def intranode(deep_ep, group, tokens, hidden, topk, experts, fp8):
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
    d = timed_us(dispatch, 1, REPEATS, spin=False)
    dispatch()
    c = timed_us(combine, 1, REPEATS, spin=False)
    buf.destroy()
    return {"mode": "intranode", "dispatch_us": d, "combine_us": c}


def main():
    args, world, rank = setup("deepep_moe.json", SHAPES)
    group = dist.new_group(list(range(world)))
    import deep_ep
    rows = run_shapes(SHAPES, args.shapes, world, rank, 1000,
                      lambda tokens, hidden, topk, experts, fp8: intranode(deep_ep, group, tokens, hidden, topk, experts, fp8))
    write(args.out, rank, world, rows, suite="peer_deepep_moe",
          peer="DeepEP " + getattr(deep_ep, "__version__", os.environ.get("DEEPEP_VERSION", "?")),
          timing="intranode: eager calls (layout + dispatch; combine), events, median of 15, max over ranks")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
