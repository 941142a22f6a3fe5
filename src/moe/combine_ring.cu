// MoE combine streamed through rings: the combine of an operation whose dispatch was streamed
// (dispatch_ring.cu), as one persistent kernel instead of a kernel a round. The grid's first
// `send_blocks` blocks send, the others sum, all at once:
//
//   Send. The send warps form a pool per rank s (this rank's own last), which claims the rows this
//   rank received from s in the last dispatch in their number order q (the routing records'
//   order, which is s's token order). A warp sums, in fp32, the outputs of this rank's experts the
//   row went to (weighted or not) and stores the bf16 partial into slot Q mod S of this rank's ring
//   on s (the combine area seen as [sender][S = 2R] rows), Q being the row's cumulative number
//   (csent: every streamed combine so far, then q), once s has released that slot's previous row
//   (Q - S): a release word per slot, here, written by s. Then it fences its stores and sets the
//   slot's ready word on s (Q + 1).
//   Sum. Warps claim this rank's tokens in order. For each rank r the token went to, its row number
//   q among this rank's rows to r (token_q, written by the dispatch's send) gives the partial's
//   cumulative number Q (crecv, then q); a lane per rank waits for that slot's ready word, the warp
//   sums the partials in rank order (the rounds' order: the same sums) into out, and each lane
//   releases its slot to r.
//   Close. The grid's last block adds the operation's rows to the cumulative counts and marks the
//   operation combined.
//
// Measured on 4 x H200 (session 22, prefill, 4096 tokens, rounds of 1024, 75% of the grid sending):
// combine 476 us against the rounds' 574-580 after the same streamed dispatch (336 GB/s of remote
// bytes), skewed 522 against 597-602; on 2 of its GPUs 209-211 against 239-243. Sending shares of
// 65% and 75% are level. bench/results/2026-11-27-h200x4-cbf878f-moe-*.
//
// Deadlock-free for any N and any interleaving. A send warp waits only for the release of the row
// S before its own in the same ring, a row of an earlier token of the same source; a sum warp waits
// only for the partials of its token. Take the earliest token t0 of a rank s not yet summed: every
// earlier token of s is summed, so every partial row of an earlier token was released. At each rank
// r the token went to, r's pool for s claims rows in number order, and every row below t0's (all
// of earlier tokens) finds its slot released, so the claims reach t0's row and the warp holding it
// stores it; t0's summing warp (the claims are in token order, and the warps that hold later tokens
// do not keep it from claiming) then finds every partial in. One pool for all ranks could starve a
// rank as in the dispatch (dispatch_ring.cu); tests/host/test_moe_combine_ring_model.cpp runs the
// protocol under random interleavings (operations back to back, rings that wrap, tokens that go
// nowhere) and finds that deadlock with one pool. Cumulative numbers and monotone words keep rows of
// different operations apart, as in the dispatch; both ends count the same rows, since each
// combine follows its dispatch on every rank and counts that dispatch's rows (RingState last_out /
// last_in, kept by the dispatch's close). A sender reads its routing records before it sets the
// ready word, so once the source has summed every token of this operation no peer reads them
// again: the source's next-but-one dispatch (the same parity) comes after that in stream order.
// Every block of the grid must be resident at once (senders spin on releases beside the summers
// that give them, and summers on partials): the host sizes the grid to what stays resident and
// takes this path only where each rank has its own GPU (the streamed dispatch's condition).
#include "moe_common.cuh"
#include "symmem/error.hpp"

namespace symmem::moe::kern {
namespace {

constexpr int kWarps = kThreads / 32;
constexpr int kCombRingBlocksPerSm = 2;
// Summers sleep at least this long between polls of their partials' ready words (the other waits
// L.backoff_ns, 200 by default). Every summer warp polls up to a lane per rank, and polled 200 ns
// apart by ~1000 summers (half the grid summing), or without a pause by ~500 (a quarter), the ready
// words and the lines the peers' partials land in were flooded: 4 x H100, session 23, prefill,
// combine 5506 us at a 50% send share (skewed 4564) against 472 (520) polling 1 us apart, and 5635
// at 75% with SYMMEM_MOE_BACKOFF_NS=0; at 75% and 200 ns 474-475 either way (2 us: 475, 5 us:
// 479, 10 us: 486). At most 512 summers, or one polling lane a warp, helped too (the latter not for
// skewed routing); relaxed polls with one acquire at the end did not.
constexpr unsigned kSumPollNs = 1000;

__device__ __forceinline__ size_t hrow_of(const Layout& L) { return static_cast<size_t>(L.hidden) * 2; }
// Slot k of sender r's ring in a rank's combine area.
__device__ __forceinline__ size_t cslot_off(const Layout& L, int r, uint64_t k) {
  return L.comb_off + (static_cast<size_t>(r) * ring_slots(L) + static_cast<size_t>(k)) * hrow_of(L);
}
__device__ __forceinline__ unsigned claim_next(uint64_t* counter) {
  unsigned v = lane_id() == 0 ? static_cast<unsigned>(atomicAdd(reinterpret_cast<unsigned long long*>(counter), 1ull)) : 0u;
  return __shfl_sync(0xffffffffu, v, 0);
}

// Send warp (blocks [0, Bs)): partial rows for its pool's rank.
__device__ void cring_send(const CombineArgs& a, uint64_t op, bool refuse) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, C = L.capacity, K = L.topk, lane = lane_id();
  const uint64_t S = ring_slots(L);
  const int opar = static_cast<int>(op & 1);
  uint64_t* st = ring_state(h, L);
  const uint64_t* release = at<uint64_t>(h, L.cring_release_off);
  const size_t hrow = hrow_of(L);
  const int segs = static_cast<int>((hrow + kSegBytes - 1) / kSegBytes);
  const int sw = static_cast<int>(blockIdx.x) * kWarps + static_cast<int>(threadIdx.x >> 5);  // (send warps >= n: the host)
  const int s = (me + 1 + sw % n) % n;
  const unsigned rows = refuse ? 0u : static_cast<unsigned>(st[RingState::last_in(n, s)]);
  const uint64_t base = st[RingState::csent(n, s)];
  for (;;) {
    const unsigned q = claim_next(st + RingState::cclaim(n, s));
    if (q >= rows) break;
    const uint64_t Q = base + q, k = Q % S;
    bool free = true;
    if (lane == 0 && Q >= S)
      free = device::wait_for(h, release + static_cast<size_t>(s) * S + k, [&](uint64_t v) { return v >= Q - S + 1; }, Cmp::kGe, Q - S + 1,
                              WaitKind::kMoeRing, s, L.backoff_ns);
    if (!__shfl_sync(0xffffffffu, free, 0)) break;
    const Meta* meta = at<Meta>(h, L.meta_off + ((static_cast<size_t>(opar) * n + s) * L.max_tokens + q) * sizeof(Meta));
    RecordEntry e;
    const unsigned keep0 = record_entry(meta, K, a.weighted, C, e);
    char* dst = at_peer<char>(h, s, cslot_off(L, me, k));
    for (int g = 0; g < segs; ++g) {
      SegmentSum sum(static_cast<size_t>(g) * kSegBytes, hrow);
      unsigned keep = keep0;
      sum_expert_rows(sum, keep, e.le, e.slot, e.w, a.expert_out, C, hrow);
      sum.store(dst);
    }
    // Every lane's stores fenced, then the slot's ready word (a release, as arrive_at_flags).
    device::fence_acq_rel();
    __syncwarp();
    if (lane == 0) device::st_relaxed(at_peer<uint64_t>(h, s, L.cring_ready_off) + static_cast<size_t>(me) * S + k, Q + 1);
  }
}

// Sum warp (blocks [Bs, gridDim.x)): this rank's tokens, claimed in order.
__device__ void cring_sum(const CombineArgs& a, bool refuse) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, lane = lane_id();
  const uint64_t S = ring_slots(L);
  uint64_t* st = ring_state(h, L);
  const uint64_t* ready = at<uint64_t>(h, L.cring_ready_off);
  const uint64_t* token_ranks = at<uint64_t>(h, L.token_ranks_off);
  const unsigned* token_q = at<unsigned>(h, L.token_q_off);
  const size_t hrow = hrow_of(L);
  const int segs = static_cast<int>((hrow + kSegBytes - 1) / kSegBytes);
  __shared__ uint64_t recv0[pad::kMaxTeam];
  for (int r = threadIdx.x; r < n; r += blockDim.x) recv0[r] = st[RingState::crecv(n, r)];
  __syncthreads();
  const int T = refuse ? 0 : a.tokens;
  for (;;) {
    const int t = static_cast<int>(claim_next(st + RingState::ctoken(n)));
    if (t >= T) break;
    const uint64_t mask = token_ranks[t];
    const int nm = __popcll(mask);  // (at most K <= 32 ranks)
    // Lane i < nm: the token's i-th rank (rank order), its partial's slot, the wait for it.
    int r = 0;
    uint64_t Q = 0, k = 0;
    bool in = true;
    if (lane < nm) {
      r = nth_rank(mask);
      Q = recv0[r] + token_q[static_cast<size_t>(t) * n + r];
      k = Q % S;
      in = device::wait_for(h, ready + static_cast<size_t>(r) * S + k, [&](uint64_t v) { return v >= Q + 1; }, Cmp::kGe, Q + 1,
                            WaitKind::kMoeRing, r, L.backoff_ns > kSumPollNs ? L.backoff_ns : kSumPollNs);
    }
    if (!__all_sync(0xffffffffu, in)) break;
    __syncwarp();
    char* o = a.out + static_cast<size_t>(t) * hrow;
    for (int g = 0; g < segs; ++g) {
      SegmentSum sum(static_cast<size_t>(g) * kSegBytes, hrow);
      for (int i0 = 0; i0 < nm; i0 += SegmentSum::kGroup) {
        const char* src[SegmentSum::kGroup];
        const float ones[SegmentSum::kGroup] = {1.f, 1.f, 1.f, 1.f};
        int count = 0;
#pragma unroll
        for (int j = 0; j < SegmentSum::kGroup; ++j) {
          const int i = i0 + j;
          const int ri = __shfl_sync(0xffffffffu, r, i & 31);
          const uint64_t ki = __shfl_sync(0xffffffffu, k, i & 31);
          src[j] = nullptr;
          if (i < nm) {
            src[j] = at<const char>(h, cslot_off(L, ri, ki));
            count = j + 1;
          }
        }
        sum.add_group<true>(src, ones, count);  // (past L1: the slots' earlier rows may sit there)
      }
      sum.store(o);
    }
    // Every lane's loads of the slots are done (their sums were stored); then the releases.
    __syncwarp();
    if (lane < nm) device::st_release(at_peer<uint64_t>(h, r, L.cring_release_off) + static_cast<size_t>(me) * S + k, Q + 1);
  }
}

// The grid's last block: a peer's overflow mark for this operation (those of the ranks this rank's
// tokens went to are visible: their marks precede their partials, which every block saw before it
// arrived; a peer it did not hear from reports at this rank's next dispatch, whose copy waits for
// every peer's announce), the operation's rows into the cumulative counts, the claims back to
// zero, the operation combined.
__device__ void cring_close(const CombineArgs& a, uint64_t op, bool refuse) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n;
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(h, L.arrive_off) + 2;
  __syncthreads();
  if (!last_block(arrive)) return;
  if (!refuse) report_peer_overflow(h, n, op, true);
  uint64_t* st = ring_state(h, L);
  for (int d = threadIdx.x; d < n; d += blockDim.x) {
    if (!refuse) {
      st[RingState::csent(n, d)] += st[RingState::last_in(n, d)];
      st[RingState::crecv(n, d)] += st[RingState::last_out(n, d)];
    }
    st[RingState::cclaim(n, d)] = 0;
  }
  if (threadIdx.x == 0) {
    st[RingState::ctoken(n)] = 0;
    if (!refuse) h.local_signals[kCombinedSlot] = op;
  }
}

__global__ void __launch_bounds__(kThreads, kCombRingBlocksPerSm) combine_ring_kernel(const __grid_constant__ CombineArgs a, int send_blocks) {
  coll::pdl_wait();
  const uint64_t op = a.h.local_signals[kOpSlot];
  // A second combine of one dispatch (or one before any) moves nothing and is reported, as the
  // rounds' (combine.cu); every rank refuses alike, so no peer waits for it.
  const bool refuse = a.h.local_signals[kCombinedSlot] >= op;
  if (refuse && blockIdx.x == 0 && threadIdx.x == 0)
    device::record_error(a.h, WaitKind::kMoe, -1, 3ull << 32, Cmp::kGt, op, a.h.local_signals[kCombinedSlot], 0);
  if (static_cast<int>(blockIdx.x) < send_blocks) cring_send(a, op, refuse);
  else cring_sum(a, refuse);
  cring_close(a, op, refuse);
}

}  // namespace

void launch_combine_ring(const CombineArgs& a, int blocks, int send_blocks, cudaStream_t s) {
  coll::launch(combine_ring_kernel, blocks, kThreads, s, a, send_blocks);
}
int combine_ring_resident_blocks_per_sm() {
  int b = 0;
  SYMMEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, reinterpret_cast<const void*>(combine_ring_kernel), kThreads, 0));
  return b;
}

}  // namespace symmem::moe::kern
