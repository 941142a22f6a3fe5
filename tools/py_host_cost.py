"""The host cost of one eager collective call from Python, layer by layer, beside NCCL's
(torch.distributed), and the dp_train example's step with each (a probe, not a test):

    python -m torch.distributed.run --nproc-per-node=2 tools/py_host_cost.py

Host cost: perf_counter around a batch of calls issued with the GPU idle at its start (the launch
queue never fills), per call, median of the batches, max over ranks. Layers: the public function
(symmem.all_reduce), the registered operator (torch.ops.symmem.all_reduce_), the extension's
method (Communicator.all_reduce, which does the argument checks and the launch); then an MoE
dispatch + combine pair at the decode shape through symmem.moe and through the extension alone."""
import os
import statistics
import time

import torch
import torch.distributed as dist

import symmem
from symmem import ops as sops


def host_us(fn, batches=30, per=20):
    per_call = []
    for _ in range(batches):
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        per_call.append((time.perf_counter() - t0) * 1e6 / per)
    torch.cuda.synchronize()
    return statistics.median(per_call)


def max_over_ranks(v):
    t = torch.tensor([v], device="cuda", dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def main():
    rank = int(os.environ["RANK"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    symmem.init()
    g = symmem.world()
    rows = []
    for n in (1024, 1325066):  # 4 KiB; the dp_train example's gradients (5.3 MB fp32)
        flat = symmem.empty(n, dtype=torch.float32)
        flat.normal_()
        plain = torch.randn(n, device="cuda")
        stream = symmem._current_stream()
        sops._ops()  # registered before timing
        cases = [
            ("nccl dist.all_reduce", lambda: dist.all_reduce(plain)),
            ("symmem.all_reduce", lambda: symmem.all_reduce(flat, "avg")),
            ("torch.ops.symmem.all_reduce_", lambda: torch.ops.symmem.all_reduce_(flat, "avg", g.name, "auto")),
            ("Communicator.all_reduce", lambda: g._comm.all_reduce(flat.data_ptr(), flat.data_ptr(), n, 0, "avg", stream, "auto")),
            ("the implementation (no dispatcher)", lambda: sops._EAGER["all_reduce_"][0](flat, "avg", g.name, "auto")),
            ("_direct_ok", lambda: sops._direct_ok(torch, (flat, "avg", g.name, "auto"))),
            ("checks only (_check, _name)", lambda: (sops._check(flat, "x"), sops._name(None))),
        ]
        for name, fn in cases:
            for _ in range(20):
                fn()
            rows.append((n * 4, name, max_over_ranks(host_us(fn))))
    # MoE at the decode shape (issue 10's (a)): a dispatch and its combine, through the package and
    # through the extension's methods alone (a combine needs a dispatch before it).
    world = dist.get_world_size()
    ep = symmem.moe.ExpertParallel(hidden=7168, topk=8, num_experts=256, max_tokens=128, fp8=True)
    T = 128
    gen = torch.Generator(device="cuda").manual_seed(rank)
    x = torch.randn(T, 7168, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    scales = torch.rand(T, 56, device="cuda", generator=gen) + 0.5
    idx = torch.stack([torch.randperm(256, device="cuda", generator=gen)[:8] for _ in range(T)]).to(torch.int64)
    w = torch.rand(T, 8, device="cuda", generator=gen)
    y = torch.randn(ep.local_experts, ep.capacity, 7168, device="cuda", generator=gen).to(torch.bfloat16)
    stream = symmem._current_stream()
    raw = ep._ep

    def raw_pair():
        raw.dispatch(x.data_ptr(), scales.data_ptr(), idx.data_ptr(), True, w.data_ptr(), T, ep.recv_x.data_ptr(),
                     ep.recv_scales.data_ptr(), ep.expert_counts.data_ptr(), stream)
        raw.combine(y.data_ptr(), ep.out.data_ptr(), True, stream)

    for name, fn in (("ExpertParallel.dispatch + combine", lambda: (ep.dispatch(x, idx, w, scales=scales), ep.combine(y))),
                     ("the extension's dispatch + combine", raw_pair)):
        for _ in range(20):
            fn()
        rows.append((T * 7168, name, max_over_ranks(host_us(fn))))
    if rank == 0:
        C = torch._C
        for name, fn in (("is_compiling", lambda: torch.compiler.is_compiling()),
                         ("dispatch modes", lambda: C._len_torch_dispatch_stack()),
                         ("function mode", lambda: C._is_torch_function_mode_enabled()),
                         ("functorch", lambda: C._are_functorch_transforms_active()),
                         ("profiler", lambda: torch.autograd.profiler._is_profiler_enabled),
                         ("direct", lambda: sops._direct_ok(torch, (flat, "avg", g.name, "auto")))):
            try:
                print(f"  {name}: {fn()}")
            except Exception as e:  # noqa: BLE001 - a probe: say what is missing
                print(f"  {name}: {type(e).__name__}: {e}")
        print(f"host cost of one eager call, us (median of 30 batches of 20, max over {world} ranks)")
        for b, name, us in rows:
            print(f"  {b:>9} B  {name:<32} {us:8.2f}")
    dist.barrier()
    os._exit(0)


if __name__ == "__main__":
    main()
