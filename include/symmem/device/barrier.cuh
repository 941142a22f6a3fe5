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

/// Every thread of the block calls it. Returns true on every thread once all ranks have arrived on
/// `channel`; false (on every thread) if a wait timed out. Writes the block made before the call
/// are visible to every peer's block after its barrier returns, and the reverse.
__device__ inline bool barrier_block(const DeviceHandle& h, int channel = 0) {
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
    // Arrival: release, so the block's writes reach peer p before it can pass its barrier.
    st_release(h.signals[p] + pad::barrier_slot(channel, h.rank), epoch);
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
