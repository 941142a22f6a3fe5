"""A tensor-parallel MLP block (Megatron style) whose all-reduce is symmem's, beside the same block
with NCCL's (torch.distributed): the outputs and the loss, then each step's time (CUDA graph).

    torchrun --nproc-per-node=4 examples/python/tp_mlp.py [--tokens 128 --hidden 4096]

Each rank holds a column shard of W1 and a row shard of W2: y = sum over ranks of
gelu(x @ W1_r) @ W2_r, one all-reduce per block. symmem reduces in rank order on every rank; NCCL's
ring in another order, so the two agree to bf16 rounding (bitwise where the order happens to match)."""
import argparse
import os

import torch
import torch.distributed as dist

import symmem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=14336)
    ap.add_argument("--layers", type=int, default=4)
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    symmem.init()
    torch.manual_seed(0)  # the same full weights on every rank; each keeps its shard
    H, F, T = args.hidden, args.ffn // world * world, args.tokens
    shard = F // world
    w1 = [(torch.randn(H, F, device="cuda") / H ** 0.5)[:, rank * shard:(rank + 1) * shard].to(torch.bfloat16).contiguous()
          for _ in range(args.layers)]
    w2 = [(torch.randn(F, H, device="cuda") / F ** 0.5)[rank * shard:(rank + 1) * shard].to(torch.bfloat16).contiguous()
          for _ in range(args.layers)]
    x0 = torch.randn(T, H, device="cuda", dtype=torch.bfloat16)
    # symmem's path: each block's partial output lands in a symmetric buffer, reduced in place.
    partial = symmem.empty(T, H, dtype=torch.bfloat16)

    def forward(reduce):
        h = x0
        for a, b in zip(w1, w2):
            y = torch.nn.functional.gelu(h @ a) @ b
            h = h + reduce(y)
        return h

    def with_symmem(y):
        partial.copy_(y)
        return symmem.all_reduce(partial).clone()

    def with_nccl(y):
        dist.all_reduce(y)
        return y

    out_s, out_n = forward(with_symmem), forward(with_nccl)
    loss_s, loss_n = out_s.float().pow(2).mean().item(), out_n.float().pow(2).mean().item()
    diff = (out_s.float() - out_n.float()).abs().max().item()
    scale = out_n.float().abs().max().item()
    ok = diff <= 2 ** -6 * max(scale, 1.0) * args.layers and abs(loss_s - loss_n) <= 1e-2 * abs(loss_n)

    def step_us(reduce):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            forward(reduce)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            forward(reduce)
        times = []
        for _ in range(20):
            dist.barrier()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) * 1000)
        t = torch.tensor([sorted(times)[10]], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.item()

    t_s, t_n = step_us(with_symmem), step_us(with_nccl)
    verdict = torch.tensor([0 if ok else 1], device="cuda")
    dist.all_reduce(verdict)
    if rank == 0:
        print(f"tp_mlp: {world} ranks, T={T} H={H} F={F} x {args.layers} blocks, bf16")
        print(f"  loss symmem {loss_s:.6f}  nccl {loss_n:.6f}  max |diff| {diff:.3e} (bitwise equal: {torch.equal(out_s, out_n)})")
        print(f"  step (CUDA graph, max over ranks): symmem {t_s:.1f} us, nccl {t_n:.1f} us ({t_n / t_s:.2f}x)")
        print("  PASSED" if verdict.item() == 0 else "  FAILED: outputs differ past bf16 rounding")
    dist.barrier()
    os._exit(0 if verdict.item() == 0 else 1)


if __name__ == "__main__":
    main()
