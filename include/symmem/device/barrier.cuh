#pragma once
// Barrier across the ranks of a team, run by one block. Each block uses its own channel; epochs
// count up in this rank's pad, so a barrier needs no reset and replays in CUDA graphs.
#include "symmem/device/atomics.cuh"
#include "symmem/device/handle.hpp"
#include "symmem/device/wait.cuh"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

/// How barrier_block waits: acquire polls for its first kBarrierEagerNs, then relaxed polls whose
/// pauses are 1 / 2^kBarrierPaceShift of the time waited past it, up to kBarrierBackoffNs
/// (wait_until_patient): a block that waits through a peer's long transfer into or out of this
/// GPU must not poll all along. Session 70, 2 x H200, broadcast (where one side only waits), push
/// / direct in us against polls without pauses: 32 MiB 102.6 / 99.6 against 237-483 / 325-387
/// (NCCL 112.6), 64 MiB 194.3 / 192 against 244-282 / 368-409 (NCCL 206), 128 MiB 375-377 / 374
/// against 388-409 / 476-515 (NCCL 388); 1-16 MiB 0.3-1.8% slower. Pauses of at most 1 us left
/// 128 MiB direct at 508-611, relaxed polls without pauses left every cliff, and 16 us eager left
/// 64 MiB push at 231-255 (HISTORY, "Measured in session 70"). The cap grew with the transfer
/// (~200 polls a waiter each at most): 4 us left 256 MiB direct at 922 us; 16 us and none (1 ms)
/// both gave 740 (push 738-742, NCCL 754), 1-128 MiB level with 4 us (session 71). 16 us keeps a
/// late arrival's wake within 1.6% of the wait past the first ms. Compile-time: every rank the same.
#ifndef SYMMEM_BARRIER_EAGER_NS
#define SYMMEM_BARRIER_EAGER_NS 8000
#endif
#ifndef SYMMEM_BARRIER_BACKOFF_NS
#define SYMMEM_BARRIER_BACKOFF_NS 16000
#endif
#ifndef SYMMEM_BARRIER_PACE_SHIFT
#define SYMMEM_BARRIER_PACE_SHIFT 6
#endif
constexpr unsigned kBarrierEagerNs = SYMMEM_BARRIER_EAGER_NS;
constexpr unsigned kBarrierBackoffNs = SYMMEM_BARRIER_BACKOFF_NS;
constexpr unsigned kBarrierPaceShift = SYMMEM_BARRIER_PACE_SHIFT;

/// What a barrier's arrival signal orders for the peers that pass the barrier after it.
enum class Arrival {
  /// Every write the block made before the call (and, through the stream, before its kernel) is
  /// visible to each peer's block once that block's barrier returns. The default.
  kRelease,
  /// Only that every thread of the block reached the call: the signal is a relaxed store, which
  /// skips the system-scope release (~1 us a barrier: the release waits until the block's memory
  /// operations are acknowledged across the system). For the two places where a peer, past the
  /// barrier, needs no write this kernel made before it:
  ///  (1) a kernel's first barrier, taken before the block writes anything. What peers read past it
  ///      (this rank's inputs) was written before the kernel began: by earlier work on the stream
  ///      (a kernel starts, and pdl_wait returns, only once that work completed and its memory
  ///      operations were performed), by the host, or by peers whose releases this rank acquired at
  ///      an earlier barrier. Those writes sit in this GPU's memory, where every peer's load of it
  ///      is served, and the peers read it only after an acquire poll saw this signal, so no cache
  ///      of theirs serves an older copy. (vLLM's custom all-reduce signals its first barrier the
  ///      same way, with plain volatile stores.)
  ///  (2) a kernel's last barrier, when before it the block only loaded peers' memory and wrote its
  ///      own, and the peers past it may overwrite what it loaded (their inputs). Every thread used
  ///      the value of each of its loads (stored what it computed from it) before the __syncthreads
  ///      that precedes the signal, so every load was performed before the signal was issued, and a
  ///      peer's later write cannot reach it.
  /// Never after the block wrote peer memory that peers read past the barrier, nor after writes of
  /// this kernel that peers read (two_shot's last barrier, all_to_all_v's published capacities):
  /// those need kRelease. Session 73, 2 x H200, both barriers relaxed against released (us):
  /// one_shot all-reduce 256 KiB 5.96 / 7.76, 1 MiB 8.09-8.14 / 10.24-10.26, 4 MiB 17.7 / 19.8.
  kRelaxed,
};

/// Every thread of the block calls it. Returns true on every thread once all ranks have arrived on
/// `channel`; false (on every thread) if a wait timed out. With Arrival::kRelease (the default),
/// writes the block made before the call are visible to every peer's block after its barrier
/// returns, and the reverse; Arrival::kRelaxed orders only what its comment above says.
__device__ inline bool barrier_block(const DeviceHandle& h, int channel = 0, Arrival arrival = Arrival::kRelease) {
  __shared__ uint64_t epoch;
  __syncthreads();  // the block's earlier writes precede the arrival signals below
  if (threadIdx.x == 0) {
    uint64_t* counter = h.local_signals + pad::counter_slot(channel);
    epoch = *counter + 1;  // only this thread of this block touches this rank's counter
    *counter = epoch;
  }
  __syncthreads();
  bool ok = true;
  for (int p = threadIdx.x; p < h.nranks; p += blockDim.x) {
    // Arrival: release, so the block's writes reach peer p before it can pass its barrier (or
    // relaxed where Arrival::kRelaxed's conditions hold).
    if (arrival == Arrival::kRelaxed) st_relaxed(h.signals[p] + pad::barrier_slot(channel, h.rank), epoch);
    else st_release(h.signals[p] + pad::barrier_slot(channel, h.rank), epoch);
    // Departure: acquire, so every peer's pre-barrier writes are visible to this block after it
    // (wait_until_patient returns only once a load with acquire has read `epoch` or later: a later
    // value is peer p's release of a later barrier on this channel, after this one in its order).
    ok &= wait_until_patient(h, h.local_signals + pad::barrier_slot(channel, p), Cmp::kGe, epoch, WaitKind::kBarrier, p,
                             kBarrierEagerNs, kBarrierBackoffNs, kBarrierPaceShift);
  }
  return __syncthreads_and(ok) != 0;
}

}  // namespace symmem::device
#endif
