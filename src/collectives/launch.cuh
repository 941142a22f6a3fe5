#pragma once
// Kernel launch for the collectives: programmatic dependent launch (PDL) where the GPU has it, so
// a collective's launch overlaps the tail of the kernel before it in the stream (graphs keep the
// edge). Every collective kernel starts with pdl_wait(), which returns once the previous kernel in
// the stream has completed and its memory is visible: the semantics of plain stream order.
// SYMMEM_PDL=0 turns it off.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "../runtime/device_code.hpp"
#include "symmem/error.hpp"

namespace symmem::coll {

/// First statement of every collective kernel.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");  // all our blocks run: the next may launch
#endif
}

/// The two halves of pdl_wait apart, for a kernel that may run beside the kernel before it (its
/// correctness not depending on that kernel's writes) but must not complete before it:
/// pdl_launch_next() at its start, pdl_wait_prev() before it exits.
__device__ __forceinline__ void pdl_launch_next() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait_prev() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// PDL needs both the GPU (sm_90 on) and kernels whose pdl_wait() holds griddepcontrol.wait, i.e.
/// code generated for sm_90 or newer: a kernel without it, launched early, could read its inputs
/// before the kernel ahead of it in the stream had made them visible (device_code.hpp).
inline bool pdl_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("SYMMEM_PDL");
    if (e != nullptr && std::strcmp(e, "0") == 0) return false;
    return symmem::detail::device_code_has_sm90();
  }();
  return on;
}

/// `smem` bytes of dynamic shared memory a block (the caller has raised the kernel's limit where
/// it exceeds the default 48 KiB).
template <class... KArgs, class... Args>
void launch_smem(void (*kernel)(KArgs...), int blocks, int threads, size_t smem, cudaStream_t s, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  if (pdl_enabled()) {
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  SYMMEM_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

template <class... KArgs, class... Args>
void launch(void (*kernel)(KArgs...), int blocks, int threads, cudaStream_t s, Args&&... args) {
  launch_smem(kernel, blocks, threads, 0, s, std::forward<Args>(args)...);
}

}  // namespace symmem::coll
