#pragma once
// Plain, trivially copyable structs that kernels receive by value. g++ parses this header.
#include <cstddef>
#include <cstdint>

#include "symmem/export.hpp"

namespace symmem {

/// Comparisons for signal waits.
enum class Cmp : int { kEq = 0, kNe, kGe, kGt, kLe, kLt };
/// How a signal is written.
enum class SignalOp : int { kSet = 0, kAdd };
/// What a device wait was waiting for (reported on timeout).
enum class WaitKind : int { kNone = 0, kSignal, kBarrier, kCollective };

/// Where a device wait that timed out leaves its facts (pinned host memory, one per context).
/// flag: 0 none, 1 being written, 2 complete.
struct DeviceErrorRecord {
  unsigned int flag;
  int kind;           // WaitKind
  int rank;           // team rank that waited
  int global_rank;
  int peer;           // team rank it waited on (-1: any)
  int cmp;            // Cmp
  unsigned long long slot;
  unsigned long long expected;
  unsigned long long seen;
  unsigned long long waited_ns;
  unsigned int block;
  unsigned int thread;
};

/// Layout of the signal pad (uint64 slots) that every symmetric buffer carries.
namespace pad {
constexpr size_t kBytes = 256 * 1024;
constexpr size_t kSlots = kBytes / 8;
constexpr int kUserSlots = 1024;               // [0, 1024): free for the user
constexpr int kMaxTeam = 64;                   // ranks a symmetric team may hold
constexpr int kBarrierChannels = 256;          // independent block-level barriers (one per block)
constexpr size_t kBarrierBase = 1024;          // arrival slot per (channel, peer)
constexpr size_t kCounterBase = kBarrierBase + static_cast<size_t>(kBarrierChannels) * kMaxTeam;  // local epochs
constexpr size_t kOpBase = kCounterBase + kBarrierChannels;  // reserved for symmem's operations
constexpr size_t kOpSlots = 8192 + 64;
SYMMEM_HOST_DEVICE constexpr size_t barrier_slot(int channel, int peer) {
  return kBarrierBase + static_cast<size_t>(channel) * kMaxTeam + static_cast<size_t>(peer);
}
SYMMEM_HOST_DEVICE constexpr size_t counter_slot(int channel) { return kCounterBase + static_cast<size_t>(channel); }
static_assert(kOpBase + kOpSlots <= kSlots, "signal pad regions overflow the pad");
}  // namespace pad

/// A symmetric buffer as kernels see it: this rank's pointer, every peer's pointer as mapped in
/// this process, and every peer's signal pad.
struct DeviceHandle {
  void* local;
  void* const* peers;          // device array [nranks]
  uint64_t* const* signals;    // device array [nranks]
  uint64_t* local_signals;
  size_t bytes;
  int rank;                    // team rank
  int nranks;
  int global_rank;
  DeviceErrorRecord* error;    // device pointer of the context's record
  unsigned long long timeout_ns;
};

}  // namespace symmem
