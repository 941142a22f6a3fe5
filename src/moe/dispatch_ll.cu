// MoE dispatch of small rounds through LL lines (Layout::ll: one round of at most kLLTokens tokens
// a rank). A token's row, its routing and the count of rows a source sends a rank travel as narrow
// LL lines (ll.cuh: 8 payload bytes and the operation's 16-bit flag in every 64-bit word), so the
// receiver learns that a line has landed from the line itself: no fence, no flag word, no remote
// atomic on the path. The staged dispatch (dispatch.cu) pays for one token a chain of remote round
// trips (the senders' expert claims, the stores' fence, the flag) before the receiver's own chain
// (the record, the row, the stores); here the chain is one one-way trip and the receiver's local
// work, with no election: each slot's block claims its row's expert rows with local atomics and
// writes the routing record, and one more block (the publisher) counts every expert's rows from
// the routing lines alone and writes the counts, the round counts and the operation that the
// combine reads (combine.cu runs unchanged after it). 4 x H200, pplx's shapes (session 41,
// bench/results/*-s41c2-*, *-s41c4-*; dispatch us): 64 experts at one token a rank 6.4-6.8 against
// the staged dispatch's 10.1-10.3 and NCCL's padded all-to-all's 7.2; 256 experts 7.3-7.6 against
// 11.1-11.5 and 7.7; at 8 tokens 6.9 and 8.4-8.5 against 10.5-10.9 and 11.5-11.6 (NCCL 8.1, 8.4).
// The counts after an election (the grid's last block, once every claim was in) took 1.2-1.4 us
// more.
//
// Lines, in each rank's area at Layout::ll_off: slot (operation parity, source s, row j), j < R, of
// Layout::ll_slot_lines lines: line 0 the row's source token (or ~0: no row j from s in this
// operation) and the number of rows s sends this rank, lines 1..K entry k's local expert (or -1)
// and weight, then the row (payload, then its scale words). Source s writes line 0 of every slot
// (s, j) of every rank in every operation, the rest only of its rows; the rank a row goes to and
// its slot follow from the operation's routing alone (a token's slot on rank d is the number of
// s's earlier tokens that go to d), so no claim crosses the links.
//
// Why it is safe, for any N and any interleaving of the ranks' progress:
// - A line is read only with the flag of its operation k, flag_of(k) (workspace.hpp); both 64-bit
//   words of a line carry it and each is single-copy atomic, so a matching line holds k's payload.
//   Line 0 is written in every operation, so its stale value is k - 2's (another flag). The other
//   lines of slot (s, j) are read only once line 0 of k says that s sent a row j, and s writes all
//   of a row's lines in k; a stale one carries an earlier operation's flag, the same as k's only a
//   whole cycle of kLLFlagMax operations earlier, and the two operations before the flag wraps
//   (ws::cleans) zero them once every reader is done: a row's lines by the slot's block (their
//   only reader), the routing lines by the grid's last block to finish (the slot's block and the
//   publisher read them; every block arrives after its reads). So no line survives into the next
//   cycle of flags but as zero (flag 0: never a match).
// - Slot reuse: rank s writes parity p = k & 1 in operation k and next in k + 2. s's operation
//   k + 2 starts after its operation k + 1 read, on every slot (r, j) of every rank r, line 0 of
//   r's operation k + 1, which r writes only in its dispatch k + 1, a kernel that starts after r's
//   dispatch k has completed (stream order; `pdl_wait`), i.e. after r has read and, where it
//   cleans, zeroed its slots of parity p. So no write of k + 2 can land on a slot of k before its
//   readers are done with it. The halves (dispatch_send, dispatch_recv) keep this: send(k),
//   recv(k), send(k + 1) run in that order on one stream.
// - Claims without a reset: the expert counters of parity p are never zeroed; operation k's rows
//   take counter - base[k mod 4]. The counter holds base[k mod 4] when k starts: by induction, k -
//   2's publisher wrote base[k mod 4] = base[(k - 2) mod 4] + (k - 2's rows of that expert, counted
//   from the routing lines: exactly the entries that claimed), and every claim of k - 2 was made in
//   an earlier kernel. So k's rows take 0 .. count - 1, each once, whatever the claims' order; k's
//   publisher writes base[(k + 2) mod 4] while k's claims read base[k mod 4] (32-bit, modulo 2^32).
// - What the slots' blocks and the publisher write for the combine (records by (parity, source,
//   row), round counts, counts, the operation) is local and read in stream order.
// - The operation: every block keeps its own counter (Layout::ll_ops_off), read at its start and
//   written at its end, so no block reads a value another block of its grid has already raised.
// tests/host/test_moe_lines_model.cpp runs this under random interleavings (lines landing in any
// order, flags of a short period), and shows that without the zeroing a stale line is taken, and
// that a slot's block zeroing the routing lines it has read breaks the publisher.
// - The send and receive halves are two kernels; after dispatch()'s send kernel the receive kernel
//   runs beside it (dispatch_ll_recv_kernel) once every send block runs: a receive block waits only
//   for lines, which the running send blocks and the peers store without waiting for anything, so
//   no receive block can keep a send block from running, and no block waits for another block of
//   its own grid. (4 x H200, session 43, bench/results/*-s43c6-*: 64e 16 t 8.38 -> 7.34 us, 256e
//   32 t 13.6 -> 12.7, one token 7.35 -> 5.95. Session 44 removed the form with both halves in one
//   resident grid: beside it, two kernels took the pair 1-10% faster at 4 GPUs and within -7% to
//   +3% at 2, *-s44c1-*.)
// Over capacity is reported by the publisher and marked in every peer's pad, a bad expert index by
// the sending block (and marked so); a peer reports a mark in its combine of that operation
// (moe_common.cuh, report_peer_overflow), as after the staged dispatch.
#include "lines.cuh"
#include "symmem/error.hpp"

namespace symmem::moe::kern {
namespace {

constexpr int kWarps = kThreads / 32;
constexpr int kBatch = 8;  // row lines a thread loads before it stores any (loads in flight together)
constexpr int kPublish = 4;  // routing lines the publisher's threads poll at once each
constexpr int kRouted = kLLMaxTokens / kWarps;  // tokens a warp routes at most
static_assert(kRouted * kWarps == kLLMaxTokens, "the warps route every token");
constexpr uint32_t kNoRow = 0xFFFFFFFFu;
constexpr unsigned kFull = 0xffffffffu;

// Slot (source src, row j) of operation parity opar in rank peer's line area.
__device__ __forceinline__ LLLine* ll_slot(const DeviceHandle& h, const Layout& L, int peer, int opar, int src, int j) {
  const size_t off = L.ll_off + ((static_cast<size_t>(opar) * L.n + src) * L.round + j) * L.ll_slot_lines * sizeof(LLLine);
  return peer == h.rank ? at<LLLine>(h, off) : at_peer<LLLine>(h, peer, off);
}

// Line i of token t's row message: its payload, then its scale words.
__device__ __forceinline__ uint2 row_line(const char* row, size_t payload, const uint32_t* scales, int words, int i) {
  const size_t off = static_cast<size_t>(i) * 8;
  if (off < payload) return *reinterpret_cast<const uint2*>(row + off);
  const int w = static_cast<int>((off - payload) / 4);
  return make_uint2(scales[w], w + 1 < words ? scales[w + 1] : 0u);
}

// The send half, every block: warp u routes token u of the round (all of them, so each block knows
// every row's slot on every rank); block b sends token b to each rank it goes to (line 0, the K
// routing lines, the row) and block 0 writes line 0 of every slot no row of this rank fills.
template <class Idx, bool kMany>
__device__ __forceinline__ void ll_send(const DispatchArgs& a, uint64_t op) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, K = L.topk, El = L.experts_local, R = L.round, me = h.rank, opar = static_cast<int>(op & 1);
  const uint32_t flag = ws::flag_of(op);
  const int T = a.r.t1 - a.r.t0, warp = static_cast<int>(threadIdx.x >> 5), lane = lane_id(), b = static_cast<int>(blockIdx.x);
  __shared__ uint64_t smask[kLLMaxTokens];
  __shared__ int sslot[pad::kMaxTeam], scount[pad::kMaxTeam];
  stamp0(h, L, kDispSendStart);
  // Warp w routes tokens w, w + kWarps, ...; it keeps the lanes' entries of this block's token.
  // Rounds of more than kLLTokens (kMany): every entry a warp routes is loaded before its first
  // mask (one round trip, not one a token).
  int expert = -1, dest = -1;
  long long v = -1;
  if constexpr (kMany) {
    long long vs[kRouted];
#pragma unroll
    for (int k = 0; k < kRouted; ++k) vs[k] = warp + k * kWarps < T ? token_entry<Idx>(a.topk_idx, a.r.t0 + warp + k * kWarps, K) : -1;
#pragma unroll
    for (int k = 0; k < kRouted; ++k) {
      const int u = warp + k * kWarps;
      if (u >= T) break;
      int e, ds;
      const uint64_t m = token_mask_of(vs[k], a.num_experts, El, e, ds);
      if (lane == 0) smask[u] = m;
      if (u == b) expert = e, dest = ds, v = vs[k];
    }
  } else {
    for (int u = warp; u < T; u += kWarps) {
      int e, ds;
      long long vv;
      const uint64_t m = token_mask<Idx>(a.topk_idx, a.r.t0 + u, K, a.num_experts, El, e, ds, vv);
      if (lane == 0) smask[u] = m;
      if (u == b) expert = e, dest = ds, v = vv;
    }
  }
  __syncthreads();
  if constexpr (kMany) stamp0(h, L, kLinesRouted);
  if constexpr (kMany) {  // warp w counts ranks w, w + kWarps, ...: lane u holds token u's mask (T <= R <= 32; b < R, the grid)
    const uint64_t mk = lane < T ? smask[lane] : 0;
    for (int d = warp; d < n; d += kWarps) {
      const unsigned in = __ballot_sync(kFull, ((mk >> d) & 1u) != 0);
      if (lane == 0) {
        sslot[d] = __popc(in & ((1u << b) - 1u));
        scount[d] = __popc(in);
      }
    }
  } else {
    for (int d = threadIdx.x; d < n; d += blockDim.x) {
      int before = 0, all = 0;
      for (int u = 0; u < T; ++u) {
        const int in = static_cast<int>((smask[u] >> d) & 1u);
        all += in;
        before += u < b ? in : 0;
      }
      sslot[d] = before;
      scount[d] = all;
    }
  }
  __syncthreads();
  if constexpr (kMany) stamp0(h, L, kLinesCounted);
  if (b == 0)
    for (int i = threadIdx.x; i < n * R; i += blockDim.x) {
      const int d = i / R, j = i % R;
      if (j >= scount[d]) put_line(ll_slot(h, L, d, opar, me, j), kNoRow, static_cast<uint32_t>(scount[d]), flag);
    }
  if (b >= T) return;
  const int t = a.r.t0 + b;
  const uint64_t mask = smask[b];
  if (warp == b % kWarps) {
    if (routed_badly(expert, v)) {  // reported here, and marked in every peer's pad (no publisher reads a note here)
      device::record_error(h, WaitKind::kMoe, -1, (1ull << 32) | static_cast<unsigned>(t), Cmp::kLt, static_cast<uint64_t>(a.num_experts),
                           static_cast<uint64_t>(v), 0);
      for (int d = 0; d < n; ++d)
        if (d != me) device::st_release(h.signals[d] + bad_index_flag(me), op);
    }
    if (lane == 0) at<uint64_t>(h, L.token_ranks_off)[t] = mask;
    const float wk = lane < K && a.weights != nullptr ? a.weights[static_cast<size_t>(t) * K + lane] : 1.0f;
    for (uint64_t m = mask; m != 0; m &= m - 1) {
      const int d = __ffsll(static_cast<long long>(m)) - 1;
      LLLine* sl = ll_slot(h, L, d, opar, me, sslot[d]);
      if (lane == 0) put_line(sl, static_cast<uint32_t>(t), static_cast<uint32_t>(scount[d]), flag);
      if (lane < K) put_line(sl + 1 + lane, static_cast<uint32_t>(dest == d ? expert - d * El : -1), __float_as_uint(wk), flag);
    }
  }
  if constexpr (kMany) stamp0(h, L, kLinesHeaders);
  const size_t payload = static_cast<size_t>(L.hidden) * L.elem();
  const int lines = static_cast<int>(L.ll_slot_lines) - 1 - K;
  const char* row = a.x + static_cast<size_t>(t) * payload;
  const uint32_t* sc = L.scale_words ? a.scales + static_cast<size_t>(t) * L.scale_words : nullptr;
  for (int i0 = static_cast<int>(threadIdx.x); i0 < lines; i0 += kBatch * static_cast<int>(blockDim.x)) {
    uint2 w[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int i = i0 + k * static_cast<int>(blockDim.x);
      if (i < lines) w[k] = row_line(row, payload, sc, L.scale_words, i);
    }
    for (uint64_t m = mask; m != 0; m &= m - 1) {
      const int d = __ffsll(static_cast<long long>(m)) - 1;
      LLLine* rl = ll_slot(h, L, d, opar, me, sslot[d]) + 1 + K;
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        const int i = i0 + k * static_cast<int>(blockDim.x);
        if (i < lines) put_line(rl + i, w[k].x, w[k].y, flag);
      }
    }
  }
  if constexpr (kMany) stamp0(h, L, kDispSendWorked);
}

// Warp-wide: lane 0 polls line 0 of a slot, lanes 1..K its routing lines (the others only line 0:
// a slot with no row has only line 0 of this operation). `mine`: the lane's line. False (the error
// recorded) on a timeout.
__device__ __forceinline__ bool poll_header(const DeviceHandle& h, const LLLine* slot, int K, uint32_t flag, int src, uint2& mine) {
  const int lane = lane_id();
  bool have = lane > K;
  LinePoll p;
  for (;;) {
    uint32_t seen = 0;
    if (!have) {
      const ws::LLWords l = device::ll_load(slot + lane);
      have = ws::ll_carries(l, flag);
      if (have) mine = line_words(l);
      seen = ws::ll_seen_flag(l, flag);
    }
    const bool head = __shfl_sync(kFull, have, 0);
    const uint32_t tok = __shfl_sync(kFull, mine.x, 0);
    const unsigned pending = __ballot_sync(kFull, !have);
    if (head && (tok == kNoRow || pending == 0)) return true;
    const int first = __ffs(static_cast<int>(pending)) - 1;
    seen = __shfl_sync(kFull, seen, first < 0 ? 0 : first);
    bool go = true;
    if (lane == 0) go = p.go_on(h, WaitKind::kMoeLines, src, static_cast<uint64_t>(first < 0 ? 0 : first), flag, seen);
    if (!__shfl_sync(kFull, go, 0)) return false;
  }
}

// This thread's lines first + k * blockDim.x (k < kBatch) of a row, all loaded before any is
// checked. False (the error recorded) on a timeout.
__device__ __forceinline__ bool poll_rows(const DeviceHandle& h, const LLLine* rows, int lines, int first, uint32_t flag, int src,
                                          uint2 (&w)[kBatch]) {
  unsigned pending = 0;
#pragma unroll
  for (int k = 0; k < kBatch; ++k)
    if (first + k * static_cast<int>(blockDim.x) < lines) pending |= 1u << k;
  LinePoll p;
  while (pending != 0) {
    ws::LLWords l[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if ((pending >> k) & 1u) l[k] = device::ll_load(rows + first + k * static_cast<int>(blockDim.x));
    uint32_t seen = 0;
    int at_line = -1;
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (((pending >> k) & 1u) == 0) continue;
      if (ws::ll_carries(l[k], flag)) {
        w[k] = line_words(l[k]);
        pending &= ~(1u << k);
      } else if (at_line < 0) {
        at_line = first + k * static_cast<int>(blockDim.x);
        seen = ws::ll_seen_flag(l[k], flag);
      }
    }
    if (pending != 0 && !p.go_on(h, WaitKind::kMoeLines, src, static_cast<uint64_t>(at_line), flag, seen)) return false;
  }
  return true;
}

// This thread's row lines into each kept expert row (payload) or its scale words.
__device__ __forceinline__ void store_rows(const Layout& L, const DispatchRecvArgs& a, const size_t* out_row, int ndst, int first,
                                           const uint2 (&w)[kBatch], int lines) {
  const size_t payload = static_cast<size_t>(L.hidden) * L.elem();
#pragma unroll
  for (int k = 0; k < kBatch; ++k) {
    const int i = first + k * static_cast<int>(blockDim.x);
    if (i >= lines) continue;
    const size_t off = static_cast<size_t>(i) * 8;
    if (off < payload) {
      for (int q = 0; q < ndst; ++q) *reinterpret_cast<uint2*>(a.recv_x + out_row[q] * payload + off) = w[k];
    } else {
      const int sw = static_cast<int>((off - payload) / 4);
      for (int q = 0; q < ndst; ++q) {
        uint32_t* d = a.recv_scales + out_row[q] * L.scale_words + sw;
        d[0] = w[k].x;
        if (sw + 1 < L.scale_words) d[1] = w[k].y;
      }
    }
  }
}

// The receive half's op counters (Layout::ll_ops_off): [role][block], role 0 the send kernel's
// blocks, 1 the receive kernel's. A block reads its own at its start and writes
// it at its end, so no block depends on another having started (a grid-wide counter raised by one
// block could be read by a block that starts after it).
__device__ __forceinline__ uint64_t* ll_ops(const DeviceHandle& h, const Layout& L, int role) {
  return at<uint64_t>(h, L.ll_ops_off) + static_cast<size_t>(role) * (static_cast<size_t>(L.n) * L.round + 1);
}
// The claim bases (Layout::ll_base_off, [4][E_local]): an expert's counter of parity p is never
// zeroed; operation k's rows take counter - base[k mod 4] (every claim of k - 2 on it was counted
// there by k - 2's publisher, which wrote base[k mod 4] in an earlier kernel).
__device__ __forceinline__ unsigned* ll_base(const DeviceHandle& h, const Layout& L, uint64_t op) {
  return at<unsigned>(h, L.ll_base_off) + static_cast<size_t>(op & 3) * L.experts_local;
}

// A slot of this rank, by its owner block: line 0 and the routing (every warp; warp 0 claims the
// expert rows with local atomics, less the base, and writes the record), the row into each kept
// expert row.
template <bool kMany>
__device__ __forceinline__ void ll_recv_slot(const DispatchRecvArgs& a, uint64_t op, int item) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, K = L.topk, El = L.experts_local, C = L.capacity, opar = static_cast<int>(op & 1);
  const uint32_t flag = ws::flag_of(op);
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = lane_id(), lines = static_cast<int>(L.ll_slot_lines) - 1 - K;
  __shared__ size_t out_row[kMaxTopk];
  __shared__ int ndst;
  const int s = item % n, j = item / n;
  LLLine* slot = ll_slot(h, L, h.rank, opar, s, j);
  if (threadIdx.x == 0) ndst = 0;
  __syncthreads();
  uint2 mine = make_uint2(0, 0);
  if constexpr (kMany) stamp0(h, L, kDispRecvStart);
  const bool ok = poll_header(h, slot, K, flag, s, mine);
  if constexpr (kMany) stamp0(h, L, kDispRecvFlagsIn);
  const uint32_t tok = __shfl_sync(kFull, mine.x, 0);
  const bool row = ok && tok != kNoRow;
  uint2 w[kBatch];
  const int first = static_cast<int>(threadIdx.x);
  bool rows_ok = true;
  if (row && warp != 0) rows_ok = poll_rows(h, slot + 1 + K, lines, first, flag, s, w);
  if (row && warp == 0) {
    // Lane k + 1 claims entry k's row in its local expert (up to the capacity) and writes the record.
    int le = -1;
    unsigned sl = static_cast<unsigned>(C);
    if (lane >= 1 && lane <= K) {
      le = static_cast<int>(mine.x);
      if (le >= 0 && le < El) sl = atomicAdd(expert_counters(h, L, opar) + le, 1u) - ll_base(h, L, op)[le];
      else le = -1;
    }
    const bool kept = le >= 0 && sl < static_cast<unsigned>(C);
    Meta* meta = at<Meta>(h, L.meta_off + ((static_cast<size_t>(opar) * n + s) * L.max_tokens + j) * sizeof(Meta));
    if (lane >= 1 && lane <= K) {
      meta->expert[lane - 1] = le;
      meta->weight[lane - 1] = __uint_as_float(mine.y);
      meta->slot[lane - 1] = kept ? static_cast<int>(sl) : -1;
    }
    if (lane == 0) meta->src_token = static_cast<int>(tok);
    const unsigned keep = __ballot_sync(kFull, kept);
    if (kept) out_row[__popc(keep & ((1u << lane) - 1u))] = static_cast<size_t>(le) * C + sl;
    if (lane == 0) ndst = __popc(keep);
  }
  __syncthreads();
  if (row && warp == 0) rows_ok = poll_rows(h, slot + 1 + K, lines, first, flag, s, w);
  if (row && rows_ok) store_rows(L, a, out_row, ndst, first, w, lines);
  // Rows longer than one batch a thread: the rest, a batch at a time.
  for (int f = first + kBatch * static_cast<int>(blockDim.x); row && rows_ok && f < lines; f += kBatch * static_cast<int>(blockDim.x)) {
    rows_ok = poll_rows(h, slot + 1 + K, lines, f, flag, s, w);
    if (rows_ok) store_rows(L, a, out_row, ndst, f, w, lines);
  }
  if constexpr (kMany) stamp0(h, L, kDispRecvWorked);
  if (ws::cleans(op)) {  // the row's lines (only this block reads them) back to zero; the routing lines: ll_recv
    __syncthreads();
    for (int i = 1 + K + static_cast<int>(threadIdx.x); i < static_cast<int>(L.ll_slot_lines); i += static_cast<int>(blockDim.x))
      device::ll_zero(slot + i);
  }
}

// The publisher's reads of the routing lines: thread i's items i + m x blockDim.x (item q x per + l:
// slot q's line l), kP of them polled at once (every pending one loaded in one sweep): line 0 gives
// the rows a source sends (slot (s, 0) is item s), a routing line its local expert's count.
template <int kP>
__device__ __forceinline__ void publish_reads(const DeviceHandle& h, const Layout& L, int opar, uint32_t flag, unsigned* hist,
                                              unsigned* rows_from) {
  const int n = L.n, El = L.experts_local, slots = n * L.round, per = 1 + L.topk;
  for (int i0 = threadIdx.x; i0 < slots * per; i0 += kP * blockDim.x) {
    unsigned pending = 0;
#pragma unroll
    for (int k = 0; k < kP; ++k)
      if (i0 + k * static_cast<int>(blockDim.x) < slots * per) pending |= 1u << k;
    LinePoll p;
    while (pending != 0) {
      ws::LLWords l0[kP], ll[kP];
#pragma unroll
      for (int k = 0; k < kP; ++k) {
        l0[k] = ll[k] = ws::LLWords{0, 0};
        const int i = i0 + k * static_cast<int>(blockDim.x), q = i / per, l = i % per;
        if ((pending >> k) & 1u) {
          const LLLine* slot = ll_slot(h, L, h.rank, opar, q % n, q / n);
          l0[k] = device::ll_load(slot);
          if (l > 0) ll[k] = device::ll_load(slot + l);
        }
      }
      int miss_src = -1;
      uint64_t miss_line = 0;
      uint32_t seen = 0;
#pragma unroll
      for (int k = 0; k < kP; ++k) {
        const int i = i0 + k * static_cast<int>(blockDim.x), q = i / per, l = i % per;
        bool done = ((pending >> k) & 1u) == 0;
        if (!done && ws::ll_carries(l0[k], flag)) {
          const uint2 head = line_words(l0[k]);
          if (l == 0) {
            if (q < n) rows_from[q] = head.y;  // (slot (s, 0) is item s)
            done = true;
          } else if (head.x == kNoRow) {
            done = true;
          } else if (ws::ll_carries(ll[k], flag)) {
            const int le = static_cast<int>(line_words(ll[k]).x);
            if (le >= 0 && le < El) atomicAdd(&hist[le], 1u);
            done = true;
          }
        }
        if (done) {
          pending &= ~(1u << k);
        } else if (miss_src < 0) {  // (l > 0 here unless line 0 is out)
          const bool head_in = ws::ll_carries(l0[k], flag);
          miss_src = q % n;
          miss_line = static_cast<uint64_t>(head_in ? l : 0);
          seen = head_in ? ws::ll_seen_flag(ll[k], flag) : ws::ll_seen_flag(l0[k], flag);
        }
      }
      if (pending != 0 && !p.go_on(h, WaitKind::kMoeLines, miss_src, miss_line, flag, seen)) break;
    }
  }
}

// The publisher block: line 0 and the routing lines of every slot (read only), from which the
// operation's expert counts follow without waiting for the owners' claims: the counts (clamped to
// the capacity; over it, reported here and marked in every peer's pad), the claim bases of
// operation op + 2, the round's row count of every source, a peer's marks of the last operation,
// and the operation for the combine.
template <bool kMany>
__device__ __forceinline__ void ll_publish(const DispatchRecvArgs& a, uint64_t op) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, K = L.topk, El = L.experts_local, C = L.capacity, slots = n * L.round, per = 1 + K, opar = static_cast<int>(op & 1);
  const uint32_t flag = ws::flag_of(op);
  __shared__ unsigned hist[kLLMaxExperts], base[kLLMaxExperts];
  __shared__ unsigned rows_from[pad::kMaxTeam];
  // The claim bases of op (written by op - 2's publisher, an earlier kernel) load now, their round
  // trip under the routing lines' wait rather than after it.
  const unsigned* base_op = ll_base(h, L, op);
  for (int le = threadIdx.x; le < El; le += blockDim.x) {
    hist[le] = 0;
    base[le] = base_op[le];
  }
  for (int q = threadIdx.x; q < n; q += blockDim.x) rows_from[q] = 0;
  __syncthreads();
  if constexpr (kMany) {
    publish_reads<kPublish>(h, L, opar, flag, hist, rows_from);
  } else {  // (one line at a time: publish_reads' batches cost the one-token path, launch_send)
    for (int i = threadIdx.x; i < slots * per; i += blockDim.x) {
      const int q = i / per, l = i % per;
      const LLLine* slot = ll_slot(h, L, h.rank, opar, q % n, q / n);
      LinePoll p;
      for (;;) {
        const ws::LLWords l0 = device::ll_load(slot);
        const ws::LLWords ll = l > 0 ? device::ll_load(slot + l) : l0;
        if (ws::ll_carries(l0, flag)) {
          const uint2 head = line_words(l0);
          if (l == 0) {
            if (q < n) rows_from[q] = head.y;  // (slot (s, 0) is item s)
            break;
          }
          if (head.x == kNoRow) break;
          if (ws::ll_carries(ll, flag)) {
            const int le = static_cast<int>(line_words(ll).x);
            if (le >= 0 && le < El) atomicAdd(&hist[le], 1u);
            break;
          }
        }
        const ws::LLWords miss = ws::ll_carries(l0, flag) ? ll : l0;  // (by value: a reference to either kept both in local memory)
        const uint64_t at = static_cast<uint64_t>(ws::ll_carries(l0, flag) ? l : 0);
        if (!p.go_on(h, WaitKind::kMoeLines, q % n, at, flag, ws::ll_seen_flag(miss, flag))) break;
      }
    }
  }
  __syncthreads();
  if constexpr (kMany)
    if (threadIdx.x == 0) stamp(h, L, kDispRecvElected);  // (every routing line in: after the block's barrier)
  unsigned* next = ll_base(h, L, op + 2);
  int over = 0;
  for (int le = threadIdx.x; le < El; le += blockDim.x) {
    const unsigned c = hist[le];
    next[le] = base[le] + c;
    a.expert_counts[le] = static_cast<int>(c < static_cast<unsigned>(C) ? c : static_cast<unsigned>(C));
    if (c > static_cast<unsigned>(C)) {
      over = 1;
      device::record_error(h, WaitKind::kMoe, -1, (2ull << 32) | static_cast<unsigned>(le), Cmp::kLe, static_cast<uint64_t>(C), c, 0);
    }
  }
  if (__syncthreads_or(over))
    for (int d = threadIdx.x; d < n; d += blockDim.x)
      if (d != h.rank) device::st_release(h.signals[d] + overflow_flag(h.rank), op);
  for (int s = threadIdx.x; s < n; s += blockDim.x) at<unsigned>(h, L.round_counts_off)[s] = rows_from[s];  // (one round: round 0's)
  report_peer_overflow(h, n, op - 1, true);
  if (threadIdx.x == 0) h.local_signals[kOpSlot] = op;
  if constexpr (kMany)
    if (threadIdx.x == 0) stamp(h, L, kDispRecvDone);
}

// The receive half: blocks [0, n x R) a slot each, block n x R the publisher. In the two
// operations before the flag wraps, the last block to finish zeroes every slot's routing lines
// (the owner and the publisher read them; every block arrives once done reading).
template <bool kMany>
__device__ __forceinline__ void ll_recv(const DispatchRecvArgs& a, uint64_t op) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int slots = L.n * L.round, b = static_cast<int>(blockIdx.x);
  if (b < slots) ll_recv_slot<kMany>(a, op, b);
  else ll_publish<kMany>(a, op);
  if (ws::cleans(op) && last_block(at<unsigned>(h, L.arrive_off) + 1)) {
    const int per = 1 + L.topk, opar = static_cast<int>(op & 1);
    for (int i = threadIdx.x; i < slots * per; i += blockDim.x)
      if (i % per != 0) {
        LLLine* line = ll_slot(h, L, h.rank, opar, (i / per) % L.n, (i / per) / L.n) + i % per;
        device::ll_zero(line);
      }
  }
}

template <class Idx, bool kMany>
__global__ void __launch_bounds__(kThreads) dispatch_ll_send_kernel(DispatchArgs a) {
  coll::pdl_wait();
  uint64_t* ops = ll_ops(a.h, a.L, 0);
  const uint64_t op = ops[blockIdx.x] + 1;
  ll_send<Idx, kMany>(a, op);
  __syncthreads();
  if (threadIdx.x == 0) ops[blockIdx.x] = op;
  if constexpr (kMany)
    if (blockIdx.x == 0 && threadIdx.x == 0) stamp(a.h, a.L, kDispSendFenced), stamp(a.h, a.L, kDispFlagsRaised);
}
// Right after this rank's send kernel (a.after_send: dispatch() launched both), the receive
// kernel runs beside it rather than after it: it reads nothing that kernel writes but its lines,
// which carry their own flags; its blocks launch once every send block runs (PDL; so no receive
// block keeps a send block from a GPU's SMs), and each waits for the send kernel's completion
// before it exits, so that whatever follows this kernel in the stream (the combine reads the
// token masks the send kernel writes) still follows both. The kernels before the send kernel have
// completed by then (its pdl_wait). The halves called apart keep plain stream order.
template <bool kMany>
__global__ void __launch_bounds__(kThreads) dispatch_ll_recv_kernel(DispatchRecvArgs a) {
  if (a.after_send) coll::pdl_launch_next();
  else coll::pdl_wait();
  uint64_t* ops = ll_ops(a.h, a.L, 1);
  const uint64_t op = ops[blockIdx.x] + 1;
  ll_recv<kMany>(a, op);
  __syncthreads();
  if (threadIdx.x == 0) ops[blockIdx.x] = op;
  if (a.after_send) coll::pdl_wait_prev();
}
// Rounds of more than kLLTokens tokens take the kernels' kMany forms (the publisher's batched
// reads, the routing loads at once): 4 x H200, session 43 (calls 2-5), 64 experts at 32 tokens a
// pair 0.8 us faster at 4 GPUs and 0.4 at 2 (at 16 tokens 0.1 and 0.17); at one token the same
// code, not even run (a branch around it), cost 0.3-0.5 us a pair, so smaller rounds run kernels
// without it.
template <class Idx, bool kMany>
void launch_send(const DispatchArgs& a, int blocks, cudaStream_t s) {
  coll::launch(dispatch_ll_send_kernel<Idx, kMany>, blocks, kThreads, s, a);
}

}  // namespace

void launch_dispatch_ll_send(const DispatchArgs& a, int blocks, cudaStream_t s) {
  const bool many = a.L.round > kLLTokens;
  if (a.idx_int64) (many ? launch_send<long long, true> : launch_send<long long, false>)(a, blocks, s);
  else (many ? launch_send<int, true> : launch_send<int, false>)(a, blocks, s);
}
void launch_dispatch_ll_recv(const DispatchRecvArgs& a, int blocks, cudaStream_t s) {
  if (a.L.round > kLLTokens) coll::launch(dispatch_ll_recv_kernel<true>, blocks, kThreads, s, a);
  else coll::launch(dispatch_ll_recv_kernel<false>, blocks, kThreads, s, a);
}

}  // namespace symmem::moe::kern
