#pragma once
// LL ("low latency") transfers: the flag travels inside the data. Each 16-byte line carries 8 bytes
// of payload and the flag twice ({d0, flag, d1, flag}), written with one 16-byte store; a reader that
// sees both flags equal to the expected one has the payload, with no separate signal and no fence.
// A line costs twice its payload in link bytes, so LL suits small, latency-bound messages.
#include <cstddef>
#include <cstdint>

#include "symmem/device/atomics.cuh"
#include "symmem/device/handle.hpp"
#include "symmem/device/wait.cuh"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

struct LLLine {
  uint32_t d0, f0, d1, f1;
};

/// Lines needed for n payload bytes.
__host__ __device__ constexpr size_t ll_lines(size_t n) { return (n + 7) / 8; }

/// One 16-byte store of 8 payload bytes and the flag (volatile: not cached, not merged).
__device__ __forceinline__ void ll_store(LLLine* dst, uint64_t data, uint32_t flag) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(static_cast<uint32_t>(data)), "r"(flag),
               "r"(static_cast<uint32_t>(data >> 32)), "r"(flag)
               : "memory");
}

/// Polls one line until both flags equal `flag`; returns false (and records the facts) on timeout.
__device__ inline bool ll_wait(const DeviceHandle& h, const LLLine* src, uint32_t flag, int peer, uint64_t* data) {
  uint32_t d0, f0, d1, f1;
  uint64_t start = 0, bound = 0;
  for (uint32_t it = 0;; ++it) {
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(d0), "=r"(f0), "=r"(d1), "=r"(f1) : "l"(src) : "memory");
    if (f0 == flag && f1 == flag) break;
    if ((it & 1023u) == 0u) {
      const uint64_t now = global_timer_ns();
      if (it == 0) {
        start = now;
      } else {
        if (bound == 0) bound = wait_bound_ns(h);
        if (now - start <= bound && !aborted(h)) continue;
        record_timeout(h, WaitKind::kCollective, peer, static_cast<uint64_t>(-1), Cmp::kEq, flag, f0 == flag ? f1 : f0, now - start);
        return false;
      }
    }
  }
  *data = static_cast<uint64_t>(d0) | (static_cast<uint64_t>(d1) << 32);
  return true;
}

/// Reads 8 bytes at `p` + 8*i of an n-byte message, zero-padding past its end.
__device__ __forceinline__ uint64_t ll_payload(const char* p, size_t n, size_t i) {
  const size_t off = i * 8;
  if (off + 8 <= n && (reinterpret_cast<uintptr_t>(p + off) & 7u) == 0) return *reinterpret_cast<const uint64_t*>(p + off);
  uint64_t v = 0;
  for (size_t k = 0; k < 8 && off + k < n; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[off + k])) << (8 * k);
  return v;
}
/// Writes line i's 8 bytes into an n-byte message, dropping what lies past its end.
__device__ __forceinline__ void ll_unpack(char* p, size_t n, size_t i, uint64_t v) {
  const size_t off = i * 8;
  if (off + 8 <= n && (reinterpret_cast<uintptr_t>(p + off) & 7u) == 0) {
    *reinterpret_cast<uint64_t*>(p + off) = v;
    return;
  }
  for (size_t k = 0; k < 8 && off + k < n; ++k) p[off + k] = static_cast<char>(v >> (8 * k));
}

/// Writes an n-byte message as LL lines to `dst` (peer memory); member idx of a group of stride.
__device__ inline void ll_put(LLLine* dst, const void* src, size_t n, uint32_t flag, size_t idx, size_t stride) {
  const size_t lines = ll_lines(n);
  for (size_t i = idx; i < lines; i += stride) ll_store(dst + i, ll_payload(static_cast<const char*>(src), n, i), flag);
}

}  // namespace symmem::device
#endif
