// Zero-copy data movement: all-gather, broadcast, all-to-all and all-to-all-v, each rank pulling
// from its peers' symmetric inputs into its own output (which may be any device memory), or
// pushing into their symmetric outputs (DirectArgs::push); and the rooted gather and scatter, the
// root's side of all-gather and all-to-all.
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

enum Kind { kAG, kBC, kA2A, kA2AV, kGA, kSC };

// Broadcast with writes only, every link busy: the message is cut into one chunk per non-root
// rank; the root writes chunk j to non-root j, which writes it on to every other non-root. The
// chunks go in `steps` sub-chunks, pipelined: in step s the root sends sub-chunk s while the
// non-roots forward sub-chunk s-1. Block b moves piece b of every sub-chunk in both roles, so the
// barrier of block b with block b of every peer after each step orders all that a forward needs.
// steps is a function of the message size and rank count (facts every rank shares).
__device__ inline void broadcast_push(const DirectArgs& a) {
  const int n = a.ws.nranks, me = a.ws.rank, root = a.root;
  const int m = n - 1;
  const size_t want = a.bytes >> 22;  // one step per 4 MiB, 1 to 16
  const int steps = m <= 1 || want < 1 ? 1 : want > 16 ? 16 : static_cast<int>(want);
  const size_t words = (a.bytes + 15) / 16;
  auto piece = [&](int j, int s, size_t* lo, size_t* hi) {  // block's piece of sub-chunk s of chunk j
    const size_t clo = words * j / m, chi = words * (j + 1) / m;
    const size_t slo = clo + (chi - clo) * s / steps, shi = clo + (chi - clo) * (s + 1) / steps;
    *lo = min(a.bytes, (slo + (shi - slo) * blockIdx.x / gridDim.x) * 16);
    *hi = min(a.bytes, (slo + (shi - slo) * (blockIdx.x + 1) / gridDim.x) * 16);
  };
  if (m == 0) {
    if (a.in != a.out) device::copy_bytes(a.out, a.in, a.bytes, device::grid_index(), device::grid_size());
    return;
  }
  // Two ranks, out of place: the root's own copy on a third of the blocks and its peer's on the
  // rest (local_remote_split, as all_gather), not both pieces by every block one after the other:
  // session 69, 2 x H200, push 4 / 8 / 16 MiB 21.0 / 32.0 / 55.4 us against 23.1 / 35.5 / 61.8.
  // At two ranks there is nothing to forward, so no barrier here: the kernel's last barrier
  // (a release after a push) is the one the peer's pass acquires the root's writes at. Session 74,
  // 2 x H200, against a barrier here as well (the general path's after its step): push 1 / 4 / 16 /
  // 64 MiB 7.72 / 17.13 / 52.2 / 190-191 us against 11.2 / 20.4 / 55.2 / 193.6 (direct 7.50 / 16.8
  // / 51.8 / 189.7).
  if (m == 1 && me == root && a.in != a.out && gridDim.x >= 2) {
    const LocalRemoteSplit g = local_remote_split(n);  // (k 0: this rank's own copy; k 1: the peer's)
    device::copy_bytes(g.k_first == 0 ? a.out : at_rank(a.out_h, (me + 1) % n, a.out), a.in, a.bytes, g.idx, g.stride);
    return;
  }
  const int j_me = (me - root - 1 + n) % n;  // this rank's chunk (non-roots)
  for (int s = 0; s <= steps; ++s) {
    size_t lo, hi;
    if (me == root && s < steps) {
      for (int kk = 1; kk < n; ++kk) {
        const int k = (me + kk) % n;
        piece(kk - 1, s, &lo, &hi);
        device::copy_bytes(at_rank(a.out_h, k, a.out) + lo, a.in + lo, hi - lo, threadIdx.x, blockDim.x);
        if (a.in != a.out) device::copy_bytes(a.out + lo, a.in + lo, hi - lo, threadIdx.x, blockDim.x);
      }
    }
    if (me != root && s >= 1) {
      piece(j_me, s - 1, &lo, &hi);
      for (int kk = 1; kk < n; ++kk) {
        const int k = (me + kk) % n;
        if (k != root) device::copy_bytes(at_rank(a.out_h, k, a.out) + lo, a.out + lo, hi - lo, threadIdx.x, blockDim.x);
      }
    }
    if (m > 1 && s < steps && !device::barrier_block(a.ws, blockIdx.x)) return;  // m == 1: the last barrier only
  }
}

// all_to_all_v: the counts every rank will act on, checked on the GPU before any byte moves. Each
// rank publishes its input and output capacity (elements) in its workspace pad before the first
// barrier; after it, every block of every rank reads every rank's counts and capacities and
// reaches the same verdict, so a bad count is reported on every rank and no rank copies. The
// capacities are rewritten by the next all_to_all_v only after its writer passed this one's final
// barrier, which every reader reaches after its reads.
__device__ inline void a2av_publish(const DirectArgs& a) {
  if (threadIdx.x == 0) {
    a.ws.local_signals[ws::kCapSlot] = a.out_capacity;
    a.ws.local_signals[ws::kInCapSlot] = a.in_capacity;
  }
}
__device__ inline bool a2av_counts_valid(const DirectArgs& a) {
  const int n = a.ws.nranks;
  __shared__ unsigned long long worst;  // (rank * 3 + kind) of the first problem, in a fixed order
  if (threadIdx.x == 0) worst = ~0ull;
  __syncthreads();
  for (int t = threadIdx.x; t < n; t += blockDim.x) {
    // Row t: what rank t sends. Column t: what rank t receives.
    const int64_t* row = at_rank(a.counts_h, t, a.counts);
    long long total = 0, in_total = 0;
    bool negative = false;
    for (int q = 0; q < n; ++q) {
      const long long c = row[q];
      negative |= c < 0;
      in_total += c < 0 ? 0 : c;
      const long long r = at_rank(a.counts_h, q, a.counts)[t];
      total += r < 0 ? 0 : r;
    }
    const unsigned long long in_cap = a.ws.signals[t][ws::kInCapSlot], out_cap = a.ws.signals[t][ws::kCapSlot];
    unsigned long long key = ~0ull;
    if (negative) key = 3ull * t;
    else if (static_cast<unsigned long long>(in_total) > in_cap) key = 3ull * t + 1;
    else if (static_cast<unsigned long long>(total) > out_cap) key = 3ull * t + 2;
    if (key != ~0ull) atomicMin(&worst, key);
  }
  __syncthreads();
  const unsigned long long w = worst;
  if (w == ~0ull) return true;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const int t = static_cast<int>(w / 3), kind = static_cast<int>(w % 3);
    const int64_t* row = at_rank(a.counts_h, t, a.counts);
    unsigned long long index = 0, seen = 0, limit = 0;
    if (kind == 0) {
      for (int q = 0; q < n; ++q)
        if (row[q] < 0) { index = q; seen = static_cast<unsigned long long>(row[q]); break; }
    } else if (kind == 1) {
      for (int q = 0; q < n; ++q) seen += row[q];
      limit = a.ws.signals[t][ws::kInCapSlot];
    } else {
      for (int q = 0; q < n; ++q) seen += at_rank(a.counts_h, q, a.counts)[t];
      limit = a.ws.signals[t][ws::kCapSlot];
    }
    device::record_error(a.ws, WaitKind::kBadCount, t, (static_cast<uint64_t>(kind) << 32) | index, Cmp::kLe, limit, seen, 0);
  }
  return false;
}

template <int K>
__global__ void __launch_bounds__(kThreads) movement_kernel(DirectArgs a) {
  pdl_wait();
  // The first barrier orders nothing of this kernel but all_to_all_v's published capacities, and the
  // last one, where this rank pulled (loads of peers' inputs, stores into its own output), only
  // that the loads are done; where it pushed into peers' outputs, the last one releases the stores
  // (device::Arrival has the argument).
  if constexpr (K == kA2AV) a2av_publish(a);
  if (!device::barrier_block(a.ws, blockIdx.x, K == kA2AV ? device::Arrival::kRelease : device::Arrival::kRelaxed)) return;
  const DeviceHandle& h = a.in_h;
  const int n = a.ws.nranks, me = a.ws.rank;
  const size_t idx = device::grid_index(), stride = device::grid_size();
  const LocalRemoteSplit grp = local_remote_split(n);
  const size_t gidx = grp.idx, gstride = grp.stride;
  const int k_first = grp.k_first, k_last = grp.k_last;
  if constexpr (K == kBC) {
    if (a.push) {
      broadcast_push(a);
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
        // In place, each rank's input lies at its own offset (out + rank * chunk): find peer p's
        // through its output, not at this rank's input offset.
        const char* src = K == kAG && a.in_place ? at_rank(a.out_h, p, a.out) + static_cast<size_t>(p) * a.bytes
                                                 : at_rank(h, p, a.in) + (K == kA2A ? static_cast<size_t>(me) * a.bytes : 0);
        char* dst = a.out + static_cast<size_t>(p) * a.bytes;
        if (src != dst) device::copy_bytes(dst, src, a.bytes, gidx, gstride);
      }
    }
  } else if constexpr (K == kGA || K == kSC) {
    // The rooted forms. Where one rank moves the chunks of every rank (the gathering root pulling,
    // the scattering root pushing) its blocks split as all-gather's; where a rank moves one chunk
    // (its own to or from the root) its whole grid does. Ranks with nothing to move only take the
    // barriers: the first says the root's output (push) or every input (pull) is ready, the last
    // that the pulls are done (relaxed: only loads of peer memory before it) or the pushes have
    // landed (a release), as for all-gather.
    const int root = a.root;
    const bool fan = K == kGA ? !a.push : a.push;  // the root moves every rank's chunk
    if (fan && me == root) {
      for (int k = k_first; k < k_last; ++k) {
        const int p = (me + k) % n;
        const size_t off = static_cast<size_t>(p) * a.bytes;
        const char* src = K == kGA ? at_rank(h, p, a.in) : a.in + off;  // gather pulls, scatter pushes
        char* dst = K == kGA ? a.out + off : at_rank(a.out_h, p, a.out);
        if (src != dst) device::copy_bytes(dst, src, a.bytes, gidx, gstride);
      }
    } else if (!fan) {
      const size_t off = static_cast<size_t>(me) * a.bytes;
      const char* src = K == kGA ? a.in : at_rank(h, root, a.in) + off;  // scatter pulls its chunk
      char* dst = K == kGA ? at_rank(a.out_h, root, a.out) + off : a.out;  // gather pushes its chunk
      if (src != dst) device::copy_bytes(dst, src, a.bytes, idx, stride);
    }
  } else {
    // all-to-all-v: peer p sends counts_p[me] elements starting at sum(counts_p[q], q < me).
    __shared__ long long recv_off[pad::kMaxTeam + 1], send_off[pad::kMaxTeam], cnt[pad::kMaxTeam];
    if (!a2av_counts_valid(a)) {
      device::barrier_block(a.ws, blockIdx.x);
      return;
    }
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
  device::barrier_block(a.ws, blockIdx.x, a.push ? device::Arrival::kRelease : device::Arrival::kRelaxed);
}

}  // namespace

void launch_movement(CollOp op, const DirectArgs& a, int blocks, cudaStream_t s) {
  switch (op) {
    case CollOp::kAllGather: launch(movement_kernel<kAG>, blocks, kThreads, s, a); break;
    case CollOp::kBroadcast: launch(movement_kernel<kBC>, blocks, kThreads, s, a); break;
    case CollOp::kAllToAll: launch(movement_kernel<kA2A>, blocks, kThreads, s, a); break;
    case CollOp::kAllToAllV: launch(movement_kernel<kA2AV>, blocks, kThreads, s, a); break;
    case CollOp::kGather: launch(movement_kernel<kGA>, blocks, kThreads, s, a); break;
    case CollOp::kScatter: launch(movement_kernel<kSC>, blocks, kThreads, s, a); break;
    default: fail("launch_movement: not a data-movement collective: " + std::string(coll_name(op)));
  }
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
