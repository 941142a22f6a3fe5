#pragma once
// What the MoE small-round kernels (dispatch_ll.cu, combine_ll.cu) share: LL lines (symmem/device/
// ll.cuh: narrow, 8 payload bytes, or wide, 12; the operation's 16-bit flag in both 64-bit words),
// written from 32-bit words, and a bounded poll that names the peer and the line it waited for.
#include "moe_common.cuh"
#include "symmem/device/ll.cuh"

namespace symmem::moe::kern {

using device::LLLine;

/// A line of format P (payload bytes) of words w[0 .. P/4).
template <size_t P>
__device__ __forceinline__ void put_line(LLLine* dst, const uint32_t* w, uint32_t flag) {
  device::LLDataT<P> d;
#pragma unroll
  for (int k = 0; k < device::LLDataT<P>::kWords; ++k) d.w[k] = w[k];
  device::ll_store(dst, d, flag);
}
/// A narrow line of words a and b with the operation's flag.
__device__ __forceinline__ void put_line(LLLine* dst, uint32_t a, uint32_t b, uint32_t flag) {
  const uint32_t w[2] = {a, b};
  put_line<ws::kLLNarrow>(dst, w, flag);
}
/// A narrow line's two payload words.
__device__ __forceinline__ uint2 line_words(const ws::LLWords& l) {
  return make_uint2(ws::ll_word<ws::kLLNarrow>(l, 0), ws::ll_word<ws::kLLNarrow>(l, 1));
}

/// A bounded poll of lines: call go_on after each poll that found a line missing; it reads the
/// clock every 1024th call (the first sets the start) and returns false once the handle's bound has
/// passed since then, or the context aborted, with the wait recorded as `kind` (this rank, the
/// source `src`, the line, the flag wanted and the one seen). (device::ll_wait and ll_wait_group
/// keep this logic inline: written through a helper, ptxas spilled more in the collectives' LL
/// kernels (61 kernels spilled registers against 33).)
struct LinePoll {
  uint64_t start = 0, bound = 0;
  uint32_t it = 0;
  __device__ __forceinline__ bool go_on(const DeviceHandle& h, WaitKind kind, int src, uint64_t line, uint32_t flag, uint32_t seen) {
    if ((it++ & 1023u) != 0u) return true;
    const uint64_t now = device::global_timer_ns();
    if (it == 1) {
      start = now;
      return true;
    }
    if (bound == 0) bound = device::wait_bound_ns(h);
    if (now - start <= bound && !device::aborted(h)) return true;
    device::record_timeout(h, kind, src, line, Cmp::kEq, flag, seen, now - start);
    return false;
  }
};

}  // namespace symmem::moe::kern
