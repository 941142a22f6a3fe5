// Push all-reduce and reduce-scatter: no barrier. Block b of each rank writes its part of the
// payload into every peer's workspace slot (plain 16-byte stores), then raises a flag per peer
// (release); block b of the peer waits for those flags (acquire) and reduces its part from local
// memory only. Flow control: the sequenced workspace (include/symmem/device/workspace.hpp): every
// rank flags every peer in every operation and waits for every peer's flags, which is rule (R).
// The flags are per (source, block), so all ranks must launch the same grid: push_blocks() is a
// function of the payload size alone, which every rank shares.
#include "kernels.hpp"
#include "launch.cuh"
#include "reduce_common.cuh"
#include "symmem/device/workspace.cuh"
#include "symmem/error.hpp"

namespace symmem::coll {
namespace {

template <bool RS, DataType D, ReduceOp R>
__global__ void __launch_bounds__(kThreads) push_kernel(PushArgs a) {
  pdl_wait();
  const DeviceHandle& h = a.ws;
  const int n = h.nranks, me = h.rank;
  const device::SeqOp sq = device::seq_begin(h);
  const uint64_t epoch = sq.epoch;
  auto stage = [&](void* base, int src) { return device::push_stage(base, a.layout, sq, src); };
  auto flag_slot = [&](int src) { return ws::kPushFlagSlot + static_cast<size_t>(src) * ws::kMaxBlocks + blockIdx.x; };
  // This block's part: [lo, hi), 16-byte aligned but for the message's end.
  const size_t words = (a.bytes + 15) / 16;
  const size_t lo = min(a.bytes, words * blockIdx.x / gridDim.x * 16), hi = min(a.bytes, words * (blockIdx.x + 1) / gridDim.x * 16);

  for (int k = 1; k < n; ++k) {
    const int p = (me + k) % n;
    const char* src = RS ? a.in + static_cast<size_t>(p) * a.bytes : a.in;
    device::copy_bytes(stage(h.peers[p], me) + lo, src + lo, hi - lo, threadIdx.x, blockDim.x);
  }
  __syncthreads();  // the block's stores precede the flags in the block's order...
  const int t = threadIdx.x;
  bool ok = true;
  if (t < n && t != me) {
    // ...and the release (cumulative over what the barrier made visible) orders them for peer t.
    device::st_release(h.signals[t] + flag_slot(me), epoch);
    // Acquire: peer t's part of this epoch is in this rank's slot once its flag shows the epoch.
    ok = device::wait_until(h, h.local_signals + flag_slot(t), Cmp::kGe, epoch, WaitKind::kCollective, t);
  }
  if (__syncthreads_and(ok)) {
    const char* mine = RS ? a.in + static_cast<size_t>(me) * a.bytes : a.in;
    const size_t esize = sizeof(typename device::Elem<D>::Raw);
    const bool aligned = ((reinterpret_cast<uintptr_t>(mine) | reinterpret_cast<uintptr_t>(a.out)) & 15u) == 0;
    const size_t vec_end = aligned ? hi / 16 * 16 : lo;
    constexpr int U = kUnroll<D>;
    // Every source's staged part (this rank's from its input): several sources' loads in flight
    // before the first fold (reduce_words_of), folded in rank order.
    auto src_of = [&](int r) { return r == me ? mine : stage(h.local, r); };
    for (size_t w = lo / 16 + t; w < vec_end / 16; w += U * blockDim.x) {
      int4 res[U];
      reduce_words_of<D, R, U>(n, src_of, w, blockDim.x, vec_end / 16, res);
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (w + u * blockDim.x < vec_end / 16) reinterpret_cast<int4*>(a.out)[w + u * blockDim.x] = res[u];
    }
    using Raw = typename device::Elem<D>::Raw;
    for (size_t e = vec_end / esize + t; e < hi / esize; e += blockDim.x) {
      device::Pack<D, Raw> acc;
      for (int r = 0; r < n; ++r) {
        const Raw v = reinterpret_cast<const Raw*>(src_of(r))[e];
        if (r == 0) acc.load(v);
        else acc.template reduce<R>(v);
      }
      reinterpret_cast<Raw*>(a.out)[e] = acc.template store<R>(n);
    }
  }
  device::seq_end(h, a.layout, sq);
}

}  // namespace

void launch_push(CollOp op, const PushArgs& a, DataType d, ReduceOp r, int blocks, cudaStream_t s) {
  require(blocks <= ws::kMaxBlocks, "launch_push: too many blocks");
  if (op == CollOp::kAllReduce)
    dispatch_reduce(d, r, [&](auto D, auto R) { launch(push_kernel<false, D.value, R.value>, blocks, kThreads, s, a); });
  else
    dispatch_reduce(d, r, [&](auto D, auto R) { launch(push_kernel<true, D.value, R.value>, blocks, kThreads, s, a); });
  SYMMEM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace symmem::coll
