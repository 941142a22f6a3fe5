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
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/device/workspace.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

using device::LLLine;

enum Kind { kAR, kRS, kAG, kBC, kA2A };

template <int K, DataType D, ReduceOp R>
__global__ void __launch_bounds__(kThreads) ll_kernel(LLArgs a) {
  pdl_wait();
  const DeviceHandle& h = a.ws;
  const int n = h.nranks, me = h.rank;
  const device::SeqOp sq = device::seq_begin(h);
  const uint32_t flag = sq.flag;
  auto slot = [&](void* base, int src) { return device::ll_slot(base, a.layout, sq, src); };
  const size_t lines = device::ll_lines(a.bytes);
  const size_t idx = device::grid_index(), stride = device::grid_size();

  // Send.
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    LLLine* dst = slot(h.peers[p], me);
    if (K == kBC && me != a.root) {
      if (idx == 0) device::ll_store(dst, 0, flag);  // token: "I have finished the previous operation"
      continue;
    }
    if (K == kAR && a.chunk > 0) {  // two-shot: chunk p only
      const size_t lo = min(a.bytes, static_cast<size_t>(p) * a.chunk);
      device::ll_put(dst, a.in + lo, min(a.bytes, lo + a.chunk) - lo, flag, idx, stride);
      continue;
    }
    const char* src = (K == kRS || K == kA2A) ? a.in + static_cast<size_t>(p) * a.bytes : a.in;
    device::ll_put(dst, src, a.bytes, flag, idx, stride);
  }

  // Receive and combine.
  bool ok = true;
  uint64_t v = 0;
  bool two_shot = false;
  if constexpr (K == kAR) two_shot = a.chunk > 0;
  if constexpr (K == kAR) if (two_shot) {
    // Two-shot: the reduce-scatter half was sent above (chunk p to rank p); fold this rank's chunk,
    // send each folded line to every peer, then take theirs.
    const size_t C = a.chunk, L = device::ll_lines(C);
    auto len = [&](int p) { const size_t lo = min(a.bytes, static_cast<size_t>(p) * C); return min(a.bytes, lo + C) - lo; };
    const size_t my_lines = device::ll_lines(len(me));
    for (size_t i = idx; i < my_lines && ok; i += stride) {
      device::Pack<D, uint64_t> acc;
      for (int p = 0; p < n && ok; ++p) {
        if (p == me) v = device::ll_payload(a.in + static_cast<size_t>(me) * C, len(me), i);
        else ok = device::ll_wait(h, slot(h.local, p) + i, flag, p, &v);
        if (p == 0) acc.load(v);
        else acc.template reduce<R>(v);
      }
      if (!ok) break;
      const uint64_t r = acc.template store<R>(n);
      for (int k = 1; k < n; ++k) device::ll_store(slot(h.peers[(me + k) % n], me) + L + i, r, flag);
      device::ll_unpack(a.out + static_cast<size_t>(me) * C, len(me), i, r);
    }
    for (int k = 1; k < n && ok; ++k) {
      const int p = (me + n - k) % n;
      const size_t lines_p = device::ll_lines(len(p));
      for (size_t i = idx; i < lines_p && ok; i += stride)
        if ((ok = device::ll_wait(h, slot(h.local, p) + L + i, flag, p, &v))) device::ll_unpack(a.out + static_cast<size_t>(p) * C, len(p), i, v);
    }
  }
  if (two_shot) {
  } else if constexpr (K == kAR || K == kRS) {
    const char* mine = K == kRS ? a.in + static_cast<size_t>(me) * a.bytes : a.in;
    for (size_t i = idx; i < lines && ok; i += stride) {
      device::Pack<D, uint64_t> acc;
      for (int p = 0; p < n && ok; ++p) {  // rank order: every rank computes the same bits
        if (p == me) v = device::ll_payload(mine, a.bytes, i);
        else ok = device::ll_wait(h, slot(h.local, p) + i, flag, p, &v);
        if (p == 0) acc.load(v);
        else acc.template reduce<R>(v);
      }
      if (ok) device::ll_unpack(a.out, a.bytes, i, acc.template store<R>(n));
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

}  // namespace

void launch_ll(CollOp op, const LLArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  switch (op) {
    case CollOp::kAllReduce:
      dispatch_reduce(d, r, [&](auto D, auto R) { launch(ll_kernel<kAR, D.value, R.value>, blocks, kThreads, s, a); });
      break;
    case CollOp::kReduceScatter:
      dispatch_reduce(d, r, [&](auto D, auto R) { launch(ll_kernel<kRS, D.value, R.value>, blocks, kThreads, s, a); });
      break;
    case CollOp::kAllGather: launch(ll_kernel<kAG, DataType::kUInt8, ReduceOp::kSum>, blocks, kThreads, s, a); break;
    case CollOp::kBroadcast: launch(ll_kernel<kBC, DataType::kUInt8, ReduceOp::kSum>, blocks, kThreads, s, a); break;
    case CollOp::kAllToAll: launch(ll_kernel<kA2A, DataType::kUInt8, ReduceOp::kSum>, blocks, kThreads, s, a); break;
    default: fail("launch_ll: no LL kernel for " + std::string(coll_name(op)));
  }
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
