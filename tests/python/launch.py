"""Runs a multi-rank Python test file (through runner.py) or example script under torchrun with N
ranks, one per GPU (or R per GPU: --ranks-per-gpu R, which the test file reads from
SYMMEM_TEST_RANKS_PER_GPU); exits 77 (ctest's SKIP) with the reason where torch, symmem's
extension or the GPUs are missing.

    python launch.py N test_gpu.py
    python launch.py N --ranks-per-gpu R test_gpu.py
    python launch.py N ../../examples/python/tp_mlp.py [args]
    python launch.py N --ranks-per-gpu R path/to/cpp_program [args]"""
import os
import socket
import subprocess
import sys


def main():
    n, args = int(sys.argv[1]), sys.argv[2:]
    per_gpu = 1
    if args[:1] == ["--ranks-per-gpu"]:
        per_gpu, args = int(args[1]), args[2:]
    script, extra = args[0], args[1:]
    gpus = (n + per_gpu - 1) // per_gpu
    try:
        import torch
    except ImportError:
        print("SKIPPED: PyTorch is not installed for this interpreter")
        sys.exit(77)
    try:
        if script.endswith(".py"):  # (a C++ program needs torch's launcher only)
            import symmem._C  # noqa: F401
    except ImportError as e:
        print(f"SKIPPED: symmem's extension does not import here ({e})")
        sys.exit(77)
    have = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if have < gpus:
        print(f"SKIPPED: needs {gpus} GPUs, this machine has {have}")
        sys.exit(77)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
               SYMMEM_TEST_RANKS_PER_GPU=str(per_gpu), SYMMEM_RANKS_PER_GPU=str(per_gpu))
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, script)
    run = [os.path.join(here, "runner.py"), path] if os.path.basename(script).startswith("test_") else [path, *extra]
    binary = [] if path.endswith(".py") else ["--no-python"]  # a C++ program, started by torchrun as it is
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={n}", f"--master-port={port}", *binary, *run]
    sys.exit(subprocess.call(cmd, env=env))


if __name__ == "__main__":
    main()
