// The rooted LL collectives: reduce, gather and scatter in flag-in-data lines through the
// sequenced workspace, no barrier (as ll.cu's; a file of their own, so their reduction kernels
// build beside ll.cu's).
//
// Rule (R) of the sequenced workspace (include/symmem/device/workspace.hpp): in every operation
// each rank sends every peer an epoch-e message and waits for one from every peer. Here, as in
// ll.cu's broadcast, a message is either the data or a one-line token ("I have finished the
// previous operation"):
//   reduce, gather  every non-root sends its input to the root and a token to every other
//                   non-root; the root sends a token to every non-root. The root waits for every
//                   line of every peer's input; a non-root for one token from every peer.
//   scatter         the root sends chunk p of its input to rank p; every non-root sends a token to
//                   every peer. A non-root waits for its chunk's lines from the root and a token
//                   from every other non-root; the root for a token from every peer.
// So every rank hears from every peer in every operation, whatever the root, and (R) holds for
// any N and any sequence of rooted and unrooted operations: a rank past its wait for epoch e's
// messages knows every peer has begun epoch e, so it has finished reading epoch e - 1's lines,
// which is what lets the workspace reuse them (workspace.hpp's argument).
//
// The root's reduction folds line i of every rank in rank order, as the LL all-reduce does, so a
// reduce and an all-reduce of the same inputs give the same bits. 8-byte elements reduce in
// narrow lines only (detail::ll_narrow_only), the host's choice from the type.
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/device/workspace.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

using device::LLDataT;
using device::LLLine;

enum Kind { kRed, kGa, kSc };

template <int K, DataType D, ReduceOp R, size_t P>
__global__ void __launch_bounds__(kThreads) ll_rooted_kernel(LLArgs a) {
  using LLData = LLDataT<P>;
  pdl_wait();
  const DeviceHandle& h = a.ws;
  const int n = h.nranks, me = h.rank, root = a.root;
  const device::SeqOp sq = device::seq_begin(h);
  const uint32_t flag = sq.flag;
  auto slot = [&](void* base, int src) { return device::ll_slot(base, a.layout, sq, src); };
  const size_t lines = device::ll_lines<P>(a.bytes);
  // Scatter's lines spread over the blocks, as ll_kernel's all-gather and broadcast (session 85,
  // call 7: 0.04-0.13 us faster at 16-256 KiB on 2 x H200, level elsewhere); reduce and gather
  // keep grid_index (with the spread, beside another change, gather was 0.12-0.17 us slower at
  // 16 KiB - 1 MiB and reduce 0.09 at 8 B, 0.15 at 512 KiB: call 4).
  const size_t idx = K == kSc ? device::grid_index_spread() : device::grid_index(), stride = device::grid_size();
  // Data goes from every non-root to the root (reduce, gather) or from the root to every non-root
  // (scatter); every other message is a token.
  const bool to_root = K != kSc;

  // Send.
  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    LLLine* dst = slot(h.peers[p], me);
    const bool data = to_root ? p == root : me == root;
    if (!data) {
      if (idx == 0) device::ll_store(dst, uint64_t{0}, flag);
      continue;
    }
    device::ll_put<P>(dst, K == kSc ? a.in + static_cast<size_t>(p) * a.bytes : a.in, a.bytes, flag, idx, stride);
  }

  // Receive.
  bool ok = true;
  LLData v;
  const bool gets_data = to_root ? me == root : me != root;
  if (gets_data) {
    if constexpr (K == kRed) {
      for (size_t i = idx; i < lines && ok; i += stride) {
        device::Pack<D, LLData> acc;
        for (int p = 0; p < n; ++p) {
          LLData w;
          if (p == me) w = device::ll_payload<P>(a.in, a.bytes, i);
          else if (!(ok = device::ll_wait(h, slot(h.local, p) + i, flag, p, &w))) break;
          if (p == 0) acc.load(w);
          else acc.template reduce<R>(w);
        }
        if (ok) device::ll_unpack(a.out, a.bytes, i, acc.template store<R>(n));
      }
    } else if constexpr (K == kGa) {
      char* own = a.out + static_cast<size_t>(me) * a.bytes;
      if (a.in != own) device::copy_bytes(own, a.in, a.bytes, idx, stride);
      for (int k = 1; k < n && ok; ++k) {
        const int p = (me + n - k) % n;
        for (size_t i = idx; i < lines && ok; i += stride)
          if ((ok = device::ll_wait(h, slot(h.local, p) + i, flag, p, &v))) device::ll_unpack(a.out + static_cast<size_t>(p) * a.bytes, a.bytes, i, v);
      }
    } else {
      for (size_t i = idx; i < lines && ok; i += stride)
        if ((ok = device::ll_wait(h, slot(h.local, root) + i, flag, root, &v))) device::ll_unpack(a.out, a.bytes, i, v);
    }
  } else if (K == kSc && me == root) {
    const char* own = a.in + static_cast<size_t>(me) * a.bytes;
    if (own != a.out) device::copy_bytes(a.out, own, a.bytes, idx, stride);
  }
  // Tokens: from every peer that sent this rank no data.
  if (idx == 0)
    for (int p = 0; p < n && ok; ++p) {
      const bool sent_data = to_root ? me == root : p == root;
      if (p != me && !sent_data) ok = device::ll_wait(h, slot(h.local, p), flag, p, &v);
    }
  device::seq_end(h, a.layout, sq);
}

template <size_t P>
void launch_format(CollOp op, const LLArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  using Bytes = std::integral_constant<DataType, DataType::kUInt8>;
  using Sum = std::integral_constant<ReduceOp, ReduceOp::kSum>;
  switch (op) {
    case CollOp::kReduce:
      dispatch_reduce(d, r, [&](auto D, auto R) {
        // (8-byte elements reduce in narrow lines only: the host never asks for wide ones)
        if constexpr (P % dtype_size(D.value) != 0) fail("launch_ll_rooted: " + std::string(dtype_name(D.value)) + " reduces in narrow lines only");
        else launch(ll_rooted_kernel<kRed, D.value, R.value, P>, blocks, kThreads, s, a);
      });
      break;
    case CollOp::kGather: launch(ll_rooted_kernel<kGa, Bytes::value, Sum::value, P>, blocks, kThreads, s, a); break;
    case CollOp::kScatter: launch(ll_rooted_kernel<kSc, Bytes::value, Sum::value, P>, blocks, kThreads, s, a); break;
    default: fail("launch_ll_rooted: not a rooted LL operation: " + std::string(coll_name(op)));
  }
}

}  // namespace

void launch_ll_rooted(CollOp op, const LLArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  dispatch_ll_format(a.payload, [&](auto P) { launch_format<P.value>(op, a, d, r, blocks, s); });
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
