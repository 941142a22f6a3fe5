// LL collectives: every rank pushes its payload as flag-in-data lines into each peer's workspace
// slot, then waits for its peers' lines and combines them. No barrier: the flow control is the
// sequenced workspace (include/symmem/device/workspace.hpp), whose rule (R) every kernel here
// keeps: each rank sends every peer an epoch-e message and waits for one from every peer. In
// broadcast the root sends data; every other rank sends a one-line token to every peer (the root
// and the other non-roots), so that a non-root hears from every peer too.
//
// All-reduce two-shot (LLArgs::chunk > 0, larger messages at 3 ranks or more): rank p owns chunk p.
// Every rank sends chunk p of its input to rank p as lines [0, L) of its slot there; rank p folds
// line i of every rank's chunk p (rank order, as one-shot) and sends the result to every rank as
// line L + i of its slot there, and takes the others' folded lines from its own slot. A rank sends
// 2 (N-1)/N of the message instead of N-1 times it, for one more hop. Every rank still sends
// every peer epoch-e lines and waits for lines from every peer (both halves), so rule (R) holds;
// the two halves use disjoint lines of one slot (2 L <= the slot's lines, checked by the host).
//
// Each kernel is instantiated for both line formats (P: 8 or 12 payload bytes a line, ll.cuh), but
// the reductions of 8-byte types for narrow lines only; LLArgs::payload says which, chosen by the
// host from the size and the type alone, so every rank sends and reads one operation in the same
// format.
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/device/workspace.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

using device::LLDataT;
using device::LLLine;

enum Kind { kAR, kRS, kAG, kBC, kA2A };

/// Two-shot all-reduce: rank p's chunk of the message, [off, off + len).
struct Chunk {
  size_t off, len;
};
__device__ __forceinline__ Chunk chunk_of(const LLArgs& a, int p) {
  const size_t lo = min(a.bytes, static_cast<size_t>(p) * a.chunk);
  return Chunk{lo, min(a.bytes, lo + a.chunk) - lo};
}

template <int K, DataType D, ReduceOp R, size_t P>
__global__ void __launch_bounds__(kThreads) ll_kernel(LLArgs a) {
  using LLData = LLDataT<P>;
  pdl_wait();
  const DeviceHandle& h = a.ws;
  const int n = h.nranks, me = h.rank;
  const device::SeqOp sq = device::seq_begin(h);
  const uint32_t flag = sq.flag;
  auto slot = [&](void* base, int src) { return device::ll_slot(base, a.layout, sq, src); };
  const size_t lines = device::ll_lines<P>(a.bytes);
  // All-gather and broadcast take line i by member i of the grid spread over the blocks
  // (grid_index_spread: warp 0 of every block before warp 1 of any; with ~64 lines a block, a
  // line a thread by grid_index fills only the first lines / 512 blocks). 2 x H200, 2 ranks,
  // against grid_index, alternating (session 85, call 7): all_gather 0.02-0.14 us faster at
  // 4-64 KiB and 1 MiB, broadcast 0.08-0.12 at 8-128 KiB (0.01-0.04 slower at 32 B - 2 KiB, one
  // block and the same indices: the code's layout), the rest level. In every operation (call 6)
  // all_reduce was 0.06-0.16 slower at 8-32 KiB, all_to_all 0.02-0.08 slower to 2 KiB and
  // reduce_scatter no faster: they keep grid_index. Which thread handles a line is this rank's
  // own choice (a line is matched to its sender by its place and flag, never by the thread), so
  // ranks need not agree on it.
  constexpr bool kSpread = K == kAG || K == kBC;
  const size_t idx = kSpread ? device::grid_index_spread() : device::grid_index(), stride = device::grid_size();

  // Send.
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    LLLine* dst = slot(h.peers[p], me);
    if (K == kBC && me != a.root) {
      if (idx == 0) device::ll_store(dst, uint64_t{0}, flag);  // token: "I have finished the previous operation"
      continue;
    }
    if (K == kAR && a.chunk > 0) {  // two-shot: chunk p only
      const Chunk c = chunk_of(a, p);
      device::ll_put<P>(dst, a.in + c.off, c.len, flag, idx, stride);
      continue;
    }
    const char* src = (K == kRS || K == kA2A) ? a.in + static_cast<size_t>(p) * a.bytes : a.in;
    device::ll_put<P>(dst, src, a.bytes, flag, idx, stride);
  }

  // Receive and combine.
  bool ok = true;
  LLData v;
  if constexpr (K == kAR || K == kRS) {
    // Line i folded over the ranks in rank order (every rank computes the same bits): this rank's
    // from `own` (own_len bytes), each peer's from line i of its slot here.
    auto fold = [&](const char* own, size_t own_len, size_t i, LLData* r) {
      device::Pack<D, LLData> acc;
      LLData w;
      for (int p = 0; p < n; ++p) {
        if (p == me) w = device::ll_payload<P>(own, own_len, i);
        else if (!device::ll_wait(h, slot(h.local, p) + i, flag, p, &w)) return false;
        if (p == 0) acc.load(w);
        else acc.template reduce<R>(w);
      }
      *r = acc.template store<R>(n);
      return true;
    };
    if (K == kAR && a.chunk > 0) {
      // Two-shot: the reduce-scatter half went out above (chunk p to rank p); fold this rank's
      // chunk, send each folded line to every peer (lines L + i), then take theirs.
      const size_t L = device::ll_lines<P>(a.chunk);
      const Chunk mine = chunk_of(a, me);
      LLData r;
      for (size_t i = idx; i < device::ll_lines<P>(mine.len) && (ok = fold(a.in + mine.off, mine.len, i, &r)); i += stride) {
        for (int k = 1; k < n; ++k) device::ll_store(slot(h.peers[(me + k) % n], me) + L + i, r, flag);
        device::ll_unpack(a.out + mine.off, mine.len, i, r);
      }
      for (int k = 1; k < n && ok; ++k) {
        const int p = (me + n - k) % n;
        const Chunk c = chunk_of(a, p);
        for (size_t i = idx; i < device::ll_lines<P>(c.len) && ok; i += stride)
          if ((ok = device::ll_wait(h, slot(h.local, p) + L + i, flag, p, &v))) device::ll_unpack(a.out + c.off, c.len, i, v);
      }
    } else {
      const char* mine = K == kRS ? a.in + static_cast<size_t>(me) * a.bytes : a.in;
      LLData r;
      for (size_t i = idx; i < lines && (ok = fold(mine, a.bytes, i, &r)); i += stride) device::ll_unpack(a.out, a.bytes, i, r);
    }
  } else if constexpr (K == kAG || K == kA2A) {
    const char* own = K == kA2A ? a.in + static_cast<size_t>(me) * a.bytes : a.in;
    char* own_out = a.out + static_cast<size_t>(me) * a.bytes;
    if (own != own_out) device::copy_bytes(own_out, own, a.bytes, idx, stride);
    for (int k = 1; k < n && ok; ++k) {
      const int p = (me + n - k) % n;
      for (size_t i = idx; i < lines && ok; i += stride)
        if ((ok = device::ll_wait(h, slot(h.local, p) + i, flag, p, &v))) device::ll_unpack(a.out + static_cast<size_t>(p) * a.bytes, a.bytes, i, v);
    }
  } else {  // broadcast
    if (me == a.root) {
      if (a.in != a.out) device::copy_bytes(a.out, a.in, a.bytes, idx, stride);
    } else {
      for (size_t i = idx; i < lines && ok; i += stride)
        if ((ok = device::ll_wait(h, slot(h.local, a.root) + i, flag, a.root, &v))) device::ll_unpack(a.out, a.bytes, i, v);
    }
    // Tokens from every non-root peer.
    if (idx == 0)
      for (int p = 0; p < n && ok; ++p)
        if (p != me && p != a.root) ok = device::ll_wait(h, slot(h.local, p), flag, p, &v);
  }
  device::seq_end(h, a.layout, sq);
}

// ll_kernel by groups of kLLGroup peers, for one-block grids at 4 ranks or more, and at 3 ranks
// for all-gather and all-to-all (the host's choice, from the operation, the size and the team: the
// same on every rank; never two-shot, which starts at 256 KiB): the peers' bases loaded once
// (beside seq_begin's epoch load; a load of h.peers[p] inside a loop of stores waits behind them,
// a round trip a peer), the sends through ll_put_group (a group's payloads loaded before its
// stores) and a group's lines polled at once (ll_wait_group). The same lines as ll_kernel's, sent
// and awaited from every peer in every call (rule (R) as above; only their order differs), so the
// two forms may serve one operation's ranks.
// Against ll_kernel, alternated in one call (bench/results/2026-11-27-h*x4-*-s26c*-ll-*.json): 4 x
// H200 at 4 ranks 0.15-0.68 us faster at 8 B - 8 KiB for all-reduce (to 512 B), all-gather,
// all-to-all and reduce-scatter (to 2 KiB), the same above; 4 x H100 likewise. At 3 ranks
// all-reduce at 512 B - 2 KiB was 0.2-0.26 us slower: ll_kernel there for the reductions; all-gather
// 0.23-0.36 us faster at 8 B - 8 KiB (4 x H100, session 27: ...-s27c1-ll-simplify.json, pa3/m3).
// The same code in multi-block grids, and at G = 1 in place of ll_kernel's loops (one kernel for
// both), measured 0.1-2.4 us slower from 8 KiB at 4 ranks and at 2 ranks: hence two kernels.
// This form (one receive helper, no two-shot path) against session 26's (4 x H100, session 27, same
// file, w4/m4): all-gather 0.2 us and all-to-all 0.3 us faster to 8 KiB, all-reduce and
// reduce-scatter level. Polling only the first pending line between sweeps (p4) was 0.05-0.12 us
// slower: not taken.
template <int K, DataType D, ReduceOp R, size_t P>
__global__ void __launch_bounds__(kThreads) ll_group_kernel(LLArgs a) {
  using LLData = LLDataT<P>;
  constexpr int G = device::kLLGroup;
  pdl_wait();
  const DeviceHandle& h = a.ws;
  const int n = h.nranks, me = h.rank;
  __shared__ void* peer_base[pad::kMaxTeam];
  void* const my_base = static_cast<int>(threadIdx.x) < n ? h.peers[threadIdx.x] : nullptr;
  const device::SeqOp sq = device::seq_begin(h);
  if (static_cast<int>(threadIdx.x) < n) peer_base[threadIdx.x] = my_base;
  __syncthreads();
  const uint32_t flag = sq.flag;
  auto slot = [&](void* base, int src) { return device::ll_slot(base, a.layout, sq, src); };
  const size_t lines = device::ll_lines<P>(a.bytes);
  const size_t idx = device::grid_index(), stride = device::grid_size();

  // Send.
  for (int k0 = 1; k0 < n; k0 += G) {
    LLLine* dst[G];
    const char* src[G];
    size_t len[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      const int p = (me + k0 + g) % n;
      dst[g] = k0 + g < n ? slot(peer_base[p], me) : nullptr;
      src[g] = (K == kRS || K == kA2A) ? a.in + static_cast<size_t>(p) * a.bytes : a.in;
      len[g] = a.bytes;
    }
    if (K == kBC && me != a.root) {
      if (idx == 0)
#pragma unroll
        for (int g = 0; g < G; ++g)
          if (dst[g] != nullptr) device::ll_store(dst[g], uint64_t{0}, flag);  // token: "I have finished the previous operation"
      continue;
    }
    if (K == kRS || K == kA2A) device::ll_put_group<P>(dst, src, len, flag, idx, stride);
    else device::ll_put_group<P, true>(dst, src, len, flag, idx, stride);
  }

  // Receive and combine: line i of G peers at a time. group_lines(p0, keep, i, peer): line i of ranks
  // p0 .. p0 + G - 1 of those that keep(p) says, polled at once (false where a wait timed out).
  bool ok = true;
  LLData w[G];
  auto group_lines = [&](int p0, auto keep, size_t i, int (&peer)[G]) {
    const LLLine* src[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      peer[g] = (p0 + g) % n;
      src[g] = p0 + g < p0 + n && keep(p0 + g) ? slot(h.local, peer[g]) + i : nullptr;
    }
    return device::ll_wait_group<P>(h, src, peer, flag, w);
  };
  int peer[G];
  if constexpr (K == kAR || K == kRS) {
    // Line i folded over the ranks in rank order, as ll_kernel (the same bits on every rank).
    const char* mine = K == kRS ? a.in + static_cast<size_t>(me) * a.bytes : a.in;
    for (size_t i = idx; i < lines && ok; i += stride) {
      device::Pack<D, LLData> acc;
      for (int p0 = 0; p0 < n && ok; p0 += G) {
        if (!(ok = group_lines(p0, [&](int p) { return p < n && p != me; }, i, peer))) break;
#pragma unroll
        for (int g = 0; g < G; ++g) {
          const int p = p0 + g;
          if (p >= n) break;
          if (p == me) w[g] = device::ll_payload<P>(mine, a.bytes, i);
          if (p == 0) acc.load(w[g]);
          else acc.template reduce<R>(w[g]);
        }
      }
      if (ok) device::ll_unpack(a.out, a.bytes, i, acc.template store<R>(n));
    }
  } else if constexpr (K == kAG || K == kA2A) {
    const char* own = K == kA2A ? a.in + static_cast<size_t>(me) * a.bytes : a.in;
    char* own_out = a.out + static_cast<size_t>(me) * a.bytes;
    if (own != own_out) device::copy_bytes(own_out, own, a.bytes, idx, stride);
    // Peers me + 1 .. me + n - 1 (mod n), each into its place of the output.
    for (int k0 = me + 1; k0 < me + n && ok; k0 += G)
      for (size_t i = idx; i < lines && ok; i += stride) {
        if (!(ok = group_lines(k0, [&](int k) { return k < me + n; }, i, peer))) break;
#pragma unroll
        for (int g = 0; g < G; ++g)
          if (k0 + g < me + n) device::ll_unpack(a.out + static_cast<size_t>(peer[g]) * a.bytes, a.bytes, i, w[g]);
      }
  } else {  // broadcast
    if (me == a.root) {
      if (a.in != a.out) device::copy_bytes(a.out, a.in, a.bytes, idx, stride);
    } else {
      LLData v;
      for (size_t i = idx; i < lines && ok; i += stride)
        if ((ok = device::ll_wait(h, slot(h.local, a.root) + i, flag, a.root, &v))) device::ll_unpack(a.out, a.bytes, i, v);
    }
    // Tokens from every non-root peer.
    if (idx == 0)
      for (int p0 = 0; p0 < n && ok; p0 += G) ok = group_lines(p0, [&](int p) { return p < n && p != me && p != a.root; }, 0, peer);
  }
  device::seq_end(h, a.layout, sq);
}

template <size_t P>
void launch_ll_format(CollOp op, const LLArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  const int n = a.ws.nranks;
  const bool gathers = op == CollOp::kAllGather || op == CollOp::kAllToAll;
  const bool grouped = blocks == 1 && a.chunk == 0 && (n >= 4 || (n == 3 && gathers));  // (two-shot starts at 256 KiB: never one block)
  auto go = [&](auto K, auto D, auto R) {
    // (8-byte elements reduce in narrow lines only: a wide line's 12 bytes would split one; the
    // host never asks, detail::ll_narrow_only.)
    if constexpr (P % dtype_size(D.value) != 0) fail("launch_ll: " + std::string(dtype_name(D.value)) + " reduces in narrow lines only");
    else if (grouped) launch(ll_group_kernel<K.value, D.value, R.value, P>, blocks, kThreads, s, a);
    else launch(ll_kernel<K.value, D.value, R.value, P>, blocks, kThreads, s, a);
  };
  using Bytes = std::integral_constant<DataType, DataType::kUInt8>;
  using Sum = std::integral_constant<ReduceOp, ReduceOp::kSum>;
  switch (op) {
    case CollOp::kAllReduce: dispatch_reduce(d, r, [&](auto D, auto R) { go(std::integral_constant<int, kAR>{}, D, R); }); break;
    case CollOp::kReduceScatter: dispatch_reduce(d, r, [&](auto D, auto R) { go(std::integral_constant<int, kRS>{}, D, R); }); break;
    case CollOp::kAllGather: go(std::integral_constant<int, kAG>{}, Bytes{}, Sum{}); break;
    case CollOp::kBroadcast: go(std::integral_constant<int, kBC>{}, Bytes{}, Sum{}); break;
    case CollOp::kAllToAll: go(std::integral_constant<int, kA2A>{}, Bytes{}, Sum{}); break;
    default: fail("launch_ll: no LL kernel for " + std::string(coll_name(op)));
  }
}

}  // namespace

void launch_ll(CollOp op, const LLArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  dispatch_ll_format(a.payload, [&](auto P) { launch_ll_format<P.value>(op, a, d, r, blocks, s); });
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
