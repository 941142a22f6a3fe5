#pragma once
// Device helpers of the MoE kernels: warp copies, the arrival count that elects a grid's last block.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "../collectives/launch.cuh"
#include "moe_kernels.hpp"
#include "symmem/device/atomics.cuh"
#include "symmem/device/wait.cuh"

namespace symmem::moe::kern {

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x & 31u); }
/// A share of the grid: blocks [first, first + count) do one kind of work. A pipelined round gives
/// round j+1's send and round j's receive work (copy or sum) to shares of its own, which then run
/// at once instead of one after the other in every block (moe_kernels.hpp, "Rounds").
struct Part {
  int first, count;
  __device__ __forceinline__ static Part grid() { return Part{0, static_cast<int>(gridDim.x)}; }
  __device__ __forceinline__ int block() const { return static_cast<int>(blockIdx.x) - first; }
  __device__ __forceinline__ int warp() const { return static_cast<int>((block() * blockDim.x + threadIdx.x) >> 5); }
  // The same warps numbered block-major (warp w of block b is w * count + b): a few items spread
  // over every SM of the share instead of filling the first blocks' warps.
  __device__ __forceinline__ int warp_spread() const { return static_cast<int>(threadIdx.x >> 5) * count + block(); }
  __device__ __forceinline__ int warps() const { return static_cast<int>((count * blockDim.x) >> 5); }
  __device__ __forceinline__ bool lead() const { return static_cast<int>(blockIdx.x) == first; }
};

/// A pipelined round's grid split (moe_kernels.hpp, "Rounds"): with a next round and send_blocks in
/// (0, gridDim.x), blocks [0, send_blocks) store round j+1 and the others finish round j (copy or
/// sum); otherwise every block does both, one after the other. `sends`: this block stores.
struct PipeSplit {
  bool split, sends;
  Part senders, finishers;
  __device__ __forceinline__ PipeSplit(bool next, int send_blocks) {
    const int B = static_cast<int>(gridDim.x);
    split = next && send_blocks > 0 && send_blocks < B;
    senders = split ? Part{0, send_blocks} : Part::grid();
    finishers = split ? Part{send_blocks, B - send_blocks} : Part::grid();
    sends = next && (!split || static_cast<int>(blockIdx.x) < send_blocks);
  }
};

/// Work items [0, total) taken by warps: from a shared counter when `claims` is set (any warp of the
/// grid may join whenever it is free; the next claim is in flight while the warp works on the
/// current item; the counter is zeroed by the grid's last block, after every claim), else a static
/// stride over `part` (`spread`: block-major, Part::warp_spread).
/// Usage: for (WorkItems w(...); w.valid(); w.next()) { ... w.item ... }
struct WorkItems {
  long long item, total;
  unsigned* claims;
  long long step;
  unsigned long long pending;
  __device__ __forceinline__ WorkItems(long long total_, unsigned* claims_, const Part& part, bool spread = false)
      : total(total_), claims(claims_) {
    if (claims != nullptr) {
      item = static_cast<long long>(__shfl_sync(0xffffffffu, lane_id() == 0 ? atomicAdd(claims, 1u) : 0u, 0));
      pending = lane_id() == 0 && item < total ? atomicAdd(claims, 1u) : 0u;
    } else {
      item = spread ? part.warp_spread() : part.warp();
      step = part.warps();
    }
  }
  __device__ __forceinline__ bool valid() const { return item < total; }
  __device__ __forceinline__ void next() {
    if (claims == nullptr) {
      item += step;
      return;
    }
    item = static_cast<long long>(__shfl_sync(0xffffffffu, static_cast<unsigned>(pending), 0));
    if (lane_id() == 0 && item < total) pending = atomicAdd(claims, 1u);
  }
};
/// A warp moves one row of `bytes` (16-byte aligned at both ends) from src to up to 32
/// destinations: lane i < ndst holds destination i. The row is read once, kBatch 16-byte vectors
/// per lane in flight (a load latency per 8 KiB, not per 512 bytes), and every batch is stored to
/// each destination; a store instruction covers 512 contiguous bytes. A caller may load the first
/// batch early (RowBatch::load at base 0, before work the row does not depend on, such as the
/// claims of destination rows) and pass it in.
constexpr int kBatch = 16;
constexpr size_t kBatchBytes = 32 * 16 * kBatch;
template <int B>
struct RowBatchOf {
  static constexpr size_t kBytes = 32 * 16 * B;
  int4 v[B];
  __device__ __forceinline__ void load(const char* src, size_t bytes, size_t base) {
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const size_t off = base + (static_cast<size_t>(u) * 32 + lane_id()) * 16;
      if (off < bytes) v[u] = *reinterpret_cast<const int4*>(src + off);
    }
  }
  __device__ __forceinline__ void store(char* dst, size_t bytes, size_t base) const {
#pragma unroll
    for (int u = 0; u < B; ++u) {
      const size_t off = base + (static_cast<size_t>(u) * 32 + lane_id()) * 16;
      if (off < bytes) *reinterpret_cast<int4*>(dst + off) = v[u];
    }
  }
};
using RowBatch = RowBatchOf<kBatch>;
/// The destinations are visited from index `first` (mod ndst) on: callers vary it so that
/// concurrent warps do not all write the same rank's link first. (A smaller batch, RowBatchOf<B>,
/// where registers are short and a warp's piece of the row is small.)
template <int B>
__device__ __forceinline__ void warp_fanout16(const char* src, size_t bytes, char* lane_dst, int ndst, RowBatchOf<B>& b, int first) {
  for (size_t base = 0; base < bytes; base += RowBatchOf<B>::kBytes) {
    if (base != 0) b.load(src, bytes, base);
    for (int k = 0, i = ndst > 0 ? first % ndst : 0; k < ndst; ++k, i = i + 1 == ndst ? 0 : i + 1)
      b.store(reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(lane_dst), i)), bytes, base);
  }
}
/// The same for n 32-bit words (scales): read once, stored to each destination. `pre` holds the
/// first 64 words when the caller loaded them early (WordBatch), else nullptr.
struct WordBatch {
  uint32_t w[2];
  __device__ __forceinline__ void load(const uint32_t* src, int n) {
#pragma unroll
    for (int q = 0; q < 2; ++q) w[q] = q * 32 + lane_id() < n ? src[q * 32 + lane_id()] : 0u;
  }
};
__device__ __forceinline__ void warp_fanout_words(const uint32_t* src, int n, uint32_t* lane_dst, int ndst, const WordBatch* pre = nullptr) {
  for (int base = 0; base < n; base += 32) {
    const int i0 = base + lane_id();
    const uint32_t v = pre != nullptr && base < 64 ? (base == 0 ? pre->w[0] : pre->w[1]) : i0 < n ? src[i0] : 0u;  // (no dynamic index: w stays in registers)
    for (int i = 0; i < ndst; ++i) {
      uint32_t* d = reinterpret_cast<uint32_t*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(lane_dst), i));
      if (i0 < n) d[i0] = v;
    }
  }
}

/// Combine's work item: a segment of a bf16 row (kSegBytes, moe_kernels.hpp, or half of it for a
/// small one-round combine: Layout::seg_bytes), kSegVecs (or half) 16-byte vectors per lane.
constexpr int kSegVecs = kSegBytes / (32 * 16);
__device__ __forceinline__ void add_bf16x8(float (&acc)[8], int4 v, float w) {
  const __nv_bfloat162* p = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(p[i]);
    acc[2 * i] += w * f.x;
    acc[2 * i + 1] += w * f.y;
  }
}
__device__ __forceinline__ int4 pack_bf16x8(const float (&acc)[8]) {
  int4 v;
  __nv_bfloat162* p = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) p[i] = __floats2bfloat162_rn(acc[2 * i], acc[2 * i + 1]);
  return v;
}
template <bool kL2>
__device__ __forceinline__ int4 ld16(const char* p) {
  if constexpr (kL2) return __ldcg(reinterpret_cast<const int4*>(p));
  else return *reinterpret_cast<const int4*>(p);
}
/// A warp's fp32 sum of one segment of kVecs vectors a lane (bytes [seg0, seg0 + kVecs x 512) of
/// bf16 rows of `row` bytes): add_group() loads a few rows' segments with every vector in flight at
/// once, store() writes the bf16 sum. (A compile-time size: as a run-time bound it cost the decode
/// combine 14 registers and 0.15 us, session 40.)
template <int kVecs>
struct SegmentSumT {
  static constexpr int kBytes = kVecs * 32 * 16;
  float acc[kVecs][8];
  size_t seg0, row;
  __device__ __forceinline__ SegmentSumT(size_t seg0_, size_t row_) : seg0(seg0_), row(row_) {
#pragma unroll
    for (int u = 0; u < kVecs; ++u)
#pragma unroll
      for (int i = 0; i < 8; ++i) acc[u][i] = 0.f;
  }
  __device__ __forceinline__ size_t off(int u) const { return seg0 + (static_cast<size_t>(u) * 32 + lane_id()) * 16; }
  /// Up to kGroup rows at once (the first `count` of src, weights w): every load of the group is in
  /// flight before the first add, and the adds run in the order given (the same sum as one row
  /// after another). kL2: loads bypass L1 (rows a peer rewrites while this kernel runs).
  static constexpr int kGroup = 4;
  template <bool kL2 = false>
  __device__ __forceinline__ void add_group(const char* const (&src)[kGroup], const float (&w)[kGroup], int count) {
    int4 v[kGroup][kVecs];
#pragma unroll
    for (int g = 0; g < kGroup; ++g)
#pragma unroll
      for (int u = 0; u < kVecs; ++u) v[g][u] = g < count && off(u) < row ? ld16<kL2>(src[g] + off(u)) : int4{0, 0, 0, 0};
#pragma unroll
    for (int g = 0; g < kGroup; ++g)
      if (g < count)
#pragma unroll
        for (int u = 0; u < kVecs; ++u) add_bf16x8(acc[u], v[g][u], w[g]);
  }
  __device__ __forceinline__ void store(char* dst) const {
#pragma unroll
    for (int u = 0; u < kVecs; ++u)
      if (off(u) < row) *reinterpret_cast<int4*>(dst + off(u)) = pack_bf16x8(acc[u]);
  }
};
using SegmentSum = SegmentSumT<kSegVecs>;

/// Lane k < K's entry of a routing record, for the combine: its local expert, its row there and its
/// weight (1 unweighted); -1 where the lane has none. Returns the warp's ballot of the entries this
/// rank kept (not another rank's, not dropped at dispatch), the mask sum_expert_rows takes.
struct RecordEntry {
  int le = -1, slot = -1;
  float w = 1.0f;
};
__device__ __forceinline__ unsigned record_entry(const Meta* meta, int K, bool weighted, int C, RecordEntry& e) {
  const int lane = lane_id();
  if (lane < K) {
    e.le = meta->expert[lane];
    e.slot = meta->slot[lane];
    if (weighted) e.w = meta->weight[lane];
  }
  return __ballot_sync(0xffffffffu, e.le >= 0 && e.slot >= 0 && e.slot < C);
}

/// A received row's partial, one segment: the sum into `sum` of the outputs of the experts of this
/// rank the row went to, weighted, in routing-record order (the same sum on every call). Lane k of
/// `keep` (the same mask on every lane; zero afterwards) holds its local expert `le`, its row
/// `slot` there and its weight `w`; expert_out is [E_local, C, H] bf16 with rows of `hrow` bytes.
template <class Sum>
__device__ __forceinline__ void sum_expert_rows(Sum& sum, unsigned& keep, int le, int slot, float w, const char* expert_out, int C,
                                                size_t hrow) {
  while (keep != 0) {
    const char* src[Sum::kGroup];
    float ws[Sum::kGroup];
    int count = 0;
#pragma unroll
    for (int i = 0; i < Sum::kGroup; ++i) {
      src[i] = nullptr;
      ws[i] = 0.f;
      if (keep != 0) {
        const int k = __ffs(keep) - 1;
        keep &= keep - 1;
        const int kle = __shfl_sync(0xffffffffu, le, k), kslot = __shfl_sync(0xffffffffu, slot, k);
        ws[i] = __shfl_sync(0xffffffffu, w, k);
        src[i] = expert_out + (static_cast<size_t>(kle) * C + kslot) * hrow;
        count = i + 1;
      }
    }
    sum.add_group(src, ws, count);
  }
}

/// start[s] = rows[0] + ... + rows[s - 1] for every s in [0, n], in shared memory: thread s sums
/// its own prefix (a few adds; the rows were loaded one source a thread). The caller synchronises
/// the block before (rows in) and after (start in).
__device__ __forceinline__ void prefix_starts(const int* rows, int n, int* start) {
  for (int s = threadIdx.x; s <= n; s += blockDim.x) {
    int v = 0;
    for (int q = 0; q < s; ++q) v += rows[q];
    start[s] = v;
  }
}

template <class T>
__device__ __forceinline__ T* at(const DeviceHandle& h, size_t off) {
  return reinterpret_cast<T*>(static_cast<char*>(h.local) + off);
}
/// Stamps phase `p` (Layout::trace only). Call it from the one thread that owns the point.
__device__ __forceinline__ void stamp(const DeviceHandle& h, const Layout& L, TracePoint p) {
  if (L.trace) at<uint64_t>(h, L.trace_off)[p] = device::global_timer_ns();
}
/// Stamps `p` once every thread of the block is past what precedes it (the elected block's flags
/// raised, its epilogue done). Every thread of the block calls it (it synchronises when tracing).
__device__ __forceinline__ void stamp_block(const DeviceHandle& h, const Layout& L, TracePoint p) {
  if (!L.trace) return;
  __syncthreads();
  if (threadIdx.x == 0) stamp(h, L, p);
}
/// Block 0 stamps `p` once all its threads are past what precedes it (its flags added).
__device__ __forceinline__ void stamp_block0(const DeviceHandle& h, const Layout& L, TracePoint p) {
  if (!L.trace) return;
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) stamp(h, L, p);
}
/// Block 0's thread 0 stamps `p` (a kernel half's start, its flags seen).
__device__ __forceinline__ void stamp0(const DeviceHandle& h, const Layout& L, TracePoint p) {
  if (blockIdx.x == 0 && threadIdx.x == 0) stamp(h, L, p);
}
/// The first block of a share stamps `p` (its own work done).
__device__ __forceinline__ void stamp_lead(const DeviceHandle& h, const Layout& L, const Part& part, TracePoint p) {
  if (part.lead() && threadIdx.x == 0) stamp(h, L, p);
}
template <class T>
__device__ __forceinline__ T* at_peer(const DeviceHandle& h, int peer, size_t off) {
  return reinterpret_cast<T*>(static_cast<char*>(h.peers[peer]) + off);
}

/// The expert counters of operation parity `opar` on rank `peer` (Layout::expert_count_off; this
/// rank's own where peer is this rank): the rows claimed in each of that rank's local experts.
__device__ __forceinline__ unsigned* expert_counters(const DeviceHandle& h, const Layout& L, int opar, int peer = -1) {
  const size_t off = L.expert_count_off + sizeof(unsigned) * static_cast<size_t>(opar) * L.experts_local;
  return peer < 0 || peer == h.rank ? at<unsigned>(h, off) : at_peer<unsigned>(h, peer, off);
}

/// The streamed dispatch's and combine's local state (moe_kernels.hpp, RingState).
__device__ __forceinline__ uint64_t* ring_state(const DeviceHandle& h, const Layout& L) { return at<uint64_t>(h, L.ring_state_off); }

/// Every thread calls it after its block's work. Returns true on every thread of the last block
/// to arrive (false elsewhere); every block's earlier writes to this GPU's memory are then visible
/// to it and ordered before what it writes next, so its epilogue can run on all its threads. The
/// counter is back at 0 afterwards. (Only local bookkeeping is elected: what peers wait for goes
/// out per block, arrive_at_flags.) Thread 0 fences after the block barrier (a grid barrier's
/// usual form: the barrier orders the block's writes before thread 0's, and its GPU-scope release
/// is cumulative over them); every thread fencing its own writes before the barrier waited for the
/// block's local copy stores to drain before it arrived (2 x H100, session 16: with the two changes
/// below, decode dispatch 0.2-0.3 us less). What an elected block reads of the others is local
/// bookkeeping (atomics' counters, claims), never the rows.
__device__ __forceinline__ bool last_block(unsigned int* counter) {
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    device::fence_acq_rel_gpu();  // after the barrier: every thread's writes of the block (cumulativity)
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
    if (last) {
      device::fence_acq_rel_gpu();  // every arrival observed: their writes precede what follows
      *counter = 0;
    }
  }
  __syncthreads();
  return last != 0;
}

/// A send half's block, its work done: every thread fences its stores (to peers; a fence orders only
/// the calling thread's writes, and one thread's fence after the block barrier did not cover the
/// others' NVLink stores in practice), then thread d adds the block's arrival (kArrival) and
/// value(d) to rank d's flag `slot`. The fence and the add after it are a release (the block's
/// stores are visible to whoever sees the add), so the add itself is relaxed: a release add would
/// fence again (~2 us at system scope). An acquire-release fence is what a release needs (fence.sc
/// measured no different at 4 GPUs). Every rank gets one, rule (R). Block 0 stamps its fence and
/// its adds.
template <class ValueOf>
__device__ __forceinline__ void arrive_at_flags(const DeviceHandle& h, const Layout& L, int slot, ValueOf value, TracePoint fenced,
                                                TracePoint raised) {
  device::fence_acq_rel();
  __syncthreads();
  stamp0(h, L, fenced);
  for (int d = threadIdx.x; d < L.n; d += blockDim.x) device::red_add_relaxed(h.signals[d] + slot, kArrival + value(d));
  stamp_block0(h, L, raised);
}

/// The grid's last block (the one with the least copy or sum work: the work is strided from block
/// 0), in a kernel that has waited for every peer's flag: reports (once) a peer's overflow mark for
/// operation `op` (moe_kernels.hpp, overflow_flag). (In block 0 its round trip lengthened the block
/// every election waits for.) `elected`: the caller is a grid's elected last block instead (every
/// thread of it calls).
__device__ inline void report_peer_overflow(const DeviceHandle& h, int n, uint64_t op, bool elected = false) {
  if ((!elected && blockIdx.x != gridDim.x - 1) || op == 0) return;
  // Bit 0: a peer's overflow mark reported here; bit 1: a peer's bad index (OR-ed over the block:
  // every thread reads the seen slots before thread 0 writes them, at the barrier's far side).
  const uint64_t seen = h.local_signals[kOverflowSeenSlot], seen_bad = h.local_signals[kBadIndexSeenSlot];
  unsigned found = 0;
  for (int p = threadIdx.x; p < n; p += blockDim.x) {
    if (p == h.rank) continue;
    const uint64_t mark = device::ld_acquire(h.local_signals + overflow_flag(p));
    if (mark == op && op > seen) {
      found |= 1u;
      device::record_error(h, WaitKind::kMoe, p, (4ull << 32) | static_cast<unsigned>(p), Cmp::kLe, 0, op, 0);
    }
    const uint64_t bad = device::ld_acquire(h.local_signals + bad_index_flag(p));
    if (bad == op && op > seen_bad) {
      found |= 2u;
      device::record_error(h, WaitKind::kMoe, p, (5ull << 32) | static_cast<unsigned>(p), Cmp::kLt, 0, op, 0);
    }
  }
  const int any = __syncthreads_or(static_cast<int>(found & 1u)), any_bad = __syncthreads_or(static_cast<int>(found & 2u));
  if (threadIdx.x == 0 && any) h.local_signals[kOverflowSeenSlot] = op;
  if (threadIdx.x == 0 && any_bad) h.local_signals[kBadIndexSeenSlot] = op;
}

/// A sender's note of a bad expert index (token t, index v) in the running operation: recorded
/// here, and in kBadIndexSlot for the publishing block to mark every peer with (moe_kernels.hpp).
__device__ __forceinline__ void note_bad_index(const DeviceHandle& h, int t, long long v, int num_experts) {
  device::record_error(h, WaitKind::kMoe, -1, (1ull << 32) | static_cast<unsigned>(t), Cmp::kLt, static_cast<uint64_t>(num_experts),
                       static_cast<uint64_t>(v), 0);
  atomicExch(reinterpret_cast<unsigned long long*>(h.local_signals + kBadIndexSlot), 1ull);
}

/// Lane k < K's entry of token t (-1 on the other lanes), as token_mask_of takes it.
template <class Idx>
__device__ __forceinline__ long long token_entry(const void* topk_idx, int t, int K) {
  return lane_id() < K ? static_cast<long long>(static_cast<const Idx*>(topk_idx)[static_cast<size_t>(t) * K + lane_id()]) : -1;
}
/// token_mask of entries already loaded (token_entry), so a caller can have several tokens' loads
/// in flight at once.
__device__ __forceinline__ uint64_t token_mask_of(long long v, int num_experts, int El, int& expert, int& dest) {
  expert = dest = -1;
  if (v >= 0 && v < num_experts) {
    expert = static_cast<int>(v);
    dest = expert / El;
  }
  uint64_t mask = dest >= 0 ? 1ull << dest : 0;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mask |= __shfl_xor_sync(0xffffffffu, mask, o);
  return mask;
}
/// Token t's routing, on a whole warp: lane k < K holds its expert and that expert's rank (else
/// -1 for both; v: the index read there, -1 on lanes >= K), every lane the mask of the token's
/// ranks. An index outside [0, num_experts) routes nowhere; routed_badly tells the callers that
/// report it (note_bad_index).
template <class Idx>
__device__ __forceinline__ uint64_t token_mask(const void* topk_idx, int t, int K, int num_experts, int El, int& expert, int& dest,
                                               long long& v) {
  v = token_entry<Idx>(topk_idx, t, K);
  return token_mask_of(v, num_experts, El, expert, dest);
}
__device__ __forceinline__ bool routed_badly(int expert, long long v) { return expert < 0 && v != -1; }

/// Lane i < popc(mask): the i-th rank of a token's rank mask, in rank order (else -1).
__device__ __forceinline__ int nth_rank(uint64_t mask) {
  if (lane_id() >= __popcll(mask)) return -1;
  for (int i = 0; i < lane_id(); ++i) mask &= mask - 1;
  return __ffsll(static_cast<long long>(mask)) - 1;
}

/// The last block of a dispatch's last round (or of the streamed dispatch), every thread: local
/// expert le's count, clamped to the capacity, into out[le], and zeroed for the next operation; an
/// expert over capacity is recorded here and marked in every peer's pad for operation `op`
/// (report_peer_overflow reports it there). `pre`: thread t's loads, made early by the caller
/// (preload_expert_counts: their round trip beside others); `active` false: nothing to publish (a
/// round before the last), only the block's barrier.
struct CountsPreload {
  unsigned c0 = 0;    // thread t's count of expert t
  uint64_t note = 0;  // the bad-index note
};
__device__ __forceinline__ void publish_expert_counts(const DeviceHandle& h, const Layout& L, int* out, uint64_t op, bool active,
                                                      const CountsPreload& pre) {
  const unsigned c0 = pre.c0;
  const int El = L.experts_local, C = L.capacity, le0 = static_cast<int>(threadIdx.x);
  unsigned* expert_count = expert_counters(h, L, static_cast<int>(op & 1));
  int over_mine = 0;
  for (int le = le0; active && le < El; le += blockDim.x) {
    const unsigned c = le == le0 ? c0 : expert_count[le];
    expert_count[le] = 0;
    out[le] = static_cast<int>(c < static_cast<unsigned>(C) ? c : static_cast<unsigned>(C));
    if (c > static_cast<unsigned>(C)) {
      over_mine = 1;
      device::record_error(h, WaitKind::kMoe, -1, (2ull << 32) | static_cast<unsigned>(le), Cmp::kLe, static_cast<uint64_t>(C), c, 0);
    }
  }
  if (__syncthreads_or(over_mine))
    for (int d = threadIdx.x; d < L.n; d += blockDim.x)
      if (d != h.rank) device::st_release(h.signals[d] + overflow_flag(h.rank), op);
  // A bad expert index met by this operation's senders (the note, read in the preload).
  const bool bad = active && pre.note != 0;
  __syncthreads();  // (every thread has read the note before thread 0 clears it)
  if (bad) {
    if (threadIdx.x == 0) h.local_signals[kBadIndexSlot] = 0;
    for (int d = threadIdx.x; d < L.n; d += blockDim.x)
      if (d != h.rank) device::st_release(h.signals[d] + bad_index_flag(h.rank), op);
  }
}
/// Thread t's early loads for publish_expert_counts, where `active`, in flight together (one round
/// trip; the note's load after the counts' round trip cost the epilogue a second one): expert t's
/// count (t < El) and the bad-index note, of operation `op`. Called by the elected block (the
/// election ordered every block's work before it, the senders' notes (note_bad_index, before their
/// arrivals) included, so plain loads see them), or where senders claim by the one-kernel
/// dispatch's last block after its wait (every claim and note, this rank's blocks' included, came
/// before a flag it has seen). Volatile loads: peers' atomics change the counters. (4 x H100,
/// session 27, against the note's acquire after the counts: decode dispatch 20.15-20.17 us
/// against 20.26-20.29, 1-token shapes 0.1-0.15 less.)
__device__ __forceinline__ CountsPreload preload_expert_counts(const DeviceHandle& h, const Layout& L, uint64_t op, bool active) {
  const int le0 = static_cast<int>(threadIdx.x);
  CountsPreload p;
  if (active) {
    if (le0 < L.experts_local) p.c0 = *static_cast<volatile const unsigned*>(expert_counters(h, L, static_cast<int>(op & 1)) + le0);
    p.note = *reinterpret_cast<const volatile uint64_t*>(h.local_signals + kBadIndexSlot);
  }
  return p;
}

/// Thread p < n of every block waits until peer p's flag at `slot(p)` holds `arrivals` more send
/// blocks than base[p], its value at the slot's previous round (moe_kernels.hpp; modulo 2^64), and
/// puts the value in seen[p]: every block reads the same one (the next add to the slot is a round
/// two ahead, which needs this rank's flags of the next round, added only after this read). So the
/// value that satisfied the wait is already the round's final one: it is kept as it is (reading
/// the flag again cost one more round trip after the wait, on the path of every receive half).
/// Returns false on every thread if a wait gave up (the error is recorded).
template <class SlotOf>
__device__ inline bool wait_all(const DeviceHandle& h, int n, SlotOf slot, const uint64_t* base, uint64_t arrivals, uint64_t* seen,
                                unsigned backoff_ns) {
  __shared__ int ok;
  if (threadIdx.x == 0) ok = 1;
  __syncthreads();
  for (int p = threadIdx.x; p < n; p += blockDim.x) {
    const uint64_t* f = h.local_signals + slot(p);
    const uint64_t target = base[p] + arrivals * kArrival;
    if (!device::wait_for(h, f, [&](uint64_t v) { return static_cast<int64_t>(v - target) >= 0; }, Cmp::kGe, target, WaitKind::kSignal,
                          p, backoff_ns, &seen[p]))
      ok = 0;
  }
  __syncthreads();
  return ok != 0;
}

}  // namespace symmem::moe::kern
