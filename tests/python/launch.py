"""Runs a multi-rank Python test file under torchrun with N ranks, one per GPU; exits 77 (ctest's
SKIP) with the reason where torch, symmem's extension or N GPUs are missing.

    python launch.py N test_gpu.py"""
import os
import socket
import subprocess
import sys


def main():
    n, test = int(sys.argv[1]), sys.argv[2]
    try:
        import torch
    except ImportError:
        print("SKIPPED: PyTorch is not installed for this interpreter")
        sys.exit(77)
    try:
        import symmem._C  # noqa: F401
    except ImportError as e:
        print(f"SKIPPED: symmem's extension does not import here ({e})")
        sys.exit(77)
    have = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if have < n:
        print(f"SKIPPED: needs {n} GPUs, this machine has {have}")
        sys.exit(77)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1")
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={n}", f"--master-port={port}",
           os.path.join(here, "runner.py"), os.path.join(here, test)]
    sys.exit(subprocess.call(cmd, env=env))


if __name__ == "__main__":
    main()
