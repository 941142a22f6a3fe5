"""symmem's all-reduce from Python beside PyTorch's symmetric memory (one-shot, two-shot) and
NCCL through torch.distributed, on the same machine in one run; and the cost of symmem.empty.

    torchrun --nproc-per-node=4 -m symmem.bench --out allreduce.json [--kind nvidia-h200-x4]

Each figure: REPS operations captured in one CUDA graph, replayed after a GPU-side barrier that
lines the ranks up (as symmem-bench does); median of the replays' event times divided by REPS,
maximum over ranks. Allocation: median wall time of symmem.empty + free
once the heap has grown, maximum over ranks."""
import argparse
import datetime
import json
import os
import subprocess
import time

import torch
import torch.distributed as dist

import symmem


_sync = None  # a small symmetric tensor: its barrier lines the ranks up on the GPU before each replay


def graph_us(fn, reps, replays):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        dist.barrier()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        symmem.barrier(_sync)  # as symmem-bench does: the replay starts together on every GPU
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0 / reps)
    del g
    return max_over_ranks(sorted(times)[len(times) // 2])


def max_over_ranks(v):
    t = torch.tensor([v], dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def alloc_us(nbytes, rounds=21):
    for _ in range(3):  # grow the heap first
        t = symmem.empty(nbytes, dtype=torch.uint8)
        del t
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        t = symmem.empty(nbytes, dtype=torch.uint8)
        del t
        times.append((time.perf_counter() - t0) * 1e6)
    return max_over_ranks(sorted(times)[len(times) // 2])


def commit():
    if os.environ.get("SYMMEM_COMMIT"):
        return os.environ["SYMMEM_COMMIT"]
    try:
        return subprocess.check_output(["git", "rev-parse", "--short=12", "HEAD"], stderr=subprocess.DEVNULL, text=True).strip()
    except Exception:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-bytes", type=int, default=1 << 10)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--replays", type=int, default=15)
    ap.add_argument("--kind", default="unknown", help="the machine kind, recorded in the JSON")
    ap.add_argument("--out", default="symmem_python_bench.json")
    ap.add_argument("--no-torch-symm-mem", action="store_true")
    args = ap.parse_args()

    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    g = symmem.init()
    global _sync
    _sync = symmem.empty(64, dtype=torch.uint8)
    symm_mem = None
    if not args.no_torch_symm_mem:
        try:
            import torch.distributed._symmetric_memory as symm_mem
        except ImportError:
            symm_mem = None
    group_name = dist.group.WORLD.group_name
    rows = []
    nbytes = args.min_bytes
    if rank == 0:
        print(f"# symmem.bench: all_reduce bf16 sum, {world} ranks, {torch.cuda.get_device_name()}; us per op", flush=True)
        print(f"{'bytes':>12} {'symmem':>9} {'inplace':>9} {'algo':>9} {'nccl':>9} {'t_1shot':>9} {'t_2shot':>9} {'ratio':>6}",
              flush=True)
    while nbytes <= args.max_bytes:
        n = nbytes // 2
        x = symmem.empty(n, dtype=torch.bfloat16)
        y = symmem.empty(n, dtype=torch.bfloat16)
        x.normal_()
        row = {"bytes": nbytes, "world": world}
        row["symmem_algo"] = g._comm.select("all_reduce", 2, nbytes, True, True, False)
        row["symmem_us"] = graph_us(lambda: symmem.all_reduce(x, out=y), args.reps, args.replays)
        # In place too (tensor-parallel layers reduce in place): both figures, to compare paths.
        row["symmem_inplace_us"] = graph_us(lambda: symmem.all_reduce(x), args.reps, args.replays)
        plain = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        row["nccl_us"] = graph_us(lambda: dist.all_reduce(plain), args.reps, args.replays)
        if symm_mem is not None:
            buf = symm_mem.empty(n, device="cuda", dtype=torch.bfloat16)
            symm_mem.rendezvous(buf, group_name)
            buf.normal_()
            if nbytes <= (1 << 24):
                row["torch_one_shot_us"] = graph_us(lambda: torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", group_name),
                                                    args.reps, args.replays)
            row["torch_two_shot_us"] = graph_us(lambda: torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group_name),
                                                args.reps, args.replays)
            del buf
        peers = [row[k] for k in ("nccl_us", "torch_one_shot_us", "torch_two_shot_us") if k in row]
        row["ratio_to_best_peer"] = row["symmem_us"] / min(peers)
        rows.append(row)
        if rank == 0:
            print(f"{nbytes:>12} {row['symmem_us']:>9.2f} {row['symmem_inplace_us']:>9.2f} {row['symmem_algo']:>9} {row['nccl_us']:>9.2f} "
                  f"{row.get('torch_one_shot_us', float('nan')):>9.2f} {row.get('torch_two_shot_us', float('nan')):>9.2f} "
                  f"{row['ratio_to_best_peer']:>6.2f}", flush=True)
        del x, y, plain
        nbytes *= 4
    alloc = []
    for b in (1 << 10, 1 << 16, 1 << 20, 16 << 20, 64 << 20):
        alloc.append({"bytes": b, "empty_free_us": alloc_us(b)})
        if rank == 0:
            print(f"# symmem.empty + free of {b} bytes: {alloc[-1]['empty_free_us']:.1f} us (median, max over ranks)", flush=True)
    if rank == 0:
        meta = {"suite": "python_all_reduce", "kind": args.kind, "device": torch.cuda.get_device_name(), "world": world,
                "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())), "commit": commit(),
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "method": f"CUDA graph of {args.reps} ops, median of {args.replays} replays, max over ranks",
                "rows": rows, "alloc": alloc}
        with open(args.out, "w") as f:
            json.dump(meta, f, indent=1)
        print(f"# wrote {args.out}", flush=True)
    dist.barrier()
    os._exit(0)  # skip teardown: PyTorch's symmetric memory can hang in it


if __name__ == "__main__":
    main()
