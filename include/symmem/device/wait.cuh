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

/// How a wait polls (wait_for): kAcquire, acquire loads (the waiter then sees what the signaller
/// released before its signal); kQuiet, relaxed loads and one acquire once the value is seen (the
/// same guarantee, for waiters beside work that the acquires' emptied L1 would slow); kRelaxed,
/// relaxed loads only (orders nothing).
enum class Poll { kAcquire, kQuiet, kRelaxed };

/// Records an error (the first of the record's generation wins) for the host to report. A timeout
/// also tells every other wait of this context to give up (abort_waits); a bad argument (kBadCount,
/// kMoe) does not: the operation completes on every rank and the host reports it once. The record
/// is host memory, written with plain stores; the winner is chosen on `claim` (device memory):
/// atomicMax(claim, g + 1) returns g + 1 or more to every caller of generation g but the first.
/// (The host's reset raises the generation; a writer that read the old one loses, as the first
/// error of a record being cleared could be lost before.)
__device__ inline void record_error(const DeviceHandle& h, WaitKind kind, int peer, uint64_t slot, Cmp cmp,
                                    uint64_t expected, uint64_t seen, uint64_t waited_ns) {
  volatile DeviceErrorRecord* e = h.error;
  if (e == nullptr) return;
  if (kind != WaitKind::kBadCount && kind != WaitKind::kMoe) e->abort_waits = 1u;
  if (e->flag != 0u) return;  // taken (by the host's abort too: fail_waits writes kAborted where it is 0)
  const unsigned int generation = e->generation;
  unsigned int* claim = e->claim;
  if (claim != nullptr && atomicMax(claim, generation + 1u) > generation) return;
  e->flag = 1u;
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
  e->flag = 2u;
}

__device__ inline void record_timeout(const DeviceHandle& h, WaitKind kind, int peer, uint64_t slot, Cmp cmp,
                                      uint64_t expected, uint64_t seen, uint64_t waited_ns) {
  record_error(h, kind, peer, slot, cmp, expected, seen, waited_ns);
}

/// True once another wait of this context has timed out, or the host aborted: waits give up at once.
__device__ __forceinline__ bool aborted(const DeviceHandle& h) {
  return h.error != nullptr && *reinterpret_cast<volatile unsigned int*>(&h.error->abort_waits) != 0u;
}

/// The bound of every wait: the context's run-time setting (read from pinned host memory, so only
/// once a wait has already spun a while).
__device__ __forceinline__ uint64_t wait_bound_ns(const DeviceHandle& h) {
  return h.error != nullptr ? *reinterpret_cast<volatile unsigned long long*>(&h.error->timeout_ns) : default_timeout_ns();
}

/// Spins until `done(*addr)` holds (acquire: data the writer released before setting the flag is
/// visible after this returns true), or the handle's deadline passes (returns false; the record
/// names `cmp` and `value` as what was waited for). backoff_ns > 0: sleeps about that long between
/// polls (waiters that share the GPU with the work they wait for then take fewer issue slots and
/// memory requests from it). `observed`, where given, receives the value that satisfied `done`
/// (a caller that needs it saves a second load after the wait). kQuiet: polls with relaxed loads
/// and acquires once, by a fence, after the value is seen (wait_until_quiet). eager_ns > 0 (with
/// kQuiet): for that long from the wait's start it polls with acquire loads and no pause, then
/// with relaxed loads whose pauses grow with the time waited past eager_ns (1 / 2^pace_shift of
/// it, between 32 ns and backoff_ns), and acquires a seen value by loading it again with acquire
/// (a system fence there cost ~0.8 us a wait, session 70) (wait_until_patient). kRelaxed: polls
/// with relaxed loads and returns the value seen as it is, acquiring nothing: for flags that
/// publish nothing the waiter reads (wait_signal_relaxed, wait_word_relaxed).
template <Poll kPoll = Poll::kAcquire, class Done>
__device__ inline bool wait_for(const DeviceHandle& h, const uint64_t* addr, Done done, Cmp cmp, uint64_t value, WaitKind kind, int peer,
                                unsigned backoff_ns = 0, uint64_t* observed = nullptr, unsigned eager_ns = 0, unsigned pace_shift = 6) {
  constexpr bool kQuiet = kPoll == Poll::kQuiet;
  bool eager = eager_ns != 0;
  auto load = [&] {
    if (kPoll == Poll::kRelaxed) return ld_relaxed(addr);
    if (!kQuiet || eager) return ld_acquire(addr);
    const uint64_t x = ld_relaxed(addr);
    if (!done(x)) return x;
    // Seen: acquire it. A patient wait loads it again with acquire (the caller then judges that
    // value); a quiet one fences (the relaxed read of the releaser's write, then the fence).
    if (eager_ns != 0) return ld_acquire(addr);
    fence_acq_rel();
    return x;
  };
  uint64_t v = load();
  if (done(v)) {
    if (observed != nullptr) *observed = v;
    return true;
  }
  const uint64_t start = global_timer_ns();
  uint64_t bound = 0;
  for (uint32_t it = 1;; ++it) {
    if (eager_ns != 0) {
      const uint64_t waited = global_timer_ns() - start;
      eager = waited < eager_ns;
      const unsigned pause = eager ? 0u : static_cast<unsigned>(min(static_cast<uint64_t>(backoff_ns), max(uint64_t{32}, (waited - eager_ns) >> pace_shift)));
      if (pause != 0) __nanosleep(pause);
    } else if (backoff_ns != 0) {
      __nanosleep(backoff_ns);
    }
    v = load();
    if (done(v)) {
      if (observed != nullptr) *observed = v;
      return true;
    }
    // The bound and the abort flag (pinned host memory) are looked at every 256 polls: with a
    // patient wait's 16 us pauses, up to ~4 ms after another wait's timeout. (Looking every 64 us
    // of the wait's own clock instead, session 72, 2 x H200, made broadcast 64 MiB 406 us against
    // 191 and 256 MiB 910 against 740: host reads from every waiting block during the transfer.)
    if ((it & 255u) == 0u) {
      if (bound == 0) bound = wait_bound_ns(h);
      uint64_t waited = global_timer_ns() - start;
      if (waited > bound || aborted(h)) {
        // (Where: a signal slot, or for a word of a symmetric buffer its byte offset in it.)
        const uint64_t where = kind == WaitKind::kWord ? static_cast<uint64_t>(reinterpret_cast<const char*>(addr) - static_cast<const char*>(h.local))
                                                       : static_cast<uint64_t>(addr - h.local_signals);
        record_timeout(h, kind, peer, where, cmp, value, v, waited);
        return false;
      }
    }
  }
}
/// Spins until `*addr cmp value` holds (wait_for; kPoll as there).
template <Poll kPoll = Poll::kAcquire>
__device__ inline bool wait_until(const DeviceHandle& h, const uint64_t* addr, Cmp cmp, uint64_t value, WaitKind kind, int peer,
                                  unsigned backoff_ns = 0) {
  return wait_for<kPoll>(h, addr, [&](uint64_t v) { return compare(v, cmp, value); }, cmp, value, kind, peer, backoff_ns);
}
/// wait_until for a waiter that shares its SM with work it must not slow: relaxed polls
/// `backoff_ns` apart, one acquire fence once the value is seen. (An acquire load at system scope
/// also invalidates the SM's L1: session 62, 2 x H200, one thread polling a signal that way every
/// microsecond on 32 of the SMs of hopper_gemm_t's fused sum made the operation ~4% slower.)
__device__ inline bool wait_until_quiet(const DeviceHandle& h, const uint64_t* addr, Cmp cmp, uint64_t value, WaitKind kind, int peer,
                                        unsigned backoff_ns) {
  return wait_for<Poll::kQuiet>(h, addr, [&](uint64_t v) { return compare(v, cmp, value); }, cmp, value, kind, peer, backoff_ns);
}
/// wait_until for a wait that may last through a long transfer into or out of this GPU: acquire
/// polls for the first `eager_ns` (a short wait ends as soon as wait_until's), then relaxed polls
/// whose pauses grow with the time waited (1 / 2^pace_shift of what is past eager_ns, at most
/// `max_backoff_ns`), the seen value loaded again with acquire. (Sessions 69-71, 2 x H200: with
/// every block of broadcast's waiting side polling through the transfer, acquire or relaxed, 32
/// MiB took 240-540 us; with pauses of 500 ns, 101-112, as NCCL; 128 MiB needed 2-4 us, 256 MiB 16.)
/// A kernel ends with its last block, which wakes up to a full pause late: hence pauses that
/// start short and grow.
__device__ inline bool wait_until_patient(const DeviceHandle& h, const uint64_t* addr, Cmp cmp, uint64_t value, WaitKind kind, int peer,
                                          unsigned eager_ns, unsigned max_backoff_ns, unsigned pace_shift) {
  return wait_for<Poll::kQuiet>(h, addr, [&](uint64_t v) { return compare(v, cmp, value); }, cmp, value, kind, peer, max_backoff_ns, nullptr,
                        eager_ns, pace_shift);
}

}  // namespace symmem::device
#endif
