#pragma once
// One-sided operations on symmetric buffers, NVSHMEM-style: a symmetric address is this rank's
// pointer into a buffer; the same offset on `peer` is reached through the handle.
#include "symmem/device/atomics.cuh"
#include "symmem/device/copy.cuh"
#include "symmem/device/handle.hpp"
#include "symmem/device/wait.cuh"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

/// `peer`'s address of the symmetric address `local` (a pointer into h.local).
template <class T>
__device__ __forceinline__ T* peer_ptr(const DeviceHandle& h, int peer, T* local) {
  const char* base = static_cast<const char*>(h.local);
  return reinterpret_cast<T*>(static_cast<char*>(h.peers[peer]) + (reinterpret_cast<const char*>(local) - base));
}

/// Writes n bytes from `src` (any device memory) to `dst` (a symmetric address) on `peer`.
/// Every member of Scope calls it alike. Completion is not implied: follow with a signal or fence.
template <class Scope>
__device__ inline void put(const DeviceHandle& h, int peer, void* dst, const void* src, size_t n) {
  copy_bytes_as(peer_ptr(h, peer, dst), dst, src, n, Scope::index(), Scope::size());
}

/// Reads n bytes from `src` (a symmetric address) on `peer` into `dst` (any device memory).
/// The data is in `dst` once the call returns (for this thread's part; Scope::sync() for all).
template <class Scope>
__device__ inline void get(const DeviceHandle& h, int peer, void* dst, const void* src, size_t n) {
  copy_bytes(dst, peer_ptr(h, peer, src), n, Scope::index(), Scope::size());
}

/// signal on a peer's slot whose address (h.signals[peer] + slot) the caller has already read.
__device__ __forceinline__ void signal_at(uint64_t* p, uint64_t value, SignalOp op) {
  if (op == SignalOp::kSet) st_release(p, value);
  else red_add_release(p, value);
}
/// Sets or adds to signal `slot` of `peer`'s pad, with release semantics: this thread's earlier
/// writes are visible to the peer before the signal is.
__device__ __forceinline__ void signal(const DeviceHandle& h, int peer, int slot, uint64_t value, SignalOp op = SignalOp::kSet) {
  signal_at(h.signals[peer] + slot, value, op);
}

/// A signal that orders nothing (a notification, as NVSHMEM's signal_op): sets or adds to signal
/// `slot` of `peer`'s pad by a relaxed store or add. The peer's wait_signal sees the value, but not
/// necessarily this thread's earlier writes: publish data with signal or put_signal (or fence()
/// first). Nor are this thread's earlier reads ordered before it. So a credit ("I have read your
/// data, overwrite it") needs signal, or fence() first. signal_relaxed is for "ready", "go" and
/// "done" where the peer reads nothing this thread wrote, nor writes anything it reads; paired with
/// wait_signal_relaxed where the waiter reads nothing either.
/// Session 75, 2 x H200, a ping-pong of signals alone: 0.93 us one way against signal's 1.39 (the
/// system-scope release is the difference; symmem-bench p2p's signal_relaxed_us). Session 79: the
/// relaxed pair 0.97-0.99 us against NVSHMEM's signal_op and signal_wait_until 0.94, and
/// signal_relaxed with wait_signal 1.07-1.08 (relaxed_pair_us).
__device__ __forceinline__ void signal_relaxed(const DeviceHandle& h, int peer, int slot, uint64_t value, SignalOp op = SignalOp::kSet) {
  uint64_t* p = h.signals[peer] + slot;
  if (op == SignalOp::kSet) st_relaxed(p, value);
  else red_add_relaxed(p, value);
}

/// put, then (after the whole Scope has written) one signal to the same peer. The peer that waits
/// for the signal with wait_signal sees all n bytes. For a few bytes where latency matters most,
/// LL puts (ll.cuh) carry the flag inside the data and need no separate signal.
template <class Scope>
__device__ inline void put_signal(const DeviceHandle& h, int peer, void* dst, const void* src, size_t n, int slot,
                                  uint64_t value, SignalOp op = SignalOp::kSet) {
  // The signal's address is read from the handle's table before the copy, beside the peer's
  // address: read after it, the load waits behind the copy's stores (which might alias the table,
  // so the compiler keeps the order). Session 76, 2 x H200: 0.02-0.03 us one way at 8-512 B.
  uint64_t* const sig = Scope::index() == 0 ? h.signals[peer] + slot : nullptr;
  put<Scope>(h, peer, dst, src, n);
  Scope::sync();  // every member's stores precede the signal in the scope's order...
  // ...and the release (cumulative over what the barrier made visible to this thread) orders them
  // before the signal for the peer. (A full fence first cost 0.6 us more and ordered nothing more.)
  if (Scope::index() == 0) signal_at(sig, value, op);
}

/// Waits until this rank's signal `slot` satisfies `cmp value` (acquire). Bounded: returns false
/// after the handle's timeout, the facts recorded for the host. `peer` only names who is expected.
/// The acquire empties the SM's L1 (at system scope, each poll): what the thread reads after it,
/// the data it sends next and the handle's tables included, comes from L2 (~0.14 us a dependent
/// read on H200, session 76). Read what does not depend on the wait before it.
__device__ __forceinline__ bool wait_signal(const DeviceHandle& h, int slot, Cmp cmp, uint64_t value, int peer = -1) {
  return wait_until(h, h.local_signals + slot, cmp, value, WaitKind::kSignal, peer);
}

/// wait_signal by relaxed polls: the same bound and error record, but it orders nothing. After it
/// returns, this thread's reads may still see older data than the signaller wrote before its
/// signal, released or not. Nor does it promise that the signaller's reads before the signal are
/// done before this thread's later writes. In exchange it leaves the SM's L1 as it was, so the
/// thread's next reads (the handle's tables, the data it sends next) need no trip to L2: about
/// 0.1 us a wait on 2 x H200 (session 75's order table, symmem-bench p2p with
/// SYMMEM_BENCH_P2P_ORDER=1).
/// For notifications whose meaning is the count alone: "go", progress and round counts, arrivals
/// counted for a report. Where the waiter then reads what the signaller wrote, or overwrites what
/// the signaller was reading (a credit), use wait_signal. Or call fence() after this wait, once,
/// before the reads, where the signaller released.
__device__ __forceinline__ bool wait_signal_relaxed(const DeviceHandle& h, int slot, Cmp cmp, uint64_t value, int peer = -1) {
  return wait_until<Poll::kRelaxed>(h, h.local_signals + slot, cmp, value, WaitKind::kSignal, peer);
}

/// Remote atomics, NVSHMEM-style, on `peer`'s copy of the word at symmetric address `local` (a
/// pointer into h.local, naturally aligned; `peer` may be this rank). Each is one atomic operation
/// at system scope: atomic against every other atomic on that word from any rank and GPU. They are
/// relaxed: they order nothing else. To publish data with one, put it, fence(), then the atomic: a
/// rank that reads the atomic's result and then fences (or reads it with an acquire) sees the data.
/// A signal (above) is the release-ordered form for the pad's slots. T: int32_t, uint32_t, int64_t,
/// uint64_t (and the other 4- and 8-byte integer types); add, swap, compare_swap, fetch and set also
/// take float and double (a float add rounds as atomicAdd does). Latency: one round trip to
/// `peer` for the fetching forms; atomic_add, atomic_set and the other forms without a result need
/// none before the thread goes on.
template <class T>
__device__ __forceinline__ T atomic_fetch_add(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) { return amo_fetch_add(peer_ptr(h, peer, local), v); }
template <class T>
__device__ __forceinline__ void atomic_add(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) { amo_add(peer_ptr(h, peer, local), v); }
template <class T>
__device__ __forceinline__ T atomic_fetch_inc(const DeviceHandle& h, int peer, T* local) { return amo_fetch_add(peer_ptr(h, peer, local), T(1)); }
template <class T>
__device__ __forceinline__ T atomic_fetch_and(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) {
  return amo_fetch_bits<AmoBits::kAnd>(peer_ptr(h, peer, local), v);
}
template <class T>
__device__ __forceinline__ T atomic_fetch_or(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) {
  return amo_fetch_bits<AmoBits::kOr>(peer_ptr(h, peer, local), v);
}
template <class T>
__device__ __forceinline__ T atomic_fetch_xor(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) {
  return amo_fetch_bits<AmoBits::kXor>(peer_ptr(h, peer, local), v);
}
/// Minimum and maximum, compared as T (signed or unsigned integers).
template <class T>
__device__ __forceinline__ T atomic_fetch_min(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) {
  return amo_fetch_minmax<false>(peer_ptr(h, peer, local), v);
}
template <class T>
__device__ __forceinline__ T atomic_fetch_max(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) {
  return amo_fetch_minmax<true>(peer_ptr(h, peer, local), v);
}
/// Stores v, returns the old value.
template <class T>
__device__ __forceinline__ T atomic_swap(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) { return amo_swap(peer_ptr(h, peer, local), v); }
/// Stores `desired` where the word equals `expected` (bit for bit); returns the old value either way.
template <class T>
__device__ __forceinline__ T atomic_compare_swap(const DeviceHandle& h, int peer, T* local, amo::Of<T> expected, amo::Of<T> desired) {
  return amo_compare_swap(peer_ptr(h, peer, local), expected, desired);
}
/// The word's value (never torn), and a store of one.
template <class T>
__device__ __forceinline__ T atomic_fetch(const DeviceHandle& h, int peer, const T* local) { return amo_load(peer_ptr(h, peer, local)); }
template <class T>
__device__ __forceinline__ void atomic_set(const DeviceHandle& h, int peer, T* local, amo::Of<T> v) { amo_store(peer_ptr(h, peer, local), v); }

/// Waits until this rank's 8-byte word at symmetric address `local` (in h.local: a counter or flag
/// that peers update with the atomics above) satisfies `cmp value`, with acquire semantics. Bounded
/// as wait_signal: on expiry returns false and the host's error names the word's byte offset in the
/// buffer and `peer` as who was expected.
__device__ __forceinline__ bool wait_word(const DeviceHandle& h, const uint64_t* local, Cmp cmp, uint64_t value, int peer = -1) {
  return wait_until(h, local, cmp, value, WaitKind::kWord, peer);
}
/// wait_word by relaxed polls: it orders nothing (wait_signal_relaxed says when that is enough).
/// It is for counters that peers raise with the relaxed atomics above, when the waiter reads
/// nothing they wrote.
__device__ __forceinline__ bool wait_word_relaxed(const DeviceHandle& h, const uint64_t* local, Cmp cmp, uint64_t value, int peer = -1) {
  return wait_until<Poll::kRelaxed>(h, local, cmp, value, WaitKind::kWord, peer);
}

/// Orders this thread's earlier puts before its later puts and signals, as all peers observe them.
__device__ __forceinline__ void fence() { fence_acq_rel(); }
/// Waits until this thread's earlier puts are complete and visible system-wide.
__device__ __forceinline__ void quiet() { fence_system(); }

}  // namespace symmem::device
#endif
