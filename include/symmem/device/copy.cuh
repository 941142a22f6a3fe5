#pragma once
// Cooperative copies with 16-byte vector accesses and correct heads and tails. A "group" is any
// set of threads that each know their index and the group's size (a thread, a warp, a block, a
// grid); every member calls with the same arguments.
#include <cstddef>
#include <cstdint>

#include "symmem/export.hpp"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

/// Scopes of the put/get family.
struct ThreadScope {
  __device__ static unsigned index() { return 0; }
  __device__ static unsigned size() { return 1; }
  __device__ static void sync() {}
};
struct WarpScope {
  __device__ static unsigned index() { return threadIdx.x & 31u; }
  __device__ static unsigned size() { return 32; }
  __device__ static void sync() { __syncwarp(); }
};
struct BlockScope {
  __device__ static unsigned index() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
  __device__ static unsigned size() { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ static void sync() { __syncthreads(); }
};

/// copy_bytes to D destinations at once: each source vector loaded once, stored to every
/// destination (16-byte accesses where all of them share src's alignment mod 16, 4-byte where mod
/// 4, else bytes).
template <int D>
__device__ inline void copy_bytes_to(char* const (&dst0)[D], const char* src, size_t n, size_t idx, size_t stride) {
  char* dst[D];
  uintptr_t mis = 0;
  const uintptr_t s = reinterpret_cast<uintptr_t>(src);
#pragma unroll
  for (int k = 0; k < D; ++k) {
    dst[k] = dst0[k];
    mis |= reinterpret_cast<uintptr_t>(dst[k]) ^ s;
  }
  if ((mis & 15u) == 0) {
    size_t head = (16u - (s & 15u)) & 15u;
    if (head > n) head = n;
    for (size_t i = idx; i < head; i += stride)
#pragma unroll
      for (int k = 0; k < D; ++k) dst[k][i] = src[i];
#pragma unroll
    for (int k = 0; k < D; ++k) dst[k] += head;
    src += head;
    n -= head;
    const size_t nv = n / 16;
    const int4* sv = reinterpret_cast<const int4*>(src);
    size_t i = idx;
    for (; i + 3 * stride < nv; i += 4 * stride) {
      int4 a = sv[i], b = sv[i + stride], c = sv[i + 2 * stride], e = sv[i + 3 * stride];
#pragma unroll
      for (int k = 0; k < D; ++k) {
        int4* dv = reinterpret_cast<int4*>(dst[k]);
        dv[i] = a;
        dv[i + stride] = b;
        dv[i + 2 * stride] = c;
        dv[i + 3 * stride] = e;
      }
    }
    for (; i < nv; i += stride) {
      const int4 a = sv[i];
#pragma unroll
      for (int k = 0; k < D; ++k) reinterpret_cast<int4*>(dst[k])[i] = a;
    }
    // Tail under 16 bytes, 16-byte aligned: one thread, widest stores first.
    if (idx == 0) {
      size_t t = nv * 16;
      if (n - t >= 8) {
        const uint64_t v = *reinterpret_cast<const uint64_t*>(src + t);
#pragma unroll
        for (int k = 0; k < D; ++k) *reinterpret_cast<uint64_t*>(dst[k] + t) = v;
        t += 8;
      }
      if (n - t >= 4) {
        const uint32_t v = *reinterpret_cast<const uint32_t*>(src + t);
#pragma unroll
        for (int k = 0; k < D; ++k) *reinterpret_cast<uint32_t*>(dst[k] + t) = v;
        t += 4;
      }
      for (; t < n; ++t)
#pragma unroll
        for (int k = 0; k < D; ++k) dst[k][t] = src[t];
    }
  } else if ((mis & 3u) == 0) {
    size_t head = (4u - (s & 3u)) & 3u;
    if (head > n) head = n;
    for (size_t i = idx; i < head; i += stride)
#pragma unroll
      for (int k = 0; k < D; ++k) dst[k][i] = src[i];
#pragma unroll
    for (int k = 0; k < D; ++k) dst[k] += head;
    src += head;
    n -= head;
    const size_t nw = n / 4;
    for (size_t i = idx; i < nw; i += stride) {
      const uint32_t v = reinterpret_cast<const uint32_t*>(src)[i];
#pragma unroll
      for (int k = 0; k < D; ++k) reinterpret_cast<uint32_t*>(dst[k])[i] = v;
    }
    for (size_t t = nw * 4 + idx; t < n; t += stride)
#pragma unroll
      for (int k = 0; k < D; ++k) dst[k][t] = src[t];
  } else {
    for (size_t i = idx; i < n; i += stride)
#pragma unroll
      for (int k = 0; k < D; ++k) dst[k][i] = src[i];
  }
}

/// Copies n bytes; member `idx` of a group of `stride` threads. 16-byte loads and stores when dst
/// and src share their alignment mod 16 (4 in flight per thread), 4-byte when mod 4, else bytes.
__device__ inline void copy_bytes(void* dst, const void* src, size_t n, size_t idx, size_t stride) {
  char* const d[1] = {static_cast<char*>(dst)};
  copy_bytes_to<1>(d, static_cast<const char*>(src), n, idx, stride);
}
/// copy_bytes into two destinations at once (each source vector loaded once, e.g. a peer's copy
/// and this rank's own); the widest accesses all three pointers' alignments allow.
__device__ inline void copy_bytes2(void* dst0, void* dst1, const void* src, size_t n, size_t idx, size_t stride) {
  char* const d[2] = {static_cast<char*>(dst0), static_cast<char*>(dst1)};
  copy_bytes_to<2>(d, static_cast<const char*>(src), n, idx, stride);
}

/// The whole grid as one group.
__device__ __forceinline__ size_t grid_index() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t grid_size() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

}  // namespace symmem::device
#endif
