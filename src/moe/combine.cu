// MoE combine, one round (moe_kernels.hpp). Send: a warp per row this rank received in the same
// round of the last dispatch sums, in fp32, the outputs of the local experts the row went to
// (weighted by the token's top-k weights, or not), and stores the bf16 result into the source
// rank's combine area at the token's index in the round; each block then adds its arrival to every
// rank's combine flag. Receive: once every sender's blocks have all arrived, a warp per token of this rank
// in the round sums, in fp32, the partial rows of the ranks its experts live on (the destination
// mask dispatch recorded) into out.
#include "moe_common.cuh"
#include "symmem/error.hpp"

namespace symmem::moe::kern {
namespace {

// The combine round epoch c (this round's) and the operation op (the last dispatch's) are read
// once, at the start of a kernel.
// The send half's stores: the partial rows of this round's received rows, into their sources, in
// work items of a row segment of kVecs vectors a lane (kSegVecs, or half of it where the layout
// says so: Layout::seg_bytes, picked by the launchers below).
template <int kVecs>
__device__ __forceinline__ void send_items(const CombineArgs& a, uint64_t c, uint64_t op, Part part) {
  using Sum = SegmentSumT<kVecs>;
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, C = L.capacity;
  const int parity = static_cast<int>(c & 1), opar = static_cast<int>(op & 1);
  // A second combine of one dispatch would read routing records the next dispatch may be
  // rewriting: it moves nothing and is reported (once, on this rank); its flags still go out, so
  // no peer waits for them.
  stamp_lead(h, L, part, kCombSendStart);
  const bool refuse = h.local_signals[kCombinedSlot] >= op;  // (set by the last round of a finished combine)
  if (refuse && part.lead() && threadIdx.x == 0)
    device::record_error(h, WaitKind::kMoe, -1, 3ull << 32, Cmp::kGt, op, h.local_signals[kCombinedSlot], 0);
  // This round's rows from each source, and where they start among the operation's records: thread
  // s loads source s's counts (every source's loads in flight at once: one thread's loads, each
  // after a shared store, went one L2 round trip at a time), then thread s sums the prefix.
  const unsigned* round_counts = at<unsigned>(h, L.round_counts_off);
  __shared__ int start[pad::kMaxTeam + 1], base[pad::kMaxTeam], rows[pad::kMaxTeam];
  for (int s = threadIdx.x; s < n; s += blockDim.x) {
    int b = 0;
    for (int j = 0; j < a.r.index; ++j) b += static_cast<int>(round_counts[static_cast<size_t>(j) * n + s]);
    base[s] = b;
    rows[s] = static_cast<int>(round_counts[static_cast<size_t>(a.r.index) * n + s]);
  }
  __syncthreads();
  prefix_starts(rows, n, start);
  const size_t hrow = static_cast<size_t>(L.hidden) * 2;  // bf16 row
  const int segs = static_cast<int>((hrow + Sum::kBytes - 1) / Sum::kBytes);
  // Work items: (received row, segment of Sum::kBytes), every SM taking part even for a few rows. The
  // warps form a group per source rank (the rank the partial rows go back to), in proportion to its
  // items and at least one each, so that every destination is written at once instead of the
  // sources one after another; a grid of fewer warps than ranks takes the items in order.
  __shared__ long long wstart[pad::kMaxTeam + 1];
  __syncthreads();  // start[] is in
  const long long W = part.warps(), total = static_cast<long long>(start[n]) * segs;
  const bool grouped = W >= n && total > 0;
  for (int q = threadIdx.x; grouped && q <= n; q += blockDim.x) wstart[q] = q + (W - n) * (static_cast<long long>(start[q]) * segs) / total;
  __syncthreads();
  long long first = part.warp(), step = W, end = total;
  if (grouped) {
    int q = 0;
    while (wstart[q + 1] <= first) ++q;
    first = static_cast<long long>(start[q]) * segs + (part.warp() - wstart[q]);
    step = wstart[q + 1] - wstart[q];
    end = static_cast<long long>(start[q + 1]) * segs;
  }
  const int lane = lane_id();
  for (long long item = first; !refuse && item < end; item += step) {
    const int j = static_cast<int>(item / segs), g = static_cast<int>(item % segs);
    int s = 0;
    while (start[s + 1] <= j) ++s;
    const size_t rec = (static_cast<size_t>(opar) * n + s) * L.max_tokens + base[s] + (j - start[s]);
    const Meta* meta = at<Meta>(h, L.meta_off + rec * sizeof(Meta));
    RecordEntry e;
    unsigned keep = record_entry(meta, L.topk, a.weighted, C, e);
    const int token = (lane == 0 ? meta->src_token : 0);
    const int tok = __shfl_sync(0xffffffffu, token, 0) - a.r.index * L.round;  // in [0, round): the source sent it in this round
    char* dst = at_peer<char>(h, s, L.comb_off + ((static_cast<size_t>(parity) * n + me) * L.round + tok) * hrow);
    Sum sum(static_cast<size_t>(g) * Sum::kBytes, hrow);
    sum_expert_rows(sum, keep, e.le, e.slot, e.w, a.expert_out, C, hrow);
    sum.store(dst);
  }
  stamp_lead(h, L, part, kCombSendWorked);
}
// The block's arrival in every rank's flag.
__device__ __forceinline__ void send_flags(const CombineArgs& a, uint64_t c) {
  arrive_at_flags(a.h, a.L, combine_flag(static_cast<int>(c & 1), a.h.rank), [](int) { return uint64_t{0}; }, kCombSendFenced, kCombFlagsRaised);
}
// The same; then, off the peers' path, the last block marks the operation combined.
__device__ __forceinline__ void send_flags_close(const CombineArgs& a, uint64_t c, uint64_t op) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  send_flags(a, c);
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(h, L.arrive_off) + 2;
  __syncthreads();
  if (last_block(arrive) && a.r.last && threadIdx.x == 0) h.local_signals[kCombinedSlot] = op;
}

// The flags' values at their previous round (the bases of this round's waits).
__device__ __forceinline__ uint64_t* combine_bases(const CombineArgs& a, uint64_t c) {
  return at<uint64_t>(a.h, a.L.flag_base_off) + flag_base_index(1, static_cast<int>(c & 1), 0);
}
// Waits for every rank's round flag (its `senders` blocks); seen: the flags' values. `base`: the
// bases as this block loaded them before its adds (combine_kernel), else read here.
__device__ __forceinline__ bool recv_wait(const CombineArgs& a, uint64_t c, uint64_t op, uint64_t* seen, const uint64_t* base = nullptr) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, parity = static_cast<int>(c & 1);
  stamp0(h, L, kCombRecvStart);
  const bool ok = wait_all(h, n, [&](int p) { return combine_flag(parity, p); }, base != nullptr ? base : combine_bases(a, c),
                           static_cast<uint64_t>(a.senders), seen, L.backoff_ns);
  stamp0(h, L, kCombRecvFlagsIn);
  if (ok && a.r.last) report_peer_overflow(h, n, op);  // a peer over capacity in this operation
  return ok;
}

// The destination mask of a warp's first item (static stride), loaded before the flags' wait: it
// is this rank's own record, written by the dispatch's send half in an earlier kernel, so the
// load's round trip leaves the path after the wait. (Claimed items are known only after it.)
struct FirstMask {
  long long item = -1;
  uint64_t mask = 0;
};
template <int kVecs>
__device__ __forceinline__ FirstMask first_mask(const CombineArgs& a, Part part) {
  constexpr int kBytes = SegmentSumT<kVecs>::kBytes;
  const int segs = static_cast<int>((static_cast<size_t>(a.L.hidden) * 2 + kBytes - 1) / kBytes);
  FirstMask f;
  const long long item = part.warp();
  if (item < static_cast<long long>(a.r.t1 - a.r.t0) * segs) {
    f.item = item;
    f.mask = at<uint64_t>(a.h, a.L.token_ranks_off)[a.r.t0 + static_cast<int>(item / segs)];
  }
  return f;
}

// A warp per (token, segment) of this rank's tokens in the round: the sum of the ranks' partials.
// Items strided over `part` (`first`: the first one's mask, loaded earlier), or claimed from a
// counter (pipelined rounds, as dispatch's copy).
template <int kVecs>
__device__ __forceinline__ void recv_sum(const CombineArgs& a, uint64_t c, bool ok, Part part, bool claims = false,
                                         const FirstMask& first = FirstMask()) {
  using Sum = SegmentSumT<kVecs>;
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, parity = static_cast<int>(c & 1);
  const uint64_t* token_ranks = at<uint64_t>(h, L.token_ranks_off);
  const size_t hrow = static_cast<size_t>(L.hidden) * 2;
  const int segs = static_cast<int>((hrow + Sum::kBytes - 1) / Sum::kBytes);
  // A warp per (token, segment): the partial rows of the token's ranks, summed in rank order (the
  // same sum on every call), loads of a rank's segment in flight together.
  const long long items = ok ? static_cast<long long>(a.r.t1 - a.r.t0) * segs : 0;
  for (WorkItems w(items, claims ? at<unsigned>(h, L.arrive_off) + kSumClaims : nullptr, part); w.valid(); w.next()) {
    const long long item = w.item;
    const int t = a.r.t0 + static_cast<int>(item / segs), g = static_cast<int>(item % segs);
    Sum sum(static_cast<size_t>(g) * Sum::kBytes, hrow);
    for (uint64_t m = item == first.item ? first.mask : token_ranks[t]; m != 0;) {
      const char* src[Sum::kGroup];
      const float ones[Sum::kGroup] = {1.f, 1.f, 1.f, 1.f};
      int count = 0;
#pragma unroll
      for (int q = 0; q < Sum::kGroup; ++q) {
        src[q] = nullptr;
        if (m != 0) {
          const int r = __ffsll(static_cast<long long>(m)) - 1;
          m &= m - 1;
          src[q] = at<const char>(h, L.comb_off + ((static_cast<size_t>(parity) * n + r) * L.round + (t - a.r.t0)) * hrow);
          count = q + 1;
        }
      }
      sum.add_group(src, ones, count);
    }
    sum.store(a.out + static_cast<size_t>(t) * hrow);
  }
  stamp_lead(h, L, part, kCombRecvWorked);
}

// The last block (every block done reading the flags and summing): the flags' bases for their
// next round, the round epoch. (out is read in stream order only.)
__device__ __forceinline__ void recv_close(const CombineArgs& a, uint64_t c, const uint64_t* seen, bool ok) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(h, L.arrive_off) + 3;
  __syncthreads();
  if (last_block(arrive) && threadIdx.x == 0) {
    uint64_t* base = at<uint64_t>(h, L.flag_base_off) + flag_base_index(1, static_cast<int>(c & 1), 0);
    for (int s = 0; ok && s < L.n; ++s) base[s] = seen[s];  // the flag's value at this round, for its next one
    at<unsigned>(h, L.arrive_off)[kSumClaims] = 0;  // every block's claims are in
    h.local_signals[kCombineEpochSlot] = c;
    stamp(h, L, kCombRecvDone);
  }
}

template <int kVecs>
__device__ __forceinline__ void combine_send(const CombineArgs& a, uint64_t c, uint64_t op) {
  send_items<kVecs>(a, c, op, Part::grid());
  send_flags_close(a, c, op);
}
template <int kVecs>
__device__ __forceinline__ void combine_recv(const CombineArgs& a, uint64_t c, uint64_t op) {
  __shared__ uint64_t seen[pad::kMaxTeam];
  const FirstMask first = first_mask<kVecs>(a, Part::grid());
  const bool ok = recv_wait(a, c, op, seen);
  recv_sum<kVecs>(a, c, ok, Part::grid(), false, first);
  recv_close(a, c, seen, ok);
}

template <int kVecs>
__global__ void __launch_bounds__(kThreads) combine_send_kernel(CombineArgs a) {
  coll::pdl_wait();
  combine_send<kVecs>(a, a.h.local_signals[kCombineEpochSlot] + 1, a.h.local_signals[kOpSlot]);
}
template <int kVecs>
__global__ void __launch_bounds__(kThreads) combine_recv_kernel(CombineArgs a) {
  coll::pdl_wait();
  combine_recv<kVecs>(a, a.h.local_signals[kCombineEpochSlot] + 1, a.h.local_signals[kOpSlot]);
}
// Pipelined rounds (moe_kernels.hpp), as dispatch_pipe_kernel: round c's flags waited for, round
// c+1's partials stored (next), round c's sum, then round c+1's flags; with send_blocks in
// (0, gridDim.x) and a next round, the first send_blocks blocks store and the others sum, at once;
// a storing block done joins the sum (claimed items), and every block adds its arrival only after
// its own part of round c is done, as in dispatch.
__global__ void __launch_bounds__(kThreads, kCombinePipeBlocksPerSm) combine_pipe_kernel(CombineArgs send_next, CombineArgs recv, bool next, int send_blocks) {
  coll::pdl_wait();
  const uint64_t c = recv.h.local_signals[kCombineEpochSlot] + 1, op = recv.h.local_signals[kOpSlot];
  __shared__ uint64_t seen[pad::kMaxTeam];
  const bool ok = recv_wait(recv, c, op, seen);
  const PipeSplit ps(next, send_blocks);
  if (ps.sends) send_items<kSegVecs>(send_next, c + 1, op, ps.senders);
  recv_sum<kSegVecs>(recv, c, ok, ps.finishers, ps.split);
  if (next) send_flags_close(send_next, c + 1, op);
  recv_close(recv, c, seen, ok);
}
// One kernel per round (Kernels::kOne, or kAuto at one round), as dispatch_kernel: every block
// resident at once. It has no election: the send half's (the operation's combined mark) and the
// receive half's (the flags' bases, the round epoch) each cost every block a barrier and an atomic
// round trip, the second on the path to the kernel's end (4 x H200: decode combine 27.95 -> 27.3
// us, 1-token shapes 0.6-0.8 us less). What an election waits for is already true once block 0 has
// passed its wait, for any N and any interleaving: this rank's own flag counts an arrival of every
// block of this grid (rule (R)), and each block reads the round epoch and the combined mark (at
// its start) and the flags' bases (loaded here) before its fence and its add. So block 0 writes the
// bases (the values every block saw: wait_all), the epoch and, on the last round, the mark right
// after its wait, while the others may still poll with the bases they hold; nothing of this round
// reads any of them again, and the next kernel in stream order (pdl_wait: this grid complete) sees
// them. The sum's claims counter is not used (the static stride claims nothing).
// tests/host/test_moe_model.cpp (MoeModel.OneKernelCombine*) runs this block by block under random
// interleavings, and shows that bases read at the wait instead of before the add can hang.
template <int kVecs>
__global__ void __launch_bounds__(kThreads) combine_kernel(CombineArgs send, CombineArgs recv) {
  coll::pdl_wait();
  const uint64_t c = send.h.local_signals[kCombineEpochSlot] + 1, op = send.h.local_signals[kOpSlot];
  __shared__ uint64_t base[pad::kMaxTeam], seen[pad::kMaxTeam];
  uint64_t* bases = combine_bases(recv, c);
  const int n = recv.L.n;
  // Thread s loads base s (it waits for flag s with it); the load is done before its shared store,
  // and send_items' barriers come between that and the block's fence and adds.
  for (int s = threadIdx.x; s < n; s += blockDim.x) base[s] = bases[s];
  send_items<kVecs>(send, c, op, Part::grid());
  send_flags(send, c);
  const FirstMask first = first_mask<kVecs>(recv, Part::grid());
  const bool ok = recv_wait(recv, c, op, seen, base);
  if (blockIdx.x == 0) {
    for (int s = threadIdx.x; ok && s < n; s += blockDim.x) bases[s] = seen[s];
    if (threadIdx.x == 0) {
      recv.h.local_signals[kCombineEpochSlot] = c;
      if (send.r.last) recv.h.local_signals[kCombinedSlot] = op;
    }
  }
  recv_sum<kVecs>(recv, c, ok, Part::grid(), false, first);
  stamp_block0(recv.h, recv.L, kCombRecvDone);  // (block 0's end: there is no last block to stamp it)
}

}  // namespace

void launch_combine_pipe(const CombineArgs& send_next, const CombineArgs& recv, bool next, int blocks, int send_blocks, cudaStream_t s) {
  coll::launch(combine_pipe_kernel, blocks, kThreads, s, send_next, recv, next, send_blocks);
}
// The one-round kernels in the layout's segment size (Layout::seg_bytes: kSegBytes or half).
void launch_combine_send(const CombineArgs& a, int blocks, cudaStream_t s) {
  if (a.L.seg_bytes == kSegBytes) coll::launch(combine_send_kernel<kSegVecs>, blocks, kThreads, s, a);
  else coll::launch(combine_send_kernel<kSegVecs / 2>, blocks, kThreads, s, a);
}
void launch_combine_recv(const CombineArgs& a, int blocks, cudaStream_t s) {
  if (a.L.seg_bytes == kSegBytes) coll::launch(combine_recv_kernel<kSegVecs>, blocks, kThreads, s, a);
  else coll::launch(combine_recv_kernel<kSegVecs / 2>, blocks, kThreads, s, a);
}
void launch_combine(const CombineArgs& send, const CombineArgs& recv, int blocks, cudaStream_t s) {
  if (send.L.seg_bytes == kSegBytes) coll::launch(combine_kernel<kSegVecs>, blocks, kThreads, s, send, recv);
  else coll::launch(combine_kernel<kSegVecs / 2>, blocks, kThreads, s, send, recv);
}
int combine_pipe_resident_blocks_per_sm() {
  int b = 0;
  SYMMEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, reinterpret_cast<const void*>(combine_pipe_kernel), kThreads, 0));
  return b;
}
int combine_resident_blocks_per_sm() {
  int least = 1 << 30;
  for (const void* k : {reinterpret_cast<const void*>(combine_kernel<kSegVecs>), reinterpret_cast<const void*>(combine_send_kernel<kSegVecs>),
                        reinterpret_cast<const void*>(combine_recv_kernel<kSegVecs>),
                        reinterpret_cast<const void*>(combine_kernel<kSegVecs / 2>),
                        reinterpret_cast<const void*>(combine_send_kernel<kSegVecs / 2>),
                        reinterpret_cast<const void*>(combine_recv_kernel<kSegVecs / 2>)}) {
    int b = 0;
    SYMMEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, kThreads, 0));
    least = b < least ? b : least;
  }
  return least;
}

}  // namespace symmem::moe::kern
