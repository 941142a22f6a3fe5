// Zero-copy all-reduce over symmetric inputs. Each block synchronises with the same block on every
// peer (its own barrier channel) at the start (inputs are ready) and the end (peers are done
// reading this rank's input, and every shard of the output has arrived). The first barriers, and
// one_shot's last (it only loads peers' inputs), signal with device::Arrival::kRelaxed (its
// comment has the argument); a barrier after stores into peers' outputs releases them.
//   one_shot: every rank reduces the whole message from all inputs into its own output (the rooted
//             reduce: the root alone; the other ranks take the two barriers, the last of which
//             keeps their inputs until the root has read them).
//   two_shot: rank r reduces shard r and stores it into every rank's output.
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

__device__ __forceinline__ bool aligned16(const void* a, const void* b) {
  return ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b)) & 15u) == 0;
}

template <DataType D, ReduceOp R>
__global__ void __launch_bounds__(kThreads) one_shot_kernel(DirectArgs a) {
  pdl_wait();
  if (!device::barrier_block(a.ws, blockIdx.x, device::Arrival::kRelaxed)) return;
  const size_t idx = device::grid_index(), stride = device::grid_size();
  const size_t esize = sizeof(typename device::Elem<D>::Raw), count = a.bytes / esize;
  char* dsts[1] = {a.out};
  size_t done = 0;
  if (a.rooted && a.ws.rank != a.root) done = count;  // (nothing to reduce here)
  else if (aligned16(a.in, a.out)) {
    const size_t words = a.bytes / 16;
    constexpr int U = kUnroll<D>;
    for (size_t w = idx; w < words; w += U * stride) {
      int4 res[U];
      reduce_words<D, R, U>(a.in_h, a.in, w, stride, words, res);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (w + u * stride < words) reinterpret_cast<int4*>(a.out)[w + u * stride] = res[u];
    }
    done = words * 16 / esize;
  }
  reduce_elements<D, R>(a.in_h, a.in, dsts, 1, done, count, idx, stride);
  device::barrier_block(a.ws, blockIdx.x, device::Arrival::kRelaxed);  // peers' inputs only loaded
}

template <DataType D, ReduceOp R>
__global__ void __launch_bounds__(kThreads) two_shot_kernel(DirectArgs a) {
  pdl_wait();
  if (!device::barrier_block(a.ws, blockIdx.x, device::Arrival::kRelaxed)) return;
  const int n = a.in_h.nranks, me = a.in_h.rank;
  const size_t idx = device::grid_index(), stride = device::grid_size();
  const size_t esize = sizeof(typename device::Elem<D>::Raw), count = a.bytes / esize;
  __shared__ char* dsts[pad::kMaxTeam];
  for (int p = threadIdx.x; p < n; p += blockDim.x) dsts[p] = at_rank(a.out_h, p, a.out);
  __syncthreads();
  size_t done = 0;
  if (aligned16(a.in, a.out)) {
    const size_t words = a.bytes / 16;
    const size_t first = words * me / n, last = words * (me + 1) / n;
    constexpr int U = kUnroll<D>;
    for (size_t w = first + idx; w < last; w += U * stride) {
      int4 res[U];
      reduce_words<D, R, U>(a.in_h, a.in, w, stride, last, res);
      for (int k = 0; k < n; ++k) {
        const int p = (me + k) % n;  // stagger the destinations across ranks
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (w + u * stride < last) reinterpret_cast<int4*>(dsts[p])[w + u * stride] = res[u];
      }
    }
    done = words * 16 / esize;
  }
  // Elements past the last whole word (or all, when unaligned): rank n-1's shard.
  if (me == n - 1) reduce_elements<D, R>(a.in_h, a.in, dsts, n, done, count, idx, stride);
  device::barrier_block(a.ws, blockIdx.x);
}

// Two ranks, writes only. Shard s of the message: [0, half) for rank 0, [half, bytes) for rank 1.
// 1) each rank writes the peer's shard of its input into the peer's output (scratch until step 2);
// 2) after a barrier each rank reduces its shard (its input + what arrived, in rank order) and
//    writes the result into its own output and the peer's.
template <DataType D, ReduceOp R>
__global__ void __launch_bounds__(kThreads) two_shot_push_kernel(DirectArgs a) {
  pdl_wait();
  if (!device::barrier_block(a.ws, blockIdx.x, device::Arrival::kRelaxed)) return;  // the peer's output is free
  const int me = a.ws.rank, peer = 1 - me;
  using Raw = typename device::Elem<D>::Raw;
  const size_t half = a.bytes / 32 * 16;
  auto part = [&](int s, size_t* lo, size_t* hi) {  // this block's piece of shard s, 16-byte aligned
    const size_t slo = s ? half : 0, shi = s ? a.bytes : half, w = (shi - slo + 15) / 16;
    *lo = slo + min(shi - slo, w * blockIdx.x / gridDim.x * 16);
    *hi = slo + min(shi - slo, w * (blockIdx.x + 1) / gridDim.x * 16);
  };
  char* peer_out = device::peer_ptr(a.out_h, peer, a.out);
  size_t lo, hi;
  part(peer, &lo, &hi);
  device::copy_bytes(peer_out + lo, a.in + lo, hi - lo, threadIdx.x, blockDim.x);
  if (!device::barrier_block(a.ws, blockIdx.x)) return;  // the peer's half of my shard has landed
  part(me, &lo, &hi);
  const bool aligned = ((reinterpret_cast<uintptr_t>(a.in) | reinterpret_cast<uintptr_t>(a.out)) & 15u) == 0;
  const size_t vec_hi = aligned ? lo + (hi - lo) / 16 * 16 : lo;
  const char* srcs[2] = {me == 0 ? a.in : a.out, me == 0 ? a.out : a.in};  // rank order: rank 0's data first
  constexpr int U = kUnroll<D>;
  for (size_t w = lo / 16 + threadIdx.x; w < vec_hi / 16; w += U * blockDim.x) {
    int4 v[2][U];
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (w + u * blockDim.x < vec_hi / 16) v[r][u] = reinterpret_cast<const int4*>(srcs[r])[w + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (w + u * blockDim.x >= vec_hi / 16) continue;
      device::Pack<D, int4> acc;
      acc.load(v[0][u]);
      acc.template reduce<R>(v[1][u]);
      const int4 res = acc.template store<R>(2);
      reinterpret_cast<int4*>(a.out)[w + u * blockDim.x] = res;
      reinterpret_cast<int4*>(peer_out)[w + u * blockDim.x] = res;
    }
  }
  for (size_t e = vec_hi / sizeof(Raw) + threadIdx.x; e < hi / sizeof(Raw); e += blockDim.x) {
    device::Pack<D, Raw> acc;
    acc.load(reinterpret_cast<const Raw*>(srcs[0])[e]);
    acc.template reduce<R>(reinterpret_cast<const Raw*>(srcs[1])[e]);
    const Raw res = acc.template store<R>(2);
    reinterpret_cast<Raw*>(a.out)[e] = res;
    reinterpret_cast<Raw*>(peer_out)[e] = res;
  }
  device::barrier_block(a.ws, blockIdx.x);  // both halves of the result are in both outputs
}

}  // namespace

void launch_all_reduce(Algo algo, const DirectArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  if (algo == Algo::kOneShot)
    dispatch_reduce(d, r, [&](auto D, auto R) { launch(one_shot_kernel<D.value, R.value>, blocks, kThreads, s, a); });
  else if (algo == Algo::kTwoShotPush)
    dispatch_reduce(d, r, [&](auto D, auto R) { launch(two_shot_push_kernel<D.value, R.value>, blocks, kThreads, s, a); });
  else
    dispatch_reduce(d, r, [&](auto D, auto R) { launch(two_shot_kernel<D.value, R.value>, blocks, kThreads, s, a); });
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
