#pragma once
// LL ("low latency") transfers: the flag travels inside the data. A 16-byte line is two 64-bit
// words; each carries payload in its low bits and the operation's 16-bit flag in its top 16, and
// one 16-byte store writes both. A reader that sees the flag in both words has the line's payload,
// with no separate signal and no fence: each 64-bit element of the vector access is an aligned
// 64-bit access, single-copy atomic in the PTX memory model, so a word whose flag matches holds the
// payload stored with that flag. (Only 64-bit atomicity is relied on, never the 16-byte store's.)
//
// Two formats (ws::ll_encode / ll_word in workspace.hpp, host-tested), chosen per message from its
// size (ws::ll_payload_for, the same on every rank): wide lines carry 12 payload bytes (message
// bytes [12 i, 12 i + 12) as 32-bit words a, b, c: word 0 = a | (low half of b) << 32, word 1 =
// (high half of b) | c << 16), 16/12 of the payload on the links; narrow lines carry 8 (bytes
// [8 i, 8 i + 8), 32 bits in the low half of each word), 2x on the links but one aligned 8-byte
// access of the message a line, which small messages are faster with. Both hold whole elements of
// every type (1, 2 and 4 bytes), so a reduction works line by line. P below is the payload bytes a
// line (ws::kLLPayload or ws::kLLNarrow); where it is not named, lines are wide.
#include <cstddef>
#include <cstdint>

#include "symmem/device/atomics.cuh"
#include "symmem/device/handle.hpp"
#include "symmem/device/wait.cuh"
#include "symmem/device/workspace.hpp"

#if defined(SYMMEM_DEVICE_COMPILE)
namespace symmem::device {

struct LLLine {
  uint64_t w0, w1;
};
/// A line's payload: message bytes [P i, P i + P) of line i.
template <size_t P = ws::kLLPayload>
struct LLDataT {
  static constexpr int kWords = static_cast<int>(P / 4);
  uint32_t w[kWords];
};
using LLData = LLDataT<>;
static_assert(sizeof(LLData) == ws::kLLPayload && sizeof(LLDataT<ws::kLLNarrow>) == ws::kLLNarrow && sizeof(LLLine) == ws::kLLLineBytes,
              "LL line format");

/// Lines needed for n payload bytes.
template <size_t P = ws::kLLPayload>
__host__ __device__ constexpr size_t ll_lines(size_t n) { return ws::ll_lines<P>(n); }

/// One 16-byte store of a line's payload and the flag (1 .. ws::kLLFlagMax; volatile: not cached,
/// not merged).
template <size_t P>
__device__ __forceinline__ void ll_store(LLLine* dst, const LLDataT<P>& d, uint32_t flag) {
  const ws::LLWords l = ws::ll_encode<P>(d.w[0], d.w[1], d.w[LLDataT<P>::kWords - 1], flag);
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(dst), "l"(l.w0), "l"(l.w1) : "memory");
}
/// A 64-bit value as one (wide) line: headers, tokens. (Its words 0 and 1 read the same in both
/// formats.)
__device__ __forceinline__ void ll_store(LLLine* dst, uint64_t v, uint32_t flag) {
  ll_store(dst, LLData{{static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32), 0u}}, flag);
}

/// One 16-byte load of a line (volatile: not cached, not merged; each 64-bit word single-copy atomic).
__device__ __forceinline__ ws::LLWords ll_load(const LLLine* src) {
  ws::LLWords l;
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(l.w0), "=l"(l.w1) : "l"(src) : "memory");
  return l;
}
/// A line back to zero (flag 0: no reader's match), before its flags wrap.
__device__ __forceinline__ void ll_zero(LLLine* dst) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(dst), "l"(0ull), "l"(0ull) : "memory");
}

/// Polls one line until both words carry `flag`; returns false (and records the facts) on timeout.
template <size_t P>
__device__ inline bool ll_wait(const DeviceHandle& h, const LLLine* src, uint32_t flag, int peer, LLDataT<P>* data) {
  ws::LLWords l{0, 0};
  uint64_t start = 0, bound = 0;
  for (uint32_t it = 0;; ++it) {
    l = ll_load(src);
    if (ws::ll_carries(l, flag)) break;
    if ((it & 1023u) == 0u) {
      const uint64_t now = global_timer_ns();
      if (it == 0) {
        start = now;
      } else {
        if (bound == 0) bound = wait_bound_ns(h);
        if (now - start <= bound && !aborted(h)) continue;
        record_timeout(h, WaitKind::kCollective, peer, static_cast<uint64_t>(-1), Cmp::kEq, flag, ws::ll_seen_flag(l, flag), now - start);
        return false;
      }
    }
  }
#pragma unroll
  for (int k = 0; k < LLDataT<P>::kWords; ++k) data->w[k] = ws::ll_word<P>(l, k);
  return true;
}
/// A line stored by the 64-bit ll_store.
__device__ inline bool ll_wait(const DeviceHandle& h, const LLLine* src, uint32_t flag, int peer, uint64_t* v) {
  LLData d;
  if (!ll_wait(h, src, flag, peer, &d)) return false;
  *v = d.w[0] | (static_cast<uint64_t>(d.w[1]) << 32);
  return true;
}

/// Reads line i's P bytes of an n-byte message at `p`, zero-padding past its end. A whole line is
/// one 8-byte load (narrow, where aligned) or three 4-byte loads (wide). The partial last line of a
/// message whose size is not a multiple of P (wide: any power of two) is read as whole 32-bit words
/// where they lie inside the message, bytes only for its last 1-3, all unrolled so the loads are
/// in flight at once. (A loop with a run-time bound over a local array cost ~1.4 us at 4 ranks on
/// small power-of-two sizes; session 9, 4 x H100.)
template <size_t P = ws::kLLPayload>
__device__ __forceinline__ LLDataT<P> ll_payload(const char* p, size_t n, size_t i) {
  constexpr int W = LLDataT<P>::kWords;
  const size_t off = i * P;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p + off);
  LLDataT<P> d;
  if (off + P <= n) {
    if (P == ws::kLLNarrow && (at & 7u) == 0) {
      const uint2 v = *reinterpret_cast<const uint2*>(p + off);
      d.w[0] = v.x, d.w[W - 1] = v.y;
      return d;
    }
    if ((at & 3u) == 0) {
      const uint32_t* q = reinterpret_cast<const uint32_t*>(p + off);
#pragma unroll
      for (int w = 0; w < W; ++w) d.w[w] = q[w];
      return d;
    }
  }
  const bool aligned = (at & 3u) == 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const size_t o = off + 4 * w;
    if (aligned && o + 4 <= n) {  // whole words (every power-of-two size's partial wide line: 4 or 8 bytes)
      d.w[w] = *reinterpret_cast<const uint32_t*>(p + o);
      continue;
    }
    uint32_t v = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (o + k < n) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[o + k])) << (8 * k);
    d.w[w] = v;
  }
  return d;
}
/// Writes line i's P bytes into an n-byte message at `p`, dropping what lies past its end.
template <size_t P>
__device__ __forceinline__ void ll_unpack(char* p, size_t n, size_t i, const LLDataT<P>& d) {
  constexpr int W = LLDataT<P>::kWords;
  const size_t off = i * P;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p + off);
  if (off + P <= n) {
    if (P == ws::kLLNarrow && (at & 7u) == 0) {
      *reinterpret_cast<uint2*>(p + off) = make_uint2(d.w[0], d.w[W - 1]);
      return;
    }
    if ((at & 3u) == 0) {
      uint32_t* q = reinterpret_cast<uint32_t*>(p + off);
#pragma unroll
      for (int w = 0; w < W; ++w) q[w] = d.w[w];
      return;
    }
  }
  const bool aligned = (at & 3u) == 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const size_t o = off + 4 * w;
    if (aligned && o + 4 <= n) {
      *reinterpret_cast<uint32_t*>(p + o) = d.w[w];
      continue;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (o + k < n) p[o + k] = static_cast<char>(d.w[w] >> (8 * k));
  }
}

/// Peers an LL kernel serves at once (ll_put_group, ll_wait_group): their loads go out together.
constexpr int kLLGroup = 4;

/// Polls line src[g] of every g with src[g] set until each carries `flag` (d[g]: its payload):
/// every pending line is loaded in one sweep, so their round trips overlap (one ll_wait after
/// another costs a round trip each even where every line is in: ~0.27 us a peer on H100, session
/// 26). Returns false (and records the first pending peer's facts) on timeout.
template <size_t P, int G>
__device__ inline bool ll_wait_group(const DeviceHandle& h, const LLLine* const (&src)[G], const int (&peer)[G], uint32_t flag,
                                     LLDataT<P> (&d)[G]) {
  unsigned pending = 0;
#pragma unroll
  for (int g = 0; g < G; ++g)
    if (src[g] != nullptr) pending |= 1u << g;
  uint64_t start = 0, bound = 0;
  for (uint32_t it = 0; pending != 0; ++it) {
    ws::LLWords l[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      l[g] = ws::LLWords{0, 0};
      if ((pending >> g) & 1u) l[g] = ll_load(src[g]);
    }
#pragma unroll
    for (int g = 0; g < G; ++g) {
      if (((pending >> g) & 1u) == 0 || !ws::ll_carries(l[g], flag)) continue;
#pragma unroll
      for (int k = 0; k < LLDataT<P>::kWords; ++k) d[g].w[k] = ws::ll_word<P>(l[g], k);
      pending &= ~(1u << g);
    }
    if (pending == 0 || (it & 1023u) != 0u) continue;
    const uint64_t now = global_timer_ns();
    if (it == 0) {
      start = now;
      continue;
    }
    if (bound == 0) bound = wait_bound_ns(h);
    if (now - start <= bound && !aborted(h)) continue;
    const int g = __ffs(static_cast<int>(pending)) - 1;
#pragma unroll
    for (int k = 0; k < G; ++k)  // (indexed by a constant: l stays in registers)
      if (k == g) record_timeout(h, WaitKind::kCollective, peer[k], static_cast<uint64_t>(-1), Cmp::kEq, flag, ws::ll_seen_flag(l[k], flag), now - start);
    return false;
  }
  return true;
}

/// Writes message g (src[g], n[g] bytes) as LL lines to dst[g] (peer memory) for every g with
/// dst[g] set; member idx of a group of stride. Line i of every message is loaded before any of
/// them is stored, so the loads' round trips overlap (a message after another paid one a peer: its
/// stores' memory clobber keeps the next message's loads behind them). kSame: every src[g] and
/// n[g] is the same message (loaded once).
template <size_t P, bool kSame = false, int G>
__device__ inline void ll_put_group(LLLine* const (&dst)[G], const char* const (&src)[G], const size_t (&n)[G], uint32_t flag, size_t idx,
                                    size_t stride) {
  size_t lines = 0;
#pragma unroll
  for (int g = 0; g < G; ++g)
    if (dst[g] != nullptr && ll_lines<P>(n[g]) > lines) lines = ll_lines<P>(n[g]);
  for (size_t i = idx; i < lines; i += stride) {
    LLDataT<P> d[kSame ? 1 : G];
    if constexpr (kSame) {
      d[0] = ll_payload<P>(src[0], n[0], i);
    } else {
#pragma unroll
      for (int g = 0; g < G; ++g)
        if (dst[g] != nullptr && i < ll_lines<P>(n[g])) d[g] = ll_payload<P>(src[g], n[g], i);
    }
#pragma unroll
    for (int g = 0; g < G; ++g)
      if (dst[g] != nullptr && i < ll_lines<P>(n[g])) ll_store(dst[g] + i, d[kSame ? 0 : g], flag);
  }
}

/// Writes an n-byte message as LL lines to `dst` (peer memory); member idx of a group of stride.
template <size_t P = ws::kLLPayload>
__device__ inline void ll_put(LLLine* dst, const void* src, size_t n, uint32_t flag, size_t idx, size_t stride) {
  const size_t lines = ll_lines<P>(n);
  for (size_t i = idx; i < lines; i += stride) ll_store(dst + i, ll_payload<P>(static_cast<const char*>(src), n, i), flag);
}

/// Receives into `dst` an n-byte message that a peer writes with ll_put<P> and the same flag to
/// `src` (ll_lines<P>(n) lines of this rank's symmetric memory); member idx of a group of stride,
/// each member waiting for its own lines (the group has the whole message once every member has
/// returned true and the group has synchronised). No signal, no fence on either side: a put and
/// its notification in one store a line (session 75, 2 x H200, from a grid of a line a thread:
/// 8 B - 64 KiB one way in 0.93-1.42 us, against put_signal's 2.30-2.69 and NVSHMEM's put with
/// signal's 2.07-2.58; symmem-bench p2p's ll_put_us).
/// Returns false, the facts recorded for the host, where a line does not arrive within the bound.
/// Reusing the lines: each message takes a new flag (1 .. ws::kLLFlagMax); the receiver must have
/// returned from its ll_get before the sender's next ll_put to the same lines (a reply, a credit),
/// and the lines are zeroed (ll_zero) before a flag value comes round again, and before first use
/// where they may hold other data (whose words could carry the flag by chance).
template <size_t P = ws::kLLPayload>
__device__ inline bool ll_get(const DeviceHandle& h, const LLLine* src, void* dst, size_t n, uint32_t flag, int peer, size_t idx,
                              size_t stride) {
  const size_t lines = ll_lines<P>(n);
  for (size_t i = idx; i < lines; i += stride) {
    LLDataT<P> d;
    if (!ll_wait<P>(h, src + i, flag, peer, &d)) return false;
    ll_unpack<P>(static_cast<char*>(dst), n, i, d);
  }
  return true;
}

}  // namespace symmem::device
#endif
