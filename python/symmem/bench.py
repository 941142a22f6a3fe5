"""symmem's all-reduce from Python beside PyTorch's symmetric memory (one-shot, two-shot) and
NCCL through torch.distributed, on the same machine in one run; and the cost of symmem.empty.

    torchrun --nproc-per-node=4 -m symmem.bench --out allreduce.json [--kind nvidia-h200-x4]

Each figure: REPS operations captured in one CUDA graph, replayed after a GPU-side barrier that
lines the ranks up (as symmem-bench does); median of the replays' event times divided by REPS,
maximum over ranks. Allocation: median wall time of symmem.empty + free
once the heap has grown, maximum over ranks.

    torchrun --nproc-per-node=4 -m symmem.bench --suite overlap --out overlap.json

times all_gather_matmul and matmul_reduce_scatter on the Llama-3 8B / 70B MLP shapes beside the GEMM
alone, matmul + NCCL and PyTorch's fused ops, interleaved (bench_overlap); --suite moe, dispatch and
combine beside NCCL (and DeepEP where it imports)."""
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


_capture_mode = "global"  # torch.cuda.graph's capture_error_mode (--capture-mode)


def graph_us(fn, reps, replays, after_capture=None):
    """fn's time a call: `reps` calls captured in one CUDA graph, replayed after a GPU-side barrier that
    lines the ranks up; median of the replays, maximum over ranks (interleaved_us of one variant)."""
    return interleaved_us({"fn": (fn, False, after_capture)}, reps, replays)["fn"]


def interleaved_us(variants, reps, replays):
    """Times each of `variants` (name -> (fn, eager) or (fn, eager, after_capture): a call every rank
    makes once the graph is captured, before it first runs, e.g. a peer's registration of the
    addresses it captured) in rounds: every round runs each variant once,
    in turn: `reps` calls captured in one CUDA graph and replayed, or, with eager, `reps` calls queued
    from Python (for ops that cannot be captured); each run lined up on every rank. Median of the
    rounds divided by reps, maximum over ranks. Interleaved because a GPU at its power cap runs at
    the clock the last tens of milliseconds left it: timed one after the other (PyTorch's anchor
    after symmem-bench), one GEMM's time differed by 6-15% between the two (2 x H200, session 35).
    symmem-bench's Harness::time_graphs interleaves the same way."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for fn, *_ in variants.values():
            for _ in range(3):
                fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graphs = {}
    for name, (fn, eager, *after) in variants.items():
        if not eager:
            graphs[name] = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graphs[name], capture_error_mode=_capture_mode):
                for _ in range(reps):
                    fn()
            if after and after[0] is not None:
                after[0]()
            graphs[name].replay()
    torch.cuda.synchronize()
    times = {name: [] for name in variants}
    for _ in range(replays):
        for name, (fn, eager, *_after) in variants.items():
            dist.barrier()
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            # As symmem-bench does: the GPU is kept busy while the host queues the barrier, the start
            # event and the run, so the host's launch latency is never timed; then the run starts
            # together on every GPU. ~0.5 ms here (symmem-bench: 50 us): from Python those three calls
            # take tens of us, and a spin of ~50 us left part of it inside the timed span on some
            # replays (session 9, 4 x H100: 1 KiB 3.9-4.5 us a run against C++'s steady 3.77).
            torch.cuda._sleep(1_000_000)
            symmem.barrier(_sync)
            a.record()
            if eager:
                for _ in range(reps):
                    fn()
            else:
                graphs[name].replay()
            b.record()
            b.synchronize()
            times[name].append(a.elapsed_time(b) * 1000.0 / reps)
    del graphs
    return {name: max_over_ranks(sorted(t)[len(t) // 2]) for name, t in times.items()}


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
    # SYMMEM_COMMIT, or COMMIT as tools/gpu_run.sh and tools/ab.sh take it: a device machine's copy of
    # the tree may report another HEAD than the code it holds (session 10).
    for name in ("SYMMEM_COMMIT", "COMMIT"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return subprocess.check_output(["git", "rev-parse", "--short=12", "HEAD"], stderr=subprocess.DEVNULL, text=True).strip()
    except Exception:
        return "unknown"


def parse_args(argv=None, environ=os.environ):
    """The command line, checked before anything starts (no GPU, process group or library yet): a bad
    value, or no launcher's RANK and WORLD_SIZE, exits at once naming it (argparse's exit code 2)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-bytes", type=int, default=1 << 10)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--replays", type=int, default=15)
    ap.add_argument("--kind", default="", help="the machine kind, recorded in the JSON (default: nvidia-<model>-x<GPUs> "
                    "from this host's GPUs, device_kind)")
    ap.add_argument("--out", default="symmem_python_bench.json")
    ap.add_argument("--no-torch-symm-mem", action="store_true")
    ap.add_argument("--raw", action="store_true", help="also time the extension called directly (no torch.library "
                    "operator in between): column symmem_raw_us")
    ap.add_argument("--vllm-peer", default="", help="all_reduce suite: the path of bench/peers/vllm_custom_ar.py, to time vLLM's "
                    "custom all-reduce beside symmem below 8 MiB (built here against .deps/vllm/csrc; tools/peers.sh says "
                    "how its header gets there): columns vllm_us and vllm_wrong, or vllm_error")
    ap.add_argument("--capture-mode", default="global", choices=["global", "thread_local", "relaxed"],
                    help="torch.cuda.graph capture_error_mode")
    ap.add_argument("--algos", default="", help="comma-separated symmem algorithms to time as well, out of place and in place "
                    "(e.g. two_shot,push): columns symmem_<algo>_us and symmem_<algo>_inplace_us")
    ap.add_argument("--suite", choices=["all_reduce", "moe", "overlap"], default="all_reduce",
                    help="all_reduce (default), moe (dispatch/combine, decode shape), overlap (all-gather + GEMM, GEMM + reduce-scatter)")
    ap.add_argument("--overlap-models", default="8B,70B", help="overlap suite: Llama-3 MLP shapes, comma-separated (8B, 70B)")
    ap.add_argument("--overlap-ms", default="2048,4096,8192,16384", help="overlap suite: the M values, comma-separated")
    ap.add_argument("--overlap-data", default="normal", choices=["normal", "uniform"],
                    help="overlap suite: the operands, normal (torch.randn, the default) or uniform in [-1, 1) (as symmem-bench "
                    "overlap's default; under the power cap a GEMM's clock depends on its data)")
    args = ap.parse_args(argv)
    bad = []
    if args.min_bytes < 2:
        bad.append(f"--min-bytes={args.min_bytes}: at least 2 (one bf16 element)")
    if args.max_bytes < args.min_bytes:
        bad.append(f"--max-bytes={args.max_bytes} is below --min-bytes={args.min_bytes}")
    for name in ("reps", "replays"):
        if getattr(args, name) < 1:
            bad.append(f"--{name}={getattr(args, name)}: at least 1")
    known = [m[0] for m in OVERLAP_MODELS]
    for m in args.overlap_models.split(","):
        if m not in known:
            bad.append(f"--overlap-models: '{m}' is not one of {', '.join(known)}")
    for m in args.overlap_ms.split(","):
        if not m.isdigit() or int(m) < 1:
            bad.append(f"--overlap-ms: '{m}' is not a positive whole number")
    out_dir = os.path.dirname(args.out) or "."
    if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):
        bad.append(f"--out={args.out}: its directory '{out_dir}' is missing or not writable (found out after the run otherwise)")
    if "RANK" not in environ or "WORLD_SIZE" not in environ:
        bad.append("RANK and WORLD_SIZE are not set: start it with a launcher, one process a GPU: "
                   "torchrun --nproc-per-node=N -m symmem.bench, or symmem-run -n N python -m symmem.bench")
    if bad:
        ap.error("; ".join(bad))
    return args


def main():
    args = parse_args()
    global _capture_mode
    _capture_mode = args.capture_mode

    os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    g = symmem.init()
    global _sync
    _sync = symmem.empty(64, dtype=torch.uint8)
    if args.suite != "all_reduce":
        rows = bench_moe(args, g) if args.suite == "moe" else bench_overlap(args, g)
        write(args, rank, world, rows, [])
        dist.barrier()
        os._exit(0)
    symm_mem = None
    if not args.no_torch_symm_mem:
        try:
            import torch.distributed._symmetric_memory as symm_mem
        except ImportError:
            symm_mem = None
    group_name = dist.group.WORLD.group_name
    vllm, vllm_error = load_vllm_peer(args.vllm_peer) if args.vllm_peer else (None, None)
    rows = []
    nbytes = args.min_bytes
    if rank == 0:
        print(f"# symmem.bench: all_reduce bf16 sum, {world} ranks, {torch.cuda.get_device_name()}; us per op", flush=True)
        if vllm_error:
            print(f"# vLLM custom all-reduce not timed: {vllm_error}", flush=True)
        print(f"{'bytes':>12} {'symmem':>9} {'inplace':>9} {'algo':>9} {'nccl':>9} {'t_1shot':>9} {'t_2shot':>9} {'vllm':>9} {'ratio':>6}",
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
        if args.raw:
            comm = g._comm
            row["symmem_raw_us"] = graph_us(lambda: comm.all_reduce(x.data_ptr(), y.data_ptr(), n, 2, "sum",
                                                                    torch.cuda.current_stream().cuda_stream, "auto"),
                                            args.reps, args.replays)
        for algo in filter(None, args.algos.split(",")):
            for key, fn in ((f"symmem_{algo}_us", lambda: symmem.all_reduce(x, out=y, algo=algo)),
                            (f"symmem_{algo}_inplace_us", lambda: symmem.all_reduce(x, algo=algo))):
                try:
                    row[key] = graph_us(fn, args.reps, args.replays)
                except symmem.Error as e:  # the algorithm does not fit these buffers: every rank says so
                    row[key] = None
                    if rank == 0:
                        print(f"# {key}: {e}", flush=True)
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
        if vllm_error:
            row["vllm_error"] = vllm_error
        elif vllm is not None and vllm.fits(nbytes):
            row.update(time_vllm_peer(vllm, n, args))
        peers = [row[k] for k in ("nccl_us", "torch_one_shot_us", "torch_two_shot_us", "vllm_us") if k in row]
        row["ratio_to_best_peer"] = row["symmem_us"] / min(peers)
        rows.append(row)
        if rank == 0:
            print(f"{nbytes:>12} {row['symmem_us']:>9.2f} {row['symmem_inplace_us']:>9.2f} {row['symmem_algo']:>9} {row['nccl_us']:>9.2f} "
                  f"{row.get('torch_one_shot_us', float('nan')):>9.2f} {row.get('torch_two_shot_us', float('nan')):>9.2f} "
                  f"{row.get('vllm_us', float('nan')):>9.2f} {row['ratio_to_best_peer']:>6.2f}"
                  + ("  (vLLM's result WRONG)" if row.get("vllm_wrong") else ""), flush=True)
            extra = {k: v for k, v in row.items() if k.startswith("symmem_") and k not in ("symmem_us", "symmem_inplace_us", "symmem_algo")}
            if extra:
                print("    " + " ".join(f"{k}={v:.2f}" if v is not None else f"{k}=n/a" for k, v in extra.items()), flush=True)
        del x, y, plain
        nbytes *= 4
    alloc = []
    for b in (1 << 10, 1 << 16, 1 << 20, 16 << 20, 64 << 20):
        alloc.append({"bytes": b, "empty_free_us": alloc_us(b)})
        if rank == 0:
            print(f"# symmem.empty + free of {b} bytes: {alloc[-1]['empty_free_us']:.1f} us (median, max over ranks)", flush=True)
    write(args, rank, world, rows, alloc)
    dist.barrier()
    os._exit(0)  # skip teardown: PyTorch's symmetric memory can hang in it


def load_vllm_peer(path):
    """(peer, None), or (None, the reason on every rank) where vLLM's custom all-reduce cannot be built or set up here."""
    import importlib.util
    try:
        spec = importlib.util.spec_from_file_location("vllm_custom_ar", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        peer, error = mod.VllmCustomAllReduce(), ""
    except Exception as e:  # reported in the rows, not fatal: the other columns still run
        peer, error = None, f"{type(e).__name__}: {e}"[:300]
    errors = [None] * dist.get_world_size()
    dist.all_gather_object(errors, error)
    error = next((e for e in errors if e), None)
    return (None if error else peer), error


def time_vllm_peer(peer, n, args):
    """vLLM's custom all-reduce of n bf16 values (its registered input, random data) under a CUDA graph,
    timed as symmem's; checked once against NCCL's sum of the same data first (vllm_wrong, agreed by
    every rank)."""
    x = peer.input_view(n)
    x.copy_(torch.randn(n, device="cuda", dtype=torch.bfloat16))
    ref = x.clone()
    dist.all_reduce(ref)
    out = torch.full((n,), float("nan"), device="cuda", dtype=torch.bfloat16)  # poisoned
    peer.call(out)()
    torch.cuda.synchronize()
    # Two to eight bf16 inputs summed in another order: a few bf16 ulps of the largest partial sum.
    wrong = not torch.allclose(out.float(), ref.float(), rtol=2e-2, atol=2e-2 * float(ref.abs().max()))
    return {"vllm_us": graph_us(peer.call(out), args.reps, args.replays, after_capture=peer.after_capture),
            "vllm_wrong": max_over_ranks(float(wrong)) > 0, "vllm_source": peer.HEADER_SOURCE}


def device_kind(gpu_name, gpus):
    """The machine kind where --kind is not given, as symmem-bench names it (bench/device_kind.hpp):
    "nvidia-<model>-x<GPUs>", the model the first word of the GPU's name (split at spaces and '-')
    that holds a digit, lower-cased ("NVIDIA H200" on 4 GPUs: "nvidia-h200-x4")."""
    words = gpu_name.replace("-", " ").lower().split()
    model = next((w for w in words if any(c.isdigit() for c in w)), "unknown")
    return f"nvidia-{model}-x{gpus}"


def write(args, rank, world, rows, alloc):
    if rank == 0:
        kind = args.kind or device_kind(torch.cuda.get_device_name(), torch.cuda.device_count())
        meta = {"suite": "python_" + args.suite, "kind": kind, "device": torch.cuda.get_device_name(), "world": world,
                "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())), "commit": commit(),
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "method": f"CUDA graph of {args.reps} ops, median of {args.replays} replays, max over ranks" if args.suite != "overlap" else
                f"interleaved rounds, each variant in turn: a CUDA graph of {args.reps // 4 or 1} calls (PyTorch's fused ops: as many "
                f"eager calls), each run after a host barrier and a ~0.5 ms one-thread GPU spin (the GPUs below their power cap "
                f"between rounds, their SMs near boost clocks at each start), median of {args.replays} rounds, max over ranks",
                "rows": rows, "alloc": alloc}
        with open(args.out, "w") as f:
            json.dump(meta, f, indent=1)
        print(f"# wrote {args.out}", flush=True)


def bench_moe(args, g):
    """Dispatch alone and dispatch + combine (decode shape, uniform routing), beside the same rows
    moved by torch.distributed's all_to_all_single with worst-case splits (graph-capturable)."""
    rank, world = g.rank, g.size
    rows = []
    for (name, T, H, K, E, fp8) in (("decode", 128, 7168, 8, 256, True), ("pplx_64e", 128, 2048, 6, 64, False)):
        if E % world:
            continue
        ep = symmem.moe.ExpertParallel(H, K, E, T, fp8=fp8)
        gen = torch.Generator(device="cuda").manual_seed(11 + rank)
        x = torch.randn(T, H, generator=gen, device="cuda").to(torch.float8_e4m3fn if fp8 else torch.bfloat16)
        scales = torch.ones(T, (H + 127) // 128, device="cuda") if fp8 else None
        idx = torch.rand(T, E, generator=gen, device="cuda").argsort(dim=1)[:, :K].int()
        w = torch.rand(T, K, generator=gen, device="cuda")
        y = torch.zeros(ep.local_experts, ep.capacity, H, dtype=torch.bfloat16, device="cuda")
        disp = graph_us(lambda: ep.dispatch(x, idx, w, scales=scales), args.reps, args.replays)

        def pair():
            ep.dispatch(x, idx, w, scales=scales)
            ep.combine(y)
        both = graph_us(pair, args.reps, args.replays)
        row_bytes = H * (1 if fp8 else 2)
        send = torch.empty(world * T * row_bytes, dtype=torch.uint8, device="cuda")
        recv = torch.empty_like(send)
        nccl = graph_us(lambda: dist.all_to_all_single(recv, send), args.reps, args.replays)
        row = {"shape": name, "tokens": T, "hidden": H, "topk": K, "experts": E, "fp8": fp8, "dispatch_us": disp,
               "combine_us": both - disp, "nccl_padded_a2a_us": nccl}
        row.update(deepep_low_latency(args, world, T, H, K, E, fp8, idx, w))
        rows.append(row)
        if rank == 0:
            peer = f", DeepEP {row['deepep_dispatch_us']:.1f} / {row['deepep_combine_us']:.1f} us" if "deepep_dispatch_us" in row else ""
            print(f"# moe {name}: dispatch {disp:.1f} us, combine {both - disp:.1f} us, NCCL padded all-to-all {nccl:.1f} us{peer}",
                  flush=True)
        del ep
    return rows


def deepep_low_latency(args, world, T, H, K, E, fp8, idx, w):
    """DeepEP's low-latency dispatch / combine on the same routing, timed the same way, where the
    deep_ep package imports (tools/peers.sh builds it; put .deps/deepep on PYTHONPATH): columns
    deepep_dispatch_us, deepep_combine_us, or deepep_error. First run in session 8 (4 x H200, DeepEP
    v1.2.1, tools/peers.sh)."""
    try:
        import deep_ep
    except ImportError:
        return {}
    except Exception as e:  # present but not loadable (e.g. a library it links is missing)
        return {"deepep_error": f"{type(e).__name__}: {e}"}
    try:
        group = dist.group.WORLD
        buf = deep_ep.Buffer(group, 0, deep_ep.Buffer.get_low_latency_rdma_size_hint(T, H, world, E), low_latency_mode=True,
                             num_qps_per_rank=E // world, explicitly_destroy=True)
        x = torch.randn(T, H, device="cuda", dtype=torch.bfloat16)
        idx64 = idx.to(torch.int64)
        wf = w.float()
        out_e = torch.randn(E // world, T * world, H, device="cuda", dtype=torch.bfloat16)
        state = {}

        def dispatch():
            _, _, state["handle"], _, _ = buf.low_latency_dispatch(x, idx64, T, E, use_fp8=fp8)

        def pair():
            dispatch()
            buf.low_latency_combine(out_e, idx64, wf, state["handle"])
        disp = graph_us(dispatch, args.reps, args.replays)
        both = graph_us(pair, args.reps, args.replays)
        buf.destroy()
        return {"deepep_dispatch_us": disp, "deepep_combine_us": both - disp,
                "deepep": getattr(deep_ep, "__version__", os.environ.get("DEEPEP_VERSION", "?"))}
    except Exception as e:  # a peer's failure is reported in its columns, not fatal to the run
        return {"deepep_error": f"{type(e).__name__}: {e}"}


# Llama-3 MLP shapes (issue 11): (model, hidden, intermediate size). all_gather_matmul multiplies
# [M, hidden] by [hidden, inter / TP]; matmul_reduce_scatter [M, inter / TP] by [inter / TP, hidden].
OVERLAP_MODELS = (("8B", 4096, 14336), ("70B", 8192, 28672))


def bench_overlap(args, g):
    """all_gather_matmul and matmul_reduce_scatter on the Llama-3 8B and 70B MLP shapes at TP = world,
    beside the GEMM alone (torch.matmul on the full problem: the floor PyTorch's users get, the plan
    of its cuBLASLt heuristic, which need not be the fastest: symmem's heuristic first ran 8% slower
    than the best plan at 16384 x 4096 x 7168 on an H200, and symmem-bench overlap's floor runs the
    fastest since session 56), torch's matmul + NCCL one
    after the other, and PyTorch's fused ops (torch.ops.symm_mem.fused_all_gather_matmul /
    fused_matmul_reduce_scatter, eager: their anchor runs them so), all four timed interleaved
    (interleaved_us) on the same random operands. Columns *_us; symmem_rel_err is symmem's result
    against torch's matmul + NCCL (relative Frobenius error)."""
    world = g.size
    group_name = dist.group.WORLD.group_name
    torch_fused = None
    try:
        import torch.distributed._symmetric_memory as symm_mem
        if hasattr(symm_mem, "enable_symm_mem_for_group"):
            symm_mem.enable_symm_mem_for_group(group_name)
        torch_fused = torch.ops.symm_mem
    except Exception as e:  # PyTorch without symmetric memory: its column is left out
        if g.rank == 0:
            print(f"# PyTorch's fused ops unavailable ({type(e).__name__}: {e})", flush=True)
    models = [m for m in OVERLAP_MODELS if m[0] in args.overlap_models.split(",")]
    reps = args.reps // 4 or 1
    rows = []
    if g.rank == 0:
        print(f"# symmem.bench overlap: TP={world}, {torch.cuda.get_device_name()}; us a call, interleaved, median of "
              f"{args.replays}, max over ranks", flush=True)
        print(f"{'model':>5} {'op':>6} {'M':>6} {'gemm':>9} {'mm+nccl':>9} {'torch':>9} {'symmem':>9} {'x_gemm':>7} {'x_torch':>7}", flush=True)
    for model, hidden, inter in models:
        if inter % world:
            continue
        for M in [int(m) for m in args.overlap_ms.split(",")]:
            if M % world:
                continue
            for op in ("ag_gemm", "gemm_rs"):
                K, N = (hidden, inter // world) if op == "ag_gemm" else (inter // world, hidden)
                if args.overlap_data == "uniform":
                    a = (torch.rand(M, K, device="cuda") * 2 - 1).to(torch.bfloat16)
                    b = (torch.rand(K, N, device="cuda") * 2 - 1).to(torch.bfloat16)
                else:
                    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
                    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
                shard = a[g.rank * (M // world):(g.rank + 1) * (M // world)].contiguous()
                if op == "ag_gemm":
                    full = torch.empty_like(a)

                    def seq():
                        dist.all_gather_into_tensor(full, shard)
                        return torch.matmul(full, b)
                    ours = lambda: symmem.all_gather_matmul(shard, b)
                    theirs = lambda: torch_fused.fused_all_gather_matmul(shard, [b], 0, group_name)
                else:
                    out = torch.empty(M // world, N, device="cuda", dtype=torch.bfloat16)

                    def seq():
                        dist.reduce_scatter_tensor(out, torch.matmul(a, b))
                        return out
                    ours = lambda: symmem.matmul_reduce_scatter(a, b)
                    theirs = lambda: torch_fused.fused_matmul_reduce_scatter(a, b, "sum", 0, group_name)
                got, want = ours().float(), seq().float()
                err = max_over_ranks(((got - want).norm() / want.norm()).item())  # (every rank prints and records the same)
                variants = {"gemm_alone_us": (lambda: torch.matmul(a, b), False), "torch_sequential_us": (seq, False),
                            "symmem_us": (ours, False)}
                row = {"op": op, "model": model, "M": M, "K": K, "N": N, "world": world, "data": args.overlap_data, "symmem_rel_err": err}
                if torch_fused is not None:
                    try:  # (a shape PyTorch's op refuses is refused on every rank alike)
                        theirs()
                        variants["torch_fused_us"] = (theirs, True)
                    except Exception as e:  # its column is left out, the reason recorded
                        row["torch_fused_error"] = f"{type(e).__name__}: {e}"
                row.update(interleaved_us(variants, reps, args.replays))
                rows.append(row)
                if g.rank == 0:
                    t = row.get("torch_fused_us", float("nan"))
                    print(f"{model:>5} {op:>6} {M:>6} {row['gemm_alone_us']:>9.1f} {row['torch_sequential_us']:>9.1f} {t:>9.1f} "
                          f"{row['symmem_us']:>9.1f} {row['symmem_us'] / row['gemm_alone_us']:>7.3f} {row['symmem_us'] / t:>7.3f}"
                          f"{'' if err < 2e-2 else f'  rel err {err:.3g}'}", flush=True)
                del a, b, shard, variants, got, want
                torch.cuda.empty_cache()
    return rows


if __name__ == "__main__":
    main()
