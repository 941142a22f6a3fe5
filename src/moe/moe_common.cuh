#pragma once
// Device helpers of the MoE kernels: warp copies, the arrival count that elects a grid's last block.
#include <cuda_runtime.h>

#include "moe_kernels.hpp"
#include "symmem/device/atomics.cuh"
#include "symmem/device/wait.cuh"

namespace symmem::moe::kern {

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x & 31u); }
__device__ __forceinline__ int warp_global() { return static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) >> 5); }
__device__ __forceinline__ int warps_total() { return static_cast<int>((gridDim.x * blockDim.x) >> 5); }

/// A warp copies n bytes (n and both addresses 16-byte aligned).
__device__ __forceinline__ void warp_copy16(char* dst, const char* src, size_t n) {
  for (size_t i = static_cast<size_t>(lane_id()) * 16; i < n; i += 32 * 16)
    *reinterpret_cast<int4*>(dst + i) = *reinterpret_cast<const int4*>(src + i);
}
/// A warp copies n 32-bit words (any alignment of 4).
__device__ __forceinline__ void warp_copy_words(uint32_t* dst, const uint32_t* src, int n) {
  for (int i = lane_id(); i < n; i += 32) dst[i] = src[i];
}

template <class T>
__device__ __forceinline__ T* at(const DeviceHandle& h, size_t off) {
  return reinterpret_cast<T*>(static_cast<char*>(h.local) + off);
}
template <class T>
__device__ __forceinline__ T* at_peer(const DeviceHandle& h, int peer, size_t off) {
  return reinterpret_cast<T*>(static_cast<char*>(h.peers[peer]) + off);
}

/// Every thread calls it after its block's work. Returns true in thread 0 of the last block to
/// arrive; every block's earlier writes (local and remote) are then visible to it, and ordered
/// before what it writes next. The counter is back at 0 afterwards.
__device__ __forceinline__ bool last_block(unsigned int* counter) {
  __syncthreads();
  if (threadIdx.x != 0) return false;
  device::fence_system();  // this block's writes, by every thread (bar.sync above), before the arrival
  if (atomicAdd(counter, 1u) != gridDim.x - 1) return false;
  device::fence_system();  // every arrival observed: their writes precede what follows
  *counter = 0;
  return true;
}

/// Thread p < n of every block waits for peer p's flag at `slot(p)` to reach `value`; returns
/// false on every thread if a wait gave up (the error is recorded).
template <class SlotOf>
__device__ inline bool wait_all(const DeviceHandle& h, int n, SlotOf slot, uint64_t value, uint64_t* seen) {
  __shared__ int ok;
  if (threadIdx.x == 0) ok = 1;
  __syncthreads();
  for (int p = threadIdx.x; p < n; p += blockDim.x) {
    uint64_t* f = h.local_signals + slot(p);
    if (!device::wait_until(h, f, Cmp::kGe, value, WaitKind::kSignal, p)) ok = 0;
    else if (seen != nullptr) seen[p] = device::ld_acquire(f);
  }
  __syncthreads();
  return ok != 0;
}

}  // namespace symmem::moe::kern
