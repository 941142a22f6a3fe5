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

/// The running operation: its epoch, LL flag and slot parity; ticket: the order in which this block
/// started among the grid's blocks (multi-block grids; held by the block's ticket_thread() and read
/// only there, in seq_end).
struct SeqOp {
  uint64_t epoch;
  uint32_t flag;
  size_t parity;
  uint32_t ticket;
};

/// The thread of a block that takes its ticket and may raise the epoch: lane 0 of the block's last
/// warp, not thread 0, because the ticket's release waits for every load its warp has in flight,
/// and kernels have warp 0 load their first operands before seq_begin so that those loads overlap
/// it (all_to_all_v's counts and the peers' bases; session 80, 2 x H200: its stamps' epoch and
/// counts phases 1330 + 960 cycles before, 720 + 525 after; with its own two changes all_to_all_v
/// at 2 ranks took 0.20-0.35 us less at 8 B - 256 KiB, all_reduce and all_to_all's LL kernels the
/// same within 0.03 us).
__device__ __forceinline__ unsigned ticket_thread() { return (blockDim.x - 1) & ~31u; }

/// Every thread of every block calls it first: the number of this operation on this workspace.
///
/// Who raises the epoch (seq_end), and why no block of this operation can read the raised value:
/// in a grid of several blocks, once every thread of a block has read the epoch (the barrier), its
/// ticket_thread() takes a ticket (a release add on a counter: cumulative over the block's reads,
/// which the barrier ordered before it, whichever warp made them); the block whose ticket is the last one
/// (gridDim.x - 1) knows that every block has read the epoch, and raises it at its end, after an
/// acquire fence (its ticket read every other block's release add, so every read of the epoch
/// happens before the raise). The ticket's value is used only there, so its round trip overlaps
/// the operation instead of lengthening the tail, as a count of finished blocks did (the last
/// block to finish raised the epoch after a returning add on the kernel's tail). A grid of one
/// block takes no ticket. The next operation reads the epoch after this kernel has completed
/// (stream order; with PDL, after griddepcontrol.wait), when the counter is back to 0.
///
/// take_ticket = false: the kernel takes it later by seq_take_ticket (below), before seq_end.
__device__ __forceinline__ SeqOp seq_begin(const DeviceHandle& ws, bool take_ticket = true) {
  const uint64_t e = ws.local_signals[ws::kEpochSlot] + 1;  // raised by the previous operation (seq_end)
  uint32_t ticket = 0;
  if (gridDim.x > 1) {
    __syncthreads();  // every thread of this block has read the epoch
    // (The add written here as well as in seq_take_ticket below, on purpose: seq_begin calling
    // seq_take_ticket, the same operations, compiled 0.02-0.14 us slower in the LL kernels at 2
    // ranks on 2 x H200, session 85, call 5.)
    if (take_ticket && threadIdx.x == ticket_thread())
      ticket = atom_add_release_gpu(reinterpret_cast<uint32_t*>(ws.local_signals + ws::kStartSlot), 1);
  }
  return SeqOp{e, ws::flag_of(e), static_cast<size_t>(e & 1), ticket};
}

/// The ticket of a block whose seq_begin did not take it, at a point of the kernel's choosing
/// between seq_begin and seq_end, by ticket_thread() (every thread of the block may call it; the
/// others do nothing). The argument of seq_begin holds at any such point: seq_begin's barrier
/// already ordered every thread's read of the epoch before it, and the add's release is
/// cumulative over them. Its use: the add's fence waits for the ticket warp's accesses in
/// flight, and the block's next barrier for the fence, so a kernel takes it where its last warp
/// would wait anyway (all_to_all_v: after the counts' barrier, while warp 0 sends the headers; in
/// seq_begin the fence waited for the epoch's load and held the counts' barrier: 0.33-0.36 us of
/// 4.6 at 2 ranks, session 81).
__device__ __forceinline__ void seq_take_ticket(const DeviceHandle& ws, SeqOp& op) {
  if (gridDim.x > 1 && threadIdx.x == ticket_thread())
    op.ticket = atom_add_release_gpu(reinterpret_cast<uint32_t*>(ws.local_signals + ws::kStartSlot), 1);
}

/// `rank`'s LL slot for lines from `src` (base: ws.local for this rank, ws.peers[p] for peer p).
__device__ __forceinline__ LLLine* ll_slot(void* base, const ws::Layout& L, const SeqOp& op, int src) {
  return reinterpret_cast<LLLine*>(static_cast<char*>(base) + L.ll_offset(op.parity, src));
}
/// The push stage for bytes from `src`.
__device__ __forceinline__ char* push_stage(void* base, const ws::Layout& L, const SeqOp& op, int src) {
  return static_cast<char*>(base) + L.stage_offset(op.parity, src);
}

/// Every thread of every block calls it last, after its reads of this operation's slots. One block
/// raises the epoch (the next operation on this workspace, the next kernel in stream order, sees
/// it): the block that started last (seq_begin), or the only one. The two operations that zero
/// this rank's LL slots of their parity before the flag wraps (once in 65535 operations) need every
/// block's reads done first: there the last block to finish (a count) zeroes them (all its threads)
/// and raises the epoch.
__device__ inline void seq_end(const DeviceHandle& ws, const ws::Layout& L, const SeqOp& op) {
  __syncthreads();  // the block's reads are done
  unsigned* started = reinterpret_cast<unsigned*>(ws.local_signals + ws::kStartSlot);  // (32 bits of the slot)
  if (ws::cleans(op.epoch)) {  // (the same for every thread of the grid)
    unsigned long long* done = reinterpret_cast<unsigned long long*>(ws.local_signals + ws::kDoneSlot);
    int last = 0;
    if (threadIdx.x == 0) {
      // (A release add, cumulative over the block's reads through the barrier above: they
      // happen before the zeroing and the raise of the block that counts last and fences. Two
      // operations in every 65535.)
      last = gridDim.x == 1 || atom_add_release_gpu(done, 1ull) == gridDim.x - 1;
      if (last) fence_acq_rel_gpu();  // every block's reads (their count) before the zeroing
    }
    // Thread 0's answer to the whole block by the barrier's vote (no shared memory: the kernels
    // that end here had none before, and 1 byte of it is the suspect of a small-size regression).
    if (!__syncthreads_or(last)) return;
    int4* lines = reinterpret_cast<int4*>(ll_slot(ws.local, L, op, 0));
    const size_t count = static_cast<size_t>(L.nranks) * L.ll_slot_lines;
    for (size_t i = threadIdx.x; i < count; i += blockDim.x) lines[i] = make_int4(0, 0, 0, 0);
    __syncthreads();  // the zeroing before the raise (the next operation reads after this kernel)
    if (threadIdx.x != 0) return;
    if (gridDim.x > 1) {
      *done = 0;
      atomicSub(started, gridDim.x);  // every block's ticket, whenever its add lands
    }
  } else {
    if (threadIdx.x != ticket_thread()) return;  // (the thread that holds the ticket)
    if (gridDim.x > 1) {
      if (op.ticket != gridDim.x - 1) return;
      fence_acq_rel_gpu();  // acquire: every block's read of the epoch happened before its ticket
      *started = 0u;
    }
  }
  ws.local_signals[ws::kEpochSlot] = op.epoch;
}

}  // namespace symmem::device
#endif
