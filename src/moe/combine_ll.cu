// MoE combine after a lines dispatch (Layout::ll: one round of few tokens a rank, moe_kernels.hpp
// kLLTokens; dispatch_ll.cu). Each partial row travels back to its source as LL lines (ll.cuh: the
// operation's 16-bit flag in each 64-bit word; narrow lines of 8 payload bytes, or wide ones of 12
// where the round moves many bytes, Layout::llc_payload, llc_payload_for), so the source sums a
// rank's partial as soon as its lines are in: no fence, no flag word, no wait for the slowest
// rank's last block. The staged combine (combine.cu) stores rows, fences, adds to every rank's
// flag and sums once every flag is in. 4 x H200, pplx's shapes (combine us after the same lines
// dispatch; bench/results/*-s42c2-*, *-s43c5-*): 64 experts at one token a rank 5.0 against the
// staged 7.8, 256 experts 5.7 against 9.3, at 8 tokens 5.5 and 6.4 against 8.7 and 9.7, at 16
// 6.3 and 8.2 against 9.3 and 11.0; on 2 GPUs 5.4-6.2 against 7.5-9.3. A warp's stores of lines
// cover 32 lines in a row (Form below): at a 32-byte stride, as in session 42, 256 experts at 16
// tokens took 12.4 us and at 32 21.1 (*-s43c1-*).
//
// Send half, a warp a work item (received row, segment of 1 KiB, or 1.5 KiB in wide lines): the record of the row (source s,
// its dispatch slot j on this rank: dispatch_ll.cu writes record j of source s) gives its experts,
// slots and weights; the warp sums those expert rows in fp32 (as combine.cu) and stores the bf16
// result into s's combine slot (operation parity, this rank, j) as lines. Block 0 first writes this
// rank's header line into every rank. Receive half, a warp a (token t, segment): for each rank r of
// t's destination mask (the dispatch's, token_ranks) in rank order, the lines of slot (r, j(t, r)),
// where j(t, r) = the number of this rank's earlier tokens that went to r (the dispatch's slot of t
// on r, from the same masks); the sum in fp32, in rank order (the same sum as combine.cu), into out.
// The grid's last block then waits for every rank's header and reports a peer's overflow or bad
// index mark of this operation (moe_common.cuh, report_peer_overflow).
//
// Why it is safe, for any N and any interleaving of the ranks' progress (the dispatch's argument,
// dispatch_ll.cu, for the combine's slots):
// - The operation k is the last dispatch's (kOpSlot, written by its publisher, read in stream order)
//   and its flag is flag_of(k); one combine per dispatch (below), so no two combines write one flag.
//   A line is read only with k's flag; each 64-bit word is single-copy atomic and carries it, so a
//   matching line holds k's payload.
// - Every line a receiver reads in k is written in k: t's mask names r only where r received t's row
//   as its slot j(t, r) (both follow from the same routing), and r sends back every row it received
//   (a row whose experts were all dropped as zeros). So a stale line matters only if it carries k's
//   flag, i.e. was written a whole cycle of flags earlier on the same parity; in the two operations
//   before the flag wraps (ws::cleans), the receive grid's last block, once every block is done
//   reading, zeroes the whole area of that parity (headers and slots, read or not). So no line
//   survives into the next cycle of flags but as zero (flag 0: never a match).
// - Slot reuse: rank r writes parity p = k & 1 in its combine k and next in k + 2. Its combine
//   k + 2 follows its dispatch k + 2 (stream order), whose receive half waited for line 0 of every
//   slot that each source s writes in its dispatch k + 2, a kernel s starts only after its combine k
//   has completed (stream order: dispatch, combine, dispatch on one stream; the halves send(k),
//   recv(k), send(k + 1) likewise). So no write of k + 2 lands in s's area of parity p before s has
//   read (and, where it cleans, zeroed) it.
// - Marks: a rank that found an expert over capacity, or a bad index, marks every peer's pad with
//   k in its dispatch k, before its combine k writes its header; a receiver reports the marks of k
//   once it has every rank's header of k (after an acquire fence), so every rank hears of every
//   mark by the end of its combine, as after the staged dispatch.
// - One combine per dispatch: each block keeps the last operation it combined (Layout::
//   llc_marks_off; read at its start, written at its end, so no block depends on another having
//   started); a block that finds k there moves nothing (the second call is reported, once).
// - No block waits for another block of its grid except through lines: where both halves are one
//   kernel, a warp summing its own rank's partials waits for a warp of this grid that sends them,
//   so the host launches that kernel only within what stays resident, and two kernels elsewhere.
#include "lines.cuh"
#include "symmem/error.hpp"

namespace symmem::moe::kern {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kGroup = 4;  // ranks whose lines a warp loads at once

// A line format's work item (Layout::llc_payload): P payload bytes a line (ws::kLLNarrow 8, two
// words; ws::kLLPayload 12, three), and a lane's vectors so that they fill kLaneLines lines
// exactly (narrow 2 x 16 bytes, wide 3 x 16: a segment of 1 or 1.5 KiB, Layout::seg_bytes, in
// kLLCSegLines lines either way). Line i of the lane's lines in segment g is g x kLLCSegLines + 32 i
// + lane and carries its payload words [W i, W i + W) (vector u's four words are 4u .. 4u + 3), so
// each store (and load) of a warp covers 32 lines in a row: 512 contiguous bytes.
template <size_t P>
struct Form {
  static constexpr int kWords = static_cast<int>(P / 4);
  static constexpr int kVecs = P == ws::kLLNarrow ? 2 : 3;
  static constexpr int kLaneWords = 4 * kVecs;
  using Sum = SegmentSumT<kVecs>;
  static_assert(kLaneWords == kLLCLaneLines * kWords && 32 * kLLCLaneLines == kLLCSegLines && Sum::kBytes == 32 * kLLCLaneLines * static_cast<int>(P),
                "a lane's vectors fill its lines");
  // The lane's lines that carry some of its vectors inside the row (the vectors within it are a
  // prefix of u).
  static __device__ __forceinline__ int lines(const Sum& sum) {
    int v = 0;
#pragma unroll
    for (int u = 0; u < kVecs; ++u) v += sum.off(u) < sum.row ? 1 : 0;
    return (4 * v + kWords - 1) / kWords;
  }
};

// Rank peer's header line of (operation parity opar, sender).
__device__ __forceinline__ LLLine* llc_header(const DeviceHandle& h, const Layout& L, int peer, int opar, int sender) {
  const size_t off = L.llc_off + (static_cast<size_t>(opar) * L.n + sender) * sizeof(LLLine);
  return peer == h.rank ? at<LLLine>(h, off) : at_peer<LLLine>(h, peer, off);
}
// Rank peer's slot (operation parity opar, sender, row j).
__device__ __forceinline__ LLLine* llc_slot(const DeviceHandle& h, const Layout& L, int peer, int opar, int sender, int j) {
  const size_t line = 2 * static_cast<size_t>(L.n) + ((static_cast<size_t>(opar) * L.n + sender) * L.round + j) * L.llc_slot_lines;
  const size_t off = L.llc_off + line * sizeof(LLLine);
  return peer == h.rank ? at<LLLine>(h, off) : at_peer<LLLine>(h, peer, off);
}
// The blocks' last combined operation, by role (0: send kernel; 1: receive or both halves' kernel).
__device__ __forceinline__ uint64_t* llc_marks(const DeviceHandle& h, const Layout& L, int role) {
  return at<uint64_t>(h, L.llc_marks_off) + static_cast<size_t>(role) * L.llc_blocks;
}
// A second combine of one dispatch (or one before any): this block moves nothing; block 0 reports it.
__device__ __forceinline__ bool refused(const CombineArgs& a, uint64_t op, int role) {
  const uint64_t last = llc_marks(a.h, a.L, role)[blockIdx.x];
  const bool refuse = last >= op;
  if (refuse && blockIdx.x == 0 && threadIdx.x == 0) device::record_error(a.h, WaitKind::kMoe, -1, 3ull << 32, Cmp::kGt, op, last, 0);
  return refuse;
}

// The send half: this rank's header into every rank, then a warp a (source s, row j, segment) of
// every row a source may send (n x R rows): the round's row count from s and the row's record are
// loaded at once, and a row s did not send is skipped (its stale record unused), so the record's
// load does not wait for the count's.
template <size_t P>
__device__ __forceinline__ void llc_send(const CombineArgs& a, uint64_t op) {
  using F = Form<P>;
  using Sum = typename F::Sum;
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, C = L.capacity, opar = static_cast<int>(op & 1);
  const uint32_t flag = ws::flag_of(op);
  if (blockIdx.x == 0)
    for (int d = threadIdx.x; d < n; d += blockDim.x) put_line(llc_header(h, L, d, opar, me), 0u, 0u, flag);
  const unsigned* round_counts = at<unsigned>(h, L.round_counts_off);  // (the publisher's: one round)
  const size_t hrow = static_cast<size_t>(L.hidden) * 2;
  const int segs = row_segments(L), lane = lane_id();
  const long long total = static_cast<long long>(n) * L.round * segs;
  for (long long item = Part::grid().warp(); item < total; item += Part::grid().warps()) {
    const int row = static_cast<int>(item / segs), g = static_cast<int>(item % segs), s = row / L.round, j = row % L.round;
    const Meta* meta = at<Meta>(h, L.meta_off + ((static_cast<size_t>(opar) * n + s) * L.max_tokens + j) * sizeof(Meta));
    const int rows = static_cast<int>(round_counts[s]);
    RecordEntry e;
    unsigned keep = record_entry(meta, L.topk, a.weighted, C, e);
    if (j >= rows) continue;  // (warp-uniform)
    Sum sum(static_cast<size_t>(g) * Sum::kBytes, hrow);
    sum_expert_rows(sum, keep, e.le, e.slot, e.w, a.expert_out, C, hrow);
    uint32_t w[F::kLaneWords];
#pragma unroll
    for (int u = 0; u < F::kVecs; ++u) {
      const int4 v = pack_bf16x8(sum.acc[u]);
      w[4 * u] = static_cast<uint32_t>(v.x), w[4 * u + 1] = static_cast<uint32_t>(v.y);
      w[4 * u + 2] = static_cast<uint32_t>(v.z), w[4 * u + 3] = static_cast<uint32_t>(v.w);
    }
    LLLine* dst = llc_slot(h, L, s, opar, me, j) + static_cast<size_t>(g) * kLLCSegLines + lane;
    const int lines = F::lines(sum);
#pragma unroll
    for (int i = 0; i < kLLCLaneLines; ++i)
      if (i < lines) put_line<P>(dst + 32 * i, &w[F::kWords * i], flag);
  }
}

// Adds to `sum`, in the order given, the segment of the first `count` slots src[q] (rank peer[q]'s
// partial rows; src[q] + line0 is the lane's first line of the segment) once each of their lines
// carries `flag`: every pending line of the group is loaded in one sweep. False (the wait
// recorded) on a timeout.
template <size_t P>
__device__ __forceinline__ bool add_lines(const DeviceHandle& h, typename Form<P>::Sum& sum, const LLLine* const (&src)[kGroup],
                                          const int (&peer)[kGroup], int count, size_t line0, uint32_t flag) {
  using F = Form<P>;
  uint32_t w[kGroup][F::kLaneWords];
  const int lines = F::lines(sum);
  unsigned pending = 0;
#pragma unroll
  for (int q = 0; q < kGroup; ++q)
#pragma unroll
    for (int i = 0; i < kLLCLaneLines; ++i) {
#pragma unroll
      for (int k = 0; k < F::kWords; ++k) w[q][F::kWords * i + k] = 0u;
      if (q < count && i < lines) pending |= 1u << (q * kLLCLaneLines + i);
    }
  LinePoll p;
  while (pending != 0) {
    ws::LLWords l[kGroup][kLLCLaneLines];
#pragma unroll
    for (int q = 0; q < kGroup; ++q)
#pragma unroll
      for (int i = 0; i < kLLCLaneLines; ++i)
        if ((pending >> (q * kLLCLaneLines + i)) & 1u) l[q][i] = device::ll_load(src[q] + line0 + 32 * i);
    int miss_peer = -1;
    uint64_t miss_line = 0;
    uint32_t seen = 0;
#pragma unroll
    for (int q = 0; q < kGroup; ++q)
#pragma unroll
      for (int i = 0; i < kLLCLaneLines; ++i) {
        const unsigned bit = 1u << (q * kLLCLaneLines + i);
        if ((pending & bit) == 0) continue;
        if (ws::ll_carries(l[q][i], flag)) {
#pragma unroll
          for (int k = 0; k < F::kWords; ++k) w[q][F::kWords * i + k] = ws::ll_word<P>(l[q][i], k);
          pending &= ~bit;
        } else if (miss_peer < 0) {
          miss_peer = peer[q];
          miss_line = line0 + 32 * i;
          seen = ws::ll_seen_flag(l[q][i], flag);
        }
      }
    if (pending != 0 && !p.go_on(h, WaitKind::kMoeCombineLines, miss_peer, miss_line, flag, seen)) return false;
  }
#pragma unroll
  for (int q = 0; q < kGroup; ++q)
    if (q < count)
#pragma unroll
      for (int u = 0; u < F::kVecs; ++u)
        if (sum.off(u) < sum.row)
          add_bf16x8(sum.acc[u], int4{static_cast<int>(w[q][4 * u]), static_cast<int>(w[q][4 * u + 1]), static_cast<int>(w[q][4 * u + 2]),
                                      static_cast<int>(w[q][4 * u + 3])},
                     1.0f);
  return true;
}

static_assert(kLLMaxTokens <= 32, "a lane holds each token's mask");
// Lane u's token's destination mask (the dispatch's; T <= kLLMaxTokens), loaded by the caller
// before the send half where both are one kernel (its round trip off the sum's path).
__device__ __forceinline__ uint64_t llc_mask(const CombineArgs& a) {
  const int lane = lane_id();
  return lane < a.r.t1 - a.r.t0 ? at<const uint64_t>(a.h, a.L.token_ranks_off)[a.r.t0 + lane] : 0;
}

// The receive half: a warp a (token, segment) of this rank's tokens; then the grid's last block
// waits for every rank's header and reports the peers' marks of this operation.
template <size_t P>
__device__ __forceinline__ void llc_recv(const CombineArgs& a, uint64_t op, bool refuse, uint64_t mask) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, opar = static_cast<int>(op & 1), lane = lane_id();
  const uint32_t flag = ws::flag_of(op);
  const int T = a.r.t1 - a.r.t0;  // (t0 = 0: one round)
  const size_t hrow = static_cast<size_t>(L.hidden) * 2;
  const int segs = row_segments(L);
  const long long items = refuse ? 0 : static_cast<long long>(T) * segs;
  bool ok = true;
  for (long long item = Part::grid().warp(); ok && item < items; item += Part::grid().warps()) {
    const int t = static_cast<int>(item / segs), g = static_cast<int>(item % segs);
    typename Form<P>::Sum sum(static_cast<size_t>(g) * Form<P>::Sum::kBytes, hrow);
    const size_t line0 = static_cast<size_t>(g) * kLLCSegLines + lane;
    for (uint64_t m = __shfl_sync(kFull, mask, t); ok && m != 0;) {
      const LLLine* src[kGroup];
      int peer[kGroup], count = 0;
#pragma unroll
      for (int q = 0; q < kGroup; ++q) {
        src[q] = nullptr;
        peer[q] = -1;
        if (m != 0) {
          const int r = __ffsll(static_cast<long long>(m)) - 1;
          m &= m - 1;
          const int j = __popc(__ballot_sync(kFull, lane < t && ((mask >> r) & 1u) != 0));  // t's slot on r: earlier tokens to r
          src[q] = llc_slot(h, L, me, opar, r, j);
          peer[q] = r;
          count = q + 1;
        }
      }
      ok = __all_sync(kFull, add_lines<P>(h, sum, src, peer, count, line0, flag));
    }
    if (ok) sum.store(a.out + static_cast<size_t>(t) * hrow);
  }
  if (refuse || blockIdx.x != gridDim.x - 1) return;
  // Every rank's header of this operation: its marks of it are in this rank's pad by now. Thread r
  // polls rank r's header by acquire loads of its first word (whose top 16 bits are the flag), so
  // its loads of r's marks in report_peer_overflow (thread r again) come after (no fence: a fence
  // would wait for this thread's own remote stores).
  bool heard = true;
  for (int r = threadIdx.x; r < n; r += blockDim.x) {
    const uint64_t* w0 = &llc_header(h, L, me, opar, r)->w0;
    LinePoll p;
    for (uint64_t v = device::ld_acquire(w0); (v >> 48) != flag; v = device::ld_acquire(w0))
      if (!p.go_on(h, WaitKind::kMoeCombineLines, r, ~0ull, flag, static_cast<uint32_t>(v >> 48))) {
        heard = false;
        break;
      }
  }
  if (__syncthreads_and(heard)) report_peer_overflow(h, n, op, true);
}

// In the two operations before the flag wraps: once every block of the receiving grid is done
// reading, its last block zeroes this rank's area of the operation's parity (headers and slots).
__device__ __forceinline__ void llc_clean(const CombineArgs& a, uint64_t op) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  if (!ws::cleans(op) || !last_block(at<unsigned>(h, L.arrive_off) + 3)) return;
  const int n = L.n, opar = static_cast<int>(op & 1);
  for (int s = threadIdx.x; s < n; s += blockDim.x) device::ll_zero(llc_header(h, L, h.rank, opar, s));
  const long long lines = static_cast<long long>(n) * L.round * L.llc_slot_lines;  // (a parity's slots are contiguous)
  LLLine* first = llc_slot(h, L, h.rank, opar, 0, 0);
  for (long long i = threadIdx.x; i < lines; i += blockDim.x) device::ll_zero(first + i);
}

template <size_t P>
__global__ void __launch_bounds__(kThreads) combine_ll_send_kernel(CombineArgs a) {
  coll::pdl_wait();
  const uint64_t op = a.h.local_signals[kOpSlot];
  if (refused(a, op, 0)) return;
  llc_send<P>(a, op);
  __syncthreads();
  if (threadIdx.x == 0) llc_marks(a.h, a.L, 0)[blockIdx.x] = op;
}
template <size_t P>
__global__ void __launch_bounds__(kThreads) combine_ll_recv_kernel(CombineArgs a) {
  coll::pdl_wait();
  const uint64_t op = a.h.local_signals[kOpSlot];
  const bool refuse = refused(a, op, 1);
  llc_recv<P>(a, op, refuse, llc_mask(a));
  llc_clean(a, op);
  if (threadIdx.x == 0 && !refuse) llc_marks(a.h, a.L, 1)[blockIdx.x] = op;
}
// Both halves in one grid (every block resident: a warp may wait for lines another block of this
// grid sends). Its blocks keep both roles' marks (the halves may be called apart later).
template <size_t P>
__global__ void __launch_bounds__(kThreads) combine_ll_kernel(const __grid_constant__ CombineArgs s, const __grid_constant__ CombineArgs r) {
  coll::pdl_wait();
  const uint64_t op = s.h.local_signals[kOpSlot];
  const bool refuse = refused(s, op, 1);
  const uint64_t mask = llc_mask(r);
  if (!refuse) llc_send<P>(s, op);
  llc_recv<P>(r, op, refuse, mask);
  llc_clean(r, op);
  if (threadIdx.x == 0 && !refuse) llc_marks(s.h, s.L, 0)[blockIdx.x] = llc_marks(s.h, s.L, 1)[blockIdx.x] = op;
}

}  // namespace

// (Layout::llc_payload picks the line format, the same on every rank: make_layout.)
void launch_combine_ll(const CombineArgs& send, const CombineArgs& recv, int blocks, cudaStream_t s) {
  if (send.L.llc_payload == ws::kLLNarrow) coll::launch(combine_ll_kernel<ws::kLLNarrow>, blocks, kThreads, s, send, recv);
  else coll::launch(combine_ll_kernel<ws::kLLPayload>, blocks, kThreads, s, send, recv);
}
void launch_combine_ll_send(const CombineArgs& a, int blocks, cudaStream_t s) {
  if (a.L.llc_payload == ws::kLLNarrow) coll::launch(combine_ll_send_kernel<ws::kLLNarrow>, blocks, kThreads, s, a);
  else coll::launch(combine_ll_send_kernel<ws::kLLPayload>, blocks, kThreads, s, a);
}
void launch_combine_ll_recv(const CombineArgs& a, int blocks, cudaStream_t s) {
  if (a.L.llc_payload == ws::kLLNarrow) coll::launch(combine_ll_recv_kernel<ws::kLLNarrow>, blocks, kThreads, s, a);
  else coll::launch(combine_ll_recv_kernel<ws::kLLPayload>, blocks, kThreads, s, a);
}
int combine_ll_resident_blocks_per_sm() {
  int least = 1 << 30;
  for (const void* k : {reinterpret_cast<const void*>(combine_ll_kernel<ws::kLLNarrow>), reinterpret_cast<const void*>(combine_ll_send_kernel<ws::kLLNarrow>),
                        reinterpret_cast<const void*>(combine_ll_recv_kernel<ws::kLLNarrow>), reinterpret_cast<const void*>(combine_ll_kernel<ws::kLLPayload>),
                        reinterpret_cast<const void*>(combine_ll_send_kernel<ws::kLLPayload>),
                        reinterpret_cast<const void*>(combine_ll_recv_kernel<ws::kLLPayload>)}) {
    int b = 0;
    SYMMEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, kThreads, 0));
    least = b < least ? b : least;
  }
  return least;
}

}  // namespace symmem::moe::kern
