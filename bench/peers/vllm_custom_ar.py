"""vLLM's custom all-reduce as a peer column of `python -m symmem.bench` (all_reduce suite,
--vllm-peer bench/peers/vllm_custom_ar.py): vllm_custom_ar.cu, a binding of vLLM's CustomAllreduce,
built on the GPU machine by PyTorch's extension builder against the header that `tools/peers.sh
prepare` puts into .deps/vllm/csrc (VLLM_CSRC overrides the folder). Set up as vLLM's Python side
sets it up: a signal buffer (with vLLM's default 8 MiB of scratch behind it) and a registered input
buffer from cudaMalloc, exchanged as CUDA IPC handles; under a CUDA graph the captured inputs are
registered after the capture. Like vLLM, it takes only sizes below max_bytes (8 MiB by default), a
multiple of 16 bytes, at 2, 4, 6 or 8 ranks (one rank a GPU)."""
import os

import torch
import torch.distributed as dist
from torch.utils import cpp_extension


def _build():
    here = os.path.dirname(os.path.abspath(__file__))
    csrc = os.environ.get("VLLM_CSRC", os.path.join(os.getcwd(), ".deps", "vllm", "csrc"))
    if not os.path.isfile(os.path.join(csrc, "custom_all_reduce.cuh")):
        raise FileNotFoundError(f"no custom_all_reduce.cuh in {csrc}: tools/peers.sh (prepare) says how to write it, or set VLLM_CSRC")
    return cpp_extension.load(name="symmem_peer_vllm_custom_ar", sources=[os.path.join(here, "vllm_custom_ar.cu")],
                              extra_include_paths=[csrc], extra_cuda_cflags=["-O3"], extra_ldflags=["-lcuda"], verbose=False)


class VllmCustomAllReduce:
    """One instance a process: all_reduce(n) returns a callable that sums n bf16 values from the
    registered input buffer into `out` (a torch tensor) on the current stream."""

    HEADER_SOURCE = "vllm-project/vllm c9eabec7 csrc/custom_all_reduce.cuh"

    def __init__(self, max_bytes=8 << 20):
        self.ext = _build()
        self.max_bytes = max_bytes
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        ext = self.ext
        self.signal = ext.alloc_zeroed(ext.signal_bytes() + max_bytes)
        self.rank_data = ext.alloc_zeroed(8 << 20)
        self.input = ext.alloc_zeroed(max_bytes)
        torch.cuda.synchronize()
        zeros = [0] * self.world
        self.handle = ext.make(self.signal, self.rank_data, 8 << 20, self._gather(ext.ipc_handle(self.signal)), zeros,
                               self.rank, True)
        ext.register_buffer(self.handle, self._gather(ext.ipc_handle(self.input)), zeros, self.input)

    def _gather(self, obj):
        out = [None] * self.world
        dist.all_gather_object(out, obj)
        return out

    def fits(self, nbytes):
        return nbytes < self.max_bytes and nbytes % 16 == 0 and self.world in (2, 4, 6, 8)

    def input_view(self, n):
        return self.ext.bf16_view(self.input, n)

    def call(self, out):
        return lambda: self.ext.all_reduce(self.handle, self.input, out)

    def after_capture(self):
        """After a CUDA graph captured calls: register the inputs it captured on every rank."""
        handles, offsets = self.ext.graph_meta(self.handle)
        pairs = self._gather((handles, offsets))
        self.ext.register_graph(self.handle, [p[0] for p in pairs], [p[1] for p in pairs])
