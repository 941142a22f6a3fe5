#pragma once
// Device helpers shared by the reducing kernels: reduce word w of every rank's copy, in rank order
// (so every rank computes bit-identical results).
#include "kernels.hpp"
#include "symmem/device.cuh"
#include "symmem/device/reduce.cuh"

namespace symmem::coll {

/// Address of `p` (inside the buffer of h, on this rank) as rank r maps it.
template <class T>
__device__ __forceinline__ T* at_rank(const DeviceHandle& h, int r, T* p) {
  return r == h.rank ? p : device::peer_ptr(h, r, p);
}

/// Data movement over n ranks, blocks split into a local group (a third) and a remote group, so
/// this rank's own chunk is copied while the peers' chunks cross the links (one block, or one
/// rank: one group). A block moves the chunks of peers (me + k) % n for k in [k_first, k_last),
/// thread index `idx` of `stride` within its group.
struct LocalRemoteSplit {
  size_t idx, stride;
  int k_first, k_last;
};
__device__ inline LocalRemoteSplit local_remote_split(int n) {
  const bool split = n > 1 && gridDim.x >= 2;
  const unsigned local_blocks = split ? (gridDim.x >= 6 ? gridDim.x / 3 : 1) : gridDim.x;
  const bool local = blockIdx.x < local_blocks;
  const size_t idx = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  LocalRemoteSplit s;
  s.idx = local ? idx : idx - local_blocks * size_t(blockDim.x);
  s.stride = (local ? local_blocks : gridDim.x - local_blocks) * size_t(blockDim.x);
  s.k_first = local ? 0 : 1;
  s.k_last = split && local ? 1 : n;
  return s;
}

/// Reduces word index i of `src` over all ranks (rank order) and returns the packed result.
template <DataType D, ReduceOp R, class Word>
__device__ __forceinline__ Word reduce_word(const DeviceHandle& h, const char* src, size_t i) {
  Word w[pad::kMaxTeam < 8 ? pad::kMaxTeam : 8];
  device::Pack<D, Word> acc;
  const int n = h.nranks;
  // Issue up to 8 loads before the first use, then fold them in rank order.
  for (int base = 0; base < n; base += 8) {
    const int m = n - base < 8 ? n - base : 8;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      if (k < m) w[k] = reinterpret_cast<const Word*>(at_rank(h, base + k, src))[i];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (k >= m) break;
      if (base + k == 0) acc.load(w[k]);
      else acc.template reduce<R>(w[k]);
    }
  }
  return acc.template store<R>(n);
}

/// Words per thread per step of the reducing loops (register budget of 512-thread blocks).
template <DataType D>
constexpr int kUnroll = 16 / sizeof(typename device::Elem<D>::Raw) <= 8 ? 4 : 2;

/// Reduces U words (w0, w0 + stride, ...; those past `words` skipped) of n sources (source r's
/// words at src_of(r)), U loads in flight per source and B sources' loads issued before the first
/// fold, folding in source order.
template <DataType D, ReduceOp R, int U, class SrcOf>
__device__ __forceinline__ void reduce_words_of(int n, SrcOf src_of, size_t w0, size_t stride, size_t words, int4 (&res)[U]) {
  // Sources whose loads are all issued before the first fold: fewer for the narrow types, whose
  // accumulators take more registers per word.
  constexpr int B = 16 / sizeof(typename device::Elem<D>::Raw) <= 4 ? 4 : 2;
  device::Pack<D, int4> acc[U];
  for (int r0 = 0; r0 < n; r0 += B) {
    int4 v[B][U];
#pragma unroll
    for (int b = 0; b < B; ++b) {
      if (r0 + b >= n) break;
      const int4* p = reinterpret_cast<const int4*>(src_of(r0 + b));
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (w0 + u * stride < words) v[b][u] = p[w0 + u * stride];
    }
#pragma unroll
    for (int b = 0; b < B; ++b) {
      if (r0 + b >= n) break;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (w0 + u * stride >= words) continue;
        if (r0 + b == 0) acc[u].load(v[b][u]);
        else acc[u].template reduce<R>(v[b][u]);
      }
    }
  }
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (w0 + u * stride < words) res[u] = acc[u].template store<R>(n);
}
/// The same over every rank's copy of `src` (rank order).
template <DataType D, ReduceOp R, int U>
__device__ __forceinline__ void reduce_words(const DeviceHandle& h, const char* src, size_t w0, size_t stride, size_t words,
                                             int4 (&res)[U]) {
  reduce_words_of<D, R, U>(h.nranks, [&](int r) { return at_rank(h, r, src); }, w0, stride, words, res);
}

/// Element-wise reduction of elements [first, last) of `src` into dst (tails and unaligned data).
template <DataType D, ReduceOp R>
__device__ inline void reduce_elements(const DeviceHandle& h, const char* src, char* const* dsts, int ndst, size_t first,
                                       size_t last, size_t idx, size_t stride) {
  using Raw = typename device::Elem<D>::Raw;
  for (size_t e = first + idx; e < last; e += stride) {
    Raw v = reduce_word<D, R, Raw>(h, src, e);
    for (int k = 0; k < ndst; ++k) reinterpret_cast<Raw*>(dsts[k])[e] = v;
  }
}

}  // namespace symmem::coll
