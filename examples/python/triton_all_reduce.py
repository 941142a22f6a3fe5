"""A one-shot all-reduce written in Triton over symmem's symmetric memory: the kernel loads every
peer's input through symmem's pointer table and synchronises through the signal pads. It is an
example of using symmem's memory from your own kernels, checked against NCCL and timed beside
symmem.all_reduce.

    torchrun --nproc-per-node=4 examples/python/triton_all_reduce.py

Protocol, per call k (values 2k+1 and 2k+2 in the user slots of the signal pad; the pads start at
zero and only grow, so a late reader of call k can never see a value of call k+1 as its own):
  1. each program raises its slot on every peer to 2k+1 and waits until every peer raised its
     slot here (the peers' inputs are ready: they were written before the kernel, in stream order);
  2. it sums its tiles of every peer's input, in rank order, into `out`;
  3. after a block-wide barrier (every thread's loads are done) it raises 2k+2 everywhere and
     waits for every peer's 2k+2, so no peer overwrites its input while another still reads it.
Program p uses slot p * world + rank, so programs never share a slot; every wait gives up after
a bounded number of polls and sets a flag the host turns into an error."""
import os

import torch
import torch.distributed as dist
import triton
import triton.language as tl

import symmem

MAX_POLLS = tl.constexpr(50_000_000)  # about 10-30 s of polling


@triton.jit
def _signal_all(pads, slot, value, WORLD: tl.constexpr):
    for p in tl.static_range(WORLD):
        pad = tl.load(pads + p).to(tl.pointer_type(tl.int64))
        tl.atomic_xchg(pad + slot, value, sem="release", scope="sys")


@triton.jit
def _wait_all(pads, rank, base, value, err, WORLD: tl.constexpr):
    mine = tl.load(pads + rank).to(tl.pointer_type(tl.int64))
    for p in tl.static_range(WORLD):
        polls = 0
        seen = tl.atomic_add(mine + base + p, 0, sem="acquire", scope="sys")
        while (seen < value) & (polls < MAX_POLLS):
            seen = tl.atomic_add(mine + base + p, 0, sem="acquire", scope="sys")
            polls += 1
        if seen < value:
            tl.atomic_xchg(err, 1)


@triton.jit
def one_shot_kernel(ptrs, pads, out, n, call, rank, err, WORLD: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    base = pid * WORLD
    _signal_all(pads, base + rank, 2 * call + 1, WORLD)
    _wait_all(pads, rank, base, 2 * call + 1, err, WORLD)
    for start in range(pid * BLOCK, n, nprog * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for p in tl.static_range(WORLD):
            src = tl.load(ptrs + p).to(tl.pointer_type(tl.bfloat16))
            acc += tl.load(src + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out + offs, acc.to(tl.bfloat16), mask=mask)
    tl.debug_barrier()
    _signal_all(pads, base + rank, 2 * call + 2, WORLD)
    _wait_all(pads, rank, base, 2 * call + 2, err, WORLD)


class TritonOneShot:
    """out = sum over the group of `inp` (a symmetric bf16 tensor this object owns)."""

    BLOCK = 2048

    def __init__(self, n, group=None):
        self.inp = symmem.empty(n, dtype=torch.bfloat16, group=group)
        self.group = symmem._group(group)
        self.peers, self.pads = symmem.pointer_tables(self.inp)
        self.err = torch.zeros(1, dtype=torch.int32, device=self.inp.device)
        self.calls = 0
        # Programs share the 1024 user slots: p * world + rank < 1024.
        self.max_programs = min(132, symmem._C.Buffer.user_signal_slots // self.group.size)

    def __call__(self, out):
        n = self.inp.numel()
        grid = (max(1, min(self.max_programs, triton.cdiv(n, self.BLOCK))),)
        one_shot_kernel[grid](self.peers, self.pads, out, n, self.calls, self.group.rank, self.err,
                              WORLD=self.group.size, BLOCK=self.BLOCK)
        self.calls += 1
        return out

    def check(self):
        torch.cuda.synchronize()
        if int(self.err.item()):
            raise symmem.Timeout(f"rank {self.group.rank}: a wait of the Triton all-reduce gave up (a peer never arrived)")


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    symmem.init()
    ok = True
    lines = []
    for n in (1000, 65536 + 7, 1 << 20):
        ar = TritonOneShot(n)
        out = torch.empty(n, dtype=torch.bfloat16, device="cuda")
        for it in range(3):  # new data every call, checked against NCCL
            g = torch.Generator(device="cuda").manual_seed(10 * it + rank)
            ar.inp.copy_(torch.randn(n, device="cuda", generator=g).to(torch.bfloat16))
            ref = ar.inp.float().clone()
            dist.all_reduce(ref)
            ar(out)
            ar.check()
            bad = ((out.float() - ref).abs() > 2 ** -7 * (ref.abs() + 1) * world).sum().item()
            ok &= bad == 0
        # time: eager calls back to back (the call counter lives on the host: no graph here),
        # after a few of each to warm up (module loading, operator registration)
        y = torch.empty_like(out)
        for _ in range(5):
            ar(out)
            symmem.all_reduce(ar.inp, out=y)
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dist.barrier()
        a.record()
        for _ in range(50):
            ar(out)
        b.record()
        b.synchronize()
        t_triton = a.elapsed_time(b) * 1000 / 50
        dist.barrier()
        a.record()
        for _ in range(50):
            symmem.all_reduce(ar.inp, out=y)
        b.record()
        b.synchronize()
        t_symmem = a.elapsed_time(b) * 1000 / 50
        lines.append(f"  n={n}: Triton one-shot {t_triton:.1f} us, symmem.all_reduce {t_symmem:.1f} us (eager, rank {rank})")
        ar.check()
    verdict = torch.tensor([0 if ok else 1], device="cuda")
    dist.all_reduce(verdict)
    if rank == 0:
        print(f"triton_all_reduce: {world} ranks")
        print("\n".join(lines))
        print("  PASSED" if verdict.item() == 0 else "  FAILED: results differ from NCCL's")
    dist.barrier()
    os._exit(0 if verdict.item() == 0 else 1)


if __name__ == "__main__":
    main()
