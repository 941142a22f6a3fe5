// all_to_all_v without a barrier for small splits, and with one for large ones, in one kernel.
// Every rank pushes to every peer, as LL lines into the peer's workspace slot: a header (its whole
// counts row, its input capacity, its output capacity, where its output lies in the heap (0: not
// symmetric): nranks + 3 lines) and, when the split to that peer is small, the data. Every rank thus learns every rank's counts and capacities and
// reaches the same verdict without talking further:
//   - a bad count (negative, a sender's total past its input, a receiver's total past its output)
//     moves nothing on any rank and is recorded for the host (InvalidArgument on every rank);
//   - every split at most kLLMaxPairBytes: the data came with the headers (LL, no barrier);
//   - else, between two barriers: every rank writes its splits into the peers' outputs where every
//     rank's output lies at the same place of one symmetric buffer (links carry writes only), else
//     pulls from the peers' inputs.
//     A third of the blocks move this rank's own split while the others cross the links.
// Flow control: the sequenced workspace (include/symmem/device/workspace.hpp). Every rank sends
// every peer a header and waits for every peer's header in every call: rule (R). The direct branch
// uses the barrier channels, which nothing else of this operation touches.
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/device/workspace.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

// The kernel's shared memory (one copy for both forms of the body).
struct A2AVShared {
  long long own[pad::kMaxTeam], row_off[pad::kMaxTeam + 1];  // this rank's counts, their prefix
  void* peer_base[pad::kMaxTeam];
  bool row_ok;
  long long recv_off[pad::kMaxTeam + 1], src_off[pad::kMaxTeam], dst_off[pad::kMaxTeam];
  unsigned long long plan;
  // Every rank's counts row (the headers). A row is padded by one, so that warp 0's lanes, a row
  // each, read a column from different banks.
  long long cnt[pad::kMaxTeam][pad::kMaxTeam + 1];
  unsigned long long caps[pad::kMaxTeam][3];
#ifdef SYMMEM_A2AV_STAMPS
  long long st[9], first_verdict;
#endif
};

#ifdef SYMMEM_A2AV_STAMPS
// A diagnostic, off unless built with -DSYMMEM_A2AV_STAMPS=1 (tools/ab.sh define NAME REF
// SYMMEM_A2AV_STAMPS=1): thread 0 of the grid's first and last blocks reads clock64 at each phase
// boundary, sums each phase over the launches, and prints the means every 512 launches (the SM's
// cycles; phases: griddepcontrol.wait, seq_begin, the counts, the sends, the header waits, the
// verdict with the offsets, the data, seq_end). With SYMMEM_A2AV_VERDICT_REPS=R as well, warp 0
// runs the verdict R times in a loop and the report adds its first pass's cycles ("first", without
// the barrier after the passes; the verdict phase holds all R and the barrier; R = 1 when not
// given): a first pass much slower than the others is the cost of
// fetching the code (each phase is straight-line code that one warp walks once), not its work.
#ifndef SYMMEM_A2AV_VERDICT_REPS
#define SYMMEM_A2AV_VERDICT_REPS 1
#endif
__device__ unsigned long long g_a2av_sum[2][10], g_a2av_launches[2];
#define A2AV_STAMP(i) \
  if (threadIdx.x == 0) sh.st[i] = clock64()
__device__ void a2av_report(const A2AVShared& sh, int rank) {
  if (threadIdx.x != 0 || (blockIdx.x != 0 && blockIdx.x != gridDim.x - 1)) return;
  const int b = blockIdx.x == 0 ? 0 : 1;
  for (int i = 1; i < 9; ++i) g_a2av_sum[b][i] += static_cast<unsigned long long>(sh.st[i] - sh.st[i - 1]);
  g_a2av_sum[b][9] += static_cast<unsigned long long>(sh.first_verdict - sh.st[5]);
  if (++g_a2av_launches[b] % 512 != 0) return;
  const double m = 1.0 / 512;
  unsigned long long* x = g_a2av_sum[b];
  printf("a2av stamps rank %d block %d (cycles): wait %.0f seq %.0f counts %.0f send %.0f headers %.0f verdict %.0f data %.0f end %.0f total %.0f first %.0f\n",
         rank, blockIdx.x, x[1] * m, x[2] * m, x[3] * m, x[4] * m, x[5] * m, x[6] * m, x[7] * m, x[8] * m,
         (x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7] + x[8]) * m, x[9] * m);
  for (int i = 0; i < 10; ++i) x[i] = 0;
}
#else
#define A2AV_STAMP(i) (void)0
#endif

// Warp 0's exclusive prefix sums over t = 0..n-1 (n <= 64), lane t holding x[t] in lo and
// x[t + 32] in hi, zero past n (every lane calls it): lo and hi become the sums of the x before
// theirs; returns the whole sum. Lane t's inclusive sum needs the steps d <= t only, so a team of
// n <= 32 takes ceil(log2 n) steps on lo alone (one at 2 ranks, where the five of both halves
// took the verdict's stamp ~100 cycles longer, session 80).
static_assert(pad::kMaxTeam <= 64, "warp 0 holds a value of every rank, two a lane");
__device__ __forceinline__ long long warp_prefix64(long long& lo, long long& hi, int n) {
  const int lane = threadIdx.x & 31;
  long long a = lo, b = hi;
  if (n <= 32) {
    for (int d = 1; d < n; d <<= 1) {
      const long long ua = __shfl_up_sync(0xffffffffu, a, d);
      if (lane >= d) a += ua;
    }
    const long long total = __shfl_sync(0xffffffffu, a, n - 1);
    lo = a - lo;
    return total;
  }
  for (int d = 1; d < 32; d <<= 1) {
    const long long ua = __shfl_up_sync(0xffffffffu, a, d), ub = __shfl_up_sync(0xffffffffu, b, d);
    if (lane >= d) a += ua, b += ub;
  }
  const long long low = __shfl_sync(0xffffffffu, a, 31);
  const long long total = low + __shfl_sync(0xffffffffu, b, 31);
  lo = a - lo;
  hi = b - hi + low;
  return total;
}

// Rank t's first problem from its row (what it sends: any count negative, their sum past its
// input) and its column (what it receives: the sum past its output): 0 a negative count, 1 sends
// past its input, 2 receives past its output, 3 none. One ranking for both verdict forms, so that
// every rank names the same problem whatever its form.
__device__ __forceinline__ unsigned a2av_problem(bool negative, long long sent, long long got,
                                                 unsigned long long cap_in, unsigned long long cap_out) {
  if (negative) return 0u;
  if (static_cast<unsigned long long>(sent) > cap_in) return 1u;
  if (static_cast<unsigned long long>(got) > cap_out) return 2u;
  return 3u;
}

// Both forms load the peers' bases once, beside the counts. G > 1: the header lines a line a
// thread, the data through ll_put_group and the waits through ll_wait_group, G peers at a time;
// G = 1: one peer after another.
template <int G>
__device__ __forceinline__ void a2av_body(const A2AVArgs& a, A2AVShared& sh) {
  const DeviceHandle& h = a.ws;
  const int n = h.nranks, me = h.rank;
  // This rank's own row and the peers' bases: warp 0 loads them (lane t those of ranks t and
  // t + 32) before seq_begin, so that their round trip overlaps its epoch load, barrier and ticket
  // (loads inside the loops of stores below would each wait behind them).
  const int lane = threadIdx.x & 31;
  const bool warp0 = threadIdx.x < 32;
  long long c_lo = 0, c_hi = 0;
  void* b_lo = nullptr;
  void* b_hi = nullptr;
  if (warp0 && lane < n) c_lo = a.counts[lane], b_lo = h.peers[lane];
  if (warp0 && lane + 32 < n) c_hi = a.counts[lane + 32], b_hi = h.peers[lane + 32];
  device::SeqOp sq = device::seq_begin(h, /*take_ticket=*/false);
  A2AV_STAMP(2);
  const size_t hdr = static_cast<size_t>(n) + 3;
  const size_t cap_bytes = (a.layout.ll_slot_lines - hdr) * ws::kLLPayload;
  const size_t limit = cap_bytes < kLLMaxPairBytes ? cap_bytes : kLLMaxPairBytes;
  const size_t idx = device::grid_index(), stride = device::grid_size();
  const size_t es = a.es;

  // The row summed (negative counts as 0) and checked before its data is read.
  auto& own = sh.own;
  auto& row_off = sh.row_off;
  auto& peer_base = sh.peer_base;
  bool& row_ok = sh.row_ok;
  if (warp0) {
    const bool ok = __all_sync(0xffffffffu, c_lo >= 0 && c_hi >= 0);
    long long off_lo = c_lo < 0 ? 0 : c_lo, off_hi = c_hi < 0 ? 0 : c_hi;
    const long long total = warp_prefix64(off_lo, off_hi, n);
    if (lane < n) own[lane] = c_lo, row_off[lane] = off_lo, peer_base[lane] = b_lo;
    if (lane + 32 < n) own[lane + 32] = c_hi, row_off[lane + 32] = off_hi, peer_base[lane + 32] = b_hi;
    if (lane == 0) {
      row_off[n] = total;
      row_ok = ok && static_cast<unsigned long long>(total) <= a.in_capacity;
    }
  }
  __syncthreads();
  A2AV_STAMP(3);
  // The ticket here, not in seq_begin: the last warp, which takes it, has no counts to wait for, and
  // its fence runs while warp 0 sends (seq_take_ticket).
  device::seq_take_ticket(h, sq);

  // Header line i: counts[i] for i < n, then input capacity, output capacity, output placement.
  auto header = [&](size_t i) -> uint64_t {
    if (i < static_cast<size_t>(n)) return static_cast<uint64_t>(own[i]);
    return i == static_cast<size_t>(n) ? a.in_capacity : i == static_cast<size_t>(n) + 1 ? a.out_capacity : a.out_place;
  };
  // Send: every peer's header lines, then the data where the split is small.
  // (The input's first 4 KiB staged in shared memory beside the counts' loads, so that a small row
  // leaves without the payload's own round trip, measured 0.13-0.17 us less at 4 ranks at 8-512 B
  // but 0.06-0.19 more from 8 KiB and 0.16-0.25 more at 2 ranks: session 27, 4 x H100, branch
  // s27e, bench/results/...-s27c6-a2av-stage.json. Not taken.)
  auto peer_slot = [&](int p) { return device::ll_slot(peer_base[p], a.layout, sq, me); };
  if constexpr (G > 1) {
    for (size_t j = idx; j < static_cast<size_t>(n - 1) * hdr; j += stride)
      device::ll_store(peer_slot((me + 1 + static_cast<int>(j / hdr)) % n) + j % hdr, header(j % hdr), sq.flag);
    for (int k0 = 1; k0 < n && row_ok; k0 += G) {
      device::LLLine* dst[G];
      const char* src[G];
      size_t len[G];
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const int p = (me + k0 + g) % n;
        len[g] = static_cast<size_t>(own[p]) * es;
        src[g] = a.in + row_off[p] * es;
        dst[g] = k0 + g < n && len[g] <= limit ? peer_slot(p) + hdr : nullptr;
      }
      device::ll_put_group<ws::kLLPayload>(dst, src, len, sq.flag, idx, stride);
    }
  } else {
    for (int k = 1; k < n; ++k) {
      const int p = (me + k) % n;
      device::LLLine* dst = peer_slot(p);
      for (size_t i = idx; i < hdr; i += stride) device::ll_store(dst + i, header(i), sq.flag);
      const size_t len = static_cast<size_t>(own[p]) * es;
      if (row_ok && len <= limit) device::ll_put(dst + hdr, a.in + row_off[p] * es, len, sq.flag, idx, stride);
    }
  }

  // Every block reads every header (they lie in this rank's own slots: n x (n + 3) lines, polled
  // by 256 threads at once) and reaches the verdict itself: the same headers give every block (and
  // every rank) the same plan, so no block waits for another's (the first form had block 0 alone
  // read them and publish its plan to the other blocks as LL lines in this rank's own slot: one
  // more local hop on every call). At 3+ ranks warp 0 judges, a rank on each of lanes t and
  // t + 32, and combines the lanes' findings by shuffles (session 79: the block's atomics, a
  // barrier and thread 0's loops over the ranks before); at 1-2 ranks every thread judges on its
  // own (the pair form below). Block 0 alone records a bad count and the receive counts.
  A2AV_STAMP(4);
  enum : uint64_t { kStop = 1, kSmall = 2, kPull = 3, kPush = 4 };
  auto& recv_off = sh.recv_off;
  auto& src_off = sh.src_off;
  auto& dst_off = sh.dst_off;
  unsigned long long& plan = sh.plan;
  auto& cnt = sh.cnt;
  auto& caps = sh.caps;
  bool polled = true;
  for (size_t j = threadIdx.x; j < static_cast<size_t>(n) * hdr; j += blockDim.x) {
    const int s = static_cast<int>(j / hdr);
    const size_t i = j % hdr;
    uint64_t v;
    if (s == me) {
      v = header(i);
    } else if (!device::ll_wait(h, device::ll_slot(h.local, a.layout, sq, s) + i, sq.flag, s, &v)) {
      polled = false;
      continue;
    }
    if (i < static_cast<size_t>(n)) cnt[s][i] = static_cast<long long>(v);
    else caps[s][i - n] = v;
  }
  const bool waited = __syncthreads_and(polled);
  A2AV_STAMP(5);
  // The pair form's first data line: each thread loads the line the small plan's poll below
  // starts at (line idx of the peer's slot) now, before the verdict, so that its round trip runs
  // under the verdict's work instead of after it. The poll takes it where both its words carry
  // this operation's flag and polls on where they do not: a line read early is judged by its
  // flags like any other, and the slot is not reused before this block's seq_end (its lines are
  // this operation's until then), so reading it sooner changes nothing in the argument; under any
  // other plan it is dropped. (Session 83, 2 x H200: 0.04-0.19 us less at 8 B - 128 KiB, 0.01-0.11
  // more at 256 KiB - 2 MiB; forms gated on the peer's count, or on the first 16 blocks, were
  // slower: a test after the verdict's shared loads lengthens the verdict every warp walks. Gated
  // on this rank's own split, a register compare before the header barrier, it was slower at
  // every size to 256 KiB too: session 84, tools/steps/s84-a2av-gate.patch.)
  ws::LLWords early{0, 0};
  bool early_on = false;
  if constexpr (G == 1) {
    early_on = n == 2 && idx < a.layout.ll_slot_lines - hdr;
    if (early_on) early = device::ll_load(device::ll_slot(h.local, a.layout, sq, 1 - me) + hdr + idx);
  }
  // The first problem in (rank, kind) order, worst = 3 t + kind, recorded by block 0's thread 0
  // (InvalidArgument on every rank, which reach the same verdict).
  auto record_bad = [&](unsigned worst) {
    const int t = static_cast<int>(worst / 3), kind = static_cast<int>(worst % 3);
    unsigned long long index = 0, seen = 0;
    for (int q = 0; q < n; ++q) {
      if (kind == 0 && cnt[t][q] < 0) { index = q; seen = static_cast<unsigned long long>(cnt[t][q]); break; }
      if (kind == 1) seen += cnt[t][q];
      if (kind == 2) seen += cnt[q][t];
    }
    const unsigned long long lim = kind == 1 ? caps[t][0] : kind == 2 ? caps[t][1] : 0;
    device::record_error(h, WaitKind::kBadCount, t, (static_cast<uint64_t>(kind) << 32) | index, Cmp::kLe, lim, seen, 0);
  };
  // The verdict, the same on every block and every rank: the first problem in (rank, kind) order
  // (key 3 t + kind), else small splits (LL), else push where every rank's output lies at the same
  // place, else pull. Where source t's split for this rank starts in t's input (src_at), this
  // rank's split for t in t's output (dst_at), and where t's data goes in this rank's output
  // (recv_at, a prefix over the ranks); from(t): t's count for this rank.
  unsigned long long my_plan;
  // The pair form (G = 1: n <= 2): every thread judges on its own from the 2 x 2 counts and the
  // capacities in shared memory (broadcast reads) and keeps the plan and the offsets in registers:
  // no warp's shuffles and prefix sums, no barrier after them (none is needed: cnt and caps are
  // written only before the header barrier above and only read after it, and each thread's plan
  // and offsets are its own registers). (Warp 0's general form below took
  // ~1230 cycles at 2 ranks, its passes each as long as the first: its instructions and their
  // latencies, not the fetch of its code; session 81. The pair form: 3.93-4.14 us against
  // 4.25-4.48 at 8 B - 256 KiB on 2 x H200, and 3.79-4.02 with the common case first; session 82.)
  long long c00 = 0, c01 = 0, c10 = 0, c11 = 0;
  auto cnt_at = [&](int t, int q) { return t == 0 ? (q == 0 ? c00 : c01) : (q == 0 ? c10 : c11); };
  if constexpr (G == 1) {
    const bool two = n == 2;
    c00 = cnt[0][0];
    if (two) c01 = cnt[0][1], c10 = cnt[1][0], c11 = cnt[1][1];
    const unsigned long long cap_in0 = caps[0][0], cap_out0 = caps[0][1], place0 = caps[0][2];
    const unsigned long long cap_in1 = two ? caps[1][0] : 0, cap_out1 = two ? caps[1][1] : 0, place1 = two ? caps[1][2] : 0;
    // The common case in few instructions (every warp of the SM's blocks walks them, so their
    // count is issue slots those warps share): no count negative and every rank's row (what it
    // sends) and column (what it receives) within its capacities is no problem; the sums of two
    // counts >= 0 cannot wrap as unsigned. At n = 1 the counts of rank 1 are 0 and so are its
    // capacities, which passes. Only where this fails is the first problem looked for, by the
    // thread that records it; every thread stops.
    using u64 = unsigned long long;
    const u64 u00 = c00, u01 = c01, u10 = c10, u11 = c11;
    const bool fits = ((c00 | c01 | c10 | c11) >= 0) & (u00 + u01 <= cap_in0) & (u00 + u10 <= cap_out0) &
                      (u10 + u11 <= cap_in1) & (u01 + u11 <= cap_out1);
    if (!waited || !fits) {
      my_plan = kStop;
      if (waited && blockIdx.x == 0 && threadIdx.x == 0) {
        auto pos = [](long long x) { return x < 0 ? 0ll : x; };
        auto kind_of = [&](long long r0, long long r1, long long c0, long long c1, u64 cap_in, u64 cap_out) {
          return a2av_problem(r0 < 0 || r1 < 0, pos(r0) + pos(r1), pos(c0) + pos(c1), cap_in, cap_out);
        };
        const unsigned k0 = kind_of(c00, c01, c00, c10, cap_in0, cap_out0);
        record_bad(k0 != 3u ? k0 : 3u + kind_of(c10, c11, c01, c11, cap_in1, cap_out1));
      }
    } else {
      const bool small = (u01 * es <= limit) & (u10 * es <= limit);  // both peers' splits fit LL lines
      const bool push = place0 != 0 && (!two || place1 == place0);   // the same place on every rank
      my_plan = small ? kSmall : push ? kPush : kPull;
    }
#ifdef SYMMEM_A2AV_STAMPS
    if (threadIdx.x == 0) sh.first_verdict = clock64();
#endif
  } else {
#ifdef SYMMEM_A2AV_STAMPS
#pragma unroll 1
  for (int rep = 0; rep < SYMMEM_A2AV_VERDICT_REPS; ++rep) {  // (the diagnostic above a2av_report)
#endif
  if (warp0) {
    unsigned worst = ~0u;
    bool small = true, push = true;
    long long from_lo = 0, from_hi = 0;  // cnt[t][me]
    auto judge = [&](int t, long long& from) {
      if (t >= n) return;
      long long sent = 0, got = 0, off = 0, dst = 0;
      bool negative = false;
      for (int q = 0; q < n; ++q) {
        const long long x = cnt[t][q], y = cnt[q][t];
        negative |= x < 0;
        sent += x < 0 ? 0 : x;
        got += y < 0 ? 0 : y;
        if (q != t && x > 0 && static_cast<size_t>(x) * es > limit) small = false;
        if (q < me) off += x, dst += y;
      }
      src_off[t] = off;
      dst_off[t] = dst;
      from = cnt[t][me];
      if (caps[t][2] == 0 || caps[t][2] != caps[0][2]) push = false;  // the same place on every rank
      const unsigned kind = a2av_problem(negative, sent, got, caps[t][0], caps[t][1]);
      if (kind != 3u) worst = min(worst, 3u * t + kind);
    };
    if (waited) judge(lane, from_lo), judge(lane + 32, from_hi);
    worst = __reduce_min_sync(0xffffffffu, worst);
    small = __all_sync(0xffffffffu, small);
    push = __all_sync(0xffffffffu, push);
    const unsigned long long p = !waited || worst != ~0u ? kStop : small ? kSmall : push ? kPush : kPull;
    if (p != kStop) {
      const long long total = warp_prefix64(from_lo, from_hi, n);
      if (lane < n) recv_off[lane] = from_lo;
      if (lane + 32 < n) recv_off[lane + 32] = from_hi;
      if (lane == 0) recv_off[n] = total;
    }
    if (lane == 0) {
      plan = p;
      if (blockIdx.x == 0 && waited && worst != ~0u) record_bad(worst);
    }
  }
#ifdef SYMMEM_A2AV_STAMPS
    if (rep == 0 && threadIdx.x == 0) sh.first_verdict = clock64();
  }
#endif
  __syncthreads();
  my_plan = plan;
  }
  A2AV_STAMP(6);
  // The pair form's offsets for t in {0, 1} (at 2 ranks, recv_off[1] = cnt[0][me], and the offsets
  // within a rank's input or output are its count for rank 0 where me = 1); the general form's from
  // shared memory.
  auto recv_at = [&](int t) -> long long {
    if constexpr (G == 1) return t == 0 ? 0 : cnt_at(0, me);
    else return recv_off[t];
  };
  auto from = [&](int t) -> long long {
    if constexpr (G == 1) return cnt_at(t, me);
    else return recv_off[t + 1] - recv_off[t];
  };
  auto src_at = [&](int t) -> long long {
    if constexpr (G == 1) return me == 1 ? cnt_at(t, 0) : 0;
    else return src_off[t];
  };
  auto dst_at = [&](int t) -> long long {
    if constexpr (G == 1) return me == 1 ? cnt_at(0, t) : 0;
    else return dst_off[t];
  };
  if (blockIdx.x == 0 && a.recv_counts != nullptr && my_plan != kStop)
    for (int s = threadIdx.x; s < n; s += blockDim.x) a.recv_counts[s] = cnt[s][me];
  if (my_plan == kStop) {
    device::seq_end(h, a.layout, sq);
    return;
  }
  if (my_plan == kSmall) {
    // This rank's own split by the grid's last threads (the index reversed), the peers' lines
    // below by its first: at small sizes the copy's load and the polls' loads are in flight at
    // once instead of one after the other in the same threads (session 80: block 0's data stamp
    // 2430-2510 cycles before, 2110-2210 after, at 1 KiB on 2 x H200).
    device::copy_bytes(a.out + recv_at(me) * es, a.in + src_at(me) * es, static_cast<size_t>(from(me)) * es,
                       stride - 1 - idx, stride);
    // The peers' data, G sources polled at once. (Awaited before the verdict instead, held in
    // registers and written after it, they measured 2.2 us slower at 4 ranks, 1.9 at 3 and 0.6 at
    // 2, 8 B - 256 KiB, 4 x H100, session 27, bench/results/...-s27c2-*.json: the verdict's work
    // runs while the data are in flight here.)
    bool ok = true;
    for (int k0 = 1; k0 < n && ok; k0 += G) {
      int peer[G];
      size_t bytes[G], most = 0;
#pragma unroll
      for (int g = 0; g < G; ++g) {
        peer[g] = k0 + g < n ? (me + n - k0 - g) % n : 0;
        bytes[g] = k0 + g < n ? static_cast<size_t>(from(peer[g])) * es : 0;
        most = device::ll_lines(bytes[g]) > most ? device::ll_lines(bytes[g]) : most;
      }
      for (size_t i = idx; i < most && ok; i += stride) {
        const device::LLLine* src[G];
        device::LLData v[G];
#pragma unroll
        for (int g = 0; g < G; ++g)
          src[g] = i < device::ll_lines(bytes[g]) ? device::ll_slot(h.local, a.layout, sq, peer[g]) + hdr + i : nullptr;
        if (G == 1 && early_on && i == idx && src[0] != nullptr && ws::ll_carries(early, sq.flag)) {
#pragma unroll
          for (int k = 0; k < device::LLData::kWords; ++k) v[0].w[k] = ws::ll_word<ws::kLLPayload>(early, k);
        } else if (!(ok = device::ll_wait_group<ws::kLLPayload>(h, src, peer, sq.flag, v))) {
          break;
        }
#pragma unroll
        for (int g = 0; g < G; ++g)
          if (src[g] != nullptr) device::ll_unpack(a.out + recv_at(peer[g]) * es, bytes[g], i, v[g]);
      }
    }
  } else if (device::barrier_block(h, blockIdx.x)) {  // peers' inputs (pull) or outputs (push) are ready
    const LocalRemoteSplit grp = local_remote_split(n);
    const size_t gidx = grp.idx, gstride = grp.stride;
    for (int k = grp.k_first; k < grp.k_last; ++k) {
      const int p = (me + k) % n;
      if (my_plan == kPush)  // this rank's split for p, into p's output
        device::copy_bytes(at_rank(a.out_h, p, a.out) + dst_at(p) * es, a.in + row_off[p] * es,
                           static_cast<size_t>(a.counts[p]) * es, gidx, gstride);
      else  // p's split for this rank, from p's input
        device::copy_bytes(a.out + recv_at(p) * es, at_rank(a.in_h, p, a.in) + src_at(p) * es,
                           static_cast<size_t>(from(p)) * es, gidx, gstride);
    }
    device::barrier_block(h, blockIdx.x);  // peers are done reading this rank's input / writing its output
  }
  A2AV_STAMP(7);
  device::seq_end(h, a.layout, sq);
  A2AV_STAMP(8);
#ifdef SYMMEM_A2AV_STAMPS
  a2av_report(sh, h.rank);
#endif
}

// Groups at 3 ranks or more. Session 26 against the previous kernel, alternated in one call: at
// 4 ranks 0.3-0.7 us faster at 8 B - 128 KiB (4 x H100 and 4 x H200); at 2 ranks groups (of one
// peer) were 1.1 us slower on 4 x H100, this body at G = 1 0.1-0.3 us faster on 4 x H200
// (bench/results/2026-11-27-*-s26c{4,5,6}-ll-groups.json). 3 ranks: tested, not timed.
__global__ void __launch_bounds__(kThreads) ll_a2av_kernel(A2AVArgs a) {
  __shared__ A2AVShared sh;
  A2AV_STAMP(0);
  pdl_wait();
  A2AV_STAMP(1);
  if (a.ws.nranks > 2) a2av_body<device::kLLGroup>(a, sh);
  else a2av_body<1>(a, sh);
}

}  // namespace

void launch_ll_a2av(const A2AVArgs& a, int blocks, cudaStream_t s) {
  launch(ll_a2av_kernel, blocks, kThreads, s, a);
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
