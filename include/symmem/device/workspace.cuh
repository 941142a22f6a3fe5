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
/// warp, not thread 0: kernels have warp 0 load their first operands before seq_begin so that those
/// loads overlap it (all_to_all_v's counts and the peers' bases), and the ticket's warp waits for
/// its own loads (session 80, 2 x H200, with the ticket's release then: all_to_all_v's epoch and
/// counts stamps 1330 + 960 cycles on thread 0, 720 + 525 on the last warp).
__device__ __forceinline__ unsigned ticket_thread() { return (blockDim.x - 1) & ~31u; }

/// Every thread of every block calls it first: the number of this operation on this workspace.
///
/// Who raises the epoch (seq_end), and why no block of this operation can read the raised value.
/// A grid of one block reads it, raises it at its end after a barrier, and takes no ticket. In a
/// grid of several blocks every thread reads the epoch with an acquire load (R), then, after the
/// block's barrier, ticket_thread() takes a ticket: a relaxed add (A) on a counter. The block whose
/// ticket is gridDim.x - 1, L, knows that every other block's add came before its own in the
/// counter's order; it fences (acquire and release) and raises the epoch (W, a strong store). Why
/// no R of a block B can read W: if it did, L's fence and W (a release pattern) would synchronize
/// with R (an acquire), so L's add, before the fence, would happen before R, before B's barrier,
/// before B's add: B's add would come after L's in causality order but before it in the counter's
/// order, which coherence forbids (the counter's adds are one location's writes). The ticket's
/// value is used only in seq_end, so its round trip overlaps the operation instead of lengthening
/// the tail, as a count of finished blocks did (the last block to finish raised the epoch after a
/// returning add on the kernel's tail). (Sessions 79-80 made the add a release, cumulative over the
/// block's reads through the barrier: its fence waited for the ticket warp's loads and the block's
/// next barrier for the fence, 0.28 us of all_to_all_v's 4.6 at 2 ranks on 2 x H200, session 81;
/// each warp's acquire waits only for its own epoch load, which the operation needs next anyway.)
/// The next operation reads the epoch after this kernel has completed (stream order; with PDL,
/// after griddepcontrol.wait), when the counter is back to 0.
__device__ __forceinline__ SeqOp seq_begin(const DeviceHandle& ws) {
  uint64_t* epoch = ws.local_signals + ws::kEpochSlot;  // raised by the previous operation (seq_end)
  uint32_t ticket = 0;
  uint64_t e;
  if (gridDim.x == 1) {
    e = *epoch + 1;
  } else {
    e = ld_acquire_gpu(epoch) + 1;
    __syncthreads();  // every thread of this block has read the epoch
    if (threadIdx.x == ticket_thread()) ticket = atom_add_relaxed_gpu(reinterpret_cast<uint32_t*>(ws.local_signals + ws::kStartSlot), 1);
  }
  return SeqOp{e, ws::flag_of(e), static_cast<size_t>(e & 1), ticket};
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
      // (A release add: the block's reads, through the barrier above, happen before the zeroing
      // and the raise of the block that counts last and fences; once in 65535 operations.)
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
  st_relaxed_gpu(ws.local_signals + ws::kEpochSlot, op.epoch);  // (strong: see seq_begin)
}

}  // namespace symmem::device
#endif
