# What the MoE peer drivers (deepep_moe.py, pplx_moe.py) share: the torchrun rank setup, the
# maximum over ranks, the loop over shapes (a shape the peer cannot take is reported in its row,
# not fatal) and the JSON they write. Imported from the drivers' own folder (torchrun puts it on
# sys.path).
import argparse
import json
import os
import time

import torch
import torch.distributed as dist


# GPU spin (cycles, ~0.5 ms) before a timed replay, so that the host's submission of the events and
# the replay is never inside the timed span: python -m symmem.bench waits as long (session 9: ~50 us
# was shorter than what Python takes there, and put host time into some replays).
SPIN_CYCLES = 1_000_000


def setup(default_out, shapes, backend="nccl"):
    """(args, world, rank) of this torchrun rank; args.out, args.shapes (names, comma-separated)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=default_out)
    ap.add_argument("--shapes", default=",".join(s[0] for s in shapes))
    args = ap.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dist.init_process_group(backend, device_id=torch.device("cuda", local))
    return args, dist.get_world_size(), dist.get_rank()


def max_over_ranks(v):
    t = torch.tensor([v], dtype=torch.float64, device="cuda")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def timed_parts_us(parts, repeats, spin):
    """us of each of parts (callables run one after another, an event between each two): after a
    barrier, median of `repeats`, maximum over ranks, one value a part. spin: the GPU busy ~0.5 ms
    first, so that the host's queueing of the events and the parts is not timed (graph replays, or
    eager parts queued behind it); eager calls whose host waits inside are timed without it."""
    times = [[] for _ in parts]
    for _ in range(repeats):
        dist.barrier()
        torch.cuda.synchronize()
        if spin:
            torch.cuda._sleep(SPIN_CYCLES)
        events = [torch.cuda.Event(enable_timing=True) for _ in range(len(parts) + 1)]
        events[0].record()
        for i, part in enumerate(parts):
            part()
            events[i + 1].record()
        torch.cuda.synchronize()
        for i in range(len(parts)):
            times[i].append(events[i].elapsed_time(events[i + 1]) * 1e3)
    out = []
    for t in times:
        t.sort()
        out.append(max_over_ranks(t[len(t) // 2]))
    return out


def timed_us(run, per, repeats, spin):
    """us per operation of run() (per operations a call): timed_parts_us of one part."""
    return timed_parts_us([run], repeats, spin)[0] / per


def run_shapes(shapes, wanted, world, rank, seed, measure):
    """Rows of measure(tokens, hidden, topk, experts, fp8) for the wanted shapes whose experts
    divide over the ranks; rank 0 prints each row."""
    rows = []
    for name, tokens, hidden, topk, experts, fp8 in shapes:
        if name not in wanted.split(",") or experts % world:
            continue
        torch.manual_seed(seed + rank)
        try:
            r = measure(tokens, hidden, topk, experts, fp8)
        except Exception as e:  # noqa: BLE001 - a shape the peer does not take (e.g. a hidden size it lacks)
            r = {"error": f"{type(e).__name__}: {e}"}
        r.update({"shape": name, "tokens": tokens, "hidden": hidden, "topk": topk, "experts": experts, "fp8": fp8})
        rows.append(r)
        if rank == 0:
            print(json.dumps(r), flush=True)
    return rows


def write(path, rank, world, rows, **meta):
    """Rank 0 writes meta (suite, peer, timing, ...) with the device, versions, date and rows."""
    if rank != 0:
        return
    meta.update({"world": world, "device": torch.cuda.get_device_name(), "device_kind": os.environ.get("SYMMEM_KIND", ""),
                 "torch": torch.__version__,
                 "symmem_commit": os.environ.get("SYMMEM_COMMIT") or os.environ.get("COMMIT", ""), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "rows": rows})
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
