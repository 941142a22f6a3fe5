// MoE dispatch, one round (moe_kernels.hpp). Send: a block per token of the round finds the ranks
// its experts live on and, for each, claims the next staging row for this source on that rank (a
// local counter), stores the row (and its scales) there from all its warps, and the routing record
// (source token, that rank's experts, weights) at the operation-wide index of that row. Each block
// then adds its arrival and the rows it staged to every rank's dispatch flag. Receive: once every
// sender's blocks have all arrived, a warp per staged row copies it into each local expert it
// chose (expert-major), into the rows claimed on counters that run over the whole operation, up to
// the capacity; the last round reports the counts. At one round the senders claim those rows
// (Layout::sender_claims: an atomic on the expert's rank a chosen expert, beside the row's stores)
// and write them into the record; over several rounds the receive copy claims them.
#include "moe_common.cuh"
#include "symmem/error.hpp"

namespace symmem::moe::kern {
namespace {

// The round epoch e and the operation op a kernel runs under are read once, at its start (the send
// half's last block raises the operation in the pad while other blocks may still run).
// A send half's per-block state: the current token's destinations, the rows staged on each rank.
struct SendShared {
  char* dst[32];      // where the token's row goes: peers' staging rows, then (self-direct) local expert rows
  uint32_t* sdst[32]; // and its scale words
  int ndst, nstaged;  // destinations; of them staging rows (the first nstaged)
  unsigned rows[pad::kMaxTeam];
};

// Self-direct: the block's last token's own expert rows are written after its flags (send_own_rows),
// so that its fence waits for the peers' rows only (2 x H200, session 16, prefill in one kernel a
// round: 241.5 -> 233.5 us). Not in the pipelined rounds (their kernel has no such step).
struct OwnRows {
  const char* src = nullptr;  // this warp's share of the row (read again there: it is in L2)
  size_t p0 = 0, len = 0;     // where that share starts in the row, and its bytes
  int t = -1;                 // the token, or -1: nothing deferred
};

// The send half's stores: rows, scales and routing records of this block's tokens.
template <class Idx>
__device__ __forceinline__ void send_rows(const DispatchArgs& a, uint64_t e, uint64_t op, SendShared& sh, Part part, OwnRows* own) {
  const DeviceHandle& h = a.h;
  const Layout& L = a.L;
  const int n = L.n, me = h.rank, K = L.topk;
  const int parity = static_cast<int>(e & 1), opar = static_cast<int>(op & 1);
  unsigned* send_count = at<unsigned>(h, L.send_count_off);
  const unsigned* sent_total = at<unsigned>(h, L.sent_total_off);
  uint64_t* token_ranks = at<uint64_t>(h, L.token_ranks_off);
  const size_t payload = static_cast<size_t>(L.hidden) * L.elem();
  const int lane = lane_id();
  // Self-direct (a.recv_x set: the caller gave the outputs to the send half): a row this rank sends
  // itself skips the staging area and goes straight into its local experts' rows, claimed here as
  // the receive copy claims them (the expert counters, up to the capacity). It still takes a
  // staging index (send_count) for its routing record, so the records, the flags' row counts and
  // combine stay as they are; the receive half skips these rows (DispatchRecvArgs::self_direct).
  // Where senders claim (L.sender_claims), every chosen expert's row is claimed here, on its rank,
  // and its slot goes into the record.
  const bool direct = a.recv_x != nullptr, claims = L.sender_claims;
  const int El = L.experts_local, C = L.capacity;
  stamp_lead(h, L, part, kDispSendStart);

  // A block per token (block-major: a decode batch of 128 tokens lands on 128 SMs). Its warp 0
  // routes the token: lane i < ndst takes the i-th destination rank and claims its staging row
  // there (the claims run in parallel), into shared memory; then every warp of the block moves its
  // share of the row (16-byte aligned parts) to every destination, the row read once per part.
  // Warp 0 also writes the routing records, the last warp the scales. The trip count is the same
  // for every thread of a block, so the block barriers below are safe.
  constexpr int kWarps = kThreads / 32;
  char** s_dst = sh.dst;
  uint32_t** s_sdst = sh.sdst;
  int& s_ndst = sh.ndst;
  unsigned* s_rows = sh.rows;  // rows this block staged on each rank (its flag adds; zeroed by clear_rows)
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const size_t share = ((payload + kWarps * 16 - 1) / (kWarps * 16)) * 16;
  const size_t p0 = static_cast<size_t>(warp) * share < payload ? static_cast<size_t>(warp) * share : payload;
  const size_t p1 = p0 + share < payload ? p0 + share : payload;
  for (int t = a.r.t0 + part.block(); t < a.r.t1; t += part.count) {
    // This warp's share of the row is read before the routing (which it does not depend on).
    const char* src = a.x + static_cast<size_t>(t) * payload + p0;
    RowBatch rb;
    rb.load(src, p1 - p0, 0);
    int expert = -1, dest = -1, d = -1;
    unsigned slot = 0, before = 0;  // before: the rows sent to d in the operation's earlier rounds
    unsigned lslot = 0;             // lane k's row in its expert, where claimed here (>= C: dropped)
    unsigned own_slot = 0;          // the same where the expert is this rank's (self-direct needs it first)
    int ndst = 0;                   // the token's destination ranks (warp 0)
    if (warp == 0) {
      long long v;
      const uint64_t mask = token_mask<Idx>(a.topk_idx, t, K, a.num_experts, El, expert, dest, v);
      // (lanes < K, first: a peer's claim is a round trip over the links; its slot is needed only
      // by the record, written after this warp's share of the row. System scope: ranks on other
      // GPUs add to the same counters.) The claims on peers and on this rank go into different
      // registers: self-direct reads this rank's before the block barrier, and reading one
      // register the peers' claims also write holds the warp (and so every store of the block)
      // until they are back over the links. (Measured level in session 38 at 2 and 4 GPUs: that
      // round trip was hidden behind the row loads and the staging claims.)
      if (dest >= 0 && dest != me && claims)
        lslot = device::atom_add_relaxed_sys(expert_counters(h, L, opar, dest) + (expert - dest * El), 1u);
      if (dest == me && (claims || direct))
        own_slot = device::atom_add_relaxed_sys(expert_counters(h, L, opar, dest) + (expert - dest * El), 1u);
      if (routed_badly(expert, v)) note_bad_index(h, t, v, a.num_experts);
      if (lane == 0) token_ranks[t] = mask;
      ndst = __popcll(mask);
      if (lane < ndst) {
        d = nth_rank(mask);
        slot = atomicAdd(&send_count[d], 1u);
        before = sent_total[d];  // (loaded here, every destination's at once, beside the claim)
        ++s_rows[d];  // (the lanes hold distinct ranks)
      }
      // The row's destinations, compacted: the staging rows (every rank, or every peer where
      // self-direct), then this rank's kept expert rows.
      const bool staged = lane < ndst && !(direct && d == me);
      const unsigned st = __ballot_sync(0xffffffffu, staged), below = (1u << lane) - 1u;
      if (staged) {
        char* p = at_peer<char>(h, d, L.stage_off + ((static_cast<size_t>(parity) * n + me) * L.round + slot) * L.row);
        s_dst[__popc(st & below)] = p;
        s_sdst[__popc(st & below)] = reinterpret_cast<uint32_t*>(p + payload);
      }
      int nout = __popc(st);
      if (lane == 0) sh.nstaged = nout;
      if (direct) {  // (uniform)
        const bool local = dest == me && own_slot < static_cast<unsigned>(C);
        const unsigned lk = __ballot_sync(0xffffffffu, local);
        if (local) {
          const size_t r = static_cast<size_t>(expert - me * El) * C + own_slot;
          s_dst[nout + __popc(lk & below)] = a.recv_x + r * payload;
          s_sdst[nout + __popc(lk & below)] = a.recv_scales != nullptr ? a.recv_scales + r * L.scale_words : nullptr;
        }
        nout += __popc(lk);
      }
      if (lane == 0) s_ndst = nout;
    }
    __syncthreads();
    // The block's last token of the round leaves its own expert rows for send_own_rows.
    const bool defer = direct && own != nullptr && (L.tune & kOwnInLoop) == 0 && t + part.count >= a.r.t1;
    const int nout = defer ? sh.nstaged : s_ndst;
    if (defer) {
      own->src = src;
      own->p0 = p0;
      own->len = p1 - p0;
      own->t = t;
    }
    char* dst = lane < nout ? s_dst[lane] : nullptr;
    if (p0 < p1) warp_fanout16(src, p1 - p0, dst != nullptr ? dst + p0 : nullptr, nout, rb, t + warp);
    if (L.scale_words && warp == kWarps - 1)
      warp_fanout_words(a.scales + static_cast<size_t>(t) * L.scale_words, L.scale_words, lane < nout ? s_sdst[lane] : nullptr, nout);
    if (warp == 0) {
      // The routing record of each copy: source token, that rank's experts (local ids) and weights.
      const float wk = lane < K && a.weights != nullptr ? a.weights[static_cast<size_t>(t) * K + lane] : 1.0f;
      for (int i = 0; i < ndst; ++i) {
        const int di = __shfl_sync(0xffffffffu, d, i);
        const unsigned si = __shfl_sync(0xffffffffu, slot, i), bi = __shfl_sync(0xffffffffu, before, i);
        const size_t rec = (static_cast<size_t>(opar) * n + me) * L.max_tokens + bi + si;
        Meta* meta = at_peer<Meta>(h, di, L.meta_off + rec * sizeof(Meta));
        if (lane < K) {  // (entries >= K are never read)
          const bool mine = dest == di;
          meta->expert[lane] = mine ? expert - di * L.experts_local : -1;
          meta->weight[lane] = mine ? wk : 1.0f;
          const unsigned ls = di == me ? own_slot : lslot;
          if (claims || (direct && di == me)) meta->slot[lane] = mine && ls < static_cast<unsigned>(C) ? static_cast<int>(ls) : -1;  // (as recv_copy)
        }
        if (lane == 0) meta->src_token = t;
      }
    }
    __syncthreads();  // s_dst is rewritten by the next token
  }
  stamp_lead(h, L, part, kDispSendWorked);
}
// After the block's flags: the deferred token's own expert rows (sh still holds its
// destinations), each warp's share read again from x. They are this rank's outputs, read in stream
// order only, so no fence or flag covers them.
__device__ __forceinline__ void send_own_rows(const DispatchArgs& a, const SendShared& sh, OwnRows& own) {
  if (own.t < 0 || sh.ndst == sh.nstaged) return;  // (the same on every thread of the block)
  const Layout& L = a.L;
  constexpr int kWarps = kThreads / 32;
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = lane_id();
  const int first = sh.nstaged, nloc = sh.ndst - sh.nstaged;
  char* dst = lane < nloc ? sh.dst[first + lane] : nullptr;
  RowBatch rb;
  rb.load(own.src, own.len, 0);
  if (own.len > 0) warp_fanout16(own.src, own.len, dst != nullptr ? dst + own.p0 : nullptr, nloc, rb, warp);
  if (L.scale_words && warp == kWarps - 1)
    warp_fanout_words(a.scales + static_cast<size_t>(own.t) * L.scale_words, L.scale_words, lane < nloc ? sh.sdst[first + lane] : nullptr, nloc);
}
// Every block of a send half zeroes its row counts first (a block of a pipelined round that only
// copies adds its arrival with no rows).
__device__ __forceinline__ void clear_rows(const DispatchArgs& a, SendShared& sh) {
  for (int d = threadIdx.x; d < a.L.n; d += blockDim.x) sh.rows[d] = 0;
  __syncthreads();
}
// The block's arrival and its rows in every rank's flag (0 rows where nothing went), at once.
__device__ __forceinline__ void send_flags(const DispatchArgs& a, uint64_t e, const SendShared& sh) {
  arrive_at_flags(a.h, a.L, dispatch_flag(static_cast<int>(e & 1), a.h.rank), [&](int d) { return static_cast<uint64_t>(sh.rows[d]); },
                  kDispSendFenced, kDispFlagsRaised);
}
// The round's send counts closed, by the threads of the block elected after every claim is in:
// the rows staged on each rank (zeroed for the next round), the operation's running totals, and on
// the first round the operation.
__device__ __forceinline__ void close_send_counts(const DispatchArgs& a, uint64_t op) {
  const DeviceHandle& h = a.h;
  unsigned* send_count = at<unsigned>(h, a.L.send_count_off);
  unsigned* total = at<unsigned>(h, a.L.sent_total_off);
  for (int d = threadIdx.x; d < a.L.n; d += blockDim.x) {
    const unsigned rows = send_count[d];
    send_count[d] = 0;
    total[d] = a.r.last ? 0u : total[d] + rows;
  }
  if (a.r.first && threadIdx.x == 0) h.local_signals[kOpSlot] = op;
}
// Then, off the peers' path, the last block (every claim in) closes them. (dispatch_kernel leaves
// this to its last block, RecvBook, under kOneElectionDispatch; the pipelined rounds keep theirs, where
// one election measured 1-2% slower at prefill.)
__device__ __forceinline__ void send_close(const DispatchArgs& a, uint64_t op) {
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(a.h, a.L.arrive_off);
  __syncthreads();
  if (last_block(arrive)) close_send_counts(a, op);
}

// A receive half's per-block state: the flags' values, each source's rows this round, where they
// start, and the source's rows in the operation's earlier rounds (recv_total, read once here).
struct RecvShared {
  uint64_t seen[pad::kMaxTeam], base[pad::kMaxTeam];
  int rows[pad::kMaxTeam], start[pad::kMaxTeam + 1];
  unsigned total[pad::kMaxTeam];
  int ok;
};

// Waits for every rank's round flag (its `senders` blocks), then takes the round's row counts.
// (A wait that gave up leaves this block with nothing to copy; it still arrives at the election.)
// Source s's rows in the operation's earlier rounds and its flag's base, loaded before the wait
// (an earlier kernel wrote them) and kept in shared memory by thread s, which waits for flag s
// with it: the rows after the wait need no global load (the compiler cannot keep a global value
// across the wait's acquire loads, and loaded the base again there).
__device__ __forceinline__ void recv_preload(const DeviceHandle& h, const Layout& L, uint64_t e, RecvShared& sh) {
  const uint64_t* base = at<uint64_t>(h, L.flag_base_off) + flag_base_index(0, static_cast<int>(e & 1), 0);
  const unsigned* recv_total = at<unsigned>(h, L.recv_total_off);
  for (int s = threadIdx.x; s < L.n; s += blockDim.x) {
    sh.total[s] = recv_total[s];
    sh.base[s] = base[s];
  }
}
// preloaded: recv_preload ran already (the one-kernel dispatch: before the block's flag adds).
// stamper: the block that stamps the receive half's phases (block 0; the last block where the
// one-kernel dispatch elects none, dispatch_recv).
__device__ __forceinline__ void recv_wait(const DeviceHandle& h, const Layout& L, const DispatchRecvArgs& a, uint64_t e, uint64_t op, RecvShared& sh,
                                          bool preloaded = false, int stamper = 0) {
  const int n = L.n, parity = static_cast<int>(e & 1);
  const bool stamps = static_cast<int>(blockIdx.x) == stamper && threadIdx.x == 0;
  if (stamps) stamp(h, L, kDispRecvStart);
  if (!preloaded) recv_preload(h, L, e, sh);
  const bool ok = wait_all(h, n, [&](int p) { return dispatch_flag(parity, p); }, sh.base, static_cast<uint64_t>(a.senders), sh.seen,
                           L.backoff_ns);
  if (stamps) stamp(h, L, kDispRecvFlagsIn);
  // Thread s takes source s's rows, then the prefix.
  for (int s = threadIdx.x; s < n; s += blockDim.x) sh.rows[s] = ok ? static_cast<int>((sh.seen[s] - sh.base[s]) & kRowsMask) : 0;
  if (threadIdx.x == 0) sh.ok = ok;
  __syncthreads();
  prefix_starts(sh.rows, n, sh.start);
  if (a.r.first && ok) report_peer_overflow(h, n, op - 1);  // a peer over capacity in the last operation
  __syncthreads();
}

// One staged row of a receive copy, by a warp: claim() reads its routing record and claims a row
// of each local expert it chose (lane k < K, in parallel; over capacity: reported by the epilogue,
// never written), or where the sender claimed them (L.sender_claims) reads the rows from the
// record; store() writes the staged row there (read once; its first batch and first 64 scale
// words were loaded before the claims).
struct CopyRow {
  const char* src;
  RowBatch rb;
  WordBatch sb;
  int ndst;
  size_t out_row;
  __device__ __forceinline__ void claim(const DeviceHandle& h, const Layout& L, const RecvShared& sh, long long item, int skip, int parity, int opar) {
    const int n = L.n, El = L.experts_local, C = L.capacity, me = h.rank, lane = lane_id();
    const int* start = sh.start;
    const int j = static_cast<int>(item) + (static_cast<int>(item) >= start[me] ? skip : 0);
    int s = 0;
    while (start[s + 1] <= j) ++s;
    const size_t row = (static_cast<size_t>(parity) * n + s) * L.round + (j - start[s]);
    const size_t rec = (static_cast<size_t>(opar) * n + s) * L.max_tokens + sh.total[s] + (j - start[s]);
    const size_t payload = static_cast<size_t>(L.hidden) * L.elem();
    src = at<char>(h, L.stage_off + row * L.row);
    Meta* meta = at<Meta>(h, L.meta_off + rec * sizeof(Meta));
    rb.load(src, payload, 0);
    if (L.scale_words) sb.load(reinterpret_cast<const uint32_t*>(src + payload), L.scale_words);
    // The kept claims compacted: lane i holds the i-th destination row.
    int le = -1;
    unsigned slot = 0;
    if (lane < L.topk) {
      le = meta->expert[lane];
      const int claimed = L.sender_claims ? meta->slot[lane] : 0;  // (both loads in flight at once)
      if (le >= 0 && le < El) {
        if (L.sender_claims) {
          slot = claimed >= 0 ? static_cast<unsigned>(claimed) : static_cast<unsigned>(C);  // (-1: dropped)
        } else {
          slot = atomicAdd(expert_counters(h, L, opar) + le, 1u);
          meta->slot[lane] = slot < static_cast<unsigned>(C) ? static_cast<int>(slot) : -1;
        }
      } else {
        le = -1;
      }
    }
    const unsigned keep = __ballot_sync(0xffffffffu, le >= 0 && slot < static_cast<unsigned>(C));
    ndst = __popc(keep);
    const int from = lane < ndst ? static_cast<int>(__fns(keep, 0, lane + 1)) : 0;
    const int dle = __shfl_sync(0xffffffffu, le, from);
    const unsigned dslot = __shfl_sync(0xffffffffu, slot, from);
    out_row = static_cast<size_t>(dle < 0 ? 0 : dle) * C + dslot;
  }
  __device__ __forceinline__ void store(const Layout& L, const DispatchRecvArgs& a) {
    const size_t payload = static_cast<size_t>(L.hidden) * L.elem();
    const int lane = lane_id();
    warp_fanout16(src, payload, lane < ndst ? a.recv_x + out_row * payload : nullptr, ndst, rb, 0);
    if (L.scale_words)
      warp_fanout_words(reinterpret_cast<const uint32_t*>(src + payload), L.scale_words,
                        lane < ndst ? a.recv_scales + out_row * L.scale_words : nullptr, ndst, &sb);
  }
};

// A warp per staged row: into each local expert it chose. Rows are strided over `part`, or taken
// from the copy claims counter where `claims` is set (pipelined rounds: blocks done with their
// sends join the copy). close(): run by every thread of the block once its warps' claims are in
// (it may elect a block: recv_close). Where every warp of `part` has at most one row and no claims
// counter is used (a decode batch; the same verdict on every block: start and part are the same),
// that is before the rows' stores, so the elected block's epilogue (the expert counts: claims
// only) runs beside the other blocks' stores and the election's fence waits for no copy store;
// otherwise after the copy. (4 x H100, session 27, two passes against the copy before the election:
// decode dispatch 20.26-20.28 us against 20.62-20.63, skewed 20.67-20.70 against 21.37-21.73,
// the 1-token pplx shapes 0.3 us less, 64 experts at 128 tokens 0.1 less; combine level.)
template <class Close>
__device__ __forceinline__ void recv_copy(const DeviceHandle& h, const Layout& L, const DispatchRecvArgs& a, uint64_t e, uint64_t op, const RecvShared& sh, Part part,
                                          bool claims, Close close, int stamper = -1) {
  const int parity = static_cast<int>(e & 1), opar = static_cast<int>(op & 1);
  const int* start = sh.start;
  // Rows spread block-major (kSpreadCopy): a decode batch's few hundred rows, each copied into
  // several experts by one warp, filled the first blocks' warps, 32 SMs at 2 ranks. (Combine's
  // items stay warp-major: block-major measured 1.5% slower at prefill, no different at decode.)
  // Self-direct: this rank's own rows are in its experts already (send_rows); the items skip them.
  const int me = h.rank, skip = a.self_direct ? start[me + 1] - start[me] : 0;
  const long long items = start[L.n] - skip;
  const bool one_pass = !claims && items <= part.warps();
  WorkItems w(items, claims ? at<unsigned>(h, L.arrive_off) + kCopyClaims : nullptr, part, (L.tune & kSpreadCopy) != 0);
  CopyRow r;
  if (one_pass) {
    if (w.valid()) r.claim(h, L, sh, w.item, skip, parity, opar);
  } else {
    for (; w.valid(); w.next()) {
      r.claim(h, L, sh, w.item, skip, parity, opar);
      r.store(L, a);
    }
  }
  if ((stamper < 0 ? part.lead() : static_cast<int>(blockIdx.x) == stamper) && threadIdx.x == 0)
    stamp(h, L, kDispRecvWorked);  // (one pass: the stamper's claims; its stores follow, unstamped)
  close();
  if (one_pass && w.valid()) r.store(L, a);
}

// The last block of the receive half (every block done reading the flags and claiming its rows;
// copying too, but for recv_copy's one pass, whose stores run beside this): the round's
// counts, the flags' bases for their next round, and on the last round the expert counts. With
// `send` (one kernel for both halves) also the send half's counts: every block of the grid added
// its flag after its claims and has passed its own rank's flag since, so every claim is in.
// booked: the round's counts, totals, bases and epoch and the send half's counts were written
// already (RecvBook); only the expert counts are left.
__device__ __forceinline__ void recv_close(const DeviceHandle& h, const Layout& L, const DispatchRecvArgs& a, uint64_t e, uint64_t op, const RecvShared& sh,
                                           const DispatchArgs* send = nullptr, bool booked = false) {
  const int n = L.n, parity = static_cast<int>(e & 1);
  __shared__ unsigned* arrive;
  if (threadIdx.x == 0) arrive = at<unsigned>(h, L.arrive_off) + 1;
  __syncthreads();
  if (last_block(arrive)) {  // its threads split the epilogue: source s, local expert le
    if (threadIdx.x == 0) stamp(h, L, kDispRecvElected);
    // Each thread's first expert count and the bad-index note are loaded first, beside the send
    // counts (one round trip).
    const CountsPreload pre = preload_expert_counts(h, L, op, a.r.last);
    if (send != nullptr && !booked) close_send_counts(*send, op);
    unsigned* round_counts = at<unsigned>(h, L.round_counts_off) + static_cast<size_t>(a.r.index) * n;
    unsigned* total = at<unsigned>(h, L.recv_total_off);
    uint64_t* base = at<uint64_t>(h, L.flag_base_off) + flag_base_index(0, parity, 0);
    for (int s = threadIdx.x; !booked && s < n; s += blockDim.x) {
      round_counts[s] = static_cast<unsigned>(sh.rows[s]);
      total[s] = a.r.last ? 0u : total[s] + round_counts[s];
      if (sh.ok) base[s] = sh.seen[s];  // the flag's value at this round, for its next one
    }
    if (threadIdx.x == 0) at<unsigned>(h, L.arrive_off)[kCopyClaims] = 0;  // every block's claims are in
    publish_expert_counts(h, L, a.expert_counts, op, a.r.last, pre);
    if (threadIdx.x == 0 && !booked) h.local_signals[kEpochSlot] = e;  // the next kernel in stream order sees this operation's epoch
    stamp_block(h, L, kDispRecvDone);
  }
}

// The one-kernel dispatch's bookkeeping without an election, by the grid's last block once it
// has passed its wait: what the election wrote besides the expert counts (the round's counts, the
// totals, the flags' bases, the epoch; the send half's counts and totals, the operation). Safe for
// any N and any interleaving: this rank's own flag counts an arrival of every block of this grid
// (rule (R)), each block adds it after its claims (send_count) and after loading, before its
// fence, what is written here (the bases and recv_total: recv_preload; the epoch, the operation
// and sent_total at its start), and nothing of this kernel reads them again; the next kernel in
// stream order sees the writes. The send counts are loaded right after the wait and written after
// the block's copy, so their round trip runs under it. The expert counts: where the receive copy
// claims, they need every block's claims, and the election keeps them. Where the senders claimed
// (L.sender_claims), every claim came before a flag this block has seen (a peer's atomics before
// its fence and flag adds; this rank's blocks' before their arrival at its own flag, rule (R)), so
// this block loads them right after its wait too and publishes them after its own claims, with no
// election (moe_kernels.hpp: the counters' parity keeps the next operation's claims apart); it
// also stamps the receive half's phases then (dispatch_recv).
struct RecvBook {
  bool mine = false;
  unsigned rows = 0, sent = 0;  // thread d: send_count[d], sent_total[d]
  CountsPreload counts;         // where senders claim
  __device__ __forceinline__ void load(const DeviceHandle& h, const Layout& L, const DispatchRecvArgs& a, uint64_t op) {
    mine = blockIdx.x == gridDim.x - 1;
    const int d = static_cast<int>(threadIdx.x);
    if (mine && d < L.n) {
      rows = at<unsigned>(h, L.send_count_off)[d];
      sent = at<unsigned>(h, L.sent_total_off)[d];
    }
    if (mine && L.sender_claims) counts = preload_expert_counts(h, L, op, a.r.last);
  }
  // Where senders claim: the counts, by this block once its own claims are done (all its threads).
  __device__ __forceinline__ void publish(const DeviceHandle& h, const Layout& L, const DispatchRecvArgs& a, uint64_t op) const {
    if (!mine) return;
    if (threadIdx.x == 0) stamp(h, L, kDispRecvElected);
    publish_expert_counts(h, L, a.expert_counts, op, a.r.last, counts);
    stamp_block(h, L, kDispRecvDone);
  }
  __device__ __forceinline__ void write(const DeviceHandle& h, const Layout& L, const DispatchRecvArgs& a, uint64_t e, uint64_t op, const RecvShared& sh,
                                        const DispatchArgs& send) const {
    const int d = static_cast<int>(threadIdx.x), n = L.n;
    if (!mine) return;
    if (d < n) {
      at<unsigned>(h, L.send_count_off)[d] = 0;
      at<unsigned>(h, L.sent_total_off)[d] = send.r.last ? 0u : sent + rows;
      at<unsigned>(h, L.round_counts_off)[static_cast<size_t>(a.r.index) * n + d] = static_cast<unsigned>(sh.rows[d]);
      at<unsigned>(h, L.recv_total_off)[d] = a.r.last ? 0u : sh.total[d] + static_cast<unsigned>(sh.rows[d]);
      if (sh.ok) at<uint64_t>(h, L.flag_base_off)[flag_base_index(0, static_cast<int>(e & 1), d)] = sh.seen[d];
    }
    if (d == 0) {
      h.local_signals[kEpochSlot] = e;
      if (send.r.first) h.local_signals[kOpSlot] = op;
    }
  }
};
static_assert(pad::kMaxTeam <= kThreads, "RecvBook: a thread a rank");

template <class Idx>
__device__ __forceinline__ void dispatch_send(const DispatchArgs& a, uint64_t e, uint64_t op, bool close = true) {
  __shared__ SendShared sh;
  OwnRows own;
  clear_rows(a, sh);
  send_rows<Idx>(a, e, op, sh, Part::grid(), &own);
  send_flags(a, e, sh);
  send_own_rows(a, sh, own);
  if (close) send_close(a, op);
}
// h and L: the receive half's handle and layout, from the arguments whose fields the kernel has
// read already (the one-kernel dispatch passes its send half's: the same values, whose parameter
// lines its send half has brought into the constant cache; 4 x H200, session 18: 0.02-0.11 us
// less a dispatch, two passes).
__device__ __forceinline__ void dispatch_recv(const DeviceHandle& h, const Layout& L, const DispatchRecvArgs& a, uint64_t e, uint64_t op,
                                              const DispatchArgs* send = nullptr, RecvShared* pre = nullptr) {
  __shared__ RecvShared own;
  RecvShared& sh = pre != nullptr ? *pre : own;
  // The one-kernel dispatch whose senders claim elects no block: its last block, which publishes
  // the counts, stamps the receive phases (so that they stay in order).
  const bool no_election = pre != nullptr && L.sender_claims;
  const int stamper = no_election ? static_cast<int>(gridDim.x) - 1 : 0;
  recv_wait(h, L, a, e, op, sh, pre != nullptr, stamper);
  if (pre != nullptr) {
    RecvBook book;
    book.load(h, L, a, op);
    auto close = [&] {
      if (no_election) book.publish(h, L, a, op);
      else recv_close(h, L, a, e, op, sh, send, true);
    };
    recv_copy(h, L, a, e, op, sh, Part::grid(), false, close, stamper);
    book.write(h, L, a, e, op, sh, *send);
  } else {
    auto close = [&] { recv_close(h, L, a, e, op, sh, send); };
    recv_copy(h, L, a, e, op, sh, Part::grid(), false, close);
  }
}

template <class Idx>
__global__ void __launch_bounds__(kThreads) dispatch_send_kernel(DispatchArgs a) {
  coll::pdl_wait();
  dispatch_send<Idx>(a, a.h.local_signals[kEpochSlot] + 1, a.h.local_signals[kOpSlot] + (a.r.first ? 1 : 0));
}
__global__ void __launch_bounds__(kThreads) dispatch_recv_kernel(DispatchRecvArgs a) {
  coll::pdl_wait();
  // The operation was raised by its first send round, an earlier kernel.
  dispatch_recv(a.h, a.L, a, a.h.local_signals[kEpochSlot] + 1, a.h.local_signals[kOpSlot]);
}
// One kernel per round (Kernels::kOne, or kAuto at one round): the send half, each block's flag
// adds, then the receive half in the same grid. Every block must be resident at once (the receive
// half spins until every block of the send half has added to this rank's own flag): the host sizes
// the grid to what stays resident and refuses the path where ranks share a GPU. The arguments are
// grid constants: the receive half's election takes the send half's by address, which otherwise
// copies them (~300 bytes) into every thread's local memory, and every later read goes there.
template <class Idx>
__global__ void __launch_bounds__(kThreads) dispatch_kernel(const __grid_constant__ DispatchArgs s, const __grid_constant__ DispatchRecvArgs r) {
  coll::pdl_wait();
  const uint64_t e = s.h.local_signals[kEpochSlot] + 1, op = s.h.local_signals[kOpSlot] + (s.r.first ? 1 : 0);
  const bool one = (s.L.tune & kOneElectionDispatch) != 0;
  __shared__ RecvShared rs;
  if (one) recv_preload(s.h, s.L, e, rs);  // (before the block's flag adds: RecvBook)
  dispatch_send<Idx>(s, e, op, !one);
  dispatch_recv(s.h, s.L, r, e, op, one ? &s : nullptr, one ? &rs : nullptr);
}

// Pipelined rounds (moe_kernels.hpp): round j's flags waited for, round j+1's rows stored (next),
// round j's rows copied, then round j+1's flags added; the elections last. With send_blocks in
// (0, gridDim.x) and a next round, the first send_blocks blocks store round j+1 and the others copy
// round j, at once, and a sending block done with its stores joins the copy (the rows are claimed
// from a counter, so the copy ends when the grid has done it, whichever blocks did). Every block
// still adds its arrival to round j+1's flags only after all its own work of round j is done (its
// claimed rows copied), so the flow-control argument of moe_kernels.hpp holds as it is. Otherwise
// every block does both, one after the other. No block waits for another block of this grid
// (round j's flags, this rank's included, were added by earlier kernels), so the grid need not be
// resident at once.
template <class Idx>
__global__ void __launch_bounds__(kThreads) dispatch_pipe_kernel(DispatchArgs s, DispatchRecvArgs r, bool next, int send_blocks) {
  coll::pdl_wait();
  const uint64_t e = r.h.local_signals[kEpochSlot] + 1, op = r.h.local_signals[kOpSlot];
  __shared__ SendShared ss;
  __shared__ RecvShared rs;
  if (next) clear_rows(s, ss);
  recv_wait(r.h, r.L, r, e, op, rs);
  const PipeSplit ps(next, send_blocks);
  if (ps.sends) send_rows<Idx>(s, e + 1, op, ss, ps.senders, nullptr);  // (own rows written in the loop)
  recv_copy(r.h, r.L, r, e, op, rs, ps.finishers, ps.split, [] {});
  if (next) {
    send_flags(s, e + 1, ss);
    send_close(s, op);
  }
  recv_close(r.h, r.L, r, e, op, rs);
}

}  // namespace

void launch_dispatch_pipe(const DispatchArgs& send_next, const DispatchRecvArgs& recv, bool next, int blocks, int send_blocks, cudaStream_t s) {
  if (send_next.idx_int64) coll::launch(dispatch_pipe_kernel<long long>, blocks, kThreads, s, send_next, recv, next, send_blocks);
  else coll::launch(dispatch_pipe_kernel<int>, blocks, kThreads, s, send_next, recv, next, send_blocks);
}
void launch_dispatch_send(const DispatchArgs& a, int blocks, cudaStream_t s) {
  if (a.idx_int64) coll::launch(dispatch_send_kernel<long long>, blocks, kThreads, s, a);
  else coll::launch(dispatch_send_kernel<int>, blocks, kThreads, s, a);
}
void launch_dispatch_recv(const DispatchRecvArgs& a, int blocks, cudaStream_t s) {
  coll::launch(dispatch_recv_kernel, blocks, kThreads, s, a);
}
void launch_dispatch(const DispatchArgs& send, const DispatchRecvArgs& recv, int blocks, cudaStream_t s) {
  if (send.idx_int64) coll::launch(dispatch_kernel<long long>, blocks, kThreads, s, send, recv);
  else coll::launch(dispatch_kernel<int>, blocks, kThreads, s, send, recv);
}
int dispatch_resident_blocks_per_sm() {
  int least = 1 << 30;
  auto take = [&](const void* k) {
    int b = 0;
    SYMMEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, kThreads, 0));
    least = b < least ? b : least;
  };
  take(reinterpret_cast<const void*>(dispatch_kernel<int>));
  take(reinterpret_cast<const void*>(dispatch_kernel<long long>));
  take(reinterpret_cast<const void*>(dispatch_send_kernel<int>));
  take(reinterpret_cast<const void*>(dispatch_send_kernel<long long>));
  take(reinterpret_cast<const void*>(dispatch_recv_kernel));
  take(reinterpret_cast<const void*>(dispatch_pipe_kernel<int>));
  take(reinterpret_cast<const void*>(dispatch_pipe_kernel<long long>));
  return least;
}

}  // namespace symmem::moe::kern
