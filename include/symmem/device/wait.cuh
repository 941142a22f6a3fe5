#pragma once
// Bounded waits. Every device-side spin in symmem goes through wait_until: on expiry it records
// rank, peer, slot, the expected and last-seen values in the context's error record (the host turns
// that into symmem::Timeout) and returns false instead of hanging.
#include "symmem/device/atomics.cuh"
#include "symmem/device/handle.hpp"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

__device__ __forceinline__ bool compare(uint64_t v, Cmp cmp, uint64_t x) {
  switch (cmp) {
    case Cmp::kEq: return v == x;
    case Cmp::kNe: return v != x;
    case Cmp::kGe: return v >= x;
    case Cmp::kGt: return v > x;
    case Cmp::kLe: return v <= x;
    default: return v < x;
  }
}

/// Records a timeout (first one wins) for the host to report.
__device__ inline void record_timeout(const DeviceHandle& h, WaitKind kind, int peer, uint64_t slot, Cmp cmp,
                                      uint64_t expected, uint64_t seen, uint64_t waited_ns) {
  DeviceErrorRecord* e = h.error;
  if (e == nullptr) return;
  if (atomicCAS_system(&e->flag, 0u, 1u) != 0u) return;
  e->kind = static_cast<int>(kind);
  e->rank = h.rank;
  e->global_rank = h.global_rank;
  e->peer = peer;
  e->cmp = static_cast<int>(cmp);
  e->slot = slot;
  e->expected = expected;
  e->seen = seen;
  e->waited_ns = waited_ns;
  e->block = blockIdx.x;
  e->thread = threadIdx.x;
  __threadfence_system();  // the fields are visible before the flag says "complete"
  atomicExch_system(&e->flag, 2u);
}

/// True once another wait of this context has timed out: later waits give up at once.
__device__ __forceinline__ bool aborted(const DeviceHandle& h) {
  return h.error != nullptr && *reinterpret_cast<volatile unsigned int*>(&h.error->flag) != 0u;
}

/// Spins until `*addr cmp value` holds (acquire: data the writer released before setting the flag
/// is visible after this returns true), or the handle's deadline passes (returns false).
__device__ inline bool wait_until(const DeviceHandle& h, const uint64_t* addr, Cmp cmp, uint64_t value,
                                  WaitKind kind, int peer) {
  uint64_t v = ld_acquire(addr);
  if (compare(v, cmp, value)) return true;
  const uint64_t start = global_timer_ns();
  for (uint32_t it = 1;; ++it) {
    v = ld_acquire(addr);
    if (compare(v, cmp, value)) return true;
    if ((it & 255u) == 0u) {
      uint64_t waited = global_timer_ns() - start;
      if (waited > h.timeout_ns || aborted(h)) {
        record_timeout(h, kind, peer, static_cast<uint64_t>(addr - h.local_signals), cmp, value, v, waited);
        return false;
      }
    }
  }
}

}  // namespace symmem::device
#endif
