#pragma once
// The sequenced workspace: the flow control that every barrier-free symmem operation stands on
// (LL and push collectives now; MoE dispatch/combine and GEMM overlap later). Its layout is
// declared here once; its device half is workspace.cuh. g++ parses this header.
//
// A workspace is a symmetric buffer whose data holds, per parity (0, 1) and per source rank, one
// LL slot (16-byte flag-in-data lines, ll.cuh) and one push stage (raw bytes), in two separate regions:
//   [ LL: parity 0: src 0 .. n-1 | parity 1: src 0 .. n-1 ][ push: parity 0: src 0 .. n-1 | parity 1 ]
// and in its signal pad an operation counter (the epoch), block counters and per (source, block)
// push flags (slots below).
//
// Protocol. Operations on one workspace are numbered e = 1, 2, ... by a counter in this rank's pad
// that one block of operation e raises to e at its end (the block that started last, once every
// block has read the counter: workspace.cuh); so the ranks agree on e as long as they run the
// same sequence of operations (the same sequence of calls, in one stream order). Operation e uses
// the slots of parity e & 1. Every operation obeys one rule:
//   (R) in operation e each rank sends every peer at least one epoch-e message (data lines, a
//       token line, or push flags), only after it has finished operation e-1; and it finishes e
//       only after it has received an epoch-e message from every peer.
// Why two slots suffice, for any N and any interleaving of LL and push operations: rank A writes
// into B's parity-(e & 1) slot for operation e+2 only after finishing e+1 (it is in e+2), which by
// (R) needed B's e+1 message, which B sent only after finishing e, i.e. after B read everything
// of parity e & 1. Messages of e+1 go to the other parity. Hence no slot is overwritten while read.
// LL lines and push data never share bytes (separate regions), so a push payload can never be
// taken for an LL line.
//
// Flags. An LL line carries a 16-bit flag (ll.cuh): flag(e) = 1 + (e - 1) mod (2^16 - 1), never 0,
// which zeroed memory can never match. A stale line could match only if written at an epoch e' < e
// of the same parity with flag(e') == flag(e), i.e. e - e' a multiple of 2 (2^16 - 1). Before that
// can happen the flag reaches its last two values (one operation of each parity), and those
// operations zero this rank's LL slots of their parity after reading them (the last block to
// finish, all of its threads, before it raises the epoch, so before this rank sends the next
// message by (R)): two operations in every 65535, each a pass over nranks x ll_max_bytes x 4/3
// bytes (GPU test Collectives.LLFlagWrapCleansTheSlots crosses it). Push flags are 64-bit epochs,
// compared with >=, and never wrap.
#include <cstddef>
#include <cstdint>

#include "symmem/device/handle.hpp"
#include "symmem/export.hpp"

namespace symmem::ws {

// Slots of a workspace's signal pad.
constexpr size_t kEpochSlot = pad::kOpBase + 0;    // local: operations completed (the epoch)
constexpr size_t kDoneSlot = pad::kOpBase + 1;     // local: blocks of the running operation done
constexpr size_t kCapSlot = pad::kOpBase + 2;      // local, read by peers: all_to_all_v output capacity
constexpr size_t kInCapSlot = pad::kOpBase + 3;    // local, read by peers: all_to_all_v input capacity
constexpr size_t kStartSlot = pad::kOpBase + 4;    // local: blocks of the running operation started (tickets)
constexpr int kMaxBlocks = 128;                    // blocks of a push operation
constexpr size_t kPushFlagSlot = pad::kOpBase + 64;  // + src * kMaxBlocks + block: push arrivals
static_assert(kPushFlagSlot + pad::kMaxTeam * kMaxBlocks <= pad::kOpBase + pad::kOpSlots, "push flags overflow the pad");

// The LL line formats (device half: ll.cuh). A 16-byte line is two 64-bit words, each with a flag
// in 1 .. kLLFlagMax in its top 16 bits; the payload is 12 bytes (the wide format, kLLPayload) or 8
// (the narrow one, kLLNarrow: 32 bits in the low half of each word). Narrow lines cost 2x their
// payload on the links instead of 16/12, but a line is one aligned 8-byte load and store of the
// message and 1 KiB at 4 ranks takes ~0.55 us less (session 10, 4 x H200): messages up to
// kLLNarrowMaxBytes a peer travel narrow (ll_payload_for), larger ones wide. Both formats carry the
// same flag in the same bits, so the flag protocol below never depends on the format.
constexpr size_t kLLLineBytes = 16;
constexpr size_t kLLPayload = 12;
constexpr size_t kLLNarrow = 8;
constexpr size_t kLLNarrowMaxBytes = 32 * 1024;
constexpr uint32_t kLLFlagMax = 0xFFFF;
/// Lines needed for n payload bytes in the format of P payload bytes a line.
template <size_t P = kLLPayload>
SYMMEM_HOST_DEVICE constexpr size_t ll_lines(size_t n) {
  static_assert(P == kLLPayload || P == kLLNarrow, "LL lines carry 12 or 8 bytes");
  return (n + P - 1) / P;
}
/// The format of an LL message of `bytes` a peer on slots of `slot_lines` lines (`lines_needed`:
/// how many of its lines the operation puts in one slot, 1 or 2 per line of payload): narrow for
/// small messages that fit narrow, else wide. A function of the size and the layout alone, the same
/// on every rank.
SYMMEM_HOST_DEVICE constexpr size_t ll_payload_for(size_t bytes, size_t slot_lines, size_t lines_needed = 1) {
  return bytes <= kLLNarrowMaxBytes && lines_needed * ll_lines<kLLNarrow>(bytes) <= slot_lines ? kLLNarrow : kLLPayload;
}
/// A line as two 64-bit words. Wide: payload words a, b, c (message bytes [12 i, 12 i + 12) of line
/// i) as a | (low half of b) << 32 and (high half of b) | c << 16; narrow: a and b (bytes [8 i,
/// 8 i + 8)) in the low halves (c is not carried). The flag in the top 16 bits of each.
struct LLWords {
  uint64_t w0, w1;
};
template <size_t P = kLLPayload>
SYMMEM_HOST_DEVICE constexpr LLWords ll_encode(uint32_t a, uint32_t b, uint32_t c, uint32_t flag) {
  return P == kLLNarrow
             ? LLWords{a | (static_cast<uint64_t>(flag) << 48), b | (static_cast<uint64_t>(flag) << 48)}
             : LLWords{a | (static_cast<uint64_t>(b & 0xFFFFu) << 32) | (static_cast<uint64_t>(flag) << 48),
                       (b >> 16) | (static_cast<uint64_t>(c) << 16) | (static_cast<uint64_t>(flag) << 48)};
}
/// Whether both words carry `flag` (1 .. kLLFlagMax): then the payload is the one stored with it.
SYMMEM_HOST_DEVICE constexpr bool ll_carries(const LLWords& l, uint32_t flag) { return (l.w0 >> 48) == flag && (l.w1 >> 48) == flag; }
/// The flag a reader reports having seen (the first word's unless that one matches).
SYMMEM_HOST_DEVICE constexpr uint32_t ll_seen_flag(const LLWords& l, uint32_t flag) {
  return static_cast<uint32_t>((l.w0 >> 48) == flag ? (l.w1 >> 48) : (l.w0 >> 48));
}
/// Payload word k (0, 1, 2 wide; 0, 1 narrow) of a line.
template <size_t P = kLLPayload>
SYMMEM_HOST_DEVICE constexpr uint32_t ll_word(const LLWords& l, int k) {
  if (P == kLLNarrow) return static_cast<uint32_t>(k == 0 ? l.w0 : l.w1);
  return k == 0 ? static_cast<uint32_t>(l.w0)
         : k == 1 ? static_cast<uint32_t>((l.w0 >> 32) & 0xFFFFu) | (static_cast<uint32_t>(l.w1 & 0xFFFFu) << 16)
                  : static_cast<uint32_t>(l.w1 >> 16);
}

/// The LL flag of operation e (e >= 1): never 0.
SYMMEM_HOST_DEVICE constexpr uint32_t flag_of(uint64_t epoch) {
  return static_cast<uint32_t>((epoch - 1) % kLLFlagMax) + 1u;
}
/// True for the two operations (one of each parity) that zero their LL slots before the flag wraps.
SYMMEM_HOST_DEVICE constexpr bool cleans(uint64_t epoch) { return flag_of(epoch) >= kLLFlagMax - 1; }

/// Where the slots lie in the workspace's data.
struct Layout {
  int nranks;
  size_t ll_slot_lines;  // 16-byte lines per (parity, source) LL slot
  size_t stage_bytes;    // bytes per (parity, source) push stage

  /// A layout that carries up to ll_bytes of LL payload and stage_bytes of push payload per peer.
  static SYMMEM_HOST_DEVICE constexpr Layout make(int n, size_t ll_bytes, size_t stage) {
    return Layout{n, ll_lines(ll_bytes), stage};
  }
  SYMMEM_HOST_DEVICE constexpr size_t ll_region() const { return 2 * static_cast<size_t>(nranks) * ll_slot_lines * kLLLineBytes; }
  SYMMEM_HOST_DEVICE constexpr size_t ll_offset(size_t parity, int src) const {
    return (parity * static_cast<size_t>(nranks) + static_cast<size_t>(src)) * ll_slot_lines * kLLLineBytes;
  }
  SYMMEM_HOST_DEVICE constexpr size_t stage_offset(size_t parity, int src) const {
    return ll_region() + (parity * static_cast<size_t>(nranks) + static_cast<size_t>(src)) * stage_bytes;
  }
  /// Bytes of data the workspace needs.
  SYMMEM_HOST_DEVICE constexpr size_t bytes() const { return ll_region() + 2 * static_cast<size_t>(nranks) * stage_bytes; }
};

}  // namespace symmem::ws
