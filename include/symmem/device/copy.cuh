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

/// Copies n bytes; member `idx` of a group of `stride` threads. 16-byte loads and stores when dst
/// and src share their alignment mod 16 (4 in flight per thread), 4-byte when mod 4, else bytes.
/// `dst_like`: an address congruent to dst mod 16 that the caller has without a load, by which the
/// path is chosen (put passes the symmetric address, whose copy on every peer is congruent to it:
/// the heap maps every member's block at the same offset of granularity-aligned arenas). The loads
/// of src then need not wait for dst, which a put reads from the handle's table in memory (session
/// 76, 2 x H200: put_signal one way at 2-64 KiB 0.11-0.15 us faster; at 8 B - 1 KiB 0.01-0.04, as
/// the head's predicated store still waits for dst). Registers spent here count in every kernel
/// that inlines it: check `-Xptxas -v` after a change (NOTES, "Session 76 in short").
__device__ inline void copy_bytes_as(void* dst_v, const void* dst_like, const void* src_v, size_t n, size_t idx, size_t stride) {
  char* dst = static_cast<char*>(dst_v);
  const char* src = static_cast<const char*>(src_v);
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst_like), s = reinterpret_cast<uintptr_t>(src);
  if (((d ^ s) & 15u) == 0) {
    size_t head = (16u - (d & 15u)) & 15u;
    if (head > n) head = n;
    // The head (bytes before the first 16-byte boundary) is copied last: a store waits for its
    // address even where its predicate is off, and the loads after it may not pass it (they
    // could alias), so a head stored first held every load of the body behind dst, which a put
    // reads from the handle's table. Copied last, the body's first loads overlap that read.
    char* const head_dst = dst;
    const char* const head_src = src;
    dst += head;
    src += head;
    n -= head;
    const size_t nv = n / 16;
    int4* dv = reinterpret_cast<int4*>(dst);
    const int4* sv = reinterpret_cast<const int4*>(src);
    size_t i = idx;
    for (; i + 3 * stride < nv; i += 4 * stride) {
      int4 a = sv[i], b = sv[i + stride], c = sv[i + 2 * stride], e = sv[i + 3 * stride];
      dv[i] = a;
      dv[i + stride] = b;
      dv[i + 2 * stride] = c;
      dv[i + 3 * stride] = e;
    }
    for (; i < nv; i += stride) dv[i] = sv[i];
    // Tail under 16 bytes, 16-byte aligned: one thread, widest stores first.
    if (idx == 0) {
      size_t t = nv * 16;
      if (n - t >= 8) { *reinterpret_cast<uint64_t*>(dst + t) = *reinterpret_cast<const uint64_t*>(src + t); t += 8; }
      if (n - t >= 4) { *reinterpret_cast<uint32_t*>(dst + t) = *reinterpret_cast<const uint32_t*>(src + t); t += 4; }
      for (; t < n; ++t) dst[t] = src[t];
    }
    for (size_t i = idx; i < head; i += stride) head_dst[i] = head_src[i];
  } else if (((d ^ s) & 3u) == 0) {
    size_t head = (4u - (d & 3u)) & 3u;
    if (head > n) head = n;
    for (size_t i = idx; i < head; i += stride) dst[i] = src[i];
    dst += head;
    src += head;
    n -= head;
    const size_t nw = n / 4;
    for (size_t i = idx; i < nw; i += stride) reinterpret_cast<uint32_t*>(dst)[i] = reinterpret_cast<const uint32_t*>(src)[i];
    for (size_t t = nw * 4 + idx; t < n; t += stride) dst[t] = src[t];
  } else {
    for (size_t i = idx; i < n; i += stride) dst[i] = src[i];
  }
}
__device__ inline void copy_bytes(void* dst, const void* src, size_t n, size_t idx, size_t stride) { copy_bytes_as(dst, dst, src, n, idx, stride); }

/// The whole grid as one group.
__device__ __forceinline__ size_t grid_index() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ size_t grid_size() { return static_cast<size_t>(gridDim.x) * blockDim.x; }
/// The whole grid as one group, its first members spread over the blocks: global warp w = (warp
/// of the block) x gridDim.x + block takes members [32 w, 32 w + 32), so a walk shorter than the
/// grid runs on warp 0 of every block (every SM) before warp 1 of any, instead of on every warp of
/// the first blocks while the others idle. A warp's lanes stay adjacent (its accesses coalesce).
/// The same members as grid_index() (a bijection onto [0, grid_size())) where blockDim.x is a
/// multiple of 32.
__device__ __forceinline__ size_t grid_index_spread() {
  const size_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  return (warp * gridDim.x + blockIdx.x) * 32 + lane;
}

}  // namespace symmem::device
#endif
