"""An expert-parallel mixture-of-experts layer on symmem's dispatch and combine: a softmax router
picks each token's top-k experts, dispatch moves the token to the ranks that hold them (once a
rank), each rank runs its SwiGLU experts over their rows in one batched GEMM, and combine brings
the outputs back weighted and summed; a shared expert, which every token takes on its own rank,
runs between dispatch's send and receive halves, while the peers' rows are still arriving. The
whole layer is captured in a CUDA graph.

    torchrun --nproc-per-node=4 examples/python/moe_layer.py [--tokens 128 --hidden 2048 --experts 64
                                                              --topk 6 --ffn 1408 --fp8]

Every rank can compute its own tokens' layer output alone, from the seeds that made every rank's
inputs and every expert's weights, so the check needs no communication and no NCCL (ranks may
share a GPU: symmem-run --ranks-per-gpu 2, or launch.py's). Ranks hold different numbers of tokens.
With --fp8 the tokens travel as float8_e4m3fn with one fp32 scale per 128 channels, and the experts
scale them back. The time printed is symmem's alone; `symmem-bench moe` times dispatch and combine
beside NCCL's all-to-all and the other engines."""
import argparse
import os

import torch
import torch.nn.functional as F

import symmem


def expert_weights(e, hidden, ffn):
    """Expert e's (w1, w3, w2), bf16: the same on every rank that makes them."""
    g = torch.Generator(device="cuda").manual_seed(1000 + e)
    w1 = torch.randn(hidden, ffn, generator=g, device="cuda") / hidden ** 0.5
    w3 = torch.randn(hidden, ffn, generator=g, device="cuda") / hidden ** 0.5
    w2 = torch.randn(ffn, hidden, generator=g, device="cuda") / ffn ** 0.5
    return w1.to(torch.bfloat16), w3.to(torch.bfloat16), w2.to(torch.bfloat16)


def swiglu(x, w1, w3, w2):
    """The expert: (silu(x w1) * (x w3)) w2, bf16 GEMMs (batched where the operands are 3-D)."""
    return torch.matmul(F.silu(torch.matmul(x, w1)) * torch.matmul(x, w3), w2)


def quantize(x):
    """bf16 [T, H] -> float8_e4m3fn [T, H] and fp32 scales [T, ceil(H / 128)] (one per 128 channels)."""
    T, H = x.shape
    groups = (H + 127) // 128
    xg = F.pad(x.float(), (0, groups * 128 - H)).view(T, groups, 128)
    scales = (xg.abs().amax(-1) / 448.0).clamp(min=1e-8)
    q = (xg / scales.unsqueeze(-1)).to(torch.float8_e4m3fn).view(T, groups * 128)[:, :H]
    return q.contiguous(), scales


def dequantize(q, scales):
    """The inverse, on any leading shape: bf16 values the experts compute with."""
    H = q.shape[-1]
    return (q.float() * scales.repeat_interleave(128, dim=-1)[..., :H]).to(torch.bfloat16)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=128, help="tokens on rank 0 (the most of any rank)")
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--experts", type=int, default=64)
    ap.add_argument("--topk", type=int, default=6)
    ap.add_argument("--ffn", type=int, default=1408, help="each expert's intermediate size")
    ap.add_argument("--fp8", action="store_true", help="dispatch float8_e4m3fn with per-128-channel scales")
    args = ap.parse_args()
    g = symmem.init()  # torchrun's environment; sets this rank's GPU (LOCAL_RANK / SYMMEM_RANKS_PER_GPU)
    rank, world = g.rank, g.size
    H, E, K, Fd = args.hidden, args.experts, args.topk, args.ffn
    if E % world:
        raise SystemExit(f"--experts {E} must be a multiple of the {world} ranks")
    El = E // world

    def tokens_of(r):
        return max(args.tokens - 5 * r, 0)  # ranks differ in T

    def inputs_of(r):
        """Rank r's tokens and their routing (softmax over experts, top-k, weights renormalised)."""
        gen = torch.Generator(device="cuda").manual_seed(100 + r)
        x = torch.randn(tokens_of(r), H, generator=gen, device="cuda").to(torch.bfloat16)
        router = torch.randn(H, E, generator=torch.Generator(device="cuda").manual_seed(7), device="cuda") / H ** 0.5
        probs = torch.softmax(x.float() @ router, dim=-1)
        w, idx = probs.topk(K, dim=-1)
        return x, idx, (w / w.sum(-1, keepdim=True)).contiguous()

    # This rank's experts, stacked for batched GEMMs: global expert rank * El + e is local e.
    mine = [expert_weights(rank * El + e, H, Fd) for e in range(El)]
    w1, w3, w2 = (torch.stack(ws) for ws in zip(*mine))
    shared = expert_weights(E, H, Fd)  # the shared expert: the same on every rank
    ep = symmem.moe.ExpertParallel(H, K, E, args.tokens, fp8=args.fp8)  # capacity: every token could pick one expert
    x, idx, w = inputs_of(rank)
    q, scales = quantize(x) if args.fp8 else (x, None)

    y = torch.empty(x.shape[0], H, dtype=torch.bfloat16, device="cuda")

    def layer():
        ep.dispatch_send(q, idx, w, scales=scales)
        y_shared = swiglu(x, *shared)  # this rank's own work, while the peers' rows arrive
        recv_x, recv_scales, _ = ep.dispatch_recv()
        # Rows past counts[e] are stale; the batched GEMM computes them too (no host sync, so the
        # layer captures in a graph) and combine never reads them.
        a = dequantize(recv_x, recv_scales) if args.fp8 else recv_x
        return torch.add(ep.combine(swiglu(a, w1, w3, w2)), y_shared, out=y)

    out = layer().clone()
    # The reference: each token's top-k experts applied to the values the experts receive, and
    # the shared expert to the token.
    xs = dequantize(q, scales) if args.fp8 else x
    ref = swiglu(x, *shared).float()
    mag = ref.abs()
    for e in idx.unique().tolist():
        rows, slot = (idx == e).nonzero(as_tuple=True)
        term = w[rows, slot].unsqueeze(1) * swiglu(xs[rows], *expert_weights(e, H, Fd)).float()
        ref.index_add_(0, rows, term)
        mag.index_add_(0, rows, term.abs())
    # bf16 rounding of the experts' GEMMs (the batched ones may sum in another order, and the
    # intermediate's ulps carry through the last GEMM: a token's scale bounds them, not an
    # element's), of each rank's partial, and of the result.
    tol = 2.0 ** -6 * mag + 2.0 ** -7 * mag.mean(dim=1, keepdim=True) + 1e-4

    def values_off(result):
        return int(((result.float() - ref).abs() > tol).sum())

    bad = values_off(out)
    rel = ((out.float() - ref).abs().max() / ref.abs().max().clamp(min=1e-6)).item() if x.shape[0] else 0.0

    def graph_us(fn, reps=50, poison=None):
        fn()  # once outside the capture (the GEMMs' lazy set-up, which a capture must not see)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        if poison is not None:
            poison.fill_(float("nan"))  # so that what it holds after the replays is theirs
        for _ in range(5):
            graph.replay()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            graph.replay()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1000 / reps

    t_layer = graph_us(layer, poison=y)
    replayed = values_off(y)  # what the graph's last replay left
    a_fixed = torch.randn(El, ep.capacity, H, device="cuda").to(torch.bfloat16)
    t_experts = graph_us(lambda: swiglu(a_fixed, w1, w3, w2))
    # Ranks agree before anyone reports: failures summed, times maxed over ranks (symmem's own collectives).
    verdict = symmem.empty(2, dtype=torch.int32)
    verdict.copy_(torch.tensor([bad, replayed], dtype=torch.int32))
    symmem.all_reduce(verdict)
    times = symmem.empty(2, dtype=torch.float32)
    times.copy_(torch.tensor([t_layer, t_experts]))
    symmem.all_reduce(times, op="max")
    bad_all, replay_all = verdict.tolist()
    t_layer, t_experts = times.tolist()
    if rank == 0:
        sharing_gpu = int(os.environ.get("SYMMEM_RANKS_PER_GPU", "1")) > 1
        print(f"moe_layer: {world} ranks, tokens {tokens_of(world - 1)}-{args.tokens} a rank, H={H}, {E} experts "
              f"({El} a rank) top-{K}, ffn {Fd}, dispatch {'fp8 e4m3 + scales' if args.fp8 else 'bf16'}; "
              f"{ep.bytes_per_rank / 2 ** 20:.1f} MiB of symmetric memory a rank")
        print(f"  rank 0 against its own reference: max |diff| / max |ref| {rel:.2e}")
        print(f"  layer (CUDA graph, max over ranks): {t_layer:.1f} us; its experts' GEMMs alone {t_experts:.1f} us"
              + (" (ranks share a GPU: times are not the machine's)" if sharing_gpu else ""))
        if bad_all or replay_all:
            print(f"  FAILED: values off past bf16 rounding: {bad_all} eagerly, {replay_all} after the graph's replays")
        else:
            print("  PASSED")
    ok = bad_all == 0 and replay_all == 0
    symmem.finalize()
    os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
