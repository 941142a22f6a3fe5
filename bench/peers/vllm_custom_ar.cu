// A thin binding of vLLM's custom all-reduce (class vllm::CustomAllreduce in its
// csrc/custom_all_reduce.cuh, which tools/peers.sh prepare puts into .deps/vllm/csrc: not part of
// symmem, never built by symmem's CMake) for the peer column of `python -m symmem.bench`'s all_reduce
// suite. bench/peers/vllm_custom_ar.py builds it on the GPU machine with PyTorch's extension builder
// and drives it as vLLM's own Python side does: buffers from cudaMalloc shared by CUDA IPC handles,
// the input registered before use, and under a CUDA graph the captured inputs registered after the
// capture (get_graph_buffer_ipc_meta on every rank, all-gathered, register_graph_buffers).
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

#include "custom_all_reduce.cuh"

namespace {

vllm::CustomAllreduce* peer(int64_t handle) { return reinterpret_cast<vllm::CustomAllreduce*>(handle); }

int64_t alloc_zeroed(int64_t bytes) {
  void* p = nullptr;
  CUDACHECK(cudaMalloc(&p, bytes));
  CUDACHECK(cudaMemset(p, 0, bytes));
  return reinterpret_cast<int64_t>(p);
}

pybind11::bytes ipc_handle(int64_t ptr) {
  cudaIpcMemHandle_t h;
  CUDACHECK(cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(ptr)));
  return pybind11::bytes(reinterpret_cast<const char*>(&h), sizeof h);
}

int64_t make(int64_t signal, int64_t rank_data, int64_t rank_data_bytes, const std::vector<std::string>& handles,
             const std::vector<int64_t>& offsets, int64_t rank, bool full_nvlink) {
  TORCH_CHECK(handles.size() == offsets.size(), "vllm peer: one IPC handle and one offset a rank");
  std::vector<cudaIpcMemHandle_t> h(handles.size());
  for (size_t i = 0; i < handles.size(); ++i) {
    TORCH_CHECK(handles[i].size() == sizeof(cudaIpcMemHandle_t), "vllm peer: an IPC handle of the wrong size");
    std::memcpy(&h[i], handles[i].data(), sizeof(cudaIpcMemHandle_t));
  }
  return reinterpret_cast<int64_t>(new vllm::CustomAllreduce(reinterpret_cast<vllm::Signal*>(signal),
                                                             reinterpret_cast<void*>(rank_data), rank_data_bytes,
                                                             h.data(), offsets, static_cast<int>(rank), full_nvlink));
}

// A view of `numel` bf16 values at `ptr` (memory this module allocated), to fill and read from torch.
torch::Tensor bf16_view(int64_t ptr, int64_t numel) {
  return torch::from_blob(reinterpret_cast<void*>(ptr), {numel},
                          torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA));
}

void all_reduce(int64_t handle, int64_t in_ptr, const torch::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == torch::kBFloat16 && out.is_cuda() && out.is_contiguous(),
              "vllm peer: out must be a contiguous CUDA bf16 tensor");
  peer(handle)->allreduce<nv_bfloat16>(at::cuda::getCurrentCUDAStream().stream(), reinterpret_cast<nv_bfloat16*>(in_ptr),
                                       reinterpret_cast<nv_bfloat16*>(out.data_ptr()), static_cast<int>(out.numel()));
}

pybind11::tuple graph_meta(int64_t handle) {
  auto meta = peer(handle)->get_graph_buffer_ipc_meta();
  return pybind11::make_tuple(
      pybind11::bytes(reinterpret_cast<const char*>(meta.first.data()), meta.first.size()), meta.second);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("signal_bytes", [] { return static_cast<int64_t>(sizeof(vllm::Signal)); });
  m.def("alloc_zeroed", &alloc_zeroed);
  m.def("free", [](int64_t ptr) { CUDACHECK(cudaFree(reinterpret_cast<void*>(ptr))); });
  m.def("ipc_handle", &ipc_handle);
  m.def("make", &make);
  m.def("destroy", [](int64_t handle) { delete peer(handle); });
  m.def("register_buffer", [](int64_t handle, const std::vector<std::string>& handles, const std::vector<int64_t>& offsets,
                              int64_t self) { peer(handle)->register_buffer(handles, offsets, reinterpret_cast<void*>(self)); });
  m.def("graph_meta", &graph_meta);
  m.def("register_graph", [](int64_t handle, const std::vector<std::string>& handles,
                             const std::vector<std::vector<int64_t>>& offsets) { peer(handle)->register_graph_buffers(handles, offsets); });
  m.def("bf16_view", &bf16_view);
  m.def("all_reduce", &all_reduce);
}
