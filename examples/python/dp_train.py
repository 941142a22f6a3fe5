"""A data-parallel training loop of a small model whose gradient all-reduce is symmem's, beside
the same loop with NCCL's (torch.distributed): the losses step by step, then the step times.

    torchrun --nproc-per-node=4 examples/python/dp_train.py [--steps 20]

Gradients are flattened into one symmetric buffer, averaged with one symmem.all_reduce, and
copied back. fp32: with 2 ranks the sums are bitwise equal (a + b either way); with more, the
reduction orders differ and the losses agree to fp32 rounding."""
import argparse
import os

import torch
import torch.distributed as dist

import symmem


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 1024), torch.nn.GELU(),
                               torch.nn.Linear(1024, 10)).cuda()


def train(reduce_grads, steps, rank, world):
    model = make_model(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator(device="cuda").manual_seed(1000 + rank)  # each rank its own data
    losses, times = [], []
    for _ in range(steps):
        x = torch.randn(64, 256, device="cuda", generator=g)
        y = torch.randint(0, 10, (64,), device="cuda", generator=g)
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        reduce_grads(model)
        opt.step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000)
        total = loss.detach().clone()
        dist.all_reduce(total)
        losses.append(total.item() / world)
    return losses, sorted(times)[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    symmem.init()
    nparams = sum(p.numel() for p in make_model(0).parameters())
    flat = symmem.empty(nparams, dtype=torch.float32)

    def symmem_reduce(model):
        grads = [p.grad for p in model.parameters()]
        torch.cat([gr.view(-1) for gr in grads], out=flat)
        symmem.all_reduce(flat, "avg")
        off = 0
        for gr in grads:
            gr.copy_(flat[off:off + gr.numel()].view_as(gr))
            off += gr.numel()

    def nccl_reduce(model):
        grads = [p.grad for p in model.parameters()]
        buf = torch.cat([gr.view(-1) for gr in grads])
        dist.all_reduce(buf, op=dist.ReduceOp.AVG)
        off = 0
        for gr in grads:
            gr.copy_(buf[off:off + gr.numel()].view_as(gr))
            off += gr.numel()

    ls, ts = train(symmem_reduce, args.steps, rank, world)
    ln, tn = train(nccl_reduce, args.steps, rank, world)
    worst = max(abs(a - b) / max(abs(b), 1e-6) for a, b in zip(ls, ln))
    ok = worst <= (0.0 if world == 2 else 1e-4)
    verdict = torch.tensor([0 if ok else 1], device="cuda")
    dist.all_reduce(verdict)
    if rank == 0:
        print(f"dp_train: {world} ranks, {nparams} fp32 parameters, {args.steps} steps")
        for i in range(0, args.steps, max(1, args.steps // 5)):
            print(f"  step {i:3d}: loss symmem {ls[i]:.7f}  nccl {ln[i]:.7f}")
        print(f"  largest relative loss difference {worst:.2e} ({'bitwise equal' if worst == 0 else 'fp32 rounding'})")
        print(f"  step time (median, rank 0): symmem {ts:.0f} us, nccl {tn:.0f} us")
        print("  PASSED" if verdict.item() == 0 else "  FAILED: the losses differ")
    dist.barrier()
    os._exit(0 if verdict.item() == 0 else 1)


if __name__ == "__main__":
    main()
