// Zero-copy data movement: all-gather, broadcast, all-to-all and all-to-all-v, each rank pulling
// from its peers' symmetric inputs into its own output (which may be any device memory).
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

enum Kind { kAG, kBC, kA2A, kA2AV };

template <int K>
__global__ void __launch_bounds__(kThreads) movement_kernel(DirectArgs a) {
  pdl_wait();
  if (!device::barrier_block(a.ws, blockIdx.x)) return;
  const DeviceHandle& h = a.in_h;
  const int n = a.ws.nranks, me = a.ws.rank;
  const size_t idx = device::grid_index(), stride = device::grid_size();
  // Blocks split into a local group (a third) and a remote group, so this rank's own chunk is
  // copied while the peers' chunks cross the links. (One block, or one rank: one group.)
  const bool split = n > 1 && gridDim.x >= 2;
  const unsigned local_blocks = split ? (gridDim.x >= 6 ? gridDim.x / 3 : 1) : gridDim.x;
  const bool local = blockIdx.x < local_blocks;
  const size_t gidx = local ? idx : idx - local_blocks * size_t(blockDim.x);
  const size_t gstride = (local ? local_blocks : gridDim.x - local_blocks) * size_t(blockDim.x);
  const int k_first = local ? 0 : 1, k_last = split && local ? 1 : n;
  if constexpr (K == kBC) {
    if (a.push) {
      // The root writes into every rank's output; the others only synchronise.
      if (me == a.root)
        for (int k = k_first; k < k_last; ++k) {
          char* dst = at_rank(a.out_h, (me + k) % n, a.out);
          if (dst != a.in) device::copy_bytes(dst, a.in, a.bytes, gidx, gstride);
        }
    } else {
      // Every rank pulls from the root. The root's own copy starts halfway through, so it does not
      // read the same lines as the peers pulling from the start (that contention cost up to 2x).
      const char* src = at_rank(h, a.root, a.in);
      if (src != a.out) {
        if (me == a.root) {
          const size_t half = a.bytes / 2 / 16 * 16;
          device::copy_bytes(a.out + half, src + half, a.bytes - half, idx, stride);
          device::copy_bytes(a.out, src, half, idx, stride);
        } else {
          device::copy_bytes(a.out, src, a.bytes, idx, stride);
        }
      }
    }
  } else if constexpr (K == kAG || K == kA2A) {
    for (int k = k_first; k < k_last; ++k) {
      const int p = (me + k) % n;
      if (a.push) {
        // Write my chunk (AG) / my chunk for p (A2A) into slot `me` of p's output.
        const char* src = a.in + (K == kA2A ? static_cast<size_t>(p) * a.bytes : 0);
        char* dst = at_rank(a.out_h, p, a.out) + static_cast<size_t>(me) * a.bytes;
        if (src != dst) device::copy_bytes(dst, src, a.bytes, gidx, gstride);
      } else {
        const char* src = at_rank(h, p, a.in) + (K == kA2A ? static_cast<size_t>(me) * a.bytes : 0);
        char* dst = a.out + static_cast<size_t>(p) * a.bytes;
        if (src != dst) device::copy_bytes(dst, src, a.bytes, gidx, gstride);
      }
    }
  } else {
    // all-to-all-v: peer p sends counts_p[me] elements starting at sum(counts_p[q], q < me).
    __shared__ long long recv_off[pad::kMaxTeam + 1], send_off[pad::kMaxTeam], cnt[pad::kMaxTeam];
    for (int p = threadIdx.x; p < n; p += blockDim.x) {
      const int64_t* pc = at_rank(a.counts_h, p, a.counts);
      long long off = 0;
      for (int q = 0; q < me; ++q) off += pc[q];
      send_off[p] = off;
      cnt[p] = pc[me];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      recv_off[0] = 0;
      for (int p = 0; p < n; ++p) recv_off[p + 1] = recv_off[p] + cnt[p];
    }
    __syncthreads();
    if (blockIdx.x == 0 && a.recv_counts != nullptr)
      for (int p = threadIdx.x; p < n; p += blockDim.x) a.recv_counts[p] = cnt[p];
    const size_t es = a.bytes;
    for (int k = k_first; k < k_last; ++k) {
      const int p = (me + k) % n;
      device::copy_bytes(a.out + recv_off[p] * es, at_rank(h, p, a.in) + send_off[p] * es, cnt[p] * es, gidx, gstride);
    }
  }
  device::barrier_block(a.ws, blockIdx.x);
}

}  // namespace

void launch_movement(CollOp op, const DirectArgs& a, int blocks, cudaStream_t s) {
  switch (op) {
    case CollOp::kAllGather: launch(movement_kernel<kAG>, blocks, kThreads, s, a); break;
    case CollOp::kBroadcast: launch(movement_kernel<kBC>, blocks, kThreads, s, a); break;
    case CollOp::kAllToAll: launch(movement_kernel<kA2A>, blocks, kThreads, s, a); break;
    case CollOp::kAllToAllV: launch(movement_kernel<kA2AV>, blocks, kThreads, s, a); break;
    default: fail("launch_movement: not a data-movement collective: " + std::string(coll_name(op)));
  }
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
