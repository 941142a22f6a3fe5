#pragma once
// Device half of the sequenced workspace (protocol and layout: workspace.hpp). A barrier-free
// operation brackets its kernel with seq_begin / seq_end, writes into peers' slots of its parity,
// and reads its own, so that rule (R) of workspace.hpp holds.
#include "symmem/device/atomics.cuh"
#include "symmem/device/handle.hpp"
#include "symmem/device/ll.cuh"
#include "symmem/device/workspace.hpp"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

/// The running operation: its epoch, LL flag and slot parity.
struct SeqOp {
  uint64_t epoch;
  uint32_t flag;
  size_t parity;
};

/// Every block calls it first: the number of this operation on this workspace.
__device__ __forceinline__ SeqOp seq_begin(const DeviceHandle& ws) {
  const uint64_t e = ws.local_signals[ws::kEpochSlot] + 1;  // raised by the previous operation's last block
  return SeqOp{e, ws::flag_of(e), static_cast<size_t>(e & 1)};
}

/// `rank`'s LL slot for lines from `src` (base: ws.local for this rank, ws.peers[p] for peer p).
__device__ __forceinline__ LLLine* ll_slot(void* base, const ws::Layout& L, const SeqOp& op, int src) {
  return reinterpret_cast<LLLine*>(static_cast<char*>(base) + L.ll_offset(op.parity, src));
}
/// The push stage for bytes from `src`.
__device__ __forceinline__ char* push_stage(void* base, const ws::Layout& L, const SeqOp& op, int src) {
  return static_cast<char*>(base) + L.stage_offset(op.parity, src);
}

/// Every thread of every block calls it last, after its reads of this operation's slots. The last
/// block to arrive raises the epoch (the next operation on this workspace, the next kernel in
/// stream order, sees it), after zeroing this rank's LL slots of this parity when the flag is about
/// to wrap (one thread: it happens once in 2^32 operations).
/// A grid of one block is its own last block: no count (one atomic round trip off the kernel's
/// tail; the small LL and push operations are one block).
__device__ inline void seq_end(const DeviceHandle& ws, const ws::Layout& L, const SeqOp& op) {
  __syncthreads();  // the block's reads are done
  if (threadIdx.x != 0) return;
  unsigned long long* done = reinterpret_cast<unsigned long long*>(ws.local_signals + ws::kDoneSlot);
  if (gridDim.x > 1 && atomicAdd(done, 1ull) != gridDim.x - 1) return;
  if (ws::cleans(op.epoch)) {
    int4* lines = reinterpret_cast<int4*>(ll_slot(ws.local, L, op, 0));
    const size_t count = static_cast<size_t>(L.nranks) * L.ll_slot_lines;
    for (size_t i = 0; i < count; ++i) lines[i] = make_int4(0, 0, 0, 0);
  }
  if (gridDim.x > 1) *done = 0;
  ws.local_signals[ws::kEpochSlot] = op.epoch;
}

}  // namespace symmem::device
#endif
