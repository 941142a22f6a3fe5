#pragma once
// All of symmem's memory ordering in one place. Every cross-GPU flag goes through these; each says
// what it orders. System scope: peers are other GPUs (and other processes) over NVLink.
#include <cstdint>

#include "symmem/export.hpp"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

/// Acquire load: reads after it (in this thread) see everything the releasing writer wrote before
/// its release. Use to poll a flag that guards data.
__device__ __forceinline__ uint64_t ld_acquire(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
/// Relaxed load: no ordering; for reads of a value nothing else depends on.
__device__ __forceinline__ uint64_t ld_relaxed(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
/// Release store: every write this thread made (and, through a preceding barrier, its block's)
/// is visible to a peer before the peer can observe this value.
__device__ __forceinline__ void st_release(uint64_t* p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/// Relaxed store of a flag that orders nothing.
__device__ __forceinline__ void st_relaxed(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/// Release add (no return value): like st_release, for counters several writers bump.
__device__ __forceinline__ void red_add_release(uint64_t* p, uint64_t v) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/// Relaxed add (no return value): a counter whose ordering a preceding fence provides.
__device__ __forceinline__ void red_add_relaxed(uint64_t* p, uint64_t v) {
  asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/// Relaxed add at system scope that returns the old value: a counter that ranks on several GPUs
/// bump (its atomicity across GPUs needs the system scope; on H200 it measured no slower than the
/// GPU scope's atomicAdd, session 28).
__device__ __forceinline__ uint32_t atom_add_relaxed_sys(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
/// Release add at GPU scope that returns the old value: this thread's earlier accesses (and,
/// through a preceding block barrier, its block's) happen before any thread that reads the result
/// of this add, or of a later one on the counter, and then fences (acquire), goes on.
__device__ __forceinline__ uint32_t atom_add_release_gpu(uint32_t* p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.release.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
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
