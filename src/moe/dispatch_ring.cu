// MoE dispatch streamed through rings (kAuto where every rank has its own GPU; SYMMEM_MOE_RING=0
// keeps the rounds): an operation of several rounds as one persistent kernel, instead of a kernel,
// a fence and a flag wait a round (dispatch.cu). The grid's first `send_blocks` blocks send, the
// others copy, all at once:
//
//   Send. This rank's tokens go in groups of kRingGroup, dealt to the send blocks in waves. Each
//   block counts its groups' rows per destination rank; after a barrier of the send blocks every
//   block can sum the rows of the groups before its own, so each row gets its sequence number q
//   among this rank's rows to that destination in this operation, in token order (the routing
//   record's index, as the combine reads it). Send block 0 announces the operation's row count to
//   every peer. A row with cumulative number Q (over every operation so far) goes into slot Q mod S
//   of this rank's ring on the destination (the staging area seen as [source][S = 2R] rows), once
//   the destination has released that slot's previous row (Q - S): a release word per slot, here,
//   written by the destination. After a group's rows and records every thread fences its stores
//   and the group's ready words go out (Q + 1 in slot Q mod S's word on the destination). At two
//   ranks a warp takes a whole token instead, with a fence and ready words of its own
//   (send_tokens_by_warp). This rank's own rows go straight into its experts (self-direct).
//   Copy. Warps claim (source, q) from a counter per source, in q order, up to the announced count;
//   wait for the slot's ready word; copy the row into each local expert it chose (expert-major,
//   claiming expert rows as the round-based copy does); count it for its round (the combine's
//   round counts); release the slot to its source. On sm_90 on (kRingCopyBulk, the default) the
//   row goes through a shared-memory stage of the warp's by the bulk-copy unit (bulk_row), and the
//   slot is released once the row is in shared memory, while its stores still drain.
//   Close. The grid's last block adds the operation's counts to the cumulative ones, publishes the
//   round counts and the expert counts, reports an expert over capacity, and raises the operation.
//
// Measured (session 22, prefill, 4096 tokens in rounds of 1024, 60% of the grid sending, two
// blocks an SM): 4 x H200 283-284 us against the rounds' 338 (skewed 296 against 359), 4 x H100
// 294 against 344-345 (skewed 319 against 406); bench/results/2026-11-27-*-moe-prefill-*.
//
// Deadlock-free for any N and any interleaving. A group's rows to one destination are at most
// kRingGroup consecutive numbers, stored together, and S >= kRingGroup (the host takes this path
// only then); so a group waits only for releases of rows of earlier groups of this rank (Q - S lies
// below the group's first number to that destination). A copy waits only for the ready word of a
// row it claimed, and each source's rows are claimed in number order by a pool of copy warps of
// their own. So the earliest group a rank has not stored gets every release it needs: at each
// destination, that source's pool finishes every row below the group's (all stored: earlier
// groups), since a pool warp holding one of them finds it in, and the claims go on in order up to
// the row the release is for. One pool for every source could deadlock: its warps all waiting for
// rows of sources that wait for releases elsewhere, while a source that waits for this rank's
// release has no warp left. tests/host/test_moe_ring_model.cpp runs the protocol under random
// interleavings (operations back to back, rings that wrap) and finds that deadlock with one pool.
// A copier starts on an operation only once its source announced it, and a sender's ring position
// continues across operations (cumulative numbers; the per-slot words only grow), so rows of
// different operations never share a slot's use. The announces take a word per operation parity:
// a source may run one operation ahead of a destination's copy blocks (its rows to that rank may
// all fit the ring, so nothing of its operation k waits for them), but not two. Its operation k+1
// ends only after its copy blocks read this rank's announce of k+1, which this rank's kernel of
// k+1 writes, after its kernel of k (every copy block of it past its read of the source's
// announce of k) ended; only then can the source announce k+2 into the same word. (With one word
// a source's announce of k+1 could replace that of k before a copy block of this rank read it:
// 4 x H100, session 22, tests of 48 tokens in rounds of 16, where every row fits the ring.
// tests/host/test_moe_ring_model.cpp finds that interleaving with one word, and none with two.)
// Every block of the grid must be resident at once (the send blocks' barrier, and senders spinning
// on releases beside the copiers that give them): the host sizes the grid to what stays resident
// and takes this path only where each rank has its own GPU; a kernel of the caller's on another
// stream that holds SMs can delay a block's start, or keep it (the waits are bounded: an error,
// not a hang). The routing records (by operation parity) and the combine area follow the argument
// of moe_kernels.hpp: this kernel changes neither the combine's flags nor their epochs (the
// streamed combine, combine_ring.cu, uses the combine area as rings of its own).
#include "moe_common.cuh"
#include "symmem/device/bulk.cuh"
#include "symmem/error.hpp"

namespace symmem::moe::kern {
namespace {

constexpr int kWarps = kThreads / 32;
constexpr int kRingBlocksPerSm = 2;
constexpr int kSendBatch = 4;   // 16-byte vectors a lane in flight in a send warp's stores (a block's group)
constexpr int kWarpSendBatch = 2;  // (a warp's token: 1 KiB batches; 4 spilled there, 3 was level)
constexpr int kCopyBatch = 16;  // and in a copy warp's (8 KiB a batch)
constexpr int kMaxDst = 32;  // a token's destinations: staged peers, then this rank's expert rows (<= n + K)
constexpr int kBulkStage = 8192;  // a copy warp's shared-memory stage (kRingCopyBulk)

// Slot k of source s's ring on its destination.
__device__ __forceinline__ size_t ring_row_off(const Layout& L, int s, uint64_t k) {
  return L.stage_off + (static_cast<size_t>(s) * ring_slots(L) + static_cast<size_t>(k)) * L.row;
}

/// A warp copies one row of `bytes` from src to up to 32 destinations (lane i holds destination
/// i), every load bypassing L1 (the slot's earlier rows may sit there).
__device__ __forceinline__ void warp_copy_cg(const char* src, size_t bytes, char* lane_dst, int ndst) {
  constexpr int kB = kCopyBatch;
  for (size_t base = 0; base < bytes; base += 32 * 16 * kB) {
    int4 v[kB];
#pragma unroll
    for (int u = 0; u < kB; ++u) {
      const size_t off = base + (static_cast<size_t>(u) * 32 + lane_id()) * 16;
      if (off < bytes) v[u] = __ldcg(reinterpret_cast<const int4*>(src + off));
    }
    for (int i = 0; i < ndst; ++i) {
      char* d = reinterpret_cast<char*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(lane_dst), i));
#pragma unroll
      for (int u = 0; u < kB; ++u) {
        const size_t off = base + (static_cast<size_t>(u) * 32 + lane_id()) * 16;
        if (off < bytes) *reinterpret_cast<int4*>(d + off) = v[u];
      }
    }
  }
}
__device__ __forceinline__ void warp_copy_words_cg(const uint32_t* src, int words, uint32_t* lane_dst, int ndst) {
  for (int base = 0; base < words; base += 32) {
    const int i0 = base + lane_id();
    const uint32_t v = i0 < words ? __ldcg(src + i0) : 0u;
    for (int i = 0; i < ndst; ++i) {
      uint32_t* d = reinterpret_cast<uint32_t*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(lane_dst), i));
      if (i0 < words) d[i0] = v;
    }
  }
}

#if defined(SYMMEM_HAS_BULK_COPY)
// kRingCopyBulk: a copy warp moves a row of `row` bytes (payload, then scale words) through its
// shared stage, in chunks of kBulkStage: lane 0 loads a chunk with the bulk-copy unit, every lane
// waits for it, lane i < ndst stores the chunk's payload bytes into its destination with the
// bulk-copy unit (asynchronous: the warp goes on to its next row while they drain), and the scale
// words go out as plain stores. The slot is released (rel <- rel_value) once its last chunk is in
// shared memory. Before a load reuses the stage, every lane's bulk stores have read it and its
// plain reads are ordered before the async proxy's writes. (The caller acquired the slot's ready
// word; fence.proxy.async extends that to the bulk load's reads of the slot.) Returns the stage's
// next phase.
__device__ inline uint32_t bulk_row(const char* src, size_t row, size_t payload, int scale_words, char* lane_dst, uint32_t* lane_sdst, int ndst,
                                char* stage, uint64_t* bar, uint32_t phase, uint64_t* rel, uint64_t rel_value) {
  const int lane = lane_id();
  const size_t scale_end = payload + 4 * static_cast<size_t>(scale_words);
  for (size_t c0 = 0; c0 < row; c0 += kBulkStage) {
    const uint32_t cb = static_cast<uint32_t>(row - c0 < static_cast<size_t>(kBulkStage) ? row - c0 : kBulkStage);
    device::bulk_wait_read<0>();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncwarp();
    if (lane == 0) {
      asm volatile("fence.proxy.async.global;" ::: "memory");
      device::mbar_expect_tx(bar, cb);
      device::bulk_load(stage, src + c0, cb, bar);
    }
    device::mbar_wait(bar, phase);
    phase ^= 1u;
    if (lane == 0 && c0 + cb >= row) device::st_release(rel, rel_value);
    if (c0 < payload && lane < ndst) {
      const size_t end = c0 + cb < payload ? c0 + cb : payload;
      device::bulk_store(lane_dst + c0, stage, static_cast<uint32_t>(end - c0));
    }
    const size_t s0 = c0 > payload ? c0 : payload, s1 = c0 + cb < scale_end ? c0 + cb : scale_end;
    if (s0 < s1) {
      const int w0 = static_cast<int>((s0 - payload) / 4), nw = static_cast<int>((s1 - s0) / 4);
      const uint32_t* words = reinterpret_cast<const uint32_t*>(stage + (s0 - c0));
      for (int base = 0; base < nw; base += 32) {
        const int i = base + lane;
        const uint32_t v = i < nw ? words[i] : 0u;
        for (int d = 0; d < ndst; ++d) {
          uint32_t* p = reinterpret_cast<uint32_t*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(lane_sdst), d));
          if (i < nw) p[w0 + i] = v;
        }
      }
    }
  }
  return phase;
}
#endif

// What a send warp needs to route its tokens (ring_send's, shared by both ways of storing).
struct SendCtx {
  const DispatchArgs& a;
  int n, me, K, El, C, T, b, Bs, groups, opar;
  uint64_t S;
  size_t payload;
  uint64_t* token_ranks;
  const unsigned* gc;  // [group][destination] rows
  unsigned* rc;
  unsigned* expert_count;
  const uint64_t* release;
  unsigned* running;       // (shared) rows to each destination in the waves / chunks before this one
  const uint64_t* sent0;   // (shared) rows sent to each destination before this operation
  int* ok;                 // (shared) 0 once a wait failed
};

// token_mask (moe_common.cuh), with an out-of-range expert reported.
template <class Idx>
__device__ __forceinline__ uint64_t token_experts(const SendCtx& c, int t, int& expert, int& dest) {
  long long v;
  const uint64_t mask = token_mask<Idx>(c.a.topk_idx, t, c.K, c.a.num_experts, c.El, expert, dest, v);
  if (routed_badly(expert, v)) note_bad_index(c.a.h, t, v, c.a.num_experts);
  return mask;
}

// A warp routes token t, whose lane i < popc(mask) holds its i-th destination rank d and the row's
// number q among this rank's rows to d in this operation (Q: cumulative): the combine's token_q,
// this rank's expert rows, the wait for each peer slot's release (Q - S), the row's destinations
// into dst / sdst (staged peers, then this rank's expert rows) and the routing records. Returns the
// number of destinations, or -1 where a wait failed.
__device__ int route_token(const SendCtx& c, int t, int expert, int dest, uint64_t mask, int d, unsigned q, uint64_t Q, char** dst,
                           uint32_t** sdst) {
  const DispatchArgs& a = c.a;
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int lane = lane_id(), ndst = __popcll(mask), me = c.me;
  if (lane < ndst) at<unsigned>(h, L.token_q_off)[static_cast<size_t>(t) * c.n + d] = q;  // (the streamed combine's)
  unsigned lslot = 0;  // lane k < K whose expert is this rank's: its row there (>= C: dropped)
  if (dest == me) lslot = atomicAdd(&c.expert_count[expert - me * c.El], 1u);
  const bool staged = lane < ndst && d != me;
  bool waited = true;
  if (staged && Q >= c.S) {
    const uint64_t need = Q - c.S + 1;
    waited = device::wait_for(h, c.release + static_cast<size_t>(d) * c.S + Q % c.S, [&](uint64_t v) { return v >= need; }, Cmp::kGe, need,
                              WaitKind::kMoeRing, d, L.backoff_ns);
  }
  const bool all_in = __all_sync(0xffffffffu, waited);
  const unsigned st_mask = __ballot_sync(0xffffffffu, staged), below = (1u << lane) - 1u;
  if (staged) {
    char* p = at_peer<char>(h, d, ring_row_off(L, me, Q % c.S));
    dst[__popc(st_mask & below)] = p;
    sdst[__popc(st_mask & below)] = reinterpret_cast<uint32_t*>(p + c.payload);
  }
  int nout = __popc(st_mask);
  const bool local = dest == me && lslot < static_cast<unsigned>(c.C);
  const unsigned lk = __ballot_sync(0xffffffffu, local);
  if (local) {
    const size_t row = static_cast<size_t>(expert - me * c.El) * c.C + lslot;
    dst[nout + __popc(lk & below)] = a.recv_x + row * c.payload;
    sdst[nout + __popc(lk & below)] = a.recv_scales != nullptr ? a.recv_scales + row * L.scale_words : nullptr;
  }
  nout += __popc(lk);
  // The routing record of each copy, at its q among this rank's rows to that destination.
  const float wk = lane < c.K && a.weights != nullptr ? a.weights[static_cast<size_t>(t) * c.K + lane] : 1.0f;
  for (int i = 0; i < ndst; ++i) {
    const int di = __shfl_sync(0xffffffffu, d, i);
    const unsigned qi = __shfl_sync(0xffffffffu, q, i);
    const size_t rec = (static_cast<size_t>(c.opar) * c.n + me) * L.max_tokens + qi;
    Meta* meta = at_peer<Meta>(h, di, L.meta_off + rec * sizeof(Meta));
    if (lane < c.K) {  // (entries >= K are never read)
      const bool mine = dest == di;
      meta->expert[lane] = mine ? expert - di * c.El : -1;
      meta->weight[lane] = mine ? wk : 1.0f;
      if (di == me) meta->slot[lane] = mine && lslot < static_cast<unsigned>(c.C) ? static_cast<int>(lslot) : -1;
    }
    if (lane == 0) meta->src_token = t;
  }
  if (lane == 0 && ((mask >> me) & 1)) atomicAdd(&c.rc[static_cast<size_t>(me) * L.rounds + t / L.round], 1u);  // own rows by round
  return all_in ? nout : -1;
}

// Step 4 where n > 2: the waves. This block's group's first q per destination (the rows of the
// waves before and of the wave's groups before it), then warp g routes token g of the group, every
// warp stores its share of each row, fences, and the group's ready words go out.
template <class Idx>
__device__ void send_groups_by_block(const SendCtx& c, char* (&gdst)[kWarps][kMaxDst], uint32_t* (&gsdst)[kWarps][kMaxDst]) {
  const DispatchArgs& a = c.a;
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = c.n, me = c.me, b = c.b, Bs = c.Bs, T = c.T, warp = static_cast<int>(threadIdx.x >> 5), lane = lane_id();
  __shared__ unsigned before[pad::kMaxTeam];  // rows to each destination in this wave's groups before this block's
  __shared__ unsigned wave[pad::kMaxTeam];    // and in this whole wave
  __shared__ uint64_t gmask[kRingGroup];
  __shared__ int gndst[kRingGroup];
  __shared__ uint64_t* rdy[kRingGroup][pad::kMaxTeam];
  __shared__ uint64_t rval[kRingGroup][pad::kMaxTeam];
  __shared__ int nrdy[kRingGroup];
  const size_t share = ((c.payload + kWarps * 16 - 1) / (kWarps * 16)) * 16;
  const size_t p0 = static_cast<size_t>(warp) * share < c.payload ? static_cast<size_t>(warp) * share : c.payload;
  const size_t p1 = p0 + share < c.payload ? p0 + share : c.payload;
  for (int w0 = 0; *c.ok && w0 + b < c.groups; w0 += Bs) {  // w0: the wave's first group
    __syncthreads();
    for (int d = threadIdx.x; d < n; d += blockDim.x) before[d] = wave[d] = 0;
    __syncthreads();
    const int in_wave = c.groups - w0 < Bs ? c.groups - w0 : Bs;
    for (int i = threadIdx.x; i < in_wave * n; i += blockDim.x) {
      const unsigned v = *reinterpret_cast<volatile const unsigned*>(c.gc + static_cast<size_t>(w0) * n + i);
      atomicAdd(&wave[i % n], v);
      if (i / n < b) atomicAdd(&before[i % n], v);
    }
    __syncthreads();
    const int g0 = (w0 + b) * kRingGroup, gn = T - g0 < kRingGroup ? T - g0 : kRingGroup;
    int expert = -1, dest = -1;
    if (warp < gn) {
      const uint64_t mask = token_experts<Idx>(c, g0 + warp, expert, dest);
      if (lane == 0) gmask[warp] = mask;
    }
    __syncthreads();
    if (warp < gn) {
      const int t = g0 + warp;
      const uint64_t mask = gmask[warp];
      const int d = nth_rank(mask);
      unsigned q = 0;
      uint64_t Q = 0;
      if (d >= 0) {
        q = c.running[d] + before[d];
        for (int g = 0; g < warp; ++g) q += static_cast<unsigned>((gmask[g] >> d) & 1);
        Q = c.sent0[d] + q;
      }
      const int nout = route_token(c, t, expert, dest, mask, d, q, Q, gdst[warp], gsdst[warp]);
      if (nout < 0) *c.ok = 0;
      const bool staged = d >= 0 && d != me;
      const unsigned st_mask = __ballot_sync(0xffffffffu, staged);
      if (staged) {
        const int i = __popc(st_mask & ((1u << lane) - 1u));
        rdy[warp][i] = at_peer<uint64_t>(h, d, L.ring_ready_off) + static_cast<size_t>(me) * c.S + Q % c.S;
        rval[warp][i] = Q + 1;
      }
      if (lane == 0) {
        nrdy[warp] = __popc(st_mask);
        gndst[warp] = nout;
      }
    }
    __syncthreads();
    for (int g = 0; *c.ok && g < gn; ++g) {
      const char* src = a.x + static_cast<size_t>(g0 + g) * c.payload + p0;
      const int nd = gndst[g];
      RowBatchOf<kSendBatch> rb;  // (a warp's piece of a row: 1 KiB at H 7168)
      rb.load(src, p1 - p0, 0);
      if (p0 < p1) warp_fanout16(src, p1 - p0, lane < nd ? gdst[g][lane] + p0 : nullptr, nd, rb, g0 + g + warp);
      if (L.scale_words && warp == kWarps - 1)
        warp_fanout_words(a.scales + static_cast<size_t>(g0 + g) * L.scale_words, L.scale_words, lane < nd ? gsdst[g][lane] : nullptr, nd);
    }
    // Every thread's stores and records fenced, then (a release) the ready words.
    device::fence_acq_rel();
    __syncthreads();
    for (int i = threadIdx.x; *c.ok && i < gn * n; i += blockDim.x) {
      const int g = i / n, k = i % n;
      if (k < nrdy[g]) device::st_relaxed(rdy[g][k], rval[g][k]);
    }
    for (int d = threadIdx.x; d < n; d += blockDim.x) c.running[d] += wave[d];
  }
}

// Step 4 at two ranks: a warp a token, in chunks of kChunkWaves waves. The first q per destination
// of each of this block's groups in the chunk (the rows of the waves before and of the wave's
// groups before it), then the chunk's tokens, a warp each (token k of the chunk to warp k mod
// kWarps, in wave order): its q per destination (its group's first, plus the group's earlier
// tokens' rows there), the routing, the whole row to every destination, then the warp's own fence
// and its rows' ready words (no block barrier between tokens: a warp fencing leaves the others
// storing). Measured on 4 x H200 (session 23, prefill): at 2 GPUs 130.0-130.3 us against the
// waves' 148.4-148.5 (skewed 144.3 against 162), at 4 GPUs 295.4-295.7 against 282.9-283.3.
// Deadlock-free as the waves (the file's argument, with groups of one token): a warp at a chunk's
// barrier holds no token, and every token of a chunk comes before every token of the next, so the
// earliest token not stored is always held by a warp that runs (tests/host/test_moe_ring_model.cpp
// runs this way too, at 2-4 ranks, rings down to one row).
template <class Idx>
__device__ void send_tokens_by_warp(const SendCtx& c, char* (&gdst)[kWarps][kMaxDst], uint32_t* (&gsdst)[kWarps][kMaxDst]) {
  const DispatchArgs& a = c.a;
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = c.n, me = c.me, b = c.b, Bs = c.Bs, T = c.T, warp = static_cast<int>(threadIdx.x >> 5), lane = lane_id();
  constexpr int kChunkWaves = 16;
  __shared__ unsigned first_q[kChunkWaves][pad::kMaxTeam];
  __shared__ unsigned wsum[kChunkWaves][pad::kMaxTeam];
  for (int c0 = 0; c0 + b < c.groups; c0 += kChunkWaves * Bs) {  // c0: the chunk's first group
    __syncthreads();  // (the previous chunk's first_q read by every warp; every warp's `ok` written)
    if (!*c.ok) break;
    for (int i = threadIdx.x; i < kChunkWaves * n; i += blockDim.x) {
      first_q[i / n][i % n] = 0;
      wsum[i / n][i % n] = 0;
    }
    __syncthreads();
    const int span = c.groups - c0 < kChunkWaves * Bs ? c.groups - c0 : kChunkWaves * Bs;  // the chunk's groups
    for (int i = threadIdx.x; i < span * n; i += blockDim.x) {
      const int gi = i / n, d = i % n, j = gi / Bs;
      const unsigned v = *reinterpret_cast<volatile const unsigned*>(c.gc + static_cast<size_t>(c0 + gi) * n + d);
      atomicAdd(&wsum[j][d], v);
      if (gi % Bs < b) atomicAdd(&first_q[j][d], v);
    }
    __syncthreads();
    for (int d = threadIdx.x; d < n; d += blockDim.x) {
      unsigned r = c.running[d];
      for (int j = 0; j < kChunkWaves; ++j) {
        first_q[j][d] += r;
        r += wsum[j][d];
      }
      c.running[d] = r;
    }
    __syncthreads();
    const int waves = (span - b + Bs - 1) / Bs;  // waves of the chunk with a group of this block
    for (int k = warp; k < waves * kRingGroup; k += kWarps) {
      const int j = k / kRingGroup, g = c0 + j * Bs + b, t = g * kRingGroup + k % kRingGroup;
      if (t >= T) continue;
      int expert, dest;
      const uint64_t mask = token_experts<Idx>(c, t, expert, dest);
      const int d = nth_rank(mask);
      unsigned q = 0;
      uint64_t Q = 0;
      if (d >= 0) {
        q = first_q[j][d];
        for (int e = g * kRingGroup; e < t; ++e) q += static_cast<unsigned>((__ldcg(c.token_ranks + e) >> d) & 1);
        Q = c.sent0[d] + q;
      }
      const int nout = route_token(c, t, expert, dest, mask, d, q, Q, gdst[warp], gsdst[warp]);
      if (nout < 0) {
        *c.ok = 0;
        break;
      }
      __syncwarp();  // (gdst in)
      const char* src = a.x + static_cast<size_t>(t) * c.payload;
      RowBatchOf<kWarpSendBatch> rb;
      rb.load(src, c.payload, 0);
      warp_fanout16(src, c.payload, lane < nout ? gdst[warp][lane] : nullptr, nout, rb, t);
      if (L.scale_words)
        warp_fanout_words(a.scales + static_cast<size_t>(t) * L.scale_words, L.scale_words, lane < nout ? gsdst[warp][lane] : nullptr, nout);
      // The warp's stores and records fenced, then (a release) its rows' ready words.
      device::fence_acq_rel();
      __syncwarp();
      if (d >= 0 && d != me) device::st_relaxed(at_peer<uint64_t>(h, d, L.ring_ready_off) + static_cast<size_t>(me) * c.S + Q % c.S, Q + 1);
    }
  }
}

// Send block b of Bs. This rank's tokens go in groups of kRingGroup, dealt to the send blocks in
// waves (block b takes groups b, Bs + b, 2 Bs + b, ...), so that the grid produces rows in about
// their sequence order and the copiers, which claim in that order, find them in as they come (a
// contiguous chunk a block had the copiers wait on one block's rows while the others' sat ready,
// and the senders past the ring wait in turn: 4 x H200, prefill, ~1950 us against the rounds' 340).
template <class Idx>
__device__ void ring_send(const DispatchArgs& a, uint64_t op, int Bs) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, K = L.topk, El = L.experts_local, C = L.capacity;
  const int b = static_cast<int>(blockIdx.x), T = a.r.t1, warp = static_cast<int>(threadIdx.x >> 5), lane = lane_id();
  const int groups = (T + kRingGroup - 1) / kRingGroup;
  const uint64_t S = ring_slots(L);
  const int opar = static_cast<int>(op & 1);
  uint64_t* st = ring_state(h, L);
  unsigned* gc = at<unsigned>(h, L.ring_gc_off);  // [group][destination] rows
  unsigned* rc = at<unsigned>(h, L.ring_rc_off);
  unsigned* expert_count = expert_counters(h, L, opar);
  uint64_t* token_ranks = at<uint64_t>(h, L.token_ranks_off);
  const uint64_t* release = at<uint64_t>(h, L.ring_release_off);
  const size_t payload = static_cast<size_t>(L.hidden) * L.elem();

  __shared__ unsigned running[pad::kMaxTeam];  // rows to each destination in the waves (chunks) before this one
  __shared__ unsigned wave[pad::kMaxTeam];     // (send block 0: the operation's rows to each destination)
  __shared__ uint64_t sent0[pad::kMaxTeam];    // rows sent to each destination before this operation
  __shared__ int ok;
  for (int d = threadIdx.x; d < n; d += blockDim.x) {
    running[d] = 0;
    sent0[d] = st[RingState::sent(n, d)];
  }
  if (threadIdx.x == 0) ok = 1;
  // 1. Each of this block's groups: its rows per destination (a warp a group), and each token's
  // destination ranks (for the combine).
  for (int gi = b + warp * Bs; gi < groups; gi += kWarps * Bs) {
    unsigned lo = 0, hi = 0;  // lane d's count for destination d, and d + 32
    for (int g = 0; g < kRingGroup; ++g) {
      const int t = gi * kRingGroup + g;
      if (t >= T) break;
      int expert, dest;
      long long v;
      const uint64_t mask = token_mask<Idx>(a.topk_idx, t, K, a.num_experts, El, expert, dest, v);
      if (lane == 0) token_ranks[t] = mask;
      lo += static_cast<unsigned>((mask >> lane) & 1);
      hi += static_cast<unsigned>((mask >> (lane + 32)) & 1);
    }
    if (lane < n) gc[static_cast<size_t>(gi) * n + lane] = lo;
    if (lane + 32 < n) gc[static_cast<size_t>(gi) * n + lane + 32] = hi;
  }
  // 2. A barrier of the send blocks (every one resident): every group's counts are in.
  __syncthreads();
  if (threadIdx.x == 0) {
    device::fence_acq_rel_gpu();  // (after the block barrier: cumulative over the block's writes)
    uint64_t* bar = st + RingState::barrier(n);
    atomicAdd(reinterpret_cast<unsigned long long*>(bar), 1ull);
    const uint64_t target = op * static_cast<uint64_t>(Bs);
    if (!device::wait_for(h, bar, [&](uint64_t v) { return v >= target; }, Cmp::kGe, target, WaitKind::kMoeRing, -1, 0)) ok = 0;
  }
  __syncthreads();
  // 3. Send block 0 announces the operation's rows to each peer (its copiers' bound) and keeps them
  // for the close.
  if (b == 0 && ok) {
    for (int d = threadIdx.x; d < n; d += blockDim.x) wave[d] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < groups * n; i += blockDim.x)
      atomicAdd(&wave[i % n], *reinterpret_cast<volatile const unsigned*>(gc + i));
    __syncthreads();
    for (int d = threadIdx.x; d < n; d += blockDim.x) {
      st[RingState::out(n, d)] = wave[d];
      if (d != me) device::st_release(at_peer<uint64_t>(h, d, L.ring_announce_off) + static_cast<size_t>(op & 1) * n + me, (op << 32) | wave[d]);
    }
  }

  // 4. The rows: a warp a token at two ranks, else the block a group.
  __shared__ char* gdst[kWarps][kMaxDst];
  __shared__ uint32_t* gsdst[kWarps][kMaxDst];
  const SendCtx c{a, n, me, K, El, C, T, b, Bs, groups, opar, S, payload, token_ranks, gc, rc, expert_count, release, running, sent0, &ok};
  if (n == 2 || (L.tune & kRingWarpSenders) != 0) send_tokens_by_warp<Idx>(c, gdst, gsdst);
  else send_groups_by_block<Idx>(c, gdst, gsdst);
}

// Copy block (blockIdx.x >= Bs): rows of every peer's ring, claimed in q order per source.
__device__ void ring_copy(const DispatchRecvArgs& r, uint64_t op, int Bs) {
  const DeviceHandle& h = r.h;
  const Layout& L = r.L;
  const int n = L.n, me = h.rank, El = L.experts_local, C = L.capacity, K = L.topk;
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = lane_id();
  const uint64_t S = ring_slots(L);
  const int opar = static_cast<int>(op & 1);
  uint64_t* st = ring_state(h, L);
  unsigned* claims = at<unsigned>(h, L.ring_claims_off);
  unsigned* rc = at<unsigned>(h, L.ring_rc_off);
  unsigned* expert_count = expert_counters(h, L, opar);
  const uint64_t* ready = at<uint64_t>(h, L.ring_ready_off);
  const size_t payload = static_cast<size_t>(L.hidden) * L.elem();

  __shared__ unsigned tot[pad::kMaxTeam];
  __shared__ uint64_t recv0[pad::kMaxTeam];
  __shared__ int ok;
  if (threadIdx.x == 0) ok = 1;
  __syncthreads();
  // Each peer's announce of this operation (its rows for this rank).
  for (int s = threadIdx.x; s < n; s += blockDim.x) {
    recv0[s] = st[RingState::recv(n, s)];
    tot[s] = 0;
    if (s == me) continue;
    uint64_t v = 0;
    const uint64_t want = op & 0xffffffffull;
    if (!device::wait_for(h, at<uint64_t>(h, L.ring_announce_off) + static_cast<size_t>(op & 1) * n + s, [&](uint64_t x) { return (x >> 32) == want; },
                          Cmp::kEq, want << 32, WaitKind::kMoeRing, s, L.backoff_ns, &v))
      ok = 0;
    tot[s] = static_cast<unsigned>(v & 0xffffffffull);
    if (static_cast<int>(blockIdx.x) == Bs) st[RingState::in(n, s)] = tot[s];
  }
  __syncthreads();
  if (ok) report_peer_overflow(h, n, op - 1);  // (the grid's last block; a peer's mark precedes its announce)
  if (!ok) return;
  // Each source has a pool of the copy warps (warp cw serves source me + 1 + cw mod (n - 1)), which
  // claim its rows in q order: a warp waiting for a row that is not in yet holds up that source's
  // rows alone (with one pool for every source, warps holding rows of sources that wait for this
  // rank's releases elsewhere could starve a source whose sender waits for this rank: a cycle).
  if (n == 1) return;
  const int cw = (static_cast<int>(blockIdx.x) - Bs) * kWarps + warp;
  const int s = (me + 1 + cw % (n - 1)) % n;
#if defined(SYMMEM_HAS_BULK_COPY)
  const bool bulk = (L.tune & kRingCopyBulk) != 0;
  extern __shared__ __align__(128) char ring_stages[];
  __shared__ uint64_t bars[kWarps];
  uint32_t phase = 0;
  if (bulk && lane == 0) {
    device::mbar_init(&bars[warp], 1);
    device::fence_mbar_init();
  }
  __syncwarp();
#else
  constexpr bool bulk = false;
#endif
  for (;;) {
    unsigned q = lane == 0 ? atomicAdd(&claims[s], 1u) : 0u;
    q = __shfl_sync(0xffffffffu, q, 0);
    if (q >= tot[s]) break;
    const uint64_t Q = recv0[s] + q, k = Q % S;
    bool in = true;
    if (lane == 0)
      in = device::wait_for(h, ready + static_cast<size_t>(s) * S + k, [&](uint64_t v) { return v >= Q + 1; }, Cmp::kGe, Q + 1, WaitKind::kMoeRing, s,
                            L.backoff_ns);
    if (!__shfl_sync(0xffffffffu, in, 0)) break;
    __syncwarp();
    const char* src = at<char>(h, ring_row_off(L, s, k));
    Meta* meta = at<Meta>(h, L.meta_off + ((static_cast<size_t>(opar) * n + s) * L.max_tokens + q) * sizeof(Meta));
    int le = -1;
    unsigned slot = 0;
    if (lane < K) {
      le = __ldcg(&meta->expert[lane]);
      if (le >= 0 && le < El) {
        slot = atomicAdd(&expert_count[le], 1u);
        meta->slot[lane] = slot < static_cast<unsigned>(C) ? static_cast<int>(slot) : -1;
      } else {
        le = -1;
      }
    }
    const int token = lane == 0 ? __ldcg(&meta->src_token) : 0;
    const unsigned keep = __ballot_sync(0xffffffffu, le >= 0 && slot < static_cast<unsigned>(C));  // over capacity: reported at the close
    const int ndst = __popc(keep);
    const int from = lane < ndst ? static_cast<int>(__fns(keep, 0, lane + 1)) : 0;
    const int dle = __shfl_sync(0xffffffffu, le, from);
    const unsigned dslot = __shfl_sync(0xffffffffu, slot, from);
    const size_t out_row = static_cast<size_t>(dle < 0 ? 0 : dle) * C + dslot;
    char* const row_dst = lane < ndst ? r.recv_x + out_row * payload : nullptr;
    uint32_t* const scale_dst = lane < ndst && L.scale_words ? r.recv_scales + out_row * L.scale_words : nullptr;
    uint64_t* const rel = at_peer<uint64_t>(h, s, L.ring_release_off) + static_cast<size_t>(me) * S + k;
    if (bulk) {
#if defined(SYMMEM_HAS_BULK_COPY)
      phase = bulk_row(src, L.row, payload, L.scale_words, row_dst, scale_dst, ndst, ring_stages + static_cast<size_t>(warp) * kBulkStage,
                       &bars[warp], phase, rel, Q + 1);
#endif
    } else {
      warp_copy_cg(src, payload, row_dst, ndst);
      if (L.scale_words) warp_copy_words_cg(reinterpret_cast<const uint32_t*>(src + payload), L.scale_words, scale_dst, ndst);
    }
    if (lane == 0) {
      const int j = token / L.round;
      if (j >= 0 && j < L.rounds) atomicAdd(&rc[static_cast<size_t>(s) * L.rounds + j], 1u);
    }
    if (!bulk) {
      // Every lane's loads of the slot are done (their values were stored); then the release.
      __syncwarp();
      if (lane == 0) device::st_release(rel, Q + 1);
    }
  }
#if defined(SYMMEM_HAS_BULK_COPY)
  if (bulk) device::bulk_wait_all();  // (this lane's bulk stores performed, its stage no longer read)
#endif
}

// The grid's last block: the operation's counts into the cumulative ones, the combine's round
// counts, the expert counts (and a report of any expert over capacity), the operation.
__device__ void ring_close(const DispatchRecvArgs& r, uint64_t op) {
  const DeviceHandle& h = r.h;
  const Layout& L = r.L;
  const int n = L.n;
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(h, L.arrive_off);
  __syncthreads();
  if (!last_block(arrive)) return;
  const CountsPreload pre = preload_expert_counts(h, L, op, true);
  uint64_t* st = ring_state(h, L);
  unsigned* claims = at<unsigned>(h, L.ring_claims_off);
  unsigned* rc = at<unsigned>(h, L.ring_rc_off);
  unsigned* round_counts = at<unsigned>(h, L.round_counts_off);
  for (int d = threadIdx.x; d < n; d += blockDim.x) {
    // (for the streamed combine: this operation's rows to and from each rank, its own in both)
    st[RingState::last_out(n, d)] = st[RingState::out(n, d)];
    st[RingState::last_in(n, d)] = d == h.rank ? st[RingState::out(n, d)] : st[RingState::in(n, d)];
    st[RingState::sent(n, d)] += st[RingState::out(n, d)];
    st[RingState::recv(n, d)] += st[RingState::in(n, d)];
    st[RingState::out(n, d)] = 0;
    st[RingState::in(n, d)] = 0;
    claims[d] = 0;
  }
  for (int i = threadIdx.x; i < n * L.rounds; i += blockDim.x) {
    const int s = i / L.rounds, j = i % L.rounds;
    round_counts[static_cast<size_t>(j) * n + s] = rc[i];
    rc[i] = 0;
  }
  publish_expert_counts(h, L, r.expert_counts, op, true, pre);
  if (threadIdx.x == 0) h.local_signals[kOpSlot] = op;
}

// Two blocks an SM (at most 128 registers: the block way's send batches are 2 KiB, a warp's piece
// of a row being ~1 KiB at H 7168; the warp way's 1 KiB, a warp taking whole rows): twice the warps of one block an SM (209 registers) to hide the
// copy's and the senders' latencies. 4 x H100, prefill at 60% sending: 294 us against 317-318
// (skewed 319 against 349-351; session 22, with the copy's batches at 4 KiB).
template <class Idx>
__global__ void __launch_bounds__(kThreads, kRingBlocksPerSm) dispatch_ring_kernel(const __grid_constant__ DispatchArgs s, const __grid_constant__ DispatchRecvArgs r,
                                                                 int send_blocks) {
  coll::pdl_wait();
  const uint64_t op = s.h.local_signals[kOpSlot] + 1;
  if (static_cast<int>(blockIdx.x) < send_blocks) ring_send<Idx>(s, op, send_blocks);
  else ring_copy(r, op, send_blocks);
  ring_close(r, op);
}

}  // namespace

size_t dispatch_ring_smem(unsigned tune) { return (tune & kRingCopyBulk) != 0 ? static_cast<size_t>(kWarps) * kBulkStage : 0; }
// Both instances may take dispatch_ring_smem's largest stages (above the default 48 KiB).
static void raise_ring_smem_limit() {
  static const bool done = [] {
    const int most = static_cast<int>(dispatch_ring_smem(kRingCopyBulk));
    SYMMEM_CUDA_CHECK(cudaFuncSetAttribute(dispatch_ring_kernel<int>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    SYMMEM_CUDA_CHECK(cudaFuncSetAttribute(dispatch_ring_kernel<long long>, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
    return true;
  }();
  (void)done;
}
void launch_dispatch_ring(const DispatchArgs& send, const DispatchRecvArgs& recv, int blocks, int send_blocks, cudaStream_t s) {
  const size_t smem = dispatch_ring_smem(send.L.tune);
  if (smem > 0) raise_ring_smem_limit();
  if (send.idx_int64) coll::launch_smem(dispatch_ring_kernel<long long>, blocks, kThreads, smem, s, send, recv, send_blocks);
  else coll::launch_smem(dispatch_ring_kernel<int>, blocks, kThreads, smem, s, send, recv, send_blocks);
}
int dispatch_ring_resident_blocks_per_sm(unsigned tune) {
  const size_t smem = dispatch_ring_smem(tune);
  if (smem > 0) raise_ring_smem_limit();
  int least = 1 << 30;
  for (const void* k : {reinterpret_cast<const void*>(dispatch_ring_kernel<int>), reinterpret_cast<const void*>(dispatch_ring_kernel<long long>)}) {
    int b = 0;
    SYMMEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, kThreads, smem));
    least = b < least ? b : least;
  }
  return least;
}

}  // namespace symmem::moe::kern
