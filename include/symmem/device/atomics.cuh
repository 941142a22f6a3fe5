#pragma once
// All of symmem's memory ordering in one place. Every cross-GPU flag goes through these; each says
// what it orders. System scope: peers are other GPUs (and other processes) over NVLink.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "symmem/export.hpp"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

/// Relaxed atomics at system scope on one naturally aligned 4- or 8-byte word anywhere this thread
/// can address (its GPU's memory or a peer's, mapped): each is atomic against every other atomic
/// on that word from any GPU, and orders nothing else (p2p.cuh's remote atomics; a fence before or
/// after one orders it). T: 4- or 8-byte integers; float and double for add, swap, compare-swap,
/// load and store. The sum of a float add is rounded as the GPU's own atomicAdd rounds it. (The
/// relaxed flag helpers below, ld_relaxed, st_relaxed, red_add_relaxed and atom_add_relaxed_sys,
/// are their cases that symmem's own kernels use.)
namespace amo {
template <class T>
inline constexpr bool kInt = std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8);
template <class T>
inline constexpr bool kWord = kInt<T> || std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, unsigned long long>;
/// T, not deduced from an argument: the word's type decides (a uint64_t value for an unsigned long
/// long word converts).
template <class T>
struct Same {
  using type = T;
};
template <class T>
using Of = typename Same<T>::type;
template <class T>
__device__ __forceinline__ Bits<T> bits(T v) {
  Bits<T> b;
  memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
__device__ __forceinline__ T value(Bits<T> b) {
  T v;
  memcpy(&v, &b, sizeof(T));
  return v;
}
}  // namespace amo

/// Adds v and returns the old value.
template <class T>
__device__ __forceinline__ T amo_fetch_add(T* p, T v) {
  static_assert(amo::kWord<T>, "symmem atomics take 4- or 8-byte integers, float or double");
  if constexpr (std::is_same_v<T, float>) {
    float old;
    asm volatile("atom.relaxed.sys.global.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(p), "f"(v) : "memory");
    return old;
  } else if constexpr (std::is_same_v<T, double>) {
    double old;
    asm volatile("atom.relaxed.sys.global.add.f64 %0, [%1], %2;" : "=d"(old) : "l"(p), "d"(v) : "memory");
    return old;
  } else if constexpr (sizeof(T) == 4) {
    uint32_t old;
    asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(amo::bits(v)) : "memory");
    return amo::value<T>(old);
  } else {
    unsigned long long old;
    asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(amo::bits(v)) : "memory");
    return amo::value<T>(old);
  }
}
/// Adds v (no return value: the cheaper reduction).
template <class T>
__device__ __forceinline__ void amo_add(T* p, T v) {
  static_assert(amo::kWord<T>, "symmem atomics take 4- or 8-byte integers, float or double");
  if constexpr (std::is_same_v<T, float>) {
    asm volatile("red.relaxed.sys.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
  } else if constexpr (std::is_same_v<T, double>) {
    asm volatile("red.relaxed.sys.global.add.f64 [%0], %1;" ::"l"(p), "d"(v) : "memory");
  } else if constexpr (sizeof(T) == 4) {
    asm volatile("red.relaxed.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(amo::bits(v)) : "memory");
  } else {
    asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(amo::bits(v)) : "memory");
  }
}
/// Bitwise and, or, xor (integers): apply v, return the old value.
enum class AmoBits { kAnd, kOr, kXor };
template <AmoBits Op, class T>
__device__ __forceinline__ T amo_fetch_bits(T* p, T v) {
  static_assert(amo::kInt<T>, "symmem's bitwise atomics take 4- or 8-byte integers");
  if constexpr (sizeof(T) == 4) {
    uint32_t old;
    if constexpr (Op == AmoBits::kAnd) asm volatile("atom.relaxed.sys.global.and.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(amo::bits(v)) : "memory");
    else if constexpr (Op == AmoBits::kOr) asm volatile("atom.relaxed.sys.global.or.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(amo::bits(v)) : "memory");
    else asm volatile("atom.relaxed.sys.global.xor.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(amo::bits(v)) : "memory");
    return amo::value<T>(old);
  } else {
    unsigned long long old;
    if constexpr (Op == AmoBits::kAnd) asm volatile("atom.relaxed.sys.global.and.b64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(amo::bits(v)) : "memory");
    else if constexpr (Op == AmoBits::kOr) asm volatile("atom.relaxed.sys.global.or.b64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(amo::bits(v)) : "memory");
    else asm volatile("atom.relaxed.sys.global.xor.b64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(amo::bits(v)) : "memory");
    return amo::value<T>(old);
  }
}
/// Minimum or maximum (integers, compared as T: signed or unsigned): returns the old value.
template <bool Max, class T>
__device__ __forceinline__ T amo_fetch_minmax(T* p, T v) {
  static_assert(amo::kInt<T>, "symmem's min/max atomics take 4- or 8-byte integers");
  T old;
  if constexpr (sizeof(T) == 4 && std::is_signed_v<T>) {
    if constexpr (Max) asm volatile("atom.relaxed.sys.global.max.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    else asm volatile("atom.relaxed.sys.global.min.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  } else if constexpr (sizeof(T) == 4) {
    if constexpr (Max) asm volatile("atom.relaxed.sys.global.max.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    else asm volatile("atom.relaxed.sys.global.min.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  } else if constexpr (std::is_signed_v<T>) {
    if constexpr (Max) asm volatile("atom.relaxed.sys.global.max.s64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    else asm volatile("atom.relaxed.sys.global.min.s64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  } else {
    if constexpr (Max) asm volatile("atom.relaxed.sys.global.max.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
    else asm volatile("atom.relaxed.sys.global.min.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  }
  return old;
}
/// Stores v and returns the old value.
template <class T>
__device__ __forceinline__ T amo_swap(T* p, T v) {
  static_assert(amo::kWord<T>, "symmem atomics take 4- or 8-byte integers, float or double");
  amo::Bits<T> old;
  if constexpr (sizeof(T) == 4) asm volatile("atom.relaxed.sys.global.exch.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(amo::bits(v)) : "memory");
  else asm volatile("atom.relaxed.sys.global.exch.b64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(amo::bits(v)) : "memory");
  return amo::value<T>(old);
}
/// Stores `desired` where the word holds `expected` (bit for bit, also for float and double);
/// returns the old value either way (the swap happened where it equals `expected`).
template <class T>
__device__ __forceinline__ T amo_compare_swap(T* p, T expected, T desired) {
  static_assert(amo::kWord<T>, "symmem atomics take 4- or 8-byte integers, float or double");
  amo::Bits<T> old;
  if constexpr (sizeof(T) == 4)
    asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(p), "r"(amo::bits(expected)), "r"(amo::bits(desired)) : "memory");
  else
    asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(p), "l"(amo::bits(expected)), "l"(amo::bits(desired)) : "memory");
  return amo::value<T>(old);
}
/// Atomic (untorn) load and store of the word.
template <class T>
__device__ __forceinline__ T amo_load(const T* p) {
  static_assert(amo::kWord<T>, "symmem atomics take 4- or 8-byte integers, float or double");
  amo::Bits<T> v;
  if constexpr (sizeof(T) == 4) asm volatile("ld.relaxed.sys.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  else asm volatile("ld.relaxed.sys.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return amo::value<T>(v);
}
template <class T>
__device__ __forceinline__ void amo_store(T* p, T v) {
  static_assert(amo::kWord<T>, "symmem atomics take 4- or 8-byte integers, float or double");
  if constexpr (sizeof(T) == 4) asm volatile("st.relaxed.sys.global.b32 [%0], %1;" ::"l"(p), "r"(amo::bits(v)) : "memory");
  else asm volatile("st.relaxed.sys.global.b64 [%0], %1;" ::"l"(p), "l"(amo::bits(v)) : "memory");
}

/// Acquire load: reads after it (in this thread) see everything the releasing writer wrote before
/// its release. Use to poll a flag that guards data.
__device__ __forceinline__ uint64_t ld_acquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
/// Relaxed load: no ordering; for reads of a value nothing else depends on.
__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p) { return amo_load(p); }
/// Release store: every write this thread made (and, through a preceding barrier, its block's)
/// is visible to a peer before the peer can observe this value.
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/// Relaxed store of a flag that orders nothing.
__device__ __forceinline__ void st_relaxed(uint64_t* p, uint64_t v) { amo_store(p, v); }
/// Release add (no return value): like st_release, for counters several writers bump.
__device__ __forceinline__ void red_add_release(uint64_t* p, uint64_t v) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/// Relaxed add (no return value): a counter whose ordering a preceding fence provides.
__device__ __forceinline__ void red_add_relaxed(uint64_t* p, uint64_t v) { amo_add(p, v); }
/// Relaxed add at system scope that returns the old value: a counter that ranks on several GPUs
/// bump (its atomicity across GPUs needs the system scope; on H200 it measured no slower than the
/// GPU scope's atomicAdd, session 28).
__device__ __forceinline__ uint32_t atom_add_relaxed_sys(uint32_t* p, uint32_t v) { return amo_fetch_add(p, v); }
/// Release add at GPU scope that returns the old value: this thread's earlier accesses (and,
/// through a preceding block barrier, its block's) happen before any thread that reads the result
/// of this add, or of a later one on the counter, and then fences (acquire), goes on.
__device__ __forceinline__ uint32_t atom_add_release_gpu(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
__device__ __forceinline__ unsigned long long atom_add_release_gpu(unsigned long long* p, unsigned long long v) {
  unsigned long long old;
  asm volatile("atom.release.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}
/// Full fence at system scope: this thread's earlier writes (to any GPU) are ordered before its
/// later ones as every peer observes them.
__device__ __forceinline__ void fence_system() { asm volatile("fence.sc.sys;" ::: "memory"); }
/// Acquire-release fence at system scope (cheaper than fence_system; orders writes before writes
/// and reads before reads/writes).
__device__ __forceinline__ void fence_acq_rel() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
/// Acquire-release fence at GPU scope: orders this thread's accesses as the other threads of its own
/// GPU observe them (enough where what it publishes is read on this GPU only).
__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

/// Orders this thread's earlier generic-proxy accesses of global memory (an acquire that saw a
/// signal) before its later async-proxy ones (TMA loads of the data that signal guards). sm_90+.
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }
/// Orders this thread's earlier writes to its CTA's shared memory (st.shared, stmatrix) before
/// async-proxy reads of them (a TMA store issued after a barrier). sm_90+.
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

/// Nanoseconds from the GPU's global timer (coarse, but shared by all SMs).
__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace symmem::device
#endif
